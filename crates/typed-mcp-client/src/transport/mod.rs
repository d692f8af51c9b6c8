//! The transports: each sends one message and hands back what the server
//! sends for it, so the client above is written once for all of them.

#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(feature = "in-process")]
pub(crate) mod in_process;
pub(crate) mod stdio;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::error::ClientError;

/// How many messages of one request may wait for the caller before the
/// transport stops reading (backpressure instead of an unbounded queue).
pub(crate) const PER_REQUEST_BACKLOG: usize = 64;

/// What the server sends for one request: notifications, then the response
/// (or the error that ended the exchange).
pub(crate) type Incoming = mpsc::Receiver<Result<Value, ClientError>>;

/// A request the server sent the client (a legacy session's elicitation,
/// sampling, roots or ping), to be answered through the transport.
pub(crate) type ServerRequests = mpsc::Sender<Value>;

/// One message to send.
#[derive(Debug)]
pub(crate) struct Outgoing<'a> {
    /// The request's id (`None` for a notification or a response).
    pub id: Option<&'a Value>,
    /// The method (for errors).
    pub method: &'a str,
    /// The JSON-RPC message.
    pub body: Vec<u8>,
    /// HTTP headers of the era.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub headers: &'a [(String, String)],
    /// The request's progress token, so that stdio can route its progress.
    pub progress_token: Option<&'a str>,
}

/// An answer stream for one request, and what the transport learnt.
#[derive(Debug)]
pub(crate) struct Exchange {
    pub incoming: Incoming,
    /// The `Mcp-Session-Id` the HTTP response carried.
    pub session_id: Option<String>,
}

/// The limits on what the server sends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_message_bytes: usize,
    pub max_depth: usize,
}

impl Limits {
    /// Checks and parses one message the server sent.
    pub(crate) fn parse(
        &self,
        bytes: &[u8],
        stderr: impl Fn() -> String,
    ) -> Result<Value, ClientError> {
        if bytes.len() > self.max_message_bytes {
            return Err(ClientError::Limit {
                what: format!(
                    "the server sent a message of {} bytes; this client accepts at most {} \
                     (Options::max_message_bytes)",
                    bytes.len(),
                    self.max_message_bytes
                ),
                stderr: stderr(),
            });
        }
        if let Some(depth) = typed_mcp_core::guard::depth_exceeds(bytes, self.max_depth) {
            return Err(ClientError::Limit {
                what: format!(
                    "the server sent a message nested {depth} or more levels deep; this client \
                     accepts at most {} (Options::max_depth)",
                    self.max_depth
                ),
                stderr: stderr(),
            });
        }
        let text = String::from_utf8_lossy(bytes);
        let message: Value = serde_json::from_slice(bytes).map_err(|_| ClientError::NotMcp {
            what: format!(
                "the server sent a message that is not JSON: {}",
                crate::error::snippet(&text)
            ),
            stderr: stderr(),
        })?;
        if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(ClientError::NotMcp {
                what: format!(
                    "the server sent JSON that is not a JSON-RPC 2.0 message: {}",
                    crate::error::snippet(&text)
                ),
                stderr: stderr(),
            });
        }
        Ok(message)
    }
}

/// True for a response (a result or an error).
pub(crate) fn is_response(message: &Value) -> bool {
    message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
}

/// True for a request of the server's (a method and an id).
pub(crate) fn is_server_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some_and(|id| !id.is_null())
}

/// The key a request id is routed by.
pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}
