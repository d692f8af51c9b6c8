//! Streamable HTTP: one POST per message, with the era's headers; the answer
//! is read whether the server sends `application/json` or a
//! `text/event-stream`, and an event stream is read by a task that stops when
//! the caller gives up (closing the stream, which cancels the request).

use bytes::{Bytes, BytesMut};
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming as Body;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{Exchange, Limits, Outgoing, PER_REQUEST_BACKLOG, ServerRequests, is_server_request};
use crate::error::{ClientError, snippet};

/// The header of a legacy session's id.
pub(crate) const SESSION_ID: &str = "mcp-session-id";

fn content_type<B>(response: &Response<B>) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// A Streamable HTTP endpoint.
pub(crate) struct HttpWire {
    url: String,
    uri: Uri,
    client: HyperClient<HttpConnector, Full<Bytes>>,
    /// Sent on every request (the caller's, and `Authorization`).
    headers: Vec<(HeaderName, HeaderValue)>,
    limits: Limits,
    server_requests: ServerRequests,
}

impl std::fmt::Debug for HttpWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Headers are left out: they may carry a bearer token.
        f.debug_struct("HttpWire")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl HttpWire {
    /// A transport for this `http://` URL.
    pub(crate) fn new(
        url: &str,
        headers: &[(String, String)],
        bearer: Option<&str>,
        limits: Limits,
        server_requests: ServerRequests,
    ) -> Result<HttpWire, ClientError> {
        let uri: Uri = url
            .parse()
            .map_err(|e| ClientError::Usage(format!("{url} is not a valid URL: {e}")))?;
        if uri.host().is_none() {
            return Err(ClientError::Usage(format!("{url} has no host")));
        }
        match uri.scheme_str() {
            Some("http") => {}
            other => {
                return Err(ClientError::Usage(format!(
                    "{url}: expected an http:// URL, found the scheme {}; this client speaks \
                     plain HTTP (for servers on this machine or behind a TLS proxy)",
                    other.unwrap_or("(none)")
                )));
            }
        }
        let mut fixed = Vec::new();
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ClientError::Usage(format!("header name {name:?}: {e}")))?;
            let value = HeaderValue::from_str(value).map_err(|_| {
                ClientError::Usage(format!(
                    "the value of header {name} is not a valid header value"
                ))
            })?;
            fixed.push((name, value));
        }
        if let Some(token) = bearer {
            let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                ClientError::Usage("the bearer token is not a valid header value".into())
            })?;
            value.set_sensitive(true);
            fixed.push((AUTHORIZATION, value));
        }
        Ok(HttpWire {
            url: url.to_owned(),
            uri,
            client: HyperClient::builder(TokioExecutor::new()).build_http(),
            headers: fixed,
            limits,
            server_requests,
        })
    }

    /// Sends one HTTP request with these headers (beyond `Content-Type` and
    /// `Accept` on a POST).
    async fn send(
        &self,
        method: Method,
        body: Vec<u8>,
        headers: &[(String, String)],
    ) -> Result<Response<Body>, ClientError> {
        let mut request = Request::builder()
            .method(method.clone())
            .uri(self.uri.clone());
        if method == Method::POST {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream");
        }
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ClientError::Usage(format!("header name {name:?}: {e}")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|e| ClientError::Usage(format!("header {name}: {value:?}: {e}")))?;
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| ClientError::Usage(format!("cannot build the request: {e}")))?;
        self.client.request(request).await.map_err(|e| {
            // The chain's innermost causes say what happened ("Connection refused").
            let mut reason = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                reason.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            if e.is_connect() {
                reason.push_str(" (is the server running at this address?)");
            }
            ClientError::Connect {
                url: self.url.clone(),
                reason,
            }
        })
    }

    /// POSTs one request; its messages arrive on the exchange.
    pub(crate) async fn open(&self, out: Outgoing<'_>) -> Result<Exchange, ClientError> {
        let id = out.id.expect("a request has an id").clone();
        let response = self.send(Method::POST, out.body, out.headers).await?;
        let status = response.status();
        let session_id = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let content_type = content_type(&response);
        let body = response.into_body();
        let (tx, rx) = mpsc::channel(PER_REQUEST_BACKLOG);

        if content_type.starts_with("text/event-stream") && status.is_success() {
            let limits = self.limits;
            let url = self.url.clone();
            let server_requests = self.server_requests.clone();
            tokio::spawn(read_events(body, tx, id, limits, url, server_requests));
            return Ok(Exchange {
                incoming: rx,
                session_id,
            });
        }

        let bytes = self.collect(body).await?;
        let in_session = out
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case(SESSION_ID));
        if content_type.starts_with("application/json") {
            let said = match self.limits.parse(&bytes, String::new) {
                Ok(message) if answers(&message, &id) => {
                    let _ = tx.try_send(Ok(message));
                    return Ok(Exchange {
                        incoming: rx,
                        session_id,
                    });
                }
                Err(e @ ClientError::Limit { .. }) => return Err(e),
                // A refusal that names no request of ours, e.g. a session
                // check before the request was read: its error says why.
                Ok(message) => match message.get("error") {
                    Some(error) => format!(
                        "a JSON-RPC error for no request of ours: {} {}",
                        error.get("code").unwrap_or(&Value::Null),
                        error.get("message").and_then(Value::as_str).unwrap_or("")
                    ),
                    None => format!(
                        "a JSON body that does not answer request {id}: {}",
                        snippet(&String::from_utf8_lossy(&bytes))
                    ),
                },
                Err(_) if status.is_client_error() => format!(
                    "a body that is not JSON-RPC: {}",
                    snippet(&String::from_utf8_lossy(&bytes))
                ),
                Err(_) => format!(
                    "a body that is not JSON-RPC: {}",
                    snippet(&String::from_utf8_lossy(&bytes))
                ),
            };
            return Err(refused(
                status,
                format!("{}: HTTP {status} with {said}", self.url),
            ));
        }
        // Inside a session a 404 means the session is gone, which the client
        // words; the path is not in doubt.
        let hint = if status == StatusCode::NOT_FOUND && !in_session {
            " — nothing is served at this path (typed-mcp servers usually serve /mcp)"
        } else {
            ""
        };
        let shown = if bytes.is_empty() {
            "an empty body".to_owned()
        } else if content_type.is_empty() {
            format!(
                "a body with no content type: {}",
                snippet(&String::from_utf8_lossy(&bytes))
            )
        } else {
            format!(
                "{content_type}: {}",
                snippet(&String::from_utf8_lossy(&bytes))
            )
        };
        Err(refused(
            status,
            format!(
                "{} did not answer as an MCP server: HTTP {status} with {shown}{hint}",
                self.url
            ),
        ))
    }

    async fn collect(&self, body: Body) -> Result<Bytes, ClientError> {
        match Limited::new(body, self.limits.max_message_bytes)
            .collect()
            .await
        {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(e)
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some() =>
            {
                Err(ClientError::Limit {
                    what: format!(
                        "{}: the server sent a body of more than {} bytes; this client accepts \
                         messages of at most that (Options::max_message_bytes)",
                        self.url, self.limits.max_message_bytes
                    ),
                    stderr: String::new(),
                })
            }
            Err(e) => Err(ClientError::Io(format!(
                "reading the answer from {}: {e}",
                self.url
            ))),
        }
    }

    /// POSTs one notification, or a response to a request of the server's
    /// (`what` names it for an error); the server accepts it with a 2xx (202
    /// with no body, as a rule).
    pub(crate) async fn notify(
        &self,
        body: Vec<u8>,
        headers: &[(String, String)],
        what: &str,
    ) -> Result<(), ClientError> {
        let response = self.send(Method::POST, body, headers).await?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let content_type = content_type(&response);
        let bytes = self.collect(response.into_body()).await.unwrap_or_default();
        Err(refused(
            status,
            format!(
                "{}: {what} was refused: HTTP {status} with {}",
                self.url,
                if bytes.is_empty() {
                    "an empty body".to_owned()
                } else {
                    format!(
                        "{content_type}: {}",
                        snippet(&String::from_utf8_lossy(&bytes))
                    )
                }
            ),
        ))
    }

    /// Opens a legacy session's GET event stream (its server-initiated
    /// messages) with the session's headers, and reads it in a task: the
    /// server's requests go to the client's queue, its notifications to
    /// `sink`; `ended` is called with why, should the stream end while the
    /// task still reads it. Returns once the server has accepted the
    /// stream, so nothing it sends from then on is missed.
    pub(crate) async fn open_session_stream(
        &self,
        headers: &[(String, String)],
        sink: crate::client::NotificationSink,
        ended: Box<dyn FnOnce(ClientError) + Send>,
    ) -> Result<tokio::task::JoinHandle<()>, ClientError> {
        let mut headers = headers.to_vec();
        headers.push((ACCEPT.as_str().to_owned(), "text/event-stream".to_owned()));
        let response = self.send(Method::GET, Vec::new(), &headers).await?;
        let status = response.status();
        let content_type = content_type(&response);
        if !status.is_success() || !content_type.starts_with("text/event-stream") {
            let bytes = self.collect(response.into_body()).await.unwrap_or_default();
            return Err(refused(
                status,
                format!(
                    "{}: the session's event stream (GET) was refused: HTTP {status} with {};                      expected 200 and text/event-stream, which carries the session's resource                      updates",
                    self.url,
                    if bytes.is_empty() {
                        "an empty body".to_owned()
                    } else {
                        format!(
                            "{}: {}",
                            if content_type.is_empty() {
                                "no content type"
                            } else {
                                &content_type
                            },
                            snippet(&String::from_utf8_lossy(&bytes))
                        )
                    }
                ),
            ));
        }
        let reader = read_session_stream(
            response.into_body(),
            self.limits,
            self.url.clone(),
            self.server_requests.clone(),
            sink,
            ended,
        );
        Ok(tokio::spawn(reader))
    }

    /// Sends a DELETE with these headers (the end of a legacy session) and
    /// returns the status.
    pub(crate) async fn delete(
        &self,
        headers: &[(String, String)],
    ) -> Result<StatusCode, ClientError> {
        let response = self.send(Method::DELETE, Vec::new(), headers).await?;
        Ok(response.status())
    }
}

/// An answer that is no answer: [`ClientError::Http`] for a status the
/// client can act on (4xx), otherwise not MCP.
fn refused(status: StatusCode, what: String) -> ClientError {
    if status.is_client_error() {
        ClientError::Http {
            status: status.as_u16(),
            what,
        }
    } else {
        ClientError::NotMcp {
            what,
            stderr: String::new(),
        }
    }
}

/// A result or error for `id`, or an error with no readable id (the server
/// could not tell which request it answers).
fn answers(message: &Value, id: &Value) -> bool {
    match message.get("id") {
        Some(got) if got == id => message.get("result").is_some() || message.get("error").is_some(),
        None | Some(Value::Null) => message.get("error").is_some(),
        Some(_) => false,
    }
}

/// Reads an event stream until the answer to `id`, or until the caller
/// drops its end (then the body is dropped: the stream closes, which the
/// server takes as cancellation).
async fn read_events(
    mut body: Body,
    tx: mpsc::Sender<Result<Value, ClientError>>,
    id: Value,
    limits: Limits,
    url: String,
    server_requests: ServerRequests,
) {
    let mut events = SseParser::new(limits.max_message_bytes);
    loop {
        let frame = tokio::select! {
            frame = body.frame() => frame,
            () = tx.closed() => return,
        };
        let Some(frame) = frame else {
            let _ = tx
                .send(Err(ClientError::NotMcp {
                    what: format!(
                        "{url}: the event stream ended without an answer to request {id}"
                    ),
                    stderr: String::new(),
                }))
                .await;
            return;
        };
        let data = match frame {
            Ok(frame) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
            Err(e) => {
                let _ = tx
                    .send(Err(ClientError::Io(format!(
                        "reading the event stream from {url}: {e}"
                    ))))
                    .await;
                return;
            }
        };
        let parsed = match events.push(&data) {
            Ok(parsed) => parsed,
            Err(too_big) => {
                let _ = tx
                    .send(Err(ClientError::Limit {
                        what: format!(
                            "{url}: the server sent an event of more than {too_big} bytes; this \
                             client accepts messages of at most {} (Options::max_message_bytes)",
                            limits.max_message_bytes
                        ),
                        stderr: String::new(),
                    }))
                    .await;
                return;
            }
        };
        for event in parsed {
            if event.iter().all(u8::is_ascii_whitespace) {
                continue; // a priming event carries no data
            }
            let message = match limits.parse(&event, String::new) {
                Ok(message) => message,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            };
            if is_server_request(&message) {
                let _ = server_requests.send(message).await;
                continue;
            }
            let done = answers(&message, &id);
            if tx.send(Ok(message)).await.is_err() || done {
                // Dropping the body closes the stream: the answer is final.
                return;
            }
        }
    }
}

/// Reads a legacy session's GET stream until it ends (or the task is
/// aborted, which drops the body and closes the stream).
async fn read_session_stream(
    mut body: Body,
    limits: Limits,
    url: String,
    server_requests: ServerRequests,
    sink: crate::client::NotificationSink,
    ended: Box<dyn FnOnce(ClientError) + Send>,
) {
    let mut events = SseParser::new(limits.max_message_bytes);
    let why = loop {
        let data = match body.frame().await {
            None => {
                break ClientError::Io(format!(
                    "{url}: the server closed the session's event stream"
                ));
            }
            Some(Err(e)) => {
                break ClientError::Io(format!(
                    "reading the session's event stream from {url}: {e}"
                ));
            }
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
        };
        let parsed = match events.push(&data) {
            Ok(parsed) => parsed,
            Err(too_big) => {
                break ClientError::Limit {
                    what: format!(
                        "{url}: the server sent an event of more than {too_big} bytes on the                          session's event stream; this client accepts messages of at most {}                          (Options::max_message_bytes)",
                        limits.max_message_bytes
                    ),
                    stderr: String::new(),
                };
            }
        };
        let mut failed = None;
        for event in parsed {
            if event.iter().all(u8::is_ascii_whitespace) {
                continue; // a priming event carries no data
            }
            match limits.parse(&event, String::new) {
                Ok(message) if is_server_request(&message) => {
                    let _ = server_requests.send(message).await;
                }
                Ok(message) if message.get("method").is_some() => sink(&message),
                // No request of ours is answered here.
                Ok(message) => tracing::debug!("ignored on the session's stream: {message}"),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = failed {
            break e;
        }
    };
    ended(why);
}

/// Splits a `text/event-stream` body into the `data` of each event.
#[derive(Debug)]
struct SseParser {
    buffer: BytesMut,
    data: Vec<u8>,
    has_data: bool,
    max: usize,
}

impl SseParser {
    fn new(max: usize) -> Self {
        SseParser {
            buffer: BytesMut::new(),
            data: Vec::new(),
            has_data: false,
            max,
        }
    }

    /// Adds bytes; returns the data of every event they complete, or the
    /// size an event reached over the limit.
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, usize> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
            let line = self.buffer.split_to(end + 1);
            let mut line = &line[..end];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            if line.is_empty() {
                // A blank line ends the event.
                if self.has_data {
                    events.push(std::mem::take(&mut self.data));
                    self.has_data = false;
                }
                continue;
            }
            if line.starts_with(b":") {
                continue; // a comment (keep-alive)
            }
            let (field, value) = match line.iter().position(|b| *b == b':') {
                Some(i) => {
                    let value = &line[i + 1..];
                    (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
                }
                None => (line, &[][..]),
            };
            if field == b"data" {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
        }
        let pending = self.buffer.len() + self.data.len();
        if pending > self.max {
            return Err(pending);
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_are_split_and_joined() {
        let mut parser = SseParser::new(1024);
        assert!(
            parser
                .push(b": keep-alive\n\nevent: message\ndata: {\"a\"")
                .unwrap_or_default()
                .is_empty()
        );
        let events = parser
            .push(b":1}\r\n\r\ndata: x\ndata:y\n\n")
            .unwrap_or_default();
        assert_eq!(events, vec![b"{\"a\":1}".to_vec(), b"x\ny".to_vec()]);
    }

    #[test]
    fn an_event_over_the_limit_is_refused() {
        let mut parser = SseParser::new(8);
        assert_eq!(parser.push(b"data: 0123456789"), Err(16));
    }
}
