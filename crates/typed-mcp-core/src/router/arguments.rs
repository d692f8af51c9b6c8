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
    /// The text of a JSON object that surely parses into a map.
    Text(Box<str>),
}

impl ToolArguments {
    /// The arguments as a map.
    pub fn from_map(map: Map<String, Value>) -> Self {
        ToolArguments(Repr::Map(map))
    }

    /// The arguments as text, when `text` is a JSON object's text that
    /// surely parses into a map (nested at most 128 deep, and as below);
    /// `None` otherwise.
    ///
    /// A `RawValue` is JSON text as serde_json *skims* it, which reads
    /// neither escapes' code points nor numbers' values: text with a `\u`
    /// escape (a lone surrogate is refused only when read) or a number that
    /// may not fit an `f64` (an exponent, or a long run of digits) is not
    /// taken, so the reader of the map always gets one. The text is copied
    /// only when it is taken.
    pub fn from_object_text(text: &RawValue) -> Option<Self> {
        let json = text.get();
        (surely_parsing_object_len(json) == Some(json.len()))
            .then(|| ToolArguments::from_checked_object_text(json))
    }

    /// The arguments as text: `text` is exactly an object that
    /// [`surely_parsing_object_len`] measured.
    pub(crate) fn from_checked_object_text(text: &str) -> Self {
        ToolArguments(Repr::Text(text.into()))
    }

    /// The arguments' JSON text, when they are held as text.
    pub fn as_text(&self) -> Option<&str> {
        match &self.0 {
            Repr::Text(text) => Some(text),
            Repr::Map(_) => None,
        }
    }

    /// The arguments as a map (parsed from their text if need be: the same
    /// map the full parse of the message builds).
    pub fn into_map(self) -> Map<String, Value> {
        match self.0 {
            Repr::Map(map) => map,
            Repr::Text(text) => parse_object(&text),
        }
    }

    /// The arguments as a map, borrowed when they are one.
    pub fn to_map(&self) -> Cow<'_, Map<String, Value>> {
        match &self.0 {
            Repr::Map(map) => Cow::Borrowed(map),
            Repr::Text(text) => Cow::Owned(parse_object(text)),
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

/// Above this many digits in one number, it may not fit an `f64`.
const MAX_DIGITS: usize = 300;

/// The length of the JSON object `text` starts with, when it is one the full
/// parse reads into a map for sure: valid JSON (as `serde_json` reads it),
/// with no `\u` escape (a lone surrogate is refused only when read), no
/// exponent and no number of more than [`MAX_DIGITS`] digits (either may
/// not fit an `f64`), nested at most 128 deep. `None` for anything else,
/// which the full parse then reads.
pub(crate) fn surely_parsing_object_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'{') {
        return None;
    }
    // The open containers, the innermost in the low bit (1: an object).
    let mut open: u128 = 0;
    let mut depth = 0;
    let mut at = 0;
    let mut next = Next::Value;
    loop {
        let end = at;
        at = skip_whitespace(bytes, at);
        next = match next {
            Next::Value => match *bytes.get(at)? {
                open_mark @ (b'{' | b'[') => {
                    if depth == 128 {
                        return None;
                    }
                    depth += 1;
                    open = open << 1 | u128::from(open_mark == b'{');
                    at = skip_whitespace(bytes, at + 1);
                    match bytes.get(at) {
                        Some(b'}') if open_mark == b'{' => close(&mut open, &mut depth, &mut at),
                        Some(b']') if open_mark == b'[' => close(&mut open, &mut depth, &mut at),
                        _ if open_mark == b'{' => Next::Key,
                        _ => Next::Value,
                    }
                }
                b'"' => {
                    at = string_end(bytes, at)?;
                    Next::After
                }
                b'-' | b'0'..=b'9' => {
                    at = number_end(bytes, at)?;
                    Next::After
                }
                first => {
                    let literal: &[u8] = match first {
                        b't' => b"true",
                        b'f' => b"false",
                        b'n' => b"null",
                        _ => return None,
                    };
                    if bytes.get(at..at + literal.len())? != literal {
                        return None;
                    }
                    at += literal.len();
                    Next::After
                }
            },
            Next::Key => {
                if bytes.get(at) != Some(&b'"') {
                    return None;
                }
                at = skip_whitespace(bytes, string_end(bytes, at)?);
                if bytes.get(at) != Some(&b':') {
                    return None;
                }
                at += 1;
                Next::Value
            }
            Next::After => {
                if depth == 0 {
                    return Some(end);
                }
                let in_object = open & 1 == 1;
                match *bytes.get(at)? {
                    b',' => {
                        at += 1;
                        if in_object { Next::Key } else { Next::Value }
                    }
                    b'}' if in_object => close(&mut open, &mut depth, &mut at),
                    b']' if !in_object => close(&mut open, &mut depth, &mut at),
                    _ => return None,
                }
            }
        };
    }
}

/// What [`surely_parsing_object_len`] reads next.
enum Next {
    Value,
    Key,
    /// After a value: a comma, or the innermost container's end.
    After,
}

/// Ends the innermost container at `at` (its closing mark).
fn close(open: &mut u128, depth: &mut u32, at: &mut usize) -> Next {
    *open >>= 1;
    *depth -= 1;
    *at += 1;
    Next::After
}

/// The first position from `at` that is not JSON whitespace.
pub(crate) fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The end (past the closing quote) of the string whose opening quote is at
/// `at`; `None` for a control character, a `\u` escape (see
/// [`surely_parsing_object_len`]), an escape JSON does not have, or no
/// closing quote.
fn string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    at += 1;
    loop {
        at += string_run(&bytes[at..]);
        match *bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => match bytes.get(at + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 2,
                _ => return None,
            },
            _ => return None,
        }
    }
}

/// The end of the number at `at` (`-?(0|[1-9][0-9]*)(.[0-9]+)?`, as JSON
/// has it); `None` for an exponent or more than [`MAX_DIGITS`] digits (see
/// [`surely_parsing_object_len`]) and for what is not a number.
fn number_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    let digits_from = |at: usize| {
        bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    if bytes[at] == b'-' {
        at += 1;
    }
    let mut digits = match bytes.get(at)? {
        b'0' => 1,
        b'1'..=b'9' => digits_from(at),
        _ => return None,
    };
    at += digits;
    if bytes.get(at) == Some(&b'.') {
        let fraction = digits_from(at + 1);
        if fraction == 0 {
            return None;
        }
        digits += fraction;
        at += 1 + fraction;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) || digits > MAX_DIGITS {
        return None;
    }
    Some(at)
}

/// How many bytes of `bytes` a string runs on before a quote, a backslash or
/// a control character (all of them when there is none).
pub(crate) fn string_run(bytes: &[u8]) -> usize {
    let mut at = 0;
    // Eight bytes at a time up to the first that needs a look.
    while let Some(chunk) = bytes.get(at..at + 8) {
        let found =
            crate::encode::flags(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes[at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(bytes.len() - at)
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
    fn deep_text_is_left_to_the_map() {
        // Taken up to the measure's depth (past serde_json's own recursion
        // limit of 128 for the object as a whole), read as a map beyond it.
        let deep = |n: usize| format!("{{\"a\":{}1{}}}", "[".repeat(n), "]".repeat(n));
        let args = ToolArguments::from_object_text(&text(&deep(127))).unwrap();
        assert!(args.into_map().contains_key("a"));
        assert!(ToolArguments::from_object_text(&text(&deep(200))).is_none());
    }
}

#[cfg(test)]
mod measure_tests {
    use super::*;

    /// What the measure takes is an object `serde_json` reads into a map,
    /// and exactly its text: the same map as reading the object from the
    /// longer text, which goes on after it.
    #[test]
    fn a_measured_object_reads_as_serde_json_reads_it() {
        let taken = [
            "{}",
            "{ }",
            " {}",
            r#"{"a":7,"b":1}"#,
            "{ \"a\" :\t7 ,\n\"b\"\r: -0.5 }",
            r#"{"a":[],"b":[1,[2,[3]],{}],"c":{"d":{"e":null}}}"#,
            r#"{"t":true,"f":false,"n":null,"s":"x\"y\\z\/\b\f\n\r\t","u":"é日本"}"#,
            r#"{"a":0,"b":-0,"c":10.25,"d":-123456789012345678901234567890}"#,
            r#"{"":"","a":"a","a":"again"}"#,
            r#"{"long":"0123456789abcdefghijklmnopqrstuvwxyz0123456789"}"#,
        ];
        for text in taken {
            let start = text.len() - text.trim_start().len();
            let object = &text[start..];
            let len =
                surely_parsing_object_len(object).unwrap_or_else(|| panic!("not taken: {text}"));
            assert_eq!(len, object.len(), "{text}");
            let map: Map<String, Value> = serde_json::from_str(object).unwrap();
            // Followed by more of a message, the object measures the same.
            let longer = format!("{object} ,\"more\":1}}");
            assert_eq!(surely_parsing_object_len(&longer), Some(len), "{text}");
            assert_eq!(parse_object(&longer[..len]), map, "{text}");
        }
    }

    /// Invalid JSON, and valid JSON that might not read into values, are
    /// left to the full parse.
    #[test]
    fn anything_unsure_is_not_measured() {
        let left = [
            "",
            "[]",
            "null",
            "{",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{,}",
            "{\"a\":[1,]}",
            "{\"a\":[1}",
            "{\"a\":{]}",
            "{\"a\":01}",
            "{\"a\":1.}",
            "{\"a\":.5}",
            "{\"a\":-}",
            "{\"a\":+1}",
            "{\"a\":1e5}",
            "{\"a\":1E-5}",
            "{\"a\":tru}",
            "{\"a\":nul}",
            "{\"a\":True}",
            "{\"a\":\"\\u00e9\"}",
            "{\"a\":\"\\x\"}",
            "{\"a\":\"tab\there\"}",
            "{\"a\":\"open}",
            "{a:1}",
            "{\"a\" 1}",
            "{\"a\":1 \"b\":2}",
        ];
        for text in left {
            assert_eq!(surely_parsing_object_len(text), None, "{text:?}");
        }
        let long = format!("{{\"a\":{}}}", "1".repeat(MAX_DIGITS + 1));
        assert_eq!(surely_parsing_object_len(&long), None);
        let fits = format!("{{\"a\":{}}}", "1".repeat(MAX_DIGITS));
        assert_eq!(surely_parsing_object_len(&fits), Some(fits.len()));
        let deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
        let deepest = format!("{{\"a\":{deep}}}");
        assert_eq!(surely_parsing_object_len(&deepest), None, "129 deep");
        let deep = format!("{}{}", "[".repeat(127), "]".repeat(127));
        let deepest = format!("{{\"a\":{deep}}}");
        assert_eq!(surely_parsing_object_len(&deepest), Some(deepest.len()));
    }

    /// The eight-at-a-time scan stops where a byte-at-a-time scan does, at
    /// every position of a stop in the word and after it.
    #[test]
    fn a_string_runs_to_its_first_stop() {
        for stop in [b'"', b'\\', 0x00, 0x01, 0x1f] {
            for at in 0..20 {
                for before in [b'a', b' ', 0x7f, 0xc3] {
                    let mut bytes = vec![before; 24];
                    bytes[at] = stop;
                    // A stop after the first does not move it.
                    bytes[at + 2] = b'"';
                    assert_eq!(
                        string_run(&bytes),
                        at,
                        "{stop:#x} at {at} after {before:#x}"
                    );
                }
            }
        }
        assert_eq!(string_run(b"no stop in this text at all"), 27);
        assert_eq!(string_run(b""), 0);
        assert_eq!(string_run("é日本\"".as_bytes()), "é日本".len());
    }
}
