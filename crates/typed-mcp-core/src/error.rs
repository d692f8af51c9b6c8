//! JSON-RPC error codes and the error object the server sends.

use serde::Serialize;
use serde_json::{Value, json};

use crate::SUPPORTED_VERSIONS;

/// The JSON-RPC error codes used by MCP 2026-07-28.
///
/// Codes in `-32020..=-32099` are reserved for MCP; the server never invents one.
/// The 2025-era codes `-32002` and `-32042` are deliberately absent.
pub mod code {
    /// The message is not valid JSON, or it nests deeper than the configured limit.
    pub const PARSE_ERROR: i32 = -32700;
    /// The message is JSON but not a single valid JSON-RPC request or notification.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist, was removed in 2026-07-28, or is not offered.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// The `_meta` envelope or the method's parameters are invalid, or the target is unknown.
    pub const INVALID_PARAMS: i32 = -32602;
    /// The server failed unexpectedly (a handler panicked, an encoding failed).
    pub const INTERNAL_ERROR: i32 = -32603;
    /// An HTTP header is missing, malformed or disagrees with the body.
    pub const HEADER_MISMATCH: i32 = -32020;
    /// The request needs a client capability it did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
    /// The request names a protocol version this server does not implement.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
    /// The server is saturated and did not accept the request; retry later.
    /// Application-defined (outside the ranges JSON-RPC and MCP reserve).
    /// Streamable HTTP answers it with `503` and `Retry-After`.
    pub const SERVER_OVERLOADED: i32 = -31002;
    /// A layer the application put around the handlers (see
    /// `ServerBuilder::layer` in typed-mcp) refused the request.
    /// Application-defined, like [`SERVER_OVERLOADED`].
    pub const REFUSED_BY_LAYER: i32 = -31003;
}

/// A JSON-RPC error object: `{code, message, data?}`.
///
/// Constructors exist for every error the protocol defines; handlers use
/// [`RpcError::invalid_params`], [`RpcError::resource_not_found`] and
/// [`RpcError::internal`] to refuse a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RpcError {
    /// The JSON-RPC error code (see [`code`]).
    pub code: i32,
    /// One concise sentence saying what was expected and what was found.
    pub message: String,
    /// Machine-readable detail, when the protocol defines some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with the given code and message and no data.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data` to the error.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700`: the message could not be parsed.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(code::PARSE_ERROR, message)
    }

    /// `-32600`: the message is not a valid JSON-RPC request or notification.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_REQUEST, message)
    }

    /// `-32601`: the method is unknown or not offered.
    pub fn method_not_found(message: impl Into<String>) -> Self {
        Self::new(code::METHOD_NOT_FOUND, message)
    }

    /// `-32602`: invalid parameters.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }

    /// `-32602` with `data.uri`: the resource does not exist.
    pub fn resource_not_found(uri: &str) -> Self {
        Self::new(code::INVALID_PARAMS, format!("resource not found: {uri}"))
            .with_data(json!({ "uri": uri }))
    }

    /// `-32603`: the server failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(code::INTERNAL_ERROR, message)
    }

    /// `-32020`: a header is missing or disagrees with the body.
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(code::HEADER_MISMATCH, message)
    }

    /// `-32021`: the request needs client capabilities it did not declare.
    ///
    /// `required` is a `ClientCapabilities`-shaped object such as `{"sampling": {}}`.
    pub fn missing_client_capability(message: impl Into<String>, required: Value) -> Self {
        Self::new(code::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
            .with_data(json!({ "requiredCapabilities": required }))
    }

    /// `-32022`: the requested protocol version is not implemented.
    pub fn unsupported_version(requested: &str) -> Self {
        Self::new(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            format!(
                "unsupported protocol version {requested:?}; this server supports {}",
                SUPPORTED_VERSIONS.join(", ")
            ),
        )
        .with_data(json!({ "supported": SUPPORTED_VERSIONS, "requested": requested }))
    }

    /// `-31002`: the server did not accept the request because it is
    /// saturated; `retry_after_ms` tells the client when to retry.
    pub fn overloaded(message: impl Into<String>, retry_after_ms: u64) -> Self {
        Self::new(code::SERVER_OVERLOADED, message)
            .with_data(json!({ "retryAfterMs": retry_after_ms }))
    }

    /// The HTTP status Streamable HTTP answers this error with when it is raised by
    /// the protocol layer (see the router's module docs for the policy).
    pub fn http_status(&self) -> u16 {
        match self.code {
            code::METHOD_NOT_FOUND => 404,
            code::PARSE_ERROR
            | code::INVALID_REQUEST
            | code::HEADER_MISMATCH
            | code::MISSING_REQUIRED_CLIENT_CAPABILITY
            | code::UNSUPPORTED_PROTOCOL_VERSION => 400,
            code::INTERNAL_ERROR => 500,
            code::SERVER_OVERLOADED => 503,
            _ => 200,
        }
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}
