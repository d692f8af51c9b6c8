//! Routes arbitrary bytes, with or without HTTP headers, over a catalog with
//! tools (one mirroring arguments into `Mcp-Param-*` headers), a static
//! resource, resource templates and prompts.
//!
//! Input format (so seeds stay readable): an input starting with
//! `@session <version>\n` is routed on a legacy session of that dated revision
//! (the line is then dropped). When the rest holds a blank line (`\n\n`), the
//! lines before it are `Name: value` headers (the request came over HTTP) and
//! the rest is the message; otherwise the whole input is the message and there
//! are no headers (stdio).
//!
//! Properties: `route` never panics; an `Answer` is one JSON-RPC response object
//! (`"jsonrpc": "2.0"`, exactly one of `result`/`error`) whose `id` is the
//! request's when the request had a readable id, and absent otherwise; `Invoke`
//! only for a JSON object with a string `method` and an id; `Drop` only for a
//! message without an id, or on a session for a response; `Initialize` only
//! for an `initialize` request; `Session` only on a session.
//! Where the plain-call shortcut decides (a `tools/call` outside a session,
//! with or without headers), it decides exactly as the full parse does.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use typed_mcp_core::catalog::{
    Catalog, CatalogOptions, ParameterDoc, PromptEntry, ResourceEntry, TemplateEntry, ToolEntry,
};
use typed_mcp_core::guard::depth_exceeds;
use typed_mcp_core::router::{Decision, RouteContext, Router};
use typed_mcp_core::wire::{CacheHint, Implementation};
use typed_mcp_core::{Limits, SessionFacts};

fn router() -> &'static Router {
    static ROUTER: OnceLock<Router> = OnceLock::new();
    ROUTER.get_or_init(|| {
        let tool = |value: Value| ToolEntry::new(serde_json::from_value(value).expect("tool"));
        let echo = tool(json!({
            "name": "echo",
            "description": "Return the text.",
            "inputSchema": {"type": "object", "properties": {
                "text": {"type": "string", "description": "The text."}
            }}
        }));
        let mut needs_sampling = tool(json!({
            "name": "needs_sampling",
            "description": "A tool that needs the client's sampling capability.",
            "inputSchema": {"type": "object"}
        }));
        needs_sampling = needs_sampling.with_required_client_capability("sampling");
        let regional = tool(json!({
            "name": "regional",
            "description": "A tool whose arguments are mirrored into Mcp-Param headers.",
            "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "description": "Where.", "x-mcp-header": "Region"},
                "count": {"type": "integer", "description": "How many.", "x-mcp-header": "Count"},
                "dry_run": {"type": "boolean", "description": "Pretend.", "x-mcp-header": "Dry-Run"},
                "options": {"type": "object", "description": "Nested options.", "properties": {
                    "zone": {"type": "string", "description": "Zone.", "x-mcp-header": "Zone"}
                }}
            }}
        }));
        let readme = ResourceEntry::new(
            serde_json::from_value(json!({
                "uri": "test://static/readme", "name": "readme", "description": "A static text."
            }))
            .expect("resource"),
        )
        .with_cache(CacheHint::PRIVATE_NOW);
        let template = |uri: &str, name: &str, parameter: &str| {
            TemplateEntry::new(
                serde_json::from_value(json!({
                    "uriTemplate": uri, "name": name, "description": "A template."
                }))
                .expect("template"),
            )
            .with_parameter(ParameterDoc::new(parameter, Some("The parameter.".into())))
            .with_cache(CacheHint::PRIVATE_NOW)
            .with_completion()
        };
        let greet = PromptEntry::new(
            serde_json::from_value(json!({
                "name": "greet", "description": "Greet someone.",
                "arguments": [
                    {"name": "name", "description": "Who to greet.", "required": true},
                    {"name": "mood", "description": "How.", "required": false}
                ]
            }))
            .expect("prompt"),
        )
        .with_completion();
        let catalog = Catalog::build(
            CatalogOptions::new(Implementation::new("fuzz-fixture", "0.0.1")),
            vec![echo, needs_sampling, regional],
            vec![readme],
            vec![
                template("test://template/{id}/data", "data", "id"),
                template("test://files/{+path}", "files", "path"),
            ],
            vec![greet],
        )
        .expect("the fixture catalog builds");
        Router::new(catalog, Limits::default())
    })
}

/// The top-level members of an object, duplicates kept.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                    out.push(entry);
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// What an independent reading of the message finds.
struct Reading {
    /// The message is one JSON object (within the depth limit, no duplicate
    /// top-level member).
    object: Option<Value>,
    /// Its `id` when it is a string or a canonical integer.
    id: Option<Value>,
    /// The object's members read, but not every value: a number beyond
    /// `f64` (e.g. `1e7890`) is valid JSON text that no `Value` holds. The
    /// router reads the id then unless the number is in a member it decodes
    /// (`params`), so the echoed id may be the id or absent.
    id_uncertain: bool,
}

fn read(message: &[u8], limits: Limits) -> Reading {
    let none = Reading {
        object: None,
        id: None,
        id_uncertain: false,
    };
    if message.len() > limits.max_message_bytes
        || depth_exceeds(message, limits.max_depth).is_some()
    {
        return none;
    }
    let parse = |bytes: &[u8]| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        de.disable_recursion_limit();
        Value::deserialize(&mut de)
            .and_then(|v| de.end().map(|()| v))
            .ok()
    };
    let value = parse(message);
    if value.as_ref().is_some_and(|v| !v.is_object()) {
        return none;
    }
    let Ok(Members(members)) = serde_json::from_slice::<Members>(message) else {
        return none;
    };
    // A repeated envelope member makes the message ambiguous; a repeated
    // member the router skips does not (it reads the id all the same).
    const ENVELOPE: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];
    let mut names: Vec<&str> = members
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| ENVELOPE.contains(k))
        .collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return none;
    }
    let id = members
        .iter()
        .find(|(k, _)| k == "id")
        .and_then(|(_, raw)| {
            let text = raw.get();
            let digits = text.strip_prefix('-').unwrap_or(text);
            let integer = !digits.is_empty()
                && digits.len() <= 308 // the router refuses wider integer ids
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits == "0" || !digits.starts_with('0'));
            match serde_json::from_str::<Value>(text).ok()? {
                v @ Value::String(_) => Some(v),
                v @ Value::Number(_) if integer => Some(v),
                _ => None,
            }
        });
    let id_uncertain = value.is_none();
    Reading {
        object: value,
        id,
        id_uncertain,
    }
}

/// The echoed id is the request's (or absent, where the reading is uncertain).
fn check_id(body: &Value, reading: &Reading) {
    let echoed = body.get("id");
    let ok = echoed == reading.id.as_ref() || (reading.id_uncertain && echoed.is_none());
    assert!(
        ok,
        "the echoed id {echoed:?}, the request's {:?}: {body:?}",
        reading.id
    );
}

fuzz_target!(|data: &[u8]| {
    let (session, data) = match data.strip_prefix(b"@session ") {
        Some(rest) => {
            let end = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
            let version = String::from_utf8_lossy(&rest[..end]).into_owned();
            (
                Some(SessionFacts::stateless(version)),
                &rest[(end + 1).min(rest.len())..],
            )
        }
        None => (None, data),
    };
    let (headers, message): (Option<Vec<(String, String)>>, &[u8]) =
        match data.windows(2).position(|w| w == b"\n\n") {
            Some(split) => {
                let head = String::from_utf8_lossy(&data[..split]);
                let headers = head
                    .lines()
                    .map(|line| match line.split_once(':') {
                        Some((name, value)) => (name.trim().to_owned(), value.to_owned()),
                        None => (line.trim().to_owned(), String::new()),
                    })
                    .collect();
                (Some(headers), &data[split + 2..])
            }
            None => (None, data),
        };
    let router = router();
    let facts = RouteContext {
        headers: headers
            .as_ref()
            .map(|h| h as &dyn typed_mcp_core::router::Headers),
        lists: None,
        session: session.as_ref(),
    };
    // The plain-call shortcut decides exactly as the full parse would.
    if let Some((plain, parsed)) = router.plain_call_beside_full_parse(message, &facts) {
        assert_eq!(
            plain, parsed,
            "the plain-call path and the full parse differ"
        );
    }
    let decision = router.route(message, &facts);
    let reading = read(message, router.limits());
    match decision {
        Decision::Respond(answer) => {
            let body: Value = serde_json::from_slice(&answer.body).expect("an answer is JSON");
            let body = body.as_object().expect("an answer is a JSON object");
            assert_eq!(body.get("jsonrpc"), Some(&json!("2.0")), "{body:?}");
            assert!(
                body.contains_key("result") != body.contains_key("error"),
                "exactly one of result and error: {body:?}"
            );
            if let Some(error) = body.get("error") {
                assert!(error["code"].is_i64(), "error.code is an integer: {body:?}");
                assert!(
                    error["message"].is_string(),
                    "error.message is a string: {body:?}"
                );
            }
            check_id(&Value::Object(body.clone()), &reading);
        }
        Decision::Invoke(call) => {
            if let Some(object) = &reading.object {
                assert!(
                    object["method"].is_string(),
                    "Invoke only with a string method"
                );
            } else {
                assert!(reading.id_uncertain, "Invoke only for a JSON object");
            }
            let id = reading.id.expect("Invoke only with an id");
            assert_eq!(call.id.to_value(), id);
        }
        Decision::Drop(_) => {
            if let Some(object) = reading.object {
                let response = object.get("method").is_none()
                    && (object.get("result").is_some() || object.get("error").is_some());
                assert!(
                    object.get("id").is_none() || (session.is_some() && response),
                    "Drop only without an id, or a response on a session: {object:?}"
                );
            }
        }
        Decision::Initialize(handshake) => {
            if let Some(object) = &reading.object {
                assert_eq!(object["method"], json!("initialize"));
            } else {
                assert!(reading.id_uncertain, "Initialize only for a JSON object");
            }
            let body: Value =
                serde_json::from_slice(&handshake.response.body).expect("an answer is JSON");
            check_id(&body, &reading);
        }
        Decision::Session(update) => {
            assert!(session.is_some(), "a session change without a session");
            let body: Value =
                serde_json::from_slice(&update.response.body).expect("an answer is JSON");
            check_id(&body, &reading);
        }
    }
});
