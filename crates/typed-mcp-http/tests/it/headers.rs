//! Standard and parameter headers checked against the body, base64 sentinels
//! decoded first.

use serde_json::json;

use crate::support::{Probe, Req, serve_default};

fn b64(text: &str) -> String {
    use base64::Engine as _;
    format!(
        "=?base64?{}?=",
        base64::engine::general_purpose::STANDARD.encode(text)
    )
}

#[tokio::test]
async fn mcp_name_sentinels_are_decoded_before_comparing() {
    let client = serve_default(&Probe::default()).await;
    let add = || Req::call("add", json!({"a": 1, "b": 2}));
    let reply = client.send(&add().header("mcp-name", &b64("add"))).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["result"]["structuredContent"]["sum"], 3);
    client
        .send(&add().header("mcp-name", &b64("other")))
        .await
        .assert_error(400, -32020);
    client
        .send(&add().header("mcp-name", "=?base64?YW!!ZA==?="))
        .await
        .assert_error(400, -32020);
    let reply = client
        .send(&add().header("mcp-name", "=?base64?YWRk?="))
        .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let reply = client.send(&add().header("mcp-name", "  add  ")).await;
    assert_eq!(reply.status, 200, "surrounding whitespace is trimmed");
}

#[tokio::test]
async fn mcp_param_headers_are_checked_against_the_arguments() {
    let client = serve_default(&Probe::default()).await;
    let call = |region: &str| Req::call("region", json!({"region": region}));
    let reply = client
        .send(&call("Hello").header("mcp-param-region", &b64("Hello")))
        .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "Hello");
    // Bad padding and bad characters in the sentinel.
    for bad in ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?="] {
        client
            .send(&call("Hello").header("Mcp-Param-Region", bad))
            .await
            .assert_error(400, -32020);
    }
    // Not a sentinel: compared literally.
    let literal = "=?base64?SGVsbG8=";
    let reply = client
        .send(&call(literal).header("mcp-param-region", literal))
        .await;
    assert_eq!(reply.status, 200);
    client
        .send(&call("Hello").header("mcp-param-region", "Bye"))
        .await
        .assert_error(400, -32020);
    client.send(&call("Hello")).await.assert_error(400, -32020);
    // Non-ASCII needs the sentinel.
    let reply = client
        .send(&call("Zürich").header("mcp-param-region", &b64("Zürich")))
        .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn unreadable_header_values_are_32020() {
    let client = serve_default(&Probe::default()).await;
    let req = Req::call("add", json!({"a": 1, "b": 2})).header_bytes("mcp-name", b"add\x80");
    client.send(&req).await.assert_error(400, -32020);
    let req = Req::rpc("tools/list", json!({})).header_bytes("mcp-method", b"tools/list\xff");
    client.send(&req).await.assert_error(400, -32020);
}

#[tokio::test]
async fn header_names_are_case_insensitive() {
    let client = serve_default(&Probe::default()).await;
    let req = Req::rpc("tools/list", json!({}))
        .without("mcp-method")
        .without("mcp-protocol-version")
        .header("MCP-METHOD", "tools/list")
        .header("Mcp-Protocol-Version", "2026-07-28");
    assert_eq!(client.send(&req).await.status, 200);
}
