//! The router: a total, side-effect-free function from one inbound message (its
//! bytes and the transport's facts, such as HTTP headers) and the catalog to a
//! [`Decision`]: answer now, drop (a notification), or invoke a handler.
//!
//! # Validation order
//!
//! The first failing rung decides the answer. The order is the one the official
//! conformance suite checks (its fixture contract, section 1.3):
//!
//! 1. **Origin and Host** (HTTP only) — checked by the HTTP transport before the
//!    router runs; a refused request is `403`.
//! 2. **Size** — a message over `max_message_bytes` is `-32600` (HTTP 400). The
//!    stdio transport enforces this while reading, without buffering the line.
//! 3. **Depth** — nesting deeper than `max_depth` is `-32700` (400), found by a
//!    scan of the raw bytes before any parse.
//! 4. **Parse** — invalid JSON (or invalid UTF-8) is `-32700` (400), no `id`.
//! 5. **JSON-RPC shape** — one object with `"jsonrpc": "2.0"`, a string
//!    `method`, and an `id` that is a string or an integer when present; a batch,
//!    a response object or `"id": null` is `-32600` (400). The `id` is echoed
//!    whenever it could be read.
//! 6. **Notifications** — a message without `id` is never answered: it becomes
//!    [`Decision::Drop`] (`notifications/cancelled` carries the id to cancel).
//! 7. **Era** — a message of a dated revision leaves this ladder for the
//!    legacy one (the `legacy` submodule, and [`crate::legacy`]): an
//!    `initialize`, a message on a legacy session
//!    ([`RouteContext::session`]), or one with a dated `MCP-Protocol-Version`
//!    header or an `Mcp-Session-Id`, unless it carries the 2026-07-28
//!    envelope or version header (a dated client sends neither). Serving
//!    dated clients off ([`Router::with_legacy_clients`]), `initialize` is
//!    `-32601` (404) whose message and `data.supported` name the supported
//!    versions, before any envelope or header rung can reject it.
//! 8. **Standard headers** (HTTP only) — `MCP-Protocol-Version` present;
//!    `Mcp-Method` present and equal to `method` → else `-32020` (400).
//! 9. **`_meta` envelope** — `params._meta` with a string
//!    `io.modelcontextprotocol/protocolVersion` and an object
//!    `io.modelcontextprotocol/clientCapabilities` → else `-32602` (400). A
//!    missing key wins over a version mismatch.
//! 10. **Header version** (HTTP only) — `MCP-Protocol-Version` equal to the
//!     `_meta` version → else `-32020` (400).
//! 11. **Version supported** → else `-32022` (400) with `data.supported` and
//!     `data.requested`.
//! 12. **Rest of the envelope** — `clientCapabilities`, `clientInfo`, `logLevel`
//!     and `progressToken` well-formed → else `-32602` (400).
//! 13. **Method known and offered** — unknown, removed (`ping`,
//!     `logging/setLevel`, `resources/subscribe`, ...) or behind a capability
//!     the server does not announce (`subscriptions/listen` needs
//!     `resources.subscribe`, announced whenever there are resources, or the
//!     Tasks extension, whose status notifications it carries) →
//!     `-32601` (404).
//! 14. **`Mcp-Name`** (HTTP only; `tools/call`, `prompts/get`,
//!     `resources/read`) — present and equal to the body's `name`/`uri` after
//!     decoding the `=?base64?…?=` sentinel → else `-32020` (400).
//! 15. **Params shape** — e.g. `name` a string, `arguments` an object, `cursor`
//!     one this catalog issued → else `-32602`.
//! 16. **Target exists** — unknown tool or prompt → `-32602`; unknown resource →
//!     `-32602` with `data.uri`; a missing required prompt argument → `-32602`.
//! 17. **`Mcp-Param-*`** (HTTP only; `tools/call`) — each header declared with
//!     `x-mcp-header` agrees with the argument (decoded; integers compared
//!     numerically) → else `-32020` (400).
//! 18. **Multi round-trip fields** — `inputResponses` an object of objects,
//!     `requestState` a string → else `-32602`.
//! 19. **Required client capabilities** — a tool that needs e.g. `sampling` on a
//!     request that did not declare it → `-32021` (400) with
//!     `data.requiredCapabilities`.
//! 20. **Invoke** — `server/discover` and the four list methods are answered
//!     here from results serialized when the catalog was built; everything else
//!     becomes [`Decision::Invoke`]. Argument validation against the input
//!     schema belongs to the handler layer and fails as an `isError` result.
//!
//! The common call (a plain `tools/call`: the `_meta` envelope, `name` and
//! `arguments`, and over HTTP standard headers that agree with
//! them) is invoked from typed fields without building a `Value` tree for the
//! envelope; any other message, and any such call a rung would refuse, walks
//! the ladder above from a full parse.
//!
//! # HTTP status policy
//!
//! `-32601` → 404; `-32700`, `-32600`, `-32020`, `-32021`, `-32022` and an
//! envelope `-32602` → 400; a method-level `-32602` (unknown tool, bad cursor,
//! unknown resource) → 200, as it is an answer about the request's content;
//! `-32603` → 500.

mod arguments;
mod extension;
mod legacy;

pub use arguments::ToolArguments;
pub use extension::ExtensionMethod;

use std::borrow::Cow;
use std::collections::BTreeMap;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, HeaderParam, Kind, ListView, required_prompt_arguments};
use crate::guard::{Limits, depth_exceeds};
use crate::legacy::{ClientResponse, Handshake, LEGACY_VERSIONS, SessionFacts, SessionUpdate};
use crate::wire::{
    ClientCapabilities, CompletionArgument, Implementation, LoggingLevel, Meta, SubscriptionFilter,
    meta_keys, methods,
};
use crate::{ProgressToken, RequestId, RpcError, SUPPORTED_VERSIONS, encode};

/// The Tasks extension, whose `taskIds` member of a `subscriptions/listen`
/// filter the router checks (the runtime serves the rest of the extension
/// through the extension seam).
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Case-insensitive access to the transport's headers (HTTP).
pub trait Headers {
    /// The value of the header `name` (any case), if present.
    fn get(&self, name: &str) -> Option<&str>;
}

impl Headers for Vec<(String, String)> {
    fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the transport knows about a message besides its bytes.
#[derive(Clone, Copy, Default)]
pub struct RouteContext<'a> {
    /// The HTTP request headers; `None` on transports without headers (stdio).
    pub headers: Option<&'a dyn Headers>,
    /// The lists to answer with instead of the whole catalog's (what this
    /// caller may use); `None` answers from the catalog.
    pub lists: Option<&'a ListView>,
    /// The legacy session the message arrived on (after an `initialize`):
    /// the message follows the dated revision's rules.
    pub session: Option<&'a SessionFacts>,
}

impl RouteContext<'static> {
    /// The context of a transport without headers, such as stdio.
    pub const NONE: RouteContext<'static> = RouteContext {
        headers: None,
        lists: None,
        session: None,
    };
}

impl std::fmt::Debug for RouteContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouteContext")
            .field("headers", &self.headers.is_some())
            .field("session", &self.session)
            .finish()
    }
}

/// The router's decision about one inbound message.
#[derive(Debug)]
pub enum Decision {
    /// Send this message now.
    Respond(Response),
    /// A notification: send nothing.
    Drop(Dropped),
    /// Run a handler.
    Invoke(Box<Call>),
    /// An `initialize` was accepted: open the legacy session, then send the
    /// answer.
    Initialize(Box<Handshake>),
    /// A request that changes the legacy session (`logging/setLevel`,
    /// `resources/subscribe`, `resources/unsubscribe`): apply it, then send
    /// the answer.
    Session(Box<SessionUpdate>),
}

/// A complete JSON-RPC message to send, and the HTTP status to send it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// One compact JSON object, without a trailing newline.
    pub body: Vec<u8>,
    /// The HTTP status for Streamable HTTP.
    pub http_status: u16,
    /// What the router read of the request it answered, when it read its
    /// `id` and `method`: the runtime opens the request's span from it, and a
    /// receipt when the request named a declaration. `None` for a message
    /// refused before its shape was known (a parse error, a batch, an
    /// oversized line).
    pub request: Option<Box<AnsweredRequest>>,
}

/// What the router learned of a request it answered itself (see
/// [`Response::request`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AnsweredRequest {
    /// The request id.
    pub id: RequestId,
    /// The method named by the request.
    pub method: String,
    /// `_meta.traceparent`, once the envelope was read.
    pub traceparent: Option<String>,
    /// `_meta.tracestate`, once the envelope was read.
    pub tracestate: Option<String>,
    /// The declaration the request named, when it was refused after its
    /// target was found (a header mismatch, malformed multi round-trip
    /// fields, a missing client capability, a missing prompt argument).
    pub declaration: Option<Declaration>,
    /// The JSON-RPC error code, when the answer is an error.
    pub error_code: Option<i32>,
    /// The revision the request was read under, once known: the
    /// `_meta` protocol version, or a legacy session's.
    pub protocol_version: Option<String>,
}

/// A declaration of the catalog, as a refused request named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declaration {
    /// Index into [`Catalog::tools`].
    Tool(usize),
    /// Index into [`Catalog::prompts`].
    Prompt(usize),
    /// A resource URI and the declaration that serves it.
    Resource {
        /// The requested URI.
        uri: String,
        /// Which declaration serves it.
        matched: ResourceMatch,
    },
}

impl Response {
    fn error(id: Option<&RequestId>, error: RpcError, http_status: u16) -> Self {
        Response {
            body: encode::error(id, &error),
            http_status,
            request: None,
        }
    }

    fn protocol_error(id: Option<&RequestId>, error: RpcError) -> Self {
        let status = error.http_status();
        Self::error(id, error, status)
    }
}

/// A notification the router consumed.
#[derive(Debug, Clone, PartialEq)]
pub enum Dropped {
    /// `notifications/cancelled` for this request id.
    Cancelled {
        /// The request to cancel.
        request_id: RequestId,
        /// The client's reason, for logs.
        reason: Option<String>,
    },
    /// Any other notification (or a malformed cancellation), ignored.
    Ignored {
        /// Its method, when it had one.
        method: String,
    },
    /// On a legacy session, the client's answer to a request the server
    /// sent it.
    Response(ClientResponse),
}

/// The validated request envelope (`params._meta`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestMeta {
    /// The protocol revision the request is written in.
    pub protocol_version: String,
    /// The client's capabilities for this request only. (Boxed, as is
    /// `client_info`: inline they made every call's allocations too large for
    /// the allocator's fast per-thread caches.)
    pub client_capabilities: Box<ClientCapabilities>,
    /// The client's self-reported identity: for display, never for decisions.
    pub client_info: Option<Box<Implementation>>,
    /// The level at and above which `notifications/message` may be sent.
    pub log_level: Option<LoggingLevel>,
    /// The token `notifications/progress` must echo.
    pub progress_token: Option<ProgressToken>,
    /// W3C `traceparent`.
    pub traceparent: Option<String>,
    /// W3C `tracestate`.
    pub tracestate: Option<String>,
    /// W3C `baggage`.
    pub baggage: Option<String>,
    /// Every other `_meta` key, kept as sent and in the order sent.
    pub other: Meta,
}

/// A request that passed every rung and needs a handler.
#[derive(Debug)]
pub struct Call {
    /// The request id, echoed on the response.
    pub id: RequestId,
    /// The validated envelope.
    pub meta: RequestMeta,
    /// What to run.
    pub target: Target,
    /// Answers to an earlier `input_required` result (multi round-trip).
    pub input_responses: Option<Map<String, Value>>,
    /// The opaque state echoed from an earlier `input_required` result.
    pub request_state: Option<String>,
}

/// The handler a [`Call`] is for, with its decoded parameters.
#[derive(Debug)]
pub enum Target {
    /// `tools/call`.
    Tool {
        /// Index into [`Catalog::tools`].
        index: usize,
        /// The arguments object (`{}` when absent).
        arguments: ToolArguments,
    },
    /// `resources/read`.
    Resource {
        /// The requested URI.
        uri: String,
        /// Which declaration serves it.
        matched: ResourceMatch,
    },
    /// `prompts/get`.
    Prompt {
        /// Index into [`Catalog::prompts`].
        index: usize,
        /// The string arguments.
        arguments: BTreeMap<String, String>,
    },
    /// `subscriptions/listen`: a long-lived stream of notifications.
    Listen {
        /// What the client asked to be told about.
        filter: SubscriptionFilter,
    },
    /// `completion/complete`.
    Complete {
        /// What is being completed.
        target: CompletionTarget,
        /// The argument and its partial value.
        argument: CompletionArgument,
        /// Values already chosen for other arguments.
        context: BTreeMap<String, String>,
    },
    /// A method an extension adds ([`Router::with_extension_method`]).
    Extension {
        /// Index into [`Router::extension_methods`].
        index: usize,
        /// The request's params without `_meta` (its envelope is
        /// [`Call::meta`]); the runtime reads them.
        params: Map<String, Value>,
    },
}

/// The declaration that serves a resource URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceMatch {
    /// Index into [`Catalog::resources`].
    Static(usize),
    /// Index into [`Catalog::templates`], with each variable's decoded value.
    Template {
        /// The template's index.
        index: usize,
        /// Variable name → value, in template order.
        variables: Vec<(String, String)>,
    },
}

/// What `completion/complete` targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionTarget {
    /// Index into [`Catalog::prompts`].
    Prompt(usize),
    /// Index into [`Catalog::templates`].
    Template(usize),
}

/// The catalog and the limits: everything the router needs.
#[derive(Debug)]
pub struct Router {
    catalog: Catalog,
    limits: Limits,
    /// Serve the dated revisions (`initialize`, sessions) beside 2026-07-28.
    legacy: bool,
    /// Methods extensions add, in registration order.
    extensions: Vec<ExtensionMethod>,
}

#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow, default)]
    jsonrpc: Member<'a>,
    #[serde(borrow, default)]
    id: Member<'a>,
    #[serde(borrow, default)]
    method: Member<'a>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(borrow, default)]
    result: Member<'a>,
    #[serde(borrow, default)]
    error: Member<'a>,
}

/// A plain `tools/call`, as [`scan_plain_call`] reads it: the members the
/// plain-call path ([`Router::route_plain_call`]) needs, `jsonrpc` and
/// `method` already checked.
struct PlainCall<'a> {
    id: &'a RawValue,
    meta: PlainMeta,
    /// Borrowed from the message unless it holds an escape: the name is
    /// only looked up.
    name: Cow<'a, str>,
    /// `null` or absent is `None` (`{}`), as in `tool_target`. Kept as text:
    /// a typed tool decodes it from there (see [`ToolArguments`]).
    arguments: Option<&'a str>,
}

/// A `_meta` envelope: the two required keys and `clientInfo` (which clients
/// should send on every request), typed, and every other key as the full
/// parse reads it (a `Value`, in the order sent), for [`finish_meta`] to check
/// as it checks the full parse's.
struct PlainMeta {
    protocol_version: String,
    client_capabilities: Map<String, Value>,
    /// Decoded by the same `Deserialize` the full parse uses on its `Value`.
    client_info: Option<Box<Implementation>>,
    /// A list, not a `Map`: most envelopes have no other key.
    other: Vec<(String, Value)>,
}

/// Reads a message of the plain-call shape: one object whose members are
/// `jsonrpc` (`"2.0"`), `id`, `method` (`"tools/call"`), `params` and any
/// member the full parse skips, with `params` holding exactly `_meta` (with
/// both required keys), `name` and, if present, `arguments`. `None` for
/// anything else — another shape, a member given twice, a `result` or
/// `error` member, or text the full parse would refuse — and the full parse
/// decides the message.
///
/// A scan of the text in place rather than a serde derive: routing the
/// envelope was the largest part of what a small call cost, most of it
/// serde's per-member machinery. Every value the plain path keeps or skips
/// (ids, arguments, capabilities, `clientInfo`, other `_meta` values,
/// strings with escapes, members skipped) is still read by `serde_json`,
/// from where the scan stands, with the types the full parse reads it with,
/// so whatever this accepts the full parse reads the same way.
fn scan_plain_call(text: &str) -> Option<PlainCall<'_>> {
    let mut scan = Scan { text, at: 0 };
    let (mut jsonrpc, mut method) = (false, false);
    let mut id = None;
    let mut params = None;
    scan.object(|scan, key| {
        match &*key {
            "jsonrpc" if !jsonrpc => {
                jsonrpc = scan.string()? == "2.0";
                return jsonrpc.then_some(());
            }
            "method" if !method => {
                method = scan.string()? == methods::TOOLS_CALL;
                return method.then_some(());
            }
            "id" if id.is_none() => id = Some(scan.value::<&RawValue>()?),
            "params" if params.is_none() => params = Some(scan_params(scan)?),
            // Given twice (an error in the full parse), or read by it.
            "jsonrpc" | "method" | "id" | "params" | "result" | "error" => return None,
            _ => {
                scan.value::<serde::de::IgnoredAny>()?;
            }
        }
        Some(())
    })?;
    if scan.peek().is_some() || !jsonrpc || !method {
        return None;
    }
    let (meta, name, arguments) = params?;
    Some(PlainCall {
        id: id?,
        meta,
        name,
        arguments,
    })
}

/// The params of a plain `tools/call`. Any other member (`inputResponses`, a
/// task request, ...) refuses the shape, so the message takes the full path.
fn scan_params<'a>(scan: &mut Scan<'a>) -> Option<(PlainMeta, Cow<'a, str>, Option<&'a str>)> {
    let (mut meta, mut name, mut arguments) = (None, None, None);
    scan.object(|scan, key| {
        match &*key {
            "_meta" if meta.is_none() => meta = Some(scan_meta(scan)?),
            "name" if name.is_none() => name = Some(scan.string()?),
            "arguments" if arguments.is_none() => arguments = Some(scan.arguments()?),
            _ => return None,
        }
        Some(())
    })?;
    Some((meta?, name?, arguments.flatten()))
}

/// A `_meta` object; a key given twice (other keys are checked by the
/// caller) or a required key missing refuses the shape.
fn scan_meta(scan: &mut Scan<'_>) -> Option<PlainMeta> {
    let (mut protocol_version, mut client_capabilities) = (None, None);
    let mut client_info = None;
    let mut other = Vec::new();
    scan.object(|scan, key| {
        match &*key {
            meta_keys::PROTOCOL_VERSION if protocol_version.is_none() => {
                protocol_version = Some(scan.string()?.into_owned());
            }
            meta_keys::CLIENT_CAPABILITIES if client_capabilities.is_none() => {
                client_capabilities = Some(scan.empty_object().map_or_else(|| scan.value(), Some)?);
            }
            meta_keys::CLIENT_INFO if client_info.is_none() => {
                client_info = Some(Box::new(scan.value::<Implementation>()?));
            }
            meta_keys::PROTOCOL_VERSION
            | meta_keys::CLIENT_CAPABILITIES
            | meta_keys::CLIENT_INFO => {
                return None;
            }
            _ => other.push((key.into_owned(), scan.value::<Value>()?)),
        }
        Some(())
    })?;
    Some(PlainMeta {
        protocol_version: protocol_version?,
        client_capabilities: client_capabilities?,
        client_info,
        other,
    })
}

/// A cursor over a message's text, for [`scan_plain_call`]. Whitespace is
/// JSON's (space, tab, line feed, carriage return); the text is known to be
/// UTF-8, so any byte offset the scan stops at is a character boundary.
struct Scan<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.at = arguments::skip_whitespace(self.text.as_bytes(), self.at);
        self.text.as_bytes().get(self.at).copied()
    }

    /// Consumes `byte` when it comes next.
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Consumes `{}` (with any whitespace inside) when it comes next.
    fn empty_object(&mut self) -> Option<Map<String, Value>> {
        let before = self.at;
        if self.eat(b'{').is_some() && self.eat(b'}').is_some() {
            return Some(Map::new());
        }
        self.at = before;
        None
    }

    /// A string, borrowed when it holds no escape. One with an escape is
    /// decoded by `serde_json`; a control character (which JSON forbids in a
    /// string) or no closing quote is `None`.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        if self.peek()? != b'"' {
            return None;
        }
        let bytes = self.text.as_bytes();
        let start = self.at + 1;
        let end = start + arguments::string_run(&bytes[start..]);
        match *bytes.get(end)? {
            b'"' => {}
            b'\\' => return self.escaped_string(),
            _ => return None,
        }
        self.at = end + 1;
        Some(Cow::Borrowed(&self.text[start..end]))
    }

    /// A string with an escape, decoded by `serde_json`. Out of line: most
    /// strings have none, and [`Scan::string`] stays small without it.
    #[cold]
    #[inline(never)]
    fn escaped_string(&mut self) -> Option<Cow<'a, str>> {
        self.value::<String>().map(Cow::Owned)
    }

    /// The `arguments` member's value: `null` (as absent), or an object the
    /// full parse surely reads into the same map (see
    /// [`arguments::surely_parsing_object_len`]); `None` for anything else.
    fn arguments(&mut self) -> Option<Option<&'a str>> {
        match self.peek()? {
            b'n' => self.value::<()>().map(|()| None),
            _ => {
                let rest = &self.text[self.at..];
                let len = arguments::surely_parsing_object_len(rest)?;
                self.at += len;
                Some(Some(&rest[..len]))
            }
        }
    }

    /// One JSON value read by `serde_json` from the cursor on (leading
    /// whitespace skipped), the cursor moved past it.
    fn value<T: Deserialize<'a>>(&mut self) -> Option<T> {
        let mut de = serde_json::Deserializer::from_str(&self.text[self.at..]);
        // The depth scan of `object_text` bounds recursion, as in the full parse.
        de.disable_recursion_limit();
        let mut values = de.into_iter::<T>();
        let value = values.next()?.ok()?;
        self.at += values.byte_offset();
        Some(value)
    }

    /// An object: `member` reads each member's value, given its key, and
    /// returns `None` to end the scan.
    fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, Cow<'a, str>) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            member(self, key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

/// A top-level member's raw JSON text, or `None` when the member is absent.
/// Unlike `Option<&RawValue>`, a present `null` is kept (as the text `null`), so
/// `"id": null` is told apart from a missing id.
#[derive(Default)]
struct Member<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(|raw| Member(Some(raw)))
    }
}

/// A rung's failure: the error and the HTTP status to answer with.
type Refusal = (RpcError, u16);

fn envelope_error(message: impl Into<String>) -> Refusal {
    (RpcError::invalid_params(message), 400)
}

fn params_error(message: impl Into<String>) -> Refusal {
    (RpcError::invalid_params(message), 200)
}

fn header_error(message: impl Into<String>) -> Refusal {
    (RpcError::header_mismatch(message), 400)
}

impl Router {
    /// A router over a built catalog.
    pub fn new(catalog: Catalog, limits: Limits) -> Self {
        Router {
            catalog,
            limits,
            legacy: true,
            extensions: Vec::new(),
        }
    }

    /// Serves a method an extension adds (on the 2026-07-28 ladder only):
    /// such a request passes the envelope and header rungs like any other,
    /// `Mcp-Name` is checked against [`ExtensionMethod::name_param`], the
    /// extension's declaration is required when
    /// [`ExtensionMethod::requires_client_extension`], and the call is
    /// [`Target::Extension`] with its params. A method the core serves
    /// itself cannot be taken over: it is served as before, and
    /// [`Router::extension_methods`] does not list it.
    #[must_use]
    pub fn with_extension_method(mut self, method: ExtensionMethod) -> Self {
        let core = self.shared_method(&method.method).is_some()
            || [
                methods::DISCOVER,
                methods::SUBSCRIPTIONS_LISTEN,
                methods::INITIALIZE,
            ]
            .contains(&method.method.as_str());
        if !core && self.extension_index(&method.method).is_none() {
            self.extensions.push(method);
        }
        self
    }

    /// The extension methods served, in registration order (the index of
    /// [`Target::Extension`]).
    pub fn extension_methods(&self) -> &[ExtensionMethod] {
        &self.extensions
    }

    fn extension_index(&self, method: &str) -> Option<usize> {
        self.extensions.iter().position(|m| m.method == method)
    }

    /// Whether to serve clients of the dated revisions ([`LEGACY_VERSIONS`]:
    /// `initialize`, sessions) beside 2026-07-28; on by default. Off, the
    /// router is strictly 2026-07-28: `initialize` is answered `-32601` naming
    /// the supported versions, and a dated `MCP-Protocol-Version` header is
    /// refused like any other unsupported one.
    #[must_use]
    pub fn with_legacy_clients(mut self, serve: bool) -> Self {
        self.legacy = serve;
        self
    }

    /// True when the router serves clients of the dated revisions.
    pub fn serves_legacy_clients(&self) -> bool {
        self.legacy
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Decides what to do with one inbound message. Never panics, never does I/O.
    pub fn route(&self, message: &[u8], context: &RouteContext<'_>) -> Decision {
        let text = match self.object_text(message) {
            Ok(text) => text,
            Err(refused) => return Decision::Respond(refused),
        };
        if let Some(call) = self.route_plain_call(text, context) {
            return call;
        }
        self.route_parsed(text, message, context)
    }

    /// Rungs 1-3: within the size and depth limits, UTF-8, and one JSON
    /// object. Its text, or the protocol error refusing it.
    fn object_text<'m>(&self, message: &'m [u8]) -> Result<&'m str, Response> {
        if message.len() > self.limits.max_message_bytes {
            return Err(Response::protocol_error(
                None,
                oversized(message.len(), self.limits.max_message_bytes),
            ));
        }
        if let Some(depth) = depth_exceeds(message, self.limits.max_depth) {
            return Err(Response::protocol_error(
                None,
                RpcError::parse_error(format!(
                    "JSON nesting depth exceeds the limit of {} (reached {depth})",
                    self.limits.max_depth
                )),
            ));
        }
        // JSON text is UTF-8. serde_json checks it only in strings it decodes,
        // not in the value of a member it skips, so check the whole message
        // once — and parse it as `str`, which spares serde_json checking every
        // string again.
        let text = match std::str::from_utf8(message) {
            Ok(text) => text,
            Err(e) => {
                return Err(Response::protocol_error(
                    None,
                    RpcError::parse_error(format!("invalid JSON: invalid UTF-8 ({e})")),
                ));
            }
        };
        let first = message.iter().find(|b| !b.is_ascii_whitespace());
        if first != Some(&b'{') {
            // Not an object: a batch, a scalar, or not JSON at all.
            let error = match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                Ok(_) => RpcError::invalid_request(
                    "expected one JSON-RPC request or notification object (batches are not part of MCP)",
                ),
                Err(e) => RpcError::parse_error(format!("invalid JSON: {e}")),
            };
            return Err(Response::protocol_error(None, error));
        }
        Ok(text)
    }

    /// For the router fuzz target (built with `--cfg fuzzing` only): when the
    /// plain-call path decides `message`, its decision and the full parse's,
    /// each as `Debug` text, which must be equal.
    #[cfg(fuzzing)]
    #[doc(hidden)]
    pub fn plain_call_beside_full_parse(
        &self,
        message: &[u8],
        context: &RouteContext<'_>,
    ) -> Option<(String, String)> {
        let text = self.object_text(message).ok()?;
        let plain = self.route_plain_call(text, context)?;
        let parsed = self.route_parsed(text, message, context);
        Some((format!("{plain:?}"), format!("{parsed:?}")))
    }

    /// Rungs 4 onwards, from the message parsed into a `Value` tree: every
    /// message the plain-call path does not invoke comes here.
    pub(crate) fn route_parsed(
        &self,
        text: &str,
        message: &[u8],
        context: &RouteContext<'_>,
    ) -> Decision {
        let mut de = serde_json::Deserializer::from_str(text);
        // The depth scan above bounds recursion, so serde_json's own fixed limit
        // of 128 is lifted to honour a configured `max_depth`.
        de.disable_recursion_limit();
        let incoming = match Incoming::deserialize(&mut de).and_then(|m| de.end().map(|()| m)) {
            Ok(m) => m,
            Err(e) if e.is_data() => {
                return Decision::Respond(Response::protocol_error(
                    None,
                    RpcError::invalid_request(
                        "expected one JSON-RPC request or notification object",
                    ),
                ));
            }
            Err(e) => {
                return Decision::Respond(Response::protocol_error(
                    None,
                    RpcError::parse_error(format!("invalid JSON: {e}")),
                ));
            }
        };
        self.route_incoming(incoming, message, context)
    }

    /// The common call, decided without building a `Value` tree for the
    /// envelope: a `tools/call` outside a legacy session whose params hold
    /// exactly `_meta` (with the protocol version and the client
    /// capabilities), `name` and `arguments`, and, over HTTP, whose standard
    /// headers all agree with the body. Scanning those in place
    /// ([`scan_plain_call`]), rather than parsing maps keyed by SipHash, is
    /// most of what routing a call saves.
    ///
    /// Only an invocation is decided here: any other shape, a duplicate key,
    /// any refusal or parse error returns `None` and the message is routed
    /// from the start by [`Router::route_parsed`], so every answer and error
    /// is produced where it always was. Whatever this path accepts, the full
    /// parse accepts too and invokes with the same `Call`: every member it
    /// reads is read as strictly (strings, `Value`s, raw ids, arguments the
    /// full parse surely reads into the same map), and the members it skips
    /// are skipped as `Incoming` skips them.
    pub(crate) fn route_plain_call(
        &self,
        text: &str,
        context: &RouteContext<'_>,
    ) -> Option<Decision> {
        // A legacy session's messages follow the dated rules. A message with
        // headers is not legacy here: the `_meta` envelope this shape
        // requires makes it 2026-07-28 whatever its headers say (`era`).
        if context.session.is_some() {
            return None;
        }
        // A cheap filter, so other methods are not parsed twice.
        if !text.contains("\"tools/call\"") {
            return None;
        }
        let PlainCall {
            id,
            meta,
            name,
            arguments,
        } = scan_plain_call(text)?;
        let id = RequestId::from_raw(id)?;
        // Rungs 7-12 as `route_request` walks them (the envelope makes the
        // message 2026-07-28).
        if !SUPPORTED_VERSIONS.contains(&meta.protocol_version.as_str()) {
            return None;
        }
        let arguments = arguments.map_or_else(
            ToolArguments::default,
            ToolArguments::from_checked_object_text,
        );
        // Rung 16: the tool exists.
        let index = self.catalog.tool_index(&name)?;
        // Rungs 8, 10, 14 and 17 (HTTP): each standard header present and
        // equal to the body. A disagreement is refused by the full parse.
        if let Some(h) = context.headers {
            let agree = |header: &str, body: &str| h.get(header).map(str::trim) == Some(body);
            if !agree("mcp-protocol-version", &meta.protocol_version)
                || !agree("mcp-method", methods::TOOLS_CALL)
                || check_name_header(h, Some(&name)).is_err()
            {
                return None;
            }
            let params = &self.catalog.tools[index].header_params;
            if !params.is_empty() {
                let given = arguments.to_map();
                if params
                    .iter()
                    .any(|param| check_param_header(h, param, &given).is_err())
                {
                    return None;
                }
            }
        }
        let mut other = Map::new();
        for (key, value) in meta.other {
            // A key given twice: the full parse keeps the last one.
            if other.insert(key, value).is_some() {
                return None;
            }
        }
        let meta = finish_meta(
            meta.protocol_version,
            meta.client_capabilities,
            meta.client_info,
            other,
            text.as_bytes(),
        )
        .ok()?;
        // Rung 13: offered, and not an extension's method.
        if !matches!(self.shared_method(methods::TOOLS_CALL), Some(Ok(None)))
            || self.extension_index(methods::TOOLS_CALL).is_some()
        {
            return None;
        }
        // Rung 19.
        self.check_client_capabilities(index, &meta).ok()?;
        Some(Decision::Invoke(Box::new(Call {
            id,
            meta,
            target: Target::Tool { index, arguments },
            input_responses: None,
            request_state: None,
        })))
    }

    fn route_incoming(
        &self,
        m: Incoming<'_>,
        message: &[u8],
        context: &RouteContext<'_>,
    ) -> Decision {
        // Rung 5: JSON-RPC shape.
        let id = match m.id.0 {
            None => None,
            Some(raw) => match RequestId::from_raw(raw) {
                Some(id) => Some(id),
                None => {
                    return Decision::Respond(Response::protocol_error(
                        None,
                        RpcError::invalid_request(format!(
                            "id must be a string or an integer, found {}",
                            raw.get()
                        )),
                    ));
                }
            },
        };
        let shape = |message: &str| {
            Decision::Respond(Response::protocol_error(
                id.as_ref(),
                RpcError::invalid_request(message),
            ))
        };
        if m.jsonrpc.0.map(RawValue::get) != Some("\"2.0\"") {
            return shape("jsonrpc must be \"2.0\"");
        }
        let method: String = match m
            .method
            .0
            .map(|raw| serde_json::from_str::<String>(raw.get()))
        {
            Some(Ok(method)) => method,
            Some(Err(_)) => return shape("method must be a string"),
            None if m.result.0.is_some() || m.error.0.is_some() => {
                // Only a legacy session's server sends requests.
                return match (context.session, id.clone()) {
                    (Some(_), Some(id)) => Decision::Drop(Dropped::Response(
                        legacy::client_response(id, m.result.0, m.error.0),
                    )),
                    (Some(_), None) => shape("a response needs the id of the request it answers"),
                    (None, _) => {
                        shape("this server sends no requests here, so it accepts no responses")
                    }
                };
            }
            None => return shape("method is required"),
        };
        let mut params = match m.params {
            None => None,
            Some(Value::Object(map)) => Some(map),
            Some(_) if id.is_none() => None,
            Some(_) => return shape("params must be an object"),
        };

        // Rung 6: notifications are never answered.
        let Some(id) = id else {
            return Decision::Drop(notification(method, params, message));
        };

        let mut seen = AnsweredRequest {
            id,
            method,
            traceparent: None,
            tracestate: None,
            declaration: None,
            error_code: None,
            protocol_version: None,
        };
        let routed = match self.era(&seen.method, params.as_ref(), context) {
            Some(era) => self.route_legacy(&mut seen, &mut params, message, context, era),
            None => self.route_request(&mut seen, &mut params, message, context),
        };
        let mut answer = match routed {
            Ok(Decision::Respond(answer)) => answer,
            Ok(Decision::Session(mut update)) => {
                update.response.request = Some(Box::new(seen));
                return Decision::Session(update);
            }
            Ok(decision) => return decision,
            Err((error, status)) => {
                seen.error_code = Some(error.code);
                Response::error(Some(&seen.id), error, status)
            }
        };
        answer.request = Some(Box::new(seen));
        Decision::Respond(answer)
    }

    fn route_request(
        &self,
        seen: &mut AnsweredRequest,
        params: &mut Option<Map<String, Value>>,
        message: &[u8],
        context: &RouteContext<'_>,
    ) -> Result<Decision, Refusal> {
        let (id, method) = (&seen.id, seen.method.as_str());
        // Rung 7: the legacy handshake, refused in strict mode (served by
        // `route_legacy` otherwise).
        if method == methods::INITIALIZE {
            let requested = params
                .as_ref()
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str);
            let mut data = json!({ "supported": SUPPORTED_VERSIONS });
            if let Some(requested) = requested {
                data["requested"] = json!(requested);
            }
            return Err((
                RpcError::method_not_found(format!(
                    "initialize is not used by this server: it speaks the stateless MCP revision {} (send server/discover with a _meta envelope instead)",
                    SUPPORTED_VERSIONS.join(", ")
                ))
                .with_data(data),
                404,
            ));
        }

        // Rung 8: standard headers present and equal to the body.
        let headers = context.headers;
        let lists = context.lists;
        if let Some(h) = headers {
            if h.get("mcp-protocol-version").is_none() {
                return Err(header_error("the MCP-Protocol-Version header is required"));
            }
            match h.get("mcp-method").map(str::trim) {
                None => return Err(header_error("the Mcp-Method header is required")),
                Some(value) if value != method => {
                    return Err(header_error(format!(
                        "Mcp-Method header {value:?} does not match the body's method {method:?}"
                    )));
                }
                Some(_) => {}
            }
        }

        // Rung 9: the required `_meta` keys.
        let Some(params) = params.as_mut() else {
            return Err(envelope_error(
                "params with a _meta envelope is required on every request",
            ));
        };
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(meta)) => meta,
            Some(_) => return Err(envelope_error("params._meta must be an object")),
            None => return Err(envelope_error("params._meta is required on every request")),
        };
        let version = match meta.shift_remove(meta_keys::PROTOCOL_VERSION) {
            Some(Value::String(v)) => v,
            Some(_) => {
                return Err(envelope_error(format!(
                    "_meta[{:?}] must be a string",
                    meta_keys::PROTOCOL_VERSION
                )));
            }
            None => {
                return Err(envelope_error(format!(
                    "_meta[{:?}] is required",
                    meta_keys::PROTOCOL_VERSION
                )));
            }
        };
        let capabilities = match meta.shift_remove(meta_keys::CLIENT_CAPABILITIES) {
            Some(Value::Object(caps)) => caps,
            Some(_) => {
                return Err(envelope_error(format!(
                    "_meta[{:?}] must be an object",
                    meta_keys::CLIENT_CAPABILITIES
                )));
            }
            None => {
                return Err(envelope_error(format!(
                    "_meta[{:?}] is required",
                    meta_keys::CLIENT_CAPABILITIES
                )));
            }
        };

        // Rung 10: header version equal to the body's.
        if let Some(h) = headers {
            let header = h.get("mcp-protocol-version").unwrap_or_default().trim();
            if header != version {
                return Err(header_error(format!(
                    "MCP-Protocol-Version header {header:?} does not match _meta protocolVersion {version:?}"
                )));
            }
        }

        // Rung 11: version supported.
        if !SUPPORTED_VERSIONS.contains(&version.as_str()) {
            return Err((RpcError::unsupported_version(&version), 400));
        }

        // Rung 12: the rest of the envelope.
        let meta = finish_meta(version, capabilities, None, meta, message)?;
        seen.protocol_version = Some(meta.protocol_version.clone());
        seen.traceparent.clone_from(&meta.traceparent);
        seen.tracestate.clone_from(&meta.tracestate);

        // Rung 13: method known and offered.
        let caps = &self.catalog.capabilities;
        let list = |kind: Kind| self.list_page(id, kind, params, lists, false).map(Some);
        let listed = match (method, self.shared_method(method)) {
            (_, Some(offered)) => match offered? {
                Some(kind) => list(kind)?,
                None => None,
            },
            (methods::DISCOVER, None) => Some(answer_raw(id, &self.catalog.discover_result)),
            (m, None) if self.extension_index(m).is_some() => None,
            (methods::SUBSCRIPTIONS_LISTEN, None) => {
                let subscribe = caps.resources.as_ref().and_then(|r| r.subscribe) == Some(true);
                // The Tasks extension's status notifications travel on
                // listen streams too (its `taskIds` filter member).
                let tasks = caps
                    .extensions
                    .as_ref()
                    .is_some_and(|e| e.contains_key(TASKS_EXTENSION));
                if !subscribe && !tasks {
                    return Err((
                        RpcError::method_not_found(
                            "subscriptions/listen is not offered: this server announces no listChanged or subscribe capability, nor the tasks extension",
                        ),
                        404,
                    ));
                }
                None
            }
            (m, None) if methods::REMOVED.contains(&m) => {
                let dated = if self.legacy {
                    format!(
                        " (it is served to clients of the dated revisions {}, after initialize)",
                        LEGACY_VERSIONS.join(", ")
                    )
                } else {
                    String::new()
                };
                return Err((
                    RpcError::method_not_found(format!(
                        "method {m:?} was removed from MCP in revision 2026-07-28{dated}"
                    )),
                    404,
                ));
            }
            (m, None) => {
                return Err((
                    RpcError::method_not_found(format!("unknown method {m:?}")),
                    404,
                ));
            }
        };
        if let Some(answer) = listed {
            return Ok(answer);
        }

        // Rung 14: Mcp-Name agrees with the body, for the three methods that
        // carry one.
        if let Some(h) = headers {
            let key = match method {
                methods::RESOURCES_READ => Some("uri"),
                methods::TOOLS_CALL | methods::PROMPTS_GET => Some("name"),
                _ => None,
            };
            if let Some(key) = key {
                check_name_header(h, params.get(key).and_then(Value::as_str))?;
            }
        }
        if let Some(index) = self.extension_index(method) {
            let extension = &self.extensions[index];
            extension.check_name(headers, params)?;
            extension.check_client(&meta)?;
            let params = std::mem::take(params);
            return Ok(Decision::Invoke(Box::new(Call {
                id: seen.id.clone(),
                meta,
                target: Target::Extension { index, params },
                input_responses: None,
                request_state: None,
            })));
        }

        // Rungs 15-19, per method. From the moment its target is known, a
        // refused request names its declaration (for its receipt).
        let declared = &mut seen.declaration;
        let target = match method {
            methods::SUBSCRIPTIONS_LISTEN => listen_target(params)?,
            methods::TOOLS_CALL => self.tool_target(params, headers, declared)?,
            methods::RESOURCES_READ => self.resource_target(params, declared)?,
            methods::PROMPTS_GET => self.prompt_target(params, declared)?,
            _ => self.completion_target(params)?,
        };
        let (input_responses, request_state) = mrtr_fields(params)?;
        if let Target::Tool { index, .. } = &target {
            self.check_client_capabilities(*index, &meta)?;
        }
        // The Tasks extension: a client asking for task status notifications
        // must declare the extension (-32021), as for tasks/get.
        if let Target::Listen { filter } = &target
            && filter.task_ids.is_some()
            && !meta.client_capabilities.has_extension(TASKS_EXTENSION)
        {
            return Err(extension::missing_extension(
                TASKS_EXTENSION,
                "notifications.taskIds (task status notifications) is",
            ));
        }
        let id = seen.id.clone();
        Ok(Decision::Invoke(Box::new(Call {
            id,
            meta,
            target,
            input_responses,
            request_state,
        })))
    }

    /// The methods both eras serve, checked against the capability each
    /// needs: `Some(Ok(Some(kind)))` for a list, `Some(Ok(None))` for a call,
    /// `Some(Err)` when its capability is not announced, `None` for any other
    /// method.
    fn shared_method(&self, method: &str) -> Option<Result<Option<Kind>, Refusal>> {
        let caps = &self.catalog.capabilities;
        let (announced, capability, list) = match method {
            methods::TOOLS_LIST => (caps.tools.is_some(), "tools", Some(Kind::Tool)),
            methods::PROMPTS_LIST => (caps.prompts.is_some(), "prompts", Some(Kind::Prompt)),
            methods::RESOURCES_LIST => {
                (caps.resources.is_some(), "resources", Some(Kind::Resource))
            }
            methods::RESOURCE_TEMPLATES_LIST => (
                caps.resources.is_some(),
                "resources",
                Some(Kind::ResourceTemplate),
            ),
            methods::TOOLS_CALL => (caps.tools.is_some(), "tools", None),
            methods::PROMPTS_GET => (caps.prompts.is_some(), "prompts", None),
            methods::RESOURCES_READ => (caps.resources.is_some(), "resources", None),
            methods::COMPLETE => (caps.completions.is_some(), "completions", None),
            _ => return None,
        };
        Some(if announced {
            Ok(list)
        } else {
            Err(not_offered(method, capability))
        })
    }

    fn list_page(
        &self,
        id: &RequestId,
        kind: Kind,
        params: &Map<String, Value>,
        lists: Option<&ListView>,
        legacy: bool,
    ) -> Result<Decision, Refusal> {
        let pages = match (lists, legacy) {
            (Some(view), false) => &view.pages[&kind],
            (Some(view), true) => &view.legacy_pages()[&kind],
            (None, false) => &self.catalog.pages[&kind],
            (None, true) => &self.catalog.legacy_pages()[&kind],
        };
        let page = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(cursor)) => match lists {
                Some(view) => view.page_for_cursor(kind, cursor),
                None => self.catalog.page_for_cursor(kind, cursor),
            }
                .ok_or_else(|| params_error(format!("invalid cursor {cursor:?}: pass a nextCursor from this list, or none for the first page")))?,
            Some(_) => return Err(params_error("cursor must be a string")),
        };
        Ok(answer_raw(id, &pages[page]))
    }

    fn tool_target(
        &self,
        params: &mut Map<String, Value>,
        headers: Option<&dyn Headers>,
        declared: &mut Option<Declaration>,
    ) -> Result<Target, Refusal> {
        let name = required_string(params, "name")?;
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args,
            Some(_) => return Err(params_error("arguments must be an object")),
        };
        let index = self
            .catalog
            .tool_index(&name)
            .ok_or_else(|| params_error(format!("unknown tool {name:?}")))?;
        *declared = Some(Declaration::Tool(index));
        if let Some(h) = headers {
            for param in &self.catalog.tools[index].header_params {
                check_param_header(h, param, &arguments)?;
            }
        }
        Ok(Target::Tool {
            index,
            arguments: ToolArguments::from_map(arguments),
        })
    }

    fn resource_target(
        &self,
        params: &mut Map<String, Value>,
        declared: &mut Option<Declaration>,
    ) -> Result<Target, Refusal> {
        let uri = required_string(params, "uri")?;
        let matched = match self.catalog.resource_index.get(&uri) {
            Some(&index) => ResourceMatch::Static(index),
            None => self
                .catalog
                .templates
                .iter()
                .enumerate()
                .find_map(|(index, (_, template))| {
                    let variables = template.matches(&uri)?;
                    Some(ResourceMatch::Template { index, variables })
                })
                .ok_or_else(|| (RpcError::resource_not_found(&uri), 200))?,
        };
        *declared = Some(Declaration::Resource {
            uri: uri.clone(),
            matched: matched.clone(),
        });
        Ok(Target::Resource { uri, matched })
    }

    fn prompt_target(
        &self,
        params: &mut Map<String, Value>,
        declared: &mut Option<Declaration>,
    ) -> Result<Target, Refusal> {
        let name = required_string(params, "name")?;
        let arguments = string_map(params.remove("arguments"), "arguments")?;
        let index = self
            .catalog
            .prompt_index(&name)
            .ok_or_else(|| params_error(format!("unknown prompt {name:?}")))?;
        *declared = Some(Declaration::Prompt(index));
        let prompt = &self.catalog.prompts[index].prompt;
        if let Some(missing) =
            required_prompt_arguments(prompt).find(|a| !arguments.contains_key(&a.name))
        {
            return Err(params_error(format!(
                "prompt {name:?} requires the argument {:?}",
                missing.name
            )));
        }
        Ok(Target::Prompt { index, arguments })
    }

    fn completion_target(&self, params: &mut Map<String, Value>) -> Result<Target, Refusal> {
        let reference = match params.remove("ref") {
            Some(Value::Object(r)) => r,
            _ => return Err(params_error("ref must be an object")),
        };
        let argument: CompletionArgument = params
            .remove("argument")
            .and_then(|a| serde_json::from_value(a).ok())
            .ok_or_else(|| params_error("argument must be an object with string name and value"))?;
        let context = match params.remove("context") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(mut c)) => string_map(c.remove("arguments"), "context.arguments")?,
            Some(_) => return Err(params_error("context must be an object")),
        };
        let target = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = reference
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| params_error("ref.name must be a string"))?;
                let index = self
                    .catalog
                    .prompt_index(name)
                    .ok_or_else(|| params_error(format!("unknown prompt {name:?}")))?;
                let known = self.catalog.prompts[index]
                    .prompt
                    .arguments
                    .iter()
                    .flatten()
                    .any(|a| a.name == argument.name);
                if !known {
                    return Err(params_error(format!(
                        "prompt {name:?} has no argument {:?}",
                        argument.name
                    )));
                }
                CompletionTarget::Prompt(index)
            }
            Some("ref/resource") => {
                let uri = reference
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| params_error("ref.uri must be a string"))?;
                let index = self
                    .catalog
                    .templates
                    .iter()
                    .position(|(t, _)| t.template.uri_template == uri)
                    .ok_or_else(|| params_error(format!("unknown resource template {uri:?}")))?;
                let (_, parsed) = &self.catalog.templates[index];
                if !parsed.variables().any(|v| v == argument.name) {
                    return Err(params_error(format!(
                        "resource template {uri:?} has no variable {:?}",
                        argument.name
                    )));
                }
                CompletionTarget::Template(index)
            }
            _ => {
                return Err(params_error(
                    "ref.type must be \"ref/prompt\" or \"ref/resource\"",
                ));
            }
        };
        Ok(Target::Complete {
            target,
            argument,
            context,
        })
    }

    fn check_client_capabilities(&self, index: usize, meta: &RequestMeta) -> Result<(), Refusal> {
        let entry = &self.catalog.tools[index];
        let missing: Vec<&String> = entry
            .required_client_capabilities
            .iter()
            .filter(|c| !meta.client_capabilities.has(c))
            .collect();
        if missing.is_empty() {
            return match entry
                .required_client_extensions
                .iter()
                .find(|e| !meta.client_capabilities.has_extension(e))
            {
                None => Ok(()),
                Some(extension) => Err(extension::missing_extension(
                    extension,
                    &format!("tool {:?} is", entry.tool.name),
                )),
            };
        }
        let required: Map<String, Value> =
            missing.iter().map(|c| ((*c).clone(), json!({}))).collect();
        let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        Err((
            RpcError::missing_client_capability(
                format!(
                    "tool {:?} requires the client capability {} on this request",
                    entry.tool.name,
                    names.join(", ")
                ),
                Value::Object(required),
            ),
            400,
        ))
    }
}

/// `-32601` (404) for a method whose capability this server does not announce.
fn not_offered(method: &str, capability: &str) -> Refusal {
    (
        RpcError::method_not_found(format!(
            "{method} is not offered: this server announces no {capability} capability"
        )),
        404,
    )
}

fn oversized(len: usize, max: usize) -> RpcError {
    RpcError::invalid_request(format!(
        "message of {len} bytes exceeds the limit of {max} bytes"
    ))
}

/// The `-32600` answer for a message that exceeded `max_message_bytes`, for
/// transports that detect it while reading.
pub fn oversized_answer(len: usize, max: usize) -> Response {
    Response::protocol_error(None, oversized(len, max))
}

fn answer_raw(id: &RequestId, result: &str) -> Decision {
    Decision::Respond(Response {
        body: encode::result_raw(id, result),
        http_status: 200,
        request: None,
    })
}

fn notification(method: String, params: Option<Map<String, Value>>, message: &[u8]) -> Dropped {
    if method == methods::CANCELLED
        && let Some(request_id) = params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(|id| id_member(id, message, IdMember::CancelledRequestId))
    {
        let reason = params
            .as_ref()
            .and_then(|p| p.get("reason"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        return Dropped::Cancelled { request_id, reason };
    }
    Dropped::Ignored { method }
}

/// A string-or-integer member other than the request id.
#[derive(Clone, Copy)]
enum IdMember {
    /// `params.requestId` of `notifications/cancelled`.
    CancelledRequestId,
    /// `params._meta.progressToken`.
    ProgressToken,
}

/// Reads a string-or-integer member from its parsed value. `serde_json::Value`
/// holds no integer wider than 64 bits (it becomes a float), so in that one case
/// the member is read again from the message's raw text, keeping every digit.
fn id_member(value: &Value, message: &[u8], member: IdMember) -> Option<RequestId> {
    if let Some(id) = RequestId::from_value(value) {
        return Some(id);
    }
    if !value.is_f64() {
        return None;
    }
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow, default, rename = "requestId")]
        request_id: Member<'a>,
        #[serde(borrow, default, rename = "_meta")]
        meta: Option<MetaMembers<'a>>,
    }
    #[derive(Deserialize)]
    struct MetaMembers<'a> {
        #[serde(borrow, default, rename = "progressToken")]
        progress_token: Member<'a>,
    }
    let mut de = serde_json::Deserializer::from_slice(message);
    de.disable_recursion_limit();
    let params = Message::deserialize(&mut de).ok()?.params;
    let raw = match member {
        IdMember::CancelledRequestId => params.request_id.0,
        IdMember::ProgressToken => params.meta?.progress_token.0,
    };
    RequestId::from_raw(raw?)
}

/// Rung 12: the `_meta` keys beyond the two required ones. Known keys are
/// taken out with `shift_remove` (as are the required ones before), so the
/// keys left in `RequestMeta::other` keep the order the client sent them in,
/// whether the plain-call path or the full parse read the envelope.
/// `client_info` is the plain-call path's, decoded already (it then is not in
/// `other`).
fn finish_meta(
    protocol_version: String,
    capabilities: Map<String, Value>,
    client_info: Option<Box<Implementation>>,
    mut other: Map<String, Value>,
    message: &[u8],
) -> Result<RequestMeta, Refusal> {
    // `{}` (what most clients send) is the default; decoding it through the
    // flattened `other` member buffers it, which costs a call ~1k instructions.
    let client_capabilities: Box<ClientCapabilities> = if capabilities.is_empty() {
        Box::default()
    } else {
        serde_json::from_value(Value::Object(capabilities)).map_err(|e| {
            envelope_error(format!(
                "_meta[{:?}] is malformed: {e}",
                meta_keys::CLIENT_CAPABILITIES
            ))
        })?
    };
    // No other key (most requests): nothing to look up.
    if other.is_empty() {
        return Ok(RequestMeta {
            protocol_version,
            client_capabilities,
            client_info,
            log_level: None,
            progress_token: None,
            traceparent: None,
            tracestate: None,
            baggage: None,
            other,
        });
    }
    let client_info = match other.shift_remove(meta_keys::CLIENT_INFO) {
        None => client_info,
        Some(v) => Some(
            serde_json::from_value::<Box<Implementation>>(v).map_err(|e| {
                envelope_error(format!(
                    "_meta[{:?}] is malformed: {e}",
                    meta_keys::CLIENT_INFO
                ))
            })?,
        ),
    };
    let log_level = match other.shift_remove(meta_keys::LOG_LEVEL) {
        None => None,
        Some(Value::String(level)) => Some(LoggingLevel::parse(&level).ok_or_else(|| {
            envelope_error(format!(
                "_meta[{:?}] {level:?} is not a log level (debug, info, notice, warning, error, critical, alert, emergency)",
                meta_keys::LOG_LEVEL
            ))
        })?),
        Some(_) => {
            return Err(envelope_error(format!(
                "_meta[{:?}] must be a string",
                meta_keys::LOG_LEVEL
            )));
        }
    };
    let progress_token = match other.shift_remove(meta_keys::PROGRESS_TOKEN) {
        None => None,
        Some(v) => Some(
            id_member(&v, message, IdMember::ProgressToken).ok_or_else(|| {
                envelope_error("_meta.progressToken must be a string or an integer")
            })?,
        ),
    };
    let mut trace = |key: &str| -> Result<Option<String>, Refusal> {
        match other.shift_remove(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(envelope_error(format!("_meta.{key} must be a string"))),
        }
    };
    let traceparent = trace(meta_keys::TRACEPARENT)?;
    let tracestate = trace(meta_keys::TRACESTATE)?;
    let baggage = trace(meta_keys::BAGGAGE)?;
    Ok(RequestMeta {
        protocol_version,
        client_capabilities,
        client_info,
        log_level,
        progress_token,
        traceparent,
        tracestate,
        baggage,
        other,
    })
}

fn listen_target(params: &mut Map<String, Value>) -> Result<Target, Refusal> {
    let filter = match params.remove("notifications") {
        Some(Value::Object(filter)) => serde_json::from_value(Value::Object(filter))
            .map_err(|e| params_error(format!("notifications is malformed: {e}")))?,
        Some(_) => return Err(params_error("notifications must be an object")),
        None => {
            return Err(params_error(
                "notifications (the subscription filter) is required",
            ));
        }
    };
    Ok(Target::Listen { filter })
}

fn required_string(params: &mut Map<String, Value>, key: &str) -> Result<String, Refusal> {
    match params.remove(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(params_error(format!("{key} must be a string"))),
        None => Err(params_error(format!("{key} is required"))),
    }
}

fn string_map(value: Option<Value>, what: &str) -> Result<BTreeMap<String, String>, Refusal> {
    match value {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                other => Err(params_error(format!(
                    "{what}.{k} must be a string, found {other}"
                ))),
            })
            .collect(),
        Some(_) => Err(params_error(format!("{what} must be an object of strings"))),
    }
}

/// `inputResponses` and `requestState` of a multi round-trip retry.
type RetryFields = (Option<Map<String, Value>>, Option<String>);

fn mrtr_fields(params: &mut Map<String, Value>) -> Result<RetryFields, Refusal> {
    let input_responses = match params.remove("inputResponses") {
        None => None,
        Some(Value::Object(responses)) => {
            if let Some((key, _)) = responses.iter().find(|(_, v)| !v.is_object()) {
                return Err(params_error(format!(
                    "inputResponses.{key} must be an object"
                )));
            }
            Some(responses)
        }
        Some(_) => return Err(params_error("inputResponses must be an object")),
    };
    let request_state = match params.remove("requestState") {
        None => None,
        Some(Value::String(s)) => Some(s),
        Some(_) => return Err(params_error("requestState must be a string")),
    };
    Ok((input_responses, request_state))
}

/// Decodes a header value: the `=?base64?…?=` sentinel (exactly, lowercase) is
/// base64 of UTF-8; anything else is literal. Surrounding whitespace is trimmed.
pub fn decode_header_value(raw: &str) -> Result<String, String> {
    decode_header_text(raw).map(Cow::into_owned)
}

/// [`decode_header_value`], borrowing a plain value instead of copying it
/// (the common case: the router compares it and drops it).
fn decode_header_text(raw: &str) -> Result<Cow<'_, str>, String> {
    let value = raw.trim();
    if let Some(encoded) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| format!("invalid base64 in header value {value:?}: {e}"))?;
        return String::from_utf8(bytes)
            .map(Cow::Owned)
            .map_err(|_| format!("header value {value:?} does not decode to UTF-8"));
    }
    if value.bytes().any(|b| b.is_ascii_control() || !b.is_ascii()) {
        return Err(format!("header value {value:?} has invalid characters"));
    }
    Ok(Cow::Borrowed(value))
}

/// Rung 14: `Mcp-Name` present and equal to the body's name or URI (`body`,
/// `None` when the body has no such string).
fn check_name_header(headers: &dyn Headers, body: Option<&str>) -> Result<(), Refusal> {
    let raw = headers
        .get("mcp-name")
        .ok_or_else(|| header_error("the Mcp-Name header is required for this method"))?;
    let value = decode_header_text(raw).map_err(header_error)?;
    match body {
        Some(body) if body == value => Ok(()),
        Some(body) => Err(header_error(format!(
            "Mcp-Name header {value:?} does not match the body's {body:?}"
        ))),
        None => Err(header_error(format!(
            "Mcp-Name header {value:?} has no matching value in the body"
        ))),
    }
}

fn check_param_header(
    headers: &dyn Headers,
    param: &HeaderParam,
    arguments: &Map<String, Value>,
) -> Result<(), Refusal> {
    let header_name = format!("mcp-param-{}", param.name);
    let mut body = arguments.get(&param.path[0]);
    for key in &param.path[1..] {
        body = body.and_then(|v| v.get(key));
    }
    let body = body.filter(|v| !v.is_null());
    let header = headers.get(&header_name);
    let (body, header) = match (body, header) {
        (None, None) => return Ok(()),
        (None, Some(_)) => {
            return Err(header_error(format!(
                "Mcp-Param-{} is present but the argument {} is absent",
                param.name,
                param.path.join(".")
            )));
        }
        (Some(_), None) => {
            return Err(header_error(format!(
                "the Mcp-Param-{} header is required when {} is given",
                param.name,
                param.path.join(".")
            )));
        }
        (Some(body), Some(header)) => (body, header),
    };
    let value = decode_header_text(header).map_err(header_error)?;
    let agrees = match body {
        Value::String(s) => *s == *value,
        Value::Bool(b) => value == if *b { "true" } else { "false" },
        Value::Number(n) => {
            let header_number = value.parse::<f64>().ok();
            match (n.as_i64(), value.parse::<i64>().ok()) {
                (Some(a), Some(b)) => a == b,
                _ => header_number.zip(n.as_f64()).is_some_and(|(a, b)| a == b),
            }
        }
        _ => false,
    };
    if agrees {
        Ok(())
    } else {
        Err(header_error(format!(
            "Mcp-Param-{} header {value:?} does not match the argument {}",
            param.name,
            param.path.join(".")
        )))
    }
}
