//! Clients of a dated revision (2025-11-25) on the same endpoint: sessions
//! opened by `initialize` and named by `Mcp-Session-Id`, the GET stream, DELETE,
//! the store's bounds, principals, stateless mode, and requests the server
//! sends the client while a call waits.

use std::time::Duration;

use axum::middleware;
use http::Method;
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use typed_mcp::declare::{ResourceDecl, ToolDecl};
use typed_mcp::receipt::{MemorySink, Outcome, Receipt};
use typed_mcp::transport::Shutdown;
use typed_mcp::wire::{CallToolResult, ResourceContents};
use typed_mcp::{Answer, NeedsInput, Server, ToolError};
use typed_mcp_http::HttpServer;

use crate::principal::authenticate;
use crate::support::{
    Client, PATIENCE, Probe, Req, builder, serve, serve_http, sse_events, wait_for,
};

const DATED: &str = "2025-11-25";

/// The test tools, a watched resource, and a tool that asks the user for a
/// name first (the same handler serves both eras).
fn server(probe: &Probe) -> Server {
    server_with_receipts(probe, MemorySink::new())
}

/// [`server`], recording receipts in `receipts`.
fn server_with_receipts(probe: &Probe, receipts: MemorySink) -> Server {
    let greet = ToolDecl::builder("greet")
        .description("Greet the user by the name they give.")
        .input_schema(json!({"type": "object", "properties": {}}))
        .handler(|_args, ctx| async move {
            let name = ctx
                .input_response::<Value>("name")
                .and_then(Result::ok)
                .and_then(|answer| answer["content"]["name"].as_str().map(str::to_owned));
            Ok::<_, ToolError>(match name {
                Some(name) => Answer::Done(CallToolResult::text(format!("Hello, {name}!"))),
                None => Answer::NeedsInput(NeedsInput::new().elicit(
                    "name",
                    "What is your name?",
                    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                )),
            })
        });
    builder(probe)
        .receipt_sink(receipts)
        .tool(greet)
        .resource(
            ResourceDecl::builder("file:///watched", "watched")
                .description("A watched file.")
                .handler(|r, _| async move { Ok(vec![ResourceContents::text(r.uri, None, "w")]) }),
        )
        .build()
        .expect("the test server builds")
}

/// A dated request (no `_meta` envelope), in `session` when given.
fn dated(id: i64, method: &str, params: Value, session: Option<&str>) -> Req {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let req = Req::raw(serde_json::to_vec(&body).unwrap()).header("mcp-protocol-version", DATED);
    match session {
        Some(id) => req.header("mcp-session-id", id),
        None => req,
    }
}

/// A dated notification in `session`.
fn dated_notification(method: &str, params: Value, session: &str) -> Req {
    let body = json!({"jsonrpc": "2.0", "method": method, "params": params});
    Req::raw(serde_json::to_vec(&body).unwrap())
        .header("mcp-protocol-version", DATED)
        .header("mcp-session-id", session)
}

/// `initialize` as a 2025-11-25 client sends it (no version header yet).
fn initialize(capabilities: Value) -> Req {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": DATED,
        "capabilities": capabilities,
        "clientInfo": {"name": "legacy-test", "version": "0.0.0"}
    }});
    Req::raw(serde_json::to_vec(&body).unwrap())
}

/// Opens a session (initialize, then `notifications/initialized`) and returns
/// its id.
async fn open_session(client: &Client, capabilities: Value) -> String {
    let reply = client.send(&initialize(capabilities)).await;
    assert_eq!(reply.status, 200, "initialize: {:?}", reply.body);
    assert_eq!(reply.json()["result"]["protocolVersion"], DATED);
    let id = reply
        .header("mcp-session-id")
        .expect("initialize answers with Mcp-Session-Id")
        .to_owned();
    let done = client
        .send(&dated_notification(
            "notifications/initialized",
            json!({}),
            &id,
        ))
        .await;
    assert_eq!(done.status, 202, "{:?}", done.body);
    id
}

/// Reads the next frame of a streaming body as text.
async fn next_frame(body: &mut hyper::body::Incoming) -> String {
    let frame = tokio::time::timeout(PATIENCE, body.frame())
        .await
        .expect("a frame in time")
        .expect("the stream is open")
        .expect("a readable frame");
    let data = frame.into_data().expect("a data frame");
    String::from_utf8(data.to_vec()).expect("UTF-8")
}

/// Reads the next SSE event, skipping keep-alive comments.
async fn next_event(body: &mut hyper::body::Incoming) -> Value {
    loop {
        let frame = next_frame(body).await;
        if frame.starts_with(':') {
            continue;
        }
        let mut events = sse_events(frame.as_bytes());
        assert_eq!(events.len(), 1, "one event per frame: {events:?}");
        return events.remove(0);
    }
}

/// Waits until the stream ends.
async fn stream_ends(body: &mut hyper::body::Incoming) {
    loop {
        match tokio::time::timeout(PATIENCE, body.frame())
            .await
            .expect("the stream ends in time")
        {
            None | Some(Err(_)) => return,
            Some(Ok(_)) => {}
        }
    }
}

/// Waits until no session forwards resource updates any more: every
/// session ended.
async fn sessions_end(updates: &typed_mcp::ResourceUpdates) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while updates.subscribers() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} sessions still forward updates",
            updates.subscribers()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits for the receipt of the call of `tool`.
async fn receipt_of(receipts: &MemorySink, tool: &str) -> Receipt {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(receipt) = receipts.receipts().into_iter().find(|r| r.name == tool) {
            return receipt;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no receipt for {tool}: {:?}",
            receipts.receipts()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A GET opening the session's event stream.
fn get_stream(session: &str) -> Req {
    Req::raw(Vec::new())
        .method(Method::GET)
        .without("content-type")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
}

fn delete(session: &str) -> Req {
    Req::raw(Vec::new())
        .method(Method::DELETE)
        .without("content-type")
        .header("mcp-session-id", session)
}

#[track_caller]
fn assert_session_not_found(reply: &crate::support::Reply) {
    let body = reply.assert_error(404, -32001);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("session not found") && message.contains("initialize"),
        "{message}"
    );
}

#[tokio::test]
async fn initialize_opens_a_session_that_lists_and_calls() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| http).await;
    let session = open_session(&client, json!({})).await;
    assert_eq!(session.len(), 32, "{session}");
    assert!(session.bytes().all(|b| b.is_ascii_hexdigit()), "{session}");
    let other = open_session(&client, json!({})).await;
    assert_ne!(session, other, "every session gets its own id");

    let list = client
        .send(&dated(1, "tools/list", json!({}), Some(&session)))
        .await;
    assert_eq!(list.status, 200, "{:?}", list.body);
    let list = list.json();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"add") && names.contains(&"greet"),
        "{names:?}"
    );
    assert!(list["result"].get("resultType").is_none(), "{list}");

    let call = dated(
        2,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        Some(&session),
    );
    let reply = client.send(&call).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let body = reply.json();
    assert_eq!(body["id"], 2);
    assert_eq!(body["result"]["structuredContent"]["sum"], 5, "{body}");

    // The session's revision rules: ping is served.
    let ping = client
        .send(&dated(3, "ping", json!({}), Some(&session)))
        .await;
    assert_eq!(ping.status, 200);
    assert_eq!(ping.json()["result"], json!({}));
}

#[tokio::test]
async fn a_2026_07_28_request_is_served_beside_sessions() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| http).await;
    let session = open_session(&client, json!({})).await;
    let modern = client
        .send(&Req::call("add", json!({"a": 1, "b": 1})))
        .await;
    assert_eq!(modern.status, 200, "{:?}", modern.body);
    let body = modern.json();
    assert_eq!(body["result"]["structuredContent"]["sum"], 2, "{body}");
    assert!(modern.header("mcp-session-id").is_none());
    // And the session still serves.
    let ping = client
        .send(&dated(1, "ping", json!({}), Some(&session)))
        .await;
    assert_eq!(ping.status, 200, "{:?}", ping.body);
}

#[tokio::test]
async fn progress_arrives_on_the_calls_sse_stream() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| http).await;
    let session = open_session(&client, json!({})).await;
    let call = dated(
        5,
        "tools/call",
        json!({"name": "stream", "arguments": {}, "_meta": {"progressToken": "p-5"}}),
        Some(&session),
    );
    let response = client.open(&call).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let first = next_event(&mut body).await;
    assert_eq!(first["method"], "notifications/progress", "{first}");
    assert_eq!(first["params"]["progressToken"], "p-5");
    assert_eq!(first["params"]["progress"], 1.0);
    probe.proceed.notify_one();
    let mut last = next_event(&mut body).await;
    while last.get("id").is_none() {
        last = next_event(&mut body).await;
    }
    assert_eq!(last["id"], 5);
    assert_eq!(last["result"]["content"][0]["text"], "streamed", "{last}");
}

#[tokio::test]
async fn a_cancellation_in_one_post_cancels_a_call_of_another() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| http).await;
    let session = open_session(&client, json!({})).await;
    let started = probe.started.notified();
    let hang = client.start(&dated(
        9,
        "tools/call",
        json!({"name": "hang", "arguments": {}}),
        Some(&session),
    ));
    let hang = tokio::spawn(hang);
    tokio::time::timeout(PATIENCE, started)
        .await
        .expect("the call starts");
    let cancel = dated_notification(
        "notifications/cancelled",
        json!({"requestId": 9, "reason": "changed my mind"}),
        &session,
    );
    assert_eq!(client.send(&cancel).await.status, 202);
    wait_for(&probe.dropped, "the handler to be cancelled").await;
    hang.abort();
}

#[tokio::test]
async fn the_get_stream_carries_resource_updates_and_keep_alives() {
    let probe = Probe::default();
    let server = server(&probe);
    let updates = server.resource_updates().clone();
    let client = serve_http(server, |http| {
        http.sse_keep_alive(Duration::from_millis(50))
    })
    .await;
    let session = open_session(&client, json!({})).await;

    let stream = client.open(&get_stream(&session)).await;
    assert_eq!(stream.status(), 200);
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let mut stream = stream.into_body();
    // An idle stream gets a keep-alive comment.
    assert_eq!(next_frame(&mut stream).await, ": keep-alive\n\n");

    // One stream per session.
    let second = client.send(&get_stream(&session)).await;
    assert_eq!(second.status, 409, "{:?}", second.body);

    let subscribe = dated(
        1,
        "resources/subscribe",
        json!({"uri": "file:///watched"}),
        Some(&session),
    );
    let reply = client.send(&subscribe).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["result"], json!({}));

    updates.publish("file:///watched");
    let update = next_event(&mut stream).await;
    assert_eq!(update["method"], "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "file:///watched");

    // Closed by the client, the stream can be opened again.
    drop(stream);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let again = client.open(&get_stream(&session)).await;
        if again.status() == 200 {
            let mut again = again.into_body();
            updates.publish("file:///watched");
            let update = next_event(&mut again).await;
            assert_eq!(update["params"]["uri"], "file:///watched");
            break;
        }
        assert_eq!(again.status(), 409);
        assert!(tokio::time::Instant::now() < deadline, "never detached");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn get_needs_a_session_and_an_event_stream_accept() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| http).await;
    let session = open_session(&client, json!({})).await;

    let no_session = client
        .send(&get_stream(&session).without("mcp-session-id"))
        .await;
    assert_eq!(no_session.status, 405);
    assert_eq!(no_session.header("allow"), Some("POST"));

    let json_only = client
        .send(&get_stream(&session).header("accept", "application/json"))
        .await;
    assert_eq!(json_only.status, 406, "{:?}", json_only.body);

    let unknown = client.send(&get_stream(&"0".repeat(32))).await;
    assert_session_not_found(&unknown);

    // The session still streams.
    let stream = client.open(&get_stream(&session)).await;
    assert_eq!(stream.status(), 200);
}

#[tokio::test]
async fn delete_ends_the_session_and_its_stream() {
    let probe = Probe::default();
    let server = server(&probe);
    let updates = server.resource_updates().clone();
    let client = serve_http(server, |http| http).await;
    let session = open_session(&client, json!({})).await;
    let mut stream = client.open(&get_stream(&session)).await.into_body();
    assert_eq!(updates.subscribers(), 1);

    let deleted = client.send(&delete(&session)).await;
    assert_eq!(deleted.status, 204, "{:?}", deleted.body);
    stream_ends(&mut stream).await;
    sessions_end(&updates).await;

    let after = client
        .send(&dated(1, "ping", json!({}), Some(&session)))
        .await;
    assert_session_not_found(&after);
    assert_session_not_found(&client.send(&delete(&session)).await);
    assert_session_not_found(&client.send(&get_stream(&session)).await);

    // DELETE without a session id is no session method.
    let bare = client
        .send(&delete(&session).without("mcp-session-id"))
        .await;
    assert_eq!(bare.status, 405);
}

#[tokio::test]
async fn delete_cancels_the_sessions_calls() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| http).await;
    let session = open_session(&client, json!({})).await;
    let started = probe.started.notified();
    let hang = tokio::spawn(client.start(&dated(
        1,
        "tools/call",
        json!({"name": "hang", "arguments": {}}),
        Some(&session),
    )));
    tokio::time::timeout(PATIENCE, started)
        .await
        .expect("the call starts");
    assert_eq!(client.send(&delete(&session)).await.status, 204);
    wait_for(&probe.dropped, "the call to be cancelled").await;
    hang.abort();
}

#[tokio::test]
async fn an_unknown_session_is_404_and_the_server_still_serves() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| http).await;
    for bad in ["0123456789abcdef0123456789abcdef", "not-a-session"] {
        let reply = client
            .send(&dated(1, "tools/list", json!({}), Some(bad)))
            .await;
        assert_session_not_found(&reply);
    }
    // A header sent twice names no session either.
    let mut twice = dated(1, "tools/list", json!({}), Some("a"));
    twice
        .headers
        .append("mcp-session-id", http::HeaderValue::from_static("b"));
    assert_session_not_found(&client.send(&twice).await);

    let session = open_session(&client, json!({})).await;
    let list = client
        .send(&dated(2, "tools/list", json!({}), Some(&session)))
        .await;
    assert_eq!(list.status, 200, "{:?}", list.body);
}

#[tokio::test]
async fn a_full_store_refuses_initialize_with_503_until_a_session_ends() {
    let probe = Probe::default();
    let server = server(&probe);
    let updates = server.resource_updates().clone();
    let client = serve_http(server, |http| http.max_sessions(2)).await;
    let first = open_session(&client, json!({})).await;
    let _second = open_session(&client, json!({})).await;

    let third = client.send(&initialize(json!({}))).await;
    third.assert_error(503, -31002);
    assert!(third.header("retry-after").is_some());
    assert!(third.header("mcp-session-id").is_none());
    // The refused session was not kept running.
    assert_eq!(updates.subscribers(), 2);

    // Sessions open keep serving, and an ended one makes room.
    let ping = client
        .send(&dated(1, "ping", json!({}), Some(&first)))
        .await;
    assert_eq!(ping.status, 200);
    assert_eq!(client.send(&delete(&first)).await.status, 204);
    let _third = open_session(&client, json!({})).await;
}

#[tokio::test]
async fn an_idle_session_expires_and_then_answers_404() {
    let probe = Probe::default();
    let server = server(&probe);
    let updates = server.resource_updates().clone();
    let client = serve_http(server, |http| {
        http.session_idle_timeout(Duration::from_millis(100))
    })
    .await;
    let session = open_session(&client, json!({})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let reply = client
        .send(&dated(1, "ping", json!({}), Some(&session)))
        .await;
    assert_session_not_found(&reply);
    sessions_end(&updates).await;
    // A new session is served.
    let fresh = open_session(&client, json!({})).await;
    let ping = client
        .send(&dated(2, "ping", json!({}), Some(&fresh)))
        .await;
    assert_eq!(ping.status, 200);
}

#[tokio::test]
async fn a_session_with_its_stream_open_does_not_expire() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| {
        http.session_idle_timeout(Duration::from_millis(100))
    })
    .await;
    let session = open_session(&client, json!({})).await;
    let stream = client.open(&get_stream(&session)).await;
    assert_eq!(stream.status(), 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ping = client
        .send(&dated(1, "ping", json!({}), Some(&session)))
        .await;
    assert_eq!(ping.status, 200, "{:?}", ping.body);
    drop(stream);
}

#[tokio::test]
async fn a_session_answers_only_the_principal_that_opened_it() {
    let probe = Probe::default();
    let server = server(&probe);
    let addr = serve(|addr| {
        HttpServer::new(server, addr)
            .require_authentication()
            .into_router()
            .unwrap()
            .layer(middleware::from_fn(authenticate))
    })
    .await;
    let client = Client::new(addr, "/");
    let alice = |req: Req| req.header("authorization", "Bearer alice");
    let mallory = |req: Req| req.header("authorization", "Bearer mallory");

    let reply = client.send(&alice(initialize(json!({})))).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let session = reply.header("mcp-session-id").unwrap().to_owned();

    for req in [
        dated(1, "tools/list", json!({}), Some(&session)),
        get_stream(&session),
        delete(&session),
    ] {
        let stolen = client.send(&mallory(req.clone())).await;
        assert_session_not_found(&stolen);
        let anonymous = client.send(&req).await;
        assert_eq!(anonymous.status, 401, "{:?}", anonymous.body);
    }
    // Mallory's DELETE did not end it.
    let list = client
        .send(&alice(dated(2, "tools/list", json!({}), Some(&session))))
        .await;
    assert_eq!(list.status, 200, "{:?}", list.body);
}

#[tokio::test]
async fn stateless_mode_answers_initialize_without_a_session() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| http.legacy_sessions(false)).await;
    let reply = client.send(&initialize(json!({"elicitation": {}}))).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["result"]["protocolVersion"], DATED);
    assert!(reply.header("mcp-session-id").is_none());

    // Dated requests run on their own.
    let call = dated(
        1,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 4, "b": 5}}),
        None,
    );
    let reply = client.send(&call).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["result"]["structuredContent"]["sum"], 9);

    // What needs a session says so.
    let subscribe = client
        .send(&dated(
            2,
            "resources/subscribe",
            json!({"uri": "file:///watched"}),
            None,
        ))
        .await;
    let body = subscribe.json();
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("needs a session"), "{body}");

    // A session id sent anyway names nothing kept: GET and DELETE are 405.
    let get = client.send(&get_stream("0123")).await;
    let body = get.assert_error(405, -32600);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("keeps no sessions"), "{message}");
    let delete = client.send(&delete("0123")).await;
    assert_eq!(delete.status, 405);
}

#[tokio::test]
async fn stateless_mode_tells_a_tool_needing_input_that_no_session_can_ask() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| http.legacy_sessions(false)).await;
    let call = dated(
        1,
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
        None,
    );
    let reply = client.send(&call).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let body = reply.json();
    assert_eq!(body["result"]["isError"], true, "{body}");
    let text = body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("without a session") && text.contains("elicitation/create"),
        "{body}"
    );
}

#[tokio::test]
async fn a_tool_needing_input_asks_a_legacy_client_on_the_calls_stream() {
    let probe = Probe::default();
    let receipts = MemorySink::new();
    let server = server_with_receipts(&probe, receipts.clone());
    let client = serve_http(server, |http| {
        http.sse_keep_alive(Duration::from_millis(50))
    })
    .await;
    let session = open_session(&client, json!({"elicitation": {}})).await;
    // No progress token: the call starts as JSON and turns into a stream
    // when the server has a request for the client.
    let call = dated(
        7,
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
        Some(&session),
    );
    let response = client.open(&call).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let request = next_event(&mut body).await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    assert_eq!(request["params"]["message"], "What is your name?");
    let asked = request["id"].clone();
    assert!(!asked.is_null(), "{request}");
    // While the client thinks, the stream is kept alive.
    assert_eq!(next_frame(&mut body).await, ": keep-alive\n\n");

    let answer = json!({"jsonrpc": "2.0", "id": asked, "result": {
        "action": "accept", "content": {"name": "Ada"}
    }});
    let answered = client
        .send(
            &Req::raw(serde_json::to_vec(&answer).unwrap())
                .header("mcp-protocol-version", DATED)
                .header("mcp-session-id", &session),
        )
        .await;
    assert_eq!(answered.status, 202, "{:?}", answered.body);

    let result = next_event(&mut body).await;
    assert_eq!(result["id"], 7, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "Hello, Ada!");
    stream_ends(&mut body).await;
    let receipt = receipt_of(&receipts, "greet").await;
    assert_eq!(receipt.outcome, Outcome::Completed, "{receipt:?}");
    assert_eq!(receipt.protocol_version.as_deref(), Some(DATED));
}

#[tokio::test]
async fn a_call_needing_input_without_an_event_stream_accept_is_refused_and_cancelled() {
    let probe = Probe::default();
    let receipts = MemorySink::new();
    let client = serve_http(server_with_receipts(&probe, receipts.clone()), |http| http).await;
    let session = open_session(&client, json!({"elicitation": {}})).await;
    let call = dated(
        3,
        "tools/call",
        json!({"name": "greet", "arguments": {}}),
        Some(&session),
    )
    .header("accept", "application/json");
    let reply = client.send(&call).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let body = reply.json();
    assert_eq!(body["id"], 3);
    assert_eq!(body["error"]["code"], -32600, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("text/event-stream"), "{message}");
    let receipt = receipt_of(&receipts, "greet").await;
    assert_eq!(receipt.outcome, Outcome::Cancelled, "{receipt:?}");
    // The session still serves.
    let ping = client
        .send(&dated(4, "ping", json!({}), Some(&session)))
        .await;
    assert_eq!(ping.status, 200);
}

#[tokio::test]
async fn shutdown_closes_event_streams_and_ends_every_session() {
    let probe = Probe::default();
    let shutdown = Shutdown::new();
    let server = builder(&probe)
        .drain_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let updates = server.resource_updates().clone();
    let trigger = shutdown.clone();
    let client = serve_http(server, |http| http.shutdown(shutdown)).await;
    let session = open_session(&client, json!({})).await;
    let started = probe.started.notified();
    let hang = tokio::spawn(client.start(&dated(
        1,
        "tools/call",
        json!({"name": "hang", "arguments": {}}),
        Some(&session),
    )));
    tokio::time::timeout(PATIENCE, started)
        .await
        .expect("the call starts");
    let mut stream = client.open(&get_stream(&session)).await.into_body();

    assert_eq!(updates.subscribers(), 1, "the session forwards updates");

    trigger.trigger();
    stream_ends(&mut stream).await;
    // After the drain deadline the session's call is cancelled and the
    // session ends.
    wait_for(&probe.dropped, "the session's call to be cancelled").await;
    sessions_end(&updates).await;
    let refused = client
        .send(&dated(2, "ping", json!({}), Some(&session)))
        .await;
    refused.assert_error(503, -31002);
    hang.abort();
}

#[tokio::test]
async fn a_2026_07_28_request_ignores_a_session_id() {
    let probe = Probe::default();
    let client = serve_http(server(&probe), |http| http).await;
    let session = open_session(&client, json!({})).await;
    for id in [session.as_str(), "0123456789abcdef0123456789abcdef"] {
        let modern = Req::call("add", json!({"a": 1, "b": 2})).header("mcp-session-id", id);
        let reply = client.send(&modern).await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
        let body = reply.json();
        assert_eq!(body["result"]["structuredContent"]["sum"], 3, "{body}");
        assert_eq!(body["result"]["resultType"], "complete", "{body}");
    }
}

#[tokio::test]
async fn session_requests_meet_the_same_exposure_and_size_rules() {
    let probe = Probe::default();
    let server = builder(&probe)
        .max_message_bytes(4096)
        .build()
        .expect("the test server builds");
    let client = serve_http(server, |http| http).await;
    let session = open_session(&client, json!({})).await;

    let rebinding = |req: Req| req.header("origin", "http://evil.example");
    for req in [
        dated(1, "ping", json!({}), Some(&session)),
        get_stream(&session),
        delete(&session),
    ] {
        let refused = client.send(&rebinding(req.clone())).await;
        refused.assert_error(403, -32600);
        let refused = client.send(&req.header("host", "evil.example")).await;
        refused.assert_error(403, -32600);
    }
    let big = dated(
        2,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 2, "pad": "x".repeat(8192)}}),
        Some(&session),
    );
    client.send(&big).await.assert_error(413, -32600);

    // None of them reached the session, which still serves.
    let ping = client
        .send(&dated(3, "ping", json!({}), Some(&session)))
        .await;
    assert_eq!(ping.status, 200, "{:?}", ping.body);
}

#[tokio::test]
async fn a_shutting_down_server_refuses_new_session_requests_with_503() {
    let probe = Probe::default();
    let shutdown = Shutdown::new();
    let trigger = shutdown.clone();
    let client = serve_http(server(&probe), |http| http.shutdown(shutdown)).await;
    let session = open_session(&client, json!({})).await;
    trigger.trigger();
    for req in [
        initialize(json!({})),
        dated(1, "ping", json!({}), Some(&session)),
        get_stream(&session),
        delete(&session),
    ] {
        let refused = client.send(&req).await;
        refused.assert_error(503, -31002);
        assert!(refused.header("retry-after").is_some());
    }
}
