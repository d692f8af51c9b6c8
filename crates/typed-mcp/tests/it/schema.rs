//! The official 2026-07-28 JSON schema as an oracle for every message a test
//! receives.
//!
//! The schema is read from `$MCP_SCHEMA`, or from `../shared/spec` next to the
//! repository. An explicit `MCP_SCHEMA` that cannot be read is a hard failure;
//! a missing default only skips the checks (with one line on stderr), so the
//! suite still runs where the shared directory is absent.
//!
//! Each message is checked against the most specific definition the schema
//! has for it (see [`definition_for`]). Validators are compiled lazily, once
//! per definition, from a small wrapper document that `$ref`s into the
//! official `$defs`, so nothing is ever fetched from the network.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use jsonschema::Validator;
use serde_json::{Value, json};
use typed_mcp::Server;
use typed_mcp_client::testing::TestClient;

const ENV: &str = "MCP_SCHEMA";
const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Every definition a message can be checked against. Each must exist in the
/// schema's `$defs`; loading the schema fails loudly otherwise.
const DEFINITIONS: &[&str] = &[
    "UnsupportedProtocolVersionError",
    "HeaderMismatchError",
    "MissingRequiredClientCapabilityError",
    "JSONRPCErrorResponse",
    "DiscoverResultResponse",
    "ListToolsResultResponse",
    "CallToolResultResponse",
    "ListResourcesResultResponse",
    "ListResourceTemplatesResultResponse",
    "ReadResourceResultResponse",
    "ListPromptsResultResponse",
    "GetPromptResultResponse",
    "CompleteResultResponse",
    "JSONRPCResultResponse",
    "ProgressNotification",
    "LoggingMessageNotification",
    "JSONRPCNotification",
    // Wire types the runtime does not send yet, checked by `wire_types`.
    "SubscriptionsListenResultResponse",
    "CancelledNotification",
    "SubscriptionsAcknowledgedNotification",
    "ToolListChangedNotification",
    "PromptListChangedNotification",
    "ResourceListChangedNotification",
    "ResourceUpdatedNotification",
    "InvalidParamsError",
    "MethodNotFoundError",
    "CallToolRequest",
    "ListToolsRequest",
    "ReadResourceRequest",
    "GetPromptRequest",
    "CompleteRequest",
    "SubscriptionsListenRequest",
    "ElicitResult",
    "CreateMessageResult",
    "ListRootsResult",
];

struct Schema {
    path: PathBuf,
    defs: Value,
    /// One slot per entry of [`DEFINITIONS`], compiled on first use.
    validators: Vec<OnceLock<Validator>>,
}

/// The loaded schema, or `None` when the default path is absent.
fn schema() -> Option<&'static Schema> {
    // `get_or_init` runs `load` once per process, so the "skipped" line is
    // printed once. A panicking `load` leaves the cell empty: every test that
    // needs the schema then fails with the same loud message.
    static SCHEMA: OnceLock<Option<Schema>> = OnceLock::new();
    SCHEMA.get_or_init(load).as_ref()
}

fn load() -> Option<Schema> {
    let (path, explicit) = match std::env::var_os(ENV) {
        Some(path) => (PathBuf::from(path), true),
        None => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/spec/schema-2026-07-28.json"),
            false,
        ),
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if explicit => panic!(
            "{ENV} is set to {} but the schema cannot be read: {e}",
            path.display()
        ),
        Err(e) => {
            // Written to the process's stderr directly: `eprintln!` inside a
            // test is captured by the harness and shown only on failure.
            let _ = writeln!(
                std::io::stderr(),
                "note: official MCP schema checks skipped: {} is unreadable ({e}); set {ENV} to the schema's path to enable them",
                path.display()
            );
            return None;
        }
    };
    let mut document: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the schema at {} is not JSON: {e}", path.display()));
    let defs = match document.get_mut("$defs").map(Value::take) {
        Some(Value::Object(defs)) => defs,
        _ => panic!("the schema at {} has no $defs object", path.display()),
    };
    let absent: Vec<&str> = DEFINITIONS
        .iter()
        .copied()
        .filter(|d| !defs.contains_key(*d))
        .collect();
    assert!(
        absent.is_empty(),
        "the schema at {} lacks the definitions {absent:?}",
        path.display()
    );
    Some(Schema {
        path,
        defs: Value::Object(defs),
        validators: DEFINITIONS.iter().map(|_| OnceLock::new()).collect(),
    })
}

impl Schema {
    fn validator(&self, definition: &str) -> &Validator {
        let slot = DEFINITIONS
            .iter()
            .position(|d| *d == definition)
            .unwrap_or_else(|| panic!("{definition} is not in DEFINITIONS"));
        self.validators[slot].get_or_init(|| {
            let wrapper = json!({
                "$schema": DRAFT,
                "$ref": format!("#/$defs/{definition}"),
                "$defs": self.defs,
            });
            // Formats are asserted too (`uri`, `uri-template`): stricter than
            // the annotation-only default of draft 2020-12.
            jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&wrapper)
                .unwrap_or_else(|e| {
                    panic!(
                        "the schema at {} does not compile for {definition}: {e}",
                        self.path.display()
                    )
                })
        })
    }
}

/// The schema definition a message from the server must satisfy, given the
/// method of the request it answers (`None` when the request had no readable
/// method).
pub fn definition_for(request_method: Option<&str>, message: &Value) -> &'static str {
    if let Some(error) = message.get("error") {
        return match error.get("code").and_then(Value::as_i64) {
            Some(-32022) => "UnsupportedProtocolVersionError",
            Some(-32020) => "HeaderMismatchError",
            Some(-32021) => "MissingRequiredClientCapabilityError",
            _ => "JSONRPCErrorResponse",
        };
    }
    if message.get("result").is_some() {
        return match request_method {
            Some("server/discover") => "DiscoverResultResponse",
            Some("tools/list") => "ListToolsResultResponse",
            Some("tools/call") => "CallToolResultResponse",
            Some("resources/list") => "ListResourcesResultResponse",
            Some("resources/templates/list") => "ListResourceTemplatesResultResponse",
            Some("resources/read") => "ReadResourceResultResponse",
            Some("prompts/list") => "ListPromptsResultResponse",
            Some("prompts/get") => "GetPromptResultResponse",
            Some("completion/complete") => "CompleteResultResponse",
            _ => "JSONRPCResultResponse",
        };
    }
    // A notification: chosen by its own method.
    match message.get("method").and_then(Value::as_str) {
        Some("notifications/progress") => "ProgressNotification",
        Some("notifications/message") => "LoggingMessageNotification",
        _ => "JSONRPCNotification",
    }
}

/// Every violation of `definition` by `message`, or `None` when the schema is
/// not available.
pub fn violations(definition: &str, message: &Value) -> Option<Vec<String>> {
    let validator = schema()?.validator(definition);
    Some(
        validator
            .iter_errors(message)
            .map(|e| format!("at {:?}: {e}", e.instance_path().to_string()))
            .collect(),
    )
}

/// Panics, naming the definition and every error, when `message` violates the
/// definition chosen by [`definition_for`]. Does nothing without the schema.
#[track_caller]
pub fn check(request_method: Option<&str>, message: &Value) {
    let definition = definition_for(request_method, message);
    if let Some(errors) = violations(definition, message)
        && !errors.is_empty()
    {
        panic!(
            "message violates the official schema's {definition} (request method {request_method:?}):\n{message}\n{}",
            errors.join("\n")
        );
    }
}

/// True when the official schema was found and checks run.
pub fn available() -> bool {
    schema().is_some()
}

/// A test client that checks every message it receives against the schema.
pub fn client(server: Server) -> TestClient {
    TestClient::new(server).with_inspector(Arc::new(check))
}

/// Like [`client`], declaring these client capabilities on every request.
pub fn client_with_capabilities(server: Server, capabilities: Value) -> TestClient {
    client(server).with_capabilities(capabilities)
}

#[test]
fn the_validator_rejects_an_invalid_message() {
    if !available() {
        return;
    }
    let valid = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "complete",
            "tools": [],
            "ttlMs": 0,
            "cacheScope": "private"
        }
    });
    assert_eq!(
        violations("ListToolsResultResponse", &valid),
        Some(vec![]),
        "the valid control message must pass"
    );

    let mut without_ttl = valid.clone();
    without_ttl["result"]
        .as_object_mut()
        .unwrap()
        .remove("ttlMs");
    let errors = violations("ListToolsResultResponse", &without_ttl).unwrap();
    assert!(!errors.is_empty(), "a list result without ttlMs must fail");
    let panic = std::panic::catch_unwind(|| check(Some("tools/list"), &without_ttl))
        .expect_err("check must panic on a violation");
    let text = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("ListToolsResultResponse"), "{text}");
    assert!(text.contains("ttlMs"), "{text}");

    // Formats are asserted: a resource URI must be a URI.
    let relative = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "complete",
            "resources": [{"uri": "not a uri", "name": "r"}],
            "ttlMs": 0,
            "cacheScope": "private"
        }
    });
    assert!(
        !violations("ListResourcesResultResponse", &relative)
            .unwrap()
            .is_empty()
    );

    // The typed error definitions require their data.
    let no_data = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32022, "message": "unsupported"}
    });
    assert!(
        !violations(definition_for(None, &no_data), &no_data)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn definitions_are_chosen_by_error_code_method_and_notification() {
    let error =
        |code: i64| json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}});
    assert_eq!(
        definition_for(Some("tools/call"), &error(-32021)),
        "MissingRequiredClientCapabilityError"
    );
    assert_eq!(definition_for(None, &error(-32020)), "HeaderMismatchError");
    assert_eq!(
        definition_for(None, &error(-32022)),
        "UnsupportedProtocolVersionError"
    );
    assert_eq!(definition_for(None, &error(-32601)), "JSONRPCErrorResponse");
    let result = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
    assert_eq!(
        definition_for(Some("completion/complete"), &result),
        "CompleteResultResponse"
    );
    assert_eq!(definition_for(None, &result), "JSONRPCResultResponse");
    let note = |method: &str| json!({"jsonrpc": "2.0", "method": method, "params": {}});
    assert_eq!(
        definition_for(Some("tools/call"), &note("notifications/progress")),
        "ProgressNotification"
    );
    assert_eq!(
        definition_for(Some("tools/call"), &note("notifications/message")),
        "LoggingMessageNotification"
    );
    assert_eq!(
        definition_for(Some("tools/call"), &note("notifications/other")),
        "JSONRPCNotification"
    );
}
