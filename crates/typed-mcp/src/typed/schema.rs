//! JSON Schemas derived from Rust types: draft 2020-12 from schemars, with every
//! integer bounded by its width, secret subschemas marked `writeOnly` with no
//! `default` or `examples`, input schemas rooted at an object, and output
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

/// The draft 2020-12 schema of `T`, as JSON, with integer widths bounded and
/// secret subschemas marked `writeOnly`, with no `default` or `examples`
/// (a secret's value must not appear in a schema).
pub fn schema_for<T: JsonSchema>() -> Value {
    let mut schema = SchemaSettings::draft2020_12()
        .with_transform(IntegerBounds)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    mark_secrets(&mut schema);
    schema
}

// ---------------------------------------------------------------------------
// Secret (writeOnly) subschemas
// ---------------------------------------------------------------------------

/// How many `$ref`s (or schema/instance steps) one walk may follow: derived
/// schemas are shallow, and a cycle must end.
const WALK_BUDGET: usize = 10_000;

/// Keywords whose value is one subschema.
const SINGLE: &[&str] = &[
    "items",
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value maps names to subschemas.
const MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is a list of subschemas.
const LISTS: &[&str] = &["prefixItems", "allOf", "anyOf", "oneOf"];
/// Keywords that apply their subschemas to the same instance.
const APPLICATORS: &[&str] = &["allOf", "anyOf", "oneOf"];
const CONDITIONALS: &[&str] = &["if", "then", "else"];

/// True when the schema itself says `"writeOnly": true`.
fn write_only(schema: &Value) -> bool {
    schema.get("writeOnly") == Some(&Value::Bool(true))
}

/// The target of a local `$ref` (`#`, `#/$defs/Name`).
fn target<'a>(root: &'a Value, schema: &Value) -> Option<&'a Value> {
    let reference = schema.get("$ref")?.as_str()?;
    root.pointer(reference.strip_prefix('#')?)
}

/// The subschemas that apply to the same instance as `schema`: its `$ref`
/// target and the branches of `allOf`/`anyOf`/`oneOf`/`if`/`then`/`else`.
fn same_instance<'a>(root: &'a Value, schema: &'a Value) -> impl Iterator<Item = &'a Value> {
    let lists = APPLICATORS
        .iter()
        .filter_map(|k| schema.get(*k)?.as_array())
        .flatten();
    let conditionals = CONDITIONALS.iter().filter_map(|k| schema.get(*k));
    target(root, schema)
        .into_iter()
        .chain(lists)
        .chain(conditionals)
}

/// The subschemas that may apply to the member `key` of an object (or the
/// item at `key` of an array). Conservative: every `patternProperties` entry
/// counts, matching or not.
fn children<'a>(schema: &'a Value, key: &str) -> Vec<&'a Value> {
    let mut out = Vec::new();
    match schema.get("properties").and_then(|p| p.get(key)) {
        Some(property) => out.push(property),
        None => out.extend(schema.get("additionalProperties")),
    }
    if let Some(patterns) = schema.get("patternProperties").and_then(Value::as_object) {
        out.extend(patterns.values());
    }
    if let Ok(index) = key.parse::<usize>() {
        match schema
            .get("prefixItems")
            .and_then(|p| p.as_array())
            .and_then(|p| p.get(index))
        {
            Some(item) => out.push(item),
            None => out.extend(schema.get("items")),
        }
    }
    out
}

/// True when `schema` describes a secret: it is `writeOnly`, or its `$ref`
/// target or one of its branches is (so `Option<Secret<T>>` counts).
fn is_secret(root: &Value, schema: &Value, budget: &mut usize) -> bool {
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    write_only(schema) || same_instance(root, schema).any(|s| is_secret(root, s, budget))
}

/// True when any subschema of `schema` is `writeOnly`.
pub(crate) fn has_secrets(schema: &Value) -> bool {
    let mut found = false;
    each_subschema(schema, String::new(), &mut |s, _| found |= write_only(s));
    found
}

/// Calls `f` with every object subschema of `schema` and its JSON pointer.
fn each_subschema(schema: &Value, pointer: String, f: &mut impl FnMut(&Value, &str)) {
    let Some(object) = schema.as_object() else {
        return;
    };
    f(schema, &pointer);
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
    for keyword in SINGLE {
        if let Some(sub) = object.get(*keyword) {
            each_subschema(sub, format!("{pointer}/{keyword}"), f);
        }
    }
    for keyword in MAPS {
        if let Some(map) = object.get(*keyword).and_then(Value::as_object) {
            for (name, sub) in map {
                each_subschema(
                    sub,
                    format!("{pointer}/{}/{}", escape(keyword), escape(name)),
                    f,
                );
            }
        }
    }
    for keyword in LISTS {
        if let Some(list) = object.get(*keyword).and_then(Value::as_array) {
            for (i, sub) in list.iter().enumerate() {
                each_subschema(sub, format!("{pointer}/{keyword}/{i}"), f);
            }
        }
    }
}

/// Makes every secret subschema (see [`crate::secret::Secret`]) say so and
/// show no value: one that is `writeOnly`, refers to one, or has a secret
/// branch (`Option<Secret<T>>` wraps one in `anyOf`) gets `"writeOnly": true`
/// and loses `default` and `examples`. schemars adds a field's `default` and
/// `#[schemars(example = ..)]` to the property schema after the type's own
/// schema is made, so the type alone cannot keep them out.
pub(crate) fn mark_secrets(root: &mut Value) {
    let mut secret = Vec::new();
    each_subschema(root, String::new(), &mut |schema, pointer| {
        let exposed = !write_only(schema)
            || schema.get("default").is_some()
            || schema.get("examples").is_some();
        if exposed && is_secret(root, schema, &mut WALK_BUDGET.clone()) {
            secret.push(pointer.to_owned());
        }
    });
    for pointer in secret {
        if let Some(object) = root.pointer_mut(&pointer).and_then(Value::as_object_mut) {
            object.remove("default");
            object.remove("examples");
            object.insert("writeOnly".into(), Value::Bool(true));
        }
    }
}

/// How many leading `segments` of an instance path lead to a secret: `Some(n)`
/// when the location at or above it, `n` segments deep, is described by a
/// secret subschema (the shallowest such `n`). When the walk runs out of
/// budget the answer errs on the side of secrecy.
pub(crate) fn secret_prefix(root: &Value, segments: &[String]) -> Option<usize> {
    fn walk(
        root: &Value,
        schema: &Value,
        segments: &[String],
        depth: usize,
        budget: &mut usize,
    ) -> Option<usize> {
        if *budget == 0 {
            return Some(depth);
        }
        *budget -= 1;
        if write_only(schema) {
            return Some(depth);
        }
        let mut best: Option<usize> = None;
        let mut keep = |found: Option<usize>| {
            if let Some(d) = found {
                best = Some(best.map_or(d, |b| b.min(d)));
            }
        };
        for sub in same_instance(root, schema) {
            keep(walk(root, sub, segments, depth, budget));
        }
        if let Some((first, rest)) = segments.split_first() {
            for child in children(schema, first) {
                keep(walk(root, child, rest, depth + 1, budget));
            }
        }
        best
    }
    walk(root, root, segments, 0, &mut WALK_BUDGET.clone())
}

/// Collects the text of every string and number in `instance` that lies at or
/// under a secret location. False when the walk ran out of budget (the list
/// may then be incomplete).
pub(crate) fn secret_values(root: &Value, instance: &Value, out: &mut Vec<String>) -> bool {
    fn leaves(instance: &Value, out: &mut Vec<String>) {
        match instance {
            Value::String(s) => out.push(s.clone()),
            Value::Number(n) => out.push(n.to_string()),
            Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
            Value::Object(members) => members.values().for_each(|v| leaves(v, out)),
            Value::Bool(_) | Value::Null => {}
        }
    }
    fn walk(
        root: &Value,
        schema: &Value,
        instance: &Value,
        out: &mut Vec<String>,
        budget: &mut usize,
    ) -> bool {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        if write_only(schema) {
            leaves(instance, out);
            return true;
        }
        let mut complete = true;
        for sub in same_instance(root, schema) {
            complete &= walk(root, sub, instance, out, budget);
        }
        match instance {
            Value::Object(members) => {
                for (key, value) in members {
                    for child in children(schema, key) {
                        complete &= walk(root, child, value, out, budget);
                    }
                }
            }
            Value::Array(items) => {
                for (i, value) in items.iter().enumerate() {
                    for child in children(schema, &i.to_string()) {
                        complete &= walk(root, child, value, out, budget);
                    }
                }
            }
            _ => {}
        }
        complete
    }
    walk(root, root, instance, out, &mut WALK_BUDGET.clone())
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
pub(crate) fn output_is_wrapped<T: JsonSchema>() -> bool {
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
    fn secret_subschemas_lose_default_and_examples() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "key": {"type": "string", "writeOnly": true, "default": "k", "examples": ["k"]},
                "token": {"$ref": "#/$defs/Token", "default": "t"},
                "maybe": {"anyOf": [{"$ref": "#/$defs/Token"}, {"type": "null"}], "examples": ["t"]},
                "plain": {"type": "string", "default": "p"}
            },
            "$defs": {"Token": {"type": "string", "writeOnly": true, "examples": ["t"]}}
        });
        mark_secrets(&mut schema);
        assert_eq!(
            schema["properties"]["key"],
            json!({"type": "string", "writeOnly": true})
        );
        assert_eq!(
            schema["properties"]["token"],
            json!({"$ref": "#/$defs/Token", "writeOnly": true})
        );
        assert_eq!(
            schema["properties"]["maybe"],
            json!({
                "anyOf": [{"$ref": "#/$defs/Token", "writeOnly": true}, {"type": "null"}],
                "writeOnly": true
            })
        );
        assert_eq!(schema["properties"]["plain"]["default"], "p");
        assert!(schema["$defs"]["Token"].get("examples").is_none());
        assert!(has_secrets(&schema));
        assert!(!has_secrets(
            &json!({"properties": {"writeOnly": {"type": "boolean"}}})
        ));
    }

    #[test]
    fn secret_locations_are_found_through_refs_and_branches() {
        let schema = json!({
            "type": "object",
            "properties": {
                "key": {"type": "string", "writeOnly": true},
                "auth": {"$ref": "#/$defs/Auth"},
                "list": {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/Token"}, {"type": "null"}]}},
                "name": {"type": "string"}
            },
            "$defs": {
                "Auth": {"type": "object", "properties": {"token": {"$ref": "#/$defs/Token"}}},
                "Token": {"type": "object", "writeOnly": true}
            }
        });
        let at = |path: &[&str]| {
            let segments: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
            secret_prefix(&schema, &segments)
        };
        assert_eq!(at(&["key"]), Some(1));
        assert_eq!(at(&["auth", "token", "inner"]), Some(2));
        assert_eq!(at(&["list", "3", "x"]), Some(2));
        assert_eq!(at(&["auth"]), None);
        assert_eq!(at(&["name"]), None);
        assert_eq!(at(&[]), None);
        let mut values = Vec::new();
        let instance = json!({
            "key": "k-1", "name": "n", "auth": {"token": {"a": "k-2", "b": [7]}},
            "list": [null, {"c": "k-3"}]
        });
        assert!(secret_values(&schema, &instance, &mut values));
        values.sort();
        assert_eq!(values, ["7", "k-1", "k-2", "k-3"]);
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
