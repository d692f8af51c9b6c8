//! An example (the quickstart, or the memory test's `echo_load`) as a separate
//! process serving HTTP.

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::PATIENCE;

/// An example's binary, built by the cargo running these tests (`cargo test`
/// builds the package's examples already, so this is usually a no-op), in the
/// same profile and target directory.
fn binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<std::sync::Mutex<()>> = OnceLock::new();
    // One cargo at a time: concurrent builds only wait on cargo's lock.
    let _one = BUILT.get_or_init(Default::default).lock();
    {
        let exe = std::env::current_exe().expect("the test binary's path");
        // target/<profile>/deps/it-<hash>
        let profile = exe
            .parent()
            .and_then(Path::parent)
            .expect("the test binary is in target/<profile>/deps")
            .to_path_buf();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build.current_dir(env!("CARGO_MANIFEST_DIR")).args([
            "build",
            "--quiet",
            "-p",
            "typed-mcp-http",
            "--example",
            name,
        ]);
        if profile.file_name().is_some_and(|name| name == "release") {
            build.arg("--release");
        }
        if let Some(target) = profile.parent() {
            build.env("CARGO_TARGET_DIR", target);
        }
        let status = build.status().expect("cargo runs");
        assert!(
            status.success(),
            "building the example {name} failed: {status}"
        );
        let path = profile
            .join("examples")
            .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        assert!(path.exists(), "expected the example at {}", path.display());
        path
    }
}

/// A running example serving HTTP on a free loopback port; killed when
/// dropped.
pub struct Quickstart {
    child: Child,
    /// Where it serves HTTP (unspecified for stdio).
    pub addr: SocketAddr,
    /// Its stdin, kept open for stdio.
    _stdin: Option<ChildStdin>,
}

impl Quickstart {
    /// Starts `quickstart --http 127.0.0.1:0` and waits for the line naming
    /// its address.
    pub fn spawn() -> Quickstart {
        Quickstart::example("quickstart", &["--http", "127.0.0.1:0"])
    }

    /// Starts `quickstart` on stdio, with its stdin open and nothing sent,
    /// and waits until it says it serves.
    pub fn stdio() -> Quickstart {
        let command = Command::new(binary("quickstart"));
        Quickstart::start(command, "quickstart", Stdio::piped(), "on stdin/stdout")
    }

    /// Starts `quickstart --http 127.0.0.1:0` with no file descriptor
    /// numbered `max_fds` or above available to it (`ulimit -n`).
    #[cfg(unix)]
    pub fn with_fd_limit(max_fds: u32) -> Quickstart {
        let mut command = Command::new("sh");
        command
            .args(["-c", r#"ulimit -n "$0" && exec "$@""#])
            .arg(max_fds.to_string())
            .arg(binary("quickstart"))
            .args(["--http", "127.0.0.1:0"]);
        Quickstart::start(command, "quickstart", Stdio::null(), "http://")
    }

    /// Starts the example `name` with `args` and waits for the line naming
    /// its address.
    pub fn example(name: &str, args: &[&str]) -> Quickstart {
        let mut command = Command::new(binary(name));
        command.args(args);
        Quickstart::start(command, name, Stdio::null(), "http://")
    }

    /// Runs `command` (the example `name`) and waits for a stderr line
    /// holding `ready`.
    fn start(mut command: Command, name: &str, stdin: Stdio, ready: &str) -> Quickstart {
        let mut child = command
            .stdin(stdin)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the quickstart starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            // Read to the end, so the server never blocks on a full pipe.
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                let _ = child.kill();
                let _ = child.wait();
                panic!("expected the example {name} to say where it serves, it did not");
            };
            let addr = line
                .split("http://")
                .nth(1)
                .and_then(|rest| rest.split('/').next())
                .and_then(|addr| addr.parse().ok());
            if line.contains(ready) {
                let addr = addr.unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)));
                let stdin = child.stdin.take();
                return Quickstart {
                    child,
                    addr,
                    _stdin: stdin,
                };
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A field of `/proc/<pid>/status` in KiB (e.g. `VmHWM`, the peak RSS).
    pub fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the quickstart's /proc status");
        status
            .lines()
            .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("expected {field} in /proc status, found:\n{status}"))
    }

    /// How many of the file descriptors numbered below `limit` are open.
    #[cfg(unix)]
    pub fn open_fds_below(&self, limit: u32) -> u32 {
        let fds = std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .expect("the quickstart's /proc fd directory");
        let open = fds
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&fd| fd < limit)
            .count();
        u32::try_from(open).expect("a small count")
    }

    /// The CPU time (user and system) the process has used so far, in clock
    /// ticks (`/proc/<pid>/stat`).
    pub fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .expect("the quickstart's /proc stat");
        // The fields after the command name (which may hold spaces), in
        // parentheses: utime and stime are the 12th and 13th of those.
        let after_name = &stat[stat.rfind(')').expect("a command name") + 2..];
        after_name
            .split(' ')
            .skip(11)
            .take(2)
            .map(|ticks| ticks.parse::<u64>().expect("numeric CPU ticks"))
            .sum()
    }

    /// Waits for the process to exit.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("the quickstart's status") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "expected the quickstart to exit, it still runs"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Quickstart {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
