//! Declarations written by hand: a tool, resource, resource template or prompt,
//! with its descriptor and its handler. This is the layer the `#[tool]` family
//! of macros targets; it is public so that dynamic catalogs can be built too.
//!
//! Each builder becomes a declaration only once it is given a handler, so a
//! declaration without one does not compile. Every builder takes its handler
//! the same way, [`handler`](ToolBuilder::handler): an async function of the
//! request and its [`ToolContext`] whose future yields `Result<T, E>`, or
//! `Result<Answer<T>, E>` when it may ask for input first (see
//! [`IntoAnswer`]). Synchronous work goes through [`blocking`] inside it, so a
//! slow computation never stalls other requests.
//!
//! ```
//! use typed_mcp::declare::{ResourceDecl, ToolDecl};
//! use typed_mcp::wire::{CallToolResult, ElicitResult, ResourceContents};
//! use typed_mcp::{Answer, NeedsInput, ToolError, blocking};
//!
//! let shout = ToolDecl::builder("shout")
//!     .description("Upper-case a text.")
//!     .handler(|args, _ctx| async move {
//!         let text = args.get("text").and_then(|t| t.as_str());
//!         let text = text.ok_or_else(|| ToolError::execution("text is required"))?;
//!         Ok(CallToolResult::text(text.to_uppercase()))
//!     });
//! let motd = ResourceDecl::builder("file:///motd", "motd")
//!     .description("The message of the day.")
//!     .handler(|request, _ctx| {
//!         blocking(move || Ok(vec![ResourceContents::text(&request.uri, None, "hello")]))
//!     });
//! let confirm = ToolDecl::builder("confirm")
//!     .description("Ask before going on.")
//!     .handler(|_args, ctx| async move {
//!         Ok(match ctx.input_response::<ElicitResult>("ok") {
//!             Some(_) => Answer::Done(CallToolResult::text("confirmed")),
//!             None => Answer::NeedsInput(NeedsInput::new().elicit(
//!                 "ok",
//!                 "Go on?",
//!                 serde_json::json!({"type": "object", "properties": {}}),
//!             )),
//!         })
//!     });
//! # let _ = (shout, motd, confirm);
//! ```

mod handler;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use typed_mcp_core::catalog::{ParameterDoc, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry};
use typed_mcp_core::wire::{
    CacheHint, CacheScope, CallToolResult, GetPromptResult, Icon, Prompt, PromptArgument, Resource,
    ResourceContents, ResourceTemplate, Tool, ToolAnnotations,
};
use typed_mcp_core::{RpcError, ToolArguments};

use crate::answer::Answer;
use crate::capability::Capability;
use crate::context::ToolContext;
pub use handler::{Blocking, IntoAnswer, blocking};
pub(crate) use handler::{Handler, holding_slot};

/// The `title` and `description` methods of every declaration builder, on
/// the descriptor in field `$descriptor`.
macro_rules! descriptor_methods {
    ($descriptor:ident, $what:literal) => {
        /// Display name.
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.$descriptor.title = Some(title.into());
            self
        }

        #[doc = concat!("What ", $what, ", for the model (required by `Server::build`).")]
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.$descriptor.description = Some(description.into());
            self
        }
    };
}

/// The `completer` method of the builders whose declarations complete (a
/// template's variables, a prompt's arguments).
macro_rules! completer_method {
    ($what:literal, $reference:literal) => {
        #[doc = concat!("Suggests values for ", $what, " (`completion/complete` with `", $reference, "`).")]
        pub fn completer<F, Fut>(mut self, f: F) -> Self
        where
            F: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
            Fut: Future<Output = Result<Vec<String>, RpcError>> + Send + 'static,
        {
            self.completer = Some(completer(f));
            self
        }
    };
}

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

/// A request to read a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
#[non_exhaustive]
pub struct CompletionRequest {
    /// The argument (or variable) name.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Values already chosen for other arguments.
    pub context: BTreeMap<String, String>,
}

/// A tool's stored reply.
pub(crate) type ToolReply = Result<Answer<CallToolResult>, ToolError>;
/// A resource's stored reply (an empty list is answered as "resource not found").
pub(crate) type ResourceReply = Result<Answer<Vec<ResourceContents>>, RpcError>;
/// A prompt's stored reply.
pub(crate) type PromptReply = Result<Answer<GetPromptResult>, RpcError>;
pub(crate) type Completer = Handler<CompletionRequest, Result<Vec<String>, RpcError>>;

fn completer<F, Fut>(f: F) -> Completer
where
    F: Fn(CompletionRequest, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<String>, RpcError>> + Send + 'static,
{
    Arc::new(move |request, ctx| Box::pin(f(request, ctx)))
}

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

/// A tool: its descriptor and its handler.
pub struct ToolDecl {
    pub(crate) entry: ToolEntry,
    pub(crate) handler: Handler<ToolArguments, ToolReply>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) capabilities: Vec<Capability>,
    /// Whether the handler can answer `input_required`: only then is the
    /// request binding of a sealed state computed before the call.
    pub(crate) asks_input: bool,
    /// Why `Server::build` refuses this declaration's schema, if it does.
    pub(crate) schema_fault: Option<String>,
    /// Whether and how a call may run as a task.
    pub(crate) task: Option<crate::tasks::TaskSupport>,
    /// Whether a call's arguments pass the checks its handler makes first
    /// (a typed tool's schema, named validators and decoding), without
    /// running it: a task-augmented call with arguments that do not is
    /// answered at once, and no task is created for it.
    pub(crate) arguments_valid: Option<ArgumentsValid>,
}

/// See [`ToolDecl::arguments_valid`].
pub(crate) type ArgumentsValid = Arc<dyn Fn(&Map<String, Value>) -> bool + Send + Sync>;

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
            schema_fault: None,
            timeout: None,
            capabilities: Vec::new(),
            task: None,
        }
    }

    /// Whether and how a call may run as a task (see [`tasks`](crate::tasks)).
    pub fn task_support(&self) -> Option<crate::tasks::TaskSupport> {
        self.task
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

/// Builds a [`ToolDecl`]; finished by [`handler`](Self::handler).
#[derive(Debug, Clone)]
#[must_use = "a tool builder does nothing until it is given a handler"]
pub struct ToolBuilder {
    tool: Tool,
    required_client_capabilities: Vec<String>,
    allow_undocumented_inputs: bool,
    timeout: Option<Duration>,
    capabilities: Vec<Capability>,
    task: Option<crate::tasks::TaskSupport>,
    /// Set by the typed layer when the derived schema cannot be served:
    /// `Server::build` refuses the declaration with it.
    pub(crate) schema_fault: Option<String>,
}

impl ToolBuilder {
    descriptor_methods!(tool, "the tool does");

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

    /// Lets a call run as a task (the Tasks extension; see
    /// [`tasks`](crate::tasks)): `TaskSupport::optional()` when a plain call
    /// is served too, `TaskSupport::required()` when only a task will do.
    /// The handler stays the same function.
    pub fn task(mut self, support: crate::tasks::TaskSupport) -> Self {
        self.task = Some(support);
        self
    }

    /// Finishes the declaration with its handler: an async function of the
    /// arguments object and the call's context, whose future yields
    /// `Result<CallToolResult, ToolError>`, or `Result<Answer<CallToolResult>,
    /// ToolError>` to ask for input first. A [`ToolError::Execution`] is
    /// answered as an `isError` result the model can read; synchronous work
    /// goes through [`blocking`].
    pub fn handler<F, Fut>(self, f: F) -> ToolDecl
    where
        F: Fn(Map<String, Value>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoAnswer<CallToolResult, ToolError>,
    {
        self.arguments_handler(move |arguments: ToolArguments, ctx| f(arguments.into_map(), ctx))
    }

    /// [`Self::handler`] for a handler that reads the arguments as they
    /// arrived (a typed tool decodes them from their text).
    pub(crate) fn arguments_handler<F, Fut>(self, f: F) -> ToolDecl
    where
        F: Fn(ToolArguments, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoAnswer<CallToolResult, ToolError>,
    {
        let (handler, asks_input) = handler::boxed(f);
        let mut entry = ToolEntry::new(self.tool);
        entry.required_client_capabilities = self.required_client_capabilities;
        entry.allow_undocumented_inputs = self.allow_undocumented_inputs;
        if self.task.is_some_and(|t| t.is_required()) {
            entry = entry.with_required_client_extension(crate::tasks::EXTENSION_ID);
        }
        ToolDecl {
            entry,
            handler,
            timeout: self.timeout,
            capabilities: self.capabilities,
            asks_input,
            schema_fault: self.schema_fault,
            task: self.task,
            arguments_valid: None,
        }
    }
}

// ---------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------

/// A static resource: its descriptor and its handler.
pub struct ResourceDecl {
    pub(crate) entry: ResourceEntry,
    pub(crate) handler: Handler<ResourceRequest, ResourceReply>,
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
    descriptor_methods!(resource, "the resource holds");

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

    /// Finishes the declaration with its handler: an async function of the
    /// request and the call's context, whose future yields
    /// `Result<Vec<ResourceContents>, RpcError>` (an empty list is answered as
    /// "resource not found"), or `Result<Answer<Vec<ResourceContents>>,
    /// RpcError>` to ask for input first.
    pub fn handler<F, Fut>(self, f: F) -> ResourceDecl
    where
        F: Fn(ResourceRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoAnswer<Vec<ResourceContents>, RpcError>,
    {
        ResourceDecl {
            entry: self.entry(),
            handler: handler::boxed(f).0,
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
    pub(crate) handler: Handler<ResourceRequest, ResourceReply>,
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
    descriptor_methods!(template, "the resources hold");

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

    completer_method!("a variable", "ref/resource");

    /// Finishes the declaration with its handler, as
    /// [`ResourceBuilder::handler`]; the request carries the template's
    /// variables.
    pub fn handler<F, Fut>(self, f: F) -> ResourceTemplateDecl
    where
        F: Fn(ResourceRequest, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoAnswer<Vec<ResourceContents>, RpcError>,
    {
        let handler = handler::boxed(f).0;
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
}

// ---------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------

/// A prompt: its descriptor and handler.
pub struct PromptDecl {
    pub(crate) entry: PromptEntry,
    pub(crate) handler: Handler<BTreeMap<String, String>, PromptReply>,
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
    descriptor_methods!(prompt, "the prompt is for");

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

    completer_method!("an argument", "ref/prompt");

    /// Finishes the declaration with its handler: an async function of the
    /// arguments (strings by name) and the call's context, whose future
    /// yields `Result<GetPromptResult, RpcError>`, or
    /// `Result<Answer<GetPromptResult>, RpcError>` to ask for input first.
    pub fn handler<F, Fut>(self, f: F) -> PromptDecl
    where
        F: Fn(BTreeMap<String, String>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: IntoAnswer<GetPromptResult, RpcError>,
    {
        let handler = handler::boxed(f).0;
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
}
