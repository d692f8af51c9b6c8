//! `EndpointService` answers every request as the router at the same path
//! does, on both eras, refusals included.

use http::{Method, StatusCode};
use serde_json::json;
use typed_mcp_http::HttpServer;

use crate::support::{Client, Probe, Reply, Req, server};

/// The same server behind `mount("/mcp")` and `into_service("/mcp")`.
async fn both() -> (Client, Client) {
    let probe = Probe::default();
    let routed = crate::support::serve(|addr| {
        HttpServer::new(server(&probe), addr)
            .mount("/mcp")
            .expect("the router builds")
    })
    .await;
    let direct = crate::support::serve_service(|addr| {
        HttpServer::new(server(&probe), addr)
            .into_service("/mcp")
            .expect("the service builds")
    })
    .await;
    (Client::new(routed, "/mcp"), Client::new(direct, "/mcp"))
}

/// What must be equal: status, the headers a client reads, and the body
/// (an `Mcp-Session-Id` is random, so only its presence is compared).
fn seen(reply: &Reply) -> (StatusCode, Vec<Option<String>>, bool, bytes::Bytes) {
    let headers = ["content-type", "allow", "retry-after", "content-length"]
        .iter()
        .map(|name| reply.header(name).map(str::to_owned))
        .collect();
    (
        reply.status,
        headers,
        reply.header("mcp-session-id").is_some(),
        reply.body.clone(),
    )
}

#[tokio::test]
async fn the_service_answers_every_request_as_the_router_does() {
    let (routed, direct) = both().await;
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    });
    let cases: Vec<(&str, Req)> = vec![
        ("a call", Req::call("add", json!({"a": 2, "b": 3}))),
        ("bad arguments", Req::call("add", json!({"a": "two"}))),
        ("discover", Req::rpc("server/discover", json!({}))),
        ("tools/list", Req::rpc("tools/list", json!({}))),
        ("not JSON", Req::raw("{not json")),
        ("a batch", Req::raw("[]")),
        (
            "a notification",
            Req::raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        ),
        (
            "a header disagreeing",
            Req::call("add", json!({"a": 1, "b": 1})).header("mcp-name", "other"),
        ),
        ("GET", Req::raw("").method(Method::GET)),
        ("DELETE", Req::raw("").method(Method::DELETE)),
        (
            "no Accept",
            Req::call("add", json!({"a": 1, "b": 1})).without("accept"),
        ),
        (
            "a form",
            Req::call("add", json!({"a": 1, "b": 1})).header("content-type", "text/plain"),
        ),
        (
            "a foreign Host",
            Req::call("add", json!({"a": 1, "b": 1})).header("host", "evil.example"),
        ),
        (
            "a foreign Origin",
            Req::call("add", json!({"a": 1, "b": 1})).header("origin", "http://evil.example"),
        ),
        (
            "an unknown session",
            Req::rpc("tools/list", json!({}))
                .header("mcp-session-id", "00")
                .header("mcp-protocol-version", "2025-11-25"),
        ),
        (
            "a legacy initialize",
            Req::raw(serde_json::to_vec(&initialize).unwrap()),
        ),
    ];
    for (what, req) in &cases {
        let (a, b) = (routed.send(req).await, direct.send(req).await);
        assert_eq!(seen(&a), seen(&b), "{what}: router {a:?}\nservice {b:?}");
    }
    // A call's answer is the call's, not a refusal that happens to agree.
    let sum = direct.send(&cases[0].1).await.json();
    assert_eq!(sum["result"]["structuredContent"]["sum"], 5, "{sum}");

    // Other paths are the router's: 404, on both, for every method.
    for path in ["/", "/mcp/", "/other", "/mcp/x"] {
        for req in [
            Req::call("add", json!({"a": 1, "b": 1})),
            Req::raw("").method(Method::GET),
        ] {
            let a = Client::new(routed.addr, path).send(&req).await;
            let b = Client::new(direct.addr, path).send(&req).await;
            assert_eq!(a.status, StatusCode::NOT_FOUND, "{path}");
            assert_eq!(seen(&a), seen(&b), "{path}");
        }
    }
    // A query string does not change the path.
    let query = Client::new(direct.addr, "/mcp?x=1")
        .send(&cases[0].1)
        .await
        .json();
    assert_eq!(query["result"]["structuredContent"]["sum"], 5, "{query}");
}
