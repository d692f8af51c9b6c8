//! [`StructuredContent`]: a result's `structuredContent`, held as a value or
//! as the JSON text it is sent as.

use std::borrow::Cow;
use std::fmt;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The `structuredContent` of a [`CallToolResult`](super::CallToolResult):
/// one JSON value, held either as a [`Value`] or as the compact JSON text
/// [`StructuredContent::encode`] wrote.
///
/// A typed tool's value is encoded once, straight from its Rust type: the
/// same text is the result's text block and, written as it is, its
/// `structuredContent`. Building a `Value` first (a map and an allocation
/// for every member and string) and encoding it twice cost more than the
/// rest of a small call's reply. Both forms are sent as the same JSON and
/// compare as values:
///
/// ```
/// use serde_json::json;
/// use typed_mcp_core::wire::StructuredContent;
///
/// #[derive(serde::Serialize)]
/// struct Sum { sum: i64 }
///
/// let encoded = StructuredContent::encode(&Sum { sum: 3 }).unwrap();
/// assert_eq!(encoded.json(), r#"{"sum":3}"#);
/// assert_eq!(encoded, StructuredContent::from(json!({"sum": 3})));
/// assert_eq!(encoded.to_value().into_owned(), json!({"sum": 3}));
/// assert_eq!(serde_json::to_string(&encoded).unwrap(), r#"{"sum":3}"#);
/// ```
#[derive(Clone)]
pub struct StructuredContent(Repr);

#[derive(Clone)]
enum Repr {
    Value(Value),
    /// Compact JSON text written by [`crate::encode`] (so it is valid JSON,
    /// and is not checked again).
    Json(Box<str>),
}

impl StructuredContent {
    /// `value`'s compact JSON, written by the library's encoder (the bytes
    /// `serde_json::to_string` writes). Fails as `serde_json` does, for a
    /// value with no JSON form (a map with a key that is not a string).
    pub fn encode<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Self> {
        let text = crate::encode::to_string(value)?;
        Ok(StructuredContent(Repr::Json(text.into_boxed_str())))
    }

    /// The content as a [`Value`]: borrowed when it is held as one, parsed
    /// from its text otherwise.
    pub fn to_value(&self) -> Cow<'_, Value> {
        match &self.0 {
            Repr::Value(value) => Cow::Borrowed(value),
            Repr::Json(json) => Cow::Owned(parse(json)),
        }
    }

    /// The content as a [`Value`], parsed from its text when it is held as
    /// text.
    pub fn into_value(self) -> Value {
        match self.0 {
            Repr::Value(value) => value,
            Repr::Json(json) => parse(&json),
        }
    }

    /// The compact JSON text, when the content is held as text (made by
    /// [`StructuredContent::encode`]); `None` for a [`Value`].
    pub fn as_json(&self) -> Option<&str> {
        match &self.0 {
            Repr::Value(_) => None,
            Repr::Json(json) => Some(json),
        }
    }

    /// The compact JSON the content is sent as: its text, or its value
    /// encoded now.
    pub fn json(&self) -> Cow<'_, str> {
        match &self.0 {
            Repr::Value(value) => {
                Cow::Owned(crate::encode::to_string(value).expect("a JSON value always encodes"))
            }
            Repr::Json(json) => Cow::Borrowed(json),
        }
    }
}

/// Text the encoder wrote, read back. It is valid JSON with no recursion
/// limit to meet (`serde_json` writes what it reads), so this cannot fail.
fn parse(json: &str) -> Value {
    let mut de = serde_json::Deserializer::from_str(json);
    de.disable_recursion_limit();
    Value::deserialize(&mut de).expect("encoded structured content reads back")
}

impl From<Value> for StructuredContent {
    fn from(value: Value) -> Self {
        StructuredContent(Repr::Value(value))
    }
}

impl From<StructuredContent> for Value {
    fn from(content: StructuredContent) -> Self {
        content.into_value()
    }
}

impl PartialEq for StructuredContent {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Repr::Value(a), Repr::Value(b)) => a == b,
            (Repr::Json(a), Repr::Json(b)) if a == b => true,
            _ => self.to_value() == other.to_value(),
        }
    }
}

impl PartialEq<Value> for StructuredContent {
    fn eq(&self, other: &Value) -> bool {
        *self.to_value() == *other
    }
}

impl fmt::Debug for StructuredContent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Value(value) => value.fmt(f),
            Repr::Json(json) => f.write_str(json),
        }
    }
}

impl Serialize for StructuredContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Value(value) => value.serialize(serializer),
            // As `serde_json`'s `RawValue` serializes (without its check of
            // the text, which the encoder wrote): JSON serializers copy the
            // text as it is; others see a struct holding it.
            Repr::Json(json) => {
                let mut raw = serializer.serialize_struct(RAW_VALUE_TOKEN, 1)?;
                raw.serialize_field(RAW_VALUE_TOKEN, &**json)?;
                raw.end()
            }
        }
    }
}

/// The struct (and field) name by which `serde_json` serializers know a
/// `RawValue`: a test below fails should it ever change.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

impl<'de> Deserialize<'de> for StructuredContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(StructuredContent::from)
    }
}

#[cfg(test)]
mod tests {
    use super::StructuredContent;
    use serde_json::json;

    #[test]
    fn encoded_content_is_sent_as_its_text_by_every_json_writer() {
        let value = json!({"a": [1, 2.5, "x\"y"], "b": {"c": null}});
        let encoded = StructuredContent::encode(&value).unwrap();
        let text = serde_json::to_string(&value).unwrap();
        assert_eq!(encoded.json(), text);
        assert_eq!(encoded.as_json(), Some(text.as_str()));
        assert_eq!(StructuredContent::from(value.clone()).as_json(), None);
        // serde_json's writer and value builder, and the library's writer.
        assert_eq!(serde_json::to_string(&encoded).unwrap(), text);
        assert_eq!(serde_json::to_value(&encoded).unwrap(), value);
        assert_eq!(crate::encode::to_string(&encoded).unwrap(), text);
        let nested = json!({"structured": encoded});
        assert_eq!(nested, json!({"structured": value}));
        assert_eq!(encoded.clone().into_value(), value);
        assert_eq!(encoded, value);
    }

    #[test]
    fn both_forms_of_one_value_are_equal_and_read_back_alike() {
        let value = json!({"big": u64::MAX, "float": 0.1, "deep": [[[[{}]]]]});
        let encoded = StructuredContent::encode(&value).unwrap();
        let held = StructuredContent::from(value.clone());
        assert_eq!(encoded, held);
        assert_eq!(held, encoded);
        assert_ne!(encoded, StructuredContent::from(json!({"big": 1})));
        let read: StructuredContent = serde_json::from_str(&encoded.json()).unwrap();
        assert_eq!(read, held);
        assert_eq!(format!("{encoded:?}"), encoded.json());
    }

    #[test]
    fn a_value_with_no_json_form_is_an_error_not_content() {
        let mut map = std::collections::BTreeMap::new();
        map.insert(vec![1u8], 1);
        assert!(StructuredContent::encode(&map).is_err());
    }
}
