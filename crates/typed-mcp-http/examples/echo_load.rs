//! A test server for typed-mcp-http's memory test (`tests/it/memory.rs`): the
//! quickstart's `echo` tool over Streamable HTTP with the default limits,
//! except that a request may wait five minutes (not ten seconds) for room in
//! the byte budget, so a slow debug build under many large calls queues them
//! rather than shedding them.
//!
//! ```sh
//! cargo run -p typed-mcp-http --example echo_load -- 127.0.0.1:0
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use typed_mcp::{Server, tool, tools};
use typed_mcp_http::HttpServer;

/// Return the given text unchanged.
///
/// # Arguments
/// * `text` - The text to return.
#[tool(read_only, open_world = false)]
async fn echo(text: String) -> String {
    text
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("echo_load: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: echo_load 127.0.0.1:PORT";
    let address: SocketAddr = match std::env::args().nth(1) {
        Some(address) => address
            .parse()
            .map_err(|e| format!("{address:?}: {e} (expected IP:PORT); {usage}"))?,
        None => return Err(usage.into()),
    };
    let server = Server::new("typed-mcp-echo-load", env!("CARGO_PKG_VERSION"))
        .tools(tools![echo])
        .queue_timeout(Duration::from_secs(300))
        .build()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(address).await?;
        let local = listener.local_addr()?;
        let app = HttpServer::new(server, local).mount("/mcp")?;
        eprintln!("echo_load: serving MCP 2026-07-28 at http://{local}/mcp");
        typed_mcp_http::serve(listener, app, std::future::pending()).await;
        Ok(())
    })
}
