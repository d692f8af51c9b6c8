//! Canonical JSON (RFC 8785) and digests of arbitrary JSON.
//!
//! Properties: the canonical form is a fixed point (parse, canonicalize, parse,
//! canonicalize gives the same bytes); and a value with its object members in
//! reverse order and its integers respelled as floats (an equal JSON value)
//! has the same canonical form and digest.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Number, Value};
use typed_mcp_core::digest::{Digest, canonical_json};

/// An equal value spelled differently: members reversed, exact integers as floats.
fn respell(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let members: Map<String, Value> = map
                .iter()
                .rev()
                .map(|(k, v)| (k.clone(), respell(v)))
                .collect();
            Value::Object(members)
        }
        Value::Array(items) => Value::Array(items.iter().map(respell).collect()),
        Value::Number(n) if !n.is_f64() => match n.as_f64().and_then(Number::from_f64) {
            Some(f) => Value::Number(f),
            None => value.clone(),
        },
        other => other.clone(),
    }
}

/// The member name serde_json (with its `raw_value` feature, which the
/// workspace enables) reserves: an object whose first member has this name is
/// read as the raw value it holds, so the canonical form of an object that
/// merely contains it (sorted first) cannot be read back as a `Value`. That is
/// serde_json's convention, not canonicalization; canonical forms are only
/// hashed, never read back, so values with the name are left out here.
const SERDE_JSON_RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

fn names_the_raw_value_key(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k == SERDE_JSON_RAW_VALUE_KEY || names_the_raw_value_key(v)),
        Value::Array(items) => items.iter().any(names_the_raw_value_key),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if names_the_raw_value_key(&value) {
        return;
    }
    let canonical = canonical_json(&value);
    let reparsed: Value = serde_json::from_str(&canonical)
        .unwrap_or_else(|e| panic!("the canonical form {canonical:?} is not JSON: {e}"));
    assert_eq!(
        canonical_json(&reparsed),
        canonical,
        "canonical form is a fixed point"
    );
    assert_eq!(Digest::of_json(&reparsed), Digest::of_json(&value));

    let respelled = respell(&value);
    assert_eq!(
        canonical_json(&respelled),
        canonical,
        "equal values, one canonical form"
    );
    assert_eq!(Digest::of_json(&respelled), Digest::of_json(&value));
    let digest = Digest::of_json(&value);
    assert_eq!(digest.to_string().parse::<Digest>().ok(), Some(digest));
});
