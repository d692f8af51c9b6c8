//! The declaration macros end to end: `#[tool]`, `#[resource]`, `#[prompt]`
//! and their lists, served through a real `Server` and checked on the wire
//! (every message against the official schema).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use typed_mcp::Json;
use typed_mcp::wire::{ContentBlock, PromptMessage};
use typed_mcp::{
    Answer, NeedsInput, Server, ToolContext, prompt, prompts, resource, resources, tool, tools,
};

use crate::schema::client;

// ---------------------------------------------------------------------------
// Free functions, sync and async
// ---------------------------------------------------------------------------

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Repeat a text, after the context says who asked.
///
/// # Arguments
/// * `text` - What to repeat.
/// * `times` - How many times; three unless given.
/// * `ctx` - The call's context (not an argument).
#[tool(title = "Echo", idempotent, timeout = "5s")]
async fn echo(text: String, #[arg(default = 3)] times: u8, ctx: ToolContext) -> Vec<ContentBlock> {
    let _ = &ctx;
    tokio::task::yield_now().await;
    vec![ContentBlock::text(text.repeat(usize::from(times)))]
}

/// Forget every cached answer.
#[tool(destructive, idempotent)]
#[deprecated = "kept for old clients"]
async fn reset(_ctx: &ToolContext) {}

/// A tool whose names are keywords.
///
/// # Arguments
/// * `type` - The kind of thing.
/// * `in` - Where it is.
#[tool]
fn r#match(r#type: String, r#in: Option<String>) -> Result<String, std::fmt::Error> {
    Ok(format!("{type} in {}", r#in.unwrap_or_default(), type = r#type))
}

/// Only in a world that does not exist.
#[cfg(any())]
#[tool]
fn ghost() {}

mod math {
    use typed_mcp::tool;

    /// Multiply two integers.
    ///
    /// # Arguments
    /// * `a` - The multiplicand.
    /// * `b` - The multiplier.
    #[tool]
    pub fn mul(a: i64, b: i64) -> i64 {
        a * b
    }
}

// ---------------------------------------------------------------------------
// Methods of two types: one bound through an `Arc`, one cloned
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
struct Ticket {
    id: String,
    title: String,
    open: bool,
    note: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Closed {
    id: String,
    note: String,
}

#[derive(Debug, thiserror::Error)]
enum DeskError {
    #[error("no ticket {0:?}")]
    NotFound(String),
    #[error("ticket {0:?} is already closed")]
    AlreadyClosed(String),
}

const DESK_WRITE: typed_mcp::Capability =
    typed_mcp::Capability::new("desk.write", "Change tickets in the support desk");

struct Desk {
    tickets: Mutex<BTreeMap<String, Ticket>>,
}

impl Desk {
    fn new() -> Self {
        let ticket = Ticket {
            id: "T-1".into(),
            title: "Printer on fire".into(),
            open: true,
            note: None,
        };
        Desk {
            tickets: Mutex::new(BTreeMap::from([(ticket.id.clone(), ticket)])),
        }
    }

    /// Close a ticket with a resolution note.
    ///
    /// # Arguments
    /// * `ticket_id` - The ticket to close.
    /// * `note` - Why it is being closed.
    #[tool(destructive, caps = [DESK_WRITE])]
    async fn close_ticket(&self, ticket_id: String, note: String) -> Result<Closed, DeskError> {
        tokio::task::yield_now().await;
        let mut tickets = self.tickets.lock().unwrap();
        let ticket = tickets
            .get_mut(&ticket_id)
            .ok_or_else(|| DeskError::NotFound(ticket_id.clone()))?;
        if !ticket.open {
            return Err(DeskError::AlreadyClosed(ticket_id));
        }
        ticket.open = false;
        ticket.note = Some(note.clone());
        Ok(Closed {
            id: ticket_id,
            note,
        })
    }

    /// Search tickets by title.
    ///
    /// # Arguments
    /// * `query` - Words the title contains,
    ///   matched without case.
    /// * `limit` - At most this many tickets.
    /// * `include_closed` - Whether closed tickets count.
    #[tool(read_only)]
    fn search(
        &self,
        #[schemars(length(min = 2))] query: String,
        #[schemars(range(min = 1, max = 50))] limit: u32,
        include_closed: Option<bool>,
    ) -> Vec<Ticket> {
        let query = query.to_lowercase();
        self.tickets
            .lock()
            .unwrap()
            .values()
            .filter(|t| t.title.to_lowercase().contains(&query))
            .filter(|t| t.open || include_closed.unwrap_or(false))
            .take(limit as usize)
            .cloned()
            .collect()
    }

    /// A ticket as JSON.
    ///
    /// # Arguments
    /// * `id` - The ticket's id.
    #[resource(uri = "desk://tickets/{id}", mime_type = "application/json")]
    fn ticket(&self, id: String) -> Option<Json<Ticket>> {
        self.tickets.lock().unwrap().get(&id).cloned().map(Json)
    }
}

#[derive(Clone)]
struct Weather {
    unit: &'static str,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Forecast {
    city: String,
    days: u8,
    unit: String,
}

impl Weather {
    /// Forecast the weather of a city.
    ///
    /// # Arguments
    /// * `city` - The city.
    /// * `days` - How many days ahead.
    #[tool(name = "weather.forecast")]
    pub async fn forecast(&self, city: String, #[arg(default)] days: u8) -> Option<Forecast> {
        (city != "Atlantis").then(|| Forecast {
            city,
            days,
            unit: self.unit.to_owned(),
        })
    }

    /// Draft a weather report.
    ///
    /// # Arguments
    /// * `city` - The city to report on.
    /// * `tone` - The tone, if any.
    #[prompt(title = "Weather report")]
    fn report(&self, city: String, tone: Option<String>) -> String {
        format!(
            "Write a {} weather report for {city} in {}.",
            tone.as_deref().unwrap_or("neutral"),
            self.unit
        )
    }
}

/// Reopen a ticket, asking who reopens it first.
///
/// # Arguments
/// * `ticket_id` - The ticket to reopen.
/// * `reopened_by` - Who reopens it; asked for when missing.
#[tool]
fn reopen(ticket_id: String, reopened_by: Option<String>) -> Result<Answer<Closed>, DeskError> {
    if ticket_id.is_empty() {
        return Err(DeskError::NotFound(ticket_id));
    }
    Ok(match reopened_by {
        Some(note) => Answer::Done(Closed {
            id: ticket_id,
            note,
        }),
        None => Answer::NeedsInput(NeedsInput::new().elicit(
            "who",
            "Who reopens the ticket?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        )),
    })
}

// ---------------------------------------------------------------------------
// Resources and prompts as free functions
// ---------------------------------------------------------------------------

/// The desk's opening hours.
#[resource(uri = "desk://hours", name = "hours", title = "Opening hours")]
async fn hours() -> String {
    "9-17".into()
}

/// A file under the desk's knowledge base.
///
/// # Arguments
/// * `path` - The file's path, slashes included.
#[resource(uri = "desk://kb/{+path}")]
fn kb(path: String) -> Result<String, std::io::Error> {
    if path.ends_with(".md") {
        Ok(format!("# {path}"))
    } else {
        Err(std::io::Error::other(format!("{path} is not a page")))
    }
}

/// Greet a customer.
///
/// # Arguments
/// * `name` - The customer's name.
#[prompt]
async fn greet(name: String) -> Vec<PromptMessage> {
    vec![PromptMessage::user_text(format!("Greet {name} warmly."))]
}

fn server(desk: Arc<Desk>, weather: Weather) -> Server {
    Server::new("macros", "0.1.0")
        .tools(tools![
            add,
            echo,
            desk.close_ticket,
            desk.search,
            weather.forecast,
            math::mul,
            reopen,
            reset,
            r#match,
        ])
        .resources(resources![hours, kb, desk.ticket])
        .prompts(prompts![greet, weather.report])
        .grant(DESK_WRITE)
        .build()
        .expect("every macro declaration is valid")
}

fn tool_named<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools.iter().find(|t| t["name"] == name).unwrap()
}

#[tokio::test]
async fn the_mixed_list_is_served_in_order_with_derived_schemas() {
    let desk = Arc::new(Desk::new());
    let weather = Weather { unit: "celsius" };
    let client = client(server(desk.clone(), weather));
    let listed = client.list_tools(None).await;
    let tools = listed.result()["tools"].as_array().unwrap().clone();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "add",
            "echo",
            "close_ticket",
            "search",
            "weather.forecast",
            "mul",
            "reopen",
            "reset",
            "match"
        ]
    );

    let add = tool_named(&tools, "add");
    assert_eq!(add["description"], "Add two integers.");
    assert_eq!(add["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(
        add["inputSchema"],
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "a": {
                    "description": "The first addend.",
                    "type": "integer",
                    "format": "int64",
                    "minimum": i64::MIN,
                    "maximum": i64::MAX
                },
                "b": {
                    "description": "The second addend.",
                    "type": "integer",
                    "format": "int64",
                    "minimum": i64::MIN,
                    "maximum": i64::MAX
                }
            },
            "additionalProperties": false,
            "required": ["a", "b"]
        })
    );
    assert_eq!(
        add["outputSchema"]["properties"]["result"]["type"],
        "integer"
    );

    let echo = tool_named(&tools, "echo");
    assert_eq!(echo["title"], "Echo");
    assert_eq!(echo["annotations"], json!({"idempotentHint": true}));
    assert_eq!(echo["inputSchema"]["required"], json!(["text"]));
    assert_eq!(echo["inputSchema"]["properties"]["times"]["default"], 3);
    assert_eq!(
        echo["inputSchema"]["properties"]["times"]["description"],
        "How many times; three unless given."
    );
    assert!(echo["inputSchema"]["properties"].get("ctx").is_none());
    assert!(
        echo.get("outputSchema").is_none(),
        "content has no output schema"
    );

    let close = tool_named(&tools, "close_ticket");
    assert_eq!(
        close["description"],
        "Close a ticket with a resolution note."
    );
    assert_eq!(close["annotations"], json!({"destructiveHint": true}));
    assert_eq!(
        close["inputSchema"]["required"],
        json!(["ticket_id", "note"])
    );
    assert_eq!(close["outputSchema"]["required"], json!(["id", "note"]));

    let search = tool_named(&tools, "search");
    let properties = &search["inputSchema"]["properties"];
    assert_eq!(
        properties["query"]["description"],
        "Words the title contains, matched without case."
    );
    assert_eq!(properties["query"]["minLength"], 2);
    assert_eq!(properties["limit"]["minimum"], 1);
    assert_eq!(properties["limit"]["maximum"], 50);
    // Nullable as one `type` per branch (portable), not a `type` array.
    assert_eq!(
        properties["include_closed"]["anyOf"],
        json!([{"type": "boolean"}, {"type": "null"}])
    );
    assert_eq!(search["inputSchema"]["required"], json!(["query", "limit"]));

    let matched = tool_named(&tools, "match");
    assert_eq!(matched["inputSchema"]["required"], json!(["type"]));
    assert_eq!(
        matched["inputSchema"]["properties"]["in"]["description"],
        "Where it is."
    );
    assert!(tool_named(&tools, "reset").get("outputSchema").is_none());

    let forecast = tool_named(&tools, "weather.forecast");
    assert_eq!(forecast["inputSchema"]["required"], json!(["city"]));
    assert_eq!(forecast["inputSchema"]["properties"]["days"]["default"], 0);
}

#[tokio::test]
async fn every_kind_of_entry_answers_calls() {
    let desk = Arc::new(Desk::new());
    let weather = Weather { unit: "kelvin" };
    let client = client(server(desk.clone(), weather));

    let sum = client.call_tool("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.result()["structuredContent"], json!({"result": 5}));
    let product = client.call_tool("mul", json!({"a": 4, "b": 5})).await;
    assert_eq!(product.result()["structuredContent"], json!({"result": 20}));
    let echoed = client.call_tool("echo", json!({"text": "ab"})).await;
    assert_eq!(
        echoed.result()["content"],
        json!([{"type": "text", "text": "ababab"}])
    );

    let closed = client
        .call_tool("close_ticket", json!({"ticket_id": "T-1", "note": "fixed"}))
        .await;
    assert_eq!(
        closed.result()["structuredContent"],
        json!({"id": "T-1", "note": "fixed"})
    );
    // The method ran on the very `Desk` the test holds: the Arc was shared.
    assert!(!desk.tickets.lock().unwrap()["T-1"].open);
    let again = client
        .call_tool("close_ticket", json!({"ticket_id": "T-1", "note": "fixed"}))
        .await;
    assert_eq!(again.result()["isError"], true);
    assert_eq!(
        again.result()["content"][0]["text"],
        "ticket \"T-1\" is already closed"
    );

    let found = client
        .call_tool(
            "search",
            json!({"query": "PRINTER", "limit": 5, "include_closed": true}),
        )
        .await;
    assert_eq!(
        found.result()["structuredContent"]["result"][0]["id"],
        "T-1"
    );

    let reset = client.call_tool("reset", json!({})).await;
    assert_eq!(reset.result()["content"], json!([]));
    let matched = client
        .call_tool("match", json!({"type": "cat", "in": "box"}))
        .await;
    assert_eq!(
        matched.result()["structuredContent"],
        json!({"result": "cat in box"})
    );

    let forecast = client
        .call_tool("weather.forecast", json!({"city": "Oslo", "days": 2}))
        .await;
    assert_eq!(
        forecast.result()["structuredContent"],
        json!({"result": {"city": "Oslo", "days": 2, "unit": "kelvin"}})
    );
    let nowhere = client
        .call_tool("weather.forecast", json!({"city": "Atlantis"}))
        .await;
    assert_eq!(
        nowhere.result()["structuredContent"],
        json!({"result": null})
    );
}

#[tokio::test]
async fn three_wrong_arguments_are_named_in_one_reply() {
    let desk = Arc::new(Desk::new());
    let client = client(server(desk.clone(), Weather { unit: "celsius" }));
    let response = client
        .call_tool(
            "search",
            json!({"query": "x", "limit": 0, "include_closed": "yes"}),
        )
        .await;
    let result = response.result();
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], "invalid arguments for tool \"search\":");
    assert!(lines[1].starts_with("- include_closed: "), "{text}");
    assert!(lines[2].starts_with("- limit: "), "{text}");
    assert!(lines[3].starts_with("- query: "), "{text}");
    let problems = result["_meta"]["rs.typed-mcp/argumentErrors"]
        .as_array()
        .unwrap();
    let paths: Vec<&str> = problems
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["include_closed", "limit", "query"]);
    assert!(result.get("structuredContent").is_none());
}

#[tokio::test]
async fn an_answer_asks_for_input_or_replies_like_its_value() {
    let desk = Arc::new(Desk::new());
    let server = server(desk, Weather { unit: "celsius" });
    let listed = client(server.clone()).list_tools(None).await;
    let tools = listed.result()["tools"].as_array().unwrap().clone();
    assert_eq!(
        tool_named(&tools, "reopen")["outputSchema"]["required"],
        json!(["id", "note"])
    );
    let client = crate::schema::client_with_capabilities(server, json!({"elicitation": {}}));
    let asked = client
        .call_tool("reopen", json!({"ticket_id": "T-1"}))
        .await;
    assert_eq!(asked.result()["resultType"], "input_required");
    assert_eq!(
        asked.result()["inputRequests"]["who"]["method"],
        "elicitation/create"
    );
    let done = client
        .call_tool("reopen", json!({"ticket_id": "T-1", "reopened_by": "Ada"}))
        .await;
    assert_eq!(
        done.result()["structuredContent"],
        json!({"id": "T-1", "note": "Ada"})
    );
    let failed = client.call_tool("reopen", json!({"ticket_id": ""})).await;
    assert_eq!(failed.result()["isError"], true);
    assert_eq!(failed.result()["content"][0]["text"], "no ticket \"\"");
}

#[tokio::test]
async fn decorated_functions_stay_callable() {
    assert_eq!(add(2, 3), 5);
    assert_eq!(math::mul(6, 7), 42);
    let desk = Desk::new();
    let closed = desk
        .close_ticket("T-1".into(), "done".into())
        .await
        .unwrap();
    assert_eq!(closed.note, "done");
    assert!(desk.search("printer".into(), 10, None).is_empty());
    assert!(matches!(
        desk.close_ticket("T-9".into(), "x".into()).await,
        Err(DeskError::NotFound(_))
    ));
    let weather = Weather { unit: "celsius" };
    assert_eq!(weather.forecast("Rome".into(), 1).await.unwrap().days, 1);
    assert_eq!(
        weather.report("Rome".into(), None),
        "Write a neutral weather report for Rome in celsius."
    );
    assert_eq!(hours().await, "9-17");
    assert!(kb("a.txt".into()).is_err());
}

#[tokio::test]
async fn resources_and_templates_are_read_through_their_functions() {
    let desk = Arc::new(Desk::new());
    let client = client(server(desk.clone(), Weather { unit: "celsius" }));

    let listed = client.list_resources(None).await;
    assert_eq!(
        listed.result()["resources"],
        json!([{
            "uri": "desk://hours",
            "name": "hours",
            "title": "Opening hours",
            "description": "The desk's opening hours."
        }])
    );
    let templates = client.list_resource_templates(None).await;
    let templates = templates.result()["resourceTemplates"]
        .as_array()
        .unwrap()
        .clone();
    let uris: Vec<&str> = templates
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["desk://kb/{+path}", "desk://tickets/{id}"]);
    assert_eq!(templates[1]["mimeType"], "application/json");
    assert_eq!(templates[1]["description"], "A ticket as JSON.");

    let hours = client.read_resource("desk://hours").await;
    assert_eq!(hours.result()["contents"][0]["text"], "9-17");
    let page = client.read_resource("desk://kb/guides/printers.md").await;
    assert_eq!(page.result()["contents"][0]["text"], "# guides/printers.md");
    let ticket = client.read_resource("desk://tickets/T-1").await;
    let contents = &ticket.result()["contents"][0];
    assert_eq!(contents["mimeType"], "application/json");
    let decoded: Ticket = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
    assert_eq!(decoded.title, "Printer on fire");

    let missing = client.read_resource("desk://tickets/T-404").await;
    assert_eq!(missing.error_code(), Some(-32602));
    let failing = client.read_resource("desk://kb/logo.png").await;
    assert_eq!(failing.error_code(), Some(-32603));
}

#[tokio::test]
async fn prompts_take_their_string_arguments() {
    let desk = Arc::new(Desk::new());
    let client = client(server(desk.clone(), Weather { unit: "celsius" }));
    let listed = client.list_prompts(None).await;
    let prompts = listed.result()["prompts"].as_array().unwrap().clone();
    assert_eq!(prompts[0]["name"], "greet");
    assert_eq!(
        prompts[1],
        json!({
            "name": "report",
            "title": "Weather report",
            "description": "Draft a weather report.",
            "arguments": [
                {"name": "city", "description": "The city to report on.", "required": true},
                {"name": "tone", "description": "The tone, if any.", "required": false}
            ]
        })
    );
    let greeting = client.get_prompt("greet", json!({"name": "Ada"})).await;
    assert_eq!(
        greeting.result()["messages"][0]["content"]["text"],
        "Greet Ada warmly."
    );
    let report = client
        .get_prompt("report", json!({"city": "Lima", "tone": "cheerful"}))
        .await;
    assert_eq!(
        report.result()["messages"][0]["content"]["text"],
        "Write a cheerful weather report for Lima in celsius."
    );
}
