//! Both protocol eras on one server, on the wire: a dated (2025-11-25) client
//! over newline-delimited stdio (`Server::serve_io`), beside 2026-07-28
//! requests to the same declarations.
//!
//! Every message the dated client receives is checked against the official
//! 2025-11-25 schema when it is available (`$MCP_LEGACY_SCHEMA`, or
//! `../shared/spec/schema-2025-11-25.json` next to the repository; a missing
//! default skips the check with one line on stderr).

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use jsonschema::Validator;
use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio::sync::mpsc;
use typed_mcp::declare::{ResourceDecl, ToolDecl};
use typed_mcp::receipt::MemorySink;
use typed_mcp::wire::{CallToolResult, ElicitResult, LoggingLevel, ResourceContents};
use typed_mcp::{Answer, NeedsInput, Server, ServerBuilder, ToolError};

use crate::support::envelope;

const WATCHED: &str = "test://watched";

/// A server with a tool that asks for the user's name (the same declaration
/// for both eras), a tool that logs and reports progress, and a resource.
fn builder() -> ServerBuilder {
    Server::new("eras", "0.1.0")
        .tool(
            ToolDecl::builder("greet")
                .description("Ask the user's name, then greet them.")
                .input_schema(json!({"type": "object"}))
                .handler(|_args, ctx| async move {
                    let answer = ctx
                        .input_response::<ElicitResult>("name")
                        .and_then(Result::ok);
                    let state = ctx.request_state().map(str::to_owned);
                    Ok::<_, ToolError>(match answer {
                        Some(answer) => {
                            let name = answer
                                .content
                                .as_ref()
                                .and_then(|c| c.get("name"))
                                .and_then(Value::as_str)
                                .unwrap_or("nobody")
                                .to_owned();
                            Answer::Done(CallToolResult::text(format!(
                                "Hello, {name}! (state {})",
                                state.as_deref().unwrap_or("none")
                            )))
                        }
                        None => Answer::NeedsInput(
                            NeedsInput::new()
                                .elicit(
                                    "name",
                                    "What is your name?",
                                    json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                                )
                                .state("asked-once"),
                        ),
                    })
                }),
        )
        .tool(
            ToolDecl::builder("work")
                .description("Log and report progress.")
                .input_schema(json!({"type": "object"}))
                .handler(|_args, ctx| async move {
                    for step in 1..=3 {
                        ctx.log(LoggingLevel::Info, json!({"step": step})).await;
                        ctx.progress(f64::from(step), Some(3.0), None).await;
                    }
                    Ok(CallToolResult::text("worked"))
                }),
        )
        .resource(
            ResourceDecl::builder(WATCHED, "watched")
                .description("A resource that changes.")
                .handler(|request, _ctx| async move {
                    Ok(vec![ResourceContents::text(request.uri, Some("text/plain"), "now")])
                }),
        )
}

/// The 2025-11-25 schema's `$defs`, or `None` when it is absent.
fn legacy_defs() -> Option<&'static Value> {
    static DEFS: OnceLock<Option<Value>> = OnceLock::new();
    DEFS.get_or_init(|| {
        let (path, explicit) = match std::env::var_os("MCP_LEGACY_SCHEMA") {
            Some(path) => (PathBuf::from(path), true),
            None => (
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../../../shared/spec/schema-2025-11-25.json"),
                false,
            ),
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let mut document: Value = serde_json::from_str(&text).expect("the schema is JSON");
                Some(document["$defs"].take())
            }
            Err(e) if explicit => panic!("MCP_LEGACY_SCHEMA {} is unreadable: {e}", path.display()),
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "note: 2025-11-25 schema checks skipped: {} is unreadable ({e})",
                    path.display()
                );
                None
            }
        }
    })
    .as_ref()
}

/// Panics when `value` violates the 2025-11-25 schema's `definition`.
#[track_caller]
fn check_legacy(definition: &str, value: &Value) {
    let Some(defs) = legacy_defs() else {
        return;
    };
    assert!(defs.get(definition).is_some(), "no definition {definition}");
    let wrapper = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
        "$ref": format!("#/$defs/{definition}"),
    });
    let validator = Validator::new(&wrapper).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{value} violates the 2025-11-25 {definition}: {errors:?}"
    );
}

/// Which 2025-11-25 definition the result of `method` must satisfy.
fn result_definition(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/get" => "GetPromptResult",
        _ => "Result",
    }
}

/// One end of a newline-delimited pipe to a server run by `serve_io`.
struct Wire {
    input: DuplexStream,
    output: mpsc::UnboundedReceiver<Value>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// The server's stdout: lines, sent to the test as JSON values.
struct Lines {
    tx: mpsc::UnboundedSender<Value>,
    pending: Vec<u8>,
}

impl std::io::Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let value = serde_json::from_slice(&line[..end]).expect("the server writes JSON lines");
            let _ = self.tx.send(value);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Wire {
    fn serve(server: Server) -> Wire {
        let (input, server_input) = tokio::io::duplex(64 * 1024);
        let (tx, output) = mpsc::unbounded_channel();
        let lines = Lines {
            tx,
            pending: Vec::new(),
        };
        let served = tokio::spawn(server.serve_io(server_input, lines));
        Wire {
            input,
            output,
            served,
        }
    }

    async fn send(&mut self, message: Value) {
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(b'\n');
        self.input.write_all(&bytes).await.unwrap();
    }

    /// The next message the server writes.
    async fn next(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(10), self.output.recv())
            .await
            .expect("the server wrote within 10 s")
            .expect("the server's output is open")
    }

    /// Nothing is written within `wait`.
    async fn silent_for(&mut self, wait: Duration) {
        if let Ok(Some(message)) = tokio::time::timeout(wait, self.output.recv()).await {
            panic!("expected nothing, the server wrote {message}");
        }
    }

    /// Sends a request and returns what the server wrote until its response:
    /// (the messages before it, the response).
    async fn request(&mut self, id: i64, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let mut before = Vec::new();
        loop {
            let message = self.next().await;
            if message["id"] == json!(id) && message.get("method").is_none() {
                if let Some(result) = message.get("result") {
                    check_legacy(result_definition(method), result);
                } else {
                    check_legacy("JSONRPCErrorResponse", &message);
                }
                return (before, message);
            }
            before.push(message);
        }
    }

    /// `initialize` at 2025-11-25 with these client capabilities, then
    /// `notifications/initialized`; returns the result.
    async fn initialize(&mut self, capabilities: Value) -> Value {
        let (_, response) = self
            .request(
                0,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                       "clientInfo": {"name": "dated-client", "version": "1.0.0"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        response["result"].clone()
    }

    async fn close(self) {
        drop(self.input);
        let served = tokio::time::timeout(Duration::from_secs(10), self.served)
            .await
            .expect("the server ends at end of input");
        served
            .unwrap()
            .expect("serve_io returns Ok at end of input");
    }
}

/// A result of the dated shape: none of what only 2026-07-28 has.
#[track_caller]
fn assert_dated(result: &Value) {
    for key in ["resultType", "ttlMs", "cacheScope"] {
        assert!(
            result.get(key).is_none(),
            "{key} in a dated result: {result}"
        );
    }
    assert!(
        result
            .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
            .is_none(),
        "_meta.serverInfo in a dated result: {result}"
    );
}

#[tokio::test]
async fn a_dated_client_initializes_lists_calls_and_pings_over_stdio() {
    let mut wire = Wire::serve(builder().build().unwrap());
    let init = wire.initialize(json!({})).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(init["serverInfo"]["name"], "eras");
    assert_eq!(init["capabilities"]["logging"], json!({}));
    assert_eq!(init["capabilities"]["resources"]["subscribe"], true);
    assert!(init["capabilities"].get("tools").is_some());
    assert_dated(&init);

    let (_, list) = wire.request(1, "tools/list", json!({})).await;
    assert_dated(&list["result"]);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["greet", "work"]);

    let (_, read) = wire
        .request(2, "resources/read", json!({"uri": WATCHED}))
        .await;
    assert_dated(&read["result"]);
    assert_eq!(read["result"]["contents"][0]["text"], "now");

    let (_, ping) = wire.request(3, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));

    // 2026-07-28 methods are not part of the dated revision.
    let (_, discover) = wire.request(4, "server/discover", json!({})).await;
    assert_eq!(discover["error"]["code"], -32601);

    // A second initialize is refused, and the session still serves.
    let (_, again) = wire
        .request(5, "initialize", json!({"protocolVersion": "2025-11-25"}))
        .await;
    assert_eq!(again["error"]["code"], -32600);
    let (_, ping) = wire.request(6, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
    wire.close().await;
}

#[tokio::test]
async fn an_older_dated_revision_is_negotiated_and_shaped() {
    let mut wire = Wire::serve(
        Server::new("old", "0.1.0")
            .tool(
                ToolDecl::builder("shaped")
                    .title("Shaped")
                    .description("Structured output.")
                    .input_schema(json!({"type": "object"}))
                    .output_schema(
                        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
                    )
                    .handler(|_a, _c| async { Ok(CallToolResult::structured(json!({"n": 1}))) }),
            )
            .build()
            .unwrap(),
    );
    let (_, init) = wire
        .request(0, "initialize", json!({"protocolVersion": "2025-03-26"}))
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
    let (_, list) = wire.request(1, "tools/list", json!({})).await;
    let tool = &list["result"]["tools"][0];
    assert!(
        tool.get("outputSchema").is_none() && tool.get("title").is_none(),
        "{tool}"
    );
    let (_, call) = wire
        .request(2, "tools/call", json!({"name": "shaped", "arguments": {}}))
        .await;
    assert!(call["result"].get("structuredContent").is_none(), "{call}");
    assert_eq!(call["result"]["content"][0]["type"], "text");
    wire.close().await;
}

#[tokio::test]
async fn the_same_handler_asks_a_modern_client_by_mrtr_and_a_dated_one_by_request() {
    let receipts = MemorySink::new();
    let server = builder().receipt_sink(receipts.clone()).build().unwrap();

    // 2026-07-28: an input_required result, then the retry.
    let client =
        crate::schema::client_with_capabilities(server.clone(), json!({"elicitation": {}}));
    let first = client.call_tool("greet", json!({})).await;
    let asked = first.result();
    assert_eq!(asked["resultType"], "input_required");
    assert_eq!(
        asked["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    let mut params = json!({
        "name": "greet", "arguments": {},
        "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": asked["requestState"],
    });
    params["_meta"] = client.envelope().into();
    let retry = client.request("tools/call", params).await;
    assert_eq!(
        retry.result()["content"][0]["text"],
        "Hello, Ada! (state asked-once)"
    );

    // 2025-11-25: the server sends elicitation/create on the session; the
    // client's answer resumes the same handler.
    let mut wire = Wire::serve(server);
    wire.initialize(json!({"elicitation": {}})).await;
    wire.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                     "params": {"name": "greet", "arguments": {}}}))
        .await;
    let request = wire.next().await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    assert_eq!(request["params"]["message"], "What is your name?");
    check_legacy("ElicitRequest", &request);
    let asked_id = request["id"].clone();
    assert!(asked_id.is_i64() || asked_id.is_string(), "{request}");
    wire.send(json!({"jsonrpc": "2.0", "id": asked_id,
                     "result": {"action": "accept", "content": {"name": "Grace"}}}))
        .await;
    let done = wire.next().await;
    assert_eq!(done["id"], 7, "{done}");
    check_legacy("CallToolResult", &done["result"]);
    assert_dated(&done["result"]);
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Hello, Grace! (state asked-once)"
    );
    wire.close().await;

    // Each call left one receipt naming its revision.
    let versions: Vec<(Option<String>, String)> = receipts
        .take()
        .into_iter()
        .map(|r| (r.protocol_version, format!("{:?}", r.outcome)))
        .collect();
    assert_eq!(
        versions,
        [
            (Some("2026-07-28".into()), "InputRequired".into()),
            (Some("2026-07-28".into()), "Completed".into()),
            (Some("2025-11-25".into()), "Completed".into()),
        ]
    );
}

#[tokio::test]
async fn a_dated_client_that_declared_no_elicitation_gets_a_plain_tool_error() {
    let mut wire = Wire::serve(builder().build().unwrap());
    wire.initialize(json!({})).await;
    let (before, done) = wire
        .request(1, "tools/call", json!({"name": "greet", "arguments": {}}))
        .await;
    assert!(before.is_empty(), "no request was sent: {before:?}");
    assert_eq!(done["result"]["isError"], true, "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("elicitation") && text.contains("did not declare it at initialize"),
        "{text}"
    );
    let (_, ping) = wire.request(2, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
    wire.close().await;
}

#[tokio::test]
async fn a_client_error_or_a_cancellation_ends_the_waiting_call_and_the_session_goes_on() {
    let mut wire = Wire::serve(builder().build().unwrap());
    wire.initialize(json!({"elicitation": {}})).await;
    wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "greet", "arguments": {}}}))
        .await;
    let request = wire.next().await;
    wire.send(json!({"jsonrpc": "2.0", "id": request["id"],
                     "error": {"code": -1, "message": "the user closed the dialog"}}))
        .await;
    let done = wire.next().await;
    assert_eq!(done["id"], 1);
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(
        done["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("the user closed the dialog"),
        "{done}"
    );

    // A response nobody waits for is ignored.
    wire.send(json!({"jsonrpc": "2.0", "id": 999, "result": {}}))
        .await;

    // Cancelled while waiting for the person: nothing more is sent for it.
    wire.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "greet", "arguments": {}}}))
        .await;
    let request = wire.next().await;
    assert_eq!(request["method"], "elicitation/create");
    wire.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 2, "reason": "gave up"}}),
    )
    .await;
    wire.silent_for(Duration::from_millis(200)).await;
    let (_, ping) = wire.request(3, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
    wire.close().await;
}

#[tokio::test]
async fn logging_progress_and_subscriptions_follow_the_session() {
    let server = builder().build().unwrap();
    let updates = server.resource_updates().clone();
    let mut wire = Wire::serve(server);
    wire.initialize(json!({})).await;

    // No log level set: no log messages; progress only with a token.
    let (before, _) = wire
        .request(1, "tools/call", json!({"name": "work", "arguments": {}}))
        .await;
    assert!(before.is_empty(), "{before:?}");

    let (_, set) = wire
        .request(2, "logging/setLevel", json!({"level": "info"}))
        .await;
    assert_eq!(set["result"], json!({}));
    let (_, bad) = wire
        .request(3, "logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let (before, done) = wire
        .request(
            4,
            "tools/call",
            json!({"name": "work", "arguments": {}, "_meta": {"progressToken": "p"}}),
        )
        .await;
    assert_eq!(done["result"]["content"][0]["text"], "worked");
    let logs = before
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .count();
    let progress: Vec<&Value> = before
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!((logs, progress.len()), (3, 3), "{before:?}");
    for message in &before {
        let definition = if message["method"] == "notifications/message" {
            "LoggingMessageNotification"
        } else {
            "ProgressNotification"
        };
        check_legacy(definition, message);
    }
    assert_eq!(progress[0]["params"]["progressToken"], "p");

    // Subscribed: an update is sent, in the dated shape; unsubscribed: not.
    let (_, subscribed) = wire
        .request(5, "resources/subscribe", json!({"uri": WATCHED}))
        .await;
    assert_eq!(subscribed["result"], json!({}));
    updates.publish(WATCHED);
    let update = wire.next().await;
    assert_eq!(
        update,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": WATCHED}})
    );
    check_legacy("ResourceUpdatedNotification", &update);
    updates.publish("test://other");
    let (_, unknown) = wire
        .request(6, "resources/subscribe", json!({"uri": "test://nothing"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
    let (_, _) = wire
        .request(7, "resources/unsubscribe", json!({"uri": WATCHED}))
        .await;
    updates.publish(WATCHED);
    wire.silent_for(Duration::from_millis(200)).await;
    wire.close().await;
}

#[tokio::test]
async fn the_strict_setting_answers_initialize_with_the_supported_versions() {
    let mut wire = Wire::serve(builder().legacy_clients(false).build().unwrap());
    let (_, refused) = wire
        .request(0, "initialize", json!({"protocolVersion": "2025-11-25"}))
        .await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    assert_eq!(refused["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_eq!(refused["error"]["data"]["requested"], "2025-11-25");
    // The 2026-07-28 wire is unchanged.
    let mut params = json!({"name": "work", "arguments": {}});
    params["_meta"] = envelope();
    let (_, call) = wire.request(1, "tools/call", params).await;
    assert_eq!(call["result"]["resultType"], "complete", "{call}");
    wire.close().await;
}

#[tokio::test]
async fn a_dated_call_continues_the_trace_and_is_redacted_and_bounded_like_any_other() {
    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    let receipts = MemorySink::new();
    let server = Server::new("governed", "0.1.0")
        .secret_values(["hunter2-secret"])
        .input_wait(Duration::from_millis(300))
        .receipt_sink(receipts.clone())
        .tool(
            ToolDecl::builder("leaky")
                .description("Asks with a secret in the question.")
                .input_schema(json!({"type": "object"}))
                .handler(|_a, _c| async {
                    Ok::<_, ToolError>(Answer::<CallToolResult>::NeedsInput(
                        NeedsInput::new().elicit(
                            "pin",
                            "Is hunter2-secret your password?",
                            json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                        ),
                    ))
                }),
        )
        .build()
        .unwrap();
    let mut wire = Wire::serve(server);
    wire.initialize(json!({"elicitation": {}})).await;
    wire.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "leaky", "arguments": {},
        "_meta": {"traceparent": format!("00-{TRACE}-00f067aa0ba902b7-01")}}}),
    )
    .await;
    // The request to the client leaves by the same redacting exit.
    let request = wire.next().await;
    assert_eq!(request["method"], "elicitation/create");
    let text = request.to_string();
    assert!(!text.contains("hunter2-secret"), "{text}");
    // Nobody answers: the wait is bounded, and the model is told why.
    let done = wire.next().await;
    assert_eq!(done["id"], 1);
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(
        done["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("did not answer elicitation/create"),
        "{done}"
    );
    let (_, ping) = wire.request(2, "ping", json!({})).await;
    assert_eq!(ping["result"], json!({}));
    wire.close().await;
    let receipt = receipts.take().pop().expect("a receipt");
    assert_eq!(receipt.trace_id, TRACE);
    assert_eq!(receipt.protocol_version.as_deref(), Some("2025-11-25"));
}
