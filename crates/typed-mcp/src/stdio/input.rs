//! Standard input read on a thread of its own.
//!
//! A read of fd 0 blocks until a line or end of input arrives. Done on
//! tokio's blocking pool (as `tokio::fs::File` does), such a read keeps the
//! runtime from shutting down after a [`Shutdown`](crate::Shutdown): the
//! process would hang until the client wrote again. A plain thread is not
//! waited for, so the process exits as soon as `main` returns.

use std::io::{self, Read};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// How much one read takes from the pipe.
const CHUNK: usize = 64 * 1024;
/// Chunks read ahead of the server: the reader stops when the server lags.
const AHEAD: usize = 2;

/// An [`AsyncRead`] over a blocking reader driven by its own thread.
pub(crate) struct ThreadReader {
    chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    offset: usize,
    done: bool,
}

impl ThreadReader {
    pub(crate) fn spawn<R: Read + Send + 'static>(mut input: R) -> io::Result<Self> {
        let (tx, chunks) = mpsc::channel(AHEAD);
        std::thread::Builder::new()
            .name("typed-mcp-stdin".into())
            .spawn(move || {
                // One buffer for every read; each chunk sent is only as large
                // as what the read returned.
                let mut buffer = vec![0; CHUNK];
                loop {
                    let sent = match input.read(&mut buffer) {
                        Ok(0) => break,
                        Ok(n) => tx.blocking_send(Ok(buffer[..n].to_vec())),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            let _ = tx.blocking_send(Err(e));
                            break;
                        }
                    };
                    // The server stopped reading.
                    if sent.is_err() {
                        break;
                    }
                }
            })?;
        Ok(ThreadReader {
            chunks,
            current: Vec::new(),
            offset: 0,
            done: false,
        })
    }
}

impl AsyncRead for ThreadReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        while this.offset == this.current.len() {
            if this.done {
                return Poll::Ready(Ok(()));
            }
            match ready!(this.chunks.poll_recv(cx)) {
                Some(Ok(chunk)) => {
                    this.current = chunk;
                    this.offset = 0;
                }
                Some(Err(e)) => {
                    this.done = true;
                    return Poll::Ready(Err(e));
                }
                None => {
                    this.done = true;
                    return Poll::Ready(Ok(()));
                }
            }
        }
        let n = buf.remaining().min(this.current.len() - this.offset);
        buf.put_slice(&this.current[this.offset..this.offset + n]);
        this.offset += n;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt as _;

    use super::*;

    #[tokio::test]
    async fn it_yields_what_the_reader_has_then_end_of_input() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut reader = ThreadReader::spawn(io::Cursor::new(data.clone())).unwrap();
        let mut read = Vec::new();
        reader.read_to_end(&mut read).await.unwrap();
        assert_eq!(read, data);
    }
}
