//! The JWT verifier against keys generated here: what it accepts, what it
//! refuses and why, and when it fetches the JWKS again.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use typed_mcp_http::oauth::{JwtVerifier, TokenError, TokenVerifier};

use crate::keys::{Jwks, Key, b64};

pub const RESOURCE: &str = "http://127.0.0.1/mcp";

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims of a good token from `issuer` for [`RESOURCE`].
pub fn claims(issuer: &str, scope: &str) -> Value {
    json!({"iss": issuer, "sub": "ada", "aud": RESOURCE, "exp": now() + 300,
           "iat": now(), "scope": scope, "client_id": "desk-client", "email": "ada@example.com"})
}

/// The bad tokens, each with a part of the reason it must be refused for.
pub fn bad_tokens(key: &Key, issuer: &str) -> Vec<(&'static str, String, &'static str)> {
    let good = claims(issuer, "desk.write");
    let with = |change: &dyn Fn(&mut Value)| {
        let mut c = good.clone();
        change(&mut c);
        key.sign(&c)
    };
    let valid = key.sign(&good);
    let (head, rest) = valid.split_once('.').unwrap();
    let (payload, signature) = rest.split_once('.').unwrap();
    // The last character of a signature can carry padding bits: change an
    // earlier one.
    let mut tampered_sig: Vec<char> = signature.chars().collect();
    tampered_sig[5] = if tampered_sig[5] == 'A' { 'B' } else { 'A' };
    let tampered_sig: String = tampered_sig.into_iter().collect();
    let mut elevated = good.clone();
    elevated["scope"] = json!("desk.write desk.admin");
    let none_header =
        b64(format!(r#"{{"alg":"none","typ":"JWT","kid":"{}"}}"#, key.kid).as_bytes());
    let mut hmac = Header::new(Algorithm::HS256);
    hmac.kid = Some(key.kid.clone());
    vec![
        (
            "wrong audience",
            with(&|c| c["aud"] = json!("http://127.0.0.1/other")),
            "expected the audience",
        ),
        (
            "no audience",
            with(&|c| {
                c.as_object_mut().unwrap().remove("aud");
            }),
            "no aud claim",
        ),
        (
            "wrong issuer",
            with(&|c| c["iss"] = json!("http://127.0.0.1:1")),
            "another issuer",
        ),
        (
            "expired",
            with(&|c| c["exp"] = json!(now() - 120)),
            "expired",
        ),
        (
            "not yet valid",
            with(&|c| c["nbf"] = json!(now() + 120)),
            "not valid yet",
        ),
        (
            "alg none",
            format!("{none_header}.{payload}."),
            "expected a signed JWT",
        ),
        (
            "HMAC signed with the public key",
            jsonwebtoken::encode(&hmac, &good, &EncodingKey::from_secret(&key.public_bytes()))
                .unwrap(),
            "expected an asymmetric signature algorithm",
        ),
        (
            "tampered signature",
            format!("{head}.{payload}.{tampered_sig}"),
            "signature does not verify",
        ),
        (
            "tampered payload",
            format!(
                "{head}.{}.{signature}",
                b64(&serde_json::to_vec(&elevated).unwrap())
            ),
            "signature does not verify",
        ),
        (
            "not a JWT",
            "opaque-token-value-1234".to_owned(),
            "expected a signed JWT",
        ),
    ]
}

fn reason(result: Result<typed_mcp_http::oauth::VerifiedToken, TokenError>) -> String {
    match result {
        Err(TokenError::Invalid(why)) => why,
        other => panic!("expected an invalid token, got {other:?}"),
    }
}

#[tokio::test]
async fn rsa_pss_and_ecdsa_tokens_verify_and_carry_their_claims() {
    let rs = Key::rsa("rs", Algorithm::RS256);
    let ps = Key::rsa("ps", Algorithm::PS256);
    let es = Key::ec("es");
    let jwks = Jwks::start(&[&rs, &ps, &es]).await;
    let verifier = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE).unwrap();
    for key in [&rs, &ps, &es] {
        let token = key.sign(&claims(&jwks.issuer(), "desk.write other"));
        let verified = verifier.verify(&token).await.unwrap();
        assert_eq!(verified.subject, "ada", "{:?}", key.alg);
        assert_eq!(verified.scopes, ["desk.write", "other"]);
        assert_eq!(verified.claims["email"], "ada@example.com");
    }
    assert_eq!(jwks.fetches(), 1, "the JWKS is fetched once and kept");
}

#[tokio::test]
async fn every_bad_token_is_refused_for_its_reason() {
    let key = Key::rsa("k1", Algorithm::RS256);
    let jwks = Jwks::start(&[&key]).await;
    let verifier = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE).unwrap();
    for (what, token, expected) in bad_tokens(&key, &jwks.issuer()) {
        let why = reason(verifier.verify(&token).await);
        assert!(why.contains(expected), "{what}: {why}");
        assert!(!why.contains(&token), "{what}: the reason holds the token");
    }
    // A good token still verifies after all of them.
    let good = key.sign(&claims(&jwks.issuer(), ""));
    assert_eq!(
        verifier.verify(&good).await.unwrap().scopes,
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn an_expired_token_within_the_leeway_is_accepted() {
    let key = Key::ec("k");
    let jwks = Jwks::start(&[&key]).await;
    let verifier = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE).unwrap();
    let mut c = claims(&jwks.issuer(), "");
    c["exp"] = json!(now() - 5);
    c["nbf"] = json!(now() + 5);
    verifier.verify(&key.sign(&c)).await.unwrap();
    let strict = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE)
        .unwrap()
        .leeway(Duration::ZERO);
    assert!(reason(strict.verify(&key.sign(&c)).await).contains("expired"));
}

#[tokio::test]
async fn an_unknown_kid_fetches_the_jwks_once_per_interval() {
    let old = Key::rsa("old", Algorithm::RS256);
    let jwks = Jwks::start(&[&old]).await;
    let interval = Duration::from_millis(400);
    let verifier = JwtVerifier::new(&jwks.issuer(), &jwks.url(), RESOURCE)
        .unwrap()
        .min_refresh(interval);
    verifier
        .verify(&old.sign(&claims(&jwks.issuer(), "")))
        .await
        .unwrap();
    assert_eq!(jwks.fetches(), 1);

    // The server rotates to a new key: a token signed with it names a kid
    // the cache lacks, and one fetch finds it.
    tokio::time::sleep(interval + Duration::from_millis(50)).await;
    let new = Key::rsa("new", Algorithm::RS256);
    jwks.add(&new);
    verifier
        .verify(&new.sign(&claims(&jwks.issuer(), "")))
        .await
        .unwrap();
    assert_eq!(jwks.fetches(), 2, "one refresh for the unknown kid");

    // A flood of invented kids right after costs no fetch at all.
    for i in 0..20 {
        let stranger = Key::ec(&format!("invented-{i}"));
        let why = reason(
            verifier
                .verify(&stranger.sign(&claims(&jwks.issuer(), "")))
                .await,
        );
        assert!(
            why.contains("is not in the authorization server's JWKS"),
            "{why}"
        );
    }
    assert_eq!(jwks.fetches(), 2, "no fetch within the interval");

    // Once the interval has passed, an unknown kid refreshes once more.
    tokio::time::sleep(interval + Duration::from_millis(50)).await;
    let stranger = Key::ec("later");
    reason(
        verifier
            .verify(&stranger.sign(&claims(&jwks.issuer(), "")))
            .await,
    );
    assert_eq!(jwks.fetches(), 3);
    // The keys it knows still verify.
    verifier
        .verify(&old.sign(&claims(&jwks.issuer(), "")))
        .await
        .unwrap();
    assert_eq!(jwks.fetches(), 3);
}

#[tokio::test]
async fn an_unreachable_jwks_is_unavailable_not_invalid() {
    let key = Key::ec("k");
    // A port nobody listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    drop(listener);
    let verifier = JwtVerifier::new("http://127.0.0.1:1", &url, RESOURCE).unwrap();
    let token = key.sign(&claims("http://127.0.0.1:1", ""));
    match verifier.verify(&token).await {
        Err(TokenError::Unavailable(why)) => {
            assert!(why.contains(&url), "{why}");
            assert!(!why.contains(&token));
        }
        other => panic!("expected unavailable, got {other:?}"),
    }
}

#[test]
fn urls_must_be_https_except_loopback() {
    let error = JwtVerifier::new(
        "https://as.example.com",
        "http://as.example.com/jwks",
        RESOURCE,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("expected https"), "{error}");
    assert!(
        JwtVerifier::new(
            "http://as.example.com",
            "https://as.example.com/jwks",
            RESOURCE
        )
        .is_err()
    );
    assert!(
        JwtVerifier::new(
            "https://as.example.com",
            "https://as.example.com/jwks",
            "http://desk.example.com/mcp"
        )
        .is_err()
    );
    JwtVerifier::new(
        "https://as.example.com",
        "https://as.example.com/jwks",
        "https://desk.example.com/mcp",
    )
    .unwrap();
}
