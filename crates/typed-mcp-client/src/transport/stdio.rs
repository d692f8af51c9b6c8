//! stdio: one JSON-RPC message per line, to a child process's stdin and from
//! its stdout, or over any reader/writer pair. A reader task routes what
//! arrives: a response to the request it answers, a progress notification to
//! the request whose token it carries, a subscription's notification to its
//! `subscriptions/listen`, a server request to the client's responder, and
//! anything else to the client's notification callback.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWrite,
    AsyncWriteExt as _, BufReader,
};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use typed_mcp_core::wire::meta_keys;

use super::{
    Exchange, Limits, Outgoing, PER_REQUEST_BACKLOG, ServerRequests, id_key, is_response,
    is_server_request,
};
use crate::client::NotificationSink;
use crate::error::{ClientError, snippet};

/// The most of the server's stderr kept for error messages.
const STDERR_KEPT: usize = 16 * 1024;

/// The environment variables a child server inherits by default: what a
/// program needs to be found and to run (its search path, home, locale,
/// temporary directory), and nothing else — no tokens or keys of the parent.
pub const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "WINDIR",
    "PATHEXT",
    "COMSPEC",
];

/// A server program to start and talk to over its stdin and stdout.
///
/// The child gets piped stdin, stdout and stderr (never the parent's
/// terminal), only the variables of [`INHERITED_ENV`] plus those set with
/// [`env`](Self::env) (unless [`inherit_env`](Self::inherit_env)), and is
/// killed when the client is dropped. Its stderr is kept (the last 16 KiB) and
/// shown in errors.
#[derive(Debug, Clone)]
pub struct StdioCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    inherit_env: bool,
    current_dir: Option<PathBuf>,
}

impl StdioCommand {
    /// Starts `program` (looked up on `PATH`).
    pub fn new(program: impl Into<OsString>) -> Self {
        StdioCommand {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            inherit_env: false,
            current_dir: None,
        }
    }

    /// A command line: the first word is the program.
    pub fn from_words<S: AsRef<str>>(words: &[S]) -> Result<Self, ClientError> {
        let (program, args) = words
            .split_first()
            .ok_or_else(|| ClientError::Usage("no server command given".into()))?;
        Ok(StdioCommand::new(program.as_ref()).args(args.iter().map(|a| a.as_ref())))
    }

    /// Adds an argument.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable of the child.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Passes the parent's whole environment on (for a command a person
    /// typed, which expects their environment, as a shell would give it).
    #[must_use]
    pub fn inherit_env(mut self, inherit: bool) -> Self {
        self.inherit_env = inherit;
        self
    }

    /// Runs the child in this directory.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// The program's name, for messages.
    pub fn program(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    fn spawn(&self) -> Result<Child, ClientError> {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if !self.inherit_env {
            command.env_clear();
            for key in INHERITED_ENV {
                if let Some(value) = std::env::var_os(key) {
                    command.env(key, value);
                }
            }
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        command.spawn().map_err(|e| ClientError::Spawn {
            command: self.program(),
            reason: match e.kind() {
                io::ErrorKind::NotFound => {
                    "not found (is it installed and on PATH, or is the path right?)".into()
                }
                io::ErrorKind::PermissionDenied => {
                    "permission denied (is it an executable program?)".into()
                }
                _ => e.to_string(),
            },
        })
    }
}

type Writer = Box<dyn AsyncWrite + Send + Unpin>;
type Reader = Box<dyn AsyncBufRead + Send + Unpin>;

/// Where the reader task sends what it reads.
#[derive(Default)]
struct Routes {
    /// By request id: the method (for errors) and the request's stream.
    pending: HashMap<String, (String, mpsc::Sender<Result<Value, ClientError>>)>,
    /// Progress token → request id key.
    tokens: HashMap<String, String>,
    /// Why the connection is unusable, once it is (for requests after it).
    dead: Option<Death>,
}

/// How the server's side ended.
#[derive(Debug, Clone)]
enum Death {
    Exited(String),
    Broken(ClientError),
}

impl Death {
    fn error(&self, method: &str, stderr: String) -> ClientError {
        match self {
            Death::Exited(status) => ClientError::Exited {
                method: method.to_owned(),
                status: status.clone(),
                stderr,
            },
            Death::Broken(error) => error.clone(),
        }
    }
}

/// A server over stdio (a child process, or a reader/writer pair).
pub(crate) struct StdioWire {
    writer: tokio::sync::Mutex<Option<Writer>>,
    routes: Arc<Mutex<Routes>>,
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    stderr: Arc<Mutex<String>>,
    reader: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for StdioWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioWire").finish_non_exhaustive()
    }
}

impl Drop for StdioWire {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl StdioWire {
    /// Starts the command.
    pub(crate) fn spawn(
        command: &StdioCommand,
        limits: Limits,
        server_requests: ServerRequests,
        notifications: NotificationSink,
    ) -> Result<StdioWire, ClientError> {
        let mut child = command.spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(mut pipe) = child.stderr.take() {
            // Kept, not shown: a server's log lines would bury the answer;
            // they are shown when something goes wrong.
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
        Ok(Self::start(
            Box::new(BufReader::new(stdout)),
            Box::new(stdin),
            Some(child),
            stderr,
            limits,
            server_requests,
            notifications,
        ))
    }

    /// Talks over a reader (the server's output) and a writer (its input).
    pub(crate) fn pair<R, W>(
        reader: R,
        writer: W,
        limits: Limits,
        server_requests: ServerRequests,
        notifications: NotificationSink,
    ) -> StdioWire
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        Self::start(
            Box::new(BufReader::new(reader)),
            Box::new(writer),
            None,
            Arc::default(),
            limits,
            server_requests,
            notifications,
        )
    }

    fn start(
        reader: Reader,
        writer: Writer,
        child: Option<Child>,
        stderr: Arc<Mutex<String>>,
        limits: Limits,
        server_requests: ServerRequests,
        notifications: NotificationSink,
    ) -> StdioWire {
        let routes = Arc::new(Mutex::new(Routes::default()));
        let child = Arc::new(tokio::sync::Mutex::new(child));
        let reader = tokio::spawn(read_loop(
            reader,
            Arc::clone(&routes),
            Arc::clone(&child),
            Arc::clone(&stderr),
            limits,
            server_requests,
            notifications,
        ));
        StdioWire {
            writer: tokio::sync::Mutex::new(Some(writer)),
            routes,
            child,
            stderr,
            reader,
        }
    }

    /// What the server wrote to stderr so far (its end).
    pub(crate) fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sends a request; its messages arrive on the exchange.
    pub(crate) async fn open(&self, out: Outgoing<'_>) -> Result<Exchange, ClientError> {
        let id = out.id.expect("a request has an id");
        let key = id_key(id);
        let (tx, rx) = mpsc::channel(PER_REQUEST_BACKLOG);
        {
            let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(death) = &routes.dead {
                return Err(death.error(out.method, self.stderr()));
            }
            routes
                .pending
                .insert(key.clone(), (out.method.to_owned(), tx));
            if let Some(token) = out.progress_token {
                routes.tokens.insert(token.to_owned(), key.clone());
            }
        }
        // A failed write means the server is gone; the reader reports how
        // (its exit status and last words tell more than the broken pipe).
        let _ = self.write(&out.body).await;
        Ok(Exchange {
            incoming: rx,
            session_id: None,
        })
    }

    /// Forgets a request (answered, or given up on).
    pub(crate) fn forget(&self, id: &Value, progress_token: Option<&str>) {
        let mut routes = self.routes.lock().unwrap_or_else(|e| e.into_inner());
        routes.pending.remove(&id_key(id));
        if let Some(token) = progress_token {
            routes.tokens.remove(token);
        }
    }

    /// Sends a notification or a response.
    pub(crate) async fn send(&self, body: &[u8]) -> Result<(), ClientError> {
        if let Some(death) = &self.routes.lock().unwrap_or_else(|e| e.into_inner()).dead {
            return Err(death.error("a notification", self.stderr()));
        }
        self.write(body)
            .await
            .map_err(|e| ClientError::Io(format!("writing to the server's stdin: {e}")))
    }

    async fn write(&self, body: &[u8]) -> io::Result<()> {
        let mut writer = self.writer.lock().await;
        let Some(writer) = writer.as_mut() else {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the server's stdin is closed",
            ));
        };
        let mut line = Vec::with_capacity(body.len() + 1);
        line.extend_from_slice(body);
        line.push(b'\n');
        writer.write_all(&line).await?;
        writer.flush().await
    }

    /// Closes stdin (the server's signal to stop) and waits a little for it
    /// to exit; kills it otherwise.
    pub(crate) async fn close(&self) {
        if let Some(mut writer) = self.writer.lock().await.take() {
            let _ = writer.shutdown().await;
        }
        let mut child = self.child.lock().await;
        if let Some(child) = child.as_mut()
            && tokio::time::timeout(Duration::from_secs(3), child.wait())
                .await
                .is_err()
        {
            let _ = child.kill().await;
        }
    }
}

async fn read_loop(
    mut reader: Reader,
    routes: Arc<Mutex<Routes>>,
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    stderr: Arc<Mutex<String>>,
    limits: Limits,
    server_requests: ServerRequests,
    notifications: NotificationSink,
) {
    let stderr_now = || stderr.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let death = loop {
        let line = match read_line(&mut reader, limits.max_message_bytes).await {
            Ok(Some(line)) => line,
            Ok(None) => break ended(&child).await,
            Err(LineError::TooLong(seen)) => {
                break Death::Broken(ClientError::Limit {
                    what: format!(
                        "the server sent a line of more than {seen} bytes; this client accepts \
                         messages of at most {} (Options::max_message_bytes)",
                        limits.max_message_bytes
                    ),
                    stderr: stderr_now(),
                });
            }
            Err(LineError::Io(e)) => {
                break Death::Broken(ClientError::Io(format!("reading the server's stdout: {e}")));
            }
        };
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let message = match limits.parse(&line, stderr_now) {
            Ok(message) => message,
            Err(ClientError::NotMcp { what, stderr }) if what.contains("is not JSON") => {
                break Death::Broken(ClientError::NotMcp {
                    what: format!(
                        "the server wrote a line to stdout that is not JSON (an MCP server over \
                         stdio must write only JSON-RPC messages there; logs belong on stderr): {}",
                        snippet(text.trim_end())
                    ),
                    stderr,
                });
            }
            Err(error) => break Death::Broken(error),
        };
        if is_server_request(&message) {
            // The responder answers it; a full queue means the client is
            // gone or swamped, and the server's request goes unanswered.
            let _ = server_requests.try_send(message);
            continue;
        }
        let route = {
            let mut routes = routes.lock().unwrap_or_else(|e| e.into_inner());
            let key = if is_response(&message) {
                message.get("id").map(id_key)
            } else {
                let params = message.get("params");
                let token = params
                    .and_then(|p| p.get("progressToken"))
                    .map(|t| t.as_str().map_or_else(|| t.to_string(), str::to_owned));
                let subscription = params
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get(meta_keys::SUBSCRIPTION_ID))
                    .map(id_key);
                token
                    .and_then(|t| routes.tokens.get(&t).cloned())
                    .or(subscription)
            };
            let response = is_response(&message);
            key.and_then(|key| {
                if response {
                    routes.pending.remove(&key)
                } else {
                    routes.pending.get(&key).cloned()
                }
            })
        };
        match route {
            Some((_, tx)) => {
                // The caller gave up on the request: dropped.
                let _ = tx.send(Ok(message)).await;
            }
            None if message.get("method").is_some() => notifications(&message),
            None => tracing::debug!("a response to no waiting request: {message}"),
        }
    };
    let mut routes = routes.lock().unwrap_or_else(|e| e.into_inner());
    for (_, (method, tx)) in routes.pending.drain() {
        let _ = tx.try_send(Err(death.error(&method, stderr_now())));
    }
    routes.dead = Some(death);
}

/// How the server ended, once its stdout closed.
async fn ended(child: &tokio::sync::Mutex<Option<Child>>) -> Death {
    let mut child = child.lock().await;
    let Some(child) = child.as_mut() else {
        return Death::Exited("it closed its output".into());
    };
    let status = match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        Ok(Ok(status)) => status.to_string(),
        Ok(Err(e)) => format!("its status is unknown: {e}"),
        Err(_) => "it closed its stdout but is still running".into(),
    };
    // Give the stderr reader a moment to collect the last words.
    tokio::time::sleep(Duration::from_millis(50)).await;
    Death::Exited(status)
}

enum LineError {
    TooLong(usize),
    Io(io::Error),
}

/// One line without its end, at most `max` bytes; `None` at end of input.
async fn read_line(reader: &mut Reader, max: usize) -> Result<Option<Vec<u8>>, LineError> {
    let mut line = Vec::new();
    loop {
        let buf = reader.fill_buf().await.map_err(LineError::Io)?;
        if buf.is_empty() {
            return Ok((!line.is_empty()).then_some(line));
        }
        let (take, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(end) => (end + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + take > max.saturating_add(2) {
            // Over the limit: the rest of the line is not read into memory.
            return Err(LineError::TooLong(line.len() + take));
        }
        line.extend_from_slice(&buf[..take]);
        reader.consume(take);
        if done {
            while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                line.pop();
            }
            return Ok(Some(line));
        }
    }
}
