//! The default [`TaskStore`]: in this process's memory, bounded, with expiry.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Map, Value};

use super::store::{
    StoreFuture, TaskChange, TaskId, TaskOwner, TaskRecord, TaskStore, TaskStoreError, now_ms,
};

/// Tasks in memory: lost when the process ends (use a durable store, such as
/// the SQLite one of the `typed-mcp-sqlite` crate, to keep them across
/// restarts).
///
/// Bounded: it holds at most `capacity` tasks. When a new task finds it full,
/// expired tasks are dropped first, then the oldest finished ones; a store
/// full of unfinished tasks refuses the new one ([`TaskStoreError::Full`]),
/// which the client sees as a `-32603` error on its `tools/call`.
#[derive(Debug)]
pub struct MemoryTaskStore {
    capacity: usize,
    tasks: Mutex<HashMap<TaskId, TaskRecord>>,
}

impl MemoryTaskStore {
    /// The default bound: 10 000 tasks.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    /// A store holding at most `capacity` tasks (at least one).
    pub fn new(capacity: usize) -> Self {
        MemoryTaskStore {
            capacity: capacity.max(1),
            tasks: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TaskId, TaskRecord>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live record `id` of `owner`, for reading or changing.
    fn owned<'m>(
        tasks: &'m mut HashMap<TaskId, TaskRecord>,
        owner: &TaskOwner,
        id: &TaskId,
        now: u64,
    ) -> Option<&'m mut TaskRecord> {
        tasks
            .get_mut(id)
            .filter(|r| &r.owner == owner && !r.is_expired(now))
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        MemoryTaskStore::new(Self::DEFAULT_CAPACITY)
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, ()> {
        let result = (|| {
            let mut tasks = self.lock();
            if tasks.contains_key(&record.id) {
                return Err(TaskStoreError::Duplicate(record.id.clone()));
            }
            if tasks.len() >= self.capacity {
                let now = now_ms();
                tasks.retain(|_, r| !r.is_expired(now));
            }
            if tasks.len() >= self.capacity {
                let oldest_finished = tasks
                    .values()
                    .filter(|r| r.status.is_terminal())
                    .min_by_key(|r| r.updated_at_ms)
                    .map(|r| r.id.clone());
                match oldest_finished {
                    Some(id) => {
                        tasks.remove(&id);
                    }
                    None => {
                        return Err(TaskStoreError::Full {
                            capacity: self.capacity,
                        });
                    }
                }
            }
            tasks.insert(record.id.clone(), record);
            Ok(())
        })();
        Box::pin(async move { result })
    }

    fn get<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let found = Self::owned(&mut self.lock(), owner, id, now_ms()).map(|r| r.clone());
        Box::pin(async move { Ok(found) })
    }

    fn list<'a>(&'a self, owner: &'a TaskOwner) -> StoreFuture<'a, Vec<TaskRecord>> {
        let now = now_ms();
        let mut found: Vec<TaskRecord> = self
            .lock()
            .values()
            .filter(|r| &r.owner == owner && !r.is_expired(now))
            .cloned()
            .collect();
        found.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
        Box::pin(async move { Ok(found) })
    }

    fn update<'a>(
        &'a self,
        id: &'a TaskId,
        change: TaskChange,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let now = now_ms();
        let after = self
            .lock()
            .get_mut(id)
            .filter(|r| !r.is_expired(now))
            .map(|r| {
                r.apply(&change, now);
                r.clone()
            });
        Box::pin(async move { Ok(after) })
    }

    fn cancel<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let now = now_ms();
        let after = Self::owned(&mut self.lock(), owner, id, now).map(|r| {
            r.apply(&TaskChange::Cancelled { message: None }, now);
            r.clone()
        });
        Box::pin(async move { Ok(after) })
    }

    fn respond<'a>(
        &'a self,
        owner: &'a TaskOwner,
        id: &'a TaskId,
        responses: Map<String, Value>,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        let now = now_ms();
        let after = Self::owned(&mut self.lock(), owner, id, now).map(|r| {
            r.take_responses(&responses, now);
            r.clone()
        });
        Box::pin(async move { Ok(after) })
    }

    fn recover_interrupted(&self) -> StoreFuture<'_, usize> {
        // Nothing outlives the process here: a new store starts empty.
        Box::pin(async { Ok(0) })
    }

    fn purge_expired(&self) -> StoreFuture<'_, usize> {
        let now = now_ms();
        let mut tasks = self.lock();
        let before = tasks.len();
        tasks.retain(|_, r| !r.is_expired(now));
        let purged = before - tasks.len();
        Box::pin(async move { Ok(purged) })
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_store_contract() {
        super::super::check_store(&MemoryTaskStore::default()).await;
    }

    #[tokio::test]
    async fn a_full_store_drops_finished_tasks_first_then_refuses() {
        use std::time::Duration;
        let store = MemoryTaskStore::new(2);
        let owner = TaskOwner::anonymous();
        let task = |owner: &TaskOwner| {
            TaskRecord::new(
                TaskId::random(),
                owner.clone(),
                "t",
                None,
                Duration::from_millis(100),
            )
        };
        let (first, second) = (task(&owner), task(&owner));
        store.create(first.clone()).await.unwrap();
        store.create(second.clone()).await.unwrap();
        let third = task(&owner);
        assert_eq!(
            store.create(third.clone()).await,
            Err(TaskStoreError::Full { capacity: 2 }),
            "two unfinished tasks fill a store of two"
        );
        store.cancel(&owner, &first.id).await.unwrap();
        store.create(third.clone()).await.unwrap();
        assert_eq!(
            store.get(&owner, &first.id).await.unwrap(),
            None,
            "the finished task made room"
        );
        assert!(store.get(&owner, &second.id).await.unwrap().is_some());
        assert!(store.get(&owner, &third.id).await.unwrap().is_some());
    }
}
