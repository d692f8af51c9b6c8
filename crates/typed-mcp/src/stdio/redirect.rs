//! While a stdio server runs, file descriptor 1 points at stderr, so stray
//! `println!`s, C libraries and child processes cannot corrupt the protocol
//! stream; the protocol is written to a private duplicate of the real stdout.
//!
//! This is the one module of the crate that uses `unsafe`.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// Restores fd 1 when dropped.
#[derive(Debug)]
pub(crate) struct StdoutRedirect {
    saved: OwnedFd,
}

impl StdoutRedirect {
    /// Points fd 1 at stderr and returns the guard and a writer for the real
    /// stdout (close-on-exec, so children never inherit it).
    pub(crate) fn install() -> io::Result<(StdoutRedirect, File)> {
        io::stdout().flush()?;
        // SAFETY: fcntl with F_DUPFD_CLOEXEC only duplicates a descriptor; fd 1
        // is valid for the life of the process (or the call fails and we return
        // the error).
        let saved: RawFd = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
        if saved < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `saved` is a fresh descriptor we own exclusively.
        let saved = unsafe { OwnedFd::from_raw_fd(saved) };
        let writer = File::from(saved.try_clone()?);
        // SAFETY: dup2 atomically re-points fd 1 at whatever fd 2 refers to;
        // both descriptors are valid.
        if unsafe { libc::dup2(2, 1) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((StdoutRedirect { saved }, writer))
    }
}

impl Drop for StdoutRedirect {
    fn drop(&mut self) {
        let _ = io::stdout().flush();
        // SAFETY: re-points fd 1 at the saved duplicate of the original stdout,
        // which this guard owns and which is still open.
        unsafe {
            libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&self.saved), 1);
        }
    }
}
