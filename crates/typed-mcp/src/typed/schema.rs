//! JSON Schemas derived from Rust types: draft 2020-12 from schemars, with every
//! integer bounded by its width, every model closed (`additionalProperties: false`),
//! every nullable `type` array split into one-type `anyOf` branches (the
//! portable spelling), named validators' rules in their descriptions (see
//! [`VALIDATOR_KEYWORD`]), secret subschemas marked `writeOnly` with no
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
    split_type_unions(&mut schema);
    type_any_values(&mut schema);
    close_objects(&mut schema);
    describe_validators(&mut schema);
    mark_secrets(&mut schema);
    schema
}

// ---------------------------------------------------------------------------
// Portable nullable fields: one `type` per schema
// ---------------------------------------------------------------------------

/// Keywords that constrain only instances of one JSON type, by that type.
/// (`format` names a string or a number format, so both carry it.)
fn applies_to(keyword: &str, json_type: &str) -> bool {
    const STRING: &[&str] = &[
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
    ];
    const NUMBER: &[&str] = &[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "format",
    ];
    const ARRAY: &[&str] = &[
        "items",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "minItems",
        "maxItems",
        "uniqueItems",
        "unevaluatedItems",
    ];
    const OBJECT: &[&str] = &[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    ];
    let keywords = match json_type {
        "string" => STRING,
        "integer" | "number" => NUMBER,
        "array" => ARRAY,
        "object" => OBJECT,
        _ => &[],
    };
    keywords.contains(&keyword)
}

/// Rewrites every `"type": [..]` (schemars' spelling of a nullable field,
/// `["string", "null"]`) as `anyOf` branches with one `type` each, moving each
/// type's own keywords into its branch. The two spellings accept the same
/// values, but clients that map tool schemas onto a single-`type` dialect (the
/// OpenAPI subset of some model providers) reject or weaken the array form.
fn split_type_unions(schema: &mut Value) {
    each_subschema_mut(schema, &mut |object| {
        let Some(Value::Array(types)) = object.get("type") else {
            return;
        };
        let types: Vec<String> = types
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect();
        object.shift_remove("type");
        let specific: Vec<String> = object
            .keys()
            .filter(|k| types.iter().any(|t| applies_to(k, t)))
            .cloned()
            .collect();
        let moved: Vec<(String, Value)> = specific
            .into_iter()
            .filter_map(|k| object.shift_remove(&k).map(|v| (k, v)))
            .collect();
        let branches: Vec<Value> = types
            .iter()
            .map(|t| {
                let mut branch = Map::new();
                branch.insert("type".into(), json!(t));
                for (k, v) in &moved {
                    if applies_to(k, t) {
                        branch.insert(k.clone(), v.clone());
                    }
                }
                Value::Object(branch)
            })
            .collect();
        match object.shift_remove("anyOf") {
            // Both unions must hold: the old one moves under `allOf`.
            Some(existing) => {
                let all = object.entry("allOf").or_insert_with(|| json!([]));
                if let Value::Array(all) = all {
                    all.push(json!({ "anyOf": existing }));
                }
                object.insert("anyOf".into(), Value::Array(branches));
            }
            None => {
                object.insert("anyOf".into(), Value::Array(branches));
            }
        }
    });
}

/// Calls `f` with every object subschema of `schema`, parents before children.
fn each_subschema_mut(schema: &mut Value, f: &mut impl FnMut(&mut Map<String, Value>)) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    f(object);
    let mut members = subschema_members_mut(object);
    for sub in members[..MAPS_AT].iter_mut().flatten() {
        each_subschema_mut(sub, f);
    }
    for map in members[MAPS_AT..LISTS_AT].iter_mut().flatten() {
        if let Some(map) = map.as_object_mut() {
            for sub in map.values_mut() {
                each_subschema_mut(sub, f);
            }
        }
    }
    for list in members[LISTS_AT..].iter_mut().flatten() {
        if let Some(list) = list.as_array_mut() {
            for sub in list {
                each_subschema_mut(sub, f);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Any JSON value, spelled out
// ---------------------------------------------------------------------------

/// Keywords that constrain an instance (everything else is an annotation).
const CONSTRAINTS: &[&str] = &[
    "type",
    "enum",
    "const",
    "$ref",
    "$dynamicRef",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "items",
    "prefixItems",
    "contains",
    "maxContains",
    "minContains",
    "maxItems",
    "minItems",
    "uniqueItems",
    "additionalItems",
    "unevaluatedItems",
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "dependentSchemas",
];

/// Keywords whose subschema may be a bare boolean in portable schemas
/// (`additionalProperties: true` is the common spelling of a map of anything).
const BOOLEAN_ALLOWED: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
];

/// Spells out "any JSON value" (schemars' `true` for `serde_json::Value`,
/// or a schema with only a description) as one branch per JSON type. The
/// same values pass; but a bare `true` where a schema object belongs, or a
/// schema with no constraint at all, is rejected or misread by clients that
/// map tool schemas onto another dialect.
fn type_any_values(schema: &mut Value) {
    fn any_value() -> Value {
        let types = ["object", "array", "string", "number", "boolean", "null"];
        Value::Array(types.iter().map(|t| json!({ "type": t })).collect())
    }
    fn fix(sub: &mut Value) {
        match sub {
            Value::Bool(true) => *sub = json!({ "anyOf": any_value() }),
            Value::Object(object) if !CONSTRAINTS.iter().any(|k| object.contains_key(*k)) => {
                object.insert("anyOf".into(), any_value());
            }
            _ => {}
        }
    }
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    let mut members = subschema_members_mut(object);
    for (keyword, sub) in SINGLE.iter().zip(&mut members[..MAPS_AT]) {
        let Some(sub) = sub else {
            continue;
        };
        // Under `not`, an unconstrained schema means "nothing": left alone.
        if *keyword != "not" && !BOOLEAN_ALLOWED.contains(keyword) {
            fix(sub);
        }
        type_any_values(sub);
    }
    for map in members[MAPS_AT..LISTS_AT].iter_mut().flatten() {
        if let Some(map) = map.as_object_mut() {
            for sub in map.values_mut() {
                fix(sub);
                type_any_values(sub);
            }
        }
    }
    for list in members[LISTS_AT..].iter_mut().flatten() {
        if let Some(list) = list.as_array_mut() {
            for sub in list {
                fix(sub);
                type_any_values(sub);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Closed models
// ---------------------------------------------------------------------------

/// Keywords that say which members an object may have beyond its `properties`:
/// a schema that has one already decided, and is left as it is.
const OPENNESS: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "patternProperties",
];

/// True when `schema` applies other subschemas to its own instance.
fn composes(schema: &Map<String, Value>) -> bool {
    schema.contains_key("$ref")
        || APPLICATORS
            .iter()
            .chain(CONDITIONALS)
            .any(|k| schema.contains_key(*k))
}

/// Closes every model: an object schema that lists `properties` and does not
/// say what else it allows gets `"additionalProperties": false`, so an unknown
/// field is refused (with every other problem) instead of dropped by serde.
///
/// An object made of parts (a `#[serde(flatten)]` enum adds `oneOf` branches
/// beside the struct's `properties`) is closed once, at the top, with
/// `"unevaluatedProperties": false`, which sees the members its parts
/// describe; the parts (and the definitions they `$ref`) stay open, since a
/// closed part would refuse its siblings' members.
///
/// What stays open: a map (`HashMap`, `BTreeMap`, `serde_json::Map`: its
/// schema says `additionalProperties`), a struct with a flattened map, an
/// object schema that lists no properties, and a type that opts out with
/// `#[schemars(extend("additionalProperties" = true))]`.
fn close_objects(root: &mut Value) {
    let mut parts = std::collections::HashSet::new();
    each_subschema(root, String::new(), &mut |schema, pointer| {
        if let Some(object) = schema.as_object()
            && object.contains_key("properties")
            && composes(object)
        {
            collect_parts(root, schema, pointer, &mut parts, &mut WALK_BUDGET.clone());
        }
    });
    let mut close = Vec::new();
    each_subschema(root, String::new(), &mut |schema, pointer| {
        let Some(object) = schema.as_object() else {
            return;
        };
        if object.contains_key("properties")
            && !OPENNESS.iter().any(|k| object.contains_key(*k))
            && !parts.contains(pointer)
        {
            close.push((pointer.to_owned(), composes(object)));
        }
    });
    for (pointer, composed) in close {
        if let Some(object) = root.pointer_mut(&pointer).and_then(Value::as_object_mut) {
            let keyword = if composed {
                "unevaluatedProperties"
            } else {
                "additionalProperties"
            };
            object.insert(keyword.into(), Value::Bool(false));
        }
    }
}

/// Adds to `parts` the pointer of every subschema applied to the same
/// instance as the composed object at `pointer` (its branches, their
/// branches, and the definitions any of them `$ref`), not the object itself.
fn collect_parts(
    root: &Value,
    schema: &Value,
    pointer: &str,
    parts: &mut std::collections::HashSet<String>,
    budget: &mut usize,
) {
    let mut branches: Vec<String> = Vec::new();
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str)
        && let Some(target) = reference.strip_prefix('#')
    {
        branches.push(target.to_owned());
    }
    for keyword in APPLICATORS {
        if let Some(list) = schema.get(*keyword).and_then(Value::as_array) {
            branches.extend((0..list.len()).map(|i| format!("{pointer}/{keyword}/{i}")));
        }
    }
    for keyword in CONDITIONALS {
        if schema.get(*keyword).is_some() {
            branches.push(format!("{pointer}/{keyword}"));
        }
    }
    for branch in branches {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        if let Some(sub) = root.pointer(&branch)
            && parts.insert(branch.clone())
        {
            collect_parts(root, sub, &branch, parts, budget);
        }
    }
}

// ---------------------------------------------------------------------------
// Named validators
// ---------------------------------------------------------------------------

/// The schema keyword under which a field declares the rule a named validator
/// checks after decoding (one message or a list), for the model to read:
/// `#[schemars(extend("x-validator" = "must name an open ticket"))]`. It is
/// removed from the published schema and its messages are appended to the
/// description.
pub(crate) const VALIDATOR_KEYWORD: &str = "x-validator";

/// Whether `T`'s schema declares a named validator's rule anywhere (before
/// [`describe_validators`] folds the rules into descriptions).
pub(crate) fn declares_validator_rules<T: JsonSchema>() -> bool {
    fn walk(value: &Value) -> bool {
        match value {
            Value::Object(object) => {
                object.contains_key(VALIDATOR_KEYWORD) || object.values().any(walk)
            }
            Value::Array(items) => items.iter().any(walk),
            _ => false,
        }
    }
    walk(
        &SchemaSettings::draft2020_12()
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value(),
    )
}

/// Moves every [`VALIDATOR_KEYWORD`] message into its schema's description,
/// one `Rule: ...` line each.
fn describe_validators(schema: &mut Value) {
    each_subschema_mut(schema, &mut |object| {
        let Some(declared) = object.shift_remove(VALIDATOR_KEYWORD) else {
            return;
        };
        let messages: Vec<String> = match declared {
            Value::String(message) => vec![message],
            Value::Array(list) => list
                .into_iter()
                .map(|m| match m {
                    Value::String(message) => message,
                    other => other.to_string(),
                })
                .collect(),
            other => vec![other.to_string()],
        };
        let rules: Vec<String> = messages
            .iter()
            .map(|m| m.trim())
            .filter(|m| !m.is_empty())
            .map(|m| format!("Rule: {m}"))
            .collect();
        if rules.is_empty() {
            return;
        }
        let rules = rules.join("\n");
        let description = match object.get("description").and_then(Value::as_str) {
            Some(text) if !text.trim().is_empty() => format!("{text}\n{rules}"),
            _ => rules,
        };
        object.insert("description".into(), Value::String(description));
    });
}

// ---------------------------------------------------------------------------
// Secret (writeOnly) subschemas
// ---------------------------------------------------------------------------

/// How many `$ref`s (or schema/instance steps) one walk may follow: derived
/// schemas are shallow, and a cycle must end.
const WALK_BUDGET: usize = 10_000;

/// Every keyword whose value holds subschemas, each a slot of
/// [`subschema_members`], in the order a walk visits them: [`SINGLE`], then
/// [`MAPS`], then [`LISTS`].
const SUBSCHEMA_KEYWORDS: [&str; 20] = [
    // One subschema.
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
    // Names mapped to subschemas.
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    // Lists of subschemas.
    "prefixItems",
    "allOf",
    "anyOf",
    "oneOf",
];
const SUBSCHEMA_SLOTS: usize = SUBSCHEMA_KEYWORDS.len();
/// The first slot of [`MAPS`] and of [`LISTS`].
const MAPS_AT: usize = 11;
const LISTS_AT: usize = 16;
/// Keywords whose value is one subschema.
const SINGLE: &[&str] = SUBSCHEMA_KEYWORDS.as_slice().split_at(MAPS_AT).0;
/// Keywords whose value maps names to subschemas.
const MAPS: &[&str] = SUBSCHEMA_KEYWORDS
    .as_slice()
    .split_at(LISTS_AT)
    .0
    .split_at(MAPS_AT)
    .1;
/// Keywords whose value is a list of subschemas.
const LISTS: &[&str] = SUBSCHEMA_KEYWORDS.as_slice().split_at(LISTS_AT).1;

/// The slot of a keyword that holds subschemas.
fn subschema_slot(key: &str) -> Option<usize> {
    SUBSCHEMA_KEYWORDS.iter().position(|k| *k == key)
}

/// The values of `object`'s keywords that hold subschemas, by slot: one pass
/// over its members rather than a hashed lookup for each of the twenty
/// keywords (schema walks were a fifth of a server's start-up instructions).
fn subschema_members(object: &Map<String, Value>) -> [Option<&Value>; SUBSCHEMA_SLOTS] {
    let mut found = [None; SUBSCHEMA_SLOTS];
    for (key, value) in object {
        if let Some(slot) = subschema_slot(key) {
            found[slot] = Some(value);
        }
    }
    found
}

/// [`subschema_members`], mutable.
fn subschema_members_mut(object: &mut Map<String, Value>) -> [Option<&mut Value>; SUBSCHEMA_SLOTS] {
    let mut found: [Option<&mut Value>; SUBSCHEMA_SLOTS] = std::array::from_fn(|_| None);
    for (key, value) in object.iter_mut() {
        if let Some(slot) = subschema_slot(key) {
            found[slot] = Some(value);
        }
    }
    found
}
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
    let members = subschema_members(object);
    for (keyword, sub) in SINGLE.iter().zip(&members[..MAPS_AT]) {
        if let Some(sub) = sub {
            each_subschema(sub, format!("{pointer}/{keyword}"), f);
        }
    }
    for (keyword, map) in MAPS.iter().zip(&members[MAPS_AT..LISTS_AT]) {
        if let Some(map) = map.and_then(Value::as_object) {
            for (name, sub) in map {
                each_subschema(
                    sub,
                    format!("{pointer}/{}/{}", escape(keyword), escape(name)),
                    f,
                );
            }
        }
    }
    for (keyword, list) in LISTS.iter().zip(&members[LISTS_AT..]) {
        if let Some(list) = list.and_then(Value::as_array) {
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
    fn each_subschema_keyword_has_its_slot_and_no_other_word_has_one() {
        let keywords: Vec<&str> = SINGLE.iter().chain(MAPS).chain(LISTS).copied().collect();
        assert_eq!(keywords, SUBSCHEMA_KEYWORDS);
        assert_eq!((MAPS[0], LISTS[0]), ("properties", "prefixItems"));
        for (slot, keyword) in keywords.iter().enumerate() {
            assert_eq!(subschema_slot(keyword), Some(slot), "{keyword}");
        }
        for other in ["type", "item", "Items", "", "$ref", "default", "enum"] {
            assert_eq!(subschema_slot(other), None, "{other}");
        }
        // A walk visits every subschema once, in keyword order.
        let schema = json!({
            "anyOf": [{"title": "a0"}],
            "properties": {"p": {"title": "p", "items": {"title": "pi"}}},
            "items": {"title": "i"},
            "$defs": {"d": {"title": "d"}}
        });
        let mut seen = Vec::new();
        each_subschema(&schema, String::new(), &mut |s, pointer| {
            seen.push((pointer.to_owned(), s.get("title").cloned()));
        });
        let pointers: Vec<&str> = seen.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "",
                "/items",
                "/properties/p",
                "/properties/p/items",
                "/$defs/d",
                "/anyOf/0"
            ]
        );
    }

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
    fn a_model_made_of_parts_is_closed_once_at_the_top() {
        #[derive(schemars::JsonSchema, serde::Deserialize)]
        #[allow(dead_code)]
        struct Inner {
            x: u32,
        }
        #[derive(schemars::JsonSchema, serde::Deserialize)]
        #[serde(tag = "kind")]
        #[allow(dead_code)]
        enum Kind {
            A(Inner),
            B { z: u8 },
        }
        #[derive(schemars::JsonSchema, serde::Deserialize)]
        #[allow(dead_code)]
        struct Outer {
            a: u32,
            #[serde(flatten)]
            kind: Kind,
        }
        let schema = schema_for::<Outer>();
        assert_eq!(schema["unevaluatedProperties"], false);
        assert!(schema.get("additionalProperties").is_none());
        // The parts (a branch, the definition it refers to) stay open: closed,
        // each would refuse the other's members.
        assert!(schema["oneOf"][1].get("additionalProperties").is_none());
        assert!(
            schema["$defs"]["Inner"]
                .get("additionalProperties")
                .is_none()
        );
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        assert!(validator.is_valid(&json!({"a": 1, "kind": "A", "x": 2})));
        assert!(validator.is_valid(&json!({"a": 1, "kind": "B", "z": 2})));
        assert!(!validator.is_valid(&json!({"a": 1, "kind": "B", "z": 2, "q": 0})));
        assert!(!validator.is_valid(&json!({"a": 1, "kind": "A", "x": 2, "z": 2})));
    }

    #[test]
    fn a_type_array_becomes_one_type_branches_beside_an_existing_union() {
        let mut schema = json!({
            "type": ["string", "integer", "null"],
            "description": "d",
            "maxLength": 3,
            "minimum": 1,
            "anyOf": [{"const": "a"}, {"const": 7}, {"const": null}]
        });
        split_type_unions(&mut schema);
        assert_eq!(
            schema,
            json!({
                "description": "d",
                "allOf": [{"anyOf": [{"const": "a"}, {"const": 7}, {"const": null}]}],
                "anyOf": [
                    {"type": "string", "maxLength": 3},
                    {"type": "integer", "minimum": 1},
                    {"type": "null"}
                ]
            })
        );
    }

    #[test]
    fn any_json_value_is_spelled_out() {
        #[derive(schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Args {
            /// Anything.
            value: Value,
            /// Anything or nothing.
            maybe: Option<Value>,
            /// Lists of anything.
            list: Vec<Value>,
            /// A map of anything stays `additionalProperties: true`.
            map: Map<String, Value>,
        }
        let schema = input_schema_for::<Args>();
        let any = json!([
            {"type": "object"}, {"type": "array"}, {"type": "string"},
            {"type": "number"}, {"type": "boolean"}, {"type": "null"}
        ]);
        assert_eq!(schema["properties"]["value"]["description"], "Anything.");
        assert_eq!(schema["properties"]["value"]["anyOf"], any);
        assert_eq!(schema["properties"]["list"]["items"]["anyOf"], any);
        assert_eq!(schema["properties"]["map"]["additionalProperties"], true);
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        for value in [
            json!(1),
            json!("s"),
            json!(null),
            json!({"a": [1]}),
            json!([true]),
        ] {
            let args =
                json!({"value": value, "maybe": value, "list": [value], "map": {"k": value}});
            assert!(validator.is_valid(&args), "{args}");
        }
        assert_eq!(schema["properties"]["maybe"]["anyOf"], any);
    }

    #[test]
    fn validator_rules_are_appended_to_descriptions() {
        let mut schema = json!({
            "properties": {
                "a": {"type": "string", "description": "A.", "x-validator": "must be open"},
                "b": {"type": "string", "x-validator": ["must be ASCII", " ", "must be short"]}
            }
        });
        describe_validators(&mut schema);
        assert_eq!(
            schema["properties"]["a"],
            json!({"type": "string", "description": "A.\nRule: must be open"})
        );
        assert_eq!(
            schema["properties"]["b"]["description"],
            "Rule: must be ASCII\nRule: must be short"
        );
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
