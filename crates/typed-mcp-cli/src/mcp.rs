//! `typed-mcp mcp`: the CLI's own commands served over stdio as an MCP server,
//! declared with typed-mcp's macros, so an AI agent can inspect, call or
//! lock-check a server under development.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use typed_mcp::wire::{CallToolResult, ResultType, methods};
use typed_mcp::{Server, tool, tools};

use typed_mcp_client::{Client, Spoken};

use crate::connect::Settings;
use crate::error::CliError;
use crate::lock::{Change, Lock, diff};
use crate::show;
use crate::target::Target;

/// What to list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ListKind {
    /// `tools/list`.
    #[default]
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    Templates,
}

impl ListKind {
    /// The method and the result's array field.
    pub fn method(self) -> (&'static str, &'static str) {
        match self {
            ListKind::Tools => (methods::TOOLS_LIST, "tools"),
            ListKind::Prompts => (methods::PROMPTS_LIST, "prompts"),
            ListKind::Resources => (methods::RESOURCES_LIST, "resources"),
            ListKind::Templates => (methods::RESOURCE_TEMPLATES_LIST, "resourceTemplates"),
        }
    }

    /// The readable rendering of the items.
    pub fn show(self, items: &[Value]) -> String {
        match self {
            ListKind::Tools => show::tools(items),
            ListKind::Prompts => show::prompts(items),
            ListKind::Resources => show::resources(items, "uri"),
            ListKind::Templates => show::resources(items, "uriTemplate"),
        }
    }
}

/// Connects, runs `work`, and closes the connection whatever happened.
async fn with_client<T>(
    server: &[String],
    work: impl AsyncFnOnce(&Client) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let target = Target::parse(server)?;
    // Auto: the server behind may speak either era.
    let client = crate::connect::connect(&target, &Settings::default()).await?;
    let result = work(&client).await;
    if let Err(e) = client.close().await {
        // stdout is the MCP stream; stderr is the log.
        eprintln!("typed-mcp mcp: {e}");
    }
    result
}

/// Text for the model and the raw result as structured content.
fn shown(text: String, raw: Value) -> CallToolResult {
    CallToolResult::text(text).with_structured_content(raw)
}

/// Ask an MCP server what it is: its name and version, the protocol era and
/// versions it speaks, its capabilities and instructions (`server/discover`,
/// or `initialize` for a server of the dated revisions up to 2025-11-25).
///
/// # Arguments
/// * `server` - The server: one URL such as `http://127.0.0.1:8000/mcp`, or a command and its arguments (e.g. `["cargo", "run", "-q", "--example", "quickstart"]`), which is started and spoken to over stdio.
#[tool(open_world = true)]
async fn discover(server: Vec<String>) -> Result<CallToolResult, CliError> {
    with_client(&server, async |client| {
        let result = client.discover().await?;
        Ok(shown(show::greeting(&client.spoken(), &result), result))
    })
    .await
}

/// List what an MCP server offers — tools (the default), prompts, resources or
/// resource templates — following every page.
///
/// # Arguments
/// * `server` - The server: one URL such as `http://127.0.0.1:8000/mcp`, or a command and its arguments, started and spoken to over stdio.
/// * `kind` - What to list: `tools`, `prompts`, `resources` or `templates`.
#[tool(open_world = true)]
async fn list(server: Vec<String>, kind: Option<ListKind>) -> Result<CallToolResult, CliError> {
    let kind = kind.unwrap_or_default();
    with_client(&server, async |client| {
        let (method, field) = kind.method();
        let items = client.list_all(method, field).await?;
        let text = kind.show(&items);
        Ok(shown(text, json!({ field: items })))
    })
    .await
}

/// Call a tool of an MCP server and return its result as the server sent it.
///
/// # Arguments
/// * `server` - The server: one URL such as `http://127.0.0.1:8000/mcp`, or a command and its arguments, started and spoken to over stdio.
/// * `name` - The tool's name.
/// * `arguments` - The tool's arguments, as a JSON object.
#[tool(open_world = true)]
async fn call_tool(
    server: Vec<String>,
    name: String,
    arguments: Option<Map<String, Value>>,
) -> Result<CallToolResult, CliError> {
    with_client(&server, async |client| {
        let arguments = Value::Object(arguments.unwrap_or_default());
        let result = client.call_tool(&name, arguments).await?;
        let mut complete = result.clone();
        if let (Spoken::Legacy(_), Some(fields)) = (client.spoken(), complete.as_object_mut()) {
            // A legacy result is always final: the dated revisions have no
            // interim answers, so it is passed on as the `complete` it is.
            fields
                .entry("resultType")
                .or_insert_with(|| json!("complete"));
        }
        let decoded: Option<CallToolResult> = serde_json::from_value(complete).ok();
        match decoded {
            Some(result) if result.result_type == ResultType::Complete => {
                Ok(result.with_meta(Default::default()))
            }
            _ => Ok(shown(show::call(&result), result)),
        }
    })
    .await
}

/// Read a resource of an MCP server (`resources/read`).
///
/// # Arguments
/// * `server` - The server: one URL such as `http://127.0.0.1:8000/mcp`, or a command and its arguments, started and spoken to over stdio.
/// * `uri` - The resource's URI.
#[tool(open_world = true)]
async fn read_resource(server: Vec<String>, uri: String) -> Result<CallToolResult, CliError> {
    with_client(&server, async |client| {
        let result = client.read_resource(&uri).await?;
        Ok(shown(show::read(&result), result))
    })
    .await
}

/// Get a prompt of an MCP server with its arguments filled in (`prompts/get`).
///
/// # Arguments
/// * `server` - The server: one URL such as `http://127.0.0.1:8000/mcp`, or a command and its arguments, started and spoken to over stdio.
/// * `name` - The prompt's name.
/// * `arguments` - The prompt's arguments (every value is a string).
#[tool(open_world = true)]
async fn get_prompt(
    server: Vec<String>,
    name: String,
    arguments: Option<BTreeMap<String, String>>,
) -> Result<CallToolResult, CliError> {
    with_client(&server, async |client| {
        let result = client
            .get_prompt(&name, json!(arguments.unwrap_or_default()))
            .await?;
        Ok(shown(show::prompt(&result), result))
    })
    .await
}

/// The outcome of `lock_check`.
#[derive(Debug, Serialize, JsonSchema)]
struct LockCheck {
    /// The lock file compared.
    lock: String,
    /// True when the served catalog matches the lock.
    up_to_date: bool,
    /// Every difference: which declaration, which field, old and new.
    changes: Vec<Change>,
    /// The same, as a readable report.
    report: String,
}

/// Check that an MCP server still serves exactly what its lock file
/// (`mcp.lock`, written by `typed-mcp lock`) records: every tool, prompt and
/// resource digest. Reports each change — which declaration, which field, old
/// and new — so a rewritten description or schema is noticed.
///
/// # Arguments
/// * `server` - The server: one URL such as `http://127.0.0.1:8000/mcp`, or a command and its arguments, started and spoken to over stdio.
/// * `lock` - The lock file's path (default `mcp.lock` in the working directory).
#[tool(open_world = true)]
async fn lock_check(server: Vec<String>, lock: Option<String>) -> Result<LockCheck, CliError> {
    let path = PathBuf::from(lock.unwrap_or_else(|| "mcp.lock".into()));
    let locked = Lock::read(&path)?;
    let served = with_client(&server, async |client| Ok(client.catalog().await?)).await?;
    let served = Lock::of(&served)?;
    let changes = diff(&locked, &served);
    Ok(LockCheck {
        lock: path.display().to_string(),
        up_to_date: changes.is_empty(),
        report: crate::lock::report(&path, &changes),
        changes,
    })
}

/// Serves the tools above on stdin/stdout until stdin ends.
pub async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    Server::new("typed-mcp-cli", env!("CARGO_PKG_VERSION"))
        .instructions(
            "Debug MCP servers: discover, list, call tools, read resources, get prompts, and \
             check a server against its mcp.lock. A server is a URL or a command to start.",
        )
        .tools(tools![
            discover,
            list,
            call_tool,
            read_resource,
            get_prompt,
            lock_check
        ])
        .build()?
        .serve_stdio()
        .await?;
    Ok(())
}
