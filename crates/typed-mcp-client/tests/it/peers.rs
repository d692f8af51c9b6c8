//! Against third-party servers: the official Python SDK's `MCPServer` (PyPI
//! `mcp` 2.3.0) over stdio and Streamable HTTP, and the official TypeScript
//! SDK's `McpServer` (npm `@modelcontextprotocol/server` 2.4.0) over stdio,
//! in both eras where they serve them. `scripts/client-peers` installs them
//! from the registries and runs these tests with
//!
//! - `TYPED_MCP_CLIENT_PYTHON`: a Python with the pinned `mcp`;
//! - `TYPED_MCP_CLIENT_NODE` and `TYPED_MCP_CLIENT_TS_PEER`: a Node and the
//!   TypeScript peer (`conformance/ts-server/peer.mjs`, installed beside its
//!   `node_modules`).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value, json};
use typed_mcp::wire::{ContentBlock, CreateMessageResult, ElicitAction, ElicitResult, Role};
use typed_mcp_client::{Client, Era, Options, Responder, Spoken, StdioCommand};

use crate::support::kept;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run scripts/client-peers, which installs the peers and sets it")
    })
}

fn python_peer() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/e2e/client/python_peer.py")
}

fn responder() -> Responder {
    Responder::new()
        .on_elicit(|_params| async {
            let mut content = Map::new();
            content.insert("name".into(), json!("Ada"));
            Ok(ElicitResult::new(ElicitAction::Accept).with_content(content))
        })
        .on_sample(|_params| async {
            Ok(CreateMessageResult::new(
                Role::Assistant,
                serde_json::to_value(ContentBlock::text("Paris")).unwrap_or_default(),
                "test-model",
            ))
        })
}

fn options(era: Era) -> Options {
    Options::new()
        .era(era)
        .responder(responder())
        .timeout(Duration::from_secs(30))
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// What every peer serves, asked of `client`: input is asked for through
/// MRTR in 2026-07-28 and through server-to-client requests in a dated
/// session, and the same Responder answers both.
async fn exercise(client: &Client, who: &str) {
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap_or_else(|e| panic!("{who}: {e}"))
        .into_iter()
        .map(|t| t.name)
        .collect();
    for name in ["add", "greet", "capital"] {
        assert!(names.iter().any(|n| n == name), "{who}: {names:?}");
    }
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(text(&sum), "5", "{who}: {sum}");
    let greeting = client
        .call_tool("greet", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{who}: {e}"));
    assert_eq!(text(&greeting), "Hello, Ada!", "{who}: {greeting}");
    let capital = client
        .call_tool("capital", json!({}))
        .await
        .unwrap_or_else(|e| panic!("{who}: {e}"));
    assert_eq!(text(&capital), "the model said Paris", "{who}: {capital}");
    let read = client
        .read_resource("peer://readme")
        .await
        .unwrap_or_else(|e| panic!("{who}: {e}"));
    assert!(
        read["contents"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .ends_with("peer."),
        "{who}: {read}"
    );
    let prompt = client
        .get_prompt("review", json!({"code": "fn main(){}"}))
        .await
        .unwrap_or_else(|e| panic!("{who}: {e}"));
    assert_eq!(
        prompt["messages"][0]["content"]["text"], "Review this code: fn main(){}",
        "{who}: {prompt}"
    );
    // A JSON-RPC error, and the peer still serves.
    let error = client
        .request("no/such/method", Map::new())
        .await
        .unwrap_err();
    assert!(error.is_answer(), "{who}: {error}");
    let again = client
        .call_tool("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(text(&again), "2", "{who}");
}

fn assert_era(client: &Client, era: Era, who: &str) {
    match (era, client.spoken()) {
        (Era::Auto, Spoken::Modern { .. }) => {}
        (Era::Legacy, Spoken::Legacy(session)) => {
            assert_eq!(session.version, "2025-11-25", "{who}")
        }
        (era, spoken) => panic!("{who} {era:?}: spoke {spoken:?}"),
    }
}

#[tokio::test]
#[ignore = "needs the Python SDK (mcp 2.3.0): run scripts/client-peers"]
async fn the_python_sdk_over_stdio_in_both_eras() {
    for era in [Era::Auto, Era::Legacy] {
        let command = StdioCommand::new(env("TYPED_MCP_CLIENT_PYTHON")).arg(python_peer());
        let (seen, sink) = kept();
        let client = Client::stdio(command, options(era).progress(true).on_notification(sink))
            .await
            .unwrap_or_else(|e| panic!("python stdio {era:?}: {e}"));
        assert_era(&client, era, "python stdio");
        exercise(&client, &format!("python stdio {era:?}")).await;
        let counted = client.call_tool("count", json!({"n": 3})).await.unwrap();
        assert_eq!(text(&counted), "counted to 3");
        let progress = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .count();
        assert_eq!(
            progress,
            3,
            "python stdio {era:?}: {:#?}",
            seen.lock().unwrap()
        );
        client.close().await.unwrap();
    }
}

/// The Python peer over Streamable HTTP on a free port, once it listens.
async fn python_http_peer() -> (tokio::process::Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let child = tokio::process::Command::new(env("TYPED_MCP_CLIENT_PYTHON"))
        .arg(python_peer())
        .arg("--http")
        .arg(port.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the Python peer starts");
    let url = format!("http://127.0.0.1:{port}/mcp");
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return (child, url);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the Python peer does not listen on {url}");
}

#[tokio::test]
#[ignore = "needs the Python SDK (mcp 2.3.0): run scripts/client-peers"]
async fn the_python_sdk_over_http_in_both_eras() {
    let (mut child, url) = python_http_peer().await;
    for era in [Era::Auto, Era::Legacy] {
        let client = Client::http(&url, options(era))
            .await
            .unwrap_or_else(|e| panic!("python http {era:?}: {e}"));
        assert_era(&client, era, "python http");
        exercise(&client, &format!("python http {era:?}")).await;
        client.close().await.unwrap();
    }
    let _ = child.kill().await;
}

#[tokio::test]
#[ignore = "needs the TypeScript SDK (@modelcontextprotocol/server 2.4.0): run scripts/client-peers"]
async fn the_typescript_sdk_over_stdio() {
    let command =
        StdioCommand::new(env("TYPED_MCP_CLIENT_NODE")).arg(env("TYPED_MCP_CLIENT_TS_PEER"));
    let client = Client::stdio(command, options(Era::Auto))
        .await
        .unwrap_or_else(|e| panic!("ts stdio: {e}"));
    assert_era(&client, Era::Auto, "ts stdio");
    exercise(&client, "ts stdio").await;
    #[derive(serde::Deserialize)]
    struct Sum {
        sum: i64,
    }
    let sum: Sum = client.call("add", json!({"a": 20, "b": 22})).await.unwrap();
    assert_eq!(sum.sum, 42);
    client.close().await.unwrap();

    // The dated handshake too: the SDK asks for input by server-to-client
    // requests there.
    let command =
        StdioCommand::new(env("TYPED_MCP_CLIENT_NODE")).arg(env("TYPED_MCP_CLIENT_TS_PEER"));
    let client = Client::stdio(command, options(Era::Legacy))
        .await
        .unwrap_or_else(|e| panic!("ts stdio legacy: {e}"));
    assert_era(&client, Era::Legacy, "ts stdio legacy");
    exercise(&client, "ts stdio legacy").await;
    client.close().await.unwrap();
}

/// A dated session's subscription to the Python peer: `resources/subscribe`,
/// the update `touch` sends (over HTTP on the session's GET stream), and
/// `resources/unsubscribe` once the subscription is dropped (the peer then
/// says the resource is not subscribed).
#[tokio::test]
#[ignore = "needs the Python SDK (mcp 2.3.0): run scripts/client-peers"]
async fn the_python_sdk_sends_a_dated_session_its_resource_updates() {
    let (mut child, url) = python_http_peer().await;
    for over in ["stdio", "http"] {
        let options = options(Era::Legacy);
        let client = if over == "stdio" {
            let command = StdioCommand::new(env("TYPED_MCP_CLIENT_PYTHON")).arg(python_peer());
            Client::stdio(command, options).await
        } else {
            Client::http(&url, options).await
        }
        .unwrap_or_else(|e| panic!("python {over}: {e}"));
        let mut subscription = client
            .listen(json!({"resourceSubscriptions": ["peer://readme"]}))
            .await
            .unwrap_or_else(|e| panic!("python {over}: {e}"));
        let touched = client
            .call_tool("touch", json!({"uri": "peer://readme"}))
            .await
            .unwrap();
        assert_eq!(text(&touched), "peer://readme updated", "python {over}");
        let update = tokio::time::timeout(Duration::from_secs(10), subscription.next())
            .await
            .unwrap_or_else(|_| panic!("python {over}: no update"))
            .unwrap_or_else(|| panic!("python {over}: the subscription ended"))
            .unwrap_or_else(|e| panic!("python {over}: {e}"));
        assert_eq!(
            update["method"], "notifications/resources/updated",
            "python {over}"
        );
        assert_eq!(update["params"]["uri"], "peer://readme", "python {over}");
        drop(subscription);
        let mut unsubscribed = false;
        for _ in 0..100 {
            let touched = client
                .call_tool("touch", json!({"uri": "peer://readme"}))
                .await
                .unwrap();
            if text(&touched) == "peer://readme is not subscribed" {
                unsubscribed = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            unsubscribed,
            "python {over}: still subscribed after the drop"
        );
        client.close().await.unwrap();
    }
    let _ = child.kill().await;
}
