//! What can go wrong between the CLI and a server, worded for the person
//! debugging it.

use serde_json::Value;

/// A failure to get an answer, or an answer that is an error.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The command line is wrong.
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
    /// No answer in time.
    #[error("{method}: no answer within {seconds} s (raise it with --timeout){}", stderr_tail(.stderr))]
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
    /// With `--era modern`, the server refused the first request and
    /// `server/discover` the way a legacy server would.
    #[error(
        "{0}\nif this server speaks only a dated revision (2025-11-25 or older), try --era auto \
         or --era legacy"
    )]
    ModernRefused(Box<ClientError>),
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

/// Any failure of a command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Talking to the server.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The lock file.
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
}
