//! The MCP endpoint: one POST, one JSON-RPC message, one answer (JSON, an SSE
//! stream, or `202` for a notification).
//!
//! Transport checks run first, in this order, each answering with a
//! single-line JSON-RPC error body (`-32600`) when it fails: `Host`/`Origin`
//! (403), method (405), `Accept` (406), `Content-Type` (415), body size (413).
//! Then the router walks its own ladder (see `typed_mcp::protocol::router`) with
//! the request's headers as transport facts, and gives the status of every
//! protocol error.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::header::{ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use typed_mcp::protocol::router::Headers;
use typed_mcp::protocol::{RequestId, RpcError, encode};
use typed_mcp::transport::{
    Accepted, Connection, Inbound, Inbox, Message, Outbox, Outgoing, Reply, Reservation, Shutdown,
};
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
    /// Once triggered, new requests get `503` and calls in flight are
    /// cancelled after the server's drain deadline.
    pub(crate) shutdown: Option<Shutdown>,
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
        if self.shutdown.as_ref().is_some_and(Shutdown::is_triggered) {
            return overloaded("the server is shutting down");
        }
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
        // Ids of different clients may collide: every POST gets its own
        // connection (its own in-flight registry).
        let connection = Connection::new(self.server.clone());
        // Room in the server's byte budget is taken before the body is read,
        // so many large bodies at once wait in the network, not in memory.
        let reservation = match declared {
            Some(len) => match connection.reserve(len as usize).await {
                Some(reservation) => Some(reservation),
                None => return overloaded("too many bytes in flight"),
            },
            None => None,
        };
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
        let request = Post {
            connection,
            body,
            reservation,
            accepts,
            principal,
        };
        self.dispatch(request, headers).await
    }

    async fn dispatch(&self, request: Post, headers: &HeaderMap) -> Response {
        let Post {
            connection,
            body,
            reservation,
            accepts,
            principal,
        } = request;
        let (outbox, mut inbox) = Outbox::channel();
        let accepted = {
            let request_headers = RequestHeaders(headers);
            let inbound = Inbound::default()
                .headers(&request_headers)
                .principal(principal.as_ref());
            connection
                .accept_reserved(&body, inbound, reservation, &outbox)
                .await
        };
        // The call holds its parsed form; the raw body is not kept twice.
        drop(body);
        drop(outbox);
        let (id, notifies) = match accepted {
            Accepted::Started { id, notifies } => (id, notifies),
            Accepted::Dropped => return accepted_response(),
            // Answered at once: the reply is already queued.
            _ => {
                return match inbox.recv().await {
                    Some(out) if out.is_reply() => immediate(out, accepts),
                    _ => internal("the request was answered with nothing"),
                };
            }
        };
        let mut call = RunningCall {
            drain: drain_deadline(self.shutdown.clone(), self.server.drain_timeout()),
            connection,
            id,
            armed: true,
            inbox,
        };
        // Progress and log messages can only reach the client on an SSE
        // stream: a call streams when it asked for them (or is a subscription).
        if (notifies && accepts.sse) || !accepts.json {
            return sse(call);
        }
        // JSON: wait for the one final message. Should this future be dropped
        // (the client went away), `call` cancels the handler.
        loop {
            match call.next().await {
                Some(next) if next.is_reply() => return json_reply(next),
                Some(_notification) => {}
                None => return internal("the call ended without a response"),
            }
        }
    }
}

/// One POST whose body was read, ready to route.
struct Post {
    connection: Connection,
    body: Bytes,
    reservation: Option<Reservation>,
    accepts: Accepts,
    principal: Option<Principal>,
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

/// Completes once the server is shutting down and its drain deadline has
/// passed; never without a shutdown signal.
fn drain_deadline(shutdown: Option<Shutdown>, drain: Duration) -> BoxFuture<'static, ()> {
    Box::pin(async move {
        match shutdown {
            Some(shutdown) => {
                shutdown.triggered().await;
                tokio::time::sleep(drain).await;
            }
            None => std::future::pending().await,
        }
    })
}

/// A started call and the receiving end of its messages. Dropped before the
/// final message (the client closed the response stream), it cancels the call:
/// the handler's future is dropped and nothing more is sent for it.
struct RunningCall {
    connection: Connection,
    id: RequestId,
    /// Still waiting for the final message.
    armed: bool,
    inbox: Inbox,
    /// The shutdown's drain deadline: the call is cancelled then.
    drain: BoxFuture<'static, ()>,
}

impl RunningCall {
    /// The next message, or `None` after the final one (or if the call ended
    /// without one).
    async fn next(&mut self) -> Option<Outgoing> {
        if !self.armed {
            return None;
        }
        let out = tokio::select! {
            out = self.inbox.recv() => out?,
            () = &mut self.drain => {
                // Shutting down and out of time: the call is cancelled (its
                // receipt says so) and the client told to retry elsewhere.
                self.armed = false;
                self.connection.cancel(&self.id);
                return Some(Message::Reply(shutting_down(&self.id)).into());
            }
        };
        if out.is_reply() {
            self.armed = false;
        }
        Some(out)
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        if self.armed && self.connection.cancel(&self.id) {
            tracing::debug!(request_id = %self.id, "response stream closed: call cancelled");
        }
    }
}

/// The message's JSON text, without a copy: a message the server queued
/// gives its room back when these bytes are dropped, once written.
fn into_bytes(out: Outgoing) -> Bytes {
    Bytes::from_owner(Written(out))
}

/// An [`Outgoing`] as the bytes of a response body.
struct Written(Outgoing);

impl AsRef<[u8]> for Written {
    fn as_ref(&self) -> &[u8] {
        self.0.body()
    }
}

/// The reply of a call cancelled by a shutdown.
fn shutting_down(id: &RequestId) -> Reply {
    Reply::error(
        Some(id),
        &RpcError::overloaded("the server is shutting down; retry later", 1000),
    )
}

/// An SSE response carrying every message of the call, each as one `data:`
/// line, ending after the final response.
fn sse(call: RunningCall) -> Response {
    let events = futures_util::stream::unfold(call, |mut call| async move {
        let next = call.next().await?;
        Some((Ok::<_, Infallible>(sse_event(next.message().body())), call))
    });
    event_stream(Body::from_stream(events))
}

/// `data: <message>\n\n`, one frame (so one chunk on the wire, which clients
/// and proxies read as one event). Messages are compact JSON, so never contain
/// a newline.
fn sse_event(message: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(message.len() + 8);
    event.extend_from_slice(b"data: ");
    event.extend_from_slice(message);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
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

/// A reply answered at once: JSON, or one SSE event when the client accepts
/// only `text/event-stream` and the reply is a success (errors are always
/// JSON, as clients read error statuses' bodies as JSON).
fn immediate(reply: Outgoing, accepts: Accepts) -> Response {
    let ok = matches!(reply.message(), Message::Reply(r) if r.http_status == 200);
    if ok && !accepts.json {
        return event_stream(Body::from(sse_event(reply.message().body())));
    }
    json_reply(reply)
}

/// A reply as a JSON response, with `Retry-After` when it has one; a `503`
/// always has one.
fn json_reply(reply: Outgoing) -> Response {
    let (code, retry_after) = match reply.message() {
        Message::Reply(r) => (r.http_status, r.retry_after),
        Message::Notification(_) | Message::Request(_) => (500, None),
    };
    // The pipeline gives every overload its delay; a 503 without one still
    // tells the client when to come back.
    let retry_after = match retry_after {
        Some(after) => Some(after),
        None if code == 503 => Some(Duration::from_secs(1)),
        None => None,
    };
    let mut response = json(status(code), into_bytes(reply));
    if let Some(after) = retry_after {
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(retry_after_seconds(after)));
    }
    response
}

/// `Retry-After` counts whole seconds: round up, so a client never retries
/// before the delay, and never say 0.
fn retry_after_seconds(after: Duration) -> u64 {
    let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
    seconds.max(1)
}

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn json(status: StatusCode, body: impl Into<Body>) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn accepted_response() -> Response {
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

/// `503` with `Retry-After` and an id-less `-31002` body.
fn overloaded(why: &str) -> Response {
    let error = RpcError::overloaded(
        format!("the server is overloaded ({why}); retry later"),
        1000,
    );
    let mut response = json(StatusCode::SERVICE_UNAVAILABLE, encode::error(None, &error));
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
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

    #[test]
    fn sse_events_are_one_data_line() {
        assert_eq!(&sse_event(b"{\"a\":1}")[..], b"data: {\"a\":1}\n\n");
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds_and_is_never_0() {
        assert_eq!(retry_after_seconds(Duration::ZERO), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1000)), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(retry_after_seconds(Duration::from_millis(2500)), 3);
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
