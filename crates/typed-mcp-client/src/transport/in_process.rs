//! In process: a [`typed_mcp::Server`] driven through its
//! [`Connection`](typed_mcp::transport::Connection), the seam every transport
//! is written against, with no bytes on a pipe or socket. Each request gets an
//! outbox of its own; what the server queues there is this request's stream.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;
use typed_mcp::transport::{Accepted, Connection, Inbound, Inbox, Message, Outbox};

use super::{Exchange, Limits, Outgoing, PER_REQUEST_BACKLOG, ServerRequests};
use crate::client::NotificationSink;
use crate::error::ClientError;

/// A server in this process.
pub(crate) struct InProcessWire {
    connection: Arc<Connection>,
    limits: Limits,
    server_requests: ServerRequests,
    notifications: NotificationSink,
}

impl std::fmt::Debug for InProcessWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessWire").finish_non_exhaustive()
    }
}

impl InProcessWire {
    pub(crate) fn new(
        server: typed_mcp::Server,
        limits: Limits,
        server_requests: ServerRequests,
        notifications: NotificationSink,
    ) -> Self {
        InProcessWire {
            connection: Arc::new(Connection::new(server)),
            limits,
            server_requests,
            notifications,
        }
    }

    /// Hands one request to the server; its messages arrive on the exchange.
    pub(crate) async fn open(&self, out: Outgoing<'_>) -> Result<Exchange, ClientError> {
        let (accepted, inbox) = exchange(&self.connection, &out.body, Inbound::default()).await;
        if matches!(accepted, Accepted::Initialized { .. }) {
            // The session's own messages (resource updates) go to the
            // notification callback.
            let (stream, updates) = Outbox::channel();
            if self.connection.attach_server_stream(stream) {
                tokio::spawn(forward_updates(
                    updates,
                    self.limits,
                    self.notifications.clone(),
                ));
            }
        }
        let (tx, rx) = mpsc::channel(PER_REQUEST_BACKLOG);
        tokio::spawn(forward(
            inbox,
            tx,
            self.limits,
            self.server_requests.clone(),
        ));
        Ok(Exchange {
            incoming: rx,
            session_id: None,
        })
    }

    /// Hands a notification or a response to the server.
    pub(crate) async fn send(&self, body: &[u8]) -> Result<(), ClientError> {
        exchange(&self.connection, body, Inbound::default()).await;
        Ok(())
    }

    /// Ends the connection's session and calls.
    pub(crate) async fn close(&self) {
        self.connection.end_session().await;
    }
}

/// Hands one message to the connection, with what a transport knows of it:
/// what the connection did with it, and the stream of what the server sends
/// for it (which ends once the server has nothing more to send). The client
/// and the [`testing`](crate::testing) probe both go through here.
pub(crate) async fn exchange(
    connection: &Connection,
    body: &[u8],
    inbound: Inbound<'_>,
) -> (Accepted, Inbox) {
    let (outbox, inbox) = Outbox::channel();
    let accepted = connection.accept(body, inbound, &outbox).await;
    // Only the server's clones remain: the inbox ends when they do.
    drop(outbox);
    (accepted, inbox)
}

async fn forward(
    mut inbox: Inbox,
    tx: mpsc::Sender<Result<Value, ClientError>>,
    limits: Limits,
    server_requests: ServerRequests,
) {
    loop {
        let out = tokio::select! {
            out = inbox.recv() => out,
            () = tx.closed() => return,
        };
        let Some(out) = out else { return };
        let message = match limits.parse(out.body(), String::new) {
            Ok(message) => message,
            Err(e) => {
                let _ = tx.send(Err(e)).await;
                return;
            }
        };
        match out.into_message() {
            Message::Request(_) => {
                let _ = server_requests.send(message).await;
            }
            Message::Reply(_) => {
                let _ = tx.send(Ok(message)).await;
                return;
            }
            Message::Notification(_) => {
                if tx.send(Ok(message)).await.is_err() {
                    return;
                }
            }
        }
    }
}

async fn forward_updates(mut inbox: Inbox, limits: Limits, notifications: NotificationSink) {
    while let Some(out) = inbox.recv().await {
        if let Ok(message) = limits.parse(out.body(), String::new) {
            notifications(&message);
        }
    }
}
