//! The two protocol eras this client speaks, and how it picks one.
//!
//! - **modern**: 2026-07-28. Stateless: every request carries the `_meta`
//!   envelope; over HTTP the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
//!   headers; the server describes itself through `server/discover`.
//! - **legacy**: the dated revisions 2025-11-25, 2025-06-18 and 2025-03-26. A
//!   session opened by `initialize` and `notifications/initialized`; no `_meta`
//!   envelope; over HTTP the `Mcp-Session-Id` the server handed out on every
//!   later request (and `MCP-Protocol-Version` from 2025-06-18 on), and a DELETE
//!   of the session at the end; over stdio the connection is the session.
//!
//! In [`Era::Auto`] the client asks `server/discover` first and falls back to
//! `initialize` when the answer shows the server does not speak 2026-07-28.

use std::fmt;

use serde_json::Value;

use crate::error::ClientError;

/// Which era to speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Era {
    /// Try 2026-07-28 (`server/discover`); fall back to `initialize` when the
    /// server shows it does not speak it.
    #[default]
    Auto,
    /// 2026-07-28 only; nothing is sent before the first request.
    Modern,
    /// The dated handshake only (`initialize`, 2025-11-25 offered).
    Legacy,
}

/// The dated revision offered at `initialize`.
pub const LEGACY_OFFERED: &str = "2025-11-25";

/// Every dated revision this client accepts as the server's counter-offer,
/// newest first.
pub const LEGACY_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// True when a legacy session at `version` sends `MCP-Protocol-Version` over
/// HTTP (the header came with 2025-06-18).
pub fn sends_version_header(version: &str) -> bool {
    // Dated versions compare as strings.
    version >= "2025-06-18"
}

/// What the handshake settled.
#[derive(Debug, Clone)]
pub enum Spoken {
    /// 2026-07-28: no session; `discovered` is the `server/discover` result
    /// once it has been asked.
    Modern {
        /// The `server/discover` result, when asked.
        discovered: Option<Value>,
    },
    /// A dated revision, through a session.
    Legacy(LegacySession),
}

impl Spoken {
    /// True for a legacy session.
    pub fn is_legacy(&self) -> bool {
        matches!(self, Spoken::Legacy(_))
    }
}

/// A legacy session: what `initialize` answered.
#[derive(Debug, Clone)]
pub struct LegacySession {
    /// The negotiated revision (one of [`LEGACY_VERSIONS`]).
    pub version: String,
    /// The `initialize` result as the server sent it.
    pub initialized: Value,
    /// Why this era: asked for, or what `server/discover` got.
    pub because: Because,
}

/// Why the client speaks the legacy era.
#[derive(Debug, Clone)]
pub enum Because {
    /// [`Era::Legacy`] was asked for.
    Asked,
    /// In auto mode, `server/discover` got this answer.
    DiscoverRefused(String),
}

impl fmt::Display for Because {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Because::Asked => f.write_str("the legacy era was asked for"),
            Because::DiscoverRefused(why) => write!(f, "server/discover: {why}"),
        }
    }
}

impl LegacySession {
    /// The era, worded: `legacy (2025-11-25, a session opened by initialize;
    /// server/discover: JSON-RPC error -32601: Method not found)`.
    pub fn describe(&self) -> String {
        format!(
            "legacy ({}, a session opened by initialize; {})",
            self.version, self.because
        )
    }
}

/// In auto mode: does this answer to `server/discover` show that the server
/// does not speak 2026-07-28? Returns the answer, worded, when it does.
///
/// Any JSON-RPC error does: a 2026-07-28 server answers a well-formed discover
/// with its result, while servers of the dated revisions answer a request
/// before `initialize` with a variety of codes (`-32601` method not found,
/// `-32602` for params they cannot read, `-32600` or `-32002` not initialized).
/// The exception is `-32022` (unsupported version) listing no dated revision
/// this client speaks: `initialize` could not succeed either. Over HTTP, a 400,
/// 404 or 405 without a JSON-RPC answer to the request is a legacy endpoint
/// refusing a request outside a session (or refusing the modern headers).
/// Everything else (no answer, a dead server, output that is not MCP, 401, 5xx)
/// is reported as it is: `initialize` would not fare better.
pub fn legacy_sign(error: &ClientError) -> Option<String> {
    match error {
        ClientError::Rpc {
            code: -32022, data, ..
        } => supported_versions(data.as_deref())
            .iter()
            .any(|v| LEGACY_VERSIONS.contains(&v.as_str()))
            .then(|| rpc_words(error)),
        ClientError::Rpc { .. } => Some(rpc_words(error)),
        ClientError::Http {
            status: 400 | 404 | 405,
            ..
        } => Some(error.to_string()),
        _ => None,
    }
}

/// The `supported` list of a `-32022` error's data.
pub(crate) fn supported_versions(data: Option<&Value>) -> Vec<String> {
    data.and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn rpc_words(error: &ClientError) -> String {
    match error {
        ClientError::Rpc { code, message, .. } => format!("JSON-RPC error {code}: {message}"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rpc(code: i64, data: Option<Value>) -> ClientError {
        ClientError::Rpc {
            method: "server/discover".into(),
            code,
            message: "nope".into(),
            data: data.map(Box::new),
        }
    }

    #[test]
    fn the_answers_that_mean_legacy() {
        assert_eq!(
            legacy_sign(&rpc(-32601, None)).as_deref(),
            Some("JSON-RPC error -32601: nope")
        );
        assert!(legacy_sign(&rpc(-32602, None)).is_some());
        assert!(legacy_sign(&rpc(-32600, None)).is_some());
        assert!(
            legacy_sign(&rpc(
                -32022,
                Some(json!({"supported": ["2025-06-18", "2025-03-26"]}))
            ))
            .is_some()
        );
        // Only revisions this client does not speak: initialize cannot help.
        assert!(legacy_sign(&rpc(-32022, Some(json!({"supported": ["2027-01-01"]})))).is_none());
        assert!(legacy_sign(&rpc(-32022, None)).is_none());
        for status in [400, 404, 405] {
            let error = ClientError::Http {
                status,
                what: "refused".into(),
            };
            assert_eq!(legacy_sign(&error).as_deref(), Some("refused"));
        }
        for error in [
            ClientError::Http {
                status: 401,
                what: "log in".into(),
            },
            ClientError::Http {
                status: 500,
                what: "broken".into(),
            },
            ClientError::Io("gone".into()),
            ClientError::NotMcp {
                what: "not JSON".into(),
                stderr: String::new(),
            },
        ] {
            assert!(legacy_sign(&error).is_none(), "{error}");
        }
    }

    #[test]
    fn the_version_header_came_with_2025_06_18() {
        assert!(sends_version_header("2025-11-25"));
        assert!(sends_version_header("2025-06-18"));
        assert!(!sends_version_header("2025-03-26"));
    }
}
