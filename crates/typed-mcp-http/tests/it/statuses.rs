//! One test per status code the endpoint answers with.

use http::Method;
use serde_json::json;

use crate::support::{Probe, Req, serve_default};

#[tokio::test]
async fn a_call_is_200_with_one_line_of_json() {
    let client = serve_default(&Probe::default()).await;
    let reply = client
        .send(&Req::call("add", json!({"a": 2, "b": 3})))
        .await;
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["id"], 1);
    assert_eq!(body["result"]["structuredContent"], json!({"sum": 5}));
    assert_eq!(body["result"]["resultType"], "complete");
}

#[tokio::test]
async fn discover_and_lists_are_200() {
    let client = serve_default(&Probe::default()).await;
    let reply = client.send(&Req::rpc("server/discover", json!({}))).await;
    assert_eq!(reply.status, 200);
    assert!(reply.json()["result"]["supportedVersions"].is_array());
    let reply = client.send(&Req::rpc("tools/list", json!({}))).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["tools"][0]["name"], "add");
}

#[tokio::test]
async fn a_notification_is_202_without_a_body() {
    let client = serve_default(&Probe::default()).await;
    let body =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    let reply = client.send(&Req::raw(body.to_string())).await;
    assert_eq!(reply.status, 202);
    assert!(reply.body.is_empty());
    let body = json!({"jsonrpc": "2.0", "method": "notifications/whatever"});
    let reply = client
        .send(&Req::raw(body.to_string()).header("mcp-method", "notifications/whatever"))
        .await;
    assert_eq!(reply.status, 202);
}

#[tokio::test]
async fn malformed_messages_are_400() {
    let client = serve_default(&Probe::default()).await;
    client
        .send(&Req::raw("{not json"))
        .await
        .assert_error(400, -32700);
    client.send(&Req::raw("[]")).await.assert_error(400, -32600);
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]);
    client
        .send(&Req::raw(batch.to_string()))
        .await
        .assert_error(400, -32600);
    let old = json!({"jsonrpc": "1.0", "id": 7, "method": "tools/list"});
    let body = client
        .send(&Req::raw(old.to_string()))
        .await
        .assert_error(400, -32600);
    assert_eq!(body["id"], 7, "the id is echoed");
}

#[tokio::test]
async fn envelope_errors_are_400_with_the_id() {
    let client = serve_default(&Probe::default()).await;
    let no_meta = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}});
    let req = Req::raw(no_meta.to_string())
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list");
    let body = client.send(&req).await.assert_error(400, -32602);
    assert_eq!(body["id"], 9);
}

#[tokio::test]
async fn header_errors_are_400_and_32020() {
    let client = serve_default(&Probe::default()).await;
    let list = || Req::rpc("tools/list", json!({}));
    let missing_version = list().without("mcp-protocol-version");
    client
        .send(&missing_version)
        .await
        .assert_error(400, -32020);
    let missing_method = list().without("mcp-method");
    client.send(&missing_method).await.assert_error(400, -32020);
    let wrong_method = list().header("mcp-method", "prompts/list");
    client.send(&wrong_method).await.assert_error(400, -32020);
    let wrong_case = list().header("mcp-method", "TOOLS/LIST");
    client.send(&wrong_case).await.assert_error(400, -32020);
    let wrong_version = list().header("mcp-protocol-version", "2025-11-25");
    client.send(&wrong_version).await.assert_error(400, -32020);
    let missing_name = Req::call("add", json!({"a": 1, "b": 1})).without("mcp-name");
    client.send(&missing_name).await.assert_error(400, -32020);
}

#[tokio::test]
async fn a_missing_client_capability_is_400_and_32021() {
    let client = serve_default(&Probe::default()).await;
    let body = client
        .send(&Req::call("sample", json!({})))
        .await
        .assert_error(400, -32021);
    assert_eq!(
        body["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[tokio::test]
async fn an_unsupported_version_is_400_and_32022() {
    let client = serve_default(&Probe::default()).await;
    let mut meta = serde_json::Map::new();
    meta.insert(
        "io.modelcontextprotocol/protocolVersion".into(),
        json!("2099-01-01"),
    );
    let req = Req::rpc_with_meta("tools/list", json!({}), meta)
        .header("mcp-protocol-version", "2099-01-01");
    let body = client.send(&req).await.assert_error(400, -32022);
    assert_eq!(body["error"]["data"]["requested"], "2099-01-01");
}

#[tokio::test]
async fn an_unknown_method_is_404_with_a_json_rpc_body() {
    let client = serve_default(&Probe::default()).await;
    let body = client
        .send(&Req::rpc("tools/frobnicate", json!({})))
        .await
        .assert_error(404, -32601);
    assert_eq!(body["id"], 1);
    client
        .send(&Req::rpc("ping", json!({})))
        .await
        .assert_error(404, -32601);
}

#[tokio::test]
async fn an_unknown_tool_is_200_with_32602() {
    let client = serve_default(&Probe::default()).await;
    client
        .send(&Req::call("nope", json!({})))
        .await
        .assert_error(200, -32602);
}

#[tokio::test]
async fn a_panicking_handler_is_500_with_32603() {
    let client = serve_default(&Probe::default()).await;
    let body = client
        .send(&Req::call("boom", json!({})))
        .await
        .assert_error(500, -32603);
    assert_eq!(body["id"], 1);
}

#[tokio::test]
async fn get_and_delete_are_405_with_allow_post() {
    let client = serve_default(&Probe::default()).await;
    for method in [Method::GET, Method::DELETE, Method::PUT] {
        let reply = client.send(&Req::raw("").method(method.clone())).await;
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("allow"), Some("POST"));
        assert_eq!(reply.error_code(), -32600);
    }
}

#[tokio::test]
async fn an_unacceptable_accept_is_406() {
    let client = serve_default(&Probe::default()).await;
    let req = Req::rpc("tools/list", json!({})).header("accept", "text/html");
    client.send(&req).await.assert_error(406, -32600);
    let req = Req::rpc("tools/list", json!({})).header("accept", "*/*");
    assert_eq!(client.send(&req).await.status, 200);
    let req = Req::rpc("tools/list", json!({})).without("accept");
    assert_eq!(client.send(&req).await.status, 200);
}

#[tokio::test]
async fn every_accept_header_counts_when_there_are_several() {
    let client = serve_default(&Probe::default()).await;
    let with_accepts = |values: [&str; 2]| {
        let mut req = Req::rpc("tools/list", json!({})).without("accept");
        for value in values {
            req.headers.append("accept", value.parse().unwrap());
        }
        req
    };
    // The first alone is unacceptable; the second makes the request acceptable.
    let reply = client
        .send(&with_accepts(["text/html", "application/json"]))
        .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert!(reply.json()["result"]["tools"].is_array());
    let req = with_accepts(["text/html", "image/png"]);
    client.send(&req).await.assert_error(406, -32600);
    // The server still serves.
    let req = Req::rpc("tools/list", json!({}));
    assert_eq!(client.send(&req).await.status, 200);
}

#[tokio::test]
async fn a_body_that_is_not_json_is_415() {
    let client = serve_default(&Probe::default()).await;
    let req = Req::rpc("tools/list", json!({})).header("content-type", "text/plain");
    client.send(&req).await.assert_error(415, -32600);
    let req = Req::rpc("tools/list", json!({})).without("content-type");
    client.send(&req).await.assert_error(415, -32600);
    let req =
        Req::rpc("tools/list", json!({})).header("content-type", "application/json; charset=utf-8");
    assert_eq!(client.send(&req).await.status, 200);
}

#[tokio::test]
async fn session_and_resumption_headers_are_ignored() {
    let client = serve_default(&Probe::default()).await;
    let req = Req::rpc("tools/list", json!({}))
        .header("mcp-session-id", "abc")
        .header("last-event-id", "3");
    let reply = client.send(&req).await;
    assert_eq!(reply.status, 200);
    assert!(reply.header("mcp-session-id").is_none());
}
