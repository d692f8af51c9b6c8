//! Large bodies in bounded memory: a server in its own process, its peak RSS
//! read from `/proc`.

use std::time::Duration;

use serde_json::json;

use crate::quickstart::Quickstart;
use crate::support::{Client, Req};

/// 64 calls of 3 MiB each at once: 192 MiB of requests and as much of replies.
const CALLS: usize = 64;
const TEXT_BYTES: usize = 3 * 1024 * 1024;
/// The quickstart's peak resident set must stay under this.
const PEAK_RSS_KIB: u64 = 250 * 1024;
/// How long one call may take, queueing included: the byte budget (16 MiB)
/// admits about five calls at a time, and a debug build on a busy machine
/// takes about a second for each, so the last call waits a while.
const PATIENCE: Duration = Duration::from_secs(300);

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_concurrent_three_mib_echoes_stay_under_250_mib_of_rss() {
    // The quickstart's echo, with a longer queue timeout (see the example).
    let server = Quickstart::example("echo_load", &["127.0.0.1:0"]);
    let client = Client::new(server.addr, "/mcp");
    let before = server.status_kib("VmHWM");
    let calls = (0..CALLS).map(|i| {
        let client = client.clone();
        tokio::spawn(async move {
            // Each call's text differs, so a mixed-up reply is caught.
            let letter = char::from(b'a' + (i % 26) as u8);
            let text = letter.to_string().repeat(TEXT_BYTES);
            let reply = client
                .send_within(&Req::call("echo", json!({"text": text})), PATIENCE)
                .await;
            assert_eq!(
                reply.status,
                200,
                "status of call {i}: {}",
                String::from_utf8_lossy(&reply.body[..reply.body.len().min(300)])
            );
            let body = reply.json();
            // A `String` output is structured as `{"result": text}` (and
            // carried as text too).
            let echoed = body["result"]["structuredContent"]["result"].as_str();
            assert!(
                echoed == Some(text.as_str()),
                "expected call {i} to echo {TEXT_BYTES} bytes of {letter:?}, found {} bytes",
                echoed.map_or(0, str::len)
            );
        })
    });
    for call in calls.collect::<Vec<_>>() {
        call.await.expect("the call's task");
    }
    let peak = server.status_kib("VmHWM");
    eprintln!(
        "echo_load peak RSS: {} KiB before the calls, {peak} KiB after {CALLS} concurrent {} MiB echoes",
        before,
        TEXT_BYTES >> 20
    );
    assert!(
        peak < PEAK_RSS_KIB,
        "expected the server's peak RSS under {PEAK_RSS_KIB} KiB, found {peak} KiB"
    );
}

/// Sessions the default store keeps at most, all opened by the next test.
const SESSIONS: usize = typed_mcp_http::DEFAULT_MAX_SESSIONS;
/// What one idle legacy session may cost in resident memory.
const SESSION_KIB: u64 = 8;

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_idle_sessions_fit_in_80_mib_and_the_next_initialize_is_503() {
    let server = Quickstart::spawn();
    let client = Client::new(server.addr, "/mcp");
    let initialize = Req::raw(
        serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "memory-test", "version": "0.0.0"}
            }}),
        )
        .unwrap(),
    );
    // Warm up allocator and runtime with one session before measuring.
    assert_eq!(client.send(&initialize).await.status, 200);
    let before = server.status_kib("VmRSS");
    let workers = (0..8).map(|worker| {
        let (client, initialize) = (client.clone(), initialize.clone());
        tokio::spawn(async move {
            for i in (worker..SESSIONS - 1).step_by(8) {
                let reply = client.send_within(&initialize, PATIENCE).await;
                assert_eq!(reply.status, 200, "initialize {i}: {:?}", reply.body);
                assert!(reply.header("mcp-session-id").is_some());
            }
        })
    });
    for worker in workers.collect::<Vec<_>>() {
        worker.await.expect("the worker's task");
    }
    let after = server.status_kib("VmRSS");
    let full = client.send(&initialize).await;
    assert_eq!(full.status, 503, "{:?}", full.body);
    let per_session = after.saturating_sub(before) * 1024 / SESSIONS as u64;
    eprintln!(
        "{SESSIONS} idle sessions: VmRSS {before} KiB before, {after} KiB after, {per_session} bytes each"
    );
    assert!(
        per_session < SESSION_KIB * 1024,
        "expected an idle session to cost under {SESSION_KIB} KiB, found {per_session} bytes"
    );
}
