//! Request ids and progress tokens: a string or an integer, echoed exactly.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON-RPC request id: a string or an integer, never `null`.
///
/// Integers are kept as their decimal text, so an id wider than 64 bits is echoed
/// digit for digit rather than rounded through a float. Either text is shared:
/// a call's id is cloned several times on its way through the pipeline, and a
/// clone costs no allocation.
#[derive(Clone)]
pub enum RequestId {
    /// An integer id, held as its canonical JSON text (e.g. `"1712345678901"`).
    Integer(Arc<RawValue>),
    /// A string id.
    String(Arc<str>),
}

/// A progress token has the same shape and echo rule as a request id.
pub type ProgressToken = RequestId;

impl RequestId {
    /// Reads an id from the raw JSON text of the `id` member, or `None` when it is
    /// not a string or an integer (`null`, a float, an object...).
    pub fn from_raw(raw: &RawValue) -> Option<RequestId> {
        let text = raw.get();
        match text.as_bytes().first()? {
            b'"' => serde_json::from_str::<String>(text)
                .ok()
                .map(RequestId::from),
            // Already JSON: kept as it is, not parsed again.
            b'-' | b'0'..=b'9' if is_canonical_integer(text) => {
                Some(RequestId::Integer(raw.to_owned().into()))
            }
            _ => None,
        }
    }

    /// Reads an id from a parsed JSON value, or `None` when it is not a string or
    /// an integer.
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(s) => Some(RequestId::from(s.as_str())),
            Value::Number(n) if n.is_i64() || n.is_u64() => integer_from_text(&n.to_string()),
            _ => None,
        }
    }

    /// An integer id.
    pub fn integer(n: i64) -> RequestId {
        integer_from_text(&n.to_string()).expect("an i64 prints as a JSON integer")
    }

    /// The id as a JSON value (an integer wider than 64 bits becomes a float).
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::String(s) => Value::String(s.to_string()),
            RequestId::Integer(raw) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
        }
    }
}

/// The most digits an integer id may have. Integer ids are echoed as written,
/// however wide; past 308 digits one is beyond the range of an IEEE double,
/// which most JSON parsers cannot read at all (RFC 7493), so the answer to it
/// would be unreadable: such an id is refused like a float. Found by the
/// `router` fuzz target.
pub(crate) const MAX_INTEGER_ID_DIGITS: usize = 308;

fn integer_from_text(text: &str) -> Option<RequestId> {
    if !is_canonical_integer(text) {
        return None;
    }
    RawValue::from_string(text.to_owned())
        .ok()
        .map(|raw| RequestId::Integer(raw.into()))
}

/// An integer as JSON writes it: an optional `-`, then `0` or digits not
/// starting with `0`, at most [`MAX_INTEGER_ID_DIGITS`] of them.
fn is_canonical_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.len() <= MAX_INTEGER_ID_DIGITS
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
}

impl PartialEq for RequestId {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (RequestId::Integer(a), RequestId::Integer(b)) => a.get() == b.get(),
            (RequestId::String(a), RequestId::String(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for RequestId {}

impl std::hash::Hash for RequestId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            RequestId::Integer(raw) => (0u8, raw.get()).hash(state),
            RequestId::String(s) => (1u8, &**s).hash(state),
        }
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Integer(raw) => f.write_str(raw.get()),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::integer(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.into())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Integer(raw) => (**raw).serialize(serializer),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::from(v))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
                Ok(RequestId::from(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::integer(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                integer_from_text(&v.to_string()).ok_or_else(|| E::custom("invalid integer id"))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn integers_wider_than_64_bits_are_echoed_exactly() {
        let id = RequestId::from_raw(&raw("123456789012345678901234567890")).unwrap();
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            "123456789012345678901234567890"
        );
    }

    #[test]
    fn an_integer_beyond_the_range_of_a_double_is_not_an_id() {
        let widest = "9".repeat(MAX_INTEGER_ID_DIGITS);
        assert!(RequestId::from_raw(&raw(&widest)).is_some());
        assert!(RequestId::from_raw(&raw(&format!("-{widest}"))).is_some());
        let wider = "1".repeat(MAX_INTEGER_ID_DIGITS + 1);
        assert!(RequestId::from_raw(&raw(&wider)).is_none());
        assert!(RequestId::from_raw(&raw(&format!("-{wider}"))).is_none());
    }

    #[test]
    fn strings_keep_their_type_and_text() {
        let id = RequestId::from_raw(&raw(r#""a\u0041""#)).unwrap();
        assert_eq!(id, RequestId::String("aA".into()));
        assert_eq!(serde_json::to_string(&id).unwrap(), r#""aA""#);
    }

    #[test]
    fn null_floats_and_objects_are_not_ids() {
        for bad in ["null", "1.5", "1e3", "{}", "[]", "true", "-0.0"] {
            assert!(RequestId::from_raw(&raw(bad)).is_none(), "{bad}");
        }
    }

    #[test]
    fn an_id_from_a_value_equals_the_same_id_from_text() {
        let from_text = RequestId::from_raw(&raw("-42")).unwrap();
        let from_value = RequestId::from_value(&serde_json::json!(-42)).unwrap();
        assert_eq!(from_text, from_value);
    }
}
