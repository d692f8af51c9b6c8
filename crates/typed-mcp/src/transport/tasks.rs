//! The calls a connection has running, counted so a drain can wait for them.
//!
//! tokio-util's `TaskTracker` does this too, but only behind its `rt` feature,
//! which brings in futures-util's default features (the async-await macros
//! and their proc-macro crate); a count and a `Notify` are all a drain needs.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Spawns tasks and tells how many have not finished (or been aborted) yet.
#[derive(Default)]
pub(crate) struct Tasks {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    live: AtomicUsize,
    idle: Notify,
}

/// Held by a spawned task's future: dropped when the task finishes, panics or
/// is aborted (an aborted task drops its future, and so this).
struct Live(Arc<Shared>);

impl Drop for Live {
    fn drop(&mut self) {
        if self.0.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Tasks {
    /// Spawns `task` on the current runtime, counted until its future is dropped.
    pub(crate) fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // Counted before the spawn, so a drain that starts right after sees it.
        self.shared.live.fetch_add(1, Ordering::AcqRel);
        let live = Live(self.shared.clone());
        tokio::spawn(async move {
            let _live = live;
            task.await
        })
    }

    /// The number of tasks spawned whose future has not been dropped yet.
    pub(crate) fn len(&self) -> usize {
        self.shared.live.load(Ordering::Acquire)
    }

    /// Completes once no task is live (at once if none is).
    pub(crate) async fn idle(&self) {
        loop {
            let mut notified = pin!(self.shared.idle.notified());
            // Registered before the count is read: a last task that ends in
            // between still wakes this waiter.
            notified.as_mut().enable();
            if self.len() == 0 {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Tasks;

    #[tokio::test]
    async fn idle_waits_for_every_task_and_counts_aborted_ones_as_done() {
        let tasks = Tasks::default();
        tasks.idle().await;
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let finishing = tasks.spawn(async move {
            let _ = released.await;
        });
        let stuck = tasks.spawn(std::future::pending::<()>());
        assert_eq!(tasks.len(), 2);

        let early = tokio::time::timeout(Duration::from_millis(20), tasks.idle()).await;
        assert!(early.is_err(), "idle returned while two tasks were live");

        release.send(()).unwrap();
        finishing.await.unwrap();
        assert_eq!(tasks.len(), 1);

        stuck.abort();
        tokio::time::timeout(Duration::from_secs(5), tasks.idle())
            .await
            .expect("idle once the last task was aborted");
        assert_eq!(tasks.len(), 0);
    }

    #[tokio::test]
    async fn a_panicking_task_is_no_longer_counted() {
        let tasks = Tasks::default();
        let handle = tasks.spawn(async { panic!("a handler panicked") });
        assert!(handle.await.is_err());
        assert_eq!(tasks.len(), 0);
        tasks.idle().await;
    }
}
