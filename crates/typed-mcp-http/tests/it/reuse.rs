//! Stateless POSTs run on connections the endpoint reuses once idle: a
//! reused connection holds no request id, so every POST may use any id, and
//! a connection a call still holds is never handed to another POST.

use http_body_util::BodyExt as _;
use serde_json::json;

use crate::support::{PATIENCE, Probe, Req, serve_default, sse_events};

fn add(a: i64) -> Req {
    Req::call("add", json!({"a": a, "b": 1}))
}

#[tokio::test]
async fn a_streaming_call_keeps_its_connection_and_its_id_while_other_posts_reuse_theirs() {
    let probe = Probe::default();
    let client = serve_default(&probe).await;
    // Every request of the helpers has id 1. A streamed call's response is
    // returned (headers first) while its handler still runs on its
    // connection, under id 1: that connection must not serve another POST.
    let mut meta = serde_json::Map::new();
    meta.insert("progressToken".into(), json!("p"));
    let streamed = Req::rpc_with_meta(
        "tools/call",
        json!({"name": "stream", "arguments": {}}),
        meta,
    );
    let response = client.open(&streamed).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    for i in 0..20 {
        let reply = client.send(&add(i)).await;
        assert_eq!(reply.status, 200, "call {i}: {:?}", reply.body);
        assert_eq!(reply.json()["id"], 1);
        assert_eq!(reply.json()["result"]["structuredContent"]["sum"], i + 1);
    }
    probe.proceed.notify_one();
    let body = tokio::time::timeout(PATIENCE, response.into_body().collect())
        .await
        .expect("the stream ends in time")
        .expect("a readable stream")
        .to_bytes();
    let events = sse_events(&body);
    let last = events.last().expect("the result event");
    assert_eq!(last["id"], 1);
    assert_eq!(last["result"]["content"][0]["text"], "streamed");
    for i in 0..5 {
        let reply = client.send(&add(i)).await;
        assert_eq!(reply.status, 200, "after the stream: {:?}", reply.body);
        assert_eq!(reply.json()["result"]["structuredContent"]["sum"], i + 1);
    }
}
