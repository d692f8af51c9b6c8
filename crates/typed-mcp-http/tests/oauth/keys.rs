//! Keys generated for the test, and an authorization server's JWKS endpoint
//! that counts its fetches.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use crate::serve;

/// A signing key and its public JWK.
#[derive(Clone)]
pub struct Key {
    pub alg: Algorithm,
    pub kid: String,
    pub encoding: EncodingKey,
    pub jwk: Jwk,
}

impl Key {
    /// A fresh RSA 2048 key for `alg` (RS* or PS*).
    pub fn rsa(kid: &str, alg: Algorithm) -> Key {
        let pair = aws_lc_rs::rsa::KeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
        let pkcs8 = AsDer::<aws_lc_rs::encoding::Pkcs8V1Der>::as_der(&pair).unwrap();
        let encoding = EncodingKey::from_rsa_der(&pkcs1_of(pkcs8.as_ref()));
        Key::with(kid, alg, encoding)
    }

    /// A fresh P-256 key (ES256).
    pub fn ec(kid: &str) -> Key {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .unwrap();
        Key::with(
            kid,
            Algorithm::ES256,
            EncodingKey::from_ec_der(pkcs8.as_ref()),
        )
    }

    fn with(kid: &str, alg: Algorithm, encoding: EncodingKey) -> Key {
        let mut jwk = Jwk::from_encoding_key(&encoding, alg).unwrap();
        jwk.common.key_id = Some(kid.to_owned());
        Key {
            alg,
            kid: kid.to_owned(),
            encoding,
            jwk,
        }
    }

    /// A token with these claims, signed by this key.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }

    /// The public key as the RSA `n` of its JWK, decoded (what an attacker
    /// would use as an HMAC secret).
    pub fn public_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.jwk).unwrap()
    }
}

/// The RSAPrivateKey (PKCS#1) inside a PKCS#8 document: its last element, an
/// OCTET STRING.
fn pkcs1_of(pkcs8: &[u8]) -> Vec<u8> {
    fn header(der: &[u8]) -> (usize, usize) {
        // (header length, content length)
        let first = der[1];
        if first < 0x80 {
            (2, first as usize)
        } else {
            let n = (first & 0x7f) as usize;
            let len = der[2..2 + n]
                .iter()
                .fold(0usize, |acc, b| acc << 8 | *b as usize);
            (2 + n, len)
        }
    }
    let (h, _) = header(pkcs8);
    let mut rest = &pkcs8[h..];
    loop {
        let (h, len) = header(rest);
        if rest[0] == 0x04 {
            return rest[h..h + len].to_vec();
        }
        rest = &rest[h + len..];
    }
}

/// Base64url without padding, as JOSE writes it.
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// An authorization server's JWKS endpoint at `http://ADDR/jwks`.
#[derive(Clone)]
pub struct Jwks {
    pub addr: SocketAddr,
    keys: Arc<Mutex<Vec<Jwk>>>,
    fetched: Arc<AtomicUsize>,
}

impl Jwks {
    pub async fn start(keys: &[&Key]) -> Jwks {
        let keys = Arc::new(Mutex::new(
            keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>(),
        ));
        let fetched = Arc::new(AtomicUsize::new(0));
        let (k, f) = (keys.clone(), fetched.clone());
        let addr = serve(move |_| {
            axum::Router::new().route(
                "/jwks",
                axum::routing::get(move || {
                    let (k, f) = (k.clone(), f.clone());
                    async move {
                        f.fetch_add(1, Ordering::SeqCst);
                        let set = JwkSet {
                            keys: k.lock().unwrap().clone(),
                        };
                        crate::json_body(json!(set))
                    }
                }),
            )
        })
        .await;
        Jwks {
            addr,
            keys,
            fetched,
        }
    }

    pub fn issuer(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn url(&self) -> String {
        format!("http://{}/jwks", self.addr)
    }

    /// Publishes one more key (a rotation).
    pub fn add(&self, key: &Key) {
        self.keys.lock().unwrap().push(key.jwk.clone());
    }

    pub fn fetches(&self) -> usize {
        self.fetched.load(Ordering::SeqCst)
    }
}
