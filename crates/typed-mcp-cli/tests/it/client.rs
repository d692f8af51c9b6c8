//! The debugging client against the quickstart, over stdio and over HTTP.

use serde_json::json;

use crate::support::{HttpServer, cli_path, fixture, quickstart, run, with_server};

/// Every command, readable and `--json`, against one server.
fn every_command_works(server: &[&str]) {
    let out = run(&with_server(&["discover"], server)).ok();
    assert!(
        out.stdout.contains("server: typed-mcp-quickstart"),
        "{out:#?}"
    );
    assert!(
        out.stdout.contains("protocol versions: 2026-07-28"),
        "{out:#?}"
    );
    assert!(out.stdout.contains("tools"), "{out:#?}");

    let out = run(&with_server(&["list"], server)).ok();
    assert!(out.stdout.contains("add — Add\n"), "{out:#?}");
    assert!(
        out.stdout
            .contains("a (integer, required) — The first addend."),
        "{out:#?}"
    );
    assert!(out.stdout.contains("echo\n"), "{out:#?}");
    let out = run(&with_server(&["list", "prompts"], server)).ok();
    assert!(out.stdout.contains("review_code"), "{out:#?}");
    assert!(
        out.stdout.contains("code (required) — The code to review."),
        "{out:#?}"
    );
    let out = run(&with_server(&["list", "resources"], server)).ok();
    assert!(
        out.stdout
            .contains("quickstart://readme (text/plain) — readme"),
        "{out:#?}"
    );
    let out = run(&with_server(&["list", "templates"], server)).ok();
    assert!(
        out.stdout.contains("quickstart://greeting/{name}"),
        "{out:#?}"
    );

    let out = run(&with_server(&["call", "add", "a=2", "b=3"], server)).ok();
    assert_eq!(out.stdout, "{\n  \"sum\": 5\n}\n");
    // `text` is a string in the schema: 42 stays the string "42".
    let out = run(&with_server(&["call", "echo", "text=42"], server)).ok();
    assert!(out.stdout.contains("\"result\": \"42\""), "{out:#?}");
    let out = run(&with_server(
        &["call", "add", "--args", r#"{"a": 40, "b": 1}"#, "b=2"],
        server,
    ))
    .ok();
    assert!(out.stdout.contains("\"sum\": 42"), "{out:#?}");
    let out = run(&with_server(&["read", "quickstart://greeting/Zoé"], server)).ok();
    assert_eq!(out.stdout, "Hello, Zoé!\n");
    let out = run(&with_server(
        &["prompt", "review_code", "code=fn main() {}", "focus=naming"],
        server,
    ))
    .ok();
    assert!(out.stdout.starts_with("[user]\n"), "{out:#?}");
    assert!(out.stdout.contains("Focus on naming."), "{out:#?}");
    assert!(out.stdout.contains("fn main() {}"), "{out:#?}");

    // --json: the results as the server sent them.
    let discovered = run(&with_server(&["--json", "discover"], server))
        .ok()
        .json();
    assert_eq!(discovered["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "typed-mcp-quickstart"
    );
    let tools = run(&with_server(&["list", "--json"], server)).ok().json();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["add", "echo"]);
    let called = run(&with_server(
        &["--json", "call", "add", "a=2", "b=3"],
        server,
    ))
    .ok()
    .json();
    assert_eq!(called["structuredContent"], json!({"sum": 5}));
    assert_eq!(called["resultType"], "complete");
    let read = run(&with_server(
        &["--json", "read", "quickstart://readme"],
        server,
    ))
    .ok()
    .json();
    assert_eq!(read["contents"][0]["uri"], "quickstart://readme");
    assert!(read["contents"][0]["text"].is_string());
    let prompt = run(&with_server(
        &["--json", "prompt", "review_code", "code=x"],
        server,
    ))
    .ok()
    .json();
    assert_eq!(prompt["messages"][0]["role"], "user");
}

#[test]
fn every_command_works_over_stdio() {
    every_command_works(&[quickstart()]);
}

#[test]
fn every_command_works_over_http() {
    let server = HttpServer::quickstart();
    every_command_works(&[&server.url]);
    // With a progress token the server answers with an event stream.
    let out = run(&with_server(
        &["--progress", "call", "add", "a=2", "b=3"],
        &[&server.url],
    ))
    .ok();
    assert_eq!(out.stdout, "{\n  \"sum\": 5\n}\n");
    let called = run(&with_server(
        &["--json", "--progress", "call", "add", "a=2", "b=3"],
        &[&server.url],
    ))
    .ok()
    .json();
    assert_eq!(called["structuredContent"], json!({"sum": 5}));
    // A non-ASCII Mcp-Name goes in the base64 sentinel form the server decodes.
    let out = run(&with_server(
        &["read", "quickstart://greeting/Ünïcode"],
        &[&server.url],
    ))
    .ok();
    assert_eq!(out.stdout, "Hello, Ünïcode!\n");
}

/// The server's errors: exit 1 and the code and message.
fn answered_errors(server: &[&str]) {
    let out = run(&with_server(&["call", "add", "a=x", "b=1"], server)).code(1);
    assert!(
        out.stdout.starts_with("the tool reported an error:\n"),
        "{out:#?}"
    );
    assert!(out.stdout.contains("a: expected an integer"), "{out:#?}");
    let out = run(&with_server(&["read", "quickstart://nope"], server)).code(1);
    assert!(
        out.stderr
            .contains("resources/read: JSON-RPC error -32602: resource not found"),
        "{out:#?}"
    );
    let out = run(&with_server(&["prompt", "review_code"], server)).code(1);
    assert!(out.stderr.contains("JSON-RPC error -32602"), "{out:#?}");
    // An unknown tool is caught before the call, with the names there are.
    let out = run(&with_server(&["call", "nope"], server)).code(2);
    assert!(
        out.stderr
            .contains("the server has no tool named \"nope\"; it offers: add, echo"),
        "{out:#?}"
    );
    let out = run(&with_server(&["call", "add", "not-a-pair"], server)).code(2);
    assert!(out.stderr.contains("is not key=value"), "{out:#?}");
}

#[test]
fn errors_of_the_server_are_shown_over_stdio() {
    answered_errors(&[quickstart()]);
}

#[test]
fn errors_of_the_server_are_shown_over_http() {
    let server = HttpServer::quickstart();
    answered_errors(&[&server.url]);
}

#[test]
fn a_missing_server_is_named() {
    let out = run(&["discover", "--", "/nonexistent/typed-mcp-server"]).code(2);
    assert!(
        out.stderr
            .contains("cannot start the server \"/nonexistent/typed-mcp-server\": not found"),
        "{out:#?}"
    );
}

#[test]
fn output_that_is_not_mcp_is_named() {
    // The CLI's own --version prints a line that is not JSON.
    let out = run(&["discover", "--", cli_path(), "--version"]).code(2);
    assert!(
        out.stderr
            .contains("the server wrote a line to stdout that is not JSON"),
        "{out:#?}"
    );
    assert!(out.stderr.contains("typed-mcp 0.1.0"), "{out:#?}");
}

#[test]
fn a_server_that_exits_is_named_with_its_stderr() {
    // `typed-mcp mcp --bogus` is refused by clap on stderr and exits 2.
    let out = run(&["discover", "--", cli_path(), "mcp", "--bogus"]).code(2);
    assert!(
        out.stderr
            .contains("the server exited (exit status: 2) before answering server/discover"),
        "{out:#?}"
    );
    assert!(
        out.stderr.contains("the server's stderr ended with:"),
        "{out:#?}"
    );
    assert!(out.stderr.contains("--bogus"), "{out:#?}");
}

#[cfg(unix)]
#[test]
fn a_silent_server_times_out() {
    let out = run(&["--timeout", "0.5", "discover", "--", "sleep", "60"]).code(2);
    assert!(
        out.stderr
            .contains("server/discover: no answer within 0.5 s (raise it with --timeout)"),
        "{out:#?}"
    );
}

#[test]
fn http_failures_are_named() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = run(&["discover", "--", &url]).code(2);
    assert!(
        out.stderr.contains(&format!("cannot reach {url}")),
        "{out:#?}"
    );
    assert!(out.stderr.contains("is the server running"), "{out:#?}");

    let server = HttpServer::quickstart();
    let wrong = server.url.replace("/mcp", "/elsewhere");
    let out = run(&["discover", "--", &wrong]).code(2);
    assert!(
        out.stderr
            .contains("did not answer as an MCP server: HTTP 404"),
        "{out:#?}"
    );

    let out = run(&["discover", "--", "https://127.0.0.1:1/mcp"]).code(2);
    assert!(out.stderr.contains("https is not supported"), "{out:#?}");
    let out = run(&["discover"]).code(2);
    assert!(out.stderr.contains("<SERVER>"), "{out:#?}");
}

#[test]
fn notifications_asked_for_are_printed_to_stderr() {
    let out = run(&with_server(
        &["--progress", "--log-level", "info", "call", "count", "to=3"],
        &[fixture()],
    ))
    .ok();
    assert_eq!(out.stdout, "{\n  \"result\": 3\n}\n");
    assert!(out.stderr.contains("progress: 1/3 counting\n"), "{out:#?}");
    assert!(out.stderr.contains("progress: 3/3 counting\n"), "{out:#?}");
    assert!(
        out.stderr.contains("log [info]: counted to 3\n"),
        "{out:#?}"
    );
    // Not asked for: not sent, not printed.
    let out = run(&with_server(&["call", "count", "to=3"], &[fixture()])).ok();
    assert_eq!(out.stderr, "");
}

/// A typed-mcp server serves both eras: auto speaks the modern one (and names
/// it only in `discover`), `--era legacy` the dated one, the same declarations.
fn both_eras(server: &[&str]) {
    let out = run(&with_server(&["discover"], server)).ok();
    assert!(
        out.stdout
            .contains("era: modern (2026-07-28, stateless; the server answered server/discover)\n"),
        "{out:#?}"
    );
    assert_eq!(out.stderr, "");

    let out = run(&with_server(&["--era", "legacy", "discover"], server)).ok();
    assert!(
        out.stdout.starts_with(
            "server: typed-mcp-quickstart 0.1.0\n\
             era: legacy (2025-11-25, a session opened by initialize; --era legacy)\n\
             protocol version: 2025-11-25 (a legacy server names only the one it negotiated)\n"
        ),
        "{out:#?}"
    );
    let initialized = run(&with_server(
        &["--json", "--era", "legacy", "discover"],
        server,
    ))
    .ok()
    .json();
    assert_eq!(initialized["protocolVersion"], "2025-11-25");
    assert_eq!(initialized["serverInfo"]["name"], "typed-mcp-quickstart");

    let out = run(&with_server(&["--era", "legacy", "list"], server)).ok();
    assert!(out.stdout.contains("add — Add\n"), "{out:#?}");
    assert_eq!(
        out.stderr,
        "typed-mcp: era: legacy (2025-11-25, a session opened by initialize; --era legacy)\n"
    );
    let out = run(&with_server(
        &["--era", "legacy", "call", "add", "a=2", "b=3"],
        server,
    ))
    .ok();
    assert_eq!(out.stdout, "{\n  \"sum\": 5\n}\n");
    let called = run(&with_server(
        &["--json", "--era", "legacy", "call", "add", "a=2", "b=3"],
        server,
    ))
    .ok()
    .json();
    assert_eq!(called["structuredContent"], json!({"sum": 5}));
    // The legacy wire has no resultType, and the CLI invents none.
    assert_eq!(called.get("resultType"), None, "{called:#}");
    let out = run(&with_server(
        &["--era", "legacy", "call", "add", "a=x", "b=1"],
        server,
    ))
    .code(1);
    assert!(out.stdout.contains("a: expected an integer"), "{out:#?}");
    let out = run(&with_server(
        &["--era", "legacy", "read", "quickstart://greeting/Ada"],
        server,
    ))
    .ok();
    assert_eq!(out.stdout, "Hello, Ada!\n");
    let out = run(&with_server(
        &[
            "--era",
            "legacy",
            "prompt",
            "review_code",
            "code=x",
            "focus=naming",
        ],
        server,
    ))
    .ok();
    assert!(out.stdout.contains("Focus on naming."), "{out:#?}");
}

#[test]
fn the_quickstart_speaks_both_eras_over_stdio() {
    both_eras(&[quickstart()]);
}

#[test]
fn the_quickstart_speaks_both_eras_over_http() {
    let server = HttpServer::quickstart();
    both_eras(&[&server.url]);
}

#[test]
fn legacy_notifications_asked_for_are_printed_to_stderr() {
    // The log level is set once for the session (logging/setLevel); the
    // progress token rides in the request's _meta.
    let out = run(&with_server(
        &[
            "--era",
            "legacy",
            "--progress",
            "--log-level",
            "info",
            "call",
            "count",
            "to=3",
        ],
        &[fixture()],
    ))
    .ok();
    assert_eq!(out.stdout, "{\n  \"result\": 3\n}\n");
    assert!(out.stderr.contains("progress: 1/3 counting\n"), "{out:#?}");
    assert!(out.stderr.contains("progress: 3/3 counting\n"), "{out:#?}");
    assert!(
        out.stderr.contains("log [info]: counted to 3\n"),
        "{out:#?}"
    );
}

#[test]
fn era_modern_hints_at_legacy_only_when_discover_is_refused_too() {
    // The quickstart speaks 2026-07-28: its refusal of a first request is
    // only that, with no hint.
    let out = run(&with_server(
        &["--era", "modern", "read", "quickstart://nope"],
        &[quickstart()],
    ))
    .code(1);
    assert!(
        out.stderr
            .contains("resources/read: JSON-RPC error -32602: resource not found"),
        "{out:#?}"
    );
    assert!(!out.stderr.contains("--era auto"), "{out:#?}");
}
