//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! Framing lives in `framing`, the fd-1 guard in `redirect`; this module drives
//! them: one task reads and routes, calls run as tasks, and one thread writes.

mod framing;
#[cfg(unix)]
mod redirect;

use std::io::{self, BufWriter, Write};

use tokio::io::{AsyncRead, BufReader};
use tokio::sync::mpsc;
use typed_mcp_core::Facts;
use typed_mcp_core::router::oversized_answer;

use crate::dispatch::{Connection, Outbox};
use crate::server::Server;
use framing::{Frame, LineReader};

impl Server {
    /// Serves MCP over this process's stdin and stdout until stdin ends.
    ///
    /// While it runs, file descriptor 1 is pointed at stderr: `println!`, C code
    /// writing to fd 1 and child processes all land on stderr, and only the
    /// server writes the protocol stream. Likewise fd 0 reads `/dev/null`, so a
    /// child process cannot consume requests meant for the server.
    ///
    /// End of stdin returns `Ok(())` once the calls in flight have answered; a
    /// read or write failure returns the error.
    ///
    /// Any tokio runtime works. A current-thread runtime
    /// (`#[tokio::main(flavor = "current_thread")]`) is the cheapest for stdio:
    /// the measured CPU per call is about half that of the multi-thread default,
    /// and handlers declared with `blocking_handler` still run off the executor.
    pub async fn serve_stdio(self) -> io::Result<()> {
        #[cfg(unix)]
        {
            let (guard, streams) = redirect::StdioRedirect::install()?;
            let input = tokio::fs::File::from_std(streams.input);
            let result = self.serve_io(input, streams.output).await;
            drop(guard);
            result
        }
        #[cfg(not(unix))]
        {
            self.serve_io(tokio::io::stdin(), io::stdout()).await
        }
    }

    /// Serves newline-delimited JSON-RPC read from `input` and written to
    /// `output` until `input` ends (the transport behind [`Server::serve_stdio`],
    /// usable with pipes, sockets or in-memory buffers).
    pub async fn serve_io<R, W>(self, input: R, output: W) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: Write + Send + 'static,
    {
        let max = self.limits().max_message_bytes;
        let (outbox, rx) = Outbox::channel();
        let writer = std::thread::Builder::new()
            .name("typed-mcp-stdout".into())
            .spawn(move || write_loop(output, rx))?;
        let connection = Connection::new(self);
        let mut lines = LineReader::new(BufReader::with_capacity(64 * 1024, input), max);
        let read_result = loop {
            let frame = match lines.next().await {
                Ok(Some(frame)) => frame,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            let delivered = match frame {
                Frame::Line(line) if line.iter().all(u8::is_ascii_whitespace) => true,
                Frame::Line(line) => {
                    connection.accept(&line, &Facts::NONE, &outbox);
                    !writer.is_finished()
                }
                Frame::Oversized(len) => outbox.send(oversized_answer(len, max).body),
            };
            if !delivered {
                break Ok(());
            }
        };
        connection.drain().await;
        // An empty message tells the writer to flush and stop, even if a handler
        // still holds a context (and so a clone of the outbox).
        outbox.send(Vec::new());
        let write_result = tokio::task::spawn_blocking(move || writer.join())
            .await
            .map_err(io::Error::other)?
            .map_err(|_| io::Error::other("the stdout writer thread panicked"))?;
        read_result.and(write_result)
    }
}

fn write_loop<W: Write>(output: W, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, output);
    while let Some(message) = rx.blocking_recv() {
        if message.is_empty() {
            break;
        }
        out.write_all(&message)?;
        out.write_all(b"\n")?;
        // Flush when nothing else is queued: batches under load, prompt when idle.
        if rx.is_empty() {
            out.flush()?;
        }
    }
    out.flush()
}
