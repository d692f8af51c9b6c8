//! The MCP endpoint: one POST, one JSON-RPC message, one answer (JSON, an SSE
//! stream, or `202` for a notification).
//!
//! Transport checks run first, in this order, each answering with a
//! single-line JSON-RPC error body (`-32600`) when it fails: `Host`/`Origin`
//! (403), method (405), `Accept` (406), `Content-Type` (415), body size (413).
//! Then the router walks its own ladder (see `typed_mcp::core::router`) with
//! the request's headers as transport facts, and gives the status of every
//! protocol error.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;
use http::header::{ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use serde::Deserialize;
use tokio::sync::mpsc::UnboundedReceiver;
use typed_mcp::core::router::Headers;
use typed_mcp::core::{Decision, Facts, RequestId, RpcError, encode};
use typed_mcp::dispatch::{Accepted, Connection, Outbox};
use typed_mcp::{Principal, Server};

use crate::negotiate::{Accepts, check_content_type};
use crate::protect::Protection;

/// What every request to the endpoint shares.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub(crate) server: Server,
    pub(crate) protection: Protection,
    /// Refuse requests that the application's authentication layer did not
    /// mark with a [`Principal`].
    pub(crate) require_principal: bool,
}

/// The axum handler of the endpoint.
pub(crate) async fn handle(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    endpoint.serve(request).await
}

impl Endpoint {
    async fn serve(&self, request: Request) -> Response {
        let (parts, body) = request.into_parts();
        if let Err(refused) = self.protection.admit(&parts) {
            return refusal(refused.status, refused.reason);
        }
        let headers = &parts.headers;
        if parts.method != Method::POST {
            let mut response = refusal(
                StatusCode::METHOD_NOT_ALLOWED,
                format!(
                    "{} is not served here: send each JSON-RPC message as its own POST (MCP 2026-07-28 has no sessions and no standalone streams)",
                    parts.method
                ),
            );
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("POST"));
            return response;
        }
        // The application's authentication layer (if any) put the caller here.
        let principal = parts.extensions.get::<Principal>().cloned();
        if self.require_principal && principal.is_none() {
            tracing::warn!("refused an MCP request without an authenticated principal");
            return refusal(
                StatusCode::UNAUTHORIZED,
                "this endpoint requires an authenticated caller, and none was established",
            );
        }
        let accepts = Accepts::from_headers(headers);
        if accepts.none() {
            return refusal(
                StatusCode::NOT_ACCEPTABLE,
                "Accept must allow application/json or text/event-stream (send both)",
            );
        }
        if let Err(reason) = check_content_type(headers) {
            return refusal(StatusCode::UNSUPPORTED_MEDIA_TYPE, reason);
        }
        let max = self.server.limits().max_message_bytes;
        let declared = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(len) = declared.filter(|&len| len > max as u64) {
            return too_large(format!(
                "message of {len} bytes exceeds the limit of {max} bytes"
            ));
        }
        let body = match Limited::new(body, max).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
                return too_large(format!("message exceeds the limit of {max} bytes"));
            }
            Err(e) => {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    format!("the request body could not be read: {e}"),
                );
            }
        };
        self.dispatch(&body, headers, accepts, principal).await
    }

    async fn dispatch(
        &self,
        body: &[u8],
        headers: &HeaderMap,
        accepts: Accepts,
        principal: Option<Principal>,
    ) -> Response {
        let decision = {
            let request_headers = RequestHeaders(headers);
            let lists = self.server.list_view(principal.as_ref());
            let facts = Facts {
                headers: Some(&request_headers),
                lists: lists.as_deref(),
            };
            self.server.router().route(body, &facts)
        };
        let call = match decision {
            Decision::Answer(answer) => {
                return immediate(status(answer.http_status), answer.body, accepts);
            }
            // A notification: nothing to answer. A cancellation names a request
            // of another POST, which its own stream's closing cancels.
            Decision::Drop(_) => return accepted(),
            Decision::Invoke(call) => call,
        };
        // Progress and log messages can only reach the client on an SSE stream.
        // A subscription is a stream by nature; other calls stream only when
        // their `_meta` asks for progress or log messages.
        let notifies = call.meta.progress_token.is_some()
            || call.meta.log_level.is_some()
            || matches!(call.target, typed_mcp::core::Target::Listen { .. });
        // Ids of different clients may collide: every POST gets its own in-flight
        // registry.
        let connection = Connection::new(self.server.clone());
        let (outbox, rx) = Outbox::channel();
        let accepted_as = connection.start_as(call, &outbox, principal);
        drop(outbox);
        let mut call = match accepted_as {
            Accepted::Started(id) => RunningCall {
                connection,
                id,
                armed: true,
                rx,
            },
            Accepted::Answered { http_status } => {
                let mut rx = rx;
                return match rx.recv().await {
                    Some(message) => immediate(status(http_status), message, accepts),
                    None => internal("the request was answered with nothing"),
                };
            }
            Accepted::Dropped => return accepted(),
        };
        if (notifies && accepts.sse) || !accepts.json {
            return sse(call);
        }
        // JSON: wait for the one final message. Should this future be dropped
        // (the client went away), `call` cancels the handler.
        loop {
            match call.next().await {
                Some(Message::Final(message)) => {
                    let status = final_status(&message);
                    return json(status, message);
                }
                Some(Message::Notification(_)) => {}
                None => return internal("the call ended without a response"),
            }
        }
    }
}

/// The request's headers as the router reads them. A value that is not visible
/// ASCII, or a header sent more than once, reads as [`INVALID`], which no body
/// value equals and no decoding accepts: the router answers `-32020`.
struct RequestHeaders<'a>(&'a HeaderMap);

/// What an unreadable header value looks like to the router.
const INVALID: &str = "\u{fffd}invalid header value\u{fffd}";

impl Headers for RequestHeaders<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        let mut values = self.0.get_all(name).iter();
        let first = values.next()?;
        if values.next().is_some() {
            return Some(INVALID);
        }
        Some(first.to_str().unwrap_or(INVALID))
    }
}

/// One message the call sent.
enum Message {
    /// `notifications/progress` or `notifications/message`.
    Notification(Vec<u8>),
    /// The response; nothing follows it.
    Final(Vec<u8>),
}

/// A started call and the receiving end of its messages. Dropped before the
/// final message (the client closed the response stream), it cancels the call:
/// the handler's future is dropped and nothing more is sent for it.
struct RunningCall {
    connection: Connection,
    id: RequestId,
    /// Still waiting for the final message.
    armed: bool,
    rx: UnboundedReceiver<Vec<u8>>,
}

impl RunningCall {
    /// The next message, or `None` after the final one (or if the call ended
    /// without one).
    async fn next(&mut self) -> Option<Message> {
        if !self.armed {
            return None;
        }
        let message = self.rx.recv().await?;
        if is_notification(&message) {
            Some(Message::Notification(message))
        } else {
            self.armed = false;
            Some(Message::Final(message))
        }
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        if self.armed && self.connection.cancel(&self.id) {
            tracing::debug!(request_id = %self.id, "response stream closed: call cancelled");
        }
    }
}

/// The head `typed_mcp::core::encode::notification` writes; responses start
/// with `{"jsonrpc":"2.0","id":` instead.
const NOTIFICATION_HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",\"method\":";

fn is_notification(message: &[u8]) -> bool {
    message.starts_with(NOTIFICATION_HEAD)
}

/// An SSE response carrying every message of the call, each as one `data:`
/// line, ending after the final response.
fn sse(call: RunningCall) -> Response {
    let events = futures_util::stream::unfold(call, |mut call| async move {
        let (Message::Notification(message) | Message::Final(message)) = call.next().await?;
        Some((Ok::<_, Infallible>(sse_event(&message)), call))
    });
    event_stream(Body::from_stream(events))
}

/// A `text/event-stream` response with headers that keep proxies from
/// buffering or caching it.
fn event_stream(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    response
}

/// A message answered at once: JSON, or one SSE event when the client accepts
/// only `text/event-stream` and the answer is a success (errors are always
/// JSON, as clients read error statuses' bodies as JSON).
fn immediate(status: StatusCode, message: Vec<u8>, accepts: Accepts) -> Response {
    if status == StatusCode::OK && !accepts.json {
        return event_stream(Body::from(sse_event(&message)));
    }
    json(status, message)
}

/// `data: <message>\n\n`. Messages are compact JSON, so never contain a newline.
fn sse_event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 8);
    event.extend_from_slice(b"data: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The status of a handler's final message: 200 for a result, and the
/// router's policy for an error (`-32603` is 500).
fn final_status(message: &[u8]) -> StatusCode {
    #[derive(Deserialize)]
    struct Final {
        error: Option<ErrorCode>,
    }
    #[derive(Deserialize)]
    struct ErrorCode {
        code: i32,
    }
    match serde_json::from_slice::<Final>(message) {
        Ok(Final {
            error: Some(ErrorCode { code }),
        }) => status(RpcError::new(code, "").http_status()),
        _ => StatusCode::OK,
    }
}

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn json(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn accepted() -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

/// A transport-level refusal: `status` with an id-less `-32600` body.
fn refusal(status: StatusCode, reason: impl Into<String>) -> Response {
    json(
        status,
        encode::error(None, &RpcError::invalid_request(reason)),
    )
}

fn too_large(reason: String) -> Response {
    refusal(StatusCode::PAYLOAD_TOO_LARGE, reason)
}

fn internal(reason: &str) -> Response {
    json(
        StatusCode::INTERNAL_SERVER_ERROR,
        encode::error(None, &RpcError::internal(reason)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn notifications_are_told_from_responses_by_their_head() {
        let id = RequestId::from("n");
        assert!(is_notification(&encode::notification(
            "notifications/progress",
            &json!({"progressToken": 1, "progress": 1})
        )));
        assert!(!is_notification(&encode::result(
            &id,
            &json!({"method": 1})
        )));
        assert!(!is_notification(&encode::error(
            Some(&id),
            &RpcError::internal("x")
        )));
    }

    #[test]
    fn final_statuses_follow_the_router_policy() {
        let id = RequestId::from(7);
        assert_eq!(final_status(&encode::result(&id, &json!({}))), 200);
        let nested = encode::result(&id, &json!({"error": {"code": -32603}}));
        assert_eq!(final_status(&nested), 200);
        let internal = encode::error(Some(&id), &RpcError::internal("boom"));
        assert_eq!(final_status(&internal), 500);
        let missing = encode::error(Some(&id), &RpcError::resource_not_found("x://y"));
        assert_eq!(final_status(&missing), 200);
    }

    #[test]
    fn sse_events_are_one_data_line() {
        assert_eq!(&sse_event(b"{\"a\":1}")[..], b"data: {\"a\":1}\n\n");
    }

    #[test]
    fn unreadable_or_repeated_headers_read_as_invalid() {
        let mut map = HeaderMap::new();
        map.insert("mcp-name", HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap());
        map.append("mcp-method", HeaderValue::from_static("a"));
        map.append("mcp-method", HeaderValue::from_static("b"));
        map.insert("mcp-param-Region", HeaderValue::from_static("eu"));
        let h = RequestHeaders(&map);
        assert_eq!(h.get("Mcp-Name"), Some(INVALID));
        assert_eq!(h.get("mcp-method"), Some(INVALID));
        assert_eq!(h.get("MCP-PARAM-REGION"), Some("eu"));
        assert_eq!(h.get("mcp-param-region"), Some("eu"));
        assert_eq!(h.get("absent"), None);
        assert_eq!(h.get("not a header name"), None);
    }
}
