//! Methods the core does not model, served for an extension (the tasks
//! extension's `tasks/get`, an application's own): the router checks what
//! every request gets — the envelope, the standard headers, `Mcp-Name` when
//! the method names a target, the client's declaration of the extension —
//! and hands the rest of the params to the runtime untouched
//! ([`Target::Extension`](super::Target::Extension)).

use serde_json::{Map, Value, json};

use super::{Headers, Refusal, RequestMeta, check_name_header};
use crate::RpcError;

/// One method an extension adds, as the router checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExtensionMethod {
    /// The extension's identifier (e.g. `io.modelcontextprotocol/tasks`).
    pub extension: String,
    /// The JSON-RPC method (e.g. `tasks/get`).
    pub method: String,
    /// The params member the `Mcp-Name` header mirrors over HTTP (e.g.
    /// `taskId`); `None`: the method names no target and no `Mcp-Name` is
    /// checked.
    pub name_param: Option<String>,
    /// Refuse (`-32021`, naming the extension in
    /// `data.requiredCapabilities.extensions`) a request whose `_meta` does
    /// not declare the extension in its client capabilities.
    pub requires_client_extension: bool,
}

impl ExtensionMethod {
    /// The method `method` of the extension `extension`, with no `Mcp-Name`
    /// and no client declaration required.
    pub fn new(extension: impl Into<String>, method: impl Into<String>) -> Self {
        ExtensionMethod {
            extension: extension.into(),
            method: method.into(),
            name_param: None,
            requires_client_extension: false,
        }
    }

    /// Checks `Mcp-Name` against this params member over HTTP.
    #[must_use]
    pub fn with_name_param(mut self, member: impl Into<String>) -> Self {
        self.name_param = Some(member.into());
        self
    }

    /// Refuses requests that do not declare the extension (`-32021`).
    #[must_use]
    pub fn requiring_client_extension(mut self) -> Self {
        self.requires_client_extension = true;
        self
    }

    /// Rung 14 for this method: `Mcp-Name` present and equal to the named
    /// params member.
    pub(super) fn check_name(
        &self,
        headers: Option<&dyn Headers>,
        params: &Map<String, Value>,
    ) -> Result<(), Refusal> {
        match (headers, &self.name_param) {
            (Some(h), Some(member)) => {
                check_name_header(h, params.get(member.as_str()).and_then(Value::as_str))
            }
            _ => Ok(()),
        }
    }

    /// Rung 19 for this method: the extension declared when required.
    pub(super) fn check_client(&self, meta: &RequestMeta) -> Result<(), Refusal> {
        if !self.requires_client_extension
            || meta.client_capabilities.has_extension(&self.extension)
        {
            return Ok(());
        }
        Err(missing_extension(
            &self.extension,
            &format!("{} is", self.method),
        ))
    }
}

/// `-32021` (400) for a request that needs the client to declare `extension`.
pub(super) fn missing_extension(extension: &str, what: &str) -> Refusal {
    (
        RpcError::missing_client_capability(
            format!(
                "{what} served only to clients that declare the extension {extension:?} in _meta clientCapabilities.extensions"
            ),
            json!({ "extensions": { extension: {} } }),
        ),
        400,
    )
}
