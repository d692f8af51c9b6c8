//! Complete argument errors: arguments are validated against the derived input
//! schema (compiled once per declaration) before they are decoded, and every
//! problem is reported at once, by JSON path, in a stable order.
//!
//! The report never includes the value of a secret argument (one whose schema
//! is `writeOnly`, such as a [`Secret`](crate::secret::Secret)): a problem at
//! or under a secret is reported at the secret's own path with a message that
//! names no value; in a tool with secrets, messages that would quote a value
//! name it "the value" instead; and a decoding error is scrubbed of every
//! secret value the arguments hold.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError, Validator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use typed_mcp_core::wire::{CallToolResult, ResultMeta};
use zeroize::Zeroize;

use super::schema;
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
    validator: Validator,
    /// The input schema, kept when it has secret (`writeOnly`) parts.
    secrets: Option<Value>,
}

impl ArgumentValidator {
    /// Compiles the validator for a derived input schema. Derived schemas always
    /// compile; a failure is a bug in the schema generator and is reported as such.
    pub(crate) fn new(schema: &Value) -> Result<Self, String> {
        let secrets = schema::has_secrets(schema).then(|| schema.clone());
        jsonschema::draft202012::options()
            .build(schema)
            .map(|validator| ArgumentValidator { validator, secrets })
            .map_err(|e| format!("the derived input schema does not compile: {e}"))
    }

    /// Every problem with `arguments`, sorted by path then keyword; empty when
    /// they are valid. No message includes the value of a secret argument.
    pub(crate) fn problems(&self, arguments: &Value) -> Vec<ArgumentProblem> {
        let mut problems = Vec::new();
        for error in self.validator.iter_errors(arguments) {
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
    pub(crate) fn decode<A: DeserializeOwned>(
        &self,
        arguments: Value,
    ) -> Result<A, Vec<ArgumentProblem>> {
        let problems = self.problems(&arguments);
        if !problems.is_empty() {
            return Err(problems);
        }
        let Some(root) = &self.secrets else {
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
        schema::secret_prefix(self.secrets.as_ref()?, segments)
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
        let fallback = if self.secrets.is_some() {
            error.masked_with("the value").to_string()
        } else {
            error.to_string()
        };
        collect(error, &at, fallback, out, &recurse);
    }
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
            .decode::<Picky>(json!({"key": "sk-live-123456", "n": 5}))
            .unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].message, r#"refused {"key":"[REDACTED]","n":5}"#);
    }
}
