//! The application's authentication reaches handlers: a layer of its own puts a
//! `Principal` in the request's extensions; with `require_authentication()` a
//! request without one is refused.

use std::net::SocketAddr;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use serde_json::json;
use typed_mcp::wire::CallToolResult;
use typed_mcp::{Principal, Server, declare::ToolDecl};

use crate::support::{Client, Req, serve, serve_http};

fn server() -> Server {
    Server::new("principals", "0.1.0")
        .tool(
            ToolDecl::builder("whoami")
                .description("Name the caller.")
                .handler(|_, ctx| async move {
                    let who = ctx.principal().map_or("nobody", Principal::id).to_owned();
                    Ok(CallToolResult::text(who))
                }),
        )
        .build()
        .unwrap()
}

/// A stand-in for an application's token check: `Authorization: Bearer <id>`
/// makes `<id>` the principal.
pub async fn authenticate(mut request: Request, next: Next) -> Response {
    let caller = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(Principal::new);
    if let Some(caller) = caller {
        request.extensions_mut().insert(caller);
    }
    next.run(request).await
}

#[tokio::test]
async fn the_authenticated_principal_reaches_the_handler() {
    let addr = serve(|addr| {
        typed_mcp_http::HttpServer::new(server(), addr)
            .require_authentication()
            .into_router()
            .unwrap()
            .layer(middleware::from_fn(authenticate))
    })
    .await;
    let client = Client::new(addr, "/");

    let call = Req::call("whoami", json!({}));
    let reply = client
        .send(&call.clone().header("authorization", "Bearer alice"))
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "alice");

    let refused = client.send(&call).await;
    assert_eq!(refused.status, 401, "{:?}", refused.body);
    assert_eq!(refused.json()["error"]["code"], -32600);
}

#[tokio::test]
async fn without_a_requirement_there_may_be_no_principal() {
    let client = serve_http(server(), |http| http).await;
    let reply = client.send(&Req::call("whoami", json!({}))).await;
    assert_eq!(reply.json()["result"]["content"][0]["text"], "nobody");
}

const DESK_ADMIN: typed_mcp::Capability =
    typed_mcp::Capability::new("desk.admin", "Administer the support desk");

/// A server whose `purge` tool needs `desk.admin`, granted to alice only, and
/// which hides what a caller may not use.
fn governed(receipts: typed_mcp::receipt::MemorySink, addr: SocketAddr) -> axum::Router {
    let server = Server::new("governed", "0.1.0")
        .tool(
            ToolDecl::builder("purge")
                .description("Purge closed tickets.")
                .requires(DESK_ADMIN)
                .handler(|_, _| async { Ok(CallToolResult::text("purged")) }),
        )
        .tool(
            ToolDecl::builder("whoami")
                .description("Name the caller.")
                .handler(|_, ctx| async move {
                    let who = ctx.principal().map_or("nobody", Principal::id).to_owned();
                    Ok(CallToolResult::text(who))
                }),
        )
        .grant_policy(|p| match p.map(Principal::id) {
            Some("alice") => vec![DESK_ADMIN],
            _ => vec![],
        })
        .hide_ungranted(true)
        .receipt_sink(receipts)
        .build()
        .unwrap();
    typed_mcp_http::HttpServer::new(server, addr)
        .into_router()
        .unwrap()
        .layer(middleware::from_fn(authenticate))
}

#[tokio::test]
async fn capabilities_follow_the_principal_over_http() {
    let receipts = typed_mcp::receipt::MemorySink::new();
    let client = Client::new(serve(|addr| governed(receipts.clone(), addr)).await, "/");
    let as_user = |req: Req, who: &str| req.header("authorization", &format!("Bearer {who}"));
    let list = Req::rpc("tools/list", json!({}));

    let alice = client.send(&as_user(list.clone(), "alice")).await.json();
    let names: Vec<&str> = alice["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["purge", "whoami"]);
    assert_eq!(alice["result"]["cacheScope"], "private");
    let bob = client.send(&as_user(list, "bob")).await.json();
    assert_eq!(bob["result"]["tools"].as_array().unwrap().len(), 1);
    assert_eq!(bob["result"]["cacheScope"], "private");

    let refused = client
        .send(&as_user(Req::call("purge", json!({})), "bob"))
        .await
        .json();
    assert_eq!(refused["result"]["isError"], true);
    let allowed = client
        .send(&as_user(Req::call("purge", json!({})), "alice"))
        .await
        .json();
    assert_eq!(allowed["result"]["content"][0]["text"], "purged");
    let outcomes: Vec<(Option<String>, &'static str)> = receipts
        .take()
        .into_iter()
        .map(|r| (r.principal, r.outcome.kind()))
        .collect();
    assert_eq!(
        outcomes,
        [
            (Some("bob".to_owned()), "refused"),
            (Some("alice".to_owned()), "completed")
        ]
    );
}
