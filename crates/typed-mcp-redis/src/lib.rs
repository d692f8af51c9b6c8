//! Replicas of a typed-mcp server behind a load balancer, sharing through
//! Redis what would otherwise tie a client to one process.
//!
//! MCP 2026-07-28 is stateless, so any replica can answer any request, but
//! three things still live in one process by default; this crate shares them:
//!
//! | what | default (one process) | here |
//! |---|---|---|
//! | resource updates to `subscriptions/listen` (and legacy `resources/subscribe`) | an in-process broadcast | [`RedisBus`]: one pub/sub channel, every replica's listeners get every replica's updates, in one order |
//! | legacy (2025-11-25 and older) HTTP sessions | [`MemorySessionStore`](typed_mcp_http::MemorySessionStore) | [`RedisSessionStore`]: any replica resumes a session another opened |
//! | the `requestState` key | random per process | a keyring from configuration ([`StateKeys::from_env`](typed_mcp::state::StateKeys::from_env)); [`KeyringCheck`] warns when replicas do not share it |
//! | tasks (the Tasks extension) | [`MemoryTaskStore`](typed_mcp::tasks::MemoryTaskStore) | [`RedisTaskStore`]: a task created on one replica is polled, answered, cancelled (its handler's cancellation fires on the replica running it, within the poll interval) and collected on any; a stopped replica's unfinished tasks fail as interrupted |
//! | task status notifications (`notifications/tasks` on `subscriptions/listen`) | the in-process broadcast | [`RedisBus`] carries the news of each task change, so a listener on any replica hears of a change made on any other at once (without the bus, at the poll interval) |
//!
//! ```no_run
//! use typed_mcp::Server;
//! use typed_mcp::state::StateKeys;
//! use typed_mcp_redis::{KeyringCheck, Redis, RedisBus, RedisSessionStore};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let redis = Redis::open("redis://127.0.0.1:6379/", "my-server")?;
//! let bus = RedisBus::start(&redis).await?;
//! let keys = StateKeys::from_env()?.unwrap_or_else(StateKeys::random);
//! let server = Server::new("my-server", "1.0.0")
//!     .update_bus(bus)
//!     .request_state_keys(keys)
//!     .build()?;
//! KeyringCheck::start(&redis, &server, "replica-1").await?;
//! let store = RedisSessionStore::new(&redis, server.clone());
//! let addr = "127.0.0.1:8080".parse()?;
//! let mcp = typed_mcp_http::HttpServer::new(server, addr)
//!     .session_store(store)
//!     .into_router()?;
//! # let _ = mcp; Ok(()) }
//! ```
//!
//! All keys and channels of one deployment start with its prefix (the
//! second argument of [`Redis::open`]), so deployments can share a Redis.

mod bus;
mod keyring;
mod sessions;
mod tasks;

pub use bus::RedisBus;
pub use keyring::{KeyringCheck, KeyringProblem};
pub use sessions::RedisSessionStore;
pub use tasks::RedisTaskStore;

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// Why Redis could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL does not name a Redis server.
    #[error("the Redis URL is not valid: {0} (expected redis://HOST:PORT/ or redis+unix:///PATH)")]
    Url(#[source] redis::RedisError),
    /// Redis did not answer.
    #[error("Redis did not answer: {0}")]
    Unreachable(#[source] redis::RedisError),
}

/// A deployment's Redis: the server's address and the prefix of every key
/// and channel the deployment uses. Cheap to clone.
#[derive(Clone)]
pub struct Redis {
    client: redis::Client,
    prefix: String,
    commands: ConnectionManager,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password: only the prefix is shown.
        f.debug_struct("Redis")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Redis {
    /// Names the Redis at `url` for the deployment `prefix`. Connects on
    /// first use, and reconnects by itself: a replica starts while Redis is
    /// down, and keeps serving (without sharing) while it restarts. Must be
    /// called within a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::Url`] when `url` is not a Redis URL.
    pub fn open(url: &str, prefix: impl Into<String>) -> Result<Self, Error> {
        let client = redis::Client::open(url).map_err(Error::Url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_response_timeout(Some(Duration::from_secs(2)))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let commands =
            ConnectionManager::new_lazy_with_config(client.clone(), config).map_err(Error::Url)?;
        Ok(Redis {
            client,
            prefix: prefix.into(),
            commands,
        })
    }

    /// The deployment's prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// A key or channel of this deployment.
    fn key(&self, parts: &[&str]) -> String {
        let mut key = self.prefix.clone();
        for part in parts {
            key.push(':');
            key.push_str(part);
        }
        key
    }

    /// A connection for commands (shared, reconnecting).
    fn commands(&self) -> ConnectionManager {
        self.commands.clone()
    }

    /// Runs `cmd`; when the connection turns out to have dropped (Redis
    /// restarted since the last command), runs it again on the reconnected
    /// one, up to three times over about a second. A command may so run
    /// twice: every command this crate sends is one whose repetition is
    /// harmless (an update announced twice, an expiry renewed twice, a
    /// refused `SET NX`).
    async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> redis::RedisResult<T> {
        self.retrying(|mut c| async move { cmd.query_async(&mut c).await })
            .await
    }

    /// [`query`](Self::query) for a pipeline.
    async fn query_pipeline(&self, pipeline: &redis::Pipeline) -> redis::RedisResult<()> {
        self.retrying(|mut c| async move { pipeline.query_async(&mut c).await })
            .await
    }

    async fn retrying<T, F, Fut>(&self, mut run: F) -> redis::RedisResult<T>
    where
        F: FnMut(ConnectionManager) -> Fut,
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let mut delay = Duration::from_millis(100);
        let mut tries = 0;
        loop {
            match run(self.commands()).await {
                Err(e) if tries < 3 && reconnects(&e) => {
                    tries += 1;
                    tracing::debug!(error = %e, "the Redis connection dropped; trying again");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                }
                other => return other,
            }
        }
    }
}

/// An error after which the reconnecting connection may succeed.
fn reconnects(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() || e.is_timeout()
}
