//! A call's cancellation, as cheap as the common call needs it.
//!
//! Every call has a cancellation: the connection's registry fires it (the
//! client's `notifications/cancelled`, or its stream closed), the handler's
//! context reads it, and the receipt asks it whether the call ended cancelled.
//! A [`CancellationToken`] would serve, but each of its clones, drops and
//! checks takes a mutex, and a call passes its cancellation around about ten
//! times. Most calls are never cancelled and never wait on it, so a call's
//! cancellation is a shared flag, and the token is made only when something
//! asks for one ([`ToolContext::cancellation_token`](crate::ToolContext::cancellation_token),
//! an `await` on the cancellation).

use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// One call's cancellation: cheap to clone (one reference count), to check
/// and to drop.
#[derive(Clone, Default)]
pub(crate) struct CallCancel(Arc<State>);

#[derive(Default)]
struct State {
    cancelled: AtomicBool,
    /// Made on the first request for a token; cancelled with the call.
    token: OnceLock<CancellationToken>,
}

impl CallCancel {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Cancels the call: every check from now on is true, and a token handed
    /// out before or after fires.
    pub(crate) fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        // Paired with the fence in `token`: either this sees the token made
        // there, or that sees the flag set here (both may; cancelling twice
        // is harmless).
        fence(Ordering::SeqCst);
        if let Some(token) = self.0.token.get() {
            token.cancel();
        }
    }

    /// Whether the call was cancelled, here or through a token handed out
    /// (a task's runtime, or code holding the handler's token, may cancel
    /// that).
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Acquire)
            || self
                .0
                .token
                .get()
                .is_some_and(CancellationToken::is_cancelled)
    }

    /// A token that fires with the call (already fired when the call was
    /// cancelled before it was asked for).
    pub(crate) fn token(&self) -> CancellationToken {
        let token = self.0.token.get_or_init(CancellationToken::new).clone();
        fence(Ordering::SeqCst);
        if self.0.cancelled.load(Ordering::SeqCst) {
            token.cancel();
        }
        token
    }

    /// Completes once the call is cancelled.
    pub(crate) async fn cancelled(&self) {
        self.token().cancelled_owned().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_call_is_not_cancelled() {
        let cancel = CallCancel::new();
        assert!(!cancel.is_cancelled());
        assert!(!cancel.token().is_cancelled());
        assert!(!cancel.is_cancelled(), "asking for a token cancels nothing");
    }

    #[test]
    fn cancel_reaches_every_clone_and_a_token_handed_out_before() {
        let cancel = CallCancel::new();
        let clone = cancel.clone();
        let token = cancel.token();
        clone.cancel();
        assert!(cancel.is_cancelled());
        assert!(token.is_cancelled());
    }

    #[test]
    fn a_token_asked_for_after_the_cancel_has_fired() {
        let cancel = CallCancel::new();
        cancel.cancel();
        assert!(cancel.token().is_cancelled());
    }

    #[test]
    fn a_cancelled_token_cancels_the_call() {
        let cancel = CallCancel::new();
        cancel.token().cancel();
        assert!(cancel.is_cancelled());
    }

    #[tokio::test]
    async fn cancelled_completes_on_a_cancel_from_another_task() {
        let cancel = CallCancel::new();
        let waiter = tokio::spawn({
            let cancel = cancel.clone();
            async move { cancel.cancelled().await }
        });
        tokio::task::yield_now().await;
        cancel.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("the waiter woke")
            .expect("the waiter did not panic");
    }

    #[test]
    fn a_cancel_racing_the_first_token_is_never_lost() {
        // Whichever of the two comes first, the token ends up cancelled.
        for _ in 0..2000 {
            let cancel = CallCancel::new();
            let other = cancel.clone();
            let canceller = std::thread::spawn(move || other.cancel());
            let token = cancel.token();
            canceller.join().expect("the canceller did not panic");
            assert!(token.is_cancelled());
        }
    }
}
