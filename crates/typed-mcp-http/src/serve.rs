//! Serving a router or service over HTTP/1.1 straight on hyper.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::time::Duration;

use axum::BoxError;
use axum::body::HttpBody;
use bytes::Bytes;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower_service::Service;

/// How long accepting pauses after an error that is not one connection's
/// (out of file descriptors, out of memory): retrying at once would spin.
const ACCEPT_PAUSE: Duration = Duration::from_secs(1);

/// Serves `app` (a [`Router`](axum::Router), an
/// [`EndpointService`](crate::EndpointService), or any service that answers
/// every request) on `listener` over HTTP/1.1 until `shutdown` completes; then
/// stops accepting, lets every open connection finish the request it is
/// serving (keep-alive connections close after it), and returns once the
/// last one has closed.
///
/// It does what `axum::serve(listener, app).with_graceful_shutdown(shutdown)`
/// does, with less work and memory per connection: each connection goes
/// straight to hyper's HTTP/1.1 server, where `axum::serve` first reads the
/// connection's opening bytes to tell HTTP/1.1 from HTTP/2 (which doubles
/// hyper's read buffer) and rebuilds the router's tables for every
/// connection. With the quickstart that is about 7 KiB less per open
/// connection; the CPU per request on a keep-alive connection is the same.
/// An application that needs HTTP/2, TLS or axum's `ConnectInfo` serves the
/// same router with `axum::serve` or its own server; the endpoint behaves the
/// same either way.
///
/// An accept error that concerns one connection (it was reset or aborted
/// before it was accepted) is skipped. Any other (the process is out of file
/// descriptors) is logged with `tracing` and accepting pauses for a second,
/// while the open connections are still served. A connection that sends
/// something other than HTTP/1.1 gets hyper's `400` and is closed; the
/// others are not affected.
///
/// hyper's HTTP/1.1 defaults apply: keep-alive, and a request head of at
/// most about 400 KiB (`431` beyond). There is no timeout on a client that
/// is slow to send its request head; put a reverse proxy in front of a
/// server that faces clients it does not trust.
///
/// ```no_run
/// use typed_mcp::Server;
/// use typed_mcp::transport::Shutdown;
/// use typed_mcp_http::HttpServer;
///
/// # async fn run(server: Server) -> Result<(), Box<dyn std::error::Error>> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
/// let shutdown = Shutdown::new();
/// let app = HttpServer::new(server, listener.local_addr()?)
///     .shutdown(shutdown.clone())
///     .mount("/mcp")?;
/// // Returns once `shutdown.trigger()` was called and the calls in flight
/// // have been answered.
/// typed_mcp_http::serve(listener, app, shutdown.wait()).await;
/// # Ok(())
/// # }
/// ```
pub async fn serve<S, B>(listener: TcpListener, app: S, shutdown: impl Future<Output = ()>)
where
    S: Service<Request<Incoming>, Response = Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let connections = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) if concerns_one_connection(&e) => continue,
                Err(e) => {
                    tracing::error!(error = %e, "accepting a connection failed; accepting again in {ACCEPT_PAUSE:?}");
                    tokio::select! {
                        () = tokio::time::sleep(ACCEPT_PAUSE) => continue,
                        () = &mut shutdown => break,
                    }
                }
            },
            () = &mut shutdown => break,
        };
        let app = app.clone();
        let watcher = connections.watcher();
        // The connection (and its read buffer) is made on the worker that
        // serves it, not here: allocated by the accepting thread, every
        // connection's buffers landed side by side in its heap, and that
        // heap stayed resident (about 0.6 KiB more per open connection).
        tokio::spawn(async move {
            let connection = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), TowerToHyperService::new(app));
            if let Err(e) = watcher.watch(connection).await {
                // A client that went away mid-request, or sent garbage.
                tracing::debug!(error = %e, "an HTTP connection ended with an error");
            }
        });
    }
    // New connections are refused from here on.
    drop(listener);
    connections.shutdown().await;
}

/// An accept error that is one connection's fault, not the listener's.
fn concerns_one_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}
