//! The return type decides the reply: how a typed tool's value becomes a
//! `CallToolResult`, and the output schema that goes with it.

use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use typed_mcp_core::RpcError;
use typed_mcp_core::wire::{CallToolResult, ContentBlock, StructuredContent};

use super::schema::{WRAPPED_RESULT_KEY, output_is_wrapped, output_schema_for};
use crate::answer::Answer;
use crate::declare::{ToolError, ToolReply};

/// What a return type declares, computed once per declaration.
#[derive(Debug, Clone, Default)]
pub struct OutputShape {
    /// The output schema, for types with structured output.
    pub schema: Option<Value>,
    /// Whether structured values are wrapped under `result` (non-object roots).
    pub wrapped: bool,
    /// Checks structured output against `schema` (debug builds and tests only).
    pub(crate) validator: Option<Arc<jsonschema::Validator>>,
}

impl OutputShape {
    fn structured(schema: Value, wrapped: bool) -> Self {
        let validator = if cfg!(debug_assertions) {
            jsonschema::draft202012::options()
                .build(&schema)
                .ok()
                .map(Arc::new)
        } else {
            None
        };
        OutputShape {
            schema: Some(schema),
            wrapped,
            validator,
        }
    }

    /// In debug builds, refuses structured content that does not match the
    /// advertised schema: drift is a bug in the server, not in the client.
    pub(crate) fn check(&self, tool: &str, reply: &ToolReply) -> Result<(), RpcError> {
        let Ok(Answer::Done(result)) = reply else {
            return Ok(());
        };
        let (Some(validator), Some(value)) = (&self.validator, &result.structured_content) else {
            return Ok(());
        };
        if result.is_error() {
            return Ok(());
        }
        let errors: Vec<String> = validator
            .iter_errors(&value.to_value())
            .map(|e| e.to_string())
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            tracing::error!(
                tool,
                ?errors,
                "structured output does not match the output schema"
            );
            Err(RpcError::internal(format!(
                "tool {tool:?} produced output that does not match its output schema: {}",
                errors.join("; ")
            )))
        }
    }
}

/// A typed tool's return value, turned into a reply.
///
/// Generated code wraps a function's value in one of the types of this module,
/// chosen from the declared return type.
pub trait Output: Send + 'static {
    /// Whether a value may ask for input (`input_required`) instead.
    const ASKS_INPUT: bool = false;

    /// The output schema and wrapping of this type.
    fn describe() -> OutputShape;
    /// The reply for this value.
    fn into_outcome(self, shape: &OutputShape) -> ToolReply;

    /// For a typed error, its identity (Rust type, and variant when it has
    /// one), recorded in the call's receipt.
    fn error_identity(&self) -> Option<ErrorIdentity> {
        None
    }
}

/// The identity of a typed error, kept on the server for receipts: never
/// parsed back from the message the client saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorIdentity {
    /// `std::any::type_name` of the error type.
    pub error_type: &'static str,
    /// The enum variant (or struct) name, as a derived `Debug` writes it
    /// first; `None` when `Debug` does not start with one (hand-written
    /// `Debug` that prints a message).
    pub variant: Option<String>,
}

impl ErrorIdentity {
    /// The identity of `error`.
    pub fn of<E: std::fmt::Debug>(error: &E) -> Self {
        ErrorIdentity {
            error_type: std::any::type_name::<E>(),
            variant: variant_name(&format!("{error:?}")),
        }
    }
}

/// The leading Rust identifier of a derived `Debug` (`NotFound { id: 3 }` →
/// `NotFound`), when the text has that shape.
fn variant_name(debug: &str) -> Option<String> {
    let end = debug
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(debug.len());
    let (ident, rest) = debug.split_at(end);
    let shaped = rest.is_empty() || rest.starts_with('(') || rest.starts_with(" {");
    (shaped && ident.starts_with(|c: char| c.is_ascii_uppercase())).then(|| ident.to_owned())
}

/// The type of a returned value, for the autoref dispatch generated code runs
/// on it: `(&Leaf::of(&value)).wrap(value)` finds [`LibraryOutput`] when the
/// value is one of the library's content types (a method on `&Leaf<T>`) and
/// falls back to [`StructuredOutput`] (a method on `&&Leaf<T>`) otherwise.
/// The choice is by type, so a user's own type named `Content` is structured.
pub struct Leaf<T>(PhantomData<fn() -> T>);

impl<T> Leaf<T> {
    /// The leaf of `value`'s type.
    pub fn of(_value: &T) -> Self {
        Leaf(PhantomData)
    }
}

/// The library's content types: content without an output schema.
pub trait LibraryOutput {
    /// The returned type.
    type Value;
    /// Its reply.
    type Output: Output;
    /// Wraps the value.
    fn wrap(&self, value: Self::Value) -> Self::Output;
}

impl LibraryOutput for Leaf<ContentBlock> {
    type Value = ContentBlock;
    type Output = Contents;
    fn wrap(&self, value: ContentBlock) -> Contents {
        Contents(vec![value])
    }
}

impl LibraryOutput for Leaf<Vec<ContentBlock>> {
    type Value = Vec<ContentBlock>;
    type Output = Contents;
    fn wrap(&self, value: Vec<ContentBlock>) -> Contents {
        Contents(value)
    }
}

impl LibraryOutput for Leaf<CallToolResult> {
    type Value = CallToolResult;
    type Output = Raw;
    fn wrap(&self, value: CallToolResult) -> Raw {
        Raw(value)
    }
}

/// Any other type: structured content (it must have a JSON form).
pub trait StructuredOutput<T> {
    /// Wraps the value.
    fn wrap(&self, value: T) -> Structured<T>;
}

impl<T> StructuredOutput<T> for &Leaf<T> {
    fn wrap(&self, value: T) -> Structured<T> {
        Structured(value)
    }
}

/// A value with a JSON form: `structuredContent` plus the same JSON as text.
#[derive(Debug)]
pub struct Structured<T>(pub T);

impl<T: Serialize + JsonSchema + Send + 'static> Output for Structured<T> {
    fn describe() -> OutputShape {
        OutputShape::structured(output_schema_for::<T>(), output_is_wrapped::<T>())
    }

    fn into_outcome(self, shape: &OutputShape) -> ToolReply {
        let encoding_failed = |e: serde_json::Error| {
            ToolError::Protocol(RpcError::internal(format!(
                "the tool's result could not be encoded as JSON: {e}"
            )))
        };
        // Encoded once, straight from the value (no `Value` between): the
        // text block is this text, and `structuredContent` is sent as it is.
        let structured = if shape.wrapped {
            StructuredContent::encode(&Wrapped { result: &self.0 })
        } else {
            StructuredContent::encode(&self.0)
        }
        .map_err(encoding_failed)?;
        Ok(CallToolResult::structured(structured).into())
    }
}

/// A non-object value under its one key, as the output schema describes it.
struct Wrapped<'a, T> {
    result: &'a T,
}

impl<T: Serialize> Serialize for Wrapped<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut object = serializer.serialize_struct("Wrapped", 1)?;
        object.serialize_field(WRAPPED_RESULT_KEY, self.result)?;
        object.end()
    }
}

/// Content blocks (text, image, audio, links, embedded resources): no output schema.
#[derive(Debug)]
pub struct Contents(pub Vec<ContentBlock>);

impl Output for Contents {
    fn describe() -> OutputShape {
        OutputShape::default()
    }

    fn into_outcome(self, _: &OutputShape) -> ToolReply {
        Ok(CallToolResult::content(self.0).into())
    }
}

/// A complete `CallToolResult`, sent as is.
#[derive(Debug)]
pub struct Raw(pub CallToolResult);

impl Output for Raw {
    fn describe() -> OutputShape {
        OutputShape::default()
    }

    fn into_outcome(self, _: &OutputShape) -> ToolReply {
        Ok(self.0.into())
    }
}

/// No value: an empty content list.
#[derive(Debug)]
pub struct Unit;

impl Output for Unit {
    fn describe() -> OutputShape {
        OutputShape::default()
    }

    fn into_outcome(self, _: &OutputShape) -> ToolReply {
        Ok(CallToolResult::content(Vec::new()).into())
    }
}

/// An optional value: `None` is a structured `null` (the schema allows it),
/// not an error.
#[derive(Debug)]
pub struct Optional<T>(pub Option<T>);

impl<T: Serialize + JsonSchema + Send + 'static> Output for Optional<T> {
    fn describe() -> OutputShape {
        Structured::<Option<T>>::describe()
    }

    fn into_outcome(self, shape: &OutputShape) -> ToolReply {
        Structured(self.0).into_outcome(shape)
    }
}

/// A fallible value: `Ok` is replied like `P`; `Err` is an `isError` result
/// with the error's message and its `source()` chain.
#[derive(Debug)]
pub struct Fallible<P, E>(pub Result<P, E>);

impl<P: Output, E: std::error::Error + Send + 'static> Output for Fallible<P, E> {
    const ASKS_INPUT: bool = P::ASKS_INPUT;

    fn describe() -> OutputShape {
        P::describe()
    }

    fn into_outcome(self, shape: &OutputShape) -> ToolReply {
        match self.0 {
            Ok(value) => value.into_outcome(shape),
            Err(error) => Err(ToolError::from_error(&error)),
        }
    }

    fn error_identity(&self) -> Option<ErrorIdentity> {
        match &self.0 {
            Ok(value) => value.error_identity(),
            Err(error) => Some(ErrorIdentity::of(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Output, Structured, variant_name};
    use crate::answer::Answer;
    use serde_json::json;
    use typed_mcp_core::wire::CallToolResult;

    /// The reply a structured value gets, as `CallToolResult::structured`
    /// makes it: the fast paths (a moved `String`, the library's JSON writer
    /// for the text) must not change a byte.
    #[track_caller]
    fn replies_as_structured<T>(value: T, expected: serde_json::Value)
    where
        T: serde::Serialize + schemars::JsonSchema + Send + 'static,
    {
        let shape = Structured::<T>::describe();
        let Ok(Answer::Done(reply)) = Structured(value).into_outcome(&shape) else {
            panic!("a structured value is a done result");
        };
        assert_eq!(reply, CallToolResult::structured(expected));
    }

    #[test]
    fn structured_replies_match_the_wire_constructor() {
        let text = "a \"quoted\"\n\u{1} text é".repeat(50);
        replies_as_structured(text.clone(), json!({ "result": text }));
        replies_as_structured(String::new(), json!({ "result": "" }));
        replies_as_structured(Some("x".to_owned()), json!({ "result": "x" }));
        replies_as_structured(None::<String>, json!({ "result": null }));
        replies_as_structured(vec![1.5, -2.0], json!({ "result": [1.5, -2.0] }));
        let mut map = std::collections::BTreeMap::new();
        map.insert("k\"".to_owned(), vec![true]);
        replies_as_structured(map, json!({ "k\"": [true] }));
    }

    #[test]
    fn variants_from_derived_debug() {
        assert_eq!(
            variant_name("NotFound { id: 3 }").as_deref(),
            Some("NotFound")
        );
        assert_eq!(
            variant_name("AlreadyClosed").as_deref(),
            Some("AlreadyClosed")
        );
        assert_eq!(variant_name("Io(Os { code: 2 })").as_deref(), Some("Io"));
        // A message, not a derived Debug.
        assert_eq!(variant_name("Connection refused (os error 111)"), None);
        assert_eq!(variant_name("\"text\""), None);
        assert_eq!(variant_name("lowercase"), None);
    }
}
