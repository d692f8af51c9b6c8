//! Declaration digests: SHA-256 over the RFC 8785 (JCS) canonical JSON of what a
//! model reads about a tool, prompt, resource or resource template.
//!
//! A digest changes when, and only when, the covered fields change — not when
//! keys are reordered, numbers respelled (`1.0` and `1`) or the server rebuilt on
//! another platform. `typed-mcp lock` records them so that a dependency update
//! that silently rewrites a tool's description or schema shows up as a change.
//!
//! | declaration | fields covered (absent ones are omitted) |
//! |---|---|
//! | tool | `name`, `description`, `inputSchema`, `outputSchema` |
//! | prompt | `name`, `description`, `arguments` |
//! | resource | `uri`, `name`, `description`, `mimeType` |
//! | resource template | `uriTemplate`, `name`, `description`, `mimeType` |
//!
//! ```
//! use typed_mcp_core::digest::{Digest, canonical_json};
//! use serde_json::json;
//!
//! assert_eq!(canonical_json(&json!({"b": 1.0, "a": [true, null]})), r#"{"a":[true,null],"b":1}"#);
//! let digest = Digest::of_json(&json!({"b": 1, "a": [true, null]}));
//! assert_eq!(digest, Digest::of_json(&json!({"a": [true, null], "b": 1.0})));
//! assert_eq!(digest.to_string().parse::<Digest>()?, digest);
//! # Ok::<(), typed_mcp_core::digest::ParseDigestError>(())
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use sha2::Digest as _;
use sha2::Sha256;

use crate::wire::{Prompt, Resource, ResourceTemplate, Tool};

/// The RFC 8785 canonical form of a JSON value: object members sorted by the
/// UTF-16 code units of their names, no insignificant whitespace, numbers in
/// ECMAScript's shortest round-trip form, strings with the minimal escapes.
///
/// Numbers are IEEE 754 doubles, as JCS requires: an integer beyond ±2⁵³ is
/// rounded to the nearest double, exactly as a JavaScript client would read it.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

/// Appends the canonical form of `value` (see [`canonical_json`]) to `out`.
pub fn write_canonical(value: &Value, out: &mut String) {
    write_canonical_to(value, Numbers::Jcs, out);
}

/// How [`write_canonical_to`] writes numbers: the one place the two canonical
/// forms of this crate differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbers {
    /// RFC 8785: every number as an IEEE 754 double in ECMAScript's shortest
    /// form, so `1`, `1.0` and `1e0` are one number. For digests a client
    /// must be able to recompute ([`canonical_json`]).
    Jcs,
    /// serde_json's own form: an integer keeps every digit of its 64 bits and
    /// a float keeps its fraction (`1` and `1.0` differ), so two different
    /// `serde_json::Value`s never share a canonical form. For bindings that
    /// must tell any two argument objects apart, such as the `requestState`
    /// binding of the runtime.
    Exact,
}

/// Where canonical JSON goes: a `String`, or straight into a SHA-256 hasher so
/// that hashing a large value makes no intermediate copy.
pub trait CanonicalSink {
    /// Appends `text`.
    fn push_str(&mut self, text: &str);
}

impl CanonicalSink for String {
    fn push_str(&mut self, text: &str) {
        String::push_str(self, text);
    }
}

impl CanonicalSink for Sha256 {
    fn push_str(&mut self, text: &str) {
        self.update(text.as_bytes());
    }
}

/// Writes the canonical form of `value` to `sink`: members sorted by the
/// UTF-16 code units of their names, no insignificant whitespace, strings with
/// the minimal escapes of RFC 8785, and numbers as `numbers` says. With
/// [`Numbers::Jcs`] this is exactly [`canonical_json`].
///
/// ```
/// use typed_mcp_core::digest::{Numbers, canonical_json, write_canonical_to};
/// use serde_json::json;
///
/// let value = json!({"b": [1, "x"], "a": {"d": null, "c": true}});
/// let mut exact = String::new();
/// write_canonical_to(&value, Numbers::Exact, &mut exact);
/// assert_eq!(exact, canonical_json(&value));
/// assert_eq!(exact, r#"{"a":{"c":true,"d":null},"b":[1,"x"]}"#);
///
/// // The forms differ on numbers alone.
/// let mut float = String::new();
/// write_canonical_to(&json!(1.0), Numbers::Exact, &mut float);
/// assert_eq!((float.as_str(), canonical_json(&json!(1.0)).as_str()), ("1.0", "1"));
/// ```
pub fn write_canonical_to(value: &Value, numbers: Numbers, sink: &mut impl CanonicalSink) {
    match value {
        Value::Null => sink.push_str("null"),
        Value::Bool(true) => sink.push_str("true"),
        Value::Bool(false) => sink.push_str("false"),
        Value::Number(n) => match numbers {
            Numbers::Jcs => write_number(n, sink),
            Numbers::Exact => sink.push_str(&n.to_string()),
        },
        Value::String(s) => write_string(s, sink),
        Value::Array(items) => {
            sink.push_str("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    sink.push_str(",");
                }
                write_canonical_to(item, numbers, sink);
            }
            sink.push_str("]");
        }
        Value::Object(map) => write_canonical_object_to(map, numbers, sink),
    }
}

/// [`write_canonical_to`] of an object held as a map, without wrapping it in
/// a [`Value`] first.
pub fn write_canonical_object_to(
    map: &Map<String, Value>,
    numbers: Numbers,
    sink: &mut impl CanonicalSink,
) {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    // UTF-16 order differs from UTF-8 (byte) order only above U+FFFF
    // against U+E000..U+FFFF, but JCS is explicit about it.
    members.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
    sink.push_str("{");
    for (i, (key, value)) in members.into_iter().enumerate() {
        if i > 0 {
            sink.push_str(",");
        }
        write_string(key, sink);
        sink.push_str(":");
        write_canonical_to(value, numbers, sink);
    }
    sink.push_str("}");
}

fn write_number(n: &serde_json::Number, out: &mut impl CanonicalSink) {
    // serde_json holds no NaN or infinity, so every number has a JCS form.
    let f = n.as_f64().unwrap_or(0.0);
    if f == 0.0 {
        // ECMAScript's Number::toString(-0) is "0".
        out.push_str("0");
    } else {
        out.push_str(ryu_js::Buffer::new().format_finite(f));
    }
}

fn write_string(s: &str, out: &mut impl CanonicalSink) {
    out.push_str("\"");
    // Runs of characters that need no escape are pushed whole.
    let mut plain = 0;
    for (i, c) in s.char_indices() {
        let escaped: Cow<'static, str> = match c {
            '"' => "\\\"".into(),
            '\\' => "\\\\".into(),
            '\u{8}' => "\\b".into(),
            '\t' => "\\t".into(),
            '\n' => "\\n".into(),
            '\u{c}' => "\\f".into(),
            '\r' => "\\r".into(),
            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).into(),
            _ => continue,
        };
        out.push_str(&s[plain..i]);
        out.push_str(&escaped);
        plain = i + c.len_utf8();
    }
    out.push_str(&s[plain..]);
    out.push_str("\"");
}

/// A SHA-256 digest, written `sha256:` followed by 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The prefix of the written form.
    pub const PREFIX: &'static str = "sha256:";

    /// The digest of these bytes.
    pub fn of_bytes(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// The digest of the canonical JSON of `value` (see [`canonical_json`]).
    pub fn of_json(value: &Value) -> Digest {
        let mut hasher = Sha256::new();
        write_canonical_to(value, Numbers::Jcs, &mut hasher);
        Digest(hasher.finalize().into())
    }

    /// The 32 raw bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl From<[u8; 32]> for Digest {
    fn from(bytes: [u8; 32]) -> Self {
        Digest(bytes)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Self::PREFIX)?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A string that is not `sha256:` followed by 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid digest {found:?}: expected \"sha256:\" followed by 64 lowercase hex digits")]
#[non_exhaustive]
pub struct ParseDigestError {
    /// The text that was refused.
    pub found: String,
}

impl FromStr for Digest {
    type Err = ParseDigestError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let refuse = || ParseDigestError {
            found: s.to_owned(),
        };
        let hex = s.strip_prefix(Self::PREFIX).ok_or_else(refuse)?;
        let hex = hex.as_bytes();
        if hex.len() != 64 {
            return Err(refuse());
        }
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(hex.chunks_exact(2)) {
            *byte =
                (nibble(pair[0]).ok_or_else(refuse)? << 4) | nibble(pair[1]).ok_or_else(refuse)?;
        }
        Ok(Digest(bytes))
    }
}

/// One lowercase hex digit; upper case is refused so a digest has one spelling.
fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl Serialize for Digest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Digest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A declaration's digest together with the digests of its parts, so a change
/// can be named ("the description of tool `search` changed", "input `limit`").
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeclarationDigest {
    /// The digest of the whole covered object (see the [module docs](self)).
    pub digest: Digest,
    /// The digest of each covered field that is present, by wire name
    /// (`"description"`, `"inputSchema"`, `"mimeType"`, ...), the identifying
    /// field (a tool's or prompt's `name`, a resource's `uri`) excepted.
    pub fields: BTreeMap<&'static str, Digest>,
    /// The digest of each input by name: a tool's `inputSchema.properties`
    /// members, a prompt's `arguments`. Empty for resources and templates.
    pub inputs: BTreeMap<String, Digest>,
}

impl DeclarationDigest {
    fn new(covered: Map<String, Value>, key: &str, inputs: BTreeMap<String, Digest>) -> Self {
        let fields = covered
            .iter()
            .filter(|(name, _)| name.as_str() != key)
            .map(|(name, value)| (field_name(name), Digest::of_json(value)))
            .collect();
        DeclarationDigest {
            digest: Digest::of_json(&Value::Object(covered)),
            fields,
            inputs,
        }
    }
}

/// The `'static` spelling of a covered field's wire name.
fn field_name(name: &str) -> &'static str {
    const FIELDS: &[&str] = &[
        "name",
        "description",
        "inputSchema",
        "outputSchema",
        "arguments",
        "uri",
        "uriTemplate",
        "mimeType",
    ];
    FIELDS
        .iter()
        .find(|f| **f == name)
        .copied()
        .expect("only covered fields are digested")
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        map.insert(key.to_owned(), value);
    }
}

fn text(value: &Option<String>) -> Option<Value> {
    value.clone().map(Value::String)
}

impl Tool {
    /// The object its digest covers: `name`, `description`, `inputSchema`,
    /// `outputSchema` (absent fields omitted).
    pub fn digest_object(&self) -> Map<String, Value> {
        let mut map = Map::new();
        put(&mut map, "name", Some(Value::String(self.name.clone())));
        put(&mut map, "description", text(&self.description));
        put(&mut map, "inputSchema", Some(self.input_schema.clone()));
        put(&mut map, "outputSchema", self.output_schema.clone());
        map
    }

    /// SHA-256 of the canonical JSON of [`digest_object`](Self::digest_object).
    pub fn digest(&self) -> Digest {
        Digest::of_json(&Value::Object(self.digest_object()))
    }

    /// The digest with one per field and one per input property.
    pub fn declaration_digest(&self) -> DeclarationDigest {
        let inputs = self
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(name, schema)| (name.clone(), Digest::of_json(schema)))
                    .collect()
            })
            .unwrap_or_default();
        DeclarationDigest::new(self.digest_object(), "name", inputs)
    }
}

impl Prompt {
    /// The object its digest covers: `name`, `description`, `arguments` (absent
    /// fields omitted; each argument as on the wire).
    pub fn digest_object(&self) -> Map<String, Value> {
        let mut map = Map::new();
        put(&mut map, "name", Some(Value::String(self.name.clone())));
        put(&mut map, "description", text(&self.description));
        put(
            &mut map,
            "arguments",
            self.arguments
                .as_ref()
                .map(|a| serde_json::to_value(a).expect("prompt arguments serialize")),
        );
        map
    }

    /// SHA-256 of the canonical JSON of [`digest_object`](Self::digest_object).
    pub fn digest(&self) -> Digest {
        Digest::of_json(&Value::Object(self.digest_object()))
    }

    /// The digest with one per field and one per argument.
    pub fn declaration_digest(&self) -> DeclarationDigest {
        let inputs = self
            .arguments
            .iter()
            .flatten()
            .map(|arg| {
                let value = serde_json::to_value(arg).expect("a prompt argument serializes");
                (arg.name.clone(), Digest::of_json(&value))
            })
            .collect();
        DeclarationDigest::new(self.digest_object(), "name", inputs)
    }
}

impl Resource {
    /// The object its digest covers: `uri`, `name`, `description`, `mimeType`
    /// (absent fields omitted).
    pub fn digest_object(&self) -> Map<String, Value> {
        let mut map = Map::new();
        put(&mut map, "uri", Some(Value::String(self.uri.clone())));
        put(&mut map, "name", Some(Value::String(self.name.clone())));
        put(&mut map, "description", text(&self.description));
        put(&mut map, "mimeType", text(&self.mime_type));
        map
    }

    /// SHA-256 of the canonical JSON of [`digest_object`](Self::digest_object).
    pub fn digest(&self) -> Digest {
        Digest::of_json(&Value::Object(self.digest_object()))
    }

    /// The digest with one per field.
    pub fn declaration_digest(&self) -> DeclarationDigest {
        DeclarationDigest::new(self.digest_object(), "uri", BTreeMap::new())
    }
}

impl ResourceTemplate {
    /// The object its digest covers: `uriTemplate`, `name`, `description`,
    /// `mimeType` (absent fields omitted).
    pub fn digest_object(&self) -> Map<String, Value> {
        let mut map = Map::new();
        put(
            &mut map,
            "uriTemplate",
            Some(Value::String(self.uri_template.clone())),
        );
        put(&mut map, "name", Some(Value::String(self.name.clone())));
        put(&mut map, "description", text(&self.description));
        put(&mut map, "mimeType", text(&self.mime_type));
        map
    }

    /// SHA-256 of the canonical JSON of [`digest_object`](Self::digest_object).
    pub fn digest(&self) -> Digest {
        Digest::of_json(&Value::Object(self.digest_object()))
    }

    /// The digest with one per field.
    pub fn declaration_digest(&self) -> DeclarationDigest {
        DeclarationDigest::new(self.digest_object(), "uriTemplate", BTreeMap::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canon(text: &str) -> String {
        canonical_json(&serde_json::from_str(text).expect("test input parses"))
    }

    fn exact(value: &Value) -> String {
        let mut out = String::new();
        write_canonical_to(value, Numbers::Exact, &mut out);
        out
    }

    #[test]
    fn the_exact_form_differs_from_jcs_in_numbers_only() {
        // No number, or integers within ±2^53: one canonical form.
        for value in [
            json!({"b": [1, -2, 0], "a": {"\u{fb01}": "é\u{1}\n", "😀": null}}),
            json!([true, false, {}, [], "", 9_007_199_254_740_991_i64]),
        ] {
            assert_eq!(exact(&value), canonical_json(&value), "{value}");
        }
        // Floats keep their fraction and integers every digit.
        for (input, exact_form, jcs_form) in [
            ("1.0", "1.0", "1"),
            ("1e2", "100.0", "100"),
            ("9007199254740993", "9007199254740993", "9007199254740992"),
            (
                "-9223372036854775808",
                "-9223372036854775808",
                "-9223372036854776000",
            ),
        ] {
            let value: Value = serde_json::from_str(input).unwrap();
            assert_eq!(
                (exact(&value).as_str(), canon(input).as_str()),
                (exact_form, jcs_form)
            );
        }
    }

    #[test]
    fn a_hasher_sink_hashes_the_canonical_bytes() {
        let value = json!({"b": 1, "a": ["x", {"d": 2.5, "c": null}]});
        let mut hasher = Sha256::new();
        write_canonical_to(&value, Numbers::Jcs, &mut hasher);
        let streamed: [u8; 32] = hasher.finalize().into();
        assert_eq!(
            Digest(streamed),
            Digest::of_bytes(canonical_json(&value).as_bytes())
        );
        assert_eq!(Digest(streamed), Digest::of_json(&value));
    }

    #[test]
    fn numbers_take_the_ecmascript_form() {
        // (input, expected) pairs derived from ECMAScript Number::toString, the
        // rule RFC 8785 §3.2.2.3 adopts.
        let cases = [
            ("0", "0"),
            ("-0", "0"),
            ("-0.0", "0"),
            ("1", "1"),
            ("-1", "-1"),
            ("1.0", "1"),
            ("1.5", "1.5"),
            ("100", "100"),
            ("1e2", "100"),
            ("0.1", "0.1"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("123456789012345680000", "123456789012345680000"),
            ("1e-6", "0.000001"),
            ("1e-7", "1e-7"),
            ("1.5e-7", "1.5e-7"),
            ("-2.5E+30", "-2.5e+30"),
            ("4.50", "4.5"),
            ("0.000001234", "0.000001234"),
            ("333333333.33333329", "333333333.3333333"),
            ("9007199254740991", "9007199254740991"),
            // Beyond 2^53 an integer becomes the nearest double, as in JavaScript.
            ("9007199254740993", "9007199254740992"),
            ("18446744073709551615", "18446744073709552000"),
            ("-9223372036854775808", "-9223372036854776000"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("5e-324", "5e-324"),
            ("2.220446049250313e-16", "2.220446049250313e-16"),
        ];
        for (input, expected) in cases {
            assert_eq!(canon(input), expected, "number {input}");
        }
    }

    #[test]
    fn strings_take_the_minimal_escapes() {
        let cases = [
            (json!(""), r#""""#),
            (json!("plain"), r#""plain""#),
            (json!("quote \" backslash \\"), r#""quote \" backslash \\""#),
            (json!("\u{8}\t\n\u{c}\r"), r#""\b\t\n\f\r""#),
            (json!("\u{0}\u{1}\u{1f}"), r#""\u0000\u0001\u001f""#),
            // Not escaped: solidus, DEL, non-ASCII, line separators, astral planes.
            (json!("/\u{7f}é€\u{2028}😀"), "\"/\u{7f}é€\u{2028}😀\""),
        ];
        for (input, expected) in cases {
            assert_eq!(canonical_json(&input), expected, "string {input}");
        }
    }

    #[test]
    fn members_are_sorted_by_utf16_code_units() {
        // U+FB01 (one UTF-16 unit, 0xFB01) sorts after U+1F600 (surrogates
        // 0xD83D 0xDE00) in UTF-16 but before it in UTF-8 byte order.
        let value = json!({"\u{fb01}": 1, "😀": 2, "b": 3, "a": 4, "B": 5, "": 6, "aa": 7});
        assert_eq!(
            canonical_json(&value),
            "{\"\":6,\"B\":5,\"a\":4,\"aa\":7,\"b\":3,\"😀\":2,\"\u{fb01}\":1}"
        );
        // RFC 8785 §3.2.3's example of sorting.
        let rfc = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh",
            "1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
        let sorted: Vec<String> = match serde_json::from_str::<Value>(&canon(rfc)) {
            Ok(Value::Object(map)) => map
                .values()
                .map(|v| v.as_str().unwrap_or_default().to_owned())
                .collect(),
            other => panic!("not an object: {other:?}"),
        };
        assert_eq!(
            sorted,
            [
                "Carriage Return",
                "One",
                "Control",
                "Latin Small Letter O With Diaeresis",
                "Euro Sign",
                "Emoji: Grinning Face",
                "Hebrew Letter Dalet With Dagesh"
            ]
        );
    }

    #[test]
    fn structure_has_no_whitespace_and_nests() {
        let text = r#" { "z" : [ 1 , { "y" : null , "x" : true } , [ ] , { } ] , "a" : false } "#;
        assert_eq!(
            canon(text),
            r#"{"a":false,"z":[1,{"x":true,"y":null},[],{}]}"#
        );
    }

    #[test]
    fn rfc_8785_sample() {
        // The sample of RFC 8785 §3.2.2, with its expected output.
        let input = r#"{
            "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
            "literals": [null, true, false]
        }"#;
        let expected = "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
        assert_eq!(canon(input), expected);
    }

    #[test]
    fn digests_print_parse_and_serialize() {
        let digest = Digest::of_bytes(b"abc");
        let text = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(digest.to_string(), text);
        assert_eq!(format!("{digest:?}"), text);
        assert_eq!(text.parse::<Digest>(), Ok(digest));
        assert_eq!(serde_json::to_value(digest).ok(), Some(json!(text)));
        assert_eq!(
            serde_json::from_value::<Digest>(json!(text)).ok(),
            Some(digest)
        );
        for bad in [
            "",
            "sha256:",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD",
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a",
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015adx",
            "sha512:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "sha256:zz7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ] {
            assert!(bad.parse::<Digest>().is_err(), "{bad:?} must be refused");
        }
        assert!(serde_json::from_value::<Digest>(json!("sha256:00")).is_err());
    }

    fn fixed_tool() -> Tool {
        Tool {
            name: "search_tickets".into(),
            title: Some("Search tickets".into()),
            description: Some("Find tickets whose text matches a query.".into()),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to look for."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20,
                              "description": "At most this many tickets."}
                },
                "required": ["query"]
            }),
            output_schema: Some(json!({
                "type": "object",
                "properties": {"tickets": {"type": "array", "items": {"type": "string"}}},
                "required": ["tickets"]
            })),
            annotations: None,
            icons: None,
            meta: None,
        }
    }

    #[test]
    fn a_fixed_tool_has_a_fixed_digest() {
        // Pinned, and checked independently (Python's json.dumps with sorted keys
        // and no spaces equals JCS for this ASCII, integer-only value). A change
        // of the canonical form, the covered fields or the hash changes these and
        // every lock file written before: it must be deliberate.
        let tool = fixed_tool();
        assert_eq!(
            canonical_json(&Value::Object(tool.digest_object())),
            r#"{"description":"Find tickets whose text matches a query.","inputSchema":{"properties":{"limit":{"default":20,"description":"At most this many tickets.","maximum":100,"minimum":1,"type":"integer"},"query":{"description":"Words to look for.","type":"string"}},"required":["query"],"type":"object"},"name":"search_tickets","outputSchema":{"properties":{"tickets":{"items":{"type":"string"},"type":"array"}},"required":["tickets"],"type":"object"}}"#
        );
        assert_eq!(
            tool.digest().to_string(),
            "sha256:35f6b74e6b114312fcfc57b27e1f8cb2b89945eadd163ea10bd2a7577616ddd8"
        );
        let parts = tool.declaration_digest();
        assert_eq!(parts.digest, tool.digest());
        let fields: Vec<String> = parts
            .fields
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        assert_eq!(
            fields,
            [
                "description sha256:12d5664e0fe8898ee906aa75442d302948a78c21962791d92f236ea98b248b54",
                "inputSchema sha256:1ab42977496d3a139e8deafd337a04e676304fcd666066c256c9bcc68c0fe1c7",
                "outputSchema sha256:6d09af04d497de1f5a116f2b5b77750c0283911fe3ba498d5b2b987279889b6f",
            ]
        );
        let inputs: Vec<String> = parts
            .inputs
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        assert_eq!(
            inputs,
            [
                "limit sha256:81aebcb48fa7ca26ab9b77d6091fa138c5fdd14c040bd765cf9e795c6cb9f4d6",
                "query sha256:09a97a34f992b2af02b6b229f197a0ad9eac95d04ef585b573e82c3e4ec47639",
            ]
        );
    }

    #[test]
    fn what_is_not_covered_does_not_change_the_digest() {
        let tool = fixed_tool();
        let mut other = tool.clone();
        other.title = Some("Another title".into());
        other.annotations = Some(Default::default());
        other.meta = Some(Map::new());
        // Same schema, other key order and number spelling.
        other.input_schema = serde_json::from_str(
            r#"{"required":["query"],"properties":{"limit":{"description":"At most this many tickets.",
               "default":20.0,"maximum":1e2,"minimum":1,"type":"integer"},
               "query":{"type":"string","description":"Words to look for."}},"type":"object"}"#,
        )
        .expect("parses");
        assert_eq!(other.digest(), tool.digest());
        assert_eq!(other.declaration_digest(), tool.declaration_digest());
    }

    #[test]
    fn a_changed_field_changes_the_digest_and_only_that_part() {
        let tool = fixed_tool();
        let before = tool.declaration_digest();

        let mut described = tool.clone();
        described.description = Some("Find tickets matching a query.".into());
        let after = described.declaration_digest();
        assert_ne!(after.digest, before.digest);
        let changed: Vec<&str> = before
            .fields
            .iter()
            .filter(|(k, v)| after.fields.get(*k) != Some(v))
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(changed, ["description"]);
        assert_eq!(after.inputs, before.inputs);

        let mut limited = tool.clone();
        limited.input_schema["properties"]["limit"]["maximum"] = json!(50);
        let after = limited.declaration_digest();
        assert_ne!(after.digest, before.digest);
        assert_ne!(after.fields["inputSchema"], before.fields["inputSchema"]);
        assert_eq!(after.fields["description"], before.fields["description"]);
        assert_eq!(after.inputs["query"], before.inputs["query"]);
        assert_ne!(after.inputs["limit"], before.inputs["limit"]);

        let mut untyped = tool;
        untyped.output_schema = None;
        let after = untyped.declaration_digest();
        assert_ne!(after.digest, before.digest);
        assert!(!after.fields.contains_key("outputSchema"));
    }

    #[test]
    fn prompts_resources_and_templates_cover_their_fields() {
        use crate::wire::PromptArgument;
        let prompt = Prompt {
            name: "triage".into(),
            title: Some("Triage".into()),
            description: Some("Triage a ticket.".into()),
            arguments: Some(vec![PromptArgument {
                name: "ticket_id".into(),
                title: None,
                description: Some("The ticket.".into()),
                required: Some(true),
            }]),
            icons: None,
            meta: None,
        };
        assert_eq!(
            canonical_json(&Value::Object(prompt.digest_object())),
            r#"{"arguments":[{"description":"The ticket.","name":"ticket_id","required":true}],"description":"Triage a ticket.","name":"triage"}"#
        );
        let parts = prompt.declaration_digest();
        assert_eq!(
            parts.fields.keys().copied().collect::<Vec<_>>(),
            ["arguments", "description"]
        );
        assert_eq!(parts.inputs.keys().collect::<Vec<_>>(), ["ticket_id"]);

        let resource = Resource {
            uri: "quickstart://readme".into(),
            name: "readme".into(),
            title: None,
            description: Some("What this is.".into()),
            mime_type: Some("text/plain".into()),
            size: Some(12),
            icons: None,
            annotations: None,
            meta: None,
        };
        assert_eq!(
            canonical_json(&Value::Object(resource.digest_object())),
            r#"{"description":"What this is.","mimeType":"text/plain","name":"readme","uri":"quickstart://readme"}"#
        );
        assert_eq!(
            resource
                .declaration_digest()
                .fields
                .keys()
                .copied()
                .collect::<Vec<_>>(),
            ["description", "mimeType", "name"]
        );

        let template = ResourceTemplate {
            uri_template: "ticket://{ticket_id}".into(),
            name: "ticket".into(),
            title: None,
            description: Some("A ticket.".into()),
            mime_type: None,
            icons: None,
            annotations: None,
            meta: None,
        };
        assert_eq!(
            canonical_json(&Value::Object(template.digest_object())),
            r#"{"description":"A ticket.","name":"ticket","uriTemplate":"ticket://{ticket_id}"}"#
        );
        assert_eq!(
            template
                .declaration_digest()
                .fields
                .keys()
                .copied()
                .collect::<Vec<_>>(),
            ["description", "name"]
        );
        assert_ne!(template.digest(), resource.digest());
    }

    #[test]
    fn the_catalog_holds_each_declarations_digest() {
        use crate::catalog::{Catalog, CatalogOptions, ToolEntry};
        use crate::wire::Implementation;
        let mut second = fixed_tool();
        second.name = "other".into();
        let catalog = Catalog::build(
            CatalogOptions::new(Implementation::new("demo", "1.0.0")),
            vec![ToolEntry::new(fixed_tool()), ToolEntry::new(second.clone())],
            vec![],
            vec![],
            vec![],
        )
        .expect("a valid catalog");
        assert_eq!(catalog.tool_digest(0), &fixed_tool().declaration_digest());
        assert_eq!(catalog.tool_digest(1).digest, second.digest());
        assert_ne!(catalog.tool_digest(0).digest, catalog.tool_digest(1).digest);
    }
}
