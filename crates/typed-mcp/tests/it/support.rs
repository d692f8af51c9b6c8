//! Shared helpers: request and header builders, and assertions about one
//! response.

use serde_json::{Value, json};
use typed_mcp::transport::Inbound;
use typed_mcp_client::testing::{Response, TestClient};

pub const VERSION: &str = "2026-07-28";

/// A valid `_meta` envelope with no client capabilities and no clientInfo.
pub fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A request with this id, method and params (sent as given).
pub fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A request whose params are `params` plus a valid envelope.
pub fn enveloped(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = envelope();
    request(id, method, params)
}

/// Header pairs, as the HTTP transport would hand them to the router.
pub fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

/// The standard headers of a 2026-07-28 POST for `method`.
pub fn std_headers(method: &str) -> Vec<(String, String)> {
    headers(&[
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", VERSION),
        ("Mcp-Method", method),
    ])
}

/// The standard headers plus `Mcp-Name`.
pub fn named_headers(method: &str, name: &str) -> Vec<(String, String)> {
    let mut h = std_headers(method);
    h.push(("Mcp-Name".into(), name.into()));
    h
}

/// Sends `message` as if over HTTP with these headers.
pub async fn send_http(
    client: &TestClient,
    message: &Value,
    hdrs: &Vec<(String, String)>,
) -> Response {
    let bytes = serde_json::to_vec(message).expect("a Value serializes");
    client
        .send_raw_with(&bytes, Inbound::default().headers(hdrs))
        .await
}

/// Asserts that the server answered with exactly one error message carrying
/// `code` and echoing `id` (`None`: no `id` member at all), and, when `status`
/// is given, that the router answered with that HTTP status. Returns the error.
#[track_caller]
pub fn assert_error(
    response: &Response,
    code: i64,
    id: Option<Value>,
    status: Option<u16>,
) -> Value {
    assert_eq!(
        response.messages.len(),
        1,
        "expected one error message, got {:#?}",
        response.messages
    );
    let message = &response.messages[0];
    let error = message
        .get("error")
        .unwrap_or_else(|| panic!("expected an error, got {message}"));
    assert_eq!(error["code"], json!(code), "wrong code in {message}");
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{message}"
    );
    assert_eq!(message.get("id").cloned(), id, "wrong id echo in {message}");
    if let Some(status) = status {
        assert_eq!(
            response.http_status(),
            Some(status),
            "wrong HTTP status for {message} ({:?})",
            response.accepted
        );
    }
    error.clone()
}

/// Asserts a successful response echoing `id`; returns the result.
#[track_caller]
pub fn assert_result(response: &Response, id: Value) -> Value {
    let message = response
        .response()
        .unwrap_or_else(|| panic!("no response in {:#?}", response.messages));
    assert_eq!(message["id"], id, "wrong id echo in {message}");
    response.result().clone()
}
