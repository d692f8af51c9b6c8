//! The demo server every transport serves, and how to reach it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use typed_mcp::declare::{PromptDecl, ResourceDecl};
use typed_mcp::wire::{
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitResult, InputRequest,
    ListRootsResult, LoggingLevel, Role, SamplingMessage,
};
use typed_mcp::wire::{GetPromptResult, PromptMessage, ResourceContents};
use typed_mcp::{Answer, NeedsInput, Server, ToolContext, tool, tools};
use typed_mcp_client::{Client, Era, Options};

/// The sum of two integers.
#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Sum {
    /// The sum.
    pub sum: i64,
}

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(read_only)]
pub fn add(a: i64, b: i64) -> Sum {
    Sum { sum: a + b }
}

/// Greet someone, asking for their name first.
#[tool]
fn greet(ctx: ToolContext) -> Answer<String> {
    let name = ctx
        .input_response::<ElicitResult>("name")
        .and_then(Result::ok)
        .and_then(|r| r.content)
        .and_then(|c| c.get("name").and_then(Value::as_str).map(str::to_owned));
    match name {
        Some(name) => Answer::Done(format!("Hello, {name}!")),
        None => Answer::NeedsInput(NeedsInput::new().elicit(
            "name",
            "What is your name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        )),
    }
}

/// Ask the client's model for a capital, over two rounds with state.
#[tool]
fn capital(ctx: ToolContext) -> Answer<String> {
    let said = ctx
        .input_response::<CreateMessageResult>("capital")
        .and_then(Result::ok)
        .and_then(|r| {
            r.content
                .get("text")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    match (ctx.request_state(), said) {
        (Some("asked"), Some(text)) => Answer::Done(format!("the model said {text}")),
        _ => Answer::NeedsInput(
            NeedsInput::new()
                .request(
                    "capital",
                    InputRequest::Sample(CreateMessageRequestParams::new(
                        vec![SamplingMessage::new(
                            Role::User,
                            ContentBlock::text("Capital of France?"),
                        )],
                        20,
                    )),
                )
                .state("asked"),
        ),
    }
}

/// Count the client's roots.
#[tool]
fn count_roots(ctx: ToolContext) -> Answer<String> {
    match ctx
        .input_response::<ListRootsResult>("roots")
        .and_then(Result::ok)
    {
        Some(roots) => Answer::Done(format!(
            "{} roots: {}",
            roots.roots.len(),
            roots
                .roots
                .iter()
                .map(|r| r.uri.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => Answer::NeedsInput(
            NeedsInput::new().request("roots", InputRequest::ListRoots(Map::new())),
        ),
    }
}

/// Count to `n`, with progress and a log line.
///
/// # Arguments
/// * `n` - Where to stop.
#[tool]
async fn count(n: u32, ctx: ToolContext) -> String {
    for i in 1..=n {
        ctx.progress(f64::from(i), Some(f64::from(n)), Some("counting"))
            .await;
    }
    ctx.log(LoggingLevel::Info, format!("counted to {n}")).await;
    format!("counted to {n}")
}

/// What one server's `wait_for_cancel` saw.
#[derive(Debug, Default)]
pub struct Waiter {
    /// Set when a call started.
    pub started: AtomicBool,
    /// Set when a call saw its cancellation.
    pub cancelled: AtomicBool,
}

impl Waiter {
    /// Wait until the call is cancelled.
    #[tool]
    async fn wait_for_cancel(&self, ctx: ToolContext) -> String {
        /// Sets the flag when the call's future is dropped (the server drops
        /// a cancelled call's future) or sees its cancellation.
        struct OnDrop<'a>(&'a AtomicBool);
        impl Drop for OnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        self.started.store(true, Ordering::SeqCst);
        let _guard = OnDrop(&self.cancelled);
        ctx.cancelled().await;
        "cancelled".into()
    }

    /// Waits up to five seconds for `flag`.
    pub async fn saw(flag: &AtomicBool) -> bool {
        for _ in 0..100 {
            if flag.load(Ordering::SeqCst) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }
}

/// `review`: a prompt whose `language` argument completes.
fn review() -> PromptDecl {
    PromptDecl::builder("review")
        .description("Review some code.")
        .argument("code", "The code to review.", true)
        .argument("language", "Its language.", false)
        .completer(|request, _ctx| async move {
            Ok::<_, typed_mcp::RpcError>(
                ["rust", "ruby", "python"]
                    .into_iter()
                    .filter(|l| l.starts_with(&request.value))
                    .map(str::to_owned)
                    .collect::<Vec<_>>(),
            )
        })
        .handler(|args, _ctx| async move {
            let code = args.get("code").cloned().unwrap_or_default();
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                format!("Review this code: {code}"),
            )]))
        })
}

/// Text of `size` bytes.
///
/// # Arguments
/// * `size` - How many bytes.
#[tool]
fn big(size: usize) -> String {
    "x".repeat(size)
}

/// The demo server: the tools above, a resource, a prompt, and
/// `page_size(2)` so that lists take several pages.
pub fn server() -> Server {
    server_with(Arc::new(Waiter::default()))
}

/// The demo server, whose `wait_for_cancel` reports to `waiter`.
pub fn server_with(waiter: Arc<Waiter>) -> Server {
    Server::new("client-demo", "1.0.0")
        .tools(tools![
            add,
            greet,
            capital,
            count_roots,
            count,
            big,
            waiter.wait_for_cancel
        ])
        .resource(
            ResourceDecl::builder("file:///project", "project")
                .description("The project.")
                .handler(|r, _| async move {
                    Ok(vec![ResourceContents::text(r.uri, None, "the project")])
                }),
        )
        .prompt(review())
        .page_size(2)
        .build()
        .expect("the demo server builds")
}

/// How a test reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    InProcess,
    Stdio,
    Http,
}

/// Every transport and era.
pub const EVERY_WAY: [(Via, Era); 6] = [
    (Via::InProcess, Era::Auto),
    (Via::InProcess, Era::Legacy),
    (Via::Stdio, Era::Auto),
    (Via::Stdio, Era::Legacy),
    (Via::Http, Era::Auto),
    (Via::Http, Era::Legacy),
];

/// A client of a fresh demo server.
pub async fn connect(via: Via, options: Options) -> Client {
    connect_to(server(), via, options).await
}

/// A client of `server` over `via`.
pub async fn connect_to(server: Server, via: Via, options: Options) -> Client {
    let options = options.timeout(Duration::from_secs(20));
    match via {
        Via::InProcess => Client::in_process(server, options).await,
        Via::Stdio => {
            let (reader, writer) = stdio_pair(server);
            Client::stdio_pair(reader, writer, options).await
        }
        Via::Http => {
            Client::http(&format!("http://{}/mcp", serve_http(server).await), options).await
        }
    }
    .unwrap_or_else(|e| panic!("connecting over {via:?}: {e}"))
}

/// The server's stdio transport over a pipe pair: what the client writes is
/// its stdin, what it writes the client reads.
pub fn stdio_pair(server: Server) -> (tokio::net::UnixStream, tokio::io::DuplexStream) {
    let (to_server, server_input) = tokio::io::duplex(1 << 16);
    let (server_output, from_server) =
        std::os::unix::net::UnixStream::pair().expect("a socket pair");
    from_server.set_nonblocking(true).expect("non-blocking");
    let from_server = tokio::net::UnixStream::from_std(from_server).expect("a tokio stream");
    tokio::spawn(async move { server.serve_io(server_input, server_output).await });
    (from_server, to_server)
}

/// Serves `server` over Streamable HTTP on a fresh loopback port.
pub async fn serve_http(server: Server) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("a local address");
    let router = typed_mcp_http::HttpServer::new(server, addr)
        .mount("/mcp")
        .expect("the router builds");
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// A notification sink that keeps what it is given.
pub fn kept() -> (
    Arc<std::sync::Mutex<Vec<Value>>>,
    impl Fn(&Value) + Send + Sync + 'static,
) {
    let kept = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&kept);
    (kept, move |message: &Value| {
        sink.lock().unwrap().push(message.clone())
    })
}
