//! A legacy session's subscriptions: [`Client::listen`](crate::Client::listen)
//! on a dated revision subscribes with `resources/subscribe`, and the
//! session's own messages (stdout on stdio, the GET event stream on
//! Streamable HTTP, the session stream in process) are handed out here to
//! every open subscription they concern, as a 2026-07-28 listen stream would
//! carry them.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::mpsc;
use typed_mcp_core::wire::{SubscriptionFilter, methods};

use crate::error::ClientError;
use crate::transport::PER_REQUEST_BACKLOG;

/// What one legacy subscription asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct LegacyFilter {
    /// The resources subscribed to (an update of one beneath them concerns
    /// them too, as a 2026-07-28 subscription's does).
    pub uris: Vec<String>,
    tools: bool,
    prompts: bool,
    resources: bool,
}

impl LegacyFilter {
    pub(crate) fn new(filter: &SubscriptionFilter) -> Self {
        LegacyFilter {
            uris: filter.resource_subscriptions.clone().unwrap_or_default(),
            tools: filter.tools_list_changed == Some(true),
            prompts: filter.prompts_list_changed == Some(true),
            resources: filter.resources_list_changed == Some(true),
        }
    }

    /// True when this session message is one the subscription asked for.
    fn wants(&self, message: &Value) -> bool {
        match message.get("method").and_then(Value::as_str) {
            Some(methods::RESOURCES_UPDATED) => message
                .get("params")
                .and_then(|p| p.get("uri"))
                .and_then(Value::as_str)
                .is_some_and(|uri| self.uris.iter().any(|s| concerns(s, uri))),
            Some(methods::TOOLS_LIST_CHANGED) => self.tools,
            Some(methods::PROMPTS_LIST_CHANGED) => self.prompts,
            Some(methods::RESOURCES_LIST_CHANGED) => self.resources,
            _ => false,
        }
    }
}

/// True when an update of `published` concerns a subscription to
/// `subscribed`: the resource itself, or one beneath it (a path or a
/// fragment further on).
fn concerns(subscribed: &str, published: &str) -> bool {
    published == subscribed
        || published.strip_prefix(subscribed).is_some_and(|rest| {
            rest.starts_with('/') || rest.starts_with('#') || subscribed.ends_with('/')
        })
}

struct Listener {
    key: u64,
    filter: LegacyFilter,
    tx: mpsc::Sender<Result<Value, ClientError>>,
}

#[derive(Default)]
struct Inner {
    next_key: u64,
    listeners: Vec<Listener>,
    /// The reader of the session's GET event stream (Streamable HTTP), open
    /// while any subscription is.
    stream: Option<tokio::task::JoinHandle<()>>,
}

/// The open legacy subscriptions of one client.
#[derive(Default)]
pub(crate) struct SessionListeners {
    inner: Mutex<Inner>,
    /// Held while subscriptions are added or removed on the server, so that
    /// a subscription ending does not unsubscribe what one starting asks for.
    pub changes: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for SessionListeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionListeners")
            .field("open", &self.inner().listeners.len())
            .finish_non_exhaustive()
    }
}

impl SessionListeners {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a subscription; its messages arrive on the receiver.
    pub(crate) fn add(
        &self,
        filter: LegacyFilter,
    ) -> (u64, mpsc::Receiver<Result<Value, ClientError>>) {
        let (tx, rx) = mpsc::channel(PER_REQUEST_BACKLOG);
        let mut inner = self.inner();
        inner.next_key += 1;
        let key = inner.next_key;
        inner.listeners.push(Listener { key, filter, tx });
        (key, rx)
    }

    /// Forgets a subscription.
    pub(crate) fn remove(&self, key: u64) {
        self.inner().listeners.retain(|l| l.key != key);
    }

    /// True while any subscription is open.
    pub(crate) fn any(&self) -> bool {
        !self.inner().listeners.is_empty()
    }

    /// True when an open subscription asked for `uri` itself.
    pub(crate) fn wants_uri(&self, uri: &str) -> bool {
        self.inner()
            .listeners
            .iter()
            .any(|l| l.filter.uris.iter().any(|u| u == uri))
    }

    /// Hands a session message to every subscription it concerns; false when
    /// none took it. A subscriber that lets its queue fill loses the message
    /// (a resource update says only "re-read it", and the next one says it
    /// again) rather than holding up the session's other messages.
    pub(crate) fn deliver(&self, message: &Value) -> bool {
        let inner = self.inner();
        let mut taken = false;
        for listener in inner.listeners.iter().filter(|l| l.filter.wants(message)) {
            taken = true;
            if listener.tx.try_send(Ok(message.clone())).is_err() {
                tracing::warn!(
                    "a subscription's queue is full (it is not being read): a session message \
                     was dropped for it"
                );
            }
        }
        taken
    }

    /// True while the session's GET stream is being read.
    #[cfg(feature = "http")]
    pub(crate) fn has_stream(&self) -> bool {
        self.inner()
            .stream
            .as_ref()
            .is_some_and(|s| !s.is_finished())
    }

    /// Keeps the reader of the session's GET stream.
    #[cfg(feature = "http")]
    pub(crate) fn set_stream(&self, reader: tokio::task::JoinHandle<()>) {
        if let Some(old) = self.inner().stream.replace(reader) {
            old.abort();
        }
    }

    /// Closes the session's GET stream (dropping its body closes the
    /// connection, which the server sees).
    pub(crate) fn close_stream(&self) {
        if let Some(reader) = self.inner().stream.take() {
            reader.abort();
        }
    }

    /// The session's stream ended: every subscription gets `error`, then
    /// ends.
    pub(crate) fn end_all(&self, error: &ClientError) {
        let listeners = std::mem::take(&mut self.inner().listeners);
        for listener in listeners {
            let _ = listener.tx.try_send(Err(error.clone()));
        }
    }
}

/// A notification sink that gives the open legacy subscriptions their
/// messages first, and everything else to `rest`.
pub(crate) fn routed(
    listeners: Arc<SessionListeners>,
    rest: Option<crate::client::NotificationSink>,
) -> crate::client::NotificationSink {
    Arc::new(move |message: &Value| {
        if !listeners.deliver(message)
            && let Some(rest) = &rest
        {
            rest(message);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn updated(uri: &str) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
    }

    #[test]
    fn an_update_reaches_the_subscriptions_it_concerns_and_no_other() {
        let listeners = SessionListeners::default();
        let filter = |v: Value| LegacyFilter::new(&serde_json::from_value(v).unwrap());
        let (_, mut project) = listeners.add(filter(
            json!({"resourceSubscriptions": ["file:///project"]}),
        ));
        let (_, mut tools) = listeners.add(filter(json!({"toolsListChanged": true})));
        assert!(listeners.deliver(&updated("file:///project/src/main.rs")));
        assert!(listeners.deliver(&updated("file:///project")));
        // A sibling whose name starts the same is another resource.
        assert!(!listeners.deliver(&updated("file:///projects")));
        assert!(
            listeners
                .deliver(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
        );
        assert!(
            !listeners.deliver(
                &json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
            )
        );
        let got = |rx: &mut mpsc::Receiver<Result<Value, ClientError>>| {
            let mut got = Vec::new();
            while let Ok(Ok(message)) = rx.try_recv() {
                got.push(message["params"]["uri"].as_str().unwrap_or("-").to_owned());
            }
            got
        };
        assert_eq!(
            got(&mut project),
            ["file:///project/src/main.rs", "file:///project"]
        );
        assert_eq!(got(&mut tools), ["-"]);
    }

    #[test]
    fn the_end_of_the_session_stream_ends_every_subscription_with_its_error() {
        let listeners = SessionListeners::default();
        let (_, mut rx) = listeners.add(LegacyFilter::default());
        listeners.end_all(&ClientError::Io("the stream ended".into()));
        assert!(matches!(rx.try_recv(), Ok(Err(ClientError::Io(_)))));
        assert!(rx.try_recv().is_err(), "nothing after the error");
        assert!(!listeners.any());
    }
}
