//! The CLI in auto mode against a real legacy-only peer: the official Python
//! SDK (`mcp==1.30.0`, dated revisions up to 2025-11-25) serving
//! `tests/legacy/server.py` over stdio and over Streamable HTTP.
//!
//! These tests need that SDK, so they are ignored by a plain `cargo test`;
//! `scripts/cli-legacy-check` builds the venv and runs them with
//! `TYPED_MCP_LEGACY_PYTHON` naming its interpreter. Run with `--ignored`
//! without it, they fail saying so.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{HttpServer, run, with_server};

const NEEDS_PYTHON: &str = "needs the Python SDK's legacy server: run scripts/cli-legacy-check";

/// The venv's interpreter, from `TYPED_MCP_LEGACY_PYTHON`.
fn python() -> String {
    std::env::var("TYPED_MCP_LEGACY_PYTHON").unwrap_or_else(|_| {
        panic!(
            "TYPED_MCP_LEGACY_PYTHON is not set: these tests need a Python with mcp==1.30.0 \
             ({NEEDS_PYTHON})"
        )
    })
}

fn server_py() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/legacy/server.py")
        .to_string_lossy()
        .into_owned()
}

/// The era line of a session that fell back because of `discover_said`.
fn fell_back(discover_said: &str) -> String {
    format!(
        "era: legacy (2025-11-25, a session opened by initialize; server/discover: {discover_said}"
    )
}

/// Every command in auto mode against the legacy peer; `discover_said` is the
/// start of what its answer to `server/discover` is reported as; `streams` is
/// false when the server answers with plain JSON, which carries no
/// notifications.
fn every_command_works(server: &[&str], discover_said: &str, streams: bool) {
    let era_line = fell_back(discover_said);

    let out = run(&with_server(&["discover"], server)).ok();
    assert!(
        out.stdout.starts_with("server: legacy-peer 1.30.0\n"),
        "{out:#?}"
    );
    assert!(out.stdout.contains(&format!("\n{era_line}")), "{out:#?}");
    assert!(
        out.stdout.contains(
            "protocol version: 2025-11-25 (a legacy server names only the one it negotiated)\n"
        ),
        "{out:#?}"
    );
    assert!(
        out.stdout
            .contains("capabilities: prompts, resources, tools\n"),
        "{out:#?}"
    );
    assert!(
        out.stdout
            .contains("instructions:\n  A legacy-only server for the typed-mcp CLI tests.\n"),
        "{out:#?}"
    );
    // --json: the initialize result as the server sent it.
    let initialized = run(&with_server(&["--json", "discover"], server))
        .ok()
        .json();
    assert_eq!(initialized["protocolVersion"], "2025-11-25");
    assert_eq!(initialized["serverInfo"]["name"], "legacy-peer");
    assert_eq!(initialized.get("supportedVersions"), None);

    // Every command names the legacy era on stderr; stdout is the answer's.
    let out = run(&with_server(&["list"], server)).ok();
    assert!(
        out.stdout.starts_with(
            "add\n    Add two integers.\n    inputs:\n      a (integer, required)\n      \
             b (integer, required)\n    structured output: yes\ncount\n"
        ),
        "{out:#?}"
    );
    assert!(
        out.stderr.starts_with(&format!("typed-mcp: {era_line}")),
        "{out:#?}"
    );
    let out = run(&with_server(&["list", "prompts"], server)).ok();
    assert!(
        out.stdout.starts_with(
            "review\n    Review a piece of code.\n    arguments:\n      code (required)\n"
        ),
        "{out:#?}"
    );
    let out = run(&with_server(&["list", "resources"], server)).ok();
    assert_eq!(
        out.stdout,
        "legacy://readme (text/plain) — readme\n    What this server is.\n"
    );
    let out = run(&with_server(&["list", "templates"], server)).ok();
    assert_eq!(
        out.stdout,
        "legacy://greeting/{name} (text/plain) — greeting\n    A greeting for someone.\n"
    );

    let out = run(&with_server(&["call", "add", "a=2", "b=3"], server)).ok();
    assert_eq!(out.stdout, "{\n  \"result\": 5\n}\n");
    // The legacy wire has no resultType, and the CLI adds none.
    let called = run(&with_server(
        &["--json", "call", "add", "a=2", "b=3"],
        server,
    ))
    .ok()
    .json();
    assert_eq!(called["structuredContent"], json!({"result": 5}));
    assert_eq!(called["content"][0]["text"], "5");
    assert_eq!(called.get("resultType"), None, "{called:#}");
    let out = run(&with_server(&["call", "add", "a=x", "b=1"], server)).code(1);
    assert!(
        out.stdout.starts_with("the tool reported an error:\n"),
        "{out:#?}"
    );
    let out = run(&with_server(&["call", "nope"], server)).code(2);
    assert!(
        out.stderr
            .contains("the server has no tool named \"nope\"; it offers: add, count, ping_client"),
        "{out:#?}"
    );

    // Progress tokens ride in the legacy `_meta`; what arrives goes to stderr.
    let out = run(&with_server(
        &["--progress", "call", "count", "to=3"],
        server,
    ))
    .ok();
    assert_eq!(out.stdout, "{\n  \"result\": 3\n}\n");
    if streams {
        assert!(out.stderr.contains("progress: 1/3 counting\n"), "{out:#?}");
        assert!(out.stderr.contains("progress: 3/3 counting\n"), "{out:#?}");
        assert!(
            out.stderr.contains("log [info]: counted to 3\n"),
            "{out:#?}"
        );
        // The server's own request inside the call (a ping) is answered.
        let out = run(&with_server(&["call", "ping_client"], server)).ok();
        assert_eq!(
            out.stdout,
            "{\n  \"result\": \"the client answered the ping\"\n}\n"
        );
    } else {
        assert!(!out.stderr.contains("progress:"), "{out:#?}");
    }
    // This server declares no logging capability, so no level is set: said so.
    let out = run(&with_server(
        &["--log-level", "info", "call", "add", "a=1", "b=1"],
        server,
    ))
    .ok();
    assert!(
        out.stderr.contains(
            "--log-level info: the server declares no logging capability, so no log messages \
             were asked for"
        ),
        "{out:#?}"
    );

    let out = run(&with_server(&["read", "legacy://readme"], server)).ok();
    assert_eq!(out.stdout, "A legacy peer.\n");
    let out = run(&with_server(&["read", "legacy://greeting/Ada"], server)).ok();
    assert_eq!(out.stdout, "Hello, Ada!\n");
    let out = run(&with_server(&["read", "legacy://nope"], server)).code(1);
    assert!(
        out.stderr
            .contains("resources/read: JSON-RPC error 0: Unknown resource: legacy://nope"),
        "{out:#?}"
    );
    let out = run(&with_server(
        &["prompt", "review", "code=fn main() {}"],
        server,
    ))
    .ok();
    assert_eq!(
        out.stdout,
        "Review a piece of code.\n\n[user]\nPlease review:\nfn main() {}\n\n"
    );

    // Forced: the same session, without the probe.
    let out = run(&with_server(&["--era", "legacy", "list"], server)).ok();
    assert!(out.stdout.starts_with("add\n"), "{out:#?}");
    assert!(
        out.stderr.starts_with(
            "typed-mcp: era: legacy (2025-11-25, a session opened by initialize; --era legacy)\n"
        ),
        "{out:#?}"
    );
}

fn lock_of(server: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("mcp.lock");
    let path = path.to_string_lossy();
    let out = run(&with_server(&["lock", "--lock", &path], server)).ok();
    assert!(
        out.stdout
            .contains("(3 tools, 1 prompt, 1 resource, 1 resource template)"),
        "{out:#?}"
    );
    std::fs::read_to_string(&*path).expect("the lock was written")
}

#[test]
#[ignore = "needs the Python SDK's legacy server: run scripts/cli-legacy-check"]
fn a_legacy_server_over_stdio() {
    let python = python();
    let script = server_py();
    let server = [python.as_str(), script.as_str()];
    every_command_works(
        &server,
        "JSON-RPC error -32602: Invalid request parameters)",
        true,
    );

    // Modern only: the server's refusal, and a hint.
    let out = run(&with_server(&["--era", "modern", "list"], &server)).code(1);
    assert!(
        out.stderr
            .contains("tools/list: JSON-RPC error -32602: Invalid request parameters"),
        "{out:#?}"
    );
    assert!(
        out.stderr.contains("try --era auto or --era legacy"),
        "{out:#?}"
    );

    let lock = lock_of(&server);
    assert!(lock.contains("[tools.add]"), "{lock}");
    assert!(
        lock.contains("[templates.\"legacy://greeting/{name}\"]"),
        "{lock}"
    );
}

/// The lines of the server's wire log since the last call, once `count` of
/// them have arrived (the log is written by another thread).
fn wire_lines(server: &HttpServer, count: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut lines = Vec::new();
    loop {
        lines.extend(
            server
                .take_stderr()
                .into_iter()
                .filter(|l| l.starts_with("wire: ")),
        );
        if lines.len() >= count || Instant::now() > deadline {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn legacy_over_http(answers: &[&str]) {
    let python = python();
    let script = server_py();
    let mut args = vec![script.as_str(), "--http"];
    args.extend_from_slice(answers);
    let server = HttpServer::start(&python, &args);
    let url = server.url.clone();

    // What the client sent, on the wire: the probe with 2026-07-28's headers,
    // then initialize without them, then the session's id and version on
    // every request, no `_meta`, and a DELETE at the end.
    wire_lines(&server, 0);
    let out = run(&["list", "--", &url]).ok();
    assert!(out.stdout.starts_with("add\n"), "{out:#?}");
    let lines = wire_lines(&server, 5);
    assert_eq!(lines.len(), 5, "{lines:#?}");
    let session = lines[2]
        .split(" session=")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .expect("a session id");
    assert_ne!(session, "-", "{lines:#?}");
    assert_eq!(
        lines,
        [
            "wire: POST rpc=server/discover meta=yes session=- version=2026-07-28 \
             mcp-method=server/discover -> 400"
                .to_owned(),
            "wire: POST rpc=initialize meta=no session=- version=- mcp-method=- -> 200".to_owned(),
            format!(
                "wire: POST rpc=notifications/initialized meta=no session={session} \
                 version=2025-11-25 mcp-method=- -> 202"
            ),
            format!(
                "wire: POST rpc=tools/list meta=no session={session} version=2025-11-25 \
                 mcp-method=- -> 200"
            ),
            format!(
                "wire: DELETE rpc=- meta=no session={session} version=2025-11-25 \
                 mcp-method=- -> 200"
            ),
        ]
    );

    if answers.is_empty() {
        // The server's ping on the call's stream is answered by a POST in the
        // same session, before the call's answer arrives.
        let out = run(&["call", "ping_client", "--", &url]).ok();
        assert!(
            out.stdout.contains("the client answered the ping"),
            "{out:#?}"
        );
        let lines = wire_lines(&server, 7);
        assert_eq!(lines.len(), 7, "{lines:#?}");
        let session = lines[2]
            .split(" session=")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .expect("a session id");
        assert_eq!(
            lines[4..],
            [
                format!(
                    "wire: POST rpc=tools/call meta=no session={session} version=2025-11-25 \
                     mcp-method=- -> 200"
                ),
                format!(
                    "wire: POST rpc=response meta=no session={session} version=2025-11-25 \
                     mcp-method=- -> 202"
                ),
                format!(
                    "wire: DELETE rpc=- meta=no session={session} version=2025-11-25 \
                     mcp-method=- -> 200"
                ),
            ]
        );
    }

    every_command_works(
        &[&url],
        &format!(
            "{url}: HTTP 400 Bad Request with a JSON-RPC error for no request of ours: -32600 \
             Bad Request: Missing session ID)"
        ),
        answers.is_empty(),
    );

    // Modern only: the refusal, named with its status, and a hint.
    let out = run(&["--era", "modern", "list", "--", &url]).code(2);
    assert!(
        out.stderr.contains("HTTP 400 Bad Request") && out.stderr.contains("Missing session ID"),
        "{out:#?}"
    );
    assert!(
        out.stderr.contains("try --era auto or --era legacy"),
        "{out:#?}"
    );

    // The lock records declarations: the same over HTTP as over stdio.
    let stdio = [python.as_str(), script.as_str()];
    assert_eq!(lock_of(&[&url]), lock_of(&stdio));
}

#[test]
#[ignore = "needs the Python SDK's legacy server: run scripts/cli-legacy-check"]
fn a_legacy_server_over_http_answering_with_event_streams() {
    legacy_over_http(&[]);
}

#[test]
#[ignore = "needs the Python SDK's legacy server: run scripts/cli-legacy-check"]
fn a_legacy_server_over_http_answering_with_json() {
    legacy_over_http(&["--json"]);
}

#[test]
#[ignore = "needs the Python SDK's legacy server: run scripts/cli-legacy-check"]
fn the_mcp_tools_reach_a_legacy_server_and_end_each_session() {
    // The CLI served as MCP, behind it the legacy peer over HTTP: the session
    // of each tool call is opened and ended, so calls keep working.
    let python = python();
    let script = server_py();
    let server = HttpServer::start(&python, &[&script, "--http"]);
    let args = json!({"server": [server.url], "name": "add", "arguments": {"a": 2, "b": 3}});
    let mcp = [crate::support::cli_path(), "mcp"];
    for _ in 0..2 {
        let result: Value = run(&with_server(
            &["--json", "call", "call_tool", "--args", &args.to_string()],
            &mcp,
        ))
        .ok()
        .json();
        assert_eq!(
            result["structuredContent"],
            json!({"result": 5}),
            "{result:#}"
        );
    }
    let lines = wire_lines(&server, 10);
    let deletes = lines
        .iter()
        .filter(|l| l.starts_with("wire: DELETE"))
        .count();
    assert_eq!(deletes, 2, "{lines:#?}");
}
