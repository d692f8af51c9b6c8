//! Task status notifications (`notifications/tasks`): what one
//! `subscriptions/listen` stream watches, and when it speaks (see
//! [`subscribe`](crate::subscribe#task-status-notifications)).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::runtime::{TaskRuntime, task_fields};
use super::store::{TaskId, TaskOwner, TaskRecord, TaskStatus};

/// The notification's method, as the extension names it.
pub const TASK_STATUS: &str = "notifications/tasks";

/// How many task ids one `subscriptions/listen` stream may watch; the ids
/// past this many are left out of the acknowledgement (and never notified).
pub const MAX_WATCHED_TASKS: usize = 64;

/// The tasks one listen stream watches, with what it last saw of each.
pub(crate) struct TaskWatch {
    runtime: Option<Arc<TaskRuntime>>,
    owner: TaskOwner,
    /// The ids the acknowledgement honoured, in the client's order.
    honoured: Vec<String>,
    /// The unfinished ones still watched, with the state last seen.
    watched: Vec<(TaskId, Seen)>,
}

/// What tells one state of a task from the next: every change the store
/// applies moves `lastUpdatedAt` or the status (or asks for new input).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    status: TaskStatus,
    updated_at_ms: u64,
    asked: Option<Vec<String>>,
}

impl Seen {
    fn of(task: &TaskRecord) -> Self {
        Seen {
            status: task.status,
            updated_at_ms: task.updated_at_ms,
            asked: task
                .input_requests
                .as_ref()
                .map(|requests| requests.keys().cloned().collect()),
        }
    }
}

impl TaskWatch {
    /// Watches nothing (no `taskIds`, or a server without tasks).
    pub(crate) fn none() -> Self {
        TaskWatch {
            runtime: None,
            owner: TaskOwner::anonymous(),
            honoured: Vec::new(),
            watched: Vec::new(),
        }
    }

    /// Watches those of `ids` that are `owner`'s live tasks (the first
    /// [`MAX_WATCHED_TASKS`] distinct ones), reading each once now: changes
    /// after this are notified.
    pub(crate) async fn start(
        runtime: Arc<TaskRuntime>,
        owner: TaskOwner,
        ids: Vec<String>,
    ) -> Self {
        runtime.ready().await;
        let mut watch = TaskWatch {
            runtime: None,
            owner,
            honoured: Vec::new(),
            watched: Vec::new(),
        };
        let mut distinct: Vec<String> = Vec::new();
        for id in ids {
            if !distinct.contains(&id) {
                distinct.push(id);
            }
        }
        if distinct.len() > MAX_WATCHED_TASKS {
            tracing::debug!(
                asked = distinct.len(),
                honoured = MAX_WATCHED_TASKS,
                "a listen asked for more task ids than one stream watches"
            );
            distinct.truncate(MAX_WATCHED_TASKS);
        }
        for id in distinct {
            let task = TaskId::from_wire(id.clone());
            match runtime.store.get(&watch.owner, &task).await {
                Ok(Some(record)) => {
                    watch.honoured.push(id);
                    // A finished task changes no more: honoured, never read again.
                    if !record.status.is_terminal() {
                        watch.watched.push((task, Seen::of(&record)));
                    }
                }
                // Unknown, expired or another principal's: not honoured,
                // exactly as for an id that never existed.
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(%error, task = %task, "a watched task could not be read; it is not honoured");
                }
            }
        }
        watch.runtime = Some(runtime);
        watch
    }

    /// The ids to acknowledge (`None`: no task id is honoured).
    pub(crate) fn honoured(&self) -> Option<Vec<String>> {
        (!self.honoured.is_empty()).then(|| self.honoured.clone())
    }

    /// How often to re-read the unfinished watched tasks (`None`: none is
    /// left).
    pub(crate) fn poll_interval(&self) -> Option<Duration> {
        let runtime = self.runtime.as_ref()?;
        (!self.watched.is_empty()).then_some(runtime.poll_interval)
    }

    /// The task `id` as `tasks/get` answers it now, when it is watched and
    /// changed since last seen.
    pub(crate) async fn reread(&mut self, id: &str) -> Option<Map<String, Value>> {
        let index = self.watched.iter().position(|(t, _)| t.as_str() == id)?;
        self.read_at(index).await
    }

    /// Every watched task that changed since last seen, as `tasks/get`
    /// answers it now.
    pub(crate) async fn reread_all(&mut self) -> Vec<Map<String, Value>> {
        let mut changed = Vec::new();
        let mut index = 0;
        while index < self.watched.len() {
            let before = self.watched.len();
            changed.extend(self.read_at(index).await);
            // A task dropped from the watch leaves its index to the next one.
            if self.watched.len() == before {
                index += 1;
            }
        }
        changed
    }

    /// Reads `watched[index]`: the task when it changed since last seen. A
    /// task that is finished now (its last notification) or gone (expired)
    /// is dropped from the watch.
    async fn read_at(&mut self, index: usize) -> Option<Map<String, Value>> {
        let runtime = self.runtime.clone()?;
        let (id, seen) = &self.watched[index];
        match runtime.store.get(&self.owner, id).await {
            Ok(Some(record)) => {
                let now = Seen::of(&record);
                if &now == seen {
                    return None;
                }
                if record.status.is_terminal() {
                    self.watched.remove(index);
                } else {
                    self.watched[index].1 = now;
                }
                Some(task_fields(&record, true))
            }
            Ok(None) => {
                // Expired (or purged): nothing more will be said of it.
                self.watched.remove(index);
                None
            }
            Err(error) => {
                tracing::warn!(%error, task = %id, "a watched task could not be read; trying again at its poll interval");
                None
            }
        }
    }
}
