//! `stdio-fixture`: an MCP server over stdio, for typed-mcp's transport tests
//! only (see the crate documentation). Its tools are built to probe the
//! transport, not to be useful:
//!
//! - `echo {text}` returns the text;
//! - `slow {ms}` sleeps asynchronously and records how many `slow` handlers
//!   run at once; `max_seen` returns the largest such number observed;
//! - `panic_now` panics, and so does the blocking handler `panic_blocking`;
//! - `print_stdout` writes to fd 1 with `println!`, with `libc::write` and from
//!   a child process, then returns `"printed"`;
//! - `sleep_forever` sleeps for an hour holding a guard that writes
//!   `DROP-GUARD slow call dropped id=<id>` to stderr when the call is dropped;
//! - `spin_until_cancelled` is a blocking handler that polls
//!   `ToolContext::is_cancelled`, reports it on stderr and then returns a
//!   result, which the server must not send;
//! - `block_ms {ms}` is a blocking handler that sleeps its thread and records
//!   how many `block_ms` threads run at once; `block_max_seen` returns the
//!   largest such number observed;
//! - `panic_with_secret` panics with a message holding the first `--secret`
//!   value, and so does the blocking handler `panic_with_secret_blocking`;
//! - `progress_flood {count, pad}` sends `count` progress notifications
//!   (progress 1, 2, …, each with a message of `pad` bytes) and answers
//!   `"sent N"`, N being how many the server queued;
//! - `hang` never completes and never looks at its cancellation (only
//!   dropping its future ends it); it writes `HANG started id=<id>` to stderr;
//! - `busy` waits until its call is cancelled, writing `BUSY started id=<id>`
//!   to stderr when it starts.
//!
//! Flags: `--max-concurrent N`, `--max-message-bytes N`, `--max-depth N`,
//! `--receipts PATH` (receipts appended to a JSON Lines file),
//! `--max-pending N`, `--max-pending-bytes N`, `--queue-timeout-ms N`,
//! `--drain-timeout-ms N`, `--timeout-ms N` (the server's default timeout),
//! `--secret VALUE` (a registered secret value; may be given several times).

use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use typed_mcp::transport::Shutdown;
use typed_mcp::wire::CallToolResult;
use typed_mcp::{Server, ServerBuilder, ToolError, declare::ToolDecl, wire::RequestId};

/// `slow` handlers running right now.
static SLOW_RUNNING: AtomicUsize = AtomicUsize::new(0);
/// The most `slow` handlers seen running at once.
static SLOW_MAX_SEEN: AtomicUsize = AtomicUsize::new(0);

/// `block_ms` threads running right now.
static BLOCK_RUNNING: AtomicUsize = AtomicUsize::new(0);
/// The most `block_ms` threads seen running at once.
static BLOCK_MAX_SEEN: AtomicUsize = AtomicUsize::new(0);

/// The first `--secret` value, which `panic_with_secret` puts in its message.
static SECRET: OnceLock<String> = OnceLock::new();

/// The text `print_stdout` writes with `libc::write(1, ..)`.
const LIBC_TEXT: &[u8] = b"hi from libc write\n";

fn echo() -> ToolDecl {
    ToolDecl::builder("echo")
        .description("Return the given text unchanged.")
        .input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to return."}},
            "required": ["text"],
            "additionalProperties": false
        }))
        .handler(|mut args, _ctx| async move {
            match args.remove("text") {
                Some(Value::String(text)) => Ok(CallToolResult::text(text)),
                _ => Err(ToolError::execution("- text: expected a string")),
            }
        })
}

/// Counts a running `slow` handler; un-counts it when dropped, so a cancelled
/// call is un-counted too.
struct SlowGauge;

impl SlowGauge {
    fn enter() -> SlowGauge {
        let now = SLOW_RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
        SLOW_MAX_SEEN.fetch_max(now, Ordering::SeqCst);
        SlowGauge
    }
}

impl Drop for SlowGauge {
    fn drop(&mut self) {
        SLOW_RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

fn slow() -> ToolDecl {
    ToolDecl::builder("slow")
        .description("Sleep for `ms` milliseconds (asynchronously), then answer \"slept\".")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "ms": {"type": "integer", "minimum": 0, "description": "How long to sleep, in milliseconds."}
            },
            "required": ["ms"],
            "additionalProperties": false
        }))
        .handler(|args, _ctx| async move {
            let ms = args
                .get("ms")
                .and_then(Value::as_u64)
                .ok_or_else(|| ToolError::execution("- ms: expected a non-negative integer"))?;
            let _gauge = SlowGauge::enter();
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(CallToolResult::text("slept"))
        })
}

fn max_seen() -> ToolDecl {
    ToolDecl::builder("max_seen")
        .description("The most `slow` handlers observed running at once, as decimal text.")
        .handler(|_args, _ctx| async move {
            Ok(CallToolResult::text(
                SLOW_MAX_SEEN.load(Ordering::SeqCst).to_string(),
            ))
        })
}

fn panic_now() -> ToolDecl {
    ToolDecl::builder("panic_now")
        .description("Panic inside the handler.")
        .handler(|_args, _ctx| async move { boom() })
}

fn panic_blocking() -> ToolDecl {
    ToolDecl::builder("panic_blocking")
        .description("Panic inside a blocking handler.")
        .handler(|_args, _ctx| typed_mcp::blocking(boom))
}

fn boom() -> Result<CallToolResult, typed_mcp::ToolError> {
    panic!("fixture panic: panic_now was called")
}

fn print_stdout() -> ToolDecl {
    ToolDecl::builder("print_stdout")
        .description("Write to file descriptor 1 three ways, then answer \"printed\".")
        .handler(|_args, _ctx| {
            typed_mcp::blocking(move || {
                println!("hi from println");
                // SAFETY: `LIBC_TEXT` is a valid, initialised buffer of exactly the
                // length passed, alive for the whole call; writing to fd 1 touches no
                // Rust-owned memory, and a failed write just returns -1.
                let written = unsafe { libc::write(1, LIBC_TEXT.as_ptr().cast(), LIBC_TEXT.len()) };
                if written != LIBC_TEXT.len() as isize {
                    return Err(ToolError::execution(format!(
                        "libc::write(1) wrote {written} bytes"
                    )));
                }
                let status = std::process::Command::new("sh")
                    .args(["-c", "echo hi from child"])
                    .status()
                    .map_err(|e| ToolError::execution(format!("could not run sh: {e}")))?;
                if !status.success() {
                    return Err(ToolError::execution(format!("sh failed: {status}")));
                }
                Ok(CallToolResult::text("printed"))
            })
        })
}

/// Writes the drop marker to stderr when the `sleep_forever` call is dropped.
struct DropGuard(RequestId);

impl Drop for DropGuard {
    fn drop(&mut self) {
        eprintln!("DROP-GUARD slow call dropped id={}", self.0);
    }
}

fn sleep_forever() -> ToolDecl {
    ToolDecl::builder("sleep_forever")
        .description("Sleep for an hour; cancel it.")
        .handler(|_args, ctx| async move {
            let _guard = DropGuard(ctx.request_id().clone());
            eprintln!("SLEEP-FOREVER started id={}", ctx.request_id());
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(CallToolResult::text("woke up after an hour"))
        })
}

fn spin_until_cancelled() -> ToolDecl {
    ToolDecl::builder("spin_until_cancelled")
        .description("A blocking handler that polls for cancellation every 5 ms.")
        .handler(|_args, ctx| {
            typed_mcp::blocking(move || {
                let id = ctx.request_id().clone();
                eprintln!("SPIN started id={id}");
                let deadline = std::time::Instant::now() + Duration::from_secs(3600);
                while !ctx.is_cancelled() {
                    if std::time::Instant::now() > deadline {
                        return Ok(CallToolResult::text("never cancelled"));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                eprintln!("SPIN saw cancellation id={id}");
                Ok(CallToolResult::text("cancelled, answering anyway"))
            })
        })
}

/// Counts a running `block_ms` thread until dropped.
struct BlockGauge;

impl BlockGauge {
    fn enter() -> BlockGauge {
        let now = BLOCK_RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
        BLOCK_MAX_SEEN.fetch_max(now, Ordering::SeqCst);
        BlockGauge
    }
}

impl Drop for BlockGauge {
    fn drop(&mut self) {
        BLOCK_RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

fn block_ms() -> ToolDecl {
    ToolDecl::builder("block_ms")
        .description("Sleep the handler's thread for `ms` milliseconds, then answer \"blocked\".")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "ms": {"type": "integer", "minimum": 0, "description": "How long to block, in milliseconds."}
            },
            "required": ["ms"],
            "additionalProperties": false
        }))
        .handler(|args, _ctx| typed_mcp::blocking(move || {
            let ms = args
                .get("ms")
                .and_then(Value::as_u64)
                .ok_or_else(|| ToolError::execution("- ms: expected a non-negative integer"))?;
            let _gauge = BlockGauge::enter();
            std::thread::sleep(Duration::from_millis(ms));
            Ok(CallToolResult::text("blocked"))
        }))
}

fn block_max_seen() -> ToolDecl {
    ToolDecl::builder("block_max_seen")
        .description("The most `block_ms` threads observed running at once, as decimal text.")
        .handler(|_args, _ctx| async move {
            Ok(CallToolResult::text(
                BLOCK_MAX_SEEN.load(Ordering::SeqCst).to_string(),
            ))
        })
}

fn panic_with_secret() -> ToolDecl {
    ToolDecl::builder("panic_with_secret")
        .description("Panic with a message holding the --secret value.")
        .handler(|_args, _ctx| async move { leak_secret() })
}

fn panic_with_secret_blocking() -> ToolDecl {
    ToolDecl::builder("panic_with_secret_blocking")
        .description("Panic in a blocking handler with a message holding the --secret value.")
        .handler(|_args, _ctx| typed_mcp::blocking(leak_secret))
}

fn leak_secret() -> Result<CallToolResult, typed_mcp::ToolError> {
    let secret = SECRET.get().map_or("<no --secret given>", String::as_str);
    panic!("fixture panic: the API key is {secret}, do not print it")
}

fn progress_flood() -> ToolDecl {
    ToolDecl::builder("progress_flood")
        .description("Send `count` progress notifications, then answer \"sent N\".")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 0, "description": "How many notifications to send."},
                "pad": {"type": "integer", "minimum": 0, "description": "Bytes of message text in each notification."}
            },
            "required": ["count"],
            "additionalProperties": false
        }))
        .handler(|args, ctx| async move {
            let count = args
                .get("count")
                .and_then(Value::as_u64)
                .ok_or_else(|| ToolError::execution("- count: expected a non-negative integer"))?;
            let pad = args.get("pad").and_then(Value::as_u64).unwrap_or(0);
            let message = "p".repeat(pad as usize);
            let mut sent = 0u64;
            for i in 1..=count {
                let message = (pad > 0).then_some(message.as_str());
                if ctx.progress(i as f64, Some(count as f64), message).await {
                    sent += 1;
                }
            }
            Ok(CallToolResult::text(format!("sent {sent}")))
        })
}

fn hang() -> ToolDecl {
    ToolDecl::builder("hang")
        .description("Never complete.")
        .handler(|_args, ctx| async move {
            eprintln!("HANG started id={}", ctx.request_id());
            std::future::pending::<()>().await;
            Ok(CallToolResult::text("the pending future completed"))
        })
}

fn busy() -> ToolDecl {
    ToolDecl::builder("busy")
        .description("Hold a handler slot until the call is cancelled.")
        .handler(|_args, ctx| async move {
            eprintln!("BUSY started id={}", ctx.request_id());
            ctx.cancelled().await;
            Ok(CallToolResult::text("cancelled, answering anyway"))
        })
}

fn child_stdin_kind() -> ToolDecl {
    ToolDecl::builder("child_stdin_kind")
        .description("Run a child with inherited stdin; answer \"pipe\" if it could read the protocol pipe, else what it got.")
        .handler(|_args, _ctx| typed_mcp::blocking(move || {
            let output = std::process::Command::new("sh")
                .args(["-c", "if [ -p /dev/stdin ]; then echo pipe; elif [ -c /dev/stdin ]; then echo char-device; else echo other; fi"])
                // `output()` would give the child /dev/null; inherit like `status()`.
                .stdin(std::process::Stdio::inherit())
                .stderr(std::process::Stdio::inherit())
                .output()
                .map_err(|e| ToolError::execution(format!("could not run sh: {e}")))?;
            Ok(CallToolResult::text(String::from_utf8_lossy(&output.stdout).trim()))
        }))
}

const USAGE: &str = "usage: stdio-fixture [--max-concurrent N] [--max-message-bytes N] [--max-depth N] \
[--receipts PATH] [--max-pending N] [--max-pending-bytes N] [--queue-timeout-ms N] \
[--drain-timeout-ms N] [--timeout-ms N] [--secret VALUE]... [--stop-on-terminate]";

fn configure(mut builder: ServerBuilder) -> Result<ServerBuilder, String> {
    let mut args = std::env::args().skip(1);
    let mut secrets = Vec::new();
    while let Some(flag) = args.next() {
        let mut number = || -> Result<usize, String> {
            let value = args
                .next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
            value
                .parse()
                .map_err(|e| format!("{flag} {value}: {e}\n{USAGE}"))
        };
        if flag == "--receipts" {
            let path = args
                .next()
                .ok_or_else(|| format!("{flag} needs a path\n{USAGE}"))?;
            let sink = typed_mcp::receipt::JsonLinesSink::create(&path)
                .map_err(|e| format!("cannot open {path}: {e}"))?;
            builder = builder.receipt_sink(sink);
            continue;
        }
        // Read by `main`.
        if flag == "--stop-on-terminate" {
            continue;
        }
        if flag == "--secret" {
            let value = args
                .next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
            secrets.push(value);
            continue;
        }
        let ms = |n: usize| Duration::from_millis(n as u64);
        builder = match flag.as_str() {
            "--max-concurrent" => builder.max_concurrent(number()?),
            "--max-message-bytes" => builder.max_message_bytes(number()?),
            "--max-depth" => builder.max_depth(number()?),
            "--max-pending" => builder.max_pending(number()?),
            "--max-pending-bytes" => builder.max_pending_bytes(number()?),
            "--queue-timeout-ms" => builder.queue_timeout(ms(number()?)),
            "--drain-timeout-ms" => builder.drain_timeout(ms(number()?)),
            "--timeout-ms" => builder.default_timeout(ms(number()?)),
            _ => return Err(format!("unknown argument {flag:?}\n{USAGE}")),
        };
    }
    if let Some(first) = secrets.first() {
        // Only the first one is needed by `panic_with_secret`.
        let _ = SECRET.set(first.clone());
        builder = builder.secret_values(&secrets);
    }
    Ok(builder)
}

#[tokio::main]
async fn main() -> ExitCode {
    let builder = Server::new("typed-mcp-stdio-fixture", env!("CARGO_PKG_VERSION")).tools([
        echo(),
        slow(),
        max_seen(),
        panic_now(),
        panic_blocking(),
        print_stdout(),
        sleep_forever(),
        spin_until_cancelled(),
        child_stdin_kind(),
        block_ms(),
        block_max_seen(),
        panic_with_secret(),
        panic_with_secret_blocking(),
        progress_flood(),
        hang(),
        busy(),
    ]);
    // The whole chain: a refused secret value says why only in its source.
    let chain = |e: typed_mcp::BuildError| {
        let mut text = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            text.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        text
    };
    let server = match configure(builder).map(|b| b.build().map_err(chain)) {
        Ok(Ok(server)) => server,
        Ok(Err(e)) | Err(e) => {
            eprintln!("stdio-fixture: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!("stdio-fixture: serving on stdin/stdout");
    let served = if std::env::args().any(|arg| arg == "--stop-on-terminate") {
        match Shutdown::on_terminate() {
            Ok(shutdown) => server.serve_stdio_until(shutdown).await,
            Err(e) => Err(e),
        }
    } else {
        server.serve_stdio().await
    };
    match served {
        Ok(()) => {
            eprintln!("stdio-fixture: end of input, exiting");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("stdio-fixture: {e}");
            ExitCode::FAILURE
        }
    }
}
