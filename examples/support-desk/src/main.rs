//! A support-desk MCP server on an embedded SQLite database: search tickets,
//! open them, comment on them and close them, read one as a resource, or ask
//! for a triage prompt. Built with typed-mcp, served over stdio (the way MCP
//! clients launch servers) or Streamable HTTP.
//!
//! ```sh
//! cargo run --release -p support-desk -- --http 127.0.0.1:8080
//! ```
//!
//! The first start creates `desk.db` (see `--db`) with a few demo tickets.
//! Closing a ticket needs the `desk.write` capability: grant it with
//! `--allow desk.write` or `SUPPORT_DESK_ALLOW=desk.write`, or for some tickets
//! only: `--allow desk.write=ticket:T-1003` (`ticket:T-10*` for a prefix).
//! Attaching files and exporting tickets need `desk.files`, granted for one
//! directory: `--allow desk.files=/srv/desk` (read-write) or
//! `--allow desk.files=ro:/srv/desk` (attachments only); no path outside it is
//! reachable through the tools. An entry that does not parse stops the server
//! at startup, naming it. Opening tickets and commenting only add to the desk,
//! and need no grant. `--rate-limit N`
//! refuses a caller's calls beyond N per second (`-31002`, HTTP `503`), each
//! with a receipt. Ctrl-C or SIGTERM drains calls in flight and exits 0.

mod desk;
mod model;
mod rate_limit;
mod store;

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use typed_mcp::receipt::JsonLinesSink;
use typed_mcp::{Server, transport::Shutdown};
use typed_mcp_http::HttpServer;

use crate::desk::Desk;
use crate::rate_limit::RateLimit;
use crate::store::Store;

/// A support-desk MCP server on an embedded SQLite database.
///
/// Serves MCP 2026-07-28 on stdin/stdout unless `--http` is given.
#[derive(Debug, Parser)]
#[command(name = "support-desk", version)]
struct Cli {
    /// The SQLite database file; created, migrated and seeded with demo tickets on first start.
    #[arg(long, value_name = "PATH", default_value = "desk.db")]
    db: PathBuf,

    /// Serve Streamable HTTP at http://ADDR/mcp (a loopback address) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,

    /// Grant capabilities to every caller: names, comma-separated or repeated, each optionally narrowed to a scope (desk.write, desk.write=ticket:T-1003, desk.files=/srv/desk, desk.files=ro:/srv/desk).
    #[arg(
        long,
        value_name = "CAPS",
        env = "SUPPORT_DESK_ALLOW",
        value_delimiter = ','
    )]
    allow: Vec<String>,

    /// Append one receipt per call (tools, reads and prompts) to this JSON Lines file.
    #[arg(long, value_name = "PATH")]
    receipts: Option<PathBuf>,

    /// Refuse a caller's calls beyond N per second (per principal; unauthenticated callers share one limit) with -31002, "server overloaded" (HTTP 503).
    #[arg(long, value_name = "N")]
    rate_limit: Option<NonZeroU32>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("support-desk: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    let store = Store::open(&cli.db)
        .map_err(|e| format!("cannot open the database {}: {e}", cli.db.display()))?;
    let desk = Arc::new(Desk::new(store));
    let mut server = desk.server().allow(&cli.allow);
    if let Some(path) = &cli.receipts {
        let sink = JsonLinesSink::create(path)
            .map_err(|e| format!("cannot open the receipts file {}: {e}", path.display()))?;
        server = server.receipt_sink(sink);
    }
    if let Some(calls) = cli.rate_limit {
        server = server.layer(RateLimit::per_second(calls));
    }
    let server = server.build()?;
    desk.publish_to(server.resource_updates().clone());
    let database = cli.db.display();
    match cli.http {
        // One client on one pipe: a current-thread runtime is enough. SQLite work
        // runs on the writer thread and the blocking pool either way.
        None => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let served = runtime.block_on(async {
                let shutdown = Shutdown::on_terminate()?;
                eprintln!(
                    "support-desk: serving MCP 2026-07-28 on stdin/stdout (database {database})"
                );
                server.serve_stdio_until(shutdown).await
            });
            served?;
        }
        Some(address) => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(serve_http(server, address, &database.to_string()))?;
        }
    }
    Ok(())
}

async fn serve_http(
    server: Server,
    address: SocketAddr,
    database: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let local = listener.local_addr()?;
    let shutdown = Shutdown::on_terminate()?;
    // Refuses a non-loopback address: this server has no authentication.
    let mcp = HttpServer::new(server, local)
        .shutdown(shutdown.clone())
        .into_router()?;
    let app = axum::Router::new().nest("/mcp", mcp);
    eprintln!("support-desk: serving MCP 2026-07-28 at http://{local}/mcp (database {database})");
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.wait())
        .await?;
    Ok(())
}
