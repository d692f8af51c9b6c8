//! `typed_mcp_http::serve` on raw TCP: keep-alive, bad input, graceful
//! shutdown.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use typed_mcp_http::HttpServer;

use crate::support::{PATIENCE, Probe, server};

/// The endpoint served by `typed_mcp_http::serve` on a fresh loopback port
/// until `stop` is sent (or dropped).
async fn start(probe: &Probe) -> (SocketAddr, oneshot::Sender<()>, JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = HttpServer::new(server(probe), addr).mount("/mcp").unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = tokio::spawn(typed_mcp_http::serve(listener, app, async {
        let _ = stopped.await;
    }));
    (addr, stop, serving)
}

/// A `tools/call` of `name` as one HTTP/1.1 request; `meta` is extra `_meta`
/// members (JSON, with a leading comma).
fn call(id: u32, name: &str, meta: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}{meta}}},"name":"{name}","arguments":{{"a":2,"b":3}}}}}}"#
    );
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {name}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Reads from `stream` until what was read holds `needle`; returns it all.
async fn read_until(stream: &mut TcpStream, needle: &str) -> String {
    let mut read = Vec::new();
    let reading = async {
        let mut chunk = [0u8; 4096];
        while !String::from_utf8_lossy(&read).contains(needle) {
            let n = stream.read(&mut chunk).await.expect("the connection reads");
            assert!(
                n > 0,
                "the connection closed before {needle:?}; read: {}",
                String::from_utf8_lossy(&read)
            );
            read.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(PATIENCE, reading)
        .await
        .unwrap_or_else(|_| panic!("no {needle:?} in time"));
    String::from_utf8(read).expect("UTF-8 answers")
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
        stream
            .write_all(call(id, "add", "").as_bytes())
            .await
            .unwrap();
        let answer = read_until(&mut stream, r#"{"sum":5}"#).await;
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.contains(&format!(r#""id":{id}"#)), "{answer}");
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
    let refused = read_until(&mut garbage, "\r\n\r\n").await;
    assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");
    read_to_close(&mut garbage).await;

    // The connection opened before and a new one both still serve.
    served
        .write_all(call(1, "add", "").as_bytes())
        .await
        .unwrap();
    read_until(&mut served, r#"{"sum":5}"#).await;
    let mut fresh = TcpStream::connect(addr).await.unwrap();
    fresh
        .write_all(call(2, "add", "").as_bytes())
        .await
        .unwrap();
    read_until(&mut fresh, r#"{"sum":5}"#).await;
}

#[tokio::test]
async fn shutdown_refuses_new_connections_and_waits_for_the_call_in_flight() {
    let probe = Probe::default();
    let (addr, stop, serving) = start(&probe).await;
    // An idle keep-alive connection does not hold the shutdown up.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(call(1, "add", "").as_bytes()).await.unwrap();
    read_until(&mut idle, r#"{"sum":5}"#).await;
    // `stream` sends its first progress event, then waits for the test.
    let mut busy = TcpStream::connect(addr).await.unwrap();
    busy.write_all(call(2, "stream", r#","progressToken":"p""#).as_bytes())
        .await
        .unwrap();
    read_until(&mut busy, r#""progress":1"#).await;

    stop.send(()).unwrap();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while TcpStream::connect(addr).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the listener still accepts after the shutdown"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    read_to_close(&mut idle).await;
    assert!(
        !serving.is_finished(),
        "serve returned with a call still in flight"
    );

    probe.proceed.notify_one();
    let rest = read_until(&mut busy, "streamed").await;
    assert!(rest.contains(r#""id":2"#), "{rest}");
    tokio::time::timeout(PATIENCE, serving)
        .await
        .expect("serve returns once the last connection is done")
        .expect("serve does not panic");
}
