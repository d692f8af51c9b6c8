//! What refuses to build, and where the endpoint is mounted. Which addresses
//! build is in `exposure`.

use std::net::SocketAddr;

use serde_json::json;
use typed_mcp_http::{HttpError, HttpServer, ServerExt as _};

use crate::support::{Client, Probe, Req, serve, server};

const LOCAL: &str = "127.0.0.1:8000";

#[test]
fn malformed_settings_are_refused() {
    let local: SocketAddr = LOCAL.parse().unwrap();
    let http = || HttpServer::new(server(&Probe::default()), local);
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
    let addr = serve(|addr| {
        axum::Router::new().nest("/mcp", server(&Probe::default()).into_router(addr).unwrap())
    })
    .await;
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

    let addr = serve(|addr| {
        server(&Probe::default())
            .http(addr)
            .mount("/v1/mcp")
            .unwrap()
    })
    .await;
    let reply = Client::new(addr, "/v1/mcp")
        .send(&Req::call("add", json!({"a": 1, "b": 1})))
        .await;
    assert_eq!(reply.json()["result"]["structuredContent"]["sum"], 2);
}
