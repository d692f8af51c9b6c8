//! Content negotiation: what the client accepts back (`Accept`) and what it
//! sent (`Content-Type`).

use http::HeaderValue;
#[cfg(test)]
use http::{
    HeaderMap,
    header::{ACCEPT, CONTENT_TYPE},
};

/// The `Accept` value the MCP specification tells clients to send.
const COMMON_ACCEPT: &[u8] = b"application/json, text/event-stream";

/// The response media types a request accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Accepts {
    /// `application/json`.
    pub(crate) json: bool,
    /// `text/event-stream`.
    pub(crate) sse: bool,
}

impl Accepts {
    /// Reads every `Accept` header's value (each, as `HeaderMap::get_all`
    /// gives them). A request without one accepts anything (RFC 9110
    /// §12.5.1); a media range with `q=0` is refused.
    pub(crate) fn from_values<'a>(values: impl IntoIterator<Item = &'a HeaderValue>) -> Accepts {
        let mut values = values.into_iter().peekable();
        if values.peek().is_none() {
            return Accepts {
                json: true,
                sse: true,
            };
        }
        let mut accepts = Accepts {
            json: false,
            sse: false,
        };
        for value in values {
            // What MCP clients send: read without parsing, as parsing it
            // would (a test holds the two equal).
            if value.as_bytes() == COMMON_ACCEPT {
                accepts.json = true;
                accepts.sse = true;
                continue;
            }
            if let Ok(value) = value.to_str() {
                accepts.add(value);
            }
        }
        accepts
    }

    /// Adds what one `Accept` value allows.
    fn add(&mut self, value: &str) {
        for range in value.split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.trim()
                    .split_once('=')
                    .is_some_and(|(k, v)| k.trim().eq_ignore_ascii_case("q") && is_zero(v))
            });
            if refused {
                continue;
            }
            let Some((kind, sub)) = media.split_once('/') else {
                continue;
            };
            let (kind, sub) = (kind.trim(), sub.trim());
            let any_sub = sub == "*";
            if kind == "*" && any_sub {
                self.json = true;
                self.sse = true;
            } else if kind.eq_ignore_ascii_case("application")
                && (any_sub || sub.eq_ignore_ascii_case("json"))
            {
                self.json = true;
            } else if kind.eq_ignore_ascii_case("text")
                && (any_sub || sub.eq_ignore_ascii_case("event-stream"))
            {
                self.sse = true;
            }
        }
    }

    /// Neither JSON nor SSE is acceptable: the answer is `406`.
    pub(crate) fn none(self) -> bool {
        !self.json && !self.sse
    }
}

fn is_zero(q: &str) -> bool {
    q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0)
}

/// `Ok` when the body is declared `application/json` (parameters such as
/// `charset` allowed), else the reason for `415`. `value` is the first
/// `Content-Type` value, as `HeaderMap::get` gives it.
pub(crate) fn check_content_type(value: Option<&HeaderValue>) -> Result<(), String> {
    let Some(value) = value else {
        return Err("the Content-Type header is required: send application/json".to_owned());
    };
    // What MCP clients send, told without parsing.
    if value.as_bytes() == b"application/json" {
        return Ok(());
    }
    let essence = value
        .to_str()
        .ok()
        .and_then(|v| v.split(';').next())
        .map(str::trim_ascii);
    match essence {
        Some(e) if e.eq_ignore_ascii_case("application/json") => Ok(()),
        Some(e) => Err(format!(
            "Content-Type {e:?} is not supported: send one JSON-RPC message as application/json"
        )),
        None => Err("the Content-Type header is not visible ASCII".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(values: &[&str]) -> Accepts {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(ACCEPT, HeaderValue::from_str(v).unwrap());
        }
        Accepts::from_values(h.get_all(ACCEPT))
    }

    fn both(json: bool, sse: bool) -> Accepts {
        Accepts { json, sse }
    }

    #[test]
    fn media_ranges() {
        assert_eq!(accepts(&[]), both(true, true));
        assert_eq!(
            accepts(&["application/json, text/event-stream"]),
            both(true, true)
        );
        assert_eq!(
            accepts(&["text/event-stream", "application/json"]),
            both(true, true)
        );
        assert_eq!(accepts(&["*/*"]), both(true, true));
        assert_eq!(
            accepts(&["Application/JSON; charset=utf-8"]),
            both(true, false)
        );
        assert_eq!(accepts(&["text/*"]), both(false, true));
        assert_eq!(accepts(&["application/*;q=0.5"]), both(true, false));
        assert_eq!(accepts(&["text/html"]), both(false, false));
        assert_eq!(
            accepts(&["application/json;q=0, text/event-stream"]),
            both(false, true)
        );
        assert!(accepts(&["text/plain, image/png"]).none());
    }

    #[test]
    fn the_common_value_reads_as_parsing_it_would() {
        let common = std::str::from_utf8(COMMON_ACCEPT).unwrap();
        let mut parsed = both(false, false);
        parsed.add(common);
        assert_eq!(parsed, both(true, true));
        assert_eq!(accepts(&[common]), parsed);
        assert_eq!(
            accepts(&["application/json, text/event-stream;q=0"]),
            both(true, false)
        );
    }

    #[test]
    fn content_types() {
        let ct = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(CONTENT_TYPE, HeaderValue::from_str(v).unwrap());
            check_content_type(h.get(CONTENT_TYPE))
        };
        assert_eq!(ct("application/json"), Ok(()));
        assert_eq!(ct("Application/Json; charset=UTF-8"), Ok(()));
        assert_eq!(ct("application/json ;charset=utf-8"), Ok(()));
        assert!(ct("text/plain").is_err());
        assert!(ct("application/jsonx").is_err());
        assert!(check_content_type(HeaderMap::new().get(CONTENT_TYPE)).is_err());
    }
}
