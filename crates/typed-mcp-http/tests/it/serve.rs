//! `typed_mcp_http::serve` on raw TCP: keep-alive, bad input, running out
//! of file descriptors, graceful shutdown.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use typed_mcp_http::HttpServer;

use crate::quickstart::Quickstart;
use crate::support::{PATIENCE, Probe, call_body, call_head, read_until, serve_until, server};

/// The endpoint at `/mcp` on a fresh loopback port until `stop` is sent (or
/// dropped).
async fn start(probe: &Probe) -> (SocketAddr, oneshot::Sender<()>, JoinHandle<()>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let router = |addr| HttpServer::new(server(probe), addr).mount("/mcp").unwrap();
    let (addr, serving) = serve_until(router, async {
        let _ = stopped.await;
    })
    .await;
    (addr, stop, serving)
}

/// A `tools/call` of `name` with `{"a":2,"b":3}`, head and body;
/// `extra_meta` as in [`call_body`].
fn call(id: u32, name: &str, extra_meta: &str) -> String {
    let body = call_body(id, name, r#"{"a":2,"b":3}"#, extra_meta);
    call_head(name, body.len(), "") + &body
}

/// Sends `add` on `stream` and waits for its answer, `id` included.
async fn add(stream: &mut TcpStream, id: u32) -> String {
    stream
        .write_all(call(id, "add", "").as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    read_until(stream, &mut answer, br#"{"sum":5}"#).await;
    let answer = String::from_utf8(answer).expect("a UTF-8 answer");
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains(&format!(r#""id":{id}"#)), "{answer}");
    answer
}

/// Reads until the server closes the connection.
async fn read_to_close(stream: &mut TcpStream) {
    let mut rest = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut rest))
        .await
        .expect("the server closes the connection in time")
        .expect("the connection reads");
}

#[tokio::test]
async fn one_connection_carries_request_after_request() {
    let (addr, _stop, _serving) = start(&Probe::default()).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    for id in 1..=3 {
        add(&mut stream, id).await;
    }
}

#[tokio::test]
async fn a_connection_speaking_no_http_gets_400_and_the_others_are_served() {
    let (addr, _stop, _serving) = start(&Probe::default()).await;
    let mut served = TcpStream::connect(addr).await.unwrap();
    let mut garbage = TcpStream::connect(addr).await.unwrap();
    garbage
        .write_all(b"\x16\x03\x01 this is not HTTP\r\n\r\n")
        .await
        .unwrap();
    let mut refused = Vec::new();
    read_until(&mut garbage, &mut refused, b"\r\n\r\n").await;
    assert!(
        refused.starts_with(b"HTTP/1.1 400"),
        "{}",
        String::from_utf8_lossy(&refused)
    );
    read_to_close(&mut garbage).await;

    // The connection opened before and a new one both still serve.
    add(&mut served, 1).await;
    add(&mut TcpStream::connect(addr).await.unwrap(), 2).await;
}

#[cfg(unix)]
#[tokio::test]
async fn out_of_file_descriptors_the_open_connections_are_served_and_accepting_resumes() {
    // The quickstart as a process, as the limit is the whole process's.
    const LIMIT: u32 = 64;
    let server = Quickstart::with_fd_limit(LIMIT);
    let free = LIMIT - server.open_fds_below(LIMIT);
    assert!(free >= 2, "the quickstart holds {} fds", LIMIT - free);
    let mut open = Vec::new();
    for id in 0..free {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        add(&mut stream, id).await;
        open.push(stream);
    }
    assert_eq!(server.open_fds_below(LIMIT), LIMIT, "every fd is taken");

    // The kernel completes this connection; accepting it fails (EMFILE).
    let mut waiting = TcpStream::connect(server.addr).await.unwrap();
    waiting
        .write_all(call(1000, "add", "").as_bytes())
        .await
        .unwrap();
    // Accepting pauses instead of retrying at once: the server stays idle
    // (a retry loop would burn a core for the whole second).
    let before = server.cpu_ticks();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let spent = server.cpu_ticks() - before;
    assert!(
        spent < 30,
        "the server spent {spent} ticks of CPU in a second with nothing to accept"
    );
    // The connections it holds are still served.
    add(&mut open[0], 1001).await;

    // Once a descriptor is free, the waiting connection is accepted and
    // answered.
    drop(open.pop());
    let mut answer = Vec::new();
    read_until(&mut waiting, &mut answer, br#"{"sum":5}"#).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.contains(r#""id":1000"#), "{answer}");
}

#[tokio::test]
async fn shutdown_refuses_new_connections_and_waits_for_the_call_in_flight() {
    let probe = Probe::default();
    let (addr, stop, serving) = start(&probe).await;
    // An idle keep-alive connection does not hold the shutdown up.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    add(&mut idle, 1).await;
    // `stream` sends its first progress event, then waits for the test.
    let mut busy = TcpStream::connect(addr).await.unwrap();
    busy.write_all(call(2, "stream", r#","progressToken":"p""#).as_bytes())
        .await
        .unwrap();
    let mut streamed = Vec::new();
    read_until(&mut busy, &mut streamed, br#""progress":1"#).await;

    stop.send(()).unwrap();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while TcpStream::connect(addr).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the listener still accepts after the shutdown"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    read_to_close(&mut idle).await;
    assert!(
        !serving.is_finished(),
        "serve returned with a call still in flight"
    );

    probe.proceed.notify_one();
    read_until(&mut busy, &mut streamed, b"streamed").await;
    let streamed = String::from_utf8_lossy(&streamed);
    assert!(streamed.contains(r#""id":2"#), "{streamed}");
    tokio::time::timeout(PATIENCE, serving)
        .await
        .expect("serve returns once the last connection is done")
        .expect("serve does not panic");
}
