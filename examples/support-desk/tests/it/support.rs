//! The support-desk binary as a real process: over stdio (request lines in,
//! response lines out) or over HTTP (a loopback port it picks itself), each on
//! its own database in a temporary directory.
//!
//! Nothing waits without a deadline: a server that stops answering fails its
//! test after [`PATIENCE`], and a process still running when its test ends is
//! killed.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

/// Long enough that nothing times out on a loaded machine; tests never assert
/// on timing, only that something happened before this.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The `params._meta` envelope every 2026-07-28 request carries.
pub fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A request object with the envelope added to `params`.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = envelope();
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// The `arguments` of a `tools/call` of `name`.
pub fn call_params(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// A scratch directory with the database (and receipts) of one test.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.path().join("desk.db")
    }

    pub fn receipts(&self) -> PathBuf {
        self.dir.path().join("receipts.jsonl")
    }

    /// `--db <this db>` followed by `extra`.
    pub fn args(&self, extra: &[&str]) -> Vec<String> {
        let mut args = vec!["--db".to_owned(), self.db().display().to_string()];
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        args
    }
}

/// The receipts written so far, one JSON object per line; every line must parse.
pub fn read_receipts(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("a receipt line ({e}): {line}"))
        })
        .collect()
}

/// Waits until `path` holds a receipt that `matches`, and returns it.
pub fn wait_for_receipt(path: &Path, matches: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(found) = read_receipts(path).into_iter().find(|r| matches(r)) {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "no matching receipt in {}; receipts: {:#?}",
            path.display(),
            read_receipts(path)
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// The server process, killed when dropped.
struct Process {
    child: Child,
    /// Everything written to stderr so far.
    stderr: Arc<Mutex<String>>,
    /// Each stderr line as it comes, for the startup line.
    stderr_lines: Mutex<Receiver<String>>,
}

impl Process {
    fn spawn(args: &[String], envs: &[(&str, &str)]) -> Process {
        let mut command = Command::new(env!("CARGO_BIN_EXE_support-desk"));
        command
            .args(args)
            // Only what a test grants is granted, whatever the developer's shell says.
            .env_remove("SUPPORT_DESK_ALLOW")
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in envs {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn support-desk");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (line_tx, stderr_lines) = mpsc::channel();
        let sink = stderr.clone();
        thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = line_tx.send(line);
            }
        });
        Process {
            child,
            stderr,
            stderr_lines: Mutex::new(stderr_lines),
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits for the stderr line that starts with `prefix`.
    fn stderr_line(&self, prefix: &str) -> String {
        let lines = self.stderr_lines.lock().unwrap();
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return line,
                Ok(_) => {}
                Err(e) => panic!(
                    "no stderr line starting {prefix:?} ({e:?}); stderr:\n{}",
                    self.stderr()
                ),
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server on stdio: a request line in, messages out.
pub struct StdioDesk {
    process: Process,
    stdin: Option<ChildStdin>,
    /// Each stdout line, parsed; disconnected at end of stdout.
    stdout: Receiver<Value>,
    /// Messages read while waiting for another one.
    pending: VecDeque<Value>,
    next_id: i64,
}

impl StdioDesk {
    pub fn spawn(args: &[String]) -> StdioDesk {
        StdioDesk::spawn_with_env(args, &[])
    }

    pub fn spawn_with_env(args: &[String], envs: &[(&str, &str)]) -> StdioDesk {
        let mut process = Process::spawn(args, envs);
        let stdin = process.child.stdin.take().expect("piped stdin");
        let stdout_pipe = process.child.stdout.take().expect("piped stdout");
        let (tx, stdout) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout_pipe).lines() {
                let Ok(line) = line else { break };
                let message = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout holds only JSON lines ({e}): {line:?}"));
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        StdioDesk {
            process,
            stdin: Some(stdin),
            stdout,
            pending: VecDeque::new(),
            next_id: 0,
        }
    }

    pub fn stderr(&self) -> String {
        self.process.stderr()
    }

    /// Writes one line (a `\n` is added).
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush())
            .expect("the server reads its stdin");
    }

    /// Sends a request with a fresh id and returns that id.
    pub fn send(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send_line(&request(id.clone(), method, params).to_string());
        id
    }

    /// The next message for which `matches` holds; others stay pending.
    #[track_caller]
    pub fn wait_for(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&matches) {
            return self.pending.remove(i).expect("a pending message");
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(message) if matches(&message) => return message,
                Ok(message) => self.pending.push_back(message),
                Err(RecvTimeoutError::Timeout) => panic!(
                    "no {what} within {PATIENCE:?}; pending: {:?}; stderr:\n{}",
                    self.pending,
                    self.stderr()
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "stdout ended while waiting for {what}; stderr:\n{}",
                    self.stderr()
                ),
            }
        }
    }

    /// The response to request `id`.
    #[track_caller]
    pub fn response(&mut self, id: &Value) -> Value {
        let id = id.clone();
        self.wait_for(&format!("response to {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    /// Sends a request and returns its response.
    #[track_caller]
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.response(&id)
    }

    /// Calls a tool and returns its result (which may be `isError`).
    #[track_caller]
    pub fn tool(&mut self, name: &str, arguments: Value) -> Value {
        let response = self.call("tools/call", call_params(name, arguments));
        result_of(response)
    }

    /// Whether any message read but not claimed matches, once stdout has ended.
    pub fn pending_has(&mut self, matches: impl Fn(&Value) -> bool) -> bool {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(message) => self.pending.push_back(message),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("stdout did not end"),
            }
        }
        self.pending.iter().any(matches)
    }

    /// Closes stdin; the server finishes what it started and exits.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits for the process to exit and returns whether it succeeded.
    pub fn wait_exit(&mut self) -> bool {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.process.child.try_wait().expect("the child's status") {
                return status.success();
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit; stderr:\n{}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The `result` of a response; fails the test on a JSON-RPC error.
#[track_caller]
pub fn result_of(response: Value) -> Value {
    match response.get("result") {
        Some(result) => result.clone(),
        None => panic!("a result, got {response}"),
    }
}

/// The text of a result's first content block.
#[track_caller]
pub fn text_of(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text block in {result}"))
}

/// The ids of the tickets in a `search_tickets` result.
#[track_caller]
pub fn hit_ids(result: &Value) -> Vec<String> {
    assert_ne!(result["isError"], true, "a search result: {result}");
    result["structuredContent"]["tickets"]
        .as_array()
        .unwrap_or_else(|| panic!("tickets in {result}"))
        .iter()
        .map(|t| t["id"].as_str().expect("an id").to_owned())
        .collect()
}

/// The server on HTTP, at `http://{addr}/mcp`.
pub struct HttpDesk {
    process: Process,
    pub addr: SocketAddr,
    client: HyperClient<HttpConnector, Full<Bytes>>,
}

impl HttpDesk {
    /// Starts the server on a free loopback port and waits until it listens.
    pub fn spawn(args: &[String]) -> HttpDesk {
        let mut args = args.to_vec();
        args.extend(["--http".to_owned(), "127.0.0.1:0".to_owned()]);
        let process = Process::spawn(&args, &[]);
        let line = process.stderr_line("support-desk: serving MCP 2026-07-28 at http://");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|addr| addr.parse().ok())
            .unwrap_or_else(|| panic!("an address in {line:?}"));
        HttpDesk {
            process,
            addr,
            client: HyperClient::builder(TokioExecutor::new()).build_http(),
        }
    }

    pub fn stderr(&self) -> String {
        self.process.stderr()
    }

    /// A POST of `message` to `/mcp` with the headers the protocol requires.
    pub fn post(&self, message: &Value) -> http::Request<Full<Bytes>> {
        let method = message["method"].as_str().expect("a request method");
        let params = &message["params"];
        let name = match method {
            "tools/call" | "prompts/get" => params["name"].as_str(),
            "resources/read" => params["uri"].as_str(),
            _ => None,
        };
        let mut request = http::Request::post(format!("http://{}/mcp", self.addr))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        request
            .body(Full::new(Bytes::from(message.to_string())))
            .expect("a valid request")
    }

    /// Sends a request and returns the response with its body unread.
    pub async fn open(&self, message: &Value) -> http::Response<hyper::body::Incoming> {
        tokio::time::timeout(PATIENCE, self.client.request(self.post(message)))
            .await
            .expect("an answer in time")
            .expect("the request is delivered")
    }

    /// Sends a request and returns its JSON response.
    pub async fn call(&self, method: &str, params: Value) -> Value {
        let response = self.open(&request(1, method, params)).await;
        let status = response.status();
        let body = tokio::time::timeout(PATIENCE, response.into_body().collect())
            .await
            .expect("a body in time")
            .expect("a readable body")
            .to_bytes();
        let text = String::from_utf8_lossy(&body);
        assert_eq!(status, 200, "status of {method}: {text}");
        serde_json::from_slice(&body).unwrap_or_else(|e| panic!("a JSON answer ({e}): {text}"))
    }

    /// Calls a tool and returns its result (which may be `isError`).
    pub async fn tool(&self, name: &str, arguments: Value) -> Value {
        result_of(self.call("tools/call", call_params(name, arguments)).await)
    }
}

/// Reads the next SSE event of a streaming body.
pub async fn next_event(body: &mut hyper::body::Incoming) -> Value {
    let frame = tokio::time::timeout(PATIENCE, body.frame())
        .await
        .expect("an event in time")
        .expect("the stream is open")
        .expect("a readable frame");
    let data = frame.into_data().expect("a data frame");
    let text = std::str::from_utf8(&data).expect("UTF-8");
    let data = text
        .trim_end()
        .strip_prefix("data: ")
        .unwrap_or_else(|| panic!("one data line: {text:?}"));
    serde_json::from_str(data).expect("JSON data")
}

/// The process's stderr once its `support-desk: ` error line arrived: the
/// reader thread may lag behind the exit.
pub fn stderr_once_written(desk: &StdioDesk) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let stderr = desk.stderr();
        if stderr.contains("support-desk: ") || Instant::now() > deadline {
            return stderr;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
