//! Trace context: each request runs in one `tracing` span that continues the
//! caller's W3C trace.
//!
//! A client propagates its trace in the request's `_meta` under `traceparent`
//! and `tracestate` ([W3C Trace Context]). [`TraceContext::from_meta`] reads
//! them: a valid `traceparent` makes the request part of the caller's trace; a
//! missing or invalid one starts a fresh trace with a random id, so every
//! request, and every receipt, has a trace id. An invalid header is never an
//! error to the client: it is logged at `debug` and ignored.
//!
//! Each request runs in one [`tracing`] span named [`REQUEST_SPAN`] whose
//! fields are listed below; spans a handler opens nest under it. The names
//! follow OpenTelemetry's semantic conventions for MCP where one exists.
//!
//! | field | when | value |
//! |---|---|---|
//! | [`METHOD_FIELD`] | always | the JSON-RPC method, e.g. `tools/call` |
//! | [`TOOL_NAME_FIELD`] | `tools/call` | the tool's name |
//! | [`PROMPT_NAME_FIELD`] | `prompts/get` | the prompt's name |
//! | [`DECLARATION_FIELD`] | other methods that target a declaration (e.g. `resources/read`) | its name |
//! | [`REQUEST_ID_FIELD`] | always | the request id as text (`7`, `req-7`) |
//! | [`PRINCIPAL_FIELD`] | an authenticated principal | its id (never a credential) |
//! | [`TRACE_ID_FIELD`] | always | the trace id, 32 lowercase hex digits |
//! | [`OUTCOME_FIELD`] | when the request ends | how it ended |
//! | [`ERROR_TYPE_FIELD`] | when it failed | a low-cardinality error class |
//!
//! With the `opentelemetry` cargo feature, the span is also a valid
//! OpenTelemetry server span for an application that installs a
//! [`tracing-opentelemetry`] layer: its parent is the caller's remote span,
//! its name is `{method} {name}` (`otel.name`), its kind is server
//! (`otel.kind`), a failed outcome sets its status to error
//! (`otel.status_code`), and it links to the span that was current when the
//! request arrived (an HTTP server span, say), as the conventions recommend.
//!
//! [W3C Trace Context]: https://www.w3.org/TR/trace-context/
//! [`tracing-opentelemetry`]: https://docs.rs/tracing-opentelemetry

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tracing::field::Empty;
use typed_mcp_core::{RequestId, RequestMeta};

/// The name of the span every request runs in.
pub const REQUEST_SPAN: &str = "mcp.request";
/// Request span field: the JSON-RPC method (`tools/call`, `resources/read`, ...).
pub const METHOD_FIELD: &str = "mcp.method.name";
/// Request span field: the tool's name, on `tools/call`.
pub const TOOL_NAME_FIELD: &str = "gen_ai.tool.name";
/// Request span field: the prompt's name, on `prompts/get`.
pub const PROMPT_NAME_FIELD: &str = "gen_ai.prompt.name";
/// Request span field: the targeted declaration's name on any other method
/// (the resource's name on `resources/read`).
pub const DECLARATION_FIELD: &str = "typed_mcp.declaration.name";
/// Request span field: the JSON-RPC request id as text, without JSON quotes.
pub const REQUEST_ID_FIELD: &str = "jsonrpc.request.id";
/// Request span field: the authenticated principal's id, when there is one.
pub const PRINCIPAL_FIELD: &str = "enduser.id";
/// Request span field: the request's trace id (32 lowercase hex digits), the
/// one receipts carry.
pub const TRACE_ID_FIELD: &str = "trace_id";
/// Request span field, empty until the request ends: how it ended.
pub const OUTCOME_FIELD: &str = "outcome";
/// Request span field, set only when the request failed: a low-cardinality
/// class of the failure (the JSON-RPC error code for a protocol error,
/// `tool_error` for an `isError` result).
pub const ERROR_TYPE_FIELD: &str = "error.type";

/// The longest `tracestate` kept, in bytes; the W3C asks for at least 512.
pub const MAX_TRACESTATE_LEN: usize = 512;
/// Most members a `tracestate` may have (W3C).
const MAX_TRACESTATE_MEMBERS: usize = 32;
/// Longer than any valid `tracestate` (32 members of 513 bytes, commas and some
/// spaces): such input is refused before it is split.
const MAX_TRACESTATE_INPUT: usize = 32 * 520;
/// Members longer than this are the first dropped when a `tracestate` is cut.
const LONG_TRACESTATE_MEMBER: usize = 128;

/// A W3C trace id: 16 bytes, never all zero, shown as 32 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TraceId([u8; 16]);

/// A W3C span id (the caller's `parent-id`): 8 bytes, never all zero, shown as
/// 16 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpanId([u8; 8]);

/// A trace or span id that is not the right number of lowercase hex digits,
/// or is all zero.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {digits} lowercase hex digits, not all zero")]
pub struct InvalidId {
    digits: usize,
}

macro_rules! hex_id {
    ($ty:ident, $len:literal) => {
        impl $ty {
            /// The id from its bytes, or `None` when they are all zero (the W3C's
            /// invalid value).
            pub const fn from_bytes(bytes: [u8; $len]) -> Option<$ty> {
                let mut i = 0;
                while i < $len {
                    if bytes[i] != 0 {
                        return Some($ty(bytes));
                    }
                    i += 1;
                }
                None
            }

            /// The id's bytes.
            pub const fn to_bytes(self) -> [u8; $len] {
                self.0
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut text = [0u8; $len * 2];
                for (pair, byte) in text.chunks_exact_mut(2).zip(self.0) {
                    pair[0] = HEX[usize::from(byte >> 4)];
                    pair[1] = HEX[usize::from(byte & 0xf)];
                }
                // Only ASCII hex digits were written.
                f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($ty), "({})"), self)
            }
        }

        impl FromStr for $ty {
            type Err = InvalidId;

            /// Parses the W3C form: exactly the right number of lowercase hex
            /// digits, not all zero.
            fn from_str(s: &str) -> Result<$ty, InvalidId> {
                let invalid = InvalidId { digits: $len * 2 };
                let bytes = decode_hex::<$len>(s.as_bytes()).ok_or(invalid.clone())?;
                $ty::from_bytes(bytes).ok_or(invalid)
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$ty, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

hex_id!(TraceId, 16);
hex_id!(SpanId, 8);

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Decodes exactly `2 * N` lowercase hex digits; uppercase is refused, as the
/// W3C requires of `traceparent`.
fn decode_hex<const N: usize>(digits: &[u8]) -> Option<[u8; N]> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    if digits.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(out)
}

/// The trace a request belongs to: the caller's, when `_meta` carried a valid
/// `traceparent`, or a fresh one.
///
/// ```
/// use typed_mcp::trace::TraceContext;
///
/// let trace = TraceContext::from_headers(
///     Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
///     Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
/// );
/// assert!(trace.is_remote());
/// assert_eq!(trace.trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// assert_eq!(trace.parent_span_id().map(|id| id.to_string()).as_deref(), Some("00f067aa0ba902b7"));
/// assert!(trace.sampled());
/// assert_eq!(trace.tracestate(), Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
///
/// // An invalid traceparent (here an all-zero trace id) is ignored, and so is
/// // the tracestate that came with it: the request starts a fresh trace.
/// let fresh = TraceContext::from_headers(
///     Some("00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
///     Some("rojo=00f067aa0ba902b7"),
/// );
/// assert!(!fresh.is_remote());
/// assert_eq!(fresh.tracestate(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: TraceId,
    remote: Option<RemoteParent>,
}

/// What a valid `traceparent` (and `tracestate`) said about the caller's span.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RemoteParent {
    span_id: SpanId,
    flags: u8,
    tracestate: Option<String>,
}

impl TraceContext {
    /// Reads `traceparent` and `tracestate` from a request's `_meta`.
    pub fn from_meta(meta: &RequestMeta) -> TraceContext {
        TraceContext::from_headers(meta.traceparent.as_deref(), meta.tracestate.as_deref())
    }

    /// Reads a `traceparent` and a `tracestate` value (as found in `_meta` or in
    /// HTTP headers of the same names).
    ///
    /// A missing or invalid `traceparent` gives a fresh trace, and its
    /// `tracestate` is dropped. An invalid `tracestate` alone is dropped; a
    /// valid one longer than [`MAX_TRACESTATE_LEN`] is cut as the W3C
    /// describes (members over 128 bytes first, then from the end).
    pub fn from_headers(traceparent: Option<&str>, tracestate: Option<&str>) -> TraceContext {
        let Some(header) = traceparent else {
            return TraceContext::new_root();
        };
        let (trace_id, span_id, flags) = match parse_traceparent(header) {
            Ok(parsed) => parsed,
            Err(reason) => {
                tracing::debug!(%reason, len = header.len(), "ignoring the request's traceparent");
                return TraceContext::new_root();
            }
        };
        let tracestate = tracestate.and_then(|state| match parse_tracestate(state) {
            Ok(kept) => Some(kept).filter(|kept| !kept.is_empty()),
            Err(reason) => {
                tracing::debug!(%reason, len = state.len(), "ignoring the request's tracestate");
                None
            }
        });
        TraceContext {
            trace_id,
            remote: Some(RemoteParent {
                span_id,
                flags,
                tracestate,
            }),
        }
    }

    /// A fresh trace with a random id and no remote parent.
    pub fn new_root() -> TraceContext {
        TraceContext {
            trace_id: random_trace_id(),
            remote: None,
        }
    }

    /// The trace id: the caller's, or the fresh one.
    pub fn trace_id(&self) -> TraceId {
        self.trace_id
    }

    /// The caller's span (the `traceparent`'s `parent-id`), when the request
    /// continues a remote trace.
    pub fn parent_span_id(&self) -> Option<SpanId> {
        self.remote.as_ref().map(|r| r.span_id)
    }

    /// Whether the caller marked its trace as sampled (the `sampled` flag);
    /// `false` for a fresh trace, where the caller made no decision.
    pub fn sampled(&self) -> bool {
        self.remote.as_ref().is_some_and(|r| r.flags & 0x01 != 0)
    }

    /// The caller's `tracestate`, kept only with a valid `traceparent`,
    /// normalized (empty members and spaces around members removed) and at
    /// most [`MAX_TRACESTATE_LEN`] bytes.
    pub fn tracestate(&self) -> Option<&str> {
        self.remote.as_ref()?.tracestate.as_deref()
    }

    /// Whether the request continues a trace the caller propagated.
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// Takes the trace id an exporter assigned to a request that brought no
    /// trace, so receipts name the trace that was exported. A remote trace
    /// keeps the caller's id.
    #[cfg(feature = "opentelemetry")]
    fn adopt_trace_id(&mut self, trace_id: TraceId) {
        if self.remote.is_none() {
            self.trace_id = trace_id;
        }
    }
}

/// Why a `traceparent` was ignored (for the debug log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum InvalidTraceparent {
    #[error("shorter than the 55 characters of version-traceid-parentid-flags")]
    TooShort,
    #[error("version 00 has exactly four fields (55 characters)")]
    TrailingData,
    #[error("the version is not two lowercase hex digits")]
    Version,
    #[error("version ff is invalid")]
    VersionFf,
    #[error("the fields are not separated by '-'")]
    Separator,
    #[error("the trace id is not 32 lowercase hex digits")]
    TraceId,
    #[error("the trace id is all zeros")]
    ZeroTraceId,
    #[error("the parent id is not 16 lowercase hex digits")]
    ParentId,
    #[error("the parent id is all zeros")]
    ZeroParentId,
    #[error("the flags are not two lowercase hex digits")]
    Flags,
}

/// Parses `version-traceid-parentid-flags` by the W3C rules: version 00 is
/// exactly that; a later version (but not `ff`) is read by its first four
/// fields and may go on after a `-`.
fn parse_traceparent(header: &str) -> Result<(TraceId, SpanId, u8), InvalidTraceparent> {
    use InvalidTraceparent as E;
    // Optional whitespace around a header value is not part of it (RFC 9110).
    let b = header.trim_matches([' ', '\t']).as_bytes();
    if b.len() < 55 {
        return Err(E::TooShort);
    }
    let [version] = decode_hex::<1>(&b[0..2]).ok_or(E::Version)?;
    if version == 0xff {
        return Err(E::VersionFf);
    }
    if b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
        return Err(E::Separator);
    }
    if b.len() > 55 {
        if version == 0 {
            return Err(E::TrailingData);
        }
        if b[55] != b'-' {
            return Err(E::Separator);
        }
    }
    let trace_id = decode_hex::<16>(&b[3..35]).ok_or(E::TraceId)?;
    let trace_id = TraceId::from_bytes(trace_id).ok_or(E::ZeroTraceId)?;
    let span_id = decode_hex::<8>(&b[36..52]).ok_or(E::ParentId)?;
    let span_id = SpanId::from_bytes(span_id).ok_or(E::ZeroParentId)?;
    let [flags] = decode_hex::<1>(&b[53..55]).ok_or(E::Flags)?;
    Ok((trace_id, span_id, flags))
}

/// Why a `tracestate` was dropped (for the debug log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum InvalidTracestate {
    #[error("longer than any valid tracestate")]
    TooLong,
    #[error("more than 32 members")]
    TooManyMembers,
    #[error("member {0} is not key=value")]
    Member(usize),
    #[error("member {0} has an invalid key")]
    Key(usize),
    #[error("member {0} has an invalid value")]
    Value(usize),
    #[error("member {0} repeats a key")]
    DuplicateKey(usize),
}

/// Validates a `tracestate` list and returns it normalized and cut to
/// [`MAX_TRACESTATE_LEN`].
fn parse_tracestate(header: &str) -> Result<String, InvalidTracestate> {
    use InvalidTracestate as E;
    if header.len() > MAX_TRACESTATE_INPUT {
        return Err(E::TooLong);
    }
    let mut members: Vec<&str> = Vec::new();
    for (index, member) in header.split(',').enumerate() {
        // Empty members (only optional whitespace) are allowed and skipped.
        let member = member.trim_matches([' ', '\t']);
        if member.is_empty() {
            continue;
        }
        if members.len() == MAX_TRACESTATE_MEMBERS {
            return Err(E::TooManyMembers);
        }
        let (key, value) = member.split_once('=').ok_or(E::Member(index))?;
        if !valid_tracestate_key(key) {
            return Err(E::Key(index));
        }
        if !valid_tracestate_value(value) {
            return Err(E::Value(index));
        }
        if members
            .iter()
            .any(|m| m.split_once('=').is_some_and(|(k, _)| k == key))
        {
            return Err(E::DuplicateKey(index));
        }
        members.push(member);
    }
    let joined_len = |members: &[&str]| {
        members.iter().map(|m| m.len()).sum::<usize>() + members.len().saturating_sub(1)
    };
    if joined_len(&members) > MAX_TRACESTATE_LEN {
        members.retain(|m| m.len() <= LONG_TRACESTATE_MEMBER);
        while joined_len(&members) > MAX_TRACESTATE_LEN {
            members.pop();
        }
    }
    Ok(members.join(","))
}

/// `simple-key` or `tenant-id@system-id` (W3C Trace Context, level 1).
fn valid_tracestate_key(key: &str) -> bool {
    fn rest(c: u8) -> bool {
        matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'*' | b'/')
    }
    match key.split_once('@') {
        None => {
            let b = key.as_bytes();
            (1..=256).contains(&b.len())
                && b[0].is_ascii_lowercase()
                && b[1..].iter().all(|&c| rest(c))
        }
        Some((tenant, system)) => {
            let (t, s) = (tenant.as_bytes(), system.as_bytes());
            (1..=241).contains(&t.len())
                && (t[0].is_ascii_lowercase() || t[0].is_ascii_digit())
                && t[1..].iter().all(|&c| rest(c))
                && (1..=14).contains(&s.len())
                && s[0].is_ascii_lowercase()
                && s[1..].iter().all(|&c| rest(c))
        }
    }
}

/// 1 to 256 printable ASCII characters other than `,` and `=`, the last not a
/// space.
fn valid_tracestate_value(value: &str) -> bool {
    let b = value.as_bytes();
    let printable = |c: u8| matches!(c, 0x20..=0x7e) && c != b',' && c != b'=';
    (1..=256).contains(&b.len()) && b.iter().all(|&c| printable(c)) && b[b.len() - 1] != b' '
}

/// A fresh trace id: unique per call and unrelated between processes.
fn random_trace_id() -> TraceId {
    use std::hash::BuildHasher;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    // A keyed hash of a counter: unique per call, unrelated between
    // processes (the key is read from the OS random source once, through
    // std's randomly keyed hasher), and without a system call per request.
    // A trace id is an identifier that travels in logs, headers and
    // receipts, not a secret, so foldhash (a fraction of SipHash's
    // instructions) is enough.
    static KEY: OnceLock<foldhash::quality::FixedState> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let key = KEY.get_or_init(|| {
        let os_random = std::hash::RandomState::new().hash_one(0u8);
        foldhash::quality::FixedState::with_seed(os_random)
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&key.hash_one((n, 0u8)).to_be_bytes());
    bytes[8..].copy_from_slice(&key.hash_one((n, 1u8)).to_be_bytes());
    TraceId::from_bytes(bytes).unwrap_or(TraceId([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]))
}

/// Opens the span one request runs in (see the [module docs](self) for its
/// fields). Enter it around the whole dispatch (`.instrument(span)`), so the
/// handler's own spans nest under it, and finish it with [`record_outcome`].
///
/// With the `opentelemetry` feature the span continues the caller's remote
/// trace; when the request brought none and an OpenTelemetry layer assigned
/// the span a trace id (a new one, or that of the span current at the call),
/// `trace` takes that id so that receipts and the exported trace agree. Read
/// [`TraceContext::trace_id`] after this call.
pub(crate) fn request_span(
    method: &str,
    name: &str,
    request_id: &RequestId,
    principal: Option<&str>,
    trace: &mut TraceContext,
) -> tracing::Span {
    let (tool, prompt, other) = match method {
        _ if name.is_empty() => (None, None, None),
        "tools/call" => (Some(name), None, None),
        "prompts/get" => (None, Some(name), None),
        _ => (None, None, Some(name)),
    };
    let request_id = match request_id {
        RequestId::String(s) => s,
        RequestId::Integer(raw) => raw.get(),
    };
    // The field list is spelled twice because `otel.*` fields only mean
    // something to an OpenTelemetry layer and would clutter plain logs.
    #[cfg(not(feature = "opentelemetry"))]
    let span = tracing::info_span!(
        "mcp.request",
        mcp.method.name = method,
        gen_ai.tool.name = tool,
        gen_ai.prompt.name = prompt,
        typed_mcp.declaration.name = other,
        jsonrpc.request.id = request_id,
        enduser.id = principal,
        trace_id = Empty,
        outcome = Empty,
        error.type = Empty,
    );
    #[cfg(feature = "opentelemetry")]
    let span = tracing::info_span!(
        "mcp.request",
        mcp.method.name = method,
        gen_ai.tool.name = tool,
        gen_ai.prompt.name = prompt,
        typed_mcp.declaration.name = other,
        jsonrpc.request.id = request_id,
        enduser.id = principal,
        trace_id = Empty,
        outcome = Empty,
        error.type = Empty,
        otel.name = %otel::span_name(method, name),
        otel.kind = "server",
        otel.status_code = Empty,
    );
    #[cfg(feature = "opentelemetry")]
    otel::continue_trace(&span, trace);
    span.record(TRACE_ID_FIELD, tracing::field::display(trace.trace_id()));
    span
}

/// Records how a request ended on its span: `outcome` always, and for a
/// failure `error_type` (a low-cardinality class: the JSON-RPC error code as
/// text for a protocol error, `tool_error` for an `isError` result, or a name
/// such as `timeout`), which with the `opentelemetry` feature also marks the
/// span's status as error.
pub(crate) fn record_outcome(span: &tracing::Span, outcome: &str, error_type: Option<&str>) {
    span.record(OUTCOME_FIELD, outcome);
    if let Some(error_type) = error_type {
        span.record(ERROR_TYPE_FIELD, error_type);
        #[cfg(feature = "opentelemetry")]
        span.record("otel.status_code", "error");
    }
}

/// The bridge to OpenTelemetry: the request span's remote parent and link.
#[cfg(feature = "opentelemetry")]
mod otel {
    use opentelemetry::trace::{
        SpanContext, SpanId as OtelSpanId, TraceContextExt as _, TraceFlags,
        TraceId as OtelTraceId, TraceState,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    use super::{TraceContext, TraceId};

    /// `{method} {name}`, or the method alone when the request names no
    /// declaration (the conventions' span name).
    pub(super) fn span_name(method: &str, name: &str) -> String {
        if name.is_empty() {
            method.to_owned()
        } else {
            format!("{method} {name}")
        }
    }

    /// Makes `span` continue the caller's trace, or adopts the trace id the
    /// OpenTelemetry layer gave it when there is no caller's trace.
    pub(super) fn continue_trace(span: &tracing::Span, trace: &mut TraceContext) {
        let Some(remote) = &trace.remote else {
            // Starting the OpenTelemetry span here fixes its trace id now (its
            // start time was taken when the span was created).
            let assigned = span.context().span().span_context().trace_id();
            if let Some(id) = TraceId::from_bytes(assigned.to_bytes()) {
                trace.adopt_trace_id(id);
            }
            return;
        };
        let state = remote
            .tracestate
            .as_deref()
            .and_then(|s| s.parse::<TraceState>().ok())
            .unwrap_or_default();
        let parent = SpanContext::new(
            OtelTraceId::from_bytes(trace.trace_id.to_bytes()),
            OtelSpanId::from_bytes(remote.span_id.to_bytes()),
            TraceFlags::new(remote.flags),
            true,
            state,
        );
        // The transport's span (current when the request arrived) is not the
        // parent: one MCP request may span several HTTP requests and back.
        // It is linked instead.
        let ambient = tracing::Span::current()
            .context()
            .span()
            .span_context()
            .clone();
        let cx = opentelemetry::Context::new().with_remote_span_context(parent);
        if let Err(error) = span.set_parent(cx) {
            // No OpenTelemetry layer, or the span is filtered out: nothing to
            // continue, and the trace id field still names the caller's trace.
            tracing::trace!(%error, "the request span does not continue the remote trace");
            return;
        }
        if ambient.is_valid() {
            span.add_link(ambient);
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(all(test, feature = "opentelemetry"))]
mod otel_tests;
