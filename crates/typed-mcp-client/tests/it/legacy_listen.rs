//! `Client::listen` in a legacy session: `resources/subscribe`, the session's
//! own messages (over Streamable HTTP its GET event stream, with the
//! `Mcp-Session-Id`), and, when the subscription is dropped,
//! `resources/unsubscribe` and the GET stream closed — asserted on the wire
//! of a typed-mcp-http server.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use typed_mcp::Server;
use typed_mcp_client::{ClientError, Era, Options};

use crate::support::{Sum, Via, connect_to, kept, server};

const WAIT: Duration = Duration::from_secs(5);

/// One HTTP request the server received.
#[derive(Debug, Clone)]
struct Seen {
    http: String,
    /// The JSON-RPC method of a POST.
    rpc: Option<String>,
    /// `params.uri` of a POST.
    uri: Option<String>,
    session: Option<String>,
}

type Record = Arc<Mutex<Vec<Seen>>>;

/// Serves `server` over Streamable HTTP, recording every request; with
/// `refuse_get`, a GET is answered 405 before the server sees it.
async fn serve_recorded(server: Server, refuse_get: bool) -> (SocketAddr, Record) {
    let record: Record = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::clone(&record);
    let router = typed_mcp_http::HttpServer::new(server, addr)
        .mount("/mcp")
        .unwrap()
        .layer(axum::middleware::from_fn(
            move |request: Request, next: Next| {
                let seen = Arc::clone(&seen);
                async move { recorded(request, next, &seen, refuse_get).await }
            },
        ));
    tokio::spawn(async move { axum::serve(listener, router).await });
    (addr, record)
}

async fn recorded(request: Request, next: Next, seen: &Record, refuse_get: bool) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let message: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    seen.lock().unwrap().push(Seen {
        http: parts.method.to_string(),
        rpc: message["method"].as_str().map(str::to_owned),
        uri: message["params"]["uri"].as_str().map(str::to_owned),
        session: parts
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    });
    if refuse_get && parts.method == http::Method::GET {
        let mut refused = Response::new(Body::from("no event stream here"));
        *refused.status_mut() = http::StatusCode::METHOD_NOT_ALLOWED;
        return refused;
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Opens the session's GET stream by hand; returns the status and the
/// connection (an open stream stays readable on it).
async fn raw_get(addr: SocketAddr, session: &str) -> (u16, tokio::net::TcpStream) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).await.unwrap(), 1, "the head ended");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head}"));
    (status, stream)
}

/// Reads from a raw stream until `needle` shows up, or `wait` passes.
async fn read_until(stream: &mut tokio::net::TcpStream, needle: &str, wait: Duration) -> bool {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                got.extend_from_slice(&buf[..n]);
                if String::from_utf8_lossy(&got).contains(needle) {
                    return true;
                }
            }
            _ => return false,
        }
    }
}

async fn next_update(subscription: &mut typed_mcp_client::Subscription, what: &str) -> Value {
    tokio::time::timeout(WAIT, subscription.next())
        .await
        .unwrap_or_else(|_| panic!("{what}: no update"))
        .unwrap_or_else(|| panic!("{what}: the subscription ended"))
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

#[tokio::test]
async fn a_legacy_subscription_gets_its_updates_every_way() {
    for via in [Via::InProcess, Via::Stdio, Via::Http] {
        let server = server();
        let updates = server.resource_updates().clone();
        let (elsewhere, sink) = kept();
        let client = connect_to(
            server,
            via,
            Options::new().era(Era::Legacy).on_notification(sink),
        )
        .await;
        let mut subscription = client
            .listen(json!({"resourceSubscriptions": ["file:///project"]}))
            .await
            .unwrap_or_else(|e| panic!("{via:?}: {e}"));
        updates.publish("file:///project/src/main.rs");
        let update = next_update(&mut subscription, &format!("{via:?}")).await;
        assert_eq!(
            update["method"], "notifications/resources/updated",
            "{via:?}"
        );
        assert_eq!(
            update["params"]["uri"], "file:///project/src/main.rs",
            "{via:?}"
        );
        // A resource no subscription asked for reaches nobody: the server
        // sends no update of it.
        updates.publish("file:///elsewhere");
        updates.publish("file:///project");
        let update = next_update(&mut subscription, &format!("{via:?}")).await;
        assert_eq!(update["params"]["uri"], "file:///project", "{via:?}");
        // The subscription took its updates: the catch-all callback got none.
        assert!(elsewhere.lock().unwrap().is_empty(), "{via:?}");
        drop(subscription);
        let sum: Sum = client.call("add", json!({"a": 1, "b": 2})).await.unwrap();
        assert_eq!(sum.sum, 3, "{via:?}");
    }
}

#[tokio::test]
async fn over_http_the_session_stream_opens_first_and_dropping_closes_it_and_unsubscribes() {
    let server = server();
    let updates = server.resource_updates().clone();
    let (addr, record) = serve_recorded(server, false).await;
    let client = typed_mcp_client::Client::http(
        &format!("http://{addr}/mcp"),
        Options::new().era(Era::Legacy),
    )
    .await
    .unwrap();
    let mut subscription = client
        .listen(json!({"resourceSubscriptions": ["file:///project"]}))
        .await
        .unwrap();
    let seen = record.lock().unwrap().clone();
    let session = seen
        .iter()
        .find_map(|s| s.session.clone())
        .expect("requests after initialize name the session");
    let get = seen.iter().position(|s| s.http == "GET").expect("a GET");
    let subscribe = seen
        .iter()
        .position(|s| s.rpc.as_deref() == Some("resources/subscribe"))
        .expect("a resources/subscribe");
    assert!(
        get < subscribe,
        "the stream opens before the subscribe: {seen:#?}"
    );
    assert_eq!(seen[get].session.as_deref(), Some(session.as_str()));
    assert_eq!(seen[subscribe].uri.as_deref(), Some("file:///project"));
    assert_eq!(seen[subscribe].session.as_deref(), Some(session.as_str()));

    updates.publish("file:///project");
    let update = next_update(&mut subscription, "http").await;
    assert_eq!(update["params"]["uri"], "file:///project");
    // The client holds the session's one GET stream.
    assert_eq!(raw_get(addr, &session).await.0, 409);

    drop(subscription);
    // The client closes its GET stream: the server takes another one.
    let mut stream = None;
    for _ in 0..100 {
        match raw_get(addr, &session).await {
            (200, opened) => {
                stream = Some(opened);
                break;
            }
            (409, _) => tokio::time::sleep(Duration::from_millis(20)).await,
            (status, _) => panic!("GET answered {status}"),
        }
    }
    let mut stream = stream.expect("the client's GET stream was not closed");
    // And it unsubscribed: an update of the resource is no longer sent to
    // the session...
    for _ in 0..100 {
        if record
            .lock()
            .unwrap()
            .iter()
            .any(|s| s.rpc.as_deref() == Some("resources/unsubscribe"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let unsubscribe = record
        .lock()
        .unwrap()
        .iter()
        .find(|s| s.rpc.as_deref() == Some("resources/unsubscribe"))
        .cloned()
        .expect("a resources/unsubscribe");
    assert_eq!(unsubscribe.uri.as_deref(), Some("file:///project"));
    assert_eq!(unsubscribe.session.as_deref(), Some(session.as_str()));
    updates.publish("file:///project");
    assert!(
        !read_until(&mut stream, "file:///project", Duration::from_millis(300)).await,
        "an update after resources/unsubscribe"
    );
    // ...while the same stream carries it once the resource is subscribed
    // again (the check above could see it).
    let mut params = serde_json::Map::new();
    params.insert("uri".into(), json!("file:///project"));
    client.request("resources/subscribe", params).await.unwrap();
    updates.publish("file:///project");
    assert!(read_until(&mut stream, "file:///project", WAIT).await);
}

#[tokio::test]
async fn two_subscriptions_share_the_stream_and_one_dropped_leaves_the_other() {
    let server = server();
    let updates = server.resource_updates().clone();
    let (addr, record) = serve_recorded(server, false).await;
    let client = typed_mcp_client::Client::http(
        &format!("http://{addr}/mcp"),
        Options::new().era(Era::Legacy),
    )
    .await
    .unwrap();
    let mut first = client
        .listen(json!({"resourceSubscriptions": ["file:///project"]}))
        .await
        .unwrap();
    let second = client
        .listen(json!({"resourceSubscriptions": ["file:///project"]}))
        .await
        .unwrap();
    let gets = |record: &Record| {
        record
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.http == "GET")
            .count()
    };
    assert_eq!(gets(&record), 1, "one GET stream per session");
    drop(second);
    // The first still wants the resource: it is not unsubscribed.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !record
            .lock()
            .unwrap()
            .iter()
            .any(|s| s.rpc.as_deref() == Some("resources/unsubscribe")),
        "unsubscribed while a subscription still asks for it"
    );
    updates.publish("file:///project");
    let update = next_update(&mut first, "the first").await;
    assert_eq!(update["params"]["uri"], "file:///project");
}

#[tokio::test]
async fn a_refused_session_stream_is_an_error_and_the_client_goes_on() {
    let (addr, record) = serve_recorded(server(), true).await;
    let client = typed_mcp_client::Client::http(
        &format!("http://{addr}/mcp"),
        Options::new().era(Era::Legacy),
    )
    .await
    .unwrap();
    let error = client
        .listen(json!({"resourceSubscriptions": ["file:///project"]}))
        .await
        .expect_err("no event stream, no updates");
    match &error {
        ClientError::Http { status: 405, what } => {
            assert!(
                what.contains("the session's event stream (GET) was refused")
                    && what.contains("expected 200 and text/event-stream"),
                "{what}"
            );
        }
        other => panic!("expected HTTP 405, got {other:?}"),
    }
    // Nothing was subscribed that no stream could deliver.
    assert!(
        !record
            .lock()
            .unwrap()
            .iter()
            .any(|s| s.rpc.as_deref() == Some("resources/subscribe"))
    );
    let sum: Sum = client.call("add", json!({"a": 2, "b": 2})).await.unwrap();
    assert_eq!(sum.sum, 4);
}

#[tokio::test]
async fn the_session_ending_ends_the_subscription_with_an_error() {
    let server = server();
    let (addr, record) = serve_recorded(server, false).await;
    let client = typed_mcp_client::Client::http(
        &format!("http://{addr}/mcp"),
        Options::new().era(Era::Legacy),
    )
    .await
    .unwrap();
    let mut subscription = client
        .listen(json!({"resourceSubscriptions": ["file:///project"]}))
        .await
        .unwrap();
    let session = record
        .lock()
        .unwrap()
        .iter()
        .find_map(|s| s.session.clone())
        .unwrap();
    // Someone else ends the session (a DELETE with its id).
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nContent-Length: 0\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let ended = tokio::time::timeout(WAIT, subscription.next())
        .await
        .expect("the subscription did not see the stream end");
    match ended {
        Some(Err(ClientError::Io(why))) => {
            assert!(why.contains("closed the session's event stream"), "{why}")
        }
        other => panic!("expected the stream's end as an error, got {other:?}"),
    }
    assert!(subscription.next().await.is_none(), "nothing after the end");
}

#[tokio::test]
async fn a_server_without_resource_subscriptions_is_told_apart() {
    // No resources: a dated session's initialize declares no subscribe.
    let server = Server::new("no-resources", "1.0.0")
        .tools(typed_mcp::tools![crate::support::add])
        .build()
        .unwrap();
    for via in [Via::InProcess, Via::Http] {
        let client = connect_to(server.clone(), via, Options::new().era(Era::Legacy)).await;
        let error = client
            .listen(json!({"resourceSubscriptions": ["file:///a"]}))
            .await
            .expect_err("nothing to subscribe to");
        assert!(
            error
                .to_string()
                .contains("does not declare resources.subscribe in its session (its resources capability is absent)"),
            "{via:?}: {error}"
        );
        // A filter that is not one is refused, saying what was expected.
        let error = client
            .listen(json!({"resourceSubscriptions": "file:///a"}))
            .await
            .expect_err("not a filter");
        assert!(
            error
                .to_string()
                .starts_with("expected a subscription filter"),
            "{via:?}: {error}"
        );
        let sum: Sum = client.call("add", json!({"a": 1, "b": 1})).await.unwrap();
        assert_eq!(sum.sum, 2, "{via:?}");
    }
}
