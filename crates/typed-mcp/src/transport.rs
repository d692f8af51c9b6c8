//! The seam a transport is written against.
//!
//! A transport frames inbound messages and hands each one to
//! [`Connection::accept`]; everything the server sends comes back on an
//! [`Inbox`] as typed [`Outgoing`] messages — a [`Message::Notification`] of a
//! request in flight, or the [`Message::Reply`] that ends a request, with the
//! HTTP status the protocol assigns it — so no transport parses what the
//! server wrote. stdio and Streamable HTTP (typed-mcp-http) are both written
//! with nothing but this module.
//!
//! # Both eras
//!
//! A connection serves 2026-07-28 requests and, after an `initialize`, a
//! dated client's session ([`Accepted::Initialized`]): the transport keeps
//! the [`Connection`] for the session's later messages (stdio: the pipe;
//! Streamable HTTP: the `Mcp-Session-Id`), attaches a stream for its
//! server-initiated messages ([`Connection::attach_server_stream`]), and ends
//! it ([`Connection::end_session`]). While a call of a session waits for the
//! client, its stream carries a [`Message::Request`].
//!
//! # Backpressure
//!
//! What a server holds for work it accepted but has not finished is bounded
//! (see [`ServerBuilder::max_pending`](crate::ServerBuilder::max_pending),
//! [`max_pending_bytes`](crate::ServerBuilder::max_pending_bytes) and
//! [`Outbox::with_capacity`]):
//!
//! - **Calls in flight** (waiting for a handler slot or running) are counted.
//!   A call over the count is answered at once with `-31002` (server
//!   overloaded; HTTP `503` with `Retry-After`), with its receipt, and the
//!   transport goes on reading — so a flood of small calls behind stuck
//!   handlers is shed and a `notifications/cancelled` behind it still arrives.
//! - **Bytes in flight** (the size of each accepted request, held until its
//!   reply has been written) are bounded too. A request that finds no room
//!   makes [`Connection::accept`] wait — the transport stops reading, and the
//!   peer is slowed as by TCP's own flow control — so a stream of large calls
//!   is served in little memory. Should no room free up within
//!   [`ServerBuilder::queue_timeout`](crate::ServerBuilder::queue_timeout), the
//!   request is shed instead, and so is every further one while the budget
//!   stays full: a stuck server never stops reading for good.
//! - **The outbox** is bounded in bytes: a handler's progress and log
//!   notifications wait for room, so a slow reader slows the handler instead
//!   of growing a queue. Notifications are consumed by the transport's reading
//!   side and never wait for a slot.
//!
//! # Writing a transport
//!
//! ```
//! use typed_mcp::transport::{Connection, Inbound, Message, Outbox};
//! use typed_mcp::Server;
//! use typed_mcp::declare::ToolDecl;
//! use typed_mcp::wire::CallToolResult;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::new("demo", "1.0.0")
//!     .tool(ToolDecl::builder("hi").description("Say hi.")
//!         .handler(|_args, _ctx| async { Ok(CallToolResult::text("hi")) }))
//!     .build()?;
//! let connection = Connection::new(server);
//! let (outbox, mut inbox) = Outbox::channel();
//! let request = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hi",
//!   "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!   "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//! connection.accept(request, Inbound::default(), &outbox).await;
//! match inbox.recv().await.map(|m| m.into_message()) {
//!     Some(Message::Reply(reply)) => assert_eq!(reply.http_status, 200),
//!     other => panic!("expected the reply, got {other:?}"),
//! }
//! # Ok(())
//! # }
//! ```

mod tasks;

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;
use typed_mcp_core::legacy::Handshake;
use typed_mcp_core::router::Headers;
use typed_mcp_core::{Decision, Dropped, RequestId, RouteContext, RpcError, code, encode};

use crate::context::Principal;
use crate::pipeline::registry::Registry;
use crate::server::Server;
use crate::session::LegacySession;
use tasks::Tasks;
pub use tasks::pin_in_place;

/// Default [`Outbox`] capacity: 4 MiB of queued messages.
pub const DEFAULT_OUTBOX_BYTES: usize = 4 * 1024 * 1024;

/// What a message costs in the outbox beyond its bytes (its allocation and
/// queue slot), so that many tiny messages are bounded too.
const MESSAGE_OVERHEAD: usize = 64;

/// One message the server sends, as the transport writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A notification of a request in flight (`notifications/progress`,
    /// `notifications/message`, a subscription's messages): more follows.
    Notification(Vec<u8>),
    /// The message that ends a request: its result or error. Nothing more is
    /// sent for that request.
    Reply(Reply),
    /// A request the server sends the client (on a legacy session:
    /// `elicitation/create`, `sampling/createMessage`, `roots/list`) while a
    /// call waits for its answer: more follows. Streamable HTTP must stream
    /// the call's response (SSE) to carry it.
    Request(Vec<u8>),
}

impl Message {
    /// The message's JSON text (one compact object, no trailing newline).
    pub fn body(&self) -> &[u8] {
        match self {
            Message::Notification(body) | Message::Request(body) => body,
            Message::Reply(reply) => &reply.body,
        }
    }
}

/// The final message of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reply {
    /// One compact JSON-RPC response object, without a trailing newline.
    pub body: Vec<u8>,
    /// The HTTP status Streamable HTTP sends it with (see the router's
    /// status policy): 200 for results and method-level errors, 4xx for
    /// protocol errors, 500 for internal errors, 503 when overloaded.
    pub http_status: u16,
    /// For an overloaded server, when the client should retry (HTTP
    /// `Retry-After`).
    pub retry_after: Option<Duration>,
    /// For a call refused because the caller lacks capabilities its
    /// declaration needs, which: a transport that knows the caller's
    /// credential turns this into its own challenge (an OAuth `403` naming
    /// the scopes). The body is the refusal either way.
    pub not_granted: Option<Arc<NotGranted>>,
}

/// The capabilities behind a refused call (see [`Reply::not_granted`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NotGranted {
    /// Every capability the call's declaration needs, in declaration order.
    pub required: Arc<[crate::Capability]>,
    /// Those the caller was not granted (never empty).
    pub missing: Vec<crate::Capability>,
}

impl Reply {
    /// A reply with this body and HTTP status (for a transport's own replies).
    pub fn new(body: Vec<u8>, http_status: u16) -> Self {
        Reply {
            body,
            http_status,
            retry_after: None,
            not_granted: None,
        }
    }

    /// The reply carrying `error`, with the HTTP status the protocol gives
    /// it, and for an overload (`-31002`) the delay its `data.retryAfterMs`
    /// names (one second when it names none).
    pub fn error(id: Option<&RequestId>, error: &RpcError) -> Self {
        let mut reply = Reply::new(encode::error(id, error), error.http_status());
        if error.code == code::SERVER_OVERLOADED {
            let ms = error
                .data
                .as_ref()
                .and_then(|d| d.get("retryAfterMs"))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(1000);
            reply.retry_after = Some(Duration::from_millis(ms));
        }
        reply
    }
}

/// A [`Message`] taken from an [`Inbox`]. It holds its room in the outbox
/// (and, for a reply, the request's room in the server's byte budget) until
/// it is dropped: drop it once it is written.
#[derive(Debug)]
pub struct Outgoing {
    message: Message,
    _room: Option<Room>,
    _request: Option<OwnedSemaphorePermit>,
}

impl From<Message> for Outgoing {
    /// A message of the transport's own (it holds no room).
    fn from(message: Message) -> Self {
        Outgoing {
            message,
            _room: None,
            _request: None,
        }
    }
}

impl Outgoing {
    /// The message.
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The message's JSON text.
    pub fn body(&self) -> &[u8] {
        self.message.body()
    }

    /// True for the reply that ends a request.
    pub fn is_reply(&self) -> bool {
        matches!(self.message, Message::Reply(_))
    }

    /// The message, giving its room back at once.
    pub fn into_message(self) -> Message {
        self.message
    }
}

/// A queued message's bytes in its outbox, given back when it is dropped.
struct Room {
    shared: Arc<Shared>,
    permits: u32,
}

impl std::fmt::Debug for Room {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Room")
            .field("bytes", &self.permits)
            .finish()
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        self.shared.room.add_permits(self.permits as usize);
    }
}

enum Item {
    Out(Outgoing),
    End,
}

/// What an outbox's clones and its inbox share: one allocation per stream
/// (an HTTP POST makes one), where a channel of the async runtime's took
/// three and a few kilobytes of slots for what is nearly always one reply.
struct Shared {
    queue: Mutex<Queue>,
    /// Wakes the thread in [`Inbox::blocking_recv`] (the stdio writer).
    ready: Condvar,
    /// Free bytes: a sender takes its message's cost before queueing it.
    room: Semaphore,
    capacity: usize,
}

struct Queue {
    /// The oldest item, kept inline: most streams (an HTTP POST) carry one
    /// message, queued without allocating.
    first: Option<Item>,
    /// The items after `first`, in order.
    items: VecDeque<Item>,
    /// Live [`Outbox`] clones: with none left, the drained inbox ends.
    senders: usize,
    /// False once the inbox is dropped: sends fail from then on.
    open: bool,
    /// The task waiting in [`Inbox::recv`].
    waker: Option<Waker>,
    /// True while a thread waits in [`Inbox::blocking_recv`].
    blocked: bool,
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.first.is_none() && self.items.is_empty()
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Nothing panics while holding the lock; a poisoned queue is whole.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `item` and wakes the reader; false (and `item` dropped) when
    /// the inbox is gone.
    fn push(&self, item: Item) -> bool {
        let mut queue = self.lock();
        if !queue.open {
            drop(queue);
            // Dropped outside the lock: its room goes back to the semaphore.
            drop(item);
            return false;
        }
        if queue.is_empty() {
            queue.first = Some(item);
        } else {
            queue.items.push_back(item);
        }
        self.wake(queue);
        true
    }

    /// Wakes whoever waits on `queue`, after letting go of the lock.
    fn wake(&self, mut queue: MutexGuard<'_, Queue>) {
        let waker = queue.waker.take();
        let blocked = queue.blocked;
        drop(queue);
        if let Some(waker) = waker {
            waker.wake();
        }
        if blocked {
            // `blocked` is set and cleared under the lock by the one
            // waiting thread, so this wakeup is not lost.
            self.ready.notify_one();
        }
    }

    /// The next item: what is queued, else [`Item::End`] once every sender
    /// is gone; `None` while one may still send.
    fn pop(queue: &mut Queue) -> Option<Item> {
        let queued = queue.first.take().or_else(|| queue.items.pop_front());
        queued.or((queue.senders == 0).then_some(Item::End))
    }
}

/// Where the server queues the messages of one stream (a stdio pipe, one
/// HTTP request): notifications, then replies. Bounded in bytes: a sender
/// waits for room. Cheap to clone.
pub struct Outbox {
    shared: Arc<Shared>,
}

impl Clone for Outbox {
    fn clone(&self) -> Self {
        self.shared.lock().senders += 1;
        Outbox {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        let mut queue = self.shared.lock();
        queue.senders -= 1;
        if queue.senders == 0 {
            // The reader may be waiting for a message that will never come.
            self.shared.wake(queue);
        }
    }
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox")
            .field("capacity", &self.shared.capacity)
            .field("free", &self.shared.room.available_permits())
            .finish()
    }
}

/// The receiving end of an [`Outbox`], drained by the transport.
pub struct Inbox {
    shared: Arc<Shared>,
    ended: bool,
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox").field("ended", &self.ended).finish()
    }
}

impl Outbox {
    /// A new outbox of [`DEFAULT_OUTBOX_BYTES`] and the inbox a transport
    /// drains.
    pub fn channel() -> (Outbox, Inbox) {
        Outbox::with_capacity(DEFAULT_OUTBOX_BYTES)
    }

    /// A new outbox holding at most `bytes` of queued messages (a larger
    /// message waits until the outbox is empty).
    pub fn with_capacity(bytes: usize) -> (Outbox, Inbox) {
        let capacity = bytes.clamp(
            MESSAGE_OVERHEAD,
            Semaphore::MAX_PERMITS.min(u32::MAX as usize),
        );
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                first: None,
                items: VecDeque::new(),
                senders: 1,
                open: true,
                waker: None,
                blocked: false,
            }),
            ready: Condvar::new(),
            room: Semaphore::new(capacity),
            capacity,
        });
        (
            Outbox {
                shared: shared.clone(),
            },
            Inbox {
                shared,
                ended: false,
            },
        )
    }

    /// Queues a message once there is room; false when the inbox is gone.
    pub async fn send(&self, message: Message) -> bool {
        self.send_holding(message, None).await
    }

    /// Queues a message, keeping `request` (the request's byte reservation)
    /// until the transport has written it.
    pub(crate) async fn send_holding(
        &self,
        message: Message,
        request: Option<OwnedSemaphorePermit>,
    ) -> bool {
        let cost = (message.body().len() + MESSAGE_OVERHEAD).min(self.shared.capacity) as u32;
        let Ok(permit) = self.shared.room.acquire_many(cost).await else {
            return false;
        };
        // Held by the queued message from here, given back when it is dropped.
        permit.forget();
        let room = Room {
            shared: self.shared.clone(),
            permits: cost,
        };
        self.shared.push(Item::Out(Outgoing {
            message,
            _room: Some(room),
            _request: request,
        }))
    }

    /// Ends the stream: the inbox yields what was queued before, then `None`,
    /// even while handlers still hold clones of this outbox.
    pub fn end(&self) {
        self.shared.push(Item::End);
    }

    /// True once the inbox is gone (the client went away).
    pub fn is_closed(&self) -> bool {
        !self.shared.lock().open
    }
}

impl Inbox {
    /// The next message, or `None` once the stream ended (every outbox was
    /// dropped, or [`Outbox::end`] was called).
    pub async fn recv(&mut self) -> Option<Outgoing> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// [`recv`](Self::recv) as a poll: a message is taken only when it is
    /// returned, so a `recv` dropped while it waits loses nothing.
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Outgoing>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let taken = {
            let mut queue = self.shared.lock();
            let taken = Shared::pop(&mut queue);
            if taken.is_none() {
                match &mut queue.waker {
                    Some(waker) if waker.will_wake(cx.waker()) => {}
                    slot => *slot = Some(cx.waker().clone()),
                }
            }
            taken
        };
        match taken {
            Some(item) => Poll::Ready(self.outgoing(item)),
            None => Poll::Pending,
        }
    }

    /// Like [`recv`](Self::recv), from a thread that may block (a writer
    /// thread). Must not be called from async code.
    pub fn blocking_recv(&mut self) -> Option<Outgoing> {
        if self.ended {
            return None;
        }
        let mut queue = self.shared.lock();
        loop {
            if let Some(item) = Shared::pop(&mut queue) {
                drop(queue);
                return self.outgoing(item);
            }
            queue.blocked = true;
            queue = self
                .shared
                .ready
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
            queue.blocked = false;
        }
    }

    /// The next message if one is queued now; `None` when none is, or once
    /// the stream ended.
    pub fn try_recv(&mut self) -> Option<Outgoing> {
        if self.ended {
            return None;
        }
        let item = Shared::pop(&mut self.shared.lock())?;
        self.outgoing(item)
    }

    /// True when nothing is queued now.
    pub fn is_empty(&self) -> bool {
        self.shared.lock().is_empty()
    }

    /// What a taken item answers: its message, or the end of the stream.
    fn outgoing(&mut self, item: Item) -> Option<Outgoing> {
        match item {
            Item::Out(out) => Some(out),
            Item::End => {
                self.ended = true;
                None
            }
        }
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        // Senders waiting for room would wait forever: nobody will read.
        self.shared.room.close();
        let queued = {
            let mut queue = self.shared.lock();
            queue.open = false;
            (queue.first.take(), std::mem::take(&mut queue.items))
        };
        // Dropped outside the lock: each gives its room back.
        drop(queued);
    }
}

/// Room for one request in the server's byte budget (see
/// [`Connection::reserve`]), held until its reply is written.
#[derive(Debug)]
pub struct Reservation(OwnedSemaphorePermit);

/// What the transport knows about an inbound message besides its bytes.
#[derive(Clone, Copy, Default)]
pub struct Inbound<'a> {
    headers: Option<&'a (dyn Headers + Sync)>,
    principal: Option<&'a Principal>,
}

impl std::fmt::Debug for Inbound<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbound")
            .field("headers", &self.headers.is_some())
            .field("principal", &self.principal)
            .finish()
    }
}

impl<'a> Inbound<'a> {
    /// The message's HTTP headers (the router checks the standard MCP
    /// headers against the body).
    pub fn headers(mut self, headers: &'a (dyn Headers + Sync)) -> Self {
        self.headers = Some(headers);
        self
    }

    /// The caller the transport's authentication established.
    pub fn principal(mut self, principal: Option<&'a Principal>) -> Self {
        self.principal = principal;
        self
    }
}

/// What [`Connection::accept`] did with one message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Accepted {
    /// The reply was queued at once (an error, a list, `server/discover`, a
    /// refusal, an overload).
    Answered {
        /// The reply's HTTP status.
        http_status: u16,
    },
    /// A notification: nothing will be sent.
    Dropped,
    /// An `initialize` was answered (its reply is queued): the connection is
    /// now a legacy session. Streamable HTTP keeps the connection for the
    /// session's later requests and names it in `Mcp-Session-Id`.
    Initialized {
        /// The reply's HTTP status.
        http_status: u16,
    },
    /// A handler started; its notifications and reply will follow.
    Started {
        /// The request id.
        id: RequestId,
        /// True when the request asked for notifications (a progress token,
        /// a log level, a subscription): Streamable HTTP answers it with an
        /// SSE stream.
        notifies: bool,
    },
}

/// Signals a server to stop: transports stop reading, calls in flight get
/// the server's [`drain_timeout`](crate::ServerBuilder::drain_timeout) to
/// finish and are then cancelled (each with its receipt). Cheap to clone;
/// every clone triggers the same shutdown.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    token: CancellationToken,
}

impl Shutdown {
    /// A shutdown signal not yet triggered.
    pub fn new() -> Self {
        Shutdown::default()
    }

    /// A shutdown triggered when `signal` completes (e.g.
    /// `tokio::signal::ctrl_c()`). Must be called from within a tokio runtime.
    pub fn on<F>(signal: F) -> Self
    where
        F: std::future::Future + Send + 'static,
    {
        let shutdown = Shutdown::new();
        let trigger = shutdown.clone();
        tokio::spawn(async move {
            signal.await;
            trigger.trigger();
        });
        shutdown
    }

    /// A shutdown triggered by Ctrl-C or, on unix, SIGTERM (feature
    /// `signal`). Both handlers are installed before this returns, so a
    /// SIGTERM sent once the server says it serves drains it rather than
    /// killing it. Must be called from within a tokio runtime.
    #[cfg(feature = "signal")]
    #[cfg_attr(docsrs, doc(cfg(feature = "signal")))]
    pub fn on_terminate() -> std::io::Result<Self> {
        #[cfg(unix)]
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        Ok(Shutdown::on(async move {
            // Where no Ctrl-C handler can be installed, wait for SIGTERM alone
            // rather than stopping at once.
            let ctrl_c = async {
                if tokio::signal::ctrl_c().await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            #[cfg(unix)]
            {
                let term = std::pin::pin!(term.recv());
                futures_util::future::select(std::pin::pin!(ctrl_c), term).await;
            }
            #[cfg(not(unix))]
            ctrl_c.await;
        }))
    }

    /// Triggers the shutdown.
    pub fn trigger(&self) {
        self.token.cancel();
    }

    /// True once triggered.
    pub fn is_triggered(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Completes once triggered.
    pub async fn triggered(&self) {
        self.token.cancelled().await;
    }

    /// Completes once triggered: an owned future, for APIs that want a
    /// `'static` one (e.g. axum's `with_graceful_shutdown`).
    pub fn wait(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.token.clone().cancelled_owned()
    }
}

/// What a cancellation needs of a call in flight (its entry in the
/// connection's [`InFlight`] registry).
pub(crate) struct Running {
    pub(crate) cancel: crate::cancel::CallCancel,
    /// Set once the call's task is spawned (under the registry's lock, so no
    /// cancellation sees the entry without it).
    pub(crate) abort: Option<AbortHandle>,
    /// A `subscriptions/listen` stream, ended gracefully when input ends.
    pub(crate) listen: bool,
}

/// What a legacy session keeps between its messages, apart from its calls in
/// flight: what a store shared by replicas keeps to
/// [`resume`](Connection::resume) the session elsewhere.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LegacySessionState {
    /// The negotiated revision, the client's capabilities and identity, the
    /// log level.
    pub facts: typed_mcp_core::legacy::SessionFacts,
    /// The URIs of `resources/subscribe`, in order.
    pub subscriptions: Vec<String>,
}

impl LegacySessionState {
    /// The state of a session with these facts and subscriptions.
    pub fn new(facts: typed_mcp_core::legacy::SessionFacts, subscriptions: Vec<String>) -> Self {
        LegacySessionState {
            facts,
            subscriptions,
        }
    }
}

/// Where a connection hands a client's response no request waits for.
type ForwardResponse = Box<dyn Fn(&[u8]) + Send + Sync>;

/// The calls in flight on a connection, by request id (see
/// `pipeline/registry.rs` for the rules).
pub(crate) type InFlight = Registry<RequestId, Running>;

/// One stream of inbound messages (a stdio pipe, one HTTP request, a test
/// client): routes each message, runs calls as tasks, and cancels them on
/// `notifications/cancelled`. Request ids are scoped to a connection.
///
/// A connection is also where a client of a dated revision keeps its session:
/// after `initialize`, every later message on it follows that revision (see
/// [`legacy_version`](Self::legacy_version)).
pub struct Connection {
    pub(crate) server: Server,
    pub(crate) in_flight: Arc<Mutex<InFlight>>,
    pub(crate) tasks: Tasks,
    /// The legacy session, once `initialize` succeeded.
    pub(crate) session: OnceLock<Arc<LegacySession>>,
    /// Where the session's server-initiated messages go; made when a
    /// session or a stream first needs it (a 2026-07-28 request never does).
    server_stream: OnceLock<Arc<Mutex<Option<Outbox>>>>,
    /// Where a client's response that answers no request waiting here goes
    /// (see [`forward_undelivered_responses`](Self::forward_undelivered_responses)).
    undelivered: OnceLock<ForwardResponse>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("tasks", &self.tasks.len())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// A connection to this server.
    pub fn new(server: Server) -> Self {
        Connection {
            server,
            in_flight: Arc::default(),
            tasks: Tasks::default(),
            session: OnceLock::new(),
            server_stream: OnceLock::new(),
            undelivered: OnceLock::new(),
        }
    }

    /// A connection carrying a legacy session opened elsewhere (by another
    /// replica, whose session store shared `state`): later messages of the
    /// session are served here as on the connection that answered its
    /// `initialize`. Calls in flight and requests to the client stay with
    /// the connection they started on. Must be called within a tokio runtime.
    pub fn resume(server: Server, state: LegacySessionState) -> Self {
        let connection = Connection::new(server);
        let session = LegacySession::open(
            &connection.server,
            state.facts,
            connection.server_stream().clone(),
        );
        session.replace(session.facts().as_ref().clone(), state.subscriptions);
        let _ = connection.session.set(session);
        connection
    }

    /// What this connection's legacy session would need to be resumed on
    /// another replica ([`resume`](Self::resume)); `None` without a session.
    pub fn legacy_state(&self) -> Option<LegacySessionState> {
        self.session.get().map(|s| LegacySessionState {
            facts: s.facts().as_ref().clone(),
            subscriptions: s.subscriptions(),
        })
    }

    /// Takes the session state another replica changed (its log level, its
    /// subscriptions); does nothing without a session.
    pub fn update_legacy_state(&self, state: LegacySessionState) {
        if let Some(session) = self.session.get() {
            session.replace(state.facts, state.subscriptions);
        }
    }

    /// Hands `forward` every response of the client (to a request the
    /// server sent it) that answers no request waiting on this connection:
    /// with a session shared by replicas, the call waiting for it may be on
    /// another replica's copy, which [`deliver_forwarded`](Self::deliver_forwarded)
    /// gives it to. Set once; later calls are ignored.
    pub fn forward_undelivered_responses(&self, forward: impl Fn(&[u8]) + Send + Sync + 'static) {
        let _ = self.undelivered.set(Box::new(forward));
    }

    /// Delivers a client's response that another copy of this session
    /// forwarded to the request waiting for it here; false when none waits
    /// (it is not forwarded again).
    pub fn deliver_forwarded(&self, message: &[u8]) -> bool {
        let Some(session) = self.session.get() else {
            return false;
        };
        let facts = session.facts();
        let context = RouteContext {
            headers: None,
            lists: None,
            session: Some(&facts),
        };
        match self.server.router().route(message, &context) {
            Decision::Drop(Dropped::Response(response)) => session.peer.deliver(response),
            _ => false,
        }
    }

    /// The dated revision this connection's legacy session negotiated at
    /// `initialize`; `None` before one (and for 2026-07-28 clients, which
    /// open none).
    pub fn legacy_version(&self) -> Option<String> {
        self.session.get().map(|s| s.protocol_version())
    }

    /// Sends the legacy session's server-initiated messages (the
    /// `notifications/resources/updated` of its subscriptions) to `outbox`:
    /// stdout on stdio, the session's GET stream on Streamable HTTP. False,
    /// and nothing changes, while another stream is attached and open.
    pub fn attach_server_stream(&self, outbox: Outbox) -> bool {
        let mut stream = self
            .server_stream()
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if stream.as_ref().is_some_and(|s| !s.is_closed()) {
            return false;
        }
        *stream = Some(outbox);
        true
    }

    /// Stops sending server-initiated messages (the GET stream closed);
    /// they are dropped until another stream is attached.
    pub fn detach_server_stream(&self) {
        if let Some(stream) = self.server_stream.get() {
            *stream.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    /// The slot of the session's stream, made on first use.
    fn server_stream(&self) -> &Arc<Mutex<Option<Outbox>>> {
        self.server_stream.get_or_init(Arc::default)
    }

    /// Ends the legacy session (an HTTP `DELETE`, or the transport closing):
    /// its subscriptions stop, requests to the client stop waiting, and its
    /// calls are cancelled, each with its receipt.
    pub async fn end_session(&self) {
        if let Some(session) = self.session.get() {
            session.end();
        }
        self.detach_server_stream();
        self.drain_within(Duration::ZERO).await;
    }

    /// The server this connection serves.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Routes one message and acts on the decision: a reply is queued on
    /// `outbox` now; a call starts a task that queues its notifications and
    /// reply there. Waits while the server's byte budget is full (see the
    /// module docs). Must be called from within a tokio runtime.
    pub async fn accept(&self, message: &[u8], inbound: Inbound<'_>, outbox: &Outbox) -> Accepted {
        self.accept_reserved(message, inbound, None, outbox).await
    }

    /// Reserves room for a message of `len` bytes in the server's byte
    /// budget before the transport reads it (e.g. from an HTTP
    /// `Content-Length`), waiting as [`accept`](Self::accept) would; `None`
    /// when the server is saturated (answer `503` then).
    pub async fn reserve(&self, len: usize) -> Option<Reservation> {
        self.server
            .inner
            .admission
            .reserve(len)
            .await
            .map(Reservation)
    }

    /// Like [`accept`](Self::accept), with the message's room already
    /// reserved by [`reserve`](Self::reserve).
    pub async fn accept_reserved(
        &self,
        message: &[u8],
        inbound: Inbound<'_>,
        reservation: Option<Reservation>,
        outbox: &Outbox,
    ) -> Accepted {
        let decision = {
            let lists = self.server.list_view(inbound.principal);
            let facts = self.session.get().map(|s| s.facts());
            let context = RouteContext {
                headers: inbound.headers.map(|h| h as &dyn Headers),
                lists: lists.as_deref(),
                session: facts.as_deref(),
            };
            self.server.router().route(message, &context)
        };
        match decision {
            Decision::Respond(answer) => {
                let http_status = answer.http_status;
                self.server
                    .answered(answer, inbound.principal, outbox)
                    .await;
                Accepted::Answered { http_status }
            }
            Decision::Drop(Dropped::Cancelled { request_id, reason }) => {
                if self.cancel(&request_id) {
                    tracing::debug!(%request_id, ?reason, "request cancelled by the client");
                }
                Accepted::Dropped
            }
            Decision::Drop(Dropped::Response(response)) => {
                let delivered = self.session.get().is_some_and(|s| s.peer.deliver(response));
                if !delivered {
                    match self.undelivered.get() {
                        // Another copy of the session (on another replica)
                        // may hold the waiting call.
                        Some(forward) => forward(message),
                        None => tracing::debug!(
                            "a response from the client answered no waiting request"
                        ),
                    }
                }
                Accepted::Dropped
            }
            Decision::Drop(_) => Accepted::Dropped,
            // Boxed: the handshake is large, and inline it would enlarge
            // every request's future for a message sent once per session.
            Decision::Initialize(handshake) => {
                Box::pin(self.initialize(handshake, inbound.principal, outbox)).await
            }
            Decision::Session(update) => {
                let update = *update;
                let http_status = update.response.http_status;
                if let Some(session) = self.session.get() {
                    session.apply(update.change);
                }
                self.server
                    .answered(update.response, inbound.principal, outbox)
                    .await;
                Accepted::Answered { http_status }
            }
            Decision::Invoke(call) => {
                let reserved = reservation.map(|r| r.0);
                self.start(
                    call,
                    message.len(),
                    reserved,
                    inbound.principal.cloned(),
                    outbox,
                )
                .await
            }
        }
    }

    /// Opens the legacy session an `initialize` asked for, and answers it.
    async fn initialize(
        &self,
        handshake: Box<Handshake>,
        principal: Option<&Principal>,
        outbox: &Outbox,
    ) -> Accepted {
        let handshake = *handshake;
        let http_status = handshake.response.http_status;
        let session = LegacySession::open(
            &self.server,
            handshake.session,
            self.server_stream().clone(),
        );
        // The router refuses a second initialize on a session, so the cell
        // is empty here.
        if self.session.set(session).is_err() {
            tracing::warn!("initialize on a connection that already has a session");
        }
        self.server
            .answered(handshake.response, principal, outbox)
            .await;
        Accepted::Initialized { http_status }
    }

    /// Cancels a running call: its future is dropped, its context reports
    /// cancellation, its receipt says cancelled, and nothing more is sent for
    /// it. False when no call with this id is running.
    pub fn cancel(&self, id: &RequestId) -> bool {
        let running = self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .cancel(id);
        match running {
            Some(r) => {
                r.cancel.cancel();
                if let Some(abort) = r.abort {
                    abort.abort();
                }
                true
            }
            None => false,
        }
    }

    /// The number of calls started and not yet finished.
    pub fn in_flight(&self) -> usize {
        self.tasks.len()
    }

    /// Whether this connection holds nothing that a new stream could tell
    /// from a [`Connection::new`]: no call or task in flight (no request id
    /// in use), no legacy session, no server stream, no forwarding of
    /// responses. Such a connection may serve the next stream instead of a
    /// new one (the HTTP endpoint reuses them for stateless POSTs, saving
    /// their allocations); the caller must hold its only reference, or
    /// another holder could start a call on it meanwhile.
    pub fn is_fresh(&self) -> bool {
        self.tasks.len() == 0
            && self.session.get().is_none()
            && self.server_stream.get().is_none()
            && self.undelivered.get().is_none()
            && Arc::strong_count(&self.in_flight) == 1
            && self
                .in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_empty()
    }

    /// Ends the connection's calls: open subscriptions end gracefully (each
    /// sends its final result), calls in flight get the server's
    /// [`drain_timeout`](crate::ServerBuilder::drain_timeout) to finish, and
    /// any still running then are cancelled, each with its receipt.
    pub async fn drain(&self) {
        self.drain_within(self.server.drain_timeout()).await;
    }

    /// Like [`drain`](Self::drain), with this deadline.
    pub async fn drain_within(&self, deadline: Duration) {
        for running in self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entries()
            .filter(|r| r.listen)
        {
            running.cancel.cancel();
        }
        if tokio::time::timeout(deadline, self.tasks.idle())
            .await
            .is_err()
        {
            let stuck: Vec<RequestId> = self
                .in_flight
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .ids()
                .cloned()
                .collect();
            tracing::warn!(
                calls = stuck.len(),
                ?deadline,
                "calls still running after the drain deadline: cancelling them"
            );
            for id in &stuck {
                self.cancel(id);
            }
            self.tasks.idle().await;
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some(session) = self.session.get() {
            session.end();
        }
    }
}

#[cfg(test)]
mod tests;
