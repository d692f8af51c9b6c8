//! Legacy Streamable HTTP sessions: what an `initialize` opened, kept under
//! the `Mcp-Session-Id` the server gave it.
//!
//! A [`Session`] is the [`Connection`] that answered the client's
//! `initialize`, shared by every later request naming it: its negotiated
//! revision, log level, resource subscriptions, calls in flight (ids are
//! scoped to the session, so a `notifications/cancelled` in one POST cancels
//! a call of another) and the requests the server sent the client. Sessions
//! live in a [`SessionStore`]; the default is a [`MemorySessionStore`],
//! bounded in count and idle time.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use typed_mcp::Principal;
use typed_mcp::transport::Connection;

/// Default [`MemorySessionStore`] bound: sessions open at once.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// Default idle time after which a [`MemorySessionStore`] ends a session.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// One legacy session: the connection that answered `initialize`, and the
/// principal that opened it. Cheap to clone; every clone is the same session.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    connection: Arc<Connection>,
    principal: Option<Principal>,
    /// When the last request or stream using the session ended (or began).
    last_active: Mutex<Instant>,
    /// Requests and streams using the session now: it is not idle while any
    /// is open, however long it lasts.
    in_use: AtomicUsize,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("principal", &self.inner.principal)
            .field("protocol_version", &self.inner.connection.legacy_version())
            .field("in_use", &self.inner.in_use.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session kept on `connection` (the one that answered `initialize`,
    /// or one that [resumed](typed_mcp::transport::Connection::resume) it),
    /// for `principal`'s requests only. The endpoint makes one per
    /// `initialize`; a shared store makes one per session it resumes.
    pub fn new(connection: Arc<Connection>, principal: Option<Principal>) -> Self {
        Session {
            inner: Arc::new(Inner {
                connection,
                principal,
                last_active: Mutex::new(Instant::now()),
                in_use: AtomicUsize::new(0),
            }),
        }
    }

    /// The connection that keeps the session's state.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.inner.connection
    }

    /// The principal the application's authentication layer set on the
    /// `initialize` request (`None` without authentication). Only requests
    /// of the same principal reach the session.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_ref()
    }

    /// How long the session has gone unused: `None` while a request or a
    /// stream uses it.
    pub fn idle_for(&self) -> Option<Duration> {
        if self.inner.in_use.load(Ordering::Acquire) > 0 {
            return None;
        }
        Some(self.last_active().elapsed())
    }

    fn last_active(&self) -> Instant {
        *self
            .inner
            .last_active
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn touch(&self) {
        *self
            .inner
            .last_active
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Marks the session in use until the guard is dropped.
    pub(crate) fn in_use(&self) -> InUse {
        self.inner.in_use.fetch_add(1, Ordering::AcqRel);
        self.touch();
        InUse(self.clone())
    }

    /// Ends the session's state: subscriptions stop, requests to the client
    /// stop waiting, calls are cancelled (each with its receipt), and the
    /// GET stream closes.
    pub async fn end(&self) {
        self.inner.connection.end_session().await;
    }

    /// Ends the session from code that cannot wait (a store evicting it):
    /// on the current tokio runtime, or at once without one (dropping the
    /// last handle ends the session too).
    fn end_later(self) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { self.end().await });
        }
    }
}

/// A request or stream using a session; the session's idle time starts
/// when the last one is dropped.
pub(crate) struct InUse(Session);

impl Drop for InUse {
    fn drop(&mut self) {
        self.0.touch();
        self.0.inner.in_use.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Why a [`SessionStore`] took no new session (the client gets `503`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreFull {
    /// Sessions open (here) when it refused.
    pub open: usize,
    /// Why a shared store could not keep it (its backend did not answer);
    /// `None` when the store is full.
    pub unavailable: Option<String>,
}

impl fmt::Display for StoreFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.unavailable {
            None => write!(
                f,
                "{} sessions are open, the most this server keeps (max_sessions); retry later",
                self.open
            ),
            Some(why) => write!(
                f,
                "the session store could not keep a new session ({why}); retry later"
            ),
        }
    }
}

impl std::error::Error for StoreFull {}

/// The future a [`SessionStore`] method returns (a store shared by
/// replicas answers over the network).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where the endpoint keeps its legacy sessions, by `Mcp-Session-Id`.
///
/// The default is a [`MemorySessionStore`]; another store (one shared by
/// replicas, say) is set with
/// [`HttpServer::session_store`](crate::HttpServer::session_store). A store
/// that expires sessions ends them (see [`MemorySessionStore`]); one removed
/// by `DELETE` or taken at shutdown is ended by the endpoint.
///
/// # Replicas
///
/// A store shared by replicas (the `typed-mcp-redis` crate has one) keeps
/// each session's [`LegacySessionState`](typed_mcp::transport::LegacySessionState)
/// (revision, client capabilities, log level, subscriptions, principal) where
/// every replica reads it; a replica that gets a request of a session it has
/// not seen [resumes](typed_mcp::transport::Connection::resume) it, so a
/// dated client's lists and calls may land on any replica. A client's
/// answer to a request the server sent it (elicitation, sampling, roots)
/// that reaches a replica where no call waits for it is handed to the
/// store's forwarder
/// ([`forward_undelivered_responses`](typed_mcp::transport::Connection::forward_undelivered_responses)).
/// What stays with the replica a request reached: that request's calls in
/// flight (a `notifications/cancelled` reaching another replica finds
/// nothing to cancel).
pub trait SessionStore: Send + Sync + fmt::Debug {
    /// Keeps `session` under `id` (128 random bits, as 32 lowercase hex
    /// digits, never reused). Refuses when no room is left.
    ///
    /// # Errors
    ///
    /// [`StoreFull`] when the store holds as many sessions as it may (or,
    /// for a shared store, cannot keep it now).
    fn insert(&self, id: String, session: Session) -> StoreFuture<'_, Result<(), StoreFull>>;

    /// The session kept under `id`, when there is one and it has not expired.
    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Session>>;

    /// Forgets the session kept under `id`, and returns it (a shared store:
    /// this replica's copy, when it has one).
    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Session>>;

    /// Forgets every session this replica holds, and returns them (the
    /// server is shutting down).
    fn take_all(&self) -> StoreFuture<'_, Vec<Session>>;

    /// Called after a request of the session kept under `id` was answered
    /// and before its response leaves: a shared store writes what the
    /// request changed (a `logging/setLevel`, a `resources/subscribe`), so
    /// the client's next request finds it on any replica. Does nothing by
    /// default.
    fn answered<'a>(&'a self, id: &'a str, session: &'a Session) -> StoreFuture<'a, ()> {
        let _ = (id, session);
        Box::pin(std::future::ready(()))
    }
}

/// The default [`SessionStore`]: sessions in this process's memory, at most
/// `max_sessions` of them, each ended once idle (no request or stream using
/// it) for `idle_timeout`.
///
/// Expiry is lazy: a session found expired when it is looked up is ended and
/// forgotten (its client gets `404`), and every `insert` first ends and
/// forgets every expired session, so a full store makes room before it
/// refuses.
#[derive(Debug)]
pub struct MemorySessionStore {
    sessions: Mutex<HashMap<String, Session>>,
    max_sessions: usize,
    idle_timeout: Duration,
}

impl Default for MemorySessionStore {
    /// [`DEFAULT_MAX_SESSIONS`] sessions, [`DEFAULT_SESSION_IDLE_TIMEOUT`].
    fn default() -> Self {
        MemorySessionStore::new(DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT)
    }
}

impl MemorySessionStore {
    /// A store keeping at most `max_sessions` sessions, each ended after
    /// `idle_timeout` without use.
    pub fn new(max_sessions: usize, idle_timeout: Duration) -> Self {
        MemorySessionStore {
            sessions: Mutex::default(),
            max_sessions,
            idle_timeout,
        }
    }

    /// Sessions kept now (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when no session is kept.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn expired(&self, session: &Session) -> bool {
        session
            .idle_for()
            .is_some_and(|idle| idle >= self.idle_timeout)
    }
}

impl SessionStore for MemorySessionStore {
    fn insert(&self, id: String, session: Session) -> StoreFuture<'_, Result<(), StoreFull>> {
        Box::pin(std::future::ready(self.insert_now(id, session)))
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Session>> {
        Box::pin(std::future::ready(self.get_now(id)))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Session>> {
        Box::pin(std::future::ready(self.lock().remove(id)))
    }

    fn take_all(&self) -> StoreFuture<'_, Vec<Session>> {
        Box::pin(std::future::ready(
            self.lock().drain().map(|(_, s)| s).collect(),
        ))
    }
}

impl MemorySessionStore {
    fn insert_now(&self, id: String, session: Session) -> Result<(), StoreFull> {
        let mut sessions = self.lock();
        let expired: Vec<String> = sessions
            .iter()
            .filter(|(_, s)| self.expired(s))
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            if let Some(session) = sessions.remove(&id) {
                tracing::debug!("legacy session expired after {:?} idle", self.idle_timeout);
                session.end_later();
            }
        }
        if sessions.len() >= self.max_sessions {
            return Err(StoreFull {
                open: sessions.len(),
                unavailable: None,
            });
        }
        sessions.insert(id, session);
        Ok(())
    }

    fn get_now(&self, id: &str) -> Option<Session> {
        let mut sessions = self.lock();
        let session = sessions.get(id)?;
        if self.expired(session) {
            if let Some(session) = sessions.remove(id) {
                tracing::debug!("legacy session expired after {:?} idle", self.idle_timeout);
                session.end_later();
            }
            return None;
        }
        Some(session.clone())
    }
}

/// A fresh session id: 128 bits from the operating system's random source,
/// as 32 lowercase hex digits (visible ASCII, as the header needs).
pub(crate) fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        let server = typed_mcp::Server::new("store", "0.0.0").build().unwrap();
        Session::new(Arc::new(Connection::new(server)), None)
    }

    #[test]
    fn session_ids_are_32_hex_digits_and_differ() {
        let (a, b) = (new_session_id(), new_session_id());
        assert_eq!(a.len(), 32);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_ne!(a, b);
    }

    #[test]
    fn a_full_store_refuses_until_a_session_is_removed() {
        let store = MemorySessionStore::new(1, Duration::from_secs(60));
        store.insert_now("a".into(), session()).unwrap();
        assert_eq!(
            store.insert_now("b".into(), session()),
            Err(StoreFull {
                open: 1,
                unavailable: None
            })
        );
        assert!(store.lock().remove("a").is_some());
        store.insert_now("b".into(), session()).unwrap();
        assert!(store.get_now("b").is_some());
        assert!(store.get_now("a").is_none());
    }

    #[test]
    fn a_session_in_use_does_not_expire_and_an_idle_one_does() {
        let store = MemorySessionStore::new(1, Duration::ZERO);
        let open = session();
        store.insert_now("a".into(), open.clone()).unwrap();
        let guard = open.in_use();
        assert!(store.get_now("a").is_some(), "in use: not idle");
        drop(guard);
        assert!(
            store.get_now("a").is_none(),
            "idle past the timeout: expired"
        );
        assert!(store.is_empty(), "an expired session is forgotten");
    }

    #[test]
    fn an_insert_sweeps_expired_sessions_before_it_refuses() {
        let store = MemorySessionStore::new(1, Duration::ZERO);
        store.insert_now("a".into(), session()).unwrap();
        store.insert_now("b".into(), session()).unwrap();
        assert_eq!(store.len(), 1);
        assert!(store.lock().remove("a").is_none());
    }
}
