//! `fixture-server`: the "everything" server the official MCP conformance
//! suite (`@modelcontextprotocol/conformance`) expects, written with
//! typed-mcp's macros. `scripts/conformance` builds it, serves it over
//! Streamable HTTP on a loopback port and runs both of the suite's
//! requirement sets against that one endpoint: 2026-07-28 (stateless) and
//! 2025-11-25 (sessions opened with `initialize`).
//!
//! ```sh
//! cargo run -p fixture-server -- --http 127.0.0.1:3000   # at http://127.0.0.1:3000/mcp
//! cargo run -p fixture-server                            # stdio (the default)
//! ```
//!
//! What it serves is the suite's fixture contract, item by item: content
//! tools, a tool that fails, progress, logging, a tool that needs the
//! `sampling` client capability, the multi round-trip (`input_required`)
//! tools and prompt, static and templated resources, prompts with arguments,
//! an embedded resource and an image, and a completion; for the 2025-11-25
//! set also a tool that logs three messages, sampling and elicitation tools
//! (the SEP-1034 defaults and SEP-1330 enum forms among them) and a resource
//! to subscribe to. Every tool that asks for input is one `Answer::NeedsInput`
//! declaration for both eras: a 2026-07-28 client gets `input_required` and
//! retries, a session gets server-to-client requests. Every multi round-trip
//! tool keeps its progress in the sealed `requestState` and nothing in
//! memory: any retry may reach any process that shares the key.
//!
//! Declarations use `#[tool]`, `#[resource]` and `#[prompt]` wherever those
//! can express the contract; the few they cannot (a required client
//! capability, an input schema carried verbatim, an `x-mcp-header`
//! parameter, a completer) are declared by hand and listed alongside.

mod tasks;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Map, Value, json};
use typed_mcp::wire::{
    CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitResult, GetPromptResult, InputRequest, ListRootsResult, LoggingLevel, PromptMessage,
    ResourceContents, Role, SamplingMessage,
};
use typed_mcp::{
    Answer, NeedsInput, Server, ToolContext,
    declare::{PromptDecl, ToolDecl},
    prompt, prompts, resource, resources, tool, tools,
    transport::Shutdown,
};
use typed_mcp_http::HttpServer;

/// A 1×1 PNG, base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file, base64.
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

// ---------------------------------------------------------------------------
// Content tools
// ---------------------------------------------------------------------------

/// Return a simple text block.
#[tool(read_only)]
async fn test_simple_text() -> ContentBlock {
    ContentBlock::text("This is a simple text response for testing.")
}

/// Return a 1x1 PNG image block.
#[tool(read_only)]
async fn test_image_content() -> ContentBlock {
    ContentBlock::image(PNG, "image/png")
}

/// Return a short WAV audio block.
#[tool(read_only)]
async fn test_audio_content() -> ContentBlock {
    ContentBlock::audio(WAV, "audio/wav")
}

/// Return an embedded text resource.
#[tool(read_only)]
async fn test_embedded_resource() -> ContentBlock {
    ContentBlock::embedded(ResourceContents::text(
        "test://embedded-resource",
        Some("text/plain"),
        "This is an embedded resource content.",
    ))
}

/// Return text, an image and an embedded JSON resource in one result.
#[tool(read_only)]
async fn test_multiple_content_types() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(PNG, "image/png"),
        ContentBlock::embedded(ResourceContents::text(
            "test://mixed-content-resource",
            Some("application/json"),
            r#"{"test":"data","value":123}"#,
        )),
    ]
}

/// The failure `test_error_handling` reports.
#[derive(Debug)]
struct IntentionalFailure;

impl std::fmt::Display for IntentionalFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("This tool intentionally returns an error for testing")
    }
}

impl std::error::Error for IntentionalFailure {}

/// Fail on purpose: the answer is a result with `isError: true`, not a
/// protocol error.
#[tool(read_only)]
async fn test_error_handling() -> Result<ContentBlock, IntentionalFailure> {
    Err(IntentionalFailure)
}

// ---------------------------------------------------------------------------
// Progress, logging, capabilities, streams
// ---------------------------------------------------------------------------

/// Report progress 0, 50 and 100 out of 100, 50 ms apart, when the request
/// carries a progress token; answer with the token.
#[tool(read_only)]
async fn test_tool_with_progress(ctx: ToolContext) -> ContentBlock {
    let Some(token) = ctx.meta().progress_token.clone() else {
        return ContentBlock::text("No progress token was given, so no progress was reported.");
    };
    for (step, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(done, Some(100.0), None).await;
    }
    match serde_json::to_value(&token) {
        Ok(Value::String(token)) => ContentBlock::text(token),
        Ok(other) => ContentBlock::text(other.to_string()),
        Err(_) => ContentBlock::text("progress reported"),
    }
}

/// Log one message (sent only when the request asks for log messages with
/// `io.modelcontextprotocol/logLevel`) and answer with text.
#[tool(read_only)]
async fn test_logging_tool(ctx: ToolContext) -> ContentBlock {
    let sent = ctx
        .log(
            LoggingLevel::Info,
            json!({"message": "test_logging_tool ran"}),
        )
        .await;
    ContentBlock::text(if sent {
        "Logged one message."
    } else {
        "Nothing was logged: the request did not ask for log messages."
    })
}

/// Log three messages, 50 ms apart (each sent only when the client asked
/// for log messages at `info` or below: `logging/setLevel` on a legacy
/// session, `io.modelcontextprotocol/logLevel` on a modern request); answer
/// with how many were sent.
#[tool(read_only)]
async fn test_tool_with_logging(ctx: ToolContext) -> ContentBlock {
    let mut sent = 0;
    for (step, message) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if ctx
            .log(LoggingLevel::Info, json!({"message": message}))
            .await
        {
            sent += 1;
        }
    }
    ContentBlock::text(format!("Sent {sent} of 3 log messages."))
}

/// Needs the client's `sampling` capability on the request (refused with
/// -32021 otherwise); answers with text. Declared by hand: the macros do not
/// express a required client capability.
fn test_missing_capability() -> ToolDecl {
    ToolDecl::builder("test_missing_capability")
        .description("Requires the client capability `sampling` on the request; answers with text.")
        .input_schema(json!({"type": "object", "properties": {}, "additionalProperties": false}))
        .requires_client_capability("sampling")
        .handler(|_args, _ctx| async {
            Ok(CallToolResult::text(
                "The request declared the sampling capability.",
            ))
        })
}

/// Ask the user to confirm, through an elicitation, when the client can
/// elicit; answer with text once confirmed (or when it cannot).
#[tool(read_only)]
async fn test_streaming_elicitation(ctx: ToolContext) -> Answer<ContentBlock> {
    if let Some(answer) = elicited(&ctx, "confirm") {
        return Answer::Done(ContentBlock::text(format!(
            "The user answered the elicitation ({}).",
            action_name(answer.action)
        )));
    }
    if ctx.client_capabilities().elicitation.is_none() {
        return Answer::Done(ContentBlock::text(
            "The client cannot elicit, so nothing was asked.",
        ));
    }
    Answer::NeedsInput(NeedsInput::new().elicit(
        "confirm",
        "Continue with the streaming elicitation test?",
        json!({
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"]
        }),
    ))
}

/// Stand-in for a change of the tool list: the list is fixed (tools
/// listChanged is not announced), so this only answers with text.
#[tool]
async fn test_trigger_tool_change() -> ContentBlock {
    ContentBlock::text("The tool list is fixed; no list_changed notification is sent.")
}

/// Stand-in for a change of the prompt list: the list is fixed (prompts
/// listChanged is not announced), so this only answers with text.
#[tool]
async fn test_trigger_prompt_change() -> ContentBlock {
    ContentBlock::text("The prompt list is fixed; no list_changed notification is sent.")
}

// ---------------------------------------------------------------------------
// Multi round-trip requests (input_required)
// ---------------------------------------------------------------------------

/// The client's answer to the elicitation under `key`, if it sent one of the
/// right shape. Unknown keys are ignored; a malformed answer counts as none,
/// so the input is asked for again.
fn elicited(ctx: &ToolContext, key: &str) -> Option<ElicitResult> {
    ctx.input_response::<ElicitResult>(key)?.ok()
}

/// The string field `field` of an accepted elicitation under `key`.
fn accepted_string(ctx: &ToolContext, key: &str, field: &str) -> Option<Result<String, String>> {
    let answer = elicited(ctx, key)?;
    if answer.action != ElicitAction::Accept {
        return Some(Err(action_name(answer.action).to_owned()));
    }
    let value = answer.content.as_ref()?.get(field)?.as_str()?;
    Some(Ok(value.to_owned()))
}

fn action_name(action: ElicitAction) -> &'static str {
    match action {
        ElicitAction::Accept => "accepted",
        ElicitAction::Decline => "declined",
        ElicitAction::Cancel => "cancelled",
    }
}

/// A form with one required field of `kind` ("string" or "boolean").
fn one_field(field: &str, kind: &str) -> Value {
    json!({
        "type": "object",
        "properties": {field: {"type": kind}},
        "required": [field]
    })
}

/// A sampling request for one user message.
fn sample(text: &str, max_tokens: u64) -> InputRequest {
    InputRequest::Sample(CreateMessageRequestParams::new(
        vec![SamplingMessage::new(Role::User, ContentBlock::text(text))],
        max_tokens,
    ))
}

/// The text of the client's answer to the sampling request under `key`.
fn sampled(ctx: &ToolContext, key: &str) -> Option<String> {
    let answer = ctx.input_response::<CreateMessageResult>(key)?.ok()?;
    Some(match answer.content.get("text").and_then(Value::as_str) {
        Some(text) => text.to_owned(),
        None => answer.content.to_string(),
    })
}

/// The client's roots under `key`.
fn roots(ctx: &ToolContext, key: &str) -> Option<ListRootsResult> {
    ctx.input_response::<ListRootsResult>(key)?.ok()
}

fn list_roots() -> InputRequest {
    InputRequest::ListRoots(Map::new())
}

/// Ask the client's model to answer `prompt` through sampling; report its
/// answer.
///
/// # Arguments
/// * `prompt` - What to ask the model.
#[tool(read_only)]
async fn test_sampling(ctx: ToolContext, prompt: String) -> Answer<ContentBlock> {
    match sampled(&ctx, "answer") {
        Some(text) => Answer::Done(ContentBlock::text(format!("LLM response: {text}"))),
        None => Answer::NeedsInput(NeedsInput::new().request("answer", sample(&prompt, 100))),
    }
}

/// Ask the user for a username and an email address, showing `message`;
/// report what they answered.
///
/// # Arguments
/// * `message` - What to show the user.
#[tool(read_only)]
async fn test_elicitation(ctx: ToolContext, message: String) -> Answer<ContentBlock> {
    match elicited(&ctx, "user_info") {
        Some(answer) => Answer::Done(ContentBlock::text(format!(
            "The user {} the request; content: {}",
            action_name(answer.action),
            answer
                .content
                .map_or("none".to_owned(), |c| Value::Object(c).to_string())
        ))),
        None => Answer::NeedsInput(NeedsInput::new().elicit(
            "user_info",
            message,
            json!({
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "The user's name"},
                    "email": {"type": "string", "description": "The user's email address"}
                },
                "required": ["username", "email"]
            }),
        )),
    }
}

/// Ask the user for a form whose every field has a default (SEP-1034): a
/// string, an integer, a number, an enum and a boolean; report the answer.
#[tool(read_only)]
async fn test_elicitation_sep1034_defaults(ctx: ToolContext) -> Answer<ContentBlock> {
    match elicited(&ctx, "defaults") {
        Some(answer) => Answer::Done(ContentBlock::text(format!(
            "The user {} the form with defaults.",
            action_name(answer.action)
        ))),
        None => Answer::NeedsInput(NeedsInput::new().elicit(
            "defaults",
            "Please review the prefilled details.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {
                        "type": "string",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active"
                    },
                    "verified": {"type": "boolean", "default": true}
                }
            }),
        )),
    }
}

/// Ask the user to choose from the five enum forms of SEP-1330 (untitled
/// and titled single-select, the deprecated `enumNames`, untitled and titled
/// multi-select); report the answer.
#[tool(read_only)]
async fn test_elicitation_sep1330_enums(ctx: ToolContext) -> Answer<ContentBlock> {
    let titled = |values: &[(&str, &str)]| -> Vec<Value> {
        values
            .iter()
            .map(|(value, title)| json!({"const": value, "title": title}))
            .collect()
    };
    let choices = [
        ("value1", "First option"),
        ("value2", "Second option"),
        ("value3", "Third option"),
    ];
    match elicited(&ctx, "choices") {
        Some(answer) => Answer::Done(ContentBlock::text(format!(
            "The user {} the enum form.",
            action_name(answer.action)
        ))),
        None => Answer::NeedsInput(NeedsInput::new().elicit(
            "choices",
            "Please choose.",
            json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {
                        "type": "string",
                        "enum": ["option1", "option2", "option3"]
                    },
                    "titledSingle": {"type": "string", "oneOf": titled(&choices)},
                    "legacyEnum": {
                        "type": "string",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option one", "Option two", "Option three"]
                    },
                    "untitledMulti": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                    },
                    "titledMulti": {
                        "type": "array",
                        "items": {"anyOf": titled(&choices)}
                    }
                }
            }),
        )),
    }
}

/// Ask for the user's name through an elicitation; greet them once answered.
#[tool(read_only)]
async fn test_input_required_result_elicitation(ctx: ToolContext) -> Answer<ContentBlock> {
    match accepted_string(&ctx, "user_name", "name") {
        Some(Ok(name)) => Answer::Done(ContentBlock::text(format!("Hello, {name}!"))),
        Some(Err(action)) => Answer::Done(ContentBlock::text(format!(
            "The user {action} to give a name."
        ))),
        None => Answer::NeedsInput(NeedsInput::new().elicit(
            "user_name",
            "What is your name?",
            one_field("name", "string"),
        )),
    }
}

/// Ask the client's model a question through sampling; report its answer.
#[tool(read_only)]
async fn test_input_required_result_sampling(ctx: ToolContext) -> Answer<ContentBlock> {
    match sampled(&ctx, "capital") {
        Some(text) => Answer::Done(ContentBlock::text(format!("The model answered: {text}"))),
        None => Answer::NeedsInput(
            NeedsInput::new().request("capital", sample("What is the capital of France?", 100)),
        ),
    }
}

/// Ask for the client's roots; report how many there are.
#[tool(read_only)]
async fn test_input_required_result_list_roots(ctx: ToolContext) -> Answer<ContentBlock> {
    match roots(&ctx, "roots") {
        Some(list) => {
            let uris: Vec<&str> = list.roots.iter().map(|r| r.uri.as_str()).collect();
            Answer::Done(ContentBlock::text(format!(
                "Found {} root(s): {}",
                uris.len(),
                uris.join(", ")
            )))
        }
        None => Answer::NeedsInput(NeedsInput::new().request("roots", list_roots())),
    }
}

/// The state `test_input_required_result_request_state` carries.
const CONFIRM_PENDING: &str = "confirm-pending";

/// Ask for a confirmation and carry a `requestState` to the retry; complete
/// only when both come back.
#[tool(read_only)]
async fn test_input_required_result_request_state(ctx: ToolContext) -> Answer<ContentBlock> {
    if ctx.request_state() == Some(CONFIRM_PENDING)
        && let Some(answer) = elicited(&ctx, "confirm")
    {
        let ok = answer
            .content
            .as_ref()
            .and_then(|c| c.get("ok"))
            .and_then(Value::as_bool);
        return Answer::Done(ContentBlock::text(format!(
            "state-ok: the confirmation was {} (ok = {})",
            action_name(answer.action),
            ok.map_or("absent".to_owned(), |ok| ok.to_string())
        )));
    }
    Answer::NeedsInput(
        NeedsInput::new()
            .elicit("confirm", "Please confirm.", one_field("ok", "boolean"))
            .state(CONFIRM_PENDING),
    )
}

/// Ask for three inputs at once (an elicitation, a sampling request and the
/// roots); complete when all three are answered.
#[tool(read_only)]
async fn test_input_required_result_multiple_inputs(ctx: ToolContext) -> Answer<ContentBlock> {
    let name = accepted_string(&ctx, "user_name", "name");
    let greeting = sampled(&ctx, "greeting");
    let client_roots = roots(&ctx, "client_roots");
    if let (Some(name), Some(greeting), Some(client_roots)) = (&name, &greeting, &client_roots) {
        let name = name
            .clone()
            .unwrap_or_else(|action| format!("(the user {action})"));
        return Answer::Done(ContentBlock::text(format!(
            "name: {name}; greeting: {greeting}; roots: {}",
            client_roots.roots.len()
        )));
    }
    let mut needs = NeedsInput::new();
    if name.is_none() {
        needs = needs.elicit(
            "user_name",
            "What is your name?",
            one_field("name", "string"),
        );
    }
    if greeting.is_none() {
        needs = needs.request("greeting", sample("Write a one-line greeting.", 50));
    }
    if client_roots.is_none() {
        needs = needs.request("client_roots", list_roots());
    }
    Answer::NeedsInput(needs.state("multiple-inputs"))
}

/// What `test_input_required_result_multi_round` carries between rounds.
const STEP1: &str = "step1";

fn ask_name() -> NeedsInput {
    NeedsInput::new()
        .elicit("step1", "What is your name?", one_field("name", "string"))
        .state(STEP1)
}

fn ask_color(state: String) -> NeedsInput {
    NeedsInput::new()
        .elicit(
            "step2",
            "What is your favorite color?",
            one_field("color", "string"),
        )
        .state(state)
}

/// Two rounds of questions (a name, then a color), then the answer: each
/// round's progress travels in the sealed `requestState`.
#[tool(read_only)]
async fn test_input_required_result_multi_round(ctx: ToolContext) -> Answer<ContentBlock> {
    let state = ctx.request_state().map(str::to_owned);
    match state.as_deref() {
        // Round 1, or a retry without state: start over.
        None => Answer::NeedsInput(ask_name()),
        // Round 2: the name, then ask for the color.
        Some(STEP1) => match accepted_string(&ctx, "step1", "name") {
            Some(name) => {
                let name = name.unwrap_or_else(|action| format!("(the user {action})"));
                Answer::NeedsInput(ask_color(json!({"step": 2, "name": name}).to_string()))
            }
            None => Answer::NeedsInput(ask_name()),
        },
        // Round 3: the color; done.
        Some(carried) => {
            let Some(name) = serde_json::from_str::<Value>(carried)
                .ok()
                .and_then(|v| v.get("name")?.as_str().map(str::to_owned))
            else {
                return Answer::NeedsInput(ask_name());
            };
            match accepted_string(&ctx, "step2", "color") {
                Some(color) => {
                    let color = color.unwrap_or_else(|action| format!("(the user {action})"));
                    Answer::Done(ContentBlock::text(format!(
                        "{name}'s favorite color is {color}."
                    )))
                }
                None => Answer::NeedsInput(ask_color(carried.to_owned())),
            }
        }
    }
}

/// The state `test_input_required_result_tampered_state` carries.
const TAMPER_CHECK: &str = "tamper-check";

/// Ask for a confirmation with a sealed `requestState`; a retry whose state
/// was altered is refused (-32602) before this function runs.
#[tool(read_only)]
async fn test_input_required_result_tampered_state(ctx: ToolContext) -> Answer<ContentBlock> {
    if ctx.request_state() == Some(TAMPER_CHECK) && elicited(&ctx, "confirm").is_some() {
        return Answer::Done(ContentBlock::text("The requestState came back unaltered."));
    }
    Answer::NeedsInput(
        NeedsInput::new()
            .elicit("confirm", "Please confirm.", one_field("ok", "boolean"))
            .state(TAMPER_CHECK),
    )
}

/// Ask only for the kinds of input the request's client capabilities declare
/// (an elicitation, a sampling request); complete at once when it declares
/// neither, and once answered.
#[tool(read_only)]
async fn test_input_required_result_capabilities(ctx: ToolContext) -> Answer<ContentBlock> {
    let confirm = elicited(&ctx, "confirm");
    let summary = sampled(&ctx, "summary");
    if confirm.is_some() || summary.is_some() {
        return Answer::Done(ContentBlock::text(format!(
            "Answered: elicitation {}, sampling {}.",
            confirm.map_or("not asked", |a| action_name(a.action)),
            if summary.is_some() {
                "answered"
            } else {
                "not asked"
            }
        )));
    }
    let caps = ctx.client_capabilities();
    let mut needs = NeedsInput::new();
    if caps.elicitation.is_some() {
        needs = needs.elicit("confirm", "Please confirm.", one_field("ok", "boolean"));
    }
    if caps.sampling.is_some() {
        needs = needs.request("summary", sample("Summarize this test in one line.", 50));
    }
    if needs.requests.is_empty() {
        return Answer::Done(ContentBlock::text(
            "The client declared neither elicitation nor sampling, so nothing was asked.",
        ));
    }
    Answer::NeedsInput(needs)
}

// ---------------------------------------------------------------------------
// Tools declared by hand (what the macros do not express)
// ---------------------------------------------------------------------------

/// A tool whose JSON Schema 2020-12 input schema is served verbatim.
fn json_schema_2020_12_tool() -> ToolDecl {
    ToolDecl::builder("json_schema_2020_12_tool")
        .description(
            "Takes a contact whose input schema uses JSON Schema 2020-12 features ($defs, $ref, $anchor, allOf/anyOf, if/then/else); answers with text.",
        )
        .input_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        }))
        .allow_undocumented_inputs()
        .handler(|args, _ctx| async move {
            Ok(CallToolResult::text(format!(
                "Received {}",
                Value::Object(args)
            )))
        })
}

/// A tool whose `region` argument is mirrored in the `Mcp-Param-Region`
/// header (`x-mcp-header`), which the server checks against the body.
fn test_header_region() -> ToolDecl {
    ToolDecl::builder("test_header_region")
        .description("Echo the region, which clients also send in the Mcp-Param-Region header.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "region": {
                    "type": "string",
                    "description": "The region; mirrored in the Mcp-Param-Region header.",
                    "x-mcp-header": "Region"
                }
            },
            "required": ["region"],
            "additionalProperties": false
        }))
        .handler(|args, _ctx| async move {
            let region = args.get("region").and_then(Value::as_str).unwrap_or("");
            Ok(CallToolResult::text(format!("Region: {region}")))
        })
}

// ---------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------

/// A static text resource.
#[resource(
    uri = "test://static-text",
    name = "static-text",
    mime_type = "text/plain"
)]
async fn static_text() -> String {
    "This is the content of the static text resource.".to_owned()
}

/// A static binary resource: a 1x1 PNG.
#[resource(
    uri = "test://static-binary",
    name = "static-binary",
    mime_type = "image/png"
)]
async fn static_binary() -> ResourceContents {
    ResourceContents::blob("test://static-binary", Some("image/png"), PNG)
}

/// A resource clients subscribe to (`resources/subscribe`); its updates
/// are published through the server's `ResourceUpdates`.
#[resource(
    uri = "test://watched-resource",
    name = "watched-resource",
    mime_type = "text/plain"
)]
async fn watched_resource() -> String {
    "This resource is watched for updates.".to_owned()
}

/// A JSON record for any id.
///
/// # Arguments
/// * `id` - The record's id.
#[resource(
    uri = "test://template/{id}/data",
    name = "template",
    mime_type = "application/json"
)]
async fn template(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

// ---------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------

/// A prompt without arguments.
#[prompt]
async fn test_simple_prompt() -> String {
    "This is a simple prompt for testing.".to_owned()
}

/// Values `completion/complete` offers for `test_prompt_with_arguments`.
const COMPLETIONS: &[&str] = &["test", "testValue1", "testValue2", "example", "sample"];

/// A prompt with two required arguments whose values can be completed.
/// Declared by hand: the macros do not attach a completer.
fn test_prompt_with_arguments() -> PromptDecl {
    PromptDecl::builder("test_prompt_with_arguments")
        .description("A prompt with two required arguments, both completable.")
        .argument("arg1", "The first argument.", true)
        .argument("arg2", "The second argument.", true)
        .completer(|request, _ctx| async move {
            Ok(COMPLETIONS
                .iter()
                .filter(|v| v.starts_with(&request.value))
                .map(|v| (*v).to_owned())
                .collect())
        })
        .handler(|args, _ctx| async move {
            let arg = |name: &str| args.get(name).cloned().unwrap_or_default();
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    arg("arg1"),
                    arg("arg2")
                ),
            )]))
        })
}

/// A prompt that embeds a resource, then asks about it.
///
/// # Arguments
/// * `resourceUri` - The URI of the resource to embed.
#[prompt]
#[allow(non_snake_case)]
async fn test_prompt_with_embedded_resource(resourceUri: String) -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(
            Role::User,
            ContentBlock::embedded(ResourceContents::text(
                resourceUri,
                Some("text/plain"),
                "Embedded resource content for testing.",
            )),
        ),
        PromptMessage::user_text("Please process the embedded resource above."),
    ]
}

/// A prompt that shows an image, then asks about it.
#[prompt]
async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(Role::User, ContentBlock::image(PNG, "image/png")),
        PromptMessage::user_text("Please analyze the image above."),
    ]
}

/// A prompt that first asks the user, through an elicitation, for the
/// context to put in it (a multi round-trip `prompts/get`).
#[prompt]
async fn test_input_required_result_prompt(ctx: ToolContext) -> Answer<String> {
    match accepted_string(&ctx, "user_context", "context") {
        Some(Ok(context)) => Answer::Done(format!("Prompt with context: {context}")),
        Some(Err(action)) => Answer::Done(format!(
            "Prompt without context: the user {action} to give one."
        )),
        None => Answer::NeedsInput(NeedsInput::new().elicit(
            "user_context",
            "What context should the prompt include?",
            one_field("context", "string"),
        )),
    }
}

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

fn server() -> Result<Server, typed_mcp::BuildError> {
    Server::new("typed-mcp-conformance-fixture", env!("CARGO_PKG_VERSION"))
        .instructions("The MCP conformance suite's fixture server, built with typed-mcp.")
        .tools(tools![
            test_simple_text,
            test_image_content,
            test_audio_content,
            test_embedded_resource,
            test_multiple_content_types,
            test_error_handling,
            test_tool_with_progress,
            test_missing_capability(),
            test_streaming_elicitation,
            test_logging_tool,
            test_tool_with_logging,
            test_sampling,
            test_elicitation,
            test_elicitation_sep1034_defaults,
            test_elicitation_sep1330_enums,
            test_trigger_tool_change,
            test_trigger_prompt_change,
            test_input_required_result_elicitation,
            test_input_required_result_sampling,
            test_input_required_result_list_roots,
            test_input_required_result_request_state,
            test_input_required_result_multiple_inputs,
            test_input_required_result_multi_round,
            test_input_required_result_tampered_state,
            test_input_required_result_capabilities,
            json_schema_2020_12_tool(),
            test_header_region(),
            tasks::greet,
            tasks::slow_compute,
            tasks::failing_job,
            tasks::protocol_error_job,
            tasks::confirm_delete,
            tasks::multi_input,
            tasks::test_tool_with_task,
        ])
        .resources(resources![
            static_text,
            static_binary,
            watched_resource,
            template
        ])
        .prompts(prompts![
            test_simple_prompt,
            test_prompt_with_arguments(),
            test_prompt_with_embedded_resource,
            test_prompt_with_image,
            test_input_required_result_prompt,
        ])
        .build()
}

/// How to serve: `--http ADDR` or stdio.
enum Transport {
    Stdio,
    Http(SocketAddr),
}

const USAGE: &str = "usage: fixture-server [--stdio | --http 127.0.0.1:PORT]";

fn transport() -> Result<Transport, String> {
    let mut args = std::env::args().skip(1);
    let mut transport = Transport::Stdio;
    while let Some(arg) = args.next() {
        let address = match arg.as_str() {
            "--stdio" => {
                transport = Transport::Stdio;
                continue;
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            "--http" => args.next().ok_or(USAGE)?,
            other => match other.strip_prefix("--http=") {
                Some(address) => address.to_owned(),
                None => return Err(format!("unexpected argument {other:?}; {USAGE}")),
            },
        };
        let address = address
            .parse()
            .map_err(|e| format!("--http {address:?}: {e} (expected IP:PORT); {USAGE}"))?;
        transport = Transport::Http(address);
    }
    Ok(transport)
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fixture-server: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let transport = transport()?;
    let server = server()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match transport {
        Transport::Stdio => {
            let served = runtime.block_on(async {
                let shutdown = Shutdown::on_terminate()?;
                eprintln!("fixture-server: serving MCP 2026-07-28 on stdin/stdout");
                server.serve_stdio_until(shutdown).await
            });
            served?;
        }
        Transport::Http(address) => runtime.block_on(serve_http(server, address))?,
    }
    Ok(())
}

async fn serve_http(server: Server, address: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind(address).await?;
    let local = listener.local_addr()?;
    let shutdown = Shutdown::on_terminate()?;
    // Refuses a non-loopback address: this fixture has no authentication.
    let app = HttpServer::new(server, local)
        .shutdown(shutdown.clone())
        .mount("/mcp")?;
    eprintln!("fixture-server: serving MCP 2026-07-28 at http://{local}/mcp");
    typed_mcp_http::serve(listener, app, shutdown.wait()).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_builds_and_lists_test_simple_text_first() {
        let server = server().expect("the fixture's declarations are valid");
        let tools = server.catalog().tools();
        assert_eq!(tools[0].tool.name, "test_simple_text");
        assert!(
            tools
                .iter()
                .all(|t| t.tool.description.as_deref().is_some_and(|d| !d.is_empty()))
        );
    }

    #[test]
    fn the_catalog_has_what_the_2025_11_25_scenarios_call() {
        let server = server().expect("the fixture's declarations are valid");
        let tools: Vec<&str> = server
            .catalog()
            .tools()
            .iter()
            .map(|t| t.tool.name.as_str())
            .collect();
        for name in [
            "test_tool_with_logging",
            "test_tool_with_progress",
            "test_sampling",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
        ] {
            assert!(tools.contains(&name), "no tool {name} among {tools:?}");
        }
        assert!(
            server
                .catalog()
                .resources()
                .iter()
                .any(|r| r.resource.uri == "test://watched-resource"),
            "no resource test://watched-resource"
        );
    }
}
