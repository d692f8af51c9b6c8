//! While a stdio server runs, the protocol streams are private: file descriptor
//! 1 points at stderr, so stray `println!`s, C libraries and child processes
//! cannot corrupt the output, and fd 0 points at `/dev/null`, so a child process
//! that reads its stdin cannot swallow requests. The server reads and writes
//! private, close-on-exec duplicates of the original descriptors.
//!
//! This is the one module of the crate that uses `unsafe`.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Restores fds 0 and 1 when dropped.
#[derive(Debug)]
pub(crate) struct StdioRedirect {
    saved_stdin: OwnedFd,
    saved_stdout: OwnedFd,
}

/// The protocol's private input and output.
pub(crate) struct ProtocolStreams {
    pub(crate) input: File,
    pub(crate) output: File,
}

/// A close-on-exec duplicate of `fd`, numbered 3 or above.
fn duplicate(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) only creates a new descriptor; `fd` is one
    // of the standard descriptors, open for the life of the process, and on
    // failure nothing is created.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `dup` is a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(dup) })
}

/// Points `target` at whatever `source` refers to.
fn point(target: RawFd, source: RawFd) -> io::Result<()> {
    // SAFETY: dup2 atomically re-points `target` (a standard descriptor) at the
    // open description of `source`; both are valid open descriptors.
    if unsafe { libc::dup2(source, target) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Asks the kernel to hold up to `bytes` in the pipe behind `fd`; the size it
/// granted, or `None` when it refused (a limit of the system or the user).
pub(crate) fn grow_pipe(fd: RawFd, bytes: usize) -> Option<usize> {
    let bytes = libc::c_int::try_from(bytes).ok()?;
    // SAFETY: F_SETPIPE_SZ only changes the capacity of the pipe behind an
    // open descriptor; a descriptor that is no pipe makes it fail.
    let granted = unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, bytes) };
    usize::try_from(granted).ok()
}

impl StdioRedirect {
    /// Takes the protocol streams private and returns the guard with them.
    pub(crate) fn install() -> io::Result<(StdioRedirect, ProtocolStreams)> {
        io::stdout().flush()?;
        let saved_stdin = duplicate(0)?;
        let saved_stdout = duplicate(1)?;
        let input = File::from(saved_stdin.try_clone()?);
        let output = File::from(saved_stdout.try_clone()?);
        let null = OpenOptions::new().read(true).open("/dev/null")?;
        point(0, null.as_raw_fd())?;
        point(1, 2)?;
        Ok((
            StdioRedirect {
                saved_stdin,
                saved_stdout,
            },
            ProtocolStreams { input, output },
        ))
    }
}

impl Drop for StdioRedirect {
    fn drop(&mut self) {
        let _ = io::stdout().flush();
        let _ = point(1, self.saved_stdout.as_raw_fd());
        let _ = point(0, self.saved_stdin.as_raw_fd());
    }
}
