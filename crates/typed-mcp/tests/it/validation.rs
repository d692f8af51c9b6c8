//! The router wired into the server, on the wire: a few requests through the
//! in-process client prove that the server routes every message with its own
//! catalog and limits, hands HTTP headers to the router, answers with the
//! router's code, id and HTTP status, and runs handlers with what the router
//! validated. Requests with `RouteContext` headers stand for Streamable HTTP;
//! without them, for stdio.
//!
//! The rungs themselves, one by one, are a table of `route(bytes, facts)`
//! cases in typed-mcp-core (`src/tests/route.rs`); what needs a running
//! server stays here: the sealed `requestState`, capabilities never
//! remembered by a connection, a connection that lives on, the schema oracle.

use serde_json::{Value, json};
use typed_mcp::protocol::{Decision, RouteContext};
use typed_mcp::transport::Accepted;
use typed_mcp::wire::{CallToolResult, GetPromptResult, PromptMessage, ResourceContents};
use typed_mcp::{
    Server,
    declare::{PromptDecl, ResourceDecl, ToolDecl},
};

use crate::schema::{self, client, client_with_capabilities};
use crate::support::{
    VERSION, assert_error, assert_result, envelope, enveloped, headers, request, send_http,
    std_headers,
};

const README: &str = "test://static/readme";

fn echo() -> ToolDecl {
    ToolDecl::builder("echo")
        .description("Return the text.")
        .input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text."}}
        }))
        .handler(|args, _ctx| async move {
            Ok(CallToolResult::text(
                args.get("text").and_then(Value::as_str).unwrap_or_default(),
            ))
        })
}

fn needs_sampling() -> ToolDecl {
    ToolDecl::builder("needs_sampling")
        .description("A tool that needs the client's sampling capability.")
        .requires_client_capability("sampling")
        .handler(|_args, _ctx| async { Ok(CallToolResult::text("sampled")) })
}

fn readme() -> ResourceDecl {
    ResourceDecl::builder(README, "readme")
        .description("A static text.")
        .handler(|request, _ctx| async move {
            Ok(vec![ResourceContents::text(
                request.uri,
                Some("text/plain"),
                "hello",
            )])
        })
}

fn greet() -> PromptDecl {
    PromptDecl::builder("greet")
        .description("Greet someone.")
        .argument("name", "Who to greet.", true)
        .argument("mood", "How.", false)
        .handler(|args, _ctx| async move {
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                format!("Hello, {}!", args.get("name").cloned().unwrap_or_default()),
            )]))
        })
}

fn server() -> Server {
    Server::new("validation-fixture", "0.0.1")
        .tools([echo(), needs_sampling()])
        .resource(readme())
        .prompt(greet())
        .build()
        .expect("the fixture builds")
}

fn discover(id: Value) -> Value {
    enveloped(id, "server/discover", json!({}))
}

fn call(id: Value, name: &str, arguments: Value) -> Value {
    enveloped(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

#[tokio::test]
async fn the_server_answers_with_the_routers_code_id_and_status() {
    let client = client(server());
    // One request per kind of refusal, and the rung that finds it.
    assert_error(
        &client.send_raw(b"not json at all").await,
        -32700,
        None,
        Some(400),
    );
    let mut no_jsonrpc = discover(json!(7));
    no_jsonrpc.as_object_mut().unwrap().remove("jsonrpc");
    assert_error(
        &client.send(&no_jsonrpc).await,
        -32600,
        Some(json!(7)),
        Some(400),
    );
    let no_envelope = request(json!(1), "server/discover", json!({}));
    assert_error(
        &client.send(&no_envelope).await,
        -32602,
        Some(json!(1)),
        Some(400),
    );
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "v999.0.0",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let unsupported = request(json!(2), "server/discover", json!({"_meta": meta}));
    let error = assert_error(
        &client.send(&unsupported).await,
        -32022,
        Some(json!(2)),
        Some(400),
    );
    assert_eq!(error["data"]["supported"], json!([VERSION]), "{error}");
    let removed = enveloped(json!("ping"), "ping", json!({}));
    assert_error(
        &client.send(&removed).await,
        -32601,
        Some(json!("ping")),
        Some(404),
    );
    let unknown = call(json!(3), "nope", json!({}));
    assert_error(
        &client.send(&unknown).await,
        -32602,
        Some(json!(3)),
        Some(200),
    );
    assert_result(&client.send(&discover(json!(4))).await, json!(4));
}

#[tokio::test]
async fn http_headers_reach_the_router() {
    let client = client(server());
    // A header rung refuses...
    let list = enveloped(json!(1), "tools/list", json!({}));
    let response = send_http(&client, &list, &std_headers("prompts/list")).await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
    let message = call(json!(2), "echo", json!({"text": "hi"}));
    let response = send_http(&client, &message, &std_headers("tools/call")).await;
    assert_error(&response, -32020, Some(json!(2)), Some(400));
    // ...and headers that agree reach the handler.
    let hdrs = headers(&[
        ("mcp-protocol-version", VERSION),
        ("mcp-method", "tools/call"),
        ("MCP-NAME", "=?base64?ZWNobw==?="),
    ]);
    let response = send_http(&client, &message, &hdrs).await;
    assert_eq!(
        assert_result(&response, json!(2))["content"][0]["text"],
        "hi"
    );
}

#[tokio::test]
async fn notifications_are_never_answered_and_the_connection_serves_on() {
    let client = client(server());
    for notification in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345, "reason": "gone"}}),
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo"}}),
    ] {
        let response = client.send(&notification).await;
        assert!(
            response.messages.is_empty(),
            "{notification} was answered: {:?}",
            response.messages
        );
        assert_eq!(response.accepted, Accepted::Dropped, "{notification}");
    }
    assert_result(&client.send(&discover(json!(1))).await, json!(1));
}

#[tokio::test]
async fn the_servers_size_limit_is_the_routers() {
    let server = Server::new("small", "1")
        .max_message_bytes(1024)
        .tool(echo())
        .build()
        .unwrap();
    let client = client(server);
    // Pad a valid request to an exact size with the text argument.
    let sized = |id: i64, bytes: usize| -> Vec<u8> {
        let base = serde_json::to_vec(&call(json!(id), "echo", json!({"text": ""}))).unwrap();
        let padded = call(
            json!(id),
            "echo",
            json!({"text": "x".repeat(bytes - base.len())}),
        );
        let bytes_out = serde_json::to_vec(&padded).unwrap();
        assert_eq!(bytes_out.len(), bytes);
        bytes_out
    };
    assert_result(&client.send_raw(&sized(1, 1024)).await, json!(1));
    let response = client.send_raw(&sized(2, 1025)).await;
    assert_error(&response, -32600, None, Some(400));
}

#[tokio::test]
async fn nesting_deeper_than_the_limit_is_a_parse_error_and_the_server_lives_on() {
    let client = client(server());
    let response = client.send_raw(&vec![b'['; 100_000]).await;
    assert_error(&response, -32700, None, Some(400));

    let response = client.send(&discover(json!(2))).await;
    assert_result(&response, json!(2));
}

#[tokio::test]
async fn a_short_message_is_held_to_the_depth_limit_whatever_its_strings_hold() {
    // A call's clientCapabilities object is 4 levels deep and its arguments
    // object 3; each array around `n` adds one.
    let server = Server::new("shallow", "1")
        .max_depth(7)
        .tool(echo())
        .build()
        .unwrap();
    let client = client(server);
    let nested = |id: i64, depth: usize| {
        let mut value = json!(1);
        for _ in 0..depth {
            value = json!([value]);
        }
        call(json!(id), "echo", json!({"text": "x", "n": value}))
    };
    // 7 levels: served.
    assert_result(&client.send(&nested(1, 4)).await, json!(1));
    // 8 levels: a parse error, and the server goes on.
    assert_error(&client.send(&nested(2, 5)).await, -32700, None, Some(400));
    // Brackets in a string are not nesting, however many.
    let text = "[{".repeat(100);
    let response = client
        .send(&call(json!(3), "echo", json!({"text": text})))
        .await;
    assert_eq!(
        assert_result(&response, json!(3))["content"][0]["text"],
        text
    );
}

#[tokio::test]
async fn handlers_run_with_what_the_router_validated() {
    let client = client(server());
    let response = client
        .send(&call(json!(1), "echo", json!({"text": "x"})))
        .await;
    assert_eq!(
        assert_result(&response, json!(1))["content"][0]["text"],
        "x"
    );
    let prompt = enveloped(
        json!(2),
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
    );
    let result = assert_result(&client.send(&prompt).await, json!(2));
    assert_eq!(result["messages"][0]["content"]["text"], "Hello, Ada!");
    let read = enveloped(json!(3), "resources/read", json!({"uri": README}));
    let result = assert_result(&client.send(&read).await, json!(3));
    assert_eq!(result["contents"][0]["text"], "hello", "{result}");
    // A refusal after the target was found never reaches the handler.
    let missing = enveloped(
        json!(4),
        "prompts/get",
        json!({"name": "greet", "arguments": {"mood": "happy"}}),
    );
    assert_error(
        &client.send(&missing).await,
        -32602,
        Some(json!(4)),
        Some(200),
    );
}

#[tokio::test]
async fn a_request_state_this_server_did_not_seal_never_reaches_the_handler() {
    let client = client(server());
    // Well-formed, so the router invokes; the server refuses to open it.
    let params = json!({
        "name": "echo",
        "arguments": {"text": "x"},
        "requestState": "opaque"
    });
    assert_error(
        &client
            .send(&enveloped(json!(3), "tools/call", params))
            .await,
        -32602,
        Some(json!(3)),
        None,
    );
    // Well-formed input responses without a state reach the handler.
    let params = json!({
        "name": "echo",
        "arguments": {"text": "x"},
        "inputResponses": {"ask": {"action": "accept"}}
    });
    assert_result(
        &client
            .send(&enveloped(json!(2), "tools/call", params))
            .await,
        json!(2),
    );
}

#[tokio::test]
async fn the_test_clients_capabilities_reach_the_router() {
    for capabilities in [json!({}), json!({"elicitation": {}})] {
        let client = client_with_capabilities(server(), capabilities);
        let response = client.call_tool("needs_sampling", json!({})).await;
        let error = assert_error(
            &response,
            -32021,
            response.messages[0].get("id").cloned(),
            Some(400),
        );
        assert_eq!(
            error["data"]["requiredCapabilities"],
            json!({"sampling": {}}),
            "{error}"
        );
    }
    let client = client_with_capabilities(server(), json!({"sampling": {}}));
    let response = client.call_tool("needs_sampling", json!({})).await;
    assert_eq!(response.result()["content"][0]["text"], "sampled");
}

#[tokio::test]
async fn capabilities_are_per_request_never_remembered() {
    let client = client(server());
    let mut meta = envelope();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling": {}});
    let with = request(
        json!(1),
        "tools/call",
        json!({"name": "needs_sampling", "_meta": meta}),
    );
    assert_result(&client.send(&with).await, json!(1));
    let without = call(json!(2), "needs_sampling", json!({}));
    assert_error(
        &client.send(&without).await,
        -32021,
        Some(json!(2)),
        Some(400),
    );
}

#[tokio::test]
async fn an_id_wider_than_64_bits_is_echoed_digit_for_digit() {
    let server = server();
    let meta = serde_json::to_string(&envelope()).unwrap();
    for digits in [
        "123456789012345678901234567890",
        "-123456789012345678901234567890",
    ] {
        for (method, member) in [("server/discover", "result"), ("no/such/method", "error")] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{digits},"method":"{method}","params":{{"_meta":{meta}}}}}"#
            );
            let Decision::Respond(answer) =
                server.router().route(body.as_bytes(), &RouteContext::NONE)
            else {
                panic!("{method} is answered by the router");
            };
            let text = String::from_utf8(answer.body.clone()).unwrap();
            let prefix = format!(r#"{{"jsonrpc":"2.0","id":{digits},"{member}":"#);
            assert!(text.starts_with(&prefix), "{text}");
            let value: Value = serde_json::from_str(&text).unwrap();
            schema::check(Some(method), &value);
        }
    }
}

#[tokio::test]
async fn a_server_with_resources_routes_subscriptions_listen() {
    // A subscription streams, so ask the server's router what it would do.
    let listen = enveloped(
        json!(9),
        "subscriptions/listen",
        json!({"notifications": {}}),
    );
    let headers = std_headers("subscriptions/listen");
    let decision = server().router().route(
        &serde_json::to_vec(&listen).unwrap(),
        &RouteContext {
            headers: Some(&headers),
            lists: None,
            session: None,
        },
    );
    assert!(matches!(decision, Decision::Invoke(_)), "{decision:?}");
}
