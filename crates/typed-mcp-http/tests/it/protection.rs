//! DNS-rebinding protection: Host and Origin.

use serde_json::json;
use typed_mcp_http::HttpServer;

use crate::support::{Client, Probe, Req, serve, serve_default, server};

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
    let router = HttpServer::new(server(&Probe::default()))
        .allow_hosts(["mcp.example.com"])
        .allow_origins(["https://app.example.com"])
        .into_router()
        .unwrap();
    let client = Client::new(serve(router).await, "/");
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
async fn an_authenticated_public_bind_checks_origin_but_not_host() {
    let router = HttpServer::new(server(&Probe::default()))
        .bind_address("0.0.0.0:8080".parse().unwrap())
        .require_authentication()
        .into_router()
        .unwrap()
        // A stand-in for the application's authentication layer.
        .layer(axum::middleware::from_fn(
            |mut request: axum::extract::Request, next: axum::middleware::Next| async move {
                request
                    .extensions_mut()
                    .insert(typed_mcp::Principal::new("tester"));
                next.run(request).await
            },
        ));
    let client = Client::new(serve(router).await, "/");
    let req = discover().header("host", "mcp.example.com");
    assert_eq!(client.send(&req).await.status, 200);
    let req = discover().header("origin", "https://evil.example.com");
    assert_eq!(client.send(&req).await.status, 403);
}

/// Collects every warning of this test binary (installed once, globally: a
/// thread-scoped subscriber misses events whose callsite another test thread
/// registered first).
#[derive(Clone, Default)]
struct Warnings(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Warnings {
    fn global() -> &'static Warnings {
        static WARNINGS: std::sync::OnceLock<Warnings> = std::sync::OnceLock::new();
        WARNINGS.get_or_init(|| {
            let warnings = Warnings::default();
            tracing::subscriber::set_global_default(warnings.clone())
                .expect("no other global subscriber in this test binary");
            warnings
        })
    }
}

impl tracing::Subscriber for Warnings {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() == tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={value:?} ", field.name()));
            }
        }
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test]
async fn a_refusal_is_logged_with_its_reason() {
    let warnings = Warnings::global();
    let client = serve_default(&Probe::default()).await;
    let reply = client
        .send(&discover().header("host", "logged.evil.example.com"))
        .await;
    assert_eq!(reply.status, 403);
    let logged = warnings.0.lock().unwrap();
    let line = logged
        .iter()
        .find(|line| line.contains("logged.evil.example.com"))
        .unwrap_or_else(|| panic!("a warning naming the host, got {logged:?}"));
    assert!(line.contains("DNS-rebinding"), "{line}");
    assert!(line.contains("reason="), "{line}");
}
