//! An MCP 2026-07-28 client over either transport: every request carries the
//! `_meta` envelope, lists follow `nextCursor`, errors are named.

use std::time::Duration;

use serde_json::{Map, Value, json};
use typed_mcp::protocol::PROTOCOL_VERSION;
use typed_mcp::wire::{Prompt, Resource, ResourceTemplate, Tool, meta_keys, methods};

use crate::error::ClientError;
use crate::http::{HttpTransport, header_value, param_headers};
use crate::stdio::StdioTransport;
use crate::target::Target;

/// How long one request may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most pages a list may have: a server whose cursors never end is an error.
const MAX_PAGES: usize = 10_000;

#[derive(Debug)]
enum Transport {
    Http(HttpTransport),
    Stdio(StdioTransport),
}

/// What a request asks the server to send before its answer; what arrives is
/// printed to stderr.
#[derive(Debug, Clone, Default)]
pub struct Notifications {
    /// Ask for `notifications/progress` (a `progressToken` in `_meta`; over HTTP
    /// the answer then comes as an event stream).
    pub progress: bool,
    /// Ask for `notifications/message` at this level and above.
    pub log_level: Option<String>,
}

impl Notifications {
    fn wanted(&self) -> bool {
        self.progress || self.log_level.is_some()
    }
}

/// A client connected to one server.
#[derive(Debug)]
pub struct Client {
    transport: Transport,
    next_id: i64,
    timeout: Duration,
    notifications: Notifications,
    tools: Option<Vec<Value>>,
}

impl Client {
    /// Connects to the target: for a command, starts it.
    pub fn connect(target: &Target, timeout: Duration) -> Result<Client, ClientError> {
        let transport = match target {
            Target::Http(url) => Transport::Http(HttpTransport::new(url)?),
            Target::Command(words) => Transport::Stdio(StdioTransport::spawn(words)?),
        };
        Ok(Client {
            transport,
            next_id: 1,
            timeout,
            notifications: Notifications::default(),
            tools: None,
        })
    }

    /// Asks for these notifications on every request from now on.
    pub fn with_notifications(mut self, notifications: Notifications) -> Client {
        self.notifications = notifications;
        self
    }

    /// The `_meta` envelope of every request.
    pub fn envelope() -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(meta_keys::PROTOCOL_VERSION.into(), json!(PROTOCOL_VERSION));
        meta.insert(meta_keys::CLIENT_CAPABILITIES.into(), json!({}));
        meta.insert(
            meta_keys::CLIENT_INFO.into(),
            json!({"name": "typed-mcp-cli", "version": env!("CARGO_PKG_VERSION")}),
        );
        meta
    }

    /// Sends one request and returns its `result`, or the error it got.
    pub async fn request(
        &mut self,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<Value, ClientError> {
        self.request_with(method, params, Vec::new()).await
    }

    async fn request_with(
        &mut self,
        method: &str,
        mut params: Map<String, Value>,
        mut headers: Vec<(String, String)>,
    ) -> Result<Value, ClientError> {
        let id = json!(self.next_id);
        self.next_id += 1;
        let mut meta = Self::envelope();
        if self.notifications.progress {
            meta.insert(
                meta_keys::PROGRESS_TOKEN.into(),
                json!(format!("typed-mcp-{id}")),
            );
        }
        if let Some(level) = &self.notifications.log_level {
            meta.insert(meta_keys::LOG_LEVEL.into(), json!(level));
        }
        params.insert("_meta".into(), Value::Object(meta));
        let show = self.notifications.wanted();
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let bytes = serde_json::to_vec(&message).expect("a Value serializes");
        let exchange = async {
            match &mut self.transport {
                Transport::Http(http) => {
                    let name = match method {
                        methods::TOOLS_CALL | methods::PROMPTS_GET => params.get("name"),
                        methods::RESOURCES_READ => params.get("uri"),
                        _ => None,
                    };
                    let mut standard = vec![
                        (
                            "MCP-Protocol-Version".to_owned(),
                            PROTOCOL_VERSION.to_owned(),
                        ),
                        ("Mcp-Method".to_owned(), method.to_owned()),
                    ];
                    if let Some(name) = name.and_then(Value::as_str) {
                        standard.push(("Mcp-Name".to_owned(), header_value(name)));
                    }
                    standard.append(&mut headers);
                    http.exchange(bytes, &standard, &id, show).await
                }
                Transport::Stdio(stdio) => stdio.exchange(&bytes, &id, method, show).await,
            }
        };
        let response = match tokio::time::timeout(self.timeout, exchange).await {
            Ok(response) => response?,
            Err(_) => {
                return Err(ClientError::Timeout {
                    method: method.to_owned(),
                    seconds: self.timeout.as_secs_f64(),
                    stderr: self.stderr(),
                });
            }
        };
        if let Some(error) = response.get("error") {
            return Err(ClientError::Rpc {
                method: method.to_owned(),
                code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)")
                    .to_owned(),
                data: error.get("data").cloned().map(Box::new),
            });
        }
        match response.get("result") {
            Some(result) if result.is_object() => Ok(result.clone()),
            _ => Err(ClientError::NotMcp {
                what: format!("{method}: the answer has no result object: {response}"),
                stderr: self.stderr(),
            }),
        }
    }

    /// What a stdio server wrote to stderr (empty over HTTP).
    pub fn stderr(&self) -> String {
        match &self.transport {
            Transport::Stdio(stdio) => stdio.stderr(),
            Transport::Http(_) => String::new(),
        }
    }

    /// `server/discover`.
    pub async fn discover(&mut self) -> Result<Value, ClientError> {
        self.request(methods::DISCOVER, Map::new()).await
    }

    /// Every item of a list, following `nextCursor` to the last page.
    pub async fn list_all(&mut self, method: &str, field: &str) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut params = Map::new();
            if let Some(cursor) = cursor.take() {
                params.insert("cursor".into(), Value::String(cursor));
            }
            let page = self.request(method, params).await?;
            match page.get(field) {
                Some(Value::Array(list)) => items.extend(list.iter().cloned()),
                _ => {
                    return Err(ClientError::NotMcp {
                        what: format!("{method}: the result has no {field:?} array: {page}"),
                        stderr: self.stderr(),
                    });
                }
            }
            match page.get("nextCursor") {
                Some(Value::String(next)) => cursor = Some(next.clone()),
                None | Some(Value::Null) => return Ok(items),
                Some(other) => {
                    return Err(ClientError::NotMcp {
                        what: format!("{method}: nextCursor is not a string: {other}"),
                        stderr: self.stderr(),
                    });
                }
            }
        }
        Err(ClientError::NotMcp {
            what: format!("{method}: more than {MAX_PAGES} pages; the cursors do not end"),
            stderr: self.stderr(),
        })
    }

    /// Every tool (fetched once, then remembered).
    pub async fn tools(&mut self) -> Result<&[Value], ClientError> {
        if self.tools.is_none() {
            self.tools = Some(self.list_all(methods::TOOLS_LIST, "tools").await?);
        }
        Ok(self.tools.as_deref().unwrap_or_default())
    }

    /// The descriptor of the tool named `name`, or an error listing the others.
    pub async fn tool(&mut self, name: &str) -> Result<Value, ClientError> {
        let tools = self.tools().await?;
        if let Some(tool) = tools.iter().find(|t| t["name"] == name) {
            return Ok(tool.clone());
        }
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        Err(ClientError::Usage(if names.is_empty() {
            format!("the server has no tool named {name:?} (it offers no tools)")
        } else {
            format!(
                "the server has no tool named {name:?}; it offers: {}",
                names.join(", ")
            )
        }))
    }

    /// `tools/call`. Over HTTP the `Mcp-Param-*` headers the tool's schema asks
    /// for are added.
    pub async fn call_tool(&mut self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        let headers = match &self.transport {
            Transport::Http(_) => {
                let tool = self.tool(name).await?;
                param_headers(&tool["inputSchema"], &arguments)
            }
            Transport::Stdio(_) => Vec::new(),
        };
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        params.insert("arguments".into(), arguments);
        self.request_with(methods::TOOLS_CALL, params, headers)
            .await
    }

    /// `resources/read`.
    pub async fn read_resource(&mut self, uri: &str) -> Result<Value, ClientError> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::String(uri.to_owned()));
        self.request(methods::RESOURCES_READ, params).await
    }

    /// `prompts/get`.
    pub async fn get_prompt(&mut self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        params.insert("arguments".into(), arguments);
        self.request(methods::PROMPTS_GET, params).await
    }

    /// Everything the server declares, as its lists serve it.
    pub async fn catalog(&mut self) -> Result<ServedCatalog, ClientError> {
        let discovered = self.discover().await?;
        let capabilities = discovered.get("capabilities").cloned().unwrap_or_default();
        let offers = |name: &str| capabilities.get(name).is_some_and(|c| !c.is_null());
        let (serves_tools, serves_prompts, serves_resources) =
            (offers("tools"), offers("prompts"), offers("resources"));
        let mut catalog = ServedCatalog::default();
        if serves_tools {
            let tools = self.tools().await?.to_vec();
            catalog.tools = decode_all(&tools, "tool", self)?;
        }
        if serves_prompts {
            let prompts = self.list_all(methods::PROMPTS_LIST, "prompts").await?;
            catalog.prompts = decode_all(&prompts, "prompt", self)?;
        }
        if serves_resources {
            let resources = self.list_all(methods::RESOURCES_LIST, "resources").await?;
            catalog.resources = decode_all(&resources, "resource", self)?;
            let templates = self
                .list_all(methods::RESOURCE_TEMPLATES_LIST, "resourceTemplates")
                .await?;
            catalog.templates = decode_all(&templates, "resource template", self)?;
        }
        Ok(catalog)
    }

    /// Ends the conversation: a stdio server is asked to stop (stdin closed).
    pub async fn close(self) {
        if let Transport::Stdio(stdio) = self.transport {
            stdio.close().await;
        }
    }
}

fn decode_all<T: serde::de::DeserializeOwned>(
    items: &[Value],
    kind: &str,
    client: &Client,
) -> Result<Vec<T>, ClientError> {
    items
        .iter()
        .map(|item| {
            serde_json::from_value(item.clone()).map_err(|e| ClientError::NotMcp {
                what: format!(
                    "the server lists a {kind} that is not a valid descriptor ({e}): {item}"
                ),
                stderr: client.stderr(),
            })
        })
        .collect()
}

/// What a server serves, decoded.
#[derive(Debug, Default)]
pub struct ServedCatalog {
    /// Every tool.
    pub tools: Vec<Tool>,
    /// Every prompt.
    pub prompts: Vec<Prompt>,
    /// Every static resource.
    pub resources: Vec<Resource>,
    /// Every resource template.
    pub templates: Vec<ResourceTemplate>,
}
