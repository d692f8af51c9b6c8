//! The per-call context a handler can reach: who asked, with what envelope,
//! whether the call was cancelled, and the request-scoped notifications
//! (progress and log messages) it may send.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use typed_mcp_core::encode;
use typed_mcp_core::wire::{
    ClientCapabilities, Implementation, LoggingLevel, LoggingMessageNotificationParams,
    ProgressNotificationParams, methods,
};
use typed_mcp_core::{RequestId, RequestMeta};

use crate::cancel::CallCancel;
use crate::capability::{
    Capability, Grant, NotAuthorized, OutOfScope, Refusal, Scope, ScopeEntry, ScopeKind,
};
use crate::secret::Redactor;
use crate::trace::TraceContext;
use crate::transport::{Message, Outbox};

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
///
/// A credential may also grant capabilities by itself (an OAuth access
/// token's scopes): [`with_granted`](Self::with_granted) names them, and a
/// call by this principal holds them on top of the server's grants. Two
/// principals are the same caller when their ids are equal, whatever their
/// credentials grant or claim (a refreshed token is still the same caller).
#[derive(Debug, Clone)]
pub struct Principal {
    id: String,
    /// Capability names the credential grants; `None`: it grants nothing by
    /// itself.
    granted: Option<Arc<[String]>>,
    /// What the credential says about the caller (a token's claims).
    claims: Option<Arc<Map<String, Value>>>,
}

impl PartialEq for Principal {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Principal {}

impl std::hash::Hash for Principal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl Principal {
    /// A principal with this stable identifier (a user or client id — never a
    /// credential).
    pub fn new(id: impl Into<String>) -> Self {
        Principal {
            id: id.into(),
            granted: None,
            claims: None,
        }
    }

    /// The identifier.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// This principal, whose credential grants the capabilities named (for
    /// example a verified token's scopes). A call by it holds them on top of
    /// the server's grants; names that no declaration uses grant nothing.
    ///
    /// ```
    /// let p = typed_mcp::Principal::new("alice").with_granted(["desk.write"]);
    /// assert_eq!(p.granted(), Some(&["desk.write".to_owned()][..]));
    /// ```
    pub fn with_granted<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.granted = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The capability names the credential grants; `None` when it grants
    /// none by itself.
    pub fn granted(&self) -> Option<&[String]> {
        self.granted.as_deref()
    }

    /// This principal, with what its credential says about it (a verified
    /// token's claims), for handlers to read.
    pub fn with_claims(mut self, claims: Map<String, Value>) -> Self {
        self.claims = Some(Arc::new(claims));
        self
    }

    /// One claim of the credential, by name (`"email"`, `"client_id"`).
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.as_ref()?.get(name)
    }

    /// Every claim of the credential; `None` when it made none.
    pub fn claims(&self) -> Option<&Map<String, Value>> {
        self.claims.as_deref()
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
    cancel: CallCancel,
    outbox: Outbox,
    finished: AtomicBool,
    last_progress: Mutex<Option<f64>>,
    input_responses: Option<Map<String, Value>>,
    request_state: OnceLock<String>,
    principal: Option<Principal>,
    /// The capabilities the call's declaration names (all granted, or it
    /// would not run): the ceiling of [`ToolContext::authorize`].
    scope: OnceLock<Arc<[Capability]>>,
    /// The grants of those capabilities, with the scopes the host narrowed
    /// them to: what the handles reach.
    grants: OnceLock<Arc<[Grant]>>,
    /// The last refusal of a scoped handle (capability, what was asked), for
    /// the receipt.
    refusal: Mutex<Option<(String, String)>>,
    deadline: OnceLock<Instant>,
    trace: OnceLock<TraceContext>,
    /// What the typed layer learned about the outcome, for the receipt.
    note: Mutex<Option<CallNote>>,
    /// False for the empty context of code running outside any call.
    in_call: bool,
    /// The server's secret values, redacted from every message sent.
    redactor: Redactor,
}

/// What the typed layer tells the receipt about a call's outcome, which the
/// wire result alone cannot say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallNote {
    /// The arguments failed validation; the function did not run.
    InvalidArguments,
    /// The function returned a typed error.
    Error {
        error_type: &'static str,
        variant: Option<String>,
    },
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("request_id", &self.inner.request_id)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// How much a heartbeat adds to the last progress value: small, so the
/// handler's own next value still exceeds it.
pub(crate) const HEARTBEAT_STEP: f64 = 0.001;

impl ToolContext {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        request_id: RequestId,
        meta: RequestMeta,
        cancel: CallCancel,
        outbox: Outbox,
        input_responses: Option<Map<String, Value>>,
        principal: Option<Principal>,
        redactor: Redactor,
        trace: Option<TraceContext>,
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
                scope: OnceLock::new(),
                grants: OnceLock::new(),
                refusal: Mutex::new(None),
                deadline: OnceLock::new(),
                // Set at once, not through `set`: a set `OnceLock` costs a
                // synchronized initialization on every call.
                trace: trace.map_or_else(OnceLock::new, OnceLock::from),
                note: Mutex::new(None),
                in_call: true,
                redactor,
            }),
        }
    }

    /// The context of the next round of a call whose handler asked a legacy
    /// client for input: the same call (id, envelope, cancellation, stream,
    /// principal, scope, trace), with the client's answers and the state
    /// the handler left. Progress stays monotonic across rounds.
    pub(crate) fn next_round(&self, responses: Map<String, Value>, state: Option<String>) -> Self {
        let inner = &self.inner;
        let next = ToolContext {
            inner: Arc::new(Inner {
                request_id: inner.request_id.clone(),
                meta: inner.meta.clone(),
                cancel: inner.cancel.clone(),
                outbox: inner.outbox.clone(),
                finished: AtomicBool::new(false),
                last_progress: Mutex::new(
                    *inner
                        .last_progress
                        .lock()
                        .unwrap_or_else(|e| e.into_inner()),
                ),
                input_responses: Some(responses),
                request_state: OnceLock::new(),
                principal: inner.principal.clone(),
                scope: inner.scope.clone(),
                grants: inner.grants.clone(),
                refusal: Mutex::new(None),
                deadline: OnceLock::new(),
                trace: inner.trace.clone(),
                note: Mutex::new(None),
                in_call: inner.in_call,
                redactor: inner.redactor.clone(),
            }),
        };
        if let Some(state) = state {
            next.set_request_state(state);
        }
        next
    }

    /// The stream the call's messages go to.
    pub(crate) fn outbox(&self) -> &Outbox {
        &self.inner.outbox
    }

    /// The server's secret values, redacted from every message sent.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.inner.redactor
    }

    /// The context of code running outside any call (a function called
    /// directly, e.g. in a unit test): no principal, no deadline, an empty
    /// scope, never cancelled, and notifications go nowhere.
    pub fn empty() -> ToolContext {
        let (outbox, _) = Outbox::channel();
        let mut ctx = ToolContext::new(
            RequestId::from(""),
            RequestMeta::default(),
            CallCancel::new(),
            outbox,
            None,
            None,
            Redactor::default(),
            None,
        );
        Arc::get_mut(&mut ctx.inner)
            .expect("a new context is not shared")
            .in_call = false;
        ctx
    }

    /// Whether this is the context of a call (false for [`ToolContext::empty`]).
    pub fn in_call(&self) -> bool {
        self.inner.in_call
    }

    pub(crate) fn set_scope(&self, scope: Arc<[Capability]>) {
        // An empty scope is what an unset one reads as: most tools need no
        // capability, and setting a `OnceLock` is a synchronized write.
        if !scope.is_empty() {
            let _ = self.inner.scope.set(scope);
        }
    }

    pub(crate) fn set_grants(&self, grants: Arc<[Grant]>) {
        let _ = self.inner.grants.set(grants);
    }

    /// The last refusal of a scoped handle in this call: the capability's
    /// name and what was asked.
    pub(crate) fn take_refusal(&self) -> Option<(String, String)> {
        self.inner
            .refusal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// The scope the host narrowed `capability` to for this call: `None` when
    /// the declaration does not name it (or outside a call), an empty
    /// [`Scope`] when it was granted unscoped.
    pub fn granted_scope(&self, capability: &Capability) -> Option<&Scope> {
        if !self.scope().iter().any(|c| c.name() == capability.name()) {
            return None;
        }
        self.inner
            .grants
            .get()?
            .iter()
            .find(|g| g.capability.name() == capability.name())
            .map(|g| &g.scope)
    }

    /// A refusal of `asked` through `capability`, noted for the call's
    /// receipt (`refused_in_call`).
    pub(crate) fn refuse(
        &self,
        capability: &Capability,
        asked: impl Into<String>,
        refusal: Refusal,
    ) -> OutOfScope {
        let asked = asked.into();
        let scope = match &refusal {
            Refusal::NotDeclared { .. } => Vec::new(),
            _ => self
                .granted_scope(capability)
                .map(Scope::texts)
                .unwrap_or_default(),
        };
        *self.inner.refusal.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((capability.name().to_owned(), asked.clone()));
        OutOfScope {
            capability: *capability,
            asked,
            scope,
            refusal,
        }
    }

    /// The scope of `capability` for a handle of `kind`, or the refusal of
    /// `asked`: the declaration must name the capability (it is the ceiling,
    /// whatever the host granted) and the capability must be of that kind.
    pub(crate) fn scope_for(
        &self,
        capability: &Capability,
        kind: fn(ScopeKind) -> bool,
        asked: &str,
    ) -> Result<&Scope, OutOfScope> {
        let Some(scope) = self.granted_scope(capability) else {
            let declared = self.scope().to_vec();
            return Err(self.refuse(capability, asked, Refusal::NotDeclared { declared }));
        };
        if !kind(capability.kind()) {
            return Err(self.refuse(capability, asked, Refusal::WrongKind));
        }
        Ok(scope)
    }

    /// Checks that this call may act on the application resource `id`
    /// through `capability`, a [`resources`](Capability::resources)
    /// capability: its declaration names it (the ceiling), and the host's
    /// grant matches `id` (an unscoped grant matches every id, as a grant
    /// did before scopes). A refusal is noted for the receipt
    /// (`refused_in_call`); return it from the tool as a typed error.
    ///
    /// ```
    /// use typed_mcp::{Capability, ToolContext};
    ///
    /// const DESK_WRITE: Capability =
    ///     Capability::new("desk.write", "Change tickets").resources();
    /// // Outside a call nothing is declared, so everything is refused.
    /// let refused = ToolContext::current()
    ///     .authorize_resource(&DESK_WRITE, "ticket:T-1001")
    ///     .unwrap_err();
    /// assert!(refused.to_string().contains("desk.write"));
    /// ```
    pub fn authorize_resource(&self, capability: &Capability, id: &str) -> Result<(), OutOfScope> {
        let scope = self.scope_for(capability, |k| matches!(k, ScopeKind::Resources), id)?;
        if scope.is_unscoped()
            || scope
                .entries()
                .iter()
                .any(|e| matches!(e, ScopeEntry::Resource(p) if p.matches(id)))
        {
            Ok(())
        } else {
            Err(self.refuse(capability, id, Refusal::Outside))
        }
    }

    /// The directory handle of `capability`, a [`paths`](Capability::paths)
    /// capability, at its first granted root, with the grant's access (see
    /// [`ScopedDir`](crate::capability::fs::ScopedDir)). Refused when the
    /// declaration does not name the capability, or the grant has no root.
    #[cfg(feature = "fs")]
    pub fn fs(
        &self,
        capability: &Capability,
    ) -> Result<crate::capability::fs::ScopedDir, OutOfScope> {
        self.fs_roots(capability)?
            .into_iter()
            .next()
            .ok_or_else(|| self.refuse(capability, "", Refusal::NoScope))
    }

    /// A directory handle for each granted root of `capability` (see
    /// [`fs`](Self::fs)); an unscoped grant has none.
    #[cfg(feature = "fs")]
    pub fn fs_roots(
        &self,
        capability: &Capability,
    ) -> Result<Vec<crate::capability::fs::ScopedDir>, OutOfScope> {
        crate::capability::fs::open_roots(self, capability)
    }

    /// The host checker of `capability`, a [`hosts`](Capability::hosts)
    /// capability (see [`ScopedNet`](crate::capability::net::ScopedNet)):
    /// the application's HTTP client calls it before each request and on
    /// each redirect. Refused when the declaration does not name the
    /// capability.
    #[cfg(feature = "net")]
    pub fn net(
        &self,
        capability: &Capability,
    ) -> Result<crate::capability::net::ScopedNet, OutOfScope> {
        crate::capability::net::checker(self, capability)
    }

    /// The request's W3C trace context: the caller's (`traceparent` in
    /// `_meta`), or a fresh trace. `None` outside a call.
    pub fn trace(&self) -> Option<&TraceContext> {
        self.inner.trace.get()
    }

    pub(crate) fn set_deadline(&self, deadline: Instant) {
        let _ = self.inner.deadline.set(deadline);
    }

    pub(crate) fn note(&self, note: CallNote) {
        *self.inner.note.lock().unwrap_or_else(|e| e.into_inner()) = Some(note);
    }

    pub(crate) fn take_note(&self) -> Option<CallNote> {
        self.inner
            .note
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// The capabilities this call may use: those its declaration names (all of
    /// them granted, or the call would not have run). Empty outside a call.
    pub fn scope(&self) -> &[Capability] {
        self.inner.scope.get().map_or(&[], |s| s)
    }

    /// Checks that `capability` is within this call's scope, for a handler
    /// that guards a part of its work separately. A capability the host
    /// granted but the declaration does not name is refused: the declaration
    /// is the ceiling.
    ///
    /// ```
    /// use typed_mcp::{Capability, ToolContext};
    ///
    /// const DESK_ADMIN: Capability = Capability::new("desk.admin", "Administer the desk");
    /// // Outside a call the scope is empty.
    /// assert!(ToolContext::current().authorize(&DESK_ADMIN).is_err());
    /// ```
    pub fn authorize(&self, capability: &Capability) -> Result<(), NotAuthorized> {
        if self.scope().iter().any(|c| c.name() == capability.name()) {
            Ok(())
        } else {
            Err(NotAuthorized {
                requested: *capability,
                scope: self.scope().to_vec(),
            })
        }
    }

    /// When the call's deadline passes (`#[tool(timeout = "30s")]` or the
    /// server's default): the handler is then dropped and the client told it
    /// timed out.
    pub fn deadline(&self) -> Option<Instant> {
        self.inner.deadline.get().copied()
    }

    /// The time left before the deadline (zero once it passed).
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline()
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// A token that fires when the call is cancelled (the client's
    /// `notifications/cancelled`, or its stream closed), for work the handler
    /// hands to other tasks.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.inner.cancel.token()
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

    /// The context of the call running on this task or blocking thread, or
    /// outside any call the [empty](ToolContext::empty) context, so a function
    /// written as a handler can be called directly (in a unit test, say).
    pub fn current() -> ToolContext {
        Self::try_current().unwrap_or_else(ToolContext::empty)
    }

    /// The context of the running call, or `None` outside a handler.
    pub fn try_current() -> Option<ToolContext> {
        CURRENT
            .try_with(Clone::clone)
            .ok()
            .or_else(|| CURRENT_BLOCKING.with(|c| c.borrow().clone()))
    }

    pub(crate) async fn run_in<F: std::future::Future>(self, f: F) -> F::Output {
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
        self.inner.meta.client_info.as_deref()
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
    ///
    /// Waits while the client's stream is full (a slow reader slows the
    /// handler instead of growing a queue). In a blocking handler, drive it
    /// with `tokio::runtime::Handle::current().block_on(ctx.progress(..))`.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
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
        let mut params = ProgressNotificationParams::new(token.clone(), progress);
        params.total = total;
        params.message = message.map(str::to_owned);
        self.emit(encode::notification(methods::PROGRESS, &params))
            .await
    }

    /// The last progress value sent for this call, if any.
    pub(crate) fn last_progress(&self) -> Option<f64> {
        *self
            .inner
            .last_progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// A heartbeat (see `ServerBuilder::heartbeat`): the last progress value
    /// (0 before any) plus [`HEARTBEAT_STEP`], so the value still increases as
    /// the protocol requires, with no total. Returns whether it was sent.
    pub(crate) async fn heartbeat(&self) -> bool {
        let next = self
            .last_progress()
            .map_or(0.0, |last| last + HEARTBEAT_STEP);
        self.progress(next, None, Some("still working")).await
    }

    /// Sends `notifications/message` if the request asked for log messages at
    /// this level or a less severe one (`_meta["io.modelcontextprotocol/logLevel"]`).
    /// Returns whether it was sent. Never put secrets or credentials in `data`.
    ///
    /// Waits while the client's stream is full, as
    /// [`progress`](Self::progress) does.
    pub async fn log(&self, level: LoggingLevel, data: impl Serialize) -> bool {
        let Some(threshold) = self.inner.meta.log_level else {
            return false;
        };
        if level < threshold || !self.open() {
            return false;
        }
        let Ok(data) = serde_json::to_value(data) else {
            return false;
        };
        let params = LoggingMessageNotificationParams::new(level, data);
        self.emit(encode::notification(methods::MESSAGE, &params))
            .await
    }

    /// Queues a message of this call's stream (a subscription's notifications).
    pub(crate) async fn send(&self, message: Vec<u8>) -> bool {
        self.open() && self.emit(message).await
    }

    /// Queues a notification with the server's secret values redacted,
    /// waiting for room in the outbox.
    async fn emit(&self, message: Vec<u8>) -> bool {
        let message = match self.inner.redactor.redact_json(&message) {
            std::borrow::Cow::Borrowed(_) => message,
            std::borrow::Cow::Owned(redacted) => redacted,
        };
        self.inner.outbox.send(Message::Notification(message)).await
    }

    fn open(&self) -> bool {
        !self.inner.finished.load(Ordering::Acquire) && !self.inner.cancel.is_cancelled()
    }

    /// Marks the call finished: nothing more is sent for it.
    pub(crate) fn finish(&self) {
        self.inner.finished.store(true, Ordering::Release);
    }
}
