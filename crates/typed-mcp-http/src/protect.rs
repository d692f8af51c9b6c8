//! What a request must pass before the endpoint looks at it, and which
//! addresses are served at all.
//!
//! - The exposure rule ([`Protection::new`]): a router for an address beyond
//!   loopback is built only when the application authenticates every request.
//! - A bound on the request's header bytes (`431`), checked first.
//! - DNS-rebinding protection: which `Host` and `Origin` values a request may
//!   carry (`403`). A web page an attacker controls can make a browser send
//!   requests to a server on the user's machine by rebinding its own host name
//!   to `127.0.0.1`. Those requests carry the attacker's name in `Host` (and
//!   usually in `Origin`), so a server that only answers to loopback names, or
//!   to names the application lists, is out of reach.

use std::net::{IpAddr, SocketAddr};

use http::request::Parts;
#[cfg(test)]
use http::{
    HeaderMap,
    header::{HOST, ORIGIN},
};
use http::{HeaderValue, StatusCode};

use crate::HttpError;

/// [`crate::HttpServer::max_header_bytes`] unless set: 64 KiB.
pub(crate) const DEFAULT_MAX_HEADER_BYTES: usize = 64 * 1024;

/// The names a loopback server answers to (with any port).
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// A `Host` allow-list entry: a name, and the one port it allows (any when
/// `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostEntry {
    name: String,
    port: Option<u16>,
}

/// What a request must pass before the endpoint reads it.
#[derive(Debug, Clone)]
pub(crate) struct Protection {
    /// The most header bytes (names plus values) a request may carry.
    max_header_bytes: usize,
    /// Check `Host` at all: always on a loopback bind, and on another bind
    /// when the application listed hosts.
    check_host: bool,
    hosts: Vec<HostEntry>,
    /// Lower-case `scheme://host[:port]` values accepted besides loopback ones.
    origins: Vec<String>,
}

/// Why a request was refused before the endpoint read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The HTTP status to answer with.
    pub(crate) status: StatusCode,
    /// The message of the `-32600` body.
    pub(crate) reason: String,
}

/// Whether only this machine can reach `ip`: `127.0.0.0/8` or `::1`, also
/// written as IPv4-mapped IPv6 (`::ffff:127.0.0.1`). The unspecified
/// addresses (`0.0.0.0`, `::`) listen on every interface, so are not.
pub(crate) fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// The sum of every header line's name and value lengths.
#[cfg(test)]
pub(crate) fn header_bytes(headers: &HeaderMap) -> usize {
    headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum()
}

impl Protection {
    /// The policy for a router served on `local_addr`, or the reason it would
    /// be unprotected: an address beyond loopback needs `authenticated`.
    pub(crate) fn new(
        local_addr: SocketAddr,
        hosts: &[String],
        origins: &[String],
        authenticated: bool,
        max_header_bytes: usize,
    ) -> Result<Protection, HttpError> {
        let hosts = hosts
            .iter()
            .map(|h| parse_host_entry(h))
            .collect::<Result<Vec<_>, _>>()?;
        let origins = origins
            .iter()
            .map(|o| parse_origin_entry(o))
            .collect::<Result<Vec<_>, _>>()?;
        let loopback = is_loopback(local_addr.ip());
        if !loopback && !authenticated {
            return Err(HttpError::UnprotectedBind {
                address: local_addr,
            });
        }
        Ok(Protection {
            max_header_bytes,
            check_host: loopback || !hosts.is_empty(),
            hosts,
            origins,
        })
    }

    /// `Ok` when the request may proceed to the endpoint's own checks, else
    /// why not: its headers are too large (431), or its `Host` or `Origin` is
    /// not allowed (403). Each refusal is logged as a warning.
    /// `found` is the bytes of every header name and value, and `host` and
    /// `origin` the first `Host` and `Origin` values (as `HeaderMap::get`
    /// gives them), which the caller finds in its one pass over the headers.
    pub(crate) fn admit(
        &self,
        parts: &Parts,
        found: usize,
        host: Option<&HeaderValue>,
        origin: Option<&HeaderValue>,
    ) -> Result<(), Refusal> {
        if found > self.max_header_bytes {
            let limit = self.max_header_bytes;
            tracing::warn!(
                limit,
                found,
                "refused an MCP request: its headers exceed the size limit"
            );
            return Err(Refusal {
                status: StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                reason: format!(
                    "request headers of {found} bytes exceed the limit of {limit} bytes (names and values of every header, summed)"
                ),
            });
        }
        let authority = parts.uri.authority().map(|a| a.as_str());
        if let Err(reason) = self.check_values(host, origin, authority) {
            tracing::warn!(
                ?host,
                ?origin,
                %reason,
                "refused an MCP request (DNS-rebinding protection)"
            );
            return Err(Refusal {
                status: StatusCode::FORBIDDEN,
                reason,
            });
        }
        Ok(())
    }

    /// [`check_values`](Self::check_values) of a header map's `Host` and
    /// `Origin`.
    #[cfg(test)]
    fn check(&self, headers: &HeaderMap, authority: Option<&str>) -> Result<(), String> {
        self.check_values(headers.get(HOST), headers.get(ORIGIN), authority)
    }

    /// `Ok` when the request may proceed, else the reason to refuse it (403),
    /// given its first `Host` and `Origin` values.
    ///
    /// `authority` is the request URI's authority, which stands in for `Host`
    /// on HTTP/2.
    fn check_values(
        &self,
        host: Option<&HeaderValue>,
        origin: Option<&HeaderValue>,
        authority: Option<&str>,
    ) -> Result<(), String> {
        if self.check_host {
            let host = match host {
                Some(value) => Some(
                    value
                        .to_str()
                        .map_err(|_| "the Host header is not visible ASCII".to_owned())?,
                ),
                None => authority,
            };
            let Some(host) = host else {
                return Err("the Host header is required".to_owned());
            };
            if !self.host_allowed(host) {
                return Err(format!(
                    "Host {host:?} is not allowed: this server answers to {}",
                    self.describe_hosts()
                ));
            }
        }
        if let Some(origin) = origin {
            let origin = origin
                .to_str()
                .map_err(|_| "the Origin header is not visible ASCII".to_owned())?;
            if !self.origin_allowed(origin) {
                return Err(format!(
                    "Origin {origin:?} is not allowed: this server accepts requests from {}",
                    self.describe_origins()
                ));
            }
        }
        Ok(())
    }

    fn host_allowed(&self, host: &str) -> bool {
        let Some((name, port)) = split_host_port(host) else {
            return false;
        };
        // Compared without case, as the lower-cased name would be (entries
        // are stored lower-case), without allocating it.
        LOOPBACK_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
            || self.hosts.iter().any(|e| {
                e.name.eq_ignore_ascii_case(name) && e.port.is_none_or(|p| Some(p) == port)
            })
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim().to_ascii_lowercase();
        if self.origins.contains(&origin) {
            return true;
        }
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        split_host_port(rest).is_some_and(|(name, _)| LOOPBACK_NAMES.contains(&name))
    }

    fn describe_hosts(&self) -> String {
        let mut names: Vec<String> = LOOPBACK_NAMES.iter().map(|n| (*n).to_owned()).collect();
        names.extend(self.hosts.iter().map(|e| match e.port {
            Some(port) => format!("{}:{port}", e.name),
            None => e.name.clone(),
        }));
        format!(
            "{} (any port unless one is given); list more names with allow_hosts",
            names.join(", ")
        )
    }

    fn describe_origins(&self) -> String {
        let mut origins = vec!["http(s)://localhost, 127.0.0.1 or [::1] (any port)".to_owned()];
        origins.extend(self.origins.iter().cloned());
        format!("{}; list more with allow_origins", origins.join(", "))
    }
}

/// Splits `name[:port]` or `[v6][:port]` into the lower-case-able name (IPv6
/// addresses keep their brackets) and the port. `None` when malformed.
fn split_host_port(host: &str) -> Option<(&str, Option<u16>)> {
    // A header value is ASCII: trimmed byte-wise, without decoding chars.
    let host = if host.is_ascii() {
        host.trim_ascii()
    } else {
        host.trim()
    };
    let (name, port) = if host.starts_with('[') {
        let end = host.find(']')?;
        let (name, rest) = host.split_at(end + 1);
        match rest {
            "" => (name, None),
            _ => (name, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    if name.is_empty()
        || name
            .bytes()
            .any(|b| matches!(b, b'/' | b'@' | b' ' | b'\t'))
    {
        return None;
    }
    let port = match port {
        None => None,
        Some(p) => Some(p.parse::<u16>().ok()?),
    };
    Some((name, port))
}

fn parse_host_entry(entry: &str) -> Result<HostEntry, HttpError> {
    let invalid = |reason: &str| HttpError::InvalidAllowedHost {
        entry: entry.to_owned(),
        reason: reason.to_owned(),
    };
    if entry.contains("://") {
        return Err(invalid(
            "give a host name as clients send it in Host (e.g. \"mcp.example.com\" or \"mcp.example.com:8443\"), without a scheme",
        ));
    }
    let (name, port) =
        split_host_port(entry).ok_or_else(|| invalid("expected name, name:port or [v6]:port"))?;
    if name.contains(':') && !name.starts_with('[') {
        return Err(invalid("write an IPv6 address in brackets, e.g. \"[::1]\""));
    }
    Ok(HostEntry {
        name: name.to_ascii_lowercase(),
        port,
    })
}

fn parse_origin_entry(entry: &str) -> Result<String, HttpError> {
    let origin = entry.trim().trim_end_matches('/').to_ascii_lowercase();
    let rest = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    match rest {
        Some(rest) if split_host_port(rest).is_some() => Ok(origin),
        _ => Err(HttpError::InvalidAllowedOrigin {
            entry: entry.to_owned(),
            reason: "expected scheme://host[:port] as browsers send it, e.g. \"https://app.example.com\""
                .to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(host) = host {
            h.insert(HOST, HeaderValue::from_str(host).unwrap());
        }
        if let Some(origin) = origin {
            h.insert(ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        h
    }

    const LOCAL: &str = "127.0.0.1:8000";

    fn protection(
        addr: &str,
        hosts: &[&str],
        origins: &[&str],
        authenticated: bool,
    ) -> Result<Protection, HttpError> {
        let owned = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        Protection::new(
            addr.parse().unwrap(),
            &owned(hosts),
            &owned(origins),
            authenticated,
            DEFAULT_MAX_HEADER_BYTES,
        )
    }

    fn loopback() -> Protection {
        protection(LOCAL, &[], &[], false).unwrap()
    }

    #[test]
    fn loopback_names_with_any_port_pass() {
        let p = loopback();
        for host in [
            "localhost",
            "LOCALHOST:3000",
            "127.0.0.1:1",
            "[::1]",
            "[::1]:8080",
        ] {
            assert_eq!(p.check(&headers(Some(host), None), None), Ok(()), "{host}");
        }
        for origin in [
            "http://localhost:3000",
            "https://127.0.0.1",
            "http://[::1]:9",
        ] {
            assert_eq!(
                p.check(&headers(Some("localhost"), Some(origin)), None),
                Ok(()),
                "{origin}"
            );
        }
    }

    #[test]
    fn other_names_are_refused() {
        let p = loopback();
        for host in [
            "evil.example.com",
            "localhost.evil.com",
            "127.0.0.2",
            "[::2]",
            "localhost:notaport",
            "",
        ] {
            assert!(p.check(&headers(Some(host), None), None).is_err(), "{host}");
        }
        assert!(p.check(&headers(None, None), None).is_err());
        assert_eq!(p.check(&headers(None, None), Some("localhost:1")), Ok(()));
        for origin in [
            "http://evil.example.com",
            "null",
            "file://localhost",
            "http://localhost.evil.com",
        ] {
            assert!(
                p.check(&headers(Some("localhost"), Some(origin)), None)
                    .is_err(),
                "{origin}"
            );
        }
    }

    #[test]
    fn allow_lists_extend_the_loopback_names() {
        let p = protection(
            LOCAL,
            &["mcp.example.com", "other.example:8443"],
            &["https://app.example.com/"],
            false,
        )
        .unwrap();
        let ok = |h: &str, o: Option<&str>| p.check(&headers(Some(h), o), None);
        assert_eq!(ok("MCP.example.com:1234", None), Ok(()));
        assert_eq!(ok("other.example:8443", None), Ok(()));
        assert!(ok("other.example:8444", None).is_err());
        assert_eq!(ok("localhost", Some("https://app.example.com")), Ok(()));
        assert!(ok("localhost", Some("https://app.example.com:444")).is_err());
    }

    #[test]
    fn only_loopback_addresses_count_as_loopback() {
        for ip in ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"] {
            assert!(is_loopback(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "0.0.0.0",
            "::",
            "192.0.2.1",
            "10.0.0.1",
            "::ffff:10.0.0.1",
            "::2",
        ] {
            assert!(!is_loopback(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn a_public_bind_needs_authentication() {
        for public in ["0.0.0.0:80", "[::]:80", "192.0.2.1:80"] {
            let err = protection(public, &[], &[], false).unwrap_err();
            assert!(matches!(err, HttpError::UnprotectedBind { .. }), "{public}");
            // A Host allow-list filters names, not callers.
            let err = protection(public, &["mcp.example.com"], &[], false).unwrap_err();
            assert!(matches!(err, HttpError::UnprotectedBind { .. }), "{public}");
        }
        let public = "0.0.0.0:80";
        let p = protection(public, &[], &[], true).unwrap();
        assert_eq!(p.check(&headers(Some("anything"), None), None), Ok(()));
        assert!(
            p.check(&headers(Some("anything"), Some("http://evil")), None)
                .is_err()
        );
        let p = protection(public, &["mcp.example.com"], &[], true).unwrap();
        assert!(p.check(&headers(Some("evil"), None), None).is_err());
        assert_eq!(
            p.check(&headers(Some("mcp.example.com"), None), None),
            Ok(())
        );
    }

    /// `Protection::admit` given what the endpoint's pass over the headers
    /// finds (as `HeaderMap::get` and `header_bytes` find it).
    fn admit(p: &Protection, parts: &Parts) -> Result<(), Refusal> {
        let headers = &parts.headers;
        p.admit(
            parts,
            header_bytes(headers),
            headers.get(HOST),
            headers.get(ORIGIN),
        )
    }

    fn parts(headers: &[(&str, String)]) -> Parts {
        let mut request = http::Request::builder().uri("/");
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        request.body(()).unwrap().into_parts().0
    }

    #[test]
    fn headers_are_counted_by_name_and_value_bytes() {
        let p = loopback();
        let host = ("host", "localhost".to_owned()); // 4 + 9 bytes
        let pad = |n| ("x-pad", "a".repeat(n));
        let at_limit = parts(&[host.clone(), pad(DEFAULT_MAX_HEADER_BYTES - 13 - 5)]);
        assert_eq!(header_bytes(&at_limit.headers), DEFAULT_MAX_HEADER_BYTES);
        assert_eq!(admit(&p, &at_limit), Ok(()));
        let over = parts(&[host, pad(DEFAULT_MAX_HEADER_BYTES - 13 - 4)]);
        let refusal = admit(&p, &over).unwrap_err();
        assert_eq!(refusal.status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
        assert!(refusal.reason.contains("65537 bytes"), "{}", refusal.reason);
        assert!(
            refusal.reason.contains("limit of 65536"),
            "{}",
            refusal.reason
        );
        // Every value of a repeated header counts, each with its name.
        let mut repeated = parts(&[]);
        repeated.headers.append("a", "bc".parse().unwrap());
        repeated.headers.append("a", "de".parse().unwrap());
        assert_eq!(header_bytes(&repeated.headers), 6);
    }

    #[test]
    fn the_size_limit_comes_before_host_checks() {
        let p = loopback();
        let evil = parts(&[("host", "evil.example".to_owned())]);
        let refusal = admit(&p, &evil).unwrap_err();
        assert_eq!(refusal.status, StatusCode::FORBIDDEN);
        let big = parts(&[
            ("host", "evil.example".to_owned()),
            ("x-pad", "a".repeat(DEFAULT_MAX_HEADER_BYTES)),
        ]);
        assert_eq!(
            admit(&p, &big).unwrap_err().status,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
        );
    }

    #[test]
    fn malformed_entries_are_refused() {
        assert!(protection(LOCAL, &["http://x"], &[], false).is_err());
        assert!(protection(LOCAL, &["::1"], &[], false).is_err());
        assert!(protection(LOCAL, &[], &["example.com"], false).is_err());
    }
}
