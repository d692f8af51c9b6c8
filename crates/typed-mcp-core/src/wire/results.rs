//! Catalog descriptors (`Tool`, `Resource`, `ResourceTemplate`, `Prompt`), the
//! parameters of client requests, and the results the server sends.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{
    Annotations, CacheHint, CacheScope, ClientCapabilities, ContentBlock, Icon, Implementation,
    Meta, ResourceContents, ResultMeta, ResultType, Role, ServerCapabilities, StructuredContent,
    SubscriptionFilter,
};

// ---------------------------------------------------------------------------
// Descriptors
// ---------------------------------------------------------------------------

/// A tool as listed by `tools/list` (`Tool`).
///
/// ```
/// use typed_mcp_core::wire::{Icon, Tool, ToolAnnotations};
/// use serde_json::json;
///
/// let tool = Tool::new("search", json!({"type": "object"}))
///     .with_title("Search")
///     .with_description("Find tickets.")
///     .with_output_schema(json!({"type": "object"}))
///     .with_annotations(ToolAnnotations::default().with_read_only_hint(true))
///     .with_icons([Icon::new("https://example.com/s.png").with_sizes(["48x48".to_owned()])]);
/// assert_eq!(
///     serde_json::to_value(&tool).unwrap(),
///     json!({
///         "name": "search", "title": "Search", "description": "Find tickets.",
///         "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
///         "annotations": {"readOnlyHint": true},
///         "icons": [{"src": "https://example.com/s.png", "sizes": ["48x48"]}]
///     })
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tool {
    /// Wire name, `[A-Za-z0-9_.-]{1,128}`.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments, `type: "object"` at the root. Carried verbatim.
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints (information only; they grant nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool with this wire name and input schema (`type: "object"` at the root).
    pub fn new(name: impl Into<String>, input_schema: Value) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
        }
    }

    option_setters! {
        /// Sets the display name.
        with_title => title: String;
        /// Sets what the tool does, for the model.
        with_description => description: String;
        /// Sets the JSON Schema of `structuredContent`.
        with_output_schema => output_schema: Value;
        /// Sets the behaviour hints.
        with_annotations => annotations: ToolAnnotations;
        /// Sets the icons.
        with_icons => icons: Vec<Icon>;
        /// Sets the extension metadata.
        with_meta => meta: Meta;
    }
}

/// Untrusted behaviour hints of a tool (`ToolAnnotations`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    option_setters! {
        /// Sets the display name.
        with_title => title: String;
        /// Sets whether the tool leaves its environment unchanged.
        with_read_only_hint => read_only_hint = bool;
        /// Sets whether the tool may destroy data.
        with_destructive_hint => destructive_hint = bool;
        /// Sets whether repeating a call has no further effect.
        with_idempotent_hint => idempotent_hint = bool;
        /// Sets whether the tool reaches an open world of external entities.
        with_open_world_hint => open_world_hint = bool;
    }

    /// True when no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }
}

/// A readable resource as listed by `resources/list` (`Resource`).
///
/// ```
/// use typed_mcp_core::wire::{Annotations, Resource, ResourceTemplate, Role};
/// use serde_json::json;
///
/// let readme = Resource::new("desk://readme", "readme")
///     .with_description("About the desk.")
///     .with_mime_type("text/markdown")
///     .with_size(120)
///     .with_annotations(Annotations::default().with_audience([Role::User]));
/// assert_eq!(
///     serde_json::to_value(&readme).unwrap(),
///     json!({"uri": "desk://readme", "name": "readme", "description": "About the desk.",
///            "mimeType": "text/markdown", "size": 120, "annotations": {"audience": ["user"]}})
/// );
/// let ticket = ResourceTemplate::new("ticket://{id}", "ticket").with_title("A ticket");
/// assert_eq!(
///     serde_json::to_value(&ticket).unwrap(),
///     json!({"uriTemplate": "ticket://{id}", "name": "ticket", "title": "A ticket"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Resource {
    /// Absolute URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes before any base64 encoding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Resource {
    /// A resource at this absolute URI with this programmatic name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            icons: None,
            annotations: None,
            meta: None,
        }
    }

    option_setters! {
        /// Sets the display name.
        with_title => title: String;
        /// Sets what the resource holds.
        with_description => description: String;
        /// Sets the MIME type.
        with_mime_type => mime_type: String;
        /// Sets the size in bytes before any base64 encoding.
        with_size => size = u64;
        /// Sets the icons.
        with_icons => icons: Vec<Icon>;
        /// Sets the display hints.
        with_annotations => annotations: Annotations;
        /// Sets the extension metadata.
        with_meta => meta: Meta;
    }
}

/// A family of resources addressed by an RFC 6570 URI template (`ResourceTemplate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplate {
    /// The URI template, e.g. `tickets://{id}`.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type shared by every match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ResourceTemplate {
    /// A template such as `tickets://{id}` with this programmatic name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            icons: None,
            annotations: None,
            meta: None,
        }
    }

    option_setters! {
        /// Sets the display name.
        with_title => title: String;
        /// Sets what the resources hold.
        with_description => description: String;
        /// Sets the MIME type shared by every match.
        with_mime_type => mime_type: String;
        /// Sets the icons.
        with_icons => icons: Vec<Icon>;
        /// Sets the display hints.
        with_annotations => annotations: Annotations;
        /// Sets the extension metadata.
        with_meta => meta: Meta;
    }
}

/// A prompt as listed by `prompts/list` (`Prompt`).
///
/// ```
/// use typed_mcp_core::wire::{Prompt, PromptArgument};
/// use serde_json::json;
///
/// let triage = Prompt::new("triage")
///     .with_description("Triage a ticket.")
///     .with_argument(PromptArgument::new("ticket_id").with_description("Which.").with_required(true));
/// assert_eq!(
///     serde_json::to_value(&triage).unwrap(),
///     json!({"name": "triage", "description": "Triage a ticket.",
///            "arguments": [{"name": "ticket_id", "description": "Which.", "required": true}]})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Prompt {
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The prompt's string arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Vec<PromptArgument>>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Prompt {
    /// A prompt with this programmatic name.
    pub fn new(name: impl Into<String>) -> Self {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: None,
            icons: None,
            meta: None,
        }
    }

    /// Appends one argument.
    #[must_use]
    pub fn with_argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.get_or_insert_with(Vec::new).push(argument);
        self
    }

    option_setters! {
        /// Sets the display name.
        with_title => title: String;
        /// Sets what the prompt is for.
        with_description => description: String;
        /// Sets every argument at once.
        with_arguments => arguments: Vec<PromptArgument>;
        /// Sets the icons.
        with_icons => icons: Vec<Icon>;
        /// Sets the extension metadata.
        with_meta => meta: Meta;
    }
}

/// One argument of a prompt (`PromptArgument`). Values are always strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptArgument {
    /// Argument name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the argument must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

impl PromptArgument {
    /// An argument with this name.
    pub fn new(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required: None,
        }
    }

    option_setters! {
        /// Sets the display name.
        with_title => title: String;
        /// Sets what the argument means.
        with_description => description: String;
        /// Sets whether the argument must be given.
        with_required => required = bool;
    }
}

/// One message of a prompt (`PromptMessage`): a role and a single content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
    /// A message from `role` with one content block.
    pub fn new(role: Role, content: ContentBlock) -> Self {
        PromptMessage { role, content }
    }

    /// An assistant message with one text block.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        PromptMessage::new(Role::Assistant, ContentBlock::text(text))
    }

    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::User,
            content: ContentBlock::text(text),
        }
    }
}

// ---------------------------------------------------------------------------
// Request parameters (as a client writes them; the router decodes by hand)
// ---------------------------------------------------------------------------

/// The required request `_meta` keys, as a client writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestMetaObject {
    /// `io.modelcontextprotocol/protocolVersion`.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities`.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub client_capabilities: ClientCapabilities,
    /// `io.modelcontextprotocol/clientInfo`.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// Other keys (`progressToken`, `io.modelcontextprotocol/logLevel`, trace context...).
    #[serde(flatten)]
    pub other: Meta,
}

impl RequestMetaObject {
    /// The envelope of a request written in `protocol_version` by a client with
    /// these capabilities.
    pub fn new(
        protocol_version: impl Into<String>,
        client_capabilities: ClientCapabilities,
    ) -> Self {
        RequestMetaObject {
            protocol_version: protocol_version.into(),
            client_capabilities,
            client_info: None,
            other: Meta::new(),
        }
    }

    /// Adds one further key (`progressToken`, trace context...).
    #[must_use]
    pub fn with_entry(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.other.insert(key.into(), value.into());
        self
    }

    option_setters! {
        /// Sets the client's self-reported identity.
        with_client_info => client_info: Implementation;
    }
}

/// Parameters of `tools/call`.
///
/// ```
/// use typed_mcp_core::wire::{
///     CallToolRequestParams, ClientCapabilities, ElicitationCapability, Implementation,
///     RequestMetaObject,
/// };
/// use serde_json::json;
///
/// let envelope = RequestMetaObject::new(
///     "2026-07-28",
///     ClientCapabilities::default().with_elicitation(ElicitationCapability::default()),
/// )
/// .with_client_info(Implementation::new("client", "1.0.0"));
/// let call = CallToolRequestParams::new(envelope, "echo")
///     .with_arguments(json!({"text": "hi"}).as_object().unwrap().clone());
/// assert_eq!(
///     serde_json::to_value(&call).unwrap(),
///     json!({
///         "_meta": {
///             "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///             "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
///             "io.modelcontextprotocol/clientInfo": {"name": "client", "version": "1.0.0"}
///         },
///         "name": "echo", "arguments": {"text": "hi"}
///     })
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolRequestParams {
    /// The request envelope.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Tool name.
    pub name: String,
    /// Arguments; absent means `{}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Answers to a previous `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<Map<String, Value>>,
    /// The opaque state echoed from a previous `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl CallToolRequestParams {
    /// A call of the tool `name` with no arguments.
    pub fn new(meta: RequestMetaObject, name: impl Into<String>) -> Self {
        CallToolRequestParams {
            meta,
            name: name.into(),
            arguments: None,
            input_responses: None,
            request_state: None,
        }
    }

    option_setters! {
        /// Sets the arguments.
        with_arguments => arguments: Map<String, Value>;
        /// Sets the answers to a previous `input_required` result.
        with_input_responses => input_responses: Map<String, Value>;
        /// Sets the state echoed from a previous `input_required` result.
        with_request_state => request_state: String;
    }
}

/// Parameters of the paginated list methods.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PaginatedRequestParams {
    /// The request envelope.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Where to continue, from a previous `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl PaginatedRequestParams {
    /// A request for the first page.
    pub fn new(meta: RequestMetaObject) -> Self {
        PaginatedRequestParams { meta, cursor: None }
    }

    option_setters! {
        /// Sets where to continue, from a previous `nextCursor`.
        with_cursor => cursor: String;
    }
}

/// Parameters of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceRequestParams {
    /// The request envelope.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The URI to read.
    pub uri: String,
    /// Answers to a previous `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<Map<String, Value>>,
    /// The opaque state echoed from a previous `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl ReadResourceRequestParams {
    /// A read of `uri`.
    pub fn new(meta: RequestMetaObject, uri: impl Into<String>) -> Self {
        ReadResourceRequestParams {
            meta,
            uri: uri.into(),
            input_responses: None,
            request_state: None,
        }
    }

    option_setters! {
        /// Sets the answers to a previous `input_required` result.
        with_input_responses => input_responses: Map<String, Value>;
        /// Sets the state echoed from a previous `input_required` result.
        with_request_state => request_state: String;
    }
}

/// Parameters of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetPromptRequestParams {
    /// The request envelope.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Prompt name.
    pub name: String,
    /// String arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Answers to a previous `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<Map<String, Value>>,
    /// The opaque state echoed from a previous `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

impl GetPromptRequestParams {
    /// A request for the prompt `name` with no arguments.
    pub fn new(meta: RequestMetaObject, name: impl Into<String>) -> Self {
        GetPromptRequestParams {
            meta,
            name: name.into(),
            arguments: None,
            input_responses: None,
            request_state: None,
        }
    }

    option_setters! {
        /// Sets the string arguments.
        with_arguments => arguments: Map<String, Value>;
        /// Sets the answers to a previous `input_required` result.
        with_input_responses => input_responses: Map<String, Value>;
        /// Sets the state echoed from a previous `input_required` result.
        with_request_state => request_state: String;
    }
}

/// What a completion request completes (`PromptReference | ResourceTemplateReference`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum CompletionReference {
    /// An argument of a prompt.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
    },
    /// A variable of a resource template.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The template (or URI).
        uri: String,
    },
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionArgument {
    /// Argument name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

impl CompletionArgument {
    /// The argument `name`, typed so far as `value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        CompletionArgument {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// Parameters of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteRequestParams {
    /// The request envelope.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Values of other arguments already chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
}

impl CompleteRequestParams {
    /// A completion of `argument` of `reference`.
    pub fn new(
        meta: RequestMetaObject,
        reference: CompletionReference,
        argument: CompletionArgument,
    ) -> Self {
        CompleteRequestParams {
            meta,
            reference,
            argument,
            context: None,
        }
    }

    option_setters! {
        /// Sets the values of other arguments already chosen.
        with_context => context: CompletionContext;
    }
}

/// Values already chosen for other arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionContext {
    /// Argument name → value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<std::collections::BTreeMap<String, String>>,
}

impl CompletionContext {
    /// Adds the chosen value of one other argument.
    #[must_use]
    pub fn with_argument(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.arguments
            .get_or_insert_with(Default::default)
            .insert(name.into(), value.into());
        self
    }
}

/// Parameters of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SubscriptionsListenRequestParams {
    /// The request envelope.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Which notifications to deliver.
    pub notifications: SubscriptionFilter,
}

impl SubscriptionsListenRequestParams {
    /// A listen request for these notifications.
    pub fn new(meta: RequestMetaObject, notifications: SubscriptionFilter) -> Self {
        SubscriptionsListenRequestParams {
            meta,
            notifications,
        }
    }
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

/// The result of `server/discover` (`DiscoverResult`).
///
/// ```
/// use typed_mcp_core::wire::{
///     CacheHint, DiscoverResult, ListChangedCapability, ListToolsResult, ServerCapabilities, Tool,
/// };
/// use serde_json::json;
///
/// let discover = DiscoverResult::new(
///     vec!["2026-07-28".into()],
///     ServerCapabilities::default().with_tools(ListChangedCapability::default()),
///     CacheHint::PUBLIC_HOUR,
/// )
/// .with_instructions("Be brief.");
/// assert_eq!(
///     serde_json::to_value(&discover).unwrap(),
///     json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
///            "capabilities": {"tools": {}}, "instructions": "Be brief.",
///            "ttlMs": 3_600_000, "cacheScope": "public"})
/// );
/// let page = ListToolsResult::new(vec![Tool::new("t", json!({"type": "object"}))], CacheHint::PUBLIC_HOUR)
///     .with_next_cursor("page-2");
/// assert_eq!(serde_json::to_value(&page).unwrap()["nextCursor"], "page-2");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DiscoverResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// Protocol revisions this server implements.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Freshness in milliseconds.
    pub ttl_ms: u64,
    /// Who may reuse the result.
    pub cache_scope: CacheScope,
    /// Result metadata (the server's identity).
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl DiscoverResult {
    /// A discovery result announcing these revisions and capabilities.
    pub fn new(
        supported_versions: Vec<String>,
        capabilities: ServerCapabilities,
        cache: CacheHint,
    ) -> Self {
        DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions,
            capabilities,
            instructions: None,
            ttl_ms: cache.ttl_ms,
            cache_scope: cache.scope,
            meta: ResultMeta::default(),
        }
    }

    option_setters! {
        /// Sets the guidance for the model.
        with_instructions => instructions: String;
    }

    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }
}

/// One page of `tools/list` (`ListToolsResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListToolsResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// This page's tools.
    pub tools: Vec<Tool>,
    /// The cursor of the next page, absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Freshness in milliseconds.
    pub ttl_ms: u64,
    /// Who may reuse the result.
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl ListToolsResult {
    /// A page of these tools; the last page unless a cursor is set.
    pub fn new(tools: Vec<Tool>, cache: CacheHint) -> Self {
        ListToolsResult {
            result_type: ResultType::Complete,
            tools,
            next_cursor: None,
            ttl_ms: cache.ttl_ms,
            cache_scope: cache.scope,
            meta: ResultMeta::default(),
        }
    }

    option_setters! {
        /// Sets the cursor of the next page.
        with_next_cursor => next_cursor: String;
    }

    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }
}

/// One page of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListResourcesResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// This page's resources.
    pub resources: Vec<Resource>,
    /// The cursor of the next page, absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Freshness in milliseconds.
    pub ttl_ms: u64,
    /// Who may reuse the result.
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl ListResourcesResult {
    /// A page of these resources; the last page unless a cursor is set.
    pub fn new(resources: Vec<Resource>, cache: CacheHint) -> Self {
        ListResourcesResult {
            result_type: ResultType::Complete,
            resources,
            next_cursor: None,
            ttl_ms: cache.ttl_ms,
            cache_scope: cache.scope,
            meta: ResultMeta::default(),
        }
    }

    option_setters! {
        /// Sets the cursor of the next page.
        with_next_cursor => next_cursor: String;
    }

    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }
}

/// One page of `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListResourceTemplatesResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// This page's templates.
    pub resource_templates: Vec<ResourceTemplate>,
    /// The cursor of the next page, absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Freshness in milliseconds.
    pub ttl_ms: u64,
    /// Who may reuse the result.
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl ListResourceTemplatesResult {
    /// A page of these templates; the last page unless a cursor is set.
    pub fn new(resource_templates: Vec<ResourceTemplate>, cache: CacheHint) -> Self {
        ListResourceTemplatesResult {
            result_type: ResultType::Complete,
            resource_templates,
            next_cursor: None,
            ttl_ms: cache.ttl_ms,
            cache_scope: cache.scope,
            meta: ResultMeta::default(),
        }
    }

    option_setters! {
        /// Sets the cursor of the next page.
        with_next_cursor => next_cursor: String;
    }

    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }
}

/// One page of `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListPromptsResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// This page's prompts.
    pub prompts: Vec<Prompt>,
    /// The cursor of the next page, absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Freshness in milliseconds.
    pub ttl_ms: u64,
    /// Who may reuse the result.
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl ListPromptsResult {
    /// A page of these prompts; the last page unless a cursor is set.
    pub fn new(prompts: Vec<Prompt>, cache: CacheHint) -> Self {
        ListPromptsResult {
            result_type: ResultType::Complete,
            prompts,
            next_cursor: None,
            ttl_ms: cache.ttl_ms,
            cache_scope: cache.scope,
            meta: ResultMeta::default(),
        }
    }

    option_setters! {
        /// Sets the cursor of the next page.
        with_next_cursor => next_cursor: String;
    }

    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }
}

/// The result of `tools/call` (`CallToolResult`).
///
/// ```
/// use typed_mcp_core::wire::{CallToolResult, ContentBlock, ResultMeta};
/// use serde_json::json;
///
/// let structured = CallToolResult::structured(json!({"count": 2}));
/// assert_eq!(
///     serde_json::to_value(&structured).unwrap(),
///     json!({"resultType": "complete", "content": [{"type": "text", "text": "{\"count\":2}"}],
///            "structuredContent": {"count": 2}})
/// );
/// let failed = CallToolResult::error("no such ticket")
///     .with_meta(ResultMeta::default().with_entry("io.example/trace", "abc"));
/// assert!(failed.is_error());
/// assert_eq!(serde_json::to_value(&failed).unwrap()["_meta"], json!({"io.example/trace": "abc"}));
/// let blocks = CallToolResult::content(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
/// assert_eq!(blocks.content.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CallToolResult {
    /// Always `complete` (an interim answer is an [`InputRequiredResult`](super::InputRequiredResult)).
    pub result_type: ResultType,
    /// Content blocks (may be empty).
    pub content: Vec<ContentBlock>,
    /// Structured output, conforming to the tool's output schema when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<StructuredContent>,
    /// True when the tool ran and failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl CallToolResult {
    /// A successful result with these content blocks.
    pub fn content(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            content,
            ..Default::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::content(vec![ContentBlock::text(text)])
    }

    /// A successful result carrying `structured` as `structuredContent` and its
    /// compact JSON as a text block (for clients that read only text).
    /// A [`StructuredContent::encode`]d value gives its text as it is.
    pub fn structured(structured: impl Into<StructuredContent>) -> Self {
        let structured = structured.into();
        let text = structured.json().into_owned();
        CallToolResult {
            content: vec![ContentBlock::text(text)],
            structured_content: Some(structured),
            ..Default::default()
        }
    }

    /// A tool execution error (`isError: true`) with one text block.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(message)],
            is_error: Some(true),
            ..Default::default()
        }
    }

    option_setters! {
        /// Sets the structured output.
        with_structured_content => structured_content: StructuredContent;
    }

    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }

    /// True when `isError` is set.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

/// The result of `resources/read` (`ReadResourceResult`).
///
/// ```
/// use typed_mcp_core::wire::{CacheHint, CacheScope, ReadResourceResult, ResourceContents};
/// use serde_json::json;
///
/// let read = ReadResourceResult::new(
///     vec![ResourceContents::text("desk://readme", Some("text/plain"), "hello")],
///     CacheHint::new(60_000, CacheScope::Public),
/// );
/// assert_eq!(
///     serde_json::to_value(&read).unwrap(),
///     json!({"resultType": "complete",
///            "contents": [{"uri": "desk://readme", "mimeType": "text/plain", "text": "hello"}],
///            "ttlMs": 60_000, "cacheScope": "public"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadResourceResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// One or more contents (never empty).
    pub contents: Vec<ResourceContents>,
    /// Freshness in milliseconds.
    pub ttl_ms: u64,
    /// Who may reuse the result.
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl ReadResourceResult {
    /// A result with these contents (at least one).
    pub fn new(contents: Vec<ResourceContents>, cache: CacheHint) -> Self {
        ReadResourceResult {
            result_type: ResultType::Complete,
            contents,
            ttl_ms: cache.ttl_ms,
            cache_scope: cache.scope,
            meta: ResultMeta::default(),
        }
    }

    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }
}

/// The result of `prompts/get` (`GetPromptResult`).
///
/// ```
/// use typed_mcp_core::wire::{ContentBlock, GetPromptResult, PromptMessage, Role};
/// use serde_json::json;
///
/// let got = GetPromptResult::new(vec![
///     PromptMessage::user_text("Summarize ticket 7."),
///     PromptMessage::new(Role::Assistant, ContentBlock::text("Ticket 7 is about...")),
/// ])
/// .with_description("Summary prompt.");
/// assert_eq!(serde_json::to_value(&got).unwrap()["messages"][1]["role"], "assistant");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct GetPromptResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// A description of this rendering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
    /// Result metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl GetPromptResult {
    /// A result with these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult {
            messages,
            ..Default::default()
        }
    }

    option_setters! {
        /// Sets the description of this rendering.
        with_description => description: String;
    }

    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }
}

/// The result of `completion/complete` (`CompleteResult`).
///
/// ```
/// use typed_mcp_core::wire::{CompleteResult, Completion};
/// use serde_json::json;
///
/// let done = CompleteResult::new(Completion::new(vec!["rust".into()]).with_total(1).with_has_more(false));
/// assert_eq!(
///     serde_json::to_value(&done).unwrap(),
///     json!({"resultType": "complete", "completion": {"values": ["rust"], "total": 1, "hasMore": false}})
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// The suggestions.
    pub completion: Completion,
    /// Result metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl CompleteResult {
    /// A result with these suggestions.
    pub fn new(completion: Completion) -> Self {
        CompleteResult {
            completion,
            ..Default::default()
        }
    }

    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }
}

/// Completion suggestions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// At most 100 values, most relevant first.
    pub values: Vec<String>,
    /// How many values exist in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more values exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// These values, most relevant first (at most 100).
    pub fn new(values: Vec<String>) -> Self {
        Completion {
            values,
            ..Default::default()
        }
    }

    option_setters! {
        /// Sets how many values exist in all.
        with_total => total = u64;
        /// Sets whether more values exist than were sent.
        with_has_more => has_more = bool;
    }
}

/// An empty acknowledgement (`EmptyResult`), e.g. the graceful end of a listen stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmptyResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// Result metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl EmptyResult {
    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }
}
