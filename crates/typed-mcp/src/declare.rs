//! Declarations written by hand: a tool, resource, resource template or prompt,
//! with its descriptor and its handler. This is the layer the `#[tool]` family
//! of macros targets; it is public so that dynamic catalogs can be built too.
//!
//! Each builder becomes a declaration only once it is given a handler, so a
//! declaration without one does not compile. Handlers come in two flavours:
//! `handler` takes an async closure and runs on the async executor;
//! `blocking_handler` takes a plain closure and runs on tokio's blocking pool,
//! so a slow synchronous handler never stalls other requests. The hand-off to
//! the blocking pool costs a thread wake-up per call (tens of microseconds of
//! CPU); for quick computations that never block, prefer `handler` with an
//! `async move` block.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use typed_mcp_core::RpcError;
use typed_mcp_core::catalog::{ParameterDoc, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry};
use typed_mcp_core::wire::{
    CacheHint, CacheScope, CallToolResult, GetPromptResult, Icon, InputRequiredResult, Prompt,
    PromptArgument, Resource, ResourceContents, ResourceTemplate, Tool, ToolAnnotations,
};

use crate::capability::Capability;
use crate::context::ToolContext;

/// The `requires` and `capabilities` methods of every declaration builder.
macro_rules! capability_methods {
    ($what:literal) => {
        #[doc = concat!(
                    "Requires a capability the host must grant: ", $what,
                    " without it is refused before the handler runs (see ",
                    "[`capability`](crate::capability)). Hints such as `read_only` grant nothing."
                )]
        pub fn requires(mut self, capability: Capability) -> Self {
            if !self.capabilities.contains(&capability) {
                self.capabilities.push(capability);
            }
            self
        }

        /// Requires each of these capabilities (see [`requires`](Self::requires)).
        pub fn capabilities(mut self, capabilities: &[Capability]) -> Self {
            for c in capabilities {
                self = self.requires(*c);
            }
            self
        }
    };
}

/// How a tool call can fail.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool ran and failed: answered as a result with `isError: true`, so
    /// the model can read the message and try again.
    #[error("{0}")]
    Execution(String),
    /// The request itself is wrong: answered as a JSON-RPC error.
    #[error(transparent)]
    Protocol(RpcError),
}

impl ToolError {
    /// A tool execution error with this message.
    pub fn execution(message: impl Into<String>) -> Self {
        ToolError::Execution(message.into())
    }

    /// A tool execution error from any error, with its chain of sources joined
    /// by `": "`.
    pub fn from_error(error: &(dyn std::error::Error + 'static)) -> Self {
        let mut message = error.to_string();
        let mut source = error.source();
        while let Some(s) = source {
            message.push_str(": ");
            message.push_str(&s.to_string());
            source = s.source();
        }
        ToolError::Execution(message)
    }
}

impl From<RpcError> for ToolError {
    fn from(e: RpcError) -> Self {
        ToolError::Protocol(e)
    }
}

/// What a tool handler returns.
pub type ToolOutcome = Result<CallToolResult, ToolError>;

/// A tool's reply: final, or a request for input first (a multi round-trip
/// request, answered with `resultType: "input_required"`).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolReply {
    /// The final result.
    Complete(CallToolResult),
    /// Ask the client for input; it retries with `inputResponses`.
    InputRequired(InputRequiredResult),
}

impl From<CallToolResult> for ToolReply {
    fn from(result: CallToolResult) -> Self {
        ToolReply::Complete(result)
    }
}

/// What a reply handler returns (see [`ToolBuilder::reply_handler`]).
pub type ReplyOutcome = Result<ToolReply, ToolError>;

/// A request to read a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRequest {
    /// The URI as the client sent it.
    pub uri: String,
    /// For a template, each `{variable}`'s decoded value, in template order.
    pub variables: Vec<(String, String)>,
}

impl ResourceRequest {
    /// The value of a template variable.
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A request to complete an argument of a prompt or a template variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    /// The argument (or variable) name.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Values already chosen for other arguments.
    pub context: BTreeMap<String, String>,
}

pub(crate) enum Handler<I, O> {
    Async(Arc<dyn Fn(I, ToolContext) -> BoxFuture<'static, O> + Send + Sync>),
    Blocking(Arc<dyn Fn(I, ToolContext) -> O + Send + Sync>),
}

impl<I, O> Clone for Handler<I, O> {
    fn clone(&self) -> Self {
        match self {
            Handler::Async(f) => Handler::Async(f.clone()),
            Handler::Blocking(f) => Handler::Blocking(f.clone()),
        }
    }
}

fn async_handler<I, O, F, Fut>(f: F) -> Handler<I, O>
where
    F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
{
    Handler::Async(Arc::new(move |input, ctx| Box::pin(f(input, ctx))))
}

fn blocking_handler<I, O, F>(f: F) -> Handler<I, O>
where
    F: Fn(I, ToolContext) -> O + Send + Sync + 'static,
{
    Handler::Blocking(Arc::new(f))
}

pub(crate) type Completer = Handler<CompletionRequest, Result<Vec<String>, RpcError>>;

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

/// A tool: its descriptor and its handler.
pub struct ToolDecl {
    pub(crate) entry: ToolEntry,
    pub(crate) handler: Handler<Map<String, Value>, ReplyOutcome>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) capabilities: Vec<Capability>,
    /// Whether the handler can answer `input_required`: only then is the
    /// request binding of a sealed state computed before the call.
    pub(crate) asks_input: bool,
}

impl ToolDecl {
    /// Starts a tool declaration with this wire name.
    pub fn builder(name: impl Into<String>) -> ToolBuilder {
        ToolBuilder {
            tool: Tool::new(
                name,
                serde_json::json!({"type": "object", "additionalProperties": false}),
            ),
            required_client_capabilities: Vec::new(),
            allow_undocumented_inputs: false,
            timeout: None,
            capabilities: Vec::new(),
        }
    }

    /// The descriptor `tools/list` serves.
    pub fn descriptor(&self) -> &Tool {
        &self.entry.tool
    }

    /// The longest a call may run before it is answered as timed out.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The capabilities a call needs (see [`capability`](crate::capability)).
    pub fn capabilities(&self) -> &[Capability] {
        &self.capabilities
    }
}

impl std::fmt::Debug for ToolDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDecl")
            .field("name", &self.entry.tool.name)
            .finish_non_exhaustive()
    }
}

/// Builds a [`ToolDecl`]; finished by [`handler`](Self::handler) or
/// [`blocking_handler`](Self::blocking_handler).
#[derive(Debug, Clone)]
#[must_use = "a tool builder does nothing until it is given a handler"]
pub struct ToolBuilder {
    tool: Tool,
    required_client_capabilities: Vec<String>,
    allow_undocumented_inputs: bool,
    timeout: Option<Duration>,
    capabilities: Vec<Capability>,
}

impl ToolBuilder {
    /// Display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// What the tool does, for the model (required by `Server::build`).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
    }

    /// The JSON Schema of the arguments: an object schema whose properties each
    /// carry a `description`. Carried verbatim to `tools/list`.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.tool.input_schema = schema;
        self
    }

    /// The JSON Schema of `structuredContent`. A tool with an output schema must
    /// return structured content on success.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.tool.output_schema = Some(schema);
        self
    }

    /// Behaviour hints. They inform clients and grant nothing.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = (!annotations.is_empty()).then_some(annotations);
        self
    }

    /// Icons for display.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.tool.icons = Some(icons);
        self
    }

    /// Requires a client capability (e.g. `"sampling"`) on every call; a call
    /// without it is refused with `-32021` before the handler runs.
    pub fn requires_client_capability(mut self, capability: impl Into<String>) -> Self {
        self.required_client_capabilities.push(capability.into());
        self
    }

    /// Accepts input properties without a `description` (for schemas carried
    /// verbatim from elsewhere). By default `Server::build` refuses them.
    pub fn allow_undocumented_inputs(mut self) -> Self {
        self.allow_undocumented_inputs = true;
        self
    }

    /// Answers a call still running after `timeout` with a tool execution error
    /// (`isError: true`, "timed out"); the handler's future is dropped.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    capability_methods!("a call");

    fn finish(self, handler: Handler<Map<String, Value>, ReplyOutcome>) -> ToolDecl {
        let mut entry = ToolEntry::new(self.tool);
        entry.required_client_capabilities = self.required_client_capabilities;
        entry.allow_undocumented_inputs = self.allow_undocumented_inputs;
        ToolDecl {
            entry,
            handler,
            timeout: self.timeout,
            capabilities: self.capabilities,
            asks_input: true,
        }
    }

    /// Finishes the declaration with an async handler taking the arguments
    /// object and the call's context.
    pub fn handler<F, Fut>(self, f: F) -> ToolDecl
    where
        F: Fn(Map<String, Value>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ToolOutcome> + Send + 'static,
    {
        let mut decl = self.reply_handler(move |args, ctx| {
            let reply = f(args, ctx);
            async move { reply.await.map(ToolReply::Complete) }
        });
        decl.asks_input = false;
        decl
    }

    /// Finishes the declaration with a synchronous handler, run on the blocking
    /// pool so it cannot stall other requests.
    pub fn blocking_handler<F>(self, f: F) -> ToolDecl
    where
        F: Fn(Map<String, Value>, ToolContext) -> ToolOutcome + Send + Sync + 'static,
    {
        let mut decl =
            self.blocking_reply_handler(move |args, ctx| f(args, ctx).map(ToolReply::Complete));
        decl.asks_input = false;
        decl
    }

    /// Like [`handler`](Self::handler), for a handler that may answer
    /// [`ToolReply::InputRequired`].
    pub fn reply_handler<F, Fut>(self, f: F) -> ToolDecl
    where
        F: Fn(Map<String, Value>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ReplyOutcome> + Send + 'static,
    {
        self.finish(async_handler(f))
    }

    /// Like [`blocking_handler`](Self::blocking_handler), for a handler that may
    /// answer [`ToolReply::InputRequired`].
    pub fn blocking_reply_handler<F>(self, f: F) -> ToolDecl
    where
        F: Fn(Map<String, Value>, ToolContext) -> ReplyOutcome + Send + Sync + 'static,
    {
        self.finish(blocking_handler(f))
    }
}

// ---------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------

/// What a resource handler returns: one or more contents, or an error. An empty
/// list is answered as "resource not found".
pub type ResourceOutcome = Result<Vec<ResourceContents>, RpcError>;

/// A resource's reply: its contents, or a request for input first (multi
/// round-trip, answered with `resultType: "input_required"`).
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceReply {
    /// The contents (an empty list is answered as "resource not found").
    Complete(Vec<ResourceContents>),
    /// Ask the client for input; it retries with `inputResponses`.
    InputRequired(InputRequiredResult),
}

/// What a resource reply handler returns (see [`ResourceBuilder::reply_handler`]).
pub type ResourceReplyOutcome = Result<ResourceReply, RpcError>;

/// A static resource: its descriptor and its handler.
pub struct ResourceDecl {
    pub(crate) entry: ResourceEntry,
    pub(crate) handler: Handler<ResourceRequest, ResourceReplyOutcome>,
    pub(crate) capabilities: Vec<Capability>,
}

impl std::fmt::Debug for ResourceDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceDecl")
            .field("uri", &self.entry.resource.uri)
            .finish_non_exhaustive()
    }
}

impl ResourceDecl {
    /// Starts a resource declaration at an absolute URI.
    pub fn builder(uri: impl Into<String>, name: impl Into<String>) -> ResourceBuilder {
        ResourceBuilder {
            resource: Resource::new(uri, name),
            cache: CacheHint::PRIVATE_NOW,
            capabilities: Vec::new(),
        }
    }

    /// The capabilities a read needs.
    pub fn capabilities(&self) -> &[Capability] {
        &self.capabilities
    }
}

/// Builds a [`ResourceDecl`].
#[derive(Debug, Clone)]
#[must_use = "a resource builder does nothing until it is given a handler"]
pub struct ResourceBuilder {
    resource: Resource,
    cache: CacheHint,
    capabilities: Vec<Capability>,
}

impl ResourceBuilder {
    /// Display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.resource.title = Some(title.into());
        self
    }

    /// What the resource holds (required by `Server::build`).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.resource.description = Some(description.into());
        self
    }

    /// MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.resource.mime_type = Some(mime_type.into());
        self
    }

    /// Size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.resource.size = Some(size);
        self
    }

    /// Cache hint of `resources/read` results (default private, 0 ms).
    pub fn cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.cache = CacheHint::new(ttl_ms, scope);
        self
    }

    capability_methods!("a request");

    fn entry(&self) -> ResourceEntry {
        ResourceEntry::new(self.resource.clone()).with_cache(self.cache)
    }

    /// Finishes the declaration with an async handler.
    pub fn handler<F, Fut>(self, f: F) -> ResourceDecl
    where
        F: Fn(ResourceRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ResourceOutcome> + Send + 'static,
    {
        self.reply_handler(move |request, ctx| {
            let reply = f(request, ctx);
            async move { reply.await.map(ResourceReply::Complete) }
        })
    }

    /// Finishes the declaration with a synchronous handler on the blocking pool.
    pub fn blocking_handler<F>(self, f: F) -> ResourceDecl
    where
        F: Fn(ResourceRequest, ToolContext) -> ResourceOutcome + Send + Sync + 'static,
    {
        self.blocking_reply_handler(move |request, ctx| {
            f(request, ctx).map(ResourceReply::Complete)
        })
    }

    /// Like [`handler`](Self::handler), for a handler that may answer
    /// [`ResourceReply::InputRequired`].
    pub fn reply_handler<F, Fut>(self, f: F) -> ResourceDecl
    where
        F: Fn(ResourceRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ResourceReplyOutcome> + Send + 'static,
    {
        ResourceDecl {
            entry: self.entry(),
            handler: async_handler(f),
            capabilities: self.capabilities,
        }
    }

    /// Like [`blocking_handler`](Self::blocking_handler), for a handler that may
    /// answer [`ResourceReply::InputRequired`].
    pub fn blocking_reply_handler<F>(self, f: F) -> ResourceDecl
    where
        F: Fn(ResourceRequest, ToolContext) -> ResourceReplyOutcome + Send + Sync + 'static,
    {
        ResourceDecl {
            entry: self.entry(),
            handler: blocking_handler(f),
            capabilities: self.capabilities,
        }
    }
}

/// A static resource or a resource template, as `resources![...]` lists them.
#[derive(Debug)]
pub enum AnyResourceDecl {
    /// A resource at one URI.
    Static(ResourceDecl),
    /// A family of resources under a URI template.
    Template(ResourceTemplateDecl),
}

impl From<ResourceDecl> for AnyResourceDecl {
    fn from(d: ResourceDecl) -> Self {
        AnyResourceDecl::Static(d)
    }
}

impl From<ResourceTemplateDecl> for AnyResourceDecl {
    fn from(d: ResourceTemplateDecl) -> Self {
        AnyResourceDecl::Template(d)
    }
}

/// A resource template: its descriptor, parameters and handler.
pub struct ResourceTemplateDecl {
    pub(crate) entry: TemplateEntry,
    pub(crate) handler: Handler<ResourceRequest, ResourceReplyOutcome>,
    pub(crate) completer: Option<Completer>,
    pub(crate) capabilities: Vec<Capability>,
}

impl std::fmt::Debug for ResourceTemplateDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplateDecl")
            .field("uri_template", &self.entry.template.uri_template)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplateDecl {
    /// Starts a template declaration (`{name}` and `{+name}` variables).
    pub fn builder(
        uri_template: impl Into<String>,
        name: impl Into<String>,
    ) -> ResourceTemplateBuilder {
        ResourceTemplateBuilder {
            template: ResourceTemplate::new(uri_template, name),
            parameters: Vec::new(),
            cache: CacheHint::PRIVATE_NOW,
            completer: None,
            capabilities: Vec::new(),
        }
    }
}

/// Builds a [`ResourceTemplateDecl`].
#[must_use = "a template builder does nothing until it is given a handler"]
pub struct ResourceTemplateBuilder {
    template: ResourceTemplate,
    parameters: Vec<ParameterDoc>,
    cache: CacheHint,
    completer: Option<Completer>,
    capabilities: Vec<Capability>,
}

impl std::fmt::Debug for ResourceTemplateBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplateBuilder")
            .field("template", &self.template)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplateBuilder {
    /// Display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.template.title = Some(title.into());
        self
    }

    /// What the resources hold (required by `Server::build`).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.template.description = Some(description.into());
        self
    }

    /// MIME type shared by every match.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.template.mime_type = Some(mime_type.into());
        self
    }

    /// Documents a parameter; every `{variable}` must be one.
    pub fn parameter(mut self, name: impl Into<String>, description: impl Into<String>) -> Self {
        self.parameters
            .push(ParameterDoc::new(name, Some(description.into())));
        self
    }

    /// Cache hint of `resources/read` results (default private, 0 ms).
    pub fn cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.cache = CacheHint::new(ttl_ms, scope);
        self
    }

    capability_methods!("a request");

    /// Suggests values for a variable (`completion/complete` with `ref/resource`).
    pub fn completer<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, RpcError>> + Send + 'static,
    {
        self.completer = Some(async_handler(f));
        self
    }

    fn finish(
        self,
        handler: Handler<ResourceRequest, ResourceReplyOutcome>,
    ) -> ResourceTemplateDecl {
        ResourceTemplateDecl {
            entry: {
                let mut entry = TemplateEntry::new(self.template).with_cache(self.cache);
                entry.parameters = self.parameters;
                entry.completable = self.completer.is_some();
                entry
            },
            handler,
            completer: self.completer,
            capabilities: self.capabilities,
        }
    }

    /// Finishes the declaration with an async handler.
    pub fn handler<F, Fut>(self, f: F) -> ResourceTemplateDecl
    where
        F: Fn(ResourceRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ResourceOutcome> + Send + 'static,
    {
        self.reply_handler(move |request, ctx| {
            let reply = f(request, ctx);
            async move { reply.await.map(ResourceReply::Complete) }
        })
    }

    /// Finishes the declaration with a synchronous handler on the blocking pool.
    pub fn blocking_handler<F>(self, f: F) -> ResourceTemplateDecl
    where
        F: Fn(ResourceRequest, ToolContext) -> ResourceOutcome + Send + Sync + 'static,
    {
        self.blocking_reply_handler(move |request, ctx| {
            f(request, ctx).map(ResourceReply::Complete)
        })
    }

    /// Like [`handler`](Self::handler), for a handler that may answer
    /// [`ResourceReply::InputRequired`].
    pub fn reply_handler<F, Fut>(self, f: F) -> ResourceTemplateDecl
    where
        F: Fn(ResourceRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ResourceReplyOutcome> + Send + 'static,
    {
        self.finish(async_handler(f))
    }

    /// Like [`blocking_handler`](Self::blocking_handler), for a handler that may
    /// answer [`ResourceReply::InputRequired`].
    pub fn blocking_reply_handler<F>(self, f: F) -> ResourceTemplateDecl
    where
        F: Fn(ResourceRequest, ToolContext) -> ResourceReplyOutcome + Send + Sync + 'static,
    {
        self.finish(blocking_handler(f))
    }
}

// ---------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------

/// What a prompt handler returns.
pub type PromptOutcome = Result<GetPromptResult, RpcError>;

/// A prompt's reply: its messages, or a request for input first (multi
/// round-trip, answered with `resultType: "input_required"`).
#[derive(Debug, Clone, PartialEq)]
pub enum PromptReply {
    /// The rendered prompt.
    Complete(GetPromptResult),
    /// Ask the client for input; it retries with `inputResponses`.
    InputRequired(InputRequiredResult),
}

/// What a prompt reply handler returns (see [`PromptBuilder::reply_handler`]).
pub type PromptReplyOutcome = Result<PromptReply, RpcError>;

/// A prompt: its descriptor and handler.
pub struct PromptDecl {
    pub(crate) entry: PromptEntry,
    pub(crate) handler: Handler<BTreeMap<String, String>, PromptReplyOutcome>,
    pub(crate) completer: Option<Completer>,
    pub(crate) capabilities: Vec<Capability>,
}

impl std::fmt::Debug for PromptDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptDecl")
            .field("name", &self.entry.prompt.name)
            .finish_non_exhaustive()
    }
}

impl PromptDecl {
    /// Starts a prompt declaration.
    pub fn builder(name: impl Into<String>) -> PromptBuilder {
        PromptBuilder {
            prompt: Prompt::new(name),
            argument_schemas: Vec::new(),
            completer: None,
            capabilities: Vec::new(),
        }
    }
}

/// Builds a [`PromptDecl`].
#[must_use = "a prompt builder does nothing until it is given a handler"]
pub struct PromptBuilder {
    prompt: Prompt,
    argument_schemas: Vec<(String, Value)>,
    completer: Option<Completer>,
    capabilities: Vec<Capability>,
}

impl std::fmt::Debug for PromptBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptBuilder")
            .field("prompt", &self.prompt)
            .finish_non_exhaustive()
    }
}

impl PromptBuilder {
    /// Display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// What the prompt is for (required by `Server::build`).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// A string argument.
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.prompt.arguments.get_or_insert_with(Vec::new).push(
            PromptArgument::new(name)
                .with_description(description)
                .with_required(required),
        );
        self
    }

    /// An argument with the JSON Schema of its Rust type; `Server::build`
    /// refuses any schema that is not a string (prompt arguments are strings on
    /// the wire). Generated code uses this to surface type mistakes.
    pub fn typed_argument(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
        schema: Value,
    ) -> Self {
        let name = name.into();
        let mut this = self.argument(name.clone(), description, required);
        this.argument_schemas.push((name, schema));
        this
    }

    capability_methods!("a request");

    /// Suggests values for an argument (`completion/complete` with `ref/prompt`).
    pub fn completer<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, RpcError>> + Send + 'static,
    {
        self.completer = Some(async_handler(f));
        self
    }

    fn finish(self, handler: Handler<BTreeMap<String, String>, PromptReplyOutcome>) -> PromptDecl {
        PromptDecl {
            entry: {
                let mut entry = PromptEntry::new(self.prompt);
                entry.argument_schemas = self.argument_schemas;
                entry.completable = self.completer.is_some();
                entry
            },
            handler,
            completer: self.completer,
            capabilities: self.capabilities,
        }
    }

    /// Finishes the declaration with an async handler.
    pub fn handler<F, Fut>(self, f: F) -> PromptDecl
    where
        F: Fn(BTreeMap<String, String>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PromptOutcome> + Send + 'static,
    {
        self.reply_handler(move |args, ctx| {
            let reply = f(args, ctx);
            async move { reply.await.map(PromptReply::Complete) }
        })
    }

    /// Finishes the declaration with a synchronous handler on the blocking pool.
    pub fn blocking_handler<F>(self, f: F) -> PromptDecl
    where
        F: Fn(BTreeMap<String, String>, ToolContext) -> PromptOutcome + Send + Sync + 'static,
    {
        self.blocking_reply_handler(move |args, ctx| f(args, ctx).map(PromptReply::Complete))
    }

    /// Like [`handler`](Self::handler), for a handler that may answer
    /// [`PromptReply::InputRequired`].
    pub fn reply_handler<F, Fut>(self, f: F) -> PromptDecl
    where
        F: Fn(BTreeMap<String, String>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PromptReplyOutcome> + Send + 'static,
    {
        self.finish(async_handler(f))
    }

    /// Like [`blocking_handler`](Self::blocking_handler), for a handler that may
    /// answer [`PromptReply::InputRequired`].
    pub fn blocking_reply_handler<F>(self, f: F) -> PromptDecl
    where
        F: Fn(BTreeMap<String, String>, ToolContext) -> PromptReplyOutcome + Send + Sync + 'static,
    {
        self.finish(blocking_handler(f))
    }
}
