//! Closed, complete, portable schemas, on the wire: nested models refuse
//! unknown fields (with every other problem), the opt-outs and maps stay open,
//! a bytes input is refused at build naming its declaration, and named
//! validators run after decoding, in the same report as schema problems, with
//! their rule in the published description.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use typed_mcp::protocol::catalog::CatalogError;
use typed_mcp::{Server, tool, tools};

use crate::schema::client;

/// Calls of `find` and of `reopen` that reached their function: one counter
/// per tool, as each is called by one test only and tests run concurrently.
static FIND_REACHED: AtomicUsize = AtomicUsize::new(0);
static REOPEN_REACHED: AtomicUsize = AtomicUsize::new(0);

/// A date range.
#[derive(Debug, Deserialize, JsonSchema)]
struct Range {
    /// First day (inclusive).
    from: u32,
    /// Last day (inclusive).
    to: u32,
}

/// Which tickets to find.
#[derive(Debug, Deserialize, JsonSchema)]
struct Filter {
    /// A tag the ticket carries.
    tag: String,
    /// When the ticket was opened.
    opened: Option<Range>,
}

/// Labels of any name: the model may add its own.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = true))]
struct Labels {
    /// The label every ticket has.
    team: String,
}

/// Fields beyond `kind` are kept, as strings.
#[derive(Debug, Deserialize, JsonSchema)]
struct Tagged {
    /// What the thing is.
    kind: String,
    /// Everything else.
    #[serde(flatten)]
    rest: BTreeMap<String, String>,
}

/// Find tickets.
///
/// # Arguments
/// * `filter` - Which tickets.
/// * `limit` - How many at most.
#[tool(read_only)]
fn find(filter: Filter, limit: u8) -> String {
    FIND_REACHED.fetch_add(1, Ordering::SeqCst);
    format!(
        "{} {limit} {:?}",
        filter.tag,
        filter.opened.map(|r| r.to - r.from)
    )
}

/// Label a ticket.
///
/// # Arguments
/// * `labels` - The labels (open: any name).
/// * `tagged` - A kind and free-form fields.
/// * `counts` - Counts by name (a map).
/// * `extra` - Anything (a JSON object).
#[tool]
fn label(
    labels: Labels,
    tagged: Tagged,
    counts: HashMap<String, u32>,
    extra: serde_json::Map<String, Value>,
) -> String {
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort();
    format!(
        "{} {} {:?} {:?} {}",
        labels.team,
        tagged.kind,
        tagged.rest,
        counts,
        extra.len()
    )
}

/// A ticket reference whose id a named validator checks.
#[derive(Debug, Deserialize, JsonSchema, garde::Validate)]
struct TicketRef {
    /// The ticket's id.
    #[garde(custom(open_ticket))]
    #[schemars(extend("x-validator" = "must name an open ticket (closed ones start with \"C-\")"))]
    id: String,
    /// A note for the log.
    #[garde(ascii)]
    #[schemars(extend("x-validator" = ["must be ASCII"]))]
    note: String,
}

fn open_ticket(id: &str, _context: &()) -> garde::Result {
    if id.starts_with("C-") {
        return Err(garde::Error::new(format!(
            "ticket {id} is closed; name an open ticket"
        )));
    }
    Ok(())
}

/// Reopen a ticket.
///
/// # Arguments
/// * `ticket` - The ticket.
/// * `limit` - How many related tickets to show.
#[tool]
fn reopen(ticket: TicketRef, #[schemars(range(max = 10))] limit: u8) -> String {
    REOPEN_REACHED.fetch_add(1, Ordering::SeqCst);
    format!("{} {limit}", ticket.id)
}

fn server() -> Server {
    Server::new("models", "0.1.0")
        .tools(tools![find, label, reopen])
        .build()
        .expect("the declarations are valid")
}

fn report(result: &Value) -> Vec<String> {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    text.lines().skip(1).map(str::to_owned).collect()
}

/// What a successful call returned (its `String` is wrapped under `result`).
fn answer(result: &Value) -> &str {
    assert_ne!(result["isError"], true, "{result}");
    result["structuredContent"]["result"].as_str().unwrap()
}

fn keywords(result: &Value) -> Vec<String> {
    result["_meta"]["rs.typed-mcp/argumentErrors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{} {}",
                p["path"].as_str().unwrap(),
                p["keyword"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test]
async fn an_unknown_nested_field_is_refused_with_every_other_problem() {
    let client = client(server());
    let listed = client.list_tools(None).await;
    let find = &listed.result()["tools"][0];
    let schema = &find["inputSchema"];
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["$defs"]["Filter"]["additionalProperties"], false);
    assert_eq!(schema["$defs"]["Range"]["additionalProperties"], false);

    let before = FIND_REACHED.load(Ordering::SeqCst);
    let response = client
        .call_tool(
            "find",
            json!({
                "filter": {"tag": "printer", "colour": "red", "opened": {"from": 1, "to": 2, "tz": "UTC"}},
                "limit": "ten"
            }),
        )
        .await;
    assert_eq!(
        report(response.result()),
        [
            "- filter: unknown field(s): colour",
            "- filter.opened: unknown field(s): tz",
            "- limit: expected an integer",
        ]
    );
    // serde alone would have dropped both unknown fields and called the tool.
    let response = client
        .call_tool(
            "find",
            json!({"filter": {"tag": "printer", "colour": "red"}, "limit": 3}),
        )
        .await;
    assert_eq!(
        report(response.result()),
        ["- filter: unknown field(s): colour"]
    );
    assert_eq!(
        FIND_REACHED.load(Ordering::SeqCst),
        before,
        "no bad call ran"
    );

    let response = client
        .call_tool(
            "find",
            json!({"filter": {"tag": "printer", "opened": {"from": 1, "to": 4}}, "limit": 3}),
        )
        .await;
    assert_eq!(answer(response.result()), "printer 3 Some(3)");
}

#[tokio::test]
async fn opt_outs_and_maps_stay_open() {
    let client = client(server());
    let listed = client.list_tools(None).await;
    let label = &listed.result()["tools"][1];
    let schema = &label["inputSchema"];
    assert_eq!(schema["$defs"]["Labels"]["additionalProperties"], true);
    assert_eq!(
        schema["$defs"]["Tagged"]["additionalProperties"],
        json!({"type": "string"})
    );
    assert_eq!(
        schema["properties"]["counts"]["additionalProperties"]["type"],
        "integer"
    );
    assert_eq!(schema["properties"]["extra"]["additionalProperties"], true);

    let response = client
        .call_tool(
            "label",
            json!({
                "labels": {"team": "desk", "urgent": "yes"},
                "tagged": {"kind": "printer", "floor": "3", "room": "12"},
                "counts": {"b": 2, "a": 1},
                "extra": {"anything": [1, 2], "else": null}
            }),
        )
        .await;
    assert_eq!(
        answer(response.result()),
        r#"desk printer {"floor": "3", "room": "12"} [("a", 1), ("b", 2)] 2"#
    );
    // A map still checks its values.
    let response = client
        .call_tool(
            "label",
            json!({
                "labels": {"team": "desk"},
                "tagged": {"kind": "printer", "floor": 3},
                "counts": {"a": -1},
                "extra": {}
            }),
        )
        .await;
    assert_eq!(
        keywords(response.result()),
        ["counts.a minimum", "tagged.floor type"]
    );
}

#[tokio::test]
async fn a_named_validator_joins_the_schema_problems_in_one_report() {
    let client = client(server());
    let before = REOPEN_REACHED.load(Ordering::SeqCst);
    let response = client
        .call_tool(
            "reopen",
            json!({"ticket": {"id": "C-7", "note": "déjà vu"}, "limit": 50}),
        )
        .await;
    let result = response.result();
    assert_eq!(
        report(result),
        [
            "- limit: must be at most 10",
            "- ticket.id: ticket C-7 is closed; name an open ticket",
            "- ticket.note: not ascii",
        ]
    );
    assert_eq!(
        keywords(result),
        [
            "limit maximum",
            "ticket.id validator",
            "ticket.note validator"
        ]
    );

    // An argument the schema refused is not validated (it may not decode);
    // the others still are.
    let response = client
        .call_tool(
            "reopen",
            json!({"ticket": {"id": "C-7", "note": 5}, "limit": 1}),
        )
        .await;
    assert_eq!(
        report(response.result()),
        ["- ticket.note: expected a string"]
    );
    let response = client
        .call_tool(
            "reopen",
            json!({"ticket": {"id": "C-7", "note": "ok"}, "limit": "x"}),
        )
        .await;
    assert_eq!(
        keywords(response.result()),
        ["limit type", "ticket.id validator"]
    );
    assert_eq!(
        REOPEN_REACHED.load(Ordering::SeqCst),
        before,
        "no bad call ran"
    );

    let response = client
        .call_tool(
            "reopen",
            json!({"ticket": {"id": "T-7", "note": "ok"}, "limit": 2}),
        )
        .await;
    assert_eq!(answer(response.result()), "T-7 2");
}

#[tokio::test]
async fn a_validator_rule_is_in_the_published_description() {
    let client = client(server());
    let listed = client.list_tools(None).await;
    let reopen = &listed.result()["tools"][2];
    let ticket = &reopen["inputSchema"]["$defs"]["TicketRef"]["properties"];
    assert_eq!(
        ticket["id"]["description"],
        "The ticket's id.\nRule: must name an open ticket (closed ones start with \"C-\")"
    );
    assert_eq!(
        ticket["note"]["description"],
        "A note for the log.\nRule: must be ASCII"
    );
    assert!(
        !reopen.to_string().contains("x-validator"),
        "the declaration keyword is not published: {reopen}"
    );
}

/// Store a file.
///
/// # Arguments
/// * `name` - The file's name.
/// * `data` - The file.
#[tool]
fn upload(name: String, data: Vec<u8>) {
    let _ = (name, data);
}

/// A file attached to a message.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Attachment {
    /// Its name.
    name: String,
    /// Its content.
    content: Option<[u8; 4]>,
}

/// Send a message.
///
/// # Arguments
/// * `text` - What it says.
/// * `files` - What it carries.
#[tool]
fn send(text: String, files: Vec<Attachment>) {
    let _ = (text, files);
}

#[test]
fn a_bytes_input_is_refused_naming_the_declaration() {
    let error = Server::new("models", "0.1.0")
        .tools(tools![upload, send, find])
        .build()
        .expect_err("bytes inputs are refused");
    let bytes: Vec<(String, String)> = error
        .catalog_errors()
        .iter()
        .map(|e| match e {
            CatalogError::BytesInput { name, path } => (name.clone(), path.clone()),
            other => panic!("unexpected error: {other}"),
        })
        .collect();
    assert_eq!(
        bytes,
        [
            ("upload".to_owned(), "data".to_owned()),
            ("send".to_owned(), "files[].content".to_owned())
        ]
    );
    let text = error.to_string();
    assert!(
        text.contains(r#"tool "upload": input data is bytes"#),
        "{text}"
    );
}
