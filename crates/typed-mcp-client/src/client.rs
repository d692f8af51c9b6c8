//! The client: one implementation over every transport and both eras.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::Stream;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use typed_mcp_core::PROTOCOL_VERSION;
use typed_mcp_core::wire::{
    Prompt, Resource, ResourceTemplate, SubscriptionFilter, Tool, meta_keys, methods,
};

use crate::era::{
    Because, Era, LEGACY_OFFERED, LEGACY_VERSIONS, LegacySession, Spoken, legacy_sign,
    sends_version_header, supported_versions,
};
use crate::error::{CallError, ClientError};
use crate::headers::{header_value, invalid_header_annotation, param_headers};
use crate::listeners::{LegacyFilter, SessionListeners, routed};
use crate::responder::Responder;
use crate::transport::stdio::{StdioCommand, StdioWire};
use crate::transport::{Exchange, Limits, Outgoing, is_response};

/// Called with every notification the server sends that no request took:
/// progress and log messages of requests, list changes, resource updates.
pub type NotificationSink = Arc<dyn Fn(&Value) + Send + Sync>;

/// How long one request may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest message accepted from a server by default (16 MiB).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The deepest nesting accepted from a server by default.
pub const DEFAULT_MAX_DEPTH: usize = 128;

/// The most pages a list may have: a server whose cursors never end is an error.
const MAX_PAGES: usize = 10_000;

/// How a client connects and behaves.
///
/// ```
/// use std::time::Duration;
/// use typed_mcp_client::{Era, Options};
///
/// let options = Options::new()
///     .era(Era::Auto)
///     .timeout(Duration::from_secs(10))
///     .max_message_bytes(1 << 20)
///     .client_info("my-agent", "1.2.0");
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct Options {
    timeout: Duration,
    era: Era,
    progress: bool,
    log_level: Option<String>,
    client_info: Value,
    max_message_bytes: usize,
    max_depth: usize,
    max_rounds: usize,
    responder: Responder,
    on_notification: Option<NotificationSink>,
    headers: Vec<(String, String)>,
    bearer: Option<String>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The bearer token and headers are left out: they may be secrets.
        f.debug_struct("Options")
            .field("timeout", &self.timeout)
            .field("era", &self.era)
            .field("progress", &self.progress)
            .field("log_level", &self.log_level)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("max_depth", &self.max_depth)
            .field("responder", &self.responder)
            .finish_non_exhaustive()
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: DEFAULT_TIMEOUT,
            era: Era::Auto,
            progress: false,
            log_level: None,
            client_info: json!({"name": "typed-mcp-client", "version": env!("CARGO_PKG_VERSION")}),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_depth: DEFAULT_MAX_DEPTH,
            max_rounds: 8,
            responder: Responder::default(),
            on_notification: None,
            headers: Vec::new(),
            bearer: None,
        }
    }
}

impl Options {
    /// The defaults: auto era, 30 s per request, 16 MiB and 128 levels per
    /// message, no input answered.
    pub fn new() -> Options {
        Options::default()
    }

    /// How long one request may take (its MRTR rounds each get this long);
    /// past it the request is cancelled and fails with
    /// [`ClientError::Timeout`].
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Which era to speak.
    #[must_use]
    pub fn era(mut self, era: Era) -> Self {
        self.era = era;
        self
    }

    /// Asks for `notifications/progress` on every request (a `progressToken`;
    /// over HTTP the answer then comes as an event stream).
    #[must_use]
    pub fn progress(mut self, progress: bool) -> Self {
        self.progress = progress;
        self
    }

    /// Asks for `notifications/message` at this level and above (2026-07-28:
    /// on every request; legacy: `logging/setLevel` once, when the server
    /// declares logging).
    #[must_use]
    pub fn log_level(mut self, level: impl Into<String>) -> Self {
        self.log_level = Some(level.into());
        self
    }

    /// The name and version this client reports.
    #[must_use]
    pub fn client_info(mut self, name: &str, version: &str) -> Self {
        self.client_info = json!({"name": name, "version": version});
        self
    }

    /// The largest message accepted from the server; a larger one ends the
    /// connection with [`ClientError::Limit`] before it is read whole.
    #[must_use]
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// The deepest nesting accepted from the server.
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// The most `input_required` rounds one request may take.
    #[must_use]
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds;
        self
    }

    /// What the client answers when the server asks for input.
    #[must_use]
    pub fn responder(mut self, responder: Responder) -> Self {
        self.responder = responder;
        self
    }

    /// Called with every notification no request took (see [`NotificationSink`]).
    #[must_use]
    pub fn on_notification(mut self, sink: impl Fn(&Value) + Send + Sync + 'static) -> Self {
        self.on_notification = Some(Arc::new(sink));
        self
    }

    /// An HTTP header sent on every request (Streamable HTTP only).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// `Authorization: Bearer <token>` on every request (Streamable HTTP only;
    /// never shown in errors or `Debug`).
    #[must_use]
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    fn limits(&self) -> Limits {
        Limits {
            max_message_bytes: self.max_message_bytes,
            max_depth: self.max_depth,
        }
    }
}

/// The `_meta` envelope of a 2026-07-28 request from a client declaring
/// `capabilities` and naming itself `client_info`.
pub(crate) fn envelope(capabilities: Value, client_info: &Value) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(meta_keys::PROTOCOL_VERSION.into(), json!(PROTOCOL_VERSION));
    meta.insert(meta_keys::CLIENT_CAPABILITIES.into(), capabilities);
    meta.insert(meta_keys::CLIENT_INFO.into(), client_info.clone());
    meta
}

/// The ids of a client's requests: integers from 1, never reused.
#[derive(Debug)]
pub(crate) struct RequestIds(AtomicI64);

impl RequestIds {
    pub(crate) fn new() -> Self {
        RequestIds(AtomicI64::new(1))
    }

    /// The next id.
    pub(crate) fn next(&self) -> i64 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

/// The transport under a client.
#[derive(Debug)]
pub(crate) enum Wire {
    Stdio(StdioWire),
    #[cfg(feature = "http")]
    Http(crate::transport::http::HttpWire),
    #[cfg(feature = "in-process")]
    InProcess(crate::transport::in_process::InProcessWire),
}

impl Wire {
    async fn open(&self, out: Outgoing<'_>) -> Result<Exchange, ClientError> {
        match self {
            Wire::Stdio(w) => w.open(out).await,
            #[cfg(feature = "http")]
            Wire::Http(w) => w.open(out).await,
            #[cfg(feature = "in-process")]
            Wire::InProcess(w) => w.open(out).await,
        }
    }

    fn is_http(&self) -> bool {
        #[cfg(feature = "http")]
        if matches!(self, Wire::Http(_)) {
            return true;
        }
        false
    }
}

#[derive(Debug)]
struct State {
    spoken: Spoken,
    /// The `Mcp-Session-Id` of a legacy HTTP session.
    session_id: Option<String>,
    /// Every usable tool, once listed.
    tools: Option<Vec<Value>>,
}

struct Shared {
    wire: Wire,
    options: Options,
    ids: RequestIds,
    state: Mutex<State>,
    /// True once the server has answered a request with a result.
    answered: AtomicBool,
    /// A legacy session's open subscriptions.
    listeners: Arc<SessionListeners>,
    /// Where notifications no request took go: the legacy subscriptions
    /// they concern, else the options' callback.
    sink: NotificationSink,
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn stderr(&self) -> String {
        match &self.wire {
            Wire::Stdio(w) => w.stderr(),
            #[allow(unreachable_patterns)]
            _ => String::new(),
        }
    }

    fn notify_sink(&self, message: &Value) {
        (self.sink)(message);
    }

    /// The HTTP headers of the era: 2026-07-28's standard headers, or a legacy
    /// session's id and negotiated version.
    fn era_headers(&self, method: &str, params: &Map<String, Value>) -> Vec<(String, String)> {
        let mut headers = Vec::new();
        if !self.wire.is_http() {
            return headers;
        }
        let state = self.state();
        match &state.spoken {
            Spoken::Modern { .. } => {
                headers.push((
                    "MCP-Protocol-Version".to_owned(),
                    PROTOCOL_VERSION.to_owned(),
                ));
                headers.push(("Mcp-Method".to_owned(), method.to_owned()));
                let name = match method {
                    methods::TOOLS_CALL | methods::PROMPTS_GET => params.get("name"),
                    methods::RESOURCES_READ => params.get("uri"),
                    _ => None,
                };
                if let Some(name) = name.and_then(Value::as_str) {
                    headers.push(("Mcp-Name".to_owned(), header_value(name)));
                }
            }
            Spoken::Legacy(session) => {
                if let Some(id) = &state.session_id {
                    headers.push(("Mcp-Session-Id".to_owned(), id.clone()));
                }
                if sends_version_header(&session.version) {
                    headers.push(("MCP-Protocol-Version".to_owned(), session.version.clone()));
                }
            }
        }
        headers
    }

    /// Sends one notification or response (legacy: the session's headers).
    // `what` names the message in an HTTP refusal.
    #[cfg_attr(not(feature = "http"), allow(unused_variables))]
    async fn send_message(&self, message: &Value, what: &str) -> Result<(), ClientError> {
        let bytes = serde_json::to_vec(message).expect("a Value serializes");
        match &self.wire {
            Wire::Stdio(w) => w.send(&bytes).await,
            #[cfg(feature = "http")]
            Wire::Http(w) => {
                let method = message.get("method").and_then(Value::as_str).unwrap_or("");
                let headers = self.era_headers(method, &Map::new());
                // A response carries no method: it needs no Mcp-Method.
                let headers: Vec<_> = if method.is_empty() {
                    headers
                        .into_iter()
                        .filter(|(n, _)| n != "Mcp-Method")
                        .collect()
                } else {
                    headers
                };
                w.notify(bytes, &headers, what).await
            }
            #[cfg(feature = "in-process")]
            Wire::InProcess(w) => w.send(&bytes).await,
        }
    }

    /// Answers a request the server sent (a legacy session's ping,
    /// elicitation, sampling or roots request).
    async fn answer_server_request(&self, request: Value) {
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let served = method == methods::PING || self.options.responder.answers(method);
        let answered = if method == methods::PING {
            Ok(json!({}))
        } else {
            self.options
                .responder
                .answer(method, request.get("params"))
                .await
        };
        let reply = match answered {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            // A kind this client does not answer is a method it does not
            // serve; one it answers but could not is an internal error.
            Err(why) => json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": if served { -32603 } else { -32601 },
                "message": format!("{method}: {why}")
            }}),
        };
        if let Err(e) = self
            .send_message(&reply, &format!("the answer to the server's {method}"))
            .await
        {
            tracing::debug!("answering the server's {method}: {e}");
        }
    }
}

/// A request in flight: when dropped before its answer (the caller's future
/// was dropped, or timed out), the server is told to stop it.
struct InFlight {
    shared: Arc<Shared>,
    id: Value,
    token: Option<String>,
    armed: bool,
}

impl InFlight {
    fn done(mut self) {
        self.armed = false;
        self.forget();
    }

    fn forget(&self) {
        // With the stdio transport alone built, every wire is stdio.
        #[allow(irrefutable_let_patterns)]
        if let Wire::Stdio(w) = &self.shared.wire {
            w.forget(&self.id, self.token.as_deref());
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.forget();
        // 2026-07-28 over HTTP: the closed stream is the cancellation.
        if self.shared.wire.is_http() && !self.shared.state().spoken.is_legacy() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let shared = Arc::clone(&self.shared);
        let cancel = json!({"jsonrpc": "2.0", "method": methods::CANCELLED, "params": {
            "requestId": self.id, "reason": "the client stopped waiting"
        }});
        runtime.spawn(async move {
            let _ = shared
                .send_message(&cancel, "notifications/cancelled")
                .await;
        });
    }
}

/// Aborts the task answering the server's requests when the last client
/// handle goes.
struct Background(tokio::task::JoinHandle<()>);

impl Drop for Background {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A connection to one MCP server, in the era the handshake settled. Cheap to
/// clone; requests may run concurrently, and dropping a request's future
/// cancels it on the server.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
    _background: Arc<Background>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("wire", &self.shared.wire)
            .field("spoken", &self.shared.state().spoken)
            .finish_non_exhaustive()
    }
}

/// Builds the queue of server requests and the wire, then the client.
async fn connect_with(
    options: Options,
    make: impl FnOnce(Limits, mpsc::Sender<Value>, NotificationSink) -> Result<Wire, ClientError>,
) -> Result<Client, ClientError> {
    let (tx, mut rx) = mpsc::channel::<Value>(64);
    let listeners = Arc::new(SessionListeners::default());
    let sink = routed(Arc::clone(&listeners), options.on_notification.clone());
    let wire = make(options.limits(), tx, Arc::clone(&sink))?;
    let era = options.era;
    let shared = Arc::new(Shared {
        wire,
        options,
        ids: RequestIds::new(),
        state: Mutex::new(State {
            spoken: Spoken::Modern { discovered: None },
            session_id: None,
            tools: None,
        }),
        answered: AtomicBool::new(false),
        listeners,
        sink,
    });
    let weak = Arc::downgrade(&shared);
    let background = tokio::spawn(async move {
        while let Some(request) = rx.recv().await {
            let Some(shared) = weak.upgrade() else { return };
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            if shared.options.responder.answers(method) {
                // The responder may take its time (a person answering a form):
                // the server's other requests are not held up behind it.
                tokio::spawn(async move { shared.answer_server_request(request).await });
            } else {
                // Pings and refusals go at once, in the order they were asked.
                shared.answer_server_request(request).await;
            }
        }
    });
    let client = Client {
        shared,
        _background: Arc::new(Background(background)),
    };
    match client.handshake(era).await {
        Ok(()) => Ok(client),
        Err(e) => {
            // The handshake's error is the one worth reporting.
            let _ = client.close().await;
            Err(e)
        }
    }
}

impl Client {
    /// Starts the command and talks to it over its stdin and stdout.
    pub async fn stdio(command: StdioCommand, options: Options) -> Result<Client, ClientError> {
        connect_with(options, |limits, requests, sink| {
            StdioWire::spawn(&command, limits, requests, sink).map(Wire::Stdio)
        })
        .await
    }

    /// Talks to a server over any byte streams: `reader` is what the server
    /// writes, `writer` what it reads (one JSON-RPC message per line).
    pub async fn stdio_pair<R, W>(
        reader: R,
        writer: W,
        options: Options,
    ) -> Result<Client, ClientError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        connect_with(options, |limits, requests, sink| {
            Ok(Wire::Stdio(StdioWire::pair(
                reader, writer, limits, requests, sink,
            )))
        })
        .await
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`), with
    /// the options' headers and bearer token on every request.
    #[cfg(feature = "http")]
    pub async fn http(url: &str, options: Options) -> Result<Client, ClientError> {
        let headers = options.headers.clone();
        let bearer = options.bearer.clone();
        connect_with(options, |limits, requests, _sink| {
            crate::transport::http::HttpWire::new(
                url,
                &headers,
                bearer.as_deref(),
                limits,
                requests,
            )
            .map(Wire::Http)
        })
        .await
    }

    /// Connects to a typed-mcp [`Server`](typed_mcp::Server) in this process:
    /// real JSON-RPC messages through the server's
    /// [`Connection`](typed_mcp::transport::Connection), no transport between.
    #[cfg(feature = "in-process")]
    pub async fn in_process(
        server: typed_mcp::Server,
        options: Options,
    ) -> Result<Client, ClientError> {
        connect_with(options, |limits, requests, sink| {
            Ok(Wire::InProcess(
                crate::transport::in_process::InProcessWire::new(server, limits, requests, sink),
            ))
        })
        .await
    }

    async fn handshake(&self, era: Era) -> Result<(), ClientError> {
        match era {
            Era::Modern => Ok(()),
            Era::Legacy => self.initialize(Because::Asked).await,
            Era::Auto => match self.request(methods::DISCOVER, Map::new()).await {
                Ok(discovered) => {
                    self.shared.state().spoken = Spoken::Modern {
                        discovered: Some(discovered),
                    };
                    Ok(())
                }
                Err(modern) => {
                    let Some(why) = legacy_sign(&modern) else {
                        return Err(modern);
                    };
                    self.initialize(Because::DiscoverRefused(why))
                        .await
                        .map_err(|legacy| ClientError::NeitherEra {
                            modern: Box::new(modern),
                            legacy: Box::new(legacy),
                        })
                }
            },
        }
    }

    /// The dated handshake: `initialize` offering [`LEGACY_OFFERED`], the
    /// server's counter-offer checked, `notifications/initialized`, then
    /// `logging/setLevel` when a log level was asked for.
    async fn initialize(&self, because: Because) -> Result<(), ClientError> {
        let mut params = Map::new();
        params.insert("protocolVersion".into(), json!(LEGACY_OFFERED));
        params.insert(
            "capabilities".into(),
            self.shared.options.responder.capabilities(),
        );
        params.insert("clientInfo".into(), self.shared.options.client_info.clone());
        // Sent as a dated request: no envelope, the headers of no session yet.
        let (initialized, session_id) = self
            .round_trip(methods::INITIALIZE, params, Vec::new(), false)
            .await?;
        let version = initialized.get("protocolVersion").and_then(Value::as_str);
        let Some(version) = version.filter(|v| LEGACY_VERSIONS.contains(v)) else {
            return Err(ClientError::NotMcp {
                what: format!(
                    "initialize: the server answered protocolVersion {}; this client negotiates \
                     {} through initialize",
                    version.map_or_else(|| "(none)".to_owned(), |v| format!("{v:?}")),
                    LEGACY_VERSIONS.join(", ")
                ),
                stderr: self.stderr(),
            });
        };
        {
            let mut state = self.shared.state();
            state.spoken = Spoken::Legacy(LegacySession {
                version: version.to_owned(),
                initialized: initialized.clone(),
                because,
            });
            if self.shared.wire.is_http() {
                state.session_id = session_id;
            }
        }
        self.shared
            .send_message(
                &json!({"jsonrpc": "2.0", "method": methods::INITIALIZED}),
                "the notification notifications/initialized",
            )
            .await?;
        if let Some(level) = self.shared.options.log_level.clone() {
            if initialized
                .get("capabilities")
                .and_then(|c| c.get("logging"))
                .is_some()
            {
                let mut params = Map::new();
                params.insert("level".into(), Value::String(level));
                self.request(methods::SET_LEVEL, params).await?;
            } else {
                tracing::info!(
                    "log level {level}: the server declares no logging capability, so no log \
                     messages were asked for"
                );
            }
        }
        Ok(())
    }

    /// What the handshake settled.
    pub fn spoken(&self) -> Spoken {
        self.shared.state().spoken.clone()
    }

    /// The `_meta` envelope of every 2026-07-28 request.
    pub fn envelope(&self) -> Map<String, Value> {
        envelope(
            self.shared.options.responder.capabilities(),
            &self.shared.options.client_info,
        )
    }

    /// What a stdio server wrote to stderr (its last 16 KiB; empty otherwise).
    pub fn stderr(&self) -> String {
        self.shared.stderr()
    }

    /// Sends one request and returns its `result`, or the error it got. The
    /// era's envelope and headers are added; `input_required` results are
    /// returned as they are (see [`request_resolved`](Self::request_resolved)).
    pub async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        self.request_with(method, params, Vec::new()).await
    }

    /// Like [`request`](Self::request), and answers `input_required` results
    /// (MRTR) with the options' [`Responder`], retrying with the
    /// `inputResponses` and the echoed `requestState` until the server
    /// completes the request.
    pub async fn request_resolved(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        self.resolve(method, params, Vec::new()).await
    }

    async fn resolve(
        &self,
        method: &str,
        params: Map<String, Value>,
        headers: Vec<(String, String)>,
    ) -> Result<Value, ClientError> {
        let mut retry: Option<(Map<String, Value>, Option<Value>)> = None;
        for _ in 0..=self.shared.options.max_rounds {
            let mut round = params.clone();
            if let Some((responses, state)) = retry.take() {
                if !responses.is_empty() {
                    round.insert("inputResponses".into(), Value::Object(responses));
                }
                if let Some(state) = state {
                    round.insert("requestState".into(), state);
                }
            }
            let result = self.request_with(method, round, headers.clone()).await?;
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(result);
            }
            let mut responses = Map::new();
            if let Some(requests) = result.get("inputRequests").and_then(Value::as_object) {
                for (key, asked) in requests {
                    let asked_method = asked.get("method").and_then(Value::as_str).unwrap_or("");
                    let answer = self
                        .shared
                        .options
                        .responder
                        .answer(asked_method, asked.get("params"))
                        .await
                        .map_err(|why| ClientError::Input {
                            method: method.to_owned(),
                            asked: if asked_method.is_empty() {
                                format!("input {key:?} with no method")
                            } else {
                                asked_method.to_owned()
                            },
                            why,
                        })?;
                    responses.insert(key.clone(), answer);
                }
            }
            retry = Some((responses, result.get("requestState").cloned()));
        }
        Err(ClientError::Input {
            method: method.to_owned(),
            asked: "input".into(),
            why: format!(
                "it still wanted more after {} rounds (Options::max_rounds)",
                self.shared.options.max_rounds
            ),
        })
    }

    async fn request_with(
        &self,
        method: &str,
        params: Map<String, Value>,
        extra_headers: Vec<(String, String)>,
    ) -> Result<Value, ClientError> {
        let modern = !self.shared.state().spoken.is_legacy();
        let mut headers = self.shared.era_headers(method, &params);
        headers.extend(extra_headers);
        match self
            .round_trip(method, params.clone(), headers.clone(), modern)
            .await
        {
            // A server that refused our version but speaks it after all (a
            // version negotiation of its own): one retry, as it asks.
            Err(ClientError::Rpc {
                code: -32022, data, ..
            }) if modern
                && supported_versions(data.as_deref())
                    .iter()
                    .any(|v| v == PROTOCOL_VERSION) =>
            {
                Ok(self.round_trip(method, params, headers, modern).await?.0)
            }
            other => other.map(|(result, _)| result),
        }
    }

    /// Sends one request and returns its `result` and the session id the HTTP
    /// response carried; a JSON-RPC error becomes [`ClientError::Rpc`].
    async fn round_trip(
        &self,
        method: &str,
        mut params: Map<String, Value>,
        headers: Vec<(String, String)>,
        modern: bool,
    ) -> Result<(Value, Option<String>), ClientError> {
        let shared = &self.shared;
        let number = shared.ids.next();
        let id = json!(number);
        let token = shared
            .options
            .progress
            .then(|| format!("typed-mcp-client-{number}"));
        let mut meta = if modern { self.envelope() } else { Map::new() };
        if modern && let Some(level) = &shared.options.log_level {
            meta.insert(meta_keys::LOG_LEVEL.into(), json!(level));
        }
        if let Some(token) = &token {
            meta.insert(meta_keys::PROGRESS_TOKEN.into(), json!(token));
        }
        if !meta.is_empty() {
            // The caller's own `_meta` keys are kept over the envelope's.
            match params.get_mut("_meta") {
                Some(Value::Object(own)) => {
                    for (k, v) in meta {
                        own.entry(k).or_insert(v);
                    }
                }
                _ => {
                    params.insert("_meta".into(), Value::Object(meta));
                }
            }
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let body = serde_json::to_vec(&message).expect("a Value serializes");
        let in_flight = InFlight {
            shared: Arc::clone(shared),
            id: id.clone(),
            token: token.clone(),
            armed: true,
        };
        let exchange = async {
            let mut exchange = shared
                .wire
                .open(Outgoing {
                    id: Some(&id),
                    method,
                    body,
                    headers: &headers,
                    progress_token: token.as_deref(),
                })
                .await?;
            loop {
                match exchange.incoming.recv().await {
                    Some(Ok(message)) if is_response(&message) => {
                        return Ok((message, exchange.session_id));
                    }
                    Some(Ok(notification)) => shared.notify_sink(&notification),
                    Some(Err(e)) => return Err(e),
                    None => {
                        return Err(ClientError::NotMcp {
                            what: format!(
                                "{method}: the server ended the exchange without an answer"
                            ),
                            stderr: shared.stderr(),
                        });
                    }
                }
            }
        };
        let (response, session_id) =
            match tokio::time::timeout(shared.options.timeout, exchange).await {
                Ok(Ok(answer)) => {
                    in_flight.done();
                    answer
                }
                Ok(Err(e)) => {
                    // No answer will come: nothing to cancel.
                    in_flight.done();
                    return Err(self.refused(e));
                }
                Err(_) => {
                    drop(in_flight); // cancels the request on the server
                    return Err(ClientError::Timeout {
                        method: method.to_owned(),
                        seconds: shared.options.timeout.as_secs_f64(),
                        stderr: shared.stderr(),
                    });
                }
            };
        if let Some(error) = response.get("error") {
            return Err(self.refused(ClientError::Rpc {
                method: method.to_owned(),
                code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)")
                    .to_owned(),
                data: error.get("data").cloned().map(Box::new),
            }));
        }
        match response.get("result") {
            Some(result) if result.is_object() => {
                shared.answered.store(true, Ordering::Relaxed);
                Ok((result.clone(), session_id))
            }
            _ => Err(ClientError::NotMcp {
                what: format!("{method}: the answer has no result object: {response}"),
                stderr: shared.stderr(),
            }),
        }
    }

    /// A refusal, worded for where it happened: a 404 inside a legacy HTTP
    /// session means the session is gone.
    fn refused(&self, error: ClientError) -> ClientError {
        let session = self.shared.state().session_id.clone();
        match (error, session) {
            (ClientError::Http { status: 404, what }, Some(id)) => ClientError::Http {
                status: 404,
                what: format!(
                    "{what} — the server no longer knows session {id} (it expired or was \
                     ended); connect again"
                ),
            },
            (error, _) => error,
        }
    }

    /// In [`Era::Modern`], when the server refused the first request the way
    /// a legacy server would: asks `server/discover` and, when that is
    /// refused too, says the server may speak only a dated revision. Other
    /// errors are returned as they are.
    pub async fn explain(&self, error: ClientError) -> ClientError {
        if self.shared.options.era != Era::Modern
            || self.shared.answered.load(Ordering::Relaxed)
            || legacy_sign(&error).is_none()
        {
            return error;
        }
        match self.request(methods::DISCOVER, Map::new()).await {
            Ok(_) => error,
            Err(_) => ClientError::ModernRefused(Box::new(error)),
        }
    }

    /// What the server says about itself: the `server/discover` result
    /// (2026-07-28; asked once), or the `initialize` result of a legacy session.
    pub async fn discover(&self) -> Result<Value, ClientError> {
        match self.spoken() {
            Spoken::Modern {
                discovered: Some(discovered),
            } => Ok(discovered),
            Spoken::Legacy(session) => Ok(session.initialized),
            Spoken::Modern { discovered: None } => {
                let discovered = self.request(methods::DISCOVER, Map::new()).await?;
                self.shared.state().spoken = Spoken::Modern {
                    discovered: Some(discovered.clone()),
                };
                Ok(discovered)
            }
        }
    }

    /// The items of a list (`tools/list` and `"tools"`, ...), page by page as
    /// the stream is read, following `nextCursor` to the last page.
    pub fn list<'a>(
        &'a self,
        method: &'a str,
        field: &'a str,
    ) -> impl Stream<Item = Result<Value, ClientError>> + Send + 'a {
        struct Pages {
            cursor: Option<String>,
            items: std::vec::IntoIter<Value>,
            pages: usize,
            done: bool,
        }
        let start = Pages {
            cursor: None,
            items: Vec::new().into_iter(),
            pages: 0,
            done: false,
        };
        futures_util::stream::try_unfold(start, move |mut pages| async move {
            loop {
                if let Some(item) = pages.items.next() {
                    return Ok(Some((item, pages)));
                }
                if pages.done {
                    return Ok(None);
                }
                if pages.pages == MAX_PAGES {
                    return Err(self.not_mcp(format!(
                        "{method}: more than {MAX_PAGES} pages; the cursors do not end"
                    )));
                }
                let (items, next) = self.page(method, field, pages.cursor.take()).await?;
                pages.pages += 1;
                pages.items = items.into_iter();
                pages.done = next.is_none();
                pages.cursor = next;
            }
        })
    }

    /// One page of a list and the next cursor.
    pub async fn page(
        &self,
        method: &str,
        field: &str,
        cursor: Option<String>,
    ) -> Result<(Vec<Value>, Option<String>), ClientError> {
        let mut params = Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), Value::String(cursor));
        }
        let page = self.request(method, params).await?;
        let items = match page.get(field) {
            Some(Value::Array(list)) => list.clone(),
            _ => {
                return Err(self.not_mcp(format!(
                    "{method}: the result has no {field:?} array: {page}"
                )));
            }
        };
        let next = match page.get("nextCursor") {
            Some(Value::String(next)) => Some(next.clone()),
            None | Some(Value::Null) => None,
            Some(other) => {
                return Err(self.not_mcp(format!("{method}: nextCursor is not a string: {other}")));
            }
        };
        Ok((items, next))
    }

    /// Every item of a list, following `nextCursor` to the last page.
    pub async fn list_all(&self, method: &str, field: &str) -> Result<Vec<Value>, ClientError> {
        use futures_util::TryStreamExt as _;
        let items: Vec<Value> = self.list(method, field).try_collect().await?;
        if method == methods::TOOLS_LIST {
            return Ok(usable_tools(items));
        }
        Ok(items)
    }

    fn not_mcp(&self, what: String) -> ClientError {
        ClientError::NotMcp {
            what,
            stderr: self.stderr(),
        }
    }

    /// Every usable tool, as the server lists it (fetched once, then
    /// remembered). A tool whose `x-mcp-header` annotations are invalid is
    /// left out: it could not be called as the server expects.
    pub async fn tools(&self) -> Result<Vec<Value>, ClientError> {
        if let Some(tools) = self.shared.state().tools.clone() {
            return Ok(tools);
        }
        let tools = self.list_all(methods::TOOLS_LIST, "tools").await?;
        self.shared.state().tools = Some(tools.clone());
        Ok(tools)
    }

    /// Every usable tool, decoded (see [`tools`](Self::tools)).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let tools = self.tools().await?;
        decode_all(&tools, "tool", self)
    }

    /// Every static resource, decoded.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        let items = self.list_all(methods::RESOURCES_LIST, "resources").await?;
        decode_all(&items, "resource", self)
    }

    /// Every resource template, decoded.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        let items = self
            .list_all(methods::RESOURCE_TEMPLATES_LIST, "resourceTemplates")
            .await?;
        decode_all(&items, "resource template", self)
    }

    /// Every prompt, decoded.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        let items = self.list_all(methods::PROMPTS_LIST, "prompts").await?;
        decode_all(&items, "prompt", self)
    }

    /// The descriptor of the tool named `name`, or an error listing the others.
    pub async fn tool(&self, name: &str) -> Result<Value, ClientError> {
        let tools = self.tools().await?;
        if let Some(tool) = tools.iter().find(|t| t["name"] == name) {
            return Ok(tool.clone());
        }
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        Err(ClientError::Usage(if names.is_empty() {
            format!("the server has no tool named {name:?} (it offers no tools)")
        } else {
            format!(
                "the server has no tool named {name:?}; it offers: {}",
                names.join(", ")
            )
        }))
    }

    /// `tools/call`, with input asked for answered (MRTR); returns the
    /// `CallToolResult` as sent, `isError` included. Over HTTP in 2026-07-28
    /// the `Mcp-Param-*` headers the tool's schema asks for are added (the
    /// tool list is fetched once for them).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        let headers = if self.shared.wire.is_http() && !self.shared.state().spoken.is_legacy() {
            let tool = self.tool(name).await?;
            param_headers(&tool["inputSchema"], &arguments)
        } else {
            Vec::new()
        };
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        params.insert("arguments".into(), arguments);
        self.resolve(methods::TOOLS_CALL, params, headers).await
    }

    /// A typed call: `arguments` serialized, the result's `structuredContent`
    /// (or, lacking one, its one text block read as JSON) decoded into
    /// `Out`. `isError` becomes [`CallError::Tool`], with the server's text
    /// (for a typed-mcp server's argument check, every bad field) and its
    /// structured error.
    pub async fn call<Out: DeserializeOwned>(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<Out, CallError> {
        let arguments = serde_json::to_value(arguments).map_err(|e| {
            CallError::Client(ClientError::Usage(format!(
                "the arguments of {name:?} do not serialize: {e}"
            )))
        })?;
        let result = self.call_tool(name, arguments).await?;
        decode_call(name, &result)
    }

    /// `resources/read`, with input asked for answered (MRTR).
    pub async fn read_resource(&self, uri: &str) -> Result<Value, ClientError> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_owned()));
        self.resolve(methods::RESOURCES_READ, params, Vec::new())
            .await
    }

    /// `prompts/get`, with input asked for answered (MRTR).
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        params.insert("arguments".into(), arguments);
        self.resolve(methods::PROMPTS_GET, params, Vec::new()).await
    }

    /// `completion/complete`: `reference` is `{"type": "ref/prompt", "name":
    /// ...}` or `{"type": "ref/resource", "uri": ...}`; returns the
    /// `completion` object (`values`, `total`, `hasMore`).
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<Value, ClientError> {
        let mut params = Map::new();
        params.insert("ref".into(), reference);
        params.insert("argument".into(), json!({"name": argument, "value": value}));
        let result = self.request(methods::COMPLETE, params).await?;
        match result.get("completion") {
            Some(completion) if completion.is_object() => Ok(completion.clone()),
            _ => Err(self.not_mcp(format!(
                "completion/complete: the result has no completion object: {result}"
            ))),
        }
    }

    /// Opens a subscription with this filter (e.g.
    /// `{"resourceSubscriptions": ["file:///a"]}`, `{"toolsListChanged":
    /// true}`); its notifications are read with [`Subscription::next`], and
    /// dropping it ends it.
    ///
    /// In 2026-07-28 this is a `subscriptions/listen` stream: the
    /// acknowledgement first, then each notification. In a legacy session it
    /// is `resources/subscribe` for each URI, and the session's own messages
    /// (over Streamable HTTP its GET event stream, opened first so that no
    /// update is missed, with the `Mcp-Session-Id`) that the filter asks for:
    /// each `notifications/resources/updated` of those resources and the
    /// list changes asked for. Dropping it sends `resources/unsubscribe` for
    /// the URIs no other open subscription asks for, and closes the GET
    /// stream once no subscription is open.
    pub async fn listen(&self, filter: Value) -> Result<Subscription, ClientError> {
        if let Spoken::Legacy(session) = self.spoken() {
            return self.listen_legacy(&session.initialized, filter).await;
        }
        let shared = &self.shared;
        let number = shared.ids.next();
        let id = json!(number);
        let mut params = Map::new();
        params.insert("_meta".into(), Value::Object(self.envelope()));
        params.insert("notifications".into(), filter);
        let headers = shared.era_headers(methods::SUBSCRIPTIONS_LISTEN, &params);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": methods::SUBSCRIPTIONS_LISTEN, "params": params});
        let in_flight = InFlight {
            shared: Arc::clone(shared),
            id: id.clone(),
            token: None,
            armed: true,
        };
        let exchange = tokio::time::timeout(
            shared.options.timeout,
            shared.wire.open(Outgoing {
                id: Some(&id),
                method: methods::SUBSCRIPTIONS_LISTEN,
                body: serde_json::to_vec(&message).expect("a Value serializes"),
                headers: &headers,
                progress_token: None,
            }),
        )
        .await
        .map_err(|_| ClientError::Timeout {
            method: methods::SUBSCRIPTIONS_LISTEN.into(),
            seconds: shared.options.timeout.as_secs_f64(),
            stderr: shared.stderr(),
        })??;
        Ok(Subscription {
            incoming: exchange.incoming,
            in_flight: Some(in_flight),
            legacy: None,
        })
    }

    /// [`listen`](Self::listen) in a legacy session.
    async fn listen_legacy(
        &self,
        initialized: &Value,
        filter: Value,
    ) -> Result<Subscription, ClientError> {
        let parsed: SubscriptionFilter = serde_json::from_value(filter.clone()).map_err(|e| {
            ClientError::Usage(format!(
                "expected a subscription filter (resourceSubscriptions, toolsListChanged, \
                 promptsListChanged, resourcesListChanged), found {filter}: {e}"
            ))
        })?;
        let filter = LegacyFilter::new(&parsed);
        let resources = initialized
            .get("capabilities")
            .and_then(|c| c.get("resources"));
        if !filter.uris.is_empty()
            && resources.and_then(|r| r.get("subscribe")) != Some(&Value::Bool(true))
        {
            return Err(ClientError::Usage(format!(
                "the server does not declare resources.subscribe in its session (its resources \
                 capability is {}), so it sends no resource updates to subscribe to",
                resources.map_or_else(|| "absent".to_owned(), Value::to_string)
            )));
        }
        let listeners = Arc::clone(&self.shared.listeners);
        let _changes = listeners.changes.lock().await;
        self.open_session_stream().await?;
        let uris = filter.uris.clone();
        let (key, incoming) = listeners.add(filter);
        // From here on the subscription is undone when dropped, a failed
        // subscribe included.
        let legacy = LegacyListen {
            client: self.clone(),
            key,
            uris: uris.clone(),
        };
        for uri in &uris {
            let mut params = Map::new();
            params.insert("uri".into(), Value::String(uri.clone()));
            if let Err(e) = self.request(methods::RESOURCES_SUBSCRIBE, params).await {
                drop(_changes);
                drop(legacy);
                return Err(e);
            }
        }
        Ok(Subscription {
            incoming,
            in_flight: None,
            legacy: Some(legacy),
        })
    }

    /// Over Streamable HTTP, opens the legacy session's GET event stream
    /// unless it is open: the session's messages arrive there. (On stdio and
    /// in process they arrive anyway.)
    async fn open_session_stream(&self) -> Result<(), ClientError> {
        #[cfg(feature = "http")]
        if let Wire::Http(w) = &self.shared.wire {
            let listeners = &self.shared.listeners;
            if listeners.has_stream() {
                return Ok(());
            }
            let headers: Vec<_> = self
                .shared
                .era_headers("", &Map::new())
                .into_iter()
                .filter(|(n, _)| n != "Mcp-Method")
                .collect();
            let ended = || -> Box<dyn FnOnce(ClientError) + Send> {
                let listeners = Arc::downgrade(listeners);
                Box::new(move |why| {
                    if let Some(listeners) = listeners.upgrade() {
                        listeners.end_all(&why);
                    }
                })
            };
            // A stream this client just closed may not be gone on the server
            // yet (one GET stream per session): a 409 is retried briefly.
            let mut attempts = 0;
            let reader = loop {
                let opened = tokio::time::timeout(
                    self.shared.options.timeout,
                    w.open_session_stream(&headers, Arc::clone(&self.shared.sink), ended()),
                )
                .await
                .map_err(|_| ClientError::Timeout {
                    method: "the session's event stream (GET)".into(),
                    seconds: self.shared.options.timeout.as_secs_f64(),
                    stderr: String::new(),
                })?;
                match opened {
                    Err(ClientError::Http { status: 409, .. }) if attempts < 20 => {
                        attempts += 1;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    other => break other.map_err(|e| self.refused(e))?,
                }
            };
            listeners.set_stream(reader);
        }
        Ok(())
    }

    /// Everything the server declares, as its lists serve it.
    pub async fn catalog(&self) -> Result<Catalog, ClientError> {
        let discovered = self.discover().await?;
        let capabilities = discovered.get("capabilities").cloned().unwrap_or_default();
        let offers = |name: &str| capabilities.get(name).is_some_and(|c| !c.is_null());
        let mut catalog = Catalog::default();
        if offers("tools") {
            catalog.tools = self.list_tools().await?;
        }
        if offers("prompts") {
            catalog.prompts = self.list_prompts().await?;
        }
        if offers("resources") {
            catalog.resources = self.list_resources().await?;
            catalog.templates = self.list_resource_templates().await?;
        }
        Ok(catalog)
    }

    /// Ends the conversation: a stdio server is asked to stop (stdin closed,
    /// then killed if it lingers); a legacy HTTP session is ended with a
    /// DELETE (a server that does not let clients end sessions answers 405,
    /// which is fine); an in-process session is ended.
    ///
    /// An `Err` says why a legacy HTTP session could not be ended (the
    /// server's answer stands either way).
    pub async fn close(&self) -> Result<(), ClientError> {
        self.shared.listeners.end_all(&ClientError::Usage(
            "the client closed the session this subscription was in".into(),
        ));
        match &self.shared.wire {
            Wire::Stdio(w) => w.close().await,
            #[cfg(feature = "http")]
            Wire::Http(w) => {
                self.shared.listeners.close_stream();
                let Some(id) = self.shared.state().session_id.clone() else {
                    return Ok(());
                };
                let headers = self.shared.era_headers("", &Map::new());
                let headers: Vec<_> = headers
                    .into_iter()
                    .filter(|(n, _)| n != "Mcp-Method")
                    .collect();
                let ending = |why: String| ClientError::Io(format!("ending session {id}: {why}"));
                return match tokio::time::timeout(self.shared.options.timeout, w.delete(&headers))
                    .await
                {
                    Ok(Ok(status))
                        if status.is_success()
                            || status == http::StatusCode::METHOD_NOT_ALLOWED
                            || status == http::StatusCode::NOT_FOUND =>
                    {
                        Ok(())
                    }
                    Ok(Ok(status)) => Err(ending(format!("the server answered HTTP {status}"))),
                    Ok(Err(e)) => Err(ending(e.to_string())),
                    Err(_) => Err(ending("no answer in time".into())),
                };
            }
            #[cfg(feature = "in-process")]
            Wire::InProcess(w) => w.close().await,
        }
        Ok(())
    }
}

/// Leaves out the tools whose `x-mcp-header` annotations are invalid.
fn usable_tools(tools: Vec<Value>) -> Vec<Value> {
    tools
        .into_iter()
        .filter(
            |tool| match invalid_header_annotation(&tool["inputSchema"]) {
                None => true,
                Some(why) => {
                    tracing::warn!(tool = %tool["name"], "tool left out: {why}");
                    false
                }
            },
        )
        .collect()
}

fn decode_all<T: DeserializeOwned>(
    items: &[Value],
    kind: &str,
    client: &Client,
) -> Result<Vec<T>, ClientError> {
    items
        .iter()
        .map(|item| {
            serde_json::from_value(item.clone()).map_err(|e| {
                client.not_mcp(format!(
                    "the server lists a {kind} that is not a valid descriptor ({e}): {item}"
                ))
            })
        })
        .collect()
}

/// Decodes a `CallToolResult` into `Out` (see [`Client::call`]).
pub(crate) fn decode_call<Out: DeserializeOwned>(
    name: &str,
    result: &Value,
) -> Result<Out, CallError> {
    let texts: Vec<&str> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(CallError::Tool {
            tool: name.to_owned(),
            message: texts.join("\n"),
            structured: result.get("structuredContent").cloned(),
        });
    }
    let decoded = match result.get("structuredContent") {
        Some(structured) => serde_json::from_value(structured.clone())
            .or_else(|e| match structured.as_object() {
                // A value whose JSON is not an object travels wrapped as
                // `{"result": value}` (typed-mcp's form, as the output
                // schema of such a tool says).
                Some(wrapped) if wrapped.len() == 1 => match wrapped.get("result") {
                    Some(inner) => serde_json::from_value(inner.clone()),
                    None => Err(e),
                },
                _ => Err(e),
            })
            .map_err(|e| (e, structured.to_string())),
        None => match texts.as_slice() {
            [text] => serde_json::from_str(text)
                .or_else(|_| serde_json::from_value(Value::String((*text).to_owned())))
                .map_err(|e| (e, (*text).to_owned())),
            _ => {
                return Err(CallError::Decode {
                    tool: name.to_owned(),
                    why: format!(
                        "expected structuredContent or one text block, found {} text blocks",
                        texts.len()
                    ),
                });
            }
        },
    };
    decoded.map_err(|(e, found)| CallError::Decode {
        tool: name.to_owned(),
        why: format!("{e}; found {}", crate::error::snippet(&found)),
    })
}

/// An open subscription (see [`Client::listen`]).
pub struct Subscription {
    incoming: crate::transport::Incoming,
    /// 2026-07-28: the listen request, cancelled when dropped unanswered.
    in_flight: Option<InFlight>,
    /// A legacy session: undone when dropped.
    legacy: Option<LegacyListen>,
}

/// A legacy subscription: when dropped, its URIs no other subscription asks
/// for are unsubscribed, and the session's GET stream closes once none is
/// open.
struct LegacyListen {
    client: Client,
    key: u64,
    uris: Vec<String>,
}

impl Drop for LegacyListen {
    fn drop(&mut self) {
        let listeners = Arc::clone(&self.client.shared.listeners);
        listeners.remove(self.key);
        if !listeners.any() {
            listeners.close_stream();
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let client = self.client.clone();
        let uris = std::mem::take(&mut self.uris);
        runtime.spawn(async move {
            let _changes = listeners.changes.lock().await;
            for uri in uris.iter().filter(|uri| !listeners.wants_uri(uri)) {
                let mut params = Map::new();
                params.insert("uri".into(), Value::String(uri.clone()));
                if let Err(e) = client.request(methods::RESOURCES_UNSUBSCRIBE, params).await {
                    tracing::debug!("resources/unsubscribe {uri}: {e}");
                }
            }
        });
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.in_flight.as_ref().map(|f| &f.id))
            .field("legacy", &self.legacy.as_ref().map(|l| &l.uris))
            .finish()
    }
}

impl Subscription {
    /// The next message of the stream, or `None` once it ended. In
    /// 2026-07-28: the acknowledgement first, then each notification, and
    /// the final result when the server ends it. In a legacy session: each
    /// notification the filter asks for, and an error should the session's
    /// event stream end.
    pub async fn next(&mut self) -> Option<Result<Value, ClientError>> {
        let message = self.incoming.recv().await;
        if let Some(Ok(message)) = &message
            && is_response(message)
            && let Some(in_flight) = self.in_flight.take()
        {
            in_flight.done();
        }
        message
    }
}

/// What a server serves, decoded.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    /// Every usable tool.
    pub tools: Vec<Tool>,
    /// Every prompt.
    pub prompts: Vec<Prompt>,
    /// Every static resource.
    pub resources: Vec<Resource>,
    /// Every resource template.
    pub templates: Vec<ResourceTemplate>,
}
