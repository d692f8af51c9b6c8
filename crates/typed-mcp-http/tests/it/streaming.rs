//! Response modes (JSON or SSE) and cancellation by a closed response stream.

use std::sync::atomic::Ordering;

use http_body_util::BodyExt as _;
use serde_json::{Map, Value, json};

use crate::support::{PATIENCE, Probe, Req, serve_default, sse_events, wait_for};

fn stream_call(meta: Value) -> Req {
    let Value::Object(meta) = meta else {
        unreachable!()
    };
    Req::rpc_with_meta(
        "tools/call",
        json!({"name": "stream", "arguments": {}}),
        meta,
    )
}

#[tokio::test]
async fn a_progress_token_gets_sse_with_progress_before_the_result() {
    let probe = Probe::default();
    let client = serve_default(&probe).await;
    let response = client
        .open(&stream_call(json!({"progressToken": "p1"})))
        .await;
    assert_eq!(response.status(), 200);
    let headers = response.headers();
    assert_eq!(headers["content-type"], "text/event-stream");
    assert_eq!(headers["cache-control"], "no-cache");
    assert_eq!(headers["x-accel-buffering"], "no");
    let mut body = response.into_body();
    let mut received = Vec::new();
    // The handler waits for the test after its first progress notification: the
    // first event must arrive while the call is still running (flushed at once).
    while !received.ends_with(b"\n\n") {
        let frame = tokio::time::timeout(PATIENCE, body.frame())
            .await
            .expect("the first event in time")
            .expect("a frame")
            .expect("a readable frame");
        received.extend_from_slice(frame.data_ref().expect("data"));
    }
    let first = sse_events(&received);
    assert_eq!(first[0]["method"], "notifications/progress");
    assert_eq!(first[0]["params"]["progressToken"], "p1");
    probe.proceed.notify_one();
    let rest = tokio::time::timeout(PATIENCE, body.collect())
        .await
        .expect("the rest in time")
        .expect("a readable body")
        .to_bytes();
    received.extend_from_slice(&rest);
    let events = sse_events(&received);
    let methods: Vec<&str> = events.iter().filter_map(|e| e["method"].as_str()).collect();
    assert_eq!(methods, ["notifications/progress"; 3]);
    let progress: Vec<f64> = events[..3]
        .iter()
        .map(|e| e["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    let last = events.last().unwrap();
    assert_eq!(last["id"], 1);
    assert_eq!(last["result"]["content"][0]["text"], "streamed");
    assert_eq!(events.len(), 4, "nothing follows the response");
}

#[tokio::test]
async fn a_log_level_gets_sse_with_log_messages() {
    let client = serve_default(&Probe::default()).await;
    let reply = client
        .send(&stream_call(
            json!({"io.modelcontextprotocol/logLevel": "debug"}),
        ))
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    let events = sse_events(&reply.body);
    assert_eq!(events[0]["method"], "notifications/message");
    assert_eq!(events[0]["params"]["data"], json!({"step": "first"}));
    assert_eq!(
        events.last().unwrap()["result"]["content"][0]["text"],
        "streamed"
    );
}

#[tokio::test]
async fn without_notifications_a_call_is_plain_json() {
    let client = serve_default(&Probe::default()).await;
    let reply = client.send(&stream_call(json!({}))).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "streamed");
}

#[tokio::test]
async fn accept_decides_when_only_one_mode_is_allowed() {
    let probe = Probe::default();
    let client = serve_default(&probe).await;
    // Progress wanted, SSE not accepted: JSON, notifications left out.
    let req = stream_call(json!({"io.modelcontextprotocol/logLevel": "info"}))
        .header("accept", "application/json");
    let reply = client.send(&req).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "streamed");
    // Only SSE accepted: the response alone, as one event.
    let req = Req::call("add", json!({"a": 1, "b": 1})).header("accept", "text/event-stream");
    let reply = client.send(&req).await;
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    let events = sse_events(&reply.body);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["result"]["structuredContent"]["sum"], 2);
    // A list answered by the router at once: the same.
    let req = Req::rpc("tools/list", json!({})).header("accept", "text/event-stream");
    let reply = client.send(&req).await;
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert_eq!(
        sse_events(&reply.body)[0]["result"]["tools"][0]["name"],
        "add"
    );
    // Errors stay JSON.
    let req = Req::rpc("nope/nope", json!({})).header("accept", "text/event-stream");
    client.send(&req).await.assert_error(404, -32601);
}

#[tokio::test]
async fn a_client_that_goes_away_mid_call_cancels_it() {
    let probe = Probe::default();
    let client = serve_default(&probe).await;
    let started = probe.started.notified();
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.start(&Req::call("hang", json!({}))).await }
    });
    tokio::time::timeout(PATIENCE, started)
        .await
        .expect("the handler starts");
    assert!(!probe.dropped.load(Ordering::SeqCst));
    call.abort();
    wait_for(&probe.dropped, "the handler's drop guard").await;
}

#[tokio::test]
async fn a_closed_sse_stream_cancels_the_call() {
    let probe = Probe::default();
    let client = serve_default(&probe).await;
    let started = probe.started.notified();
    let mut meta = Map::new();
    meta.insert("progressToken".into(), json!(5));
    let req = Req::rpc_with_meta("tools/call", json!({"name": "hang"}), meta);
    let response = client.open(&req).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    tokio::time::timeout(PATIENCE, started)
        .await
        .expect("the handler starts");
    assert!(!probe.dropped.load(Ordering::SeqCst));
    drop(response);
    wait_for(&probe.dropped, "the handler's drop guard").await;
}
