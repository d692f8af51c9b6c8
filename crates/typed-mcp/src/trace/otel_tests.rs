//! With the `opentelemetry` feature: what an OpenTelemetry exporter receives.
#![cfg(feature = "opentelemetry")]

use opentelemetry::Value;
use opentelemetry::trace::{
    SpanKind, Status, TraceContextExt as _, TraceId as OtelTraceId, TracerProvider as _,
};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;

use super::*;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

/// Runs `f` under a tracing-opentelemetry layer whose spans go to an
/// in-memory exporter, and returns the finished spans.
fn exported<T>(f: impl FnOnce() -> T) -> (Vec<SpanData>, T) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("typed-mcp-tests"));
    let subscriber = tracing_subscriber::registry().with(layer);
    let out = tracing::subscriber::with_default(subscriber, f);
    provider.force_flush().expect("flush");
    (exporter.get_finished_spans().expect("spans"), out)
}

fn find<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let mut found = spans.iter().filter(|s| s.name == name);
    let span = found
        .next()
        .unwrap_or_else(|| panic!("no span {name:?} in {spans:#?}"));
    assert!(found.next().is_none(), "more than one span {name:?}");
    span
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| match &kv.value {
            Value::String(s) => s.to_string(),
            other => other.to_string(),
        })
}

fn traceparent(flags: &str) -> String {
    format!("00-{TRACE}-{PARENT}-{flags}")
}

#[test]
fn the_exported_request_span_continues_the_callers_trace() {
    let (spans, ()) = exported(|| {
        let mut trace = TraceContext::from_headers(
            Some(&traceparent("01")),
            Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
        );
        let span = request_span(
            "tools/call",
            "close_ticket",
            &7.into(),
            Some("alice"),
            &mut trace,
        );
        span.in_scope(|| {
            let _work = tracing::info_span!("handler.work").entered();
        });
        record_outcome(&span, "ok", None);
    });
    let request = find(&spans, "tools/call close_ticket");
    let context = &request.span_context;
    assert_eq!(context.trace_id().to_string(), TRACE);
    assert_eq!(request.parent_span_id.to_string(), PARENT);
    assert!(request.parent_span_is_remote);
    assert!(context.is_sampled());
    assert_eq!(
        context.trace_state().header(),
        "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
    );
    assert_eq!(request.span_kind, SpanKind::Server);
    assert_eq!(request.status, Status::Unset);
    assert!(request.links.is_empty(), "no span was current to link");
    for (key, value) in [
        (METHOD_FIELD, "tools/call"),
        (TOOL_NAME_FIELD, "close_ticket"),
        (REQUEST_ID_FIELD, "7"),
        (PRINCIPAL_FIELD, "alice"),
        (TRACE_ID_FIELD, TRACE),
        (OUTCOME_FIELD, "ok"),
    ] {
        assert_eq!(attribute(request, key).as_deref(), Some(value), "{key}");
    }

    let work = find(&spans, "handler.work");
    assert_eq!(work.span_context.trace_id(), context.trace_id());
    assert_eq!(work.parent_span_id, context.span_id());
    assert!(!work.parent_span_is_remote);
}

#[test]
fn a_failed_request_has_error_status() {
    let (spans, ()) = exported(|| {
        let mut trace = TraceContext::from_headers(Some(&traceparent("01")), None);
        let span = request_span("prompts/get", "greet", &1.into(), None, &mut trace);
        record_outcome(&span, "invalid_params", Some("-32602"));
    });
    let request = find(&spans, "prompts/get greet");
    assert!(
        matches!(request.status, Status::Error { .. }),
        "{:?}",
        request.status
    );
    assert_eq!(
        attribute(request, ERROR_TYPE_FIELD).as_deref(),
        Some("-32602")
    );
    assert_eq!(
        attribute(request, PROMPT_NAME_FIELD).as_deref(),
        Some("greet")
    );
}

#[test]
fn the_callers_decision_not_to_sample_is_kept() {
    let (spans, trace) = exported(|| {
        let mut trace = TraceContext::from_headers(Some(&traceparent("00")), None);
        let span = request_span("tools/call", "add", &1.into(), None, &mut trace);
        span.in_scope(|| tracing::info_span!("handler.work").in_scope(|| {}));
        trace
    });
    assert!(spans.is_empty(), "{spans:#?}");
    assert_eq!(trace.trace_id().to_string(), TRACE);
}

#[test]
fn without_a_traceparent_the_trace_id_is_the_exported_one() {
    let (spans, trace) = exported(|| {
        let mut trace = TraceContext::from_headers(None, None);
        let span = request_span("tools/call", "add", &1.into(), None, &mut trace);
        span.in_scope(|| tracing::info_span!("handler.work").in_scope(|| {}));
        trace
    });
    let request = find(&spans, "tools/call add");
    assert_eq!(
        request.span_context.trace_id(),
        OtelTraceId::from_bytes(trace.trace_id().to_bytes())
    );
    assert_eq!(
        request.parent_span_id,
        opentelemetry::trace::SpanId::INVALID
    );
    assert_eq!(
        attribute(request, TRACE_ID_FIELD),
        Some(trace.trace_id().to_string())
    );
    let work = find(&spans, "handler.work");
    assert_eq!(
        work.span_context.trace_id(),
        request.span_context.trace_id()
    );
    assert_eq!(work.parent_span_id, request.span_context.span_id());
}

#[test]
fn the_transport_span_is_linked_not_the_parent() {
    let (spans, ()) = exported(|| {
        let http = tracing::info_span!("http.request");
        let _entered = http.enter();
        let mut remote = TraceContext::from_headers(Some(&traceparent("01")), None);
        drop(request_span(
            "tools/call",
            "remote",
            &1.into(),
            None,
            &mut remote,
        ));
        let mut local = TraceContext::new_root();
        drop(request_span(
            "tools/call",
            "local",
            &2.into(),
            None,
            &mut local,
        ));
        // With no trace of its own, the request joins the transport's.
        assert_eq!(
            OtelTraceId::from_bytes(local.trace_id().to_bytes()),
            http.context().span().span_context().trace_id()
        );
    });
    let http = find(&spans, "http.request");

    let remote = find(&spans, "tools/call remote");
    assert_eq!(remote.span_context.trace_id().to_string(), TRACE);
    assert_eq!(remote.parent_span_id.to_string(), PARENT);
    let links: Vec<_> = remote
        .links
        .iter()
        .map(|l| l.span_context.clone())
        .collect();
    assert_eq!(links, std::slice::from_ref(&http.span_context));

    let local = find(&spans, "tools/call local");
    assert_eq!(local.span_context.trace_id(), http.span_context.trace_id());
    assert_eq!(local.parent_span_id, http.span_context.span_id());
    assert!(local.links.is_empty());
}
