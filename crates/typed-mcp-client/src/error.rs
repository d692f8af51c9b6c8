//! What can go wrong between the client and a server, worded for the person
//! debugging it.

use serde_json::Value;

/// A failure to get an answer, or an answer that is an error.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The caller asked for something this client cannot do as asked.
    #[error("{0}")]
    Usage(String),
    /// The server program could not be started.
    #[error("cannot start the server {command:?}: {reason}")]
    Spawn {
        /// The program.
        command: String,
        /// Why, with a hint.
        reason: String,
    },
    /// Nothing answers at the URL.
    #[error("cannot reach {url}: {reason}")]
    Connect {
        /// The endpoint.
        url: String,
        /// Why, with a hint.
        reason: String,
    },
    /// The server said something that is not MCP.
    #[error("{what}{}", stderr_tail(.stderr))]
    NotMcp {
        /// What was wrong.
        what: String,
        /// The end of the server's stderr (stdio only).
        stderr: String,
    },
    /// The server sent a message over one of the client's limits (size or
    /// nesting depth); the connection is not used further.
    #[error("{what}{}", stderr_tail(.stderr))]
    Limit {
        /// Which limit, what was expected and what was found.
        what: String,
        /// The end of the server's stderr (stdio only).
        stderr: String,
    },
    /// The stdio server ended before it answered.
    #[error("the server exited ({status}) before answering {method}{}", stderr_tail(.stderr))]
    Exited {
        /// The request that went unanswered.
        method: String,
        /// How it ended.
        status: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// No answer in time (the request was cancelled).
    #[error("{method}: no answer within {seconds} s{}", stderr_tail(.stderr))]
    Timeout {
        /// The request.
        method: String,
        /// The limit.
        seconds: f64,
        /// The end of the server's stderr (stdio only).
        stderr: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{method}: JSON-RPC error {code}: {message}{}", data_suffix(.data))]
    Rpc {
        /// The request.
        method: String,
        /// The error code.
        code: i64,
        /// The message.
        message: String,
        /// The error's data, if any (boxed: the error stays small).
        data: Option<Box<Value>>,
    },
    /// The HTTP server refused the request with a status and no JSON-RPC
    /// answer to it.
    #[error("{what}")]
    Http {
        /// The HTTP status code.
        status: u16,
        /// What came back, worded.
        what: String,
    },
    /// In auto mode, neither era's handshake succeeded.
    #[error(
        "the server answered neither protocol era:\n  2026-07-28 (server/discover): {modern}\n  \
         legacy (initialize): {legacy}"
    )]
    NeitherEra {
        /// What `server/discover` got.
        modern: Box<ClientError>,
        /// What `initialize` got.
        legacy: Box<ClientError>,
    },
    /// In modern mode, the server refused the first request and
    /// `server/discover` the way a legacy server would.
    #[error(
        "{0}\nif this server speaks only a dated revision (2025-11-25 or older), connect in auto \
         or legacy mode"
    )]
    ModernRefused(Box<ClientError>),
    /// The server asked for input (MRTR, or a legacy server-to-client
    /// request) that the client's handler could not give.
    #[error("{method}: the server asked for {asked}, and {why}")]
    Input {
        /// The request that needed the input.
        method: String,
        /// What was asked (`elicitation/create`, ...).
        asked: String,
        /// Why it was not given.
        why: String,
    },
    /// An I/O error talking to the server.
    #[error("{0}")]
    Io(String),
}

impl ClientError {
    /// True when the server answered, with an error (as opposed to no answer).
    pub fn is_answer(&self) -> bool {
        match self {
            ClientError::Rpc { .. } => true,
            ClientError::ModernRefused(inner) => inner.is_answer(),
            _ => false,
        }
    }

    /// The JSON-RPC error code, when the server answered with an error.
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc { code, .. } => Some(*code),
            ClientError::ModernRefused(inner) => inner.rpc_code(),
            _ => None,
        }
    }
}

fn stderr_tail(stderr: &str) -> String {
    let stderr = stderr.trim_end();
    if stderr.is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = stderr.lines().collect();
    let tail = &lines[lines.len().saturating_sub(10)..];
    format!("\nthe server's stderr ended with:\n  {}", tail.join("\n  "))
}

fn data_suffix(data: &Option<Box<Value>>) -> String {
    match data.as_deref() {
        None | Some(Value::Null) => String::new(),
        Some(data) => format!(" (data: {data})"),
    }
}

/// At most 200 characters of `text`, for an error message.
pub(crate) fn snippet(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(200).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// A failed typed call ([`Client::call`](crate::Client::call)).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The request itself failed (no answer, a JSON-RPC error...).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The tool answered `isError: true`: its message, and for a typed-mcp
    /// server whose argument check failed, the report of every bad field.
    #[error("the tool {tool:?} reported an error: {message}")]
    Tool {
        /// The tool.
        tool: String,
        /// The text of the result's content.
        message: String,
        /// The result's `structuredContent`, when it has one (a typed
        /// error's fields).
        structured: Option<Value>,
    },
    /// The result's `structuredContent` (or, lacking one, its single text
    /// block read as JSON) is not the type asked for.
    #[error("the tool {tool:?} answered a result that is not the expected type: {why}")]
    Decode {
        /// The tool.
        tool: String,
        /// What serde said, and what was found.
        why: String,
    },
}
