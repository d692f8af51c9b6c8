//! The stdio transport: spawn the server, write one JSON-RPC message per line
//! to its stdin, read one per line from its stdout.

use std::io;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::error::ClientError;

/// The most of the server's stderr kept for error messages.
const STDERR_KEPT: usize = 16 * 1024;

/// A running server process.
#[derive(Debug)]
pub struct StdioTransport {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<String>>,
}

impl StdioTransport {
    /// Starts `words[0]` with the remaining words as arguments.
    pub fn spawn(words: &[String]) -> Result<StdioTransport, ClientError> {
        let (program, args) = words
            .split_first()
            .ok_or_else(|| ClientError::Usage("no server command given".into()))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| ClientError::Spawn {
                command: program.clone(),
                reason: match e.kind() {
                    io::ErrorKind::NotFound => {
                        "not found (is it installed and on PATH, or is the path right?)".into()
                    }
                    io::ErrorKind::PermissionDenied => {
                        "permission denied (is it an executable program?)".into()
                    }
                    _ => e.to_string(),
                },
            })?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut pipe) = child.stderr.take() {
            // Kept, not shown: a server's log lines would bury the answer; they
            // are shown when something goes wrong.
            let kept = Arc::clone(&stderr);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                    kept.push_str(&String::from_utf8_lossy(&buf[..n]));
                    if kept.len() > STDERR_KEPT {
                        let mut cut = kept.len() - STDERR_KEPT;
                        while !kept.is_char_boundary(cut) {
                            cut += 1;
                        }
                        kept.drain(..cut);
                    }
                }
            });
        }
        Ok(StdioTransport {
            child,
            stdin,
            stdout,
            stderr,
        })
    }

    /// What the server wrote to stderr so far (its end).
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sends one message and reads lines until the response to `id` arrives.
    /// Notifications and other lines that are JSON-RPC are skipped.
    pub async fn exchange(
        &mut self,
        message: &[u8],
        id: &Value,
        method: &str,
        show_notifications: bool,
    ) -> Result<Value, ClientError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| ClientError::Io("the server's stdin is closed".into()))?;
        // A failed write means the server is gone; what it printed before it
        // went (read below) tells more than the broken pipe.
        let _ = write_line(stdin, message).await;
        loop {
            let mut text = String::new();
            let read = self
                .stdout
                .read_line(&mut text)
                .await
                .map_err(|e| ClientError::Io(format!("reading the server's stdout: {e}")))?;
            if read == 0 {
                return Err(self.exited(method).await);
            }
            let text = text.trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() {
                continue;
            }
            let message: Value = serde_json::from_str(text).map_err(|_| ClientError::NotMcp {
                what: format!(
                    "the server wrote a line to stdout that is not JSON (an MCP server over stdio \
                     must write only JSON-RPC messages there; logs belong on stderr): {}",
                    snippet(text)
                ),
                stderr: self.stderr(),
            })?;
            if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                return Err(ClientError::NotMcp {
                    what: format!(
                        "the server wrote JSON that is not a JSON-RPC 2.0 message: {}",
                        snippet(text)
                    ),
                    stderr: self.stderr(),
                });
            }
            let answers = message.get("result").is_some() || message.get("error").is_some();
            if answers && (message.get("id") == Some(id) || message.get("id") == Some(&Value::Null))
            {
                return Ok(message);
            }
            if let (Some(request_id), Some(asked)) = (
                message.get("id"),
                message.get("method").and_then(Value::as_str),
            ) {
                // A request of the server's (a legacy session may ping): it
                // waits for an answer, so it gets one.
                let answer = crate::era::answer_server_request(request_id, asked);
                if let Some(stdin) = self.stdin.as_mut() {
                    let bytes = serde_json::to_vec(&answer).expect("a Value serializes");
                    let _ = write_line(stdin, &bytes).await;
                }
                continue;
            }
            if show_notifications && message.get("id").is_none() {
                crate::show::notification(&message);
            }
            // Otherwise a notification nobody asked to see, or an answer to
            // another request: skipped.
        }
    }

    /// Sends one notification (no answer is awaited).
    pub async fn notify(&mut self, message: &[u8]) -> Result<(), ClientError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| ClientError::Io("the server's stdin is closed".into()))?;
        write_line(stdin, message)
            .await
            .map_err(|e| ClientError::Io(format!("writing to the server's stdin: {e}")))
    }

    /// The error for a server that stopped talking: how it ended, and its stderr.
    async fn exited(&mut self, method: &str) -> ClientError {
        let status = match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            Ok(Err(e)) => format!("its status is unknown: {e}"),
            Err(_) => "it closed its stdout but is still running".into(),
        };
        // Give the stderr reader a moment to collect the last words.
        tokio::time::sleep(Duration::from_millis(50)).await;
        ClientError::Exited {
            method: method.to_owned(),
            status,
            stderr: self.stderr(),
        }
    }

    /// Closes stdin (the server's signal to stop) and waits a little for it
    /// to exit; kills it otherwise.
    pub async fn close(mut self) {
        self.stdin = None;
        if tokio::time::timeout(Duration::from_secs(3), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

async fn write_line(stdin: &mut ChildStdin, message: &[u8]) -> io::Result<()> {
    let mut line = Vec::with_capacity(message.len() + 1);
    line.extend_from_slice(message);
    line.push(b'\n');
    stdin.write_all(&line).await?;
    stdin.flush().await
}

/// At most 200 characters of `text`, for an error message.
pub fn snippet(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(200).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}
