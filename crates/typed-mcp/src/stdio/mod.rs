//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! Framing lives in `framing`, the fd-1 guard in `redirect`, non-blocking
//! pipes in `pipe`; this module drives them: one task reads and routes, calls
//! run as tasks, and a writer drains the outbox. Over pipes (how clients launch
//! servers) everything runs on the runtime; other streams are read and written
//! by threads of their own.

mod framing;
mod input;
#[cfg(unix)]
mod pipe;
#[cfg(unix)]
mod redirect;

use std::io::{self, BufWriter, Write};
use std::pin::pin;

use futures_util::future::{Either, select};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
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
    /// Any tokio runtime with its IO and time drivers works (`#[tokio::main]`,
    /// or a builder's `enable_all()`). A current-thread runtime
    /// (`#[tokio::main(flavor = "current_thread")]`) is the cheapest for stdio:
    /// the measured CPU per call is about half that of the multi-thread default,
    /// and [`blocking`](crate::blocking) work still runs off the executor.
    /// On unix, pipes (how clients launch servers) are read and written on the
    /// runtime, without blocking it; a file, a terminal or a runtime without
    /// IO is served by a reader and a writer thread. Either way a server stopped
    /// by a [`Shutdown`] while the client keeps its end open still exits. (A
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
            let input: pipe::Input = match pipe::reader(&streams.input) {
                Some(pipe) => pipe,
                None => Box::new(input::ThreadReader::spawn(streams.input)?),
            };
            let writer = match pipe::writer(&streams.output) {
                Some(pipe) => Writer::task(pipe),
                None => Writer::thread(streams.output),
            };
            let result = self.serve_lines(input, writer, shutdown).await;
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
        self.serve_lines(input, Writer::thread(output), shutdown)
            .await
    }

    async fn serve_lines<R: AsyncRead + Unpin>(
        self,
        input: R,
        writer: Writer,
        shutdown: Shutdown,
    ) -> io::Result<()> {
        let max = self.limits().max_message_bytes;
        let (outbox, inbox) = Outbox::channel();
        let writer = writer.start(inbox)?;
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
        let write_result = writer.join().await;
        read_result.and(write_result)
    }
}

/// How the output stream will be written.
enum Writer {
    /// By a thread of its own: any `Write` (a file, a terminal, a buffer).
    Thread(Box<dyn FnOnce(Inbox) -> io::Result<()> + Send>),
    /// By a task on the runtime: a non-blocking pipe.
    Task(Box<dyn FnOnce(Inbox) -> tokio::task::JoinHandle<io::Result<()>> + Send>),
}

/// The writer, running.
enum Writing {
    Thread(std::thread::JoinHandle<io::Result<()>>),
    Task(tokio::task::JoinHandle<io::Result<()>>),
}

impl Writer {
    fn thread<W: Write + Send + 'static>(output: W) -> Writer {
        Writer::Thread(Box::new(move |inbox| write_loop(output, inbox)))
    }

    // Only unix has the non-blocking pipes.
    #[cfg_attr(not(unix), allow(dead_code))]
    fn task<W: AsyncWrite + Unpin + Send + 'static>(output: W) -> Writer {
        Writer::Task(Box::new(move |inbox| {
            tokio::spawn(write_task(output, inbox))
        }))
    }

    fn start(self, inbox: Inbox) -> io::Result<Writing> {
        Ok(match self {
            Writer::Thread(run) => Writing::Thread(
                std::thread::Builder::new()
                    .name("typed-mcp-stdout".into())
                    .spawn(move || run(inbox))?,
            ),
            Writer::Task(spawn) => Writing::Task(spawn(inbox)),
        })
    }
}

impl Writing {
    fn is_finished(&self) -> bool {
        match self {
            Writing::Thread(thread) => thread.is_finished(),
            Writing::Task(task) => task.is_finished(),
        }
    }

    async fn join(self) -> io::Result<()> {
        match self {
            Writing::Thread(thread) => tokio::task::spawn_blocking(move || thread.join())
                .await
                .map_err(io::Error::other)?
                .map_err(|_| io::Error::other("the stdout writer thread panicked"))?,
            Writing::Task(task) => task
                .await
                .map_err(|_| io::Error::other("the stdout writer task panicked"))?,
        }
    }
}

/// What the task writer gathers before it writes; a larger message is written
/// from where it lies.
const BATCH: usize = 64 * 1024;

/// Writes every message queued in one write, as soon as the first arrives:
/// batches under load, prompt when idle.
async fn write_task<W: AsyncWrite + Unpin>(mut output: W, mut inbox: Inbox) -> io::Result<()> {
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(first) = inbox.recv().await {
        let mut next = Some(first);
        while let Some(message) = next {
            let body = message.body();
            if batch.len() + body.len() + 1 > BATCH && !batch.is_empty() {
                output.write_all(&batch).await?;
                batch.clear();
            }
            if body.len() + 1 > BATCH {
                output.write_all(body).await?;
                output.write_all(b"\n").await?;
            } else {
                batch.extend_from_slice(body);
                batch.push(b'\n');
            }
            // The message's room in the outbox frees once it is in the batch.
            drop(message);
            next = inbox.try_recv();
        }
        if !batch.is_empty() {
            output.write_all(&batch).await?;
            batch.clear();
        }
    }
    output.flush().await
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
