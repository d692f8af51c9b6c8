//! Calls through the declarations themselves: each `#[tool]` below is served
//! by a typed-mcp server and called with the `call_<name>` function the macro
//! generated beside it, in process and over Streamable HTTP, in both eras.

use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use typed_mcp::wire::{CallToolResult, ContentBlock, ElicitAction, ElicitResult};
use typed_mcp::{Answer, NeedsInput, Server, ToolContext, tool, tools};
use typed_mcp_client::{CallTool, Client, ClientError, Era, Options, Responder, ToolCallError};

/// Which tickets a search returns.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Filter {
    /// `open` or `closed`.
    pub status: String,
    /// Tags every ticket must have.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// A ticket.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Ticket {
    /// Its id.
    pub id: String,
    /// Its status.
    pub status: String,
    /// Its tags.
    pub tags: Vec<String>,
}

fn tickets() -> Vec<Ticket> {
    let ticket = |id: &str, status: &str, tags: &[&str]| Ticket {
        id: id.into(),
        status: status.into(),
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
    };
    vec![
        ticket("T-1", "open", &["billing"]),
        ticket("T-2", "closed", &["billing", "refund"]),
        ticket("T-3", "open", &["login"]),
    ]
}

/// Search the tickets.
///
/// # Arguments
/// * `query` - Text the id must contain.
/// * `filter` - Which tickets qualify.
/// * `limit` - At most this many; all when absent.
#[tool(read_only)]
fn search(query: String, filter: Filter, limit: Option<u32>) -> Vec<Ticket> {
    let limit = limit.map_or(usize::MAX, |l| l as usize);
    tickets()
        .into_iter()
        .filter(|t| t.id.contains(&query) && t.status == filter.status)
        .filter(|t| filter.tags.iter().all(|tag| t.tags.contains(tag)))
        .take(limit)
        .collect()
}

/// Count the words of a text at least `min_len` characters long.
///
/// # Arguments
/// * `text` - The text; not empty.
/// * `min_len` - The shortest word counted, 1 to 10.
#[tool(read_only)]
fn count_words(
    #[schemars(length(min = 1))] text: String,
    #[schemars(range(min = 1, max = 10))] min_len: u8,
) -> u64 {
    text.split_whitespace()
        .filter(|w| w.chars().count() >= usize::from(min_len))
        .count() as u64
}

/// Find a ticket by id.
///
/// # Arguments
/// * `id` - The ticket's id.
#[tool(read_only)]
fn find(id: String) -> Option<Ticket> {
    tickets().into_iter().find(|t| t.id == id)
}

/// Forget a ticket (nothing comes back).
///
/// # Arguments
/// * `id` - The ticket's id.
#[tool]
fn forget(id: String) {
    let _ = id;
}

/// A banner, as content blocks.
///
/// # Arguments
/// * `text` - What it says.
#[tool]
fn banner(text: String) -> Vec<ContentBlock> {
    vec![
        ContentBlock::text(text.to_uppercase()),
        ContentBlock::text(text),
    ]
}

/// What can go wrong at the desk.
#[derive(Debug)]
pub enum DeskError {
    /// Closing twice.
    AlreadyClosed(String),
}

impl std::fmt::Display for DeskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeskError::AlreadyClosed(id) => write!(f, "ticket {id} is already closed"),
        }
    }
}

impl std::error::Error for DeskError {}

/// The desk: its tools are methods.
pub struct Desk {
    closed: Mutex<Vec<String>>,
}

impl Desk {
    /// Close a ticket, once.
    ///
    /// # Arguments
    /// * `id` - The ticket to close.
    #[tool(destructive)]
    pub async fn close(&self, ctx: &ToolContext, id: String) -> Result<Ticket, DeskError> {
        let _ = ctx;
        let mut closed = self.closed.lock().unwrap();
        if closed.contains(&id) {
            return Err(DeskError::AlreadyClosed(id));
        }
        closed.push(id.clone());
        Ok(Ticket {
            id,
            status: "closed".into(),
            tags: Vec::new(),
        })
    }
}

/// Greet someone, asking for their name first.
///
/// # Arguments
/// * `greeting` - The word to greet with.
#[tool]
fn greet(greeting: String, ctx: ToolContext) -> Answer<String> {
    let name = ctx
        .input_response::<ElicitResult>("name")
        .and_then(Result::ok)
        .and_then(|r| r.content)
        .and_then(|c| c.get("name").and_then(Value::as_str).map(str::to_owned));
    match name {
        Some(name) => Answer::Done(format!("{greeting}, {name}!")),
        None => Answer::NeedsInput(NeedsInput::new().elicit(
            "name",
            "What is your name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        )),
    }
}

fn server() -> Server {
    let desk = Arc::new(Desk {
        closed: Mutex::new(Vec::new()),
    });
    Server::new("declared", "1.0.0")
        .tools(tools![
            search,
            count_words,
            find,
            forget,
            banner,
            desk.close,
            greet
        ])
        .build()
        .expect("the declarations are valid")
}

fn options(era: Era) -> Options {
    Options::new()
        .era(era)
        .responder(Responder::new().on_elicit(|_| async {
            let mut content = Map::new();
            content.insert("name".into(), json!("Ada"));
            Ok(ElicitResult::new(ElicitAction::Accept).with_content(content))
        }))
}

async fn serve_http(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("a local address");
    let router = typed_mcp_http::HttpServer::new(server, addr)
        .mount("/mcp")
        .expect("the router builds");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}/mcp")
}

/// A caller that keeps what each call sent before handing it to the client:
/// the arguments object as it goes on the wire.
struct Recording {
    client: Client,
    sent: Mutex<Vec<(String, Map<String, Value>)>>,
}

impl CallTool for Recording {
    type Error = ClientError;

    async fn call_tool_result(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallToolResult, ClientError> {
        self.sent
            .lock()
            .unwrap()
            .push((name.to_owned(), arguments.clone()));
        self.client.call_tool_result(name, arguments).await
    }
}

impl Recording {
    fn last_sent(&self) -> Value {
        let sent = self.sent.lock().unwrap();
        let (name, arguments) = sent.last().expect("a call was sent");
        json!({"name": name, "arguments": arguments})
    }
}

/// Every shape of declaration, called through its declaration.
async fn every_shape(client: Client, how: &str) {
    let caller = Recording {
        client,
        sent: Mutex::new(Vec::new()),
    };

    // A struct parameter, a scalar and an `Option`; a `Vec` comes back from
    // under `result`.
    let open_billing = Filter {
        status: "open".into(),
        tags: vec!["billing".into()],
    };
    let found = call_search(&caller, "T-".into(), open_billing.clone(), None)
        .await
        .unwrap_or_else(|e| panic!("{how}: {e}"));
    assert_eq!(found, [tickets()[0].clone()], "{how}");
    assert_eq!(
        caller.last_sent(),
        json!({"name": "search", "arguments": {
            "query": "T-", "filter": {"status": "open", "tags": ["billing"]}, "limit": null
        }}),
        "{how}"
    );
    let open = Filter {
        status: "open".into(),
        tags: Vec::new(),
    };
    let first: Vec<Ticket> = call_search(&caller, "T".into(), open, Some(1))
        .await
        .unwrap();
    assert_eq!(
        first.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["T-1"],
        "{how}"
    );
    assert_eq!(caller.last_sent()["arguments"]["limit"], 1, "{how}");

    // Scalars in, a number out (wrapped under `result` on the wire).
    let words: u64 = call_count_words(&caller, "a typed call".into(), 2)
        .await
        .unwrap();
    assert_eq!(words, 2, "{how}");

    // `Option<T>`: `Some` and `None` (a structured null).
    let ticket = call_find(&caller, "T-3".into()).await.unwrap();
    assert_eq!(
        ticket.map(|t| t.tags),
        Some(vec!["login".to_owned()]),
        "{how}"
    );
    assert_eq!(
        call_find(&caller, "T-9".into()).await.unwrap(),
        None,
        "{how}"
    );

    // `()` and content blocks.
    call_forget(&caller, "T-1".into()).await.unwrap();
    let blocks = call_banner(&caller, "hi".into()).await.unwrap();
    assert_eq!(
        blocks,
        [ContentBlock::text("HI"), ContentBlock::text("hi")],
        "{how}"
    );

    // A method's call: the handler's `Ok`, then its `Err` as the tool's
    // error, with the error's message.
    let closed = Desk::call_close(&caller, "T-1".into()).await.unwrap();
    assert_eq!(closed.status, "closed", "{how}");
    match Desk::call_close(&caller, "T-1".into()).await {
        Err(ToolCallError::Tool { tool, message, .. }) => {
            assert_eq!(tool, "close", "{how}");
            assert_eq!(message, "ticket T-1 is already closed", "{how}");
        }
        other => panic!("{how}: expected the tool's error, found {other:?}"),
    }

    // `Answer<T>`: the server asks for input, the responder answers, the
    // value comes back.
    let greeting = call_greet(&caller, "Hello".into()).await.unwrap();
    assert_eq!(greeting, "Hello, Ada!", "{how}");

    // Arguments the types allow but the schema refuses: the server's report
    // of every problem, typed.
    let refused = call_count_words(&caller, String::new(), 0)
        .await
        .unwrap_err();
    let ToolCallError::Arguments {
        tool,
        problems,
        message,
    } = &refused
    else {
        panic!("{how}: expected the server's argument report, found {refused:?}");
    };
    assert_eq!(tool, "count_words", "{how}");
    let report: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| (p.path.as_str(), p.keyword.as_str()))
        .collect();
    assert_eq!(
        report,
        [("min_len", "minimum"), ("text", "minLength")],
        "{how}"
    );
    assert!(
        message.starts_with("invalid arguments for tool \"count_words\":"),
        "{how}: {message}"
    );
    assert_eq!(refused.argument_problems(), Some(&problems[..]), "{how}");

    // The server still serves, the same tool included.
    let words = call_count_words(&caller, "still serving".into(), 1)
        .await
        .unwrap();
    assert_eq!(words, 2, "{how}");
}

#[tokio::test]
async fn every_shape_in_process_in_both_eras() {
    for era in [Era::Auto, Era::Legacy] {
        let client = Client::in_process(server(), options(era)).await.unwrap();
        every_shape(client, &format!("in process, {era:?}")).await;
    }
}

#[tokio::test]
async fn every_shape_over_http_in_both_eras() {
    for era in [Era::Auto, Era::Legacy] {
        let url = serve_http(server()).await;
        let client = Client::http(&url, options(era)).await.unwrap();
        every_shape(client, &format!("over HTTP, {era:?}")).await;
    }
}

#[tokio::test]
async fn a_tool_the_server_lacks_is_the_callers_error() {
    // A server that does not have the tool: the JSON-RPC error comes back
    // as the caller's own error, unchanged.
    let other = Server::new("other", "1.0.0")
        .tools(tools![find])
        .build()
        .unwrap();
    let other = Client::in_process(other, options(Era::Auto)).await.unwrap();
    match call_count_words(&other, "a b".into(), 1).await {
        Err(ToolCallError::Caller(error)) => {
            assert!(error.is_answer(), "{error}");
            assert!(error.to_string().contains("count_words"), "{error}");
        }
        other => panic!("expected the caller's error, found {other:?}"),
    }
    // And that server still answers its own tool.
    assert_eq!(
        call_find(&other, "T-2".into()).await.unwrap().unwrap().id,
        "T-2"
    );
}

/// A later version of `count_words`, served under the same name, that
/// answers words instead of a count.
///
/// # Arguments
/// * `text` - The text.
/// * `min_len` - The shortest word listed.
#[tool(name = "count_words")]
fn list_words(text: String, min_len: u8) -> Vec<String> {
    text.split_whitespace()
        .filter(|w| w.chars().count() >= usize::from(min_len))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_server_whose_tool_changed_its_value_is_a_decode_error() {
    let changed = Server::new("changed", "2.0.0")
        .tools(tools![list_words, find])
        .build()
        .unwrap();
    let url = serve_http(changed).await;
    let client = Client::http(&url, options(Era::Auto)).await.unwrap();
    match call_count_words(&client, "two words".into(), 1).await {
        Err(ToolCallError::Decode { tool, why }) => {
            assert_eq!(tool, "count_words");
            assert_eq!(
                why,
                r#"invalid type: sequence, expected u64; found ["two","words"]"#
            );
        }
        other => panic!("expected a decode error, found {other:?}"),
    }
    // The connection goes on.
    assert_eq!(
        call_find(&client, "T-1".into()).await.unwrap().unwrap().id,
        "T-1"
    );
}

/// Deleting tickets needs a grant the host did not give.
pub const DESK_ADMIN: typed_mcp::Capability =
    typed_mcp::Capability::new("desk.admin", "Delete tickets");

/// Delete a ticket.
///
/// # Arguments
/// * `id` - The ticket to delete.
#[tool(destructive, caps = [DESK_ADMIN])]
fn delete(id: String) -> bool {
    panic!("never runs: {id} is not deleted without desk.admin")
}

#[tokio::test]
async fn a_refused_call_is_the_tools_error_and_the_server_goes_on() {
    let server = Server::new("guarded", "1.0.0")
        .tools(tools![delete, find])
        .build()
        .unwrap();
    let client = Client::in_process(server, options(Era::Auto))
        .await
        .unwrap();
    match call_delete(&client, "T-1".into()).await {
        Err(ToolCallError::Tool { tool, message, .. }) => {
            assert_eq!(tool, "delete");
            assert!(
                message.contains("needs the capability desk.admin"),
                "{message}"
            );
        }
        other => panic!("expected the refusal, found {other:?}"),
    }
    assert_eq!(
        call_find(&client, "T-1".into()).await.unwrap().unwrap().id,
        "T-1"
    );
}
