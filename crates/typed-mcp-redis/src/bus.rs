//! Resource updates on a Redis pub/sub channel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use tokio::sync::{mpsc, watch};
use typed_mcp::subscribe::{LocalUpdates, UpdateBus};

use crate::{Error, Redis};

/// How many updates may wait for Redis; past that, updates are delivered here
/// only and every replica is told to resynchronize.
const QUEUE: usize = 8192;

/// How many queued updates go to Redis in one pipeline.
const BATCH: usize = 256;

/// A message on the channel: an update of one URI.
const UPDATE: char = 'u';
/// A message on the channel: a change of one task (the Tasks extension).
const TASK: char = 't';
/// A message on the channel: updates were lost, resynchronize.
const RESYNC: &str = "r";

/// An [`UpdateBus`] on one Redis pub/sub channel (`PREFIX:resources`).
///
/// It carries the news of task changes too ([`UpdateBus::publish_task`]):
/// a task status listener on any replica hears of a change made through
/// any other, in the same order as resource updates.
///
/// Every replica publishes to and subscribes to the same channel, and every
/// replica delivers only what it reads back from the channel (its own
/// updates included), so all replicas deliver the same updates in the same
/// order: Redis's. Publishing does not wait for Redis: updates are queued
/// and sent in order by one task, in pipelines.
///
/// Nothing is invented and nothing is silently lost. When this replica's
/// subscription to the channel drops (Redis restarted, the network broke),
/// it reconnects and, once subscribed again, resynchronizes its listeners:
/// each is told again that each of its URIs was updated, as a lagging
/// subscriber is. An update that could not be published (Redis down, the
/// queue full) is delivered to this replica's listeners, and a resync
/// message follows on the channel once Redis takes messages again, so the
/// other replicas' listeners re-read too.
#[derive(Debug)]
pub struct RedisBus {
    /// Messages as the channel carries them (kind, then payload).
    queue: mpsc::Sender<Arc<str>>,
    /// Set by [`attach`](UpdateBus::attach); what the tasks deliver to.
    local: Arc<Mutex<Option<LocalUpdates>>>,
    /// An update was delivered here only: the others must resynchronize.
    lost: Arc<AtomicBool>,
    /// How many times the subscription has been (re)established.
    subscribed: watch::Receiver<u64>,
}

impl RedisBus {
    /// Subscribes to the deployment's channel and starts the tasks that
    /// publish and receive. Waits until Redis confirmed the subscription,
    /// so no update published after this returns is missed. Must be called
    /// within a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::Unreachable`] when Redis does not answer the first
    /// subscription (later outages are survived).
    pub async fn start(redis: &Redis) -> Result<Arc<Self>, Error> {
        let channel = redis.key(&["resources"]);
        let pubsub = subscribe(&redis.client, &channel)
            .await
            .map_err(Error::Unreachable)?;
        let (queue, outgoing) = mpsc::channel(QUEUE);
        let (count, subscribed) = watch::channel(1);
        let local = Arc::new(Mutex::new(None));
        let lost = Arc::new(AtomicBool::new(false));
        tokio::spawn(receive(
            redis.client.clone(),
            channel.clone(),
            pubsub,
            local.clone(),
            count,
        ));
        tokio::spawn(publish(
            redis.clone(),
            channel,
            outgoing,
            local.clone(),
            lost.clone(),
        ));
        Ok(Arc::new(RedisBus {
            queue,
            local,
            lost,
            subscribed,
        }))
    }

    /// How many times this replica has subscribed to the channel: 1 after
    /// [`start`](Self::start), one more after each reconnection.
    pub fn subscriptions(&self) -> u64 {
        *self.subscribed.borrow()
    }

    /// Waits until this replica has subscribed more than `seen` times (it
    /// reconnected), at most `within`; true if it did.
    pub async fn resubscribed(&self, seen: u64, within: Duration) -> bool {
        let mut subscribed = self.subscribed.clone();
        tokio::time::timeout(within, subscribed.wait_for(|&n| n > seen))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

impl RedisBus {
    /// Queues one channel message (see [`UPDATE`], [`TASK`]).
    fn send(&self, kind: char, payload: &str) {
        let mut message = String::with_capacity(payload.len() + 1);
        message.push(kind);
        message.push_str(payload);
        if self.queue.try_send(Arc::from(message.as_str())).is_err() {
            // Redis is far behind (or gone): deliver here, and have the
            // other replicas resynchronize once Redis takes messages again.
            tracing::warn!(
                "the Redis update queue is full; delivering this update locally and resynchronizing the other replicas later"
            );
            self.lost.store(true, Ordering::Release);
            if let Some(local) = self
                .local
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
            {
                deliver(local, &message);
            }
        }
    }
}

impl UpdateBus for RedisBus {
    fn publish(&self, uri: &str) {
        self.send(UPDATE, uri);
    }

    fn publish_task(&self, task_id: &str) {
        self.send(TASK, task_id);
    }

    fn attach(&self, local: LocalUpdates) {
        // Messages read before the server was built had no listener to reach.
        *self.local.lock().unwrap_or_else(|e| e.into_inner()) = Some(local);
    }
}

pub(crate) async fn subscribe(
    client: &redis::Client,
    channel: &str,
) -> redis::RedisResult<redis::aio::PubSub> {
    let mut pubsub = tokio::time::timeout(Duration::from_secs(2), client.get_async_pubsub())
        .await
        .map_err(|_| redis::RedisError::from((redis::ErrorKind::Io, "timed out connecting")))??;
    pubsub.subscribe(channel).await?;
    Ok(pubsub)
}

/// Reads the channel and delivers each message here; reconnects and
/// resynchronizes after an outage.
async fn receive(
    client: redis::Client,
    channel: String,
    first: redis::aio::PubSub,
    local: Arc<Mutex<Option<LocalUpdates>>>,
    count: watch::Sender<u64>,
) {
    let deliver_to = || local.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut pubsub = Some(first);
    let mut backoff = Duration::from_millis(50);
    loop {
        let mut current = match pubsub.take() {
            Some(p) => p,
            None => match subscribe(&client, &channel).await {
                Ok(p) => {
                    backoff = Duration::from_millis(50);
                    count.send_modify(|n| *n += 1);
                    tracing::info!(
                        "resubscribed to Redis; resynchronizing this replica's listeners"
                    );
                    if let Some(local) = deliver_to() {
                        local.resynchronize();
                    }
                    p
                }
                Err(e) => {
                    tracing::debug!(error = %e, "Redis still unreachable");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                    continue;
                }
            },
        };
        let mut messages = current.on_message();
        while let Some(message) = messages.next().await {
            let Ok(payload) = message.get_payload::<String>() else {
                continue;
            };
            let Some(local) = deliver_to() else { continue };
            deliver(&local, &payload);
        }
        tracing::warn!(
            "lost the Redis subscription to resource updates; reconnecting (listeners here will be resynchronized)"
        );
    }
}

/// Delivers one channel message here.
fn deliver(local: &LocalUpdates, message: &str) {
    if message == RESYNC {
        local.resynchronize();
    } else if let Some(uri) = message.strip_prefix(UPDATE) {
        local.deliver(uri);
    } else if let Some(task) = message.strip_prefix(TASK) {
        local.deliver_task(task);
    }
}

/// Sends queued messages to the channel, in order, in pipelines.
async fn publish(
    redis: Redis,
    channel: String,
    mut outgoing: mpsc::Receiver<Arc<str>>,
    local: Arc<Mutex<Option<LocalUpdates>>>,
    lost: Arc<AtomicBool>,
) {
    let mut batch: Vec<Arc<str>> = Vec::with_capacity(BATCH);
    while outgoing.recv_many(&mut batch, BATCH).await > 0 {
        let mut pipeline = redis::pipe();
        let resync = lost.swap(false, Ordering::AcqRel);
        if resync {
            pipeline.cmd("PUBLISH").arg(&channel).arg(RESYNC).ignore();
        }
        for message in &batch {
            pipeline
                .cmd("PUBLISH")
                .arg(&channel)
                .arg(&**message)
                .ignore();
        }
        if let Err(e) = redis.query_pipeline(&pipeline).await {
            tracing::warn!(error = %e, updates = batch.len(), "could not publish resource updates to Redis; delivering them here, the other replicas resynchronize later");
            lost.store(true, Ordering::Release);
            if let Some(local) = local.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                for message in &batch {
                    deliver(local, message);
                }
            }
        }
        batch.clear();
    }
}
