//! A wire probe for tests of typed-mcp servers (feature `testing`): it sends
//! what no well-behaved client would — malformed JSON, a bad envelope, a
//! forged id, HTTP headers that disagree with the body — to a [`Server`] in
//! this process, and hands back every message the server sent for it, as
//! sent, with the connection's [`Accepted`] decision and the HTTP status
//! Streamable HTTP would carry.
//!
//! It is the [`Client`](crate::Client)'s in-process transport with the
//! client's conveniences left out: the same exchange with the server's
//! [`Connection`], the same request ids and the same `_meta` envelope, and
//! every message parsed under the client's default limits. What a test
//! needs beyond raw messages (era negotiation, answering input requests,
//! pagination, typed calls, cancellation) is [`Client::in_process`](crate::Client::in_process).
//!
//! ```
//! use typed_mcp::Server;
//! use typed_mcp::declare::ToolDecl;
//! use typed_mcp::wire::CallToolResult;
//! use typed_mcp_client::testing::TestClient;
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
//! // Bytes that are not JSON get a parse error, and the server goes on.
//! assert_eq!(client.send_raw(b"{not json").await.error_code(), Some(-32700));
//! let again = client.call_tool("shout", json!({"text": "ok"})).await;
//! assert_eq!(again.result()["content"][0]["text"], "OK");
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use serde_json::{Map, Value, json};
use typed_mcp::Server;
use typed_mcp::transport::{Accepted, Connection, Inbound, Inbox, Message};
use typed_mcp_core::RequestId;
use typed_mcp_core::wire::methods;

use crate::client::{DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_BYTES, RequestIds, envelope};
use crate::transport::Limits;
use crate::transport::in_process::exchange;

/// Called with every message the server sends, and the method of the request
/// (or `None` for messages answering unparseable input).
pub type Inspector = Arc<dyn Fn(Option<&str>, &Value) + Send + Sync>;

/// The name this probe reports in `clientInfo`.
pub const CLIENT_NAME: &str = "typed-mcp-test-client";

/// Everything the server sent for one message: notifications and requests,
/// then the response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The messages, in the order they were sent.
    pub messages: Vec<Value>,
    /// What the connection did with the message.
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

    /// The HTTP status the answer would carry on Streamable HTTP, when the
    /// router answered directly.
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

/// Drives a [`Server`] in process, one raw message at a time.
pub struct TestClient {
    connection: Connection,
    ids: RequestIds,
    capabilities: Value,
    client_info: Value,
    limits: Limits,
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
    /// A probe for this server, declaring no client capabilities. It needs
    /// no runtime until a message is sent.
    pub fn new(server: Server) -> Self {
        TestClient {
            connection: Connection::new(server),
            ids: RequestIds::new(),
            capabilities: json!({}),
            client_info: json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}),
            limits: Limits {
                max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
                max_depth: DEFAULT_MAX_DEPTH,
            },
            inspector: None,
        }
    }

    /// Declares these client capabilities on every request it builds.
    #[must_use]
    pub fn with_capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Calls `inspector` with every message the server sends (e.g. to check
    /// each one against the official schema).
    #[must_use]
    pub fn with_inspector(mut self, inspector: Inspector) -> Self {
        self.inspector = Some(inspector);
        self
    }

    /// The `_meta` envelope this probe puts on requests (the client's).
    pub fn envelope(&self) -> Map<String, Value> {
        envelope(self.capabilities.clone(), &self.client_info)
    }

    /// The server's connection, for what a test does between messages
    /// (cancel, count the calls in flight).
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// Sends raw bytes as one message and collects what the server sends
    /// back.
    pub async fn send_raw(&self, message: &[u8]) -> Response {
        self.send_raw_with(message, Inbound::default()).await
    }

    /// Like [`send_raw`](Self::send_raw), with what a transport knows (e.g.
    /// HTTP headers, the authenticated caller).
    ///
    /// # Panics
    ///
    /// When the server sends a message that is not one line of JSON-RPC
    /// within the client's default limits.
    pub async fn send_raw_with(&self, message: &[u8], inbound: Inbound<'_>) -> Response {
        let method = serde_json::from_slice::<Value>(message)
            .ok()
            .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned));
        let (accepted, mut inbox) = exchange(&self.connection, message, inbound).await;
        let mut messages = Vec::new();
        let mut reply_status = None;
        while let Some(out) = inbox.recv().await {
            let message = self.parse(out.body(), method.as_deref());
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

    /// Parses one message the server sent, as the client does, and shows it
    /// to the inspector.
    #[track_caller]
    fn parse(&self, bytes: &[u8], method: Option<&str>) -> Value {
        assert!(
            !bytes.contains(&b'\n'),
            "a message must be a single line: {}",
            String::from_utf8_lossy(bytes)
        );
        let message = self
            .limits
            .parse(bytes, String::new)
            .unwrap_or_else(|e| panic!("the server sent a message no client accepts: {e}"));
        if let Some(inspect) = &self.inspector {
            inspect(method, &message);
        }
        message
    }

    /// Sends a JSON message as is.
    pub async fn send(&self, message: &Value) -> Response {
        self.send_raw(&serde_json::to_vec(message).expect("a Value serializes"))
            .await
    }

    /// Sends a request with a fresh integer id. `_meta` is this probe's
    /// envelope unless `params` carries its own.
    ///
    /// # Panics
    ///
    /// When `params` is neither an object nor null.
    pub async fn request(&self, method: &str, params: Value) -> Response {
        let id = self.ids.next();
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
        self.request(methods::DISCOVER, json!({})).await
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Response {
        self.request(methods::TOOLS_LIST, cursor_params(cursor))
            .await
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<&str>) -> Response {
        self.request(methods::RESOURCES_LIST, cursor_params(cursor))
            .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(&self, cursor: Option<&str>) -> Response {
        self.request(methods::RESOURCE_TEMPLATES_LIST, cursor_params(cursor))
            .await
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Response {
        self.request(methods::PROMPTS_LIST, cursor_params(cursor))
            .await
    }

    /// `tools/call`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Response {
        self.request(
            methods::TOOLS_CALL,
            json!({"name": name, "arguments": arguments}),
        )
        .await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Response {
        self.request(methods::RESOURCES_READ, json!({"uri": uri}))
            .await
    }

    /// `prompts/get`.
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Response {
        self.request(
            methods::PROMPTS_GET,
            json!({"name": name, "arguments": arguments}),
        )
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
            methods::COMPLETE,
            json!({
                "ref": {"type": "ref/prompt", "name": prompt},
                "argument": {"name": argument, "value": value}
            }),
        )
        .await
    }

    /// Opens a `subscriptions/listen` stream with this filter (e.g.
    /// `{"resourceSubscriptions": ["file:///a"]}`) and returns it unread.
    ///
    /// # Panics
    ///
    /// When the server answers at once (an error) instead of streaming.
    pub async fn listen(&self, filter: Value) -> Subscription<'_> {
        let id = self.ids.next();
        let message = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": methods::SUBSCRIPTIONS_LISTEN,
            "params": {"_meta": self.envelope(), "notifications": filter}
        });
        let bytes = serde_json::to_vec(&message).expect("a Value serializes");
        match exchange(&self.connection, &bytes, Inbound::default()).await {
            (Accepted::Started { id, .. }, inbox) => Subscription {
                client: self,
                id,
                inbox,
            },
            (other, _) => panic!("subscriptions/listen was not started: {other:?}"),
        }
    }

    /// Ends every open subscription gracefully (each sends its final
    /// result), as end of input does on stdio, and waits for running calls.
    pub async fn drain(&self) {
        self.connection.drain().await;
    }
}

/// An open `subscriptions/listen` stream (see [`TestClient::listen`]).
pub struct Subscription<'a> {
    client: &'a TestClient,
    id: RequestId,
    inbox: Inbox,
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
    ///
    /// # Panics
    ///
    /// As [`TestClient::send_raw_with`] does, on a message no client accepts.
    pub async fn next(&mut self) -> Option<Value> {
        let out = self.inbox.recv().await?;
        Some(
            self.client
                .parse(out.body(), Some(methods::SUBSCRIPTIONS_LISTEN)),
        )
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
            "method": methods::CANCELLED,
            "params": {"requestId": self.id}
        });
        self.client.send(&cancel).await;
    }
}

fn cursor_params(cursor: Option<&str>) -> Value {
    match cursor {
        Some(c) => json!({"cursor": c}),
        None => json!({}),
    }
}
