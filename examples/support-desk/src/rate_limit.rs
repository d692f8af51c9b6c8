//! `--rate-limit N`: at most N calls per second per caller, as a tower layer
//! around the handlers (see `typed_mcp::middleware`).
//!
//! Calls are counted in one-second windows per principal id; callers without
//! one (stdio, and HTTP without authentication) share one window. A call over
//! the limit is refused with `-31002` (server overloaded, HTTP `503`) saying
//! when to retry, its handler does not run, and its receipt says
//! `refused_by_layer`.

use std::collections::HashMap;
use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use typed_mcp::RpcError;
use typed_mcp::middleware::{BoxError, HandlerCall, HandlerDone};

/// How long a window lasts.
const WINDOW: Duration = Duration::from_secs(1);

/// The layer: wraps the handler stage in a [`RateLimited`] service.
#[derive(Debug, Clone)]
pub(crate) struct RateLimit {
    windows: Arc<Mutex<Windows>>,
}

impl RateLimit {
    /// At most `calls` calls per second per caller.
    pub(crate) fn per_second(calls: NonZeroU32) -> RateLimit {
        RateLimit {
            windows: Arc::new(Mutex::new(Windows {
                limit: calls.get(),
                by_caller: HashMap::new(),
            })),
        }
    }
}

impl<S> tower::Layer<S> for RateLimit {
    type Service = RateLimited<S>;

    fn layer(&self, inner: S) -> RateLimited<S> {
        RateLimited {
            inner,
            windows: self.windows.clone(),
        }
    }
}

/// Each caller's current window.
#[derive(Debug)]
struct Windows {
    limit: u32,
    /// Principal id (`""` for anonymous callers) → window start and calls in it.
    by_caller: HashMap<String, (Instant, u32)>,
}

impl Windows {
    /// Counts one call of `caller` at `now`; when the call is over the limit,
    /// the calls counted in its window (this one included) and the time until
    /// the window ends.
    fn admit(&mut self, caller: &str, now: Instant) -> Result<(), (u32, Duration)> {
        // Forget windows that ended, so the map holds only recent callers.
        if self.by_caller.len() > 1024 {
            self.by_caller
                .retain(|_, (start, _)| now.duration_since(*start) < WINDOW);
        }
        let (start, calls) = self.by_caller.entry(caller.to_owned()).or_insert((now, 0));
        if now.duration_since(*start) >= WINDOW {
            *start = now;
            *calls = 0;
        }
        *calls = calls.saturating_add(1);
        if *calls > self.limit {
            return Err((*calls, WINDOW.saturating_sub(now.duration_since(*start))));
        }
        Ok(())
    }
}

/// The service [`RateLimit`] puts around the handler stage.
#[derive(Debug, Clone)]
pub(crate) struct RateLimited<S> {
    inner: S,
    windows: Arc<Mutex<Windows>>,
}

type Done = Pin<Box<dyn Future<Output = Result<HandlerDone, BoxError>> + Send>>;

impl<S> tower::Service<HandlerCall> for RateLimited<S>
where
    S: tower::Service<HandlerCall, Response = HandlerDone, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = HandlerDone;
    type Error = BoxError;
    type Future = Done;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: HandlerCall) -> Done {
        let caller = call.principal().map_or("", |p| p.id()).to_owned();
        let admitted = self
            .windows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .admit(&caller, Instant::now());
        match admitted {
            Ok(()) => Box::pin(self.inner.call(call)),
            Err((calls, retry)) => {
                let limit = self.windows.lock().map_or(0, |w| w.limit);
                let who = if caller.is_empty() {
                    "anonymous callers".to_owned()
                } else {
                    format!("caller {caller:?}")
                };
                let retry_ms = u64::try_from(retry.as_millis()).unwrap_or(u64::MAX).max(1);
                let error = RpcError::overloaded(
                    format!(
                        "rate limit: expected at most {limit} calls per second from {who}, found {calls} in this second; retry in {retry_ms} ms"
                    ),
                    retry_ms,
                );
                Box::pin(std::future::ready(Err(Box::new(error) as BoxError)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_admits_the_limit_per_caller_then_refuses_until_it_ends() {
        let mut windows = Windows {
            limit: 2,
            by_caller: HashMap::new(),
        };
        let t0 = Instant::now();
        assert_eq!(windows.admit("a", t0), Ok(()));
        assert_eq!(windows.admit("a", t0), Ok(()));
        let retry = windows.admit("a", t0 + Duration::from_millis(400));
        assert_eq!(retry, Err((3, Duration::from_millis(600))));
        let retry = windows.admit("a", t0 + Duration::from_millis(500));
        assert_eq!(retry, Err((4, Duration::from_millis(500))));
        // Another caller has its own window.
        assert_eq!(windows.admit("b", t0), Ok(()));
        assert_eq!(windows.admit("a", t0 + WINDOW), Ok(()));
    }
}
