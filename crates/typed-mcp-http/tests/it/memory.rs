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
