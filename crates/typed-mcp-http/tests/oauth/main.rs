//! The OAuth resource server on the wire: a real JWKS server and endpoint on
//! loopback ports, tokens signed with keys generated here, a real client.
//! Every log line of this binary is captured, to prove no token is in one.

mod keys;
mod tokens;
mod wire;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Map, Value, json};

pub const PATIENCE: Duration = Duration::from_secs(30);

/// A router served on a fresh loopback port (`router` gets its address).
pub async fn serve(router: impl FnOnce(SocketAddr) -> axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = router(addr);
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// One whole answer.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("JSON body ({e}): {:?}", self.body))
    }

    /// Everything a client sees of it, as text (for the no-token checks).
    pub fn text(&self) -> String {
        format!("{:?} {}", self.headers, String::from_utf8_lossy(&self.body))
    }
}

/// Sends `method` to `url` with `headers` and `body`; reads the whole answer.
pub async fn send(method: Method, url: &str, headers: &[(&str, String)], body: Vec<u8>) -> Reply {
    static CLIENT: OnceLock<HyperClient<HttpConnector, Full<Bytes>>> = OnceLock::new();
    let client = CLIENT.get_or_init(|| HyperClient::builder(TokioExecutor::new()).build_http());
    let mut request = Request::builder()
        .method(method)
        .uri(url)
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    for (name, value) in headers {
        request.headers_mut().append(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    let response = tokio::time::timeout(PATIENCE, client.request(request))
        .await
        .expect("an answer in time")
        .expect("delivered");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    Reply {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

/// A 2026-07-28 request: the `_meta` envelope and the standard headers.
pub fn rpc(method: &str, params: Value) -> (Vec<(&'static str, String)>, Vec<u8>) {
    let mut params = params.as_object().cloned().unwrap_or_default();
    let name = match method {
        "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
        "resources/read" => params.get("uri").and_then(Value::as_str),
        _ => None,
    }
    .map(str::to_owned);
    params.insert(
        "_meta".into(),
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}),
    );
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = vec![
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", method.to_owned()),
    ];
    if let Some(name) = name {
        headers.push(("mcp-name", name));
    }
    (headers, serde_json::to_vec(&body).unwrap())
}

/// Every event and span field logged in this test binary, at every level.
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<String>>>);

impl Logs {
    pub fn global() -> &'static Logs {
        static LOGS: OnceLock<Logs> = OnceLock::new();
        LOGS.get_or_init(|| {
            let logs = Logs::default();
            tracing::subscriber::set_global_default(logs.clone()).expect("the only subscriber");
            logs
        })
    }

    pub fn all(&self) -> String {
        self.0.lock().unwrap().join("\n")
    }
}

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl tracing::Subscriber for Logs {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut fields = Fields(String::new());
        span.record(&mut fields);
        self.0.lock().unwrap().push(format!("span {}", fields.0));
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut fields = Fields(String::new());
        values.record(&mut fields);
        self.0.lock().unwrap().push(format!("record {}", fields.0));
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// A JSON response body.
pub fn json_body(value: impl serde::Serialize) -> ([(http::HeaderName, &'static str); 1], String) {
    (
        [(http::header::CONTENT_TYPE, "application/json")],
        serde_json::to_string(&value).unwrap(),
    )
}

/// `claims` as a JSON object.
pub fn object(claims: Value) -> Map<String, Value> {
    claims.as_object().cloned().unwrap()
}
