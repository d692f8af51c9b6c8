//! Running what the router decides: answers go out at once, notifications are
//! consumed, and calls run as tasks under the server's concurrency limit, each
//! cancellable until its response is sent.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use futures_util::FutureExt as _;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument as _;
use typed_mcp_core::{Call, Decision, Dropped, Facts, RequestId, RpcError, Target, encode};

use crate::context::{Principal, ToolContext};
use crate::declare::Handler;
use crate::server::Server;

/// Where the messages for one request (or one whole stdio stream) go: its
/// notifications, then its response. Each message is one compact JSON object.
#[derive(Debug, Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Vec<u8>>,
}

impl Outbox {
    /// A new outbox and the receiving end a transport drains.
    pub fn channel() -> (Outbox, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Outbox { tx }, rx)
    }

    /// Queues one message; false when the receiving end is gone.
    pub fn send(&self, message: Vec<u8>) -> bool {
        self.tx.send(message).is_ok()
    }
}

/// What [`Connection::accept`] did with one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accepted {
    /// The answer was queued at once (an error, a list, `server/discover`).
    Answered {
        /// The HTTP status for Streamable HTTP.
        http_status: u16,
    },
    /// A notification: nothing will be sent.
    Dropped,
    /// A handler started; its notifications and response will follow.
    Started(RequestId),
}

struct Running {
    /// Tells this call's entry from a later call that reuses the id after a
    /// cancellation, so a finishing cancelled task never removes the newer entry.
    generation: u64,
    cancel: CancellationToken,
    abort: AbortHandle,
    /// A `subscriptions/listen` stream, ended gracefully when input ends.
    listen: bool,
}

#[derive(Default)]
struct InFlight {
    next_generation: u64,
    running: HashMap<RequestId, Running>,
}

/// One stream of inbound messages (a stdio pipe, a test client): routes each
/// message, runs calls as tasks, and cancels them on `notifications/cancelled`.
pub struct Connection {
    server: Server,
    in_flight: Arc<Mutex<InFlight>>,
    tasks: TaskTracker,
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
            tasks: TaskTracker::new(),
        }
    }

    /// Routes one message and acts on the decision: an answer is queued on
    /// `outbox` now; a call starts a task that queues its notifications and
    /// response there. Must be called from within a tokio runtime.
    pub fn accept(&self, message: &[u8], facts: &Facts<'_>, outbox: &Outbox) -> Accepted {
        let lists = self.server.list_view(None);
        let facts = Facts {
            headers: facts.headers,
            lists: lists.as_deref().or(facts.lists),
        };
        match self.server.router().route(message, &facts) {
            Decision::Answer(answer) => {
                outbox.send(answer.body);
                Accepted::Answered {
                    http_status: answer.http_status,
                }
            }
            Decision::Drop(Dropped::Cancelled { request_id, reason }) => {
                if self.cancel(&request_id) {
                    tracing::debug!(%request_id, ?reason, "request cancelled by the client");
                }
                Accepted::Dropped
            }
            Decision::Drop(Dropped::Ignored { .. }) => Accepted::Dropped,
            Decision::Invoke(call) => self.start(call, outbox),
        }
    }

    /// Starts a call the router decided to invoke, as [`accept`](Self::accept)
    /// does for [`Decision::Invoke`]: its notifications and response will be
    /// queued on `outbox`. For transports that route a message themselves to
    /// look at the [`Call`] first (e.g. Streamable HTTP, which answers with an
    /// SSE stream only when the call's `_meta` asks for progress or log
    /// messages). Must be called from within a tokio runtime.
    pub fn start(&self, call: Box<Call>, outbox: &Outbox) -> Accepted {
        self.start_as(call, outbox, None)
    }

    /// Like [`start`](Self::start), for a caller the transport authenticated
    /// (its handlers see it in [`ToolContext::principal`], and sealed state is
    /// bound to it).
    pub fn start_as(
        &self,
        call: Box<Call>,
        outbox: &Outbox,
        principal: Option<Principal>,
    ) -> Accepted {
        let id = call.id.clone();
        let listen = matches!(call.target, Target::Listen { .. });
        let cancel = CancellationToken::new();
        // The lock is held while spawning so the task cannot finish and
        // look for its entry before the entry exists.
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if in_flight.running.contains_key(&id) {
            // Two live requests with one id could not be told apart by
            // the client or by a cancellation.
            let error = RpcError::invalid_request(format!(
                "request id {id} is already in use by a request in flight"
            ));
            outbox.send(encode::error(Some(&id), &error));
            return Accepted::Answered { http_status: 400 };
        }
        in_flight.next_generation += 1;
        let generation = in_flight.next_generation;
        let server = self.server.clone();
        let registry = self.in_flight.clone();
        let outbox = outbox.clone();
        let token = cancel.clone();
        // Opened now, while the transport's span is current and before the
        // call may wait for a slot: a call cancelled while queued still
        // leaves its receipt.
        let (record, trace) = server.open_record(&call, principal.as_ref(), &cancel);
        let record = match server.check_grants(&call, principal.as_ref(), record) {
            Ok(record) => record,
            Err(refusal) => {
                outbox.send(refusal);
                return Accepted::Answered { http_status: 200 };
            }
        };
        let span = record.span().clone();
        let handle = self.tasks.spawn(
            async move {
                // A subscription lives as long as the client listens: it must not
                // hold one of the handler slots.
                let _permit = if listen {
                    None
                } else {
                    Some(server.acquire_slot().await)
                };
                let Call {
                    id,
                    meta,
                    target,
                    input_responses,
                    request_state,
                } = *call;
                let ctx = ToolContext::new(
                    id.clone(),
                    meta,
                    token,
                    outbox.clone(),
                    input_responses,
                    principal,
                    server.redactor().clone(),
                );
                ctx.set_trace(trace);
                let response = server
                    .invoke(&id, target, request_state, ctx.clone(), record)
                    .await;
                // No secret value leaves in a result or an error message.
                let response = match server.redactor().redact_json(&response) {
                    std::borrow::Cow::Borrowed(_) => response,
                    std::borrow::Cow::Owned(redacted) => redacted,
                };
                ctx.finish();
                let mut in_flight = registry.lock().unwrap_or_else(|e| e.into_inner());
                let ours = in_flight
                    .running
                    .get(&id)
                    .is_some_and(|r| r.generation == generation);
                // A cancelled call has lost its entry: nothing is sent for it.
                if ours {
                    in_flight.running.remove(&id);
                    outbox.send(response);
                }
            }
            .instrument(span),
        );
        in_flight.running.insert(
            id.clone(),
            Running {
                generation,
                cancel,
                abort: handle.abort_handle(),
                listen,
            },
        );
        Accepted::Started(id)
    }

    /// Cancels a running call: its future is dropped, its context reports
    /// cancellation, and nothing more is sent for it. False when no call with
    /// this id is running.
    pub fn cancel(&self, id: &RequestId) -> bool {
        let running = self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .running
            .remove(id);
        match running {
            Some(r) => {
                r.cancel.cancel();
                r.abort.abort();
                true
            }
            None => false,
        }
    }

    /// The number of calls started and not yet finished.
    pub fn in_flight(&self) -> usize {
        self.tasks.len()
    }

    /// Waits for every started call to finish. Open subscriptions are ended
    /// gracefully first: each sends its final result.
    pub async fn drain(&self) {
        for running in self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .running
            .values()
            .filter(|r| r.listen)
        {
            running.cancel.cancel();
        }
        self.tasks.close();
        self.tasks.wait().await;
        self.tasks.reopen();
    }
}

/// Runs a handler, async or blocking, inside its context; a panic becomes
/// `Err` with the panic's message.
pub(crate) async fn run_handler<I: Send + 'static, O: Send + 'static>(
    handler: &Handler<I, O>,
    input: I,
    ctx: ToolContext,
) -> Result<O, String> {
    match handler {
        Handler::Async(f) => {
            let f = f.clone();
            let scoped = ctx.clone();
            // Code a handler runs before its first await sees the context too.
            let future = std::panic::catch_unwind(AssertUnwindSafe(move || {
                let inner = ctx.clone();
                ctx.enter(|| f(input, inner))
            }))
            .map_err(panic_message)?;
            AssertUnwindSafe(scoped.run_in(future))
                .catch_unwind()
                .await
                .map_err(panic_message)
        }
        Handler::Blocking(f) => {
            let f = f.clone();
            tokio::task::spawn_blocking(move || {
                let inner = ctx.clone();
                ctx.enter(|| f(input, inner))
            })
            .await
            .map_err(|e| {
                if e.is_panic() {
                    panic_message(e.into_panic())
                } else {
                    "the blocking task was cancelled".to_owned()
                }
            })
        }
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}
