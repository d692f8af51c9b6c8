//! A wire probe for the server's own tests: it drives a built [`Server`]
//! through real JSON-RPC messages in the 2026-07-28 envelope, with no
//! transport in between, and hands back every message the server sent, as
//! sent (raw bytes in, the [`Accepted`] decision and HTTP statuses out), so a
//! test can send what no client would (malformed JSON, a bad envelope, a
//! forged id) and assert on the bytes.
//!
//! It is not a client: era negotiation, answering input requests (MRTR),
//! pagination, typed calls, cancellation and limits live once, in the
//! `typed-mcp-client` crate, whose `Client::in_process` drives a `Server`
//! through the same [`Connection`] seam. (typed-mcp cannot use that crate
//! itself: the client depends on typed-mcp, and typed-mcp's unit tests would
//! see a second copy of [`Server`].)
//!
//! ```
//! use typed_mcp::testing::TestClient;
//! use typed_mcp::Server;
//! use typed_mcp::declare::ToolDecl;
//! use typed_mcp::wire::CallToolResult;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::new("demo", "1.0.0")
//!     .tool(
//!         ToolDecl::builder("shout")
//!             .description("Upper-case the text.")
//!             .input_schema(json!({
//!                 "type": "object",
//!                 "properties": {"text": {"type": "string", "description": "The text."}},
//!                 "required": ["text"]
//!             }))
//!             .handler(|args, _ctx| async move {
//!                 let text = args["text"].as_str().unwrap_or_default().to_uppercase();
//!                 Ok(CallToolResult::text(text))
//!             }),
//!     )
//!     .build()?;
//! let client = TestClient::new(server);
//! let response = client.call_tool("shout", json!({"text": "hi"})).await;
//! assert_eq!(response.result()["content"][0]["text"], "HI");
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Map, Value, json};
use typed_mcp_core::wire::meta_keys;
use typed_mcp_core::{PROTOCOL_VERSION, RequestId};

use crate::server::Server;
use crate::transport::{Accepted, Connection, Inbound, Inbox, Message, Outbox};

/// Called with every message the server sends, and the method of the request
/// (or `None` for messages answering unparseable input).
pub type Inspector = Arc<dyn Fn(Option<&str>, &Value) + Send + Sync>;

/// Everything the server sent for one request: notifications, then the response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The messages, in the order they were sent.
    pub messages: Vec<Value>,
    /// What the connection did with the request.
    pub accepted: Accepted,
    /// The HTTP status of the reply, as Streamable HTTP sends it.
    pub reply_status: Option<u16>,
}

impl Response {
    /// The final JSON-RPC response (a message with `result` or `error`).
    pub fn response(&self) -> Option<&Value> {
        self.messages
            .last()
            .filter(|m| m.get("result").is_some() || m.get("error").is_some())
    }

    /// The notifications sent before the response.
    pub fn notifications(&self) -> impl Iterator<Item = &Value> {
        self.messages.iter().filter(|m| m.get("method").is_some())
    }

    /// The `result`.
    ///
    /// # Panics
    ///
    /// When the response is an error or missing, with the messages received.
    #[track_caller]
    pub fn result(&self) -> &Value {
        match self.response().and_then(|r| r.get("result")) {
            Some(result) => result,
            None => panic!("expected a result, got {:#?}", self.messages),
        }
    }

    /// The `error` object, if the response is an error.
    pub fn error(&self) -> Option<&Value> {
        self.response().and_then(|r| r.get("error"))
    }

    /// The error code, if the response is an error.
    pub fn error_code(&self) -> Option<i64> {
        self.error().and_then(|e| e["code"].as_i64())
    }

    /// The HTTP status the answer would carry on Streamable HTTP, when the router
    /// answered directly.
    pub fn http_status(&self) -> Option<u16> {
        match self.accepted {
            Accepted::Answered { http_status } => Some(http_status),
            _ => None,
        }
    }

    /// The HTTP status of the reply on Streamable HTTP, whoever answered.
    pub fn reply_status(&self) -> Option<u16> {
        self.reply_status
    }
}

/// Drives a [`Server`] in process.
pub struct TestClient {
    connection: Connection,
    next_id: AtomicI64,
    capabilities: Value,
    inspector: Option<Inspector>,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

impl TestClient {
    /// A client for this server, declaring no client capabilities.
    pub fn new(server: Server) -> Self {
        TestClient {
            connection: Connection::new(server),
            next_id: AtomicI64::new(1),
            capabilities: json!({}),
            inspector: None,
        }
    }

    /// Declares these client capabilities on every request it builds.
    pub fn with_capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Calls `inspector` with every message the server sends (e.g. to check each
    /// one against the official schema).
    pub fn with_inspector(mut self, inspector: Inspector) -> Self {
        self.inspector = Some(inspector);
        self
    }

    /// The `_meta` envelope this client puts on requests.
    pub fn envelope(&self) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(meta_keys::PROTOCOL_VERSION.into(), json!(PROTOCOL_VERSION));
        meta.insert(
            meta_keys::CLIENT_CAPABILITIES.into(),
            self.capabilities.clone(),
        );
        meta.insert(
            meta_keys::CLIENT_INFO.into(),
            json!({"name": "typed-mcp-test-client", "version": env!("CARGO_PKG_VERSION")}),
        );
        meta
    }

    /// Sends raw bytes as one message and collects what the server sends back.
    pub async fn send_raw(&self, message: &[u8]) -> Response {
        self.send_raw_with(message, Inbound::default()).await
    }

    /// Like [`send_raw`](Self::send_raw), with what a transport knows (e.g.
    /// HTTP headers, the authenticated caller).
    pub async fn send_raw_with(&self, message: &[u8], inbound: Inbound<'_>) -> Response {
        let method = serde_json::from_slice::<Value>(message)
            .ok()
            .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned));
        let (outbox, mut rx) = Outbox::channel();
        let accepted = self.connection.accept(message, inbound, &outbox).await;
        drop(outbox);
        let mut messages = Vec::new();
        let mut reply_status = None;
        while let Some(out) = rx.recv().await {
            let bytes = out.body();
            assert!(
                !bytes.contains(&b'\n'),
                "a message must be a single line: {}",
                String::from_utf8_lossy(bytes)
            );
            let message: Value =
                serde_json::from_slice(bytes).expect("the server sends valid JSON");
            if let Some(inspect) = &self.inspector {
                inspect(method.as_deref(), &message);
            }
            let done = match out.message() {
                Message::Reply(reply) => {
                    reply_status = Some(reply.http_status);
                    true
                }
                Message::Notification(_) | Message::Request(_) => false,
            };
            messages.push(message);
            if done {
                break;
            }
        }
        Response {
            messages,
            accepted,
            reply_status,
        }
    }

    /// Sends a JSON message as is.
    pub async fn send(&self, message: &Value) -> Response {
        self.send_raw(&serde_json::to_vec(message).expect("a Value serializes"))
            .await
    }

    /// Sends a request with a fresh integer id. `_meta` is this client's
    /// envelope unless `params` carries its own.
    pub async fn request(&self, method: &str, params: Value) -> Response {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => panic!("params must be an object, got {other}"),
        };
        params
            .entry("_meta")
            .or_insert_with(|| Value::Object(self.envelope()));
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
    }

    /// `server/discover`.
    pub async fn discover(&self) -> Response {
        self.request("server/discover", json!({})).await
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Response {
        self.request("tools/list", cursor_params(cursor)).await
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<&str>) -> Response {
        self.request("resources/list", cursor_params(cursor)).await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(&self, cursor: Option<&str>) -> Response {
        self.request("resources/templates/list", cursor_params(cursor))
            .await
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Response {
        self.request("prompts/list", cursor_params(cursor)).await
    }

    /// `tools/call`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Response {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Response {
        self.request("resources/read", json!({"uri": uri})).await
    }

    /// `prompts/get`.
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Response {
        self.request("prompts/get", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// `completion/complete` for an argument of a prompt.
    pub async fn complete_prompt_argument(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Response {
        self.request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": prompt},
                "argument": {"name": argument, "value": value}
            }),
        )
        .await
    }
}

/// An open `subscriptions/listen` stream (see [`TestClient::listen`]).
pub struct Subscription<'a> {
    client: &'a TestClient,
    id: RequestId,
    rx: Inbox,
}

impl std::fmt::Debug for Subscription<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .finish()
    }
}

impl Subscription<'_> {
    /// The listen request's id (the subscription id).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The next message of the stream, or `None` once it ended.
    pub async fn next(&mut self) -> Option<Value> {
        let out = self.rx.recv().await?;
        let message: Value =
            serde_json::from_slice(out.body()).expect("the server sends valid JSON");
        if let Some(inspect) = &self.client.inspector {
            inspect(Some("subscriptions/listen"), &message);
        }
        Some(message)
    }

    /// The next message, or `None` when none arrives within `wait`.
    pub async fn next_within(&mut self, wait: std::time::Duration) -> Option<Value> {
        tokio::time::timeout(wait, self.next()).await.ok().flatten()
    }

    /// Cancels the subscription as `notifications/cancelled` does: nothing
    /// more is sent on it.
    pub async fn cancel(self) {
        let cancel = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": self.id}
        });
        self.client.send(&cancel).await;
    }
}

impl TestClient {
    /// Opens a `subscriptions/listen` stream with this filter (e.g.
    /// `{"resourceSubscriptions": ["file:///a"]}`) and returns it unread.
    ///
    /// # Panics
    ///
    /// When the server answers at once (an error) instead of streaming.
    pub async fn listen(&self, filter: Value) -> Subscription<'_> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "subscriptions/listen",
            "params": {"_meta": self.envelope(), "notifications": filter}
        });
        let (outbox, rx) = Outbox::channel();
        let bytes = serde_json::to_vec(&message).expect("a Value serializes");
        match self
            .connection
            .accept(&bytes, Inbound::default(), &outbox)
            .await
        {
            Accepted::Started { id, .. } => Subscription {
                client: self,
                id,
                rx,
            },
            other => panic!("subscriptions/listen was not started: {other:?}"),
        }
    }

    /// Ends every open subscription gracefully (each sends its final result),
    /// as end of input does on stdio, and waits for running calls.
    pub async fn drain(&self) {
        self.connection.drain().await;
    }
}

fn cursor_params(cursor: Option<&str>) -> Value {
    match cursor {
        Some(c) => json!({"cursor": c}),
        None => json!({}),
    }
}
