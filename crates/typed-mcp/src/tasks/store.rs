//! The [`TaskStore`] trait: where tasks, their status and their results live,
//! and the types it moves.
//!
//! The trait is **object-safe**: the server holds its store as
//! `Arc<dyn TaskStore>`, and every method returns a boxed future
//! ([`StoreFuture`]), so a store in another crate (a Redis one, say) is
//! written as plain `impl TaskStore for MyStore` with
//! `Box::pin(async move { .. })` bodies.
//!
//! # The contract every store keeps
//!
//! - **Owners.** Every task is bound to the [`TaskOwner`] that created it.
//!   [`get`](TaskStore::get), [`list`](TaskStore::list),
//!   [`cancel`](TaskStore::cancel) and [`respond`](TaskStore::respond) take
//!   the caller's owner and treat another owner's task exactly like an
//!   unknown one (`None`): nobody learns that someone else's id exists.
//! - **Terminal statuses are sticky.** Once a task is `completed`, `failed`
//!   or `cancelled`, no change moves it again (a cancel of a finished task,
//!   or a finish of a cancelled one, leaves it as it was).
//! - **Expiry.** A task whose [`expires_at_ms`](TaskRecord::expires_at_ms)
//!   has passed is gone: reads return `None` from that instant, whether or not
//!   [`purge_expired`](TaskStore::purge_expired) has removed it yet.
//! - **Durable create.** When [`create`](TaskStore::create) returns `Ok`, a
//!   `get` of the task resolves (the extension forbids answering a
//!   `CreateTaskResult` before that).
//! - **Redacted contents.** The runtime redacts results and errors before it
//!   hands them to a store: a store never sees a registered secret.
//!
//! `typed_mcp::tasks::check_store` (feature `testing`) runs these rules
//! against any store, so every implementation is held to the same contract.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The future every [`TaskStore`] method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, TaskStoreError>> + Send + 'a>>;

/// Why a store could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The store holds as many live tasks as it may (a bounded store).
    #[error("the task store is full: it holds {capacity} unfinished tasks")]
    Full {
        /// How many tasks it may hold.
        capacity: usize,
    },
    /// A task with this id exists already.
    #[error("a task with id {0} exists already")]
    Duplicate(TaskId),
    /// The backend failed (I/O, a lost connection, a corrupt row): what it said.
    #[error("the task store failed: {0}")]
    Backend(String),
}

/// An unguessable task id: 128 bits from the operating system's random
/// source, as 32 lowercase hex digits. Ids a client sends are wrapped with
/// [`TaskId::from_wire`] and only ever compared, never parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskId(String);

impl TaskId {
    /// A fresh random id.
    pub fn random() -> Self {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).expect("the operating system's random source failed");
        let mut text = String::with_capacity(32);
        for b in bytes {
            text.push_str(&format!("{b:02x}"));
        }
        TaskId(text)
    }

    /// The id a request named, as sent.
    pub fn from_wire(id: impl Into<String>) -> Self {
        TaskId(id.into())
    }

    /// The id's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Who a task belongs to: the authenticated principal that created it, or
/// the anonymous caller of a transport without authentication (stdio, a
/// loopback HTTP endpoint). Anonymous callers share one owner, so their
/// tasks are protected by the unguessable id alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskOwner(String);

impl TaskOwner {
    /// The owner of tasks created without a principal.
    pub fn anonymous() -> Self {
        TaskOwner(String::from("-"))
    }

    /// The owner of tasks created by the principal with this stable id.
    pub fn principal(id: &str) -> Self {
        // The prefix keeps a principal named "-" apart from anonymous callers.
        TaskOwner(format!("principal:{id}"))
    }

    /// The owner's key, as stores keep it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A task's status, as the extension names it on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for the client's answers to
    /// [`input_requests`](TaskRecord::input_requests).
    InputRequired,
    /// Finished with a result (a tool's `isError` result included).
    Completed,
    /// Finished with a JSON-RPC error (a panic, an interruption).
    Failed,
    /// Cancelled before it finished.
    Cancelled,
}

impl TaskStatus {
    /// The wire name (`"working"`, `"input_required"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// The status of a wire name.
    pub fn from_wire(name: &str) -> Option<Self> {
        Some(match name {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }

    /// True for `completed`, `failed` and `cancelled`: no change moves a task
    /// out of them.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// The JSON-RPC error a failed task ended with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredError {
    /// The JSON-RPC error code.
    pub code: i32,
    /// The message (redacted).
    pub message: String,
    /// The error's `data`, when it had one (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// How a finished task ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskOutcome {
    /// The request's own result object (for `tools/call`, the
    /// `CallToolResult`, `isError` ones included), redacted.
    Result(Value),
    /// A JSON-RPC error.
    Error(StoredError),
}

/// One task as a store keeps it. Times are milliseconds since the Unix
/// epoch (UTC), so every backend stores plain integers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task's id.
    pub id: TaskId,
    /// Who created it.
    pub owner: TaskOwner,
    /// The tool the task runs (for logs and listings).
    pub tool: String,
    /// The current status.
    pub status: TaskStatus,
    /// A human-readable note on the status, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created.
    pub created_at_ms: u64,
    /// When its status or contents last changed.
    pub updated_at_ms: u64,
    /// When it expires (creation plus its time-to-live); `None`: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
    /// The polling interval the server suggests to clients.
    pub poll_interval_ms: u64,
    /// The requests still waiting for the client's answer, by key, while
    /// the status is `input_required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<Map<String, Value>>,
    /// Answers received for this round of input, not yet taken by the task's
    /// runner.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub input_responses: Map<String, Value>,
    /// How it ended, once terminal (`completed` or `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<TaskOutcome>,
}

impl TaskRecord {
    /// A new `working` task of `owner` running `tool`, created now, expiring
    /// `ttl` after creation (`None`: never).
    pub fn new(
        id: TaskId,
        owner: TaskOwner,
        tool: impl Into<String>,
        ttl: Option<Duration>,
        poll_interval: Duration,
    ) -> Self {
        let now = now_ms();
        TaskRecord {
            id,
            owner,
            tool: tool.into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now,
            updated_at_ms: now,
            expires_at_ms: ttl.map(|ttl| now.saturating_add(duration_ms(ttl))),
            poll_interval_ms: duration_ms(poll_interval),
            input_requests: None,
            input_responses: Map::new(),
            outcome: None,
        }
    }

    /// True when the task has expired at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expires_at_ms.is_some_and(|at| at <= now_ms)
    }

    /// The time-to-live from creation, in milliseconds (`None`: unlimited).
    pub fn ttl_ms(&self) -> Option<u64> {
        self.expires_at_ms
            .map(|at| at.saturating_sub(self.created_at_ms))
    }

    /// Applies `change` at `now_ms`, keeping the contract's rules (terminal
    /// statuses are sticky). Returns whether the record changed. Stores that
    /// read, change and write a record may use this so that every store
    /// moves tasks the same way.
    pub fn apply(&mut self, change: &TaskChange, now_ms: u64) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        match change {
            TaskChange::Working { message } => {
                self.status = TaskStatus::Working;
                self.status_message.clone_from(message);
            }
            TaskChange::InputRequired { requests, message } => {
                self.status = TaskStatus::InputRequired;
                self.input_requests = Some(requests.clone());
                self.input_responses.clear();
                self.status_message.clone_from(message);
            }
            TaskChange::Resumed => {
                self.status = TaskStatus::Working;
                self.input_requests = None;
                self.input_responses.clear();
                self.status_message = None;
            }
            TaskChange::Finished { outcome, message } => {
                self.status = match outcome {
                    TaskOutcome::Result(_) => TaskStatus::Completed,
                    TaskOutcome::Error(_) => TaskStatus::Failed,
                };
                self.outcome = Some(outcome.clone());
                self.input_requests = None;
                self.input_responses.clear();
                self.status_message.clone_from(message);
            }
            TaskChange::Cancelled { message } => {
                self.status = TaskStatus::Cancelled;
                self.input_requests = None;
                self.input_responses.clear();
                self.status_message.clone_from(message);
            }
        }
        self.updated_at_ms = now_ms.max(self.updated_at_ms);
        true
    }

    /// Takes the client's answers to outstanding requests at `now_ms`:
    /// answers to keys that are not outstanding are ignored, as the
    /// extension says. When no request is left outstanding the task is
    /// `working` again, with the answers in
    /// [`input_responses`](TaskRecord::input_responses) for its runner.
    /// Returns whether any answer was taken.
    pub fn take_responses(&mut self, responses: &Map<String, Value>, now_ms: u64) -> bool {
        if self.status != TaskStatus::InputRequired {
            return false;
        }
        let Some(outstanding) = self.input_requests.as_mut() else {
            return false;
        };
        let mut taken = false;
        for (key, answer) in responses {
            if outstanding.remove(key).is_some() {
                self.input_responses.insert(key.clone(), answer.clone());
                taken = true;
            }
        }
        if outstanding.is_empty() {
            self.input_requests = None;
            self.status = TaskStatus::Working;
            self.status_message = None;
        }
        if taken {
            self.updated_at_ms = now_ms.max(self.updated_at_ms);
        }
        taken
    }
}

/// A change the server's task runner makes to a task (see
/// [`TaskRecord::apply`] for what each does).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskChange {
    /// Running (again), with an optional note.
    Working {
        /// The status message.
        message: Option<String>,
    },
    /// Waiting for the client's answers to these requests, by key.
    InputRequired {
        /// The outstanding requests (`{method, params}` objects).
        requests: Map<String, Value>,
        /// The status message.
        message: Option<String>,
    },
    /// The runner took the answers of a finished round of input and runs on.
    Resumed,
    /// Finished: `completed` with a result or `failed` with an error.
    Finished {
        /// How it ended.
        outcome: TaskOutcome,
        /// The status message.
        message: Option<String>,
    },
    /// Cancelled (by the runner, e.g. at its deadline).
    Cancelled {
        /// Why.
        message: Option<String>,
    },
}

/// Where tasks live. Object-safe: the server holds `Arc<dyn TaskStore>`
/// (see the [module docs](self) for the contract every implementation keeps,
/// and `typed_mcp::tasks::check_store` to test it).
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task. When this returns `Ok`, [`get`](TaskStore::get)
    /// resolves it. An id that exists already is
    /// [`TaskStoreError::Duplicate`]; a bounded store that is full is
    /// [`TaskStoreError::Full`].
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()>;

    /// The task `id` of `owner`; `None` when it is unknown, expired or
    /// another owner's.
    fn get<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
    ) -> StoreFuture<'a, Option<TaskRecord>>;

    /// The live (unexpired) tasks of `owner`, oldest first.
    fn list<'a>(&'a self, owner: &'a TaskOwner) -> StoreFuture<'a, Vec<TaskRecord>>;

    /// Applies the runner's `change` to task `id` (any owner: the runner is
    /// the server itself) with [`TaskRecord::apply`]; returns the task as it
    /// is afterwards, `None` when it is unknown or expired.
    fn update<'a>(
        &'a self,
        id: &'a TaskId,
        change: TaskChange,
    ) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Cancels task `id` of `owner` unless it is terminal already (then it
    /// stays as it is); returns the task as it is afterwards, `None` when it
    /// is unknown, expired or another owner's.
    fn cancel<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
    ) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Hands the client's answers to task `id` of `owner` with
    /// [`TaskRecord::take_responses`]; returns the task as it is afterwards,
    /// `None` when it is unknown, expired or another owner's.
    fn respond<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
        responses: Map<String, Value>,
    ) -> StoreFuture<'a, Option<TaskRecord>>;

    /// Called once when a server starts on this store: every task the store
    /// knows to have lost its runner (for a store of one process, every
    /// task that is not terminal: the process that ran it is gone) becomes
    /// `failed` with [`interrupted_error`], never silently lost or run
    /// again. Returns how many. A store shared by live replicas must not
    /// fail the tasks they are running; the in-memory store has nothing to
    /// recover.
    fn recover_interrupted(&self) -> StoreFuture<'_, usize>;

    /// Removes the tasks that have expired; returns how many.
    fn purge_expired(&self) -> StoreFuture<'_, usize>;
}

/// The error an interrupted task fails with: the process running it ended
/// before it finished.
pub fn interrupted_error() -> StoredError {
    StoredError {
        code: typed_mcp_core::code::INTERNAL_ERROR,
        message: String::from(
            "the task was interrupted: the server running it stopped before it finished (it was not run again)",
        ),
        data: Some(serde_json::json!({ "interrupted": true })),
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| duration_ms(d))
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
