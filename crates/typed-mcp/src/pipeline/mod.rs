//! The call pipeline: what happens to every message a transport hands to
//! [`Connection::accept`], on every transport, in this order.
//!
//! 1. **frame** — the transport's job (newline-delimited on stdio, one POST
//!    body on HTTP), bounded by `max_message_bytes`.
//! 2. **route** — [`Router::route`](typed_mcp_core::Router::route): the
//!    numbered ladder of protocol rules, a pure function.
//! 3. **span** — every request gets one `mcp.request` span continuing
//!    `_meta.traceparent` as soon as the envelope parsed: calls, and the
//!    requests the router answers itself (`server/discover`, the lists,
//!    every protocol error).
//! 4. **record** — every request that names a declaration opens its
//!    receipt, refusals included: the router's (`-32020`, `-32021`, a
//!    malformed `inputResponses`, …), the grants', the overload's and the
//!    application layers'.
//! 5. **grants** — a call whose declaration needs a capability the caller
//!    lacks is refused here, before it costs a slot.
//! 6. **admission** — the call counts against `max_pending` (over it: shed
//!    with `-31002`) and its bytes against `max_pending_bytes` (the transport
//!    waits for room; see [`transport`](crate::transport)).
//! 7. **slot** — one of `max_concurrent` handler slots. A blocking handler
//!    holds its slot until its thread returns, even after a timeout or a
//!    cancellation dropped the call.
//! 8. **context** — the [`ToolContext`] of the call (task-local).
//! 9. **deadline** — the declaration's timeout or the server's
//!    `default_timeout`, for tools, resources, prompts and completers alike.
//! 10. **layers** — the application's tower layers
//!     ([`ServerBuilder::layer`](crate::ServerBuilder::layer)). They sit
//!     inside the governance stages, so no layer can skip a grant check, a
//!     receipt or redaction; a call a layer refuses is answered and recorded.
//! 11. **handler** — the application's function; a panic is caught.
//! 12. **output** — the handler's value mapped to its wire result.
//! 13. **redaction** — the one exit every byte leaves by: results, errors,
//!     notifications and subscription messages; panic reports go through the
//!     process's panic hook, which redacts them too.
//! 14. **receipt** — the outcome recorded, exactly once per call.
//! 15. **encode** — a typed [`Message`](crate::transport::Message) to the
//!     transport's [`Outbox`].

mod extension;
mod heartbeat;
mod invoke;
mod record;
pub(crate) mod registry;
mod task;

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use futures_util::FutureExt as _;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt as _;
use tracing::Instrument as _;
use typed_mcp_core::legacy::{downgrade_message, is_legacy_version};
use typed_mcp_core::{Call, RequestId, Response, RpcError, Target, code};

pub(crate) use record::CallRecord;

use crate::cancel::CallCancel;
use crate::context::{Principal, ToolContext};
use crate::declare::{Handler, holding_slot};
use crate::middleware::{BoxError, HandlerCall, HandlerDone};
use crate::receipt::Outcome;
use crate::secret::Redactor;
use crate::server::Server;
use crate::transport::{Accepted, Connection, Message, Outbox, Reply, Running, pin_in_place};

/// A handler slot, held by the call's task, or for a blocking handler by its
/// thread (so a call dropped at its deadline keeps the slot until the thread
/// returns). `None` for a subscription.
pub(crate) type Slot = Option<OwnedSemaphorePermit>;

/// How the handler stage ended without the handler's value.
pub(crate) enum Stopped {
    Panicked(String),
    TimedOut(Duration),
    Refused(BoxError),
    /// A legacy client could not be asked for the input the handler needs
    /// (undeclared capability, no session, no answer): why.
    NoInput(String),
}

/// What the handler stage of one call is: its deadline, and the method and
/// declaration for the application's layers.
#[derive(Clone, Copy)]
struct Stage<'a> {
    timeout: Option<Duration>,
    method: &'static str,
    name: &'a str,
    /// The handler can answer `NeedsInput` (a tool's declared return type
    /// says; resources and prompts always can).
    may_ask: bool,
}

/// The server's bound on accepted, unfinished work (see the transport
/// module's docs).
pub(crate) struct Admission {
    pending: AtomicUsize,
    max_pending: usize,
    bytes: Arc<Semaphore>,
    max_bytes: usize,
    /// Set when a request waited `queue_timeout` for room in vain; while
    /// set, requests that find no room are shed at once.
    saturated: AtomicBool,
    queue_timeout: Duration,
}

impl Admission {
    pub(crate) fn new(max_pending: usize, max_bytes: usize, queue_timeout: Duration) -> Self {
        Admission {
            pending: AtomicUsize::new(0),
            max_pending,
            bytes: Arc::new(Semaphore::new(max_bytes)),
            max_bytes,
            saturated: AtomicBool::new(false),
            queue_timeout,
        }
    }

    /// Room for `len` bytes, waiting for it within `queue_timeout` unless the
    /// budget has already been found stuck.
    pub(crate) async fn reserve(&self, len: usize) -> Option<OwnedSemaphorePermit> {
        // A message larger than the whole budget waits for all of it.
        let cost = len.clamp(1, self.max_bytes) as u32;
        if let Ok(permit) = self.bytes.clone().try_acquire_many_owned(cost) {
            self.saturated.store(false, Ordering::Relaxed);
            return Some(permit);
        }
        if self.saturated.load(Ordering::Relaxed) {
            return None;
        }
        let wait = self.bytes.clone().acquire_many_owned(cost);
        match tokio::time::timeout(self.queue_timeout, wait).await {
            Ok(Ok(permit)) => Some(permit),
            _ => {
                self.saturated.store(true, Ordering::Relaxed);
                None
            }
        }
    }
}

/// A call past the grants and admission, ready to run.
struct Admitted {
    call: Box<Call>,
    record: CallRecord,
    trace: crate::trace::TraceContext,
    cancel: CallCancel,
    pending: Option<Pending>,
    bytes: Option<OwnedSemaphorePermit>,
    principal: Option<Principal>,
    listen: bool,
    notifies: bool,
}

/// One call counted against `max_pending`, until dropped.
struct Pending(Server);

impl Drop for Pending {
    fn drop(&mut self) {
        self.0
            .inner
            .admission
            .pending
            .fetch_sub(1, Ordering::Relaxed);
    }
}

impl Server {
    /// Counts a call against `max_pending`; `None` when the server is full.
    fn count_pending(&self) -> Option<Pending> {
        let admission = &self.inner.admission;
        let before = admission.pending.fetch_add(1, Ordering::Relaxed);
        let pending = Pending(self.clone());
        (before < admission.max_pending).then_some(pending)
    }

    /// Records a request the router answered (its span, and its receipt when
    /// it named a declaration), then queues the answer.
    pub(crate) async fn answered(
        &self,
        answer: Response,
        principal: Option<&Principal>,
        outbox: &Outbox,
    ) {
        if let Some(request) = &answer.request {
            let record = self.open_answered(request, principal);
            record.finish(match request.error_code {
                Some(code) => Outcome::Error { code },
                None => Outcome::Completed,
            });
        }
        // The router may echo what the request named (an unknown tool, a
        // URI): it leaves by the same redacting exit as every other reply.
        let body = match self.redactor().redact_json(&answer.body) {
            std::borrow::Cow::Owned(redacted) => redacted,
            std::borrow::Cow::Borrowed(_) => answer.body,
        };
        outbox
            .send(Message::Reply(Reply::new(body, answer.http_status)))
            .await;
    }

    /// Runs the handler stage: deadline → the application's layers →
    /// handler, with the panic caught.
    async fn run_stage<I: Send + 'static, O: Send + 'static>(
        &self,
        handler: &Handler<I, O>,
        input: I,
        ctx: &ToolContext,
        slot: Slot,
        stage: Stage<'_>,
    ) -> Result<O, Stopped> {
        if let Some(limit) = stage.timeout {
            ctx.set_deadline(tokio::time::Instant::now() + limit);
        }
        // The common case — no layers, no deadline — awaits the handler
        // directly (made in place: a handler future held in a local would
        // be stored twice, once more for its await); the rest is boxed so
        // that it does not grow every call's future (and every spawn's copy
        // of it).
        if self.inner.layers.is_none() && stage.timeout.is_none() {
            return run_handler(handler.clone(), input, ctx.clone(), slot)
                .await
                .map_err(Stopped::Panicked);
        }
        Box::pin(self.run_bounded_stage(handler, input, ctx, slot, stage)).await
    }

    /// The handler stage under the application's layers or a deadline.
    async fn run_bounded_stage<I: Send + 'static, O: Send + 'static>(
        &self,
        handler: &Handler<I, O>,
        input: I,
        ctx: &ToolContext,
        slot: Slot,
        stage: Stage<'_>,
    ) -> Result<O, Stopped> {
        let Stage {
            timeout,
            method,
            name,
            ..
        } = stage;
        let run = run_handler(handler.clone(), input, ctx.clone(), slot);
        let layered = async {
            match &self.inner.layers {
                None => run.await.map_err(Stopped::Panicked),
                Some(service) => {
                    let service = service.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    let call = HandlerCall::new(
                        method,
                        name,
                        ctx.clone(),
                        Box::pin(async move { HandlerDone::new(run.await) }),
                    );
                    match service.oneshot(call).await {
                        Ok(done) => match done.into_inner::<Result<O, String>>() {
                            Some(result) => result.map_err(Stopped::Panicked),
                            None => Err(Stopped::Refused(
                                "a layer answered with another call's result".into(),
                            )),
                        },
                        Err(error) => Err(Stopped::Refused(error)),
                    }
                }
            }
        };
        let bounded = async move {
            match timeout {
                Some(limit) => tokio::time::timeout(limit, layered)
                    .await
                    .unwrap_or(Err(Stopped::TimedOut(limit))),
                None => layered.await,
            }
        };
        bounded.await
    }
}

/// The JSON-RPC error of a call a layer refused: the layer's own
/// [`RpcError`] when it returned one, else `-31003` with its message.
fn layer_refusal(error: BoxError) -> RpcError {
    match error.downcast::<RpcError>() {
        Ok(error) => *error,
        Err(error) => RpcError::new(
            code::REFUSED_BY_LAYER,
            format!("the call was refused: {error}"),
        ),
    }
}

impl Connection {
    /// Starts a call the router decided to invoke: grants, admission, then a
    /// task that waits for a slot and runs the handler stage.
    pub(crate) async fn start(
        &self,
        call: Box<Call>,
        len: usize,
        reserved: Option<OwnedSemaphorePermit>,
        principal: Option<Principal>,
        outbox: &Outbox,
    ) -> Accepted {
        let id = call.id.clone();
        let listen = matches!(call.target, Target::Listen { .. });
        let notifies =
            listen || call.meta.progress_token.is_some() || call.meta.log_level.is_some();
        let server = &self.server;
        let cancel = CallCancel::new();
        // Opened now, while the transport's span is current and before the
        // call may wait for a slot: a call cancelled while queued still
        // leaves its receipt.
        let (record, trace) = server.open_record(&call, principal.as_ref(), &cancel);
        // The refusal, shedding and duplicate paths below are boxed: they are
        // rare, and their futures inline would make this one (held in every
        // transport's request future) several times larger.
        let record = match server.check_grants(&call, principal.as_ref(), record) {
            Ok(record) => record,
            Err(refusal) => {
                Box::pin(outbox.send(Message::Reply(refusal))).await;
                return Accepted::Answered { http_status: 200 };
            }
        };
        // A subscription lives as long as the client listens: it holds no
        // slot and is not counted as pending work.
        let (pending, bytes) = if listen {
            (None, None)
        } else {
            let Some(pending) = server.count_pending() else {
                return Box::pin(self.shed(&id, record, "too many calls in flight", outbox)).await;
            };
            let bytes = match reserved {
                Some(bytes) => bytes,
                None => match server.inner.admission.reserve(len).await {
                    Some(bytes) => bytes,
                    None => {
                        return Box::pin(self.shed(
                            &id,
                            record,
                            "too many bytes in flight",
                            outbox,
                        ))
                        .await;
                    }
                },
            };
            (Some(pending), Some(bytes))
        };
        let admitted = Admitted {
            call,
            record,
            trace,
            cancel,
            pending,
            bytes,
            principal,
            listen,
            notifies,
        };
        match self.spawn_call(admitted, outbox) {
            Ok(accepted) => accepted,
            // Two live requests with one id could not be told apart by the
            // client or by a cancellation.
            Err(record) => Box::pin(self.duplicate(&id, *record, outbox)).await,
        }
    }

    /// Registers an admitted call and spawns its task; `Err` when its id is
    /// already in use by a call in flight.
    fn spawn_call(&self, admitted: Admitted, outbox: &Outbox) -> Result<Accepted, Box<CallRecord>> {
        let Admitted {
            call,
            record,
            trace,
            cancel,
            pending,
            bytes,
            principal,
            listen,
            notifies,
        } = admitted;
        let id = call.id.clone();
        let cancelled = cancel.clone();
        let entry = Running {
            cancel: cancel.clone(),
            abort: None,
            listen,
        };
        let Ok(generation) = self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .register(id.clone(), entry)
        else {
            return Err(Box::new(record));
        };
        let task_server = self.server.clone();
        let session = self.session.get().cloned();
        let registry = self.in_flight.clone();
        let outbox = outbox.clone();
        let token = cancel;
        let span = record.span().clone();
        // Boxed: tokio moves a task's future into its cell and moves the
        // cell's stage again when the task completes, so an unboxed call
        // future (several KB: the slot wait, the context, the heartbeat, the
        // reply's send) would be copied each time; boxed, it is a pointer.
        // Polled here first: a call done in its first poll is never spawned.
        let spawned = self.tasks.run_or_spawn(pin_in_place(|| {
            async move {
                let server = task_server;
                let _pending = pending;
                let slot = if listen {
                    None
                } else {
                    Some(server.acquire_slot().await)
                };
                // In a block: the envelope (200+ bytes) is moved into the
                // context, and a binding alive to the end of the body would
                // keep its room in this future across every await below,
                // past the allocator's fast path for small blocks (~1 KB).
                let (id, target, request_state, task, task_cancel, ctx) = {
                    let Call {
                        id,
                        meta,
                        target,
                        input_responses,
                        request_state,
                    } = *call;
                    // A call that runs as a task outlives its request: it gets
                    // a cancellation of its own, and no stream to notify on.
                    let task = server.task_support_for(&target, &meta);
                    let task_cancel = task.map(|_| CallCancel::new());
                    let ctx = ToolContext::new(
                        id.clone(),
                        meta,
                        task_cancel.clone().unwrap_or_else(|| token.clone()),
                        match task {
                            Some(_) => Outbox::channel().0,
                            None => outbox.clone(),
                        },
                        input_responses,
                        principal,
                        server.redactor().clone(),
                        Some(trace),
                    );
                    (id, target, request_state, task, task_cancel, ctx)
                };
                // A tool's result comes back already in its era's shape (the
                // hot path); the other kinds are shaped here.
                let legacy = is_legacy_version(&ctx.meta().protocol_version)
                    && !matches!(target, Target::Tool { .. });
                // Boxed: the handler stage's future holds every kind of call,
                // a legacy call's rounds and the layers (3.4 KB), and a task's
                // future is copied by its spawn several times and once more
                // when it completes; with the box, one allocation instead
                // (measured: about two thirds of a stdio call's instructions).
                let mut reply = match (task, task_cancel) {
                    (Some(support), Some(task_cancel)) => {
                        Box::pin(server.call_as_task(
                            &id,
                            target,
                            request_state,
                            ctx.clone(),
                            task_cancel,
                            token,
                            record,
                            slot,
                            support,
                        ))
                        .await
                    }
                    _ => {
                        let interval = server.inner.heartbeat.filter(|_| !listen);
                        let call = pin_in_place(|| {
                            server.invoke(
                                &id,
                                target,
                                request_state,
                                ctx.clone(),
                                record,
                                slot,
                                session.as_ref(),
                            )
                        });
                        heartbeat::with_heartbeat(&ctx, interval, call).await
                    }
                };
                // A dated client gets the result in its revision's shape.
                if legacy {
                    let version = &ctx.meta().protocol_version;
                    if let std::borrow::Cow::Owned(shaped) = downgrade_message(&reply.body, version)
                    {
                        reply.body = shaped;
                    }
                }
                // No secret value leaves in a result or an error message.
                if let std::borrow::Cow::Owned(redacted) =
                    server.redactor().redact_json(&reply.body)
                {
                    reply.body = redacted;
                }
                ctx.finish();
                let ours = registry
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .finish(&id, generation);
                // A cancelled call has lost its entry: nothing is sent for it.
                if ours {
                    outbox.send_holding(Message::Reply(reply), bytes).await;
                }
            }
            .instrument(span)
        }));
        if let Some(handle) = spawned {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            match in_flight.entry_mut(&id, generation) {
                Some(entry) => entry.abort = Some(handle.abort_handle()),
                // Cancelled (from another thread) during its first poll:
                // stopped as a cancellation stops a spawned call, by dropping
                // its future. Without a cancellation the entry is gone because
                // the call finished and waits to queue its answer: it runs on.
                None if cancelled.is_cancelled() => handle.abort(),
                None => {}
            }
        }
        Ok(Accepted::Started { id, notifies })
    }

    /// Answers a call whose id is already in use by a call in flight.
    async fn duplicate(&self, id: &RequestId, record: CallRecord, outbox: &Outbox) -> Accepted {
        let error = RpcError::invalid_request(format!(
            "request id {id} is already in use by a request in flight"
        ));
        let outcome = Outcome::Error { code: error.code };
        refuse(id, record, outcome, &error, outbox).await
    }

    /// Answers a call the server has no room for, with its receipt.
    async fn shed(
        &self,
        id: &RequestId,
        record: CallRecord,
        why: &str,
        outbox: &Outbox,
    ) -> Accepted {
        tracing::debug!(request_id = %id, why, "shed a call: the server is overloaded");
        let error = RpcError::overloaded(
            format!("the server is overloaded ({why}); retry later"),
            1000,
        );
        refuse(id, record, Outcome::Overloaded, &error, outbox).await
    }
}

/// Answers a call with `error` before it runs, recording `outcome`.
async fn refuse(
    id: &RequestId,
    record: CallRecord,
    outcome: Outcome,
    error: &RpcError,
    outbox: &Outbox,
) -> Accepted {
    record.finish(outcome);
    let reply = Reply::error(Some(id), error);
    let http_status = reply.http_status;
    outbox.send(Message::Reply(reply)).await;
    Accepted::Answered { http_status }
}

/// Runs a handler inside its context; a panic becomes `Err` with the panic's
/// message. The handler holds `slot` until its future is done or dropped,
/// unless [`blocking`](crate::blocking) work takes it along to its thread.
async fn run_handler<I: Send + 'static, O: Send + 'static>(
    handler: Handler<I, O>,
    input: I,
    ctx: ToolContext,
    slot: Slot,
) -> Result<O, String> {
    let scoped = ctx.clone();
    // Code a handler runs before its first await sees the context too.
    let future = std::panic::catch_unwind(AssertUnwindSafe(move || {
        let inner = ctx.clone();
        ctx.enter(|| handler(input, inner))
    }))
    .map_err(panic_message)?;
    AssertUnwindSafe(holding_slot(slot, scoped.run_in(future)))
        .catch_unwind()
        .await
        .map_err(panic_message)
}

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}

/// The redactors of every server that serves in this process, which the
/// panic hook applies to a panic's message.
static PANIC_REDACTORS: Mutex<Vec<Redactor>> = Mutex::new(Vec::new());

/// At most this many redactors are kept for the panic hook (a process that
/// builds servers in a loop must not grow the list without bound).
const MAX_PANIC_REDACTORS: usize = 64;

/// Registers a built server's secrets with the process's panic hook, which is
/// installed once: a panic whose message holds no registered secret goes to
/// the previous hook as before; one that holds one is printed redacted.
pub(crate) fn install_panic_hook(server: &Server) {
    static INSTALL: Once = Once::new();
    let redactor = server.redactor();
    if !redactor.is_empty() {
        let mut redactors = PANIC_REDACTORS.lock().unwrap_or_else(|e| e.into_inner());
        if !redactors.iter().any(|r| r.same_as(redactor)) {
            if redactors.len() >= MAX_PANIC_REDACTORS {
                redactors.remove(0);
            }
            redactors.push(redactor.clone());
        }
    }
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| info.payload().downcast_ref::<String>().cloned());
            let redacted = message.as_deref().and_then(|message| {
                let redactors = PANIC_REDACTORS.lock().unwrap_or_else(|e| e.into_inner());
                let mut text = std::borrow::Cow::Borrowed(message);
                for redactor in redactors.iter() {
                    if let std::borrow::Cow::Owned(r) = redactor.redact_str(&text) {
                        text = std::borrow::Cow::Owned(r);
                    }
                }
                match text {
                    std::borrow::Cow::Owned(text) => Some(text),
                    std::borrow::Cow::Borrowed(_) => None,
                }
            });
            match redacted {
                None => previous(info),
                Some(text) => {
                    let thread = std::thread::current();
                    let location = info
                        .location()
                        .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
                        .unwrap_or_default();
                    eprintln!(
                        "thread '{}' panicked{location}:\n{text}\n(message redacted: it held a secret value)",
                        thread.name().unwrap_or("<unnamed>")
                    );
                }
            }
        }));
    });
}
