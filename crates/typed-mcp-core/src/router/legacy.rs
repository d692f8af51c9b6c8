//! The legacy ladder: messages of the dated revisions (see
//! [`crate::legacy`]), after the shared rungs (size, depth, parse, JSON-RPC
//! shape, notifications).
//!
//! Every error of this ladder is answered with HTTP 200: a dated client reads
//! HTTP 404 as "session not found" and 400 as a transport failure, while the
//! error itself is a JSON-RPC one.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::{
    AnsweredRequest, Call, Decision, Refusal, Response, RouteContext, Router, Target, answer_raw,
    finish_meta, not_offered, params_error, required_string,
};
use crate::catalog::Kind;
use crate::legacy::{
    ClientResponse, Handshake, LATEST_LEGACY_VERSION, SessionChange, SessionFacts, SessionUpdate,
    downgrade_message, is_legacy_version, negotiate,
};
use crate::wire::{
    CallToolResult, ClientCapabilities, Implementation, LoggingLevel, ServerCapabilities,
    meta_keys, methods,
};
use crate::{RequestId, RpcError, SUPPORTED_VERSIONS, encode};

/// How a legacy message reached the router.
pub(super) enum Era<'c> {
    /// `initialize`, which opens a session.
    Opening,
    /// A message of an open session.
    Session(&'c SessionFacts),
    /// A message of a dated revision without a session (a dated
    /// `MCP-Protocol-Version` header, or a session id the transport does not
    /// keep): served statelessly, with no client capabilities.
    Stateless(Box<SessionFacts>),
}

impl Era<'_> {
    fn facts(&self) -> Option<&SessionFacts> {
        match self {
            Era::Opening => None,
            Era::Session(facts) => Some(facts),
            Era::Stateless(facts) => Some(facts),
        }
    }
}

impl Router {
    /// Rung 7, the era: `None` for a 2026-07-28 message. A message with the
    /// 2026-07-28 envelope (`_meta` naming its protocol version, which no
    /// dated client sends) or a 2026-07-28 version header is modern, whatever
    /// its method: such an `initialize` is refused as a removed method.
    pub(super) fn era<'c>(
        &self,
        method: &str,
        params: Option<&Map<String, Value>>,
        context: &RouteContext<'c>,
    ) -> Option<Era<'c>> {
        if !self.legacy {
            return None;
        }
        let enveloped = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
            .is_some_and(|meta| meta.contains_key(meta_keys::PROTOCOL_VERSION));
        let header = context
            .headers
            .and_then(|h| h.get("mcp-protocol-version"))
            .map(str::trim);
        if enveloped || header.is_some_and(|v| SUPPORTED_VERSIONS.contains(&v)) {
            return None;
        }
        if let Some(facts) = context.session {
            return Some(Era::Session(facts));
        }
        if method == methods::INITIALIZE {
            return Some(Era::Opening);
        }
        if let Some(version) = header.filter(|v| is_legacy_version(v)) {
            return Some(Era::Stateless(Box::new(SessionFacts::stateless(version))));
        }
        // A session id names a dated session even without a version header
        // (2025-03-26 sends none).
        let session_id = context.headers.and_then(|h| h.get("mcp-session-id"));
        if session_id.is_some() && header.is_none() {
            return Some(Era::Stateless(Box::new(SessionFacts::stateless(
                LATEST_LEGACY_VERSION,
            ))));
        }
        None
    }

    /// The legacy ladder. Its refusals are answered with HTTP 200 (see the
    /// module docs).
    pub(super) fn route_legacy(
        &self,
        seen: &mut AnsweredRequest,
        params: &mut Option<Map<String, Value>>,
        message: &[u8],
        context: &RouteContext<'_>,
        era: Era<'_>,
    ) -> Result<Decision, Refusal> {
        // A dated client that sends the version header sends the session's;
        // any other is a bad request (HTTP 400, as the dated transport says).
        if let Era::Session(facts) = &era
            && let Some(header) = context
                .headers
                .and_then(|h| h.get("mcp-protocol-version"))
                .map(str::trim)
            && header != facts.protocol_version
        {
            seen.protocol_version = Some(facts.protocol_version.clone());
            return Err((
                RpcError::invalid_request(format!(
                    "MCP-Protocol-Version header {header:?} does not match the session's revision {:?}",
                    facts.protocol_version
                )),
                400,
            ));
        }
        self.legacy_ladder(seen, params, message, context, era)
            .map_err(|(error, _)| (error, 200))
    }

    fn legacy_ladder(
        &self,
        seen: &mut AnsweredRequest,
        params: &mut Option<Map<String, Value>>,
        message: &[u8],
        context: &RouteContext<'_>,
        era: Era<'_>,
    ) -> Result<Decision, Refusal> {
        let method = seen.method.as_str();
        let mut empty = Map::new();
        let params = params.as_mut().unwrap_or(&mut empty);
        let Some(facts) = era.facts() else {
            return Ok(self.handshake(seen, params));
        };
        let version = facts.protocol_version.as_str();
        seen.protocol_version = Some(version.to_owned());
        let id = &seen.id;
        let stateless = matches!(era, Era::Stateless(_));
        // The pages are kept in the newest dated shape; an older revision's
        // is made from it per request.
        let list = |kind: Kind| match self.list_page(id, kind, params, context.lists, true)? {
            Decision::Respond(mut response) if version != LATEST_LEGACY_VERSION => {
                if let Cow::Owned(shaped) = downgrade_message(&response.body, version) {
                    response.body = shaped;
                }
                Ok(Decision::Respond(response))
            }
            decision => Ok(decision),
        };
        if let Some(offered) = self.shared_method(method) {
            if let Some(kind) = offered? {
                return list(kind);
            }
        } else {
            return self.legacy_only(seen, params, stateless, version);
        }

        // The envelope of a dated request is optional: `_meta` carries the
        // progress token and trace context only.
        let other = match params.remove("_meta") {
            None => Map::new(),
            Some(Value::Object(meta)) => meta,
            Some(_) => return Err(params_error("params._meta must be an object")),
        };
        let mut meta = finish_meta(version.to_owned(), Map::new(), None, other, message)?;
        meta.client_capabilities = Box::new(facts.client_capabilities.clone());
        meta.client_info = facts.client_info.clone().map(Box::new);
        meta.log_level = facts.log_level;
        seen.traceparent.clone_from(&meta.traceparent);
        seen.tracestate.clone_from(&meta.tracestate);

        let declared = &mut seen.declaration;
        let target = match method {
            methods::TOOLS_CALL => self.tool_target(params, None, declared)?,
            methods::RESOURCES_READ => self.resource_target(params, declared)?,
            methods::PROMPTS_GET => self.prompt_target(params, declared)?,
            _ => self.completion_target(params)?,
        };
        if let Target::Tool { index, .. } = &target
            && let Err((error, _)) = self.check_client_capabilities(*index, &meta)
        {
            // A dated client knows no -32021: the model reads a tool error.
            seen.error_code = None;
            let body = encode::result(
                id,
                &CallToolResult::error(format!(
                    "{} (this client did not declare it at initialize)",
                    error.message
                )),
            );
            return Ok(Decision::Respond(Response {
                body: downgrade_message(&body, version).into_owned(),
                http_status: 200,
                request: None,
            }));
        }
        let id = seen.id.clone();
        Ok(Decision::Invoke(Box::new(Call {
            id,
            meta,
            target,
            input_responses: None,
            request_state: None,
        })))
    }

    /// The methods only the dated revisions have (and the 2026-07-28 ones
    /// they lack), answered or refused here.
    fn legacy_only(
        &self,
        seen: &AnsweredRequest,
        params: &mut Map<String, Value>,
        stateless: bool,
        version: &str,
    ) -> Result<Decision, Refusal> {
        let (id, method) = (&seen.id, seen.method.as_str());
        match method {
            methods::INITIALIZE => Err((
                RpcError::invalid_request(
                    "this session is already initialized: initialize is sent once, first",
                ),
                400,
            )),
            methods::PING => Ok(answer_raw(id, "{}")),
            methods::SET_LEVEL => {
                let level = required_string(params, "level")?;
                let level = LoggingLevel::parse(&level).ok_or_else(|| {
                    params_error(format!(
                        "{level:?} is not a log level (debug, info, notice, warning, error, critical, alert, emergency)"
                    ))
                })?;
                session_update(id, stateless, method, SessionChange::LogLevel(level))
            }
            methods::RESOURCES_SUBSCRIBE | methods::RESOURCES_UNSUBSCRIBE => {
                if self.catalog.capabilities.resources.is_none() {
                    return Err(not_offered(method, "resources"));
                }
                let uri = required_string(params, "uri")?;
                if method == methods::RESOURCES_UNSUBSCRIBE {
                    return session_update(id, stateless, method, SessionChange::Unsubscribe(uri));
                }
                if !self.catalog.serves_uri(&uri) {
                    return Err((RpcError::resource_not_found(&uri), 200));
                }
                session_update(id, stateless, method, SessionChange::Subscribe(uri))
            }
            methods::DISCOVER | methods::SUBSCRIPTIONS_LISTEN => Err((
                RpcError::method_not_found(format!(
                    "{method} is not part of MCP revision {version}: it is a 2026-07-28 method, and this session speaks {version}"
                )),
                404,
            )),
            m => Err((
                RpcError::method_not_found(format!("unknown method {m:?}")),
                404,
            )),
        }
    }

    /// Answers `initialize`: the negotiated revision, the capabilities the
    /// catalog announces (as `server/discover` does) plus logging, and the
    /// server's identity.
    fn handshake(&self, seen: &mut AnsweredRequest, params: &mut Map<String, Value>) -> Decision {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = negotiate(requested);
        seen.protocol_version = Some(version.to_owned());
        // What the client declared: lenient, as a malformed member must not
        // keep a client from connecting; an unreadable one reads as absent.
        let client_capabilities = params
            .remove("capabilities")
            .and_then(|c| serde_json::from_value::<ClientCapabilities>(c).ok())
            .unwrap_or_default();
        let client_info = params
            .remove("clientInfo")
            .and_then(|c| serde_json::from_value::<Implementation>(c).ok());
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.legacy_capabilities(),
            "serverInfo": &**self.catalog.server_info(),
        });
        if let Some(instructions) = &self.catalog.instructions {
            result["instructions"] = json!(instructions);
        }
        let mut response = Response {
            body: encode::result(&seen.id, &result),
            http_status: 200,
            request: None,
        };
        response.request = Some(Box::new(seen.clone()));
        Decision::Initialize(Box::new(Handshake {
            session: SessionFacts {
                protocol_version: version.to_owned(),
                client_capabilities,
                client_info,
                log_level: None,
            },
            response,
        }))
    }

    /// The capabilities `initialize` announces: the catalog's, with logging
    /// (dated clients set a level), without what only 2026-07-28 defines.
    fn legacy_capabilities(&self) -> ServerCapabilities {
        let mut caps = self.catalog.capabilities.clone();
        caps.extensions = None;
        caps.logging.get_or_insert_with(Map::new);
        caps
    }
}

/// The answer to a request that changes the session, or a plain refusal
/// when there is no session to change.
fn session_update(
    id: &RequestId,
    stateless: bool,
    method: &str,
    change: SessionChange,
) -> Result<Decision, Refusal> {
    if stateless {
        return Err((
            RpcError::invalid_request(format!(
                "{method} needs a session, and this request came without one (initialize first and send its Mcp-Session-Id)"
            )),
            400,
        ));
    }
    Ok(Decision::Session(Box::new(SessionUpdate {
        change,
        response: Response {
            body: encode::result_raw(id, "{}"),
            http_status: 200,
            request: None,
        },
    })))
}

/// The client's response to a request the server sent, as read from its raw
/// `result` or `error` member.
pub(super) fn client_response(
    id: RequestId,
    result: Option<&RawValue>,
    error: Option<&RawValue>,
) -> ClientResponse {
    let outcome = match (result, error) {
        (Some(result), None) => serde_json::from_str::<Value>(result.get()).map_err(|e| {
            RpcError::invalid_request(format!("the response's result is unreadable: {e}"))
        }),
        (_, Some(error)) => Err(read_error(error.get())),
        (None, None) => Err(RpcError::invalid_request(
            "the response has neither result nor error",
        )),
    };
    ClientResponse { id, outcome }
}

fn read_error(raw: &str) -> RpcError {
    let value: Value = serde_json::from_str(raw).unwrap_or(Value::Null);
    let code = value
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .unwrap_or(crate::code::INTERNAL_ERROR);
    let message = value
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the client answered with an error");
    let mut error = RpcError::new(code, message);
    if let Some(data) = value.get("data") {
        error = error.with_data(data.clone());
    }
    error
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::catalog::{Catalog, CatalogOptions, ResourceEntry, ToolEntry};
    use crate::legacy::{SessionChange, SessionFacts};
    use crate::router::{Decision, Dropped, RouteContext, Router};
    use crate::wire::{Implementation, LoggingLevel, Resource, Tool};
    use crate::{Limits, RequestId};

    fn router() -> Router {
        let tool = |name: &str| {
            ToolEntry::new(
                Tool::new(name, json!({"type": "object"})).with_description("A session fixture."),
            )
        };
        let resource = ResourceEntry::new(
            serde_json::from_value::<Resource>(
                json!({"uri": "test://r", "name": "r", "description": "A resource."}),
            )
            .unwrap(),
        );
        let catalog = Catalog::build(
            CatalogOptions::new(Implementation::new("sessions", "0.1.0")),
            vec![
                tool("plain"),
                tool("asks").with_required_client_capability("sampling"),
            ],
            vec![resource],
            vec![],
            vec![],
        )
        .unwrap();
        Router::new(catalog, Limits::default())
    }

    fn facts() -> SessionFacts {
        let mut facts = SessionFacts::stateless("2025-06-18");
        facts.log_level = Some(LoggingLevel::Warning);
        facts
    }

    fn on_session(
        router: &Router,
        message: Value,
        headers: Option<Vec<(String, String)>>,
    ) -> Decision {
        let facts = facts();
        let context = RouteContext {
            headers: headers.as_ref().map(|h| h as &dyn crate::router::Headers),
            lists: None,
            session: Some(&facts),
        };
        router.route(&serde_json::to_vec(&message).unwrap(), &context)
    }

    fn answered(decision: Decision) -> (Value, u16) {
        match decision {
            Decision::Respond(r) => (serde_json::from_slice(&r.body).unwrap(), r.http_status),
            other => panic!("expected an answer, got {other:?}"),
        }
    }

    #[test]
    fn a_call_on_a_session_carries_the_session_facts_and_its_own_meta() {
        let decision = on_session(
            &router(),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "plain", "arguments": {}, "_meta": {"progressToken": 9, "custom": true}}}),
            None,
        );
        let Decision::Invoke(call) = decision else {
            panic!("expected a call, got {decision:?}");
        };
        assert_eq!(call.meta.protocol_version, "2025-06-18");
        assert_eq!(call.meta.log_level, Some(LoggingLevel::Warning));
        assert_eq!(call.meta.progress_token, Some(RequestId::integer(9)));
        assert_eq!(call.meta.other.get("custom"), Some(&json!(true)));
    }

    #[test]
    fn responses_reach_the_session_and_are_refused_without_one() {
        let router = router();
        let ok = json!({"jsonrpc": "2.0", "id": 5, "result": {"action": "decline"}});
        match on_session(&router, ok.clone(), None) {
            Decision::Drop(Dropped::Response(r)) => {
                assert_eq!(r.id, RequestId::integer(5));
                assert_eq!(r.outcome, Ok(json!({"action": "decline"})));
            }
            other => panic!("{other:?}"),
        }
        let failed = json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -1, "message": "no"}});
        match on_session(&router, failed, None) {
            Decision::Drop(Dropped::Response(r)) => {
                let error = r.outcome.unwrap_err();
                assert_eq!((error.code, error.message.as_str()), (-1, "no"));
            }
            other => panic!("{other:?}"),
        }
        let (body, status) =
            answered(router.route(&serde_json::to_vec(&ok).unwrap(), &RouteContext::NONE));
        assert_eq!(
            (body["error"]["code"].clone(), status),
            (json!(-32600), 400)
        );
    }

    #[test]
    fn session_changes_are_decided_and_bad_ones_refused_with_200() {
        let router = router();
        let set = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "debug"}});
        match on_session(&router, set, None) {
            Decision::Session(update) => {
                assert_eq!(update.change, SessionChange::LogLevel(LoggingLevel::Debug));
            }
            other => panic!("{other:?}"),
        }
        let subscribe = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "test://r"}});
        assert!(matches!(
            on_session(&router, subscribe, None),
            Decision::Session(_)
        ));
        let unknown = json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": {"uri": "test://nope"}});
        let (body, status) = answered(on_session(&router, unknown, None));
        assert_eq!(
            (body["error"]["code"].clone(), status),
            (json!(-32602), 200)
        );
        assert_eq!(body["error"]["data"]["uri"], "test://nope");
        let loud = json!({"jsonrpc": "2.0", "id": 4, "method": "logging/setLevel", "params": {"level": "loud"}});
        let (body, status) = answered(on_session(&router, loud, None));
        assert_eq!(
            (body["error"]["code"].clone(), status),
            (json!(-32602), 200)
        );
    }

    #[test]
    fn a_missing_client_capability_is_a_tool_error_and_a_foreign_version_header_a_400() {
        let router = router();
        let call =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "asks"}});
        let (body, status) = answered(on_session(&router, call.clone(), None));
        assert_eq!(status, 200);
        assert_eq!(body["result"]["isError"], true, "{body}");
        assert!(body["result"].get("resultType").is_none(), "{body}");
        let header = vec![("MCP-Protocol-Version".to_owned(), "2025-11-25".to_owned())];
        let (body, status) = answered(on_session(&router, call, Some(header)));
        assert_eq!(
            (body["error"]["code"].clone(), status),
            (json!(-32600), 400)
        );
    }
}
