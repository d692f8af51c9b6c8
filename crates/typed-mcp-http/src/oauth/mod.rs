//! An OAuth 2.1 resource server for the MCP endpoint (the `oauth` feature),
//! whose scopes are the server's [capabilities](typed_mcp::Capability).
//!
//! `#[tool(caps = [DESK_WRITE])]` already says what a call needs. With
//! [`OAuth`], a verified access token's scopes are what the caller is granted
//! for that request: a scope named like a capability grants it (an optional
//! [table](OAuth::map_scope) maps other names). So the one declaration drives
//! the refusal, the receipt, the hidden lists and the scope challenge.
//!
//! ```no_run
//! # async fn f(server: typed_mcp::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp_http::HttpServer;
//! use typed_mcp_http::oauth::{JwtVerifier, OAuth};
//!
//! let resource = "https://desk.example.com/mcp";
//! let verifier = JwtVerifier::discover("https://auth.example.com", resource).await?;
//! let oauth = OAuth::new(resource, verifier)?.authorization_server("https://auth.example.com")?;
//! let listener = tokio::net::TcpListener::bind("0.0.0.0:8443").await?;
//! let app = HttpServer::new(server, listener.local_addr()?).oauth(oauth).mount("/mcp")?;
//! typed_mcp_http::serve(listener, app, std::future::pending()).await;
//! # Ok(()) }
//! ```
//!
//! What the endpoint then answers:
//!
//! | request | answer |
//! |---|---|
//! | `GET /.well-known/oauth-protected-resource<resource path>` | the Protected Resource Metadata (RFC 9728): `resource`, `authorization_servers`, `scopes_supported` (every capability a declaration needs that a token may grant, as scopes), `bearer_methods_supported: ["header"]` |
//! | no `Authorization: Bearer` | `401`, `WWW-Authenticate: Bearer resource_metadata="…"` (and `scope="…"` when the `Mcp-Method`/`Mcp-Name` headers name a call that needs some) |
//! | a token the verifier refuses (signature, issuer, audience, expiry, ...) | `401`, `WWW-Authenticate: Bearer error="invalid_token", error_description="…", resource_metadata="…"` |
//! | the verifier cannot check it now (JWKS or introspection unreachable) | `503` with `Retry-After` |
//! | a `tools/call`, `resources/read` or `prompts/get` needing a capability the token lacks | `403`, `WWW-Authenticate: Bearer error="insufficient_scope", scope="<every scope the call needs>", resource_metadata="…"`, the refusal as the body, and a `refused` receipt |
//!
//! A verified token becomes the request's [`Principal`]: its `sub` (or
//! `client_id`), the capabilities its scopes grant, and its claims
//! (`ctx.principal().and_then(|p| p.claim("email"))`). With
//! [`hide_ungranted`](typed_mcp::ServerBuilder::hide_ungranted), lists show
//! only what the token may call (as `cacheScope: "private"`).
//!
//! The token itself is never logged, never in a receipt (only the subject and
//! the capabilities), and never in an error: the messages of refusals are
//! the verifier's own words, and any that held the token would have it
//! replaced by `[REDACTED]`.

mod fetch;
mod introspect;
mod jwt;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::response::Response;
use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Request, StatusCode};
use serde_json::{Map, Value, json};
use typed_mcp::transport::NotGranted;
use typed_mcp::{Capability, Principal, Server};

pub use introspect::Introspection;
pub use jsonwebtoken::Algorithm;
pub use jwt::{DEFAULT_LEEWAY, DEFAULT_MIN_REFRESH, JwtVerifier};

/// The future a [`TokenVerifier`] returns.
pub type TokenFuture<'a> =
    Pin<Box<dyn Future<Output = Result<VerifiedToken, TokenError>> + Send + 'a>>;

/// Checks an access token. [`JwtVerifier`] and [`Introspection`] are the
/// two the crate has; implement it for anything else (a cache in front of
/// introspection, a test double).
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (the bearer credential, without `Bearer `). An
    /// implementation must check that the token was issued for this resource
    /// server (its audience), and must never put the token into its error.
    fn verify<'a>(&'a self, token: &'a str) -> TokenFuture<'a>;
}

/// What a verified token says about its caller.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct VerifiedToken {
    /// Who the token is for: its `sub`, or `client_id` for a client acting
    /// on its own (client credentials).
    pub subject: String,
    /// The token's scopes (`scope`, space-separated, or an `scp` list).
    pub scopes: Vec<String>,
    /// Every claim of the token (or of the introspection answer).
    pub claims: Map<String, Value>,
}

impl VerifiedToken {
    /// A verified token for `subject` with these scopes and claims.
    pub fn new(
        subject: impl Into<String>,
        scopes: Vec<String>,
        claims: Map<String, Value>,
    ) -> Self {
        VerifiedToken {
            subject: subject.into(),
            scopes,
            claims,
        }
    }

    fn from_claims(
        claims: Map<String, Value>,
        scopes: fn(&Map<String, Value>) -> Vec<String>,
    ) -> Result<Self, TokenError> {
        let subject = ["sub", "client_id"]
            .iter()
            .find_map(|k| claims.get(*k).and_then(Value::as_str))
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                TokenError::Invalid("the token names no subject (sub or client_id)".into())
            })?
            .to_owned();
        Ok(VerifiedToken {
            subject,
            scopes: scopes(&claims),
            claims,
        })
    }
}

/// The scopes a token's claims grant: `scope` (space-separated, RFC 9068)
/// or `scp` (a list or a string, as some servers write it).
fn scopes_of(claims: &Map<String, Value>) -> Vec<String> {
    let words = |s: &str| {
        s.split(' ')
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    };
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) | (None, Some(Value::String(s))) => words(s),
        (None, Some(Value::Array(list))) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is not valid here (`401 invalid_token`).
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The token could not be checked now: the authorization server's keys
    /// or introspection endpoint did not answer (`503`).
    #[error("the token could not be checked: {0}")]
    Unavailable(String),
}

/// A setting of the resource server that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// A URL is malformed or not `https` (plain `http` is for loopback only).
    #[error("invalid {what} {url:?}: {reason}")]
    InvalidUrl {
        /// Which URL.
        what: &'static str,
        /// The URL as given.
        url: String,
        /// What was expected.
        reason: String,
    },
    /// The issuer's metadata gave no JWKS URL.
    #[error("cannot discover the JWKS of {issuer:?}: {reason}")]
    Discovery {
        /// The issuer.
        issuer: String,
        /// What each metadata document said.
        reason: String,
    },
    /// No authorization server was named (RFC 9728 needs at least one).
    #[error("the resource server names no authorization server: call authorization_server(..)")]
    NoAuthorizationServer,
    /// A scope table entry is unusable.
    #[error(
        "invalid scope {scope:?}: expected a non-empty scope token without spaces, quotes or backslashes"
    )]
    InvalidScope {
        /// The scope as given.
        scope: String,
    },
}

/// The canonical URI of a resource server (RFC 8707): absolute, `https` (or
/// `http` to loopback), no query or fragment; the scheme and host in lower
/// case, and no lone `/` path.
pub(crate) fn canonical_resource(uri: &str) -> Result<String, OAuthError> {
    let parsed = fetch::check_url("resource URI", uri)?;
    if parsed.query().is_some() {
        return Err(OAuthError::InvalidUrl {
            what: "resource URI",
            url: uri.to_owned(),
            reason: "expected a canonical resource URI, without a query (?...)".into(),
        });
    }
    let scheme = parsed.scheme_str().unwrap_or("https").to_ascii_lowercase();
    let authority = parsed
        .authority()
        .map_or("", |a| a.as_str())
        .to_ascii_lowercase();
    let path = match parsed.path() {
        "/" => "",
        path => path,
    };
    Ok(format!("{scheme}://{authority}{path}"))
}

/// The resource server: who issues tokens, how they are verified, and how
/// their scopes map to capabilities. Give it to
/// [`HttpServer::oauth`](crate::HttpServer::oauth), or use its
/// [`layer`](Self::layer) and [`metadata_router`](Self::metadata_router)
/// around a router of your own.
#[derive(Clone)]
pub struct OAuth {
    resource: String,
    authorization_servers: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
    /// Scope → the capability names it grants, for servers whose scope
    /// names differ from the capabilities'.
    table: Vec<(String, Vec<&'static str>)>,
    resource_name: Option<String>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// A resource server whose canonical URI is `resource` (the URL clients
    /// use for the MCP endpoint, e.g. `https://desk.example.com/mcp`),
    /// accepting the tokens `verifier` accepts.
    ///
    /// # Errors
    ///
    /// [`OAuthError::InvalidUrl`] when `resource` is not a canonical URI.
    pub fn new(resource: &str, verifier: impl TokenVerifier) -> Result<Self, OAuthError> {
        Ok(OAuth {
            resource: canonical_resource(resource)?,
            authorization_servers: Vec::new(),
            verifier: Arc::new(verifier),
            table: Vec::new(),
            resource_name: None,
        })
    }

    /// Names an authorization server (its issuer URL) in the metadata;
    /// at least one is needed.
    ///
    /// # Errors
    ///
    /// [`OAuthError::InvalidUrl`] when `issuer` is not `https` (or loopback
    /// `http`).
    pub fn authorization_server(mut self, issuer: &str) -> Result<Self, OAuthError> {
        fetch::check_url("authorization server URL", issuer)?;
        self.authorization_servers.push(issuer.to_owned());
        Ok(self)
    }

    /// Makes the scope `scope` grant `capabilities` (instead of the
    /// capability of the same name), for an authorization server whose scope
    /// names differ; one scope may grant several (a scope hierarchy).
    /// Challenges and `scopes_supported` then name `scope` for them.
    ///
    /// # Errors
    ///
    /// [`OAuthError::InvalidScope`] when `scope` cannot be a scope token.
    pub fn map_scope(
        mut self,
        scope: &str,
        capabilities: impl IntoIterator<Item = Capability>,
    ) -> Result<Self, OAuthError> {
        let valid = !scope.is_empty()
            && scope
                .bytes()
                .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\');
        if !valid {
            return Err(OAuthError::InvalidScope {
                scope: scope.to_owned(),
            });
        }
        let names = capabilities.into_iter().map(|c| c.name()).collect();
        self.table.push((scope.to_owned(), names));
        Ok(self)
    }

    /// A human-readable name for the metadata's `resource_name`.
    #[must_use]
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// The canonical resource URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Where the Protected Resource Metadata is served (RFC 9728 §3.1): the
    /// well-known path inserted before the resource's path.
    pub fn metadata_url(&self) -> String {
        let (origin, path) = self.split();
        format!("{origin}/.well-known/oauth-protected-resource{path}")
    }

    /// The path part of [`metadata_url`](Self::metadata_url).
    pub fn metadata_path(&self) -> String {
        let (_, path) = self.split();
        format!("/.well-known/oauth-protected-resource{path}")
    }

    fn split(&self) -> (&str, &str) {
        let after_scheme = self.resource.find("://").map_or(0, |i| i + 3);
        match self.resource[after_scheme..].find('/') {
            Some(i) => self.resource.split_at(after_scheme + i),
            None => (&self.resource, ""),
        }
    }

    /// The capability names a token's scopes grant.
    fn granted(&self, scopes: &[String]) -> Vec<String> {
        let mut names = Vec::new();
        for scope in scopes {
            match self.table.iter().find(|(s, _)| s == scope) {
                Some((_, caps)) => names.extend(caps.iter().map(|c| (*c).to_owned())),
                None => names.push(scope.clone()),
            }
        }
        names
    }

    /// The scope that grants a capability: the first table entry granting
    /// it, else its own name.
    fn scope_for(&self, capability: &Capability) -> String {
        self.table
            .iter()
            .find(|(_, caps)| caps.contains(&capability.name()))
            .map_or_else(|| capability.name().to_owned(), |(s, _)| s.clone())
    }

    fn scopes_for<'c>(
        &self,
        capabilities: impl IntoIterator<Item = &'c Capability>,
    ) -> Vec<String> {
        let mut scopes: Vec<String> = Vec::new();
        for c in capabilities {
            let scope = self.scope_for(c);
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        scopes
    }

    /// The Protected Resource Metadata document of `server`.
    pub fn metadata(&self, server: &Server) -> Value {
        // Only what a token can grant is offered as a scope (not filesystem
        // roots or hosts, which the host grants with their scope).
        let grantable: Vec<Capability> = server
            .capabilities()
            .into_iter()
            .filter(typed_mcp::capability::credential_may_grant)
            .collect();
        let mut scopes = self.scopes_for(&grantable);
        scopes.sort();
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
        });
        if let Some(name) = &self.resource_name {
            doc["resource_name"] = json!(name);
        }
        doc
    }

    /// A router serving the metadata at [`metadata_path`](Self::metadata_path),
    /// to merge at the root of the application (not nested).
    ///
    /// # Errors
    ///
    /// [`OAuthError::NoAuthorizationServer`] when none was named.
    pub fn metadata_router(&self, server: &Server) -> Result<axum::Router, OAuthError> {
        if self.authorization_servers.is_empty() {
            return Err(OAuthError::NoAuthorizationServer);
        }
        let body = serde_json::to_vec(&self.metadata(server)).expect("JSON values serialize");
        let body = bytes::Bytes::from(body);
        Ok(axum::Router::new().route(
            &self.metadata_path(),
            axum::routing::get(move || {
                let body = body.clone();
                async move {
                    let mut response = Response::new(Body::from(body));
                    let headers = response.headers_mut();
                    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                    headers.insert(CACHE_CONTROL, HeaderValue::from_static("max-age=300"));
                    headers.insert("access-control-allow-origin", HeaderValue::from_static("*"));
                    response
                }
            }),
        ))
    }

    /// The tower layer that verifies each request's bearer token before the
    /// MCP endpoint of `server` sees it, and turns refusals for want of a
    /// capability into scope challenges.
    ///
    /// # Errors
    ///
    /// [`OAuthError::NoAuthorizationServer`] when none was named.
    pub fn layer(&self, server: &Server) -> Result<OAuthLayer, OAuthError> {
        if self.authorization_servers.is_empty() {
            return Err(OAuthError::NoAuthorizationServer);
        }
        Ok(OAuthLayer {
            guard: Arc::new(Guard {
                oauth: self.clone(),
                server: server.clone(),
                metadata_url: self.metadata_url(),
            }),
        })
    }
}

struct Guard {
    oauth: OAuth,
    server: Server,
    metadata_url: String,
}

/// Verifies bearer tokens in front of the MCP endpoint (see [`OAuth::layer`]).
#[derive(Clone)]
pub struct OAuthLayer {
    guard: Arc<Guard>,
}

impl std::fmt::Debug for OAuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthLayer")
            .field("resource", &self.guard.oauth.resource)
            .finish_non_exhaustive()
    }
}

impl<S> tower::Layer<S> for OAuthLayer {
    type Service = OAuthService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        OAuthService {
            guard: self.guard.clone(),
            inner,
        }
    }
}

/// The service [`OAuthLayer`] wraps around the endpoint.
#[derive(Clone)]
pub struct OAuthService<S> {
    guard: Arc<Guard>,
    inner: S,
}

impl<S> std::fmt::Debug for OAuthService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthService").finish_non_exhaustive()
    }
}

impl<S> tower::Service<Request<Body>> for OAuthService<S>
where
    S: tower::Service<Request<Body>, Response = Response> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let guard = self.guard.clone();
        // The ready service serves this request; a fresh clone waits for the next.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let token = match bearer(request.headers()) {
                Ok(token) => token,
                Err(()) => return Ok(guard.no_token(request.headers())),
            };
            let verified = guard.oauth.verifier.verify(&token).await;
            let verified = match verified {
                Ok(verified) => verified,
                Err(TokenError::Invalid(why)) => {
                    let why = redact(&why, &token);
                    tracing::info!(reason = %why, "refused an MCP request: invalid bearer token");
                    return Ok(guard.invalid_token(&why));
                }
                Err(TokenError::Unavailable(why)) => {
                    let why = redact(&why, &token);
                    tracing::warn!(reason = %why, "refused an MCP request: the token could not be checked");
                    return Ok(unavailable(&why));
                }
            };
            drop(token);
            let principal = Principal::new(verified.subject)
                .with_granted(guard.oauth.granted(&verified.scopes))
                .with_claims(verified.claims);
            request.extensions_mut().insert(principal);
            let mut response = inner.call(request).await?;
            if let Some(refused) = response.extensions_mut().remove::<Arc<NotGranted>>() {
                guard.challenge(&mut response, &refused);
            }
            Ok(response)
        })
    }
}

/// The bearer token of `Authorization` (RFC 6750 §2.1); `Err` when there is
/// none, or more than one `Authorization` header.
fn bearer(headers: &HeaderMap) -> Result<String, ()> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let value = values.next().ok_or(())?;
    if values.next().is_some() {
        return Err(());
    }
    let value = value.to_str().map_err(|_| ())?;
    let (scheme, token) = value.split_once(' ').ok_or(())?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(());
    }
    Ok(token.to_owned())
}

/// `text` with every occurrence of `token` replaced (a verifier's message
/// should never hold it; this makes sure).
fn redact(text: &str, token: &str) -> String {
    if token.len() >= 8 && text.contains(token) {
        text.replace(token, "[REDACTED]")
    } else {
        text.to_owned()
    }
}

/// A quoted-string parameter value: only characters RFC 6750 allows in
/// `error_description` are kept (no quotes or backslashes).
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            ' '..='~' if c != '"' && c != '\\' => c,
            _ => '\'',
        })
        .collect()
}

impl Guard {
    fn no_token(&self, headers: &HeaderMap) -> Response {
        // The call the headers name, when known, says which scopes to ask for.
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let scopes = match (header("mcp-method"), header("mcp-name")) {
            (Some(method), Some(name)) => self
                .server
                .capabilities_for(method, name)
                .map(|caps| self.oauth.scopes_for(caps.iter()))
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if !scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{}\"", scopes.join(" ")));
        }
        // Every OAuth client's first request ends here: not worth more than debug.
        tracing::debug!("refused an MCP request without a bearer token");
        refusal(
            StatusCode::UNAUTHORIZED,
            &challenge,
            "this endpoint needs an OAuth access token: send Authorization: Bearer <token> (the authorization server is named in the resource metadata)",
        )
    }

    fn invalid_token(&self, why: &str) -> Response {
        let challenge = format!(
            "Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{}\"",
            quoted(why),
            self.metadata_url
        );
        refusal(StatusCode::UNAUTHORIZED, &challenge, why)
    }

    /// Turns a refusal for want of capabilities into `403 insufficient_scope`
    /// naming every scope the call needs (SEP-2350); the body stays the
    /// refusal.
    fn challenge(&self, response: &mut Response, refused: &NotGranted) {
        let scopes = self.oauth.scopes_for(refused.required.iter());
        let missing = self.oauth.scopes_for(refused.missing.iter());
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\", error_description=\"{}\"",
            scopes.join(" "),
            self.metadata_url,
            quoted(&format!("the token lacks the scope {}", missing.join(", "))),
        );
        *response.status_mut() = StatusCode::FORBIDDEN;
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
    }
}

fn refusal(status: StatusCode, challenge: &str, message: &str) -> Response {
    let body =
        typed_mcp::protocol::encode::error(None, &typed_mcp::RpcError::invalid_request(message));
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Ok(value) = HeaderValue::from_str(challenge) {
        headers.insert(WWW_AUTHENTICATE, value);
    }
    response
}

fn unavailable(why: &str) -> Response {
    let error = typed_mcp::RpcError::overloaded(
        format!("the access token could not be checked now ({why}); retry later"),
        5000,
    );
    let mut response = Response::new(Body::from(typed_mcp::protocol::encode::error(None, &error)));
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_resources() {
        assert_eq!(
            canonical_resource("HTTPS://Desk.Example.com/mcp").unwrap(),
            "https://desk.example.com/mcp"
        );
        assert_eq!(
            canonical_resource("https://desk.example.com/").unwrap(),
            "https://desk.example.com"
        );
        assert_eq!(
            canonical_resource("http://127.0.0.1:8080/mcp").unwrap(),
            "http://127.0.0.1:8080/mcp"
        );
        for bad in [
            "https://desk.example.com/mcp?x=1",
            "https://desk.example.com/mcp#f",
            "http://desk.example.com/mcp",
            "/mcp",
        ] {
            assert!(canonical_resource(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bearer_tokens_are_read_strictly() {
        let mut h = HeaderMap::new();
        assert!(bearer(&h).is_err());
        h.insert(AUTHORIZATION, HeaderValue::from_static("bearer abc.def"));
        assert_eq!(bearer(&h).unwrap(), "abc.def");
        h.insert(AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert!(bearer(&h).is_err());
        h.insert(AUTHORIZATION, HeaderValue::from_static("Bearer "));
        assert!(bearer(&h).is_err());
        h.insert(AUTHORIZATION, HeaderValue::from_static("Bearer a"));
        h.append(AUTHORIZATION, HeaderValue::from_static("Bearer b"));
        assert!(bearer(&h).is_err());
    }

    #[test]
    fn scopes_map_to_capabilities_and_back() {
        const WRITE: Capability = Capability::new("desk.write", "w");
        const ADMIN: Capability = Capability::new("desk.admin", "a");
        let oauth = OAuth::new(
            "https://d.example.com/mcp",
            Introspection::new(
                "https://a.example.com/i",
                "c",
                "s",
                "https://d.example.com/mcp",
            )
            .unwrap(),
        )
        .unwrap()
        .map_scope("tickets:admin", [WRITE, ADMIN])
        .unwrap();
        assert_eq!(
            oauth.granted(&["tickets:admin".into(), "desk.read".into()]),
            ["desk.write", "desk.admin", "desk.read"]
        );
        assert_eq!(oauth.scopes_for([&WRITE, &ADMIN]), ["tickets:admin"]);
        assert_eq!(
            oauth.metadata_url(),
            "https://d.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert!(oauth.clone().map_scope("two words", [WRITE]).is_err());
        assert_eq!(
            scopes_of(json!({"scp": ["a", "b"]}).as_object().unwrap()),
            ["a", "b"]
        );
        assert_eq!(
            scopes_of(json!({"scope": " a  b "}).as_object().unwrap()),
            ["a", "b"]
        );
    }

    #[test]
    fn messages_never_hold_the_token() {
        assert_eq!(
            redact("bad abcdefghij here", "abcdefghij"),
            "bad [REDACTED] here"
        );
        assert_eq!(quoted("say \"no\" \\ ok"), "say 'no' ' ok");
    }
}
