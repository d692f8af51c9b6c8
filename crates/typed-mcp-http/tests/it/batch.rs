//! A JSON array body (a JSON-RPC batch, `[]` included) is one `-32600` with
//! `400`: MCP has no batches. Nothing in it runs, and the server goes on.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use crate::support::{Probe, Req, serve_default};

fn request(id: i64, name: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    })
}

#[tokio::test]
async fn a_batch_is_one_invalid_request_without_an_id_and_the_server_goes_on() {
    let probe = Probe::default();
    let client = serve_default(&probe).await;
    let bodies = [
        json!([request(1, "gauge"), request(2, "gauge")]).to_string(),
        "[]".to_owned(),
        " \n[ ]".to_owned(),
        json!([request(3, "gauge")]).to_string(),
        json!([{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}])
            .to_string(),
        json!([[request(4, "gauge")]]).to_string(),
    ];
    for body in bodies {
        let reply = client.send(&Req::raw(body.clone())).await;
        // `json()` asserts one line holding one JSON value: an object, never
        // an array of answers.
        let answer = reply.assert_error(400, -32600);
        assert!(answer.is_object(), "{body}: {answer}");
        // MCP's schema makes the id of an error optional and never `null`:
        // this is its form of JSON-RPC's `"id": null`.
        assert!(answer.get("id").is_none(), "{body}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("batches are not part of MCP"), "{message}");
        // Nothing in the batch ran.
        assert_eq!(probe.peak.load(Ordering::SeqCst), 0, "{body}");

        let reply = client
            .send(&Req::call("add", json!({"a": 1, "b": 2})))
            .await;
        assert_eq!(reply.status, 200, "after {body}: {:?}", reply.body);
        assert_eq!(reply.json()["result"]["structuredContent"]["sum"], 3);
    }
}
