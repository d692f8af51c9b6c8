//! The Streamable HTTP transport: one POST per request, with the headers the
//! client gives (the era decides which); the answer is read whether the server
//! sends `application/json` or a `text/event-stream`; notifications and the
//! DELETE that ends a legacy session.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::{Bytes, BytesMut};
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use crate::error::ClientError;
use crate::stdio::snippet;

/// The header of a legacy session's id.
pub const SESSION_ID: &str = "mcp-session-id";

/// A response to one POST.
#[derive(Debug)]
pub struct HttpAnswer {
    /// The JSON-RPC response to the request.
    pub message: Value,
    /// The `Mcp-Session-Id` header of the HTTP response, if any.
    pub session_id: Option<String>,
}

fn content_type<B>(response: &Response<B>) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// A Streamable HTTP endpoint.
#[derive(Debug)]
pub struct HttpTransport {
    url: String,
    uri: Uri,
    client: HyperClient<HttpConnector, Full<Bytes>>,
}

impl HttpTransport {
    /// A transport for this `http://` URL.
    pub fn new(url: &str) -> Result<HttpTransport, ClientError> {
        let uri: Uri = url
            .parse()
            .map_err(|e| ClientError::Usage(format!("{url} is not a valid URL: {e}")))?;
        if uri.host().is_none() {
            return Err(ClientError::Usage(format!("{url} has no host")));
        }
        Ok(HttpTransport {
            url: url.to_owned(),
            uri,
            client: HyperClient::builder(TokioExecutor::new()).build_http(),
        })
    }

    /// Sends one HTTP request with these headers (beyond `Content-Type` and
    /// `Accept` on a POST).
    async fn send(
        &self,
        method: Method,
        body: Vec<u8>,
        headers: &[(String, String)],
    ) -> Result<Response<Incoming>, ClientError> {
        let mut request = Request::builder()
            .method(method.clone())
            .uri(self.uri.clone());
        if method == Method::POST {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .header(ACCEPT, "application/json, text/event-stream");
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

    /// POSTs one request with these headers and returns the response to `id`,
    /// with the `Mcp-Session-Id` the server sent along, if any.
    pub async fn exchange(
        &self,
        message: Vec<u8>,
        headers: &[(String, String)],
        id: &Value,
        show_notifications: bool,
    ) -> Result<HttpAnswer, ClientError> {
        let response = self.send(Method::POST, message, headers).await?;
        let status = response.status();
        let session_id = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let content_type = content_type(&response);
        let mut body = response.into_body();

        if content_type.starts_with("text/event-stream") {
            let mut events = SseParser::default();
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| {
                    ClientError::Io(format!("reading the event stream from {}: {e}", self.url))
                })?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                for event in events.push(&data) {
                    let message = self.parse_message(status, &event)?;
                    if is_answer_to(&message, id) {
                        // Dropping the body closes the stream: the answer is final.
                        return Ok(HttpAnswer {
                            message,
                            session_id,
                        });
                    }
                    if let (Some(request_id), Some(asked)) = (
                        message.get("id"),
                        message.get("method").and_then(Value::as_str),
                    ) {
                        // A request of the server's on the request's stream (a
                        // legacy session may ping): answered by a POST of its
                        // own, in the same session.
                        let answer = crate::era::answer_server_request(request_id, asked);
                        let session: Vec<(String, String)> = headers
                            .iter()
                            .filter(|(name, _)| {
                                name.eq_ignore_ascii_case(SESSION_ID)
                                    || name.eq_ignore_ascii_case("mcp-protocol-version")
                            })
                            .cloned()
                            .collect();
                        let bytes = serde_json::to_vec(&answer).expect("a Value serializes");
                        self.notify(
                            bytes,
                            &session,
                            &format!("the answer to the server's {asked}"),
                        )
                        .await?;
                        continue;
                    }
                    if show_notifications && message.get("id").is_none() {
                        crate::show::notification(&message);
                    }
                }
            }
            return Err(ClientError::NotMcp {
                what: format!(
                    "{}: the event stream ended without an answer to request {id}",
                    self.url
                ),
                stderr: String::new(),
            });
        }

        let bytes = body
            .collect()
            .await
            .map_err(|e| ClientError::Io(format!("reading the answer from {}: {e}", self.url)))?
            .to_bytes();
        if content_type.starts_with("application/json") {
            let said = match self.parse_message(status, &bytes) {
                Ok(message) if is_answer_to(&message, id) => {
                    return Ok(HttpAnswer {
                        message,
                        session_id,
                    });
                }
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
                Err(e) => return Err(e),
            };
            return Err(self.refused(status, format!("{}: HTTP {status} with {said}", self.url)));
        }
        // Inside a session a 404 means the session is gone, which the client
        // words; the path is not in doubt.
        let in_session = headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case(SESSION_ID));
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
        Err(self.refused(
            status,
            format!(
                "{} did not answer as an MCP server: HTTP {status} with {shown}{hint}",
                self.url
            ),
        ))
    }

    /// An answer that is no answer: [`ClientError::Http`] for a status the
    /// client can act on (4xx), otherwise not MCP.
    fn refused(&self, status: StatusCode, what: String) -> ClientError {
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

    /// POSTs one notification, or a response to a request of the server's
    /// (`what` names it for an error); the server accepts it with a 2xx (202
    /// with no body, as a rule).
    pub async fn notify(
        &self,
        message: Vec<u8>,
        headers: &[(String, String)],
        what: &str,
    ) -> Result<(), ClientError> {
        let response = self.send(Method::POST, message, headers).await?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let content_type = content_type(&response);
        let bytes = response
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        Err(self.refused(
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

    /// Sends a DELETE with these headers (the end of a legacy session) and
    /// returns the status.
    pub async fn delete(&self, headers: &[(String, String)]) -> Result<StatusCode, ClientError> {
        let response = self.send(Method::DELETE, Vec::new(), headers).await?;
        Ok(response.status())
    }

    fn parse_message(&self, status: StatusCode, bytes: &[u8]) -> Result<Value, ClientError> {
        let message: Value = serde_json::from_slice(bytes).map_err(|_| ClientError::NotMcp {
            what: format!(
                "{}: HTTP {status} with a body that is not JSON: {}",
                self.url,
                snippet(&String::from_utf8_lossy(bytes))
            ),
            stderr: String::new(),
        })?;
        if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(ClientError::NotMcp {
                what: format!(
                    "{}: HTTP {status} with JSON that is not a JSON-RPC 2.0 message: {}",
                    self.url,
                    snippet(&String::from_utf8_lossy(bytes))
                ),
                stderr: String::new(),
            });
        }
        Ok(message)
    }
}

/// A result or error for `id`, or an error with no readable id (the server
/// could not tell which request it answers).
fn is_answer_to(message: &Value, id: &Value) -> bool {
    match message.get("id") {
        Some(got) if got == id => message.get("result").is_some() || message.get("error").is_some(),
        None | Some(Value::Null) => message.get("error").is_some(),
        Some(_) => false,
    }
}

/// Splits a `text/event-stream` body into the `data` of each event.
#[derive(Debug, Default)]
struct SseParser {
    buffer: BytesMut,
    data: Vec<u8>,
    has_data: bool,
}

impl SseParser {
    /// Adds bytes; returns the data of every event they complete.
    fn push(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
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
        events
    }
}

/// A header value as the 2026-07-28 revision encodes it: as is when it is
/// plain visible ASCII, otherwise `=?base64?<base64 of the UTF-8 bytes>?=`.
pub fn header_value(text: &str) -> String {
    let visible_ascii = text.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = text.starts_with([' ', '\t']) || text.ends_with([' ', '\t']);
    let sentinel_like = text.starts_with("=?base64?") && text.ends_with("?=");
    if visible_ascii && !padded && !sentinel_like {
        text.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(text.as_bytes()))
    }
}

/// The `Mcp-Param-*` headers a `tools/call` with these arguments needs: one per
/// `x-mcp-header` property of the input schema (reached through `properties`
/// alone) whose argument is present and not `null`.
pub fn param_headers(input_schema: &Value, arguments: &Value) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    collect_param_headers(input_schema, Some(arguments), &mut headers);
    headers
}

fn collect_param_headers(schema: &Value, value: Option<&Value>, out: &mut Vec<(String, String)>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, prop) in props {
        let arg = value.and_then(|v| v.get(key));
        if let (Some(name), Some(arg)) = (prop.get("x-mcp-header").and_then(Value::as_str), arg) {
            let text = match arg {
                Value::String(s) => Some(s.clone()),
                Value::Bool(b) => Some(b.to_string()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            };
            if let Some(text) = text {
                out.push((format!("Mcp-Param-{name}"), header_value(&text)));
            }
        }
        collect_param_headers(prop, arg, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sse_events_are_split_and_joined() {
        let mut parser = SseParser::default();
        assert!(
            parser
                .push(b": keep-alive\n\nevent: message\ndata: {\"a\"")
                .is_empty()
        );
        let events = parser.push(b":1}\r\n\r\ndata: x\ndata:y\n\n");
        assert_eq!(events, vec![b"{\"a\":1}".to_vec(), b"x\ny".to_vec()]);
    }

    #[test]
    fn header_values_use_the_base64_sentinel_when_needed() {
        assert_eq!(header_value("add"), "add");
        assert_eq!(
            header_value("quickstart://greeting/Ada"),
            "quickstart://greeting/Ada"
        );
        assert_eq!(header_value("café"), "=?base64?Y2Fmw6k=?=");
        assert_eq!(header_value(" x"), "=?base64?IHg=?=");
        assert_eq!(header_value("a\tb"), "=?base64?YQli?=");
        assert_eq!(
            header_value("=?base64?eA==?="),
            "=?base64?PT9iYXNlNjQ/ZUE9PT89?="
        );
    }

    #[test]
    fn param_headers_follow_x_mcp_header() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "opts": {"type": "object", "properties": {"fast": {"type": "boolean", "x-mcp-header": "Fast"}}},
            "plain": {"type": "string"}
        }});
        let headers = param_headers(
            &schema,
            &json!({"region": "eu-west", "n": 3, "opts": {"fast": true}, "plain": "x"}),
        );
        assert_eq!(
            headers,
            [
                ("Mcp-Param-Region".to_owned(), "eu-west".to_owned()),
                ("Mcp-Param-N".to_owned(), "3".to_owned()),
                ("Mcp-Param-Fast".to_owned(), "true".to_owned()),
            ]
        );
        assert!(param_headers(&schema, &json!({"region": null})).is_empty());
    }
}
