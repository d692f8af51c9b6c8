//! Tasks in Redis: a task created on one replica is polled, answered,
//! cancelled and collected through any other.

use std::time::Duration;

use serde_json::{Map, Value};
use typed_mcp::tasks::{
    StoreFuture, TaskChange, TaskId, TaskOutcome, TaskOwner, TaskRecord, TaskStore, TaskStoreError,
    interrupted_error, now_ms,
};

use crate::Redis;

/// How long a replica's liveness key lives without being refreshed.
const RUNNER_TTL: Duration = Duration::from_secs(15);
/// How often a replica refreshes it (and looks for other replicas' orphans).
const HEARTBEAT: Duration = Duration::from_secs(5);
/// How long Redis keeps a record past its expiry, until `purge_expired`
/// (which deletes it at once) or Redis's own expiry removes it.
const EXPIRED_GRACE_MS: u64 = 3_600_000;
/// How many times a change is tried again when another replica changed the
/// same task in between.
const CAS_TRIES: usize = 32;

/// Writes `ARGV[2]` over `KEYS[1]` only if it still holds `ARGV[1]` (its
/// expiry kept): a read-change-write of one task that another replica's
/// change in between makes try again, instead of being lost.
const COMPARE_AND_SET: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL') return 1 else return 0 end";

/// A [`TaskStore`] in Redis, shared by every replica of a deployment.
///
/// Keys (all under the deployment's prefix):
/// - `task:ID`: the [`TaskRecord`] as JSON; Redis drops it an hour after
///   its expiry at the latest ([`purge_expired`](TaskStore::purge_expired)
///   deletes it sooner);
/// - `tasks-of:OWNER`: a sorted set of the owner's task ids by creation
///   time (`list`, oldest first);
/// - `task-expiry`: a sorted set of expiring tasks by expiry time (purge);
/// - `task-runners`: a hash of unfinished task id → the replica running it;
/// - `runner:REPLICA`: a key each live replica renews every 5 s (15 s
///   lifetime).
///
/// Every change is a read, [`TaskRecord::apply`] (or
/// [`take_responses`](TaskRecord::take_responses)), and a compare-and-set
/// script: two replicas changing one task at once both take effect, in
/// some order, and terminal statuses stay sticky.
///
/// Interrupted tasks: a replica that stops (or crashes) stops renewing its
/// `runner:` key; [`recover_interrupted`](TaskStore::recover_interrupted),
/// called when any replica starts, and every replica's heartbeat after that
/// fail each unfinished task whose replica is gone with
/// [`interrupted_error`], and leave the tasks of live replicas alone.
#[derive(Debug, Clone)]
pub struct RedisTaskStore {
    redis: Redis,
    runner: String,
}

impl RedisTaskStore {
    /// A store in `redis` for the replica `replica` (unique per process: a
    /// restarted replica is a new runner, and the tasks its previous process
    /// ran are interrupted). Starts the heartbeat that keeps this replica's
    /// tasks its own. Must be called within a tokio runtime.
    pub fn new(redis: &Redis, replica: &str) -> Self {
        let mut nonce = [0u8; 4];
        getrandom::fill(&mut nonce).expect("the operating system's random source failed");
        let runner = format!("{replica}-{:08x}", u32::from_be_bytes(nonce));
        let store = RedisTaskStore {
            redis: redis.clone(),
            runner,
        };
        let beating = store.clone();
        tokio::spawn(async move {
            // Beat at once; look for other replicas' orphans only from the
            // next beat on (at start, `recover_interrupted` does).
            let mut first = true;
            loop {
                if let Err(e) = beating.beat().await {
                    tracing::warn!(error = %e, "could not renew this replica's task heartbeat in Redis");
                } else if !first && let Err(e) = beating.fail_orphans().await {
                    tracing::debug!(error = %e, "could not look for interrupted tasks in Redis");
                }
                first = false;
                tokio::time::sleep(HEARTBEAT).await;
            }
        });
        store
    }

    /// This replica's runner id (its name and a per-process suffix).
    pub fn runner(&self) -> &str {
        &self.runner
    }

    fn task_key(&self, id: &TaskId) -> String {
        self.redis.key(&["task", id.as_str()])
    }

    fn owner_key(&self, owner: &TaskOwner) -> String {
        self.redis.key(&["tasks-of", owner.as_str()])
    }

    fn expiry_key(&self) -> String {
        self.redis.key(&["task-expiry"])
    }

    fn runners_key(&self) -> String {
        self.redis.key(&["task-runners"])
    }

    fn alive_key(&self, runner: &str) -> String {
        self.redis.key(&["runner", runner])
    }

    async fn beat(&self) -> redis::RedisResult<()> {
        self.redis.query(&self.beat_command()).await
    }

    /// Renews this replica's `runner:` key.
    fn beat_command(&self) -> redis::Cmd {
        let mut set = redis::cmd("SET");
        set.arg(self.alive_key(&self.runner))
            .arg(now_ms())
            .arg("PX")
            .arg(RUNNER_TTL.as_millis() as u64);
        set
    }

    /// Fails the unfinished tasks whose replica is gone; returns how many.
    async fn fail_orphans(&self) -> Result<usize, TaskStoreError> {
        let running: Vec<(String, String)> = self
            .redis
            .query(redis::cmd("HGETALL").arg(self.runners_key()))
            .await
            .map_err(backend)?;
        let mut failed = 0;
        for (id, runner) in running {
            if runner == self.runner {
                continue;
            }
            let alive: bool = self
                .redis
                .query(redis::cmd("EXISTS").arg(self.alive_key(&runner)))
                .await
                .map_err(backend)?;
            if alive {
                continue;
            }
            let id = TaskId::from_wire(id);
            let change = TaskChange::Finished {
                outcome: TaskOutcome::Error(interrupted_error()),
                message: Some(format!("replica {runner} stopped while running it")),
            };
            let before = self.read(&id).await?;
            let after = self
                .change(&id, None, |r| r.apply(&change, now_ms()))
                .await?;
            if before.is_some_and(|b| !b.status.is_terminal())
                && after.is_some_and(|a| a.status.is_terminal())
            {
                failed += 1;
                tracing::warn!(task = %id, runner, "failed a task whose replica stopped running it");
            }
            let _: u64 = self
                .redis
                .query(redis::cmd("HDEL").arg(self.runners_key()).arg(id.as_str()))
                .await
                .map_err(backend)?;
        }
        Ok(failed)
    }

    async fn read(&self, id: &TaskId) -> Result<Option<TaskRecord>, TaskStoreError> {
        let json: Option<String> = self
            .redis
            .query(redis::cmd("GET").arg(self.task_key(id)))
            .await
            .map_err(backend)?;
        json.map(|j| decode(&j)).transpose()
    }

    /// Reads task `id` (of `owner`, when given), applies `edit`, and writes
    /// it back unless another replica changed it meanwhile (then again).
    /// `None` when it is unknown, expired or another owner's.
    async fn change(
        &self,
        id: &TaskId,
        owner: Option<&TaskOwner>,
        edit: impl Fn(&mut TaskRecord) -> bool,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        let key = self.task_key(id);
        for _ in 0..CAS_TRIES {
            let json: Option<String> = self
                .redis
                .query(redis::cmd("GET").arg(&key))
                .await
                .map_err(backend)?;
            let Some(json) = json else { return Ok(None) };
            let mut record = decode(&json)?;
            if record.is_expired(now_ms()) || owner.is_some_and(|o| o != &record.owner) {
                return Ok(None);
            }
            if !edit(&mut record) {
                return Ok(Some(record));
            }
            let new = encode(&record)?;
            let swapped: i64 = self
                .redis
                .query(
                    redis::cmd("EVAL")
                        .arg(COMPARE_AND_SET)
                        .arg(1)
                        .arg(&key)
                        .arg(&json)
                        .arg(&new),
                )
                .await
                .map_err(backend)?;
            if swapped == 1 {
                if record.status.is_terminal() {
                    let _: u64 = self
                        .redis
                        .query(redis::cmd("HDEL").arg(self.runners_key()).arg(id.as_str()))
                        .await
                        .map_err(backend)?;
                }
                return Ok(Some(record));
            }
        }
        Err(TaskStoreError::Backend(format!(
            "task {id} kept changing under {CAS_TRIES} attempts to update it"
        )))
    }
}

fn backend(e: redis::RedisError) -> TaskStoreError {
    TaskStoreError::Backend(format!("Redis: {e}"))
}

fn encode(record: &TaskRecord) -> Result<String, TaskStoreError> {
    serde_json::to_string(record)
        .map_err(|e| TaskStoreError::Backend(format!("a task record did not encode: {e}")))
}

fn decode(json: &str) -> Result<TaskRecord, TaskStoreError> {
    serde_json::from_str(json).map_err(|e| {
        TaskStoreError::Backend(format!(
            "a task record in Redis is not a task record this version reads: {e}"
        ))
    })
}

/// The `task-expiry` member of a task: its owner index and id.
fn expiry_member(owner_key: &str, id: &TaskId) -> String {
    serde_json::json!([owner_key, id.as_str()]).to_string()
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            let key = self.task_key(&record.id);
            let json = encode(&record)?;
            let mut set = redis::cmd("SET");
            set.arg(&key).arg(&json).arg("NX");
            if let Some(at) = record.expires_at_ms {
                set.arg("PXAT").arg(at.saturating_add(EXPIRED_GRACE_MS));
            }
            let stored: Option<String> = self.redis.query(&set).await.map_err(backend)?;
            if stored.is_none() {
                return Err(TaskStoreError::Duplicate(record.id));
            }
            let owner_key = self.owner_key(&record.owner);
            let mut pipeline = redis::pipe();
            pipeline
                .cmd("ZADD")
                .arg(&owner_key)
                .arg(record.created_at_ms)
                .arg(record.id.as_str())
                .ignore();
            if let Some(at) = record.expires_at_ms {
                pipeline
                    .cmd("ZADD")
                    .arg(self.expiry_key())
                    .arg(at)
                    .arg(expiry_member(&owner_key, &record.id))
                    .ignore();
            }
            if !record.status.is_terminal() {
                // The runner key first: the first heartbeat runs on a task of
                // its own, and a task recorded under a runner without one
                // reads as orphaned to a replica starting at that moment.
                pipeline.add_command(self.beat_command()).ignore();
                pipeline
                    .cmd("HSET")
                    .arg(self.runners_key())
                    .arg(record.id.as_str())
                    .arg(&self.runner)
                    .ignore();
            }
            self.redis.query_pipeline(&pipeline).await.map_err(backend)
        })
    }

    fn get<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            Ok(self
                .read(id)
                .await?
                .filter(|r| &r.owner == owner && !r.is_expired(now_ms())))
        })
    }

    fn list<'a>(&'a self, owner: &'a TaskOwner) -> StoreFuture<'a, Vec<TaskRecord>> {
        Box::pin(async move {
            let ids: Vec<String> = self
                .redis
                .query(
                    redis::cmd("ZRANGE")
                        .arg(self.owner_key(owner))
                        .arg(0)
                        .arg(-1),
                )
                .await
                .map_err(backend)?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let mut get = redis::cmd("MGET");
            for id in &ids {
                get.arg(self.task_key(&TaskId::from_wire(id.clone())));
            }
            let found: Vec<Option<String>> = self.redis.query(&get).await.map_err(backend)?;
            let now = now_ms();
            let mut records = Vec::with_capacity(found.len());
            for json in found.into_iter().flatten() {
                let record = decode(&json)?;
                if &record.owner == owner && !record.is_expired(now) {
                    records.push(record);
                }
            }
            // The index orders by creation time, then id; keep that order
            // exact whatever Redis's tie-breaking.
            records.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
            Ok(records)
        })
    }

    fn update<'a>(
        &'a self,
        id: &'a TaskId,
        change: TaskChange,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move { self.change(id, None, |r| r.apply(&change, now_ms())).await })
    }

    fn cancel<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let change = TaskChange::Cancelled { message: None };
            self.change(id, Some(owner), |r| r.apply(&change, now_ms()))
                .await
        })
    }

    fn respond<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
        responses: Map<String, Value>,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            self.change(id, Some(owner), |r| r.take_responses(&responses, now_ms()))
                .await
        })
    }

    fn recover_interrupted(&self) -> StoreFuture<'_, usize> {
        Box::pin(async move {
            self.beat().await.map_err(backend)?;
            self.fail_orphans().await
        })
    }

    fn purge_expired(&self) -> StoreFuture<'_, usize> {
        Box::pin(async move {
            let expired: Vec<String> = self
                .redis
                .query(
                    redis::cmd("ZRANGEBYSCORE")
                        .arg(self.expiry_key())
                        .arg("-inf")
                        .arg(now_ms()),
                )
                .await
                .map_err(backend)?;
            let mut purged = 0;
            for member in expired {
                let Ok((owner_key, id)) = serde_json::from_str::<(String, String)>(&member) else {
                    continue;
                };
                let id = TaskId::from_wire(id);
                let mut pipeline = redis::pipe();
                pipeline
                    .cmd("DEL")
                    .arg(self.task_key(&id))
                    .ignore()
                    .cmd("ZREM")
                    .arg(&owner_key)
                    .arg(id.as_str())
                    .ignore()
                    .cmd("HDEL")
                    .arg(self.runners_key())
                    .arg(id.as_str())
                    .ignore()
                    .cmd("ZREM")
                    .arg(self.expiry_key())
                    .arg(&member)
                    .ignore();
                self.redis
                    .query_pipeline(&pipeline)
                    .await
                    .map_err(backend)?;
                purged += 1;
            }
            Ok(purged)
        })
    }
}
