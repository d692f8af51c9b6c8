//! Streamable HTTP for [`typed_mcp`] servers: MCP revision 2026-07-28, and the
//! sessions of the dated revisions (2025-11-25 and older) on the same endpoint.
//!
//! This crate turns a built [`Server`] into an [axum](https://docs.rs/axum)
//! [`Router`] that the application merges into its own app. The application owns
//! everything around it: the listener, TLS, middleware and authentication.
//! [`serve`] serves a router over HTTP/1.1 with graceful shutdown, holding
//! less memory per connection than `axum::serve` (which also speaks HTTP/2);
//! either serves the endpoint the same way. A stdio-only server does not depend on
//! this crate and compiles no HTTP stack.
//!
//! ```no_run
//! use serde_json::json;
//! use typed_mcp::wire::CallToolResult;
//! use typed_mcp::{Server, declare::ToolDecl};
//! use typed_mcp_http::HttpServer;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
//!         .tool(
//!             ToolDecl::builder("ping_back")
//!                 .description("Answer pong.")
//!                 .handler(|_args, _ctx| async { Ok(CallToolResult::text("pong")) }),
//!         )
//!         .build()?;
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//!     // Served at /mcp; merge it into a larger app with `app.merge(mcp)`.
//!     let mcp = HttpServer::new(server, listener.local_addr()?).mount("/mcp")?;
//!     // Until the process is stopped; pass `Shutdown::wait()` to drain instead.
//!     typed_mcp_http::serve(listener, mcp, std::future::pending()).await;
//!     Ok(())
//! }
//! ```
//!
//! # What the endpoint does
//!
//! Every JSON-RPC message arrives as its own `POST` (a client of a dated
//! revision names its session in `Mcp-Session-Id`, and also uses `GET` and
//! `DELETE`: see [Sessions](#sessions-of-the-dated-revisions)):
//!
//! | request | answer |
//! |---|---|
//! | headers over [`max_header_bytes`](HttpServer::max_header_bytes) (64 KiB by default) | `431` |
//! | `Host` or `Origin` not allowed (see below) | `403` |
//! | not `POST` (`GET`, `DELETE`, ...), except `GET` and `DELETE` naming a session | `405` with `Allow: POST` |
//! | `Mcp-Session-Id` naming no session of this caller's (never opened, ended, expired, another principal's) | `404`, `-32001` |
//! | a legacy `initialize` when the session store is full | `503` with `Retry-After`, `-31002` |
//! | no [`Principal`](typed_mcp::Principal) when [`require_authentication`](HttpServer::require_authentication) was called | `401` |
//! | with `HttpServer::oauth` (the `oauth` feature): no valid bearer token, or a call needing a scope the token lacks | `401`, or `403` with a scope challenge (see the `oauth` module) |
//! | `Accept` allows neither `application/json` nor `text/event-stream` | `406` |
//! | `Content-Type` not `application/json` | `415` |
//! | body over the server's `max_message_bytes` | `413`, `-32600` |
//! | a JSON array (a batch, `[]` included) | `400`, one `-32600`: MCP has no batches |
//! | a notification | `202`, no body |
//! | the server overloaded (`max_pending`, `max_pending_bytes`, a layer's `RpcError::overloaded`) or shutting down (see [`shutdown`](HttpServer::shutdown)) | `503` with `Retry-After`, `-31002` |
//! | anything the router answers (errors, lists, `server/discover`) | the router's status (`400` for malformed input, header, envelope and version errors, `404` for `-32601`, `200` otherwise) |
//! | a call without `progressToken` or `logLevel` in `_meta` | `200`, the response as `application/json` |
//! | a call with either | `200`, `text/event-stream`: its progress and log notifications, then the response, each one `data:` line, flushed as sent; a `: keep-alive` comment when none came for [`sse_keep_alive`](HttpServer::sse_keep_alive) |
//!
//! Every body is one line of JSON; refusals by the transport itself carry an
//! id-less `-32600` error saying why (MCP's form of JSON-RPC's `"id": null`:
//! its schema makes the id of an error optional and never `null`). The
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers
//! are checked against the body by the router (`-32020`, `400`).
//!
//! Closing the response stream (a client that disconnects or gives up) cancels
//! the call: its handler's future is dropped and nothing more is sent for it.
//! Every `POST` is a separate call with its own id space, so ids from
//! different clients never collide; the server's `max_concurrent` limit is
//! shared by all of them.
//!
//! # Sessions of the dated revisions
//!
//! A client of 2025-11-25 (or 2025-06-18, 2025-03-26) opens a session with
//! `initialize`; the answer carries `Mcp-Session-Id`, and the session keeps
//! the client's revision, log level, subscriptions and request ids:
//!
//! | request | answer |
//! |---|---|
//! | `POST` `initialize` (no 2026-07-28 envelope) | the router's answer, with `Mcp-Session-Id: <32 hex digits>` |
//! | `POST` with `Mcp-Session-Id` | as above, on the session's connection |
//! | a call whose handler asks the client for input | `text/event-stream`: the server's request, then the response; when `Accept` lacks `text/event-stream`, a `-32600` error for the call, whose handler is cancelled |
//! | `POST` of the client's response to such a request | `202` |
//! | `GET` with `Mcp-Session-Id`, `Accept: text/event-stream` | the session's event stream (`notifications/resources/updated`); `409` when one is already open, `406` without the `Accept` |
//! | `DELETE` with `Mcp-Session-Id` | `204`; the session's calls are cancelled and its stream closes |
//!
//! Sessions live in a [`SessionStore`]: by default a [`MemorySessionStore`]
//! bounded by [`max_sessions`](HttpServer::max_sessions) and
//! [`session_idle_timeout`](HttpServer::session_idle_timeout).
//! Every SSE response of either era sends a `: keep-alive` comment after
//! [`sse_keep_alive`](HttpServer::sse_keep_alive) without a message.
//! [`legacy_sessions(false)`](HttpServer::legacy_sessions) serves dated
//! clients without sessions. At [`shutdown`](HttpServer::shutdown), event
//! streams close at once and every session ends after the drain deadline.
//!
//! # Header size
//!
//! The endpoint refuses a request whose headers add up to more than
//! [`max_header_bytes`](HttpServer::max_header_bytes): the sum, over every
//! header line, of the name's and the value's length in bytes (64 KiB unless
//! set). The answer is `431` with a `-32600` body giving the limit and the
//! size found, and a `tracing` warning. hyper's own limits (its read buffer of
//! about 400 KiB and 100 headers by default, set on the application's
//! listener) apply before this one.
//!
//! # Exposure: who can reach the endpoint
//!
//! [`HttpServer::new`] takes the address the application's listener is bound
//! to (`listener.local_addr()?`), and the router's protection follows from it:
//!
//! - **Loopback** (`127.0.0.0/8` or `::1`, also written as an IPv4-mapped
//!   IPv6 address): only programs on the same machine connect, so the threat
//!   is a web page its users visit (DNS rebinding, below). No authentication
//!   is needed.
//! - **Anything else**, including the unspecified `0.0.0.0` and `::`: other
//!   machines can connect, so the router is built only when the application
//!   authenticates every request and says so with
//!   [`require_authentication`](HttpServer::require_authentication); otherwise
//!   [`into_router`](HttpServer::into_router) fails with
//!   [`HttpError::UnprotectedBind`]. [`allow_hosts`](HttpServer::allow_hosts)
//!   alone is not enough: a Host allow-list filters names, not callers.
//!
//! With authentication on a non-loopback bind, `Host` is checked against
//! [`allow_hosts`](HttpServer::allow_hosts) (and the loopback names) when
//! that list is given, and not checked otherwise: a DNS-rebinding page cannot
//! send the caller's credentials (the browser files them under the real
//! host's name, not the attacker's), so authentication already refuses it,
//! and a public server is reached by names the library cannot guess. This
//! holds for credentials the request carries (a token, a cookie, a client
//! certificate); an "authentication" that trusts the caller's network address
//! lets a rebinding page through, so list the names with `allow_hosts` then.
//! `Origin` is checked on every bind.
//!
//! # DNS-rebinding protection
//!
//! A server bound to a loopback address answers only requests whose `Host`
//! is `localhost`, `127.0.0.1` or `[::1]` (any port) and whose `Origin`, when
//! present, is `http://` or `https://` one of those names. Other names are
//! added with [`HttpServer::allow_hosts`] and [`HttpServer::allow_origins`].
//! A refused request gets `403`, a body saying why, and a `tracing` warning.

#![warn(missing_docs, unreachable_pub)]
#![forbid(unsafe_code)]

mod endpoint;
mod negotiate;
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub mod oauth;
mod protect;
mod serve;
mod service;
mod sessions;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use axum::Router;
use axum::routing::any;
use typed_mcp::{Server, transport::Shutdown};

pub use axum;
pub use serve::serve;
pub use service::EndpointService;

use endpoint::Endpoint;
use protect::Protection;

pub use sessions::{
    DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT, MemorySessionStore, Session, SessionStore,
    StoreFull, StoreFuture,
};

/// Default interval of the keep-alive comment on an idle GET stream.
pub const DEFAULT_SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Why a router could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The address is not loopback and
    /// [`require_authentication`](HttpServer::require_authentication) was not
    /// called.
    #[error(
        "refusing to serve MCP on {address} without authentication: it is not a loopback address (127.0.0.0/8 or ::1), so other machines can reach it. Put an authentication layer in front of the router that inserts a typed_mcp::Principal into each request's extensions and call `require_authentication()`, or bind 127.0.0.1 or [::1] and let a reverse proxy that authenticates face the network. `allow_hosts` alone does not open a non-loopback address: it filters Host names, not callers"
    )]
    UnprotectedBind {
        /// The address given to [`HttpServer::new`].
        address: SocketAddr,
    },
    /// An [`HttpServer::allow_hosts`] entry is malformed.
    #[error("invalid allow_hosts entry {entry:?}: {reason}")]
    InvalidAllowedHost {
        /// The entry as given.
        entry: String,
        /// What was expected.
        reason: String,
    },
    /// An [`HttpServer::allow_origins`] entry is malformed.
    #[error("invalid allow_origins entry {entry:?}: {reason}")]
    InvalidAllowedOrigin {
        /// The entry as given.
        entry: String,
        /// What was expected.
        reason: String,
    },
    /// A [`HttpServer::mount`] path is not a plain absolute path.
    #[error(
        "invalid mount path {path:?}: expected an absolute path such as \"/mcp\", without captures or wildcards"
    )]
    InvalidPath {
        /// The path as given.
        path: String,
    },
    /// The OAuth settings cannot work (the `oauth` feature).
    #[cfg(feature = "oauth")]
    #[error(transparent)]
    OAuth(#[from] oauth::OAuthError),
}

/// Serves a [`Server`] over Streamable HTTP: settings, then
/// [`into_router`](Self::into_router) or [`mount`](Self::mount).
#[must_use = "an HttpServer does nothing until it is turned into a router"]
#[derive(Debug)]
pub struct HttpServer {
    server: Server,
    local_addr: SocketAddr,
    allow_hosts: Vec<String>,
    allow_origins: Vec<String>,
    authenticated: bool,
    max_header_bytes: usize,
    shutdown: Option<Shutdown>,
    legacy_sessions: bool,
    max_sessions: usize,
    session_idle_timeout: Duration,
    session_store: Option<Arc<dyn SessionStore>>,
    sse_keep_alive: Duration,
    #[cfg(feature = "oauth")]
    oauth: Option<oauth::OAuth>,
}

impl HttpServer {
    /// Streamable HTTP for this server, served on `local_addr`: the address
    /// the application's listener is bound to (`listener.local_addr()?`).
    ///
    /// A loopback address (`127.0.0.0/8`, `::1`) turns on loopback-only `Host`
    /// and `Origin` checks. Any other address, `0.0.0.0` and `::` included,
    /// needs [`require_authentication`](Self::require_authentication) (see
    /// [the crate docs](crate#exposure-who-can-reach-the-endpoint)).
    pub fn new(server: Server, local_addr: SocketAddr) -> Self {
        // A server's heartbeat interval, when it has one, paces the
        // keep-alive comments too.
        let sse_keep_alive = server.heartbeat().unwrap_or(DEFAULT_SSE_KEEP_ALIVE);
        HttpServer {
            server,
            local_addr,
            allow_hosts: Vec::new(),
            allow_origins: Vec::new(),
            authenticated: false,
            max_header_bytes: protect::DEFAULT_MAX_HEADER_BYTES,
            shutdown: None,
            legacy_sessions: true,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            session_store: None,
            sse_keep_alive,
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }

    /// Makes the endpoint an OAuth 2.1 resource server (the `oauth`
    /// feature): every request needs a bearer token `oauth` verifies, whose
    /// scopes grant the capabilities of that request (see [`oauth`]). Also
    /// [`require_authentication`](Self::require_authentication), so a
    /// non-loopback bind is allowed. [`mount`](Self::mount) then also serves
    /// the Protected Resource Metadata at its well-known path; with
    /// [`into_router`](Self::into_router) (to nest), merge
    /// [`OAuth::metadata_router`](oauth::OAuth::metadata_router) at the root
    /// of your application yourself.
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, oauth: oauth::OAuth) -> Self {
        self.oauth = Some(oauth);
        self.authenticated = true;
        self
    }

    /// Host names (as clients send them in `Host`) accepted besides the
    /// loopback names: `"mcp.example.com"` allows any port,
    /// `"mcp.example.com:8443"` only that one, IPv6 addresses go in brackets.
    /// On an authenticated non-loopback bind, `Host` is checked only when
    /// this list is given. Names compare case-insensitively; calls add to the
    /// list.
    ///
    /// This list does not make a non-loopback bind acceptable by itself:
    /// that takes [`require_authentication`](Self::require_authentication).
    pub fn allow_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow_hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// Origins (`scheme://host[:port]`, as browsers send `Origin`) accepted
    /// besides `http(s)://` loopback names. A request with any other `Origin`
    /// is refused, whatever the bind address. Calls add to the list.
    pub fn allow_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// Declares that the application authenticates every request before it
    /// reaches this router (an axum layer or middleware of its own). This is
    /// what allows a non-loopback bind.
    ///
    /// typed-mcp implements no authentication itself: the application's layer
    /// verifies the caller and inserts a [`typed_mcp::Principal`] into the
    /// request's extensions. Handlers see it in `ToolContext::principal()`, and
    /// sealed `requestState` is bound to it. With this flag set, a request that
    /// reaches the router without a `Principal` is refused with `401`, on any
    /// bind.
    pub fn require_authentication(mut self) -> Self {
        self.authenticated = true;
        self
    }

    /// Whether [`require_authentication`](Self::require_authentication) was
    /// called.
    pub fn requires_authentication(&self) -> bool {
        self.authenticated
    }

    /// The most header bytes a request may carry: the sum, over every header
    /// line, of its name's and its value's length. Default 64 KiB (65 536).
    /// A request over it is refused with `431` and a `-32600` body giving the
    /// limit and the size found, before any other check.
    pub fn max_header_bytes(mut self, bytes: usize) -> Self {
        self.max_header_bytes = bytes;
        self
    }

    /// Drains on `shutdown`: once it is triggered, new requests get `503`
    /// with `Retry-After`, and calls in flight get the server's
    /// [`drain_timeout`](typed_mcp::ServerBuilder::drain_timeout) to finish
    /// before they are cancelled (each with its receipt) and answered `503`.
    /// Pair it with the HTTP server's own graceful shutdown (e.g. axum's
    /// `with_graceful_shutdown(shutdown.wait())`).
    pub fn shutdown(mut self, shutdown: Shutdown) -> Self {
        self.shutdown = Some(shutdown);
        self
    }

    /// Whether a dated client's `initialize` opens a session (on by
    /// default). Off, the endpoint is stateless for every era: `initialize`
    /// is answered without `Mcp-Session-Id` and nothing is kept; each later
    /// request of a dated revision (known by its `MCP-Protocol-Version`
    /// header) runs on its own, `GET` and `DELETE` are `405`, and what needs
    /// a session (`resources/subscribe`, `logging/setLevel`, a handler's
    /// request for the client's input) is answered with an error saying so.
    /// Dated clients are refused altogether by the server's strict
    /// 2026-07-28 setting,
    /// [`ServerBuilder::legacy_clients(false)`](typed_mcp::ServerBuilder::legacy_clients),
    /// not here.
    pub fn legacy_sessions(mut self, enabled: bool) -> Self {
        self.legacy_sessions = enabled;
        self
    }

    /// The most sessions the default [`MemorySessionStore`] keeps at once:
    /// default [`DEFAULT_MAX_SESSIONS`] (10 000). An `initialize` that finds
    /// it full, once expired sessions are swept, gets `503` with
    /// `Retry-After`. Not used with [`session_store`](Self::session_store).
    pub fn max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// How long the default [`MemorySessionStore`] keeps a session that no
    /// request or stream uses: default [`DEFAULT_SESSION_IDLE_TIMEOUT`] (30
    /// minutes). An expired session ends (its subscriptions stop) and its
    /// id then gets `404`. Not used with [`session_store`](Self::session_store).
    pub fn session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    /// Keeps sessions in `store` instead of the default
    /// [`MemorySessionStore`] (whose bound and expiry settings then do not
    /// apply).
    pub fn session_store(mut self, store: impl SessionStore + 'static) -> Self {
        self.session_store = Some(Arc::new(store));
        self
    }

    /// How long an SSE response (a POST's stream of either era, a session's
    /// `GET` stream) goes without a message before it sends a `: keep-alive`
    /// comment, so proxies do not cut it as idle: by default the server's
    /// heartbeat interval (`ServerBuilder::heartbeat`), or
    /// [`DEFAULT_SSE_KEEP_ALIVE`] (15 seconds) when heartbeats are off.
    pub fn sse_keep_alive(mut self, every: Duration) -> Self {
        self.sse_keep_alive = every;
        self
    }

    /// A router serving the MCP endpoint at its root `/`, for the application
    /// to nest where it likes (`Router::new().nest("/mcp", router)`). Where
    /// the path is fixed, [`mount`](Self::mount) serves the same for less: a
    /// nested router rewrites each request's URI and routes it twice.
    ///
    /// # Errors
    ///
    /// [`HttpError::UnprotectedBind`] for a non-loopback address without
    /// [`require_authentication`](Self::require_authentication); an
    /// `Invalid*` error for a malformed allow-list entry.
    pub fn into_router(self) -> Result<Router, HttpError> {
        self.mount("/")
    }

    /// A router serving the MCP endpoint at exactly `path` (e.g. `"/mcp"`),
    /// to merge into the application's router or serve as it is.
    ///
    /// # Errors
    ///
    /// As [`into_router`](Self::into_router), and [`HttpError::InvalidPath`]
    /// when `path` does not start with `/` or holds a capture or wildcard.
    pub fn mount(self, path: &str) -> Result<Router, HttpError> {
        self.endpoint_at(path).map(|(_, router)| router)
    }

    /// The endpoint at exactly `path` as a tower service, for an
    /// application that serves MCP alone: it answers as
    /// [`mount`](Self::mount)'s router does, and sends requests to `path`
    /// straight to the endpoint instead of through the router (see
    /// [`EndpointService`]).
    ///
    /// ```no_run
    /// use typed_mcp::Server;
    /// use typed_mcp_http::HttpServer;
    ///
    /// # async fn run(server: Server) -> Result<(), Box<dyn std::error::Error>> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    /// let mcp = HttpServer::new(server, listener.local_addr()?).into_service("/mcp")?;
    /// typed_mcp_http::serve(listener, mcp, std::future::pending()).await;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`mount`](Self::mount).
    pub fn into_service(self, path: &str) -> Result<EndpointService, HttpError> {
        let (direct, router) = self.endpoint_at(path)?;
        Ok(EndpointService::new(direct, path, router))
    }

    /// The router serving the endpoint at `path`, and the endpoint itself
    /// unless a layer wraps its route (then every request must take the
    /// router).
    fn endpoint_at(self, path: &str) -> Result<(Option<Arc<Endpoint>>, Router), HttpError> {
        if !path.starts_with('/') || path.contains(['{', '}', '*']) {
            return Err(HttpError::InvalidPath {
                path: path.to_owned(),
            });
        }
        let protection = Protection::new(
            self.local_addr,
            &self.allow_hosts,
            &self.allow_origins,
            self.authenticated,
            self.max_header_bytes,
        )?;
        #[cfg(feature = "oauth")]
        let oauth = match &self.oauth {
            Some(oauth) => Some((
                oauth.layer(&self.server)?,
                (path != "/")
                    .then(|| oauth.metadata_router(&self.server))
                    .transpose()?,
            )),
            None => None,
        };
        let endpoint = Arc::new(Endpoint {
            server: self.server,
            protection,
            require_principal: self.authenticated,
            shutdown: self.shutdown,
            sessions: self.legacy_sessions.then(|| {
                self.session_store.unwrap_or_else(|| {
                    Arc::new(MemorySessionStore::new(
                        self.max_sessions,
                        self.session_idle_timeout,
                    ))
                })
            }),
            // A zero period would spin; a millisecond is already too often.
            keep_alive: self.sse_keep_alive.max(Duration::from_millis(1)),
            idle_connections: Mutex::default(),
            watching_shutdown: Once::new(),
        });
        let router = Router::new().route(path, any(endpoint::handle).with_state(endpoint.clone()));
        #[cfg(feature = "oauth")]
        if let Some((layer, metadata)) = oauth {
            let router = router.route_layer(layer);
            let router = match metadata {
                Some(metadata) => router.merge(metadata),
                None => router,
            };
            return Ok((None, router));
        }
        Ok((Some(endpoint), router))
    }
}

/// `server.http(local_addr)` and `server.into_router(local_addr)` on a built
/// [`Server`].
pub trait ServerExt {
    /// The HTTP settings for this server served on `local_addr`
    /// ([`HttpServer::new`]).
    fn http(self, local_addr: SocketAddr) -> HttpServer;

    /// A router serving the endpoint at `/` with default settings
    /// ([`HttpServer::into_router`]): a loopback `local_addr` builds, any
    /// other needs authentication, so goes through [`http`](Self::http).
    ///
    /// # Errors
    ///
    /// [`HttpError::UnprotectedBind`] when `local_addr` is not loopback.
    fn into_router(self, local_addr: SocketAddr) -> Result<Router, HttpError>;
}

impl ServerExt for Server {
    fn http(self, local_addr: SocketAddr) -> HttpServer {
        HttpServer::new(self, local_addr)
    }

    fn into_router(self, local_addr: SocketAddr) -> Result<Router, HttpError> {
        HttpServer::new(self, local_addr).into_router()
    }
}
