//! Long-running calls as tasks: the Tasks extension
//! (`io.modelcontextprotocol/tasks`) and where its tasks live.
//!
//! A tool declared task-capable (`#[tool(task)]`, or `ToolDecl::task` for a
//! hand-written declaration) may answer a `tools/call`
//! with a task handle instead of its result, when the request declares the
//! extension in its client capabilities; the client then polls `tasks/get`,
//! answers input with `tasks/update` and may `tasks/cancel`. Tasks live in a
//! [`TaskStore`]: [`MemoryTaskStore`] by default, or a durable one chosen
//! with one builder call ([`ServerBuilder::task_store`](crate::ServerBuilder::task_store);
//! the `typed-mcp-sqlite` crate has one on SQLite).
//!
//! ```
//! use std::time::Duration;
//! use typed_mcp::{Server, tool, tools};
//!
//! /// Rebuild the report; this takes a while.
//! #[tool(task)]
//! async fn rebuild_report() -> String {
//!     tokio::time::sleep(Duration::from_millis(10)).await;
//!     "rebuilt".to_owned()
//! }
//!
//! let server = Server::new("reports", "1.0.0").tools(tools![rebuild_report]).build()?;
//! let extensions = server.catalog().capabilities().extensions.clone().unwrap_or_default();
//! assert!(extensions.contains_key(typed_mcp::tasks::EXTENSION_ID));
//! # Ok::<(), typed_mcp::BuildError>(())
//! ```
//!
//! # The rules this server keeps
//!
//! - **Who decides.** A call becomes a task only when its request declares
//!   the extension in `_meta` client capabilities; then the server decides
//!   ([`TaskSupport`]), the client sends no hint (a legacy `task` parameter
//!   is ignored). Without the declaration an optional task tool runs as a
//!   plain call, and a required one is refused with `-32021`.
//! - **Governance.** The call's capabilities are checked when it arrives,
//!   before any task exists; each round of the handler runs under the
//!   declaration's deadline and holds a handler slot; the call leaves one
//!   receipt, when the task ends, with its `task_id`; the task's work runs in
//!   the creating request's span, so its trace continues the caller's.
//! - **Ids and owners.** Task ids are 128 random bits; a task is bound to the
//!   principal that created it (anonymous callers share one owner), and any
//!   other caller gets `-32602` "unknown task" from `tasks/get` and
//!   `tasks/cancel`, exactly as for an id that never existed.
//! - **Expiry.** A task is kept for
//!   [`task_ttl`](crate::ServerBuilder::task_ttl) after its creation (one
//!   hour by default; `ttlMs` on the wire), finished or not; past it,
//!   `tasks/get` does not know it, and one still running is cancelled.
//! - **Input.** A handler that asks for input (`Answer::NeedsInput`) parks
//!   the task `input_required` with its requests under keys unique for the
//!   task's life; `tasks/update` answers may come one at a time, and the
//!   handler runs again once every key is answered.
//! - **Results.** Results and errors are redacted of the server's secret
//!   values before they reach the store. A tool's `isError` result is
//!   `completed`; a JSON-RPC error (a panic included) is `failed`.
//! - **Status notifications.** A `subscriptions/listen` whose filter names
//!   `taskIds` gets [`TASK_STATUS`] (`notifications/tasks`) with the whole
//!   task, as `tasks/get` answers it, each time one of the caller's tasks
//!   among them changes, through whichever replica changed it (see
//!   [`subscribe`](crate::subscribe#task-status-notifications)).
//! - **Shutdown.** A task still running when the process stops is lost with
//!   it; a durable store reports it `failed` (interrupted) to the next
//!   server that uses it, and it is never run again.
//!
//! The wire names follow what the official conformance suite and the
//! TypeScript `@modelcontextprotocol/ext-tasks` client read (`ttlMs`,
//! `pollIntervalMs`, no `requestState` on tasks, `-32602` for an unknown
//! task on `tasks/cancel`), where the extension's draft text differs.

mod memory;
mod notify;
mod runtime;
mod store;
mod time;

#[cfg(feature = "testing")]
mod checks;

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub use checks::check_store;
pub use memory::MemoryTaskStore;
pub(crate) use notify::TaskWatch;
pub use notify::{MAX_WATCHED_TASKS, TASK_STATUS};
pub use runtime::{EXTENSION_ID, TaskSupport};
pub(crate) use runtime::{
    Running, TaskRuntime, TaskSettings, extension, owner_of, runtime_for, task_fields,
};
pub use store::{
    StoreFuture, StoredError, TaskChange, TaskId, TaskOutcome, TaskOwner, TaskRecord, TaskStatus,
    TaskStore, TaskStoreError, interrupted_error, now_ms,
};
