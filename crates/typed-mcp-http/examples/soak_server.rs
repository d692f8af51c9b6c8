//! A test server for typed-mcp-http's soak test (`tests/it/soak.rs`): a few
//! tools and a watched resource over Streamable HTTP, limits raised so that
//! thousands of connections queue rather than being shed, and a `census` tool
//! through which the test sees whether any handler or subscription outlived
//! its client.
//!
//! - `echo {text}` returns the text;
//! - `drip {steps, ms}` sends `steps` progress notifications `ms` apart, then
//!   answers `"dripped <steps>"`;
//! - `census` answers `{"handlers": N, "subscribers": M}`: the `echo` and
//!   `drip` handlers alive now (each counted until its future is dropped, so
//!   a call cancelled by a vanished client is un-counted too) and the open
//!   `subscriptions/listen` streams;
//! - the resource `soak://ticks` is published as updated every 50 ms.
//!
//! ```sh
//! cargo run -p typed-mcp-http --example soak_server -- 127.0.0.1:0
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use typed_mcp::declare::{ResourceDecl, ToolDecl};
use typed_mcp::wire::{CallToolResult, ResourceContents};
use typed_mcp::{ResourceUpdates, Server, ToolError};
use typed_mcp_http::HttpServer;

/// The resource `subscriptions/listen` streams watch.
const TICKS: &str = "soak://ticks";

/// `echo` and `drip` handlers alive now.
static HANDLERS: AtomicUsize = AtomicUsize::new(0);

/// Counts a live handler until its future is dropped (finished or cancelled).
struct Alive;

impl Alive {
    fn enter() -> Alive {
        HANDLERS.fetch_add(1, Ordering::SeqCst);
        Alive
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        HANDLERS.fetch_sub(1, Ordering::SeqCst);
    }
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn echo() -> ToolDecl {
    ToolDecl::builder("echo")
        .description("Return the given text unchanged.")
        .input_schema(object(
            json!({"text": {"type": "string", "description": "The text to return."}}),
            &["text"],
        ))
        .handler(|args, _ctx| {
            let alive = Alive::enter();
            async move {
                let _alive = alive;
                match args.get("text") {
                    Some(Value::String(text)) => Ok(CallToolResult::text(text.clone())),
                    _ => Err(ToolError::execution("- text: expected a string")),
                }
            }
        })
}

fn drip() -> ToolDecl {
    ToolDecl::builder("drip")
        .description("Send `steps` progress notifications `ms` apart, then answer.")
        .input_schema(object(
            json!({
                "steps": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "How many notifications."},
                "ms": {"type": "integer", "minimum": 0, "maximum": 1000, "description": "The pause before each, in milliseconds."}
            }),
            &["steps", "ms"],
        ))
        .handler(|args, ctx| {
            let alive = Alive::enter();
            async move {
                let _alive = alive;
                let steps = args["steps"].as_u64().unwrap_or(1);
                let pause = Duration::from_millis(args["ms"].as_u64().unwrap_or(0));
                for step in 1..=steps {
                    tokio::time::sleep(pause).await;
                    ctx.progress(step as f64, Some(steps as f64), None).await;
                }
                Ok(CallToolResult::text(format!("dripped {steps}")))
            }
        })
}

/// The server's resource updates, set once it is built (the `census` tool is
/// declared before).
static UPDATES: OnceLock<ResourceUpdates> = OnceLock::new();

fn census() -> ToolDecl {
    ToolDecl::builder("census")
        .description("The echo and drip handlers alive and the open subscriptions.")
        .input_schema(object(json!({}), &[]))
        .handler(move |_args, _ctx| {
            let subscribers = UPDATES.get().map_or(0, ResourceUpdates::subscribers);
            async move {
                Ok(CallToolResult::structured(json!({
                    "handlers": HANDLERS.load(Ordering::SeqCst),
                    "subscribers": subscribers,
                })))
            }
        })
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("soak_server: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: soak_server 127.0.0.1:PORT";
    let address: SocketAddr = match std::env::args().nth(1) {
        Some(address) => address
            .parse()
            .map_err(|e| format!("{address:?}: {e} (expected IP:PORT); {usage}"))?,
        None => return Err(usage.into()),
    };
    let ticks = ResourceDecl::builder(TICKS, "ticks")
        .description("Updated every 50 ms.")
        .handler(|r, _| async move { Ok(vec![ResourceContents::text(r.uri, None, "tick")]) });
    let server = Server::new("typed-mcp-soak", env!("CARGO_PKG_VERSION"))
        .tools([echo(), drip(), census()])
        .resource(ticks)
        // Every connection of the soak test has at most one call in flight:
        // room for all of them, and a long wait rather than a shed call.
        .max_pending(16 * 1024)
        .max_concurrent(256)
        .queue_timeout(Duration::from_secs(300))
        .build()?;
    let updates = server.resource_updates().clone();
    let _ = UPDATES.set(updates.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(address).await?;
        let local = listener.local_addr()?;
        let app = HttpServer::new(server, local).mount("/mcp")?;
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_millis(50));
            loop {
                every.tick().await;
                updates.publish(TICKS);
            }
        });
        eprintln!("soak_server: serving MCP 2026-07-28 at http://{local}/mcp");
        typed_mcp_http::serve(listener, app, std::future::pending()).await;
        Ok(())
    })
}
