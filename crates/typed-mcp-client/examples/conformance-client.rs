//! A small client for the official conformance suite's client leg, built on
//! this crate: `conformance client --command "conformance-client"` runs it
//! with the scenario server's URL as its last argument, the scenario's name
//! in `MCP_CONFORMANCE_SCENARIO`, its revision in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` and, for some, the calls to make in
//! `MCP_CONFORMANCE_CONTEXT` (`{"toolCalls": [{"name", "arguments"}]}`).
//!
//! It does what an agent does on connecting: discovers the server, lists its
//! tools (dropping any whose `x-mcp-header` annotations are invalid), calls
//! the calls of the context or else every tool with arguments made from its
//! schema, and reads every resource and gets every prompt it offers.
//! Elicitation is answered by accepting (`{"confirmed": true}`), so MRTR
//! scenarios complete. A JSON-RPC error is the server's answer and is only
//! reported; it exits 1, naming the step, when a step gets no answer or one
//! that is not MCP.

use serde_json::{Map, Value, json};
use typed_mcp_client::wire::{ElicitAction, ElicitResult};
use typed_mcp_client::{Client, ClientError, Era, Options, Responder};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("conformance-client: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    let url = std::env::args()
        .next_back()
        .filter(|a| a.starts_with("http"))
        .ok_or("expected the server's URL as the last argument")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    eprintln!("conformance-client: scenario {scenario:?} at {url} ({version})");

    let responder = Responder::new().on_elicit(|_params| async {
        let mut content = Map::new();
        content.insert("confirmed".into(), json!(true));
        Ok(ElicitResult::new(ElicitAction::Accept).with_content(content))
    });
    let era = if version.is_empty() || version.as_str() >= "2026-07-28" {
        Era::Auto
    } else {
        Era::Legacy
    };
    let options = Options::new()
        .era(era)
        .responder(responder)
        .client_info("typed-mcp-conformance-client", env!("CARGO_PKG_VERSION"));
    let client = Client::http(&url, options)
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    let outcome = exercise(&client, &context).await;
    if let Err(e) = client.close().await {
        eprintln!("conformance-client: {e}");
    }
    outcome
}

async fn exercise(client: &Client, context: &Value) -> Result<(), String> {
    let discovered = client
        .discover()
        .await
        .map_err(|e| format!("discover: {e}"))?;
    let offers = |name: &str| {
        discovered["capabilities"]
            .get(name)
            .is_some_and(|c| !c.is_null())
    };

    let tools = client
        .tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    match context.get("toolCalls").and_then(Value::as_array) {
        Some(calls) => {
            for call in calls {
                let name = call["name"].as_str().unwrap_or_default();
                let arguments = call.get("arguments").cloned().unwrap_or_else(|| json!({}));
                answered(client.call_tool(name, arguments).await, "tools/call", name)?;
            }
        }
        None => {
            for tool in &tools {
                let name = tool["name"].as_str().unwrap_or_default();
                let arguments = arguments_for(&tool["inputSchema"]);
                answered(client.call_tool(name, arguments).await, "tools/call", name)?;
            }
        }
    }
    if offers("resources") {
        let resources = client
            .list_all("resources/list", "resources")
            .await
            .map_err(|e| format!("resources/list: {e}"))?;
        for resource in resources {
            let uri = resource["uri"].as_str().unwrap_or_default();
            answered(client.read_resource(uri).await, "resources/read", uri)?;
        }
    }
    if offers("prompts") {
        let prompts = client
            .list_all("prompts/list", "prompts")
            .await
            .map_err(|e| format!("prompts/list: {e}"))?;
        for prompt in prompts {
            let name = prompt["name"].as_str().unwrap_or_default();
            let mut arguments = Map::new();
            for argument in prompt["arguments"].as_array().into_iter().flatten() {
                if argument["required"] == true
                    && let Some(arg) = argument["name"].as_str()
                {
                    arguments.insert(arg.to_owned(), json!("example"));
                }
            }
            answered(
                client.get_prompt(name, Value::Object(arguments)).await,
                "prompts/get",
                name,
            )?;
        }
    }
    Ok(())
}

/// A step's outcome: a JSON-RPC error is the server's answer (a scenario
/// server may serve no `tools/call` at all) and is only reported; no answer,
/// or one that is not MCP, fails the run.
fn answered(outcome: Result<Value, ClientError>, method: &str, name: &str) -> Result<(), String> {
    match outcome {
        Ok(_) => Ok(()),
        Err(e) if e.is_answer() => {
            eprintln!("conformance-client: {method} {name}: the server answered {e}");
            Ok(())
        }
        Err(e) => Err(format!("{method} {name}: {e}")),
    }
}

/// Arguments that satisfy the schema's required properties, from their types.
fn arguments_for(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for name in schema["required"].as_array().into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        let kind = properties
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            Some("null") => Value::Null,
            _ => json!("example"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}
