//! Finding and running the binaries: the CLI, the quickstart, the fixture.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::thread;
use std::time::Duration;

/// Long enough for a loaded machine; nothing asserts on timing.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// What one run of the CLI left.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

impl Run {
    /// Panics unless the run exited 0.
    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(self.code, 0, "expected success: {self:#?}");
        self
    }

    /// Panics unless the run exited with `code`.
    #[track_caller]
    pub fn code(self, code: i32) -> Run {
        assert_eq!(self.code, code, "expected exit code {code}: {self:#?}");
        self
    }

    /// stdout as JSON.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:#?}"))
    }
}

/// The CLI binary.
pub fn cli_path() -> &'static str {
    env!("CARGO_BIN_EXE_typed-mcp")
}

/// Runs the CLI with these arguments and environment variables.
pub fn run_with(args: &[&str], env: &[(&str, &str)], dir: Option<&Path>) -> Run {
    let mut command = Command::new(cli_path());
    command
        .args(args)
        .env_remove("LOCK_FIXTURE_VARIANT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let child = command.spawn().expect("the CLI starts");
    let (tx, rx) = mpsc::channel();
    let id = child.id();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(PATIENCE) {
        Ok(output) => output.expect("the CLI's output is read"),
        Err(_) => {
            // Not ours to leave running: stop exactly the process we started.
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            panic!("typed-mcp {args:?} did not finish within {PATIENCE:?}");
        }
    };
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs the CLI with these arguments.
pub fn run(args: &[&str]) -> Run {
    run_with(args, &[], None)
}

/// `args`, then `--`, then the server words.
pub fn with_server<'a>(args: &[&'a str], server: &[&'a str]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.push("--");
    all.extend_from_slice(server);
    all
}

/// `target/<profile>`, where this test binary lives (in `deps/`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary is in target/<profile>/deps")
        .to_path_buf()
}

/// Builds an example with the cargo running these tests (a no-op when it is
/// up to date) and returns its path.
fn example(package: &str, name: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let profile = profile_dir();
    let mut command = Command::new(cargo);
    command
        .current_dir(&root)
        .args(["build", "--quiet", "-p", package, "--example", name]);
    if profile.file_name().is_some_and(|p| p == "release") {
        command.arg("--release");
    }
    if let Some(target) = profile.parent() {
        command.env("CARGO_TARGET_DIR", target);
    }
    let status = command.status().expect("cargo runs");
    assert!(
        status.success(),
        "cargo build -p {package} --example {name} failed"
    );
    let path = profile
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// The quickstart example of typed-mcp-http.
pub fn quickstart() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        example("typed-mcp-http", "quickstart")
            .to_string_lossy()
            .into_owned()
    })
}

/// This crate's lock fixture example.
pub fn fixture() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        example("typed-mcp-cli", "lock_fixture")
            .to_string_lossy()
            .into_owned()
    })
}

/// A server on Streamable HTTP on a free loopback port; stopped when dropped.
/// Its stderr is kept, line by line.
pub struct HttpServer {
    child: Child,
    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl HttpServer {
    /// The quickstart, serving `--http 127.0.0.1:0`.
    pub fn quickstart() -> HttpServer {
        HttpServer::start(quickstart(), &["--http", "127.0.0.1:0"])
    }

    /// Starts `program` with `args` and waits for the stderr line that names
    /// its address (the first `http://` in it).
    pub fn start(program: &str, args: &[&str]) -> HttpServer {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} starts: {e}"));
        let pipe = child.stderr.take().expect("piped stderr");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&stderr);
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            // Keep reading so the server never blocks on a full pipe.
            let mut told = false;
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if !told && let Some(at) = line.find("http://") {
                    let _ = tx.send(line[at..].trim().to_owned());
                    told = true;
                }
                kept.lock().unwrap_or_else(|e| e.into_inner()).push(line);
            }
        });
        match rx.recv_timeout(PATIENCE) {
            Ok(url) => HttpServer { child, url, stderr },
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                let said = stderr.lock().unwrap_or_else(|e| e.into_inner()).join("\n");
                panic!("{program} {args:?} did not say where it serves; its stderr:\n{said}");
            }
        }
    }

    /// Its stderr lines so far, and forgets them.
    pub fn take_stderr(&self) -> Vec<String> {
        std::mem::take(&mut *self.stderr.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
