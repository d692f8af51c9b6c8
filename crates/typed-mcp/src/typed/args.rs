//! Complete argument errors: arguments are validated against the derived input
//! schema before they are decoded, and every problem is reported at once, by
//! JSON path, in a stable order.
//!
//! A schema made of the common keywords is checked by
//! [`SimpleSchema`](super::simple_schema::SimpleSchema), which only answers
//! valid or not; jsonschema's validator, which names every problem, is then
//! compiled when a call's arguments are first refused. Any other schema gets
//! jsonschema's validator when the server is built, so a schema that does not
//! compile is refused then.
//!
//! Named validators (rules JSON Schema cannot express) run after decoding: a
//! parameter whose type implements `garde::Validate` (feature `garde`, with a `Default`
//! context) is decoded on its own and validated, and its failures join the
//! same report, with the keyword `validator`. A parameter the schema refused
//! is not validated (its value may not decode); every other parameter is, so
//! one report lists the schema problems of some arguments and the validator
//! problems of the others. The whole arguments object is decoded only when
//! the schema accepted it; a decoding error then joins the validator problems.
//!
//! The report never includes the value of a secret argument (one whose schema
//! is `writeOnly`, such as a [`Secret`](crate::secret::Secret)): a problem at
//! or under a secret is reported at the secret's own path with a message that
//! names no value; in a tool with secrets, messages that would quote a value
//! name it "the value" instead; and a decoding error is scrubbed of every
//! secret value the arguments hold.

use std::marker::PhantomData;
use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError, Validator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use typed_mcp_core::wire::{CallToolResult, ResultMeta};
use zeroize::Zeroize;

use super::schema;
use super::simple_schema::SimpleSchema;
use crate::secret::Redactor;

/// The result `_meta` key under which the machine-readable list of argument
/// problems travels (never in `structuredContent`).
pub const ARGUMENT_ERRORS_META_KEY: &str = "rs.typed-mcp/argumentErrors";

/// One problem with one argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ArgumentProblem {
    /// Where, as a readable path (`limit`, `filters.tags[2]`); empty for the
    /// arguments object itself.
    pub path: String,
    /// The JSON Schema keyword that failed (`type`, `required`, `minimum`...).
    pub keyword: String,
    /// What is wrong, for a model to read.
    pub message: String,
}

/// What a problem at or under a secret says when its usual message could
/// describe the value.
const SECRET_VALUE_INVALID: &str = "the value is not valid (it is secret, so it is not shown)";

/// What a decoding error says when it could not be scrubbed of secrets.
const DECODE_WITHHELD: &str =
    "the arguments were refused while decoding (details withheld: they could quote a secret)";

/// Validates arguments against one tool's input schema.
#[derive(Debug)]
pub(crate) struct ArgumentValidator {
    /// The validity check of a schema made of the common keywords; `None`
    /// for any other schema, whose `full` validator is compiled at once.
    simple: Option<SimpleSchema>,
    /// jsonschema's validator, which reports every problem: compiled when
    /// the validator is made, or, for a simple schema, when a call's
    /// arguments are first refused.
    full: OnceLock<Result<Validator, String>>,
    /// The input schema, kept while `full` may still need compiling or when
    /// it has secret (`writeOnly`) parts.
    schema: Option<Value>,
    /// Whether the schema has secret parts (see [`Self::secrets`]).
    has_secrets: bool,
    /// Whether the schema has an integer anywhere: only then can an integral
    /// float need turning into an integer (decided once, not per call).
    has_integers: bool,
}

impl ArgumentValidator {
    /// Compiles the validator for a derived input schema. Derived schemas always
    /// compile; a failure is a bug in the schema generator and is reported as such.
    ///
    /// A schema [`SimpleSchema`] accepts is one jsonschema compiles too (its
    /// tests hold it to that), so its full validator waits for the first
    /// call whose arguments it refuses.
    pub(crate) fn new(schema: &Value) -> Result<Self, String> {
        let has_secrets = schema::has_secrets(schema);
        let has_integers = names_integer_type(schema);
        let simple = SimpleSchema::compile(schema);
        let full = OnceLock::new();
        if simple.is_none() {
            let _ = full.set(Ok(compile_full(schema)?));
        }
        Ok(ArgumentValidator {
            schema: (simple.is_some() || has_secrets).then(|| schema.clone()),
            simple,
            full,
            has_secrets,
            has_integers,
        })
    }

    /// The input schema when it has secret parts.
    fn secrets(&self) -> Option<&Value> {
        self.schema.as_ref().filter(|_| self.has_secrets)
    }

    /// The full validator, compiled on first use for a simple schema.
    fn full(&self) -> Result<&Validator, &str> {
        let compiled = self.full.get_or_init(|| match &self.schema {
            Some(schema) => compile_full(schema).inspect_err(|e| {
                tracing::error!(error = %e, "a simple input schema did not compile as a full validator");
            }),
            None => Err("the input schema was not kept".to_owned()),
        });
        compiled.as_ref().map_err(String::as_str)
    }

    /// Whether `arguments` are valid, without building any error.
    fn is_valid(&self, arguments: &Value) -> bool {
        match &self.simple {
            Some(simple) => simple.is_valid(arguments),
            None => self.full().is_ok_and(|full| full.is_valid(arguments)),
        }
    }

    /// Arguments given as JSON text, decoded straight from it when the
    /// schema is simple and has no secret part and the text is valid by
    /// [`SimpleSchema::is_valid_text`]: the value [`Self::decode`] of the
    /// text's parse would give (with no named validators). `None` says only
    /// "take that path", which then gives the value or every problem.
    pub(crate) fn decode_text<A: DeserializeOwned>(&self, text: &str) -> Option<A> {
        let simple = self.simple.as_ref().filter(|_| !self.has_secrets)?;
        // Integral floats become integers on the `Value` path; text holding
        // one takes it.
        if !simple.is_valid_text(text, self.has_integers) {
            return None;
        }
        // Serde's recursion limit is on: deeper arguments decode on the
        // `Value` path, which has none.
        serde_json::from_str(text).ok()
    }

    /// Every problem with `arguments`, sorted by path then keyword; empty when
    /// they are valid. No message includes the value of a secret argument.
    pub(crate) fn problems(&self, arguments: &Value) -> Vec<ArgumentProblem> {
        let mut problems = Vec::new();
        let full = match self.full() {
            Ok(full) => full,
            Err(reason) => {
                return vec![problem(
                    "",
                    "schema",
                    format!("the input schema does not compile: {reason}"),
                )];
            }
        };
        for error in full.iter_errors(arguments) {
            self.collect(&error, &mut problems);
        }
        problems.sort_by(|a, b| (&a.path, &a.keyword).cmp(&(&b.path, &b.keyword)));
        problems.dedup();
        problems
    }

    /// Validates `arguments` and decodes them as `A`: the decoded value, or
    /// every problem (see [`ArgumentValidator::problems`]). A decoding error
    /// (the schema accepted what the type refused, as a custom `Deserialize`
    /// may) is one problem at the arguments object, with no secret value in
    /// its message.
    ///
    /// The named validators `checks` run too (see the module documentation):
    /// every schema, validator and decoding problem in one list, sorted by
    /// path then keyword.
    pub(crate) fn decode<A: DeserializeOwned>(
        &self,
        mut arguments: Value,
        checks: &[ArgumentCheck],
    ) -> Result<A, Vec<ArgumentProblem>> {
        if self.has_integers {
            integral_floats_as_integers(&mut arguments);
        }
        // Valid arguments (the common case) are told by a pass that builds
        // no error; only invalid ones are walked again for every problem.
        let mut problems = if self.is_valid(&arguments) {
            Vec::new()
        } else {
            self.problems(&arguments)
        };
        let mut failed = self.run_checks(&arguments, checks, &problems);
        if !problems.is_empty() {
            problems.append(&mut failed);
            problems.sort_by(|a, b| (&a.path, &a.keyword).cmp(&(&b.path, &b.keyword)));
            return Err(problems);
        }
        match self.decode_valid::<A>(arguments) {
            Ok(decoded) if failed.is_empty() => Ok(decoded),
            Ok(_) => Err(failed),
            Err(mut refused) => {
                failed.append(&mut refused);
                failed.sort_by(|a, b| (&a.path, &a.keyword).cmp(&(&b.path, &b.keyword)));
                Err(failed)
            }
        }
    }

    /// The failures of the named validators of every argument that is present
    /// and has no problem in `schema_problems`, sorted by path. A failure at
    /// or under a secret names no value.
    fn run_checks(
        &self,
        arguments: &Value,
        checks: &[ArgumentCheck],
        schema_problems: &[ArgumentProblem],
    ) -> Vec<ArgumentProblem> {
        let mut out = Vec::new();
        for check in checks {
            let Some(value) = arguments.get(check.name) else {
                continue;
            };
            let refused = schema_problems
                .iter()
                .any(|p| is_at_or_under(&p.path, check.name));
            if refused {
                continue;
            }
            for (under, message) in (check.check)(value) {
                let path = if under.is_empty() {
                    check.name.to_owned()
                } else if under.starts_with('[') {
                    format!("{}{under}", check.name)
                } else {
                    format!("{}.{under}", check.name)
                };
                let segments = path_segments(&path);
                let problem = match self.secret_prefix(&segments) {
                    Some(depth) => ArgumentProblem {
                        path: segments_to_path(&segments[..depth]),
                        keyword: VALIDATOR_KEYWORD.into(),
                        message: SECRET_VALUE_INVALID.into(),
                    },
                    None => ArgumentProblem {
                        path,
                        keyword: VALIDATOR_KEYWORD.into(),
                        message,
                    },
                };
                out.push(problem);
            }
        }
        out.sort_by(|a, b| (&a.path, &a.keyword).cmp(&(&b.path, &b.keyword)));
        out.dedup();
        out
    }

    /// Decodes arguments the schema accepted.
    fn decode_valid<A: DeserializeOwned>(
        &self,
        arguments: Value,
    ) -> Result<A, Vec<ArgumentProblem>> {
        let Some(root) = self.secrets() else {
            return serde_json::from_value(arguments)
                .map_err(|e| vec![decode_problem(e.to_string())]);
        };
        // Decoded from a borrow, so that on failure the secret values are still
        // there to scrub from the message; then every string is wiped, as
        // moving them into `Secret`s would have done.
        let mut arguments = arguments;
        let decoded = A::deserialize(&arguments).map_err(|e| {
            let mut values = Vec::new();
            let complete = schema::secret_values(root, &arguments, &mut values);
            let redactor = Redactor::for_values(values).filter(|_| complete);
            let message = match redactor {
                Some(redactor) => redactor.redact_str(&e.to_string()).into_owned(),
                None => DECODE_WITHHELD.to_owned(),
            };
            vec![decode_problem(message)]
        });
        wipe_strings(&mut arguments);
        decoded
    }

    /// How many leading segments of `segments` lead to a secret, if any.
    fn secret_prefix(&self, segments: &[String]) -> Option<usize> {
        schema::secret_prefix(self.secrets()?, segments)
    }

    /// Adds the problems one validation error stands for. A failed
    /// `anyOf`/`oneOf` (such as the nullable union of an `Option<T>`) is
    /// replaced by the errors of the one branch whose type matched, so the
    /// model reads `filter.tag: expected a string` rather than "not valid
    /// under any of the schemas".
    fn collect(&self, error: &ValidationError<'_>, out: &mut Vec<ArgumentProblem>) {
        let at = error.instance_path().to_string();
        let segments = segments(&at);
        let recurse = |inner: &ValidationError<'_>, out: &mut Vec<ArgumentProblem>| {
            self.collect(inner, out);
        };
        if let Some(depth) = self.secret_prefix(&segments) {
            let kind = error.kind();
            let union = matches!(
                kind,
                ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. }
            );
            if union && depth == segments.len() {
                // A union at the secret itself (`Option<Secret<T>>`): its
                // branches are judged one by one, and what it says without
                // them ("expected a string or null") names no value.
                collect(error, &at, SECRET_VALUE_INVALID.to_owned(), out, &recurse);
                return;
            }
            // The path stops at the secret: what lies under it (a map's keys)
            // is part of the value.
            out.push(ArgumentProblem {
                path: segments_to_path(&segments[..depth]),
                keyword: kind.keyword().to_owned(),
                message: describe_secret(kind),
            });
            return;
        }
        // In a tool with secrets, a message about a value that holds one (an
        // object failing a `oneOf`) must not quote it.
        let fallback = if self.has_secrets {
            error.masked_with("the value").to_string()
        } else {
            error.to_string()
        };
        collect(error, &at, fallback, out, &recurse);
    }
}

/// The keyword of a named validator's failure.
const VALIDATOR_KEYWORD: &str = "validator";

/// The named validator of one argument: decodes the argument's value on its
/// own and returns each failure as (path under the argument, message); a
/// value that does not decode has no failures (decoding reports it).
pub type CheckFn = fn(&Value) -> Vec<(String, String)>;

/// A named validator run on one argument after it decodes.
#[derive(Debug, Clone, Copy)]
pub struct ArgumentCheck {
    /// The argument (the parameter's wire name).
    pub name: &'static str,
    /// The check.
    pub check: CheckFn,
}

/// Which check a parameter type has, chosen at the macro's call site by
/// method resolution (autoref dispatch, no specialization): generated code
/// calls `(&&Rules::<T>::new()).check()`, and [`GardeRules`] applies when
/// `T: garde::Validate` (feature `garde`), else [`NoRules`].
#[derive(Debug)]
pub struct Rules<T>(PhantomData<fn() -> T>);

impl<T> Rules<T> {
    /// The probe for `T`.
    pub const fn new() -> Self {
        Rules(PhantomData)
    }
}

impl<T> Default for Rules<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The check of a type that implements `garde::Validate` (preferred; only
/// with the `garde` feature).
pub trait GardeRules {
    /// The type's check.
    fn check(&self) -> Option<CheckFn>;
}

#[cfg(feature = "garde")]
impl<T> GardeRules for &Rules<T>
where
    T: garde::Validate + DeserializeOwned,
    T::Context: Default,
{
    fn check(&self) -> Option<CheckFn> {
        Some(garde_check::<T>)
    }
}

/// No check: the type has no named validator (the fallback).
pub trait NoRules {
    /// Nothing.
    fn check(&self) -> Option<CheckFn>;
}

impl<T> NoRules for Rules<T> {
    fn check(&self) -> Option<CheckFn> {
        None
    }
}

/// Decodes `value` as `T` and runs its garde rules.
#[cfg(feature = "garde")]
fn garde_check<T>(value: &Value) -> Vec<(String, String)>
where
    T: garde::Validate + DeserializeOwned,
    T::Context: Default,
{
    let Ok(decoded) = T::deserialize(value) else {
        return Vec::new();
    };
    match decoded.validate() {
        Ok(()) => Vec::new(),
        Err(report) => report
            .iter()
            .map(|(path, error)| (path.to_string(), error.message().to_owned()))
            .collect(),
    }
}

/// True when the readable path `path` is `name` or lies under it.
fn is_at_or_under(path: &str, name: &str) -> bool {
    path.strip_prefix(name)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}

/// `filters.tags[2]` → `["filters", "tags", "2"]` (the inverse of
/// [`segments_to_path`] for keys without `.` or `[`).
fn path_segments(path: &str) -> Vec<String> {
    path.split(['.', '['])
        .map(|s| s.trim_end_matches(']'))
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The integer an integral float stands for, when it fits an `i64` or a
/// `u64`: the arguments path reads such a float as that integer.
pub(crate) fn integer_of_float(f: f64) -> Option<Value> {
    if f.fract() != 0.0 {
        return None;
    }
    // 2^63 and 2^64 are exact as f64; every integral f64 below them
    // converts to the same integer.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        Some(Value::from(f as i64))
    } else if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
        Some(Value::from(f as u64))
    } else {
        None
    }
}

/// JSON Schema counts `3.0` as an integer; serde's integer types refuse a
/// float. So that what the schema accepts decodes, a number written as a
/// float with no fractional part becomes the integer it is, when it fits 64
/// bits (a float parameter takes the integer just as well). Found by the
/// `arguments` fuzz target.
fn integral_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(integer) = n.as_f64().and_then(integer_of_float) {
                *value = integer;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(members) => members.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

/// Whether `schema` says `"type": "integer"` (alone or in a list) anywhere.
fn names_integer_type(schema: &Value) -> bool {
    match schema {
        Value::Object(members) => members.iter().any(|(key, value)| {
            (key == "type"
                && match value {
                    Value::String(t) => t == "integer",
                    Value::Array(types) => types.iter().any(|t| t == "integer"),
                    _ => false,
                })
                || names_integer_type(value)
        }),
        Value::Array(items) => items.iter().any(names_integer_type),
        _ => false,
    }
}

/// jsonschema's validator for a derived input schema.
fn compile_full(schema: &Value) -> Result<Validator, String> {
    jsonschema::draft202012::options()
        .build(schema)
        .map_err(|e| format!("the derived input schema does not compile: {e}"))
}

/// A decoding error, reported at the arguments object.
fn decode_problem(message: String) -> ArgumentProblem {
    ArgumentProblem {
        path: String::new(),
        keyword: "deserialize".into(),
        message,
    }
}

/// Zeroes every string in `value`.
fn wipe_strings(value: &mut Value) {
    match value {
        Value::String(s) => s.zeroize(),
        Value::Array(items) => items.iter_mut().for_each(wipe_strings),
        Value::Object(members) => members.values_mut().for_each(wipe_strings),
        Value::Bool(_) | Value::Null | Value::Number(_) => {}
    }
}

/// The message of a problem at or under a secret: what the schema expects,
/// never what was sent.
fn describe_secret(kind: &ValidationErrorKind) -> String {
    match kind {
        // A field name comes from the schema, not from the value.
        ValidationErrorKind::Required { property } => match property.as_str() {
            Some(name) => format!("the required field {name:?} is missing"),
            None => "a required field is missing".to_owned(),
        },
        ValidationErrorKind::Type { .. }
        | ValidationErrorKind::Minimum { .. }
        | ValidationErrorKind::Maximum { .. }
        | ValidationErrorKind::ExclusiveMinimum { .. }
        | ValidationErrorKind::ExclusiveMaximum { .. }
        | ValidationErrorKind::MinLength { .. }
        | ValidationErrorKind::MaxLength { .. }
        | ValidationErrorKind::MinItems { .. }
        | ValidationErrorKind::MaxItems { .. }
        | ValidationErrorKind::Pattern { .. } => describe(kind, SECRET_VALUE_INVALID),
        _ => SECRET_VALUE_INVALID.to_owned(),
    }
}

/// Adds the problems of one error at the instance pointer `at`; `fallback` is
/// the message for kinds without a message of their own, and `recurse` adds
/// the problems of an error inside a union's branch.
fn collect(
    error: &ValidationError<'_>,
    at: &str,
    fallback: String,
    out: &mut Vec<ArgumentProblem>,
    recurse: &dyn Fn(&ValidationError<'_>, &mut Vec<ArgumentProblem>),
) {
    let kind = error.kind();
    if let ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } =
        kind
    {
        let type_mismatch = |branch: &Vec<ValidationError<'static>>| {
            branch.len() == 1
                && matches!(branch[0].kind(), ValidationErrorKind::Type { .. })
                && branch[0].instance_path().to_string() == at
        };
        let matched: Vec<&Vec<ValidationError<'static>>> =
            context.iter().filter(|b| !type_mismatch(b)).collect();
        if let [branch] = matched.as_slice() {
            for inner in branch.iter() {
                recurse(inner, out);
            }
            return;
        }
        if matched.is_empty() && !context.is_empty() {
            let expected: Vec<&'static str> = context
                .iter()
                .filter_map(|b| match b[0].kind() {
                    ValidationErrorKind::Type {
                        kind: TypeKind::Single(t),
                    } => Some(article(*t)),
                    _ => None,
                })
                .collect();
            out.push(problem(
                at,
                "type",
                format!("expected {}", expected.join(" or ")),
            ));
            return;
        }
    }
    let mut path = pointer_to_path(at);
    if let ValidationErrorKind::Required { property } = kind {
        let name = property
            .as_str()
            .map_or_else(|| property.to_string(), str::to_owned);
        path = join(&path, &name);
    }
    out.push(ArgumentProblem {
        path,
        keyword: kind.keyword().to_owned(),
        message: describe(kind, &fallback),
    });
}

fn problem(pointer: &str, keyword: &str, message: String) -> ArgumentProblem {
    ArgumentProblem {
        path: pointer_to_path(pointer),
        keyword: keyword.to_owned(),
        message,
    }
}

fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_owned()
    } else {
        format!("{base}.{key}")
    }
}

/// `/filters/tags/2` → `["filters", "tags", "2"]`.
fn segments(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// `["filters", "tags", "2"]` → `filters.tags[2]`.
fn segments_to_path(segments: &[String]) -> String {
    let mut path = String::new();
    for segment in segments {
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            path.push_str(&format!("[{segment}]"));
        } else {
            path = join(&path, segment);
        }
    }
    path
}

/// `/filters/tags/2` → `filters.tags[2]`.
fn pointer_to_path(pointer: &str) -> String {
    segments_to_path(&segments(pointer))
}

fn article(kind: JsonType) -> &'static str {
    match kind {
        JsonType::Array => "an array",
        JsonType::Boolean => "a boolean",
        JsonType::Integer => "an integer",
        JsonType::Null => "null",
        JsonType::Number => "a number",
        JsonType::Object => "an object",
        JsonType::String => "a string",
    }
}

fn describe(kind: &ValidationErrorKind, fallback: &str) -> String {
    match kind {
        ValidationErrorKind::Type { kind } => match kind {
            TypeKind::Single(t) => format!("expected {}", article(*t)),
            TypeKind::Multiple(set) => {
                let names: Vec<&str> = set.iter().map(article).collect();
                format!("expected {}", names.join(" or "))
            }
        },
        ValidationErrorKind::Required { .. } => "this field is required".to_owned(),
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            format!("unknown field(s): {}", unexpected.join(", "))
        }
        ValidationErrorKind::Minimum { limit } => format!("must be at least {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("must be at most {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("must be greater than {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be less than {limit}"),
        ValidationErrorKind::MinLength { limit } => {
            format!("must be at least {limit} characters long")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("must be at most {limit} characters long")
        }
        ValidationErrorKind::MinItems { limit } => format!("must have at least {limit} items"),
        ValidationErrorKind::MaxItems { limit } => format!("must have at most {limit} items"),
        ValidationErrorKind::Pattern { pattern } => format!("must match the pattern {pattern}"),
        ValidationErrorKind::Enum { options } => format!("must be one of {options}"),
        ValidationErrorKind::Constant { expected_value } => format!("must be {expected_value}"),
        _ => fallback.to_owned(),
    }
}

/// The `isError` result that reports every argument problem: one readable line
/// per problem in `content`, the machine-readable list in `_meta`.
pub(crate) fn invalid_arguments_result(tool: &str, problems: &[ArgumentProblem]) -> CallToolResult {
    let mut text = format!("invalid arguments for tool {tool:?}:");
    for p in problems {
        let at = if p.path.is_empty() {
            "(arguments)"
        } else {
            &p.path
        };
        text.push_str(&format!("\n- {at}: {}", p.message));
    }
    let result = CallToolResult::error(text);
    result.with_meta(ResultMeta::default().with_entry(ARGUMENT_ERRORS_META_KEY, json!(problems)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_like_code() {
        assert_eq!(pointer_to_path(""), "");
        assert_eq!(pointer_to_path("/limit"), "limit");
        assert_eq!(pointer_to_path("/filters/tags/2"), "filters.tags[2]");
    }

    #[test]
    fn every_problem_is_reported_in_a_stable_order() {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["query"],
            "additionalProperties": false
        });
        let validator = ArgumentValidator::new(&schema).unwrap();
        let problems = validator.problems(&json!({"limit": "ten", "tags": ["a", 2], "extra": 1}));
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect();
        assert_eq!(
            lines,
            [
                ": unknown field(s): extra",
                "limit: expected an integer",
                "query: this field is required",
                "tags[1]: expected a string",
            ]
        );
    }

    #[test]
    fn problems_under_a_secret_name_no_value() {
        let schema = json!({
            "type": "object",
            "properties": {
                "creds": {
                    "type": "object",
                    "writeOnly": true,
                    "properties": {"user": {"type": "string"}, "pin": {"type": "integer", "multipleOf": 7}},
                    "required": ["user"],
                    "additionalProperties": false
                },
                "count": {"type": "integer", "multipleOf": 7},
                "note": {"type": "string"}
            },
            "additionalProperties": false
        });
        let validator = ArgumentValidator::new(&schema).unwrap();
        let problems = validator.problems(&json!({
            "creds": {"pin": 123456789, "sk-live-as-a-key": 1},
            "count": 100,
            "note": "sk-live-elsewhere"
        }));
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("{} {}: {}", p.path, p.keyword, p.message))
            .collect();
        assert_eq!(
            lines,
            [
                "count multipleOf: the value is not a multiple of 7",
                "creds additionalProperties: the value is not valid (it is secret, so it is not shown)",
                "creds multipleOf: the value is not valid (it is secret, so it is not shown)",
                "creds required: the required field \"user\" is missing",
            ]
        );
        // A tool without secrets keeps messages that quote the value.
        let plain = ArgumentValidator::new(&json!({
            "type": "object",
            "properties": {"count": {"type": "integer", "multipleOf": 7}}
        }))
        .unwrap();
        assert_eq!(
            plain.problems(&json!({"count": 100}))[0].message,
            "100 is not a multiple of 7"
        );
    }

    #[test]
    fn a_validator_failure_under_a_secret_names_no_value() {
        fn weak_pin(_: &Value) -> Vec<(String, String)> {
            vec![("pin".into(), "pin 1234 is too weak".into())]
        }
        fn odd(_: &Value) -> Vec<(String, String)> {
            vec![(String::new(), "3 is odd".into())]
        }
        let schema = json!({
            "type": "object",
            "properties": {
                "creds": {"type": "object", "writeOnly": true},
                "n": {"type": "integer"},
                "m": {"type": "integer", "maximum": 1}
            }
        });
        let validator = ArgumentValidator::new(&schema).unwrap();
        let checks = [
            ArgumentCheck {
                name: "creds",
                check: weak_pin,
            },
            ArgumentCheck {
                name: "n",
                check: odd,
            },
            // Refused by the schema: not validated.
            ArgumentCheck {
                name: "m",
                check: odd,
            },
        ];
        let problems = validator
            .decode::<Value>(json!({"creds": {"pin": 1234}, "n": 3, "m": 2}), &checks)
            .unwrap_err();
        let lines: Vec<String> = problems
            .iter()
            .map(|p| format!("{} {}: {}", p.path, p.keyword, p.message))
            .collect();
        assert_eq!(
            lines,
            [
                "creds validator: the value is not valid (it is secret, so it is not shown)",
                "m maximum: must be at most 1",
                "n validator: 3 is odd",
            ]
        );
    }

    #[test]
    fn an_integral_float_decodes_as_the_integer_the_schema_accepted() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Args {
            small: i8,
            big: i64,
            huge: u64,
            ratio: f64,
            list: Vec<u16>,
        }
        let schema = json!({
            "type": "object",
            "properties": {
                "small": {"type": "integer", "minimum": -128, "maximum": 127},
                "big": {"type": "integer"},
                "huge": {"type": "integer", "minimum": 0},
                "ratio": {"type": "number"},
                "list": {"type": "array", "items": {"type": "integer"}}
            }
        });
        let validator = ArgumentValidator::new(&schema).unwrap();
        // As JSON text: serde_json reads `3.0` as a float.
        let arguments: Value = serde_json::from_str(
            r#"{"small": -128.0, "big": -9.223372036854776e18, "huge": 1e19, "ratio": 2.0, "list": [1.0, 2]}"#,
        )
        .unwrap();
        let decoded = validator.decode::<Args>(arguments, &[]).unwrap();
        assert_eq!(
            decoded,
            Args {
                small: -128,
                big: i64::MIN,
                huge: 10_000_000_000_000_000_000,
                ratio: 2.0,
                list: vec![1, 2],
            }
        );
        // Without integers in the schema, a float stays a float.
        let floats =
            ArgumentValidator::new(&json!({"properties": {"x": {"type": "number"}}})).unwrap();
        assert!(!floats.has_integers && validator.has_integers);
        // A fractional number is still refused, by the schema, at its path.
        let fractional: Value = serde_json::from_str(r#"{"small": 1.5}"#).unwrap();
        let problems = validator.decode::<Value>(fractional, &[]).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(
            (problems[0].path.as_str(), problems[0].keyword.as_str()),
            ("small", "type")
        );
    }

    #[test]
    fn a_decoding_error_is_scrubbed_of_secret_values() {
        #[derive(Debug)]
        struct Picky;
        impl<'de> serde::Deserialize<'de> for Picky {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let all = Value::deserialize(d)?;
                Err(serde::de::Error::custom(format!("refused {all}")))
            }
        }
        let schema = json!({
            "type": "object",
            "properties": {"key": {"type": "string", "writeOnly": true}, "n": {"type": "integer"}}
        });
        let validator = ArgumentValidator::new(&schema).unwrap();
        let problems = validator
            .decode::<Picky>(json!({"key": "sk-live-123456", "n": 5}), &[])
            .unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].message, r#"refused {"key":"[REDACTED]","n":5}"#);
    }
}
