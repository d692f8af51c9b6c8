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
//! whose next read would fail with `EAGAIN`). A Unix socket (what clients
//! built on Node launch servers with: libuv's stdio pipes are socket pairs)
//! cannot be reopened; it is made non-blocking while it is served, and made
//! blocking again when it is dropped. Anything else (a file, a terminal, no
//! `/proc`, a runtime without IO) is left to the threads, which serve every
//! kind of stream.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::unix::pipe::{Receiver, Sender};

/// A stream read or written on the runtime.
pub(crate) type Input = Box<dyn AsyncRead + Unpin + Send>;
/// A stream written on the runtime.
pub(crate) type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// A non-blocking reader of the pipe or Unix socket `input` reads, if it is
/// one.
pub(crate) fn reader(input: &File) -> Option<Input> {
    if let Some(reopened) = reopen(input, Direction::Read) {
        return register(|| Receiver::from_file(reopened)).map(|pipe| Box::new(pipe) as Input);
    }
    Socket::serve(input).map(|socket| Box::new(socket) as Input)
}

/// A non-blocking writer of the pipe or Unix socket `output` writes, if it
/// is one.
pub(crate) fn writer(output: &File) -> Option<Output> {
    if let Some(reopened) = reopen(output, Direction::Write) {
        return register(|| Sender::from_file(reopened)).map(|pipe| Box::new(pipe) as Output);
    }
    Socket::serve(output).map(|socket| Box::new(socket) as Output)
}

/// A Unix socket served on the runtime: non-blocking until dropped, then
/// blocking again, as the description it shares with the saved descriptor
/// (restored on fd 0 or 1 afterwards) was.
struct Socket(Option<tokio::net::UnixStream>);

impl Socket {
    fn serve(file: &File) -> Option<Socket> {
        if !file.metadata().ok()?.file_type().is_socket() {
            return None;
        }
        let stream = std::os::unix::net::UnixStream::from(OwnedFd::from(file.try_clone().ok()?));
        // Not a Unix socket (a TCP connection, say): left to the threads.
        stream.local_addr().ok()?;
        stream.set_nonblocking(true).ok()?;
        match register(|| tokio::net::UnixStream::from_std(stream.try_clone()?)) {
            Some(stream) => Some(Socket(Some(stream))),
            None => {
                let _ = stream.set_nonblocking(false);
                None
            }
        }
    }

    fn stream(&mut self) -> Pin<&mut tokio::net::UnixStream> {
        Pin::new(self.0.as_mut().expect("a socket being served"))
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        if let Some(stream) = self.0.take().and_then(|stream| stream.into_std().ok()) {
            let _ = stream.set_nonblocking(false);
        }
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.stream().poll_read(cx, buf)
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.stream().poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.stream().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.stream().poll_shutdown(cx)
    }
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
fn register<T>(register: impl FnOnce() -> io::Result<T>) -> Option<T> {
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
        let reopened = reopen(&read, Direction::Read).unwrap();
        assert!(is_nonblocking(reopened.as_raw_fd()));
        write.write_all(b"hello\n").unwrap();
        let mut got = [0; 6];
        reader.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"hello\n");

        let (mut read, write) = pipe();
        let mut writer = writer(&write).expect("a pipe is served on the runtime");
        assert!(!is_nonblocking(write.as_raw_fd()));
        let reopened = reopen(&write, Direction::Write).unwrap();
        assert!(is_nonblocking(reopened.as_raw_fd()));
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
    async fn a_unix_socket_is_served_non_blocking_then_made_blocking_again() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let served = File::from(OwnedFd::from(ours));
        let mut peer = theirs;
        {
            let mut reader = reader(&served).expect("a Unix socket is served on the runtime");
            let mut writer = writer(&served).expect("a Unix socket is served on the runtime");
            assert!(
                is_nonblocking(served.as_raw_fd()),
                "the shared description, while served"
            );
            peer.write_all(b"request\n").unwrap();
            let mut got = [0; 8];
            reader.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"request\n");
            writer.write_all(b"answer\n").await.unwrap();
            let mut got = [0; 7];
            peer.read_exact(&mut got).unwrap();
            assert_eq!(&got, b"answer\n");
        }
        assert!(
            !is_nonblocking(served.as_raw_fd()),
            "blocking again once dropped"
        );
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
