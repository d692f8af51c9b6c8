//! The stdio transport, tested on the wire: each test runs the `stdio-fixture`
//! binary as a real subprocess with piped stdin, stdout and stderr, writes raw
//! bytes to its stdin and checks every line it writes to stdout.
//!
//! Nothing here blocks without a deadline: writes go through a writer thread,
//! stdout is read by a thread (at a [`Pace`] a test may slow down to play a
//! slow client), the test's reads wait at most [`TIMEOUT`], and a fixture
//! still running when its test ends is killed, so a broken server fails a
//! test instead of hanging it.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use typed_mcp_fixtures::{cancel_line, tool_call, tool_call_line};

/// How long any one wait may take before the test fails.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The default `max_message_bytes` (4 MiB).
const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// A running `stdio-fixture` process.
struct Fixture {
    child: Child,
    /// Bytes for the writer thread; dropping it closes the child's stdin.
    stdin: Option<Sender<Vec<u8>>>,
    /// Every stdout line, without its `\n`; disconnected at end of stdout.
    stdout: Receiver<String>,
    /// Everything written to stderr so far.
    stderr: Arc<Mutex<String>>,
    /// Disconnected once stderr reached end of file.
    stderr_done: Receiver<()>,
}

/// What a fixture left behind once its stdin was closed and it exited.
struct Finished {
    /// The stdout lines read by `finish` (not those read before it).
    lines: Vec<String>,
    /// Those lines, each checked to be a JSON-RPC 2.0 object.
    messages: Vec<Value>,
    status: ExitStatus,
    stderr: String,
}

/// How a fixture's stdout is read: a slow reader is simulated by starting
/// late and reading small chunks with pauses (pacing, not synchronisation).
#[derive(Clone, Copy)]
struct Pace {
    /// How long nothing is read after the start.
    start_after: Duration,
    /// The most bytes one read takes.
    chunk: usize,
    /// The pause before each read.
    pause: Duration,
}

impl Pace {
    /// As fast as the pipe allows.
    const EAGER: Pace = Pace {
        start_after: Duration::ZERO,
        chunk: 64 * 1024,
        pause: Duration::ZERO,
    };
}

/// Reads at most `chunk` bytes at a time, sleeping `pause` before each read.
struct SlowReader<R> {
    inner: R,
    chunk: usize,
    pause: Duration,
}

impl<R: Read> Read for SlowReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.pause.is_zero() {
            thread::sleep(self.pause);
        }
        let n = buf.len().min(self.chunk);
        self.inner.read(&mut buf[..n])
    }
}

impl Fixture {
    fn spawn(args: &[&str]) -> Fixture {
        Fixture::spawn_paced(args, Pace::EAGER)
    }

    /// Like [`spawn`](Self::spawn), with stdout read at this pace.
    fn spawn_paced(args: &[&str], pace: Pace) -> Fixture {
        let mut child = Command::new(env!("CARGO_BIN_EXE_stdio-fixture"))
            .args(args)
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn stdio-fixture");

        let stdin = child.stdin.take().expect("piped stdin");
        let (stdin_tx, stdin_rx) = mpsc::channel::<Vec<u8>>();
        thread::spawn(move || write_loop(stdin, stdin_rx));

        let stdout = child.stdout.take().expect("piped stdout");
        let (stdout_tx, stdout_rx) = mpsc::channel();
        thread::spawn(move || {
            thread::sleep(pace.start_after);
            let slow = SlowReader {
                inner: stdout,
                chunk: pace.chunk,
                pause: pace.pause,
            };
            let mut reader = BufReader::with_capacity(pace.chunk, slow);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if line.last() == Some(&b'\n') {
                            line.pop();
                        }
                        let line = String::from_utf8(line).unwrap_or_else(|e| {
                            format!("<not UTF-8: {:?}>", String::from_utf8_lossy(e.as_bytes()))
                        });
                        if stdout_tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });

        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (stderr_done_tx, stderr_done) = mpsc::channel::<()>();
        let sink = stderr.clone();
        thread::spawn(move || {
            let _done = stderr_done_tx;
            let mut buf = [0u8; 8192];
            loop {
                match stderr_pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => sink
                        .lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n])),
                }
            }
        });

        Fixture {
            child,
            stdin: Some(stdin_tx),
            stdout: stdout_rx,
            stderr,
            stderr_done,
        }
    }

    /// A handle that queues bytes for the child's stdin from another thread;
    /// stdin closes once it and [`close_stdin`](Self::close_stdin) are both done.
    fn stdin_sender(&self) -> Sender<Vec<u8>> {
        self.stdin.clone().expect("stdin is still open")
    }

    /// The child's peak resident set size so far (`VmHWM`), in KiB. Call it
    /// while the child is alive.
    #[track_caller]
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("read /proc/<pid>/status");
        let line = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .unwrap_or_else(|| panic!("no VmHWM in /proc/<pid>/status:\n{status}"));
        line.trim_start_matches("VmHWM:")
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    /// Queues bytes for the child's stdin, exactly as given.
    fn send(&self, bytes: impl Into<Vec<u8>>) {
        self.stdin
            .as_ref()
            .expect("stdin is still open")
            .send(bytes.into())
            .expect("the stdin writer thread is alive");
    }

    /// Closes the child's stdin once everything queued has been written.
    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The last part of stderr, for failure messages.
    fn stderr_tail(&self) -> String {
        let all = self.stderr();
        let start = all.char_indices().rev().nth(3000).map_or(0, |(i, _)| i);
        all[start..].to_owned()
    }

    /// The next stdout line; fails the test after [`TIMEOUT`] or at end of stdout.
    #[track_caller]
    fn next_line(&self) -> String {
        match self.stdout.recv_timeout(TIMEOUT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!(
                "no line on stdout within {TIMEOUT:?}; stderr:\n{}",
                self.stderr_tail()
            ),
            Err(RecvTimeoutError::Disconnected) => panic!(
                "stdout ended while a message was expected; stderr:\n{}",
                self.stderr_tail()
            ),
        }
    }

    /// The next stdout line, checked to be a JSON-RPC 2.0 object.
    #[track_caller]
    fn next_message(&self) -> Value {
        let line = self.next_line();
        protocol_message(&line)
    }

    /// Waits until stderr contains `needle`; false after [`TIMEOUT`].
    fn wait_stderr(&self, needle: &str) -> bool {
        let deadline = Instant::now() + TIMEOUT;
        while Instant::now() < deadline {
            if self.stderr().contains(needle) {
                return true;
            }
            thread::sleep(Duration::from_millis(10));
        }
        self.stderr().contains(needle)
    }

    /// Closes stdin, reads stdout to its end, waits for the process to exit
    /// and for stderr to end; each step within [`TIMEOUT`].
    #[track_caller]
    fn finish(&mut self) -> Finished {
        self.close_stdin();
        let deadline = Instant::now() + TIMEOUT;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(line) => lines.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "stdout did not end within {TIMEOUT:?} of closing stdin (read {lines:?}); stderr:\n{}",
                    self.stderr_tail()
                ),
            }
        }
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the process did not exit within {TIMEOUT:?} of closing stdin; stderr:\n{}",
                self.stderr_tail()
            );
            thread::sleep(Duration::from_millis(10));
        };
        let left = deadline.saturating_duration_since(Instant::now());
        assert_ne!(
            self.stderr_done.recv_timeout(left),
            Err(RecvTimeoutError::Timeout),
            "stderr did not end after the process exited"
        );
        let messages = lines.iter().map(|l| protocol_message(l)).collect();
        Finished {
            lines,
            messages,
            status,
            stderr: self.stderr(),
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn write_loop(mut stdin: ChildStdin, rx: Receiver<Vec<u8>>) {
    for bytes in rx {
        if stdin
            .write_all(&bytes)
            .and_then(|()| stdin.flush())
            .is_err()
        {
            return;
        }
    }
    // Dropping `stdin` here closes the pipe: the child reads end of file.
}

/// Parses one stdout line and checks it is a JSON-RPC 2.0 message object.
#[track_caller]
fn protocol_message(line: &str) -> Value {
    let value: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
    assert!(
        value.is_object(),
        "stdout line is not a JSON object: {line:?}"
    );
    assert_eq!(
        value["jsonrpc"], "2.0",
        "stdout line is not JSON-RPC 2.0: {line:?}"
    );
    value
}

/// Checks a successful `tools/call` response to `id` and returns its first
/// text content.
#[track_caller]
fn tool_text(message: &Value, id: impl Into<Value>) -> String {
    let id = id.into();
    assert_eq!(
        message["id"], id,
        "response to the wrong request: {message}"
    );
    assert!(
        message.get("error").is_none(),
        "expected a result: {message}"
    );
    let result = &message["result"];
    assert_ne!(result["isError"], true, "the tool failed: {message}");
    assert_eq!(result["content"][0]["type"], "text", "{message}");
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {message}"))
        .to_owned()
}

/// Checks a JSON-RPC error response and returns its error object.
#[track_caller]
fn rpc_error(message: &Value, code: i64, id: Option<Value>) -> Value {
    assert!(
        message.get("result").is_none(),
        "expected an error: {message}"
    );
    assert_eq!(
        message["error"]["code"], code,
        "wrong error code: {message}"
    );
    match id {
        Some(id) => assert_eq!(message["id"], id, "wrong id: {message}"),
        None => assert!(
            message.get("id").is_none_or(Value::is_null),
            "an error for an unreadable request must carry no id: {message}"
        ),
    }
    assert!(message["error"]["message"].is_string(), "{message}");
    message["error"].clone()
}

/// The length of an `echo` request line with a one-digit id and empty text.
fn empty_echo_len() -> usize {
    tool_call(1, "echo", json!({"text": ""})).to_string().len()
}

/// A `tools/call` line for `echo` padded so that, without its `\n`, it is
/// exactly `len` bytes long.
fn echo_line_of_len(id: i64, len: usize) -> String {
    let base = tool_call(id, "echo", json!({"text": ""})).to_string();
    assert!(
        len >= base.len(),
        "{len} is shorter than an empty echo request"
    );
    let line = tool_call(id, "echo", json!({"text": "x".repeat(len - base.len())})).to_string();
    assert_eq!(line.len(), len);
    line + "\n"
}

// ---------------------------------------------------------------------------
// 1. Oversized lines
// ---------------------------------------------------------------------------

#[test]
fn oversized_line_is_answered_in_order_and_the_server_keeps_serving() {
    let mut fx = Fixture::spawn(&[]);
    // A valid-looking request, 5 MiB long: over the 4 MiB default.
    let big = echo_line_of_len(1, 5 * 1024 * 1024);
    let big_len = big.len() - 1;
    fx.send(big);
    fx.send(tool_call_line(
        2,
        "echo",
        json!({"text": "after the big one"}),
    ));

    // Arrival order: the oversized line's answer first, then the next call's.
    let first = fx.next_message();
    let error = rpc_error(&first, -32600, None);
    let text = error["message"].as_str().unwrap();
    assert!(
        text.contains(&DEFAULT_MAX_MESSAGE_BYTES.to_string()),
        "the error names the limit: {text}"
    );
    assert!(
        text.contains(&big_len.to_string()),
        "the error names the line's length ({big_len}): {text}"
    );
    let second = fx.next_message();
    assert_eq!(tool_text(&second, 2), "after the big one");

    // Still serving.
    fx.send(tool_call_line(3, "echo", json!({"text": "still here"})));
    assert_eq!(tool_text(&fx.next_message(), 3), "still here");

    let done = fx.finish();
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

#[test]
fn max_message_bytes_flag_sets_the_limit_exactly() {
    let mut fx = Fixture::spawn(&["--max-message-bytes", "1000"]);
    // Exactly at the limit: served.
    fx.send(echo_line_of_len(1, 1000));
    let at_limit = fx.next_message();
    assert_eq!(tool_text(&at_limit, 1).len(), 1000 - empty_echo_len());
    // One byte over: refused, without an id, and the next line is served.
    fx.send(echo_line_of_len(2, 1001));
    fx.send(tool_call_line(3, "echo", json!({"text": "small"})));
    let error = rpc_error(&fx.next_message(), -32600, None);
    let text = error["message"].as_str().unwrap();
    assert!(text.contains("1001") && text.contains("1000"), "{text}");
    assert_eq!(tool_text(&fx.next_message(), 3), "small");

    let done = fx.finish();
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

// ---------------------------------------------------------------------------
// 2. Deep nesting
// ---------------------------------------------------------------------------

#[test]
fn hundred_thousand_brackets_are_a_parse_error_then_serving_continues() {
    let mut fx = Fixture::spawn(&[]);
    let mut deep = "[".repeat(100_000);
    deep.push('\n');
    fx.send(deep);
    fx.send(tool_call_line(1, "echo", json!({"text": "shallow"})));

    let error = rpc_error(&fx.next_message(), -32700, None);
    let text = error["message"].as_str().unwrap();
    assert!(text.contains("depth"), "the error says why: {text}");
    assert_eq!(tool_text(&fx.next_message(), 1), "shallow");

    let done = fx.finish();
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

// ---------------------------------------------------------------------------
// 3. The fd-1 redirect
// ---------------------------------------------------------------------------

#[test]
fn writes_to_fd1_go_to_stderr_and_stdout_stays_pure_protocol() {
    let mut fx = Fixture::spawn(&[]);
    fx.send(tool_call_line(1, "print_stdout", json!({})));
    // `next_message` fails on the first stdout line that is not a JSON-RPC
    // object, so a stray "hi from println" ahead of the result fails here.
    let response = fx.next_message();
    assert_eq!(tool_text(&response, 1), "printed");
    fx.send(tool_call_line(2, "echo", json!({"text": "after printing"})));
    assert_eq!(tool_text(&fx.next_message(), 2), "after printing");

    let done = fx.finish();
    // Every other stdout line (none expected) is protocol too: checked by
    // `finish`; and no stray text was written after the responses.
    assert!(
        done.messages.is_empty(),
        "unexpected stdout lines: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
    for text in ["hi from println", "hi from libc write", "hi from child"] {
        assert!(
            done.stderr.lines().any(|l| l == text),
            "stderr lacks the line {text:?}:\n{}",
            done.stderr
        );
    }
}

#[test]
fn a_child_process_cannot_read_the_protocol_input() {
    let mut fx = Fixture::spawn(&[]);
    // The test pipes the fixture's stdin; a child the handler starts must not
    // inherit that pipe (it could swallow requests), but /dev/null instead.
    fx.send(tool_call_line(1, "child_stdin_kind", json!({})));
    assert_eq!(tool_text(&fx.next_message(), 1), "char-device");
    fx.send(tool_call_line(2, "echo", json!({"text": "still serving"})));
    assert_eq!(tool_text(&fx.next_message(), 2), "still serving");
    let done = fx.finish();
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

// ---------------------------------------------------------------------------
// 4. The concurrency limit
// ---------------------------------------------------------------------------

/// Sends `calls` `slow` calls in one write, checks that each is answered
/// exactly once, and returns `max_seen` and how long the answers took.
fn run_slow_calls(fx: &Fixture, calls: i64, ms: u64) -> (usize, Duration) {
    let batch: String = (1..=calls)
        .map(|id| tool_call_line(id, "slow", json!({"ms": ms})))
        .collect();
    let started = Instant::now();
    fx.send(batch);
    let mut answered = BTreeSet::new();
    for _ in 0..calls {
        let message = fx.next_message();
        let id = message["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("a response without an integer id: {message}"));
        assert_eq!(tool_text(&message, id), "slept");
        assert!(answered.insert(id), "request {id} was answered twice");
    }
    let elapsed = started.elapsed();
    assert_eq!(answered, (1..=calls).collect::<BTreeSet<_>>());

    fx.send(tool_call_line(1000, "max_seen", json!({})));
    let text = tool_text(&fx.next_message(), 1000);
    let max_seen = text
        .parse()
        .unwrap_or_else(|e| panic!("max_seen answered {text:?}: {e}"));
    (max_seen, elapsed)
}

#[test]
fn max_concurrent_bounds_handlers_running_at_once() {
    let mut fx = Fixture::spawn(&["--max-concurrent", "4"]);
    let (max_seen, elapsed) = run_slow_calls(&fx, 64, 50);
    assert!(
        max_seen <= 4,
        "{max_seen} slow handlers ran at once, limit 4"
    );
    assert!(
        max_seen > 1,
        "the slow calls never overlapped (max {max_seen})"
    );
    // 64 calls of 50 ms, at most 4 at a time: at least 16 rounds of 50 ms.
    assert!(
        elapsed >= Duration::from_millis(16 * 50),
        "64 calls of 50 ms finished in {elapsed:?} with 4 slots"
    );

    let done = fx.finish();
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

/// The control for the test above: the `max_seen` gauge does see more than
/// four handlers when the limit allows it, so `<= 4` there is not vacuous.
#[test]
fn without_a_tight_limit_slow_calls_overlap_beyond_four() {
    let mut fx = Fixture::spawn(&["--max-concurrent", "64"]);
    let (max_seen, _) = run_slow_calls(&fx, 64, 300);
    assert!(max_seen > 4, "only {max_seen} of 64 slow calls overlapped");
    assert!(max_seen <= 64, "the gauge over-counts: {max_seen}");

    let done = fx.finish();
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

// ---------------------------------------------------------------------------
// 5. Panics
// ---------------------------------------------------------------------------

#[test]
fn a_panicking_handler_is_an_internal_error_and_serving_continues() {
    let mut fx = Fixture::spawn(&[]);
    fx.send(tool_call_line(1, "panic_now", json!({})));
    let response = fx.next_message();
    let error = rpc_error(&response, -32603, Some(json!(1)));
    // The panic message is for the server's log, not for the client.
    assert!(
        !error["message"]
            .as_str()
            .unwrap()
            .contains("panic_now was called"),
        "the panic payload leaked to the client: {response}"
    );

    fx.send(tool_call_line(2, "echo", json!({"text": "alive"})));
    assert_eq!(tool_text(&fx.next_message(), 2), "alive");

    // The same for a blocking handler, which panics on tokio's blocking pool.
    fx.send(tool_call_line(3, "panic_blocking", json!({})));
    let response = fx.next_message();
    let error = rpc_error(&response, -32603, Some(json!(3)));
    assert!(
        !error["message"]
            .as_str()
            .unwrap()
            .contains("panic_now was called"),
        "the panic payload leaked to the client: {response}"
    );
    fx.send(tool_call_line(4, "echo", json!({"text": "still alive"})));
    assert_eq!(tool_text(&fx.next_message(), 4), "still alive");

    let done = fx.finish();
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
    assert_eq!(
        done.stderr
            .matches("fixture panic: panic_now was called")
            .count(),
        2,
        "both panics are reported on stderr:\n{}",
        done.stderr
    );
}

// ---------------------------------------------------------------------------
// 6. End of input
// ---------------------------------------------------------------------------

#[test]
fn end_of_stdin_exits_with_status_zero() {
    let mut fx = Fixture::spawn(&[]);
    let done = fx.finish();
    assert!(done.lines.is_empty(), "unexpected stdout: {:?}", done.lines);
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

#[test]
fn end_of_stdin_waits_for_calls_in_flight_then_exits_zero() {
    let mut fx = Fixture::spawn(&[]);
    let started = Instant::now();
    fx.send(tool_call_line(1, "slow", json!({"ms": 500})));
    fx.close_stdin();
    let done = fx.finish();
    let elapsed = started.elapsed();

    assert_eq!(
        done.messages.len(),
        1,
        "expected one response: {:?}",
        done.lines
    );
    assert_eq!(tool_text(&done.messages[0], 1), "slept");
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
    assert!(
        elapsed >= Duration::from_millis(500),
        "exited after {elapsed:?}, before the 500 ms call could finish"
    );
}

/// A pipe is read and written on the runtime; anything else by the reader
/// and writer threads. Files for stdin and stdout take the threads: every
/// request is answered once (calls run at once, so in any order), and end of
/// file exits 0.
#[test]
fn files_for_stdin_and_stdout_are_served_and_end_of_file_exits_zero() {
    let dir = std::env::temp_dir().join(format!("typed-mcp-stdio-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let requests = dir.join("requests.jsonl");
    let answers = dir.join("answers.jsonl");
    let lines: String = (1..=300)
        .map(|id| tool_call_line(id, "echo", json!({"text": format!("line {id}")})))
        .collect();
    std::fs::write(&requests, lines).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_stdio-fixture"))
        .stdin(std::fs::File::open(&requests).unwrap())
        .stdout(std::fs::File::create(&answers).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn stdio-fixture");
    let status = wait_within(&mut child, TIMEOUT);
    let written = std::fs::read_to_string(&answers).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(status.code(), Some(0));
    let messages: Vec<Value> = written.lines().map(protocol_message).collect();
    assert_eq!(messages.len(), 300, "{written}");
    let ids: BTreeSet<i64> = messages
        .iter()
        .map(|message| {
            let id = message["id"].as_i64().expect("an integer id");
            assert_eq!(tool_text(message, id), format!("line {id}"));
            id
        })
        .collect();
    assert_eq!(ids, (1..=300).collect());
}

/// Clients built on Node launch servers with a Unix socket pair for stdin and
/// stdout (libuv's stdio "pipes"): one socket, both directions, served on the
/// runtime. Every request is answered once, and closing our end exits 0.
#[test]
fn a_unix_socket_for_stdin_and_stdout_is_served_and_closing_it_exits_zero() {
    use std::os::unix::net::UnixStream;
    let (ours, theirs) = UnixStream::pair().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_stdio-fixture"))
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(
            theirs.try_clone().unwrap(),
        )))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn stdio-fixture");
    ours.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut writer = ours.try_clone().unwrap();
    let sender = thread::spawn(move || {
        for id in 1..=300 {
            let line = tool_call_line(id, "echo", json!({"text": format!("line {id}")}));
            writer.write_all(line.as_bytes()).unwrap();
        }
        // Half-closed: end of input for the server, its answers still flow.
        writer.shutdown(std::net::Shutdown::Write).unwrap();
    });
    let mut ids = BTreeSet::new();
    for line in BufReader::new(&ours).lines() {
        let message = protocol_message(&line.expect("an answer within the timeout"));
        let id = message["id"].as_i64().expect("an integer id");
        assert_eq!(tool_text(&message, id), format!("line {id}"));
        assert!(ids.insert(id), "answered twice: {id}");
    }
    sender.join().unwrap();
    assert_eq!(ids, (1..=300).collect());
    assert_eq!(wait_within(&mut child, TIMEOUT).code(), Some(0));
}

/// A server stopped by its shutdown (here SIGTERM) exits although the client
/// keeps stdin open: the pipe's reader waits on the runtime, not in a
/// blocking read.
#[test]
fn sigterm_stops_a_server_whose_client_keeps_stdin_open() {
    let mut fx = Fixture::spawn(&["--stop-on-terminate"]);
    fx.send(tool_call_line(1, "echo", json!({"text": "before"})));
    assert_eq!(tool_text(&fx.next_message(), 1), "before");
    let signalled = Command::new("kill")
        .args(["-TERM", &fx.child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(signalled.success());
    let status = wait_within(&mut fx.child, TIMEOUT);
    assert_eq!(status.code(), Some(0), "stderr:\n{}", fx.stderr_tail());
}

/// The child's exit status; fails the test (killing the child) after `limit`.
fn wait_within(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait for stdio-fixture") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("stdio-fixture did not exit within {limit:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

// ---------------------------------------------------------------------------
// 7. Cancellation
// ---------------------------------------------------------------------------

#[test]
fn cancelled_call_is_dropped_and_never_answered() {
    let mut fx = Fixture::spawn(&[]);
    fx.send(tool_call_line(7, "sleep_forever", json!({})));
    // Cancel only once the handler runs, so there is a guard to drop.
    assert!(
        fx.wait_stderr("SLEEP-FOREVER started id=7"),
        "sleep_forever never started; stderr:\n{}",
        fx.stderr_tail()
    );
    assert!(
        !fx.stderr().contains("DROP-GUARD"),
        "dropped before the cancellation"
    );

    fx.send(cancel_line(7));
    assert!(
        fx.wait_stderr("DROP-GUARD slow call dropped id=7"),
        "the cancelled call's future was not dropped; stderr:\n{}",
        fx.stderr_tail()
    );

    // Still serving, and the first thing on stdout is the echo, not id 7.
    fx.send(tool_call_line(8, "echo", json!({"text": "after cancel"})));
    assert_eq!(tool_text(&fx.next_message(), 8), "after cancel");

    let done = fx.finish();
    assert!(
        done.messages.iter().all(|m| m.get("id") != Some(&json!(7))),
        "the cancelled request was answered: {:?}",
        done.lines
    );
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
    assert_eq!(
        done.stderr.matches("DROP-GUARD").count(),
        1,
        "the guard dropped once:\n{}",
        done.stderr
    );
}

// ---------------------------------------------------------------------------
// 8. Blank lines and CRLF
// ---------------------------------------------------------------------------

#[test]
fn blank_lines_and_crlf_requests_are_tolerated() {
    let mut fx = Fixture::spawn(&[]);
    fx.send("\n");
    fx.send("\r\n");
    fx.send(" \t \n");
    let crlf = tool_call(1, "echo", json!({"text": "crlf"})).to_string() + "\r\n";
    fx.send(crlf);
    fx.send("\n");
    fx.send(tool_call_line(2, "echo", json!({"text": "lf"})));

    let done = fx.finish();
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
    // Exactly the two answers: no error for any blank line.
    assert_eq!(
        done.messages.len(),
        2,
        "expected two responses: {:?}",
        done.lines
    );
    let mut by_id: Vec<&Value> = done.messages.iter().collect();
    by_id.sort_by_key(|m| m["id"].as_i64());
    assert_eq!(
        tool_text(by_id[0], 1),
        "crlf",
        "the \\r is not part of the request"
    );
    assert_eq!(tool_text(by_id[1], 2), "lf");
}

#[test]
fn cancelled_blocking_call_sees_cancellation_and_is_never_answered() {
    let mut fx = Fixture::spawn(&[]);
    fx.send(tool_call_line("spin", "spin_until_cancelled", json!({})));
    assert!(
        fx.wait_stderr(r#"SPIN started id="spin""#),
        "spin_until_cancelled never started; stderr:\n{}",
        fx.stderr_tail()
    );
    fx.send(cancel_line("spin"));
    // The blocking handler cannot be dropped mid-call: it must observe the
    // cancellation through its context, and its late result must be discarded.
    assert!(
        fx.wait_stderr(r#"SPIN saw cancellation id="spin""#),
        "the blocking handler never saw the cancellation; stderr:\n{}",
        fx.stderr_tail()
    );
    fx.send(tool_call_line(2, "echo", json!({"text": "after cancel"})));
    assert_eq!(tool_text(&fx.next_message(), 2), "after cancel");

    let done = fx.finish();
    assert!(
        done.messages
            .iter()
            .all(|m| m.get("id") != Some(&json!("spin"))),
        "the cancelled request was answered: {:?}",
        done.lines
    );
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

/// The limit applies to the message, not to its line terminator: a request of
/// exactly `max_message_bytes` is served whether it ends in `\n` or `\r\n`.
#[test]
fn crlf_request_of_exactly_the_limit_is_served() {
    let mut fx = Fixture::spawn(&["--max-message-bytes", "1000"]);
    let lf = echo_line_of_len(1, 1000);
    fx.send(lf.clone());
    assert_eq!(
        tool_text(&fx.next_message(), 1).len(),
        lf.len() - 1 - empty_echo_len()
    );
    let crlf = echo_line_of_len(2, 1000).replace('\n', "\r\n");
    assert_eq!(crlf.len(), 1002);
    fx.send(crlf);
    let response = fx.next_message();
    assert!(
        response.get("error").is_none(),
        "a 1000-byte request ending in \\r\\n was refused with limit 1000: {response}"
    );
    assert_eq!(tool_text(&response, 2).len(), 1000 - empty_echo_len());

    let done = fx.finish();
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

/// JSON-RPC ids `7` and `"7"` are different requests: cancelling one must not
/// cancel the other.
#[test]
fn cancellation_matches_the_id_exactly() {
    let mut fx = Fixture::spawn(&[]);
    fx.send(tool_call_line(7, "sleep_forever", json!({})));
    assert!(
        fx.wait_stderr("SLEEP-FOREVER started id=7"),
        "sleep_forever never started; stderr:\n{}",
        fx.stderr_tail()
    );
    fx.send(cancel_line("7"));
    fx.send(cancel_line(70));
    // Messages are routed in order, so once this echo is answered both
    // cancellations were seen; the grace period lets a wrongly aborted task drop.
    fx.send(tool_call_line(1, "echo", json!({"text": "sync"})));
    assert_eq!(tool_text(&fx.next_message(), 1), "sync");
    thread::sleep(Duration::from_millis(300));
    assert!(
        !fx.stderr().contains("DROP-GUARD"),
        "a cancellation for another id dropped request 7:\n{}",
        fx.stderr_tail()
    );

    fx.send(cancel_line(7));
    assert!(
        fx.wait_stderr("DROP-GUARD slow call dropped id=7"),
        "the matching cancellation did not drop the call; stderr:\n{}",
        fx.stderr_tail()
    );
    let done = fx.finish();
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

/// Integer ids wider than 64 bits are echoed digit for digit (typed-mcp-core's
/// `RequestId`), so a call with one must be cancellable by the same id.
#[test]
fn a_call_with_an_integer_id_wider_than_64_bits_can_be_cancelled() {
    const WIDE: &str = "123456789012345678901234567890";
    let mut fx = Fixture::spawn(&[]);
    // serde_json without arbitrary precision cannot hold this id as a number:
    // write the lines by hand.
    let call = tool_call_line(0, "sleep_forever", json!({})).replacen(
        "\"id\":0",
        &format!("\"id\":{WIDE}"),
        1,
    );
    assert!(call.contains(WIDE));
    fx.send(call);
    assert!(
        fx.wait_stderr(&format!("SLEEP-FOREVER started id={WIDE}")),
        "sleep_forever never started; stderr:\n{}",
        fx.stderr_tail()
    );
    fx.send(format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{WIDE}}}}}\n"
    ));
    let dropped = fx.wait_stderr(&format!("DROP-GUARD slow call dropped id={WIDE}"));
    fx.send(tool_call_line(1, "echo", json!({"text": "after cancel"})));
    assert_eq!(tool_text(&fx.next_message(), 1), "after cancel");
    assert!(
        dropped,
        "cancelling request {WIDE} did not drop it; stderr:\n{}",
        fx.stderr_tail()
    );
    let done = fx.finish();
    assert!(
        done.lines.iter().all(|l| !l.contains(WIDE)),
        "request {WIDE} was answered: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

#[test]
fn receipts_file_has_only_whole_lines_after_a_kill() {
    let dir = std::env::temp_dir().join(format!("typed-mcp-receipts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("receipts.jsonl");
    let _ = std::fs::remove_file(&path);
    let mut fx = Fixture::spawn(&["--receipts", path.to_str().unwrap()]);
    // A steady stream of calls, some with long text, so the kill lands while
    // receipts are being written.
    for id in 1..=5000i64 {
        let text = "x".repeat((id % 7 * 300) as usize);
        fx.send(tool_call_line(id, "echo", json!({ "text": text })));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::metadata(&path).map_or(0, |m| m.len()) < 100_000 {
        assert!(Instant::now() < deadline, "receipts were written");
        thread::sleep(Duration::from_millis(5));
    }
    fx.child.kill().expect("SIGKILL the fixture");
    fx.child.wait().unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.ends_with('\n'), "the last line is whole");
    let mut count = 0;
    for line in written.lines() {
        let receipt: typed_mcp::receipt::Receipt =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(receipt.method, "tools/call");
        assert_eq!(receipt.name, "echo");
        count += 1;
    }
    assert!(count > 100, "{count} receipts");
    std::fs::remove_dir_all(&dir).ok();
}

// ---------------------------------------------------------------------------
// 9. Redaction, backpressure and drain
// ---------------------------------------------------------------------------

/// The bound on the fixture's peak resident set size in the tests below.
const RSS_LIMIT_KIB: u64 = 64 * 1024;

/// A file under the temporary directory, removed when dropped.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str) -> TempFile {
        let path = std::env::temp_dir().join(format!("typed-mcp-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        TempFile(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temporary path")
    }

    /// The receipts the fixture wrote there, one JSON object a line.
    fn receipt_lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.0)
            .unwrap_or_else(|e| panic!("read {}: {e}", self.path()))
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Builds `tools/call` lines that differ only in their integer id, without
/// encoding JSON for each (200 000 of them would take seconds in debug).
fn numbered_call_lines(name: &str, arguments: Value) -> impl Fn(i64) -> String {
    let template = tool_call_line(0, name, arguments);
    let (head, tail) = template
        .split_once("\"id\":0,")
        .expect("the id is written once, as \"id\":0,");
    let (head, tail) = (head.to_owned(), tail.to_owned());
    move |id| format!("{head}\"id\":{id},{tail}")
}

/// The integer after the first `"id":` of a line, without decoding the line.
fn integer_id(line: &str) -> Option<i64> {
    let at = line.find("\"id\":")? + "\"id\":".len();
    let digits = line[at..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(&line[at..], |end| &line[at..at + end]);
    digits.parse().ok()
}

/// The one receipt whose `requestId` is `id`.
#[track_caller]
fn receipt_of(lines: &[String], id: &Value) -> typed_mcp::receipt::Receipt {
    // Only lines that name the id are decoded (there may be 200 000 lines).
    let named = format!("\"requestId\":{id}");
    let mut found = lines
        .iter()
        .filter(|l| l.contains(&named))
        .map(|l| {
            serde_json::from_str::<typed_mcp::receipt::Receipt>(l)
                .unwrap_or_else(|e| panic!("a receipt line that is no receipt ({e}): {l}"))
        })
        .filter(|r| &r.request_id == id);
    let receipt = found
        .next()
        .unwrap_or_else(|| panic!("no receipt for request {id}"));
    assert!(found.next().is_none(), "two receipts for request {id}");
    receipt
}

#[test]
fn a_panic_message_holding_a_registered_secret_is_never_printed_and_serving_continues() {
    const SECRET: &str = "sk-live-4f9c2a7e81b3d605";
    let mut fx = Fixture::spawn(&["--secret", SECRET]);
    let mut stdout = Vec::new();
    for (id, tool) in [(1, "panic_with_secret"), (3, "panic_with_secret_blocking")] {
        fx.send(tool_call_line(id, tool, json!({})));
        let line = fx.next_line();
        rpc_error(&protocol_message(&line), -32603, Some(json!(id)));
        stdout.push(line);
        fx.send(tool_call_line(
            id + 1,
            "echo",
            json!({"text": "after the panic"}),
        ));
        let line = fx.next_line();
        assert_eq!(
            tool_text(&protocol_message(&line), id + 1),
            "after the panic"
        );
        stdout.push(line);
    }

    let done = fx.finish();
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
    stdout.extend(done.lines);
    // Both panics were reported, so the hook ran on the message that held it.
    assert_eq!(
        done.stderr.matches("fixture panic: the API key is").count(),
        2,
        "both panics are reported on stderr:\n{}",
        done.stderr
    );
    assert!(
        !stdout.concat().contains(SECRET),
        "the secret reached stdout: {stdout:?}"
    );
    assert!(
        !done.stderr.contains(SECRET),
        "the secret reached stderr:\n{}",
        done.stderr
    );
}

/// 200 000 calls arrive while the only handler slot is held by `busy`: the
/// server holds `max_pending` (default 1024) of them and sheds the rest at
/// once, so it keeps reading and sees the cancellation behind them.
#[test]
fn two_hundred_thousand_calls_behind_a_busy_slot_are_each_answered_once_in_bounded_memory() {
    const CALLS: i64 = 200_000;
    /// The default `max_pending` (1024), counted with the busy call.
    const MAX_PENDING: i64 = typed_mcp::ServerBuilder::DEFAULT_MAX_PENDING as i64;
    let receipts = TempFile::new("flood-receipts.jsonl");
    let mut fx = Fixture::spawn(&["--max-concurrent", "1", "--receipts", receipts.path()]);
    fx.send(tool_call_line("busy", "busy", json!({})));
    assert!(
        fx.wait_stderr(r#"BUSY started id="busy""#),
        "busy never started; stderr:\n{}",
        fx.stderr_tail()
    );

    let started = Instant::now();
    let line = numbered_call_lines("echo", json!({"text": "queued"}));
    let stdin = fx.stdin_sender();
    let writer = thread::spawn(move || {
        let mut chunk = String::new();
        for id in 1..=CALLS {
            chunk.push_str(&line(id));
            if id % 10_000 == 0 {
                stdin.send(std::mem::take(&mut chunk).into_bytes()).unwrap();
            }
        }
        stdin.send(cancel_line("busy").into_bytes()).unwrap();
    });

    let mut answered = vec![false; CALLS as usize + 1];
    let (mut results, mut shed) = (0i64, 0i64);
    // Decoding 200 000 lines with a debug serde_json would take most of the
    // test's time: the first overload answer is decoded and checked, and
    // every later one must be the same line but for its id.
    let mut shed_shape: Option<String> = None;
    for _ in 0..CALLS {
        let line = fx.next_line();
        let id = integer_id(&line)
            .filter(|id| (1..=CALLS).contains(id))
            .unwrap_or_else(|| panic!("an answer to no flood call: {line}"));
        assert!(
            !std::mem::replace(&mut answered[id as usize], true),
            "request {id} was answered twice"
        );
        let shape = line.replacen(&format!("\"id\":{id},"), "\"id\":#,", 1);
        if shed_shape.as_ref() == Some(&shape) {
            shed += 1;
            continue;
        }
        let message = protocol_message(&line);
        if message.get("error").is_some() {
            let error = rpc_error(&message, -31002, Some(json!(id)));
            assert!(
                error["data"]["retryAfterMs"].is_u64(),
                "an overload error without data.retryAfterMs: {message}"
            );
            shed_shape.get_or_insert(shape);
            shed += 1;
        } else {
            assert_eq!(tool_text(&message, id), "queued");
            results += 1;
        }
    }
    let elapsed = started.elapsed();
    let peak_kib = fx.peak_rss_kib();
    writer.join().expect("the writer thread");
    eprintln!(
        "{CALLS} calls answered in {elapsed:?} ({results} results, {shed} shed); peak RSS {peak_kib} KiB"
    );

    let done = fx.finish();
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
    // Nothing more: in particular no answer to the cancelled busy call.
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    // Every id from 1 to CALLS, each once (checked above), none missing.
    assert!(answered[1..].iter().all(|&a| a));
    // The queued calls ran only because the cancellation freed the slot.
    assert_eq!(
        results,
        MAX_PENDING - 1,
        "the calls held behind the busy one"
    );
    assert_eq!(shed, CALLS - (MAX_PENDING - 1));
    assert!(
        peak_kib < RSS_LIMIT_KIB,
        "peak RSS {peak_kib} KiB, limit {RSS_LIMIT_KIB} KiB"
    );

    let lines = receipts.receipt_lines();
    assert_eq!(lines.len() as i64, CALLS + 1, "one receipt per call");
    let busy = receipt_of(&lines, &json!("busy"));
    assert_eq!(busy.outcome, typed_mcp::receipt::Outcome::Cancelled);
    let overloaded = lines
        .iter()
        .filter(|l| l.contains(r#""outcome":{"kind":"overloaded"}"#))
        .count();
    assert_eq!(
        overloaded as i64, shed,
        "one overloaded receipt per shed call"
    );
}

/// Each notification carries 1000 bytes of message, so the 100 000 of them
/// are about 110 MiB: held in an unbounded queue they would break the limit,
/// while the bounded outbox holds 4 MiB and makes the handler wait.
#[test]
fn a_hundred_thousand_progress_notifications_to_a_slow_reader_stay_in_bounded_memory() {
    const COUNT: u64 = 100_000;
    const PAD: u64 = 1000;
    // The reader reads nothing for 3 s, then 32 KiB at a time with a pause
    // before each read.
    let pace = Pace {
        start_after: Duration::from_secs(3),
        chunk: 32 * 1024,
        pause: Duration::from_micros(500),
    };
    let mut fx = Fixture::spawn_paced(&[], pace);
    let mut call = tool_call(1, "progress_flood", json!({"count": COUNT, "pad": PAD}));
    call["params"]["_meta"]["progressToken"] = json!("flood");
    let started = Instant::now();
    fx.send(call.to_string() + "\n");

    let mut last = 0.0f64;
    let mut notified = 0u64;
    let (result, peak_kib) = loop {
        let message = fx.next_message();
        if message.get("id").is_some() {
            break (message, fx.peak_rss_kib());
        }
        assert_eq!(message["method"], "notifications/progress", "{message}");
        assert_eq!(message["params"]["progressToken"], "flood", "{message}");
        let progress = message["params"]["progress"]
            .as_f64()
            .unwrap_or_else(|| panic!("no progress number: {message}"));
        assert!(progress > last, "progress {progress} after {last}");
        assert_eq!(
            message["params"]["message"].as_str().map(str::len),
            Some(PAD as usize)
        );
        last = progress;
        notified += 1;
    };
    let elapsed = started.elapsed();
    eprintln!("{notified} notifications read in {elapsed:?}; peak RSS {peak_kib} KiB");
    assert_eq!(tool_text(&result, 1), format!("sent {notified}"));
    assert_eq!(
        notified, COUNT,
        "every notification the handler sent arrived"
    );

    let done = fx.finish();
    assert!(
        done.messages.is_empty(),
        "unexpected messages after the result: {}",
        done.messages.len()
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
    assert!(
        peak_kib < RSS_LIMIT_KIB,
        "peak RSS {peak_kib} KiB, limit {RSS_LIMIT_KIB} KiB"
    );
}

/// `block_ms` calls of 400 ms under a 100 ms timeout and two slots: each is
/// answered as timed out, but its thread keeps its slot until it returns.
#[test]
fn blocking_handlers_that_time_out_keep_their_slots_until_their_threads_return() {
    const CALLS: i64 = 12;
    const BLOCK_MS: u64 = 400;
    let mut fx = Fixture::spawn(&["--timeout-ms", "100", "--max-concurrent", "2"]);
    let batch: String = (1..=CALLS)
        .map(|id| tool_call_line(id, "block_ms", json!({"ms": BLOCK_MS})))
        .collect();
    let started = Instant::now();
    fx.send(batch);
    let mut answered = BTreeSet::new();
    for _ in 0..CALLS {
        let message = fx.next_message();
        let id = message["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("a response without an integer id: {message}"));
        assert!(answered.insert(id), "request {id} was answered twice");
        assert!(
            message.get("error").is_none(),
            "expected a result: {message}"
        );
        assert_eq!(message["result"]["isError"], true, "{message}");
        let text = message["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains("timed out"), "not a timeout: {message}");
    }
    let elapsed = started.elapsed();
    assert_eq!(answered, (1..=CALLS).collect::<BTreeSet<_>>());

    fx.send(tool_call_line(100, "block_max_seen", json!({})));
    let max_seen: usize = tool_text(&fx.next_message(), 100)
        .parse()
        .expect("a number");
    eprintln!(
        "{CALLS} timed-out calls answered in {elapsed:?}; at most {max_seen} threads at once"
    );
    assert!(
        max_seen <= 2,
        "{max_seen} block_ms threads ran at once, limit 2"
    );
    assert_eq!(max_seen, 2, "the two slots were never used together");
    // Pairs of calls start as the previous pair's threads return: the last
    // pair starts 5 × 400 ms after the first and times out 100 ms later.
    let floor = Duration::from_millis((CALLS as u64 / 2 - 1) * BLOCK_MS);
    assert!(
        elapsed >= floor,
        "{CALLS} calls answered in {elapsed:?}: a timed-out thread's slot was reused"
    );

    let done = fx.finish();
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

#[test]
fn a_hung_call_at_end_of_stdin_is_cancelled_after_the_drain_timeout() {
    let receipts = TempFile::new("drain-receipts.jsonl");
    let mut fx = Fixture::spawn(&["--drain-timeout-ms", "500", "--receipts", receipts.path()]);
    fx.send(tool_call_line("stuck", "hang", json!({})));
    assert!(
        fx.wait_stderr(r#"HANG started id="stuck""#),
        "hang never started; stderr:\n{}",
        fx.stderr_tail()
    );
    let closed = Instant::now();
    let done = fx.finish();
    let exited = closed.elapsed();
    eprintln!("exited {exited:?} after end of stdin");

    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
    assert!(
        done.messages.is_empty(),
        "the hung call was answered: {:?}",
        done.lines
    );
    assert!(
        exited >= Duration::from_millis(500),
        "exited {exited:?} after end of stdin, before the 500 ms drain timeout"
    );
    assert!(
        exited < Duration::from_millis(1500),
        "exited {exited:?} after end of stdin, drain timeout 500 ms"
    );
    let lines = receipts.receipt_lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let receipt = receipt_of(&lines, &json!("stuck"));
    assert_eq!(receipt.outcome, typed_mcp::receipt::Outcome::Cancelled);
}

#[test]
fn a_batch_is_one_invalid_request_answer_and_serving_continues() {
    let mut fx = Fixture::spawn(&[]);
    let batch = format!(
        "[{},{}]\n",
        tool_call(1, "echo", json!({"text": "in a batch"})),
        tool_call(2, "echo", json!({"text": "also in a batch"}))
    );
    fx.send(batch);
    fx.send("[]\n");
    fx.send(tool_call_line(
        3,
        "echo",
        json!({"text": "after the batches"}),
    ));

    rpc_error(&fx.next_message(), -32600, None);
    rpc_error(&fx.next_message(), -32600, None);
    assert_eq!(tool_text(&fx.next_message(), 3), "after the batches");

    let done = fx.finish();
    // Exactly one answer each: none of the batch's calls ran.
    assert!(
        done.messages.is_empty(),
        "unexpected messages: {:?}",
        done.lines
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
}

/// A 1 MiB text that tells its call apart from the others: the id in eight
/// digits, a colon, then one letter repeated.
fn mebibyte_text(id: usize) -> String {
    let head = format!("{id:08}:");
    let fill = char::from(b'a' + (id % 26) as u8).to_string();
    head.clone() + &fill.repeat((1 << 20) - head.len())
}

#[test]
fn two_hundred_pipelined_one_mebibyte_echo_calls_are_answered_in_bounded_memory() {
    const CALLS: usize = 200;
    // The default max_message_bytes (4 MiB) admits a 1 MiB text. stdout is
    // read only after a pause: while nobody reads, a server that did not
    // bound the bytes in flight reads on and queues the replies (with the
    // budget and the outbox raised to 1 GiB and a 2 s pause, a peak of
    // 76 MiB was measured; 34 MiB with the defaults).
    let pace = Pace {
        start_after: Duration::from_secs(3),
        ..Pace::EAGER
    };
    let mut fx = Fixture::spawn_paced(&[], pace);
    // Encoding and decoding 400 MiB of JSON with a debug serde_json takes
    // most of this test's time, so the 1 MiB texts (no character in them
    // needs escaping) are spliced into the lines with std's optimised string
    // code and only what is left is parsed.
    let template = tool_call_line(0, "echo", json!({"text": "@TEXT@"}));
    let (before, after) = template.split_once("@TEXT@").expect("a placeholder");
    let (before, after) = (before.to_owned(), after.to_owned());
    let stdin = fx.stdin_sender();
    let started = Instant::now();
    let writer = thread::spawn(move || {
        for id in 1..=CALLS {
            let head = before.replacen("\"id\":0,", &format!("\"id\":{id},"), 1);
            let line = head + &mebibyte_text(id) + &after;
            stdin.send(line.into_bytes()).unwrap();
        }
    });
    let mut answered = BTreeSet::new();
    for _ in 0..CALLS {
        let line = fx.next_line();
        // The text's own id: its first eight characters.
        let at = line
            .find(r#""text":""#)
            .map(|i| i + r#""text":""#.len())
            .unwrap_or_else(|| panic!("no text in {}", &line[..line.len().min(300)]));
        let id: usize = line
            .get(at..at + 8)
            .and_then(|digits| digits.parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "no id at the text's start: {}",
                    &line[at..line.len().min(at + 100)]
                )
            });
        let expected = mebibyte_text(id);
        assert!(
            line[at..].starts_with(&expected),
            "request {id} got another text back"
        );
        // With the expected text cut out, the answer to `id` has an empty
        // text: the text was exactly the expected one, in a whole result.
        let rest = format!("{}{}", &line[..at], &line[at + expected.len()..]);
        assert_eq!(tool_text(&protocol_message(&rest), id), "", "{rest}");
        assert!(answered.insert(id), "request {id} was answered twice");
    }
    let elapsed = started.elapsed();
    let peak_kib = fx.peak_rss_kib();
    writer.join().expect("the writer thread");
    eprintln!("{CALLS} calls of 1 MiB answered in {elapsed:?}; peak RSS {peak_kib} KiB");
    assert_eq!(answered, (1..=CALLS).collect::<BTreeSet<_>>());

    let done = fx.finish();
    assert!(
        done.messages.is_empty(),
        "{} unexpected messages",
        done.messages.len()
    );
    assert_eq!(done.status.code(), Some(0), "stderr:\n{}", done.stderr);
    assert!(
        peak_kib < RSS_LIMIT_KIB,
        "peak RSS {peak_kib} KiB, limit {RSS_LIMIT_KIB} KiB"
    );
}
