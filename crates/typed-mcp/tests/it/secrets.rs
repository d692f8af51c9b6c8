//! Secrets: a `Secret<T>` parameter through `#[tool]` (its schema, its value in
//! the function, and argument errors that never echo it, checked on every byte
//! the client receives), the `Redactor` on an encoded reply, and the
//! `RedactingWriter` under a real `tracing` subscriber.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use typed_mcp::secret::{REDACTION_MARKER, Redactor, Secret, Zeroize};
use typed_mcp::{Server, tool, tools};
use typed_mcp_client::testing::Response;

use crate::schema::client;

/// The secret every test sends. Its core is searched for too, so a partial
/// echo is caught as well.
const KEY: &str = "sk-live-7d41c9e0a2b34f58";
const KEY_CORE: &str = "7d41c9e0a2b3";

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Fast,
    Thorough,
}

/// A day of the week, decoded by hand: its error quotes what it refused, as
/// many real types' errors do.
#[derive(Debug, Default)]
struct Day(String);

impl JsonSchema for Day {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Day".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string"})
    }
}

impl<'de> Deserialize<'de> for Day {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let day = String::deserialize(deserializer)?;
        match day.as_str() {
            "mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun" => Ok(Day(day)),
            _ => Err(D::Error::custom(format!("unknown day {day:?}"))),
        }
    }
}

/// A token type with its own checks, whose error quotes the token.
#[derive(Debug, Default)]
struct Token(String);

impl Zeroize for Token {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

impl JsonSchema for Token {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Token".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string"})
    }
}

impl<'de> Deserialize<'de> for Token {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let token = String::deserialize(deserializer)?;
        if token.starts_with("tok_") {
            Ok(Token(token))
        } else {
            Err(D::Error::custom(format!("{token:?} is not a token")))
        }
    }
}

/// Search the upstream index with the caller's key.
///
/// # Arguments
/// * `api_key` - The caller's upstream key.
/// * `backup_key` - Tried when the first key is refused.
/// * `query` - What to look for.
/// * `limit` - How many hits, 1 to 50.
/// * `mode` - How hard to look.
/// * `day` - Which day's index.
#[tool(read_only)]
fn search(
    #[schemars(length(min = 16), regex(pattern = r"^sk-"))] api_key: Secret<String>,
    #[arg(default)]
    #[schemars(example = &"sk-example-0000000000")]
    backup_key: Secret<String>,
    query: String,
    #[schemars(range(min = 1, max = 50))] limit: u8,
    mode: Mode,
    #[arg(default)] day: Day,
) -> String {
    format!(
        "{limit} {mode:?} hits for {query:?} on {:?} with key {api_key} (backup {backup_key:?}, {} characters)",
        day.0,
        api_key.expose_secret().len()
    )
}

/// How to authenticate upstream.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum Auth {
    /// An API key.
    Key {
        /// The key.
        key: Secret<String>,
    },
    /// A user and a password.
    Basic {
        /// Who.
        user: String,
        /// Their password.
        password: Secret<String>,
    },
}

/// A vault address and its opening key, decoded by hand: its error quotes
/// the whole value it was given, key included.
#[derive(Debug, JsonSchema)]
struct Vault {
    /// Where the vault is.
    region: String,
    /// The key that opens it.
    key: Secret<String>,
}

impl<'de> Deserialize<'de> for Vault {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let region = value["region"].as_str().unwrap_or_default().to_owned();
        if region != "eu" && region != "us" {
            return Err(D::Error::custom(format!("no vault for {value}")));
        }
        let key = Secret::deserialize(&value["key"]).map_err(D::Error::custom)?;
        Ok(Vault { region, key })
    }
}

/// Connect upstream.
///
/// # Arguments
/// * `auth` - How to authenticate.
/// * `vault` - Where the credentials are kept, if anywhere.
/// * `token` - A session token, if any.
/// * `retries` - How many times to retry.
#[tool]
fn connect(
    auth: Auth,
    vault: Option<Vault>,
    token: Option<Secret<Token>>,
    #[arg(default = 3)] retries: u8,
) -> String {
    let who = match &auth {
        Auth::Key { key } => format!("a key of {}", key.expose_secret().len()),
        Auth::Basic { user, password } => format!("{user} ({})", password.expose_secret().len()),
    };
    let vault = vault.map(|v| format!("{} ({})", v.region, v.key.expose_secret().len()));
    let token = token.map(|t| t.expose_secret().0.len());
    format!("{who} {vault:?} {token:?} {retries} {auth:?}")
}

/// Report a key the server knows (a leak, for the redactor to catch).
///
/// # Arguments
/// * `text` - Said before the key.
#[tool]
fn leaky(text: String) -> String {
    format!("{text} {KEY}")
}

fn server() -> Server {
    Server::new("secrets", "1.0.0")
        .tools(tools![search, connect, leaky])
        .build()
        .expect("the declarations are valid")
}

// ---------------------------------------------------------------------------
// Assertions
// ---------------------------------------------------------------------------

/// Asserts that no byte the client received holds the key (or its core), and
/// returns the encoded messages.
#[track_caller]
fn assert_no_secret(response: &Response) -> String {
    let mut encoded = String::new();
    for message in &response.messages {
        let bytes = serde_json::to_vec(message).expect("a Value serializes");
        encoded.push_str(std::str::from_utf8(&bytes).expect("JSON is UTF-8"));
        encoded.push('\n');
    }
    assert!(
        !encoded.contains(KEY_CORE),
        "the secret reached the client:\n{encoded}"
    );
    encoded
}

/// The `isError` text's lines after the heading, and the `_meta` problems as
/// `path keyword: message`.
#[track_caller]
fn problems(response: &Response) -> (Vec<String>, Vec<String>) {
    let result = response.result();
    assert_eq!(result["isError"], true, "{result:#}");
    let text = result["content"][0]["text"].as_str().unwrap();
    let lines = text.lines().skip(1).map(str::to_owned).collect();
    let listed = result["_meta"]["rs.typed-mcp/argumentErrors"]
        .as_array()
        .expect("the problems travel in _meta")
        .iter()
        .map(|p| format!("{} {}: {}", p["path"], p["keyword"], p["message"]))
        .collect();
    (lines, listed)
}

// ---------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_secret_parameter_is_write_only_without_default_or_examples() {
    let listed = client(server()).list_tools(None).await;
    let tools = listed.result()["tools"].as_array().unwrap();
    let search = &tools.iter().find(|t| t["name"] == "search").unwrap()["inputSchema"];
    let properties = &search["properties"];
    assert_eq!(
        properties["api_key"],
        json!({
            "description": "The caller's upstream key.",
            "type": "string",
            "writeOnly": true,
            "minLength": 16,
            "pattern": "^sk-"
        })
    );
    // `#[arg(default)]` and `#[schemars(example)]` on a secret: optional, and
    // neither a default nor an example is shown.
    assert_eq!(
        properties["backup_key"],
        json!({
            "description": "Tried when the first key is refused.",
            "type": "string",
            "writeOnly": true
        })
    );
    assert_eq!(
        search["required"],
        json!(["api_key", "query", "limit", "mode"])
    );

    let connect = &tools.iter().find(|t| t["name"] == "connect").unwrap()["inputSchema"];
    // `Option<Secret<Token>>`: a union holding a secret is marked as a whole.
    assert_eq!(
        connect["properties"]["token"],
        json!({
            "description": "A session token, if any.",
            "anyOf": [{"$ref": "#/$defs/Token", "writeOnly": true}, {"type": "null"}],
            "writeOnly": true
        })
    );
    // A default that is not a secret's stays.
    assert_eq!(connect["properties"]["retries"]["default"], 3);
    let auth = serde_json::to_string(&connect["$defs"]["Auth"]).unwrap();
    assert_eq!(auth.matches("\"writeOnly\":true").count(), 2, "{auth}");
}

#[test]
fn any_write_only_subschema_loses_default_and_examples() {
    /// Arguments with a secret marked by hand rather than by type.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Legacy {
        /// A token kept in a plain string.
        #[serde(default = "legacy_token")]
        #[schemars(extend("writeOnly" = true), example = &"tok_example")]
        token: String,
        /// Not a secret.
        #[serde(default = "legacy_token")]
        #[schemars(example = &"tok_example")]
        label: String,
    }
    fn legacy_token() -> String {
        "tok_default".into()
    }
    let schema = typed_mcp::schema::input_schema_for::<Legacy>();
    let token = &schema["properties"]["token"];
    assert_eq!(token["writeOnly"], true);
    assert!(token.get("default").is_none(), "{token}");
    assert!(token.get("examples").is_none(), "{token}");
    assert_eq!(schema["properties"]["label"]["default"], "tok_default");
    assert_eq!(
        schema["properties"]["label"]["examples"],
        json!(["tok_example"])
    );
}

// ---------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------

#[tokio::test]
async fn the_function_gets_the_value_and_prints_the_marker() {
    let client = client(server());
    let response = client
        .call_tool(
            "search",
            json!({"api_key": KEY, "query": "printers", "limit": 5, "mode": "fast", "day": "mon"}),
        )
        .await;
    let encoded = assert_no_secret(&response);
    assert_eq!(
        response.result()["structuredContent"]["result"],
        format!(
            "5 Fast hits for \"printers\" on \"mon\" with key [REDACTED] (backup [REDACTED], {} characters)",
            KEY.len()
        ),
        "{encoded}"
    );
}

#[tokio::test]
async fn wrong_arguments_are_all_reported_and_the_secret_never_echoed() {
    let client = client(server());
    // (arguments, the isError lines, the _meta problems)
    let cases: Vec<(Value, Vec<&str>, Vec<&str>)> = vec![
        // A good key, every other field wrong: all of them reported.
        (
            json!({"api_key": KEY, "query": 5, "limit": 0, "mode": "turbo"}),
            vec![
                "- limit: must be at least 1",
                "- mode: must be one of [\"fast\",\"thorough\"]",
                "- query: expected a string",
            ],
            vec![
                "\"limit\" \"minimum\": \"must be at least 1\"",
                "\"mode\" \"enum\": \"must be one of [\\\"fast\\\",\\\"thorough\\\"]\"",
                "\"query\" \"type\": \"expected a string\"",
            ],
        ),
        // The key in the wrong shape, twice: said without the value.
        (
            json!({"api_key": {"value": KEY}, "backup_key": [KEY], "query": "q", "limit": 51, "mode": "fast"}),
            vec![
                "- api_key: expected a string",
                "- backup_key: expected a string",
                "- limit: must be at most 50",
            ],
            vec![
                "\"api_key\" \"type\": \"expected a string\"",
                "\"backup_key\" \"type\": \"expected a string\"",
                "\"limit\" \"maximum\": \"must be at most 50\"",
            ],
        ),
        // A key that fails its own checks.
        (
            json!({"api_key": format!("pk{}", &KEY[2..]), "query": "q", "limit": 1, "mode": "fast"}),
            vec!["- api_key: must match the pattern ^sk-"],
            vec!["\"api_key\" \"pattern\": \"must match the pattern ^sk-\""],
        ),
        // A misspelt key name: the unknown field is named, its value is not.
        (
            json!({"apikey": KEY, "query": "q", "limit": 1, "mode": "fast"}),
            vec![
                "- (arguments): unknown field(s): apikey",
                "- api_key: this field is required",
            ],
            vec![
                "\"\" \"additionalProperties\": \"unknown field(s): apikey\"",
                "\"api_key\" \"required\": \"this field is required\"",
            ],
        ),
        // The schema accepts, a type refuses: its message stays readable, the
        // key is not in it.
        (
            json!({"api_key": KEY, "query": "q", "limit": 1, "mode": "fast", "day": "funday"}),
            vec!["- (arguments): unknown day \"funday\""],
            vec!["\"\" \"deserialize\": \"unknown day \\\"funday\\\"\""],
        ),
    ];
    for (arguments, lines, listed) in cases {
        let response = client.call_tool("search", arguments.clone()).await;
        let encoded = assert_no_secret(&response);
        let (got_lines, got_listed) = problems(&response);
        assert_eq!(got_lines, lines, "{arguments}\n{encoded}");
        assert_eq!(got_listed, listed, "{arguments}\n{encoded}");
    }
}

#[tokio::test]
async fn secrets_inside_other_values_are_never_echoed() {
    let client = client(server());

    // A secret's own type refuses it, quoting it in its message.
    let response = client
        .call_tool(
            "connect",
            json!({"auth": {"kind": "key", "key": "k"}, "token": KEY}),
        )
        .await;
    assert_no_secret(&response);
    let (lines, _) = problems(&response);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("the secret value was refused by its type"),
        "{lines:?}"
    );

    // A container's type refuses it, quoting the whole value, key included:
    // the message is kept, the key scrubbed from it.
    let response = client
        .call_tool(
            "connect",
            json!({"auth": {"kind": "key", "key": "sk-live-other-key"}, "vault": {"region": "mars", "key": KEY}}),
        )
        .await;
    assert_no_secret(&response);
    let (lines, _) = problems(&response);
    assert_eq!(
        lines,
        [format!(
            "- (arguments): no vault for {{\"region\":\"mars\",\"key\":\"{REDACTION_MARKER}\"}}"
        )]
    );

    // A union that fails as a whole: its message names "the value", not the
    // object holding the key; a wrong field beside it is still reported.
    let response = client
        .call_tool(
            "connect",
            json!({"auth": {"kind": "basic", "user": 7, "password": KEY, "extra": KEY}, "retries": -1}),
        )
        .await;
    let encoded = assert_no_secret(&response);
    let (lines, listed) = problems(&response);
    assert!(
        lines.iter().any(|l| l == "- retries: must be at least 0"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("- auth: the value is not valid under")),
        "{lines:?}\n{encoded}"
    );
    assert_eq!(lines.len(), listed.len());

    // An optional secret of the wrong type: the union says what it expects.
    let response = client
        .call_tool(
            "connect",
            json!({"auth": {"kind": "key", "key": KEY}, "token": [KEY]}),
        )
        .await;
    assert_no_secret(&response);
    let (lines, _) = problems(&response);
    assert_eq!(lines, ["- token: expected a string or null"]);

    // An object holding the key where the key belongs, inside an optional
    // value: reported at the secret's path, without the value.
    let response = client
        .call_tool(
            "connect",
            json!({"auth": {"kind": "key", "key": KEY}, "vault": {"region": "eu", "key": {"nested": KEY}}}),
        )
        .await;
    assert_no_secret(&response);
    let (lines, listed) = problems(&response);
    assert_eq!(lines, ["- vault.key: expected a string"]);
    assert_eq!(listed, ["\"vault.key\" \"type\": \"expected a string\""]);
}

// ---------------------------------------------------------------------------
// The Redactor on the wire and in the logs
// ---------------------------------------------------------------------------

#[tokio::test]
async fn an_encoded_reply_is_redacted_and_still_json() {
    let redactor = Redactor::new([KEY]).unwrap();
    let response = client(server())
        .call_tool("leaky", json!({"text": "the key is"}))
        .await;
    let message = response.response().unwrap();
    let bytes = serde_json::to_vec(message).unwrap();
    assert!(
        String::from_utf8_lossy(&bytes).contains(KEY),
        "the leak happens"
    );
    let redacted = redactor.redact_json(&bytes);
    let text = String::from_utf8(redacted.to_vec()).unwrap();
    assert!(!text.contains(KEY_CORE), "{text}");
    let parsed: Value = serde_json::from_slice(&redacted).expect("still JSON");
    let result = &parsed["result"];
    assert_eq!(
        result["structuredContent"]["result"],
        "the key is [REDACTED]"
    );
    // The text block carries the structured value's JSON, escaped again.
    assert_eq!(
        result["content"][0]["text"],
        "{\"result\":\"the key is [REDACTED]\"}"
    );
}

/// A shared log sink.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Sink {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Hands what is written on in pieces of three bytes, so a secret in an event
/// is always split across several writes.
struct Chunked<W>(W);

impl<W: Write> Write for Chunked<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for piece in buf.chunks(3) {
            self.0.write_all(piece)?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

fn log_events() {
    tracing::info!(api_key = KEY, "calling upstream");
    tracing::info!(header = %format!("Bearer {KEY}"), "sending");
    tracing::warn!("upstream said: key {KEY:?} refused");
    let secret = Secret::new(KEY.to_owned());
    tracing::info!(key = ?secret, shown = %secret, "a typed secret");
}

#[test]
fn a_secret_in_a_tracing_field_never_reaches_the_log() {
    // Without a redactor, the events do carry the key: the test can fail.
    let plain = Sink::default();
    let writer = plain.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || Chunked(writer.clone()))
        .finish();
    tracing::subscriber::with_default(subscriber, log_events);
    assert_eq!(plain.text().matches(KEY).count(), 3, "{}", plain.text());

    let sink = Sink::default();
    let writer = sink.clone();
    let redactor = Redactor::new([KEY]).unwrap();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || Chunked(redactor.writer(writer.clone())))
        .finish();
    tracing::subscriber::with_default(subscriber, log_events);
    let log = sink.text();
    assert_eq!(log.lines().count(), 4, "{log}");
    assert!(!log.contains(KEY_CORE), "{log}");
    assert_eq!(log.matches(REDACTION_MARKER).count(), 5, "{log}");
    assert!(log.contains("api_key=\"[REDACTED]\""), "{log}");
    assert!(log.contains("header=Bearer [REDACTED]"), "{log}");
    assert!(log.contains("key \"[REDACTED]\" refused"), "{log}");
    assert!(log.contains("key=[REDACTED] shown=[REDACTED]"), "{log}");
}

// ---------------------------------------------------------------------------
// The leak hunt: a registered secret value, put everywhere a handler can put
// it, reaches no byte a client receives, no log line and no receipt.
// ---------------------------------------------------------------------------

/// The upstream's failure, quoting the key in its message.
#[derive(Debug, thiserror::Error)]
#[error("upstream refused the key {0}")]
struct UpstreamError(String);

/// A failure whose source quotes the key.
#[derive(Debug, thiserror::Error)]
#[error("could not reach the upstream")]
struct CallFailed(#[source] UpstreamError);

/// Which leak to try.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Leak {
    /// In the returned value.
    Value,
    /// In the error message.
    Error,
    /// In the error's source.
    Source,
    /// In a log notification.
    Log,
    /// In a panic message.
    Panic,
    /// In a tracing field.
    Tracing,
}

/// Put the upstream key somewhere it must not be seen.
///
/// # Arguments
/// * `leak` - Where to put it.
#[tool]
async fn leak_everywhere(leak: Leak, ctx: typed_mcp::ToolContext) -> Result<String, CallFailed> {
    let key = KEY.to_owned();
    match leak {
        Leak::Value => Ok(format!("the key is {key}")),
        Leak::Error => Err(CallFailed(UpstreamError(key))),
        Leak::Source => Err(CallFailed(UpstreamError(format!("({key})")))),
        Leak::Log => {
            ctx.log(
                typed_mcp::wire::LoggingLevel::Error,
                json!({"message": format!("upstream rejected {key}"), "key": key}),
            )
            .await;
            Ok("logged".into())
        }
        Leak::Panic => panic!("upstream key {key} was refused"),
        Leak::Tracing => {
            tracing::error!(api_key = %key, "upstream rejected the key");
            Ok("traced".into())
        }
    }
}

/// Every leak, as a client with log messages on sees it; the log and
/// receipts as they were written.
async fn hunt(redact: bool) -> (String, String, String) {
    let log = Sink::default();
    let redactor = if redact {
        Redactor::new([KEY]).unwrap()
    } else {
        Redactor::default()
    };
    let writer = log.clone();
    let log_redactor = redactor.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || log_redactor.writer(writer.clone()))
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);

    let receipts_path = std::env::temp_dir().join(format!(
        "typed-mcp-leak-{}-{redact}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&receipts_path);
    let server = Server::new("leaks", "0.1.0")
        .tools(tools![leak_everywhere])
        .redactor(redactor)
        .receipt_sink(typed_mcp::receipt::JsonLinesSink::create(&receipts_path).unwrap())
        .receipt_sink(typed_mcp::receipt::TracingSink)
        .build()
        .unwrap();
    let client = client(server);
    let mut seen = String::new();
    for leak in ["value", "error", "source", "log", "panic", "tracing"] {
        let mut meta = client.envelope();
        meta.insert("io.modelcontextprotocol/logLevel".into(), json!("debug"));
        let response = client
            .send(&json!({
                "jsonrpc": "2.0", "id": leak, "method": "tools/call",
                "params": {"name": "leak_everywhere", "arguments": {"leak": leak}, "_meta": meta}
            }))
            .await;
        assert!(response.response().is_some(), "{leak} was answered");
        for message in &response.messages {
            seen.push_str(&serde_json::to_string(message).unwrap());
            seen.push('\n');
        }
    }
    let receipts = std::fs::read_to_string(&receipts_path).unwrap();
    std::fs::remove_file(&receipts_path).ok();
    (seen, log.text(), receipts)
}

#[tokio::test]
async fn a_registered_secret_leaks_nowhere() {
    // Without the secret registered, each leak does reach the client or the
    // log: the hunt can fail.
    let (seen, log, _) = hunt(false).await;
    assert!(seen.matches(KEY).count() >= 4, "{seen}");
    assert!(log.contains(KEY), "{log}");

    let (seen, log, receipts) = hunt(true).await;
    for (what, text) in [("client", &seen), ("log", &log), ("receipts", &receipts)] {
        assert!(!text.contains(KEY), "{what}: {text}");
        assert!(!text.contains(KEY_CORE), "{what}: {text}");
    }
    // Everything still arrived, redacted.
    assert!(seen.contains("the key is [REDACTED]"), "{seen}");
    assert!(
        seen.contains("upstream refused the key [REDACTED]"),
        "{seen}"
    );
    assert!(seen.contains("notifications/message"), "{seen}");
    assert!(seen.contains("handler panicked"), "{seen}");
    assert!(log.contains("upstream key [REDACTED] was refused"), "{log}");
    assert!(log.contains("api_key=[REDACTED]"), "{log}");
    assert_eq!(receipts.lines().count(), 6, "{receipts}");
}
