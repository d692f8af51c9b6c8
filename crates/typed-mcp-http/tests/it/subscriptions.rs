//! `subscriptions/listen` over Streamable HTTP: always an SSE stream, the
//! acknowledgement first, updates as they are published, and teardown when the
//! client closes the stream.

use std::time::Duration;

use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use typed_mcp::wire::ResourceContents;
use typed_mcp::{Server, declare::ResourceDecl};

use crate::support::{PATIENCE, Req, serve_http, sse_events};

fn server() -> Server {
    Server::new("http-subscriptions", "0.1.0")
        .resource(
            ResourceDecl::builder("file:///watched", "watched")
                .description("A watched file.")
                .handler(|r, _| async move { Ok(vec![ResourceContents::text(r.uri, None, "w")]) }),
        )
        .build()
        .unwrap()
}

/// Reads the next SSE event of a streaming body.
async fn next_event(body: &mut hyper::body::Incoming) -> Value {
    let frame = tokio::time::timeout(PATIENCE, body.frame())
        .await
        .expect("an event in time")
        .expect("the stream is open")
        .expect("a readable frame");
    let data = frame.into_data().expect("a data frame");
    let mut events = sse_events(&data);
    assert_eq!(events.len(), 1, "one event per frame: {events:?}");
    events.remove(0)
}

#[tokio::test]
async fn a_subscription_is_an_sse_stream_until_the_client_closes_it() {
    let server = server();
    let updates = server.resource_updates().clone();
    let client = serve_http(server, |http| http).await;
    let listen = Req::rpc(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["file:///watched"]}}),
    );
    let response = client.open(&listen).await;
    if response.status() != 200 {
        let body = response.into_body().collect().await.unwrap().to_bytes();
        panic!("listen refused: {}", String::from_utf8_lossy(&body));
    }
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();

    let ack = next_event(&mut body).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );

    updates.publish("file:///watched");
    let update = next_event(&mut body).await;
    assert_eq!(update["method"], "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "file:///watched");
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );

    // Closing the stream ends the subscription on the server.
    assert_eq!(updates.subscribers(), 1);
    drop(body);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while updates.subscribers() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the subscription outlived its stream"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_quiet_subscription_stream_gets_keep_alive_comments() {
    let client = serve_http(server(), |http| {
        http.sse_keep_alive(Duration::from_millis(50))
    })
    .await;
    let listen = Req::rpc(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["file:///watched"]}}),
    );
    let response = client.open(&listen).await;
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let ack = next_event(&mut body).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    for _ in 0..2 {
        let frame = tokio::time::timeout(PATIENCE, body.frame())
            .await
            .expect("a frame in time")
            .expect("the stream is open")
            .expect("a readable frame");
        assert_eq!(&frame.into_data().unwrap()[..], b": keep-alive\n\n");
    }
}
