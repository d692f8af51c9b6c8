//! Catalog descriptors (`Tool`, `Resource`, `ResourceTemplate`, `Prompt`), the
//! parameters of client requests, and the results the server sends.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{
    Annotations, CacheScope, ClientCapabilities, ContentBlock, Icon, Implementation, Meta,
    ResourceContents, ResultMeta, ResultType, Role, ServerCapabilities, SubscriptionFilter,
};

// ---------------------------------------------------------------------------
// Descriptors
// ---------------------------------------------------------------------------

/// A tool as listed by `tools/list` (`Tool`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// Untrusted behaviour hints of a tool (`ToolAnnotations`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
    /// True when no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }
}

/// A readable resource as listed by `resources/list` (`Resource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// A family of resources addressed by an RFC 6570 URI template (`ResourceTemplate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// A prompt as listed by `prompts/list` (`Prompt`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// One argument of a prompt (`PromptArgument`). Values are always strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// One message of a prompt (`PromptMessage`): a role and a single content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl PromptMessage {
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

/// Parameters of `tools/call`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// Parameters of the paginated list methods.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// The request envelope.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Where to continue, from a previous `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// Parameters of `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// Parameters of `prompts/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// What a completion request completes (`PromptReference | ResourceTemplateReference`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
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
pub struct CompletionArgument {
    /// Argument name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// Parameters of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// Values already chosen for other arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Argument name → value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<std::collections::BTreeMap<String, String>>,
}

/// Parameters of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// The request envelope.
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Which notifications to deliver.
    pub notifications: SubscriptionFilter,
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

/// The result of `server/discover` (`DiscoverResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// One page of `tools/list` (`ListToolsResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// One page of `resources/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// One page of `resources/templates/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// One page of `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// The result of `tools/call` (`CallToolResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Always `complete` (an interim answer is an [`InputRequiredResult`](super::InputRequiredResult)).
    pub result_type: ResultType,
    /// Content blocks (may be empty).
    pub content: Vec<ContentBlock>,
    /// Structured output, conforming to the tool's output schema when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
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
    pub fn structured(structured: Value) -> Self {
        let text = structured.to_string();
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

    /// True when `isError` is set.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

/// The result of `resources/read` (`ReadResourceResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// The result of `prompts/get` (`GetPromptResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
}

/// The result of `completion/complete` (`CompleteResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// Completion suggestions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// An empty acknowledgement (`EmptyResult`), e.g. the graceful end of a listen stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
