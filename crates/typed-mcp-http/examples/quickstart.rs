//! A small MCP server: two tools, a resource, a resource template and a prompt,
//! each an ordinary Rust function, served over stdio (the default) or
//! Streamable HTTP. Schemas and descriptions come from the signatures and doc
//! comments.
//!
//! ```sh
//! cargo run --example quickstart
//! ```
//!
//! then paste a request line, e.g.
//!
//! ```json
//! {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"add","arguments":{"a":2,"b":3}}}
//! ```
//!
//! Over HTTP, at `/mcp`:
//!
//! ```sh
//! cargo run --example quickstart -- --http 127.0.0.1:8000
//! curl -s http://127.0.0.1:8000/mcp \
//!   -H 'Content-Type: application/json' \
//!   -H 'Accept: application/json, text/event-stream' \
//!   -H 'MCP-Protocol-Version: 2026-07-28' \
//!   -H 'Mcp-Method: tools/call' -H 'Mcp-Name: add' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"add","arguments":{"a":2,"b":3}}}'
//! ```
//!
//! Ctrl-C or SIGTERM stops it gracefully: it stops reading (stdio) or
//! answers new requests `503` (HTTP), gives calls in flight the server's
//! drain timeout to finish, and exits 0.
//!
//! It lives in typed-mcp-http because only that crate may depend on an HTTP
//! stack; typed-mcp itself compiles none.

use std::net::SocketAddr;
use std::process::ExitCode;

use schemars::JsonSchema;
use serde::Serialize;
use typed_mcp::{Server, prompt, prompts, resource, resources, tool, tools, transport::Shutdown};
use typed_mcp_http::HttpServer;

/// The sum of two integers.
#[derive(Debug, Serialize, JsonSchema)]
struct Sum {
    /// `a + b`.
    sum: i64,
}

/// The sum does not fit in 64 bits.
#[derive(Debug, thiserror::Error)]
#[error("the sum of {0} and {1} does not fit in 64 bits")]
struct Overflow(i64, i64);

/// Add two integers and return their sum.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(title = "Add", read_only, open_world = false)]
async fn add(a: i64, b: i64) -> Result<Sum, Overflow> {
    a.checked_add(b)
        .map(|sum| Sum { sum })
        .ok_or(Overflow(a, b))
}

/// Return the given text unchanged.
///
/// # Arguments
/// * `text` - The text to return.
#[tool(read_only, open_world = false)]
async fn echo(text: String) -> String {
    text
}

/// What this server is and how to talk to it.
#[resource(uri = "quickstart://readme", mime_type = "text/plain")]
fn readme() -> String {
    "This is the typed-mcp quickstart server. Try tools/call on add or echo.".to_owned()
}

/// A greeting for the named person.
///
/// # Arguments
/// * `name` - Who to greet.
#[resource(uri = "quickstart://greeting/{name}", mime_type = "text/plain")]
fn greeting(name: String) -> String {
    format!("Hello, {name}!")
}

/// Ask the model to review a piece of code.
///
/// # Arguments
/// * `code` - The code to review.
/// * `focus` - What to pay attention to (optional).
#[prompt(name = "review_code")]
fn review(code: String, focus: Option<String>) -> String {
    let focus = focus.map(|f| format!(" Focus on {f}.")).unwrap_or_default();
    format!("Please review this code.{focus}\n\n{code}")
}

/// How to serve: `--http ADDR` or stdio.
enum Transport {
    Stdio,
    Http(SocketAddr),
}

fn transport() -> Result<Transport, String> {
    let usage = "usage: quickstart [--stdio | --http 127.0.0.1:PORT]";
    let mut args = std::env::args().skip(1);
    let mut transport = Transport::Stdio;
    while let Some(arg) = args.next() {
        let address = match arg.as_str() {
            "--stdio" => {
                transport = Transport::Stdio;
                continue;
            }
            "--http" => args.next().ok_or(usage)?,
            other => match other.strip_prefix("--http=") {
                Some(address) => address.to_owned(),
                None => return Err(format!("unexpected argument {other:?}; {usage}")),
            },
        };
        let address = address
            .parse()
            .map_err(|e| format!("--http {address:?}: {e} (expected IP:PORT); {usage}"))?;
        transport = Transport::Http(address);
    }
    Ok(transport)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("quickstart: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let transport = transport()?;
    let server = Server::new("typed-mcp-quickstart", env!("CARGO_PKG_VERSION"))
        .instructions("Arithmetic and echo utilities for trying out typed-mcp.")
        .tools(tools![add, echo])
        .resources(resources![readme, greeting])
        .prompts(prompts![review])
        .build()?;
    match transport {
        // A stdio server reads one pipe: a current-thread runtime spares the
        // cross-thread wake-ups of a multi-thread one (about half the CPU per
        // request, measured with the shared bench). Blocking handlers still run on
        // tokio's blocking pool.
        Transport::Stdio => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let served = runtime.block_on(async {
                let shutdown = Shutdown::on_terminate()?;
                eprintln!("typed-mcp quickstart: serving MCP 2026-07-28 on stdin/stdout");
                server.serve_stdio_until(shutdown).await
            });
            served?;
        }
        // HTTP serves many connections at once: use every core.
        Transport::Http(address) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(serve_http(server, address))?;
        }
    }
    Ok(())
}

async fn serve_http(server: Server, address: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(address).await?;
    let local = listener.local_addr()?;
    let shutdown = Shutdown::on_terminate()?;
    // Refuses a non-loopback address: this example has no authentication.
    // MCP alone, so the endpoint as a service: requests to /mcp skip the
    // router (`mount("/mcp")` gives a router to merge into a larger app).
    let app = HttpServer::new(server, local)
        .shutdown(shutdown.clone())
        .into_service("/mcp")?;
    eprintln!("typed-mcp quickstart: serving MCP 2026-07-28 at http://{local}/mcp");
    // HTTP/1.1 on hyper; `axum::serve` would do too (and HTTP/2), holding
    // more memory per connection.
    typed_mcp_http::serve(listener, app, shutdown.wait()).await;
    Ok(())
}
