//! The per-call context a handler can reach: who asked, with what envelope,
//! whether the call was cancelled, and the request-scoped notifications
//! (progress and log messages) it may send.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::Serialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use typed_mcp_core::encode;
use typed_mcp_core::wire::{
    ClientCapabilities, Implementation, LoggingLevel, LoggingMessageNotificationParams,
    ProgressNotificationParams, methods,
};
use typed_mcp_core::{RequestId, RequestMeta};

use crate::dispatch::Outbox;

tokio::task_local! {
    static CURRENT: ToolContext;
}

thread_local! {
    static CURRENT_BLOCKING: RefCell<Option<ToolContext>> = const { RefCell::new(None) };
}

/// Who is calling, as the application's own authentication established it
/// (for example an HTTP middleware that verified a token and inserted a
/// `Principal` into the request's extensions). typed-mcp never authenticates;
/// it carries the principal to handlers and binds sealed state to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    id: String,
}

impl Principal {
    /// A principal with this stable identifier (a user or client id — never a
    /// credential).
    pub fn new(id: impl Into<String>) -> Self {
        Principal { id: id.into() }
    }

    /// The identifier.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// The context of one call: request id, envelope, cancellation and
/// request-scoped notifications. Cheap to clone.
///
/// Handlers receive it as an argument; code deeper in the call reaches it with
/// [`ToolContext::current`].
#[derive(Clone)]
pub struct ToolContext {
    inner: Arc<Inner>,
}

struct Inner {
    request_id: RequestId,
    meta: RequestMeta,
    cancel: CancellationToken,
    outbox: Outbox,
    finished: AtomicBool,
    last_progress: Mutex<Option<f64>>,
    input_responses: Option<Map<String, Value>>,
    request_state: OnceLock<String>,
    principal: Option<Principal>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("request_id", &self.inner.request_id)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    pub(crate) fn new(
        request_id: RequestId,
        meta: RequestMeta,
        cancel: CancellationToken,
        outbox: Outbox,
        input_responses: Option<Map<String, Value>>,
        principal: Option<Principal>,
    ) -> Self {
        ToolContext {
            inner: Arc::new(Inner {
                request_id,
                meta,
                cancel,
                outbox,
                finished: AtomicBool::new(false),
                last_progress: Mutex::new(None),
                input_responses,
                request_state: OnceLock::new(),
                principal,
            }),
        }
    }

    /// The answers of a multi round-trip retry (`inputResponses`), by the keys
    /// of the earlier `input_required` result. Unknown keys are the client's
    /// business and may be ignored.
    pub fn input_responses(&self) -> Option<&Map<String, Value>> {
        self.inner.input_responses.as_ref()
    }

    /// The answer under `key`, decoded as `T` (e.g.
    /// [`ElicitResult`](typed_mcp_core::wire::ElicitResult)): `None` when absent,
    /// `Some(Err(..))` when it does not have `T`'s shape.
    pub fn input_response<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
    ) -> Option<Result<T, serde_json::Error>> {
        self.input_responses()?.get(key).map(|v| T::deserialize(v))
    }

    /// The state this tool put in its previous `input_required` result, after
    /// the runtime verified that the client returned it unchanged, for this same
    /// request, before it expired.
    pub fn request_state(&self) -> Option<&str> {
        self.inner.request_state.get().map(String::as_str)
    }

    pub(crate) fn set_request_state(&self, state: String) {
        let _ = self.inner.request_state.set(state);
    }

    /// The context of the call running on this task or blocking thread.
    ///
    /// # Panics
    ///
    /// Outside a handler. Use [`ToolContext::try_current`] where that can happen.
    pub fn current() -> ToolContext {
        Self::try_current().expect("ToolContext::current() called outside a typed-mcp handler")
    }

    /// The context of the running call, or `None` outside a handler.
    pub fn try_current() -> Option<ToolContext> {
        CURRENT
            .try_with(Clone::clone)
            .ok()
            .or_else(|| CURRENT_BLOCKING.with(|c| c.borrow().clone()))
    }

    pub(crate) async fn scope<F: std::future::Future>(self, f: F) -> F::Output {
        CURRENT.scope(self, f).await
    }

    /// Runs `f` on this thread with this context current (blocking handlers, and
    /// the synchronous part of an async handler before its first await).
    pub(crate) fn enter<R>(self, f: impl FnOnce() -> R) -> R {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                CURRENT_BLOCKING.with(|c| c.borrow_mut().take());
            }
        }
        CURRENT_BLOCKING.with(|c| *c.borrow_mut() = Some(self));
        let _reset = Reset;
        f()
    }

    /// The authenticated caller, when the transport has one (see [`Principal`]).
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_ref()
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.request_id
    }

    /// The request's validated `_meta` envelope, unknown keys included.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.meta
    }

    /// The client capabilities declared on this request (and only this one).
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.meta.client_capabilities
    }

    /// The client's self-reported identity: for display and logs, never for
    /// security decisions.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.meta.client_info.as_ref()
    }

    /// True once the client cancelled the call (or its transport went away).
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes when the call is cancelled.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// Sends `notifications/progress` if the request asked for progress (it
    /// carried `_meta.progressToken`). Returns whether it was sent: it is not
    /// when no token was given, when `progress` does not increase, or after the
    /// call finished or was cancelled.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = &self.inner.meta.progress_token else {
            return false;
        };
        if !self.open() {
            return false;
        }
        {
            let mut last = self
                .inner
                .last_progress
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|l| progress <= l) {
                return false;
            }
            *last = Some(progress);
        }
        let params = ProgressNotificationParams {
            progress_token: token.clone(),
            progress,
            total,
            message: message.map(str::to_owned),
        };
        self.inner
            .outbox
            .send(encode::notification(methods::PROGRESS, &params))
    }

    /// Sends `notifications/message` if the request asked for log messages at
    /// this level or a less severe one (`_meta["io.modelcontextprotocol/logLevel"]`).
    /// Returns whether it was sent. Never put secrets or credentials in `data`.
    pub fn log(&self, level: LoggingLevel, data: impl Serialize) -> bool {
        let Some(threshold) = self.inner.meta.log_level else {
            return false;
        };
        if level < threshold || !self.open() {
            return false;
        }
        let Ok(data) = serde_json::to_value(data) else {
            return false;
        };
        let params = LoggingMessageNotificationParams {
            level,
            logger: None,
            data,
        };
        self.inner
            .outbox
            .send(encode::notification(methods::MESSAGE, &params))
    }

    /// Queues a message of this call's stream (a subscription's notifications).
    pub(crate) fn send(&self, message: Vec<u8>) -> bool {
        self.open() && self.inner.outbox.send(message)
    }

    fn open(&self) -> bool {
        !self.inner.finished.load(Ordering::Acquire) && !self.inner.cancel.is_cancelled()
    }

    /// Marks the call finished: nothing more is sent for it.
    pub(crate) fn finish(&self) {
        self.inner.finished.store(true, Ordering::Release);
    }
}
