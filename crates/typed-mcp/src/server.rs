//! The server: a builder that validates the whole catalog before any message is
//! read, and the built server that transports drive.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use tokio::sync::{Semaphore, SemaphorePermit};
use typed_mcp_core::catalog::{
    Catalog, CatalogError, CatalogErrors, CatalogOptions, Kind, ListView,
};
use typed_mcp_core::digest::Digest;
use typed_mcp_core::router::{CompletionTarget, ResourceMatch};
use typed_mcp_core::wire::{
    CacheHint, CacheScope, CallToolResult, CompleteResult, Completion, Implementation,
    InputRequiredResult, ReadResourceResult, ResultMeta, ResultType,
};
use typed_mcp_core::{Call, Limits, RequestId, Router, RpcError, Target, encode};

use crate::capability::{Capability, Grants};
use crate::context::{CallNote, Principal, ToolContext};
use crate::declare::{
    AnyResourceDecl, Completer, CompletionRequest, Handler, PromptDecl, PromptReply, ResourceDecl,
    ResourceReply, ResourceRequest, ResourceTemplateDecl, ToolDecl, ToolError, ToolReply,
};
use crate::dispatch::run_handler;
use crate::receipt::{Outcome, Receipt, ReceiptSink, TracingSink};
use crate::secret::{Redactor, RedactorError};
use crate::state::{BindingDigest, StateBinding, StateKeys};
use crate::subscribe::{self, ResourceUpdates};
use crate::trace::TraceContext;
use crate::typed::answer::check_input_requests;

/// Why [`ServerBuilder::build`] refused to build a server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// One or more declarations are invalid; each error names its declaration.
    #[error("{0}")]
    Catalog(CatalogErrors),
    /// A limit is out of range.
    #[error("invalid configuration: {0}")]
    Config(String),
}

impl BuildError {
    /// Every invalid declaration (empty for a configuration error).
    pub fn catalog_errors(&self) -> &[CatalogError] {
        match self {
            BuildError::Catalog(errors) => &errors.0,
            BuildError::Config(_) => &[],
        }
    }
}

/// Collects declarations and settings; [`build`](Self::build) validates them all.
#[must_use = "a server builder does nothing until it is built"]
pub struct ServerBuilder {
    options: CatalogOptions,
    tools: Vec<ToolDecl>,
    resources: Vec<ResourceDecl>,
    templates: Vec<ResourceTemplateDecl>,
    prompts: Vec<PromptDecl>,
    limits: Limits,
    max_concurrent: usize,
    state_keys: Option<StateKeys>,
    state_ttl: Duration,
    grants: Grants,
    allowed_names: Vec<String>,
    receipt_sinks: Vec<Box<dyn ReceiptSink>>,
    default_timeout: Option<Duration>,
    hide_ungranted: bool,
    redactor: Result<Redactor, RedactorError>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("server_info", &self.options.server_info)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

/// Deepest `max_depth` accepted: deeper values would let a message exhaust the
/// stack of the thread that parses it.
pub const MAX_DEPTH_CEILING: usize = 4096;

impl ServerBuilder {
    /// Display name of the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.options.server_info.title = Some(title.into());
        self
    }

    /// Guidance for the model, sent by `server/discover`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.options.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool. Tools are listed in the order they are added.
    pub fn tool(mut self, tool: ToolDecl) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds several tools, in order.
    pub fn tools(mut self, tools: impl IntoIterator<Item = ToolDecl>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Adds a static resource or a resource template.
    pub fn resource(mut self, resource: impl Into<AnyResourceDecl>) -> Self {
        match resource.into() {
            AnyResourceDecl::Static(r) => self.resources.push(r),
            AnyResourceDecl::Template(t) => self.templates.push(t),
        }
        self
    }

    /// Adds several resources and templates, in order (e.g. `resources![...]`).
    pub fn resources<R: Into<AnyResourceDecl>>(
        mut self,
        resources: impl IntoIterator<Item = R>,
    ) -> Self {
        for r in resources {
            self = self.resource(r);
        }
        self
    }

    /// Adds a resource template. A URI that matches no static resource is tried
    /// against templates in the order they are added.
    pub fn resource_template(mut self, template: ResourceTemplateDecl) -> Self {
        self.templates.push(template);
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, prompt: PromptDecl) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Adds several prompts, in order.
    pub fn prompts(mut self, prompts: impl IntoIterator<Item = PromptDecl>) -> Self {
        self.prompts.extend(prompts);
        self
    }

    /// Largest accepted message in bytes (default 4 MiB).
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_message_bytes = bytes;
        self
    }

    /// Deepest accepted JSON nesting (default 128, at most [`MAX_DEPTH_CEILING`]).
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.limits.max_depth = depth;
        self
    }

    /// Handlers allowed to run at once (default 16); further calls wait.
    pub fn max_concurrent(mut self, handlers: usize) -> Self {
        self.max_concurrent = handlers;
        self
    }

    /// Items per list page (default 100).
    pub fn page_size(mut self, items: usize) -> Self {
        self.options.page_size = items;
        self
    }

    /// Cache hint of lists and `server/discover` (default public, one hour).
    pub fn list_cache(mut self, hint: CacheHint) -> Self {
        self.options.list_cache = hint;
        self
    }

    /// The keys that seal `requestState` (default: one random key per process).
    /// Replicas that share clients need the same keys, or a retry that reaches
    /// another replica is refused.
    pub fn request_state_keys(mut self, keys: StateKeys) -> Self {
        self.state_keys = Some(keys);
        self
    }

    /// How long a sealed `requestState` stays valid (default 10 minutes).
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// Grants a capability to every caller (see [`capability`](crate::capability)).
    pub fn grant(mut self, capability: Capability) -> Self {
        self.grants.everyone.insert(capability.name(), capability);
        self
    }

    /// Grants capabilities by name to every caller, as an operator writes them
    /// on a command line (`--allow desk.write`) or in an environment variable:
    /// each item may itself be a comma-separated list. A name no declaration
    /// uses is refused by [`build`](Self::build), so a typo cannot silently
    /// grant nothing.
    pub fn allow<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for item in names {
            self.allowed_names.extend(
                crate::capability::parse_allow_list(item.as_ref())
                    .into_iter()
                    .map(str::to_owned),
            );
        }
        self
    }

    /// Grants the capabilities named in the environment variable `var` (a
    /// comma-separated list, see [`allow`](Self::allow)); nothing when unset.
    pub fn allow_from_env(self, var: &str) -> Self {
        match std::env::var(var) {
            Ok(list) => self.allow([list]),
            Err(_) => self,
        }
    }

    /// Grants capabilities per caller: `policy` receives the authenticated
    /// principal (see [`Principal`]) and returns what it may use, on top of
    /// what is granted to everyone. It runs on each call that needs more than
    /// the static grants, so keep it quick.
    pub fn grant_policy<F>(mut self, policy: F) -> Self
    where
        F: Fn(Option<&Principal>) -> Vec<Capability> + Send + Sync + 'static,
    {
        self.grants.policy = Some(Arc::new(policy));
        self
    }

    /// Omits from `tools/list`, `resources/list`, `resources/templates/list`
    /// and `prompts/list` what the caller may not use (default: everything is
    /// listed, and calls without the grant are refused). With a
    /// [`grant_policy`](Self::grant_policy) the lists depend on the caller and
    /// are served with `cacheScope: "private"`.
    pub fn hide_ungranted(mut self, hide: bool) -> Self {
        self.hide_ungranted = hide;
        self
    }

    /// Sends receipts to `sink` (see [`receipt`](crate::receipt)); may be called
    /// several times. Without any, receipts go to [`TracingSink`].
    pub fn receipt_sink(mut self, sink: impl ReceiptSink) -> Self {
        self.receipt_sinks.push(Box::new(sink));
        self
    }

    /// Secret values (API keys and the like, loaded at startup) to redact
    /// from everything a client or a log sees: results, error messages and
    /// their sources, `notifications/message`, receipts and panic logs. Each
    /// must have at least [`MIN_SECRET_CHARS`](crate::secret::MIN_SECRET_CHARS)
    /// characters ([`build`](Self::build) refuses a shorter one). Replaces any
    /// earlier [`redactor`](Self::redactor).
    pub fn secret_values<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.redactor = Redactor::new(values);
        self
    }

    /// Like [`secret_values`](Self::secret_values), with a redactor the
    /// application built first (to give the same one to its log writer, see
    /// [`Redactor::writer`]).
    pub fn redactor(mut self, redactor: Redactor) -> Self {
        self.redactor = Ok(redactor);
        self
    }

    /// The deadline of tool calls whose declaration sets none (default: none).
    /// A call still running then is answered as timed out and its handler
    /// dropped.
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = Some(timeout);
        self
    }

    /// Validates every declaration and setting, and builds the server. Nothing
    /// is read from any transport before this succeeds.
    pub fn build(mut self) -> Result<Server, BuildError> {
        if self.limits.max_message_bytes == 0 {
            return Err(BuildError::Config(
                "max_message_bytes must be at least 1".into(),
            ));
        }
        if !(1..=MAX_DEPTH_CEILING).contains(&self.limits.max_depth) {
            return Err(BuildError::Config(format!(
                "max_depth must be between 1 and {MAX_DEPTH_CEILING}, found {}",
                self.limits.max_depth
            )));
        }
        if self.max_concurrent == 0 || self.max_concurrent > Semaphore::MAX_PERMITS {
            return Err(BuildError::Config(format!(
                "max_concurrent must be at least 1, found {}",
                self.max_concurrent
            )));
        }
        if self.options.page_size == 0 {
            return Err(BuildError::Config("page_size must be at least 1".into()));
        }
        if self.default_timeout == Some(Duration::ZERO) {
            return Err(BuildError::Config(
                "default_timeout must be positive: zero would fail every call".into(),
            ));
        }
        self.resolve_allowed()?;
        let redactor = std::mem::replace(&mut self.redactor, Ok(Redactor::default()))
            .map_err(|e| BuildError::Config(format!("secret_values: {e}")))?;
        let mut tool_entries = Vec::with_capacity(self.tools.len());
        let mut tool_handlers = Vec::with_capacity(self.tools.len());
        for t in self.tools {
            tool_entries.push(t.entry);
            tool_handlers.push(ToolSlot {
                handler: t.handler,
                timeout: t.timeout.or(self.default_timeout),
                asks_input: t.asks_input,
                caps: t.capabilities.into(),
            });
        }
        let mut resource_entries = Vec::new();
        let mut resource_handlers = Vec::new();
        for r in self.resources {
            resource_entries.push(r.entry);
            resource_handlers.push((r.handler, Arc::from(r.capabilities)));
        }
        let mut template_entries = Vec::new();
        let mut templates = Vec::new();
        for t in self.templates {
            template_entries.push(t.entry);
            templates.push((t.handler, t.completer, Arc::from(t.capabilities)));
        }
        let mut prompt_entries = Vec::new();
        let mut prompts = Vec::new();
        for p in self.prompts {
            prompt_entries.push(p.entry);
            prompts.push((p.handler, p.completer, Arc::from(p.capabilities)));
        }
        let receipt_sinks: Vec<Box<dyn ReceiptSink>> = if self.receipt_sinks.is_empty() {
            vec![Box::new(TracingSink)]
        } else {
            self.receipt_sinks
        };
        let catalog = Catalog::build(
            self.options,
            tool_entries,
            resource_entries,
            template_entries,
            prompt_entries,
        )
        .map_err(BuildError::Catalog)?;
        Ok(Server {
            inner: Arc::new(Inner {
                router: Router::new(catalog, self.limits),
                tools: tool_handlers,
                resources: resource_handlers,
                templates,
                prompts,
                slots: Semaphore::new(self.max_concurrent),
                max_concurrent: self.max_concurrent,
                state_keys: self.state_keys.unwrap_or_else(StateKeys::random),
                state_ttl: self.state_ttl,
                updates: ResourceUpdates::new(),
                grants: self.grants,
                receipt_sinks,
                hide_ungranted: self.hide_ungranted,
                views: Default::default(),
                redactor,
            }),
        })
    }

    /// Every capability the declarations name, by name; two different
    /// descriptions under one name are refused.
    fn declared_capabilities(&self) -> Result<BTreeMap<&'static str, Capability>, BuildError> {
        let declared = self
            .tools
            .iter()
            .flat_map(|t| &t.capabilities)
            .chain(self.resources.iter().flat_map(|r| &r.capabilities))
            .chain(self.templates.iter().flat_map(|t| &t.capabilities))
            .chain(self.prompts.iter().flat_map(|p| &p.capabilities));
        let mut by_name = BTreeMap::new();
        for c in declared {
            if let Some(other) = by_name.insert(c.name(), *c) {
                if other != *c {
                    return Err(BuildError::Config(format!(
                        "the capability {} is declared with two descriptions ({:?} and {:?}): declare it once, as a constant",
                        c.name(),
                        other.description(),
                        c.description()
                    )));
                }
            }
        }
        Ok(by_name)
    }

    /// Turns the names given to [`allow`](Self::allow) into grants.
    fn resolve_allowed(&mut self) -> Result<(), BuildError> {
        let declared = self.declared_capabilities()?;
        let mut unknown = Vec::new();
        for name in std::mem::take(&mut self.allowed_names) {
            match declared.get(name.as_str()) {
                Some(c) => {
                    self.grants.everyone.insert(c.name(), *c);
                }
                None => unknown.push(name),
            }
        }
        if unknown.is_empty() {
            return Ok(());
        }
        let known: Vec<&str> = declared.keys().copied().collect();
        Err(BuildError::Config(format!(
            "cannot grant {}: no declaration needs {}; the capabilities declared are: {}",
            unknown.join(", "),
            if unknown.len() == 1 { "it" } else { "them" },
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        )))
    }
}

type ToolHandler =
    Handler<serde_json::Map<String, serde_json::Value>, crate::declare::ReplyOutcome>;
type ResourceHandler = Handler<ResourceRequest, crate::declare::ResourceReplyOutcome>;
type PromptHandler =
    Handler<std::collections::BTreeMap<String, String>, crate::declare::PromptReplyOutcome>;

/// What running one tool needs besides its catalog entry.
struct ToolSlot {
    handler: ToolHandler,
    /// The declaration's deadline, or the server's default.
    timeout: Option<Duration>,
    asks_input: bool,
    caps: Arc<[Capability]>,
}

struct Inner {
    router: Router,
    tools: Vec<ToolSlot>,
    resources: Vec<(ResourceHandler, Arc<[Capability]>)>,
    templates: Vec<(ResourceHandler, Option<Completer>, Arc<[Capability]>)>,
    prompts: Vec<(PromptHandler, Option<Completer>, Arc<[Capability]>)>,
    slots: Semaphore,
    max_concurrent: usize,
    state_keys: StateKeys,
    state_ttl: Duration,
    updates: ResourceUpdates,
    grants: Grants,
    receipt_sinks: Vec<Box<dyn ReceiptSink>>,
    hide_ungranted: bool,
    /// List views by which declarations they show (see `list_view`).
    views: std::sync::Mutex<std::collections::HashMap<Vec<bool>, Arc<ListView>>>,
    redactor: Redactor,
}

/// A built, validated MCP server. Cheap to clone; every clone serves the same
/// catalog and shares one concurrency limit.
///
/// ```
/// use typed_mcp::{Server, ToolDecl};
/// use typed_mcp::wire::CallToolResult;
///
/// let server = Server::new("demo", "1.0.0")
///     .tool(
///         ToolDecl::builder("ping_back")
///             .description("Answer pong.")
///             .handler(|_args, _ctx| async { Ok(CallToolResult::text("pong")) }),
///     )
///     .build()?;
/// assert_eq!(server.catalog().tools().len(), 1);
/// # Ok::<(), typed_mcp::BuildError>(())
/// ```
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("server_info", self.catalog().server_info())
            .field("tools", &self.catalog().tools().len())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts a server with the identity it reports in every result's `_meta`.
    /// Use your own crate's name and version (`env!("CARGO_PKG_NAME")`).
    #[allow(clippy::new_ret_no_self)]
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            options: CatalogOptions::new(Implementation::new(name, version)),
            tools: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            limits: Limits::default(),
            max_concurrent: 16,
            state_keys: None,
            state_ttl: Duration::from_secs(600),
            grants: Grants::default(),
            allowed_names: Vec::new(),
            receipt_sinks: Vec::new(),
            default_timeout: None,
            hide_ungranted: false,
            redactor: Ok(Redactor::default()),
        }
    }

    /// The validated catalog.
    pub fn catalog(&self) -> &Catalog {
        self.inner.router.catalog()
    }

    /// The router (pure protocol rules) over this server's catalog.
    pub fn router(&self) -> &Router {
        &self.inner.router
    }

    /// The message limits.
    pub fn limits(&self) -> Limits {
        self.inner.router.limits()
    }

    /// The secret values this server redacts (see
    /// [`ServerBuilder::secret_values`]).
    pub fn redactor(&self) -> &Redactor {
        &self.inner.redactor
    }

    /// The most handlers that run at once.
    pub fn max_concurrent(&self) -> usize {
        self.inner.max_concurrent
    }

    /// The handle that publishes `notifications/resources/updated` to open
    /// `subscriptions/listen` streams.
    pub fn resource_updates(&self) -> &ResourceUpdates {
        &self.inner.updates
    }

    /// The lists `principal` may see, when the server hides what a caller may
    /// not use ([`ServerBuilder::hide_ungranted`]); `None` lists everything.
    /// Views are built once per distinct set of grants and kept.
    pub fn list_view(&self, principal: Option<&Principal>) -> Option<Arc<ListView>> {
        let inner = &self.inner;
        if !inner.hide_ungranted {
            return None;
        }
        let granted = inner.grants.holder(principal);
        // The key: which declarations are visible. Without a policy it is the
        // same for every caller.
        let key: Vec<bool> = inner
            .tools
            .iter()
            .map(|t| granted(&t.caps))
            .chain(inner.resources.iter().map(|r| granted(&r.1)))
            .chain(inner.templates.iter().map(|t| granted(&t.2)))
            .chain(inner.prompts.iter().map(|p| granted(&p.2)))
            .collect();
        let mut views = inner.views.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(view) = views.get(&key) {
            return Some(view.clone());
        }
        let (tools, resources, templates) = (
            inner.tools.len(),
            inner.resources.len(),
            inner.templates.len(),
        );
        let visible = |kind: Kind, i: usize| match kind {
            Kind::Tool => key[i],
            Kind::Resource => key[tools + i],
            Kind::ResourceTemplate => key[tools + resources + i],
            Kind::Prompt => key[tools + resources + templates + i],
        };
        let mut cache = self.catalog().list_cache();
        if inner.grants.per_principal() {
            // What one caller sees is not for another.
            cache.scope = CacheScope::Private;
        }
        let view = Arc::new(self.catalog().view(visible, cache));
        // Distinct grant sets are few; a policy that invents them endlessly
        // must not grow this without bound.
        if views.len() >= 1024 {
            views.clear();
        }
        views.insert(key, view.clone());
        Some(view)
    }

    pub(crate) async fn acquire_slot(&self) -> SemaphorePermit<'_> {
        self.inner
            .slots
            .acquire()
            .await
            .expect("the semaphore is never closed")
    }

    /// Verifies the `requestState` of a retry and hands its plaintext to the
    /// handler's context; a state this server did not seal for this request is
    /// `-32602` and the handler never runs.
    fn open_state(
        &self,
        token: Option<String>,
        binding: &BindingDigest,
        name: &str,
        ctx: &ToolContext,
    ) -> Result<(), RpcError> {
        if let Some(token) = token {
            let state = self
                .inner
                .state_keys
                .open(&token, binding, SystemTime::now())
                .map_err(|e| {
                    tracing::warn!(%name, error = %e, "refused a requestState");
                    RpcError::invalid_params(e.to_string())
                })?;
            ctx.set_request_state(state);
        }
        Ok(())
    }

    /// Encodes an `input_required` result, sealing its state for this request.
    fn input_required(
        &self,
        id: &RequestId,
        name: &str,
        mut asked: InputRequiredResult,
        binding: &BindingDigest,
    ) -> Result<Vec<u8>, RpcError> {
        if asked.input_requests.as_ref().is_none_or(|r| r.is_empty())
            && asked.request_state.is_none()
        {
            return Err(RpcError::internal(format!(
                "{name:?} asked for input without inputRequests or requestState"
            )));
        }
        // The client must be able neither to read nor to forge it.
        if let Some(state) = asked.request_state.take() {
            asked.request_state = Some(self.inner.state_keys.seal(
                &state,
                binding,
                SystemTime::now(),
                self.inner.state_ttl,
            ));
        }
        // Not cacheable, so no cache hints; identified like every result.
        asked.result_type = ResultType::InputRequired;
        asked.meta.server_info = Some(self.catalog().server_info().clone());
        Ok(encode::result(id, &asked))
    }

    fn handler_panicked(&self, kind: &str, name: &str, panic: &str) -> RpcError {
        // The panic message stays in the server's log, without secrets: it
        // may hold internal detail.
        let panic = self.inner.redactor.redact_str(panic);
        tracing::error!(%kind, %name, %panic, "handler panicked");
        RpcError::internal(format!(
            "the {kind} {name:?} failed unexpectedly (handler panicked)"
        ))
    }

    fn meta(&self) -> ResultMeta {
        ResultMeta::server(self.catalog().server_info().clone())
    }

    /// Runs the handler a call is for and encodes its response (a result or a
    /// JSON-RPC error). A panicking handler becomes `-32603`.
    pub(crate) async fn invoke(
        &self,
        id: &RequestId,
        target: Target,
        request_state: Option<String>,
        ctx: ToolContext,
        record: CallRecord,
    ) -> Vec<u8> {
        // The grants were checked when the call was accepted.
        if let Some(caps) = &record.caps {
            ctx.set_scope(caps.clone());
        }
        let mut outcome = None;
        let body = match self
            .invoke_target(id, target, request_state, ctx, &mut outcome)
            .await
        {
            Ok(body) => body,
            Err(e) => {
                outcome.get_or_insert(Outcome::Error { code: e.code });
                encode::error(Some(id), &e)
            }
        };
        record.finish(outcome.unwrap_or(Outcome::Completed));
        body
    }

    /// Checks that `principal` holds every capability the call's declaration
    /// needs. A refused call is answered at once — it neither waits for a
    /// handler slot nor runs — and its receipt recorded; `Err` is the answer.
    pub(crate) fn check_grants(
        &self,
        call: &Call,
        principal: Option<&Principal>,
        record: CallRecord,
    ) -> Result<CallRecord, Vec<u8>> {
        let Some(caps) = &record.caps else {
            return Ok(record);
        };
        let missing = self.inner.grants.missing(caps, principal);
        if missing.is_empty() {
            return Ok(record);
        }
        let subject = self.subject(&call.target).expect("a declaration's call");
        let body = self.refusal(&call.id, &subject, &missing);
        record.finish(Outcome::Refused {
            missing: missing.iter().map(|c| c.name().to_owned()).collect(),
        });
        Err(body)
    }

    /// What a call is for, when it calls a declaration (and so gets a receipt).
    fn subject(&self, target: &Target) -> Option<Subject<'_>> {
        let catalog = self.catalog();
        Some(match target {
            Target::Tool { index, .. } => {
                let entry = &catalog.tools()[*index];
                Subject {
                    method: "tools/call",
                    name: &entry.tool.name,
                    uri: None,
                    digest: &catalog.tool_digest(*index).digest,
                    caps: self.inner.tools[*index].caps.clone(),
                }
            }
            Target::Prompt { index, .. } => {
                let entry = &catalog.prompts()[*index];
                Subject {
                    method: "prompts/get",
                    name: &entry.prompt.name,
                    uri: None,
                    digest: &catalog.prompt_digest(*index).digest,
                    caps: self.inner.prompts[*index].2.clone(),
                }
            }
            Target::Resource { uri, matched } => {
                let (name, digest, caps) = match matched {
                    ResourceMatch::Static(i) => {
                        let entry = &catalog.resources()[*i];
                        (
                            &entry.resource.name,
                            &catalog.resource_digest(*i).digest,
                            self.inner.resources[*i].1.clone(),
                        )
                    }
                    ResourceMatch::Template { index, .. } => {
                        let entry = catalog.template(*index);
                        (
                            &entry.template.name,
                            &catalog.template_digest(*index).digest,
                            self.inner.templates[*index].2.clone(),
                        )
                    }
                };
                Subject {
                    method: "resources/read",
                    name,
                    uri: Some(uri.clone()),
                    digest,
                    caps,
                }
            }
            Target::Listen { .. } | Target::Complete { .. } => return None,
        })
    }

    /// The answer to a call whose declaration needs capabilities the caller
    /// was not granted: a tool error the model can read (tools), or a
    /// JSON-RPC error (resources and prompts, whose results have no error
    /// form).
    fn refusal(&self, id: &RequestId, subject: &Subject, missing: &[Capability]) -> Vec<u8> {
        let names: Vec<&str> = missing.iter().map(|c| c.name()).collect();
        let described: Vec<String> = missing
            .iter()
            .map(|c| format!("{} ({})", c.name(), c.description()))
            .collect();
        let what = match subject.method {
            "tools/call" => format!("the tool {:?}", subject.name),
            "prompts/get" => format!("the prompt {:?}", subject.name),
            _ => format!("the resource {:?}", subject.name),
        };
        let message = format!(
            "refused: {what} needs the {} {}, which {} not granted to this caller",
            if missing.len() == 1 {
                "capability"
            } else {
                "capabilities"
            },
            described.join(", "),
            if missing.len() == 1 { "is" } else { "are" },
        );
        tracing::debug!(method = subject.method, name = %subject.name, missing = ?names, "call refused");
        if subject.method == "tools/call" {
            let mut result = CallToolResult::error(message);
            result.result_type = ResultType::Complete;
            result.meta = self.meta();
            result
                .meta
                .other
                .insert(MISSING_CAPABILITIES_META_KEY.to_owned(), json!(names));
            encode::result(id, &result)
        } else {
            let error = RpcError::new(CAPABILITY_NOT_GRANTED, message)
                .with_data(json!({ "missingCapabilities": names }));
            encode::error(Some(id), &error)
        }
    }

    async fn invoke_target(
        &self,
        id: &RequestId,
        target: Target,
        request_state: Option<String>,
        ctx: ToolContext,
        outcome: &mut Option<Outcome>,
    ) -> Result<Vec<u8>, RpcError> {
        let catalog = self.catalog();
        match target {
            Target::Tool { index, arguments } => {
                let entry = &catalog.tools()[index];
                let name = &entry.tool.name;
                let slot = &self.inner.tools[index];
                // The request binding (a hash of the arguments) is needed only to
                // open or seal a state: most calls skip it.
                let binding = (slot.asks_input || request_state.is_some()).then(|| {
                    StateBinding {
                        method: "tools/call",
                        target: name,
                        arguments: Some(&arguments),
                        principal: ctx.principal().map(Principal::id),
                    }
                    .digest()
                });
                if let Some(binding) = &binding {
                    self.open_state(request_state, binding, name, &ctx)?;
                }
                if let Some(limit) = slot.timeout {
                    ctx.set_deadline(tokio::time::Instant::now() + limit);
                }
                let run = run_handler(&slot.handler, arguments, ctx.clone());
                let finished = match slot.timeout {
                    Some(limit) => tokio::time::timeout(limit, run).await.ok(),
                    None => Some(run.await),
                };
                let outcome_of_handler = match finished {
                    Some(Ok(reply)) => reply,
                    Some(Err(panic)) => {
                        *outcome = Some(Outcome::Panicked);
                        return Err(self.handler_panicked("tool", name, &panic));
                    }
                    None => {
                        let limit = slot.timeout.unwrap_or_default();
                        *outcome = Some(Outcome::TimedOut {
                            after_ms: limit.as_millis().try_into().unwrap_or(u64::MAX),
                        });
                        Err(ToolError::execution(format!(
                            "tool {name:?} timed out after {}",
                            human_duration(limit)
                        )))
                    }
                };
                let mut result = match outcome_of_handler {
                    Ok(ToolReply::Complete(result)) => result,
                    Ok(ToolReply::InputRequired(asked)) => {
                        let Some(binding) = &binding else {
                            return Err(RpcError::internal(format!(
                                "tool {name:?} asked for input but was declared with a handler that cannot"
                            )));
                        };
                        let body = self.input_required(id, name, asked, binding)?;
                        *outcome = Some(Outcome::InputRequired);
                        return Ok(body);
                    }
                    Err(ToolError::Execution(message)) => CallToolResult::error(message),
                    Err(ToolError::Protocol(e)) => return Err(e),
                };
                if entry.tool.output_schema.is_some()
                    && !result.is_error()
                    && result.structured_content.is_none()
                {
                    tracing::error!(tool = %name, "tool declares an output schema but returned no structuredContent");
                    return Err(RpcError::internal(format!(
                        "tool {name:?} declares an output schema but returned no structured content"
                    )));
                }
                if result.is_error() && outcome.is_none() {
                    *outcome = Some(match ctx.take_note() {
                        Some(CallNote::InvalidArguments) => Outcome::InvalidArguments,
                        Some(CallNote::Error {
                            error_type,
                            variant,
                        }) => Outcome::Failed {
                            error_type: Some(error_type.to_owned()),
                            variant,
                        },
                        None => Outcome::Failed {
                            error_type: None,
                            variant: None,
                        },
                    });
                }
                result.result_type = ResultType::Complete;
                result.meta.server_info = Some(catalog.server_info().clone());
                Ok(encode::result(id, &result))
            }
            Target::Resource { uri, matched } => {
                let (handler, cache, variables) = match matched {
                    ResourceMatch::Static(i) => (
                        &self.inner.resources[i].0,
                        catalog.resources()[i].cache,
                        Vec::new(),
                    ),
                    ResourceMatch::Template { index, variables } => {
                        let entry = catalog.template(index);
                        (&self.inner.templates[index].0, entry.cache, variables)
                    }
                };
                let binding = StateBinding {
                    method: "resources/read",
                    target: &uri,
                    arguments: None,
                    principal: ctx.principal().map(Principal::id),
                }
                .digest();
                self.open_state(request_state, &binding, &uri, &ctx)?;
                let request = ResourceRequest {
                    uri: uri.clone(),
                    variables,
                };
                let reply =
                    run_handler(handler, request, ctx.clone())
                        .await
                        .map_err(|panic| {
                            *outcome = Some(Outcome::Panicked);
                            self.handler_panicked("resource", &uri, &panic)
                        })??;
                let contents = match reply {
                    ResourceReply::Complete(contents) => contents,
                    ResourceReply::InputRequired(asked) => {
                        check_input_requests(&asked, &ctx)?;
                        let body = self.input_required(id, &uri, asked, &binding)?;
                        *outcome = Some(Outcome::InputRequired);
                        return Ok(body);
                    }
                };
                if contents.is_empty() {
                    return Err(RpcError::resource_not_found(&uri));
                }
                Ok(encode::result(
                    id,
                    &ReadResourceResult {
                        result_type: ResultType::Complete,
                        contents,
                        ttl_ms: cache.ttl_ms,
                        cache_scope: cache.scope,
                        meta: self.meta(),
                    },
                ))
            }
            Target::Prompt { index, arguments } => {
                let name = &catalog.prompts()[index].prompt.name;
                let as_map: serde_json::Map<String, serde_json::Value> = arguments
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect();
                let binding = StateBinding {
                    method: "prompts/get",
                    target: name,
                    arguments: Some(&as_map),
                    principal: ctx.principal().map(Principal::id),
                }
                .digest();
                self.open_state(request_state, &binding, name, &ctx)?;
                let reply = run_handler(&self.inner.prompts[index].0, arguments, ctx.clone())
                    .await
                    .map_err(|panic| {
                        *outcome = Some(Outcome::Panicked);
                        self.handler_panicked("prompt", name, &panic)
                    })??;
                match reply {
                    PromptReply::Complete(mut result) => {
                        result.result_type = ResultType::Complete;
                        result.meta.server_info = Some(catalog.server_info().clone());
                        Ok(encode::result(id, &result))
                    }
                    PromptReply::InputRequired(asked) => {
                        check_input_requests(&asked, &ctx)?;
                        let body = self.input_required(id, name, asked, &binding)?;
                        *outcome = Some(Outcome::InputRequired);
                        Ok(body)
                    }
                }
            }
            Target::Listen { filter } => Ok(subscribe::listen(self, id, filter, ctx).await),
            Target::Complete {
                target,
                argument,
                context,
            } => {
                let completer = match target {
                    CompletionTarget::Prompt(i) => self.inner.prompts[i].1.as_ref(),
                    CompletionTarget::Template(i) => self.inner.templates[i].1.as_ref(),
                };
                let mut values = match completer {
                    Some(completer) => {
                        let request = CompletionRequest {
                            argument: argument.name.clone(),
                            value: argument.value,
                            context,
                        };
                        run_handler(completer, request, ctx)
                            .await
                            .map_err(|panic| {
                                self.handler_panicked("completer", &argument.name, &panic)
                            })??
                    }
                    None => Vec::new(),
                };
                let total = values.len() as u64;
                let has_more = values.len() > 100;
                values.truncate(100);
                Ok(encode::result(
                    id,
                    &CompleteResult {
                        result_type: ResultType::Complete,
                        completion: Completion {
                            values,
                            total: Some(total),
                            has_more: Some(has_more),
                        },
                        meta: self.meta(),
                    },
                ))
            }
        }
    }
}

/// The result `_meta` key listing the capabilities a refused tool call lacked.
pub const MISSING_CAPABILITIES_META_KEY: &str = "rs.typed-mcp/missingCapabilities";

/// The JSON-RPC error code of a refused `resources/read` or `prompts/get`
/// (their results have no error form). Application-defined, so outside the
/// range JSON-RPC and MCP reserve; `data.missingCapabilities` lists the names.
pub const CAPABILITY_NOT_GRANTED: i32 = -31001;

/// The declaration a call is for, as its receipt names it.
struct Subject<'a> {
    method: &'static str,
    name: &'a str,
    uri: Option<String>,
    digest: &'a Digest,
    caps: Arc<[Capability]>,
}

/// The record of one accepted call: its request span, and — for a call of a
/// declaration — its receipt. Opened when the call is accepted, so a call
/// cancelled even before it starts (waiting for a handler slot) leaves a
/// receipt; [`finish`](Self::finish) records the outcome, and a record dropped
/// unfinished (the call's task aborted) records `Cancelled`.
pub(crate) struct CallRecord {
    server: Server,
    /// The capabilities the declaration needs; `None` for calls that are not
    /// of a declaration (subscriptions, completions).
    caps: Option<Arc<[Capability]>>,
    /// `None` when no sink wants receipts now: nothing is built.
    pending: Option<Receipt>,
    started: Instant,
    cancel: tokio_util::sync::CancellationToken,
    span: tracing::Span,
    done: bool,
}

impl CallRecord {
    /// The span the call runs in.
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    pub(crate) fn finish(mut self, outcome: Outcome) {
        // A call cancelled while finishing gets no response: say so.
        let outcome = if self.cancel.is_cancelled() {
            Outcome::Cancelled
        } else {
            outcome
        };
        self.record(outcome);
    }

    fn record(&mut self, outcome: Outcome) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let code;
        let error_type = match &outcome {
            Outcome::Completed | Outcome::InputRequired => None,
            Outcome::Error { code: c } => {
                code = c.to_string();
                Some(code.as_str())
            }
            Outcome::Panicked => Some("-32603"),
            Outcome::Failed { .. } => Some("tool_error"),
            other => Some(other.kind()),
        };
        crate::trace::record_outcome(&self.span, outcome.kind(), error_type);
        let Some(mut receipt) = self.pending.take() else {
            return;
        };
        if matches!(outcome, Outcome::Refused { .. }) {
            receipt.scope.clear();
        }
        let redactor = &self.server.inner.redactor;
        if !redactor.is_empty() {
            for text in [
                Some(&mut receipt.name),
                receipt.uri.as_mut(),
                receipt.principal.as_mut(),
            ]
            .into_iter()
            .flatten()
            {
                *text = redactor.redact_str(text).into_owned();
            }
        }
        receipt.outcome = outcome;
        receipt.duration_us = self
            .started
            .elapsed()
            .as_micros()
            .try_into()
            .unwrap_or(u64::MAX);
        for sink in &self.server.inner.receipt_sinks {
            sink.record(&receipt);
        }
    }
}

impl Drop for CallRecord {
    fn drop(&mut self) {
        self.record(Outcome::Cancelled);
    }
}

impl Server {
    /// Opens the record of a call as it is accepted (see [`CallRecord`]).
    pub(crate) fn open_record(
        &self,
        call: &Call,
        principal: Option<&Principal>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> (CallRecord, TraceContext) {
        let subject = self.subject(&call.target);
        let method = match (&subject, &call.target) {
            (Some(s), _) => s.method,
            (None, Target::Listen { .. }) => "subscriptions/listen",
            (None, _) => "completion/complete",
        };
        let mut trace = TraceContext::from_meta(&call.meta);
        let span = crate::trace::request_span(
            method,
            subject.as_ref().map_or("", |s| s.name),
            &call.id,
            principal.map(Principal::id),
            &mut trace,
        );
        let sinks = &self.inner.receipt_sinks;
        let pending = subject
            .as_ref()
            .filter(|_| sinks.iter().any(|s| s.enabled()))
            .map(|subject| Receipt {
                time: crate::receipt::rfc3339(SystemTime::now()),
                request_id: serde_json::to_value(&call.id).unwrap_or_default(),
                method: subject.method.to_owned(),
                name: subject.name.to_owned(),
                uri: subject.uri.clone(),
                digest: Some(subject.digest.to_string()),
                principal: principal.map(|p| p.id().to_owned()),
                scope: subject.caps.iter().map(|c| c.name().to_owned()).collect(),
                outcome: Outcome::Cancelled,
                duration_us: 0,
                trace_id: trace.trace_id().to_string(),
            });
        let record = CallRecord {
            server: self.clone(),
            caps: subject.map(|s| s.caps),
            pending,
            started: Instant::now(),
            cancel: cancel.clone(),
            span,
            done: false,
        };
        (record, trace)
    }
}

/// A deadline as people write it: `30s`, `250ms`, `1.5s`.
fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{}s", (ms as f64) / 1000.0)
    }
}
