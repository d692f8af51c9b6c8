//! The resource server's own HTTP client: the JWKS, the authorization
//! server's metadata and token introspection. HTTPS (rustls, Mozilla roots),
//! plain HTTP only to loopback; bounded in time and size.

use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Uri, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use super::OAuthError;

/// The most bytes a JWKS, metadata or introspection answer may have.
const MAX_BODY: usize = 1 << 20;
/// How long one request to the authorization server may take.
const TIMEOUT: Duration = Duration::from_secs(10);

type HttpsClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

fn client() -> &'static HttpsClient {
    static CLIENT: OnceLock<HttpsClient> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .build();
        Client::builder(TokioExecutor::new()).build(https)
    })
}

/// Whether `host` (as a URI gives it, IPv6 in brackets) is this machine.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Parses an authorization-server URL (`what` names it in errors): absolute,
/// `https`, or `http` to a loopback host; no fragment.
pub(crate) fn check_url(what: &'static str, url: &str) -> Result<Uri, OAuthError> {
    let bad = |reason: String| OAuthError::InvalidUrl {
        what,
        url: url.to_owned(),
        reason,
    };
    if url.contains('#') {
        return Err(bad("expected a URL without a fragment (#...)".into()));
    }
    let uri: Uri = url
        .parse()
        .map_err(|e| bad(format!("expected an absolute URL: {e}")))?;
    let host = uri
        .host()
        .ok_or_else(|| bad("expected an absolute URL with a host".into()))?;
    match uri.scheme_str() {
        Some("https") => Ok(uri),
        Some("http") if is_loopback_host(host) => Ok(uri),
        Some("http") => Err(bad(
            "expected https: plain http is allowed only to a loopback host (127.0.0.1, [::1], localhost)"
                .into(),
        )),
        _ => Err(bad("expected an https URL".into())),
    }
}

/// `GET url`, expecting a JSON object.
pub(crate) async fn get_json(url: &Uri) -> Result<Value, String> {
    let request = Request::builder()
        .method(Method::GET)
        .uri(url.clone())
        .header(header::ACCEPT, "application/json")
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    send(request).await
}

/// `POST url` with a form body and optional Basic client authentication,
/// expecting a JSON object.
pub(crate) async fn post_form(
    url: &Uri,
    form: String,
    authorization: Option<&str>,
) -> Result<Value, String> {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(url.clone())
        .header(header::ACCEPT, "application/json")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(value) = authorization {
        request = request.header(header::AUTHORIZATION, value);
    }
    let request = request
        .body(Full::new(Bytes::from(form)))
        .map_err(|e| e.to_string())?;
    send(request).await
}

async fn send(request: Request<Full<Bytes>>) -> Result<Value, String> {
    let exchange = async {
        let response = client()
            .request(request)
            .await
            .map_err(|e| format!("the request failed: {}", error_chain(&e)))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_BODY)
            .collect()
            .await
            .map_err(|e| format!("the answer could not be read (at most {MAX_BODY} bytes): {e}"))?
            .to_bytes();
        if !status.is_success() {
            return Err(format!("expected 200, found {status}"));
        }
        let value: Value = serde_json::from_slice(&body)
            .map_err(|e| format!("expected a JSON object, found invalid JSON: {e}"))?;
        if !value.is_object() {
            return Err("expected a JSON object".to_owned());
        }
        Ok(value)
    };
    match tokio::time::timeout(TIMEOUT, exchange).await {
        Ok(result) => result,
        Err(_) => Err(format!("no answer within {}s", TIMEOUT.as_secs())),
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_or_loopback_http_only() {
        for ok in [
            "https://as.example.com",
            "https://as.example.com/tenant/jwks.json",
            "http://127.0.0.1:9000/jwks",
            "http://localhost/x",
            "http://[::1]:80/",
        ] {
            assert!(check_url("issuer", ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://as.example.com/jwks",
            "http://10.0.0.1/jwks",
            "ftp://as.example.com",
            "as.example.com/jwks",
            "https://as.example.com/#frag",
        ] {
            let error = check_url("JWKS URL", bad).unwrap_err().to_string();
            assert!(error.contains("expected"), "{bad}: {error}");
        }
    }
}
