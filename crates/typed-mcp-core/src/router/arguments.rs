//! A `tools/call`'s arguments object, kept as the text it arrived as when
//! the router's plain-call path read it.
//!
//! Most calls' arguments are validated and decoded once, by a typed tool
//! that can read them straight from their text; building a
//! `Map<String, Value>` first (a hashed, ordered map and an allocation per
//! member and string) would be most of a small call's decoding cost. The
//! map is built only for a reader that needs it ([`ToolArguments::into_map`],
//! [`ToolArguments::to_map`]), and is then the same map the full parse of
//! the message would have built.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The arguments of a `tools/call`: a JSON object, as a map or as its text.
#[derive(Clone)]
pub struct ToolArguments(Repr);

#[derive(Clone)]
enum Repr {
    Map(Map<String, Value>),
    /// The text of a JSON object, from a message that parsed.
    Text(Box<RawValue>),
}

impl ToolArguments {
    /// The arguments as a map.
    pub fn from_map(map: Map<String, Value>) -> Self {
        ToolArguments(Repr::Map(map))
    }

    /// The arguments as text, when `text` is a JSON object's text (its first
    /// character is `{`) that surely parses into a map; `None` otherwise.
    ///
    /// A `RawValue` is JSON text as serde_json *skims* it, which reads
    /// neither escapes' code points nor numbers' values: text with a `\u`
    /// escape (a lone surrogate is refused only when read) or a number that
    /// may not fit an `f64` (an exponent, or a long run of digits) is not
    /// taken, so the reader of the map always gets one. The text is copied
    /// only when it is taken.
    pub fn from_object_text(text: &RawValue) -> Option<Self> {
        let json = text.get();
        (json.starts_with('{') && !may_not_parse(json))
            .then(|| ToolArguments(Repr::Text(text.to_owned())))
    }

    /// The arguments' JSON text, when they are held as text.
    pub fn as_text(&self) -> Option<&str> {
        match &self.0 {
            Repr::Text(text) => Some(text.get()),
            Repr::Map(_) => None,
        }
    }

    /// The arguments as a map (parsed from their text if need be: the same
    /// map the full parse of the message builds).
    pub fn into_map(self) -> Map<String, Value> {
        match self.0 {
            Repr::Map(map) => map,
            Repr::Text(text) => parse_object(text.get()),
        }
    }

    /// The arguments as a map, borrowed when they are one.
    pub fn to_map(&self) -> Cow<'_, Map<String, Value>> {
        match &self.0 {
            Repr::Map(map) => Cow::Borrowed(map),
            Repr::Text(text) => Cow::Owned(parse_object(text.get())),
        }
    }
}

impl Default for ToolArguments {
    /// No arguments: `{}`.
    fn default() -> Self {
        ToolArguments::from_map(Map::new())
    }
}

impl From<Map<String, Value>> for ToolArguments {
    fn from(map: Map<String, Value>) -> Self {
        ToolArguments::from_map(map)
    }
}

impl fmt::Debug for ToolArguments {
    /// As the map, whichever way the arguments are held: a call read by the
    /// plain-call path prints as the full parse's does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_map().fmt(f)
    }
}

/// Whether reading skimmed JSON `text` into values could fail (see
/// [`ToolArguments::from_object_text`]); `true` for anything unsure.
fn may_not_parse(text: &str) -> bool {
    /// Above this many digits in one number, it may not fit an `f64`.
    const MAX_DIGITS: usize = 300;
    let bytes = text.as_bytes();
    // Short text with no backslash and no `e` anywhere (most arguments) is
    // told by one pass the compiler vectorizes, instead of the walk below.
    if bytes.len() <= MAX_DIGITS
        && !bytes
            .iter()
            .fold(false, |seen, &b| seen | (b == b'\\') | (b | 0x20 == b'e'))
    {
        return false;
    }
    let mut at = 0;
    let mut digits = 0;
    while let Some(&byte) = bytes.get(at) {
        at += 1;
        if byte.is_ascii_digit() {
            digits += 1;
            if digits > MAX_DIGITS {
                return true;
            }
            continue;
        }
        match byte {
            b'"' => {
                // The string's body, escape by escape.
                loop {
                    let Some(found) = quote_or_backslash(&bytes[at..]) else {
                        return true;
                    };
                    at += found + 1;
                    if bytes[at - 1] == b'"' {
                        break;
                    }
                    if bytes.get(at) == Some(&b'u') {
                        return true;
                    }
                    at += 1;
                }
            }
            // An exponent follows a digit (`true` and `false` hold an `e`
            // after a letter).
            b'e' | b'E' if digits > 0 => return true,
            // A fraction continues its number's run of digits.
            b'.' => continue,
            _ => {}
        }
        digits = 0;
    }
    false
}

/// The position of the first `"` or `\\` in `bytes`: a plain loop over a
/// short string (most keys and values), where the vectorized search's setup
/// costs more than it saves.
fn quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    const SHORT: usize = 16;
    for (at, &byte) in bytes.iter().take(SHORT).enumerate() {
        if byte == b'"' || byte == b'\\' {
            return Some(at);
        }
    }
    if bytes.len() <= SHORT {
        return None;
    }
    memchr::memchr2(b'"', b'\\', &bytes[SHORT..]).map(|found| SHORT + found)
}

/// The map of an object's text. The text is a member of a message that
/// parsed (within the router's depth limit, which is why the parser's own
/// recursion limit is off), so it parses again, to the same map.
fn parse_object(text: &str) -> Map<String, Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    Map::deserialize(&mut de).expect("an object's text that parsed once parses again")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn text_is_read_as_the_map_a_full_parse_builds() {
        let raw = r#"{"b": 1, "a": [1.5, "x"], "b": 2}"#;
        let args = ToolArguments::from_object_text(&text(raw)).unwrap();
        assert_eq!(args.as_text(), Some(raw));
        let full: Map<String, Value> = serde_json::from_str(raw).unwrap();
        assert_eq!(*args.to_map(), full);
        assert_eq!(args.clone().into_map(), full);
        // Order and last-wins duplicates are the full parse's.
        assert_eq!(
            args.into_map().keys().collect::<Vec<_>>(),
            full.keys().collect::<Vec<_>>()
        );
    }

    #[test]
    fn text_that_might_not_read_into_values_is_not_taken() {
        for raw in [
            r#"{"x":1e400}"#,
            r#"{"x":1.5E3}"#,
            r#"{"x":"\ud800"}"#,
            r#"{"\u0061":1}"#,
            r#"{"x":"a\"b","y":"\u0041"}"#,
        ] {
            assert!(
                ToolArguments::from_object_text(&text(raw)).is_none(),
                "{raw}"
            );
        }
        let long = format!(r#"{{"x":{}}}"#, "9".repeat(400));
        assert!(ToolArguments::from_object_text(&text(&long)).is_none());
        // Letters, escapes other than `\u`, fractions and booleans are fine.
        for raw in [
            r#"{"e":"1e5 \" \\ \n","n":-12.5,"t":true,"f":false,"z":null}"#,
            r#"{"x":[0.25,{"E":"E"}]}"#,
        ] {
            let args = ToolArguments::from_object_text(&text(raw)).unwrap();
            let full: Map<String, Value> = serde_json::from_str(raw).unwrap();
            assert_eq!(args.into_map(), full, "{raw}");
        }
    }

    #[test]
    fn only_an_object_is_taken_as_text() {
        for raw in ["[1]", "\"text\"", "1", "null", "true"] {
            assert!(
                ToolArguments::from_object_text(&text(raw)).is_none(),
                "{raw}"
            );
        }
    }

    #[test]
    fn a_map_and_its_text_print_and_compare_alike() {
        let map = json!({"text": "hi", "n": 3}).as_object().unwrap().clone();
        let from_text = ToolArguments::from_object_text(&text(r#"{"text":"hi","n":3}"#)).unwrap();
        let from_map = ToolArguments::from_map(map);
        assert_eq!(format!("{from_text:?}"), format!("{from_map:?}"));
        assert_eq!(from_text.to_map(), from_map.to_map());
        assert_eq!(from_map.as_text(), None);
        assert!(ToolArguments::default().into_map().is_empty());
    }

    #[test]
    fn deep_text_parses_past_serde_json_own_recursion_limit() {
        let raw = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        let args = ToolArguments::from_object_text(&text(&raw)).unwrap();
        assert!(args.into_map().contains_key("a"));
    }
}
