//! Benchmarks of the per-call work every transport shares, so that a
//! regression shows here before the wire bench (`scripts/bench-smoke`):
//!
//! - `route`: the router alone (parse, envelope, lookup) for `tools/call`
//!   (also with an SDK client's envelope) and the first `tools/list` page, over catalogs of 10 to 10 000 tools: both
//!   must cost the same whatever the catalog's size.
//! - `call`: one `tools/call` through [`Connection::accept`] to its reply in
//!   the outbox (router, record, admission, task, argument validation and
//!   decoding, handler, result encoding), in both eras, with the bare
//!   envelope and with the one the official SDKs' clients send, for a typed tool
//!   without constraints and one whose schema has constraints serde does not
//!   check, with good and bad arguments, and over the same catalog sweep.
//! - `encode`: a structured result (text carried twice) of 100 B to 1 MB.
//!
//! ```sh
//! cargo bench -p typed-mcp --bench hot_path
//! cargo bench -p typed-mcp --bench hot_path -- route   # one group
//! ```

use std::hint::black_box;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use typed_mcp::declare::ToolDecl;
use typed_mcp::protocol::{RouteContext, encode};
use typed_mcp::transport::{Connection, Inbound, Inbox, Message, Outbox};
use typed_mcp::wire::CallToolResult;
use typed_mcp::{Server, tool, tools};

fn main() {
    divan::main();
}

/// The sizes of the catalog sweep.
const CATALOG_SIZES: [usize; 4] = [10, 100, 1_000, 10_000];

/// The sum of two integers.
#[derive(Debug, Serialize, JsonSchema)]
struct Sum {
    /// `a + b`.
    sum: i64,
}

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(read_only)]
async fn add(a: i64, b: i64) -> Sum {
    Sum {
        sum: a.wrapping_add(b),
    }
}

/// Return the text unchanged.
///
/// # Arguments
/// * `text` - The text.
#[tool(read_only)]
async fn echo(text: String) -> String {
    text
}

/// Book a number of seats (a schema with constraints serde does not check).
///
/// # Arguments
/// * `seats` - How many, 1 to 9.
/// * `code` - A booking code of six capital letters.
#[tool]
async fn book(
    #[schemars(range(min = 1, max = 9))] seats: u8,
    #[schemars(regex(pattern = r"^[A-Z]{6}$"))] code: String,
) -> Sum {
    Sum {
        sum: i64::from(seats) + code.len() as i64,
    }
}

/// The quickstart's tools plus `extra` filler tools, so that the one called
/// sits among many.
fn server(extra: usize) -> Server {
    let mut builder = Server::new("bench", "1.0.0").tools(tools![add, echo, book]);
    for i in 0..extra {
        builder = builder.tool(
            ToolDecl::builder(format!("filler_{i:05}"))
                .description("A tool among many.")
                .input_schema(json!({"type": "object", "properties": {"n": {"type": "integer", "description": "A number."}}}))
                .handler(|_args, _ctx| async { Ok(CallToolResult::text("filler")) }),
        );
    }
    builder.build().expect("the bench server builds")
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// The envelope the official SDKs' clients send: it also names the client
/// and asks for progress.
const CLIENT_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench-client","version":"1.0.0"},"progressToken":7}"#;

fn call_line(tool: &str, arguments: &str) -> Vec<u8> {
    call_line_with(META, tool, arguments)
}

fn call_line_with(meta: &str, tool: &str, arguments: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{{meta},"name":"{tool}","arguments":{arguments}}}}}"#
    )
    .into_bytes()
}

fn list_line() -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{{META}}}}}"#).into_bytes()
}

fn legacy_call_line(arguments: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"add","arguments":{arguments}}}}}"#
    )
    .into_bytes()
}

mod route {
    use super::*;

    #[divan::bench(args = CATALOG_SIZES)]
    fn tools_call(bencher: divan::Bencher, tools: usize) {
        let server = server(tools - 3);
        let line = call_line("add", r#"{"a":7,"b":1}"#);
        bencher.bench_local(|| {
            black_box(server.router().route(black_box(&line), &RouteContext::NONE))
        });
    }

    /// `tools/call` with the envelope an SDK client sends.
    #[divan::bench]
    fn tools_call_sdk_envelope(bencher: divan::Bencher) {
        let server = server(0);
        let line = call_line_with(CLIENT_META, "add", r#"{"a":7,"b":1}"#);
        bencher.bench_local(|| {
            black_box(server.router().route(black_box(&line), &RouteContext::NONE))
        });
    }

    #[divan::bench(args = CATALOG_SIZES)]
    fn tools_list(bencher: divan::Bencher, tools: usize) {
        let server = server(tools - 3);
        let line = list_line();
        bencher.bench_local(|| {
            black_box(server.router().route(black_box(&line), &RouteContext::NONE))
        });
    }
}

/// One connection of a server and the outbox its replies go to, on a
/// current-thread runtime (as the stdio transport serves).
struct Client {
    runtime: Runtime,
    connection: Connection,
    outbox: Outbox,
    inbox: Inbox,
}

impl Client {
    fn new(server: Server) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let connection = Connection::new(server);
        let (outbox, inbox) = Outbox::channel();
        Client {
            runtime,
            connection,
            outbox,
            inbox,
        }
    }

    /// Sends one message and returns the reply's body.
    fn call(&mut self, line: &[u8]) -> Vec<u8> {
        let Client {
            runtime,
            connection,
            outbox,
            inbox,
        } = self;
        runtime.block_on(async {
            connection.accept(line, Inbound::default(), outbox).await;
            loop {
                let out = inbox.recv().await.expect("a reply");
                if let Message::Reply(reply) = out.into_message() {
                    return reply.body;
                }
            }
        })
    }

    /// A dated client's session (2025-11-25) on this connection.
    fn initialize(&mut self) {
        let reply = self.call(br#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#);
        assert!(!contains(&reply, b"\"error\""), "initialize failed");
        self.call_notification(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    fn call_notification(&mut self, line: &[u8]) {
        let Client {
            runtime,
            connection,
            outbox,
            ..
        } = self;
        runtime.block_on(connection.accept(line, Inbound::default(), outbox));
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

mod call {
    use super::*;

    /// `add` among `tools` tools: the cost must not grow with the catalog.
    #[divan::bench(args = CATALOG_SIZES)]
    fn add_among(bencher: divan::Bencher, tools: usize) {
        let mut client = Client::new(server(tools - 3));
        let line = call_line("add", r#"{"a":7,"b":1}"#);
        assert!(contains(&client.call(&line), br#""sum":8"#));
        bencher.bench_local(|| black_box(client.call(&line)));
    }

    /// `add` with the envelope an SDK client sends (client named, progress
    /// asked for).
    #[divan::bench]
    fn add_sdk_envelope(bencher: divan::Bencher) {
        let mut client = Client::new(server(0));
        let line = call_line_with(CLIENT_META, "add", r#"{"a":7,"b":1}"#);
        assert!(contains(&client.call(&line), br#""sum":8"#));
        bencher.bench_local(|| black_box(client.call(&line)));
    }

    /// `add` from a client of the dated revision 2025-11-25 (a session).
    #[divan::bench]
    fn add_legacy(bencher: divan::Bencher) {
        let mut client = Client::new(server(0));
        client.initialize();
        let line = legacy_call_line(r#"{"a":7,"b":1}"#);
        let reply = client.call(&line);
        assert!(contains(&reply, br#""sum":8"#));
        assert!(!contains(&reply, b"resultType"));
        bencher.bench_local(|| black_box(client.call(&line)));
    }

    /// Good arguments of a schema with constraints (a range, a pattern).
    #[divan::bench]
    fn constrained_valid(bencher: divan::Bencher) {
        let mut client = Client::new(server(0));
        let line = call_line("book", r#"{"seats":2,"code":"ABCDEF"}"#);
        assert!(contains(&client.call(&line), br#""sum":8"#));
        bencher.bench_local(|| black_box(client.call(&line)));
    }

    /// Bad arguments (every problem reported).
    #[divan::bench]
    fn constrained_invalid(bencher: divan::Bencher) {
        let mut client = Client::new(server(0));
        let line = call_line("book", r#"{"seats":12,"code":"abc","extra":1}"#);
        let reply = client.call(&line);
        assert!(contains(&reply, br#""isError":true"#));
        bencher.bench_local(|| black_box(client.call(&line)));
    }

    /// `add` with a wrong type (the report path of a tool without constraints).
    #[divan::bench]
    fn add_invalid(bencher: divan::Bencher) {
        let mut client = Client::new(server(0));
        let line = call_line("add", r#"{"a":"seven","b":1}"#);
        assert!(contains(&client.call(&line), br#""isError":true"#));
        bencher.bench_local(|| black_box(client.call(&line)));
    }

    /// `echo` of a text of this many bytes (the payload sweep's sizes).
    #[divan::bench(args = [100, 10_000, 65_536, 1_000_000])]
    fn echo(bencher: divan::Bencher, bytes: usize) {
        let mut client = Client::new(server(0));
        let text = "x".repeat(bytes);
        let line = call_line("echo", &format!(r#"{{"text":"{text}"}}"#));
        assert!(client.call(&line).len() > 2 * bytes);
        bencher
            .counter(divan::counter::BytesCount::new(bytes))
            .bench_local(|| black_box(client.call(&line)));
    }
}

mod encode_result {
    use super::*;

    /// A structured result carrying a text of this many bytes.
    #[divan::bench(args = [100, 10_000, 1_000_000])]
    fn structured(bencher: divan::Bencher, bytes: usize) {
        let id = typed_mcp::protocol::RequestId::from(7i64);
        let text = "x".repeat(bytes);
        bencher
            .counter(divan::counter::BytesCount::new(bytes))
            .with_inputs(|| json!({"result": text.clone()}))
            .bench_local_values(|value: Value| {
                let result = CallToolResult::structured(value);
                black_box(encode::result(&id, &result))
            });
    }
}
