//! The one handler abstraction: an async function of a request and its
//! [`ToolContext`], whose future yields `Result<T, E>` or, when it may ask
//! for input first, `Result<Answer<T>, E>`; and [`blocking`], which runs
//! synchronous work on tokio's blocking pool from inside such a function.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use tokio::sync::OwnedSemaphorePermit;
use tokio::task::JoinHandle;

use crate::answer::Answer;
use crate::context::ToolContext;
use crate::transport::pin_in_place;

/// A stored handler: the request in, the declaration's reply out.
pub(crate) type Handler<I, O> =
    Arc<dyn Fn(I, ToolContext) -> BoxFuture<'static, O> + Send + Sync + 'static>;

/// Boxes `f` as a [`Handler`] whose reply is `Result<Answer<T>, E>`; also
/// says whether the handler can ask for input (`input_required`).
pub(crate) fn boxed<I, T, E, F, Fut>(f: F) -> (Handler<I, Result<Answer<T>, E>>, bool)
where
    F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoAnswer<T, E>,
{
    let handler: Handler<I, Result<Answer<T>, E>> = Arc::new(move |input, ctx| {
        let future = f(input, ctx);
        pin_in_place(move || async move { future.await.into_answer() })
    });
    (handler, <Fut::Output as IntoAnswer<T, E>>::ASKS_INPUT)
}

mod sealed {
    pub trait Sealed {}
}

/// What a handler's future may yield: `Result<T, E>` (the reply) or
/// `Result<Answer<T>, E>` (the reply, or a request for input first). `T` and
/// `E` are fixed by the declaration: a tool answers a
/// [`CallToolResult`](crate::wire::CallToolResult) or a
/// [`ToolError`](crate::ToolError), a resource a `Vec<ResourceContents>` or
/// an [`RpcError`](crate::RpcError), a prompt a `GetPromptResult` or an
/// `RpcError`.
///
/// Sealed: the two shapes above are the whole contract.
pub trait IntoAnswer<T, E>: sealed::Sealed + Send + 'static {
    /// Whether a value of this type can ask for input.
    #[doc(hidden)]
    const ASKS_INPUT: bool;
    /// The reply.
    #[doc(hidden)]
    fn into_answer(self) -> Result<Answer<T>, E>;
}

impl<T, E> sealed::Sealed for Result<T, E> {}

impl<T: Send + 'static, E: Send + 'static> IntoAnswer<T, E> for Result<T, E> {
    const ASKS_INPUT: bool = false;
    fn into_answer(self) -> Result<Answer<T>, E> {
        self.map(Answer::Done)
    }
}

impl<T: Send + 'static, E: Send + 'static> IntoAnswer<T, E> for Result<Answer<T>, E> {
    const ASKS_INPUT: bool = true;
    fn into_answer(self) -> Result<Answer<T>, E> {
        self
    }
}

tokio::task_local! {
    /// The concurrency slot of the call whose handler runs in this task;
    /// [`blocking`] moves it onto the blocking thread.
    static SLOT: RefCell<Option<OwnedSemaphorePermit>>;
}

/// Runs `future` holding `slot` until it finishes or is dropped, unless
/// [`blocking`] work inside it takes the slot along to its thread.
pub(crate) async fn holding_slot<F: Future>(
    slot: Option<OwnedSemaphorePermit>,
    future: F,
) -> F::Output {
    SLOT.scope(RefCell::new(slot), future).await
}

/// Runs synchronous work on tokio's blocking pool, as a future a handler
/// returns or awaits, so a slow computation or blocking I/O never stalls
/// other requests:
///
/// ```
/// use typed_mcp::blocking;
/// use typed_mcp::declare::ToolDecl;
/// use typed_mcp::wire::CallToolResult;
///
/// let digest = ToolDecl::builder("digest")
///     .description("Hash a file.")
///     .handler(|args, _ctx| {
///         blocking(move || {
///             let path = args.get("path").and_then(|p| p.as_str()).unwrap_or_default();
///             Ok(CallToolResult::text(format!("read {path}")))
///         })
///     });
/// ```
///
/// Inside a handler, the work runs with the call's [`ToolContext`] current
/// ([`ToolContext::current`]) and keeps the call's concurrency slot until it
/// returns, even when a deadline or a cancellation has already answered the
/// call: a thread cannot be stopped, so it must not let a new call start in
/// its place. A panic in `f` is the handler's panic. The hand-off costs a
/// thread wake-up (tens of microseconds); quick work that never blocks is
/// better done in the async function itself.
///
/// # Panics
///
/// When polled outside a tokio runtime.
pub fn blocking<R, F>(f: F) -> Blocking<F, R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    Blocking {
        state: State::Ready(Some(f)),
    }
}

/// The future [`blocking`] returns: the value of its function `F`.
#[must_use = "blocking work does nothing until it is awaited or returned"]
pub struct Blocking<F, R> {
    state: State<F, R>,
}

// The function is kept unboxed until it moves onto its thread: no
// allocation of its own per call.
enum State<F, R> {
    Ready(Option<F>),
    Running(JoinHandle<R>),
}

// Nothing is pinned structurally: the function is moved out, and the join
// handle is `Unpin`.
impl<F, R> Unpin for Blocking<F, R> {}

impl<F, R> std::fmt::Debug for Blocking<F, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Ready(_) => "ready",
            State::Running(_) => "running",
        };
        f.debug_struct("Blocking").field("state", &state).finish()
    }
}

impl<F, R> Future for Blocking<F, R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    type Output = R;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        if let State::Ready(f) = &mut self.state {
            let f = f.take().expect("a Blocking future is started once");
            let ctx = ToolContext::try_current();
            let slot = SLOT.try_with(|s| s.borrow_mut().take()).ok().flatten();
            let handle = tokio::task::spawn_blocking(move || {
                let _slot = slot;
                match ctx {
                    Some(ctx) => ctx.enter(f),
                    None => f(),
                }
            });
            self.state = State::Running(handle);
        }
        let State::Running(handle) = &mut self.state else {
            unreachable!("started above")
        };
        match Pin::new(handle).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(value)) => Poll::Ready(value),
            // The handler's panic, caught (and reported) by the pipeline.
            Poll::Ready(Err(e)) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Poll::Ready(Err(_)) => panic!("the runtime shut down under blocking work"),
        }
    }
}
