//! Parsing by the W3C rules, and the request span seen by a recording layer.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::Instrument as _;
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

use super::*;

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

fn tp(version: &str, trace: &str, parent: &str, flags: &str) -> String {
    format!("{version}-{trace}-{parent}-{flags}")
}

#[test]
fn valid_traceparents() {
    let cases: &[(String, u8)] = &[
        (tp("00", TRACE, PARENT, "01"), 0x01),
        (tp("00", TRACE, PARENT, "00"), 0x00),
        // Flags this version does not define are carried, not refused.
        (tp("00", TRACE, PARENT, "ff"), 0xff),
        // Optional whitespace around a header value is not part of it.
        (format!(" \t{}\t ", tp("00", TRACE, PARENT, "01")), 0x01),
        // A later version is read by its first four fields...
        (tp("cc", TRACE, PARENT, "01"), 0x01),
        // ...and may carry more after a '-'.
        (
            format!("{}-what-comes-next", tp("cc", TRACE, PARENT, "02")),
            0x02,
        ),
        (format!("{}-", tp("01", TRACE, PARENT, "01")), 0x01),
    ];
    for (header, flags) in cases {
        let (trace_id, span_id, parsed_flags) =
            parse_traceparent(header).unwrap_or_else(|e| panic!("{header:?}: {e}"));
        assert_eq!(trace_id.to_string(), TRACE, "{header:?}");
        assert_eq!(span_id.to_string(), PARENT, "{header:?}");
        assert_eq!(parsed_flags, *flags, "{header:?}");
    }
}

#[test]
fn invalid_traceparents_say_why() {
    use InvalidTraceparent as E;
    let zeros32 = "0".repeat(32);
    let zeros16 = "0".repeat(16);
    let valid = tp("00", TRACE, PARENT, "01");
    let cases: Vec<(String, InvalidTraceparent)> = vec![
        (String::new(), E::TooShort),
        (valid[..54].to_owned(), E::TooShort),
        (format!("{valid}-extra"), E::TrailingData),
        (format!("{valid}0"), E::TrailingData),
        (format!("{}x", tp("cc", TRACE, PARENT, "01")), E::Separator),
        (tp("ff", TRACE, PARENT, "01"), E::VersionFf),
        (tp("0g", TRACE, PARENT, "01"), E::Version),
        (tp("0A", TRACE, PARENT, "01"), E::Version),
        (tp("00", &TRACE.to_uppercase(), PARENT, "01"), E::TraceId),
        (tp("00", TRACE, &PARENT.to_uppercase(), "01"), E::ParentId),
        (tp("00", &zeros32, PARENT, "01"), E::ZeroTraceId),
        (tp("00", TRACE, &zeros16, "01"), E::ZeroParentId),
        (tp("00", TRACE, PARENT, "0A"), E::Flags),
        (tp("00", TRACE, PARENT, "1x"), E::Flags),
        (valid.replacen('-', "_", 1), E::Separator),
        (
            valid.replace(&format!("-{PARENT}-"), &format!("_{PARENT}-")),
            E::Separator,
        ),
        (
            valid.replace(&format!("{PARENT}-"), &format!("{PARENT}_")),
            E::Separator,
        ),
        // A field one digit short shifts the separators.
        (
            tp("00", &TRACE[1..], &format!("{PARENT}0"), "01"),
            E::Separator,
        ),
        // Not ASCII: the bytes are checked, nothing panics on a char boundary.
        (
            tp("00", &format!("{}é", &TRACE[..30]), PARENT, "01"),
            E::TraceId,
        ),
        (tp("é", TRACE, PARENT, "01"), E::Version),
        (format!(" {valid}x"), E::TrailingData),
        (format!("{}\n", valid), E::TrailingData),
    ];
    for (header, reason) in cases {
        assert_eq!(parse_traceparent(&header), Err(reason), "{header:?}");
        let trace = TraceContext::from_headers(Some(&header), Some("rojo=1"));
        assert!(!trace.is_remote(), "{header:?}");
        assert_eq!(trace.tracestate(), None, "{header:?}");
        assert_eq!(trace.parent_span_id(), None);
    }
}

#[test]
fn tracestate_is_validated_and_normalized() {
    let ok = |s: &str| parse_tracestate(s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
    assert_eq!(
        ok(" rojo=00f067aa0ba902b7 ,,\tcongo=t61rcWkgMzE, "),
        "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
    );
    assert_eq!(ok("fw529a3039@dt=FQ/3 x"), "fw529a3039@dt=FQ/3 x");
    assert_eq!(ok("1tenant@sys_-*/=v"), "1tenant@sys_-*/=v");
    assert_eq!(ok(" , ,"), "");
    let thirty_two: Vec<String> = (0..32).map(|i| format!("k{i}=v")).collect();
    assert_eq!(ok(&thirty_two.join(",")), thirty_two.join(","));

    use InvalidTracestate as E;
    let thirty_three: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
    let cases: Vec<(String, InvalidTracestate)> = vec![
        ("rojo".into(), E::Member(0)),
        ("a=1,Rojo=1".into(), E::Key(1)),
        ("1abc=1".into(), E::Key(0)),
        ("=1".into(), E::Key(0)),
        (format!("a{}=1", "b".repeat(256)), E::Key(0)),
        ("t@=1".into(), E::Key(0)),
        ("t@1sys=1".into(), E::Key(0)),
        (format!("t@{}=1", "s".repeat(15)), E::Key(0)),
        ("a=".into(), E::Value(0)),
        ("a=b=c".into(), E::Value(0)),
        ("a=x\u{7f}".into(), E::Value(0)),
        ("a=é".into(), E::Value(0)),
        (format!("a={}", "v".repeat(257)), E::Value(0)),
        ("a=1,b=2,a=3".into(), E::DuplicateKey(2)),
        (thirty_three.join(","), E::TooManyMembers),
        (" ".repeat(MAX_TRACESTATE_INPUT + 1), E::TooLong),
    ];
    for (header, reason) in cases {
        assert_eq!(parse_tracestate(&header), Err(reason), "{header:?}");
    }
}

#[test]
fn a_long_tracestate_loses_long_members_then_its_tail() {
    // 20 members of 30 bytes (619 bytes joined) with a 200-byte one second.
    let mut members: Vec<String> = (0..20)
        .map(|i| format!("k{i:02}={}", "v".repeat(26)))
        .collect();
    members.insert(1, format!("long={}", "x".repeat(195)));
    let kept = parse_tracestate(&members.join(",")).expect("valid");
    assert!(kept.len() <= MAX_TRACESTATE_LEN, "{}", kept.len());
    assert!(!kept.contains("long="));
    let expected: Vec<&str> = members
        .iter()
        .filter(|m| !m.starts_with("long="))
        .map(String::as_str)
        .take(16) // 16 * 30 + 15 commas = 495 <= 512 < 17 * 30 + 16
        .collect();
    assert_eq!(kept, expected.join(","));

    // Under the bound, a member over 128 bytes is kept.
    let short = format!("a=1,long={}", "x".repeat(195));
    assert_eq!(parse_tracestate(&short).unwrap(), short);
}

#[test]
fn tracestate_needs_a_valid_traceparent_and_survives_its_own_errors() {
    let valid = tp("00", TRACE, PARENT, "01");
    let dropped = TraceContext::from_headers(Some(&valid), Some("Bad=1"));
    assert!(dropped.is_remote());
    assert_eq!(dropped.tracestate(), None);
    let empty = TraceContext::from_headers(Some(&valid), Some(" , "));
    assert_eq!(empty.tracestate(), None);
    let orphan = TraceContext::from_headers(None, Some("rojo=1"));
    assert!(!orphan.is_remote());
    assert_eq!(orphan.tracestate(), None);
}

#[test]
fn ids_print_parse_and_serialize_as_lowercase_hex() {
    let id: TraceId = TRACE.parse().unwrap();
    assert_eq!(id.to_string(), TRACE);
    assert_eq!(format!("{id:?}"), format!("TraceId({TRACE})"));
    assert_eq!(serde_json::to_value(id).unwrap(), serde_json::json!(TRACE));
    assert_eq!(
        serde_json::from_value::<TraceId>(serde_json::json!(TRACE)).unwrap(),
        id
    );
    let span: SpanId = PARENT.parse().unwrap();
    assert_eq!(
        span.to_bytes(),
        [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
    );
    assert_eq!(SpanId::from_bytes(span.to_bytes()), Some(span));

    for bad in [
        &TRACE.to_uppercase(),
        &"0".repeat(32),
        &TRACE[1..],
        "",
        "xyz",
    ] {
        let err = bad.parse::<TraceId>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected 32 lowercase hex digits, not all zero"
        );
    }
    assert!(serde_json::from_value::<SpanId>(serde_json::json!("0000000000000000")).is_err());
    assert_eq!(TraceId::from_bytes([0; 16]), None);
}

#[test]
fn fresh_traces_are_random_and_local() {
    let a = TraceContext::new_root();
    let b = TraceContext::new_root();
    assert_ne!(a.trace_id(), b.trace_id());
    assert!(!a.is_remote() && !a.sampled());
    assert_eq!(a.parent_span_id(), None);
}

// --- The request span, seen by a layer that records what a subscriber gets.

#[derive(Debug, Clone, Default)]
struct SpanRecord {
    name: &'static str,
    id: u64,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

/// Records every span's name, resolved parent and fields (later `record`s
/// included).
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<SpanRecord>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl tracing::field::Visit for Fields<'_> {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut record = SpanRecord {
            name: attrs.metadata().name(),
            id: id.into_u64(),
            parent: ctx
                .span(id)
                .and_then(|s| s.parent())
                .map(|p| p.id().into_u64()),
            ..SpanRecord::default()
        };
        attrs.record(&mut Fields(&mut record.fields));
        self.0.lock().unwrap().push(record);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some(record) = spans.iter_mut().rev().find(|r| r.id == id.into_u64()) {
            values.record(&mut Fields(&mut record.fields));
        }
    }
}

impl Recorder {
    fn spans(&self) -> Vec<SpanRecord> {
        self.0.lock().unwrap().clone()
    }

    fn named(&self, name: &str) -> SpanRecord {
        let spans = self.spans();
        let mut found = spans.into_iter().filter(|s| s.name == name);
        let span = found.next().unwrap_or_else(|| panic!("no span {name:?}"));
        assert!(found.next().is_none(), "more than one span {name:?}");
        span
    }
}

/// Runs `f` with a subscriber that records into the returned recorder.
fn recorded<T>(f: impl FnOnce() -> T) -> (Recorder, T) {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    let out = tracing::subscriber::with_default(subscriber, f);
    (recorder, out)
}

fn field<'a>(span: &'a SpanRecord, name: &str) -> Option<&'a str> {
    span.fields.get(name).map(String::as_str)
}

#[test]
fn the_request_span_carries_the_callers_trace_and_the_request() {
    let header = tp("00", TRACE, PARENT, "01");
    let (recorder, ()) = recorded(|| {
        let mut trace = TraceContext::from_headers(Some(&header), None);
        let span = request_span(
            "tools/call",
            "close_ticket",
            &RequestId::integer(7),
            Some("alice"),
            &mut trace,
        );
        assert_eq!(
            trace.trace_id().to_string(),
            TRACE,
            "a remote trace keeps its id"
        );
        record_outcome(&span, "ok", None);
    });
    let span = recorder.named(REQUEST_SPAN);
    assert_eq!(span.parent, None);
    assert_eq!(field(&span, METHOD_FIELD), Some("tools/call"));
    assert_eq!(field(&span, TOOL_NAME_FIELD), Some("close_ticket"));
    assert_eq!(field(&span, PROMPT_NAME_FIELD), None);
    assert_eq!(field(&span, DECLARATION_FIELD), None);
    assert_eq!(field(&span, REQUEST_ID_FIELD), Some("7"));
    assert_eq!(field(&span, PRINCIPAL_FIELD), Some("alice"));
    assert_eq!(field(&span, TRACE_ID_FIELD), Some(TRACE));
    assert_eq!(field(&span, OUTCOME_FIELD), Some("ok"));
    assert_eq!(field(&span, ERROR_TYPE_FIELD), None);
}

#[test]
fn a_handlers_span_is_a_child_of_the_request_span() {
    let header = tp("00", TRACE, PARENT, "00");
    let (recorder, ()) = recorded(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut trace = TraceContext::from_headers(Some(&header), None);
        let span = request_span("tools/call", "add", &"req-7".into(), None, &mut trace);
        let handler = async {
            tokio::task::yield_now().await;
            let work = tracing::info_span!("handler.work");
            async { tokio::task::yield_now().await }
                .instrument(work)
                .await;
        };
        rt.block_on(handler.instrument(span.clone()));
        record_outcome(&span, "tool_error", Some("tool_error"));
    });
    let request = recorder.named(REQUEST_SPAN);
    let work = recorder.named("handler.work");
    assert_eq!(work.parent, Some(request.id));
    assert_eq!(
        field(&request, REQUEST_ID_FIELD),
        Some("req-7"),
        "no JSON quotes"
    );
    assert_eq!(field(&request, PRINCIPAL_FIELD), None);
    assert_eq!(field(&request, OUTCOME_FIELD), Some("tool_error"));
    assert_eq!(field(&request, ERROR_TYPE_FIELD), Some("tool_error"));
}

#[test]
fn without_a_traceparent_the_span_names_the_fresh_trace() {
    let (recorder, trace) = recorded(|| {
        let mut trace = TraceContext::from_headers(None, None);
        let before = trace.trace_id();
        let _span = request_span("resources/read", "readme", &1.into(), None, &mut trace);
        // No OpenTelemetry layer here: nothing else could assign an id.
        assert_eq!(trace.trace_id(), before);
        trace
    });
    let span = recorder.named(REQUEST_SPAN);
    assert_eq!(
        field(&span, TRACE_ID_FIELD),
        Some(trace.trace_id().to_string().as_str())
    );
    assert_eq!(field(&span, DECLARATION_FIELD), Some("readme"));
    assert_eq!(field(&span, TOOL_NAME_FIELD), None);
}

#[test]
fn each_method_names_its_declaration_in_its_own_field() {
    let (recorder, ()) = recorded(|| {
        let mut trace = TraceContext::new_root();
        for (method, name) in [
            ("prompts/get", "greet"),
            ("tools/call", "add"),
            ("resources/read", "readme"),
            ("tools/call", ""),
        ] {
            let _span = request_span(method, name, &1.into(), None, &mut trace);
        }
    });
    let names: Vec<[Option<String>; 3]> = recorder
        .spans()
        .iter()
        .map(|s| {
            [TOOL_NAME_FIELD, PROMPT_NAME_FIELD, DECLARATION_FIELD]
                .map(|f| field(s, f).map(str::to_owned))
        })
        .collect();
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        names,
        [
            [None, s("greet"), None],
            [s("add"), None, None],
            [None, None, s("readme")],
            [None, None, None],
        ]
    );
}

#[test]
fn the_documented_names_are_the_spans_names() {
    let (_recorder, ()) = recorded(|| {
        let span = request_span(
            "tools/call",
            "add",
            &1.into(),
            None,
            &mut TraceContext::new_root(),
        );
        let meta = span.metadata().expect("the span is enabled");
        assert_eq!(meta.name(), REQUEST_SPAN);
        assert_eq!(meta.level(), &tracing::Level::INFO);
        for name in [
            METHOD_FIELD,
            TOOL_NAME_FIELD,
            PROMPT_NAME_FIELD,
            DECLARATION_FIELD,
            REQUEST_ID_FIELD,
            PRINCIPAL_FIELD,
            TRACE_ID_FIELD,
            OUTCOME_FIELD,
            ERROR_TYPE_FIELD,
        ] {
            assert!(meta.fields().field(name).is_some(), "{name} is not a field");
        }
    });
}

#[test]
fn a_served_call_runs_in_its_request_span_and_the_handlers_spans_nest_under_it() {
    use serde_json::json;

    let server = crate::Server::new("traced", "0.1.0")
        .tool(
            crate::declare::ToolDecl::builder("work")
                .description("Do some traced work.")
                .handler(|_args, _ctx| {
                    async { Ok(crate::wire::CallToolResult::text("done")) }
                        .instrument(tracing::info_span!("handler.work"))
                }),
        )
        .build()
        .unwrap();
    let header = tp("00", TRACE, PARENT, "01");
    let (recorder, response) = recorded(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let connection = crate::transport::Connection::new(server);
            let mut meta = envelope();
            meta["traceparent"] = json!(header);
            answer(
                &connection,
                json!({
                    "jsonrpc": "2.0", "id": 9, "method": "tools/call",
                    "params": {"name": "work", "arguments": {}, "_meta": meta}
                }),
            )
            .await
        })
    });
    assert_eq!(
        response["result"]["content"][0]["text"], "done",
        "{response}"
    );
    let request = recorder.named(REQUEST_SPAN);
    assert_eq!(field(&request, TRACE_ID_FIELD), Some(TRACE));
    assert_eq!(field(&request, TOOL_NAME_FIELD), Some("work"));
    assert_eq!(field(&request, REQUEST_ID_FIELD), Some("9"));
    assert_eq!(field(&request, OUTCOME_FIELD), Some("completed"));
    let handler = recorder.named("handler.work");
    assert_eq!(handler.parent, Some(request.id), "the handler's span nests");
}

#[test]
fn requests_the_router_answers_run_in_a_request_span_with_a_trace_id() {
    use serde_json::json;

    let server = crate::Server::new("traced", "0.1.0")
        .tool(
            crate::declare::ToolDecl::builder("work")
                .description("Do some traced work.")
                .handler(|_args, _ctx| async { Ok(crate::wire::CallToolResult::text("done")) }),
        )
        .build()
        .unwrap();
    let header = tp("00", TRACE, PARENT, "01");
    let (recorder, codes) = recorded(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let connection = crate::transport::Connection::new(server);
            let mut meta = envelope();
            meta["traceparent"] = json!(header);
            let discover = answer(
                &connection,
                json!({
                    "jsonrpc": "2.0", "id": "d", "method": "server/discover",
                    "params": {"_meta": meta}
                }),
            )
            .await;
            let list = answer(
                &connection,
                json!({
                    "jsonrpc": "2.0", "id": 1, "method": "tools/list",
                    "params": {"_meta": envelope()}
                }),
            )
            .await;
            // A protocol error: the envelope lacks its required keys.
            let error = answer(
                &connection,
                json!({
                    "jsonrpc": "2.0", "id": "e", "method": "tools/list",
                    "params": {"_meta": {}}
                }),
            )
            .await;
            [&discover, &list, &error].map(|r| r["error"]["code"].as_i64())
        })
    });
    assert_eq!(codes, [None, None, Some(-32602)]);
    let spans: Vec<_> = recorder
        .spans()
        .into_iter()
        .filter(|s| s.name == REQUEST_SPAN)
        .collect();
    assert_eq!(spans.len(), 3, "one request span each: {spans:#?}");
    let discover = &spans[0];
    assert_eq!(field(discover, METHOD_FIELD), Some("server/discover"));
    assert_eq!(field(discover, REQUEST_ID_FIELD), Some("d"));
    assert_eq!(
        field(discover, TRACE_ID_FIELD),
        Some(TRACE),
        "continues _meta.traceparent"
    );
    assert_eq!(field(discover, OUTCOME_FIELD), Some("completed"));
    let list = &spans[1];
    assert_eq!(field(list, METHOD_FIELD), Some("tools/list"));
    let fresh = field(list, TRACE_ID_FIELD).expect("a fresh trace id");
    assert_eq!(fresh.len(), 32);
    assert_ne!(fresh, TRACE);
    let error = &spans[2];
    assert_eq!(field(error, METHOD_FIELD), Some("tools/list"));
    assert_eq!(field(error, REQUEST_ID_FIELD), Some("e"));
    assert!(field(error, TRACE_ID_FIELD).is_some_and(|t| t.len() == 32));
    assert_eq!(field(error, OUTCOME_FIELD), Some("error"));
    assert_eq!(field(error, ERROR_TYPE_FIELD), Some("-32602"));
}

/// A valid 2026-07-28 `_meta` envelope declaring no client capabilities.
fn envelope() -> serde_json::Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": typed_mcp_core::PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// Hands `message` to the connection as a transport would and returns the
/// server's final answer to it (the unit tests drive the connection itself:
/// a client here would link a second copy of this crate).
async fn answer(
    connection: &crate::transport::Connection,
    message: serde_json::Value,
) -> serde_json::Value {
    let bytes = serde_json::to_vec(&message).expect("a Value serializes");
    let (outbox, mut inbox) = crate::transport::Outbox::channel();
    connection
        .accept(&bytes, crate::transport::Inbound::default(), &outbox)
        .await;
    drop(outbox);
    while let Some(out) = inbox.recv().await {
        if out.is_reply() {
            return serde_json::from_slice(out.body()).expect("the server sends JSON");
        }
    }
    panic!("no answer to {message}")
}
