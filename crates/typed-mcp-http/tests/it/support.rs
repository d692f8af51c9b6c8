//! A test server on a loopback port, a real HTTP client, and request builders.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt as _;
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use typed_mcp::wire::{CallToolResult, LoggingLevel};
use typed_mcp::{Server, ServerBuilder, ToolError, declare::ToolDecl};
use typed_mcp_http::{EndpointService, HttpServer};

/// Long enough that nothing times out on a loaded machine; tests never assert
/// on timing, only that something happened before this.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// What the test tools report to the test.
#[derive(Default, Clone)]
pub struct Probe {
    /// Set when the `hang` tool's future is dropped.
    pub dropped: Arc<AtomicBool>,
    /// Notified when the `hang` tool starts.
    pub started: Arc<Notify>,
    /// Handlers of `gauge` running now, and the most seen at once.
    pub running: Arc<AtomicUsize>,
    pub peak: Arc<AtomicUsize>,
    /// Lets the `stream` tool finish after its first progress notification.
    pub proceed: Arc<Notify>,
}

/// Sets a flag when dropped: the handler's future is gone.
struct DropGuard(Arc<AtomicBool>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// The test tools, on a builder so tests can change limits.
pub fn builder(probe: &Probe) -> ServerBuilder {
    let add = ToolDecl::builder("add")
        .description("Add two integers.")
        .input_schema(object(
            json!({
                "a": {"type": "integer", "description": "First."},
                "b": {"type": "integer", "description": "Second."}
            }),
            &["a", "b"],
        ))
        .handler(|args, _ctx| async move {
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            Ok(CallToolResult::structured(json!({"sum": sum})))
        });
    let region = ToolDecl::builder("region")
        .description("Echo the region.")
        .input_schema(object(
            json!({"region": {"type": "string", "description": "Where.", "x-mcp-header": "Region"}}),
            &["region"],
        ))
        .handler(|args, _ctx| async move {
            Ok(CallToolResult::text(
                args["region"].as_str().unwrap_or_default(),
            ))
        });
    let proceed = probe.proceed.clone();
    let stream = ToolDecl::builder("stream")
        .description("Send progress and a log message, wait for the test, then finish.")
        .input_schema(object(json!({}), &[]))
        .handler(move |_args, ctx| {
            let proceed = proceed.clone();
            async move {
                let waiting = proceed.notified();
                ctx.progress(1.0, Some(3.0), Some("first")).await;
                ctx.log(LoggingLevel::Info, json!({"step": "first"})).await;
                if ctx.meta().progress_token.is_some() {
                    // Streamed: the test has seen the first event before this returns.
                    waiting.await;
                }
                ctx.progress(2.0, Some(3.0), None).await;
                ctx.progress(3.0, Some(3.0), Some("done")).await;
                Ok(CallToolResult::text("streamed"))
            }
        });
    let (dropped, started) = (probe.dropped.clone(), probe.started.clone());
    let hang = ToolDecl::builder("hang")
        .description("Wait until cancelled.")
        .input_schema(object(json!({}), &[]))
        .handler(move |_args, _ctx| {
            let guard = DropGuard(dropped.clone());
            let started = started.clone();
            async move {
                let _guard = guard;
                started.notify_one();
                std::future::pending::<()>().await;
                Ok(CallToolResult::text("never"))
            }
        });
    let (running, peak) = (probe.running.clone(), probe.peak.clone());
    let gauge = ToolDecl::builder("gauge")
        .description("Count handlers running at once.")
        .input_schema(object(json!({}), &[]))
        .handler(move |_args, _ctx| {
            let (running, peak) = (running.clone(), peak.clone());
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(CallToolResult::text("counted"))
            }
        });
    let boom = ToolDecl::builder("boom")
        .description("Panic.")
        .input_schema(object(json!({}), &[]))
        .handler(|_args, _ctx| async move {
            if true {
                panic!("boom");
            }
            Err::<CallToolResult, _>(ToolError::execution("unreachable"))
        });
    let sample = ToolDecl::builder("sample")
        .description("Needs sampling.")
        .input_schema(object(json!({}), &[]))
        .requires_client_capability("sampling")
        .handler(|_args, _ctx| async move { Ok(CallToolResult::text("sampled")) });
    Server::new("typed-mcp-http-tests", "0.0.0")
        .tools([add, region, stream, hang, gauge, boom, sample])
}

pub fn server(probe: &Probe) -> Server {
    builder(probe).build().expect("the test server builds")
}

/// A router built for a fresh loopback port (`router` gets its address) and
/// served there until the test's runtime ends.
pub async fn serve(router: impl FnOnce(SocketAddr) -> axum::Router) -> SocketAddr {
    serve_until(router, std::future::pending()).await.0
}

/// As [`serve`], until `shutdown` completes; the task ends when
/// `typed_mcp_http::serve` returns.
pub async fn serve_until(
    router: impl FnOnce(SocketAddr) -> axum::Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> (SocketAddr, JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("a local address");
    let router = router(addr);
    let serving = tokio::spawn(typed_mcp_http::serve(listener, router, shutdown));
    (addr, serving)
}

/// A client of `http` (whose settings `http` chooses) served on a fresh
/// loopback port at `/`, as an `EndpointService` (the tests that pass their
/// own router to [`serve`] cover the router).
pub async fn serve_http(server: Server, http: impl FnOnce(HttpServer) -> HttpServer) -> Client {
    let addr = serve_service(|addr| {
        http(HttpServer::new(server, addr))
            .into_service("/")
            .expect("the service builds")
    })
    .await;
    Client::new(addr, "/")
}

/// An `EndpointService` built for a fresh loopback port (`service` gets its
/// address) and served there until the test's runtime ends.
pub async fn serve_service(service: impl FnOnce(SocketAddr) -> EndpointService) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("a local address");
    let service = service(addr);
    tokio::spawn(typed_mcp_http::serve(
        listener,
        service,
        std::future::pending(),
    ));
    addr
}

/// The endpoint at `/` with default (loopback) settings.
pub async fn serve_default(probe: &Probe) -> Client {
    serve_http(server(probe), |http| http).await
}

/// A real HTTP/1.1 client for one server.
#[derive(Clone)]
pub struct Client {
    pub addr: SocketAddr,
    pub path: String,
    inner: HyperClient<HttpConnector, Full<Bytes>>,
}

impl Client {
    pub fn new(addr: SocketAddr, path: &str) -> Client {
        Client {
            addr,
            path: path.to_owned(),
            inner: HyperClient::builder(TokioExecutor::new()).build_http(),
        }
    }

    fn request(&self, req: &Req) -> Request<Full<Bytes>> {
        let uri = format!("http://{}{}", self.addr, self.path);
        let mut request = Request::builder()
            .method(req.method.clone())
            .uri(uri)
            .body(Full::new(Bytes::from(req.body.clone())))
            .expect("a valid request");
        for (name, value) in &req.headers {
            request.headers_mut().append(name.clone(), value.clone());
        }
        request
    }

    /// Sends and reads the whole answer.
    pub async fn send(&self, req: &Req) -> Reply {
        self.send_within(req, PATIENCE).await
    }

    /// Sends and reads the whole answer, waiting up to `patience` for each of
    /// its head and its body (for requests that queue behind many others).
    pub async fn send_within(&self, req: &Req, patience: Duration) -> Reply {
        let response = tokio::time::timeout(patience, self.inner.request(self.request(req)))
            .await
            .expect("an answer in time")
            .expect("the request is delivered");
        let (parts, body) = response.into_parts();
        let body = tokio::time::timeout(patience, body.collect())
            .await
            .expect("a body in time")
            .expect("a readable body")
            .to_bytes();
        Reply {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    }

    /// Sends and returns the response with its body unread.
    pub async fn open(&self, req: &Req) -> http::Response<hyper::body::Incoming> {
        tokio::time::timeout(PATIENCE, self.inner.request(self.request(req)))
            .await
            .expect("an answer in time")
            .expect("the request is delivered")
    }

    /// The future of a request, for tests that drop it.
    pub fn start(&self, req: &Req) -> hyper_util::client::legacy::ResponseFuture {
        self.inner.request(self.request(req))
    }
}

/// One HTTP request.
#[derive(Clone, Debug)]
pub struct Req {
    pub method: Method,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Req {
    /// A POST of raw bytes with the JSON and Accept headers only.
    pub fn raw(body: impl Into<Vec<u8>>) -> Req {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert(
            "accept",
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        Req {
            method: Method::POST,
            headers,
            body: body.into(),
        }
    }

    /// A request with id 1, the `_meta` envelope and every standard header.
    pub fn rpc(method: &str, params: Value) -> Req {
        Req::rpc_with_meta(method, params, Map::new())
    }

    /// Like [`rpc`](Self::rpc), with extra `_meta` keys.
    pub fn rpc_with_meta(method: &str, params: Value, extra_meta: Map<String, Value>) -> Req {
        let mut params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let mut meta = Map::new();
        meta.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            json!("2026-07-28"),
        );
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            json!({}),
        );
        meta.extend(extra_meta);
        let name = match method {
            "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
            "resources/read" => params.get("uri").and_then(Value::as_str),
            _ => None,
        }
        .map(str::to_owned);
        params.insert("_meta".into(), Value::Object(meta));
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut req = Req::raw(serde_json::to_vec(&body).expect("JSON"))
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = name {
            req = req.header("mcp-name", &name);
        }
        req
    }

    /// `tools/call` of `name`.
    pub fn call(name: &str, arguments: Value) -> Req {
        Req::rpc("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Sets (replaces) a header.
    pub fn header(self, name: &str, value: &str) -> Req {
        self.header_bytes(name, value.as_bytes())
    }

    /// Sets a header to raw bytes (which may be invalid as text).
    pub fn header_bytes(mut self, name: &str, value: &[u8]) -> Req {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("a header name");
        self.headers.insert(
            name,
            HeaderValue::from_bytes(value).expect("a header value"),
        );
        self
    }

    /// Removes a header.
    pub fn without(mut self, name: &str) -> Req {
        self.headers.remove(name);
        self
    }

    /// Changes the HTTP method.
    pub fn method(mut self, method: Method) -> Req {
        self.method = method;
        self
    }
}

/// A whole answer.
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

    /// The body as one line of JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        assert!(
            !self.body.contains(&b'\n'),
            "the body is one line: {:?}",
            self.body
        );
        assert_eq!(self.header("content-type"), Some("application/json"));
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("JSON body ({e}): {:?}", self.body))
    }

    /// The JSON-RPC error code of the body.
    #[track_caller]
    pub fn error_code(&self) -> i64 {
        let body = self.json();
        body["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("an error body, got {body}"))
    }

    /// Asserts the status and the error code.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: i64) -> Value {
        assert_eq!(self.status, status, "status of {:?}", self.body);
        assert_eq!(self.error_code(), code, "code of {:?}", self.body);
        self.json()
    }
}

/// The events of an SSE body: each one `data:` line of JSON.
#[track_caller]
pub fn sse_events(body: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(body).expect("UTF-8");
    assert!(
        text.ends_with("\n\n"),
        "events end with a blank line: {text:?}"
    );
    text.split_terminator("\n\n")
        .map(|event| {
            assert!(!event.contains('\n'), "one line per event: {event:?}");
            let data = event
                .strip_prefix("data: ")
                .unwrap_or_else(|| panic!("a data line: {event:?}"));
            serde_json::from_str(data).expect("JSON data")
        })
        .collect()
}

/// The body of a 2026-07-28 `tools/call` of `name`; `extra_meta` is more
/// `_meta` members (JSON with a leading comma, or empty).
pub fn call_body(id: u32, name: &str, arguments: &str, extra_meta: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}{extra_meta}}},"name":"{name}","arguments":{arguments}}}}}"#
    )
}

/// The HTTP/1.1 head of a POST to `/mcp` carrying a `tools/call` of `name`
/// of `body_len` bytes; `extra` is more header lines, each ending in CRLF.
pub fn call_head(name: &str, body_len: usize, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {name}\r\nContent-Length: {body_len}\r\n{extra}\r\n"
    )
}

/// Reads from `stream` until `buffer` holds `needle`.
pub async fn read_until(stream: &mut TcpStream, buffer: &mut Vec<u8>, needle: &[u8]) {
    let read = async {
        while !buffer.windows(needle.len()).any(|w| w == needle) {
            let mut chunk = [0; 4096];
            let n = stream.read(&mut chunk).await.expect("a readable stream");
            assert!(
                n > 0,
                "expected {:?}, the stream ended after {:?}",
                String::from_utf8_lossy(needle),
                String::from_utf8_lossy(buffer)
            );
            buffer.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(PATIENCE, read)
        .await
        .unwrap_or_else(|_| panic!("no {:?} in time", String::from_utf8_lossy(needle)));
}

/// Waits until `flag` is set.
pub async fn wait_for(flag: &AtomicBool, what: &str) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !flag.load(Ordering::SeqCst) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Collects every warning of this test binary (installed once, globally: a
/// thread-scoped subscriber misses events whose callsite another test thread
/// registered first).
#[derive(Clone, Default)]
pub struct Warnings(Arc<std::sync::Mutex<Vec<String>>>);

impl Warnings {
    pub fn global() -> &'static Warnings {
        static WARNINGS: std::sync::OnceLock<Warnings> = std::sync::OnceLock::new();
        WARNINGS.get_or_init(|| {
            let warnings = Warnings::default();
            tracing::subscriber::set_global_default(warnings.clone())
                .expect("no other global subscriber in this test binary");
            warnings
        })
    }

    /// The first warning logged so far that contains `text`.
    #[track_caller]
    pub fn find(&self, text: &str) -> String {
        let logged = self.0.lock().unwrap();
        logged
            .iter()
            .find(|line| line.contains(text))
            .cloned()
            .unwrap_or_else(|| panic!("a warning containing {text:?}, got {logged:?}"))
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
