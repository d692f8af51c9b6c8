//! The quickstart drains on SIGTERM: a call in flight is answered, then it
//! exits 0, over HTTP and on stdio.

use std::time::Duration;

use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;

use crate::quickstart::Quickstart;
use crate::support::{PATIENCE, call_body, call_head, read_until};

#[cfg(unix)]
#[tokio::test]
async fn sigterm_lets_the_call_in_flight_finish_and_the_quickstart_exits_0() {
    let mut server = Quickstart::spawn();
    let body = call_body(7, "echo", r#"{"text":"still here"}"#, "");
    // `Expect: 100-continue`: hyper says `100 Continue` once the endpoint
    // starts reading the body, so the call is in flight before the signal.
    let head = call_head("echo", body.len(), "Expect: 100-continue\r\n");
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    read_until(&mut stream, &mut answer, b"100 Continue\r\n\r\n").await;
    answer.clear();

    sigterm(&server);
    // Once the signal is handled the listener closes: new connections fail.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while TcpStream::connect(server.addr).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "expected the listener to close after SIGTERM, it still accepts"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    stream.write_all(body.as_bytes()).await.unwrap();
    read_until(&mut stream, &mut answer, b"still here").await;
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(text.contains(r#""id":7"#), "{text}");
    let status = server.wait_exit();
    assert_eq!(
        status.code(),
        Some(0),
        "expected exit status 0, found {status}"
    );
}

/// Sends SIGTERM to the server.
fn sigterm(server: &Quickstart) {
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success(), "kill -TERM failed: {kill}");
}

#[cfg(unix)]
#[test]
fn sigterm_stops_a_stdio_quickstart_whose_stdin_is_still_open_with_exit_0() {
    let mut server = Quickstart::stdio();
    sigterm(&server);
    let status = server.wait_exit();
    assert_eq!(
        status.code(),
        Some(0),
        "expected exit status 0, found {status}"
    );
}
