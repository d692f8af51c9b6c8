//! Complete argument errors: arguments are validated against the derived input
//! schema (compiled once per declaration) before they are decoded, and every
//! problem is reported at once, by JSON path, in a stable order.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError, Validator};
use serde::Serialize;
use serde_json::{Map, Value, json};
use typed_mcp_core::wire::{CallToolResult, ResultMeta};

/// The result `_meta` key under which the machine-readable list of argument
/// problems travels (never in `structuredContent`).
pub const ARGUMENT_ERRORS_META_KEY: &str = "rs.typed-mcp/argumentErrors";

/// One problem with one argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgumentProblem {
    /// Where, as a readable path (`limit`, `filters.tags[2]`); empty for the
    /// arguments object itself.
    pub path: String,
    /// The JSON Schema keyword that failed (`type`, `required`, `minimum`...).
    pub keyword: String,
    /// What is wrong, for a model to read.
    pub message: String,
}

/// Validates arguments against one tool's input schema.
#[derive(Debug)]
pub struct ArgumentValidator {
    validator: Validator,
}

impl ArgumentValidator {
    /// Compiles the validator for a derived input schema. Derived schemas always
    /// compile; a failure is a bug in the schema generator and is reported as such.
    pub fn new(schema: &Value) -> Result<Self, String> {
        jsonschema::draft202012::options()
            .build(schema)
            .map(|validator| ArgumentValidator { validator })
            .map_err(|e| format!("the derived input schema does not compile: {e}"))
    }

    /// Every problem with `arguments`, sorted by path then keyword; empty when
    /// they are valid.
    pub fn problems(&self, arguments: &Value) -> Vec<ArgumentProblem> {
        let mut problems = Vec::new();
        for error in self.validator.iter_errors(arguments) {
            collect(&error, &mut problems);
        }
        problems.sort_by(|a, b| (&a.path, &a.keyword).cmp(&(&b.path, &b.keyword)));
        problems.dedup();
        problems
    }
}

/// Adds the problems one validation error stands for. A failed `anyOf`/`oneOf`
/// (such as the nullable union of an `Option<T>`) is replaced by the errors of
/// the one branch whose type matched, so the model reads `filter.tag: expected
/// a string` rather than "not valid under any of the schemas".
fn collect(error: &ValidationError<'_>, out: &mut Vec<ArgumentProblem>) {
    let kind = error.kind();
    let at = error.instance_path().to_string();
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
                collect(inner, out);
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
                &at,
                "type",
                format!("expected {}", expected.join(" or ")),
            ));
            return;
        }
    }
    let mut path = pointer_to_path(&at);
    if let ValidationErrorKind::Required { property } = kind {
        let name = property
            .as_str()
            .map_or_else(|| property.to_string(), str::to_owned);
        path = join(&path, &name);
    }
    out.push(ArgumentProblem {
        path,
        keyword: kind.keyword().to_owned(),
        message: describe(kind, &error.to_string()),
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

/// `/filters/tags/2` → `filters.tags[2]`.
fn pointer_to_path(pointer: &str) -> String {
    let mut path = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            path.push_str(&format!("[{segment}]"));
        } else {
            path = join(&path, &segment);
        }
    }
    path
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
pub fn invalid_arguments_result(tool: &str, problems: &[ArgumentProblem]) -> CallToolResult {
    let mut text = format!("invalid arguments for tool {tool:?}:");
    for p in problems {
        let at = if p.path.is_empty() {
            "(arguments)"
        } else {
            &p.path
        };
        text.push_str(&format!("\n- {at}: {}", p.message));
    }
    let mut result = CallToolResult::error(text);
    let mut other = Map::new();
    other.insert(ARGUMENT_ERRORS_META_KEY.into(), json!(problems));
    result.meta = ResultMeta {
        other,
        ..Default::default()
    };
    result
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
}
