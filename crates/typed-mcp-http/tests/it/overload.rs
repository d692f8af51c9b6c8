//! Overload and shutdown on the wire: `503` with `Retry-After` and `-31002`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::{Notify, Semaphore};
use typed_mcp::receipt::{MemorySink, Outcome, Receipt};
use typed_mcp::wire::CallToolResult;
use typed_mcp::{declare::ToolDecl, transport::Shutdown};

use crate::support::{PATIENCE, Probe, Req, builder, serve_http, wait_for};

/// A tool that waits until the test adds a permit to `release`.
fn hold(started: Arc<Notify>, release: Arc<Semaphore>) -> ToolDecl {
    ToolDecl::builder("hold")
        .description("Wait until released.")
        .input_schema(json!({"type": "object", "properties": {}}))
        .handler(move |_args, _ctx| {
            let (started, release) = (started.clone(), release.clone());
            async move {
                started.notify_one();
                let _permit = release.acquire().await;
                Ok(CallToolResult::text("released"))
            }
        })
}

/// Waits until `sink` holds `count` receipts.
async fn receipts(sink: &MemorySink, count: usize) -> Vec<Receipt> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let receipts = sink.receipts();
        if receipts.len() >= count {
            return receipts;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "expected {count} receipts, found {receipts:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_call_over_max_pending_is_503_with_retry_after_and_calls_are_served_after_release() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Semaphore::new(0)));
    let server = builder(&Probe::default())
        .tool(hold(started.clone(), release.clone()))
        .max_pending(1)
        .build()
        .unwrap();
    let client = serve_http(server, |http| http).await;

    let first = {
        let client = client.clone();
        tokio::spawn(async move { client.send(&Req::call("hold", json!({}))).await })
    };
    tokio::time::timeout(PATIENCE, started.notified())
        .await
        .expect("the first call starts");

    let shed = client
        .send(&Req::call("add", json!({"a": 1, "b": 2})))
        .await;
    let body = shed.assert_error(503, -31002);
    assert_eq!(body["id"], 1, "the shed call's error has its id: {body}");
    let retry = shed.header("retry-after").expect("a Retry-After header");
    assert!(retry.parse::<u64>().is_ok_and(|s| s >= 1), "{retry}");

    release.add_permits(1);
    let first = first.await.unwrap();
    assert_eq!(first.status, 200);
    assert_eq!(first.json()["result"]["content"][0]["text"], "released");
    let again = client
        .send(&Req::call("add", json!({"a": 1, "b": 2})))
        .await;
    assert_eq!(again.status, 200, "{:?}", again.body);
    assert_eq!(again.json()["result"]["structuredContent"]["sum"], 3);
}

#[tokio::test]
async fn on_shutdown_new_requests_are_503_and_a_call_in_flight_is_cancelled_after_the_drain() {
    let probe = Probe::default();
    let sink = MemorySink::new();
    let server = builder(&probe)
        .receipt_sink(sink.clone())
        .drain_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let shutdown = Shutdown::new();
    let client = serve_http(server, |http| http.shutdown(shutdown.clone())).await;

    let in_flight = {
        let client = client.clone();
        tokio::spawn(async move { client.send(&Req::call("hang", json!({}))).await })
    };
    tokio::time::timeout(PATIENCE, probe.started.notified())
        .await
        .expect("the call starts");
    shutdown.trigger();

    let refused = client
        .send(&Req::call("add", json!({"a": 1, "b": 2})))
        .await;
    let body = refused.assert_error(503, -31002);
    assert!(
        body.get("id").is_none(),
        "a transport refusal has no id: {body}"
    );
    assert!(
        refused.header("retry-after").is_some(),
        "{:?}",
        refused.headers
    );

    let cancelled = in_flight.await.unwrap();
    let body = cancelled.assert_error(503, -31002);
    assert_eq!(body["id"], 1, "{body}");
    assert!(cancelled.header("retry-after").is_some());
    wait_for(&probe.dropped, "the handler's future to be dropped").await;
    let receipts = receipts(&sink, 1).await;
    assert_eq!(
        receipts.len(),
        1,
        "only the call in flight opened a receipt"
    );
    assert_eq!(receipts[0].name, "hang");
    assert_eq!(receipts[0].outcome, Outcome::Cancelled, "{receipts:?}");
}
