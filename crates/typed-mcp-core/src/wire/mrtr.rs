//! Multi round-trip requests: `InputRequiredResult`, the input requests it
//! embeds and the responses a retry carries.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ContentBlock, ResultMeta, ResultType, Role};

/// An interim answer asking the client for input before the request can finish
/// (`InputRequiredResult`). Allowed only on `tools/call`, `resources/read` and
/// `prompts/get`; carries no cache hints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// One embedded input request (`InputRequest`): `{method, params}`, no id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params")]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum ElicitRequestParams {
    /// A form of primitive fields.
    Form {
        /// What to ask.
        message: String,
        /// A flat object schema of primitive properties.
        #[serde(rename = "requestedSchema")]
        requested_schema: Value,
    },
    /// An out-of-band step at a URL (never for secrets in the URL).
    Url {
        /// What to ask.
        message: String,
        /// Where to send the user.
        url: String,
    },
}

/// Parameters of a sampling request (`CreateMessageRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// A message in a sampling request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: ContentBlock,
}

/// The client's answer to an elicitation (`ElicitResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// `accept`, `decline` or `cancel`.
    pub action: ElicitAction,
    /// The form's values, present on `accept` in form mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
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

/// The client's answer to `roots/list` (`ListRootsResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}

/// A root the client exposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}
