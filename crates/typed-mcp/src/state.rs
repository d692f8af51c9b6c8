//! Sealed `requestState` for multi round-trip requests.
//!
//! The state a tool carries from one round to the next travels through the
//! client, which must be able neither to read nor to forge it. It is sealed with
//! XChaCha20-Poly1305 (an AEAD): encrypted, and bound — as associated data — to
//! the method, the declaration's name, a digest of the arguments and the
//! principal, with an expiry inside the sealed payload. A state replayed for
//! another tool, other arguments or another principal fails to open, as does a
//! tampered or expired one.
//!
//! Keys: the first key seals and every key opens, so keys can be rotated. The
//! default is one random key per process: **replicas behind a load balancer need
//! a shared key** ([`StateKeys::from_secrets`]), or a retry that reaches another
//! replica is refused.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use typed_mcp_core::digest::{Numbers, write_canonical_object_to};
use zeroize::Zeroize as _;

/// Fills `bytes` from the operating system's random source (keys and nonces).
/// getrandom directly rather than the AEAD crate's `getrandom` feature, which
/// would add a second getrandom major and rand_core to the build.
fn fill_random(bytes: &mut [u8]) {
    getrandom::fill(bytes).expect("the operating system's random source failed");
}

/// The keys that seal and open `requestState`.
#[derive(Clone)]
pub struct StateKeys {
    ciphers: Vec<XChaCha20Poly1305>,
}

impl std::fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.debug_struct("StateKeys")
            .field("keys", &self.ciphers.len())
            .finish()
    }
}

impl StateKeys {
    /// One random key for this process (the default). Fine for a single
    /// process; replicas need [`StateKeys::from_secrets`].
    pub fn random() -> Self {
        let mut secret = [0u8; 32];
        fill_random(&mut secret);
        let cipher = XChaCha20Poly1305::new(&secret.into());
        secret.zeroize();
        StateKeys {
            ciphers: vec![cipher],
        }
    }

    /// Keys from 32-byte secrets: the first seals, all open (rotation: put the
    /// new key first and keep the old one until states sealed with it expire).
    ///
    /// # Panics
    ///
    /// When `secrets` is empty.
    pub fn from_secrets(secrets: &[[u8; 32]]) -> Self {
        assert!(
            !secrets.is_empty(),
            "StateKeys::from_secrets needs at least one key"
        );
        StateKeys {
            ciphers: secrets
                .iter()
                .map(|s| XChaCha20Poly1305::new(s.into()))
                .collect(),
        }
    }
}

/// What a sealed state is bound to: the request it was issued for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateBinding<'a> {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'a str,
    /// The tool or prompt name, or the resource URI.
    pub target: &'a str,
    /// The arguments, hashed in canonical form (so key order does not matter;
    /// see [`typed_mcp_core::digest::write_canonical_to`]).
    pub arguments: Option<&'a Map<String, Value>>,
    /// The authenticated principal, when the transport has one.
    pub principal: Option<&'a str>,
}

impl StateBinding<'_> {
    /// The digest a state is sealed to: it is the AEAD's associated data.
    pub fn digest(&self) -> BindingDigest {
        let mut hasher = Sha256::new();
        for part in [self.method, self.target, self.principal.unwrap_or("")] {
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        // No principal and an empty principal id are different callers.
        hasher.update([u8::from(self.principal.is_some())]);
        // The digest's canonical JSON, with numbers kept exact: `1` and
        // `1.0`, or two integers past 2^53, are different arguments here.
        if let Some(arguments) = self.arguments {
            write_canonical_object_to(arguments, Numbers::Exact, &mut hasher);
        }
        BindingDigest(hasher.finalize().into())
    }
}

/// The request a state is bound to, hashed (see [`StateBinding::digest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindingDigest([u8; 32]);

/// Why a `requestState` was refused. The client learns only that it did not
/// verify; the distinction is for the server's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Not a state this server issued for this request (tampered, forged,
    /// sealed with an unknown key, or bound to another request).
    #[error("requestState does not verify for this request")]
    Invalid,
    /// Issued for this request, but expired.
    #[error("requestState has expired; start the request again without it")]
    Expired,
}

fn now_ms(now: SystemTime) -> u64 {
    now.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl StateKeys {
    /// Seals `state` for the request `binding` digests, valid for `ttl` from `now`.
    pub fn seal(
        &self,
        state: &str,
        binding: &BindingDigest,
        now: SystemTime,
        ttl: Duration,
    ) -> String {
        let expires = now_ms(now).saturating_add(ttl.as_millis() as u64);
        let mut plaintext = expires.to_be_bytes().to_vec();
        plaintext.extend_from_slice(state.as_bytes());
        let mut nonce = XNonce::default();
        fill_random(&mut nonce);
        let sealed = self.ciphers[0]
            .encrypt(
                &nonce,
                Payload {
                    msg: &plaintext,
                    aad: &binding.0,
                },
            )
            .expect("XChaCha20-Poly1305 encryption of an in-memory buffer cannot fail");
        let mut token = nonce.to_vec();
        token.extend_from_slice(&sealed);
        URL_SAFE_NO_PAD.encode(token)
    }

    /// Opens a sealed state for the request `binding` digests, at `now`.
    pub fn open(
        &self,
        token: &str,
        binding: &BindingDigest,
        now: SystemTime,
    ) -> Result<String, StateError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| StateError::Invalid)?;
        if bytes.len() < 24 + 16 + 8 {
            return Err(StateError::Invalid);
        }
        let (nonce, sealed) = bytes.split_at(24);
        let nonce = XNonce::from_slice(nonce);
        let plaintext = self
            .ciphers
            .iter()
            .find_map(|c| {
                c.decrypt(
                    nonce,
                    Payload {
                        msg: sealed,
                        aad: &binding.0,
                    },
                )
                .ok()
            })
            .ok_or(StateError::Invalid)?;
        let (expires, state) = plaintext.split_at(8);
        let expires = u64::from_be_bytes(expires.try_into().map_err(|_| StateError::Invalid)?);
        if now_ms(now) > expires {
            return Err(StateError::Expired);
        }
        String::from_utf8(state.to_vec()).map_err(|_| StateError::Invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn binding(target: &str, arguments: &Map<String, Value>) -> BindingDigest {
        StateBinding {
            method: "tools/call",
            target,
            arguments: Some(arguments),
            principal: None,
        }
        .digest()
    }

    /// The binding hashes the same canonical JSON as the declaration digests
    /// (`typed_mcp_core::digest::canonical_json`), byte for byte, wherever
    /// their number forms agree; it keeps numbers exact where JCS rounds.
    #[test]
    fn the_binding_hashes_the_digests_canonical_json() {
        let arguments = json!({
            "z": "\u{1f600} \"quoted\" \u{1}",
            "\u{fb01}": [1, -2, null, true, {"b": 9007199254740991_i64, "a": "x"}],
            "a": {"nested": {}, "list": []}
        });
        let arguments = arguments.as_object().unwrap();
        let mut expected = Sha256::new();
        for part in ["tools/call", "greet", ""] {
            expected.update((part.len() as u64).to_be_bytes());
            expected.update(part.as_bytes());
        }
        expected.update([0]);
        expected.update(
            typed_mcp_core::digest::canonical_json(&Value::Object(arguments.clone())).as_bytes(),
        );
        let expected: [u8; 32] = expected.finalize().into();
        assert_eq!(binding("greet", arguments), BindingDigest(expected));

        // Where JCS makes numbers one, the binding keeps them apart.
        for (a, b) in [
            (json!({"n": 1}), json!({"n": 1.0})),
            (
                json!({"n": 9_007_199_254_740_993_u64}),
                json!({"n": 9_007_199_254_740_992_u64}),
            ),
        ] {
            let (a, b) = (a.as_object().unwrap(), b.as_object().unwrap());
            assert_ne!(binding("greet", a), binding("greet", b), "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn a_sealed_state_opens_for_its_request_only() {
        let keys = StateKeys::random();
        let args = json!({"b": 1, "a": [1, {"y": 2, "x": 1}]})
            .as_object()
            .unwrap()
            .clone();
        let now = SystemTime::now();
        let token = keys.seal(
            "step-2",
            &binding("greet", &args),
            now,
            Duration::from_secs(60),
        );
        assert!(!token.contains("step-2"), "the state is encrypted");
        // Key order of the arguments does not matter.
        let reordered = json!({"a": [1, {"x": 1, "y": 2}], "b": 1})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            keys.open(&token, &binding("greet", &reordered), now)
                .unwrap(),
            "step-2"
        );
        // Another tool, other arguments, a tampered token, another key: refused.
        assert_eq!(
            keys.open(&token, &binding("other", &args), now),
            Err(StateError::Invalid)
        );
        let other_args = json!({"b": 2}).as_object().unwrap().clone();
        assert_eq!(
            keys.open(&token, &binding("greet", &other_args), now),
            Err(StateError::Invalid)
        );
        let mut tampered = token.clone();
        tampered.push_str("-TAMPERED");
        assert_eq!(
            keys.open(&tampered, &binding("greet", &args), now),
            Err(StateError::Invalid)
        );
        assert_eq!(
            StateKeys::random().open(&token, &binding("greet", &args), now),
            Err(StateError::Invalid)
        );
    }

    #[test]
    fn a_state_is_bound_to_its_principal() {
        let keys = StateKeys::random();
        let args = Map::new();
        let as_user = |principal| {
            StateBinding {
                method: "tools/call",
                target: "t",
                arguments: Some(&args),
                principal,
            }
            .digest()
        };
        let now = SystemTime::now();
        let token = keys.seal("s", &as_user(Some("alice")), now, Duration::from_secs(60));
        assert_eq!(
            keys.open(&token, &as_user(Some("alice")), now).unwrap(),
            "s"
        );
        assert_eq!(
            keys.open(&token, &as_user(Some("bob")), now),
            Err(StateError::Invalid)
        );
        // An anonymous caller's state does not open for an empty principal id.
        let anonymous = keys.seal("s", &as_user(None), now, Duration::from_secs(60));
        assert_eq!(
            keys.open(&anonymous, &as_user(Some("")), now),
            Err(StateError::Invalid)
        );
        assert_eq!(
            keys.open(&token, &as_user(None), now),
            Err(StateError::Invalid)
        );
    }

    #[test]
    fn expiry_and_rotation() {
        let old = [7u8; 32];
        let new = [9u8; 32];
        let args = Map::new();
        let now = SystemTime::now();
        let sealed_with_old = StateKeys::from_secrets(&[old]).seal(
            "s",
            &binding("t", &args),
            now,
            Duration::from_secs(1),
        );
        let rotated = StateKeys::from_secrets(&[new, old]);
        assert_eq!(
            rotated
                .open(&sealed_with_old, &binding("t", &args), now)
                .unwrap(),
            "s"
        );
        assert_eq!(
            rotated.open(
                &sealed_with_old,
                &binding("t", &args),
                now + Duration::from_secs(2)
            ),
            Err(StateError::Expired)
        );
    }
}
