//! Which addresses are served: loopback as it is, anything else only behind
//! the application's authentication.

use std::net::SocketAddr;

use axum::middleware;
use serde_json::json;
use typed_mcp_http::{HttpError, HttpServer, ServerExt as _};

use crate::principal::authenticate;
use crate::support::{Client, Probe, Req, serve, serve_default, server};

fn http(addr: &str) -> HttpServer {
    HttpServer::new(server(&Probe::default()), addr.parse().unwrap())
}

fn add() -> Req {
    Req::call("add", json!({"a": 1, "b": 2}))
}

#[track_caller]
fn assert_served(reply: &crate::support::Reply) {
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["result"]["structuredContent"]["sum"], 3);
}

#[test]
fn a_wildcard_address_without_authentication_is_refused_and_says_what_to_do() {
    for addr in [
        "0.0.0.0:8080",
        "[::]:8080",
        "192.0.2.1:80",
        "[2001:db8::1]:443",
    ] {
        let address: SocketAddr = addr.parse().unwrap();
        let error = http(addr).into_router().unwrap_err();
        assert_eq!(error, HttpError::UnprotectedBind { address });
        let message = error.to_string();
        assert!(message.starts_with("refusing to serve MCP on"), "{message}");
        assert!(message.contains(&address.to_string()), "{message}");
        assert!(message.contains("require_authentication()"), "{message}");
        assert!(message.contains("Principal"), "{message}");
        assert!(message.contains("127.0.0.1"), "{message}");
    }
    // The shortcut refuses the same way.
    let error = server(&Probe::default())
        .into_router("0.0.0.0:1".parse().unwrap())
        .unwrap_err();
    assert!(matches!(error, HttpError::UnprotectedBind { .. }));
}

#[test]
fn allow_lists_alone_do_not_open_a_public_address() {
    let error = http("0.0.0.0:8080")
        .allow_hosts(["mcp.example.com"])
        .into_router()
        .unwrap_err();
    assert!(matches!(error, HttpError::UnprotectedBind { .. }));
    assert!(error.to_string().contains("allow_hosts"), "{error}");
    let error = http("[::]:8080")
        .allow_hosts(["mcp.example.com"])
        .allow_origins(["https://app.example.com"])
        .into_router()
        .unwrap_err();
    assert!(matches!(error, HttpError::UnprotectedBind { .. }));
}

#[test]
fn loopback_addresses_build_without_authentication() {
    for addr in [
        "127.0.0.1:0",
        "127.1.2.3:8000",
        "[::1]:0",
        "[::ffff:127.0.0.1]:8000",
    ] {
        let built = http(addr).into_router();
        assert!(built.is_ok(), "{addr}: {built:?}");
    }
}

/// A router built for `0.0.0.0:<port>` (what a listener on every interface
/// reports) behind the test's authentication layer, served on loopback.
async fn public(settings: impl FnOnce(HttpServer) -> HttpServer) -> Client {
    let addr = serve(|loopback| {
        let public = SocketAddr::from(([0, 0, 0, 0], loopback.port()));
        let http = settings(HttpServer::new(server(&Probe::default()), public));
        http.into_router()
            .expect("an authenticated public router builds")
            .layer(middleware::from_fn(authenticate))
    })
    .await;
    Client::new(addr, "/")
}

fn as_caller(req: Req) -> Req {
    req.header("authorization", "Bearer tester")
}

#[tokio::test]
async fn an_authenticated_public_router_serves_callers_and_refuses_anonymous_requests() {
    let client = public(HttpServer::require_authentication).await;
    for _ in 0..2 {
        let refused = client.send(&add()).await;
        let body = refused.assert_error(401, -32600);
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("authenticated"), "{message}");
        assert!(body.get("id").is_none(), "{body}");
        assert_served(&client.send(&as_caller(add())).await);
    }
}

#[tokio::test]
async fn an_authenticated_public_router_checks_origin_and_only_listed_hosts() {
    // Without allow_hosts: any Host (the library cannot guess public names).
    let client = public(HttpServer::require_authentication).await;
    assert_served(
        &client
            .send(&as_caller(add()).header("host", "mcp.example.com"))
            .await,
    );
    let foreign_origin = as_caller(add()).header("origin", "https://evil.example.com");
    client.send(&foreign_origin).await.assert_error(403, -32600);
    assert_served(&client.send(&as_caller(add())).await);

    // With allow_hosts: only those names (and loopback ones).
    let client = public(|http| {
        http.require_authentication()
            .allow_hosts(["mcp.example.com"])
    })
    .await;
    assert_served(
        &client
            .send(&as_caller(add()).header("host", "mcp.example.com:443"))
            .await,
    );
    client
        .send(&as_caller(add()).header("host", "other.example.com"))
        .await
        .assert_error(403, -32600);
    assert_served(&client.send(&as_caller(add())).await);
}

#[tokio::test]
async fn a_loopback_router_serves_as_before() {
    let client = serve_default(&Probe::default()).await;
    assert_served(&client.send(&add()).await);
    client
        .send(&add().header("host", "evil.example.com"))
        .await
        .assert_error(403, -32600);
    assert_served(&client.send(&add()).await);
}
