//! Non-blocking pipes for the protocol streams.
//!
//! An MCP client launches its server with pipes on fds 0 and 1. Read and
//! written through tokio's reactor, they need no thread of their own: a
//! request's bytes go from the pipe to the router, and its answer from the
//! outbox to the pipe, on the runtime's own thread, with no hand-off between
//! threads and one write for every answer queued.
//!
//! Each pipe is reopened through `/proc/self/fd` before it is made
//! non-blocking: that opens a new description of the same pipe, so the flag
//! does not reach the description the parent process shares with us (a shell
//! whose next read would fail with `EAGAIN`). Anything else (a file, a
//! terminal, a socket, no `/proc`, a runtime without IO) is left to the
//! threads, which serve every kind of stream.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::panic::{AssertUnwindSafe, catch_unwind};

use tokio::net::unix::pipe::{Receiver, Sender};

/// A non-blocking reader of the pipe `input` reads, if it is one.
pub(crate) fn reader(input: &File) -> Option<Receiver> {
    let reopened = reopen(input, Direction::Read)?;
    register(|| Receiver::from_file(reopened))
}

/// A non-blocking writer of the pipe `output` writes, if it is one.
pub(crate) fn writer(output: &File) -> Option<Sender> {
    let reopened = reopen(output, Direction::Write)?;
    register(|| Sender::from_file(reopened))
}

enum Direction {
    Read,
    Write,
}

/// What a pipe is asked to hold: a large message then crosses it in one
/// write, while the other side works, instead of in 64 KiB turns (Linux's
/// default), each a wait on the reactor. Linux grants up to
/// `/proc/sys/fs/pipe-max-size` (1 MiB by default) and allocates the pages
/// only as they fill.
const PIPE_BYTES: usize = 1 << 20;

/// A new, non-blocking, close-on-exec description of the pipe behind `file`.
fn reopen(file: &File, direction: Direction) -> Option<File> {
    if !file.metadata().ok()?.file_type().is_fifo() {
        return None;
    }
    // O_NONBLOCK at open also keeps a named FIFO from waiting for a peer.
    let reopened = OpenOptions::new()
        .read(matches!(direction, Direction::Read))
        .write(matches!(direction, Direction::Write))
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .ok()?;
    // A refusal (a user over its pipe-pages limit) keeps the default size.
    let _ = super::redirect::grow_pipe(reopened.as_raw_fd(), PIPE_BYTES);
    Some(reopened)
}

/// Registers a pipe with the runtime's reactor. A runtime built without IO
/// (`enable_io`) panics there; the threads serve such a runtime instead.
fn register<T>(register: impl FnOnce() -> std::io::Result<T>) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(register)) {
        Ok(Ok(pipe)) => Some(pipe),
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "stdio: the pipe stays on a thread");
            None
        }
        Err(_) => {
            tracing::warn!(
                "stdio: this tokio runtime has no IO driver (build it with `enable_all()` or \
                 `enable_io()`); stdin and stdout are served by threads instead"
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    fn pipe() -> (File, File) {
        let (read, write) = std::io::pipe().unwrap();
        (
            File::from(std::os::fd::OwnedFd::from(read)),
            File::from(std::os::fd::OwnedFd::from(write)),
        )
    }

    /// Whether `file`'s description is non-blocking, as the kernel reports
    /// its flags (octal) in `/proc/self/fdinfo`.
    fn is_nonblocking(fd: std::os::fd::RawFd) -> bool {
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap();
        let flags = info
            .lines()
            .find_map(|line| line.strip_prefix("flags:"))
            .map(|flags| i32::from_str_radix(flags.trim(), 8).unwrap())
            .unwrap();
        flags & libc::O_NONBLOCK != 0
    }

    #[tokio::test]
    async fn a_pipe_is_reopened_without_touching_the_original_description() {
        let (read, mut write) = pipe();
        let mut reader = reader(&read).expect("a pipe is served on the runtime");
        assert!(
            !is_nonblocking(read.as_raw_fd()),
            "the inherited description stays blocking"
        );
        assert!(is_nonblocking(reader.as_raw_fd()));
        write.write_all(b"hello\n").unwrap();
        let mut got = [0; 6];
        reader.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"hello\n");

        let (mut read, write) = pipe();
        let mut writer = writer(&write).expect("a pipe is served on the runtime");
        assert!(!is_nonblocking(write.as_raw_fd()));
        assert!(is_nonblocking(writer.as_raw_fd()));
        writer.write_all(b"answer\n").await.unwrap();
        let mut got = [0; 7];
        read.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"answer\n");
    }

    #[test]
    fn a_reopened_pipe_holds_a_mebibyte_where_the_system_allows_it() {
        let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .ok()
            .and_then(|max| max.trim().parse().ok())
            .unwrap_or(0);
        let (read, _write) = pipe();
        let reopened = reopen(&read, Direction::Read).expect("a pipe");
        let granted = super::super::redirect::grow_pipe(reopened.as_raw_fd(), PIPE_BYTES);
        if PIPE_BYTES <= max {
            assert!(
                granted.is_some_and(|bytes| bytes >= PIPE_BYTES),
                "{granted:?}"
            );
        }
    }

    #[tokio::test]
    async fn anything_but_a_pipe_is_left_to_the_threads() {
        let file = tempfile_in_target();
        assert!(reader(&file).is_none());
        assert!(writer(&file).is_none());
    }

    #[test]
    fn a_runtime_without_io_is_left_to_the_threads() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (read, write) = pipe();
        let _enter = runtime.enter();
        assert!(reader(&read).is_none());
        assert!(writer(&write).is_none());
    }

    fn tempfile_in_target() -> File {
        let path = std::env::temp_dir().join(format!("typed-mcp-pipe-{}", std::process::id()));
        let file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let _ = std::fs::remove_file(&path);
        file
    }
}
