//! Multi round-trip requests: `InputRequiredResult`, the input requests it
//! embeds and the responses a retry carries.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ContentBlock, ResultMeta, ResultType, Role};

/// An interim answer asking the client for input before the request can finish
/// (`InputRequiredResult`). Allowed only on `tools/call`, `resources/read` and
/// `prompts/get`; carries no cache hints.
///
/// ```
/// use typed_mcp_core::wire::{ElicitRequestParams, InputRequest, InputRequiredResult};
/// use serde_json::json;
///
/// let ask = InputRequest::Elicit(ElicitRequestParams::form(
///     "Which queue?",
///     json!({"type": "object", "properties": {"queue": {"type": "string"}}}),
/// ));
/// let mut requests = serde_json::Map::new();
/// requests.insert("queue".into(), serde_json::to_value(ask).unwrap());
/// let result = InputRequiredResult::new(requests).with_request_state("opaque");
/// assert_eq!(
///     serde_json::to_value(&result).unwrap(),
///     json!({"resultType": "input_required",
///            "inputRequests": {"queue": {"method": "elicitation/create", "params": {
///                "mode": "form", "message": "Which queue?",
///                "requestedSchema": {"type": "object", "properties": {"queue": {"type": "string"}}}}}},
///            "requestState": "opaque"})
/// );
/// // Variants are matched with `..`: a field the specification adds is not a breaking change.
/// if let ElicitRequestParams::Url { url, .. } = ElicitRequestParams::url("Sign in.", "https://example.com") {
///     assert_eq!(url, "https://example.com");
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct InputRequiredResult {
    /// Always `input_required`.
    pub result_type: ResultType,
    /// What the client must answer, by server-chosen key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<Map<String, Value>>,
    /// Opaque state the client echoes on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Result metadata.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "ResultMeta::is_empty"
    )]
    pub meta: ResultMeta,
}

impl InputRequiredResult {
    /// An interim result asking for these inputs, by server-chosen key. An empty
    /// map is left out, for a result that only carries
    /// [`request_state`](Self::with_request_state) (the schema wants at least one).
    pub fn new(input_requests: Map<String, Value>) -> Self {
        InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests: (!input_requests.is_empty()).then_some(input_requests),
            request_state: None,
            meta: ResultMeta::default(),
        }
    }

    option_setters! {
        /// Sets the opaque state the client echoes on the retry.
        with_request_state => request_state: String;
    }

    /// Sets the result metadata.
    #[must_use]
    pub fn with_meta(mut self, meta: ResultMeta) -> Self {
        self.meta = meta;
        self
    }
}

/// One embedded input request (`InputRequest`): `{method, params}`, no id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params")]
#[non_exhaustive]
pub enum InputRequest {
    /// Ask the user through a form or a URL.
    #[serde(rename = "elicitation/create")]
    Elicit(ElicitRequestParams),
    /// Ask the client's model (deprecated feature).
    #[serde(rename = "sampling/createMessage")]
    Sample(CreateMessageRequestParams),
    /// Ask for the client's roots (deprecated feature).
    #[serde(rename = "roots/list")]
    ListRoots(Map<String, Value>),
}

/// Parameters of an elicitation (`ElicitRequestFormParams | ElicitRequestURLParams`).
///
/// The variants are `#[non_exhaustive]`: make them with [`form`](Self::form) and
/// [`url`](Self::url), and match them with `..`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
#[non_exhaustive]
pub enum ElicitRequestParams {
    /// A form of primitive fields.
    #[non_exhaustive]
    Form {
        /// What to ask.
        message: String,
        /// A flat object schema of primitive properties.
        #[serde(rename = "requestedSchema")]
        requested_schema: Value,
    },
    /// An out-of-band step at a URL (never for secrets in the URL).
    #[non_exhaustive]
    Url {
        /// What to ask.
        message: String,
        /// Where to send the user.
        url: String,
    },
}

impl ElicitRequestParams {
    /// A form of primitive fields described by a flat object schema.
    pub fn form(message: impl Into<String>, requested_schema: Value) -> Self {
        ElicitRequestParams::Form {
            message: message.into(),
            requested_schema,
        }
    }

    /// An out-of-band step at `url`.
    pub fn url(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitRequestParams::Url {
            message: message.into(),
            url: url.into(),
        }
    }
}

/// Parameters of a sampling request (`CreateMessageRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageRequestParams {
    /// The conversation to continue.
    pub messages: Vec<SamplingMessage>,
    /// Token budget.
    pub max_tokens: u64,
    /// System prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Other members (`modelPreferences`, `stopSequences`, `tools`...).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl CreateMessageRequestParams {
    /// A request to continue `messages` within `max_tokens`.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageRequestParams {
            messages,
            max_tokens,
            system_prompt: None,
            temperature: None,
            other: Map::new(),
        }
    }

    option_setters! {
        /// Sets the system prompt.
        with_system_prompt => system_prompt: String;
        /// Sets the sampling temperature.
        with_temperature => temperature = f64;
    }

    /// Adds one further member (`modelPreferences`, `stopSequences`...).
    #[must_use]
    pub fn with_entry(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.other.insert(key.into(), value.into());
        self
    }
}

/// A message in a sampling request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

impl SamplingMessage {
    /// A message from `role`.
    pub fn new(role: Role, content: ContentBlock) -> Self {
        SamplingMessage { role, content }
    }
}

/// The client's answer to an elicitation (`ElicitResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitResult {
    /// `accept`, `decline` or `cancel`.
    pub action: ElicitAction,
    /// The form's values, present on `accept` in form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

impl ElicitResult {
    /// What the user did, with no form values.
    pub fn new(action: ElicitAction) -> Self {
        ElicitResult {
            action,
            content: None,
        }
    }

    option_setters! {
        /// Sets the form's values.
        with_content => content: Map<String, Value>;
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted.
    Accept,
    /// Refused.
    Decline,
    /// Dismissed.
    Cancel,
}

/// The client's answer to a sampling request (`CreateMessageResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Usually `assistant`.
    pub role: Role,
    /// The generated content.
    pub content: Value,
    /// The model that answered.
    pub model: String,
    /// Why generation stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// What `model` generated, spoken as `role`.
    pub fn new(role: Role, content: Value, model: impl Into<String>) -> Self {
        CreateMessageResult {
            role,
            content,
            model: model.into(),
            stop_reason: None,
        }
    }

    option_setters! {
        /// Sets why generation stopped.
        with_stop_reason => stop_reason: String;
    }
}

/// The client's answer to `roots/list` (`ListRootsResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}

impl ListRootsResult {
    /// These roots.
    pub fn new(roots: Vec<Root>) -> Self {
        ListRootsResult { roots }
    }
}

/// A root the client exposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// A root at this `file://` URI.
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            name: None,
        }
    }

    option_setters! {
        /// Sets the display name.
        with_name => name: String;
    }
}
