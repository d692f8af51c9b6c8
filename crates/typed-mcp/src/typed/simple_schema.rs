//! A yes/no validity check for input schemas made of the common keywords,
//! so a call with valid arguments never runs jsonschema.
//!
//! Most tools take scalars, strings, lists, options, enums and plain structs,
//! whose derived schemas use a handful of keywords (`type`, `properties`,
//! `required`, `additionalProperties`, `items`, bounds, `enum`, `anyOf`,
//! local `$ref`s). [`SimpleSchema::compile`] accepts exactly such a schema
//! (and refuses, with `None`, any schema using another keyword, or a keyword
//! value the draft 2020-12 meta-schema would refuse); its
//! [`is_valid`](SimpleSchema::is_valid) then answers as jsonschema's
//! `is_valid` does. A tool whose schema compiles here builds no jsonschema
//! validator until a call's arguments are refused, when the full validator
//! is compiled to report every problem: the validator's code (about half of
//! a small server's resident program text) and its compilation (most of the
//! instructions from start to first answer) are spent only when needed.
//!
//! Tests hold it to jsonschema: `tests` here compares both on schemas and
//! instances around every keyword's edges, and the `simple_schema` fuzz
//! target compares them on arbitrary input.

use std::cmp::Ordering;

use foldhash::HashMap;
use serde_json::{Map, Number, Value};

/// A schema compiled for [`SimpleSchema::is_valid`]: its nodes in one list,
/// the root first, `$ref`s as indexes into it (so recursive types compile).
#[derive(Debug)]
pub(crate) struct SimpleSchema {
    nodes: Vec<Node>,
    /// How each node reads an instance from text ([`Self::is_valid_text`]).
    readings: Vec<text::Reading>,
}

/// One (sub)schema.
#[derive(Debug, Default)]
struct Node {
    /// `false` schema (or an unsatisfiable one): nothing is valid.
    never: bool,
    /// The allowed JSON types, as a bit set of [`Kind`]s; `None` for any.
    types: Option<u8>,
    properties: Properties,
    /// Required names that are not among `properties`.
    required_elsewhere: Vec<String>,
    /// How many properties are required (each marked in `properties`).
    required_count: usize,
    /// The schema of members not named in `properties`.
    additional: Option<usize>,
    items: Option<usize>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    minimum: Option<Bound>,
    maximum: Option<Bound>,
    enumeration: Option<Vec<Value>>,
    constant: Option<Value>,
    all_of: Vec<usize>,
    any_of: Vec<usize>,
    one_of: Vec<usize>,
    not: Option<usize>,
    reference: Option<usize>,
}

impl Node {
    /// Whether an array of `len` items is within `minItems`/`maxItems`.
    fn admits_count(&self, len: usize) -> bool {
        let len = len as u64;
        !(self.min_items.is_some_and(|min| len < min)
            || self.max_items.is_some_and(|max| len > max))
    }

    /// Whether a string is within `minLength`/`maxLength`, which count
    /// characters (code points), not bytes.
    fn admits_length(&self, text: &str) -> bool {
        if self.min_length.is_none() && self.max_length.is_none() {
            return true;
        }
        let len = text.chars().count() as u64;
        !(self.min_length.is_some_and(|min| len < min)
            || self.max_length.is_some_and(|max| len > max))
    }

    /// Whether a number is within the bounds.
    fn admits_number(&self, n: &Number) -> bool {
        if let Some(min) = &self.minimum {
            let order = compare(n, &min.limit);
            if order == Ordering::Less || (min.exclusive && order == Ordering::Equal) {
                return false;
            }
        }
        if let Some(max) = &self.maximum {
            let order = compare(n, &max.limit);
            if order == Ordering::Greater || (max.exclusive && order == Ordering::Equal) {
                return false;
            }
        }
        true
    }

    /// The nodes that apply to the same instance as this one.
    fn in_place(&self) -> impl Iterator<Item = usize> + '_ {
        self.reference
            .iter()
            .chain(&self.all_of)
            .chain(&self.any_of)
            .chain(&self.one_of)
            .chain(&self.not)
            .copied()
    }
}

/// A numeric bound; `exclusive` for `exclusiveMinimum`/`exclusiveMaximum`.
#[derive(Debug, Clone)]
struct Bound {
    limit: Number,
    exclusive: bool,
}

/// The named properties of an object schema, with whether each is required.
#[derive(Debug, Default)]
struct Properties {
    list: Vec<(String, usize, bool)>,
    /// An index by name, for objects with many properties.
    index: Option<HashMap<String, usize>>,
}

/// Above this many properties, a member's schema is found through a map.
const LINEAR_PROPERTIES: usize = 8;

impl Properties {
    fn find(&self, name: &str) -> Option<(usize, bool)> {
        let (_, node, required) = &self.list[self.locate(name)?];
        Some((*node, *required))
    }

    /// The position of `name` in `list`.
    fn locate(&self, name: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.list.iter().position(|(n, _, _)| n == name),
        }
    }
}

/// The seven JSON Schema types, as bits.
#[derive(Clone, Copy)]
enum Kind {
    Null = 1,
    Boolean = 2,
    Object = 4,
    Array = 8,
    Number = 16,
    String = 32,
    Integer = 64,
}

impl Kind {
    fn named(name: &str) -> Option<Kind> {
        Some(match name {
            "null" => Kind::Null,
            "boolean" => Kind::Boolean,
            "object" => Kind::Object,
            "array" => Kind::Array,
            "number" => Kind::Number,
            "string" => Kind::String,
            "integer" => Kind::Integer,
            _ => return None,
        })
    }
}

/// Keywords that never change validity here, with the JSON type the
/// meta-schema requires of their value (`None`: any value).
const ANNOTATIONS: &[(&str, Option<Kind>)] = &[
    ("$comment", Some(Kind::String)),
    ("title", Some(Kind::String)),
    ("description", Some(Kind::String)),
    ("default", None),
    ("examples", Some(Kind::Array)),
    ("readOnly", Some(Kind::Boolean)),
    ("writeOnly", Some(Kind::Boolean)),
    ("deprecated", Some(Kind::Boolean)),
    // Draft 2020-12 validators do not assert `format` unless asked, and
    // typed-mcp does not ask.
    ("format", Some(Kind::String)),
];

/// The meta-schema a derived schema names.
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// The schema `$ref: "#"` and the `$defs` of the root.
struct Compiler<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    /// `$defs` names already given a node.
    defined: HashMap<&'s str, usize>,
}

impl SimpleSchema {
    /// The schema compiled, or `None` when it uses anything beyond the
    /// common keywords (the full validator is then used, and compiled when
    /// the server is built).
    pub(crate) fn compile(schema: &Value) -> Option<SimpleSchema> {
        let mut compiler = Compiler {
            root: schema,
            nodes: Vec::new(),
            defined: HashMap::default(),
        };
        // The root is node 0, so `$ref: "#"` can name it before it is filled.
        let root = compiler.reserve();
        if let Some(defs) = schema.get("$defs") {
            // Every definition is checked, referenced or not: the meta-schema
            // checks them all.
            for (name, def) in defs.as_object()? {
                compiler.definition(name, def)?;
            }
        }
        compiler.fill(root, schema, true)?;
        let compiled = SimpleSchema {
            readings: SimpleSchema::readings(&compiler.nodes),
            nodes: compiler.nodes,
        };
        // A `$ref` loop that reads no deeper into the instance would never
        // end: left to the full validator.
        (!compiled.loops_in_place()).then_some(compiled)
    }

    /// Whether some node reaches itself through `$ref`s and applicators
    /// alone (edges that stay at the same instance).
    fn loops_in_place(&self) -> bool {
        // 0: not seen, 1: on the current path, 2: done.
        let mut state = vec![0u8; self.nodes.len()];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for start in 0..self.nodes.len() {
            if state[start] != 0 {
                continue;
            }
            state[start] = 1;
            stack.push((start, 0));
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                match self.nodes[node].in_place().nth(*next) {
                    Some(child) => {
                        *next += 1;
                        match state[child] {
                            0 => {
                                state[child] = 1;
                                stack.push((child, 0));
                            }
                            1 => return true,
                            _ => {}
                        }
                    }
                    None => {
                        state[node] = 2;
                        stack.pop();
                    }
                }
            }
        }
        false
    }

    /// Whether `instance` is valid against the schema, as jsonschema's
    /// `is_valid` would say.
    pub(crate) fn is_valid(&self, instance: &Value) -> bool {
        self.valid_at(0, instance)
    }

    fn valid_at(&self, node: usize, instance: &Value) -> bool {
        let node = &self.nodes[node];
        if node.never {
            return false;
        }
        if let Some(types) = node.types
            && !has_type(types, instance)
        {
            return false;
        }
        if let Some(reference) = node.reference
            && !self.valid_at(reference, instance)
        {
            return false;
        }
        match instance {
            Value::Object(members) => {
                if !self.valid_object(node, members) {
                    return false;
                }
            }
            Value::Array(items) => {
                if !node.admits_count(items.len()) {
                    return false;
                }
                if let Some(schema) = node.items
                    && !items.iter().all(|item| self.valid_at(schema, item))
                {
                    return false;
                }
            }
            Value::String(text) => {
                if !node.admits_length(text) {
                    return false;
                }
            }
            Value::Number(n) => {
                if !node.admits_number(n) {
                    return false;
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
        if let Some(allowed) = &node.enumeration
            && !allowed.iter().any(|a| json_equal(a, instance))
        {
            return false;
        }
        if let Some(constant) = &node.constant
            && !json_equal(constant, instance)
        {
            return false;
        }
        if !node.all_of.iter().all(|&s| self.valid_at(s, instance)) {
            return false;
        }
        if !node.any_of.is_empty() && !node.any_of.iter().any(|&s| self.valid_at(s, instance)) {
            return false;
        }
        if !node.one_of.is_empty()
            && node
                .one_of
                .iter()
                .filter(|&&s| self.valid_at(s, instance))
                .take(2)
                .count()
                != 1
        {
            return false;
        }
        if let Some(not) = node.not
            && self.valid_at(not, instance)
        {
            return false;
        }
        true
    }

    fn valid_object(&self, node: &Node, members: &Map<String, Value>) -> bool {
        let mut required_seen = 0;
        for (name, value) in members {
            match node.properties.find(name) {
                Some((schema, required)) => {
                    required_seen += usize::from(required);
                    if !self.valid_at(schema, value) {
                        return false;
                    }
                }
                None => {
                    if let Some(additional) = node.additional
                        && !self.valid_at(additional, value)
                    {
                        return false;
                    }
                }
            }
        }
        // Member names are unique, so counting the required ones seen is
        // enough.
        required_seen == node.required_count
            && node
                .required_elsewhere
                .iter()
                .all(|name| members.contains_key(name))
    }
}

impl<'s> Compiler<'s> {
    fn reserve(&mut self) -> usize {
        self.nodes.push(Node::default());
        self.nodes.len() - 1
    }

    /// The node of `$defs/name`, compiling it on first use.
    fn definition(&mut self, name: &'s str, def: &'s Value) -> Option<usize> {
        if let Some(&node) = self.defined.get(name) {
            return Some(node);
        }
        let node = self.reserve();
        self.defined.insert(name, node);
        self.fill(node, def, false)?;
        Some(node)
    }

    /// The node of a subschema.
    fn subschema(&mut self, schema: &'s Value) -> Option<usize> {
        let node = self.reserve();
        self.fill(node, schema, false)?;
        Some(node)
    }

    /// Compiles `schema` into node `at`; `None` when it is not simple.
    fn fill(&mut self, at: usize, schema: &'s Value, is_root: bool) -> Option<()> {
        let object = match schema {
            Value::Bool(true) => return Some(()),
            Value::Bool(false) => {
                self.nodes[at].never = true;
                return Some(());
            }
            Value::Object(object) => object,
            _ => return None,
        };
        let mut node = Node::default();
        let mut required: Vec<&str> = Vec::new();
        let mut properties: Vec<(&'s str, &'s Value)> = Vec::new();
        for (keyword, value) in object {
            match keyword.as_str() {
                "type" => node.types = Some(types(value)?),
                "properties" => {
                    properties = value
                        .as_object()?
                        .iter()
                        .map(|(name, schema)| (name.as_str(), schema))
                        .collect();
                }
                "required" => {
                    for name in value.as_array()? {
                        let name = name.as_str()?;
                        // The meta-schema wants the names unique.
                        if required.contains(&name) {
                            return None;
                        }
                        required.push(name);
                    }
                }
                "additionalProperties" => node.additional = Some(self.subschema(value)?),
                "items" => node.items = Some(self.subschema(value)?),
                // Counts are non-negative integers; an integral float (`2.0`)
                // is left to the full validator.
                "minItems" => node.min_items = Some(value.as_u64()?),
                "maxItems" => node.max_items = Some(value.as_u64()?),
                "minLength" => node.min_length = Some(value.as_u64()?),
                "maxLength" => node.max_length = Some(value.as_u64()?),
                "minimum" | "exclusiveMinimum" | "maximum" | "exclusiveMaximum" => {
                    let bound = Bound {
                        limit: value.as_number()?.clone(),
                        exclusive: keyword.starts_with("exclusive"),
                    };
                    let slot = if keyword.ends_with("inimum") {
                        &mut node.minimum
                    } else {
                        &mut node.maximum
                    };
                    // Both spellings of one side at once: kept as two checks
                    // would be, by the stricter of them.
                    *slot = Some(match slot.take() {
                        None => bound,
                        Some(other) => stricter(other, bound, keyword.ends_with("inimum")),
                    });
                }
                "enum" => node.enumeration = Some(value.as_array()?.clone()),
                "const" => node.constant = Some(value.clone()),
                "allOf" | "anyOf" | "oneOf" => {
                    let branches = value.as_array()?;
                    // The meta-schema wants at least one branch.
                    if branches.is_empty() {
                        return None;
                    }
                    let mut compiled = Vec::with_capacity(branches.len());
                    for branch in branches {
                        compiled.push(self.subschema(branch)?);
                    }
                    match keyword.as_str() {
                        "allOf" => node.all_of = compiled,
                        "anyOf" => node.any_of = compiled,
                        _ => node.one_of = compiled,
                    }
                }
                "not" => node.not = Some(self.subschema(value)?),
                "$ref" => node.reference = Some(self.reference(value.as_str()?)?),
                // Compiled before the root (see `compile`); a `$defs` below
                // the root is not simple (a `$ref` resolves against the root).
                "$defs" if is_root => {}
                // Any other meta-schema (or one named below the root) is the
                // full validator's to resolve.
                "$schema" if is_root && value == DRAFT_2020_12 => {}
                other => {
                    let (_, kind) = ANNOTATIONS.iter().find(|(name, _)| *name == other)?;
                    if let Some(kind) = kind
                        && !has_type(*kind as u8, value)
                    {
                        return None;
                    }
                }
            }
        }
        let mut list = Vec::with_capacity(properties.len());
        for (name, schema) in properties {
            let required = required.contains(&name);
            node.required_count += usize::from(required);
            list.push((name.to_owned(), self.subschema(schema)?, required));
        }
        node.required_elsewhere = required
            .iter()
            .filter(|name| !list.iter().any(|(n, _, _)| n == *name))
            .map(|name| (*name).to_owned())
            .collect();
        let index = (list.len() > LINEAR_PROPERTIES).then(|| {
            list.iter()
                .enumerate()
                .map(|(i, (name, _, _))| (name.clone(), i))
                .collect()
        });
        node.properties = Properties { list, index };
        self.nodes[at] = node;
        Some(())
    }

    /// `#` (the root) or `#/$defs/Name`; anything else is not simple.
    fn reference(&mut self, target: &str) -> Option<usize> {
        if target == "#" {
            return Some(0);
        }
        let name = target.strip_prefix("#/$defs/")?;
        // A pointer's escapes and a URI's percent-encoding are left to the
        // full validator.
        if name.contains(['~', '%', '/']) {
            return None;
        }
        let (name, def) = self.root.get("$defs")?.as_object()?.get_key_value(name)?;
        self.definition(name.as_str(), def)
    }
}

/// `type`: one name or a list of unique names.
fn types(value: &Value) -> Option<u8> {
    match value {
        Value::String(name) => Some(Kind::named(name)? as u8),
        Value::Array(names) => {
            if names.is_empty() {
                return None;
            }
            let mut set = 0u8;
            for name in names {
                let bit = Kind::named(name.as_str()?)? as u8;
                if set & bit != 0 {
                    return None;
                }
                set |= bit;
            }
            Some(set)
        }
        _ => None,
    }
}

/// Of two bounds on one side, the one that refuses more.
fn stricter(a: Bound, b: Bound, lower: bool) -> Bound {
    match compare(&a.limit, &b.limit) {
        Ordering::Equal => Bound {
            exclusive: a.exclusive || b.exclusive,
            ..a
        },
        Ordering::Greater if lower => a,
        Ordering::Less if !lower => a,
        _ => b,
    }
}

fn has_type(types: u8, value: &Value) -> bool {
    let kind = match value {
        Value::Null => Kind::Null as u8,
        Value::Bool(_) => Kind::Boolean as u8,
        Value::Object(_) => Kind::Object as u8,
        Value::Array(_) => Kind::Array as u8,
        Value::String(_) => Kind::String as u8,
        // Every number is a `number`; an integral one is an `integer` too.
        Value::Number(n) => {
            let integral = n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
            Kind::Number as u8 | if integral { Kind::Integer as u8 } else { 0 }
        }
    };
    types & kind != 0
}

/// The exact order of two JSON numbers (integers of either sign and width,
/// and floats, compared by value).
fn compare(a: &Number, b: &Number) -> Ordering {
    match (integer(a), integer(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(x), None) => compare_float(b.as_f64().unwrap_or(f64::NAN), x).reverse(),
        (None, Some(y)) => compare_float(a.as_f64().unwrap_or(f64::NAN), y),
        (None, None) => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

fn integer(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// A float against an integer, exactly (no rounding of the integer).
fn compare_float(f: f64, i: i128) -> Ordering {
    // JSON has no NaN or infinities; out of i128's range is out of range
    // of every integer compared here.
    const TWO_127: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0;
    if f >= TWO_127 {
        return Ordering::Greater;
    }
    if f < -TWO_127 {
        return Ordering::Less;
    }
    let floor = f.floor();
    // Integral and within range: the conversion is exact.
    match (floor as i128).cmp(&i) {
        Ordering::Equal if f > floor => Ordering::Greater,
        order => order,
    }
}

/// JSON equality as JSON Schema has it (`enum`, `const`): numbers by value,
/// objects regardless of member order.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// For the `simple_schema` fuzz target (built with `--cfg fuzzing` only):
/// `None` when `schema` is not simple; else, for each instance, this
/// module's answer beside jsonschema's (which must be equal), or jsonschema's
/// refusal of the schema (which must not happen). The check read from text
/// ([`SimpleSchema::is_valid_text`]) is held to this module's answer here.
#[cfg(fuzzing)]
pub fn beside_full(
    schema: &Value,
    instances: &[Value],
) -> Option<Result<Vec<(bool, bool)>, String>> {
    let simple = SimpleSchema::compile(schema)?;
    let full = match jsonschema::draft202012::options().build(schema) {
        Ok(full) => full,
        Err(e) => return Some(Err(e.to_string())),
    };
    Some(Ok(instances
        .iter()
        .map(|i| {
            let valid = simple.is_valid(i);
            // The check read from text says the same of the instance's text
            // (which holds no member twice).
            let text = i.to_string();
            assert_eq!(
                simple.is_valid_text(&text, false),
                valid,
                "the text check disagrees on {text}"
            );
            (valid, full.is_valid(i))
        })
        .collect()))
}

mod text;

#[cfg(test)]
mod tests;
