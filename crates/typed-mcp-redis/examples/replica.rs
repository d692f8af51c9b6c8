//! `replica`: one replica of a typed-mcp server meant to run several times
//! behind a load balancer, sharing through Redis what replicas must share.
//! `deploy/run` starts three of them behind nginx; `scripts/scale-check`
//! tests them there.
//!
//! ```sh
//! TYPED_MCP_STATE_KEYS=$(openssl rand -hex 32) \
//!   cargo run -p typed-mcp-redis --example replica -- \
//!   --http 127.0.0.1:0 --redis redis://127.0.0.1:6379/ --name r1
//! ```
//!
//! Without `--redis` it is a single process (in-process updates, sessions
//! in memory): the baseline of the bus's cost.
//!
//! What it serves, each answer naming the replica that served it:
//! - `add(a, b)`: the sum; publishes an update of `counter://adds` (the
//!   call that publishes, for the bench);
//! - `touch(name)`: publishes an update of `note://{name}`;
//! - `whoami()`: this replica's name;
//! - `two_questions()`: a multi round-trip tool (two elicitations, the
//!   progress in the sealed `requestState`: any replica sharing the
//!   keyring serves any round);
//! - `slow_sum(a, b, millis)` and `confirm()`: tools that may run as tasks
//!   (in Redis with `--redis`: polled, answered and collected anywhere);
//! - the resource template `note://{name}` and the resource `counter://adds`.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::OnceLock;

use serde_json::{Value, json};
use typed_mcp::state::StateKeys;
use typed_mcp::transport::Shutdown;
use typed_mcp::wire::{ElicitAction, ElicitResult};
use typed_mcp::{
    Answer, NeedsInput, ResourceUpdates, Server, ToolContext, resource, resources, tool, tools,
};
use typed_mcp_http::HttpServer;
use typed_mcp_redis::{KeyringCheck, Redis, RedisBus, RedisSessionStore, RedisTaskStore};

/// This replica's name (`--name`).
static NAME: OnceLock<String> = OnceLock::new();
/// The server's update handle, once built.
static UPDATES: OnceLock<ResourceUpdates> = OnceLock::new();

fn name() -> &'static str {
    NAME.get().map_or("replica", String::as_str)
}

fn publish(uri: String) {
    if let Some(updates) = UPDATES.get() {
        updates.publish(uri);
    }
}

/// Add two integers, and publish an update of `counter://adds`.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    publish("counter://adds".to_owned());
    a.wrapping_add(b)
}

/// Publish an update of the note `note://{name}`; answers the replica's name.
///
/// # Arguments
/// * `name` - The note that changed.
#[tool]
fn touch(name: String) -> String {
    publish(format!("note://{name}"));
    self::name().to_owned()
}

/// The name of the replica that served this call.
#[tool(read_only)]
fn whoami() -> String {
    name().to_owned()
}

fn ask(key: &str, question: &str, state: Value) -> NeedsInput {
    NeedsInput::new()
        .elicit(
            key,
            question,
            json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}),
        )
        .state(state.to_string())
}

fn answer(ctx: &ToolContext, key: &str) -> Option<String> {
    let answer = ctx.input_response::<ElicitResult>(key)?.ok()?;
    if answer.action != ElicitAction::Accept {
        return None;
    }
    Some(answer.content.as_ref()?.get("answer")?.as_str()?.to_owned())
}

/// Asks two questions, one per round, and answers with both and with the
/// replicas that served each round (the progress travels in the sealed
/// `requestState`, so any replica with the shared keyring serves any round).
#[tool(read_only)]
async fn two_questions(ctx: ToolContext) -> Answer<String> {
    let state: Option<Value> = ctx
        .request_state()
        .and_then(|s| serde_json::from_str(s).ok());
    let first_round = || ask("first", "What is your name?", json!({"rounds": [name()]}));
    let Some(state) = state else {
        return Answer::NeedsInput(first_round());
    };
    let mut rounds: Vec<String> = state["rounds"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    rounds.push(name().to_owned());
    match state.get("name").and_then(Value::as_str) {
        None => match answer(&ctx, "first") {
            Some(user) => Answer::NeedsInput(ask(
                "second",
                "What is your favorite color?",
                json!({"rounds": rounds, "name": user}),
            )),
            None => Answer::NeedsInput(first_round()),
        },
        Some(user) => match answer(&ctx, "second") {
            Some(color) => Answer::Done(format!(
                "{user} likes {color}; rounds served by {}",
                rounds.join(", ")
            )),
            None => Answer::NeedsInput(ask(
                "second",
                "What is your favorite color?",
                json!({"rounds": &rounds[..rounds.len() - 1], "name": user}),
            )),
        },
    }
}

/// Add two integers slowly: may run as a task (the Tasks extension), whose
/// result names the replica that ran it.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
/// * `millis` - How long to work first (at most a minute).
#[tool(read_only, task)]
async fn slow_sum(ctx: ToolContext, a: i64, b: i64, millis: u64) -> String {
    tokio::select! {
        () = tokio::time::sleep(std::time::Duration::from_millis(millis.min(60_000))) => {}
        () = ctx.cancelled() => {}
    }
    format!("{} computed on {}", a.wrapping_add(b), name())
}

/// Ask the user to confirm, then answer; may run as a task, whose answer
/// may come through any replica.
#[tool(read_only, task)]
async fn confirm(ctx: ToolContext) -> Answer<String> {
    match answer(&ctx, "confirm") {
        Some(said) => Answer::Done(format!("{said}, confirmed on {}", name())),
        None => Answer::NeedsInput(ask("confirm", "Confirm?", json!({"asked_on": name()}))),
    }
}

/// A note.
///
/// # Arguments
/// * `name` - The note's name.
#[resource(uri = "note://{name}", name = "note", mime_type = "text/plain")]
async fn note(name: String) -> String {
    format!("note {name}, read on {}", self::name())
}

/// The resource `add` updates.
#[resource(uri = "counter://adds", name = "adds", mime_type = "text/plain")]
async fn adds() -> String {
    format!("read on {}", name())
}

struct Options {
    http: SocketAddr,
    redis: Option<String>,
    prefix: String,
}

const USAGE: &str = "usage: replica --http 127.0.0.1:PORT [--redis redis://HOST:PORT/] [--name NAME] [--prefix PREFIX]";

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let (mut http, mut redis, mut name, mut prefix) =
        (None, None, None, "typed-mcp-replica".to_owned());
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{arg} needs a value; {USAGE}"))
        };
        match arg.as_str() {
            "--http" => {
                let address = value()?;
                http = Some(
                    address
                        .parse()
                        .map_err(|e| format!("--http {address:?}: {e} (expected IP:PORT)"))?,
                );
            }
            "--redis" => redis = Some(value()?),
            "--name" => name = Some(value()?),
            "--prefix" => prefix = value()?,
            other => return Err(format!("unexpected argument {other:?}; {USAGE}")),
        }
    }
    let _ = NAME.set(name.unwrap_or_else(|| format!("replica-{}", std::process::id())));
    Ok(Options {
        http: http.ok_or(USAGE)?,
        redis,
        prefix,
    })
}

fn main() -> ExitCode {
    tracing_to_stderr();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("replica: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Warnings (a keyring that is not shared, a lost Redis connection) go to
/// stderr, one line each.
fn tracing_to_stderr() {
    use tracing_subscriber::layer::SubscriberExt as _;
    // Warnings from everything; the bus's reconnections too (info). The
    // per-call receipts (info) stay out.
    let filter = tracing_subscriber::filter::Targets::new()
        .with_default(tracing::Level::WARN)
        .with_target("typed_mcp_redis", tracing::Level::INFO);
    let subscriber = tracing_subscriber::registry().with(filter).with(
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(false),
    );
    let _ = tracing::subscriber::set_global_default(subscriber);
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let options = options()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(serve(options))
}

async fn serve(options: Options) -> Result<(), Box<dyn std::error::Error>> {
    let keys = StateKeys::from_env()?.unwrap_or_else(StateKeys::random);
    let mut builder = Server::new("typed-mcp-replica", env!("CARGO_PKG_VERSION"))
        .tools(tools![add, touch, whoami, two_questions, slow_sum, confirm])
        .resources(resources![note, adds])
        .request_state_keys(keys);
    let redis = match &options.redis {
        Some(url) => {
            let redis = Redis::open(url, options.prefix.clone())?;
            builder = builder
                .update_bus(RedisBus::start(&redis).await?)
                .task_store(RedisTaskStore::new(&redis, name()))
                // The runner looks for answers and cancellations made
                // through other replicas at this interval.
                .task_poll_interval(std::time::Duration::from_millis(100));
            Some(redis)
        }
        None => None,
    };
    let server = builder.build()?;
    let _ = UPDATES.set(server.resource_updates().clone());
    let listener = tokio::net::TcpListener::bind(options.http).await?;
    let local = listener.local_addr()?;
    let shutdown = Shutdown::on_terminate()?;
    let mut http = HttpServer::new(server.clone(), local).shutdown(shutdown.clone());
    if let Some(redis) = &redis {
        KeyringCheck::start(redis, &server, name()).await?;
        http = http.session_store(RedisSessionStore::new(redis, server.clone()));
    }
    let app = http.mount("/mcp")?;
    let shared = if redis.is_some() {
        "shared through Redis"
    } else {
        "alone"
    };
    eprintln!(
        "replica {}: serving MCP at http://{local}/mcp ({shared})",
        name()
    );
    typed_mcp_http::serve(listener, app, shutdown.wait()).await;
    Ok(())
}
