//! Arguments from the command line: `--args JSON` and `key=value` words.

use serde_json::{Map, Value};
use typed_mcp::protocol::catalog::is_string_schema;

use crate::error::ClientError;

/// The arguments object of a tool call: `--args` (an object) overlaid with
/// `key=value` words. A value is taken as a string when the tool's schema says
/// the property is a string, and otherwise parsed as JSON when it parses
/// (`n=3`, `fast=true`, `tags=["a"]`), falling back to a string.
pub fn tool_arguments(
    json: Option<&str>,
    pairs: &[String],
    input_schema: Option<&Value>,
) -> Result<Value, ClientError> {
    let mut arguments = match json {
        None => Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            Ok(other) => {
                return Err(ClientError::Usage(format!(
                    "--args must be a JSON object, found {other}"
                )));
            }
            Err(e) => return Err(ClientError::Usage(format!("--args is not valid JSON: {e}"))),
        },
    };
    for pair in pairs {
        let (key, raw) = split_pair(pair)?;
        let property = input_schema.and_then(|s| s.get("properties")?.get(key));
        let value = if property.is_some_and(is_string_schema) {
            Value::String(raw.to_owned())
        } else {
            serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))
        };
        arguments.insert(key.to_owned(), value);
    }
    Ok(Value::Object(arguments))
}

/// The arguments object of a prompt: every value is a string.
pub fn prompt_arguments(pairs: &[String]) -> Result<Value, ClientError> {
    let mut arguments = Map::new();
    for pair in pairs {
        let (key, value) = split_pair(pair)?;
        arguments.insert(key.to_owned(), Value::String(value.to_owned()));
    }
    Ok(Value::Object(arguments))
}

fn split_pair(pair: &str) -> Result<(&str, &str), ClientError> {
    match pair.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key, value)),
        _ => Err(ClientError::Usage(format!(
            "{pair:?} is not key=value (use --args '{{...}}' for JSON arguments)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn pairs_follow_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "text": {"type": "string"}, "n": {"type": "integer"}, "maybe": {"type": ["string", "null"]}
        }});
        let args = tool_arguments(
            Some(r#"{"n": 1, "keep": true}"#),
            &words(&[
                "text=42",
                "n=7",
                "maybe=null",
                "other=[1,2]",
                "word=hello",
                "eq=a=b",
            ]),
            Some(&schema),
        );
        assert_eq!(
            args.ok(),
            Some(json!({"n": 7, "keep": true, "text": "42", "maybe": "null",
                        "other": [1, 2], "word": "hello", "eq": "a=b"}))
        );
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(tool_arguments(Some("[1]"), &[], None).is_err());
        assert!(tool_arguments(Some("{"), &[], None).is_err());
        assert!(tool_arguments(None, &words(&["novalue"]), None).is_err());
        assert!(tool_arguments(None, &words(&["=x"]), None).is_err());
        assert_eq!(
            prompt_arguments(&words(&["code=1", "focus="])).ok(),
            Some(json!({"code": "1", "focus": ""}))
        );
    }
}
