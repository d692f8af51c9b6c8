//! The runtime around handlers: contained panics, tool errors, output schema
//! enforcement, request-scoped progress and log notifications, the handler
//! context, cancellation and the concurrency limit.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio::sync::Notify;
use typed_mcp::transport::Accepted;
use typed_mcp::wire::{CallToolResult, LoggingLevel};
use typed_mcp::{RpcError, Server, ToolContext, ToolError, declare::ToolDecl};
use typed_mcp_client::testing::TestClient;

use crate::schema::client;
use crate::support::assert_result;

fn tool(name: &str) -> typed_mcp::declare::ToolBuilder {
    ToolDecl::builder(name).description(format!("The tool {name}."))
}

fn explode(kind: &str) -> Result<CallToolResult, ToolError> {
    panic!("{kind} handler exploded")
}

fn server() -> Server {
    Server::new("runtime-fixture", "0.1.0")
        .tool(tool("ok").handler(|_a, _c| async { Ok(CallToolResult::text("fine")) }))
        .tool(tool("panic_async").handler(|_a, _c| async { explode("async") }))
        .tool(tool("panic_blocking").handler(|_a, _c| typed_mcp::blocking(move || explode("blocking"))))
        .tool(tool("fails").handler(|_a, _c| async { Err::<CallToolResult, _>(ToolError::execution("disk full")) }))
        .tool(tool("refuses").handler(|_a, _c| async {
            Err::<CallToolResult, _>(ToolError::Protocol(RpcError::invalid_params("count must be positive")))
        }))
        .tool(
            tool("structured")
                .output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
                .input_schema(json!({
                    "type": "object",
                    "properties": {"omit": {"type": "boolean", "description": "Return no structure."}}
                }))
                .handler(|args, _c| async move {
                    if args.get("omit") == Some(&json!(true)) {
                        Ok(CallToolResult::text("no structure"))
                    } else {
                        Ok(CallToolResult::structured(json!({"n": 1})))
                    }
                }),
        )
        .tool(
            tool("structured_error")
                .output_schema(json!({"type": "object"}))
                .handler(|_a, _c| async { Err::<CallToolResult, _>(ToolError::execution("failed before any output")) }),
        )
        .tool(tool("progress").handler(|_a, ctx| async move {
            let sent = [
                ctx.progress(0.0, Some(100.0), Some("start")).await,
                ctx.progress(50.0, Some(100.0), None).await,
                ctx.progress(100.0, Some(100.0), Some("done")).await,
            ];
            Ok(CallToolResult::structured(json!({"sent": sent})))
        }))
        .tool(tool("progress_backwards").handler(|_a, ctx| async move {
            let mut sent = Vec::new();
            for p in [10.0, 5.0, 10.0, 20.0] {
                sent.push(ctx.progress(p, None, None).await);
            }
            Ok(CallToolResult::structured(json!({"sent": sent})))
        }))
        .tool(tool("log").handler(|_a, ctx| typed_mcp::blocking(move || {
            // A blocking handler drives the notification futures itself.
            let runtime = tokio::runtime::Handle::current();
            let sent = [
                runtime.block_on(ctx.log(LoggingLevel::Debug, "debug line")),
                runtime.block_on(ctx.log(LoggingLevel::Info, "info line")),
                runtime.block_on(ctx.log(LoggingLevel::Warning, json!({"disk": "low"}))),
            ];
            Ok(CallToolResult::structured(json!({"sent": sent})))
        })))
        .tool(tool("whoami_async").handler(|_a, ctx| async move {
            let current = ToolContext::current();
            assert_eq!(current.request_id(), ctx.request_id());
            Ok(CallToolResult::text(current.request_id().to_string()))
        }))
        .tool(tool("whoami_blocking").handler(|_a, ctx| typed_mcp::blocking(move || {
            let current = ToolContext::current();
            assert_eq!(current.request_id(), ctx.request_id());
            Ok(CallToolResult::text(current.request_id().to_string()))
        })))
        .tool(tool("meta").handler(|_a, ctx| async move {
            let meta = ctx.meta();
            Ok(CallToolResult::structured(json!({
                "other": Value::Object(meta.other.clone()),
                "client": ctx.client_info().map(|c| c.name.clone()),
                "traceparent": meta.traceparent,
                "sampling": ctx.client_capabilities().has("sampling"),
            })))
        }))
        .build()
        .expect("the fixture builds")
}

/// `params` for a tools/call of `name` whose `_meta` is this client's envelope
/// plus `extra`.
fn params_with_meta(client: &TestClient, name: &str, extra: Value) -> Value {
    let mut meta = client.envelope();
    meta.extend(extra.as_object().expect("extra _meta keys").clone());
    json!({"name": name, "arguments": {}, "_meta": meta})
}

// ---------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_panicking_async_handler_is_an_internal_error_and_the_server_lives_on() {
    let client = client(server());
    for _ in 0..2 {
        let response = client.call_tool("panic_async", json!({})).await;
        let error = response.error().cloned().expect("an error");
        assert_eq!(error["code"], -32603);
        assert!(
            !error["message"].as_str().unwrap().contains("exploded"),
            "the panic message stays in the server's log: {error}"
        );
        assert_eq!(
            client.call_tool("ok", json!({})).await.result()["content"][0]["text"],
            "fine"
        );
    }
}

#[tokio::test]
async fn a_panicking_blocking_handler_is_an_internal_error_and_the_server_lives_on() {
    let client = client(server());
    for _ in 0..2 {
        let response = client.call_tool("panic_blocking", json!({})).await;
        assert_eq!(
            response.error_code(),
            Some(-32603),
            "{:?}",
            response.messages
        );
        assert_eq!(
            client.call_tool("ok", json!({})).await.result()["content"][0]["text"],
            "fine"
        );
    }
}

#[tokio::test]
async fn an_execution_error_is_a_result_with_is_error() {
    let response = client(server()).call_tool("fails", json!({})).await;
    let result = response.result();
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "disk full"}])
    );
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "runtime-fixture"
    );
}

#[tokio::test]
async fn a_protocol_error_from_a_handler_is_a_json_rpc_error() {
    let client = client(server());
    let message = json!({
        "jsonrpc": "2.0", "id": "p", "method": "tools/call",
        "params": {"name": "refuses", "_meta": client.envelope()}
    });
    let response = client.send(&message).await;
    assert_eq!(
        response.accepted,
        Accepted::Started {
            id: "p".into(),
            notifies: false
        }
    );
    assert_eq!(response.messages.len(), 1);
    assert_eq!(response.messages[0]["id"], "p");
    assert_eq!(
        response.messages[0]["error"],
        json!({"code": -32602, "message": "count must be positive"})
    );
}

#[tokio::test]
async fn an_output_schema_tool_must_return_structured_content() {
    let client = client(server());
    let response = client.call_tool("structured", json!({"omit": true})).await;
    assert_eq!(
        response.error_code(),
        Some(-32603),
        "{:?}",
        response.messages
    );

    let response = client.call_tool("structured", json!({})).await;
    assert_eq!(response.result()["structuredContent"], json!({"n": 1}));

    // A tool error needs no structured content.
    let response = client.call_tool("structured_error", json!({})).await;
    assert_eq!(response.result()["isError"], true);
}

// ---------------------------------------------------------------------------
// Progress and logging
// ---------------------------------------------------------------------------

#[tokio::test]
async fn progress_is_sent_before_the_response_echoing_the_token() {
    let client = client(server());
    for token in [json!("tok-1"), json!(7), json!(-1), json!("")] {
        let params = params_with_meta(&client, "progress", json!({"progressToken": token}));
        let response = client.request("tools/call", params).await;
        assert_eq!(response.messages.len(), 4, "{:#?}", response.messages);
        let (notes, last) = response.messages.split_at(3);
        for (note, expected) in notes.iter().zip([0.0, 50.0, 100.0]) {
            assert_eq!(note["method"], "notifications/progress", "{note}");
            assert!(note.get("id").is_none(), "{note}");
            // Same value and same JSON type as the token sent.
            assert_eq!(note["params"]["progressToken"], token, "{note}");
            assert_eq!(note["params"]["progress"], json!(expected), "{note}");
            assert_eq!(note["params"]["total"], json!(100.0), "{note}");
        }
        assert_eq!(notes[0]["params"]["message"], "start");
        assert!(notes[1]["params"].get("message").is_none());
        assert!(last[0].get("result").is_some(), "the response comes last");
        assert_eq!(
            response.result()["structuredContent"]["sent"],
            json!([true, true, true])
        );
    }
}

#[tokio::test]
async fn no_progress_is_sent_without_a_token() {
    let response = client(server()).call_tool("progress", json!({})).await;
    assert_eq!(response.messages.len(), 1, "{:#?}", response.messages);
    assert_eq!(
        response.result()["structuredContent"]["sent"],
        json!([false, false, false])
    );
}

#[tokio::test]
async fn progress_that_does_not_increase_is_not_sent() {
    let client = client(server());
    let params = params_with_meta(&client, "progress_backwards", json!({"progressToken": "b"}));
    let response = client.request("tools/call", params).await;
    let progress: Vec<Value> = response
        .notifications()
        .map(|n| n["params"]["progress"].clone())
        .collect();
    assert_eq!(progress, [json!(10.0), json!(20.0)]);
    assert_eq!(
        response.result()["structuredContent"]["sent"],
        json!([true, false, false, true])
    );
}

#[tokio::test]
async fn log_messages_are_sent_only_at_or_above_the_requested_level() {
    let client = client(server());
    let cases = [
        ("debug", vec!["debug", "info", "warning"]),
        ("info", vec!["info", "warning"]),
        ("warning", vec!["warning"]),
        ("error", vec![]),
    ];
    for (threshold, expected) in cases {
        let params = params_with_meta(
            &client,
            "log",
            json!({"io.modelcontextprotocol/logLevel": threshold}),
        );
        let response = client.request("tools/call", params).await;
        let levels: Vec<&str> = response
            .notifications()
            .inspect(|n| assert_eq!(n["method"], "notifications/message", "{n}"))
            .map(|n| n["params"]["level"].as_str().unwrap())
            .collect();
        assert_eq!(levels, expected, "threshold {threshold}");
        let sent: Vec<bool> = ["debug", "info", "warning"]
            .iter()
            .map(|l| expected.contains(l))
            .collect();
        assert_eq!(response.result()["structuredContent"]["sent"], json!(sent));
        if threshold == "debug" {
            assert_eq!(response.messages[0]["params"]["data"], "debug line");
            assert_eq!(
                response.messages[2]["params"]["data"],
                json!({"disk": "low"})
            );
        }
    }
}

#[tokio::test]
async fn no_log_messages_are_sent_without_a_log_level() {
    let response = client(server()).call_tool("log", json!({})).await;
    assert_eq!(response.messages.len(), 1, "{:#?}", response.messages);
    assert_eq!(
        response.result()["structuredContent"]["sent"],
        json!([false, false, false])
    );
}

// ---------------------------------------------------------------------------
// Context
// ---------------------------------------------------------------------------

#[tokio::test]
async fn the_current_context_is_reachable_in_async_and_blocking_handlers() {
    let client = client(server());
    for name in ["whoami_async", "whoami_blocking"] {
        for id in [json!("ctx-id"), json!(4242)] {
            let message = json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": name, "_meta": client.envelope()}
            });
            let result = assert_result(&client.send(&message).await, id.clone());
            // The id prints as JSON: strings quoted, integers bare.
            assert_eq!(result["content"][0]["text"], id.to_string(), "{name}");
        }
    }
    assert!(
        ToolContext::try_current().is_none(),
        "no context outside a handler"
    );
}

/// The keys a handler gets in `RequestMeta::other` are in the order the
/// client sent them, with the known keys taken out (a trace key first, so a
/// removal that moved the last key into its place would show), whether the
/// router took the call's fast path or parsed the whole message.
#[tokio::test]
async fn unknown_meta_keys_reach_the_handler_in_the_order_sent() {
    let client = client(server());
    let extra = json!({
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "k1": 1,
        "progressToken": "p",
        "k2": 2,
        "k3": 3
    });
    let plain = params_with_meta(&client, "meta", extra.clone());
    // A params member the fast path does not know: the full parse.
    let mut parsed = plain.clone();
    parsed["com.example/extra"] = json!(true);
    for params in [plain, parsed] {
        let result = client.request("tools/call", params).await.result().clone();
        let other = result["structuredContent"]["other"]
            .as_object()
            .expect("other keys");
        assert_eq!(
            other.keys().collect::<Vec<_>>(),
            ["k1", "k2", "k3"],
            "{result}"
        );
    }
}

#[tokio::test]
async fn unknown_meta_keys_reach_the_handler() {
    let client = client(server()).with_capabilities(json!({"sampling": {}}));
    let params = params_with_meta(
        &client,
        "meta",
        json!({
            "com.example/tenant": {"id": 7},
            "plain": "value",
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        }),
    );
    let result = client.request("tools/call", params).await.result().clone();
    let structured = &result["structuredContent"];
    assert_eq!(
        structured["other"],
        json!({"com.example/tenant": {"id": 7}, "plain": "value"})
    );
    assert_eq!(structured["client"], "typed-mcp-test-client");
    assert_eq!(
        structured["traceparent"],
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    );
    assert_eq!(structured["sampling"], true);
}

// ---------------------------------------------------------------------------
// Cancellation and concurrency
// ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_sends_nothing_and_its_handler_stops() {
    let started = Arc::new(Notify::new());
    let dropped = Arc::new(Notify::new());
    let (s, d) = (started.clone(), dropped.clone());
    let server = Server::new("cancel", "1")
        .tool(tool("hang").handler(move |_a, _c| {
            let (started, dropped) = (s.clone(), d.clone());
            async move {
                // Signals when the future is dropped, i.e. the call is aborted.
                struct OnDrop(Arc<Notify>);
                impl Drop for OnDrop {
                    fn drop(&mut self) {
                        self.0.notify_one();
                    }
                }
                let _guard = OnDrop(dropped);
                started.notify_one();
                std::future::pending::<()>().await;
                Ok(CallToolResult::text("never"))
            }
        }))
        .tool(tool("ok").handler(|_a, _c| async { Ok(CallToolResult::text("fine")) }))
        .build()
        .unwrap();
    let client = client(server);
    let call = json!({
        "jsonrpc": "2.0", "id": "c1", "method": "tools/call",
        "params": {"name": "hang", "_meta": client.envelope()}
    });
    let cancel = json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "c1", "reason": "user"}
    });
    let (response, cancelled) = tokio::join!(client.send(&call), async {
        started.notified().await;
        client.send(&cancel).await
    });
    assert!(cancelled.messages.is_empty());
    assert_eq!(cancelled.accepted, Accepted::Dropped);
    assert_eq!(
        response.accepted,
        Accepted::Started {
            id: "c1".into(),
            notifies: false
        }
    );
    assert!(
        response.messages.is_empty(),
        "nothing is sent for a cancelled call: {:?}",
        response.messages
    );
    dropped.notified().await;
    // The same id can be used again afterwards.
    let again = json!({
        "jsonrpc": "2.0", "id": "c1", "method": "tools/call",
        "params": {"name": "ok", "_meta": client.envelope()}
    });
    assert_result(&client.send(&again).await, json!("c1"));
}

/// The token a handler hands to work of its own before the client cancels
/// fires on `notifications/cancelled`; a handler that asks for its first
/// token only after the cancel gets one already fired. (A call's
/// cancellation makes its token only when asked for: each case is its own
/// call, so neither token exists before the other's moment.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_handed_out_before_a_cancel_fires_and_one_first_taken_after_is_fired() {
    let started = Arc::new(Notify::new());
    let fired = Arc::new(Notify::new());
    let (s, f) = (started.clone(), fired.clone());
    let (s2, f2) = (started.clone(), fired.clone());
    let server = Server::new("cancel", "1")
        .tool(tool("token_first").handler(move |_a, ctx: ToolContext| {
            let (started, fired) = (s.clone(), f.clone());
            async move {
                let token = ctx.cancellation_token();
                tokio::spawn(async move {
                    token.cancelled().await;
                    fired.notify_one();
                });
                started.notify_one();
                std::future::pending::<()>().await;
                Ok(CallToolResult::text("never"))
            }
        }))
        .tool(tool("token_later").handler(move |_a, ctx: ToolContext| {
            let (started, fired) = (s2.clone(), f2.clone());
            async move {
                // Outlives the call, which the cancel drops.
                tokio::spawn(async move {
                    while !ctx.is_cancelled() {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                    if ctx.cancellation_token().is_cancelled() {
                        fired.notify_one();
                    }
                });
                started.notify_one();
                std::future::pending::<()>().await;
                Ok(CallToolResult::text("never"))
            }
        }))
        .tool(tool("ok").handler(|_a, _c| async { Ok(CallToolResult::text("fine")) }))
        .build()
        .unwrap();
    let client = client(server);
    for (id, name) in [("t1", "token_first"), ("t2", "token_later")] {
        let call = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "_meta": client.envelope()}
        });
        let cancel = json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "user"}
        });
        let (response, _) = tokio::join!(client.send(&call), async {
            started.notified().await;
            client.send(&cancel).await
        });
        assert!(
            response.messages.is_empty(),
            "{name}: {:?}",
            response.messages
        );
        tokio::time::timeout(Duration::from_secs(5), fired.notified())
            .await
            .unwrap_or_else(|_| panic!("{name}: the call's token did not fire"));
    }
    // And the server still serves.
    let again = json!({
        "jsonrpc": "2.0", "id": "t3", "method": "tools/call",
        "params": {"name": "ok", "_meta": client.envelope()}
    });
    assert_result(&client.send(&again).await, json!("t3"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn max_concurrent_bounds_the_handlers_running_at_once() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (r, p) = (running.clone(), peak.clone());
    let server = Server::new("limited", "1")
        .max_concurrent(2)
        .tool(tool("slow").handler(move |args, _ctx| {
            let (running, peak) = (r.clone(), p.clone());
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                // Only to make calls overlap; nothing asserts on time.
                tokio::time::sleep(Duration::from_millis(20)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(CallToolResult::text(args["i"].to_string()))
            }
        }))
        .build()
        .unwrap();
    assert_eq!(server.max_concurrent(), 2);
    let client = client(server);
    let calls = (0..10).map(|i| client.call_tool("slow", json!({"i": i})));
    let responses = join_all(calls).await;
    assert_eq!(responses.len(), 10);
    for (i, response) in responses.iter().enumerate() {
        assert_eq!(response.result()["content"][0]["text"], i.to_string());
    }
    let peak = peak.load(Ordering::SeqCst);
    assert!((1..=2).contains(&peak), "{peak} handlers ran at once");
    assert_eq!(running.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_failed_call_does_not_disturb_others_in_flight() {
    let client = client(server());
    let calls = ["ok", "panic_async", "fails", "panic_blocking", "ok"]
        .map(|n| client.call_tool(n, json!({})));
    let responses = join_all(calls).await;
    assert_eq!(responses[0].result()["content"][0]["text"], "fine");
    assert_eq!(responses[1].error_code(), Some(-32603));
    assert_eq!(responses[2].result()["isError"], true);
    assert_eq!(responses[3].error_code(), Some(-32603));
    assert_eq!(responses[4].result()["content"][0]["text"], "fine");
    // And each carried its own id.
    let ids: std::collections::HashSet<String> = responses
        .iter()
        .map(|r| r.messages[0]["id"].to_string())
        .collect();
    assert_eq!(ids.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_reusing_the_id_of_one_in_flight_is_refused() {
    let gate = Arc::new(Notify::new());
    let release = gate.clone();
    let server = Server::new("duplicate-ids", "0.1.0")
        .tool(tool("wait").handler(move |_a, _c| {
            let gate = gate.clone();
            async move {
                gate.notified().await;
                Ok(CallToolResult::text("released"))
            }
        }))
        .build()
        .unwrap();
    let client = client(server);
    let call = crate::support::enveloped(json!(5), "tools/call", json!({"name": "wait"}));
    let first = client.send(&call);
    let second = async {
        let refused = client.send(&call).await;
        release.notify_one();
        refused
    };
    let (first, second) = tokio::join!(first, second);
    let error = crate::support::assert_error(&second, -32600, Some(json!(5)), Some(400));
    assert!(
        error["message"].as_str().unwrap().contains("in flight"),
        "{error}"
    );
    assert_eq!(
        assert_result(&first, json!(5))["content"][0]["text"],
        "released"
    );
}

#[tokio::test]
async fn the_context_is_current_before_the_first_await() {
    let server = Server::new("early-context", "0.1.0")
        .tool(tool("early").handler(|_a, ctx| {
            // Runs synchronously, before the returned future is first polled.
            let same = ToolContext::try_current().map(|c| c.request_id() == ctx.request_id());
            async move { Ok(CallToolResult::text(format!("{same:?}"))) }
        }))
        .build()
        .unwrap();
    let response = client(server).call_tool("early", json!({})).await;
    assert_eq!(response.result()["content"][0]["text"], "Some(true)");
}
