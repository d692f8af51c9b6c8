//! The application's authentication reaches handlers: a layer of its own puts a
//! `Principal` in the request's extensions; with `require_authentication()` a
//! request without one is refused.

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use serde_json::json;
use typed_mcp::wire::CallToolResult;
use typed_mcp::{Principal, Server, ToolDecl};

use crate::support::{Client, Req, serve};

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

/// A stand-in for an application's token check.
async fn authenticate(mut request: Request, next: Next) -> Response {
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
    let mcp = typed_mcp_http::HttpServer::new(server())
        .require_authentication()
        .into_router()
        .unwrap()
        .layer(middleware::from_fn(authenticate));
    let client = Client::new(serve(mcp).await, "/");

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
    let client = Client::new(
        serve(
            typed_mcp_http::HttpServer::new(server())
                .into_router()
                .unwrap(),
        )
        .await,
        "/",
    );
    let reply = client.send(&Req::call("whoami", json!({}))).await;
    assert_eq!(reply.json()["result"]["content"][0]["text"], "nobody");
}
