//! The calls a connection has running, counted so a drain can wait for them.
//!
//! tokio-util's `TaskTracker` does this too, but only behind its `rt` feature,
//! which brings in futures-util's default features (the async-await macros
//! and their proc-macro crate); a count and a `Notify` are all a drain needs.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

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
    #[cfg(test)]
    pub(crate) fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        spawn_counted(self.count(), task)
    }

    /// Counts a task before it runs or is spawned, so a drain that starts
    /// right after sees it.
    fn count(&self) -> Live {
        self.shared.live.fetch_add(1, Ordering::AcqRel);
        Live(self.shared.clone())
    }

    /// Polls `task` once, here; spawns it (counted, as [`spawn`](Self::spawn)
    /// does) only if it is not done yet, and returns its handle.
    ///
    /// Most calls finish in their first poll (a tool that does not wait):
    /// they then cost no task, no wake-up and no hand-off, and their answer
    /// is queued before the caller reads its next request. The first poll
    /// wakes nobody (its waker does nothing): the spawned task is polled
    /// anew, which registers the task's own waker wherever the future waits.
    /// A panic in that poll ends the task as a panic in a spawned task does:
    /// reported by the panic hook, the future dropped, the caller unharmed.
    pub(crate) fn run_or_spawn<F>(&self, mut task: Pin<Box<F>>) -> Option<JoinHandle<()>>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let live = self.count();
        let mut cx = Context::from_waker(Waker::noop());
        match catch_unwind(AssertUnwindSafe(|| task.as_mut().poll(&mut cx))) {
            Ok(Poll::Ready(())) | Err(_) => None,
            Ok(Poll::Pending) => Some(spawn_counted(live, task)),
        }
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

/// Boxes the future `make` returns, allocating first so the future can be
/// built in its box: `Box::pin(future)` builds it on the stack and then
/// copies all of it (a future is as large as its largest state, often more
/// than a kilobyte) into the allocation, touching both copies. The pipeline
/// boxes its call futures with it, and a transport its per-request ones.
///
/// ```
/// use typed_mcp::transport::pin_in_place;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let answer = pin_in_place(|| async { 6 * 7 });
/// assert_eq!(answer.await, 42);
/// # });
/// ```
pub fn pin_in_place<F>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
    let room = Box::new_uninit();
    Box::into_pin(Box::write(room, built(make)))
}

/// Calls `make`, out of line: a call returns its future through a pointer,
/// which the optimizer can aim at the box (inlined, the future is built on
/// the stack and copied whole).
#[inline(never)]
fn built<F>(make: impl FnOnce() -> F) -> F {
    make()
}

/// Spawns `task`, which stays counted by `live` until its future is dropped.
fn spawn_counted<F>(live: Live, task: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(async move {
        let _live = live;
        task.await
    })
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
    async fn a_task_done_in_its_first_poll_is_not_spawned_and_a_waiting_one_is() {
        let tasks = Tasks::default();
        let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = ran.clone();
        let handle = tasks.run_or_spawn(Box::pin(async move {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }));
        assert!(handle.is_none(), "a task done at once needs no spawn");
        assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
        assert_eq!(tasks.len(), 0);

        // A task that waits is spawned and woken through its own waker: the
        // first poll's waker (which does nothing) must not be the one kept.
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let (done_tx, done) = tokio::sync::oneshot::channel::<()>();
        let handle = tasks.run_or_spawn(Box::pin(async move {
            let _ = released.await;
            let _ = done_tx.send(());
        }));
        assert!(handle.is_some(), "a waiting task is spawned");
        assert_eq!(tasks.len(), 1);
        tokio::task::yield_now().await;
        release.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), done)
            .await
            .expect("the spawned task was woken")
            .unwrap();
        tokio::time::timeout(Duration::from_secs(5), tasks.idle())
            .await
            .expect("idle once it finished");
    }

    #[tokio::test]
    async fn a_panic_in_the_first_poll_leaves_the_caller_serving() {
        let tasks = Tasks::default();
        let handle = tasks.run_or_spawn(Box::pin(async { panic!("a handler panicked") }));
        assert!(handle.is_none());
        assert_eq!(tasks.len(), 0);
        tasks.idle().await;
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
