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
//! reachable through the tools. `notify_webhook` posts a ticket's summary to a
//! webhook on a host granted with `desk.notify`: `--allow
//! desk.notify=hooks.example.com` (or `*.example.com`, `host:port`, an IP
//! literal); no other host is reached, redirects included. An entry that does not parse stops the server
//! at startup, naming it. Opening tickets and commenting only add to the desk,
//! and need no grant. `--rate-limit N`
//! refuses a caller's calls beyond N per second (`-31002`, HTTP `503`), each
//! with a receipt. Ctrl-C or SIGTERM drains calls in flight and exits 0.
//!
//! With `--oauth-issuer URL` (and `--http`) the desk is an OAuth 2.1 resource
//! server: every request needs a bearer token from that authorization server,
//! and the token's scopes are its grants (`desk.write` closes tickets);
//! `scripts/oauth-check` runs it against a real one.

mod desk;
mod model;
mod notify;
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
use typed_mcp_http::oauth::{Introspection, JwtVerifier, OAuth};
use typed_mcp_sqlite::SqliteTaskStore;

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

    /// Grant capabilities to every caller: names, comma-separated or repeated, each optionally narrowed to a scope (desk.write, desk.write=ticket:T-1003, desk.files=/srv/desk, desk.files=ro:/srv/desk, desk.notify=hooks.example.com).
    #[arg(
        long,
        value_name = "CAPS",
        env = "SUPPORT_DESK_ALLOW",
        value_delimiter = ','
    )]
    allow: Vec<String>,

    /// Resolve a host name to this address for notify_webhook, as curl's --resolve does (NAME=ADDR, repeatable); grants are still checked against the name.
    #[arg(long, value_name = "NAME=ADDR")]
    resolve: Vec<String>,

    /// Append one receipt per call (tools, reads and prompts) to this JSON Lines file.
    #[arg(long, value_name = "PATH")]
    receipts: Option<PathBuf>,

    /// Serve as an OAuth 2.1 resource server (with --http): every request needs a bearer token from this authorization server (its issuer URL), whose scopes grant capabilities (desk.write closes tickets).
    #[arg(
        long,
        value_name = "URL",
        env = "SUPPORT_DESK_OAUTH_ISSUER",
        requires = "http"
    )]
    oauth_issuer: Option<String>,

    /// The URL clients use for this server, which tokens must name as their audience (default http://ADDR/mcp).
    #[arg(
        long,
        value_name = "URL",
        env = "SUPPORT_DESK_OAUTH_RESOURCE",
        requires = "oauth_issuer"
    )]
    oauth_resource: Option<String>,

    /// The authorization server's JWKS URL (default: read from its metadata).
    #[arg(
        long,
        value_name = "URL",
        env = "SUPPORT_DESK_OAUTH_JWKS",
        requires = "oauth_issuer"
    )]
    oauth_jwks: Option<String>,

    /// Check tokens at this RFC 7662 introspection endpoint instead of as JWTs, as the client --oauth-client-id with the secret in SUPPORT_DESK_OAUTH_CLIENT_SECRET.
    #[arg(long, value_name = "URL", env = "SUPPORT_DESK_OAUTH_INTROSPECTION", requires_all = ["oauth_issuer", "oauth_client_id"], conflicts_with = "oauth_jwks")]
    oauth_introspection: Option<String>,

    /// This server's client id at the authorization server (for --oauth-introspection).
    #[arg(long, value_name = "ID", env = "SUPPORT_DESK_OAUTH_CLIENT_ID")]
    oauth_client_id: Option<String>,

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
    notify::pin_names(&cli.resolve)?;
    let desk = Arc::new(Desk::new(store));
    // Tasks (the search-index rebuild) live in the desk's own database, so
    // a finished task's result survives a restart.
    let tasks = SqliteTaskStore::open(&cli.db)
        .map_err(|e| format!("cannot open the task table in {}: {e}", cli.db.display()))?;
    let mut server = desk.server().allow(&cli.allow).task_store(tasks);
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
        // runs on the store's writer thread and the blocking pool either way.
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
            let oauth = OAuthFlags {
                issuer: cli.oauth_issuer,
                resource: cli.oauth_resource,
                jwks: cli.oauth_jwks,
                introspection: cli.oauth_introspection,
                client_id: cli.oauth_client_id,
            };
            runtime.block_on(serve_http(server, address, &database.to_string(), oauth))?;
        }
    }
    Ok(())
}

/// The `--oauth-*` flags.
struct OAuthFlags {
    issuer: Option<String>,
    resource: Option<String>,
    jwks: Option<String>,
    introspection: Option<String>,
    client_id: Option<String>,
}

impl OAuthFlags {
    /// The resource server the flags describe, for a server listening on
    /// `local`; `None` without `--oauth-issuer`.
    async fn resource_server(
        self,
        local: SocketAddr,
    ) -> Result<Option<OAuth>, Box<dyn std::error::Error>> {
        let Some(issuer) = self.issuer else {
            return Ok(None);
        };
        let resource = self
            .resource
            .unwrap_or_else(|| format!("http://{local}/mcp"));
        let oauth = match (self.introspection, self.jwks) {
            (Some(endpoint), _) => {
                let secret = std::env::var("SUPPORT_DESK_OAUTH_CLIENT_SECRET").map_err(|_| {
                    "--oauth-introspection needs the client secret in SUPPORT_DESK_OAUTH_CLIENT_SECRET"
                })?;
                let client = self.client_id.unwrap_or_default();
                let verifier =
                    Introspection::new(&endpoint, &client, &secret, &resource)?.issuer(&issuer);
                OAuth::new(&resource, verifier)?
            }
            (None, Some(jwks)) => {
                let verifier = JwtVerifier::new(&issuer, &jwks, &resource)?;
                // Fail at start, not at the first request, when the keys are out of reach.
                verifier.refresh().await?;
                OAuth::new(&resource, verifier)?
            }
            (None, None) => {
                let verifier = JwtVerifier::discover(&issuer, &resource).await?;
                verifier.refresh().await?;
                OAuth::new(&resource, verifier)?
            }
        };
        Ok(Some(
            oauth
                .authorization_server(&issuer)?
                .resource_name("Support desk"),
        ))
    }
}

async fn serve_http(
    server: Server,
    address: SocketAddr,
    database: &str,
    oauth: OAuthFlags,
) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let local = listener.local_addr()?;
    let shutdown = Shutdown::on_terminate()?;
    if let Some(oauth) = oauth.resource_server(local).await? {
        // Tokens authenticate every request, so any address may be served;
        // the metadata is served at its well-known path beside /mcp.
        let (resource, metadata) = (oauth.resource().to_owned(), oauth.metadata_url());
        let app = HttpServer::new(server, local)
            .shutdown(shutdown.clone())
            .oauth(oauth)
            .mount("/mcp")?;
        eprintln!(
            "support-desk: serving MCP 2026-07-28 at http://{local}/mcp (database {database}; OAuth resource {resource}, metadata {metadata})"
        );
        typed_mcp_http::serve(listener, app, shutdown.wait()).await;
        return Ok(());
    }
    // Refuses a non-loopback address: this server has no authentication.
    let app = HttpServer::new(server, local)
        .shutdown(shutdown.clone())
        .mount("/mcp")?;
    eprintln!("support-desk: serving MCP 2026-07-28 at http://{local}/mcp (database {database})");
    typed_mcp_http::serve(listener, app, shutdown.wait()).await;
    Ok(())
}
