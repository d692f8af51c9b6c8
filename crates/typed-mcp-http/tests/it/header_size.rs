//! The limit on request header bytes: `431`, a `-32600` body with the limit
//! and the size found, a warning, and the server goes on.

use serde_json::json;

use crate::support::{Client, Probe, Req, Warnings, serve_default, serve_http, server};

const DEFAULT_LIMIT: usize = 64 * 1024;

fn add() -> Req {
    Req::call("add", json!({"a": 1, "b": 2}))
}

#[track_caller]
fn assert_served(reply: &crate::support::Reply) {
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_eq!(reply.json()["result"]["structuredContent"]["sum"], 3);
}

/// The header bytes the server receives for `req`: its own headers, and the
/// `Host` and `Content-Length` the client adds.
fn received_header_bytes(client: &Client, req: &Req) -> usize {
    let own: usize = req
        .headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    own + "host".len()
        + client.addr.to_string().len()
        + "content-length".len()
        + req.body.len().to_string().len()
}

/// Sends `req`, expects `431` naming `limit` and the size found, and then a
/// normal call served on the same server.
async fn assert_refused_then_served(client: &Client, req: &Req, limit: usize) {
    let found = received_header_bytes(client, req);
    assert!(found > limit, "the test request is over the limit");
    let reply = client.send(req).await;
    let body = reply.assert_error(431, -32600);
    assert!(body.get("id").is_none(), "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("limit of {limit} bytes")),
        "{message}"
    );
    assert!(message.contains(&format!("{found} bytes")), "{message}");
    assert_served(&client.send(&add()).await);
}

#[tokio::test]
async fn one_header_value_of_64_kib_is_431_and_the_server_goes_on() {
    let warnings = Warnings::global();
    let client = serve_default(&Probe::default()).await;
    let req = add().header("x-padding", &"a".repeat(DEFAULT_LIMIT));
    assert_refused_then_served(&client, &req, DEFAULT_LIMIT).await;
    let found = received_header_bytes(&client, &req);
    let line = warnings.find(&format!("found={found}"));
    assert!(line.contains(&format!("limit={DEFAULT_LIMIT}")), "{line}");
    assert!(line.contains("size limit"), "{line}");
}

#[tokio::test]
async fn many_headers_over_the_limit_together_are_431_and_the_server_goes_on() {
    let client = serve_default(&Probe::default()).await;
    // 40 headers of 2 000 bytes: each small, 80 000 bytes in all, and fewer
    // than hyper's 100 headers.
    let mut req = add();
    for i in 0..40 {
        req = req.header(&format!("x-padding-{i:02}"), &"b".repeat(2_000));
    }
    assert_refused_then_served(&client, &req, DEFAULT_LIMIT).await;
    // The same name repeated counts every time.
    let mut req = add();
    for _ in 0..40 {
        let value = http::HeaderValue::from_str(&"c".repeat(2_000)).unwrap();
        req.headers.append("x-repeated", value);
    }
    assert_refused_then_served(&client, &req, DEFAULT_LIMIT).await;
}

/// `add()` with an `x-padding` header that brings the total to `total`.
fn padded_to(client: &Client, total: usize) -> Req {
    let base = add().header("x-padding", "");
    let padding = total - received_header_bytes(client, &base);
    add().header("x-padding", &"d".repeat(padding))
}

#[tokio::test]
async fn a_request_at_the_limit_is_served_and_one_byte_more_is_not() {
    let client = serve_default(&Probe::default()).await;
    let at_limit = padded_to(&client, DEFAULT_LIMIT);
    assert_eq!(received_header_bytes(&client, &at_limit), DEFAULT_LIMIT);
    assert_served(&client.send(&at_limit).await);
    let just_under = padded_to(&client, DEFAULT_LIMIT - 1);
    assert_served(&client.send(&just_under).await);
    let over = padded_to(&client, DEFAULT_LIMIT + 1);
    assert_refused_then_served(&client, &over, DEFAULT_LIMIT).await;
    assert_served(&client.send(&at_limit).await);
}

#[tokio::test]
async fn a_configured_limit_is_honoured() {
    let client = serve_http(server(&Probe::default()), |http| {
        http.max_header_bytes(1024)
    })
    .await;
    assert_served(&client.send(&padded_to(&client, 1024)).await);
    let over = padded_to(&client, 1025);
    assert_refused_then_served(&client, &over, 1024).await;
    // The size limit comes before the Host check.
    let foreign = padded_to(&client, 2048).header("host", "evil.example.com");
    assert_eq!(client.send(&foreign).await.status, 431);
    assert_served(&client.send(&add()).await);
}
