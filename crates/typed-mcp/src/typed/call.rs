//! The other end of a typed tool: what the `call_<name>` function `#[tool]`
//! generates sends, and how it reads the result back — by the rules the
//! server encodes with ([`output`](super::output)): the library's content
//! types told from a user's own types by trait, structured values wrapped
//! under `result` exactly when [`output_is_wrapped`] says the server wraps
//! them, `isError` an error.
//!
//! Every bound a call needs beyond what the server needs (`Serialize` on the
//! parameters, `Deserialize` on the value) is a trait parameterized by the
//! caller ([`Argument`], [`Returned`]), so generated code states it on the
//! call's caller parameter: it is checked where a call is written, and a
//! server whose types only go one way still compiles.

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use typed_mcp_core::caller::{ArgumentProblem, CallTool, ToolCallError};
use typed_mcp_core::wire::{CallToolResult, ContentBlock};

use super::args::ARGUMENT_ERRORS_META_KEY;
use super::schema::{WRAPPED_RESULT_KEY, output_is_wrapped};

/// The error of a call through caller `C`.
pub(crate) type CallResult<T, C> = Result<T, ToolCallError<<C as CallTool>::Error>>;

/// A parameter a call through caller `C` can send: any `Serialize` type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent as a tool argument: it does not implement `serde::Serialize`",
    label = "the typed call of this tool sends its parameters as JSON"
)]
pub trait Argument<C: ?Sized> {
    /// The argument's JSON.
    fn to_argument(&self) -> Result<Value, serde_json::Error>;
}

impl<C: ?Sized, T: Serialize> Argument<C> for T {
    fn to_argument(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }
}

/// A declared value a call through caller `C` can read back: any
/// `DeserializeOwned` type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read back from a tool result: it does not implement `serde::Deserialize`",
    label = "the typed call of this tool decodes the declared value"
)]
pub trait Returned<C: ?Sized>: Sized {
    /// Decodes the value.
    fn from_returned(value: Value) -> Result<Self, serde_json::Error>;
}

impl<C: ?Sized, T: DeserializeOwned> Returned<C> for T {
    fn from_returned(value: Value) -> Result<Self, serde_json::Error> {
        serde_json::from_value(value)
    }
}

/// Adds one parameter to the arguments object.
pub fn put_argument<C: CallTool + ?Sized, T: Argument<C> + ?Sized>(
    arguments: &mut Map<String, Value>,
    tool: &str,
    name: &str,
    value: &T,
) -> CallResult<(), C> {
    let json = value.to_argument().map_err(|e| ToolCallError::Encode {
        tool: tool.to_owned(),
        why: format!("the argument {name:?} does not serialize to JSON: {e}"),
    })?;
    arguments.insert(name.to_owned(), json);
    Ok(())
}

/// Sends the call and returns the final result.
pub async fn send<C: CallTool + ?Sized>(
    caller: &C,
    tool: &str,
    arguments: Map<String, Value>,
) -> CallResult<CallToolResult, C> {
    caller
        .call_tool_result(tool, arguments)
        .await
        .map_err(ToolCallError::Caller)
}

/// Where a declared value is in a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// `structuredContent` (or its copy in the one text block), under
    /// `result` when `wrapped`.
    Structured { wrapped: bool },
    /// The one content block (`ContentBlock`).
    OneBlock,
    /// The content blocks (`Vec<ContentBlock>`).
    Blocks,
    /// The whole result (`CallToolResult`).
    Whole,
}

/// How the value of type `T` is read from a result, chosen by
/// [`LibraryCall`] or [`StructuredCall`] as the server chooses its encoding.
#[derive(Debug)]
pub struct Reading<T> {
    place: Place,
    value: PhantomData<fn() -> T>,
}

impl<T> Reading<T> {
    fn at(place: Place) -> Self {
        Reading {
            place,
            value: PhantomData,
        }
    }

    /// The declared value of `result`, or the error it reports.
    pub fn read<C: CallTool + ?Sized>(self, tool: &str, result: CallToolResult) -> CallResult<T, C>
    where
        T: Returned<C>,
    {
        let result = refusal::<C>(tool, result)?;
        let decode = |why: String| ToolCallError::Decode {
            tool: tool.to_owned(),
            why,
        };
        let json = |value: &dyn erased::Encode| value.to_json().map_err(|e| decode(e.to_string()));
        let value = match self.place {
            Place::Structured { wrapped } => structured(&result, wrapped).map_err(decode)?,
            Place::OneBlock => match result.content.as_slice() {
                [block] => json(block)?,
                blocks => {
                    return Err(decode(format!(
                        "expected one content block, found {}",
                        blocks.len()
                    )));
                }
            },
            Place::Blocks => json(&result.content)?,
            Place::Whole => json(&result)?,
        };
        let found = snippet(&value.to_string());
        T::from_returned(value).map_err(|e| decode(format!("{e}; found {found}")))
    }
}

/// The value of a tool that returns nothing (`()`): any result that is not
/// an error.
pub fn read_nothing<C: CallTool + ?Sized>(tool: &str, result: CallToolResult) -> CallResult<(), C> {
    refusal::<C>(tool, result).map(drop)
}

/// Serializing through `&dyn`, so the three library places share one path.
mod erased {
    pub(super) trait Encode {
        fn to_json(&self) -> Result<serde_json::Value, serde_json::Error>;
    }

    impl<T: serde::Serialize> Encode for T {
        fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
            serde_json::to_value(self)
        }
    }
}

/// The structured value: `structuredContent`, or (from a server that sends
/// only text, as dated revisions before it had no `structuredContent`) the
/// one text block, which carries the same JSON.
fn structured(result: &CallToolResult, wrapped: bool) -> Result<Value, String> {
    let value = match &result.structured_content {
        Some(value) => value.to_value().into_owned(),
        None => match result.content.as_slice() {
            [ContentBlock::Text { text, .. }] => serde_json::from_str(text).map_err(|e| {
                format!(
                    "expected structuredContent, or one text block of JSON; found the text {:?} ({e})",
                    snippet(text)
                )
            })?,
            blocks => {
                return Err(format!(
                    "expected structuredContent, or one text block of JSON; found neither ({} content blocks)",
                    blocks.len()
                ));
            }
        },
    };
    if !wrapped {
        return Ok(value);
    }
    match value {
        Value::Object(mut object)
            if object.len() == 1 && object.contains_key(WRAPPED_RESULT_KEY) =>
        {
            Ok(object.remove(WRAPPED_RESULT_KEY).unwrap_or(Value::Null))
        }
        other => Err(format!(
            "expected the value wrapped as {{\"{WRAPPED_RESULT_KEY}\": ...}} (its JSON is not an object, so the server wraps it); found {}",
            snippet(&other.to_string())
        )),
    }
}

/// An `isError` result as the error it reports: the server's argument
/// report when it refused the arguments, else the tool's message.
fn refusal<C: CallTool + ?Sized>(
    tool: &str,
    result: CallToolResult,
) -> CallResult<CallToolResult, C> {
    if !result.is_error() {
        return Ok(result);
    }
    let message = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if let Some(report) = result.meta.other.get(ARGUMENT_ERRORS_META_KEY) {
        return Err(
            match serde_json::from_value::<Vec<ArgumentProblem>>(report.clone()) {
                Ok(problems) => ToolCallError::Arguments {
                    tool: tool.to_owned(),
                    problems,
                    message,
                },
                Err(e) => ToolCallError::Decode {
                    tool: tool.to_owned(),
                    why: format!(
                        "the argument report under _meta[{ARGUMENT_ERRORS_META_KEY:?}] is not a list of problems ({e}); found {}",
                        snippet(&report.to_string())
                    ),
                },
            },
        );
    }
    Err(ToolCallError::Tool {
        tool: tool.to_owned(),
        message,
        structured: result.structured_content.map(Value::from),
    })
}

/// At most 200 characters of `text`, for an error message.
fn snippet(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(200).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// The declared value's type, for the autoref dispatch generated code runs:
/// `(&Returns::<T>::new()).reading()` finds [`LibraryCall`] for the
/// library's content types (the ones [`LibraryOutput`](super::output::LibraryOutput)
/// sends as content) and [`StructuredCall`] for any other type.
pub struct Returns<T>(PhantomData<fn() -> T>);

impl<T> Returns<T> {
    /// The marker of `T`.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Returns(PhantomData)
    }
}

/// The library's content types: read from the content, not from
/// `structuredContent`.
pub trait LibraryCall {
    /// The declared type.
    type Value;
    /// Where its value is.
    fn reading(&self) -> Reading<Self::Value>;
}

impl LibraryCall for Returns<ContentBlock> {
    type Value = ContentBlock;
    fn reading(&self) -> Reading<ContentBlock> {
        Reading::at(Place::OneBlock)
    }
}

impl LibraryCall for Returns<Vec<ContentBlock>> {
    type Value = Vec<ContentBlock>;
    fn reading(&self) -> Reading<Vec<ContentBlock>> {
        Reading::at(Place::Blocks)
    }
}

impl LibraryCall for Returns<CallToolResult> {
    type Value = CallToolResult;
    fn reading(&self) -> Reading<CallToolResult> {
        Reading::at(Place::Whole)
    }
}

/// Any other type: structured content, wrapped as the server wraps it
/// (its bound is the one the server's [`Structured`](super::output::Structured)
/// already has, so it holds for every declaration that compiles).
pub trait StructuredCall<T> {
    /// Where its value is.
    fn reading(&self) -> Reading<T>;
}

impl<T: JsonSchema> StructuredCall<T> for &Returns<T> {
    fn reading(&self) -> Reading<T> {
        Reading::at(Place::Structured {
            wrapped: output_is_wrapped::<T>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use typed_mcp_core::wire::ResultMeta;

    struct Nowhere;

    impl CallTool for Nowhere {
        type Error = std::convert::Infallible;
        async fn call_tool_result(
            &self,
            _: &str,
            _: Map<String, Value>,
        ) -> Result<CallToolResult, Self::Error> {
            unreachable!("the tests read results without sending")
        }
    }

    fn read<T: DeserializeOwned>(place: Place, result: CallToolResult) -> CallResult<T, Nowhere> {
        Reading::<T>::at(place).read::<Nowhere>("t", result)
    }

    #[test]
    fn wrapped_values_must_be_wrapped() {
        let wrapped = Place::Structured { wrapped: true };
        let ok = CallToolResult::structured(json!({"result": 5}));
        assert_eq!(read::<i64>(wrapped, ok).unwrap(), 5);
        // An object with `result` and more is not the wrapper.
        let extra = CallToolResult::structured(json!({"result": 5, "other": 1}));
        let err = read::<i64>(wrapped, extra).unwrap_err().to_string();
        assert!(
            err.contains("expected the value wrapped as {\"result\": ...}"),
            "{err}"
        );
        assert!(err.contains(r#"found {"result":5,"other":1}"#), "{err}");
        // Unwrapped, a one-member `result` object is the value itself.
        let plain = CallToolResult::structured(json!({"result": 5}));
        let value: Value = read(Place::Structured { wrapped: false }, plain).unwrap();
        assert_eq!(value, json!({"result": 5}));
    }

    #[test]
    fn text_only_results_carry_the_same_json() {
        let text = CallToolResult::text(r#"{"result":[1,2]}"#);
        let value: Vec<u8> = read(Place::Structured { wrapped: true }, text).unwrap();
        assert_eq!(value, [1, 2]);
        let prose = CallToolResult::text("not json");
        let err = read::<Vec<u8>>(Place::Structured { wrapped: true }, prose)
            .unwrap_err()
            .to_string();
        assert!(err.contains(r#"found the text "not json""#), "{err}");
        let none = CallToolResult::content(Vec::new());
        let err = read::<u8>(Place::Structured { wrapped: true }, none)
            .unwrap_err()
            .to_string();
        assert!(err.contains("found neither (0 content blocks)"), "{err}");
    }

    #[test]
    fn a_wrong_type_says_what_was_found() {
        let result = CallToolResult::structured(json!({"result": "five"}));
        let err = read::<i64>(Place::Structured { wrapped: true }, result)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("the tool \"t\" answered a result that is not its declared value: invalid type: string \"five\", expected i64"), "{err}");
        assert!(err.ends_with("found \"five\""), "{err}");
    }

    #[test]
    fn errors_and_reports() {
        let failed = CallToolResult::error("boom");
        match read::<i64>(Place::Whole, failed).unwrap_err() {
            ToolCallError::Tool {
                tool,
                message,
                structured,
            } => {
                assert_eq!(
                    (tool.as_str(), message.as_str(), structured),
                    ("t", "boom", None)
                );
            }
            other => panic!("expected a tool error, found {other:?}"),
        }
        let refused =
            CallToolResult::error("invalid arguments").with_meta(ResultMeta::default().with_entry(
                ARGUMENT_ERRORS_META_KEY,
                json!([{"path": "a", "keyword": "type", "message": "expected an integer"}]),
            ));
        let err = read::<i64>(Place::Structured { wrapped: true }, refused).unwrap_err();
        let problems = err.argument_problems().expect("an argument report");
        assert_eq!(problems.len(), 1);
        assert_eq!(
            (problems[0].path.as_str(), problems[0].keyword.as_str()),
            ("a", "type")
        );
        let garbled = CallToolResult::error("invalid arguments").with_meta(
            ResultMeta::default().with_entry(ARGUMENT_ERRORS_META_KEY, json!("everything")),
        );
        let err = read::<i64>(Place::Whole, garbled).unwrap_err().to_string();
        assert!(err.contains("is not a list of problems"), "{err}");
        assert!(err.ends_with("found \"everything\""), "{err}");
    }

    /// A value whose `Serialize` fails, as a map with non-string keys does.
    struct Unsendable;

    impl Serialize for Unsendable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("keys must be strings"))
        }
    }

    #[test]
    fn an_argument_that_does_not_serialize_is_not_sent() {
        let mut arguments = Map::new();
        put_argument::<Nowhere, _>(&mut arguments, "t", "a", &1_u8).unwrap();
        let err = put_argument::<Nowhere, _>(&mut arguments, "t", "b", &Unsendable).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot call the tool \"t\": the argument \"b\" does not serialize to JSON: keys must be strings"
        );
        assert_eq!(Value::Object(arguments), json!({"a": 1}));
    }

    #[test]
    fn library_places() {
        let two = CallToolResult::content(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        let blocks: Vec<ContentBlock> = read(Place::Blocks, two.clone()).unwrap();
        assert_eq!(blocks, two.content);
        let err = read::<ContentBlock>(Place::OneBlock, two.clone())
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("expected one content block, found 2"),
            "{err}"
        );
        let whole: CallToolResult = read(Place::Whole, two.clone()).unwrap();
        assert_eq!(whole, two);
    }
}
