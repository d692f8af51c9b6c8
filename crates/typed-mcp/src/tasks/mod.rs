//! Long-running calls as tasks: the Tasks extension
//! (`io.modelcontextprotocol/tasks`) and where its tasks live.
//!
//! A tool declared task-capable (`#[tool(task)]`, or `ToolDecl::task` for a
//! hand-written declaration) may answer a `tools/call`
//! with a task handle instead of its result, when the request declares the
//! extension in its client capabilities; the client then polls `tasks/get`,
//! answers input with `tasks/update` and may `tasks/cancel`. Tasks live in a
//! [`TaskStore`]: [`MemoryTaskStore`] by default, or a durable one chosen
//! with one builder call.

mod memory;
mod runtime;
mod store;
mod time;

#[cfg(feature = "testing")]
mod checks;

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub use checks::check_store;
pub use memory::MemoryTaskStore;
pub use runtime::{EXTENSION_ID, TaskSupport};
pub(crate) use runtime::{
    Running, TaskRuntime, TaskSettings, extension, owner_of, runtime_for, task_fields,
};
pub use store::{
    StoreFuture, StoredError, TaskChange, TaskId, TaskOutcome, TaskOwner, TaskRecord, TaskStatus,
    TaskStore, TaskStoreError, interrupted_error, now_ms,
};
