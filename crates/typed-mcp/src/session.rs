//! The legacy session of a [`Connection`](crate::transport::Connection): what a
//! client of a dated revision (2025-11-25 and older) opened with
//! `initialize`, and what the server keeps for it.
//!
//! - its [`SessionFacts`] (revision, declared client capabilities, log
//!   level), which the router reads for every later message;
//! - its resource subscriptions, fed from the same
//!   [`ResourceUpdates`](crate::ResourceUpdates) broadcast as
//!   `subscriptions/listen`, sent as `notifications/resources/updated` on
//!   the session's server stream (stdout on stdio, the GET stream on HTTP);
//! - its [`Peer`]: the requests the server sends the client
//!   (`elicitation/create`, `sampling/createMessage`, `roots/list`) for a
//!   handler's [`NeedsInput`](crate::NeedsInput), and the answers awaited.

use std::collections::{BTreeSet, HashMap};
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::{Either, select};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use typed_mcp_core::legacy::{ClientResponse, SessionChange, SessionFacts};
use typed_mcp_core::wire::methods;
use typed_mcp_core::{RequestId, RpcError, encode};

use crate::server::Server;
use crate::subscribe::{Received, UpdateReceiver, concerns};
use crate::transport::{Message, Outbox};

/// At most this many requests to the client wait for an answer at once on
/// one session; a handler asking beyond it is told so.
const MAX_WAITING: usize = 64;

/// One legacy session.
pub(crate) struct LegacySession {
    /// Shared with the router for each message without a copy; replaced
    /// (copy on write) only by `logging/setLevel`.
    facts: Mutex<Arc<SessionFacts>>,
    subscriptions: Mutex<BTreeSet<String>>,
    pub(crate) peer: Peer,
    /// Where server-initiated messages go (stdout, or an HTTP GET stream).
    stream: Arc<Mutex<Option<Outbox>>>,
    /// Ends the session's update forwarder.
    ended: CancellationToken,
}

impl std::fmt::Debug for LegacySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySession")
            .field("facts", &self.facts())
            .finish_non_exhaustive()
    }
}

impl LegacySession {
    /// Opens a session and starts forwarding the resource updates it
    /// subscribes to onto `stream`. Must be called within a tokio runtime.
    pub(crate) fn open(
        server: &Server,
        facts: SessionFacts,
        stream: Arc<Mutex<Option<Outbox>>>,
    ) -> Arc<Self> {
        let session = Arc::new(LegacySession {
            facts: Mutex::new(Arc::new(facts)),
            subscriptions: Mutex::default(),
            peer: Peer::default(),
            stream,
            ended: CancellationToken::new(),
        });
        // Subscribed before `initialize` is answered, so no update published
        // after a `resources/subscribe` is answered can be missed.
        let updates = server.resource_updates().subscribe();
        tokio::spawn(forward_updates(
            Arc::downgrade(&session),
            updates,
            session.ended.clone(),
        ));
        session
    }

    /// The facts, for the router (a reference count, not a copy).
    pub(crate) fn facts(&self) -> Arc<SessionFacts> {
        self.facts.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The negotiated revision.
    pub(crate) fn protocol_version(&self) -> String {
        self.facts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .protocol_version
            .clone()
    }

    /// Applies a change the router accepted.
    pub(crate) fn apply(&self, change: SessionChange) {
        match change {
            SessionChange::LogLevel(level) => {
                let mut facts = self.facts.lock().unwrap_or_else(|e| e.into_inner());
                Arc::make_mut(&mut facts).log_level = Some(level);
            }
            SessionChange::Subscribe(uri) => {
                self.subscriptions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(uri);
            }
            SessionChange::Unsubscribe(uri) => {
                self.subscriptions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&uri);
            }
            _ => {}
        }
    }

    /// The subscriptions, in order.
    pub(crate) fn subscriptions(&self) -> Vec<String> {
        self.all_subscribed()
    }

    /// Takes another copy's facts and subscriptions (the session was changed
    /// on another replica).
    pub(crate) fn replace(&self, facts: SessionFacts, subscriptions: Vec<String>) {
        *self.facts.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(facts);
        *self.subscriptions.lock().unwrap_or_else(|e| e.into_inner()) =
            subscriptions.into_iter().collect();
    }

    /// Ends the session: its forwarder stops, and requests waiting for the
    /// client's answer fail.
    pub(crate) fn end(&self) {
        self.ended.cancel();
        self.peer.fail_all();
    }

    fn subscribed(&self, published: &str) -> bool {
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|s| concerns(s, published))
    }

    fn all_subscribed(&self) -> Vec<String> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    async fn notify_updated(&self, uri: &str) {
        let stream = self
            .stream
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        // Without a server stream (an HTTP session with no GET open) the
        // update has nowhere to go; the client re-reads when it reconnects.
        if let Some(stream) = stream {
            // The dated shape: the URI alone (no subscription id).
            let body = encode::notification(methods::RESOURCES_UPDATED, &json!({ "uri": uri }));
            stream.send(Message::Notification(body)).await;
        }
    }
}

impl Drop for LegacySession {
    fn drop(&mut self) {
        self.ended.cancel();
    }
}

/// Sends `notifications/resources/updated` for the session's subscriptions
/// until the session ends.
async fn forward_updates(
    session: std::sync::Weak<LegacySession>,
    mut updates: UpdateReceiver,
    ended: CancellationToken,
) {
    loop {
        let update = match select(pin!(ended.cancelled()), pin!(updates.recv())).await {
            Either::Left(((), _)) => return,
            Either::Right((update, _)) => update,
        };
        let Some(session) = session.upgrade() else {
            return;
        };
        match update {
            Received::Updated(published) if session.subscribed(&published) => {
                session.notify_updated(&published).await;
            }
            // Task status notifications are a 2026-07-28 listen's.
            Received::Updated(_) | Received::Task(_) => {}
            // Fell behind, or the update bus reconnected: every subscribed
            // resource may have changed.
            Received::Resynchronize => {
                for uri in session.all_subscribed() {
                    session.notify_updated(&uri).await;
                }
            }
            Received::Closed => return,
        }
    }
}

/// The requests a legacy session's server sent its client, awaiting answers.
pub(crate) struct Peer {
    next_id: AtomicU64,
    waiting: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, RpcError>>>>,
}

impl Default for Peer {
    fn default() -> Self {
        // Ids start at a random point (below 2^52, so they stay exact in
        // any JSON reader): copies of one session on several replicas
        // (a shared session store) do not hand out the same ids.
        let mut start = [0u8; 8];
        getrandom::fill(&mut start[2..]).expect("the operating system's random source failed");
        Peer {
            next_id: AtomicU64::new(u64::from_be_bytes(start) >> 4),
            waiting: Mutex::default(),
        }
    }
}

impl Peer {
    /// Sends one request on `outbox` (the stream of the call that needs the
    /// answer) and waits for the client's answer, at most `wait`, or until
    /// `cancel` fires.
    pub(crate) async fn request(
        &self,
        outbox: &Outbox,
        redact: impl FnOnce(Vec<u8>) -> Vec<u8>,
        method: &str,
        params: &Value,
        cancel: &CancellationToken,
        wait: Duration,
    ) -> Result<Value, String> {
        let next = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let id = RequestId::integer(i64::try_from(next).unwrap_or(i64::MAX));
        let (tx, rx) = oneshot::channel();
        {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            if waiting.len() >= MAX_WAITING {
                return Err(format!(
                    "{MAX_WAITING} requests to the client are already waiting for answers on this session"
                ));
            }
            waiting.insert(id.clone(), tx);
        }
        let message = json!({"jsonrpc": "2.0", "id": &id, "method": method, "params": params});
        let body = redact(serde_json::to_vec(&message).unwrap_or_default());
        if !outbox.send(Message::Request(body)).await {
            self.forget(&id);
            return Err("the client's stream closed before the request could be sent".into());
        }
        let answer = async {
            match tokio::time::timeout(wait, rx).await {
                Ok(Ok(answer)) => answer.map_err(|e| {
                    format!(
                        "the client answered {method} with error {}: {}",
                        e.code, e.message
                    )
                }),
                Ok(Err(_)) => Err(format!(
                    "the session ended before the client answered {method}"
                )),
                Err(_) => Err(format!(
                    "the client did not answer {method} within {} s",
                    wait.as_secs()
                )),
            }
        };
        let outcome = match select(pin!(cancel.cancelled()), pin!(answer)).await {
            Either::Left(((), _)) => Err("the call was cancelled".into()),
            Either::Right((outcome, _)) => outcome,
        };
        self.forget(&id);
        outcome
    }

    /// Hands the client's answer to the request waiting for it; false when
    /// none waits (an unknown id, or one that already timed out).
    pub(crate) fn deliver(&self, response: ClientResponse) -> bool {
        let waiter = self
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&response.id);
        match waiter {
            Some(tx) => tx.send(response.outcome).is_ok(),
            None => false,
        }
    }

    fn forget(&self, id: &RequestId) {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    fn fail_all(&self) {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}
