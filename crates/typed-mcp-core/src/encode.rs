//! Writing JSON-RPC messages: compact, single-line, ids echoed exactly.

use serde::Serialize;

use crate::{RequestId, RpcError};

/// `{"jsonrpc":"2.0","id":<id>,"result":<result>}`.
pub fn result<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> Vec<u8> {
    let mut out = head(Some(id), b"result");
    if let Err(e) = serde_json::to_writer(&mut out, result) {
        return error(
            Some(id),
            &RpcError::internal(format!("the result could not be encoded: {e}")),
        );
    }
    out.push(b'}');
    out
}

/// Like [`result`], for a result already serialized as one JSON object.
pub fn result_raw(id: &RequestId, result_json: &str) -> Vec<u8> {
    let mut out = head(Some(id), b"result");
    out.reserve(result_json.len() + 1);
    out.extend_from_slice(result_json.as_bytes());
    out.push(b'}');
    out
}

/// `{"jsonrpc":"2.0","id":<id>,"error":{...}}`; the `id` is omitted when it
/// could not be read from the request.
pub fn error(id: Option<&RequestId>, error: &RpcError) -> Vec<u8> {
    let mut out = head(id, b"error");
    serde_json::to_writer(&mut out, error).expect("an error object always serializes");
    out.push(b'}');
    out
}

/// `{"jsonrpc":"2.0","method":<method>,"params":<params>}`.
pub fn notification<P: Serialize + ?Sized>(method: &str, params: &P) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    serde_json::to_writer(&mut out, method).expect("a string serializes");
    out.extend_from_slice(b",\"params\":");
    serde_json::to_writer(&mut out, params).expect("notification params serialize");
    out.push(b'}');
    out
}

fn head(id: Option<&RequestId>, member: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",");
    if let Some(id) = id {
        out.extend_from_slice(b"\"id\":");
        serde_json::to_writer(&mut out, id).expect("an id always serializes");
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(member);
    out.extend_from_slice(b"\":");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_are_single_line_and_echo_ids() {
        let id = RequestId::from("a\nb");
        let bytes = result(&id, &json!({"text": "x\ny"}));
        assert!(!bytes.contains(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc":"2.0","id":"a\nb","result":{"text":"x\ny"}})
        );
    }

    #[test]
    fn errors_without_a_readable_id_omit_it() {
        let bytes = error(None, &RpcError::parse_error("bad"));
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc":"2.0","error":{"code":-32700,"message":"bad"}})
        );
    }
}
