//! The same limits as stdio: body size, JSON depth, concurrency.

use std::sync::atomic::Ordering;

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::support::{Client, PATIENCE, Probe, Req, builder, serve_default, serve_http};

async fn small_server(max_message_bytes: usize) -> Client {
    let server = builder(&Probe::default())
        .max_message_bytes(max_message_bytes)
        .build()
        .unwrap();
    serve_http(server, |http| http).await
}

#[tokio::test]
async fn an_oversized_body_is_413_and_the_server_goes_on() {
    let client = small_server(1024).await;
    let padding = "x".repeat(4096);
    let req = Req::call("add", json!({"a": 1, "b": 2, "pad": padding}));
    let body = client.send(&req).await.assert_error(413, -32600);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("1024"), "{message}");
    let reply = client
        .send(&Req::call("add", json!({"a": 1, "b": 2})))
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["structuredContent"]["sum"], 3);
}

#[tokio::test]
async fn a_body_under_the_default_limit_is_served_whole() {
    // 3 MiB: over axum's 2 MiB default for extractors, under the server's 4 MiB.
    let client = serve_default(&Probe::default()).await;
    let padding = "x".repeat(3 * 1024 * 1024);
    let reply = client
        .send(&Req::call("add", json!({"a": 2, "b": 2, "pad": padding})))
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["structuredContent"]["sum"], 4);
}

#[tokio::test]
async fn an_oversized_chunked_body_is_413() {
    let client = small_server(1024).await;
    let mut stream = tokio::net::TcpStream::connect(client.addr).await.unwrap();
    let chunk = "x".repeat(800);
    let request = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{len:x}\r\n{chunk}\r\n{len:x}\r\n{chunk}\r\n0\r\n\r\n",
        len = chunk.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = vec![0; 12];
    tokio::time::timeout(PATIENCE, stream.read_exact(&mut head))
        .await
        .expect("an answer in time")
        .unwrap();
    assert_eq!(&head, b"HTTP/1.1 413");
    let reply = client.send(&Req::rpc("tools/list", json!({}))).await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn a_body_sent_in_several_chunks_is_read_whole() {
    // Each chunk is its own write, with a pause between, so the body reaches
    // the server as several frames (and a trailer), not one.
    let client = serve_default(&Probe::default()).await;
    let body = json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "name": "add", "arguments": {"a": 40, "b": 2}
        }
    })
    .to_string();
    let (one, rest) = body.split_at(10);
    let (two, three) = rest.split_at(rest.len() / 2);
    let mut stream = tokio::net::TcpStream::connect(client.addr).await.unwrap();
    let head = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    for chunk in [one, two, three] {
        let framed = format!("{:x}\r\n{chunk}\r\n", chunk.len());
        stream.write_all(framed.as_bytes()).await.unwrap();
        stream.flush().await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    stream
        .write_all(b"0\r\nX-Trailer: t\r\n\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    tokio::time::timeout(PATIENCE, stream.read_to_end(&mut reply))
        .await
        .expect("an answer in time")
        .unwrap();
    let reply = String::from_utf8(reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    let json_start = reply.find("{\"jsonrpc\"").expect("a JSON-RPC body");
    let answer: serde_json::Value = serde_json::Deserializer::from_str(&reply[json_start..])
        .into_iter()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["result"]["structuredContent"]["sum"], 42, "{answer}");
}

#[tokio::test]
async fn ten_thousand_levels_are_400_and_the_server_goes_on() {
    let client = serve_default(&Probe::default()).await;
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    client.send(&Req::raw(deep)).await.assert_error(400, -32700);
    let deep_args = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"add","arguments":{{"a":{}1{}}}}}}}"#,
        "{\"x\":".repeat(10_000),
        "}".repeat(10_000)
    );
    client
        .send(&Req::raw(deep_args))
        .await
        .assert_error(400, -32700);
    let reply = client
        .send(&Req::call("add", json!({"a": 1, "b": 1})))
        .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_calls_run_at_most_eight_at_once() {
    let probe = Probe::default();
    let server = builder(&probe).max_concurrent(8).build().unwrap();
    let client = serve_http(server, |http| http).await;
    let calls = (0..200).map(|_| {
        let client = client.clone();
        tokio::spawn(async move { client.send(&Req::call("gauge", json!({}))).await })
    });
    let replies = futures_util::future::join_all(calls).await;
    for reply in replies {
        let reply = reply.expect("the request task finishes");
        assert_eq!(reply.status, 200, "{:?}", reply.body);
        assert_eq!(reply.json()["result"]["content"][0]["text"], "counted");
    }
    let peak = probe.peak.load(Ordering::SeqCst);
    assert!((1..=8).contains(&peak), "peak of {peak} handlers at once");
    assert_eq!(probe.running.load(Ordering::SeqCst), 0);
}
