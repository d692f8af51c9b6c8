//! Opaque access tokens checked by the authorization server (RFC 7662).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use http::Uri;
use serde_json::{Map, Value};

use super::fetch::{check_url, post_form};
use super::{OAuthError, TokenError, TokenFuture, TokenVerifier, VerifiedToken, scopes_of};

/// Verifies tokens by asking the authorization server's introspection
/// endpoint (RFC 7662), authenticating as a client with `client_secret_basic`.
/// A token is accepted when the answer says `active: true`, its `aud` names
/// this resource server's canonical URI (always checked: an answer without
/// `aud` is refused), its `iss` (when present) is the expected issuer and its
/// `exp` (when present) has not passed.
///
/// ```no_run
/// # fn f() -> Result<(), typed_mcp_http::oauth::OAuthError> {
/// use typed_mcp_http::oauth::Introspection;
/// let verifier = Introspection::new(
///     "https://auth.example.com/oauth/introspect",
///     "desk-server",
///     "the client secret",
///     "https://desk.example.com/mcp",
/// )?
/// .issuer("https://auth.example.com");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Introspection {
    endpoint: Uri,
    authorization: Arc<str>,
    audience: String,
    issuer: Option<String>,
    leeway: Duration,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The client secret stays out of every debug print.
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("audience", &self.audience)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

impl Introspection {
    /// A verifier asking `endpoint`, as the client `client_id` with
    /// `client_secret`, for the resource server whose canonical URI is
    /// `audience`.
    ///
    /// # Errors
    ///
    /// [`OAuthError::InvalidUrl`] when `endpoint` is not `https` (plain
    /// `http` to loopback only) or `audience` is not a canonical URI.
    pub fn new(
        endpoint: &str,
        client_id: &str,
        client_secret: &str,
        audience: &str,
    ) -> Result<Self, OAuthError> {
        let endpoint = check_url("introspection endpoint", endpoint)?;
        let audience = super::canonical_resource(audience)?;
        // RFC 6749 §2.3.1: each part form-encoded before Basic encoding.
        let encode = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let pair = format!("{}:{}", encode(client_id), encode(client_secret));
        let authorization = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        );
        Ok(Introspection {
            endpoint,
            authorization: authorization.into(),
            audience,
            issuer: None,
            leeway: super::jwt::DEFAULT_LEEWAY,
        })
    }

    /// The issuer the answer's `iss` must equal, when it has one.
    #[must_use]
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.issuer = Some(issuer.to_owned());
        self
    }

    async fn check(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let form = form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let answer = post_form(&self.endpoint, form, Some(&self.authorization))
            .await
            .map_err(|e| {
                TokenError::Unavailable(format!(
                    "the introspection endpoint {}: {e}",
                    self.endpoint
                ))
            })?;
        let Value::Object(claims) = answer else {
            unreachable!("post_form returns objects")
        };
        self.judge(claims)
    }

    /// Whether an introspection answer accepts the token.
    fn judge(&self, claims: Map<String, Value>) -> Result<VerifiedToken, TokenError> {
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(TokenError::Invalid(
                "the authorization server says the token is not active".into(),
            ));
        }
        let audience_ok = match claims.get("aud") {
            Some(Value::String(aud)) => *aud == self.audience,
            Some(Value::Array(auds)) => auds.iter().any(|a| a.as_str() == Some(&self.audience)),
            _ => false,
        };
        if !audience_ok {
            return Err(TokenError::Invalid(format!(
                "the token is not for this server: expected the audience {:?}",
                self.audience
            )));
        }
        if let (Some(expected), Some(iss)) = (&self.issuer, claims.get("iss"))
            && iss.as_str() != Some(expected)
        {
            return Err(TokenError::Invalid(format!(
                "the token is from another issuer: expected {expected:?}"
            )));
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        if let Some(exp) = claims.get("exp").and_then(Value::as_u64)
            && exp + self.leeway.as_secs() < now
        {
            return Err(TokenError::Invalid("the token has expired".into()));
        }
        VerifiedToken::from_claims(claims, scopes_of)
    }
}

impl TokenVerifier for Introspection {
    fn verify<'a>(&'a self, token: &'a str) -> TokenFuture<'a> {
        Box::pin(self.check(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn verifier() -> Introspection {
        Introspection::new(
            "http://127.0.0.1:1/introspect",
            "rs",
            "s3cret",
            "https://desk.example.com/mcp",
        )
        .unwrap()
        .issuer("https://as.example.com")
    }

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn answers_are_judged_audience_first() {
        let v = verifier();
        let ok = v
            .judge(object(
                json!({"active": true, "aud": ["x", "https://desk.example.com/mcp"],
                "iss": "https://as.example.com", "sub": "ada", "scope": "desk.write other"}),
            ))
            .unwrap();
        assert_eq!(ok.subject, "ada");
        assert_eq!(ok.scopes, ["desk.write", "other"]);
        for (answer, expected) in [
            (json!({"active": false}), "not active"),
            (
                json!({"active": true, "sub": "ada"}),
                "expected the audience",
            ),
            (
                json!({"active": true, "sub": "ada", "aud": "https://other.example.com/mcp"}),
                "expected the audience",
            ),
            (
                json!({"active": true, "sub": "ada", "aud": "https://desk.example.com/mcp", "iss": "https://evil"}),
                "another issuer",
            ),
            (
                json!({"active": true, "sub": "ada", "aud": "https://desk.example.com/mcp", "exp": 1000}),
                "expired",
            ),
            (
                json!({"active": true, "aud": "https://desk.example.com/mcp"}),
                "no subject",
            ),
        ] {
            let error = v.judge(object(answer.clone())).unwrap_err().to_string();
            assert!(error.contains(expected), "{answer}: {error}");
        }
    }

    #[test]
    fn the_client_secret_is_not_in_debug() {
        let text = format!("{:?}", verifier());
        assert!(
            !text.contains("s3cret")
                && !text.contains(&base64::engine::general_purpose::STANDARD.encode("rs:s3cret"))
        );
    }
}
