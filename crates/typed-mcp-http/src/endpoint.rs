//! The MCP endpoint, serving both protocol eras on one path.
//!
//! # 2026-07-28: one POST, one message, one answer
//!
//! A client of the current revision sends each JSON-RPC message as its own
//! POST and gets one answer (JSON, an SSE stream, or `202` for a
//! notification). Every POST runs on a fresh connection, so nothing is kept
//! between requests.
//!
//! # 2025-11-25 and older: sessions
//!
//! A client of a dated revision opens with `initialize` (without a
//! 2026-07-28 envelope or header). The router answers it, and the connection
//! that answered becomes the client's session: it is kept in a
//! [`SessionStore`](crate::SessionStore) under a fresh id (128 random bits)
//! sent back in `Mcp-Session-Id`. Later requests naming that id run on the
//! same connection, so they share the negotiated revision, the log level, the
//! resource subscriptions and the request ids (a `notifications/cancelled`
//! in one POST cancels a call made by another). Besides POST:
//!
//! - `GET` with `Mcp-Session-Id` and `Accept: text/event-stream` opens the
//!   session's stream of server-initiated messages (the
//!   `notifications/resources/updated` of its `resources/subscribe`). One per
//!   session: a second gets `409`.
//! - `DELETE` with `Mcp-Session-Id` ends the session (its calls are
//!   cancelled, its stream closes): `204`.
//! - A call whose handler needs the client's input (a legacy client asked
//!   with `elicitation/create`, `sampling/createMessage` or `roots/list`)
//!   answers with an SSE stream that carries that request, then the final
//!   response; the client answers with a POST of a JSON-RPC response (`202`).
//!
//! Every SSE response of either era (a POST's stream, the GET stream) sends
//! a `: keep-alive` comment when no message came for
//! [`sse_keep_alive`](crate::HttpServer::sse_keep_alive), so proxies do not
//! cut a quiet stream (a call waiting for the client's answer, an idle
//! subscription).
//!
//! A POST whose `MCP-Protocol-Version` header is `2026-07-28` is never a
//! session's: an `Mcp-Session-Id` on it is ignored, as that revision has no
//! sessions.
//!
//! A request naming a session the store does not hold (never opened, ended,
//! expired, or opened by another principal: a session is bound to the
//! [`Principal`] that opened it, and whether it exists is never revealed to
//! another) gets `404` with a `-32001` error telling the client to
//! initialize again.
//!
//! **What sessions cost.** Each session holds its connection (its in-flight
//! registry and session facts), its subscriptions, and one task forwarding
//! resource updates, for as long as it lives: about 2.5 KiB of resident
//! memory when idle (10 000 idle sessions of the quickstart add about 25 MiB;
//! the `memory` test bounds it at 8 KiB). The default store keeps at most
//! [`max_sessions`](crate::HttpServer::max_sessions) (10 000) and ends a
//! session left unused for
//! [`session_idle_timeout`](crate::HttpServer::session_idle_timeout)
//! (30 minutes; a session with a call in flight or a GET stream open is in
//! use); an `initialize` that finds the store full gets `503` with
//! `Retry-After`. [`legacy_sessions(false)`](crate::HttpServer::legacy_sessions)
//! turns sessions off: `initialize` is answered without `Mcp-Session-Id`,
//! nothing is kept, later dated requests (known by their
//! `MCP-Protocol-Version: 2025-…` header) each run on a fresh connection, and
//! what needs a session (`resources/subscribe`, `logging/setLevel`, a
//! handler's request for input) is answered with an error saying so.
//! Refusing dated clients altogether is the server's own setting,
//! [`ServerBuilder::legacy_clients(false)`](typed_mcp::ServerBuilder::legacy_clients).
//!
//! # Order of the checks
//!
//! Transport checks run first, in this order, each answering with a
//! single-line JSON-RPC error body (`-32600`) when it fails: `Host`/`Origin`
//! (403), method (405), `Accept` (406), `Content-Type` (415), the session
//! (404), body size (413). They apply to both eras and to `GET` and `DELETE`.
//! Then the router walks its own ladder (see `typed_mcp::protocol::router`)
//! with the request's headers as transport facts, and gives the status of
//! every protocol error (a legacy session's errors are `200`: a dated client
//! reads `404` as "session not found").

use std::convert::Infallible;
use std::sync::{Arc, Mutex, Once, PoisonError};
use std::time::Duration;

use axum::body::{Body, HttpBody as _};
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::header::{
    ACCEPT, ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN, RETRY_AFTER,
};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use typed_mcp::protocol::router::Headers;
use typed_mcp::protocol::{PROTOCOL_VERSION, RequestId, RpcError, encode};
use typed_mcp::transport::{
    Accepted, Connection, Inbound, Inbox, Message, Outbox, Outgoing, Reply, Reservation, Shutdown,
};
use typed_mcp::{Principal, Server};

use crate::negotiate::{Accepts, check_content_type};
use crate::protect::Protection;
use crate::sessions::{InUse, Session, SessionStore, new_session_id};

/// The header naming a legacy session.
const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");

/// The header naming the revision of a request.
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// The JSON-RPC code of "session not found" on the legacy wire.
const SESSION_NOT_FOUND: i32 = -32001;

/// What every request to the endpoint shares.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) server: Server,
    pub(crate) protection: Protection,
    /// Refuse requests that the application's authentication layer did not
    /// mark with a [`Principal`].
    pub(crate) require_principal: bool,
    /// Once triggered, new requests get `503` and calls in flight are
    /// cancelled after the server's drain deadline.
    pub(crate) shutdown: Option<Shutdown>,
    /// Where legacy sessions are kept; `None` in stateless legacy mode.
    pub(crate) sessions: Option<Arc<dyn SessionStore>>,
    /// How often an idle GET stream gets a keep-alive comment.
    pub(crate) keep_alive: Duration,
    /// Starts, once, the task that ends every session at shutdown.
    pub(crate) watching_shutdown: Once,
    /// Connections that served a stateless POST and hold nothing of it
    /// ([`Connection::is_fresh`]), for the next one: a new connection per
    /// POST cost four allocations and their frees.
    pub(crate) idle_connections: Mutex<Vec<Arc<Connection>>>,
}

/// The most [`Endpoint::idle_connections`] kept: more than the POSTs a
/// server has in flight at once only when they are many, which a new
/// connection each then serves as before.
const IDLE_CONNECTIONS_KEPT: usize = 128;

/// The axum handler of the endpoint.
pub(crate) async fn handle(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    endpoint.serve(request).await
}

impl Endpoint {
    /// Answers one HTTP request. The request is split before the future is
    /// made, and the future is an `async` block, which uses what it captures
    /// in place: an `async fn` taking the request (or its parts) would keep
    /// another 240 bytes in every state of a future that each request
    /// allocates and copies.
    pub(crate) fn serve(
        self: Arc<Self>,
        request: Request,
    ) -> impl Future<Output = Response> + Send + 'static {
        let (parts, body) = request.into_parts();
        async move {
            let request_headers = RequestHeaders::new(&parts.headers);
            if let Err(refused) = self.protection.admit(
                &parts,
                request_headers.bytes,
                request_headers.first(Found::Host),
                request_headers.first(Found::Origin),
            ) {
                return refusal(refused.status, refused.reason);
            }
            let headers = &parts.headers;
            if self.shutdown.as_ref().is_some_and(Shutdown::is_triggered) {
                return overloaded("the server is shutting down");
            }
            let session_method = matches!(parts.method, Method::GET | Method::DELETE)
                && self.sessions.is_some()
                && request_headers.first(Found::SessionId).is_some();
            if parts.method != Method::POST && !session_method {
                let sessions = if self.sessions.is_some() {
                    "GET and DELETE serve only a session of a dated revision, named by its Mcp-Session-Id"
                } else {
                    "this endpoint keeps no sessions of the dated revisions either"
                };
                let mut response = refusal(
                    StatusCode::METHOD_NOT_ALLOWED,
                    format!(
                        "{} is not served here: send each JSON-RPC message as its own POST (MCP 2026-07-28 has no sessions and no standalone streams; {sessions})",
                        parts.method
                    ),
                );
                response
                    .headers_mut()
                    .insert(ALLOW, HeaderValue::from_static("POST"));
                return response;
            }
            // The application's authentication layer (if any) put the caller here.
            let principal = parts.extensions.get::<Principal>().cloned();
            if self.require_principal && principal.is_none() {
                tracing::warn!("refused an MCP request without an authenticated principal");
                return refusal(
                    StatusCode::UNAUTHORIZED,
                    "this endpoint requires an authenticated caller, and none was established",
                );
            }
            if parts.method == Method::GET {
                return self.open_server_stream(headers, principal.as_ref()).await;
            }
            if parts.method == Method::DELETE {
                // Boxed, as rare: inline it would enlarge every request's future.
                return Box::pin(self.end_session(headers, principal.as_ref())).await;
            }
            let accepts = request_headers.accepts();
            if accepts.none() {
                return refusal(
                    StatusCode::NOT_ACCEPTABLE,
                    "Accept must allow application/json or text/event-stream (send both)",
                );
            }
            if let Err(reason) = check_content_type(request_headers.first(Found::ContentType)) {
                return refusal(StatusCode::UNSUPPORTED_MEDIA_TYPE, reason);
            }
            // A legacy session's requests run on its connection; every other
            // POST on a fresh one, as ids of different clients may collide.
            let session = match self
                .sessions
                .as_ref()
                .filter(|_| request_headers.names_session())
            {
                Some(store) => {
                    match find_session(store.as_ref(), headers, principal.as_ref()).await {
                        Some(session) => Some(session),
                        None => return session_not_found(),
                    }
                }
                None => None,
            };
            let in_use = session.as_ref().map(Session::in_use);
            let connection = match &session {
                Some(session) => session.connection().clone(),
                None => self.take_connection(),
            };
            // Kept to be reused once the POST is answered, should nothing else
            // hold it then.
            let reusable = session.is_none().then(|| connection.clone());
            let max = self.server.limits().max_message_bytes;
            let declared = request_headers
                .first(Found::ContentLength)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok());
            if let Some(len) = declared.filter(|&len| len > max as u64) {
                return too_large(format!(
                    "message of {len} bytes exceeds the limit of {max} bytes"
                ));
            }
            // Room in the server's byte budget is taken before the body is read,
            // so many large bodies at once wait in the network, not in memory.
            let reservation = match declared {
                Some(len) => match connection.reserve(len as usize).await {
                    Some(reservation) => Some(reservation),
                    None => return overloaded("too many bytes in flight"),
                },
                None => None,
            };
            let body = match read_body(body, max).await {
                Ok(body) => body,
                Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
                    return too_large(format!("message exceeds the limit of {max} bytes"));
                }
                Err(e) => {
                    return refusal(
                        StatusCode::BAD_REQUEST,
                        format!("the request body could not be read: {e}"),
                    );
                }
            };
            let request = Post {
                connection,
                in_use,
                opens_session: session.is_none(),
                body,
                reservation,
                accepts,
                principal,
            };
            let response = self.dispatch(request, &request_headers).await;
            if let Some(connection) = reusable {
                self.put_back(connection);
            }
            // A shared store writes what the request changed before the client
            // can send its next request (to any replica).
            if let (Some(store), Some(session)) = (&self.sessions, &session)
                && let Some(id) = session_id(headers)
            {
                store.answered(id, session).await;
            }
            response
        }
    }

    /// A connection for a stateless POST: an idle one, or a new one.
    fn take_connection(&self) -> Arc<Connection> {
        let idle = self
            .idle_connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        idle.unwrap_or_else(|| Arc::new(Connection::new(self.server.clone())))
    }

    /// Keeps `connection` for the next stateless POST when this is its only
    /// reference (no stream, call or task of the POST holds it still) and it
    /// holds nothing of the POST it served.
    fn put_back(&self, mut connection: Arc<Connection>) {
        if Arc::get_mut(&mut connection).is_none() || !connection.is_fresh() {
            return;
        }
        let mut idle = self
            .idle_connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE_CONNECTIONS_KEPT {
            idle.push(connection);
        }
    }

    async fn dispatch(self: &Arc<Self>, request: Post, headers: &RequestHeaders<'_>) -> Response {
        let Post {
            connection,
            in_use,
            opens_session,
            body,
            reservation,
            accepts,
            principal,
        } = request;
        let (outbox, mut inbox) = Outbox::channel();
        let accepted = {
            let inbound = Inbound::default()
                .headers(headers)
                .principal(principal.as_ref());
            connection
                .accept_reserved(&body, inbound, reservation, &outbox)
                .await
        };
        // The call holds its parsed form; the raw body is not kept twice.
        drop(body);
        drop(outbox);
        let (id, notifies) = match accepted {
            Accepted::Started { id, notifies } => (id, notifies),
            Accepted::Dropped => return accepted_response(),
            Accepted::Initialized { .. } if opens_session => {
                let Some(reply) = inbox.recv().await.filter(Outgoing::is_reply) else {
                    return internal("initialize was answered with nothing");
                };
                // Boxed, as rare: inline it would enlarge every request's future.
                return Box::pin(self.open_session(connection, principal, reply, accepts)).await;
            }
            // Answered at once: the reply is already queued.
            _ => {
                return match inbox.recv().await {
                    Some(out) if out.is_reply() => immediate(out, accepts),
                    _ => internal("the request was answered with nothing"),
                };
            }
        };
        // Progress and log messages can only reach the client on an SSE
        // stream: a call streams when it asked for them (or is a subscription).
        let streams = (notifies && accepts.sse) || !accepts.json;
        // Most calls are done by now (a tool that does not wait answers in
        // its first poll): the reply is queued, and there is nothing left to
        // cancel or to wait for.
        let first = match inbox.try_recv() {
            Some(reply) if reply.is_reply() && !streams => return json_reply(reply),
            first => first,
        };
        let mut call = RunningCall {
            drain: drain_deadline(self.shutdown.clone(), self.server.drain_timeout()),
            connection,
            id,
            armed: true,
            first,
            inbox,
            _in_use: in_use,
        };
        if streams {
            return sse(call, self.keep_alive);
        }
        // JSON: wait for the one final message. Should this future be dropped
        // (the client went away), `call` cancels the handler.
        loop {
            match call.next().await {
                Some(next) if next.is_reply() => return json_reply(next),
                Some(next) if matches!(next.message(), Message::Request(_)) => {
                    // A request to the client reaches it only on a stream.
                    if accepts.sse {
                        call.first = Some(next);
                        return sse(call, self.keep_alive);
                    }
                    let refused = needs_stream(&call.id);
                    // Dropping `call` (still armed) cancels the handler.
                    drop(call);
                    return json_reply(Message::Reply(refused).into());
                }
                Some(_notification) => {}
                None => return internal("the call ended without a response"),
            }
        }
    }

    /// Keeps the connection that answered `initialize` as a new session and
    /// sends the answer with its id; without sessions, sends the answer alone.
    async fn open_session(
        self: &Arc<Self>,
        connection: Arc<Connection>,
        principal: Option<Principal>,
        reply: Outgoing,
        accepts: Accepts,
    ) -> Response {
        let Some(store) = &self.sessions else {
            // Stateless: the connection (and the session it opened) ends
            // with this request.
            return immediate(reply, accepts);
        };
        let id = new_session_id();
        let session = Session::new(connection, principal);
        if let Err(full) = store.insert(id.clone(), session.clone()).await {
            tracing::warn!(
                open = full.open,
                "refused initialize: the session store is full"
            );
            session.end().await;
            return overloaded(&full.to_string());
        }
        self.watch_shutdown();
        let mut response = immediate(reply, accepts);
        response.headers_mut().insert(
            SESSION_ID,
            HeaderValue::from_str(&id).expect("hex digits are a valid header value"),
        );
        response
    }

    /// `GET`: the session's stream of server-initiated messages.
    async fn open_server_stream(
        &self,
        headers: &HeaderMap,
        principal: Option<&Principal>,
    ) -> Response {
        if !Accepts::from_values(headers.get_all(ACCEPT)).sse {
            return refusal(
                StatusCode::NOT_ACCEPTABLE,
                "Accept must allow text/event-stream: GET opens the session's event stream",
            );
        }
        let Some(store) = self.sessions.as_deref() else {
            return session_not_found();
        };
        let Some(session) = find_session(store, headers, principal).await else {
            return session_not_found();
        };
        let (outbox, inbox) = Outbox::channel();
        if !session.connection().attach_server_stream(outbox) {
            return refusal(
                StatusCode::CONFLICT,
                "this session's event stream is already open: one GET stream per session",
            );
        }
        let stream = ServerStream {
            _in_use: session.in_use(),
            session,
            inbox,
            keep_alive: keep_alive_timer(self.keep_alive),
            shutdown: self.shutdown.clone(),
        };
        event_stream(Body::from_stream(stream.into_events()))
    }

    /// `DELETE`: ends the session.
    async fn end_session(&self, headers: &HeaderMap, principal: Option<&Principal>) -> Response {
        let Some(store) = self.sessions.as_deref() else {
            return session_not_found();
        };
        let Some(session) = find_session(store, headers, principal).await else {
            return session_not_found();
        };
        if let Some(id) = session_id(headers) {
            store.remove(id).await;
        }
        session.end().await;
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NO_CONTENT;
        response
    }

    /// At shutdown, once the calls in flight had the drain deadline to
    /// finish, ends every session (their GET streams close at once).
    fn watch_shutdown(self: &Arc<Self>) {
        let (Some(shutdown), Some(store)) = (self.shutdown.clone(), self.sessions.clone()) else {
            return;
        };
        let drain = self.server.drain_timeout();
        self.watching_shutdown.call_once(|| {
            tokio::spawn(async move {
                shutdown.triggered().await;
                tokio::time::sleep(drain).await;
                for session in store.take_all().await {
                    session.end().await;
                }
            });
        });
    }
}

/// The session a request names, when the store holds it and it belongs to
/// the request's principal. Another principal's session is not found: its
/// existence is not revealed.
async fn find_session(
    store: &dyn SessionStore,
    headers: &HeaderMap,
    principal: Option<&Principal>,
) -> Option<Session> {
    let id = session_id(headers)?;
    store.get(id).await.filter(|s| s.principal() == principal)
}

/// The one `Mcp-Session-Id` a request names (none when it names several).
fn session_id(headers: &HeaderMap) -> Option<&str> {
    let mut values = headers.get_all(SESSION_ID).iter();
    let id = values.next()?.to_str().ok()?;
    if values.next().is_some() {
        return None;
    }
    Some(id)
}

/// `404` with the legacy wire's "session not found" error.
fn session_not_found() -> Response {
    let error = RpcError::new(
        SESSION_NOT_FOUND,
        "session not found: the Mcp-Session-Id names no open session (it ended, expired, or was never opened); send initialize again to open a new one",
    );
    json(StatusCode::NOT_FOUND, encode::error(None, &error))
}

/// The answer to a call whose handler sent the client a request, when the
/// client's `Accept` leaves no way to carry it.
fn needs_stream(id: &RequestId) -> Reply {
    let error = RpcError::invalid_request(
        "this call needs the client's input, and the server can ask for it only on an SSE response: this request's Accept does not allow text/event-stream (send Accept: application/json, text/event-stream)",
    );
    // The legacy wire's errors are 200: the client reads the body.
    Reply::new(encode::error(Some(id), &error), 200)
}

/// A session's GET stream: the messages the server sends it, and a
/// keep-alive comment while none comes. Dropped (the client went away, the
/// session ended, the server shuts down), it detaches from the session.
struct ServerStream {
    session: Session,
    /// The session is not idle while it streams.
    _in_use: InUse,
    inbox: Inbox,
    keep_alive: tokio::time::Interval,
    shutdown: Option<Shutdown>,
}

impl ServerStream {
    fn into_events(self) -> impl futures_util::Stream<Item = Result<Bytes, Infallible>> + Send {
        futures_util::stream::unfold(self, |mut stream| async move {
            let shutdown = stream.shutdown.clone();
            let shutting_down = async move {
                match shutdown {
                    Some(shutdown) => shutdown.triggered().await,
                    None => std::future::pending().await,
                }
            };
            let event = tokio::select! {
                out = stream.inbox.recv() => sse_event(out?.message().body()),
                _ = stream.keep_alive.tick() => return Some((Ok(keep_alive_comment()), stream)),
                () = shutting_down => return None,
            };
            stream.keep_alive.reset();
            Some((Ok(event), stream))
        })
    }
}

impl Drop for ServerStream {
    fn drop(&mut self) {
        // Detached while this stream's inbox still lives, so no other GET
        // can have attached in between and be detached by mistake.
        self.session.connection().detach_server_stream();
    }
}

/// One POST whose body was read, ready to route.
struct Post {
    connection: Arc<Connection>,
    /// The session the request belongs to is in use until it is answered.
    in_use: Option<InUse>,
    /// The connection is fresh: an `initialize` answered on it opens a
    /// session.
    opens_session: bool,
    body: Bytes,
    reservation: Option<Reservation>,
    accepts: Accepts,
    principal: Option<Principal>,
}

/// The request's headers, read in one pass: the first value of each header
/// in [`FOUND`] (as `HeaderMap::get` finds it), which of them came more than
/// once, and the bytes of every name and value (for the size limit of
/// `Protection::admit`). The endpoint checks its headers and the router reads
/// the MCP ones from here instead of a hashed lookup each.
///
/// As the router reads them, a value that is not visible ASCII, or a header
/// sent more than once, reads as [`INVALID`], which no body value equals and
/// no decoding accepts: the router answers `-32020`.
struct RequestHeaders<'a> {
    map: &'a HeaderMap,
    first: [Option<&'a HeaderValue>; FOUND.len()],
    /// Bit `i` set: `FOUND[i]` came more than once.
    repeated: u16,
    bytes: usize,
}

/// The headers [`RequestHeaders`] finds, in [`Found`]'s order: those the
/// endpoint checks on every POST, then those the router reads on every
/// request.
static FOUND: [HeaderName; 9] = [
    HOST,
    ORIGIN,
    ACCEPT,
    CONTENT_TYPE,
    CONTENT_LENGTH,
    SESSION_ID,
    MCP_PROTOCOL_VERSION,
    HeaderName::from_static("mcp-method"),
    HeaderName::from_static("mcp-name"),
];

/// A header of [`FOUND`], by its place there.
#[derive(Debug, Clone, Copy)]
enum Found {
    Host,
    Origin,
    Accept,
    ContentType,
    ContentLength,
    SessionId,
    ProtocolVersion,
}

impl<'a> RequestHeaders<'a> {
    fn new(map: &'a HeaderMap) -> Self {
        let mut first = [None; FOUND.len()];
        let mut repeated = 0;
        let mut bytes = 0;
        for (name, value) in map {
            bytes += name.as_str().len() + value.len();
            // Standard names compare as one enum tag each.
            if let Some(at) = FOUND.iter().position(|found| found == name) {
                match first[at] {
                    None => first[at] = Some(value),
                    Some(_) => repeated |= 1 << at,
                }
            }
        }
        RequestHeaders {
            map,
            first,
            repeated,
            bytes,
        }
    }

    /// The first value of `header`, as `HeaderMap::get` finds it.
    fn first(&self, header: Found) -> Option<&'a HeaderValue> {
        self.first[header as usize]
    }

    /// True when a POST belongs to a session: it names one, and is not a
    /// 2026-07-28 request (whose revision has no sessions, so ignores the
    /// header).
    fn names_session(&self) -> bool {
        // The session id first: a 2026-07-28 request, the common one, has none.
        self.first(Found::SessionId).is_some()
            && self
                .first(Found::ProtocolVersion)
                .is_none_or(|v| v.as_bytes() != PROTOCOL_VERSION.as_bytes())
    }

    /// What the client accepts back: from every `Accept` value.
    fn accepts(&self) -> Accepts {
        let accept = Found::Accept as usize;
        if self.repeated & (1 << accept) != 0 {
            Accepts::from_values(self.map.get_all(ACCEPT))
        } else {
            Accepts::from_values(self.first[accept])
        }
    }
}

/// What an unreadable header value looks like to the router.
const INVALID: &str = "\u{fffd}invalid header value\u{fffd}";

impl Headers for RequestHeaders<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        let (first, repeated) = match FOUND.iter().position(|found| found.as_str() == name) {
            Some(at) => (self.first[at]?, self.repeated & (1 << at) != 0),
            None => {
                let mut values = self.map.get_all(name).iter();
                (values.next()?, values.next().is_some())
            }
        };
        if repeated {
            return Some(INVALID);
        }
        Some(first.to_str().unwrap_or(INVALID))
    }
}

/// Completes once the server is shutting down and its drain deadline has
/// passed; never without a shutdown signal.
fn drain_deadline(shutdown: Option<Shutdown>, drain: Duration) -> BoxFuture<'static, ()> {
    Box::pin(async move {
        match shutdown {
            Some(shutdown) => {
                shutdown.triggered().await;
                tokio::time::sleep(drain).await;
            }
            None => std::future::pending().await,
        }
    })
}

/// A started call and the receiving end of its messages. Dropped before the
/// final message (the client closed the response stream), it cancels the call:
/// the handler's future is dropped and nothing more is sent for it.
struct RunningCall {
    connection: Arc<Connection>,
    id: RequestId,
    /// Still waiting for the final message.
    armed: bool,
    /// A message taken from the inbox before the call turned into a stream
    /// (or, for a call done at once, its reply).
    first: Option<Outgoing>,
    inbox: Inbox,
    /// The session (if any) stays in use until the call ends.
    _in_use: Option<InUse>,
    /// The shutdown's drain deadline: the call is cancelled then.
    drain: BoxFuture<'static, ()>,
}

impl RunningCall {
    /// The next message, or `None` after the final one (or if the call ended
    /// without one).
    async fn next(&mut self) -> Option<Outgoing> {
        if let Some(first) = self.first.take() {
            if first.is_reply() {
                self.armed = false;
            }
            return Some(first);
        }
        if !self.armed {
            return None;
        }
        let out = tokio::select! {
            out = self.inbox.recv() => out?,
            () = &mut self.drain => {
                // Shutting down and out of time: the call is cancelled (its
                // receipt says so) and the client told to retry elsewhere.
                self.armed = false;
                self.connection.cancel(&self.id);
                return Some(Message::Reply(shutting_down(&self.id)).into());
            }
        };
        if out.is_reply() {
            self.armed = false;
        }
        Some(out)
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        if self.armed && self.connection.cancel(&self.id) {
            tracing::debug!(request_id = %self.id, "response stream closed: call cancelled");
        }
    }
}

/// The whole body, refused past `max` bytes (the error is then a
/// [`LengthLimitError`]). A body that comes as one data frame (nearly every
/// request: hyper reads a small body with its head) is that frame's bytes,
/// without the buffering of `collect`, which gathers the rest of a longer one.
async fn read_body(body: Body, max: usize) -> Result<Bytes, axum::BoxError> {
    let mut body = Limited::new(body, max);
    // Trailers are not part of the message, as `collect` leaves them out too.
    let first = loop {
        match body.frame().await {
            None => return Ok(Bytes::new()),
            Some(frame) => {
                if let Ok(data) = frame?.into_data() {
                    break data;
                }
            }
        }
    };
    if body.is_end_stream() {
        return Ok(first);
    }
    let rest = body.collect().await?.to_bytes();
    let mut whole = bytes::BytesMut::with_capacity(first.len() + rest.len());
    whole.extend_from_slice(&first);
    whole.extend_from_slice(&rest);
    Ok(whole.freeze())
}

/// The message's JSON text, without a copy: a message the server queued
/// gives its room back when these bytes are dropped, once written.
fn into_bytes(out: Outgoing) -> Bytes {
    Bytes::from_owner(Written(out))
}

/// An [`Outgoing`] as the bytes of a response body.
struct Written(Outgoing);

impl AsRef<[u8]> for Written {
    fn as_ref(&self) -> &[u8] {
        self.0.body()
    }
}

/// The reply of a call cancelled by a shutdown.
fn shutting_down(id: &RequestId) -> Reply {
    Reply::error(
        Some(id),
        &RpcError::overloaded("the server is shutting down; retry later", 1000),
    )
}

/// An SSE response carrying every message of the call, each as one `data:`
/// line, ending after the final response; a keep-alive comment goes out
/// whenever no message came for `keep_alive` (a call waiting for a client's
/// answer, a quiet subscription).
fn sse(call: RunningCall, keep_alive: Duration) -> Response {
    let state = (call, keep_alive_timer(keep_alive));
    let events = futures_util::stream::unfold(state, |(mut call, mut timer)| async move {
        let event = tokio::select! {
            next = call.next() => sse_event(next?.message().body()),
            _ = timer.tick() => return Some((Ok(keep_alive_comment()), (call, timer))),
        };
        timer.reset();
        Some((Ok::<_, Infallible>(event), (call, timer)))
    });
    event_stream(Body::from_stream(events))
}

/// Ticks every `every`, first after one period, and never in bursts.
fn keep_alive_timer(every: Duration) -> tokio::time::Interval {
    let mut timer = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    timer
}

/// An SSE comment: clients ignore it, proxies see the stream is alive.
fn keep_alive_comment() -> Bytes {
    Bytes::from_static(b": keep-alive\n\n")
}

/// `data: <message>\n\n`, one frame (so one chunk on the wire, which clients
/// and proxies read as one event). Messages are compact JSON, so never contain
/// a newline.
fn sse_event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 8);
    event.extend_from_slice(b"data: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// A `text/event-stream` response with headers that keep proxies from
/// buffering or caching it.
fn event_stream(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    response
}

/// A reply answered at once: JSON, or one SSE event when the client accepts
/// only `text/event-stream` and the reply is a success (errors are always
/// JSON, as clients read error statuses' bodies as JSON).
fn immediate(reply: Outgoing, accepts: Accepts) -> Response {
    // A refusal for want of capabilities may become an authorization
    // challenge (see `json_reply`): always JSON.
    let ok = matches!(reply.message(), Message::Reply(r) if r.http_status == 200 && r.not_granted.is_none());
    if ok && !accepts.json {
        return event_stream(Body::from(sse_event(reply.message().body())));
    }
    json_reply(reply)
}

/// A reply as a JSON response, with `Retry-After` when it has one; a `503`
/// always has one.
fn json_reply(reply: Outgoing) -> Response {
    let (code, retry_after, not_granted) = match reply.message() {
        Message::Reply(r) => (r.http_status, r.retry_after, r.not_granted.clone()),
        Message::Notification(_) | Message::Request(_) => (500, None, None),
    };
    // The pipeline gives every overload its delay; a 503 without one still
    // tells the client when to come back.
    let retry_after = match retry_after {
        Some(after) => Some(after),
        None if code == 503 => Some(Duration::from_secs(1)),
        None => None,
    };
    let mut response = json(status(code), into_bytes(reply));
    // What a refused call lacked, for an authorization layer around the
    // endpoint to turn into its challenge (the OAuth layer's 403).
    if let Some(refused) = not_granted {
        response.extensions_mut().insert(refused);
    }
    if let Some(after) = retry_after {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(retry_after_seconds(after)));
    }
    response
}

/// `Retry-After` counts whole seconds: round up, so a client never retries
/// before the delay, and never say 0.
fn retry_after_seconds(after: Duration) -> u64 {
    let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
    seconds.max(1)
}

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn json(status: StatusCode, body: impl Into<Body>) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn accepted_response() -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

/// A transport-level refusal: `status` with an id-less `-32600` body.
fn refusal(status: StatusCode, reason: impl Into<String>) -> Response {
    json(
        status,
        encode::error(None, &RpcError::invalid_request(reason)),
    )
}

/// `503` with `Retry-After` and an id-less `-31002` body.
fn overloaded(why: &str) -> Response {
    let error = RpcError::overloaded(
        format!("the server is overloaded ({why}); retry later"),
        1000,
    );
    let mut response = json(StatusCode::SERVICE_UNAVAILABLE, encode::error(None, &error));
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

fn too_large(reason: String) -> Response {
    refusal(StatusCode::PAYLOAD_TOO_LARGE, reason)
}

fn internal(reason: &str) -> Response {
    json(
        StatusCode::INTERNAL_SERVER_ERROR,
        encode::error(None, &RpcError::internal(reason)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_headers_find_the_mcp_ones_in_their_one_pass() {
        let mut map = HeaderMap::new();
        map.insert("Mcp-Method", HeaderValue::from_static("tools/call"));
        map.insert(
            "MCP-Protocol-Version",
            HeaderValue::from_static("2026-07-28"),
        );
        map.insert("content-type", HeaderValue::from_static("application/json"));
        map.append("mcp-name", HeaderValue::from_static("a"));
        map.append("mcp-name", HeaderValue::from_static("b"));
        map.insert("mcp-param-city", HeaderValue::from_static("Paris"));
        map.insert("mcp-param-bad", HeaderValue::from_bytes(b"\xff").unwrap());
        let headers = RequestHeaders::new(&map);
        assert_eq!(headers.get("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(headers.get("mcp-method"), Some("tools/call"));
        assert_eq!(headers.get("mcp-name"), Some(INVALID));
        assert_eq!(headers.get("mcp-param-city"), Some("Paris"));
        assert_eq!(headers.get("mcp-param-bad"), Some(INVALID));
        assert_eq!(headers.get("content-type"), Some("application/json"));
        assert_eq!(headers.get("mcp-other"), None);
        assert_eq!(headers.bytes, crate::protect::header_bytes(&map));
    }

    #[test]
    fn found_headers_are_the_first_values_a_lookup_finds() {
        let mut maps = Vec::new();
        let mut full = HeaderMap::new();
        for (name, value) in [
            (HOST, "localhost:1"),
            (ORIGIN, "http://localhost"),
            (ACCEPT, "application/json"),
            (CONTENT_TYPE, "application/json"),
            (CONTENT_LENGTH, "12"),
            (SESSION_ID, "abc"),
            (MCP_PROTOCOL_VERSION, "2026-07-28"),
            (HeaderName::from_static("mcp-method"), "tools/call"),
            (HeaderName::from_static("mcp-name"), "add"),
        ] {
            full.insert(name, HeaderValue::from_static(value));
        }
        maps.push(full.clone());
        // Every header twice: the first value is the one found.
        let mut doubled = full.clone();
        for name in &FOUND {
            doubled.append(name.clone(), HeaderValue::from_static("second"));
        }
        maps.push(doubled);
        maps.push(HeaderMap::new());
        let mut accept_twice = HeaderMap::new();
        accept_twice.append(ACCEPT, HeaderValue::from_static("text/event-stream"));
        accept_twice.append(ACCEPT, HeaderValue::from_static("application/json"));
        maps.push(accept_twice);
        for map in &maps {
            let headers = RequestHeaders::new(map);
            for (at, name) in FOUND.iter().enumerate() {
                assert_eq!(headers.first[at], map.get(name), "{name}");
                let twice = map.get_all(name).iter().count() > 1;
                assert_eq!(headers.repeated & (1 << at) != 0, twice, "{name}");
            }
            assert_eq!(
                headers.accepts(),
                Accepts::from_values(map.get_all(ACCEPT)),
                "{map:?}"
            );
        }
        // Each `Found` names its place in `FOUND`.
        for (found, name) in [
            (Found::Host, HOST),
            (Found::Origin, ORIGIN),
            (Found::Accept, ACCEPT),
            (Found::ContentType, CONTENT_TYPE),
            (Found::ContentLength, CONTENT_LENGTH),
            (Found::SessionId, SESSION_ID),
            (Found::ProtocolVersion, MCP_PROTOCOL_VERSION),
        ] {
            assert_eq!(FOUND[found as usize], name, "{found:?}");
            assert_eq!(
                RequestHeaders::new(&maps[0]).first(found),
                maps[0].get(&name)
            );
        }
        // Both Accept values count when there are two.
        assert_eq!(
            RequestHeaders::new(&maps[3]).accepts(),
            Accepts {
                json: true,
                sse: true
            }
        );
    }

    #[test]
    fn a_stateless_connection_is_reused_only_when_nothing_else_holds_it() {
        let server = typed_mcp::Server::new("t", "1")
            .build()
            .expect("server builds");
        let addr = "127.0.0.1:1".parse().expect("an address");
        let (endpoint, _) = crate::HttpServer::new(server, addr)
            .endpoint_at("/mcp")
            .expect("the endpoint builds");
        let endpoint = endpoint.expect("served without a router layer");
        let first = endpoint.take_connection();
        let held = first.clone();
        endpoint.put_back(first);
        assert_eq!(
            endpoint.idle_connections.lock().unwrap().len(),
            0,
            "still held"
        );
        endpoint.put_back(held);
        assert_eq!(endpoint.idle_connections.lock().unwrap().len(), 1);
        let again = endpoint.take_connection();
        assert!(again.is_fresh());
        assert_eq!(endpoint.idle_connections.lock().unwrap().len(), 0);
        for _ in 0..IDLE_CONNECTIONS_KEPT + 3 {
            endpoint.put_back(Arc::new(Connection::new(endpoint.server.clone())));
        }
        assert_eq!(
            endpoint.idle_connections.lock().unwrap().len(),
            IDLE_CONNECTIONS_KEPT
        );
    }

    #[test]
    fn sse_events_are_one_data_line() {
        assert_eq!(&sse_event(b"{\"a\":1}")[..], b"data: {\"a\":1}\n\n");
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds_and_is_never_0() {
        assert_eq!(retry_after_seconds(Duration::ZERO), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1000)), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(retry_after_seconds(Duration::from_millis(2500)), 3);
    }

    #[test]
    fn unreadable_or_repeated_headers_read_as_invalid() {
        let mut map = HeaderMap::new();
        map.insert("mcp-name", HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap());
        map.append("mcp-method", HeaderValue::from_static("a"));
        map.append("mcp-method", HeaderValue::from_static("b"));
        map.insert("mcp-param-Region", HeaderValue::from_static("eu"));
        map.insert(
            "mcp-protocol-version",
            HeaderValue::from_static("2026-07-28"),
        );
        let h = RequestHeaders::new(&map);
        // The names the router asks for (found in one pass) and any other
        // spelling (looked up) read alike.
        assert_eq!(h.get("Mcp-Name"), Some(INVALID));
        assert_eq!(h.get("mcp-name"), Some(INVALID));
        assert_eq!(h.get("mcp-method"), Some(INVALID));
        assert_eq!(h.get("MCP-Method"), Some(INVALID));
        assert_eq!(h.get("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(h.get("MCP-Protocol-Version"), Some("2026-07-28"));
        let empty = HeaderMap::new();
        assert_eq!(RequestHeaders::new(&empty).get("mcp-method"), None);
        assert_eq!(h.get("MCP-PARAM-REGION"), Some("eu"));
        assert_eq!(h.get("mcp-param-region"), Some("eu"));
        assert_eq!(h.get("absent"), None);
        assert_eq!(h.get("not a header name"), None);
    }
}
