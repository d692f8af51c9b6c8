//! A durable [`TaskStore`] for typed-mcp on an embedded SQLite database
//! (rusqlite, bundled: no system library, no server).
//!
//! Tasks and their results survive a restart of the process. A task that was
//! running when the process died is reported `failed` (interrupted) by the
//! next server to open the database
//! ([`TaskStore::recover_interrupted`], which `typed-mcp` calls when a
//! server starts on the store), never silently lost or run again.
//!
//! ```no_run
//! use typed_mcp::Server;
//! use typed_mcp_sqlite::SqliteTaskStore;
//!
//! let store = SqliteTaskStore::open("tasks.db")?;
//! let builder = Server::new("demo", "1.0.0").task_store(store);
//! # Ok::<(), typed_mcp::tasks::TaskStoreError>(())
//! ```
//!
//! The store keeps one table, `typed_mcp_tasks`, so it may share the
//! application's own database file: each row is a task's
//! [`TaskRecord`] as JSON, beside the columns its queries read (owner,
//! status, expiry). Results are stored as the server hands them over:
//! redacted of every registered secret.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::{Map, Value};
use typed_mcp::tasks::{
    StoreFuture, TaskChange, TaskId, TaskOutcome, TaskOwner, TaskRecord, TaskStore, TaskStoreError,
    interrupted_error, now_ms,
};

/// Tasks in an SQLite database file (see the [crate docs](crate)).
#[derive(Clone)]
pub struct SqliteTaskStore {
    conn: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for SqliteTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteTaskStore").finish_non_exhaustive()
    }
}

fn backend(e: impl std::fmt::Display) -> TaskStoreError {
    TaskStoreError::Backend(e.to_string())
}

impl SqliteTaskStore {
    /// Opens (or creates) the database at `path` and its table. The file may
    /// be the application's own database: the store touches only its table.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, TaskStoreError> {
        let conn = Connection::open(path.as_ref()).map_err(|e| {
            backend(format!(
                "cannot open the task database {}: {e}",
                path.as_ref().display()
            ))
        })?;
        Self::with_connection(conn)
    }

    /// A store on an open connection (its table is created if missing).
    pub fn with_connection(conn: Connection) -> Result<Self, TaskStoreError> {
        // WAL lets the application's own connections read while a task is
        // written; a busy database is waited for instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(backend)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(backend)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS typed_mcp_tasks (
                 id TEXT PRIMARY KEY,
                 owner TEXT NOT NULL,
                 status TEXT NOT NULL,
                 created_at INTEGER NOT NULL,
                 expires_at INTEGER,
                 record TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS typed_mcp_tasks_owner ON typed_mcp_tasks (owner, created_at);",
        )
        .map_err(backend)?;
        Ok(SqliteTaskStore {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` on the connection on tokio's blocking pool.
    fn blocking<T, F>(&self, f: F) -> StoreFuture<'static, T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, TaskStoreError> + Send + 'static,
    {
        let conn = self.conn.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let mut conn = conn.lock().unwrap_or_else(|e| e.into_inner());
                f(&mut conn)
            })
            .await
            .map_err(|e| backend(format!("the task store's worker stopped: {e}")))?
        })
    }

    /// Reads, changes and writes one record in a transaction; `None` when
    /// it is unknown, expired or (with `owner`) another owner's.
    fn modify<F>(
        &self,
        id: &TaskId,
        owner: Option<&TaskOwner>,
        change: F,
    ) -> StoreFuture<'static, Option<TaskRecord>>
    where
        F: FnOnce(&mut TaskRecord, u64) + Send + 'static,
    {
        let (id, owner) = (id.clone(), owner.cloned());
        self.blocking(move |conn| {
            let now = now_ms();
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let Some(mut record) = read(&tx, &id)? else {
                return Ok(None);
            };
            if record.is_expired(now) || owner.as_ref().is_some_and(|o| o != &record.owner) {
                return Ok(None);
            }
            change(&mut record, now);
            write(&tx, &record)?;
            tx.commit().map_err(backend)?;
            Ok(Some(record))
        })
    }
}

fn read(conn: &Connection, id: &TaskId) -> Result<Option<TaskRecord>, TaskStoreError> {
    let text: Option<String> = conn
        .query_row(
            "SELECT record FROM typed_mcp_tasks WHERE id = ?1",
            params![id.as_str()],
            |row| row.get(0),
        )
        .optional()
        .map_err(backend)?;
    text.map(|text| decode(&text)).transpose()
}

fn decode(text: &str) -> Result<TaskRecord, TaskStoreError> {
    serde_json::from_str(text).map_err(|e| backend(format!("a stored task is unreadable: {e}")))
}

fn write(conn: &Connection, record: &TaskRecord) -> Result<(), TaskStoreError> {
    let text = serde_json::to_string(record).map_err(backend)?;
    conn.execute(
        "UPDATE typed_mcp_tasks SET status = ?2, record = ?3 WHERE id = ?1",
        params![record.id.as_str(), record.status.as_str(), text],
    )
    .map_err(backend)?;
    Ok(())
}

fn to_i64(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

impl TaskStore for SqliteTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        self.blocking(move |conn| {
            let text = serde_json::to_string(&record).map_err(backend)?;
            let inserted = conn
                .execute(
                    "INSERT OR IGNORE INTO typed_mcp_tasks (id, owner, status, created_at, expires_at, record)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        record.id.as_str(),
                        record.owner.as_str(),
                        record.status.as_str(),
                        to_i64(record.created_at_ms),
                        record.expires_at_ms.map(to_i64),
                        text
                    ],
                )
                .map_err(backend)?;
            if inserted == 0 {
                return Err(TaskStoreError::Duplicate(record.id));
            }
            Ok(())
        })
    }

    fn get<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let (owner, id) = (owner.clone(), id.clone());
        self.blocking(move |conn| {
            let now = now_ms();
            Ok(read(conn, &id)?.filter(|r| r.owner == owner && !r.is_expired(now)))
        })
    }

    fn list<'a>(&'a self, owner: &'a TaskOwner) -> StoreFuture<'a, Vec<TaskRecord>> {
        let owner = owner.clone();
        self.blocking(move |conn| {
            let now = to_i64(now_ms());
            let mut query = conn
                .prepare(
                    "SELECT record FROM typed_mcp_tasks
                     WHERE owner = ?1 AND (expires_at IS NULL OR expires_at > ?2)
                     ORDER BY created_at, id",
                )
                .map_err(backend)?;
            let rows = query
                .query_map(params![owner.as_str(), now], |row| row.get::<_, String>(0))
                .map_err(backend)?;
            rows.map(|text| decode(&text.map_err(backend)?)).collect()
        })
    }

    fn update<'a>(
        &'a self,
        id: &'a TaskId,
        change: TaskChange,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        self.modify(id, None, move |record, now| {
            record.apply(&change, now);
        })
    }

    fn cancel<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        self.modify(id, Some(owner), |record, now| {
            record.apply(&TaskChange::Cancelled { message: None }, now);
        })
    }

    fn respond<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
        responses: Map<String, Value>,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        self.modify(id, Some(owner), move |record, now| {
            record.take_responses(&responses, now);
        })
    }

    fn recover_interrupted(&self) -> StoreFuture<'_, usize> {
        // One process serves this file: whatever is unfinished lost its
        // runner when the last one stopped.
        self.blocking(|conn| {
            let now = now_ms();
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let unfinished: Vec<String> = {
                let mut query = tx
                    .prepare(
                        "SELECT record FROM typed_mcp_tasks
                         WHERE status NOT IN ('completed', 'failed', 'cancelled')",
                    )
                    .map_err(backend)?;
                let rows = query
                    .query_map([], |row| row.get::<_, String>(0))
                    .map_err(backend)?;
                rows.collect::<Result<_, _>>().map_err(backend)?
            };
            for text in &unfinished {
                let mut record = decode(text)?;
                record.apply(
                    &TaskChange::Finished {
                        outcome: TaskOutcome::Error(interrupted_error()),
                        message: Some(String::from(
                            "interrupted: the server stopped while the task ran",
                        )),
                    },
                    now,
                );
                write(&tx, &record)?;
            }
            tx.commit().map_err(backend)?;
            Ok(unfinished.len())
        })
    }

    fn purge_expired(&self) -> StoreFuture<'_, usize> {
        self.blocking(|conn| {
            let now = to_i64(now_ms());
            conn.execute(
                "DELETE FROM typed_mcp_tasks WHERE expires_at IS NOT NULL AND expires_at <= ?1",
                params![now],
            )
            .map_err(backend)
        })
    }
}
