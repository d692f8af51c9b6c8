//! An MCP client over either transport, in either era (see [`crate::era`]):
//! 2026-07-28 requests carry the `_meta` envelope, legacy ones go through the
//! session `initialize` opened; lists follow `nextCursor`; errors are named.

use std::time::Duration;

use serde_json::{Map, Value, json};
use typed_mcp::protocol::PROTOCOL_VERSION;
use typed_mcp::wire::{Prompt, Resource, ResourceTemplate, Tool, meta_keys, methods};

use http::StatusCode;

use crate::era::{
    Because, Era, INITIALIZED, LEGACY_OFFERED, LEGACY_VERSIONS, LegacySession, SET_LOG_LEVEL,
    Spoken, legacy_sign, sends_version_header,
};
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

/// How to connect: the era to speak, the patience, the notifications to ask for.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long one request may take.
    pub timeout: Duration,
    /// Which era to speak.
    pub era: Era,
    /// What to ask for on every request.
    pub notifications: Notifications,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: DEFAULT_TIMEOUT,
            era: Era::Auto,
            notifications: Notifications::default(),
        }
    }
}

/// A client connected to one server, in the era the handshake settled.
#[derive(Debug)]
pub struct Client {
    transport: Transport,
    next_id: i64,
    timeout: Duration,
    notifications: Notifications,
    tools: Option<Vec<Value>>,
    spoken: Spoken,
    /// The `Mcp-Session-Id` of a legacy HTTP session.
    session_id: Option<String>,
    /// `--era`.
    era: Era,
    /// True once the server has answered a request with a result.
    answered: bool,
}

impl Client {
    /// Connects to the target (for a command, starts it) and settles the era:
    /// in auto mode `server/discover`, then `initialize` if that showed the
    /// server does not speak 2026-07-28; `--era legacy` goes straight to
    /// `initialize`; `--era modern` sends nothing until the first request.
    pub async fn connect(target: &Target, options: Options) -> Result<Client, ClientError> {
        let transport = match target {
            Target::Http(url) => Transport::Http(HttpTransport::new(url)?),
            Target::Command(words) => Transport::Stdio(StdioTransport::spawn(words)?),
        };
        let mut client = Client {
            transport,
            next_id: 1,
            timeout: options.timeout,
            notifications: options.notifications,
            tools: None,
            spoken: Spoken::Modern { discovered: None },
            session_id: None,
            era: options.era,
            answered: false,
        };
        match client.handshake(options.era).await {
            Ok(()) => Ok(client),
            Err(e) => {
                client.close().await;
                Err(e)
            }
        }
    }

    async fn handshake(&mut self, era: Era) -> Result<(), ClientError> {
        match era {
            Era::Modern => Ok(()),
            Era::Legacy => self.initialize(Because::Asked).await,
            Era::Auto => match self.request(methods::DISCOVER, Map::new()).await {
                Ok(discovered) => {
                    self.spoken = Spoken::Modern {
                        discovered: Some(discovered),
                    };
                    Ok(())
                }
                Err(modern) => {
                    let Some(why) = legacy_sign(&modern) else {
                        return Err(modern);
                    };
                    self.initialize(Because::DiscoverRefused(why))
                        .await
                        .map_err(|legacy| ClientError::NeitherEra {
                            modern: Box::new(modern),
                            legacy: Box::new(legacy),
                        })
                }
            },
        }
    }

    /// The dated handshake: `initialize` offering [`LEGACY_OFFERED`], the
    /// server's counter-offer checked, `notifications/initialized`, then
    /// `logging/setLevel` when a log level was asked for.
    async fn initialize(&mut self, because: Because) -> Result<(), ClientError> {
        let mut params = Map::new();
        params.insert("protocolVersion".into(), json!(LEGACY_OFFERED));
        params.insert("capabilities".into(), json!({}));
        params.insert("clientInfo".into(), client_info());
        let (initialized, session_id) = self
            .round_trip(methods::INITIALIZE, params, Vec::new())
            .await?;
        let version = initialized.get("protocolVersion").and_then(Value::as_str);
        let Some(version) = version.filter(|v| LEGACY_VERSIONS.contains(v)) else {
            return Err(ClientError::NotMcp {
                what: format!(
                    "initialize: the server answered protocolVersion {}; this client negotiates \
                     {} through initialize",
                    version.map_or_else(|| "(none)".to_owned(), |v| format!("{v:?}")),
                    LEGACY_VERSIONS.join(", ")
                ),
                stderr: self.stderr(),
            });
        };
        self.spoken = Spoken::Legacy(LegacySession {
            version: version.to_owned(),
            initialized: initialized.clone(),
            because,
        });
        if matches!(self.transport, Transport::Http(_)) {
            self.session_id = session_id;
        }
        self.notify(INITIALIZED).await?;
        if let Some(level) = self.notifications.log_level.clone() {
            if initialized
                .get("capabilities")
                .and_then(|c| c.get("logging"))
                .is_some()
            {
                let mut params = Map::new();
                params.insert("level".into(), Value::String(level));
                self.request(SET_LOG_LEVEL, params).await?;
            } else {
                eprintln!(
                    "typed-mcp: --log-level {level}: the server declares no logging capability, \
                     so no log messages were asked for"
                );
            }
        }
        Ok(())
    }

    /// What the handshake settled.
    pub fn spoken(&self) -> &Spoken {
        &self.spoken
    }

    /// The `_meta` envelope of every 2026-07-28 request.
    pub fn envelope() -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(meta_keys::PROTOCOL_VERSION.into(), json!(PROTOCOL_VERSION));
        meta.insert(meta_keys::CLIENT_CAPABILITIES.into(), json!({}));
        meta.insert(meta_keys::CLIENT_INFO.into(), client_info());
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

    /// The HTTP headers of the era: 2026-07-28's standard headers, or a legacy
    /// session's id and negotiated version.
    fn era_headers(&self, method: &str, params: &Map<String, Value>) -> Vec<(String, String)> {
        let mut headers = Vec::new();
        match &self.spoken {
            Spoken::Modern { .. } => {
                headers.push((
                    "MCP-Protocol-Version".to_owned(),
                    PROTOCOL_VERSION.to_owned(),
                ));
                headers.push(("Mcp-Method".to_owned(), method.to_owned()));
                let name = match method {
                    methods::TOOLS_CALL | methods::PROMPTS_GET => params.get("name"),
                    methods::RESOURCES_READ => params.get("uri"),
                    _ => None,
                };
                if let Some(name) = name.and_then(Value::as_str) {
                    headers.push(("Mcp-Name".to_owned(), header_value(name)));
                }
            }
            Spoken::Legacy(session) => {
                if let Some(id) = &self.session_id {
                    headers.push(("Mcp-Session-Id".to_owned(), id.clone()));
                }
                if sends_version_header(&session.version) {
                    headers.push(("MCP-Protocol-Version".to_owned(), session.version.clone()));
                }
            }
        }
        headers
    }

    async fn request_with(
        &mut self,
        method: &str,
        mut params: Map<String, Value>,
        extra_headers: Vec<(String, String)>,
    ) -> Result<Value, ClientError> {
        let progress_token = self
            .notifications
            .progress
            .then(|| json!(format!("typed-mcp-{}", self.next_id)));
        let mut meta = match self.spoken {
            Spoken::Modern { .. } => {
                let mut meta = Self::envelope();
                if let Some(level) = &self.notifications.log_level {
                    meta.insert(meta_keys::LOG_LEVEL.into(), json!(level));
                }
                meta
            }
            // A legacy request has no envelope; its log level was set once,
            // for the session.
            Spoken::Legacy(_) => Map::new(),
        };
        if let Some(token) = progress_token {
            meta.insert(meta_keys::PROGRESS_TOKEN.into(), token);
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        let mut headers = self.era_headers(method, &params);
        headers.extend(extra_headers);
        let (result, _) = self.round_trip(method, params, headers).await?;
        Ok(result)
    }

    /// Sends one request as it is and returns its `result` and the session id
    /// the HTTP response carried; a JSON-RPC error becomes [`ClientError::Rpc`].
    async fn round_trip(
        &mut self,
        method: &str,
        params: Map<String, Value>,
        headers: Vec<(String, String)>,
    ) -> Result<(Value, Option<String>), ClientError> {
        let id = json!(self.next_id);
        self.next_id += 1;
        let show = self.notifications.wanted();
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let bytes = serde_json::to_vec(&message).expect("a Value serializes");
        let exchange = async {
            match &mut self.transport {
                Transport::Http(http) => http
                    .exchange(bytes, &headers, &id, show)
                    .await
                    .map(|answer| (answer.message, answer.session_id)),
                Transport::Stdio(stdio) => stdio
                    .exchange(&bytes, &id, method, show)
                    .await
                    .map(|message| (message, None)),
            }
        };
        let (response, session_id) = match tokio::time::timeout(self.timeout, exchange).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => return Err(self.refused(e)),
            Err(_) => {
                return Err(ClientError::Timeout {
                    method: method.to_owned(),
                    seconds: self.timeout.as_secs_f64(),
                    stderr: self.stderr(),
                });
            }
        };
        if let Some(error) = response.get("error") {
            return Err(self.refused(ClientError::Rpc {
                method: method.to_owned(),
                code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)")
                    .to_owned(),
                data: error.get("data").cloned().map(Box::new),
            }));
        }
        match response.get("result") {
            Some(result) if result.is_object() => {
                self.answered = true;
                Ok((result.clone(), session_id))
            }
            _ => Err(ClientError::NotMcp {
                what: format!("{method}: the answer has no result object: {response}"),
                stderr: self.stderr(),
            }),
        }
    }

    /// A refusal, worded for where it happened: a 404 inside a legacy HTTP
    /// session means the session is gone.
    fn refused(&self, error: ClientError) -> ClientError {
        match (error, &self.session_id) {
            (ClientError::Http { status: 404, what }, Some(id)) => ClientError::Http {
                status: 404,
                what: format!(
                    "{what} — the server no longer knows session {id} (it expired or was \
                     ended); run the command again"
                ),
            },
            (error, _) => error,
        }
    }

    /// Sends one notification (legacy: the session's headers).
    async fn notify(&mut self, method: &str) -> Result<(), ClientError> {
        let params = Map::new();
        let headers = self.era_headers(method, &params);
        let message = json!({"jsonrpc": "2.0", "method": method});
        let bytes = serde_json::to_vec(&message).expect("a Value serializes");
        let sent = async {
            match &mut self.transport {
                Transport::Http(http) => {
                    http.notify(bytes, &headers, &format!("the notification {method}"))
                        .await
                }
                Transport::Stdio(stdio) => stdio.notify(&bytes).await,
            }
        };
        match tokio::time::timeout(self.timeout, sent).await {
            Ok(sent) => sent,
            Err(_) => Err(ClientError::Timeout {
                method: method.to_owned(),
                seconds: self.timeout.as_secs_f64(),
                stderr: self.stderr(),
            }),
        }
    }

    /// With `--era modern`, when the server refused the first request the way
    /// a legacy server would: asks `server/discover` and, when that is refused
    /// too, says the server may speak only a dated revision. Other errors are
    /// returned as they are.
    pub async fn explain(&mut self, error: ClientError) -> ClientError {
        if self.era != Era::Modern || self.answered || legacy_sign(&error).is_none() {
            return error;
        }
        match self.request(methods::DISCOVER, Map::new()).await {
            Ok(_) => error,
            Err(_) => ClientError::ModernRefused(Box::new(error)),
        }
    }

    /// What a stdio server wrote to stderr (empty over HTTP).
    pub fn stderr(&self) -> String {
        match &self.transport {
            Transport::Stdio(stdio) => stdio.stderr(),
            Transport::Http(_) => String::new(),
        }
    }

    /// What the server says about itself: the `server/discover` result
    /// (2026-07-28; asked once), or the `initialize` result of a legacy session.
    pub async fn discover(&mut self) -> Result<Value, ClientError> {
        match &self.spoken {
            Spoken::Modern {
                discovered: Some(discovered),
            } => Ok(discovered.clone()),
            Spoken::Legacy(session) => Ok(session.initialized.clone()),
            Spoken::Modern { discovered: None } => {
                let discovered = self.request(methods::DISCOVER, Map::new()).await?;
                self.spoken = Spoken::Modern {
                    discovered: Some(discovered.clone()),
                };
                Ok(discovered)
            }
        }
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
        // The `Mcp-Param-*` headers are 2026-07-28's.
        let headers = match (&self.transport, &self.spoken) {
            (Transport::Http(_), Spoken::Modern { .. }) => {
                let tool = self.tool(name).await?;
                param_headers(&tool["inputSchema"], &arguments)
            }
            _ => Vec::new(),
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

    /// Ends the conversation: a stdio server is asked to stop (stdin closed);
    /// a legacy HTTP session is ended with a DELETE (a server that does not
    /// let clients end sessions answers 405, which is fine).
    pub async fn close(self) {
        match self.transport {
            Transport::Stdio(stdio) => stdio.close().await,
            Transport::Http(ref http) => {
                let Some(id) = &self.session_id else { return };
                let headers = self.era_headers("", &Map::new());
                match tokio::time::timeout(self.timeout, http.delete(&headers)).await {
                    Ok(Ok(status))
                        if status.is_success()
                            || status == StatusCode::METHOD_NOT_ALLOWED
                            || status == StatusCode::NOT_FOUND => {}
                    Ok(Ok(status)) => {
                        eprintln!(
                            "typed-mcp: ending session {id}: the server answered HTTP {status}"
                        )
                    }
                    Ok(Err(e)) => eprintln!("typed-mcp: ending session {id}: {e}"),
                    Err(_) => eprintln!("typed-mcp: ending session {id}: no answer in time"),
                }
            }
        }
    }
}

fn client_info() -> Value {
    json!({"name": "typed-mcp-cli", "version": env!("CARGO_PKG_VERSION")})
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
