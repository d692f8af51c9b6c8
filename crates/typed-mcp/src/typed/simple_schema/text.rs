//! [`SimpleSchema::is_valid_text`]: the same check, read straight from an
//! instance's JSON text, without building its `Value`.
//!
//! A call's arguments arrive as text; building a `Map<String, Value>` to
//! check and decode them (a hashed, ordered map and an allocation for every
//! member and string) costs more than the rest of the check and the decoding
//! together. Members are checked as the parser meets them; a subschema that
//! needs its instance more than once (`anyOf`, `allOf`, `oneOf`, `not`,
//! `enum`, `const`, a `$ref` beside other keywords) gets that member's
//! `Value`, and the `Value` check.
//!
//! The answer is `true` only when the `Value` check of the same text would
//! be `true` *and* the text holds nothing the caller's decoding treats
//! differently from a `Value`: a member name twice in one object (a `Map`
//! keeps the last) or, when asked, an integral float (which the arguments
//! path turns into an integer first). Otherwise it is `false`, and the caller
//! takes the `Value` path, which gives the complete answer.

use std::borrow::Cow;
use std::fmt;

use foldhash::HashSet;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::{Kind, Node, SimpleSchema};
use crate::typed::args::integer_of_float;

/// How a node reads an instance from text, decided once per schema.
#[derive(Debug, Clone, Copy)]
pub(super) enum Reading {
    /// Its own keywords, member by member.
    Stream,
    /// Only a `$ref`: as the node it names.
    Follow(usize),
    /// The instance's `Value`, then [`SimpleSchema::valid_at`].
    Whole,
}

impl SimpleSchema {
    /// How each node reads an instance from text (see [`Reading`]).
    pub(super) fn readings(nodes: &[Node]) -> Vec<Reading> {
        nodes
            .iter()
            .map(|node| {
                let applies_more_than_once = !node.all_of.is_empty()
                    || !node.any_of.is_empty()
                    || !node.one_of.is_empty()
                    || node.not.is_some()
                    || node.enumeration.is_some()
                    || node.constant.is_some();
                match node.reference {
                    _ if applies_more_than_once => Reading::Whole,
                    None => Reading::Stream,
                    Some(target) if is_only_a_reference(node) => Reading::Follow(target),
                    Some(_) => Reading::Whole,
                }
            })
            .collect()
    }

    /// Whether the JSON `text` is valid, as [`Self::is_valid`] of its parse
    /// says, and holds no member name twice in one object and, when
    /// `no_integral_floats`, no float with a zero fraction (see the module
    /// docs). `false` says only "take the `Value` path".
    pub(crate) fn is_valid_text(&self, text: &str, no_integral_floats: bool) -> bool {
        let mut de = serde_json::Deserializer::from_str(text);
        let check = Check {
            schema: self,
            node: Some(0),
            no_integral_floats,
        };
        // Serde's own recursion limit stays on: deeper text takes the `Value`
        // path, which has none.
        check.deserialize(&mut de).is_ok() && de.end().is_ok()
    }
}

/// Whether `node` says nothing but its `$ref`.
fn is_only_a_reference(node: &Node) -> bool {
    let Node {
        never,
        types,
        properties,
        required_elsewhere,
        required_count,
        additional,
        items,
        min_items,
        max_items,
        min_length,
        max_length,
        minimum,
        maximum,
        enumeration,
        constant,
        all_of,
        any_of,
        one_of,
        not,
        reference: _,
    } = node;
    !never
        && types.is_none()
        && properties.list.is_empty()
        && required_elsewhere.is_empty()
        && *required_count == 0
        && additional.is_none()
        && items.is_none()
        && min_items.is_none()
        && max_items.is_none()
        && min_length.is_none()
        && max_length.is_none()
        && minimum.is_none()
        && maximum.is_none()
        && enumeration.is_none()
        && constant.is_none()
        && all_of.is_empty()
        && any_of.is_empty()
        && one_of.is_empty()
        && not.is_none()
}

/// Checks one instance against one node (`None`: any instance is valid;
/// it is still read, for what the module docs say makes the answer `false`).
/// Its error means "not known valid": the parse stops there.
#[derive(Clone, Copy)]
struct Check<'s> {
    schema: &'s SimpleSchema,
    node: Option<usize>,
    no_integral_floats: bool,
}

impl Check<'_> {
    fn at(self, node: Option<usize>) -> Self {
        Check { node, ..self }
    }

    fn node(&self) -> Option<&Node> {
        self.node.map(|at| &self.schema.nodes[at])
    }

    fn admits(&self, kind: u8) -> bool {
        self.node()
            .is_none_or(|node| !node.never && node.types.is_none_or(|types| types & kind != 0))
    }

    /// A number against a streamed node: its type and bounds, as
    /// [`SimpleSchema::valid_at`] checks them (such a node has no other
    /// keyword about numbers).
    fn number<E: de::Error>(self, n: Number, integral: bool) -> Result<(), E> {
        let kind = Kind::Number as u8 | if integral { Kind::Integer as u8 } else { 0 };
        if !self.admits(kind) {
            return Err(refused());
        }
        match self.node() {
            Some(node) if !node.admits_number(&n) => Err(refused()),
            _ => Ok(()),
        }
    }

    /// `null` or a boolean against a streamed node: its type alone.
    fn scalar<E: de::Error>(self, kind: Kind) -> Result<(), E> {
        if self.admits(kind as u8) {
            Ok(())
        } else {
            Err(refused())
        }
    }
}

/// The error that stops the parse: not known valid.
fn refused<E: de::Error>() -> E {
    E::custom("not known valid")
}

/// Whether a float is one the arguments path turns into an integer.
fn is_integral(f: f64) -> bool {
    integer_of_float(f).is_some()
}

impl<'de> DeserializeSeed<'de> for Check<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let mut check = self;
        // A bare `$ref` is its target (in-place loops were refused when the
        // schema compiled, so this ends).
        while let Some(at) = check.node {
            match check.schema.readings[at] {
                Reading::Follow(target) => check.node = Some(target),
                Reading::Stream => break,
                Reading::Whole => {
                    let value = Strict {
                        no_integral_floats: check.no_integral_floats,
                    }
                    .deserialize(deserializer)?;
                    return match check.schema.valid_at(at, &value) {
                        true => Ok(()),
                        false => Err(refused()),
                    };
                }
            }
        }
        deserializer.deserialize_any(check)
    }
}

/// Reads a `Value`, refusing what [`Check`] refuses besides validity: a
/// member name twice in one object, and (when asked) an integral float.
#[derive(Clone, Copy)]
struct Strict {
    no_integral_floats: bool,
}

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        if self.no_integral_floats && is_integral(v) {
            return Err(refused());
        }
        Number::from_f64(v).map(Value::Number).ok_or_else(refused)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            if members.insert(name, value).is_some() {
                return Err(refused());
            }
        }
        Ok(Value::Object(members))
    }
}

impl<'de> Visitor<'de> for Check<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.scalar(Kind::Boolean)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar(Kind::Null)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.number(Number::from(v), true)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.number(Number::from(v), true)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        if self.no_integral_floats && is_integral(v) {
            return Err(refused());
        }
        match Number::from_f64(v) {
            Some(n) => self.number(n, v.fract() == 0.0),
            None => Err(refused()),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        if !self.admits(Kind::String as u8) {
            return Err(refused());
        }
        match self.node() {
            Some(node) if !node.admits_length(v) => Err(refused()),
            _ => Ok(()),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if !self.admits(Kind::Array as u8) {
            return Err(refused());
        }
        let node = self.node();
        let item = self.at(node.and_then(|n| n.items));
        let mut len = 0;
        while seq.next_element_seed(item)?.is_some() {
            len += 1;
        }
        if node.is_some_and(|node| !node.admits_count(len)) {
            return Err(refused());
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if !self.admits(Kind::Object as u8) {
            return Err(refused());
        }
        let node = self.node();
        let named = node.map_or(0, |n| n.properties.list.len());
        // Which named properties were seen (a bit each, for the common small
        // object), and the other names: a name seen twice stops the check.
        let mut seen_bits: u64 = 0;
        let mut seen_named = if named > 64 {
            vec![false; named]
        } else {
            Vec::new()
        };
        let mut others = Names::default();
        let mut required_seen = 0;
        while let Some(Name(name)) = map.next_key()? {
            let found = node.and_then(|n| Some((n, n.properties.locate(&name)?)));
            let (member, required) = match found {
                Some((node, at)) => {
                    let (_, schema, required) = node.properties.list[at];
                    let again = if named > 64 {
                        std::mem::replace(&mut seen_named[at], true)
                    } else {
                        let bit = 1u64 << at;
                        let again = seen_bits & bit != 0;
                        seen_bits |= bit;
                        again
                    };
                    if again {
                        return Err(refused());
                    }
                    (Some(schema), required)
                }
                None => {
                    if !others.insert(name) {
                        return Err(refused());
                    }
                    (node.and_then(|n| n.additional), false)
                }
            };
            required_seen += usize::from(required);
            map.next_value_seed(self.at(member))?;
        }
        if let Some(node) = node
            && (required_seen != node.required_count
                || !node
                    .required_elsewhere
                    .iter()
                    .all(|name| others.contains(name)))
        {
            return Err(refused());
        }
        Ok(())
    }
}

/// The names of an object's members that are not among its schema's
/// `properties`: a list while short, a set beyond that, so a map argument
/// with many keys costs no more than its parse.
#[derive(Default)]
struct Names<'de> {
    list: Vec<Cow<'de, str>>,
    set: Option<HashSet<Cow<'de, str>>>,
}

impl<'de> Names<'de> {
    /// Above this many names, they move to the set.
    const LISTED: usize = 16;

    /// Adds `name`; `false` when it was there already.
    fn insert(&mut self, name: Cow<'de, str>) -> bool {
        if let Some(set) = &mut self.set {
            return set.insert(name);
        }
        if self.list.contains(&name) {
            return false;
        }
        self.list.push(name);
        if self.list.len() > Self::LISTED {
            self.set = Some(self.list.drain(..).collect());
        }
        true
    }

    fn contains(&self, name: &str) -> bool {
        match &self.set {
            Some(set) => set.contains(name),
            None => self.list.iter().any(|listed| listed == name),
        }
    }
}

/// A member name, borrowed from the text unless it holds an escape.
struct Name<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> Visitor<'de> for NameVisitor {
            type Value = Name<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(v)))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}
