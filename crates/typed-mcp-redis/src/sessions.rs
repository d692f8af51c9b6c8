//! Legacy HTTP sessions in Redis: any replica serves a session another
//! replica opened.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use typed_mcp::protocol::legacy::SessionFacts;
use typed_mcp::transport::{Connection, LegacySessionState};
use typed_mcp::{Principal, Server};
use typed_mcp_http::{DEFAULT_SESSION_IDLE_TIMEOUT, Session, SessionStore, StoreFull, StoreFuture};

use crate::Redis;

/// What Redis keeps of one session (`PREFIX:session:ID`), as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    /// The id of the principal that opened it (`None` without authentication).
    principal: Option<String>,
    protocol_version: String,
    client_capabilities: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log_level: Option<Value>,
    #[serde(default)]
    subscriptions: Vec<String>,
}

impl Record {
    fn of(session: &Session) -> Option<Self> {
        let state = session.connection().legacy_state()?;
        let facts = &state.facts;
        Some(Record {
            principal: session.principal().map(|p| p.id().to_owned()),
            protocol_version: facts.protocol_version.clone(),
            client_capabilities: serde_json::to_value(&facts.client_capabilities).ok()?,
            client_info: facts
                .client_info
                .as_ref()
                .and_then(|i| serde_json::to_value(i).ok()),
            log_level: facts.log_level.and_then(|l| serde_json::to_value(l).ok()),
            subscriptions: state.subscriptions.clone(),
        })
    }

    fn state(&self) -> Option<LegacySessionState> {
        let mut facts = SessionFacts::stateless(self.protocol_version.clone());
        facts.client_capabilities =
            serde_json::from_value(self.client_capabilities.clone()).ok()?;
        facts.client_info = match &self.client_info {
            Some(info) => Some(serde_json::from_value(info.clone()).ok()?),
            None => None,
        };
        facts.log_level = match &self.log_level {
            Some(level) => Some(serde_json::from_value(level.clone()).ok()?),
            None => None,
        };
        Some(LegacySessionState::new(facts, self.subscriptions.clone()))
    }
}

/// A replica's copy of a session: the connection serving it here, and the
/// record it was last made from (to tell what changed).
struct LocalCopy {
    session: Session,
    record: Record,
}

/// A [`SessionStore`] in Redis: a dated client's session opened on one
/// replica is served by every replica.
///
/// Each session is one key, `PREFIX:session:ID`, holding its
/// [`LegacySessionState`] (revision, client capabilities and identity, log
/// level, subscriptions) and the id of the principal that opened it. A
/// replica that gets a request of a session it has no copy of
/// [resumes](Connection::resume) it from the key; a replica with a copy
/// reads the key again on each request and takes what another replica
/// changed. What a request changes (`logging/setLevel`,
/// `resources/subscribe`) is written before its response leaves. Every
/// request renews the key's expiry (the idle timeout, 30 minutes by
/// default; unlike the memory store's, an open GET stream alone does not
/// keep a session from expiring); a `DELETE` removes it, and the other replicas' copies end at
/// their next request for it.
///
/// Server-to-client requests (a call of the session asks for elicitation,
/// sampling or roots) go out on the call's own stream, from the replica
/// running it; the client's answer may reach any replica, which forwards
/// it (`PREFIX:session-events`) to every copy of the session, and the copy
/// whose call waits for it takes it (request ids are random per copy, so
/// they do not collide). A change written by one replica is announced on
/// the same channel, so a copy holding the session's GET stream sends the
/// new subscriptions' updates at once.
///
/// What stays with one replica: a request's calls in flight, so a
/// `notifications/cancelled` that reaches another replica cancels nothing
/// (the call runs to its end, or its deadline). Route each session to one
/// replica (sticky on `Mcp-Session-Id`) when cancelling matters; the
/// session still survives that replica, on any other.
///
/// When Redis does not answer, an `initialize` is refused with `503`
/// (the client retries) and requests naming a session get `404` (the
/// client opens a new session): a replica never serves a session it
/// cannot check is still open.
pub struct RedisSessionStore {
    redis: Redis,
    server: Server,
    idle_timeout: Duration,
    copies: Copies,
}

/// On `PREFIX:session-events`: `rID\nMESSAGE`, a client's response for a call
/// waiting on some replica's copy of session ID.
const FORWARDED_RESPONSE: u8 = b'r';
/// On `PREFIX:session-events`: `cID`, session ID changed (its copies re-read it).
const CHANGED: u8 = b'c';

/// This replica's copies of sessions, by id (shared with the task that
/// delivers forwarded responses).
type Copies = Arc<Mutex<HashMap<String, LocalCopy>>>;

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("redis", &self.redis)
            .field("idle_timeout", &self.idle_timeout)
            .field("copies", &self.lock().len())
            .finish()
    }
}

impl RedisSessionStore {
    /// A store in `redis` whose copies serve `server` (the server the
    /// endpoint serves). Sessions expire after
    /// [`DEFAULT_SESSION_IDLE_TIMEOUT`] without a request. Starts the task
    /// that hands this replica's waiting calls the client's answers other
    /// replicas received; must be called within a tokio runtime.
    pub fn new(redis: &Redis, server: Server) -> Self {
        let copies: Copies = Arc::default();
        tokio::spawn(deliver_forwarded(
            redis.clone(),
            redis.key(&["session-events"]),
            Arc::downgrade(&copies),
        ));
        RedisSessionStore {
            redis: redis.clone(),
            server,
            idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            copies,
        }
    }

    /// Sends a client's response that answers no call waiting here to the
    /// other replicas' copies of session `id`.
    fn forward_from(&self, id: &str, connection: &Connection) {
        let (redis, channel, id) = (
            self.redis.clone(),
            self.redis.key(&["session-events"]),
            id.to_owned(),
        );
        connection.forward_undelivered_responses(move |message| {
            let mut payload = Vec::with_capacity(id.len() + 2 + message.len());
            payload.push(FORWARDED_RESPONSE);
            payload.extend_from_slice(id.as_bytes());
            payload.push(b'\n');
            payload.extend_from_slice(message);
            let (redis, channel) = (redis.clone(), channel.clone());
            tokio::spawn(async move {
                let sent: redis::RedisResult<u64> = redis
                    .query(redis::cmd("PUBLISH").arg(&channel).arg(payload))
                    .await;
                if let Err(e) = sent {
                    tracing::warn!(error = %e, "could not forward a client's response to the other replicas");
                }
            });
        });
    }

    /// Sessions expire after `idle` without a request on any replica.
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle.max(Duration::from_secs(1));
        self
    }

    /// How many sessions this replica holds a copy of.
    pub fn copies(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, LocalCopy>> {
        self.copies.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn key(&self, id: &str) -> String {
        self.redis.key(&["session", id])
    }

    fn ttl(&self) -> u64 {
        self.idle_timeout.as_secs().max(1)
    }

    /// Forgets copies no request used for the idle timeout (their keys have
    /// expired, or another replica serves them).
    fn sweep(&self) {
        let idle = self.idle_timeout;
        let stale: Vec<Session> = {
            let mut copies = self.lock();
            let ids: Vec<String> = copies
                .iter()
                .filter(|(_, c)| c.session.idle_for().is_some_and(|i| i >= idle))
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter()
                .filter_map(|id| copies.remove(id))
                .map(|c| c.session)
                .collect()
        };
        for session in stale {
            tokio::spawn(async move { session.end().await });
        }
    }

    async fn fetch(&self, id: &str) -> Option<Session> {
        // Read and renew in one command.
        let found: redis::RedisResult<Option<String>> = self
            .redis
            .query(
                redis::cmd("GETEX")
                    .arg(self.key(id))
                    .arg("EX")
                    .arg(self.ttl()),
            )
            .await;
        let found = match found {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "Redis did not answer a session lookup; answering session not found");
                return None;
            }
        };
        let Some(record) = found.and_then(|json| serde_json::from_str::<Record>(&json).ok()) else {
            // Gone (deleted, expired): this replica's copy ends too.
            let copy = self.lock().remove(id);
            if let Some(copy) = copy {
                copy.session.end().await;
            }
            return None;
        };
        let mut copies = self.lock();
        if let Some(copy) = copies.get_mut(id) {
            if copy.record != record {
                if let Some(state) = record.state() {
                    copy.session.connection().update_legacy_state(state);
                }
                copy.record = record;
            }
            return Some(copy.session.clone());
        }
        let state = record.state()?;
        let connection = Arc::new(Connection::resume(self.server.clone(), state));
        self.forward_from(id, &connection);
        let session = Session::new(connection, record.principal.clone().map(Principal::new));
        copies.insert(
            id.to_owned(),
            LocalCopy {
                session: session.clone(),
                record,
            },
        );
        Some(session)
    }
}

impl SessionStore for RedisSessionStore {
    fn insert(&self, id: String, session: Session) -> StoreFuture<'_, Result<(), StoreFull>> {
        Box::pin(async move {
            self.sweep();
            let open = self.copies();
            let Some(record) = Record::of(&session) else {
                return Err(StoreFull {
                    open,
                    unavailable: Some("the connection holds no legacy session".into()),
                });
            };
            let json = serde_json::to_string(&record).unwrap_or_default();
            let stored: redis::RedisResult<Option<String>> = self
                .redis
                .query(
                    redis::cmd("SET")
                        .arg(self.key(&id))
                        .arg(json)
                        .arg("NX")
                        .arg("EX")
                        .arg(self.ttl()),
                )
                .await;
            match stored {
                Ok(Some(_)) => {
                    self.forward_from(&id, session.connection());
                    self.lock().insert(id, LocalCopy { session, record });
                    Ok(())
                }
                Ok(None) => {
                    tracing::warn!(
                        "a fresh session id was already in Redis; refusing the initialize"
                    );
                    Err(StoreFull {
                        open,
                        unavailable: Some("the new session id was taken".into()),
                    })
                }
                Err(e) => {
                    tracing::warn!(error = %e, "Redis did not keep a new session; refusing the initialize");
                    Err(StoreFull {
                        open,
                        unavailable: Some("Redis did not answer".into()),
                    })
                }
            }
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Session>> {
        Box::pin(self.fetch(id))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<Session>> {
        Box::pin(async move {
            let deleted: redis::RedisResult<u64> =
                self.redis.query(redis::cmd("DEL").arg(self.key(id))).await;
            if let Err(e) = deleted {
                tracing::warn!(error = %e, "Redis did not delete an ended session; it expires after the idle timeout");
            }
            self.lock().remove(id).map(|c| c.session)
        })
    }

    fn take_all(&self) -> StoreFuture<'_, Vec<Session>> {
        // This replica's copies only: the sessions stay open in Redis, for
        // the other replicas.
        Box::pin(std::future::ready(
            self.lock().drain().map(|(_, c)| c.session).collect(),
        ))
    }

    fn answered<'a>(&'a self, id: &'a str, session: &'a Session) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let Some(record) = Record::of(session) else {
                return;
            };
            let changed = {
                let copies = self.lock();
                copies.get(id).is_none_or(|c| c.record != record)
            };
            if !changed {
                return;
            }
            let json = serde_json::to_string(&record).unwrap_or_default();
            // XX: a session deleted meanwhile stays deleted.
            let written: redis::RedisResult<Option<String>> = self
                .redis
                .query(
                    redis::cmd("SET")
                        .arg(self.key(id))
                        .arg(json)
                        .arg("XX")
                        .arg("EX")
                        .arg(self.ttl()),
                )
                .await;
            match written {
                Ok(_) => {
                    if let Some(copy) = self.lock().get_mut(id) {
                        copy.record = record;
                    }
                    // Copies elsewhere (one holding the session's GET
                    // stream, say) take the change now, not at their next
                    // request.
                    let mut event = vec![CHANGED];
                    event.extend_from_slice(id.as_bytes());
                    let sent: redis::RedisResult<u64> = self
                        .redis
                        .query(
                            redis::cmd("PUBLISH")
                                .arg(self.redis.key(&["session-events"]))
                                .arg(event),
                        )
                        .await;
                    if let Err(e) = sent {
                        tracing::debug!(error = %e, "could not announce a session's change");
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "Redis did not keep a session's change; other replicas serve it as it was")
                }
            }
        })
    }
}

/// Serves `PREFIX:session-events` until the store is dropped: delivers
/// the client responses other replicas forward to the calls waiting on this
/// replica's copies, and refreshes copies of sessions changed elsewhere.
/// Reconnects after an outage: a response forwarded meanwhile is lost (the
/// call waiting for it times out as without an answer), a change is taken
/// at the copy's next request.
async fn deliver_forwarded(
    redis: Redis,
    channel: String,
    copies: std::sync::Weak<Mutex<HashMap<String, LocalCopy>>>,
) {
    use futures_util::StreamExt as _;
    let mut backoff = Duration::from_millis(50);
    loop {
        let mut pubsub = match crate::bus::subscribe(&redis.client, &channel).await {
            Ok(p) => {
                backoff = Duration::from_millis(50);
                p
            }
            Err(e) => {
                tracing::debug!(error = %e, "Redis unreachable for session events");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
                if copies.strong_count() == 0 {
                    return;
                }
                continue;
            }
        };
        let mut messages = pubsub.on_message();
        while let Some(message) = messages.next().await {
            let Some(copies) = copies.upgrade() else {
                return;
            };
            let payload = message.get_payload_bytes();
            let Some((&kind, rest)) = payload.split_first() else {
                continue;
            };
            let (id, response) = match rest.iter().position(|&b| b == b'\n') {
                Some(split) => (&rest[..split], &rest[split + 1..]),
                None => (rest, &[][..]),
            };
            let Ok(id) = std::str::from_utf8(id) else {
                continue;
            };
            let connection = copies
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(id)
                .map(|c| c.session.connection().clone());
            let Some(connection) = connection else {
                continue;
            };
            match kind {
                FORWARDED_RESPONSE => {
                    connection.deliver_forwarded(response);
                }
                CHANGED => {
                    let key = redis.key(&["session", id]);
                    let found: redis::RedisResult<Option<String>> =
                        redis.query(redis::cmd("GET").arg(key)).await;
                    let record = found
                        .ok()
                        .flatten()
                        .and_then(|json| serde_json::from_str::<Record>(&json).ok());
                    if let Some(record) = record {
                        if let Some(state) = record.state() {
                            connection.update_legacy_state(state);
                        }
                        if let Some(copy) =
                            copies.lock().unwrap_or_else(|e| e.into_inner()).get_mut(id)
                        {
                            copy.record = record;
                        }
                    }
                }
                _ => {}
            }
        }
        if copies.strong_count() == 0 {
            return;
        }
    }
}
