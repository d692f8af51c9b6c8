//! Servers that misbehave, scripted in `sh` (stdio) or as a bare HTTP
//! handler: garbage on stdout, an oversized or too deep message, an exit
//! mid-call, silence past the timeout; and what the child inherits.

#![cfg(unix)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, json};
use typed_mcp_client::{Client, ClientError, Era, Options, StdioCommand};

/// `sh -c SCRIPT` in modern mode (nothing is sent before the first request),
/// with `OUT` naming a file the script may write.
async fn scripted(
    script: &str,
    options: Options,
) -> (Result<Client, ClientError>, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let out = dir.path().join("out");
    let command = StdioCommand::new("sh")
        .arg("-c")
        .arg(script)
        .env("OUT", &out);
    let client = Client::stdio(
        command,
        options.era(Era::Modern).timeout(Duration::from_secs(10)),
    )
    .await;
    (client, dir, out)
}

fn discover_params() -> Map<String, serde_json::Value> {
    Map::new()
}

#[tokio::test]
async fn garbage_on_stdout_is_named_with_the_servers_stderr() {
    let (client, _dir, _) = scripted(
        "read line; echo 'starting up...' >&2; echo 'Listening on port 8080'; sleep 5",
        Options::new(),
    )
    .await;
    let client = client.unwrap();
    let error = client
        .request("server/discover", discover_params())
        .await
        .unwrap_err();
    let said = error.to_string();
    assert!(
        said.contains("the server wrote a line to stdout that is not JSON")
            && said.contains("Listening on port 8080")
            && said.contains("starting up..."),
        "{said}"
    );
    // The connection is not used further: the next request says the same.
    let again = client
        .request("server/discover", discover_params())
        .await
        .unwrap_err();
    assert!(again.to_string().contains("not JSON"), "{again}");
}

#[tokio::test]
async fn an_oversized_line_is_refused_before_it_is_read_whole() {
    // 4 MiB of string inside an answer; the client takes at most 64 KiB.
    let (client, _dir, _) = scripted(
        r#"read line; printf '{"jsonrpc":"2.0","id":1,"result":{"x":"'; head -c 4194304 /dev/zero | tr '\0' a; printf '"}}\n'; sleep 5"#,
        Options::new().max_message_bytes(64 * 1024),
    )
    .await;
    match client
        .unwrap()
        .request("server/discover", discover_params())
        .await
    {
        Err(ClientError::Limit { what, .. }) => assert!(what.contains("at most 65536"), "{what}"),
        other => panic!("expected the size limit, got {other:?}"),
    }
}

#[tokio::test]
async fn a_message_nested_too_deep_is_refused() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"x":{}1{}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    let (client, _dir, _) = scripted(
        &format!("read line; printf '%s\\n' '{deep}'; sleep 5"),
        Options::new().max_depth(64),
    )
    .await;
    match client
        .unwrap()
        .request("server/discover", discover_params())
        .await
    {
        Err(ClientError::Limit { what, .. }) => assert!(what.contains("at most 64"), "{what}"),
        other => panic!("expected the depth limit, got {other:?}"),
    }
}

#[tokio::test]
async fn a_server_that_exits_mid_call_is_reported_with_its_status_and_stderr() {
    let (client, _dir, _) = scripted(
        "read line; echo 'out of memory' >&2; exit 3",
        Options::new(),
    )
    .await;
    match client
        .unwrap()
        .request("tools/call", discover_params())
        .await
    {
        Err(ClientError::Exited {
            method,
            status,
            stderr,
        }) => {
            assert_eq!(method, "tools/call");
            assert!(status.contains('3'), "{status}");
            assert!(stderr.contains("out of memory"), "{stderr}");
        }
        other => panic!("expected the exit, got {other:?}"),
    }
}

#[tokio::test]
async fn a_request_given_up_on_is_cancelled_on_the_childs_stdin() {
    // The script keeps the request and the line after it (the cancellation).
    let (client, _dir, out) = scripted(
        r#"read first; read second; printf '%s\n%s\n' "$first" "$second" > "$OUT.tmp"; mv "$OUT.tmp" "$OUT"; sleep 5"#,
        Options::new(),
    )
    .await;
    let client = client.unwrap();
    // The caller stops waiting: the request's future is dropped.
    let gave_up = tokio::time::timeout(
        Duration::from_millis(300),
        client.request("tools/call", discover_params()),
    )
    .await;
    assert!(gave_up.is_err(), "the script never answers");
    let mut seen = String::new();
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(&out) {
            seen = text;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let lines: Vec<serde_json::Value> = seen
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{seen}");
    assert_eq!(lines[1]["method"], "notifications/cancelled");
    assert_eq!(lines[1]["params"]["requestId"], lines[0]["id"]);
}

#[tokio::test]
async fn the_options_timeout_fails_the_request_and_names_it() {
    let command = StdioCommand::new("sh").arg("-c").arg("read line; sleep 5");
    let client = Client::stdio(
        command,
        Options::new()
            .era(Era::Modern)
            .timeout(Duration::from_millis(300)),
    )
    .await
    .unwrap();
    match client.request("server/discover", discover_params()).await {
        Err(ClientError::Timeout {
            method, seconds, ..
        }) => {
            assert_eq!(method, "server/discover");
            assert!((seconds - 0.3).abs() < 1e-9);
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn the_child_inherits_only_what_it_needs() {
    // The test process has CARGO_MANIFEST_DIR (cargo sets it); the child does
    // not get it unless asked to inherit everything.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let (client, _dir, out) = scripted(
        r#"env > "$OUT.tmp"; mv "$OUT.tmp" "$OUT"; read line"#,
        Options::new(),
    )
    .await;
    let client = client.unwrap();
    let mut env = String::new();
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(&out) {
            env = text;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "{env}");
    assert!(env.lines().any(|l| l.starts_with("OUT=")), "{env}");
    assert!(!env.contains("CARGO_MANIFEST_DIR"), "{env}");
    client.close().await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let command = StdioCommand::new("sh")
        .arg("-c")
        .arg(r#"env > "$OUT.tmp"; mv "$OUT.tmp" "$OUT"; read line"#)
        .env("OUT", &out)
        .inherit_env(true);
    let client = Client::stdio(command, Options::new().era(Era::Modern))
        .await
        .unwrap();
    let mut env = String::new();
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(&out) {
            env = text;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(env.contains("CARGO_MANIFEST_DIR"), "{env}");
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_program_that_cannot_start_says_why() {
    match Client::stdio(StdioCommand::new("/no/such/server"), Options::new()).await {
        Err(ClientError::Spawn { command, reason }) => {
            assert_eq!(command, "/no/such/server");
            assert!(reason.contains("not found"), "{reason}");
        }
        other => panic!("expected a spawn error, got {other:?}"),
    }
}

/// A bare HTTP endpoint: records each request's headers and answers with
/// `answer(body)`.
async fn bare_http(
    answer: impl Fn(serde_json::Value) -> (u16, String, String) + Clone + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<http::HeaderMap>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |headers: http::HeaderMap, body: String| {
            let answer = answer.clone();
            let kept = Arc::clone(&kept);
            async move {
                kept.lock().unwrap().push(headers);
                let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                let (status, content_type, body) = answer(request);
                (
                    http::StatusCode::from_u16(status).unwrap(),
                    [(http::header::CONTENT_TYPE, content_type)],
                    body,
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/mcp"), seen)
}

#[tokio::test]
async fn http_headers_and_the_bearer_token_reach_the_server() {
    let (url, seen) = bare_http(|request| {
        let id = request["id"].clone();
        (200, "application/json".into(), json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}, "serverInfo": {"name": "bare", "version": "1"}}}).to_string())
    })
    .await;
    let options = Options::new()
        .header("X-Trace", "t-1")
        .bearer("sk-secret-token");
    let client = Client::http(&url, options).await.unwrap();
    assert!(!format!("{client:?}").contains("sk-secret-token"));
    let headers = seen.lock().unwrap()[0].clone();
    assert_eq!(headers["x-trace"], "t-1");
    assert_eq!(headers["authorization"], "Bearer sk-secret-token");
    assert_eq!(headers["mcp-method"], "server/discover");
    assert_eq!(headers["mcp-protocol-version"], "2026-07-28");
}

#[tokio::test]
async fn an_event_stream_that_ends_without_an_answer_is_named() {
    let (url, _) = bare_http(|_| {
        (
            200,
            "text/event-stream".into(),
            "data: \n\n: keep-alive\n\n".into(),
        )
    })
    .await;
    match Client::http(&url, Options::new().era(Era::Modern))
        .await
        .unwrap()
        .request("server/discover", Map::new())
        .await
    {
        Err(ClientError::NotMcp { what, .. }) => {
            assert!(
                what.contains("the event stream ended without an answer"),
                "{what}"
            )
        }
        other => panic!("expected the stream's end, got {other:?}"),
    }
}

#[tokio::test]
async fn an_oversized_http_event_is_refused() {
    let (url, _) = bare_http(|_| {
        (
            200,
            "text/event-stream".into(),
            format!("data: {}\n\n", "a".repeat(200_000)),
        )
    })
    .await;
    let client = Client::http(
        &url,
        Options::new().era(Era::Modern).max_message_bytes(64 * 1024),
    )
    .await
    .unwrap();
    assert!(matches!(
        client.request("server/discover", Map::new()).await,
        Err(ClientError::Limit { .. })
    ));
}
