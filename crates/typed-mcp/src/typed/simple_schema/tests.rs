//! `SimpleSchema` against jsonschema: same compile outcome, same answers.

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde_json::{Value, json};

use super::SimpleSchema;
use crate::typed::schema::input_schema_for;

/// A small deterministic generator (xorshift), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Numbers at the edges the bounds and `integer` care about.
fn edge_numbers() -> Vec<Value> {
    vec![
        json!(0),
        json!(-1),
        json!(1),
        json!(1.0),
        json!(1.5),
        json!(-0.5),
        json!(2.0),
        json!(255),
        json!(256),
        json!(-128),
        json!(-129),
        json!(i64::MIN),
        json!(i64::MAX),
        json!(i64::MAX as u64 + 1),
        json!(u64::MAX),
        json!(9.223372036854776e18),
        json!(-9.223372036854776e18),
        json!(1.8446744073709552e19),
        json!(1e300),
        json!(-1e300),
        json!(4294967295u32),
        json!(4294967296u64),
        json!(0.1),
    ]
}

/// Instances for `schema`: edge values, and random objects and arrays whose
/// keys are the schema's own property names (and one it does not name).
fn instances(schema: &Value, rng: &mut Rng, count: usize) -> Vec<Value> {
    let mut names = vec!["zzz".to_owned()];
    collect_names(schema, &mut names);
    let mut out = edge_numbers();
    out.extend([
        json!(null),
        json!(true),
        json!(false),
        json!(""),
        json!("a"),
        json!("héllo"),
        json!("ab"),
        json!("abcdefghijk"),
        json!("b"),
        json!([]),
        json!([1, 2]),
        json!({}),
    ]);
    for _ in 0..count {
        out.push(random_value(rng, &names, 3));
    }
    out
}

fn collect_names(schema: &Value, names: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::Object(properties)) = object.get("properties") {
                names.extend(properties.keys().cloned());
            }
            for value in object.values() {
                collect_names(value, names);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_names(v, names)),
        _ => {}
    }
}

fn random_value(rng: &mut Rng, names: &[String], depth: usize) -> Value {
    let scalars = edge_numbers();
    let pick = rng.below(if depth == 0 { 6 } else { 9 });
    match pick {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 0),
        2 | 3 => scalars[rng.below(scalars.len())].clone(),
        4 => json!(["", "a", "ab", "héllo", "red", "green", "abcdefghijk"][rng.below(7)]),
        5 => json!(rng.below(5)),
        6 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, names, depth - 1))
                .collect(),
        ),
        _ => {
            let mut object = serde_json::Map::new();
            for _ in 0..rng.below(5) {
                let name = names[rng.below(names.len())].clone();
                object.insert(name, random_value(rng, names, depth - 1));
            }
            Value::Object(object)
        }
    }
}

fn full(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::draft202012::options()
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Holds `SimpleSchema` to jsonschema on `schema`: when it compiles,
/// jsonschema compiles it too and both answer alike on many instances.
/// Returns whether it compiled.
fn agree(schema: &Value, seed: u64) -> bool {
    let Some(simple) = SimpleSchema::compile(schema) else {
        return false;
    };
    let validator = full(schema).unwrap_or_else(|e| {
        panic!("SimpleSchema took a schema jsonschema refuses ({e}): {schema}")
    });
    let mut rng = Rng(seed | 1);
    for instance in instances(schema, &mut rng, 3000) {
        let valid = simple.is_valid(&instance);
        assert_eq!(
            valid,
            validator.is_valid(&instance),
            "schema {schema}\ninstance {instance}"
        );
        text_agrees(&simple, &instance, valid);
    }
    true
}

/// Holds [`SimpleSchema::is_valid_text`] to `is_valid` on `instance`'s text:
/// the same answer (the text of a `Value` has no member twice), and, asked
/// to refuse integral floats, `true` only when valid and holding none.
fn text_agrees(simple: &SimpleSchema, instance: &Value, valid: bool) {
    let text = instance.to_string();
    assert_eq!(
        simple.is_valid_text(&text, false),
        valid,
        "text check, schema nodes {simple:?}\ninstance {text}"
    );
    let strict = simple.is_valid_text(&text, true);
    assert_eq!(
        strict,
        valid && !has_integral_float(instance),
        "text check refusing integral floats\ninstance {text}"
    );
    // The same text with its first member written twice is never taken.
    if let Some((name, value)) = instance.as_object().and_then(|o| o.iter().next()) {
        let twice = format!("{{{}:{value},{}", json!(name), &text[1..]);
        assert!(
            !simple.is_valid_text(&twice, false),
            "duplicate taken: {twice}"
        );
    }
}

fn has_integral_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_f64()
                && n.as_f64().is_some_and(|f| {
                    f.fract() == 0.0
                        && (-9_223_372_036_854_775_808.0..18_446_744_073_709_551_616.0).contains(&f)
                })
        }
        Value::Array(items) => items.iter().any(has_integral_float),
        Value::Object(members) => members.values().any(has_integral_float),
        _ => false,
    }
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Scalars {
    a: i64,
    b: u8,
    c: i32,
    d: u64,
    f: f64,
    flag: bool,
    name: String,
    maybe: Option<String>,
    count: Option<u32>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
enum Colour {
    Red,
    Green,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
enum Shape {
    Circle { radius: f64 },
    Square(u16),
    Dot,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Inner {
    x: i16,
    tags: Vec<String>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Nested {
    inner: Inner,
    maybe_inner: Option<Inner>,
    colour: Colour,
    shape: Shape,
    list: Vec<Inner>,
    map: HashMap<String, i32>,
    sorted: BTreeMap<String, Option<bool>>,
    any: Value,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Bounded {
    #[schemars(range(min = 1, max = 10))]
    small: u32,
    #[schemars(length(min = 2, max = 5))]
    word: String,
    #[schemars(length(min = 1))]
    items: Vec<u8>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Patterned {
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    word: String,
}

#[test]
fn derived_schemas_of_common_types_are_simple_and_agree() {
    let derived = [
        input_schema_for::<Scalars>(),
        input_schema_for::<Nested>(),
        input_schema_for::<Tree>(),
        input_schema_for::<Bounded>(),
    ];
    for (i, schema) in derived.iter().enumerate() {
        assert!(agree(schema, 7 + i as u64), "not simple: {schema}");
    }
}

#[test]
fn hand_written_schemas_at_each_keywords_edges_agree() {
    let simple = [
        json!(true),
        json!(false),
        json!({}),
        json!({"type": "integer"}),
        json!({"type": "number", "minimum": 1, "maximum": 2.5}),
        json!({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 255}),
        json!({"minimum": 0, "exclusiveMinimum": 0}),
        json!({"maximum": 1.5, "exclusiveMaximum": 2}),
        json!({"minimum": -9223372036854775808i64, "maximum": 9223372036854775807i64}),
        json!({"minimum": 0, "maximum": 18446744073709551615u64}),
        json!({"maximum": 9.223372036854776e18}),
        json!({"type": ["string", "null"], "minLength": 2, "maxLength": 5}),
        json!({"type": ["integer", "boolean"]}),
        json!({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2}),
        json!({"items": false}),
        json!({"enum": [1, "a", null, [1, 2], {"a": 1}]}),
        json!({"enum": []}),
        json!({"const": 1.0}),
        json!({"const": {"a": [1, {"b": null}]}}),
        json!({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 3}]}),
        json!({"oneOf": [{"type": "integer"}, {"type": "number", "maximum": 2}]}),
        json!({"allOf": [{"minimum": 0}, {"maximum": 1}]}),
        json!({"not": {"type": "string"}}),
        json!({"properties": {"a": {"type": "integer"}}, "required": ["a", "b"]}),
        json!({"properties": {"a": true}, "additionalProperties": {"type": "string"}}),
        json!({"type": "object", "additionalProperties": false, "required": []}),
        json!({
            "type": "object",
            "properties": {
                "p1": {"type": "integer"}, "p2": {}, "p3": {}, "p4": {}, "p5": {},
                "p6": {}, "p7": {}, "p8": {}, "p9": {"type": "string"}, "a": false
            },
            "required": ["p1", "p9"],
            "additionalProperties": false
        }),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {"N": {"type": "integer"}, "Unused": {"type": "string"}},
            "properties": {"a": {"$ref": "#/$defs/N", "minimum": 2}, "self": {"$ref": "#"}}
        }),
        json!({
            "title": "t", "description": "d", "default": 1, "examples": [1],
            "readOnly": false, "writeOnly": true, "deprecated": false,
            "$comment": "c", "format": "email", "type": "string"
        }),
    ];
    for (i, schema) in simple.iter().enumerate() {
        assert!(agree(schema, 100 + i as u64), "not simple: {schema}");
    }
}

#[test]
fn other_keywords_and_malformed_values_are_left_to_the_full_validator() {
    let not_simple = [
        input_schema_for::<Patterned>(),
        json!({"pattern": "^a"}),
        json!({"patternProperties": {"^a": {}}}),
        json!({"uniqueItems": true}),
        json!({"multipleOf": 2}),
        json!({"prefixItems": [{}]}),
        json!({"if": {}, "then": {}}),
        json!({"$ref": "https://example.com/schema"}),
        json!({"$ref": "#/$defs/Missing", "$defs": {}}),
        json!({"$ref": "#/$defs/a~1b", "$defs": {"a/b": {}}}),
        json!({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}),
        json!({"$ref": "#"}),
        json!({"anyOf": [{"$ref": "#"}]}),
        json!({"properties": {"a": {"$defs": {}}}}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
        json!({"properties": {"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}}),
        json!({"nullable": true}),
        json!({"type": "strng"}),
        json!({"type": []}),
        json!({"type": ["string", "string"]}),
        json!({"required": ["a", "a"]}),
        json!({"required": "a"}),
        json!({"anyOf": []}),
        json!({"minLength": -1}),
        json!({"minLength": 2.0}),
        json!({"minimum": "1"}),
        json!({"enum": 1}),
        json!({"title": 5}),
        json!({"properties": []}),
        json!(3),
    ];
    for schema in &not_simple {
        assert!(
            SimpleSchema::compile(schema).is_none(),
            "took a schema it should leave to jsonschema: {schema}"
        );
    }
    // The malformed ones are what the full validator refuses when the
    // server is built: nothing is lost by leaving them to it.
    for schema in [
        json!({"type": "strng"}),
        json!({"required": ["a", "a"]}),
        json!({"anyOf": []}),
    ] {
        assert!(full(&schema).is_err(), "jsonschema took {schema}");
    }
}

#[test]
fn a_self_referencing_type_is_checked_to_any_depth() {
    let schema = input_schema_for::<Tree>();
    let simple = SimpleSchema::compile(&schema).expect("a recursive struct is simple");
    let mut deep = json!({"label": "leaf", "children": []});
    for _ in 0..100 {
        deep = json!({"label": "node", "children": [deep]});
    }
    assert!(simple.is_valid(&deep));
    let mut bad = json!({"label": 1, "children": []});
    for _ in 0..100 {
        bad = json!({"label": "node", "children": [bad]});
    }
    assert!(!simple.is_valid(&bad));
}

#[test]
fn the_text_check_tells_a_repeated_name_among_many_and_finds_required_ones() {
    let schema = json!({
        "type": "object",
        "required": ["k999"],
        "additionalProperties": {"type": "string"}
    });
    let simple = SimpleSchema::compile(&schema).expect("simple");
    let members: Vec<String> = (0..1000).map(|i| format!("\"k{i}\":\"v\"")).collect();
    let text = format!("{{{}}}", members.join(","));
    assert!(simple.is_valid_text(&text, false));
    // The first name again, after a thousand others.
    let twice = format!("{{{},\"k0\":\"w\"}}", members.join(","));
    assert!(!simple.is_valid_text(&twice, false));
    // The required name missing.
    let missing = format!("{{{}}}", members[..999].join(","));
    assert!(!simple.is_valid_text(&missing, false));
    assert!(!simple.is_valid(&serde_json::from_str(&missing).unwrap()));
    // A member of the wrong type, past the short list.
    let wrong = format!("{{{},\"x\":1}}", members.join(","));
    assert!(!simple.is_valid_text(&wrong, false));
}
