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
//! a shared keyring**, or a retry that reaches another replica is refused.
//!
//! # A keyring for replicas
//!
//! [`StateKeys::from_env`] reads the keyring from configuration: the variable
//! [`STATE_KEYS_ENV`] holding the keys, or [`STATE_KEYS_FILE_ENV`] naming a
//! file that holds them (one key per line, `#` comments; keep it readable by
//! the server alone). Each key is 32 bytes, written as 64 hex digits or as
//! base64 (`openssl rand -hex 32` makes one); in the variable, keys are
//! separated by commas or spaces. **The first key seals, every key opens.**
//! Give every replica the same keyring.
//!
//! Rotation without downtime, in three rollouts:
//!
//! 1. add the new key *second* (`OLD,NEW`) on every replica: all open both,
//!    all still seal with the old one;
//! 2. once every replica runs step 1, put the new key first (`NEW,OLD`):
//!    states sealed with either key open everywhere;
//! 3. after the state lifetime (`request_state_ttl`, 10 minutes by default)
//!    has passed, drop the old key (`NEW`).
//!
//! Skipping step 1 works too, but during that rollout a state sealed by an
//! updated replica is refused by one not yet updated.
//!
//! A replica started without a keyring seals with a random key that no other
//! replica can open. [`StateKeys::is_random`] and
//! [`StateKeys::fingerprints`] let a deployment compare replicas without
//! revealing a key (the `typed-mcp-redis` crate does, and warns).

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

/// The environment variable [`StateKeys::from_env`] reads the keys from.
pub const STATE_KEYS_ENV: &str = "TYPED_MCP_STATE_KEYS";

/// The environment variable [`StateKeys::from_env`] reads the path of a key
/// file from (used when [`STATE_KEYS_ENV`] is not set).
pub const STATE_KEYS_FILE_ENV: &str = "TYPED_MCP_STATE_KEYS_FILE";

/// The keys that seal and open `requestState`.
#[derive(Clone)]
pub struct StateKeys {
    ciphers: Vec<XChaCha20Poly1305>,
    /// One per key, in order (see [`StateKeys::fingerprints`]).
    fingerprints: Vec<KeyFingerprint>,
    /// Made by [`StateKeys::random`]: no other process has this key.
    random: bool,
}

/// A short one-way digest of one key: equal fingerprints mean equal keys,
/// and a fingerprint tells nothing about the key itself. Printed as 16 hex
/// digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyFingerprint([u8; 8]);

impl KeyFingerprint {
    fn of(secret: &[u8; 32]) -> Self {
        let mut hasher = Sha256::new();
        // Domain-separated, so the fingerprint is no hash a key is used as elsewhere.
        hasher.update(b"typed-mcp requestState key fingerprint v1\0");
        hasher.update(secret);
        let digest: [u8; 32] = hasher.finalize().into();
        let mut short = [0u8; 8];
        short.copy_from_slice(&digest[..8]);
        KeyFingerprint(short)
    }
}

impl std::fmt::Display for KeyFingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::fmt::Debug for KeyFingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyFingerprint({self})")
    }
}

impl std::str::FromStr for KeyFingerprint {
    type Err = KeyringError;

    /// Reads the 16 hex digits [`Display`](std::fmt::Display) writes.
    fn from_str(text: &str) -> Result<Self, KeyringError> {
        let bytes = decode_hex(text)
            .filter(|b| b.len() == 8)
            .ok_or(KeyringError::Fingerprint { found: text.len() })?;
        let mut short = [0u8; 8];
        short.copy_from_slice(&bytes);
        Ok(KeyFingerprint(short))
    }
}

/// Why a keyring could not be loaded. Never shows key material: a bad key
/// is named by its position and its length.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyringError {
    /// The keyring holds no key.
    #[error(
        "the requestState keyring in {source_name} holds no key: expected at least one key of 32 bytes (64 hex digits or base64)"
    )]
    Empty {
        /// Where the keyring was read from.
        source_name: String,
    },
    /// One key is neither 64 hex digits nor base64 of 32 bytes.
    #[error(
        "key {position} of the requestState keyring in {source_name} is not a key of 32 bytes: expected 64 hex digits or base64 of 32 bytes, found {found} characters"
    )]
    BadKey {
        /// Where the keyring was read from.
        source_name: String,
        /// The key's position, from 1.
        position: usize,
        /// How many characters it has.
        found: usize,
    },
    /// The same key twice.
    #[error(
        "key {position} of the requestState keyring in {source_name} repeats an earlier key: expected each key once"
    )]
    Repeated {
        /// Where the keyring was read from.
        source_name: String,
        /// The repeated key's position, from 1.
        position: usize,
    },
    /// Both variables are set.
    #[error("both {STATE_KEYS_ENV} and {STATE_KEYS_FILE_ENV} are set: expected one of them")]
    Ambiguous,
    /// The key file could not be read.
    #[error("the requestState key file {path} could not be read: {error}")]
    File {
        /// The file's path.
        path: String,
        /// What reading it said.
        error: std::io::Error,
    },
    /// A fingerprint is not 16 hex digits.
    #[error("a key fingerprint is 16 hex digits, found {found} characters")]
    Fingerprint {
        /// How many characters it has.
        found: usize,
    },
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// One key's text as 32 bytes: 64 hex digits, or base64 (standard or
/// URL-safe alphabet, padded or not).
fn decode_key(text: &str) -> Option<[u8; 32]> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE};
    let bytes = if text.len() == 64 {
        decode_hex(text)
    } else {
        None
    }
    .or_else(|| {
        [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD]
            .iter()
            .find_map(|engine| engine.decode(text).ok())
    })?;
    let mut key = [0u8; 32];
    if bytes.len() != 32 {
        let mut bytes = bytes;
        bytes.zeroize();
        return None;
    }
    key.copy_from_slice(&bytes);
    let mut bytes = bytes;
    bytes.zeroize();
    Some(key)
}

impl std::fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.debug_struct("StateKeys")
            .field("keys", &self.ciphers.len())
            .field("random", &self.random)
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
        let fingerprint = KeyFingerprint::of(&secret);
        secret.zeroize();
        StateKeys {
            ciphers: vec![cipher],
            fingerprints: vec![fingerprint],
            random: true,
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
            fingerprints: secrets.iter().map(KeyFingerprint::of).collect(),
            random: false,
        }
    }

    /// Parses a keyring: keys separated by commas, spaces or newlines, each
    /// 64 hex digits or base64 of 32 bytes; a line starting with `#` is a
    /// comment. The first key seals, all open. `source_name` names where the
    /// text came from, in errors.
    ///
    /// # Errors
    ///
    /// [`KeyringError`] when there is no key, a key is not 32 bytes, or a
    /// key repeats; the error names the key by position, never by value.
    ///
    /// ```
    /// use typed_mcp::state::StateKeys;
    /// let keys = StateKeys::parse(
    ///     "# new key first\n\
    ///      0101010101010101010101010101010101010101010101010101010101010101\n\
    ///      AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=\n",
    ///     "keys.txt",
    /// )?;
    /// assert_eq!(keys.len(), 2);
    /// assert!(!keys.is_random());
    /// assert!(StateKeys::parse("not-a-key", "keys.txt").is_err());
    /// # Ok::<(), typed_mcp::state::KeyringError>(())
    /// ```
    pub fn parse(text: &str, source_name: &str) -> Result<Self, KeyringError> {
        let mut secrets: Vec<[u8; 32]> = Vec::new();
        let words = text
            .lines()
            .filter(|line| !line.trim_start().starts_with('#'))
            .flat_map(|line| line.split(|c: char| c == ',' || c.is_whitespace()))
            .filter(|word| !word.is_empty());
        for (index, word) in words.enumerate() {
            let position = index + 1;
            let Some(secret) = decode_key(word) else {
                secrets.iter_mut().for_each(|s| s.zeroize());
                return Err(KeyringError::BadKey {
                    source_name: source_name.to_owned(),
                    position,
                    found: word.chars().count(),
                });
            };
            if secrets.contains(&secret) {
                secrets.iter_mut().for_each(|s| s.zeroize());
                return Err(KeyringError::Repeated {
                    source_name: source_name.to_owned(),
                    position,
                });
            }
            secrets.push(secret);
        }
        if secrets.is_empty() {
            return Err(KeyringError::Empty {
                source_name: source_name.to_owned(),
            });
        }
        let keys = StateKeys::from_secrets(&secrets);
        secrets.iter_mut().for_each(|s| s.zeroize());
        Ok(keys)
    }

    /// Reads a keyring file (see [`parse`](Self::parse)).
    ///
    /// # Errors
    ///
    /// [`KeyringError::File`] when it cannot be read, else as
    /// [`parse`](Self::parse).
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self, KeyringError> {
        let path = path.as_ref();
        let mut text = std::fs::read_to_string(path).map_err(|error| KeyringError::File {
            path: path.display().to_string(),
            error,
        })?;
        let keys = StateKeys::parse(&text, &path.display().to_string());
        text.zeroize();
        keys
    }

    /// The keyring from the environment: the keys in [`STATE_KEYS_ENV`], or
    /// in the file [`STATE_KEYS_FILE_ENV`] names; `None` when neither is set
    /// (the caller then keeps the per-process random key, fine for one
    /// process only).
    ///
    /// # Errors
    ///
    /// [`KeyringError`] when both are set, or the keyring does not parse.
    pub fn from_env() -> Result<Option<Self>, KeyringError> {
        let inline = std::env::var(STATE_KEYS_ENV).ok();
        let file = std::env::var_os(STATE_KEYS_FILE_ENV);
        match (inline, file) {
            (Some(_), Some(_)) => Err(KeyringError::Ambiguous),
            (Some(mut text), None) => {
                let keys = StateKeys::parse(&text, STATE_KEYS_ENV);
                text.zeroize();
                keys.map(Some)
            }
            (None, Some(path)) => StateKeys::from_file(path).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// How many keys open states (the first also seals).
    pub fn len(&self) -> usize {
        self.ciphers.len()
    }

    /// Never true: a keyring holds at least one key.
    pub fn is_empty(&self) -> bool {
        self.ciphers.is_empty()
    }

    /// True for the per-process random key of [`StateKeys::random`] (the
    /// default): no other replica can open what it seals.
    pub fn is_random(&self) -> bool {
        self.random
    }

    /// The fingerprint of each key, in order: the first is the sealing key's.
    pub fn fingerprints(&self) -> &[KeyFingerprint] {
        &self.fingerprints
    }

    /// True when a state sealed by a replica whose sealing key has
    /// `fingerprint` opens here.
    pub fn opens(&self, fingerprint: &KeyFingerprint) -> bool {
        self.fingerprints.contains(fingerprint)
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

    const HEX_A: &str = "0101010101010101010101010101010101010101010101010101010101010101";
    const HEX_B: &str = "0202020202020202020202020202020202020202020202020202020202020202";

    #[test]
    fn a_parsed_keyring_seals_with_its_first_key_and_opens_with_all() {
        let args = Map::new();
        let now = SystemTime::now();
        let ttl = Duration::from_secs(60);
        // Hex, base64 with and without padding, commas and spaces.
        let b64_b = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";
        let rotated = StateKeys::parse(&format!("{HEX_B}, {HEX_A}"), "test").unwrap();
        let same =
            StateKeys::parse(&format!("{} {HEX_A}", b64_b.trim_end_matches('=')), "test").unwrap();
        let old_only = StateKeys::parse(HEX_A, "test").unwrap();
        let new_only = StateKeys::parse(b64_b, "test").unwrap();
        assert_eq!(rotated.fingerprints(), same.fingerprints());
        assert_eq!(rotated.len(), 2);
        let sealed = rotated.seal("s", &binding("t", &args), now, ttl);
        // Sealed with the first key: the new-only keyring opens it, the old-only one does not.
        assert_eq!(
            new_only.open(&sealed, &binding("t", &args), now).unwrap(),
            "s"
        );
        assert_eq!(
            old_only.open(&sealed, &binding("t", &args), now),
            Err(StateError::Invalid)
        );
        // What the old key sealed still opens on the rotated keyring.
        let old_sealed = old_only.seal("o", &binding("t", &args), now, ttl);
        assert_eq!(
            rotated
                .open(&old_sealed, &binding("t", &args), now)
                .unwrap(),
            "o"
        );
        assert!(rotated.opens(&old_only.fingerprints()[0]));
        assert!(!old_only.opens(&new_only.fingerprints()[0]));
        assert!(!rotated.is_random());
        assert!(StateKeys::random().is_random());
    }

    #[test]
    fn a_bad_keyring_is_refused_without_echoing_a_key() {
        let secret_looking = "c2VjcmV0LXRoYXQtaXMtdG9vLXNob3J0";
        for (text, expected) in [
            ("", "holds no key"),
            ("# only a comment\n", "holds no key"),
            (&format!("{HEX_A},{secret_looking}") as &str, "key 2 of"),
            (
                &format!("{HEX_A} {HEX_A}"),
                "key 2 of the requestState keyring in test repeats",
            ),
            (&HEX_A[..63], "key 1 of"),
        ] {
            let error = StateKeys::parse(text, "test").unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
            assert!(
                !error.contains(secret_looking) && !error.contains(HEX_A),
                "{error}"
            );
        }
        let error = StateKeys::parse(secret_looking, "test")
            .unwrap_err()
            .to_string();
        assert!(error.contains("found 32 characters"), "{error}");
    }

    #[test]
    fn a_keyring_file_is_read_and_a_missing_one_is_named() {
        let dir = std::env::temp_dir().join(format!("typed-mcp-keyring-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys");
        std::fs::write(
            &path,
            format!("# rotated on 2026-12-01\n{HEX_B}\n\n{HEX_A}\n"),
        )
        .unwrap();
        let keys = StateKeys::from_file(&path).unwrap();
        assert_eq!(keys.len(), 2);
        assert_eq!(
            keys.fingerprints(),
            StateKeys::parse(&format!("{HEX_B},{HEX_A}"), "x")
                .unwrap()
                .fingerprints()
        );
        let missing = StateKeys::from_file(dir.join("absent"))
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("absent") && missing.contains("could not be read"),
            "{missing}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fingerprints_print_and_parse_and_differ_per_key() {
        let a = StateKeys::parse(HEX_A, "t").unwrap().fingerprints()[0];
        let b = StateKeys::parse(HEX_B, "t").unwrap().fingerprints()[0];
        assert_ne!(a, b);
        let printed = a.to_string();
        assert_eq!(printed.len(), 16);
        assert!(!HEX_A.contains(&printed));
        assert_eq!(printed.parse::<KeyFingerprint>().unwrap(), a);
        assert!("xyz".parse::<KeyFingerprint>().is_err());
    }
}
