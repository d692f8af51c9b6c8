//! Test fixtures for typed-mcp. **This crate exists only for tests**: it is
//! not published and has no API anyone should depend on.
//!
//! It holds the `stdio-fixture` binary, a small MCP server declared with
//! typed-mcp's hand-declaration API and served over stdio, and the integration
//! tests in `tests/stdio.rs` that run that binary as a real subprocess and check
//! the stdio transport on the wire: framing, size and depth limits, the fd-1
//! redirect, the concurrency limit, panics, cancellation, shutdown on end of
//! input and its drain deadline, the redaction of secrets from panic reports,
//! and bounded memory under floods (shed calls, slow readers, large calls).
//! This library part only builds the request lines those tests send.

use serde_json::{Value, json};

/// The protocol revision every request declares.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The `params._meta` envelope every 2026-07-28 request carries.
pub fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A `tools/call` request as a JSON value.
pub fn tool_call(id: impl Into<Value>, name: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id.into(),
        "method": "tools/call",
        "params": {"_meta": envelope(), "name": name, "arguments": arguments}
    })
}

/// A `tools/call` request as one line of newline-delimited JSON (with its `\n`).
pub fn tool_call_line(id: impl Into<Value>, name: &str, arguments: Value) -> String {
    let mut line = tool_call(id, name, arguments).to_string();
    line.push('\n');
    line
}

/// A `notifications/cancelled` line (with its `\n`) for the request `id`.
pub fn cancel_line(id: impl Into<Value>) -> String {
    let mut line = json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id.into(), "reason": "test cancelled it"}
    })
    .to_string();
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines_are_single_lines_in_the_envelope() {
        let line = tool_call_line(3, "echo", json!({"text": "a\nb"}));
        assert_eq!(line.matches('\n').count(), 1);
        assert!(line.ends_with('\n'));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], 3);
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(v["params"]["arguments"]["text"], "a\nb");
    }
}
