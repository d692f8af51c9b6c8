//! The `Mcp-Param-*` headers of a 2026-07-28 `tools/call` over HTTP: which
//! arguments a tool's input schema asks to mirror (`x-mcp-header`), how their
//! values are encoded, and which annotations make a tool unusable.

use std::collections::HashSet;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

/// A header value as the 2026-07-28 revision encodes it: as is when it is
/// plain visible ASCII, otherwise `=?base64?<base64 of the UTF-8 bytes>?=`.
pub fn header_value(text: &str) -> String {
    let visible_ascii = text.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = text.starts_with([' ', '\t']) || text.ends_with([' ', '\t']);
    let sentinel_like = text.starts_with("=?base64?") && text.ends_with("?=");
    if visible_ascii && !padded && !sentinel_like {
        text.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(text.as_bytes()))
    }
}

/// The `Mcp-Param-*` headers a `tools/call` with these arguments needs: one per
/// `x-mcp-header` property of the input schema (reached through `properties`
/// alone) whose argument is present and not `null`.
pub fn param_headers(input_schema: &Value, arguments: &Value) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    collect_param_headers(input_schema, Some(arguments), &mut headers);
    headers
}

fn collect_param_headers(schema: &Value, value: Option<&Value>, out: &mut Vec<(String, String)>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, prop) in props {
        let arg = value.and_then(|v| v.get(key));
        if let (Some(name), Some(arg)) = (prop.get("x-mcp-header").and_then(Value::as_str), arg) {
            let text = match arg {
                Value::String(s) => Some(s.clone()),
                Value::Bool(b) => Some(b.to_string()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            };
            if let Some(text) = text {
                out.push((format!("Mcp-Param-{name}"), header_value(&text)));
            }
        }
        collect_param_headers(prop, arg, out);
    }
}

/// Why a tool's `x-mcp-header` annotations make it unusable, or `None` when
/// they are sound. A client must not call such a tool (it could not send the
/// headers the server expects), so [`Client`](crate::Client) leaves it out of
/// its tool lists. The rules: a name is a non-empty HTTP token (visible ASCII,
/// no space, colon or control character), unique within the tool regardless
/// of case, on a property of a primitive type (string, number, integer,
/// boolean).
pub fn invalid_header_annotation(input_schema: &Value) -> Option<String> {
    let mut seen = HashSet::new();
    check_annotations(input_schema, &mut seen)
}

fn check_annotations(schema: &Value, seen: &mut HashSet<String>) -> Option<String> {
    let props = schema.get("properties").and_then(Value::as_object)?;
    for (key, prop) in props {
        if let Some(annotation) = prop.get("x-mcp-header") {
            let Some(name) = annotation.as_str() else {
                return Some(format!(
                    "property {key:?}: x-mcp-header must be a string, found {annotation}"
                ));
            };
            if name.is_empty() {
                return Some(format!("property {key:?}: x-mcp-header is empty"));
            }
            if let Some(bad) = name.chars().find(|c| !is_token_char(*c)) {
                return Some(format!(
                    "property {key:?}: x-mcp-header {name:?} contains {bad:?}; a header name is \
                     visible ASCII without spaces, colons or separators"
                ));
            }
            if !seen.insert(name.to_ascii_lowercase()) {
                return Some(format!(
                    "property {key:?}: x-mcp-header {name:?} is used by another property too \
                     (header names are case-insensitive)"
                ));
            }
            let primitive = match prop.get("type") {
                Some(Value::String(t)) => {
                    matches!(t.as_str(), "string" | "number" | "integer" | "boolean")
                }
                // A type list or none: the annotation cannot be sure to carry a primitive.
                _ => false,
            };
            if !primitive {
                return Some(format!(
                    "property {key:?}: x-mcp-header {name:?} is on a property of type {}; only \
                     string, number, integer and boolean can be mirrored",
                    prop.get("type")
                        .map_or_else(|| "(none)".to_owned(), Value::to_string)
                ));
            }
        }
        if let Some(why) = check_annotations(prop, seen) {
            return Some(why);
        }
    }
    None
}

/// RFC 9110 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_values_use_the_base64_sentinel_when_needed() {
        assert_eq!(header_value("add"), "add");
        assert_eq!(
            header_value("quickstart://greeting/Ada"),
            "quickstart://greeting/Ada"
        );
        assert_eq!(header_value("café"), "=?base64?Y2Fmw6k=?=");
        assert_eq!(header_value(" x"), "=?base64?IHg=?=");
        assert_eq!(header_value("a\tb"), "=?base64?YQli?=");
        assert_eq!(
            header_value("=?base64?eA==?="),
            "=?base64?PT9iYXNlNjQ/ZUE9PT89?="
        );
    }

    #[test]
    fn param_headers_follow_x_mcp_header() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "opts": {"type": "object", "properties": {"fast": {"type": "boolean", "x-mcp-header": "Fast"}}},
            "plain": {"type": "string"}
        }});
        let headers = param_headers(
            &schema,
            &json!({"region": "eu-west", "n": 3, "opts": {"fast": true}, "plain": "x"}),
        );
        assert_eq!(
            headers,
            [
                ("Mcp-Param-Region".to_owned(), "eu-west".to_owned()),
                ("Mcp-Param-N".to_owned(), "3".to_owned()),
                ("Mcp-Param-Fast".to_owned(), "true".to_owned()),
            ]
        );
        assert!(param_headers(&schema, &json!({"region": null})).is_empty());
    }

    #[test]
    fn unusable_annotations_are_named() {
        let one = |prop: Value| json!({"type": "object", "properties": {"v": prop}});
        assert_eq!(
            invalid_header_annotation(&one(json!({"type": "string", "x-mcp-header": "Region"}))),
            None
        );
        for (prop, says) in [
            (json!({"type": "string", "x-mcp-header": ""}), "is empty"),
            (
                json!({"type": "object", "x-mcp-header": "Data"}),
                "of type \"object\"",
            ),
            (
                json!({"type": "array", "x-mcp-header": "Items"}),
                "of type \"array\"",
            ),
            (
                json!({"type": "null", "x-mcp-header": "Nil"}),
                "of type \"null\"",
            ),
            (
                json!({"type": "string", "x-mcp-header": "My Region"}),
                "contains ' '",
            ),
            (
                json!({"type": "string", "x-mcp-header": "Region:1"}),
                "contains ':'",
            ),
            (
                json!({"type": "string", "x-mcp-header": "Région"}),
                "contains 'é'",
            ),
            (
                json!({"type": "string", "x-mcp-header": "Region\t1"}),
                "contains '\\t'",
            ),
        ] {
            let why = invalid_header_annotation(&one(prop.clone())).unwrap_or_default();
            assert!(why.contains(says), "{prop}: {why}");
        }
        let twice = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"}
        }});
        assert!(
            invalid_header_annotation(&twice)
                .unwrap_or_default()
                .contains("used by another property")
        );
    }
}
