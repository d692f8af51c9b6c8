//! The application's own tower layers around the handlers.
//!
//! [`ServerBuilder::layer`](crate::ServerBuilder::layer) wraps the handler
//! stage of every tool, resource, prompt and completer in a
//! [`tower::Layer`] — a concurrency or rate limit, a timeout, metrics, a
//! cache. A layer sees each call as a [`HandlerCall`] (what is called, by
//! whom) and passes it on to the next service, or refuses it by returning an
//! error.
//!
//! Governance cannot be bypassed by a layer: the grants are checked before
//! it (an ungranted call never reaches it), and the receipt and redaction
//! happen after it. A call a layer refuses is answered with a JSON-RPC error
//! — the layer's own [`RpcError`](crate::RpcError) when it returns one (say
//! `RpcError::overloaded` for a rate limit), otherwise `-31003` with the
//! error's message — and its receipt says
//! [`RefusedByLayer`](crate::receipt::Outcome::RefusedByLayer).
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::task::{Context, Poll};
//! use typed_mcp::middleware::{BoxError, HandlerCall, HandlerDone};
//! use typed_mcp::Server;
//!
//! /// Counts the calls that reach the handlers.
//! #[derive(Clone)]
//! struct Count<S> { inner: S, calls: Arc<AtomicU64> }
//!
//! impl<S> tower::Service<HandlerCall> for Count<S>
//! where
//!     S: tower::Service<HandlerCall, Response = HandlerDone, Error = BoxError>,
//! {
//!     type Response = HandlerDone;
//!     type Error = BoxError;
//!     type Future = S::Future;
//!
//!     fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
//!         self.inner.poll_ready(cx)
//!     }
//!
//!     fn call(&mut self, call: HandlerCall) -> Self::Future {
//!         self.calls.fetch_add(1, Ordering::Relaxed);
//!         self.inner.call(call)
//!     }
//! }
//!
//! let calls = Arc::new(AtomicU64::new(0));
//! let counter = calls.clone();
//! let server = Server::new("demo", "1.0.0")
//!     .layer(tower::layer::layer_fn(move |inner| Count { inner, calls: counter.clone() }))
//!     .build()?;
//! # drop(server);
//! # Ok::<(), typed_mcp::BuildError>(())
//! ```

use std::any::Any;

use futures_util::future::BoxFuture;
use tower::util::BoxCloneService;
use typed_mcp_core::RequestId;

use crate::context::{Principal, ToolContext};

/// The error type of the handler stage's services.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The service a layer wraps: the rest of the handler stage, type-erased.
pub type HandlerService = BoxCloneService<HandlerCall, HandlerDone, BoxError>;

/// One call entering the handler stage: what is called and by whom. Passing
/// it to the inner service runs the handler.
pub struct HandlerCall {
    method: &'static str,
    name: String,
    ctx: ToolContext,
    run: BoxFuture<'static, HandlerDone>,
}

impl std::fmt::Debug for HandlerCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerCall")
            .field("method", &self.method)
            .field("name", &self.name)
            .field("request_id", self.ctx.request_id())
            .finish_non_exhaustive()
    }
}

impl HandlerCall {
    pub(crate) fn new(
        method: &'static str,
        name: &str,
        ctx: ToolContext,
        run: BoxFuture<'static, HandlerDone>,
    ) -> Self {
        HandlerCall {
            method,
            name: name.to_owned(),
            ctx,
            run,
        }
    }

    /// The MCP method: `tools/call`, `resources/read`, `prompts/get` or
    /// `completion/complete`.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The tool's or prompt's name, the resource's URI, or the completed
    /// argument's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The caller the transport authenticated, if any.
    pub fn principal(&self) -> Option<&Principal> {
        self.ctx.principal()
    }

    /// The request id.
    pub fn request_id(&self) -> &RequestId {
        self.ctx.request_id()
    }

    /// The call's whole context.
    pub fn context(&self) -> &ToolContext {
        &self.ctx
    }
}

/// What the handler stage produced for one call: opaque to layers, which
/// pass it back out as they got it.
pub struct HandlerDone(Box<dyn Any + Send>);

impl std::fmt::Debug for HandlerDone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HandlerDone(..)")
    }
}

impl HandlerDone {
    pub(crate) fn new<T: Send + 'static>(value: T) -> Self {
        HandlerDone(Box::new(value))
    }

    pub(crate) fn into_inner<T: 'static>(self) -> Option<T> {
        self.0.downcast::<T>().ok().map(|b| *b)
    }
}

/// The innermost service: runs the handler.
pub(crate) fn handler_service() -> HandlerService {
    BoxCloneService::new(tower::service_fn(|call: HandlerCall| async move {
        Ok::<_, BoxError>(call.run.await)
    }))
}

/// A layer as the builder keeps it until `build`.
pub(crate) type BoxedLayer = Box<dyn FnOnce(HandlerService) -> HandlerService + Send>;
