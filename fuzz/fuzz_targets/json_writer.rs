//! The core's JSON writer (`encode::to_vec`, behind every result and
//! notification) against serde_json, byte for byte.
//!
//! Properties: for any JSON value the input parses to, and for the input
//! itself as a string (invalid UTF-8 replaced), as a map key and inside a
//! struct, the writer's bytes equal serde_json's; and they parse back to the
//! same value. A value held as encoded text (`StructuredContent::encode`, and
//! serde_json's own `RawValue` of the input) is written as serde_json writes
//! it, and reads back as the value it was encoded from.

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use typed_mcp_core::encode;
use typed_mcp_core::wire::StructuredContent;

#[derive(Serialize)]
struct Shaped<'a> {
    text: &'a str,
    list: [&'a str; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    absent: Option<u8>,
    number: f64,
    map: BTreeMap<&'a str, &'a str>,
}

fn same<T: Serialize + ?Sized>(value: &T) {
    let ours = encode::to_vec(value).expect("the writer encodes what serde_json encodes");
    let theirs = serde_json::to_vec(value).expect("serde_json encodes the value");
    assert_eq!(
        ours,
        theirs,
        "the writer and serde_json differ:\n ours:   {}\n theirs: {}",
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&theirs)
    );
}

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        same(&value);
        let encoded = StructuredContent::encode(&value).expect("a JSON value encodes");
        same(&encoded);
        same(&[&encoded, &encoded]);
        assert_eq!(encoded, value, "encoded content reads back as its value");
    }
    if let Ok(Ok(raw)) =
        std::str::from_utf8(data).map(|text| RawValue::from_string(text.to_owned()))
    {
        same(&raw);
    }
    let text = String::from_utf8_lossy(data);
    same(text.as_ref());
    // Every split point of the text is a word boundary of some offset.
    let mid = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(0, |(i, _)| i);
    let (left, right) = text.split_at(mid);
    let mut map = BTreeMap::new();
    map.insert(left, right);
    map.insert(right, left);
    same(&Shaped {
        text: &text,
        list: [left, right],
        absent: None,
        number: data.len() as f64 / 3.0,
        map,
    });
});
