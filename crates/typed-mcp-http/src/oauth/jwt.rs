//! JWT access tokens checked against the authorization server's JWKS.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Uri;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::fetch::{check_url, get_json};
use super::{OAuthError, TokenError, TokenFuture, TokenVerifier, VerifiedToken, scopes_of};

/// The default leeway on `exp` and `nbf`, for clocks a little apart.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);
/// The default shortest time between two JWKS fetches caused by unknown
/// `kid`s: a flood of tokens naming invented keys costs at most one fetch
/// per interval.
pub const DEFAULT_MIN_REFRESH: Duration = Duration::from_secs(30);

/// The signature algorithms accepted by default: RSA (PKCS#1 v1.5 and PSS),
/// ECDSA and EdDSA. HMAC is never accepted: a JWKS holds public keys, and a
/// token "signed" with one as an HMAC secret is a forgery.
const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Verifies JWT access tokens (RFC 9068) with the keys of the authorization
/// server's JWKS: the signature (asymmetric algorithms only, the key chosen
/// by `kid`), the issuer, `exp` and `nbf` (with a small leeway), and the
/// audience, which must name this resource server's canonical URI — there is
/// no setting that skips it, so a token issued for another server is refused
/// even when its signature is valid.
///
/// The JWKS is fetched on first use, kept, and fetched again when a token
/// names a `kid` it does not hold (key rotation), at most once per
/// [`min_refresh`](Self::min_refresh) interval.
///
/// ```no_run
/// # async fn f() -> Result<(), typed_mcp_http::oauth::OAuthError> {
/// use typed_mcp_http::oauth::JwtVerifier;
/// let verifier = JwtVerifier::new(
///     "https://auth.example.com",
///     "https://auth.example.com/.well-known/jwks.json",
///     "https://desk.example.com/mcp",
/// )?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    issuer: String,
    audience: String,
    jwks_uri: Uri,
    leeway: Duration,
    min_refresh: Duration,
    algorithms: Vec<Algorithm>,
    keys: Mutex<Keys>,
    /// Held while fetching, so concurrent unknown `kid`s fetch once.
    fetching: tokio::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct Keys {
    set: Option<Arc<JwkSet>>,
    fetched_at: Option<Instant>,
    /// Counts fetches, so a waiter can tell another task fetched meanwhile.
    generation: u64,
}

impl JwtVerifier {
    /// A verifier of tokens from `issuer` (compared exactly with the `iss`
    /// claim), signed with the keys at `jwks_uri`, for the resource server
    /// whose canonical URI is `audience` (RFC 8707; what the `aud` claim
    /// must contain).
    ///
    /// # Errors
    ///
    /// [`OAuthError::InvalidUrl`] when a URL is not absolute `https` (plain
    /// `http` is allowed to loopback hosts only).
    pub fn new(issuer: &str, jwks_uri: &str, audience: &str) -> Result<Self, OAuthError> {
        check_url("issuer", issuer)?;
        let jwks_uri = check_url("JWKS URL", jwks_uri)?;
        let audience = super::canonical_resource(audience)?;
        Ok(JwtVerifier {
            inner: Arc::new(Inner {
                issuer: issuer.to_owned(),
                audience,
                jwks_uri,
                leeway: DEFAULT_LEEWAY,
                min_refresh: DEFAULT_MIN_REFRESH,
                algorithms: ASYMMETRIC.to_vec(),
                keys: Mutex::new(Keys::default()),
                fetching: tokio::sync::Mutex::new(()),
            }),
        })
    }

    /// A verifier for `issuer` whose JWKS URL is read from the issuer's
    /// metadata: RFC 8414 (`/.well-known/oauth-authorization-server`), else
    /// OpenID Connect discovery (`/.well-known/openid-configuration`). The
    /// metadata's `issuer` must be `issuer` exactly.
    ///
    /// # Errors
    ///
    /// [`OAuthError::InvalidUrl`] as for [`new`](Self::new);
    /// [`OAuthError::Discovery`] when neither document names a `jwks_uri`.
    pub async fn discover(issuer: &str, audience: &str) -> Result<Self, OAuthError> {
        let base = check_url("issuer", issuer)?;
        let (origin, path) = split_issuer(&base);
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ];
        let mut found = Vec::new();
        for candidate in candidates {
            let url = check_url("issuer metadata URL", &candidate)?;
            match get_json(&url).await {
                Ok(metadata) => {
                    if metadata.get("issuer").and_then(Value::as_str) != Some(issuer) {
                        found.push(format!(
                            "{candidate}: expected \"issuer\": {issuer:?}, found {}",
                            metadata.get("issuer").unwrap_or(&Value::Null)
                        ));
                        continue;
                    }
                    let Some(jwks) = metadata.get("jwks_uri").and_then(Value::as_str) else {
                        found.push(format!("{candidate}: no \"jwks_uri\""));
                        continue;
                    };
                    return JwtVerifier::new(issuer, jwks, audience);
                }
                Err(e) => found.push(format!("{candidate}: {e}")),
            }
        }
        Err(OAuthError::Discovery {
            issuer: issuer.to_owned(),
            reason: found.join("; "),
        })
    }

    /// The leeway on `exp` and `nbf` (default [`DEFAULT_LEEWAY`], 30 s; at
    /// most 5 minutes).
    #[must_use]
    pub fn leeway(self, leeway: Duration) -> Self {
        self.with(|inner| inner.leeway = leeway.min(Duration::from_secs(300)))
    }

    /// The shortest time between two fetches of the JWKS caused by unknown
    /// `kid`s (default [`DEFAULT_MIN_REFRESH`], 30 s).
    #[must_use]
    pub fn min_refresh(self, interval: Duration) -> Self {
        self.with(|inner| inner.min_refresh = interval)
    }

    /// The signature algorithms accepted; HMAC ones (`HS256`, ...) are
    /// dropped whatever is asked. Default: RS256/384/512, PS256/384/512,
    /// ES256/384, EdDSA.
    #[must_use]
    pub fn algorithms(self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        let chosen: Vec<Algorithm> = algorithms
            .into_iter()
            .filter(|a| ASYMMETRIC.contains(a))
            .collect();
        self.with(|inner| inner.algorithms = chosen)
    }

    /// The audience tokens must carry: this server's canonical URI.
    pub fn audience(&self) -> &str {
        &self.inner.audience
    }

    /// How many times the JWKS was fetched.
    pub fn fetches(&self) -> u64 {
        self.lock().generation
    }

    /// Fetches the JWKS now (a server can fail at start rather than at its
    /// first request).
    ///
    /// # Errors
    ///
    /// [`TokenError::Unavailable`] when the JWKS cannot be fetched or read.
    pub async fn refresh(&self) -> Result<(), TokenError> {
        let seen = self.lock().generation;
        self.fetch(seen, true).await.map(|_| ())
    }

    fn with(mut self, change: impl FnOnce(&mut Inner)) -> Self {
        // Settings are made before the verifier is shared.
        let inner = Arc::get_mut(&mut self.inner).expect("configured before use");
        change(inner);
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Keys> {
        self.inner.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The key set, fetching it when none was fetched yet, or when `after` is
    /// the generation that lacked a key and the refresh interval allows.
    async fn fetch(&self, after: u64, forced: bool) -> Result<Arc<JwkSet>, TokenError> {
        let _one = self.inner.fetching.lock().await;
        {
            let keys = self.lock();
            if let Some(set) = &keys.set {
                // Another task fetched while this one waited, or it is too
                // soon to fetch again.
                let recent = keys
                    .fetched_at
                    .is_some_and(|at| at.elapsed() < self.inner.min_refresh);
                if keys.generation != after || (recent && !forced) {
                    return Ok(set.clone());
                }
            }
        }
        let url = &self.inner.jwks_uri;
        let json = get_json(url)
            .await
            .map_err(|e| TokenError::Unavailable(format!("the JWKS at {url}: {e}")))?;
        let Some(Value::Array(entries)) = json.get("keys") else {
            return Err(TokenError::Unavailable(format!(
                "the JWKS at {url} is not a JWK set: expected a \"keys\" array"
            )));
        };
        // Keys of kinds this verifier cannot use (encryption keys of other
        // types, say) are skipped, not fatal to the whole set.
        let keys = entries
            .iter()
            .filter_map(|k| serde_json::from_value::<Jwk>(k.clone()).ok())
            .collect();
        let set = Arc::new(JwkSet { keys });
        let mut keys = self.lock();
        keys.set = Some(set.clone());
        keys.fetched_at = Some(Instant::now());
        keys.generation += 1;
        Ok(set)
    }

    async fn check(&self, token: &str) -> Result<VerifiedToken, TokenError> {
        let header = decode_header(token).map_err(|e| {
            TokenError::Invalid(format!(
                "expected a signed JWT (RS256, ES256, PS256, ...), found an unreadable header: {e}"
            ))
        })?;
        if !self.inner.algorithms.contains(&header.alg) {
            return Err(TokenError::Invalid(format!(
                "expected an asymmetric signature algorithm ({}), found {:?}",
                names(&self.inner.algorithms),
                header.alg
            )));
        }
        let (set, generation) = {
            let keys = self.lock();
            (keys.set.clone(), keys.generation)
        };
        let set = match set {
            Some(set) => set,
            None => self.fetch(generation, false).await?,
        };
        let key = match find_key(&set, header.kid.as_deref(), header.alg) {
            Some(key) => key,
            None => {
                // A key the set lacks: the server may have rotated its keys.
                let seen = self.lock().generation;
                let set = self.fetch(seen, false).await?;
                find_key(&set, header.kid.as_deref(), header.alg).ok_or_else(|| {
                    TokenError::Invalid(match &header.kid {
                        Some(kid) => format!(
                            "the token's key (kid {kid:?}) is not in the authorization server's JWKS"
                        ),
                        None => "the token names no key (kid), and the JWKS has no single key for its algorithm".to_owned(),
                    })
                })?
            }
        };
        let key = DecodingKey::from_jwk(&key).map_err(|e| {
            TokenError::Invalid(format!("the JWKS key for this token is unusable: {e}"))
        })?;
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = self.inner.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.inner.issuer]);
        validation.set_audience(&[&self.inner.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| TokenError::Invalid(self.explain(e)))?;
        VerifiedToken::from_claims(data.claims, scopes_of)
    }

    fn explain(&self, error: jsonwebtoken::errors::Error) -> String {
        use jsonwebtoken::errors::ErrorKind as K;
        match error.kind() {
            K::InvalidAudience => format!(
                "the token is not for this server: expected the audience {:?}",
                self.inner.audience
            ),
            K::InvalidIssuer => format!(
                "the token is from another issuer: expected {:?}",
                self.inner.issuer
            ),
            K::ExpiredSignature => "the token has expired".to_owned(),
            K::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
            K::InvalidSignature => "the token's signature does not verify".to_owned(),
            K::InvalidAlgorithm => "the token's algorithm does not match its key's type".to_owned(),
            K::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
            other => format!("the token could not be verified: {other:?}"),
        }
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> TokenFuture<'a> {
        Box::pin(self.check(token))
    }
}

/// The key of `set` for a token's `kid` and algorithm: the key with that
/// `kid`, or — for a token without one — the only key usable with `alg`.
/// A key whose `use` or `alg` say otherwise is never chosen.
fn find_key(set: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<Jwk> {
    let usable = |k: &&Jwk| {
        let sig = !matches!(
            k.common.public_key_use,
            Some(PublicKeyUse::Encryption) | Some(PublicKeyUse::Other(_))
        );
        let same_alg = k
            .common
            .key_algorithm
            .is_none_or(|a| key_algorithm(a) == Some(alg));
        sig && same_alg
    };
    match kid {
        Some(kid) => set
            .keys
            .iter()
            .filter(|k| k.common.key_id.as_deref() == Some(kid))
            .find(usable)
            .cloned(),
        None => {
            let mut candidates = set
                .keys
                .iter()
                .filter(usable)
                .filter(|k| same_family(&k.algorithm, alg));
            let only = candidates.next()?;
            candidates.next().is_none().then(|| only.clone())
        }
    }
}

/// Whether a key of this type can check signatures of `alg`.
fn same_family(key: &AlgorithmParameters, alg: Algorithm) -> bool {
    use Algorithm as A;
    match key {
        AlgorithmParameters::RSA(_) => matches!(
            alg,
            A::RS256 | A::RS384 | A::RS512 | A::PS256 | A::PS384 | A::PS512
        ),
        AlgorithmParameters::EllipticCurve(_) => matches!(alg, A::ES256 | A::ES384),
        AlgorithmParameters::OctetKeyPair(_) => alg == A::EdDSA,
        AlgorithmParameters::OctetKey(_) => false,
    }
}

fn key_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    Some(match alg {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

fn names(algorithms: &[Algorithm]) -> String {
    let names: Vec<String> = algorithms.iter().map(|a| format!("{a:?}")).collect();
    names.join(", ")
}

/// `https://as.example.com/tenant` → (`https://as.example.com`, `/tenant`).
fn split_issuer(issuer: &Uri) -> (String, String) {
    let origin = format!(
        "{}://{}",
        issuer.scheme_str().unwrap_or("https"),
        issuer.authority().map_or("", |a| a.as_str())
    );
    let path = issuer.path().trim_end_matches('/').to_owned();
    (origin, path)
}
