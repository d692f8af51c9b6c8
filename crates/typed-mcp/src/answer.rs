//! [`Answer`]: a handler's value, or a request for input first (a multi
//! round-trip request). [`NeedsInput`] becomes a `resultType:
//! "input_required"` result; the client retries with `inputResponses` and the
//! `requestState`. Tools, resources and prompts share it.

use crate::context::ToolContext;
use serde_json::{Map, Value, json};
use typed_mcp_core::RpcError;
use typed_mcp_core::wire::{ElicitRequestParams, InputRequest, InputRequiredResult};

/// What a handler that may need input returns: the value, or what to ask the
/// client for first.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<T> {
    /// The value: replied like a `T` return.
    Done(T),
    /// Ask the client for input first.
    NeedsInput(NeedsInput),
}

impl<T> Answer<T> {
    /// Maps the value of `Done`.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Answer<U> {
        match self {
            Answer::Done(value) => Answer::Done(f(value)),
            Answer::NeedsInput(needs) => Answer::NeedsInput(needs),
        }
    }
}

/// A value is `Done`: `Ok(result.into())` answers it.
impl<T> From<T> for Answer<T> {
    fn from(value: T) -> Self {
        Answer::Done(value)
    }
}

/// The input a tool asks for, by key, and the state to carry to the retry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NeedsInput {
    /// Input requests by server-chosen key.
    pub requests: Vec<(String, InputRequest)>,
    /// Opaque state the client echoes on the retry.
    pub request_state: Option<String>,
}

impl NeedsInput {
    /// No requests yet.
    pub fn new() -> Self {
        NeedsInput::default()
    }

    /// Adds an input request under `key`.
    pub fn request(mut self, key: impl Into<String>, request: InputRequest) -> Self {
        self.requests.push((key.into(), request));
        self
    }

    /// Asks the user, through a form, for the fields of `requested_schema`.
    pub fn elicit(
        self,
        key: impl Into<String>,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> Self {
        self.request(
            key,
            InputRequest::Elicit(ElicitRequestParams::form(message, requested_schema)),
        )
    }

    /// Sets the state the client echoes on the retry.
    pub fn state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }

    /// The wire result.
    pub fn into_result(self) -> InputRequiredResult {
        let requests: Map<String, Value> = self
            .requests
            .into_iter()
            .map(|(key, request)| {
                let value = serde_json::to_value(request)
                    .unwrap_or_else(|e| json!({"error": e.to_string()}));
                (key, value)
            })
            .collect();
        let mut result = InputRequiredResult::new(requests);
        result.request_state = self.request_state;
        result
    }
}

/// Refuses, with `-32021`, to ask for a kind of input the client did not
/// declare on this request (elicitation, its URL mode, sampling, roots).
pub(crate) fn check_input_requests(
    result: &InputRequiredResult,
    ctx: &ToolContext,
) -> Result<(), RpcError> {
    let caps = ctx.client_capabilities();
    let mut missing = Map::new();
    for request in result.input_requests.iter().flat_map(|r| r.values()) {
        let method = request.get("method").and_then(Value::as_str).unwrap_or("");
        let mode = request.pointer("/params/mode").and_then(Value::as_str);
        let (declared, needed) = match (method, mode) {
            ("elicitation/create", Some("url")) => (
                caps.elicitation.as_ref().is_some_and(|e| e.url.is_some()),
                json!({"url": {}}),
            ),
            ("elicitation/create", _) => (caps.elicitation.is_some(), json!({})),
            ("sampling/createMessage", _) => (caps.sampling.is_some(), json!({})),
            ("roots/list", _) => (caps.roots.is_some(), json!({})),
            _ => continue,
        };
        if !declared {
            let capability = method.split('/').next().unwrap_or(method);
            missing.insert(capability.to_owned(), needed);
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = missing.keys().map(String::as_str).collect();
    Err(RpcError::missing_client_capability(
        format!(
            "this call needs the client capability {} on the request",
            names.join(", ")
        ),
        Value::Object(missing),
    ))
}
