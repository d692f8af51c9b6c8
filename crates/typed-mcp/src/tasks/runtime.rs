//! The server's side of the Tasks extension: its settings, the builder
//! calls, `tasks/get`, `tasks/update` and `tasks/cancel`, and the wire shape
//! of a task.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use typed_mcp_core::router::ExtensionMethod;

use super::memory::MemoryTaskStore;
use super::store::{TaskId, TaskOutcome, TaskOwner, TaskRecord, TaskStatus, TaskStore};
use super::time::iso8601;
use crate::RpcError;
use crate::context::{Principal, ToolContext};
use crate::declare::ToolDecl;
use crate::extension::{Extension, ExtensionReply};
use crate::server::ServerBuilder;
use crate::subscribe::{Received, ResourceUpdates};

/// The Tasks extension's identifier.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/tasks";

/// Whether a tool's call may run as a task, and how it becomes one.
///
/// A call becomes a task only when its request declares the extension in
/// `_meta` client capabilities (the extension forbids a task handle to any
/// other client). Then the server decides — the client sends no hint:
///
/// - with no [`inline_window`](Self::inline_window) (the default) the task
///   is created at once and the handler runs in it;
/// - with one, the handler starts inline, and a call that finishes or asks
///   for input within the window is answered directly (a result, or an
///   `input_required` result of a multi round-trip request, as for a plain
///   call); one still running then becomes a task. So input is gathered
///   round by round before the work goes asynchronous.
///
/// A client that does not declare the extension gets a plain call of an
/// [`optional`](Self::optional) tool, and `-32021` (naming the extension in
/// `data.requiredCapabilities`) from a [`required`](Self::required) one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSupport {
    required: bool,
    inline_window: Option<Duration>,
}

impl TaskSupport {
    /// Plain calls and tasks alike.
    pub const fn optional() -> Self {
        TaskSupport {
            required: false,
            inline_window: None,
        }
    }

    /// Tasks only.
    pub const fn required() -> Self {
        TaskSupport {
            required: true,
            inline_window: None,
        }
    }

    /// Runs the handler inline for up to `window` before making the call a
    /// task (see the type's docs).
    #[must_use]
    pub const fn inline_window(mut self, window: Duration) -> Self {
        self.inline_window = Some(window);
        self
    }

    /// True for [`required`](Self::required).
    pub const fn is_required(&self) -> bool {
        self.required
    }

    /// The inline window, when there is one.
    pub const fn window(&self) -> Option<Duration> {
        self.inline_window
    }
}

/// Where tasks live and how long they are kept; set with the
/// [`ServerBuilder`] calls [`task_store`](ServerBuilder::task_store),
/// [`task_ttl`](ServerBuilder::task_ttl) and
/// [`task_poll_interval`](ServerBuilder::task_poll_interval).
pub(crate) struct TaskSettings {
    store: Option<Arc<dyn TaskStore>>,
    ttl: Option<Duration>,
    poll_interval: Duration,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            store: None,
            ttl: Some(ServerBuilder::DEFAULT_TASK_TTL),
            poll_interval: ServerBuilder::DEFAULT_TASK_POLL_INTERVAL,
        }
    }
}

impl ServerBuilder {
    /// Default [`task_ttl`](Self::task_ttl): one hour.
    pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);
    /// Default [`task_poll_interval`](Self::task_poll_interval): one second.
    pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_secs(1);
    /// Default [`heartbeat`](Self::heartbeat): fifteen seconds (typed-mcp-http's
    /// default SSE keep-alive interval too).
    pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(15);

    /// Keeps tasks in `store` (default: a [`MemoryTaskStore`] of
    /// [`MemoryTaskStore::DEFAULT_CAPACITY`] tasks). Used only when a tool
    /// may run as a task.
    pub fn task_store(self, store: impl TaskStore) -> Self {
        self.task_store_shared(Arc::new(store))
    }

    /// [`task_store`](Self::task_store) with a store the application shares
    /// (with another server, or its own code).
    pub fn task_store_shared(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.task_settings.store = Some(store);
        self
    }

    /// How long a task is kept after its creation, finished or not (default
    /// [`Self::DEFAULT_TASK_TTL`]; `None`: until the store drops it). The
    /// client reads it as `ttlMs`; an expired task is unknown to `tasks/get`,
    /// and one still running then is cancelled.
    pub fn task_ttl(mut self, ttl: Option<Duration>) -> Self {
        self.task_settings.ttl = ttl;
        self
    }

    /// The polling interval suggested to clients (`pollIntervalMs`, default
    /// [`Self::DEFAULT_TASK_POLL_INTERVAL`]; at least a millisecond). A task
    /// checks its store for a cancellation or answers made through another
    /// replica at this interval too (at once, when the server has an
    /// [`update_bus`](Self::update_bus) carrying the news of task changes).
    pub fn task_poll_interval(mut self, interval: Duration) -> Self {
        self.task_settings.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Sends a call whose request carries a progress token a progress
    /// notification (`"still working"`) at the end of every `interval` in
    /// which its handler reported no progress itself, so that clients with
    /// idle timeouts keep waiting. Progress must increase, so a heartbeat
    /// carries the last value the call sent plus 0.001 (0 before any), with
    /// no total. typed-mcp-http sends its SSE keep-alive comments at this
    /// interval unless told otherwise. Default [`Self::DEFAULT_HEARTBEAT`];
    /// `None` turns heartbeats off. Calls running as tasks have no stream to
    /// beat on (their client polls).
    pub fn heartbeat(mut self, interval: Option<Duration>) -> Self {
        self.heartbeat = interval.map(|i| i.max(Duration::from_millis(1)));
        self
    }
}

/// The tasks of one server: the store, the settings, and the tasks running
/// in this process (to wake them at once; of a change made through another
/// replica they learn from the update bus, or else at the poll interval).
pub(crate) struct TaskRuntime {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl: Option<Duration>,
    pub(crate) poll_interval: Duration,
    running: Arc<Mutex<RunningTasks>>,
    /// Set once the store's interrupted tasks were recovered.
    recovered: tokio::sync::OnceCell<()>,
    /// Tasks created, to purge expired ones every [`PURGE_EVERY`] creations.
    created: std::sync::atomic::AtomicUsize,
    /// Where the news of a task's change goes (to the listens watching it,
    /// on every replica when the server has an update bus).
    updates: ResourceUpdates,
}

/// Expired tasks are purged from the store every this many creations (and
/// once when the server first uses the store).
const PURGE_EVERY: usize = 64;

/// The tasks running in this process, by id.
type RunningTasks = HashMap<TaskId, Arc<Running>>;

/// A task running in this process.
pub(crate) struct Running {
    pub(crate) cancel: CancellationToken,
    pub(crate) changed: Notify,
}

/// The runtime of a server whose declarations include a task-capable tool.
pub(crate) fn runtime_for(
    tools: &[ToolDecl],
    settings: &mut TaskSettings,
    updates: &ResourceUpdates,
) -> Option<Arc<TaskRuntime>> {
    if !tools.iter().any(|t| t.task.is_some()) {
        return None;
    }
    let store = settings
        .store
        .take()
        .unwrap_or_else(|| Arc::new(MemoryTaskStore::default()));
    Some(Arc::new(TaskRuntime {
        store,
        ttl: settings.ttl,
        poll_interval: settings.poll_interval,
        running: Arc::new(Mutex::new(HashMap::new())),
        recovered: tokio::sync::OnceCell::new(),
        created: std::sync::atomic::AtomicUsize::new(0),
        updates: updates.clone(),
    }))
}

impl TaskRuntime {
    /// Before the server's first use of its store: tasks a previous process
    /// left unfinished become failed (interrupted), and expired ones go.
    pub(crate) async fn ready(&self) {
        self.recovered
            .get_or_init(|| async {
                match self.store.recover_interrupted().await {
                    Ok(0) => {}
                    Ok(n) => tracing::warn!(tasks = n, "tasks interrupted by a previous stop are reported failed"),
                    Err(error) => tracing::error!(%error, "the task store could not recover interrupted tasks"),
                }
                self.purge().await;
                self.hear_other_replicas();
            })
            .await;
    }

    /// Wakes a task running here when the news that it changed comes (from
    /// another replica, through the update bus): its runner then reads the
    /// store at once instead of at its next poll, so a `tasks/cancel` or an
    /// answer sent through another replica takes effect without waiting.
    /// Without a bus no news comes from elsewhere, and the poll does it.
    fn hear_other_replicas(&self) {
        let mut news = self.updates.subscribe();
        let running = Arc::downgrade(&self.running);
        tokio::spawn(async move {
            loop {
                let id = match news.recv().await {
                    Received::Task(id) => id,
                    Received::Updated(_) | Received::Resynchronize => continue,
                    Received::Closed => return,
                };
                // The server is gone once its running tasks are.
                let Some(running) = running.upgrade() else {
                    return;
                };
                let task = running
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&TaskId::from_wire(id.to_string()))
                    .cloned();
                if let Some(task) = task {
                    task.changed.notify_one();
                }
            }
        });
    }

    /// Counts a creation; every [`PURGE_EVERY`]th purges expired tasks.
    pub(crate) async fn created(&self) {
        let n = self
            .created
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        if n.is_multiple_of(PURGE_EVERY) {
            self.purge().await;
        }
    }

    async fn purge(&self) {
        if let Err(error) = self.store.purge_expired().await {
            tracing::warn!(%error, "expired tasks could not be purged");
        }
    }

    /// Tells the listens watching task `id` (here and on other replicas)
    /// that it changed.
    pub(crate) fn changed(&self, id: &TaskId) {
        self.updates.publish_task(id.as_str());
    }

    pub(crate) fn register(&self, id: &TaskId, cancel: CancellationToken) -> Arc<Running> {
        let running = Arc::new(Running {
            cancel,
            changed: Notify::new(),
        });
        self.lock().insert(id.clone(), running.clone());
        running
    }

    pub(crate) fn unregister(&self, id: &TaskId) {
        self.lock().remove(id);
    }

    fn local(&self, id: &TaskId) -> Option<Arc<Running>> {
        self.lock().get(id).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TaskId, Arc<Running>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The owner a call's principal binds its tasks to.
pub(crate) fn owner_of(principal: Option<&Principal>) -> TaskOwner {
    principal.map_or_else(TaskOwner::anonymous, |p| TaskOwner::principal(p.id()))
}

/// The extension's methods, served on the extension seam.
pub(crate) fn extension(runtime: Arc<TaskRuntime>) -> Extension {
    let method = |name: &str| {
        ExtensionMethod::new(EXTENSION_ID, name)
            .with_name_param("taskId")
            .requiring_client_extension()
    };
    let (get, update, cancel) = (runtime.clone(), runtime.clone(), runtime);
    Extension::new(EXTENSION_ID)
        .method_with(method("tasks/get"), move |params, ctx| {
            let runtime = get.clone();
            async move { tasks_get(&runtime, &params, &ctx).await }
        })
        .method_with(method("tasks/update"), move |params, ctx| {
            let runtime = update.clone();
            async move { tasks_update(&runtime, params, &ctx).await }
        })
        .method_with(method("tasks/cancel"), move |params, ctx| {
            let runtime = cancel.clone();
            async move { tasks_cancel(&runtime, &params, &ctx).await }
        })
}

fn task_id(params: &Map<String, Value>) -> Result<TaskId, RpcError> {
    match params.get("taskId") {
        Some(Value::String(id)) => Ok(TaskId::from_wire(id.clone())),
        Some(other) => Err(RpcError::invalid_params(format!(
            "taskId must be a string, found {other}"
        ))),
        None => Err(RpcError::invalid_params("taskId is required")),
    }
}

fn unknown_task(id: &TaskId) -> RpcError {
    // Another principal's task is answered the same way: nobody learns that
    // an id exists.
    RpcError::invalid_params(format!(
        "unknown task {:?}: no task with this id is visible to this caller (it may have expired)",
        id.as_str()
    ))
}

fn store_error(error: super::store::TaskStoreError) -> RpcError {
    tracing::error!(%error, "task store failed");
    RpcError::internal(error.to_string())
}

async fn tasks_get(
    runtime: &TaskRuntime,
    params: &Map<String, Value>,
    ctx: &ToolContext,
) -> ExtensionReply {
    let id = task_id(params)?;
    runtime.ready().await;
    let owner = owner_of(ctx.principal());
    let record = runtime
        .store
        .get(&owner, &id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| unknown_task(&id))?;
    Ok(task_fields(&record, true))
}

async fn tasks_update(
    runtime: &TaskRuntime,
    params: Map<String, Value>,
    ctx: &ToolContext,
) -> ExtensionReply {
    let id = task_id(&params)?;
    let responses = match params.get("inputResponses") {
        Some(Value::Object(responses)) => responses.clone(),
        Some(other) => {
            return Err(RpcError::invalid_params(format!(
                "inputResponses must be an object keyed by inputRequests keys, found {other}"
            )));
        }
        None => return Err(RpcError::invalid_params("inputResponses is required")),
    };
    runtime.ready().await;
    let owner = owner_of(ctx.principal());
    // The extension asks for an acknowledgement even for an unknown task, and
    // answers to keys not outstanding are ignored (the store's rule).
    let after = runtime
        .store
        .respond(&owner, &id, responses)
        .await
        .map_err(store_error)?;
    if after.is_some() {
        runtime.changed(&id);
        if let Some(running) = runtime.local(&id) {
            running.changed.notify_one();
        }
    }
    Ok(Map::new())
}

async fn tasks_cancel(
    runtime: &TaskRuntime,
    params: &Map<String, Value>,
    ctx: &ToolContext,
) -> ExtensionReply {
    let id = task_id(params)?;
    runtime.ready().await;
    let owner = owner_of(ctx.principal());
    // An unknown id is -32602, as for tasks/get (the conformance suite reads
    // the specification so); a terminal task gets the same empty ack.
    runtime
        .store
        .cancel(&owner, &id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| unknown_task(&id))?;
    runtime.changed(&id);
    if let Some(running) = runtime.local(&id) {
        running.cancel.cancel();
        running.changed.notify_one();
    }
    Ok(Map::new())
}

/// A task's wire fields: the `Task` base (for `CreateTaskResult`), and with
/// `detailed` what its status inlines (`inputRequests`, `result`, `error`)
/// as `tasks/get` answers it. The wire names are the ones the conformance
/// suite and the TypeScript ext-tasks client read (`ttlMs`,
/// `pollIntervalMs`); no `requestState` is ever sent (the suite's
/// `tasks-request-state-removal`).
pub(crate) fn task_fields(record: &TaskRecord, detailed: bool) -> Map<String, Value> {
    let mut task = Map::new();
    task.insert("taskId".into(), json!(record.id.as_str()));
    task.insert("status".into(), json!(record.status.as_str()));
    if let Some(message) = &record.status_message {
        task.insert("statusMessage".into(), json!(message));
    }
    task.insert("createdAt".into(), json!(iso8601(record.created_at_ms)));
    task.insert("lastUpdatedAt".into(), json!(iso8601(record.updated_at_ms)));
    task.insert("ttlMs".into(), json!(record.ttl_ms()));
    task.insert(
        "pollIntervalMs".into(),
        json!(record.poll_interval_ms.max(1)),
    );
    if !detailed {
        return task;
    }
    match (record.status, &record.outcome) {
        (TaskStatus::InputRequired, _) => {
            let requests = record.input_requests.clone().unwrap_or_default();
            task.insert("inputRequests".into(), Value::Object(requests));
        }
        (TaskStatus::Completed, Some(TaskOutcome::Result(result))) => {
            task.insert("result".into(), result.clone());
        }
        (TaskStatus::Failed, Some(TaskOutcome::Error(error))) => {
            task.insert(
                "error".into(),
                serde_json::to_value(error).unwrap_or_else(|_| json!({})),
            );
        }
        _ => {}
    }
    task
}
