//! The server: a builder that validates the whole catalog before any message is
//! read, and the built server that transports drive.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::sync::{Semaphore, SemaphorePermit};
use typed_mcp_core::catalog::{Catalog, CatalogError, CatalogErrors, CatalogOptions};
use typed_mcp_core::router::{CompletionTarget, ResourceMatch};
use typed_mcp_core::wire::{
    CacheHint, CallToolResult, CompleteResult, Completion, Implementation, InputRequiredResult,
    ReadResourceResult, ResultMeta, ResultType,
};
use typed_mcp_core::{Limits, RequestId, Router, RpcError, Target, encode};

use crate::context::{Principal, ToolContext};
use crate::declare::{
    AnyResourceDecl, Completer, CompletionRequest, Handler, PromptDecl, PromptReply, ResourceDecl,
    ResourceReply, ResourceRequest, ResourceTemplateDecl, ToolDecl, ToolError, ToolReply,
};
use crate::dispatch::run_handler;
use crate::state::{BindingDigest, StateBinding, StateKeys};
use crate::subscribe::{self, ResourceUpdates};
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

    /// Validates every declaration and setting, and builds the server. Nothing
    /// is read from any transport before this succeeds.
    pub fn build(self) -> Result<Server, BuildError> {
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
        let mut tool_entries = Vec::with_capacity(self.tools.len());
        let mut tool_handlers = Vec::with_capacity(self.tools.len());
        for t in self.tools {
            tool_entries.push(t.entry);
            tool_handlers.push((t.handler, t.timeout, t.asks_input));
        }
        let (resource_entries, resource_handlers): (Vec<_>, Vec<_>) = self
            .resources
            .into_iter()
            .map(|r| (r.entry, r.handler))
            .unzip();
        let mut template_entries = Vec::new();
        let mut templates = Vec::new();
        for t in self.templates {
            template_entries.push(t.entry);
            templates.push((t.handler, t.completer));
        }
        let mut prompt_entries = Vec::new();
        let mut prompts = Vec::new();
        for p in self.prompts {
            prompt_entries.push(p.entry);
            prompts.push((p.handler, p.completer));
        }
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
            }),
        })
    }
}

type ToolHandler =
    Handler<serde_json::Map<String, serde_json::Value>, crate::declare::ReplyOutcome>;
type ResourceHandler = Handler<ResourceRequest, crate::declare::ResourceReplyOutcome>;
type PromptHandler =
    Handler<std::collections::BTreeMap<String, String>, crate::declare::PromptReplyOutcome>;

struct Inner {
    router: Router,
    tools: Vec<(ToolHandler, Option<Duration>, bool)>,
    resources: Vec<ResourceHandler>,
    templates: Vec<(ResourceHandler, Option<Completer>)>,
    prompts: Vec<(PromptHandler, Option<Completer>)>,
    slots: Semaphore,
    max_concurrent: usize,
    state_keys: StateKeys,
    state_ttl: Duration,
    updates: ResourceUpdates,
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

    /// The most handlers that run at once.
    pub fn max_concurrent(&self) -> usize {
        self.inner.max_concurrent
    }

    /// The handle that publishes `notifications/resources/updated` to open
    /// `subscriptions/listen` streams.
    pub fn resource_updates(&self) -> &ResourceUpdates {
        &self.inner.updates
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
    ) -> Vec<u8> {
        match self.invoke_target(id, target, request_state, ctx).await {
            Ok(body) => body,
            Err(e) => encode::error(Some(id), &e),
        }
    }

    async fn invoke_target(
        &self,
        id: &RequestId,
        target: Target,
        request_state: Option<String>,
        ctx: ToolContext,
    ) -> Result<Vec<u8>, RpcError> {
        let catalog = self.catalog();
        match target {
            Target::Tool { index, arguments } => {
                let entry = &catalog.tools()[index];
                let name = &entry.tool.name;
                let (handler, timeout, asks_input) = &self.inner.tools[index];
                // The request binding (a hash of the arguments) is needed only to
                // open or seal a state: most calls skip it.
                let binding = (*asks_input || request_state.is_some()).then(|| {
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
                let run = run_handler(handler, arguments, ctx);
                let finished = match timeout {
                    Some(limit) => tokio::time::timeout(*limit, run).await.ok(),
                    None => Some(run.await),
                };
                let outcome = match finished {
                    Some(outcome) => {
                        outcome.map_err(|panic| handler_panicked("tool", name, &panic))?
                    }
                    None => Err(ToolError::execution(format!(
                        "tool {name:?} timed out after {} ms",
                        timeout.unwrap_or_default().as_millis()
                    ))),
                };
                let mut result = match outcome {
                    Ok(ToolReply::Complete(result)) => result,
                    Ok(ToolReply::InputRequired(asked)) => {
                        let Some(binding) = &binding else {
                            return Err(RpcError::internal(format!(
                                "tool {name:?} asked for input but was declared with a handler that cannot"
                            )));
                        };
                        return self.input_required(id, name, asked, binding);
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
                result.result_type = ResultType::Complete;
                result.meta.server_info = Some(catalog.server_info().clone());
                Ok(encode::result(id, &result))
            }
            Target::Resource { uri, matched } => {
                let (handler, cache, variables) = match matched {
                    ResourceMatch::Static(i) => (
                        &self.inner.resources[i],
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
                let reply = run_handler(handler, request, ctx.clone())
                    .await
                    .map_err(|panic| handler_panicked("resource", &uri, &panic))??;
                let contents = match reply {
                    ResourceReply::Complete(contents) => contents,
                    ResourceReply::InputRequired(asked) => {
                        check_input_requests(&asked, &ctx)?;
                        return self.input_required(id, &uri, asked, &binding);
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
                    .map_err(|panic| handler_panicked("prompt", name, &panic))??;
                match reply {
                    PromptReply::Complete(mut result) => {
                        result.result_type = ResultType::Complete;
                        result.meta.server_info = Some(catalog.server_info().clone());
                        Ok(encode::result(id, &result))
                    }
                    PromptReply::InputRequired(asked) => {
                        check_input_requests(&asked, &ctx)?;
                        Ok(self.input_required(id, name, asked, &binding)?)
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
                                handler_panicked("completer", &argument.name, &panic)
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

fn handler_panicked(kind: &str, name: &str, panic: &str) -> RpcError {
    // The panic message stays in the server's log: it may hold internal detail.
    tracing::error!(%kind, %name, %panic, "handler panicked");
    RpcError::internal(format!(
        "the {kind} {name:?} failed unexpectedly (handler panicked)"
    ))
}
