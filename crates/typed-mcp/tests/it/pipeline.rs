//! The call pipeline around the router: receipts for the router's refusals,
//! admission (overload), deadlines for every kind, the application's tower
//! layers, draining, and a transport written against `typed_mcp::transport`
//! alone.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Notify;
use typed_mcp::middleware::{BoxError, HandlerCall, HandlerDone};
use typed_mcp::receipt::{MemorySink, Outcome, Receipt};
use typed_mcp::transport::{Connection, Inbound, Message, Outbox};
use typed_mcp::wire::{CallToolResult, GetPromptResult, PromptMessage, ResourceContents};
use typed_mcp::{
    RpcError, Server, ServerBuilder,
    declare::{PromptDecl, ResourceDecl, ToolDecl},
};
use typed_mcp_client::testing::TestClient;

use crate::support::{enveloped, named_headers, send_http};

fn tool(name: &str) -> typed_mcp::declare::ToolBuilder {
    ToolDecl::builder(name)
        .description("A pipeline fixture tool.")
        .input_schema(json!({"type": "object"}))
}

/// A server with a tool needing `sampling`, a tool with an `Mcp-Param`
/// header, a plain tool, a tool that waits for `release`, a slow resource and
/// a prompt with a required argument, recording receipts in memory.
fn build(
    gate: Arc<Gate>,
    configure: impl FnOnce(ServerBuilder) -> ServerBuilder,
) -> (Server, MemorySink) {
    let receipts = MemorySink::new();
    let builder = Server::new("pipeline", "0.1.0")
        .tool(
            tool("ask")
                .requires_client_capability("sampling")
                .handler(|_a, _c| async { Ok(CallToolResult::text("asked")) }),
        )
        .tool(
            ToolDecl::builder("regional")
                .description("A tool whose region travels in a header.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"region": {
                        "type": "string", "description": "The region.", "x-mcp-header": "Region"
                    }},
                    "required": ["region"]
                }))
                .handler(|_a, _c| async { Ok(CallToolResult::text("regional")) }),
        )
        .tool(tool("plain").handler(|_a, _c| async { Ok(CallToolResult::text("plain")) }))
        .tool(tool("wait").handler(move |_a, _c| {
            let gate = gate.clone();
            async move {
                gate.started.notify_one();
                gate.release.notified().await;
                Ok(CallToolResult::text("released"))
            }
        }))
        .tool(tool("hang").handler(|_a, _c| async {
            std::future::pending::<()>().await;
            Ok(CallToolResult::text("never"))
        }))
        .resource(
            ResourceDecl::builder("file:///slow", "slow")
                .description("A resource that takes its time.")
                .handler(|_req, _ctx| async {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    Ok(vec![ResourceContents::text("file:///slow", None, "late")])
                }),
        )
        .prompt(
            PromptDecl::builder("greet")
                .description("Greet someone.")
                .argument("name", "Who to greet.", true)
                .handler(|_args, _ctx| async {
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                        "hello",
                    )]))
                }),
        )
        .receipt_sink(receipts.clone());
    (
        configure(builder).build().expect("the fixture builds"),
        receipts,
    )
}

/// Lets a test know when `wait` runs, and let it finish.
#[derive(Default)]
struct Gate {
    started: Notify,
    release: Notify,
}

fn receipt_of<'a>(receipts: &'a [Receipt], name: &str) -> &'a Receipt {
    receipts
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no receipt for {name}: {receipts:#?}"))
}

#[tokio::test]
async fn router_refusals_of_a_known_declaration_leave_receipts() {
    let (server, receipts) = build(Arc::default(), |b| b);
    let client = TestClient::new(server);

    // -32021: the tool needs a client capability this request did not declare.
    let missing = client.call_tool("ask", json!({})).await;
    assert_eq!(missing.error_code(), Some(-32021));

    // -32020: the Mcp-Param header disagrees with the argument.
    let message = enveloped(
        json!(2),
        "tools/call",
        json!({"name": "regional", "arguments": {"region": "eu"}}),
    );
    let mut headers = named_headers("tools/call", "regional");
    headers.push(("Mcp-Param-Region".into(), "us".into()));
    let mismatch = send_http(&client, &message, &headers).await;
    assert_eq!(mismatch.error_code(), Some(-32020));

    // -32602: malformed multi round-trip fields.
    let malformed = client
        .request(
            "tools/call",
            json!({"name": "plain", "arguments": {}, "inputResponses": 5}),
        )
        .await;
    assert_eq!(malformed.error_code(), Some(-32602));

    // -32602: a prompt called without its required argument.
    let no_name = client.get_prompt("greet", json!({})).await;
    assert_eq!(no_name.error_code(), Some(-32602));

    // An unknown tool names no declaration: no receipt.
    let unknown = client.call_tool("nope", json!({})).await;
    assert_eq!(unknown.error_code(), Some(-32602));

    let all = receipts.take();
    assert_eq!(
        all.len(),
        4,
        "one receipt per refusal of a declaration: {all:#?}"
    );
    assert_eq!(
        receipt_of(&all, "ask").outcome,
        Outcome::Error { code: -32021 }
    );
    assert_eq!(
        receipt_of(&all, "regional").outcome,
        Outcome::Error { code: -32020 }
    );
    assert_eq!(
        receipt_of(&all, "plain").outcome,
        Outcome::Error { code: -32602 }
    );
    let greet = receipt_of(&all, "greet");
    assert_eq!(greet.outcome, Outcome::Error { code: -32602 });
    assert_eq!(greet.method, "prompts/get");
    assert!(
        all.iter()
            .all(|r| r.digest.is_some() && r.trace_id.len() == 32)
    );

    // And the server still serves.
    assert_eq!(
        client.call_tool("plain", json!({})).await.result()["content"][0]["text"],
        "plain"
    );
}

#[tokio::test]
async fn calls_beyond_max_pending_are_shed_with_a_receipt_and_serving_resumes() {
    let gate = Arc::new(Gate::default());
    let (server, receipts) = build(gate.clone(), |b| b.max_pending(1));
    let client = Arc::new(TestClient::new(server));
    let waiting = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("wait", json!({})).await }
    });
    gate.started.notified().await;
    let shed = client.call_tool("plain", json!({})).await;
    assert_eq!(shed.error_code(), Some(-31002), "{:#?}", shed.messages);
    assert_eq!(shed.reply_status(), Some(503));
    assert_eq!(shed.error().unwrap()["data"]["retryAfterMs"], json!(1000));
    gate.release.notify_one();
    let first = waiting.await.unwrap();
    assert_eq!(first.result()["content"][0]["text"], "released");
    let served = client.call_tool("plain", json!({})).await;
    assert_eq!(served.result()["content"][0]["text"], "plain");
    let all = receipts.take();
    let outcomes: Vec<_> = all.iter().map(|r| (r.name.as_str(), &r.outcome)).collect();
    assert_eq!(
        outcomes,
        [
            ("plain", &Outcome::Overloaded),
            ("wait", &Outcome::Completed),
            ("plain", &Outcome::Completed),
        ]
    );
}

#[tokio::test]
async fn resources_and_prompts_have_deadlines_too() {
    let (server, receipts) = build(Arc::default(), |b| {
        b.default_timeout(Duration::from_millis(50))
    });
    let client = TestClient::new(server);
    let slow = client.read_resource("file:///slow").await;
    assert_eq!(slow.error_code(), Some(-32603));
    let message = slow.error().unwrap()["message"].as_str().unwrap();
    assert!(message.contains("timed out after 50ms"), "{message}");
    let all = receipts.take();
    assert_eq!(all[0].outcome, Outcome::TimedOut { after_ms: 50 });
}

/// A layer that refuses every second call that reaches it.
#[derive(Clone)]
struct EverySecond<S> {
    inner: S,
    seen: Arc<AtomicU64>,
}

impl<S> tower::Service<HandlerCall> for EverySecond<S>
where
    S: tower::Service<HandlerCall, Response = HandlerDone, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = HandlerDone;
    type Error = BoxError;
    type Future = futures_util::future::BoxFuture<'static, Result<HandlerDone, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: HandlerCall) -> Self::Future {
        let n = self.seen.fetch_add(1, Ordering::SeqCst) + 1;
        if n.is_multiple_of(2) {
            let name = call.name().to_owned();
            return Box::pin(
                async move { Err(format!("call {n} to {name} is one too many").into()) },
            );
        }
        Box::pin(self.inner.call(call))
    }
}

#[tokio::test]
async fn a_layer_that_refuses_every_second_call_is_answered_and_recorded() {
    let seen = Arc::new(AtomicU64::new(0));
    let layer_seen = seen.clone();
    let (server, receipts) = build(Arc::default(), |b| {
        b.layer(tower::layer::layer_fn(move |inner| EverySecond {
            inner,
            seen: layer_seen.clone(),
        }))
        // Not granted: refused before any layer sees it.
        .tool(
            tool("guarded")
                .requires(typed_mcp::Capability::new(
                    "pipeline.guarded",
                    "A guarded tool.",
                ))
                .handler(|_a, _c| async { Ok(CallToolResult::text("guarded")) }),
        )
    });
    let client = TestClient::new(server);
    let mut answers = Vec::new();
    for _ in 0..6 {
        let response = client.call_tool("plain", json!({})).await;
        answers.push(match response.error() {
            None => "served".to_owned(),
            Some(error) => {
                assert_eq!(error["code"], json!(-31003));
                assert!(error["message"].as_str().unwrap().contains("one too many"));
                "refused".to_owned()
            }
        });
    }
    assert_eq!(
        answers,
        [
            "served", "refused", "served", "refused", "served", "refused"
        ]
    );
    let guarded = client.call_tool("guarded", json!({})).await;
    assert_eq!(guarded.result()["isError"], json!(true));
    assert_eq!(
        seen.load(Ordering::SeqCst),
        6,
        "the ungranted call never reached the layer"
    );
    let kinds: Vec<&str> = receipts.take().iter().map(|r| r.outcome.kind()).collect();
    assert_eq!(
        kinds,
        [
            "completed",
            "refused_by_layer",
            "completed",
            "refused_by_layer",
            "completed",
            "refused_by_layer",
            "refused"
        ]
    );
}

#[tokio::test]
async fn a_layer_can_answer_with_its_own_json_rpc_error() {
    let (server, _receipts) = build(Arc::default(), |b| {
        b.layer(tower::layer::layer_fn(
            |_inner: typed_mcp::middleware::HandlerService| {
                tower::service_fn(|_call: HandlerCall| async {
                    Err::<HandlerDone, BoxError>(Box::new(RpcError::overloaded("slow down", 250)))
                })
            },
        ))
    });
    let client = TestClient::new(server);
    let response = client.get_prompt("greet", json!({"name": "ada"})).await;
    assert_eq!(response.error_code(), Some(-31002));
    assert_eq!(response.reply_status(), Some(503));
    assert_eq!(
        response.error().unwrap()["data"]["retryAfterMs"],
        json!(250)
    );
}

/// A receipt's duration is the call's: the clock is read only when a
/// receipt is kept, and then from the call's acceptance to its end.
#[tokio::test]
async fn a_receipt_measures_the_call_it_records() {
    let gate = Arc::new(Gate::default());
    let (server, receipts) = build(gate.clone(), |b| b);
    let client = TestClient::new(server);
    let (answer, ()) = tokio::join!(client.call_tool("wait", json!({})), async {
        gate.started.notified().await;
        tokio::time::sleep(Duration::from_millis(30)).await;
        gate.release.notify_one();
    });
    assert_eq!(answer.result()["content"][0]["text"], "released");
    let all = receipts.take();
    let wait = receipt_of(&all, "wait");
    assert_eq!(wait.outcome, Outcome::Completed);
    assert!(
        (30_000..5_000_000).contains(&wait.duration_us),
        "the call waited 30 ms, its receipt says {} us",
        wait.duration_us
    );
}

#[tokio::test]
async fn draining_cancels_what_outlives_the_deadline_with_its_receipt() {
    let (server, receipts) = build(Arc::default(), |b| b);
    let connection = Connection::new(server);
    let (outbox, mut inbox) = Outbox::channel();
    let message = serde_json::to_vec(&enveloped(
        json!(1),
        "tools/call",
        json!({"name": "hang", "arguments": {}}),
    ))
    .unwrap();
    connection
        .accept(&message, Inbound::default(), &outbox)
        .await;
    drop(outbox);
    connection.drain_within(Duration::from_millis(50)).await;
    assert_eq!(connection.in_flight(), 0);
    assert!(
        inbox.recv().await.is_none(),
        "a cancelled call is never answered"
    );
    assert_eq!(receipts.take()[0].outcome, Outcome::Cancelled);
}

/// A newline-delimited transport over an in-memory duplex, written with
/// nothing but `typed_mcp::transport`.
#[tokio::test]
async fn a_transport_can_be_written_against_the_transport_module_alone() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let server = Server::new("duplex", "0.1.0")
        .tool(tool("steps").handler(|_a, ctx| async move {
            for step in 1..=3 {
                ctx.progress(f64::from(step), Some(3.0), None).await;
            }
            Ok(CallToolResult::text("stepped"))
        }))
        .build()
        .unwrap();
    let (client_end, server_end) = tokio::io::duplex(1024);
    let (server_read, mut server_write) = tokio::io::split(server_end);
    let transport = tokio::spawn(async move {
        let connection = Connection::new(server);
        let (outbox, mut inbox) = Outbox::channel();
        let writer = tokio::spawn(async move {
            let mut kinds = Vec::new();
            while let Some(out) = inbox.recv().await {
                kinds.push(match out.message() {
                    Message::Notification(_) => "notification",
                    Message::Reply(_) => "reply",
                    Message::Request(_) => "request",
                });
                server_write.write_all(out.body()).await.unwrap();
                server_write.write_all(b"\n").await.unwrap();
            }
            kinds
        });
        let mut lines = BufReader::new(server_read).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            connection
                .accept(line.as_bytes(), Inbound::default(), &outbox)
                .await;
        }
        connection.drain().await;
        outbox.end();
        writer.await.unwrap()
    });
    let (client_read, mut client_write) = tokio::io::split(client_end);
    let mut meta = crate::support::envelope();
    meta["progressToken"] = json!("p");
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "steps", "arguments": {}, "_meta": meta}
    });
    let mut bytes = serde_json::to_vec(&call).unwrap();
    bytes.push(b'\n');
    client_write.write_all(&bytes).await.unwrap();
    let mut replies = BufReader::new(client_read).lines();
    let mut received = Vec::new();
    while let Some(line) = replies.next_line().await.unwrap() {
        let message: Value = serde_json::from_str(&line).unwrap();
        let done = message.get("id").is_some();
        received.push(message);
        if done {
            break;
        }
    }
    // End of input: the transport drains and its writer stops.
    client_write.shutdown().await.unwrap();
    assert_eq!(
        received.len(),
        4,
        "three progress notifications, then the reply"
    );
    assert_eq!(received[2]["params"]["progress"], json!(3.0));
    assert_eq!(received[3]["result"]["content"][0]["text"], "stepped");
    let kinds = transport.await.unwrap();
    assert_eq!(
        kinds,
        ["notification", "notification", "notification", "reply"]
    );
}

#[tokio::test]
async fn towers_own_middleware_fits_the_seam() {
    // A concurrency limit of one: the second call waits for the first.
    let gate = Arc::new(Gate::default());
    let (server, receipts) = build(gate.clone(), |b| {
        b.layer(tower::limit::ConcurrencyLimitLayer::new(1))
    });
    let client = Arc::new(TestClient::new(server));
    let first = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("wait", json!({})).await }
    });
    gate.started.notified().await;
    let second = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("plain", json!({})).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        !second.is_finished(),
        "the layer holds the second call back"
    );
    gate.release.notify_one();
    assert_eq!(
        first.await.unwrap().result()["content"][0]["text"],
        "released"
    );
    assert_eq!(
        second.await.unwrap().result()["content"][0]["text"],
        "plain"
    );
    assert_eq!(receipts.take().len(), 2);
}

#[tokio::test]
async fn what_the_router_echoes_leaves_redacted_too() {
    const KEY: &str = "sk-live-0123456789abcdefghij";
    let (server, _receipts) = build(Arc::default(), |b| b.secret_values([KEY]));
    let client = TestClient::new(server);
    let unknown = client.call_tool(KEY, json!({})).await;
    assert_eq!(unknown.error_code(), Some(-32602));
    let text = serde_json::to_string(&unknown.messages).unwrap();
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("[REDACTED]"), "{text}");
}
