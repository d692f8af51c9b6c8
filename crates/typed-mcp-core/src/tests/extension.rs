//! Extension methods on the router's ladder: served after the envelope and
//! header rungs, `Mcp-Name` against the named member, `-32021` without the
//! client's declaration, and no take-over of a core method.

use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, CatalogOptions, ToolEntry};
use crate::router::{Decision, ExtensionMethod, RouteContext, Router, Target};
use crate::wire::{Implementation, Tool};
use crate::{Limits, PROTOCOL_VERSION as VERSION};

const EXT: &str = "com.example/jobs";

fn router() -> Router {
    let tool = ToolEntry::new(
        serde_json::from_value::<Tool>(json!({
            "name": "echo",
            "description": "Return the text.",
            "inputSchema": {"type": "object"}
        }))
        .unwrap(),
    )
    .with_required_client_extension(EXT);
    let options = CatalogOptions::new(Implementation::new("ext-fixture", "0.0.1"))
        .with_extension(EXT, Map::from_iter([("level".to_owned(), json!(1))]));
    let catalog = Catalog::build(options, vec![tool], vec![], vec![], vec![]).unwrap();
    Router::new(catalog, Limits::default())
        .with_extension_method(
            ExtensionMethod::new(EXT, "jobs/get")
                .with_name_param("jobId")
                .requiring_client_extension(),
        )
        .with_extension_method(ExtensionMethod::new(EXT, "jobs/ping"))
        // Core methods stay the core's.
        .with_extension_method(ExtensionMethod::new(EXT, "tools/list"))
        .with_extension_method(ExtensionMethod::new(EXT, "server/discover"))
}

fn message(method: &str, params: Value, declared: bool) -> Vec<u8> {
    let mut params = params;
    let caps = if declared {
        json!({"extensions": {EXT: {}}})
    } else {
        json!({})
    };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps
    });
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .unwrap()
}

fn error_of(decision: Decision) -> (i64, u16, Value) {
    match decision {
        Decision::Respond(answer) => {
            let body: Value = serde_json::from_slice(&answer.body).unwrap();
            (
                body["error"]["code"]
                    .as_i64()
                    .unwrap_or_else(|| panic!("an error: {body}")),
                answer.http_status,
                body,
            )
        }
        other => panic!("expected an error answer, found {other:?}"),
    }
}

#[test]
fn an_extension_method_is_invoked_with_its_params() {
    let router = router();
    assert_eq!(
        router.extension_methods().len(),
        2,
        "core methods are not taken over"
    );
    let decision = router.route(
        &message("jobs/get", json!({"jobId": "j1", "extra": [1]}), true),
        &RouteContext::NONE,
    );
    let Decision::Invoke(call) = decision else {
        panic!("expected an invocation, found {decision:?}")
    };
    match call.target {
        Target::Extension { index, params } => {
            assert_eq!(router.extension_methods()[index].method, "jobs/get");
            assert_eq!(
                Value::Object(params),
                json!({"jobId": "j1", "extra": [1]}),
                "params without _meta"
            );
        }
        other => panic!("expected an extension target, found {other:?}"),
    }
    assert!(call.meta.client_capabilities.has_extension(EXT));
    // A method that needs no declaration is invoked without one.
    let ping = router.route(&message("jobs/ping", json!({}), false), &RouteContext::NONE);
    assert!(matches!(ping, Decision::Invoke(_)), "{ping:?}");
}

#[test]
fn an_undeclared_extension_is_missing_a_required_capability() {
    let (code, status, body) = error_of(router().route(
        &message("jobs/get", json!({"jobId": "j1"}), false),
        &RouteContext::NONE,
    ));
    assert_eq!((code, status), (-32021, 400));
    assert_eq!(
        body["error"]["data"]["requiredCapabilities"]["extensions"][EXT],
        json!({})
    );
    // The same for a tool that requires the extension.
    let (code, _, body) = error_of(router().route(
        &message("tools/call", json!({"name": "echo"}), false),
        &RouteContext::NONE,
    ));
    assert_eq!(code, -32021);
    assert!(
        body["error"]["message"].as_str().unwrap().contains("echo"),
        "{body}"
    );
    let declared = router().route(
        &message("tools/call", json!({"name": "echo"}), true),
        &RouteContext::NONE,
    );
    assert!(matches!(declared, Decision::Invoke(_)), "{declared:?}");
}

#[test]
fn mcp_name_must_mirror_the_named_member() {
    let router = router();
    let headers = |name: Option<&str>| {
        let mut h: Vec<(String, String)> = vec![
            ("MCP-Protocol-Version".into(), VERSION.into()),
            ("Mcp-Method".into(), "jobs/get".into()),
        ];
        if let Some(name) = name {
            h.push(("Mcp-Name".into(), name.into()));
        }
        h
    };
    let body = message("jobs/get", json!({"jobId": "j1"}), true);
    for bad in [None, Some("j2")] {
        let h = headers(bad);
        let context = RouteContext {
            headers: Some(&h),
            ..RouteContext::NONE
        };
        let (code, status, _) = error_of(router.route(&body, &context));
        assert_eq!((code, status), (-32020, 400), "Mcp-Name {bad:?}");
    }
    let h = headers(Some("j1"));
    let context = RouteContext {
        headers: Some(&h),
        ..RouteContext::NONE
    };
    assert!(matches!(router.route(&body, &context), Decision::Invoke(_)));
}

#[test]
fn discover_announces_the_extension_and_unknown_methods_stay_unknown() {
    let router = router();
    let Decision::Respond(answer) = router.route(
        &message("server/discover", json!({}), false),
        &RouteContext::NONE,
    ) else {
        panic!("discover is answered by the router")
    };
    let body: Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(
        body["result"]["capabilities"]["extensions"][EXT],
        json!({"level": 1})
    );
    let (code, status, _) =
        error_of(router.route(&message("jobs/list", json!({}), true), &RouteContext::NONE));
    assert_eq!((code, status), (-32601, 404));
    let listed = router.route(&message("tools/list", json!({}), true), &RouteContext::NONE);
    let Decision::Respond(answer) = listed else {
        panic!("a list page")
    };
    let body: Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(body["result"]["tools"][0]["name"], "echo");
}

/// A catalog of one tool and no resources, announcing the Tasks extension
/// when `tasks` is set.
fn tasks_router(tasks: bool) -> Router {
    let tool = ToolEntry::new(
        serde_json::from_value::<Tool>(json!({
            "name": "slow",
            "description": "Work a while.",
            "inputSchema": {"type": "object"}
        }))
        .unwrap(),
    );
    let mut options = CatalogOptions::new(Implementation::new("tasks-fixture", "0.0.1"));
    if tasks {
        options = options.with_extension(TASKS, Map::new());
    }
    let catalog = Catalog::build(options, vec![tool], vec![], vec![], vec![]).unwrap();
    Router::new(catalog, Limits::default())
}

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn listen_for_tasks(declared: bool) -> Vec<u8> {
    let caps = if declared {
        json!({"extensions": {TASKS: {}}})
    } else {
        json!({})
    };
    serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen", "params": {
            "notifications": {"taskIds": ["t1", "t2"]},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": caps
            }
        }}),
    )
    .unwrap()
}

#[test]
fn task_status_listens_are_offered_with_the_tasks_extension_to_declaring_clients() {
    // Without resources nor the extension there is nothing to listen to.
    let (code, status, _) =
        error_of(tasks_router(false).route(&listen_for_tasks(true), &RouteContext::NONE));
    assert_eq!((code, status), (-32601, 404));

    let router = tasks_router(true);
    match router.route(&listen_for_tasks(true), &RouteContext::NONE) {
        Decision::Invoke(call) => match &call.target {
            Target::Listen { filter } => assert_eq!(
                filter.task_ids.as_deref(),
                Some(&["t1".to_owned(), "t2".to_owned()][..])
            ),
            other => panic!("expected a listen, found {other:?}"),
        },
        other => panic!("expected a listen, found {other:?}"),
    }
    // The extension's rule: taskIds from a client that does not declare it
    // is -32021, naming the extension.
    let (code, status, body) =
        error_of(router.route(&listen_for_tasks(false), &RouteContext::NONE));
    assert_eq!((code, status), (-32021, 400));
    assert_eq!(
        body["error"]["data"]["requiredCapabilities"],
        json!({"extensions": {TASKS: {}}})
    );
    // Without taskIds the same client listens as before.
    let plain = serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "subscriptions/listen", "params": {
            "notifications": {"toolsListChanged": true},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }}),
    )
    .unwrap();
    assert!(matches!(
        router.route(&plain, &RouteContext::NONE),
        Decision::Invoke(_)
    ));
}
