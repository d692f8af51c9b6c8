//! Trace context: what a request's `_meta` makes of its trace, through the
//! router's validated envelope and the public `typed_mcp::trace` API.

use serde_json::{Value, json};
use typed_mcp::protocol::{Decision, RequestMeta, RouteContext};
use typed_mcp::trace::{SpanId, TraceContext, TraceId};
use typed_mcp::wire::CallToolResult;
use typed_mcp::{Server, declare::ToolDecl};

use crate::support::{envelope, request};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

fn server() -> Server {
    let noop = ToolDecl::builder("noop")
        .description("Do nothing.")
        .input_schema(json!({"type": "object"}))
        .handler(|_args, _ctx| {
            typed_mcp::blocking(move || Ok(CallToolResult::structured(json!({}))))
        });
    Server::new("trace-fixture", "0.0.1")
        .tool(noop)
        .build()
        .expect("the fixture builds")
}

/// The envelope the router validated for a `tools/call` whose `_meta` holds
/// the required keys plus `extra`.
fn meta_with(server: &Server, extra: Value) -> RequestMeta {
    let mut meta = envelope();
    for (key, value) in extra.as_object().expect("an object") {
        meta[key] = value.clone();
    }
    let message = request(
        json!(1),
        "tools/call",
        json!({"name": "noop", "arguments": {}, "_meta": meta}),
    );
    let bytes = serde_json::to_vec(&message).expect("serializes");
    match server.router().route(&bytes, &RouteContext::NONE) {
        Decision::Invoke(call) => call.meta,
        other => panic!("expected an invocation, got {other:?}"),
    }
}

#[test]
fn a_valid_traceparent_in_meta_continues_the_callers_trace() {
    let server = server();
    let meta = meta_with(
        &server,
        json!({
            "traceparent": format!("00-{TRACE}-{PARENT}-01"),
            "tracestate": "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE",
        }),
    );
    let trace = TraceContext::from_meta(&meta);
    assert!(trace.is_remote());
    assert_eq!(trace.trace_id(), TRACE.parse::<TraceId>().unwrap());
    assert_eq!(
        trace.parent_span_id(),
        Some(PARENT.parse::<SpanId>().unwrap())
    );
    assert!(trace.sampled());
    assert_eq!(
        trace.tracestate(),
        Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
    );

    let unsampled = TraceContext::from_meta(&meta_with(
        &server,
        json!({"traceparent": format!("00-{TRACE}-{PARENT}-00")}),
    ));
    assert!(unsampled.is_remote() && !unsampled.sampled());
    assert_eq!(unsampled.tracestate(), None);
}

#[test]
fn an_invalid_traceparent_is_ignored_and_the_request_still_has_a_trace() {
    let server = server();
    let zeros = |n: usize| "0".repeat(n);
    let invalid = [
        "".to_owned(),
        "not a traceparent".to_owned(),
        format!("ff-{TRACE}-{PARENT}-01"),
        format!("00-{}-{PARENT}-01", TRACE.to_uppercase()),
        format!("00-{}-{PARENT}-01", zeros(32)),
        format!("00-{TRACE}-{}-01", zeros(16)),
        format!("00-{TRACE}-{PARENT}-01-trailing"),
        format!("00-{TRACE}-{PARENT}"),
    ];
    let mut seen = Vec::new();
    for header in invalid {
        let meta = meta_with(
            &server,
            json!({"traceparent": header, "tracestate": "rojo=1"}),
        );
        let trace = TraceContext::from_meta(&meta);
        assert!(!trace.is_remote(), "{header:?}");
        assert_eq!(trace.parent_span_id(), None, "{header:?}");
        assert!(!trace.sampled(), "{header:?}");
        assert_eq!(
            trace.tracestate(),
            None,
            "tracestate without a valid traceparent"
        );
        assert_ne!(trace.trace_id().to_string(), TRACE);
        assert_ne!(trace.trace_id().to_string(), zeros(32));
        seen.push(trace.trace_id());
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 8, "every fresh trace id is new");
}

#[test]
fn a_later_version_is_read_by_its_first_four_fields() {
    let meta = meta_with(
        &server(),
        json!({"traceparent": format!("42-{TRACE}-{PARENT}-01-and-more")}),
    );
    let trace = TraceContext::from_meta(&meta);
    assert!(trace.is_remote());
    assert_eq!(trace.trace_id().to_string(), TRACE);
}

#[test]
fn without_trace_meta_each_request_gets_its_own_trace() {
    let server = server();
    let a = TraceContext::from_meta(&meta_with(&server, json!({})));
    let b = TraceContext::from_meta(&meta_with(&server, json!({})));
    assert!(!a.is_remote() && !b.is_remote());
    assert_ne!(a.trace_id(), b.trace_id());
    assert_eq!(a.trace_id().to_string().len(), 32);
    assert!(
        a.trace_id()
            .to_string()
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    );
}

#[test]
fn trace_ids_serialize_as_the_hex_the_w3c_uses() {
    let id: TraceId = TRACE.parse().expect("valid");
    assert_eq!(serde_json::to_value(id).unwrap(), json!(TRACE));
    assert_eq!(serde_json::from_value::<TraceId>(json!(TRACE)).unwrap(), id);
    let err = serde_json::from_value::<TraceId>(json!(TRACE.to_uppercase())).unwrap_err();
    assert!(
        err.to_string()
            .contains("expected 32 lowercase hex digits, not all zero"),
        "{err}"
    );
}
