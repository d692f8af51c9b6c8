//! DNS-rebinding protection: Host and Origin.

use crate::support::{Probe, Req, Warnings, serve_default, serve_http, server};
use serde_json::json;

fn discover() -> Req {
    Req::rpc("server/discover", json!({}))
}

#[tokio::test]
async fn a_foreign_host_is_403_and_says_why() {
    let client = serve_default(&Probe::default()).await;
    let reply = client
        .send(&discover().header("host", "evil.example.com"))
        .await;
    let body = reply.assert_error(403, -32600);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("evil.example.com"), "{message}");
    assert!(message.contains("allow_hosts"), "{message}");
    assert!(body.get("id").is_none());
}

#[tokio::test]
async fn a_foreign_origin_is_403_and_says_why() {
    let client = serve_default(&Probe::default()).await;
    let port = client.addr.port();
    let req = discover()
        .header("host", &format!("127.0.0.1:{port}"))
        .header("origin", "http://evil.example.com");
    let body = client.send(&req).await.assert_error(403, -32600);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("Origin"), "{message}");
    // The conformance probe: both foreign.
    let req = discover()
        .header("host", "evil.example.com")
        .header("origin", "http://evil.example.com");
    assert_eq!(client.send(&req).await.status, 403);
    // A refusal comes before every other check.
    let get = Req::raw("")
        .method(http::Method::GET)
        .header("host", "evil.example.com");
    assert_eq!(client.send(&get).await.status, 403);
}

#[tokio::test]
async fn loopback_hosts_and_origins_with_ports_pass() {
    let client = serve_default(&Probe::default()).await;
    let port = client.addr.port();
    let cases = [
        (
            format!("127.0.0.1:{port}"),
            Some(format!("http://127.0.0.1:{port}")),
        ),
        (
            format!("localhost:{port}"),
            Some(format!("https://localhost:{port}")),
        ),
        (
            format!("[::1]:{port}"),
            Some("http://[::1]:9999".to_owned()),
        ),
        ("LOCALHOST".to_owned(), None),
    ];
    for (host, origin) in cases {
        let mut req = discover().header("host", &host);
        if let Some(origin) = &origin {
            req = req.header("origin", origin);
        }
        let reply = client.send(&req).await;
        assert_eq!(reply.status, 200, "{host} {origin:?}: {:?}", reply.body);
    }
}

#[tokio::test]
async fn allow_lists_admit_more_names() {
    let client = serve_http(server(&Probe::default()), |http| {
        http.allow_hosts(["mcp.example.com"])
            .allow_origins(["https://app.example.com"])
    })
    .await;
    let req = discover()
        .header("host", "MCP.example.com:8443")
        .header("origin", "https://app.example.com");
    assert_eq!(client.send(&req).await.status, 200);
    let req = discover().header("host", "other.example.com");
    assert_eq!(client.send(&req).await.status, 403);
    let req = discover().header("origin", "https://other.example.com");
    assert_eq!(client.send(&req).await.status, 403);
}

#[tokio::test]
async fn a_refusal_is_logged_with_its_reason() {
    let warnings = Warnings::global();
    let client = serve_default(&Probe::default()).await;
    let reply = client
        .send(&discover().header("host", "logged.evil.example.com"))
        .await;
    assert_eq!(reply.status, 403);
    let line = warnings.find("logged.evil.example.com");
    assert!(line.contains("DNS-rebinding"), "{line}");
    assert!(line.contains("reason="), "{line}");
}
