//! `subscriptions/listen`: a long-lived request whose stream carries an
//! acknowledgement first, then `notifications/resources/updated` for the URIs
//! the client subscribed to, every message tagged with the subscription id.
//!
//! The application publishes updates through [`ResourceUpdates`]; a broadcast
//! fans them out to every open subscription. A subscriber that falls behind is
//! told again that each of its URIs was updated (it re-reads them) rather than
//! being sent invented or partial events.
//!
//! # Replicas: an update bus
//!
//! By default an update reaches the subscriptions of this process only (the
//! fast path: one broadcast send). Replicas behind a load balancer set an
//! [`UpdateBus`] ([`ServerBuilder::update_bus`](crate::ServerBuilder::update_bus)):
//! [`ResourceUpdates::publish`] then hands each update to the bus, and the bus
//! delivers what any replica published to each replica's [`LocalUpdates`],
//! this one's included, in the order it carries them. A bus that may have
//! lost updates (a connection to its broker dropped and came back) calls
//! [`LocalUpdates::resynchronize`]: every open subscription is told again
//! that each of its URIs was updated, as for a lagging subscriber. The
//! `typed-mcp-redis` crate has a Redis pub/sub bus.
//!
//! # Task status notifications
//!
//! With the Tasks extension, a listen filter's `taskIds` (from a client that
//! declares the extension) asks for `notifications/tasks`: the full task, as
//! `tasks/get` would answer it, each time one of those tasks changes. The
//! acknowledgement lists the ids honoured: those of the first
//! [`MAX_WATCHED_TASKS`](crate::tasks::MAX_WATCHED_TASKS) distinct ids asked
//! that are the caller's own live tasks (an id that is unknown or another
//! principal's is left out, exactly as if it did not exist; ids past the
//! limit are not looked up). The news that a task changed travels like a resource
//! update (through the [`UpdateBus`] between replicas, [`UpdateBus::publish_task`]);
//! the listener then reads the task from the store, so what it sends is what
//! the store holds and no replica's change is missed for long: the listener
//! also re-reads its unfinished tasks at their poll interval (a bus without
//! task news, a change the store made itself such as an interrupted task's
//! failure). No notification is sent for the state a task had when the
//! listen began (read it with `tasks/get`), and none after its terminal one.

use std::fmt;
use std::pin::pin;
use std::sync::Arc;

use futures_util::future::{Either, select};
use serde_json::{Map, Value};
use tokio::sync::broadcast;
use typed_mcp_core::RequestId;
use typed_mcp_core::encode;
use typed_mcp_core::wire::{
    EmptyResult, ResourceUpdatedParams, ResultMeta, SubscriptionFilter,
    SubscriptionsAcknowledgedParams, methods,
};

use crate::context::ToolContext;
use crate::server::Server;
use crate::tasks::{TASK_STATUS, TaskWatch, owner_of};

/// How many updates a slow subscriber may fall behind before it is resynchronized.
const BACKLOG: usize = 256;

/// What the local fan-out carries.
#[derive(Debug, Clone)]
enum Update {
    /// This resource (and its sub-resources) changed.
    Resource(Arc<str>),
    /// This task (the Tasks extension) changed.
    Task(Arc<str>),
    /// Updates may have been lost: every subscription re-announces its URIs.
    Resynchronize,
}

/// Carries updates between replicas: what any replica publishes reaches the
/// [`LocalUpdates`] of every replica, in order per resource (a bus that
/// orders all updates, as one pub/sub channel does, meets that).
///
/// A bus never invents an update: when it may have lost some (its broker
/// connection dropped), it calls [`LocalUpdates::resynchronize`] once it is
/// connected again, and subscribers re-read what they watch.
pub trait UpdateBus: Send + Sync + fmt::Debug + 'static {
    /// Sends `uri`'s update to every replica. Called from
    /// [`ResourceUpdates::publish`], so it must not block: queue the work.
    fn publish(&self, uri: &str);

    /// Called once, when the server is built: the bus delivers every update
    /// it receives (its own publishes included) to `local`.
    fn attach(&self, local: LocalUpdates);

    /// Sends the news that task `task_id` (the Tasks extension) changed to
    /// every replica's [`LocalUpdates::deliver_task`], as
    /// [`publish`](Self::publish) does for a resource; must not block
    /// either. The default sends it nowhere: listeners then learn of task
    /// changes at the task's poll interval, when they re-read it.
    fn publish_task(&self, task_id: &str) {
        let _ = task_id;
    }
}

/// This process's fan-out to its open subscriptions: where an [`UpdateBus`]
/// delivers. Cheap to clone.
#[derive(Debug, Clone)]
pub struct LocalUpdates {
    tx: broadcast::Sender<Update>,
}

impl LocalUpdates {
    fn new() -> Self {
        LocalUpdates {
            tx: broadcast::channel(BACKLOG).0,
        }
    }

    /// Tells every open subscription of `uri` (or of a parent of it) here
    /// that it changed. Does nothing when nobody listens.
    pub fn deliver(&self, uri: &str) {
        let _ = self.tx.send(Update::Resource(Arc::from(uri)));
    }

    /// Tells every open subscription here that watches task `task_id` (its
    /// `taskIds`) that the task changed: the subscription reads it and sends
    /// its status. Does nothing when nobody listens.
    pub fn deliver_task(&self, task_id: &str) {
        let _ = self.tx.send(Update::Task(Arc::from(task_id)));
    }

    /// Tells every open subscription here that each of its URIs changed:
    /// updates may have been lost, and subscribers re-read what they watch.
    pub fn resynchronize(&self) {
        let _ = self.tx.send(Update::Resynchronize);
    }

    /// The number of open subscriptions here.
    pub fn subscribers(&self) -> usize {
        self.tx.receiver_count()
    }
}

/// Publishes `notifications/resources/updated` to every subscription that
/// listens to the URI (or to a URI it is a sub-resource of): in this process,
/// or on every replica when the server has an [`UpdateBus`]. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ResourceUpdates {
    local: LocalUpdates,
    bus: Option<Arc<dyn UpdateBus>>,
}

impl ResourceUpdates {
    pub(crate) fn new(bus: Option<Arc<dyn UpdateBus>>) -> Self {
        let local = LocalUpdates::new();
        if let Some(bus) = &bus {
            bus.attach(local.clone());
        }
        ResourceUpdates { local, bus }
    }

    /// Tells every open subscription of `uri` that it changed. Does nothing
    /// when nobody listens. With an [`UpdateBus`], the update reaches this
    /// process's subscriptions through the bus, in the bus's order.
    pub fn publish(&self, uri: impl Into<String>) {
        match &self.bus {
            None => {
                let _ = self.local.tx.send(Update::Resource(Arc::from(uri.into())));
            }
            Some(bus) => bus.publish(&uri.into()),
        }
    }

    /// The number of open subscriptions in this process.
    pub fn subscribers(&self) -> usize {
        self.local.subscribers()
    }

    /// Tells every subscription that watches task `task_id`, here or (with
    /// an [`UpdateBus`]) on any replica, that it changed.
    pub(crate) fn publish_task(&self, task_id: &str) {
        match &self.bus {
            None => self.local.deliver_task(task_id),
            Some(bus) => bus.publish_task(task_id),
        }
    }

    /// This process's fan-out (what a bus delivers to).
    pub fn local(&self) -> &LocalUpdates {
        &self.local
    }

    pub(crate) fn subscribe(&self) -> UpdateReceiver {
        UpdateReceiver(self.local.tx.subscribe())
    }
}

/// What a subscription reads next.
pub(crate) enum Received {
    /// This resource changed.
    Updated(Arc<str>),
    /// This task changed.
    Task(Arc<str>),
    /// Updates may have been missed (the subscriber lagged, or the bus
    /// reconnected): every watched URI is to be announced again.
    Resynchronize,
    /// The server is gone.
    Closed,
}

/// One subscription's view of the fan-out.
pub(crate) struct UpdateReceiver(broadcast::Receiver<Update>);

impl UpdateReceiver {
    pub(crate) async fn recv(&mut self) -> Received {
        match self.0.recv().await {
            Ok(Update::Resource(uri)) => Received::Updated(uri),
            Ok(Update::Task(id)) => Received::Task(id),
            Ok(Update::Resynchronize) => Received::Resynchronize,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "subscriber lagged; resynchronizing");
                Received::Resynchronize
            }
            Err(broadcast::error::RecvError::Closed) => Received::Closed,
        }
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
    // The router let taskIds through only from a client declaring the
    // extension; the tasks are read before the ack, so a change after it is
    // never missed (the subscription to updates is older still).
    let mut tasks = match (filter.task_ids, &server.inner.tasks) {
        (Some(ids), Some(runtime)) => {
            TaskWatch::start(runtime.clone(), owner_of(ctx.principal()), ids).await
        }
        _ => TaskWatch::none(),
    };
    honoured.task_ids = tasks.honoured();
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
    let task_changed = |task: Map<String, Value>| {
        let mut params = task;
        params.insert(
            "_meta".into(),
            serde_json::to_value(meta(id)).unwrap_or_default(),
        );
        ctx.send(encode::notification(TASK_STATUS, &params))
    };
    let mut next_poll = tokio::time::Instant::now() + tasks.poll_interval().unwrap_or_default();
    loop {
        // The unfinished watched tasks are re-read at their poll interval,
        // on a schedule other messages do not push back.
        let poll = tasks.poll_interval().map(|_| next_poll);
        let tick = async move {
            match poll {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let (recv, tick) = (pin!(updates.recv()), pin!(tick));
        let next = select(recv, tick);
        let update = match select(pin!(ctx.cancelled()), next).await {
            Either::Left(((), _)) => break,
            Either::Right((Either::Left((update, _)), _)) => update,
            Either::Right((Either::Right(((), _)), _)) => {
                for task in tasks.reread_all().await {
                    task_changed(task).await;
                }
                next_poll = tokio::time::Instant::now() + tasks.poll_interval().unwrap_or_default();
                continue;
            }
        };
        match update {
            Received::Updated(published) => {
                if uris.iter().any(|s| concerns(s, &published)) {
                    updated(&published).await;
                }
            }
            Received::Task(task) => {
                if let Some(task) = tasks.reread(&task).await {
                    task_changed(task).await;
                }
            }
            Received::Resynchronize => {
                tracing::debug!(%id, "subscription resynchronizing");
                for uri in &uris {
                    updated(uri).await;
                }
                for task in tasks.reread_all().await {
                    task_changed(task).await;
                }
            }
            Received::Closed => break,
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
