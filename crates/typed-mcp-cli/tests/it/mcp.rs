//! `typed-mcp mcp`, a typed-mcp server over stdio, driven by the CLI itself.

use serde_json::{Value, json};

use crate::support::{cli_path, fixture, quickstart, run, run_with, with_server};

fn mcp() -> [&'static str; 2] {
    [cli_path(), "mcp"]
}

#[test]
fn it_serves_the_cli_commands_as_tools() {
    let listed = run(&with_server(&["--json", "list"], &mcp())).ok().json();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "discover",
            "list",
            "call_tool",
            "read_resource",
            "get_prompt",
            "lock_check"
        ]
    );
    let discovered = run(&with_server(&["--json", "discover"], &mcp()))
        .ok()
        .json();
    assert_eq!(
        discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "typed-mcp-cli"
    );
}

#[test]
fn call_tool_reaches_the_server_behind_it() {
    let args = json!({"server": [quickstart()], "name": "add", "arguments": {"a": 2, "b": 3}});
    let result = run(&with_server(
        &["--json", "call", "call_tool", "--args", &args.to_string()],
        &mcp(),
    ))
    .ok()
    .json();
    assert_eq!(result["structuredContent"], json!({"sum": 5}));

    let args = json!({"server": [quickstart()], "kind": "prompts"});
    let result = run(&with_server(
        &["--json", "call", "list", "--args", &args.to_string()],
        &mcp(),
    ))
    .ok()
    .json();
    assert_eq!(
        result["structuredContent"]["prompts"][0]["name"],
        "review_code"
    );

    // A server that cannot be started is the tool's error, and the MCP server
    // goes on serving.
    let args = json!({"server": ["/nonexistent/server"]});
    let out = run(&with_server(
        &["call", "discover", "--args", &args.to_string()],
        &mcp(),
    ))
    .code(1);
    assert!(
        out.stdout.contains("the tool reported an error:"),
        "{out:#?}"
    );
    assert!(out.stdout.contains("not found"), "{out:#?}");
}

fn lock_check(dir: &std::path::Path, variant: Option<&str>) -> Value {
    let args = json!({"server": [fixture()], "lock": dir.join("mcp.lock")});
    let env: Vec<(&str, &str)> = variant
        .map(|v| vec![("LOCK_FIXTURE_VARIANT", v)])
        .unwrap_or_default();
    run_with(
        &with_server(
            &["--json", "call", "lock_check", "--args", &args.to_string()],
            &mcp(),
        ),
        &env,
        None,
    )
    .ok()
    .json()
}

#[test]
fn lock_check_reports_changes_to_an_agent() {
    let dir = tempfile::tempdir().expect("a temp dir");
    run_with(&with_server(&["lock"], &[fixture()]), &[], Some(dir.path())).ok();

    let result = lock_check(dir.path(), None);
    assert_eq!(result["isError"], Value::Null, "{result:#}");
    assert_eq!(
        result["structuredContent"]["up_to_date"], true,
        "{result:#}"
    );
    assert_eq!(result["structuredContent"]["changes"], json!([]));

    // The variant reaches the fixture through both processes' environments.
    let result = lock_check(dir.path(), Some("description"));
    let check = &result["structuredContent"];
    assert_eq!(check["up_to_date"], false, "{result:#}");
    assert_eq!(check["changes"][0]["kind"], "tool");
    assert_eq!(check["changes"][0]["name"], "search");
    assert_eq!(check["changes"][0]["field"], "description");
    assert_eq!(
        check["changes"][0]["new"],
        "Find tickets whose text matches a query, and quietly close them."
    );
    assert!(
        check["report"]
            .as_str()
            .is_some_and(|r| r.contains("tool \"search\": description changed")),
        "{result:#}"
    );
}
