//! typed-mcp-redis against a real `redis-server` (started here on a free
//! loopback port, stopped after). Without `redis-server` on PATH each test
//! says plainly that it was skipped, unless `TYPED_MCP_REDIS_REQUIRED` is
//! set: then it fails. `scripts/scale-check` installs the Debian package and
//! runs these tests with it set.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use typed_mcp::state::StateKeys;
use typed_mcp::tasks::{
    TaskChange, TaskId, TaskOutcome, TaskOwner, TaskRecord, TaskStatus, TaskStore, check_store,
};
use typed_mcp::transport::{Connection, Inbound, Outbox};
use typed_mcp::{Server, ServerBuilder, resource, resources};
use typed_mcp_client::testing::TestClient;
use typed_mcp_http::{Session, SessionStore};
use typed_mcp_redis::{
    KeyringCheck, KeyringProblem, Redis, RedisBus, RedisSessionStore, RedisTaskStore,
};

const WAIT: Duration = Duration::from_secs(5);

/// A `redis-server` of this test's own, on a free port.
struct RedisServer {
    port: u16,
    child: Option<Child>,
}

impl RedisServer {
    fn start() -> Option<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let mut server = RedisServer { port, child: None };
        if !server.spawn() {
            assert!(
                std::env::var_os("TYPED_MCP_REDIS_REQUIRED").is_none(),
                "redis-server is not on PATH, and TYPED_MCP_REDIS_REQUIRED is set: expected it (apt-get install -y redis-server; scripts/scale-check installs it)"
            );
            eprintln!("skipped: redis-server is not on PATH (apt-get install -y redis-server)");
            return None;
        }
        Some(server)
    }

    fn spawn(&mut self) -> bool {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(child) = child else { return false };
        self.child = Some(child);
        let deadline = std::time::Instant::now() + WAIT;
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "redis-server did not listen on {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn restart(&mut self) {
        self.stop();
        assert!(self.spawn(), "redis-server started once, and again");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    fn open(&self, prefix: &str) -> Redis {
        Redis::open(&self.url(), prefix).expect("a valid URL")
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A note.
///
/// # Arguments
/// * `name` - The note's name.
#[resource(uri = "note://{name}", name = "note", mime_type = "text/plain")]
async fn note(name: String) -> String {
    format!("note {name}")
}

/// A server whose catalog serves `note://{name}` (so listens on it are honoured).
fn replica(bus: Option<Arc<RedisBus>>, keys: Option<StateKeys>) -> Server {
    let mut builder: ServerBuilder = Server::new("redis-test", "0.0.0").resources(resources![note]);
    if let Some(bus) = bus {
        builder = builder.update_bus(bus);
    }
    if let Some(keys) = keys {
        builder = builder.request_state_keys(keys);
    }
    builder.build().expect("a valid server")
}

async fn next_update(sub: &mut typed_mcp_client::testing::Subscription<'_>, what: &str) -> String {
    loop {
        let message = sub
            .next_within(WAIT)
            .await
            .unwrap_or_else(|| panic!("no message within {WAIT:?}, waiting for {what}"));
        match message["method"].as_str() {
            Some("notifications/resources/updated") => {
                return message["params"]["uri"].as_str().expect("a uri").to_owned();
            }
            Some("notifications/subscriptions/acknowledged") => continue,
            _ => panic!("expected resources/updated ({what}), found {message}"),
        }
    }
}

async fn nothing_more(sub: &mut typed_mcp_client::testing::Subscription<'_>, what: &str) {
    if let Some(message) = sub.next_within(Duration::from_millis(300)).await {
        panic!("expected nothing more ({what}), found {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_replica_delivers_every_update_in_one_order() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut servers = Vec::new();
    for _ in 0..3 {
        let bus = RedisBus::start(&redis.open("order"))
            .await
            .expect("Redis answers");
        servers.push(replica(Some(bus), None));
    }
    let clients: Vec<TestClient> = servers.iter().cloned().map(TestClient::new).collect();
    let mut subs = Vec::new();
    for client in &clients {
        let mut sub = client
            .listen(json!({"resourceSubscriptions": ["note://a", "note://b"]}))
            .await;
        let ack = sub.next_within(WAIT).await.expect("an acknowledgement");
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        subs.push(sub);
    }
    // Two replicas publish interleaved; a third URI concerns nobody.
    let mut expected_from = [Vec::new(), Vec::new()];
    for n in 0..40 {
        let (from, uri) = if n % 3 == 0 {
            (1, format!("note://b/{n}"))
        } else {
            (0, format!("note://a/{n}"))
        };
        servers[from].resource_updates().publish(uri.clone());
        servers[2]
            .resource_updates()
            .publish(format!("note://c/{n}"));
        expected_from[from].push(uri);
    }
    let mut sequences = Vec::new();
    for (i, sub) in subs.iter_mut().enumerate() {
        let mut seen = Vec::new();
        for _ in 0..40 {
            seen.push(next_update(sub, &format!("update {} on replica {i}", seen.len())).await);
        }
        nothing_more(sub, "note://c concerns no listener").await;
        // Each publisher's updates arrive in the order it published them.
        for expected in &expected_from {
            let got: Vec<&String> = seen.iter().filter(|u| expected.contains(u)).collect();
            assert_eq!(
                got,
                expected.iter().collect::<Vec<_>>(),
                "replica {i}: one publisher's order"
            );
        }
        sequences.push(seen);
    }
    assert_eq!(sequences[0], sequences[1], "replicas 0 and 1 saw one order");
    assert_eq!(sequences[1], sequences[2], "replicas 1 and 2 saw one order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_resynchronizes_every_listener_and_invents_nothing() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let bus_a = RedisBus::start(&redis.open("restart"))
        .await
        .expect("Redis answers");
    let bus_b = RedisBus::start(&redis.open("restart"))
        .await
        .expect("Redis answers");
    let (a, b) = (
        replica(Some(bus_a.clone()), None),
        replica(Some(bus_b.clone()), None),
    );
    let (client_a, client_b) = (TestClient::new(a.clone()), TestClient::new(b.clone()));
    let mut sub_a = client_a
        .listen(json!({"resourceSubscriptions": ["note://x"]}))
        .await;
    let mut sub_b = client_b
        .listen(json!({"resourceSubscriptions": ["note://x", "note://y"]}))
        .await;
    sub_a.next_within(WAIT).await.expect("ack");
    sub_b.next_within(WAIT).await.expect("ack");

    // Redis goes away: an update published now reaches the publisher's own
    // listeners (delivered here) and not the other replica's ...
    let seen = (bus_a.subscriptions(), bus_b.subscriptions());
    redis.stop();
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.resource_updates().publish("note://x");
    assert_eq!(
        next_update(&mut sub_a, "the local delivery while Redis is down").await,
        "note://x"
    );
    // ... then Redis comes back: both replicas resubscribe and resynchronize.
    redis.restart();
    assert!(
        bus_a.resubscribed(seen.0, WAIT * 2).await,
        "replica A resubscribed"
    );
    assert!(
        bus_b.resubscribed(seen.1, WAIT * 2).await,
        "replica B resubscribed"
    );
    let mut resync_a = vec![next_update(&mut sub_a, "A's resync").await];
    let mut resync_b = vec![
        next_update(&mut sub_b, "B's resync (x)").await,
        next_update(&mut sub_b, "B's resync (y)").await,
    ];
    // A published while it was cut off: once Redis takes messages again, a
    // resync message follows on the channel (both re-announce once more).
    a.resource_updates().publish("note://y");
    tokio::time::sleep(Duration::from_millis(300)).await;
    while let Some(m) = sub_a.next_within(Duration::from_millis(200)).await {
        resync_a.push(m["params"]["uri"].as_str().unwrap_or("?").to_owned());
    }
    while let Some(m) = sub_b.next_within(Duration::from_millis(200)).await {
        resync_b.push(m["params"]["uri"].as_str().unwrap_or("?").to_owned());
    }
    // Only subscribed URIs, never note://y on A (it does not listen to it).
    assert!(
        resync_a.iter().all(|u| u == "note://x"),
        "A: only its URI, found {resync_a:?}"
    );
    assert!(
        resync_b.iter().all(|u| u == "note://x" || u == "note://y"),
        "B: only its URIs, found {resync_b:?}"
    );
    assert!(
        resync_b.contains(&"note://y".to_owned()),
        "B got note://y: {resync_b:?}"
    );
    // Serving continues: an update crosses replicas again, exactly once.
    b.resource_updates().publish("note://x");
    assert_eq!(
        next_update(&mut sub_a, "an update after the restart").await,
        "note://x"
    );
    assert_eq!(
        next_update(&mut sub_b, "an update after the restart").await,
        "note://x"
    );
    nothing_more(&mut sub_a, "one update, one notification").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_compare_keyrings_and_warn_about_a_random_or_foreign_key() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let redis = redis.open("keyring");
    let old = "0101010101010101010101010101010101010101010101010101010101010101";
    let new = "0202020202020202020202020202020202020202020202020202020202020202";
    let shared = |text: &str| Some(StateKeys::parse(text, "test").expect("a keyring"));

    let first = KeyringCheck::start(&redis, &replica(None, shared(old)), "r1")
        .await
        .expect("Redis answers");
    assert_eq!(first.problems(), &[], "alone: nothing to compare");
    // Rotation step 1 (new key second): opens both, seals with the old: fine.
    let step1 = KeyringCheck::start(
        &redis,
        &replica(None, shared(&format!("{old},{new}"))),
        "r2",
    )
    .await
    .unwrap();
    assert_eq!(step1.problems(), &[]);
    // A replica that skipped step 1 seals with a key r1 cannot open; r1's
    // old key it still opens, so it has no problem of its own...
    let skipped = KeyringCheck::start(
        &redis,
        &replica(None, shared(&format!("{new},{old}"))),
        "r3",
    )
    .await
    .unwrap();
    assert_eq!(skipped.problems(), &[]);
    // ... but r1, comparing again, finds r3's sealing key foreign.
    let again = KeyringCheck::start(&redis, &replica(None, shared(old)), "r1")
        .await
        .unwrap();
    assert_eq!(
        again.problems(),
        &[KeyringProblem::CannotOpen {
            replica: "r3".into()
        }]
    );
    // A replica without a keyring is told plainly, and names the others.
    let random = KeyringCheck::start(&redis, &replica(None, None), "r4")
        .await
        .unwrap();
    assert_eq!(
        random.problems(),
        &[KeyringProblem::RandomHereSharedThere {
            others: vec!["r1".into(), "r2".into(), "r3".into()]
        }]
    );
    let warning = random.problems()[0].to_string();
    assert!(
        warning.contains("per-process random key") && warning.contains("TYPED_MCP_STATE_KEYS"),
        "{warning}"
    );
    assert!(
        !warning.contains(old) && !warning.contains(new),
        "no key in a warning: {warning}"
    );
    let seen_by_r2 = KeyringCheck::start(
        &redis,
        &replica(None, shared(&format!("{old},{new}"))),
        "r2",
    )
    .await
    .unwrap();
    assert_eq!(
        seen_by_r2.problems(),
        &[KeyringProblem::RandomThere {
            replica: "r4".into()
        }]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_store_keeps_the_contract() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    check_store(&RedisTaskStore::new(&redis.open("contract"), "r1")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_on_one_replica_is_answered_and_collected_on_another() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let on_a = RedisTaskStore::new(&redis.open("across"), "a");
    let on_b = RedisTaskStore::new(&redis.open("across"), "b");
    let owner = TaskOwner::principal("alice");
    let record = TaskRecord::new(
        TaskId::random(),
        owner.clone(),
        "slow",
        Some(Duration::from_secs(60)),
        Duration::from_millis(100),
    );
    let id = record.id.clone();
    on_a.create(record).await.expect("create on a");
    let polled = on_b
        .get(&owner, &id)
        .await
        .unwrap()
        .expect("b sees a's task");
    assert_eq!(polled.status, TaskStatus::Working);
    assert_eq!(
        on_b.get(&TaskOwner::principal("bob"), &id).await.unwrap(),
        None,
        "not another owner's"
    );
    let ask: serde_json::Map<String, Value> =
        json!({"confirm": {"method": "elicitation/create", "params": {"message": "sure?"}}})
            .as_object()
            .unwrap()
            .clone();
    on_a.update(
        &id,
        TaskChange::InputRequired {
            requests: ask,
            message: None,
        },
    )
    .await
    .unwrap();
    let answers = json!({"confirm": {"action": "accept", "content": {"ok": true}}})
        .as_object()
        .unwrap()
        .clone();
    let answered = on_b
        .respond(&owner, &id, answers)
        .await
        .unwrap()
        .expect("b answers a's task");
    assert_eq!(answered.status, TaskStatus::Working);
    // The runner on a takes the answers b stored, and finishes.
    let resumed = on_a.get(&owner, &id).await.unwrap().unwrap();
    assert_eq!(resumed.input_responses["confirm"]["action"], "accept");
    on_a.update(&id, TaskChange::Resumed).await.unwrap();
    let result = json!({"content": [{"type": "text", "text": "done"}]});
    on_a.update(
        &id,
        TaskChange::Finished {
            outcome: TaskOutcome::Result(result.clone()),
            message: None,
        },
    )
    .await
    .unwrap();
    let collected = on_b.get(&owner, &id).await.unwrap().expect("b collects");
    assert_eq!(
        (collected.status, collected.outcome),
        (TaskStatus::Completed, Some(TaskOutcome::Result(result)))
    );
    // A cancel through b after the end changes nothing.
    let after = on_b.cancel(&owner, &id).await.unwrap().unwrap();
    assert_eq!(after.status, TaskStatus::Completed);
    assert_eq!(on_b.list(&owner).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_replicas_tasks_fail_as_interrupted_and_a_live_ones_run_on() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let owner = TaskOwner::anonymous();
    let task = || {
        TaskRecord::new(
            TaskId::random(),
            owner.clone(),
            "slow",
            None,
            Duration::from_millis(100),
        )
    };
    // Replica "gone" runs on a runtime of its own, which then stops (its
    // heartbeat with it); its liveness key is removed as its expiry would.
    let (gone_task, gone_runner) = {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let url = redis.url();
        std::thread::spawn(move || {
            runtime.block_on(async move {
                let gone = RedisTaskStore::new(&Redis::open(&url, "orphans").unwrap(), "gone");
                let record = task_for(&TaskOwner::anonymous());
                let id = record.id.clone();
                gone.create(record).await.unwrap();
                (id, gone.runner().to_owned())
            })
        })
        .join()
        .unwrap()
    };
    let mut raw = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::cmd("DEL")
        .arg(format!("orphans:runner:{gone_runner}"))
        .query_async(&mut raw)
        .await
        .unwrap();

    let live = RedisTaskStore::new(&redis.open("orphans"), "live");
    let running = task();
    let running_id = running.id.clone();
    live.create(running).await.unwrap();
    let starting = RedisTaskStore::new(&redis.open("orphans"), "starting");
    assert_eq!(
        starting.recover_interrupted().await.unwrap(),
        1,
        "only the stopped replica's task"
    );
    let failed = starting.get(&owner, &gone_task).await.unwrap().unwrap();
    assert_eq!(failed.status, TaskStatus::Failed);
    match failed.outcome {
        Some(TaskOutcome::Error(e)) => assert_eq!(e.data, Some(json!({"interrupted": true}))),
        other => panic!("expected the interrupted error, found {other:?}"),
    }
    assert_eq!(
        starting
            .get(&owner, &running_id)
            .await
            .unwrap()
            .unwrap()
            .status,
        TaskStatus::Working
    );
    assert_eq!(
        starting.recover_interrupted().await.unwrap(),
        0,
        "nothing twice"
    );
}

fn task_for(owner: &TaskOwner) -> TaskRecord {
    TaskRecord::new(
        TaskId::random(),
        owner.clone(),
        "slow",
        None,
        Duration::from_millis(100),
    )
}

/// Sends one message on `connection`, as the HTTP endpoint would.
async fn send(connection: &Connection, message: Value) {
    let (outbox, mut inbox) = Outbox::channel();
    connection
        .accept(
            &serde_json::to_vec(&message).unwrap(),
            Inbound::default(),
            &outbox,
        )
        .await;
    drop(outbox);
    while inbox.recv().await.is_some() {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_on_one_replica_is_served_and_changed_on_another() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let (server_a, server_b) = (replica(None, None), replica(None, None));
    let store_a = RedisSessionStore::new(&redis.open("sessions"), server_a.clone());
    let store_b = RedisSessionStore::new(&redis.open("sessions"), server_b.clone());
    let connection = Arc::new(Connection::new(server_a));
    send(
        &connection,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    let id = "0123456789abcdef0123456789abcdef";
    store_a
        .insert(id.into(), Session::new(connection, None))
        .await
        .expect("stored");

    let on_b = store_b.get(id).await.expect("b resumes a's session");
    assert_eq!(
        on_b.connection().legacy_version().as_deref(),
        Some("2025-11-25")
    );
    let state = on_b.connection().legacy_state().unwrap();
    assert!(
        state.facts.client_capabilities.elicitation.is_some(),
        "the client's capabilities came along"
    );
    // A subscribe on b is written before its answer leaves; a sees it.
    send(on_b.connection(), json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "note://a"}})).await;
    store_b.answered(id, &on_b).await;
    let on_a = store_a.get(id).await.expect("a still serves it");
    assert_eq!(
        on_a.connection().legacy_state().unwrap().subscriptions,
        vec!["note://a".to_owned()]
    );
    // Deleted through a: gone on b too.
    store_a.remove(id).await;
    assert!(
        store_b.get(id).await.is_none(),
        "a removed session is not found elsewhere"
    );
    assert!(
        store_b
            .get("ffffffffffffffffffffffffffffffff")
            .await
            .is_none()
    );
}
