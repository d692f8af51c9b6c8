//! JSON Schemas derived from Rust types: draft 2020-12 from schemars, with every
//! integer bounded by its width, input schemas rooted at an object, and output
//! schemas wrapped under `result` when their root is not an object.

use schemars::generate::SchemaSettings;
use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

/// The property a non-object output is wrapped under, in schema and value alike.
pub const WRAPPED_RESULT_KEY: &str = "result";

/// Adds `minimum`/`maximum` to integers whose `format` names a width that
/// schemars leaves unbounded (`int32`, `int64`, `uint64`, ...), so a model sees
/// the range the decoder will accept.
#[derive(Debug, Clone, Copy)]
struct IntegerBounds;

impl Transform for IntegerBounds {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            let bounds: Option<(Value, Value)> = match object.get("format").and_then(Value::as_str)
            {
                Some("int8") => Some((json!(i8::MIN), json!(i8::MAX))),
                Some("int16") => Some((json!(i16::MIN), json!(i16::MAX))),
                Some("int32") => Some((json!(i32::MIN), json!(i32::MAX))),
                Some("int64") => Some((json!(i64::MIN), json!(i64::MAX))),
                Some("int") => Some((json!(isize::MIN as i64), json!(isize::MAX as i64))),
                Some("uint8") => Some((json!(0), json!(u8::MAX))),
                Some("uint16") => Some((json!(0), json!(u16::MAX))),
                Some("uint32") => Some((json!(0), json!(u32::MAX))),
                Some("uint64") => Some((json!(0), json!(u64::MAX))),
                Some("uint") => Some((json!(0), json!(usize::MAX as u64))),
                _ => None,
            };
            let is_integer = match object.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
                _ => false,
            };
            if let (true, Some((min, max))) = (is_integer, bounds) {
                object.entry("minimum").or_insert(min);
                object.entry("maximum").or_insert(max);
            }
        }
        transform_subschemas(self, schema);
    }
}

/// The draft 2020-12 schema of `T`, as JSON, with integer widths bounded.
pub fn schema_for<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .with_transform(IntegerBounds)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The input schema of an arguments type: an object schema without the
/// generated type's title.
pub fn input_schema_for<T: JsonSchema>() -> Value {
    let mut schema = schema_for::<T>();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
        object
            .entry("type")
            .or_insert_with(|| Value::String("object".into()));
    }
    schema
}

/// True when the schema's root is an object schema.
fn is_object_root(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The output schema of `T`: its own schema when the root is an object, else
/// that schema wrapped as `{"type":"object","properties":{"result":…}}` with
/// any `$defs` hoisted to the new root.
pub fn output_schema_for<T: JsonSchema>() -> Value {
    let schema = schema_for::<T>();
    if is_object_root(&schema) {
        return schema;
    }
    let Value::Object(mut inner) = schema else {
        return schema;
    };
    let dialect = inner.remove("$schema");
    let defs = inner.remove("$defs");
    inner.remove("title");
    let mut root = Map::new();
    if let Some(dialect) = dialect {
        root.insert("$schema".into(), dialect);
    }
    root.insert("type".into(), json!("object"));
    root.insert(
        "properties".into(),
        json!({ WRAPPED_RESULT_KEY: Value::Object(inner) }),
    );
    root.insert("required".into(), json!([WRAPPED_RESULT_KEY]));
    if let Some(defs) = defs {
        root.insert("$defs".into(), defs);
    }
    Value::Object(root)
}

/// True when values of `T` are wrapped under `result` (decided from the type,
/// once per declaration, so schema and value always agree).
pub fn output_is_wrapped<T: JsonSchema>() -> bool {
    !is_object_root(&schema_for::<T>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_carry_their_width() {
        let schema = schema_for::<i64>();
        assert_eq!(schema["minimum"], json!(i64::MIN));
        assert_eq!(schema["maximum"], json!(i64::MAX));
        let schema = schema_for::<u64>();
        assert_eq!(schema["minimum"], json!(0));
        assert_eq!(schema["maximum"], json!(u64::MAX));
    }

    #[test]
    fn non_object_outputs_are_wrapped_in_schema_and_value() {
        let schema = output_schema_for::<Vec<String>>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["result"]["type"], "array");
        assert_eq!(schema["required"], json!(["result"]));
        assert!(output_is_wrapped::<Vec<String>>());
    }
}
