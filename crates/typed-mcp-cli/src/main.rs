//! `typed-mcp`: a command-line client for MCP servers of either protocol era,
//! the `mcp.lock` of a server's declarations, and the same commands served as
//! an MCP server.
//!
//! # Eras
//!
//! By default (`--era auto`) the client asks `server/discover` (2026-07-28,
//! stateless, a `_meta` envelope on every request). When the answer shows the
//! server does not speak 2026-07-28 (a JSON-RPC error such as `-32601` or
//! `-32602`, `-32022` listing a dated revision, or over HTTP a 400, 404 or
//! 405 without a JSON-RPC answer), it opens a legacy session instead:
//! `initialize` offering 2025-11-25 (2025-06-18 and 2025-03-26 are accepted as
//! the server's counter-offer), `notifications/initialized`, then requests
//! without the envelope; over HTTP every later request carries the session's
//! `Mcp-Session-Id` (and `MCP-Protocol-Version` from 2025-06-18 on) and the
//! session is ended with a DELETE. `--era modern` and `--era legacy` speak
//! only that era. The legacy era is named on stderr; `discover` names either
//! on stdout. What the legacy wire lacks (`resultType`, cache hints, the list
//! of supported versions) is not shown, and `mcp.lock` records declarations,
//! not the era: a server reachable in both locks the same.
//!
//! Exit status: 0 on success; 1 when the server answered with an error (a
//! JSON-RPC error, a tool's `isError`) or `lock --check` found changes; 2 when
//! no answer could be had (a wrong command line, a server that cannot be
//! started or reached, output that is not MCP, a timeout, an unusable lock file).

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod args;
mod connect;
mod error;
mod lock;
mod mcp;
mod show;
mod target;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use serde_json::{Value, json};

use typed_mcp_client::{Client, Spoken};

use crate::connect::{EraArg, Settings};
use crate::error::{CliError, ClientError};
use crate::lock::{Lock, LockError, diff};
use crate::mcp::ListKind;
use crate::target::Target;

const AFTER_HELP: &str = "\
The server comes last, after `--`: a Streamable HTTP URL, or a command that
serves MCP over stdio (it is started, and stopped when done):

  typed-mcp discover -- http://127.0.0.1:8000/mcp
  typed-mcp list tools -- cargo run -q --example quickstart
  typed-mcp call add a=2 b=3 -- http://127.0.0.1:8000/mcp
  typed-mcp read quickstart://greeting/Ada -- ./target/debug/examples/quickstart
  typed-mcp lock --check -- ./target/debug/my-server
  typed-mcp --era legacy list -- python server.py

Eras: by default (--era auto) the client asks server/discover (2026-07-28) and,
when the server shows it does not speak it (a JSON-RPC error such as -32601 or
-32602, -32022 listing a dated version, or HTTP 400/404/405 without an
answer), opens a legacy session: initialize offering 2025-11-25 (2025-06-18
and 2025-03-26 accepted), then requests without the _meta envelope; over HTTP
with the session's Mcp-Session-Id, ended by a DELETE. The legacy era is named
on stderr, and `discover` names either. `mcp.lock` is the same in both eras.

Exit status: 0 success; 1 the server answered with an error, or `lock --check`
found changes; 2 no answer (bad usage, server not found or unreachable, output
that is not MCP, timeout, unusable lock file).";

#[derive(Debug, Parser)]
#[command(
    name = "typed-mcp",
    version,
    about = "Talk to MCP servers of either era (2026-07-28, or 2025-11-25 and older through initialize) over stdio or Streamable HTTP, and lock their declarations.",
    after_help = AFTER_HELP
)]
struct Cli {
    /// Print results as JSON, as the server sent them (lists: every page's items).
    #[arg(long, global = true)]
    json: bool,
    /// Seconds to wait for each answer.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 30.0)]
    timeout: f64,
    /// Ask for progress notifications and print them to stderr (over HTTP the
    /// answer then comes as an event stream).
    #[arg(long, global = true)]
    progress: bool,
    /// Which protocol era to speak: `auto` asks `server/discover` (2026-07-28)
    /// and falls back to `initialize` (2025-11-25, or the server's counter-offer
    /// 2025-06-18 or 2025-03-26) when the server shows it does not speak
    /// 2026-07-28; `modern` and `legacy` speak only that era.
    #[arg(long, global = true, value_enum, default_value_t = EraArg::Auto)]
    era: EraArg,
    /// Ask for log messages at this level and above, printed to stderr.
    #[arg(long, global = true, value_name = "LEVEL", value_parser = [
        "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
    ])]
    log_level: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Args)]
struct Server {
    /// The server: an http:// URL, or a command and its arguments (stdio).
    #[arg(last = true, required = true, value_name = "SERVER")]
    server: Vec<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show what the server is: name, version, the protocol era and versions it
    /// speaks, capabilities (with --json: the `server/discover` result, or in
    /// the legacy era the `initialize` result).
    Discover {
        #[command(flatten)]
        server: Server,
    },
    /// List tools (the default), prompts, resources or resource templates.
    List {
        /// What to list.
        #[arg(value_enum, default_value_t = ListKind::Tools)]
        kind: ListKind,
        #[command(flatten)]
        server: Server,
    },
    /// Call a tool: `call NAME key=value...` or `call NAME --args '{...}'`.
    Call {
        /// The tool's name.
        name: String,
        /// The arguments as one JSON object (key=value words override its members).
        #[arg(long, value_name = "JSON")]
        args: Option<String>,
        /// Arguments as key=value; a value is JSON (n=3, on=true, tags=["a"]) unless
        /// the tool's schema says the argument is a string.
        #[arg(value_name = "KEY=VALUE")]
        pairs: Vec<String>,
        #[command(flatten)]
        server: Server,
    },
    /// Read a resource.
    Read {
        /// The resource's URI.
        uri: String,
        #[command(flatten)]
        server: Server,
    },
    /// Get a prompt: `prompt NAME key=value...` (every value is a string).
    Prompt {
        /// The prompt's name.
        name: String,
        /// Arguments as key=value.
        #[arg(value_name = "KEY=VALUE")]
        pairs: Vec<String>,
        #[command(flatten)]
        server: Server,
    },
    /// Write the lock file of the server's tools, prompts and resources, or
    /// with --check compare the served catalog with it.
    Lock {
        /// Compare instead of writing: exit 1 and show each change when they differ.
        #[arg(long)]
        check: bool,
        /// The lock file.
        #[arg(long, value_name = "PATH", default_value = "mcp.lock")]
        lock: PathBuf,
        #[command(flatten)]
        server: Server,
    },
    /// Serve these commands over stdio as an MCP server (for AI agents).
    Mcp,
}

/// How a command ended, beyond success.
enum Outcome {
    Success,
    /// The server answered with an error, or the lock differs.
    Refused,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("typed-mcp: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    if let Command::Mcp = cli.command {
        return match runtime.block_on(mcp::serve()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("typed-mcp mcp: {e}");
                ExitCode::from(2)
            }
        };
    }
    let outcome = runtime.block_on(run(cli));
    let code = match &outcome {
        Ok(Outcome::Success) => return ExitCode::SUCCESS,
        Ok(Outcome::Refused) => return ExitCode::from(1),
        Err(CliError::Client(e)) if e.is_answer() => 1,
        Err(_) => 2,
    };
    if let Err(e) = &outcome {
        eprintln!("typed-mcp: {e}");
    }
    ExitCode::from(code)
}

fn timeout(seconds: f64) -> Result<Duration, ClientError> {
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            ClientError::Usage(format!(
                "--timeout {seconds}: expected a positive number of seconds"
            ))
        })
}

fn print_json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    );
}

async fn run(cli: Cli) -> Result<Outcome, CliError> {
    let timeout = timeout(cli.timeout)?;
    let json = cli.json;
    let connect = Settings {
        timeout,
        era: cli.era,
        progress: cli.progress,
        log_level: cli.log_level,
    };
    match cli.command {
        Command::Discover { server } => {
            with_client(&server, &connect, async |client| {
                let result = client.discover().await?;
                if json {
                    print_json(&result);
                } else {
                    print!("{}", show::greeting(&client.spoken(), &result));
                }
                Ok(Outcome::Success)
            })
            .await
        }
        Command::List { kind, server } => {
            with_client(&server, &connect, async |client| {
                let (method, field) = kind.method();
                let items = client.list_all(method, field).await?;
                if json {
                    print_json(&json!({ field: items }));
                } else {
                    print!("{}", kind.show(&items));
                }
                Ok(Outcome::Success)
            })
            .await
        }
        Command::Call {
            name,
            args,
            pairs,
            server,
        } => {
            with_client(&server, &connect, async |client| {
                // The schema tells which key=value words are strings; looking
                // the tool up also names the tools there are when it is absent.
                let tool = client.tool(&name).await?;
                let arguments =
                    args::tool_arguments(args.as_deref(), &pairs, tool.get("inputSchema"))?;
                let result = client.call_tool(&name, arguments).await?;
                emit(json, &result, show::call);
                Ok(if connect::is_error(&result) {
                    Outcome::Refused
                } else {
                    Outcome::Success
                })
            })
            .await
        }
        Command::Read { uri, server } => {
            with_client(&server, &connect, async |client| {
                let result = client.read_resource(&uri).await?;
                emit(json, &result, show::read);
                Ok(Outcome::Success)
            })
            .await
        }
        Command::Prompt {
            name,
            pairs,
            server,
        } => {
            let arguments = args::prompt_arguments(&pairs)?;
            with_client(&server, &connect, async |client| {
                let result = client.get_prompt(&name, arguments).await?;
                emit(json, &result, show::prompt);
                Ok(Outcome::Success)
            })
            .await
        }
        Command::Lock {
            check,
            lock,
            server,
        } => run_lock(check, &lock, &server, &connect, json).await,
        Command::Mcp => unreachable!("served before the runtime runs commands"),
    }
}

fn emit(json: bool, result: &Value, readable: fn(&Value) -> String) {
    if json {
        print_json(result);
    } else {
        print!("{}", readable(result));
    }
}

async fn with_client<T>(
    server: &Server,
    settings: &Settings,
    work: impl AsyncFnOnce(&Client) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let target = Target::parse(&server.server)?;
    let client = connect::connect(&target, settings).await?;
    // 2026-07-28 is the expected era; the other is named on stderr (stdout is
    // the answer's), and `discover` names either.
    if let Spoken::Legacy(session) = client.spoken() {
        eprintln!("typed-mcp: era: {}", connect::describe(&session));
    }
    let result = match work(&client).await {
        Err(CliError::Client(e)) => Err(CliError::Client(client.explain(e).await)),
        other => other,
    };
    if let Err(e) = client.close().await {
        eprintln!("typed-mcp: {e}");
    }
    result
}

async fn run_lock(
    check: bool,
    path: &Path,
    server: &Server,
    connect: &Settings,
    json: bool,
) -> Result<Outcome, CliError> {
    // A check needs the lock: refuse before starting the server.
    let locked = if check {
        Some(Lock::read(path)?)
    } else {
        match Lock::read(path) {
            Ok(lock) => Some(lock),
            // Rewriting a missing or broken lock is what `lock` is for.
            Err(LockError::Missing { .. } | LockError::Invalid { .. }) => None,
            Err(e) => return Err(e.into()),
        }
    };
    let catalog = with_client(server, connect, async |client| Ok(client.catalog().await?)).await?;
    let served = Lock::of(&catalog)?;
    let changes = locked
        .as_ref()
        .map(|locked| diff(locked, &served))
        .unwrap_or_default();
    if check {
        if json {
            print_json(&json!({
                "lock": path.display().to_string(),
                "upToDate": changes.is_empty(),
                "changes": changes,
            }));
        } else {
            // Differences too go to stdout: they are the command's output.
            print!("{}", lock::report(path, &changes));
        }
        return Ok(if changes.is_empty() {
            Outcome::Success
        } else {
            Outcome::Refused
        });
    }
    let unchanged = locked.as_ref() == Some(&served)
        && std::fs::read_to_string(path).is_ok_and(|text| text == served.to_toml());
    if !unchanged {
        served.write(path)?;
    }
    if json {
        print_json(&json!({
            "lock": path.display().to_string(),
            "written": !unchanged,
            "changes": changes,
        }));
    } else if unchanged {
        println!("{} is up to date ({})", path.display(), served.summary());
    } else {
        println!("wrote {} ({})", path.display(), served.summary());
        for change in &changes {
            println!("  {}", change.to_string().replace('\n', "\n  "));
        }
    }
    Ok(Outcome::Success)
}
