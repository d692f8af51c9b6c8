//! Readable renderings of results, for a person at a terminal. `--json`
//! bypasses all of this and prints the results as the server sent them.

use std::fmt::Write as _;

use serde_json::Value;
use typed_mcp::protocol::PROTOCOL_VERSION;

use typed_mcp_client::era::{LegacySession, Spoken};

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{by}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the server says about itself, in the era the handshake settled: a
/// `server/discover` result (2026-07-28) or a legacy session's `initialize`
/// result, with a line that names the era.
pub fn greeting(spoken: &Spoken, result: &Value) -> String {
    match spoken {
        Spoken::Modern { .. } => discover(result),
        Spoken::Legacy(session) => initialize(session),
    }
}

fn server_line(out: &mut String, info: Option<&Value>) {
    match info {
        Some(info) => {
            let name = text(info, "name").unwrap_or("(unnamed)");
            let version = text(info, "version").unwrap_or("?");
            let _ = write!(out, "server: {name} {version}");
            if let Some(title) = text(info, "title") {
                let _ = write!(out, " ({title})");
            }
            out.push('\n');
        }
        None => out.push_str("server: (it does not name itself)\n"),
    }
}

fn capabilities_and_instructions(out: &mut String, result: &Value) {
    let capabilities: Vec<String> = result
        .get("capabilities")
        .and_then(Value::as_object)
        .map(|caps| {
            caps.iter()
                // An empty `experimental` object offers nothing.
                .filter(|(name, value)| {
                    !(name.as_str() == "experimental"
                        && value.as_object().is_some_and(|o| o.is_empty()))
                })
                .map(|(name, value)| {
                    let flags: Vec<&str> = value
                        .as_object()
                        .map(|o| {
                            o.iter()
                                .filter(|(_, v)| **v == Value::Bool(true))
                                .map(|(k, _)| k.as_str())
                                .collect()
                        })
                        .unwrap_or_default();
                    if flags.is_empty() {
                        name.clone()
                    } else {
                        format!("{name} ({})", flags.join(", "))
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "capabilities: {}",
        if capabilities.is_empty() {
            "none".to_owned()
        } else {
            capabilities.join(", ")
        }
    );
    if let Some(instructions) = text(result, "instructions") {
        let _ = writeln!(out, "instructions:\n{}", indent(instructions, "  "));
    }
}

/// A `server/discover` result.
pub fn discover(result: &Value) -> String {
    let mut out = String::new();
    server_line(
        &mut out,
        result
            .get("_meta")
            .and_then(|m| m.get("io.modelcontextprotocol/serverInfo")),
    );
    let _ = writeln!(
        out,
        "era: modern ({PROTOCOL_VERSION}, stateless; the server answered server/discover)"
    );
    let versions: Vec<&str> = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let _ = writeln!(out, "protocol versions: {}", versions.join(", "));
    capabilities_and_instructions(&mut out, result);
    out
}

/// A legacy session's `initialize` result. A legacy server names only the
/// revision it negotiated, so that is the one shown.
pub fn initialize(session: &LegacySession) -> String {
    let result = &session.initialized;
    let mut out = String::new();
    server_line(&mut out, result.get("serverInfo"));
    let _ = writeln!(out, "era: {}", crate::connect::describe(session));
    let _ = writeln!(
        out,
        "protocol version: {} (a legacy server names only the one it negotiated)",
        session.version
    );
    capabilities_and_instructions(&mut out, result);
    out
}

/// The inputs of an object schema, one line each.
fn inputs(schema: &Value) -> Vec<String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let ty = match prop.get("type") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(ts)) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" | "),
                _ if prop.get("enum").is_some() => "enum".to_owned(),
                _ => "any".to_owned(),
            };
            let flag = if required.contains(&name.as_str()) {
                ", required"
            } else {
                ""
            };
            let default = prop
                .get("default")
                .map(|d| format!(", default {d}"))
                .unwrap_or_default();
            let description = text(prop, "description")
                .map(|d| format!(" — {}", first_line(d)))
                .unwrap_or_default();
            format!("{name} ({ty}{flag}{default}){description}")
        })
        .collect()
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}

fn heading(out: &mut String, name: &str, title: Option<&str>, description: Option<&str>) {
    let _ = write!(out, "{name}");
    if let Some(title) = title {
        let _ = write!(out, " — {title}");
    }
    out.push('\n');
    if let Some(description) = description {
        let _ = writeln!(out, "{}", indent(description, "    "));
    }
}

/// The tools of `tools/list`.
pub fn tools(list: &[Value]) -> String {
    if list.is_empty() {
        return "no tools\n".to_owned();
    }
    let mut out = String::new();
    for tool in list {
        heading(
            &mut out,
            text(tool, "name").unwrap_or("(unnamed)"),
            text(tool, "title"),
            text(tool, "description"),
        );
        let inputs = inputs(&tool["inputSchema"]);
        if !inputs.is_empty() {
            let _ = writeln!(out, "    inputs:");
            for input in inputs {
                let _ = writeln!(out, "      {input}");
            }
        }
        if tool.get("outputSchema").is_some() {
            let _ = writeln!(out, "    structured output: yes");
        }
        if let Some(hints) = tool.get("annotations").and_then(Value::as_object) {
            let hints: Vec<String> = hints
                .iter()
                .filter(|(k, _)| k.ends_with("Hint"))
                .map(|(k, v)| format!("{}={v}", k.trim_end_matches("Hint")))
                .collect();
            if !hints.is_empty() {
                let _ = writeln!(out, "    hints: {}", hints.join(", "));
            }
        }
    }
    out
}

/// The prompts of `prompts/list`.
pub fn prompts(list: &[Value]) -> String {
    if list.is_empty() {
        return "no prompts\n".to_owned();
    }
    let mut out = String::new();
    for prompt in list {
        heading(
            &mut out,
            text(prompt, "name").unwrap_or("(unnamed)"),
            text(prompt, "title"),
            text(prompt, "description"),
        );
        let arguments = prompt.get("arguments").and_then(Value::as_array);
        if let Some(arguments) = arguments.filter(|a| !a.is_empty()) {
            let _ = writeln!(out, "    arguments:");
            for arg in arguments {
                let required = if arg["required"] == Value::Bool(true) {
                    " (required)"
                } else {
                    ""
                };
                let description = text(arg, "description")
                    .map(|d| format!(" — {}", first_line(d)))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "      {}{required}{description}",
                    text(arg, "name").unwrap_or("?")
                );
            }
        }
    }
    out
}

/// The resources of `resources/list` (`uri_key` `"uri"`) or the templates of
/// `resources/templates/list` (`"uriTemplate"`).
pub fn resources(list: &[Value], uri_key: &str) -> String {
    if list.is_empty() {
        return if uri_key == "uri" {
            "no resources\n".to_owned()
        } else {
            "no resource templates\n".to_owned()
        };
    }
    let mut out = String::new();
    for item in list {
        let mime = text(item, "mimeType")
            .map(|m| format!(" ({m})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}{mime} — {}",
            text(item, uri_key).unwrap_or("?"),
            text(item, "name").unwrap_or("(unnamed)")
        );
        if let Some(description) = text(item, "description") {
            let _ = writeln!(out, "{}", indent(description, "    "));
        }
    }
    out
}

fn content_block(block: &Value) -> String {
    match text(block, "type") {
        Some("text") => text(block, "text").unwrap_or("").to_owned(),
        Some(kind @ ("image" | "audio")) => {
            let bytes = text(block, "data").map(|d| d.len() / 4 * 3).unwrap_or(0);
            format!(
                "[{kind}: {}, about {bytes} bytes]",
                text(block, "mimeType").unwrap_or("?")
            )
        }
        Some("resource_link") => format!(
            "[link: {} — {}]",
            text(block, "uri").unwrap_or("?"),
            text(block, "name").unwrap_or("?")
        ),
        Some("resource") => {
            let resource = &block["resource"];
            match text(resource, "text") {
                Some(body) => format!(
                    "[resource {}]\n{}",
                    text(resource, "uri").unwrap_or("?"),
                    body
                ),
                None => format!(
                    "[resource {}: binary]",
                    text(resource, "uri").unwrap_or("?")
                ),
            }
        }
        _ => pretty(block),
    }
}

/// A `tools/call` result: its content, then its structured content when the
/// text does not already say the same.
pub fn call(result: &Value) -> String {
    let mut out = String::new();
    if text(result, "resultType") == Some("input_required") {
        let _ = writeln!(
            out,
            "the server asks for input before it answers (input_required); this client \
             cannot answer it. The requests:\n{}",
            indent(
                &pretty(result.get("inputRequests").unwrap_or(&Value::Null)),
                "  "
            )
        );
        return out;
    }
    if result["isError"] == Value::Bool(true) {
        out.push_str("the tool reported an error:\n");
    }
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let structured = result.get("structuredContent");
    if let Some(value) = structured {
        out.push_str(&pretty(value));
        out.push('\n');
    }
    for block in blocks.iter().map(content_block) {
        // The usual mirror of structured output is a text block of its JSON
        // (or, for a value wrapped as `{"result": ...}`, of that value):
        // shown once is enough.
        if let Some(structured) = structured {
            let parsed = serde_json::from_str::<Value>(&block).ok();
            let wrapped = structured
                .as_object()
                .filter(|o| o.len() == 1)
                .and_then(|o| o.get("result"));
            let mirrors_wrapped = wrapped.is_some_and(|value| {
                parsed.as_ref() == Some(value) || value.as_str() == Some(block.as_str())
            });
            if parsed.as_ref() == Some(structured) || mirrors_wrapped {
                continue;
            }
        }
        out.push_str(&block);
        if !block.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// A `resources/read` result.
pub fn read(result: &Value) -> String {
    let mut out = String::new();
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let many = contents.len() > 1;
    for item in &contents {
        if many {
            let _ = writeln!(out, "--- {}", text(item, "uri").unwrap_or("?"));
        }
        match (text(item, "text"), text(item, "blob")) {
            (Some(body), _) => {
                out.push_str(body);
                if !body.ends_with('\n') {
                    out.push('\n');
                }
            }
            (None, Some(blob)) => {
                let _ = writeln!(
                    out,
                    "[binary {}: about {} bytes; use --json for the base64]",
                    text(item, "mimeType").unwrap_or("data"),
                    blob.len() / 4 * 3
                );
            }
            (None, None) => out.push_str(&pretty(item)),
        }
    }
    if contents.is_empty() {
        out.push_str("(no contents)\n");
    }
    out
}

/// A `prompts/get` result.
pub fn prompt(result: &Value) -> String {
    let mut out = String::new();
    if let Some(description) = text(result, "description") {
        let _ = writeln!(out, "{description}\n");
    }
    for message in result
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let _ = writeln!(
            out,
            "[{}]\n{}\n",
            text(message, "role").unwrap_or("?"),
            content_block(&message["content"])
        );
    }
    out
}

/// A notification that arrived before an answer, on stderr (stdout is the
/// answer's).
pub fn notification(message: &Value) {
    let params = &message["params"];
    match text(message, "method") {
        Some("notifications/progress") => {
            // f64's Display drops a zero fraction: "3", not "3.0".
            let number = |v: &Value| v.as_f64().map_or_else(|| v.to_string(), |n| n.to_string());
            let total = params
                .get("total")
                .map(|t| format!("/{}", number(t)))
                .unwrap_or_default();
            let note = text(params, "message")
                .map(|m| format!(" {m}"))
                .unwrap_or_default();
            eprintln!("progress: {}{total}{note}", number(&params["progress"]));
        }
        Some("notifications/message") => {
            let logger = text(params, "logger")
                .map(|l| format!(" {l}"))
                .unwrap_or_default();
            let data = match &params["data"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            eprintln!(
                "log [{}]{logger}: {data}",
                text(params, "level").unwrap_or("?")
            );
        }
        _ => eprintln!("notification: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_shows_structured_output_once() {
        let result = json!({"content": [{"type": "text", "text": "{\"sum\":5}"}],
                            "structuredContent": {"sum": 5}});
        assert_eq!(call(&result), "{\n  \"sum\": 5\n}\n");
        let result = json!({"content": [{"type": "text", "text": "hi"}]});
        assert_eq!(call(&result), "hi\n");
        // A value wrapped as {"result": ...}, its text the bare value.
        let result = json!({"content": [{"type": "text", "text": "5"}],
                            "structuredContent": {"result": 5}});
        assert_eq!(call(&result), "{\n  \"result\": 5\n}\n");
        let result = json!({"content": [{"type": "text", "text": "hi"}],
                            "structuredContent": {"result": "hi"}});
        assert_eq!(call(&result), "{\n  \"result\": \"hi\"\n}\n");
        // Text that only looks like the value is kept.
        let result = json!({"content": [{"type": "text", "text": "five"}],
                            "structuredContent": {"result": 5}});
        assert_eq!(call(&result), "{\n  \"result\": 5\n}\nfive\n");
        let result = json!({"isError": true, "content": [{"type": "text", "text": "boom"}]});
        assert_eq!(call(&result), "the tool reported an error:\nboom\n");
    }

    #[test]
    fn tools_show_their_inputs() {
        let list = [
            json!({"name": "add", "description": "Add.", "inputSchema": {
            "type": "object", "required": ["a"],
            "properties": {"a": {"type": "integer", "description": "First."},
                           "b": {"type": ["integer", "null"], "default": 1}}}}),
        ];
        assert_eq!(
            tools(&list),
            "add\n    Add.\n    inputs:\n      a (integer, required) — First.\n      b (integer | null, default 1)\n"
        );
    }
}
