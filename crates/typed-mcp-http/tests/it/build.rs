//! What refuses to build, and where the endpoint is mounted.

use serde_json::json;
use typed_mcp_http::{HttpError, HttpServer, ServerExt as _};

use crate::support::{Client, Probe, Req, serve, server};

#[test]
fn a_public_bind_without_protection_is_refused_with_both_ways_out() {
    let public = "0.0.0.0:8080".parse().unwrap();
    let error = HttpServer::new(server(&Probe::default()))
        .bind_address(public)
        .into_router()
        .unwrap_err();
    assert_eq!(error, HttpError::UnprotectedBind { address: public });
    let message = error.to_string();
    assert!(message.contains("0.0.0.0:8080"), "{message}");
    assert!(message.contains("allow_hosts"), "{message}");
    assert!(message.contains("require_authentication"), "{message}");
    // Origins alone do not protect against a client that sends none.
    let error = HttpServer::new(server(&Probe::default()))
        .bind_address("192.0.2.1:80".parse().unwrap())
        .allow_origins(["https://app.example.com"])
        .into_router()
        .unwrap_err();
    assert!(matches!(error, HttpError::UnprotectedBind { .. }));
}

#[test]
fn a_public_bind_with_protection_builds() {
    let public = "[::]:8080".parse().unwrap();
    let http = HttpServer::new(server(&Probe::default()))
        .bind_address(public)
        .require_authentication();
    assert!(http.requires_authentication());
    assert!(http.into_router().is_ok());
    let built = HttpServer::new(server(&Probe::default()))
        .bind_address(public)
        .allow_hosts(["mcp.example.com"])
        .into_router();
    assert!(built.is_ok());
    let loopback = HttpServer::new(server(&Probe::default()))
        .bind_address("[::1]:0".parse().unwrap())
        .into_router();
    assert!(loopback.is_ok());
}

#[test]
fn malformed_settings_are_refused() {
    let http = || HttpServer::new(server(&Probe::default()));
    assert!(matches!(
        http().allow_hosts(["https://x.example"]).into_router(),
        Err(HttpError::InvalidAllowedHost { .. })
    ));
    assert!(matches!(
        http().allow_origins(["x.example"]).into_router(),
        Err(HttpError::InvalidAllowedOrigin { .. })
    ));
    for path in ["mcp", "/{id}", "/*rest", ""] {
        assert!(
            matches!(http().mount(path), Err(HttpError::InvalidPath { .. })),
            "{path}"
        );
    }
}

#[tokio::test]
async fn nested_and_mounted_endpoints_answer() {
    let nested = axum::Router::new().nest("/mcp", server(&Probe::default()).into_router().unwrap());
    let addr = serve(nested).await;
    let reply = Client::new(addr, "/mcp")
        .send(&Req::rpc("tools/list", json!({})))
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        Client::new(addr, "/other")
            .send(&Req::rpc("tools/list", json!({})))
            .await
            .status,
        404
    );

    let mounted = server(&Probe::default()).http().mount("/v1/mcp").unwrap();
    let addr = serve(mounted).await;
    let reply = Client::new(addr, "/v1/mcp")
        .send(&Req::call("add", json!({"a": 1, "b": 1})))
        .await;
    assert_eq!(reply.json()["result"]["structuredContent"]["sum"], 2);
}
