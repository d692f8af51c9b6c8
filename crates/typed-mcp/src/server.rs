//! The server: a builder that validates the whole catalog before any message is
//! read, and the built server that transports drive.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use typed_mcp_core::catalog::{
    Catalog, CatalogError, CatalogErrors, CatalogOptions, Kind, ListView,
};
use typed_mcp_core::wire::{CacheHint, CacheScope, Implementation};
use typed_mcp_core::{Limits, Router, ToolArguments};

use crate::capability::{
    Capability, Grant, GrantError, Grants, Scope, ScopeEntry, ScopeKind, resolve_allow_entry,
};
use crate::context::Principal;
use crate::declare::{
    AnyResourceDecl, Completer, Handler, PromptDecl, ResourceDecl, ResourceRequest,
    ResourceTemplateDecl, ToolDecl,
};
use crate::middleware::{BoxError, BoxedLayer, HandlerCall, HandlerDone, HandlerService};
use crate::pipeline::Admission;
use crate::receipt::{ReceiptSink, TracingSink};
use crate::secret::{Redactor, RedactorError};
use crate::state::StateKeys;
use crate::subscribe::{ResourceUpdates, UpdateBus};

/// Why [`ServerBuilder::build`] refused to build a server: invalid
/// declarations, or one setting out of range (each variant names the setting
/// and carries the value found).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// One or more declarations are invalid; each error names its declaration.
    #[error(transparent)]
    Catalog(CatalogErrors),
    /// A declaration's derived schema cannot be served: it does not compile
    /// (e.g. an invalid `#[schemars(regex = ...)]`), or it declares a named
    /// validator's rule that would not run (the `garde` feature is off).
    #[error("{declaration}: its schema cannot be served: {reason}")]
    InvalidSchema {
        /// The declaration, as "tool `name`" (or resource, template, prompt).
        declaration: String,
        /// What the schema compiler reported.
        reason: String,
    },
    /// [`max_message_bytes`](ServerBuilder::max_message_bytes) is zero.
    #[error("max_message_bytes must be at least 1")]
    ZeroMaxMessageBytes,
    /// [`max_depth`](ServerBuilder::max_depth) is zero or above
    /// [`ServerBuilder::MAX_DEPTH_CEILING`].
    #[error("max_depth must be between 1 and {ceiling}, found {found}")]
    MaxDepthOutOfRange {
        /// The depth given.
        found: usize,
        /// The largest accepted, [`ServerBuilder::MAX_DEPTH_CEILING`].
        ceiling: usize,
    },
    /// [`max_concurrent`](ServerBuilder::max_concurrent) is zero or more than
    /// a semaphore can count.
    #[error("max_concurrent must be between 1 and {max}, found {found}")]
    MaxConcurrentOutOfRange {
        /// The number given.
        found: usize,
        /// The largest accepted.
        max: usize,
    },
    /// [`max_pending`](ServerBuilder::max_pending) is zero.
    #[error("max_pending must be at least 1")]
    ZeroMaxPending,
    /// [`max_pending_bytes`](ServerBuilder::max_pending_bytes) is below
    /// `max_message_bytes` (one message could never be queued) or above what
    /// the queue can count.
    #[error("max_pending_bytes must be between max_message_bytes ({min}) and {max}, found {found}")]
    MaxPendingBytesOutOfRange {
        /// The number given.
        found: usize,
        /// The smallest accepted: the server's `max_message_bytes`.
        min: usize,
        /// The largest accepted.
        max: usize,
    },
    /// [`page_size`](ServerBuilder::page_size) is zero.
    #[error("page_size must be at least 1")]
    ZeroPageSize,
    /// [`default_timeout`](ServerBuilder::default_timeout) is zero, which
    /// would fail every call.
    #[error("default_timeout must be positive: zero would fail every call")]
    ZeroDefaultTimeout,
    /// [`secret_values`](ServerBuilder::secret_values) refused a value (the
    /// error never includes one).
    #[error("invalid secret_values")]
    InvalidSecretValues(#[source] RedactorError),
    /// Two declarations name one capability with different descriptions.
    #[error(
        "the capability {name} is declared with two descriptions ({first:?} and {second:?}): declare it once, as a constant"
    )]
    CapabilityDescribedTwice {
        /// The capability's name.
        name: &'static str,
        /// The description seen first.
        first: &'static str,
        /// The other description.
        second: &'static str,
    },
    /// [`allow`](ServerBuilder::allow) names capabilities no declaration needs
    /// (a typo would otherwise grant nothing, silently).
    #[error(
        "cannot grant {}: no declaration needs {}; the capabilities declared are: {}",
        unknown.join(", "),
        if unknown.len() == 1 { "it" } else { "them" },
        if declared.is_empty() { "none".to_owned() } else { declared.join(", ") }
    )]
    UnknownCapabilities {
        /// The names given that no declaration uses.
        unknown: Vec<String>,
        /// Every capability the declarations name, sorted.
        declared: Vec<&'static str>,
    },
    /// An entry given to [`allow`](ServerBuilder::allow) (or a scope given to
    /// [`grant_scoped`](ServerBuilder::grant_scoped)) does not parse, or its
    /// scope does not fit its capability; the error names the entry.
    #[error(transparent)]
    InvalidGrant(GrantError),
}

impl BuildError {
    /// Every invalid declaration (empty for a configuration error).
    pub fn catalog_errors(&self) -> &[CatalogError] {
        match self {
            BuildError::Catalog(errors) => &errors.0,
            _ => &[],
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
    update_bus: Option<Arc<dyn UpdateBus>>,
    state_ttl: Duration,
    grants: Grants,
    allowed_names: Vec<String>,
    /// Given to `grant_scoped`, checked against their kinds by `build`.
    scoped_grants: Vec<Grant>,
    receipt_sinks: Vec<Box<dyn ReceiptSink>>,
    default_timeout: Option<Duration>,
    hide_ungranted: bool,
    redactor: Result<Redactor, RedactorError>,
    max_pending: usize,
    max_pending_bytes: usize,
    queue_timeout: Duration,
    drain_timeout: Duration,
    layers: Vec<BoxedLayer>,
    legacy_clients: bool,
    input_wait: Duration,
    /// Extensions the application serves (`ServerBuilder::extension`).
    pub(crate) extensions: Vec<crate::extension::Extension>,
    /// Where tasks live and how long they are kept (`ServerBuilder::task_store`).
    pub(crate) task_settings: crate::tasks::TaskSettings,
    /// The interval of progress heartbeats (`ServerBuilder::heartbeat`).
    pub(crate) heartbeat: Option<Duration>,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("server_info", &self.options.server_info)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl ServerBuilder {
    /// Default [`max_pending`](Self::max_pending).
    pub const DEFAULT_MAX_PENDING: usize = 1024;
    /// Default [`max_pending_bytes`](Self::max_pending_bytes): 16 MiB.
    pub const DEFAULT_MAX_PENDING_BYTES: usize = 16 * 1024 * 1024;
    /// Default [`queue_timeout`](Self::queue_timeout).
    pub const DEFAULT_QUEUE_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default [`drain_timeout`](Self::drain_timeout).
    pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(10);
    /// Default [`input_wait`](Self::input_wait): ten minutes.
    pub const DEFAULT_INPUT_WAIT: Duration = Duration::from_secs(600);
    /// Deepest [`max_depth`](Self::max_depth) accepted: deeper values would
    /// let a message exhaust the stack of the thread that parses it.
    pub const MAX_DEPTH_CEILING: usize = 4096;

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

    /// Deepest accepted JSON nesting (default 128, at most [`Self::MAX_DEPTH_CEILING`]).
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.limits.max_depth = depth;
        self
    }

    /// Handlers allowed to run at once (default 16); further calls wait for
    /// a slot. A blocking handler holds its slot until its thread returns.
    pub fn max_concurrent(mut self, handlers: usize) -> Self {
        self.max_concurrent = handlers;
        self
    }

    /// Calls accepted and not yet finished — waiting for a slot or running —
    /// beyond which a new call is answered at once with `-31002` (server
    /// overloaded; HTTP `503` with `Retry-After`) and its receipt says
    /// `overloaded` (default [`Self::DEFAULT_MAX_PENDING`]). Subscriptions are not
    /// counted. See [`transport`](crate::transport) for the whole design.
    pub fn max_pending(mut self, calls: usize) -> Self {
        self.max_pending = calls;
        self
    }

    /// Bytes of requests accepted and not yet answered (each request counts
    /// its size until its reply is written; default
    /// [`Self::DEFAULT_MAX_PENDING_BYTES`], at least `max_message_bytes`). A request
    /// that finds no room makes the transport wait before reading more, up to
    /// [`queue_timeout`](Self::queue_timeout).
    pub fn max_pending_bytes(mut self, bytes: usize) -> Self {
        self.max_pending_bytes = bytes;
        self
    }

    /// How long a request waits for room under
    /// [`max_pending_bytes`](Self::max_pending_bytes) before it is shed as
    /// overloaded (default [`Self::DEFAULT_QUEUE_TIMEOUT`]). Once one has waited in
    /// vain, further requests are shed at once until room frees.
    pub fn queue_timeout(mut self, wait: Duration) -> Self {
        self.queue_timeout = wait;
        self
    }

    /// How long calls in flight may still run at end of input or on a
    /// [`Shutdown`](crate::transport::Shutdown) before they are cancelled,
    /// each with its receipt (default [`Self::DEFAULT_DRAIN_TIMEOUT`]).
    pub fn drain_timeout(mut self, deadline: Duration) -> Self {
        self.drain_timeout = deadline;
        self
    }

    /// Wraps the handler stage of every tool, resource, prompt and completer
    /// in a [`tower::Layer`] (see [`middleware`](crate::middleware)). The
    /// first layer added is the outermost. Grants are checked before any
    /// layer; receipts and redaction happen after them.
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<HandlerService> + Send + 'static,
        L::Service: tower::Service<HandlerCall, Response = HandlerDone> + Clone + Send + 'static,
        <L::Service as tower::Service<HandlerCall>>::Error: Into<BoxError>,
        <L::Service as tower::Service<HandlerCall>>::Future: Send + 'static,
    {
        self.layers.push(Box::new(move |inner: HandlerService| {
            use tower::ServiceExt as _;
            HandlerService::new(layer.layer(inner).map_err(Into::into))
        }));
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

    /// Carries resource updates between replicas (default: none, updates
    /// reach this process's subscriptions only). See
    /// [`subscribe`](crate::subscribe#replicas-an-update-bus).
    pub fn update_bus(mut self, bus: Arc<dyn UpdateBus>) -> Self {
        self.update_bus = Some(bus);
        self
    }

    /// How long a sealed `requestState` stays valid (default 10 minutes).
    pub fn request_state_ttl(mut self, ttl: Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// Grants a capability to every caller, unscoped (see
    /// [`capability`](crate::capability)).
    pub fn grant(mut self, capability: Capability) -> Self {
        self.grants.add(Grant::unscoped(capability));
        self
    }

    /// Grants a capability to every caller, narrowed to `scope`: roots, host
    /// patterns or resource patterns, as the capability's
    /// [`kind`](Capability::kind) says (a scope of another kind, or a root that
    /// is not an absolute directory, is refused by [`build`](Self::build)).
    /// Granting one capability several times grants the union of the scopes.
    ///
    /// ```
    /// use typed_mcp::capability::{Access, Scope};
    /// use typed_mcp::{Capability, Server};
    ///
    /// const FILES: Capability =
    ///     Capability::new("desk.files", "Attach and export files").paths(Access::ReadWrite);
    /// let dir = std::env::temp_dir();
    /// let builder = Server::new("desk", "1.0.0").grant_scoped(FILES, Scope::root(&dir, Access::Read));
    /// # drop(builder);
    /// ```
    pub fn grant_scoped(mut self, capability: Capability, scope: Scope) -> Self {
        self.scoped_grants.push(Grant::scoped(capability, scope));
        self
    }

    /// Grants capabilities by name to every caller, as an operator writes them
    /// on a command line (`--allow desk.write`) or in an environment variable:
    /// each item may itself be a comma-separated list. An entry `NAME=VALUE`
    /// grants the capability narrowed to one scope value (a directory, a host
    /// pattern or a resource pattern: see [`Scope::parse`]); repeat it for
    /// several (`net=a.example.com,net=*.example.org`). A name no declaration
    /// uses, or a value that does not parse, is refused by
    /// [`build`](Self::build), naming the entry, so a typo cannot silently
    /// grant nothing (or everything).
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
        self.grants.policy = Some(Arc::new(move |principal: Option<&Principal>| {
            policy(principal).into_iter().map(Grant::unscoped).collect()
        }));
        self
    }

    /// Grants capabilities per caller with their scopes, as
    /// [`grant_policy`](Self::grant_policy) does: the scopes `policy` returns
    /// are added to those granted to everyone. Entries of another kind than
    /// their capability's (a host pattern for a paths capability) reach
    /// nothing through its handle; build scopes with [`Scope::parse`] for the
    /// capability they narrow.
    pub fn grant_policy_scoped<F>(mut self, policy: F) -> Self
    where
        F: Fn(Option<&Principal>) -> Vec<Grant> + Send + Sync + 'static,
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

    /// Whether to serve clients of the dated revisions (2025-11-25, 2025-06-18,
    /// 2025-03-26) beside 2026-07-28, on the same transports and from the same
    /// declarations (default: on). A dated client opens a session with
    /// `initialize`; on stdio the connection is the session, over Streamable
    /// HTTP the transport keeps it (see typed-mcp-http).
    ///
    /// Off, the server is strictly 2026-07-28: `initialize` is answered with
    /// `-32601` naming the supported versions, and a dated
    /// `MCP-Protocol-Version` header is refused like any unsupported one.
    pub fn legacy_clients(mut self, serve: bool) -> Self {
        self.legacy_clients = serve;
        self
    }

    /// How long a handler's [`NeedsInput`](crate::NeedsInput) waits for a
    /// dated client to answer each request the server sends it on the
    /// session (`elicitation/create`, `sampling/createMessage`, `roots/list`)
    /// — a person may be typing the answer (default
    /// [`Self::DEFAULT_INPUT_WAIT`]). Past it the call ends with an error
    /// saying so. (A 2026-07-28 client gets the request in an
    /// `input_required` result instead, and retries when it has the answer.)
    pub fn input_wait(mut self, wait: Duration) -> Self {
        self.input_wait = wait;
        self
    }

    /// The deadline of tool calls whose declaration sets none, and of every
    /// resource read, prompt and completion (default: none). A call still
    /// running then is answered as timed out — a tool with an `isError`
    /// result, the others with `-32603` — and its handler dropped.
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = Some(timeout);
        self
    }

    /// Validates every declaration and setting, and builds the server. Nothing
    /// is read from any transport before this succeeds.
    pub fn build(mut self) -> Result<Server, BuildError> {
        if let Some((name, reason)) = self
            .tools
            .iter()
            .find_map(|t| Some((&t.entry.tool.name, t.schema_fault.as_ref()?)))
        {
            return Err(BuildError::InvalidSchema {
                declaration: format!("tool `{name}`"),
                reason: reason.clone(),
            });
        }
        if self.limits.max_message_bytes == 0 {
            return Err(BuildError::ZeroMaxMessageBytes);
        }
        if !(1..=Self::MAX_DEPTH_CEILING).contains(&self.limits.max_depth) {
            return Err(BuildError::MaxDepthOutOfRange {
                found: self.limits.max_depth,
                ceiling: Self::MAX_DEPTH_CEILING,
            });
        }
        if self.max_concurrent == 0 || self.max_concurrent > Semaphore::MAX_PERMITS {
            return Err(BuildError::MaxConcurrentOutOfRange {
                found: self.max_concurrent,
                max: Semaphore::MAX_PERMITS,
            });
        }
        if self.max_pending == 0 {
            return Err(BuildError::ZeroMaxPending);
        }
        if self.max_pending_bytes < self.limits.max_message_bytes
            || self.max_pending_bytes > u32::MAX as usize
            || self.max_pending_bytes > Semaphore::MAX_PERMITS
        {
            return Err(BuildError::MaxPendingBytesOutOfRange {
                found: self.max_pending_bytes,
                min: self.limits.max_message_bytes,
                max: (u32::MAX as usize).min(Semaphore::MAX_PERMITS),
            });
        }
        if self.options.page_size == 0 {
            return Err(BuildError::ZeroPageSize);
        }
        if self.default_timeout == Some(Duration::ZERO) {
            return Err(BuildError::ZeroDefaultTimeout);
        }
        self.resolve_allowed()?;
        let redactor = std::mem::replace(&mut self.redactor, Ok(Redactor::default()))
            .map_err(BuildError::InvalidSecretValues)?;
        // The Tasks extension is served when a declaration may run as a task.
        let updates = ResourceUpdates::new(self.update_bus);
        let tasks = crate::tasks::runtime_for(&self.tools, &mut self.task_settings, &updates);
        if let Some(tasks) = &tasks {
            self.extensions.push(crate::tasks::extension(tasks.clone()));
        }
        for extension in &self.extensions {
            self.options.extensions.insert(
                extension.id.clone(),
                serde_json::Value::Object(extension.settings.clone()),
            );
        }
        let mut tool_entries = Vec::with_capacity(self.tools.len());
        let mut tool_handlers = Vec::with_capacity(self.tools.len());
        for t in self.tools {
            tool_entries.push(t.entry);
            tool_handlers.push(ToolSlot {
                handler: t.handler,
                timeout: t.timeout.or(self.default_timeout),
                asks_input: t.asks_input,
                caps: t.capabilities.into(),
                task: t.task,
                arguments_valid: t.arguments_valid,
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
        let layers = (!self.layers.is_empty())
            .then(|| {
                self.layers
                    .into_iter()
                    .rev()
                    .fold(crate::middleware::handler_service(), |inner, layer| {
                        layer(inner)
                    })
            })
            .map(std::sync::Mutex::new);
        let mut router = Router::new(catalog, self.limits).with_legacy_clients(self.legacy_clients);
        for (rule, _) in self.extensions.iter().flat_map(|e| &e.methods) {
            router = router.with_extension_method(rule.clone());
        }
        // One handler per method the router serves, in its order (the first
        // extension to name a method serves it).
        let extension_handlers = router
            .extension_methods()
            .iter()
            .map(|served| {
                self.extensions
                    .iter()
                    .flat_map(|e| &e.methods)
                    .find(|(rule, _)| rule.method == served.method)
                    .map(|(_, handler)| handler.clone())
                    .expect("the router serves only methods an extension gave")
            })
            .collect();
        let server = Server {
            inner: Arc::new(Inner {
                admission: Admission::new(
                    self.max_pending,
                    self.max_pending_bytes,
                    self.queue_timeout,
                ),
                drain_timeout: self.drain_timeout,
                default_timeout: self.default_timeout,
                layers,
                router,
                extensions: extension_handlers,
                tasks,
                heartbeat: self.heartbeat,
                input_wait: self.input_wait,
                tools: tool_handlers,
                resources: resource_handlers,
                templates,
                prompts,
                slots: Arc::new(Semaphore::new(self.max_concurrent)),
                max_concurrent: self.max_concurrent,
                state_keys: self.state_keys.unwrap_or_else(StateKeys::random),
                state_ttl: self.state_ttl,
                updates,
                grants: self.grants,
                receipt_sinks,
                hide_ungranted: self.hide_ungranted,
                views: Default::default(),
                redactor,
            }),
        };
        // Once per server, not per connection: panics while it serves never
        // print its secrets.
        crate::pipeline::install_panic_hook(&server);
        Ok(server)
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
            if let Some(other) = by_name.insert(c.name(), *c)
                && other != *c
            {
                return Err(BuildError::CapabilityDescribedTwice {
                    name: c.name(),
                    first: other.description(),
                    second: c.description(),
                });
            }
        }
        Ok(by_name)
    }

    /// Turns the entries given to [`allow`](Self::allow) into grants, and
    /// checks the scopes given to [`grant_scoped`](Self::grant_scoped).
    fn resolve_allowed(&mut self) -> Result<(), BuildError> {
        let declared = self.declared_capabilities()?;
        for grant in std::mem::take(&mut self.scoped_grants) {
            for entry in grant.scope.entries() {
                let text = entry.to_string();
                let fits = match (grant.capability.kind(), entry) {
                    (ScopeKind::Paths(_), ScopeEntry::Root { path, .. }) => {
                        path.is_absolute() && path.is_dir()
                    }
                    (ScopeKind::Hosts, ScopeEntry::Host(_))
                    | (ScopeKind::Resources, ScopeEntry::Resource(_)) => true,
                    _ => false,
                };
                if !fits {
                    return Err(BuildError::InvalidGrant(GrantError {
                        entry: format!("{}={text}", grant.capability.name()),
                        reason: format!(
                            "expected a scope of the kind the capability is declared with ({:?}): an absolute directory for paths, a host pattern for hosts, a resource pattern for resources",
                            grant.capability.kind()
                        ),
                    }));
                }
            }
            self.grants.add(grant);
        }
        let mut unknown = Vec::new();
        for name in std::mem::take(&mut self.allowed_names) {
            match resolve_allow_entry(&name, &declared).map_err(BuildError::InvalidGrant)? {
                Some(grant) => self.grants.add(grant),
                None => unknown.push(name),
            }
        }
        if unknown.is_empty() {
            return Ok(());
        }
        Err(BuildError::UnknownCapabilities {
            unknown,
            declared: declared.keys().copied().collect(),
        })
    }
}

pub(crate) type ToolHandler = Handler<ToolArguments, crate::declare::ToolReply>;
type ResourceHandler = Handler<ResourceRequest, crate::declare::ResourceReply>;
type PromptHandler =
    Handler<std::collections::BTreeMap<String, String>, crate::declare::PromptReply>;

/// What running one tool needs besides its catalog entry.
pub(crate) struct ToolSlot {
    pub(crate) handler: ToolHandler,
    /// The declaration's deadline, or the server's default.
    pub(crate) timeout: Option<Duration>,
    pub(crate) asks_input: bool,
    pub(crate) caps: Arc<[Capability]>,
    /// Whether and how a call may run as a task.
    pub(crate) task: Option<crate::tasks::TaskSupport>,
    /// Whether a call's arguments would reach its handler (typed tools).
    pub(crate) arguments_valid: Option<crate::declare::ArgumentsValid>,
}

pub(crate) struct Inner {
    pub(crate) router: Router,
    /// The handlers of the router's extension methods, in its order.
    pub(crate) extensions: Vec<crate::extension::ExtensionHandler>,
    /// The task runtime, when a declaration may run as a task.
    pub(crate) tasks: Option<Arc<crate::tasks::TaskRuntime>>,
    /// The interval of progress heartbeats for calls with a progress token.
    pub(crate) heartbeat: Option<Duration>,
    pub(crate) tools: Vec<ToolSlot>,
    pub(crate) resources: Vec<(ResourceHandler, Arc<[Capability]>)>,
    pub(crate) templates: Vec<(ResourceHandler, Option<Completer>, Arc<[Capability]>)>,
    pub(crate) prompts: Vec<(PromptHandler, Option<Completer>, Arc<[Capability]>)>,
    slots: Arc<Semaphore>,
    max_concurrent: usize,
    pub(crate) state_keys: StateKeys,
    pub(crate) state_ttl: Duration,
    updates: ResourceUpdates,
    pub(crate) grants: Grants,
    pub(crate) receipt_sinks: Vec<Box<dyn ReceiptSink>>,
    hide_ungranted: bool,
    /// List views by which declarations they show (see `list_view`).
    views: std::sync::Mutex<std::collections::HashMap<Vec<bool>, Arc<ListView>>>,
    pub(crate) redactor: Redactor,
    pub(crate) admission: Admission,
    drain_timeout: Duration,
    /// How long a legacy session's request to the client waits for its answer.
    pub(crate) input_wait: Duration,
    /// Resources, prompts and completers (tools keep theirs in `ToolSlot`).
    pub(crate) default_timeout: Option<Duration>,
    /// The application's layers around the handler stage, when it has any
    /// (behind a lock because tower services need not be `Sync`; each call
    /// clones the service, then runs it outside the lock).
    pub(crate) layers: Option<std::sync::Mutex<HandlerService>>,
}

/// A built, validated MCP server. Cheap to clone; every clone serves the same
/// catalog and shares one concurrency limit.
///
/// ```
/// use typed_mcp::Server;
/// use typed_mcp::declare::ToolDecl;
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
    pub(crate) inner: Arc<Inner>,
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
            update_bus: None,
            state_ttl: Duration::from_secs(600),
            grants: Grants::default(),
            allowed_names: Vec::new(),
            scoped_grants: Vec::new(),
            receipt_sinks: Vec::new(),
            default_timeout: None,
            hide_ungranted: false,
            redactor: Ok(Redactor::default()),
            max_pending: ServerBuilder::DEFAULT_MAX_PENDING,
            max_pending_bytes: ServerBuilder::DEFAULT_MAX_PENDING_BYTES,
            queue_timeout: ServerBuilder::DEFAULT_QUEUE_TIMEOUT,
            drain_timeout: ServerBuilder::DEFAULT_DRAIN_TIMEOUT,
            layers: Vec::new(),
            legacy_clients: true,
            input_wait: ServerBuilder::DEFAULT_INPUT_WAIT,
            extensions: Vec::new(),
            task_settings: crate::tasks::TaskSettings::default(),
            heartbeat: Some(ServerBuilder::DEFAULT_HEARTBEAT),
        }
    }

    /// The validated catalog.
    pub fn catalog(&self) -> &Catalog {
        self.inner.router.catalog()
    }

    /// Every capability a declaration of this server needs, each once, by
    /// name (what an OAuth resource server offers as its scopes).
    pub fn capabilities(&self) -> Vec<Capability> {
        let inner = &self.inner;
        let mut all: Vec<Capability> = inner
            .tools
            .iter()
            .flat_map(|t| t.caps.iter())
            .chain(inner.resources.iter().flat_map(|r| r.1.iter()))
            .chain(inner.templates.iter().flat_map(|t| t.2.iter()))
            .chain(inner.prompts.iter().flat_map(|p| p.2.iter()))
            .copied()
            .collect();
        all.sort();
        all.dedup_by(|a, b| a.name() == b.name());
        all
    }

    /// The capabilities a request would need, known from its method and the
    /// name it calls (as the `Mcp-Method` and `Mcp-Name` headers give them):
    /// a tool, a prompt, or a static resource's URI. `None` when no such
    /// declaration is known this way (templated resources included).
    pub fn capabilities_for(&self, method: &str, name: &str) -> Option<Arc<[Capability]>> {
        let catalog = self.catalog();
        match method {
            "tools/call" => catalog
                .tool_index(name)
                .map(|i| self.inner.tools[i].caps.clone()),
            "prompts/get" => catalog
                .prompt_index(name)
                .map(|i| self.inner.prompts[i].2.clone()),
            "resources/read" => catalog
                .resources()
                .iter()
                .position(|r| r.resource.uri == name)
                .map(|i| self.inner.resources[i].1.clone()),
            _ => None,
        }
    }

    /// The router (pure protocol rules) over this server's catalog.
    pub fn router(&self) -> &Router {
        &self.inner.router
    }

    /// The message limits.
    pub fn limits(&self) -> Limits {
        self.inner.router.limits()
    }

    /// The interval of progress heartbeats
    /// ([`ServerBuilder::heartbeat`]); `None` when they are off.
    pub fn heartbeat(&self) -> Option<Duration> {
        self.inner.heartbeat
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

    /// The keys that seal and open `requestState` (their fingerprints tell
    /// replicas whether they share them).
    pub fn request_state_keys(&self) -> &StateKeys {
        &self.inner.state_keys
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
        // A credential that grants by itself (a token's scopes) makes the
        // lists depend on the caller, as a policy does.
        let private =
            inner.grants.per_principal() || principal.is_some_and(|p| p.granted().is_some());
        // The key: which declarations are visible (and whether the view is
        // private). Without a policy or credentials it is the same for every
        // caller.
        let key: Vec<bool> = std::iter::once(private)
            .chain(
                inner
                    .tools
                    .iter()
                    .map(|t| granted(&t.caps))
                    .chain(inner.resources.iter().map(|r| granted(&r.1)))
                    .chain(inner.templates.iter().map(|t| granted(&t.2)))
                    .chain(inner.prompts.iter().map(|p| granted(&p.2))),
            )
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
            Kind::Tool => key[1 + i],
            Kind::Resource => key[1 + tools + i],
            Kind::ResourceTemplate => key[1 + tools + resources + i],
            Kind::Prompt => key[1 + tools + resources + templates + i],
        };
        let mut cache = self.catalog().list_cache();
        if private {
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

    pub(crate) async fn acquire_slot(&self) -> OwnedSemaphorePermit {
        self.inner
            .slots
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed")
    }

    /// How long calls in flight may run on at end of input or shutdown.
    pub fn drain_timeout(&self) -> Duration {
        self.inner.drain_timeout
    }
}
