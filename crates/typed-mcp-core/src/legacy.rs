//! The dated revisions (2025-11-25 and older): what a server needs to serve
//! the clients that still speak them, beside the stateless 2026-07-28 wire.
//!
//! A dated client opens a session with `initialize`; the transport keeps the
//! session's [`SessionFacts`] (the negotiated revision, the capabilities the
//! client declared, its log level) and hands them to the router with every
//! later message, which then follows the legacy ladder: no `_meta` envelope,
//! no standard headers, `ping`, `logging/setLevel` and
//! `resources/subscribe`/`unsubscribe` served, `server/discover` and
//! `subscriptions/listen` unknown.
//!
//! Results are the same declarations' results, in the shape each revision
//! defines: [`downgrade`] takes out what only 2026-07-28 has (`resultType`,
//! cache hints, `_meta` server identity) and, for older revisions, what they
//! never had (structured output before 2025-06-18, icons before 2025-11-25).

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::wire::{
    CallToolResult, ClientCapabilities, ContentBlock, Implementation, LoggingLevel,
    StructuredContent, meta_keys,
};
use crate::{RequestId, Response};

/// The dated revisions served to clients that send `initialize`, newest
/// first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

/// The newest dated revision: what a client asking for one this server does
/// not know is offered instead.
pub const LATEST_LEGACY_VERSION: &str = LEGACY_VERSIONS[0];

/// True for a dated revision this server serves.
pub fn is_legacy_version(version: &str) -> bool {
    LEGACY_VERSIONS.contains(&version)
}

/// The revision to answer `initialize` with: the one the client asked for
/// when this server serves it, else the newest dated one (the client then
/// decides whether it can go on, as the lifecycle's version negotiation
/// says).
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| LEGACY_VERSIONS.iter().find(|v| **v == r))
        .copied()
        .unwrap_or(LATEST_LEGACY_VERSION)
}

/// What a legacy session is, as the router needs it for every message after
/// `initialize`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionFacts {
    /// The negotiated revision (one of [`LEGACY_VERSIONS`]).
    pub protocol_version: String,
    /// The capabilities the client declared at `initialize`.
    pub client_capabilities: ClientCapabilities,
    /// The client's self-reported identity: for display, never for decisions.
    pub client_info: Option<Implementation>,
    /// The level `logging/setLevel` set; no log messages are sent before one.
    pub log_level: Option<LoggingLevel>,
}

impl SessionFacts {
    /// A session at this revision with no client capabilities (a request of
    /// a dated revision that arrived without a session, e.g. over stateless
    /// HTTP).
    pub fn stateless(protocol_version: impl Into<String>) -> Self {
        SessionFacts {
            protocol_version: protocol_version.into(),
            client_capabilities: ClientCapabilities::default(),
            client_info: None,
            log_level: None,
        }
    }
}

/// An accepted `initialize`: the session to open and the answer to send.
#[derive(Debug)]
#[non_exhaustive]
pub struct Handshake {
    /// The session the client opened.
    pub session: SessionFacts,
    /// The `initialize` result.
    pub response: Response,
}

/// A change to a legacy session's state, which the router accepted and the
/// runtime applies before sending the (empty) answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionChange {
    /// `logging/setLevel`.
    LogLevel(LoggingLevel),
    /// `resources/subscribe` of this URI.
    Subscribe(String),
    /// `resources/unsubscribe` of this URI.
    Unsubscribe(String),
}

/// A [`SessionChange`] and the answer to send once it is applied.
#[derive(Debug)]
#[non_exhaustive]
pub struct SessionUpdate {
    /// What changes.
    pub change: SessionChange,
    /// The (empty) result.
    pub response: Response,
}

/// The client's answer to a request the server sent it (a legacy session's
/// `elicitation/create`, `sampling/createMessage` or `roots/list`).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientResponse {
    /// The id of the server's request.
    pub id: RequestId,
    /// The result, or the client's error.
    pub outcome: Result<Value, crate::RpcError>,
}

/// Removes from one result what the revision `version` does not define (see
/// the module docs); returns whether anything was removed. A no-op for
/// 2026-07-28.
pub fn downgrade(result: &mut Map<String, Value>, version: &str) -> bool {
    if !is_legacy_version(version) {
        return false;
    }
    let mut removed = false;
    for key in ["resultType", "ttlMs", "cacheScope"] {
        removed |= result.remove(key).is_some();
    }
    if let Some(Value::Object(meta)) = result.get_mut("_meta") {
        removed |= meta.remove(meta_keys::SERVER_INFO).is_some();
        removed |= meta.remove(meta_keys::SUBSCRIPTION_ID).is_some();
        if meta.is_empty() {
            result.remove("_meta");
        }
    }
    // Dates compare as strings.
    let before_2025_06 = version < "2025-06-18";
    if version >= "2025-11-25" {
        return removed;
    }
    if before_2025_06 {
        removed |= result.remove("structuredContent").is_some();
    }
    for list in ["tools", "prompts", "resources", "resourceTemplates"] {
        let Some(Value::Array(items)) = result.get_mut(list) else {
            continue;
        };
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            removed |= item.remove("icons").is_some();
            if list == "tools" {
                removed |= item.remove("execution").is_some();
            }
            if before_2025_06 {
                removed |= item.remove("title").is_some();
                removed |= item.remove("outputSchema").is_some();
            }
        }
    }
    removed
}

/// [`downgrade`] applied to one encoded JSON-RPC response (a result; an
/// error is the same in every revision). Returns the bytes unchanged when
/// there is nothing to remove.
pub fn downgrade_message<'a>(message: &'a [u8], version: &str) -> Cow<'a, [u8]> {
    if !is_legacy_version(version) {
        return Cow::Borrowed(message);
    }
    let Ok(Value::Object(mut object)) = serde_json::from_slice::<Value>(message) else {
        return Cow::Borrowed(message);
    };
    let changed = match object.get_mut("result") {
        Some(Value::Object(result)) => downgrade(result, version),
        _ => false,
    };
    if !changed {
        return Cow::Borrowed(message);
    }
    Cow::Owned(serde_json::to_vec(&object).unwrap_or_else(|_| message.to_vec()))
}

/// A `tools/call` result encoded directly in the shape of the dated revision
/// `version`: the members [`downgrade_message`] would leave of its 2026-07-28
/// encoding (in that encoding's order), without encoding it, parsing it back
/// and encoding it again (the hot path of every dated client's call). `resultType` and the `_meta`
/// server identity are left out; before 2025-06-18, so is
/// `structuredContent`.
pub fn encode_call_result(id: &RequestId, result: &CallToolResult, version: &str) -> Vec<u8> {
    if !is_legacy_version(version) {
        return crate::encode::result(id, result);
    }
    let dated = DatedCallToolResult {
        content: &result.content,
        structured_content: result
            .structured_content
            .as_ref()
            .filter(|_| version >= "2025-06-18"),
        is_error: result.is_error,
        meta: DatedMeta(&result.meta.other),
    };
    crate::encode::result(id, &dated)
}

/// A [`CallToolResult`] as the dated revisions define it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct DatedCallToolResult<'a> {
    content: &'a [ContentBlock],
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a StructuredContent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
    #[serde(rename = "_meta", skip_serializing_if = "DatedMeta::is_empty")]
    meta: DatedMeta<'a>,
}

/// A result's `_meta` without the keys only 2026-07-28 defines.
struct DatedMeta<'a>(&'a Map<String, Value>);

impl DatedMeta<'_> {
    fn entries(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0
            .iter()
            .filter(|(k, _)| *k != meta_keys::SERVER_INFO && *k != meta_keys::SUBSCRIPTION_ID)
    }

    fn is_empty(&self) -> bool {
        self.entries().next().is_none()
    }
}

impl serde::Serialize for DatedMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.entries())
    }
}

/// One pre-serialized list page (a result object) in the legacy shape.
pub(crate) fn downgrade_page(page: &str) -> Box<str> {
    match serde_json::from_str::<Value>(page) {
        Ok(Value::Object(mut result)) => {
            downgrade(&mut result, LATEST_LEGACY_VERSION);
            serde_json::to_string(&result)
                .unwrap_or_else(|_| page.to_owned())
                .into_boxed_str()
        }
        _ => page.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn negotiation_echoes_a_served_revision_and_offers_the_newest_otherwise() {
        assert_eq!(negotiate(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiate(Some("2025-03-26")), "2025-03-26");
        assert_eq!(negotiate(Some("2024-11-05")), "2025-11-25");
        assert_eq!(negotiate(Some("2026-07-28")), "2025-11-25");
        assert_eq!(negotiate(None), "2025-11-25");
    }

    #[test]
    fn legacy_results_lose_the_modern_members_only() {
        let mut result = json!({
            "resultType": "complete", "ttlMs": 1, "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
            "content": [{"type": "text", "text": "hi"}], "structuredContent": {"a": 1}
        });
        assert!(downgrade(result.as_object_mut().unwrap(), "2025-11-25"));
        assert_eq!(
            result,
            json!({"content": [{"type": "text", "text": "hi"}], "structuredContent": {"a": 1}})
        );
    }

    #[test]
    fn older_revisions_lose_what_they_never_had() {
        let mut result = json!({"tools": [{"name": "t", "title": "T", "icons": [],
            "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}],
            "structuredContent": {}});
        downgrade(result.as_object_mut().unwrap(), "2025-06-18");
        assert_eq!(
            result["tools"][0],
            json!({"name": "t", "title": "T", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}})
        );
        downgrade(result.as_object_mut().unwrap(), "2025-03-26");
        assert_eq!(
            result,
            json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
        );
    }

    #[test]
    fn a_call_result_encoded_for_a_dated_client_is_the_downgraded_modern_one() {
        use crate::wire::ResultMeta;
        let info = std::sync::Arc::new(Implementation::new("s", "1"));
        let results = [
            CallToolResult::structured(json!({"sum": 8})),
            CallToolResult::text("plain"),
            CallToolResult::error("failed").with_meta(
                ResultMeta::server(info.clone())
                    .with_entry("rs.typed-mcp/argumentErrors", json!([{"path": "a"}])),
            ),
            CallToolResult::content(Vec::new())
                .with_meta(ResultMeta::server(info.clone()).with_subscription_id(3.into())),
            CallToolResult::structured(json!([1, "two"]))
                .with_meta(ResultMeta::default().with_entry(meta_keys::SERVER_INFO, json!({}))),
        ];
        let id = RequestId::from("call-1");
        for mut result in results {
            result.result_type = crate::wire::ResultType::Complete;
            if result.meta.server_info.is_none() && result.meta.other.is_empty() {
                result.meta.server_info = Some(info.clone());
            }
            let modern = crate::encode::result(&id, &result);
            for version in LEGACY_VERSIONS {
                let expected: Value =
                    serde_json::from_slice(&downgrade_message(&modern, version)).unwrap();
                let direct = encode_call_result(&id, &result, version);
                let text = String::from_utf8(direct).unwrap();
                // The same members (a map compares regardless of order: the
                // downgrade's removals reorder what is left).
                assert_eq!(
                    serde_json::from_str::<Value>(&text).unwrap(),
                    expected,
                    "{version}"
                );
                assert!(!text.contains("resultType"), "{text}");
                assert!(!text.contains(meta_keys::SERVER_INFO), "{text}");
                // The modern encoding's order, less what the revision lacks.
                if version >= &"2025-06-18" && expected["result"].get("structuredContent").is_some()
                {
                    assert!(text.find("\"content\"") < text.find("\"structuredContent\""));
                }
            }
            assert_eq!(
                encode_call_result(&id, &result, crate::PROTOCOL_VERSION),
                modern
            );
        }
    }

    #[test]
    fn other_meta_keys_stay_and_modern_results_are_untouched() {
        let message = br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"k":1,"io.modelcontextprotocol/serverInfo":{}}}}"#;
        let legacy = downgrade_message(message, "2025-11-25");
        assert_eq!(
            serde_json::from_slice::<Value>(&legacy).unwrap(),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"_meta": {"k": 1}}})
        );
        assert!(matches!(
            downgrade_message(message, "2026-07-28"),
            Cow::Borrowed(_)
        ));
        let error = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}"#;
        assert!(matches!(
            downgrade_message(error, "2025-11-25"),
            Cow::Borrowed(_)
        ));
    }
}
