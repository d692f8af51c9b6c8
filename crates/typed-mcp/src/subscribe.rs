//! `subscriptions/listen`: a long-lived request whose stream carries an
//! acknowledgement first, then `notifications/resources/updated` for the URIs
//! the client subscribed to, every message tagged with the subscription id.
//!
//! The application publishes updates through [`ResourceUpdates`]; a broadcast
//! fans them out to every open subscription. A subscriber that falls behind is
//! told again that each of its URIs was updated (it re-reads them) rather than
//! being sent invented or partial events.

use std::pin::pin;
use std::sync::Arc;

use futures_util::future::{Either, select};
use tokio::sync::broadcast;
use typed_mcp_core::RequestId;
use typed_mcp_core::encode;
use typed_mcp_core::wire::{
    EmptyResult, ResourceUpdatedParams, ResultMeta, SubscriptionFilter,
    SubscriptionsAcknowledgedParams, methods,
};

use crate::context::ToolContext;
use crate::server::Server;

/// How many updates a slow subscriber may fall behind before it is resynchronized.
const BACKLOG: usize = 256;

/// Publishes `notifications/resources/updated` to every subscription that
/// listens to the URI (or to a URI it is a sub-resource of). Cheap to clone.
#[derive(Debug, Clone)]
pub struct ResourceUpdates {
    tx: broadcast::Sender<Arc<str>>,
}

impl ResourceUpdates {
    pub(crate) fn new() -> Self {
        ResourceUpdates {
            tx: broadcast::channel(BACKLOG).0,
        }
    }

    /// Tells every open subscription of `uri` that it changed. Does nothing
    /// when nobody listens.
    pub fn publish(&self, uri: impl Into<String>) {
        let _ = self.tx.send(Arc::from(uri.into()));
    }

    /// The number of open subscriptions.
    pub fn subscribers(&self) -> usize {
        self.tx.receiver_count()
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<str>> {
        self.tx.subscribe()
    }
}

/// True when an update of `published` concerns a subscription to `subscribed`.
pub(crate) fn concerns(subscribed: &str, published: &str) -> bool {
    published == subscribed
        || published.strip_prefix(subscribed).is_some_and(|rest| {
            rest.starts_with('/') || subscribed.ends_with('/') || rest.starts_with('#')
        })
}

fn meta(id: &RequestId) -> ResultMeta {
    ResultMeta::default().with_subscription_id(id.clone())
}

/// Serves one subscription until it is cancelled; returns its final result
/// (sent when the server ends it gracefully, e.g. at end of input).
pub(crate) async fn listen(
    server: &Server,
    id: &RequestId,
    filter: SubscriptionFilter,
    ctx: ToolContext,
) -> Vec<u8> {
    // Subscribe before acknowledging, so no update after the ack is missed.
    let mut updates = server.resource_updates().subscribe();
    let uris: Vec<String> = filter
        .resource_subscriptions
        .unwrap_or_default()
        .into_iter()
        .filter(|uri| server.catalog().serves_uri(uri))
        .collect();
    // Only what is honoured is acknowledged: the lists are fixed, so no
    // list_changed notification will ever come.
    let mut honoured = SubscriptionFilter::default();
    honoured.resource_subscriptions = (!uris.is_empty()).then(|| uris.clone());
    let ack = SubscriptionsAcknowledgedParams::new(honoured, meta(id));
    ctx.send(encode::notification(
        methods::SUBSCRIPTIONS_ACKNOWLEDGED,
        &ack,
    ))
    .await;
    let updated = |uri: &str| {
        let params = ResourceUpdatedParams::new(uri, meta(id));
        ctx.send(encode::notification(methods::RESOURCES_UPDATED, &params))
    };
    loop {
        let update = match select(pin!(ctx.cancelled()), pin!(updates.recv())).await {
            Either::Left(((), _)) => break,
            Either::Right((update, _)) => update,
        };
        match update {
            Ok(published) => {
                if uris.iter().any(|s| concerns(s, &published)) {
                    updated(&published).await;
                }
            }
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(%id, missed, "subscription lagged; resynchronizing");
                for uri in &uris {
                    updated(uri).await;
                }
            }
            Err(broadcast::error::RecvError::Closed) => break,
        }
    }
    let end = EmptyResult::default().with_meta(
        ResultMeta::server(server.catalog().server_info().clone()).with_subscription_id(id.clone()),
    );
    encode::result(id, &end)
}

#[cfg(test)]
mod tests {
    use super::concerns;

    #[test]
    fn sub_resources_concern_their_parent() {
        assert!(concerns("file:///project", "file:///project"));
        assert!(concerns("file:///project", "file:///project/src/main.rs"));
        assert!(!concerns("file:///project", "file:///project2"));
        assert!(!concerns("file:///project/a", "file:///project"));
    }
}
