//! Over stdio, the way MCP clients launch the server.

use serde_json::{Value, json};

use crate::support::{
    Scratch, StdioDesk, hit_ids, read_receipts, result_of, text_of, wait_for_receipt,
};

#[test]
fn search_finds_the_seeded_refund_tickets() {
    let scratch = Scratch::new();
    let mut desk = StdioDesk::spawn(&scratch.args(&[]));
    let result = desk.tool("search_tickets", json!({"query": "refund"}));
    let ids = hit_ids(&result);
    assert!(
        ids.contains(&"T-1001".to_owned()) && ids.contains(&"T-1002".to_owned()),
        "{result}"
    );
    let first = &result["structuredContent"]["tickets"][0];
    assert_eq!(first["status"], "open");
    assert!(
        first["snippet"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("[refund]")
    );
    // The text block carries the same JSON for clients that read only text.
    let text: Value = serde_json::from_str(text_of(&result)).unwrap();
    assert_eq!(text, result["structuredContent"]);

    let limited = desk.tool("search_tickets", json!({"query": "refund", "limit": 1}));
    assert_eq!(hit_ids(&limited).len(), 1);

    let nothing = desk.tool("search_tickets", json!({"query": "zeppelin"}));
    assert_eq!(hit_ids(&nothing), Vec::<String>::new());

    desk.close_stdin();
    assert!(
        desk.wait_exit(),
        "a clean exit at end of input: {}",
        desk.stderr()
    );
}

#[test]
fn closing_without_the_grant_is_refused_before_the_handler_and_leaves_a_receipt() {
    let scratch = Scratch::new();
    let receipts = scratch.receipts();
    let receipts_arg = receipts.display().to_string();
    let mut desk = StdioDesk::spawn(&scratch.args(&["--receipts", &receipts_arg]));

    let refused = desk.tool(
        "close_ticket",
        json!({"ticket_id": "T-1003", "note": "Mail provider unblocked."}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text_of(&refused).contains("desk.write"), "{refused}");

    // The handler did not run: the ticket is still open.
    let read = result_of(desk.call("resources/read", json!({"uri": "ticket://T-1003"})));
    let ticket: Value =
        serde_json::from_str(read["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(ticket["status"], "open");

    let receipt = wait_for_receipt(&receipts, |r| r["name"] == "close_ticket");
    assert_eq!(receipt["outcome"]["kind"], "refused", "{receipt}");
    assert!(receipt.to_string().contains("desk.write"), "{receipt}");

    // Opening and commenting need no grant.
    let opened = desk.tool(
        "open_ticket",
        json!({"title": "VPN drops hourly", "body": "Since Monday."}),
    );
    assert_ne!(opened["isError"], true, "{opened}");
    let commented = desk.tool(
        "add_comment",
        json!({"ticket_id": "T-1003", "body": "Asked for the mail provider's name."}),
    );
    assert_ne!(commented["isError"], true, "{commented}");

    desk.close_stdin();
    assert!(desk.wait_exit());
    // One receipt per call: the refused close, the read, the open and the comment.
    let all = read_receipts(&receipts);
    assert_eq!(all.len(), 4, "{all:#?}");
}

#[test]
fn with_the_grant_a_close_reaches_a_subscriber_and_a_second_close_is_already_closed() {
    let scratch = Scratch::new();
    let receipts = scratch.receipts();
    let receipts_arg = receipts.display().to_string();
    let mut desk =
        StdioDesk::spawn(&scratch.args(&["--allow", "desk.write", "--receipts", &receipts_arg]));

    let listen = desk.send(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["ticket://T-1003"]}}),
    );
    let ack = desk.wait_for("the acknowledgement", |m| {
        m["method"] == "notifications/subscriptions/acknowledged"
    });
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen
    );
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(["ticket://T-1003"])
    );

    let closed = desk.tool(
        "close_ticket",
        json!({"ticket_id": "T-1003", "note": "Mail provider unblocked our domain."}),
    );
    assert_ne!(closed["isError"], true, "{closed}");
    let ticket = &closed["structuredContent"];
    assert_eq!(ticket["id"], "T-1003");
    assert_eq!(ticket["status"], "closed");
    assert_eq!(ticket["resolution"], "Mail provider unblocked our domain.");

    let updated = desk.wait_for("the update", |m| {
        m["method"] == "notifications/resources/updated"
    });
    assert_eq!(updated["params"]["uri"], "ticket://T-1003");
    assert_eq!(
        updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        listen
    );

    let again = desk.tool(
        "close_ticket",
        json!({"ticket_id": "T-1003", "note": "Twice."}),
    );
    assert_eq!(again["isError"], true, "{again}");
    assert_eq!(text_of(&again), "ticket T-1003 is already closed");
    // The receipt keeps the typed error's identity, not its message.
    let failed = wait_for_receipt(&receipts, |r| r["outcome"]["kind"] == "failed");
    assert_eq!(failed["name"], "close_ticket");
    assert_eq!(failed["scope"], json!(["desk.write"]));
    assert_eq!(failed["outcome"]["variant"], "AlreadyClosed", "{failed}");
    assert!(
        failed["outcome"]["error_type"]
            .as_str()
            .is_some_and(|t| t.ends_with("DeskError")),
        "{failed}"
    );

    // A comment on the closed ticket is announced too.
    let comment = desk.tool(
        "add_comment",
        json!({"ticket_id": "T-1003", "body": "Customer confirmed the reset mail arrived."}),
    );
    assert_eq!(
        comment["structuredContent"]["ticket_id"], "T-1003",
        "{comment}"
    );
    let updated = desk.wait_for("the second update", |m| {
        m["method"] == "notifications/resources/updated"
    });
    assert_eq!(updated["params"]["uri"], "ticket://T-1003");

    // No update for a ticket nobody listens to.
    desk.tool(
        "add_comment",
        json!({"ticket_id": "T-1004", "body": "Still slow."}),
    );
    let read = result_of(desk.call("resources/read", json!({"uri": "ticket://T-1003"})));
    let ticket: Value =
        serde_json::from_str(read["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(ticket["status"], "closed");
    assert_eq!(ticket["comments"].as_array().unwrap().len(), 1);
    desk.send_line(
        &json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": listen, "reason": "done"}
        })
        .to_string(),
    );
    desk.close_stdin();
    assert!(desk.wait_exit());
    assert!(
        !desk.pending_has(|m| m["method"] == "notifications/resources/updated"),
        "an update for an unsubscribed ticket"
    );
}

#[test]
fn the_grant_can_come_from_the_environment() {
    let scratch = Scratch::new();
    let mut desk =
        StdioDesk::spawn_with_env(&scratch.args(&[]), &[("SUPPORT_DESK_ALLOW", "desk.write")]);
    let closed = desk.tool(
        "close_ticket",
        json!({"ticket_id": "T-1004", "note": "Fixed in 4.13."}),
    );
    assert_ne!(closed["isError"], true, "{closed}");
    assert_eq!(closed["structuredContent"]["status"], "closed");
}

#[test]
fn an_unknown_capability_name_stops_the_server_before_it_serves() {
    let scratch = Scratch::new();
    let mut desk = StdioDesk::spawn(&scratch.args(&["--allow", "desk.wrtie"]));
    assert!(!desk.wait_exit(), "an unknown name is a startup error");
    let stderr = crate::support::stderr_once_written(&desk);
    assert!(stderr.contains("desk.wrtie"), "{stderr}");
}

#[test]
fn bad_input_gets_clear_errors_and_the_server_keeps_serving() {
    let scratch = Scratch::new();
    let mut desk = StdioDesk::spawn(&scratch.args(&["--allow", "desk.write"]));
    let cases = [
        (
            "close_ticket",
            json!({"ticket_id": "T-9999", "note": "x"}),
            "no ticket T-9999 exists",
        ),
        (
            "add_comment",
            json!({"ticket_id": "T-9999", "body": "x"}),
            "no ticket T-9999 exists",
        ),
        (
            "open_ticket",
            json!({"title": "   ", "body": "x"}),
            "invalid input: the title is blank",
        ),
        (
            "open_ticket",
            json!({"title": "two\nlines", "body": "x"}),
            "invalid input: the title must be one line; put details in the body",
        ),
        (
            "search_tickets",
            json!({"query": "?!"}),
            "invalid input: the query \"?!\" has no words to search for",
        ),
        (
            "close_ticket",
            json!({"ticket_id": "T-1001", "note": "  "}),
            "invalid input: the resolution note is blank",
        ),
    ];
    for (tool, arguments, message) in cases {
        let result = desk.tool(tool, arguments.clone());
        assert_eq!(result["isError"], true, "{tool} {arguments}: {result}");
        assert_eq!(text_of(&result), message, "{tool} {arguments}");
    }

    // What the schema refuses is reported field by field, before any handler runs.
    let empty = desk.tool("open_ticket", json!({"title": "", "body": "x"}));
    assert_eq!(empty["isError"], true);
    let errors = &empty["_meta"]["rs.typed-mcp/argumentErrors"];
    assert_eq!(errors[0]["path"], "title", "{empty}");
    let malformed = desk.tool("close_ticket", json!({"ticket_id": "1001", "note": 5}));
    assert_eq!(malformed["isError"], true);
    let mut paths: Vec<&str> = malformed["_meta"]["rs.typed-mcp/argumentErrors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(paths, ["note", "ticket_id"], "{malformed}");
    let limit = desk.tool("search_tickets", json!({"query": "refund", "limit": 0}));
    assert_eq!(limit["isError"], true, "{limit}");

    // An unknown ticket is "resource not found"; an unknown one in a prompt says so.
    let missing = desk.call("resources/read", json!({"uri": "ticket://T-9999"}));
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let odd = desk.call("resources/read", json!({"uri": "ticket://nonsense"}));
    assert_eq!(odd["error"]["code"], -32602, "{odd}");
    let prompt = desk.call(
        "prompts/get",
        json!({"name": "triage", "arguments": {"ticket_id": "T-9999"}}),
    );
    assert_eq!(
        prompt["error"]["message"], "no ticket T-9999 exists",
        "{prompt}"
    );

    // A line that is not JSON is answered, and the server reads on.
    desk.send_line("{not json");
    desk.wait_for("the parse error", |m| m["error"]["code"] == -32700);

    // Nothing above changed a ticket, and the server still answers.
    let ids = hit_ids(&desk.tool("search_tickets", json!({"query": "refund"})));
    assert!(ids.contains(&"T-1001".to_owned()));
    let read = result_of(desk.call("resources/read", json!({"uri": "ticket://T-1001"})));
    let ticket: Value =
        serde_json::from_str(read["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(ticket["status"], "open");
}

#[test]
fn the_triage_prompt_carries_the_ticket() {
    let scratch = Scratch::new();
    let mut desk = StdioDesk::spawn(&scratch.args(&[]));
    let prompt = result_of(desk.call(
        "prompts/get",
        json!({"name": "triage", "arguments": {"ticket_id": "T-1001"}}),
    ));
    let text = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("Ticket T-1001"), "{text}");
    assert!(text.contains("Refund not received"), "{text}");
    assert!(
        text.contains("RF-20931"),
        "the comments are included: {text}"
    );
}

#[test]
fn tickets_outlive_the_process() {
    let scratch = Scratch::new();
    let mut first = StdioDesk::spawn(&scratch.args(&[]));
    let opened = first.tool(
        "open_ticket",
        json!({"title": "Invoice PDF renders blank", "body": "The zeppelin logo is missing too."}),
    );
    let id = opened["structuredContent"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(id, "T-1007", "numbers continue after the seeded tickets");
    first.close_stdin();
    assert!(first.wait_exit());

    let mut second = StdioDesk::spawn(&scratch.args(&[]));
    let ids = hit_ids(&second.tool("search_tickets", json!({"query": "zeppelin"})));
    assert_eq!(ids, [id]);
    // The seeded tickets are not seeded twice.
    let refunds = hit_ids(&second.tool("search_tickets", json!({"query": "refund"})));
    assert_eq!(refunds.len(), 2, "{refunds:?}");
}

/// The README's client configuration, run with its own arguments (on a scratch
/// database): the command and flags it names exist and serve.
#[test]
fn the_readme_client_configuration_starts_a_server() {
    let readme = include_str!("../../../../README.md");
    let line = readme
        .lines()
        .find(|l| l.starts_with(r#"{"mcpServers": {"support-desk""#))
        .expect("the README configures the support desk for a client");
    let config: Value = serde_json::from_str(line).expect("the configuration is JSON");
    let server = &config["mcpServers"]["support-desk"];
    assert_eq!(server["command"], "support-desk");
    let scratch = Scratch::new();
    let db = scratch.db().display().to_string();
    let mut args: Vec<String> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    let at = args
        .iter()
        .position(|a| a == "--db")
        .expect("a --db argument")
        + 1;
    args[at] = db;
    let mut desk = StdioDesk::spawn(&args);
    assert!(hit_ids(&desk.tool("search_tickets", json!({"query": "refund"}))).len() >= 2);
    let closed = desk.tool(
        "close_ticket",
        json!({"ticket_id": "T-1001", "note": "Refund traced."}),
    );
    assert_eq!(closed["structuredContent"]["status"], "closed", "{closed}");
}

/// A client of the dated revision 2025-11-25 (`initialize`, no `_meta`
/// envelope), as most installed MCP clients still are, with the same
/// configuration as a 2026-07-28 client.
#[test]
fn a_dated_client_uses_the_desk_with_the_same_configuration() {
    let scratch = Scratch::new();
    let receipts = scratch.receipts();
    let receipts_arg = receipts.display().to_string();
    let mut desk = StdioDesk::spawn(&scratch.args(&["--receipts", &receipts_arg]));
    let dated = |desk: &mut StdioDesk, id: i64, method: &str, params: Value| {
        desk.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        desk.response(&json!(id))
    };
    let init = dated(
        &mut desk,
        100,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "dated-client", "version": "1.0"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "support-desk");
    desk.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);

    let list = dated(&mut desk, 101, "tools/list", json!({}));
    assert!(list["result"].get("resultType").is_none(), "{list}");
    assert!(
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "close_ticket"),
        "{list}"
    );

    let found = dated(
        &mut desk,
        102,
        "tools/call",
        json!({"name": "search_tickets", "arguments": {"query": "refund"}}),
    );
    assert!(
        hit_ids(&found["result"]).contains(&"T-1001".to_owned()),
        "{found}"
    );

    // A bad argument is a tool error the model can read, not a protocol error.
    let bad = dated(
        &mut desk,
        103,
        "tools/call",
        json!({"name": "search_tickets", "arguments": {"query": 7}}),
    );
    assert_eq!(bad["result"]["isError"], true, "{bad}");

    let refused = dated(
        &mut desk,
        104,
        "tools/call",
        json!({"name": "close_ticket", "arguments": {"ticket_id": "T-1002", "note": "Refunded."}}),
    );
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        text_of(&refused["result"]).contains("desk.write"),
        "{refused}"
    );
    let receipt = wait_for_receipt(&receipts, |r| r["name"] == "close_ticket");
    assert_eq!(receipt["outcome"]["kind"], "refused", "{receipt}");
    assert_eq!(receipt["protocolVersion"], "2025-11-25", "{receipt}");

    let read = dated(
        &mut desk,
        105,
        "resources/read",
        json!({"uri": "ticket://T-1002"}),
    );
    assert!(
        read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Charged twice"),
        "{read}"
    );
    let prompt = dated(
        &mut desk,
        106,
        "prompts/get",
        json!({"name": "triage", "arguments": {"ticket_id": "T-1001"}}),
    );
    assert!(
        prompt["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("triaging")
    );
    assert!(prompt["result"].get("resultType").is_none(), "{prompt}");

    desk.close_stdin();
    assert!(desk.wait_exit(), "a clean exit: {}", desk.stderr());
}
