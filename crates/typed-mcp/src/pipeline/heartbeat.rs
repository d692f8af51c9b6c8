//! Heartbeats: a call whose request carries a progress token gets a progress
//! notification every interval in which its handler reported none, so a
//! client with an idle timeout keeps waiting
//! ([`ServerBuilder::heartbeat`](crate::ServerBuilder::heartbeat)).

use std::future::Future;
use std::pin::pin;
use std::time::Duration;

use futures_util::future::{Either, select};

use crate::context::ToolContext;

/// Runs `call`, beating every `interval` while it runs (when the request
/// asked for progress and heartbeats are on).
pub(super) async fn with_heartbeat<F: Future>(
    ctx: &ToolContext,
    interval: Option<Duration>,
    call: F,
) -> F::Output {
    match interval.filter(|_| ctx.meta().progress_token.is_some()) {
        None => call.await,
        // Boxed: the beats (a timer, a progress notification's send) would
        // otherwise size every call's future, and most calls have none.
        Some(interval) => Box::pin(beating(ctx, interval, call)).await,
    }
}

/// Runs `call`, beating every `interval` while it runs.
async fn beating<F: Future>(ctx: &ToolContext, interval: Duration, call: F) -> F::Output {
    let beats = async {
        let mut seen = ctx.last_progress();
        loop {
            tokio::time::sleep(interval).await;
            // The handler reported since the last tick: no beat is needed.
            if ctx.last_progress() == seen {
                ctx.heartbeat().await;
            }
            seen = ctx.last_progress();
        }
    };
    let mut call = pin!(call);
    match select(call.as_mut(), pin!(beats)).await {
        Either::Left((output, _)) => output,
        // The beats never end; should they, the call still decides.
        Either::Right(((), _)) => call.await,
    }
}
