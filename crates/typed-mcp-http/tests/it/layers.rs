//! The application's tower layers, on the wire.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::json;
use typed_mcp::RpcError;
use typed_mcp::middleware::{BoxError, HandlerCall, HandlerDone};
use typed_mcp::receipt::{MemorySink, Outcome, Receipt};

use crate::support::{PATIENCE, Probe, Req, builder, serve_http};

/// Refuses every second call that reaches it.
#[derive(Clone)]
struct EverySecond<S> {
    inner: S,
    calls: Arc<AtomicUsize>,
}

impl<S> tower::Service<HandlerCall> for EverySecond<S>
where
    S: tower::Service<HandlerCall, Response = HandlerDone, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = HandlerDone;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<HandlerDone, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: HandlerCall) -> Self::Future {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n.is_multiple_of(2) {
            let refusal: BoxError = format!("call {n} refused: every second call is").into();
            return Box::pin(std::future::ready(Err(refusal)));
        }
        Box::pin(self.inner.call(call))
    }
}

/// Sheds every call as overloaded, asking for a retry in 2.5 seconds.
#[derive(Clone)]
struct Shed<S>(S);

impl<S> tower::Service<HandlerCall> for Shed<S>
where
    S: tower::Service<HandlerCall, Response = HandlerDone, Error = BoxError>,
{
    type Response = HandlerDone;
    type Error = BoxError;
    type Future = std::future::Ready<Result<HandlerDone, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, _call: HandlerCall) -> Self::Future {
        let error = RpcError::overloaded("shed by the test layer", 2500);
        std::future::ready(Err(Box::new(error) as BoxError))
    }
}

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
async fn a_layer_refusing_every_second_call_is_answered_and_recorded() {
    let sink = MemorySink::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let server = builder(&Probe::default())
        .receipt_sink(sink.clone())
        .layer(tower::layer::layer_fn(move |inner| EverySecond {
            inner,
            calls: counter.clone(),
        }))
        .build()
        .unwrap();
    let client = serve_http(server, |http| http).await;

    for n in 1..=6_i64 {
        let reply = client
            .send(&Req::call("add", json!({"a": n, "b": 0})))
            .await;
        if n % 2 == 1 {
            assert_eq!(reply.status, 200, "call {n}: {:?}", reply.body);
            assert_eq!(reply.json()["result"]["structuredContent"]["sum"], n);
        } else {
            let body = reply.json();
            assert_eq!(body["error"]["code"], -31003, "call {n}: {body}");
            let message = body["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(&format!("call {n} refused: every second call is")),
                "call {n}: expected the layer's error, found {message:?}"
            );
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), 6);
    let receipts = receipts(&sink, 6).await;
    let kinds: Vec<&str> = receipts.iter().map(|r| r.outcome.kind()).collect();
    assert_eq!(
        kinds,
        [
            "completed",
            "refused_by_layer",
            "completed",
            "refused_by_layer",
            "completed",
            "refused_by_layer"
        ],
        "{receipts:?}"
    );
}

#[tokio::test]
async fn a_layer_shedding_with_rpc_error_overloaded_is_503_with_its_retry_after() {
    let sink = MemorySink::new();
    let server = builder(&Probe::default())
        .receipt_sink(sink.clone())
        .layer(tower::layer::layer_fn(Shed))
        .build()
        .unwrap();
    let client = serve_http(server, |http| http).await;

    let reply = client
        .send(&Req::call("add", json!({"a": 1, "b": 2})))
        .await;
    let body = reply.assert_error(503, -31002);
    assert_eq!(body["id"], 1, "{body}");
    assert_eq!(body["error"]["data"]["retryAfterMs"], 2500, "{body}");
    // 2.5 s, rounded up to whole seconds.
    assert_eq!(
        reply.header("retry-after"),
        Some("3"),
        "{:?}",
        reply.headers
    );
    let receipts = receipts(&sink, 1).await;
    assert!(
        matches!(&receipts[0].outcome, Outcome::RefusedByLayer { reason } if reason.contains("shed by the test layer")),
        "{receipts:?}"
    );
}
