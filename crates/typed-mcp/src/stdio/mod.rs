//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! Framing lives in `framing`, the fd-1 guard in `redirect`; this module drives
//! them: one task reads and routes, calls run as tasks, and one thread writes.

mod framing;
mod input;
#[cfg(unix)]
mod redirect;

use std::io::{self, BufWriter, Write};
use std::pin::pin;

use futures_util::future::{Either, select};
use tokio::io::{AsyncRead, BufReader};
use typed_mcp_core::router::oversized_answer;

use crate::server::Server;
use crate::transport::{Connection, Inbound, Inbox, Message, Outbox, Reply, Shutdown};
use framing::{Frame, LineReader};

impl Server {
    /// Serves MCP over this process's stdin and stdout until stdin ends.
    ///
    /// While it runs, file descriptor 1 is pointed at stderr: `println!`, C code
    /// writing to fd 1 and child processes all land on stderr, and only the
    /// server writes the protocol stream. Likewise fd 0 reads `/dev/null`, so a
    /// child process cannot consume requests meant for the server.
    ///
    /// End of stdin returns `Ok(())` once the calls in flight have answered, or
    /// once the [`drain_timeout`](crate::ServerBuilder::drain_timeout) passed
    /// and the rest were cancelled; a read or write failure returns the error.
    ///
    /// Any tokio runtime works. A current-thread runtime
    /// (`#[tokio::main(flavor = "current_thread")]`) is the cheapest for stdio:
    /// the measured CPU per call is about half that of the multi-thread default,
    /// and [`blocking`](crate::blocking) work still runs off the executor.
    /// Stdin is read on a thread of its own, so a server stopped by a
    /// [`Shutdown`] while the client keeps its end open still exits. (A
    /// blocking handler still running when `main` returns keeps the runtime
    /// from shutting down: end such a process with `std::process::exit`.)
    pub async fn serve_stdio(self) -> io::Result<()> {
        self.serve_stdio_until(Shutdown::new()).await
    }

    /// Like [`serve_stdio`](Self::serve_stdio), and also stops reading when
    /// `shutdown` is triggered (e.g. on SIGTERM), draining as at end of input.
    pub async fn serve_stdio_until(self, shutdown: Shutdown) -> io::Result<()> {
        #[cfg(unix)]
        {
            let (guard, streams) = redirect::StdioRedirect::install()?;
            let input = input::ThreadReader::spawn(streams.input)?;
            let result = self.serve_io_until(input, streams.output, shutdown).await;
            drop(guard);
            result
        }
        #[cfg(not(unix))]
        {
            self.serve_io_until(tokio::io::stdin(), io::stdout(), shutdown)
                .await
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
        self.serve_io_until(input, output, Shutdown::new()).await
    }

    /// Like [`serve_io`](Self::serve_io), and also stops reading when
    /// `shutdown` is triggered, draining as at end of input.
    pub async fn serve_io_until<R, W>(
        self,
        input: R,
        output: W,
        shutdown: Shutdown,
    ) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: Write + Send + 'static,
    {
        let max = self.limits().max_message_bytes;
        let (outbox, inbox) = Outbox::channel();
        let writer = std::thread::Builder::new()
            .name("typed-mcp-stdout".into())
            .spawn(move || write_loop(output, inbox))?;
        let connection = Connection::new(self);
        // A dated client's session lives as long as the pipe: its
        // server-initiated messages (resource updates) share stdout.
        connection.attach_server_stream(outbox.clone());
        let mut lines = LineReader::new(BufReader::with_capacity(64 * 1024, input), max);
        // One waiter on the shutdown for the whole stream, not one per line.
        let mut stop = std::pin::pin!(shutdown.wait());
        let read_result = loop {
            // `select` polls the shutdown first, as a biased select would.
            let frame = match select(stop.as_mut(), pin!(lines.next())).await {
                Either::Left(((), _)) => break Ok(()),
                Either::Right((frame, _)) => frame,
            };
            let frame = match frame {
                Ok(Some(frame)) => frame,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            match frame {
                Frame::Line(line) if line.iter().all(u8::is_ascii_whitespace) => {}
                Frame::Line(line) => {
                    connection.accept(&line, Inbound::default(), &outbox).await;
                }
                Frame::Oversized(len) => {
                    let answer = oversized_answer(len, max);
                    outbox
                        .send(Message::Reply(Reply::new(answer.body, answer.http_status)))
                        .await;
                }
            }
            if writer.is_finished() {
                break Ok(());
            }
        };
        connection.drain().await;
        // The writer stops once what was queued is written, even if a handler
        // still holds a context (and so a clone of the outbox).
        outbox.end();
        let write_result = tokio::task::spawn_blocking(move || writer.join())
            .await
            .map_err(io::Error::other)?
            .map_err(|_| io::Error::other("the stdout writer thread panicked"))?;
        read_result.and(write_result)
    }
}

fn write_loop<W: Write>(output: W, mut inbox: Inbox) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(64 * 1024, output);
    while let Some(message) = inbox.blocking_recv() {
        out.write_all(message.body())?;
        out.write_all(b"\n")?;
        // The message's room in the outbox frees once it is in the buffer.
        drop(message);
        // Flush when nothing else is queued: batches under load, prompt when idle.
        if inbox.is_empty() {
            out.flush()?;
        }
    }
    out.flush()
}
