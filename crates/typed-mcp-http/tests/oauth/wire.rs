//! The endpoint as an OAuth resource server, on the wire: metadata, the 401
//! and 403 challenges, scopes as grants, hidden lists, receipts, and no
//! token anywhere a client or a log could see it.

use std::collections::BTreeMap;

use http::Method;
use serde_json::{Value, json};
use typed_mcp::declare::{PromptDecl, ResourceDecl, ResourceTemplateDecl, ToolDecl};
use typed_mcp::receipt::MemorySink;
use typed_mcp::wire::{CallToolResult, GetPromptResult, PromptMessage, ResourceContents};
use typed_mcp::{Capability, Server};
use typed_mcp_http::HttpServer;
use typed_mcp_http::oauth::{Introspection, JwtVerifier, OAuth, TokenVerifier};

use crate::keys::{Jwks, Key};
use crate::tokens::{RESOURCE, bad_tokens, claims};
use crate::{Logs, Reply, rpc, send, serve};

const DESK_WRITE: Capability = Capability::new("desk.write", "Change tickets");
const DESK_ADMIN: Capability = Capability::new("desk.admin", "Purge tickets");
const METADATA: &str = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp";

fn server(receipts: &MemorySink) -> Server {
    Server::new("oauth-desk", "0.1.0")
        .tool(
            ToolDecl::builder("whoami")
                .description("Say who is calling.")
                .handler(|_, ctx| async move {
                    let p = ctx.principal().expect("a principal");
                    let text = format!(
                        "{} {} {:?}",
                        p.id(),
                        p.claim("email").and_then(Value::as_str).unwrap_or("-"),
                        p.granted().unwrap_or_default()
                    );
                    Ok(CallToolResult::text(text))
                }),
        )
        .tool(
            ToolDecl::builder("close_ticket")
                .description("Close a ticket.")
                .requires(DESK_WRITE)
                .handler(|_, _| async { Ok(CallToolResult::text("closed")) }),
        )
        .tool(
            ToolDecl::builder("purge")
                .description("Purge closed tickets.")
                .requires(DESK_WRITE)
                .requires(DESK_ADMIN)
                .handler(|_, _| async { Ok(CallToolResult::text("purged")) }),
        )
        .resource(
            ResourceDecl::builder("desk://stats", "stats")
                .description("Desk statistics.")
                .requires(DESK_WRITE)
                .handler(
                    |r, _| async move { Ok(vec![ResourceContents::text(r.uri, None, "3 open")]) },
                ),
        )
        .resource_template(
            ResourceTemplateDecl::builder("ticket://{id}", "ticket")
                .description("A ticket.")
                .parameter("id", "The ticket.")
                .requires(DESK_WRITE)
                .handler(|r, _| async move {
                    Ok(vec![ResourceContents::text(r.uri, None, "a ticket")])
                }),
        )
        .prompt(
            PromptDecl::builder("escalate")
                .description("Escalate a ticket.")
                .requires(DESK_WRITE)
                .handler(|_: BTreeMap<String, String>, _| async {
                    Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                        "escalate",
                    )]))
                }),
        )
        .hide_ungranted(true)
        .receipt_sink(receipts.clone())
        .build()
        .unwrap()
}

/// How the desk is served.
#[derive(Clone, Copy, Debug)]
enum Via {
    /// `mount("/mcp")`, a router.
    Router,
    /// `into_service("/mcp")`, which must still send every request through
    /// the resource server's layer.
    Service,
}

/// The desk behind `verifier`, served at `/mcp`; its base URL.
async fn desk(verifier: impl TokenVerifier, issuer: &str, receipts: &MemorySink) -> String {
    desk_via(Via::Router, verifier, issuer, receipts).await
}

/// [`desk`], served as `via` says.
async fn desk_via(
    via: Via,
    verifier: impl TokenVerifier,
    issuer: &str,
    receipts: &MemorySink,
) -> String {
    let oauth = OAuth::new(RESOURCE, verifier)
        .unwrap()
        .authorization_server(issuer)
        .unwrap()
        .map_scope("desk:admin", [DESK_ADMIN])
        .unwrap()
        .resource_name("The test desk");
    let http = |addr| HttpServer::new(server(receipts), addr).oauth(oauth);
    let addr = match via {
        Via::Router => serve(|addr| http(addr).mount("/mcp").unwrap()).await,
        Via::Service => {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let service = http(addr).into_service("/mcp").unwrap();
            tokio::spawn(typed_mcp_http::serve(
                listener,
                service,
                std::future::pending(),
            ));
            addr
        }
    };
    format!("http://{addr}")
}

async fn call(base: &str, token: Option<&str>, method: &str, params: Value) -> Reply {
    let (mut headers, body) = rpc(method, params);
    if let Some(token) = token {
        headers.push(("authorization", format!("Bearer {token}")));
    }
    send(Method::POST, &format!("{base}/mcp"), &headers, body).await
}

/// The four kinds of request that name a declaration needing desk.write.
fn guarded() -> Vec<(&'static str, Value)> {
    vec![
        (
            "tools/call",
            json!({"name": "close_ticket", "arguments": {}}),
        ),
        ("resources/read", json!({"uri": "desk://stats"})),
        ("resources/read", json!({"uri": "ticket://T-1"})),
        ("prompts/get", json!({"name": "escalate", "arguments": {}})),
    ]
}

#[tokio::test]
async fn the_metadata_document_names_the_resource_its_server_and_its_scopes() {
    for via in [Via::Router, Via::Service] {
        metadata_document(via).await;
    }
}

async fn metadata_document(via: Via) {
    let key = Key::ec("k");
    let jwks = Jwks::start(&[&key]).await;
    let verifier = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE).unwrap();
    let base = desk_via(via, verifier, &jwks.issuer(), &MemorySink::new()).await;
    let reply = send(
        Method::GET,
        &format!("{base}/.well-known/oauth-protected-resource/mcp"),
        &[],
        vec![],
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(
        reply.json(),
        json!({
            "resource": RESOURCE,
            "authorization_servers": [jwks.issuer()],
            "scopes_supported": ["desk.write", "desk:admin"],
            "bearer_methods_supported": ["header"],
            "resource_name": "The test desk",
        })
    );
    // The metadata needs no token; the endpoint still does.
    let reply = call(&base, None, "tools/list", json!({})).await;
    assert_eq!(reply.status, 401);
}

#[tokio::test]
async fn without_a_token_the_answer_is_401_with_the_metadata_url_and_the_call_s_scope() {
    for via in [Via::Router, Via::Service] {
        without_a_token(via).await;
    }
}

async fn without_a_token(via: Via) {
    let _ = Logs::global();
    let key = Key::rsa("k", jsonwebtoken::Algorithm::RS256);
    let jwks = Jwks::start(&[&key]).await;
    let verifier = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE).unwrap();
    let receipts = MemorySink::new();
    let base = desk_via(via, verifier, &jwks.issuer(), &receipts).await;

    let reply = call(
        &base,
        None,
        "tools/call",
        json!({"name": "close_ticket", "arguments": {}}),
    )
    .await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        reply.header("www-authenticate"),
        Some(format!(r#"Bearer resource_metadata="{METADATA}", scope="desk.write""#).as_str())
    );
    assert_eq!(reply.json()["error"]["code"], -32600);
    let reply = call(
        &base,
        None,
        "tools/call",
        json!({"name": "purge", "arguments": {}}),
    )
    .await;
    assert_eq!(
        reply.header("www-authenticate"),
        Some(
            format!(r#"Bearer resource_metadata="{METADATA}", scope="desk.write desk:admin""#)
                .as_str()
        )
    );
    let reply = call(
        &base,
        None,
        "tools/call",
        json!({"name": "whoami", "arguments": {}}),
    )
    .await;
    assert_eq!(
        reply.header("www-authenticate"),
        Some(format!(r#"Bearer resource_metadata="{METADATA}""#).as_str())
    );
    // Another scheme is no bearer token.
    let (mut headers, body) = rpc("tools/list", json!({}));
    headers.push(("authorization", "Basic YWRhOnB3".to_owned()));
    assert_eq!(
        send(Method::POST, &format!("{base}/mcp"), &headers, body)
            .await
            .status,
        401
    );
    assert!(
        receipts.receipts().is_empty(),
        "nothing reached the server ({via:?})"
    );

    // And the server still serves a caller with a token.
    let token = key.sign(&claims(&jwks.issuer(), ""));
    let reply = call(
        &base,
        Some(&token),
        "tools/call",
        json!({"name": "whoami", "arguments": {}}),
    )
    .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn a_bad_token_is_401_invalid_token_and_never_echoed() {
    let logs = Logs::global();
    let key = Key::rsa("k1", jsonwebtoken::Algorithm::RS256);
    let jwks = Jwks::start(&[&key]).await;
    let verifier = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE).unwrap();
    let receipts = MemorySink::new();
    let base = desk(verifier, &jwks.issuer(), &receipts).await;
    let bad = bad_tokens(&key, &jwks.issuer());
    for (what, token, expected) in &bad {
        let reply = call(
            &base,
            Some(token),
            "tools/call",
            json!({"name": "whoami", "arguments": {}}),
        )
        .await;
        assert_eq!(reply.status, 401, "{what}");
        let challenge = reply.header("www-authenticate").unwrap();
        assert!(
            challenge.starts_with(r#"Bearer error="invalid_token", error_description=""#),
            "{what}: {challenge}"
        );
        assert!(challenge.contains(expected), "{what}: {challenge}");
        assert!(
            challenge.ends_with(&format!(r#"resource_metadata="{METADATA}""#)),
            "{what}: {challenge}"
        );
        assert!(
            !reply.text().contains(token.as_str()),
            "{what}: the answer holds the token"
        );
    }
    assert!(receipts.receipts().is_empty());
    let good = key.sign(&claims(&jwks.issuer(), "desk.write"));
    let reply = call(
        &base,
        Some(&good),
        "tools/call",
        json!({"name": "close_ticket", "arguments": {}}),
    )
    .await;
    assert_eq!(reply.status, 200);
    let logged = logs.all();
    for (what, token, _) in bad.iter().chain([&("good", good.clone(), "")]) {
        assert!(
            !logged.contains(token.as_str()),
            "{what}: a log line holds the token"
        );
    }
}

#[tokio::test]
async fn scopes_are_the_grants_and_a_missing_one_is_a_403_scope_challenge() {
    let logs = Logs::global();
    let key = Key::ec("k");
    let jwks = Jwks::start(&[&key]).await;
    let verifier = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE).unwrap();
    let receipts = MemorySink::new();
    let base = desk(verifier, &jwks.issuer(), &receipts).await;
    let writer = key.sign(&claims(&jwks.issuer(), "desk.write"));
    let reader = key.sign(&claims(&jwks.issuer(), "openid"));

    // The token's subject, claims and grants reach the handler.
    let reply = call(
        &base,
        Some(&writer),
        "tools/call",
        json!({"name": "whoami", "arguments": {}}),
    )
    .await;
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        r#"ada ada@example.com ["desk.write"]"#
    );

    // With desk.write every guarded request runs.
    for (method, params) in guarded() {
        let reply = call(&base, Some(&writer), method, params.clone()).await;
        assert_eq!(reply.status, 200, "{method} {params}: {:?}", reply.body);
        assert!(reply.json().get("result").is_some(), "{method} {params}");
        assert!(reply.json()["result"]["isError"] != true);
    }
    assert!(
        receipts
            .take()
            .iter()
            .all(|r| r.outcome.kind() == "completed")
    );

    // Without it, each is a 403 naming the scope, with its refusal as the body.
    for (method, params) in guarded() {
        let reply = call(&base, Some(&reader), method, params.clone()).await;
        assert_eq!(reply.status, 403, "{method} {params}");
        assert_eq!(
            reply.header("www-authenticate"),
            Some(format!(r#"Bearer error="insufficient_scope", scope="desk.write", resource_metadata="{METADATA}", error_description="the token lacks the scope desk.write""#).as_str()),
            "{method} {params}"
        );
        let body = reply.json();
        if method == "tools/call" {
            assert_eq!(body["result"]["isError"], true);
        } else {
            assert_eq!(body["error"]["code"], -31001);
            assert_eq!(
                body["error"]["data"]["missingCapabilities"],
                json!(["desk.write"])
            );
        }
    }
    let refused = receipts.take();
    assert_eq!(refused.len(), 4, "one receipt per refused request");
    for receipt in &refused {
        assert_eq!(receipt.outcome.kind(), "refused");
        assert_eq!(receipt.principal.as_deref(), Some("ada"));
    }
    assert_eq!(
        refused
            .iter()
            .map(|r| r.uri.clone().unwrap_or_else(|| r.name.clone()))
            .collect::<Vec<_>>(),
        ["close_ticket", "desk://stats", "ticket://T-1", "escalate"]
    );

    // Every scope the call needs, in one challenge, even one the token has.
    let reply = call(
        &base,
        Some(&writer),
        "tools/call",
        json!({"name": "purge", "arguments": {}}),
    )
    .await;
    assert_eq!(reply.status, 403);
    let challenge = reply.header("www-authenticate").unwrap();
    assert!(
        challenge.contains(r#"scope="desk.write desk:admin""#),
        "{challenge}"
    );
    assert!(
        challenge.contains("lacks the scope desk:admin"),
        "{challenge}"
    );
    // The mapped scope grants the capability.
    let admin = key.sign(&claims(&jwks.issuer(), "desk.write desk:admin"));
    let reply = call(
        &base,
        Some(&admin),
        "tools/call",
        json!({"name": "purge", "arguments": {}}),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "purged");

    let receipts_text = serde_json::to_string(&receipts.take()).unwrap();
    let logged = logs.all();
    for token in [&writer, &reader, &admin] {
        assert!(
            !receipts_text.contains(token.as_str()),
            "a receipt holds a token"
        );
        assert!(!logged.contains(token.as_str()), "a log line holds a token");
    }
}

#[tokio::test]
async fn with_hide_ungranted_lists_show_what_the_token_may_call() {
    let key = Key::ec("k");
    let jwks = Jwks::start(&[&key]).await;
    let verifier = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE).unwrap();
    let base = desk(verifier, &jwks.issuer(), &MemorySink::new()).await;
    let names = |reply: Reply| -> (Vec<String>, Value) {
        let body = reply.json();
        let tools = body["result"]["tools"].as_array().unwrap();
        (
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect(),
            body["result"]["cacheScope"].clone(),
        )
    };
    let reader = key.sign(&claims(&jwks.issuer(), ""));
    let writer = key.sign(&claims(&jwks.issuer(), "desk.write"));
    let admin = key.sign(&claims(&jwks.issuer(), "desk.write desk:admin"));
    for (token, expected) in [
        (&reader, vec!["whoami"]),
        (&writer, vec!["whoami", "close_ticket"]),
        (&admin, vec!["whoami", "close_ticket", "purge"]),
        (&reader, vec!["whoami"]),
    ] {
        let (tools, scope) = names(call(&base, Some(token), "tools/list", json!({})).await);
        assert_eq!(tools, expected);
        assert_eq!(scope, "private", "what a token sees is not for another");
    }
    let reply = call(&base, Some(&reader), "resources/list", json!({})).await;
    assert_eq!(reply.json()["result"]["resources"], json!([]));
}

#[tokio::test]
async fn an_unreachable_authorization_server_is_503_then_the_endpoint_recovers() {
    let key = Key::ec("k");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let url = format!("http://{addr}/jwks");
    let verifier = JwtVerifier::new(&format!("http://{addr}"), &url, RESOURCE).unwrap();
    let base = desk(verifier, &format!("http://{addr}"), &MemorySink::new()).await;
    let token = key.sign(&claims(&format!("http://{addr}"), ""));
    let reply = call(&base, Some(&token), "tools/list", json!({})).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.header("retry-after"), Some("5"));
    assert_eq!(reply.json()["error"]["code"], -31002);
    assert!(!reply.text().contains(&token));
    // The authorization server comes up on that address: the next request
    // fetches its keys and is served.
    let jwks_listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let set = json!({"keys": [key.jwk]});
    tokio::spawn(async move {
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                let set = set.clone();
                async move { crate::json_body(set) }
            }),
        );
        axum::serve(jwks_listener, app).await
    });
    let reply = call(&base, Some(&token), "tools/list", json!({})).await;
    assert_eq!(reply.status, 200);
}

/// A stand-in introspection endpoint (RFC 7662): `active` for one token,
/// when the resource server authenticates as `rs:secret`.
async fn introspection(good: &'static str) -> String {
    let addr = serve(|_| {
        axum::Router::new().route(
            "/introspect",
            axum::routing::post(move |headers: http::HeaderMap, body: String| async move {
                let basic = headers.get("authorization").and_then(|v| v.to_str().ok());
                if basic != Some("Basic cnM6c2VjcmV0") {
                    return (
                        http::StatusCode::UNAUTHORIZED,
                        crate::json_body(json!({"error": "invalid_client"})),
                    );
                }
                let form: Vec<(String, String)> = form_urlencoded_pairs(&body);
                let token = form
                    .iter()
                    .find(|(k, _)| k == "token")
                    .map(|(_, v)| v.as_str());
                let answer = if token == Some(good) {
                    json!({"active": true, "sub": "grace", "aud": RESOURCE, "scope": "desk.write",
                           "iss": "http://127.0.0.1", "exp": crate::tokens::now() + 60})
                } else {
                    json!({"active": false})
                };
                (http::StatusCode::OK, crate::json_body(answer))
            }),
        )
    })
    .await;
    format!("http://{addr}/introspect")
}

fn form_urlencoded_pairs(body: &str) -> Vec<(String, String)> {
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| {
            let decode = |s: &str| {
                let s = s.replace('+', " ");
                let mut out = Vec::new();
                let bytes = s.as_bytes();
                let mut i = 0;
                while i < bytes.len() {
                    if bytes[i] == b'%' {
                        out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                        i += 3;
                    } else {
                        out.push(bytes[i]);
                        i += 1;
                    }
                }
                String::from_utf8(out).unwrap()
            };
            (decode(k), decode(v))
        })
        .collect()
}

#[tokio::test]
async fn opaque_tokens_are_checked_by_introspection() {
    let logs = Logs::global();
    const GOOD: &str = "opaque+token/with=odd&chars";
    let endpoint = introspection(GOOD).await;
    let verifier = Introspection::new(&endpoint, "rs", "secret", RESOURCE)
        .unwrap()
        .issuer("http://127.0.0.1");
    let receipts = MemorySink::new();
    let base = desk(verifier, "http://127.0.0.1", &receipts).await;
    let reply = call(
        &base,
        Some(GOOD),
        "tools/call",
        json!({"name": "close_ticket", "arguments": {}}),
    )
    .await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "closed");
    let reply = call(
        &base,
        Some(GOOD),
        "tools/call",
        json!({"name": "purge", "arguments": {}}),
    )
    .await;
    assert_eq!(reply.status, 403);
    let bad = "some-other-opaque-token";
    let reply = call(
        &base,
        Some(bad),
        "tools/call",
        json!({"name": "whoami", "arguments": {}}),
    )
    .await;
    assert_eq!(reply.status, 401);
    assert!(
        reply
            .header("www-authenticate")
            .unwrap()
            .contains("not active")
    );
    // A client secret the server refuses: the token cannot be checked.
    let wrong = Introspection::new(&endpoint, "rs", "wrong", RESOURCE).unwrap();
    let other = desk(wrong, "http://127.0.0.1", &MemorySink::new()).await;
    let reply = call(
        &other,
        Some(GOOD),
        "tools/call",
        json!({"name": "whoami", "arguments": {}}),
    )
    .await;
    assert_eq!(reply.status, 503);
    assert!(
        reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expected 200, found 401")
    );
    let seen = format!(
        "{}{}",
        logs.all(),
        serde_json::to_string(&receipts.take()).unwrap()
    );
    for token in [GOOD, bad] {
        assert!(!seen.contains(token), "a log line or receipt holds a token");
    }
}

#[tokio::test]
async fn a_dated_client_s_session_is_challenged_too_and_outlives_its_token() {
    let key = Key::ec("k");
    let jwks = Jwks::start(&[&key]).await;
    let verifier = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE).unwrap();
    let receipts = MemorySink::new();
    let base = desk(verifier, &jwks.issuer(), &receipts).await;
    let endpoint = format!("{base}/mcp");
    let post = |token: String, session: Option<String>, body: Value| {
        let endpoint = endpoint.clone();
        async move {
            let mut headers = vec![
                ("content-type", "application/json".to_owned()),
                ("accept", "application/json, text/event-stream".to_owned()),
                ("authorization", format!("Bearer {token}")),
            ];
            if let Some(session) = session {
                headers.push(("mcp-session-id", session));
                headers.push(("mcp-protocol-version", "2025-11-25".to_owned()));
            }
            send(
                Method::POST,
                &endpoint,
                &headers,
                serde_json::to_vec(&body).unwrap(),
            )
            .await
        }
    };
    let reader = key.sign(&claims(&jwks.issuer(), ""));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "dated", "version": "1"}}});
    let reply = post(reader.clone(), None, init).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let session = reply.header("mcp-session-id").unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(reader.clone(), Some(session.clone()), initialized)
            .await
            .status,
        202
    );

    let close = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "close_ticket", "arguments": {}}});
    let reply = post(reader, Some(session.clone()), close.clone()).await;
    assert_eq!(reply.status, 403);
    assert!(
        reply
            .header("www-authenticate")
            .unwrap()
            .contains(r#"error="insufficient_scope", scope="desk.write""#)
    );
    // The same caller with a new token (a step-up) keeps its session.
    let writer = key.sign(&claims(&jwks.issuer(), "desk.write"));
    let reply = post(writer, Some(session.clone()), close.clone()).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "closed");
    // Another subject's token does not reach it.
    let mut eve = claims(&jwks.issuer(), "desk.write");
    eve["sub"] = json!("eve");
    let reply = post(key.sign(&eve), Some(session), close).await;
    assert_eq!(reply.status, 404);
    let all = receipts.receipts();
    let kinds: Vec<&str> = all.iter().map(|r| r.outcome.kind()).collect();
    assert_eq!(kinds, ["refused", "completed"]);
}
