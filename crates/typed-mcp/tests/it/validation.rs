//! The router's validation order, rung by rung, on the wire: each test sends
//! real bytes through the in-process client and asserts the error code, the
//! echoed id, `error.data` and the HTTP status the router chose. Requests with
//! `Facts` headers stand for Streamable HTTP; without them, for stdio.

use serde_json::{Value, json};
use typed_mcp::protocol::{Decision, Facts};
use typed_mcp::transport::Accepted;
use typed_mcp::wire::{CallToolResult, GetPromptResult, PromptMessage, ResourceContents};
use typed_mcp::{
    Server,
    declare::{PromptDecl, ResourceDecl, ToolDecl},
};

use crate::schema::{self, client, client_with_capabilities};
use crate::support::{
    VERSION, assert_error, assert_result, envelope, enveloped, headers, named_headers, request,
    send_http, std_headers,
};

const README: &str = "test://static/readme";

fn echo() -> ToolDecl {
    ToolDecl::builder("echo")
        .description("Return the text.")
        .input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text."}}
        }))
        .handler(|args, _ctx| async move {
            Ok(CallToolResult::text(
                args.get("text").and_then(Value::as_str).unwrap_or_default(),
            ))
        })
}

fn needs_sampling() -> ToolDecl {
    ToolDecl::builder("needs_sampling")
        .description("A tool that needs the client's sampling capability.")
        .requires_client_capability("sampling")
        .handler(|_args, _ctx| async { Ok(CallToolResult::text("sampled")) })
}

fn regional() -> ToolDecl {
    ToolDecl::builder("regional")
        .description("A tool whose arguments are mirrored into Mcp-Param headers.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "description": "Where.", "x-mcp-header": "Region"},
                "count": {"type": "integer", "description": "How many.", "x-mcp-header": "Count"},
                "dry_run": {"type": "boolean", "description": "Pretend.", "x-mcp-header": "Dry-Run"},
                "options": {
                    "type": "object",
                    "description": "Nested options.",
                    "properties": {
                        "zone": {"type": "string", "description": "Zone.", "x-mcp-header": "Zone"}
                    }
                }
            }
        }))
        .handler(
            |args, _ctx| async move { Ok(CallToolResult::text(Value::Object(args).to_string())) },
        )
}

fn readme() -> ResourceDecl {
    ResourceDecl::builder(README, "readme")
        .description("A static text.")
        .handler(|request, _ctx| async move {
            Ok(vec![ResourceContents::text(
                request.uri,
                Some("text/plain"),
                "hello",
            )])
        })
}

fn greet() -> PromptDecl {
    PromptDecl::builder("greet")
        .description("Greet someone.")
        .argument("name", "Who to greet.", true)
        .argument("mood", "How.", false)
        .handler(|args, _ctx| async move {
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                format!("Hello, {}!", args.get("name").cloned().unwrap_or_default()),
            )]))
        })
}

fn server() -> Server {
    Server::new("validation-fixture", "0.0.1")
        .tools([echo(), needs_sampling(), regional()])
        .resource(readme())
        .prompt(greet())
        .build()
        .expect("the fixture builds")
}

fn tools_only() -> Server {
    Server::new("tools-only", "0.0.1")
        .tool(echo())
        .build()
        .expect("the fixture builds")
}

fn discover(id: Value) -> Value {
    enveloped(id, "server/discover", json!({}))
}

fn call(id: Value, name: &str, arguments: Value) -> Value {
    enveloped(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// A request with `_meta` replaced by `meta`.
fn with_meta(id: Value, method: &str, meta: Value) -> Value {
    request(id, method, json!({"_meta": meta}))
}

async fn send_bytes(bytes: &[u8]) -> typed_mcp::testing::Response {
    client(server()).send_raw(bytes).await
}

// ---------------------------------------------------------------------------
// Rungs 3-5: depth, parse, JSON-RPC shape
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_message_over_the_size_limit_is_an_invalid_request_without_id() {
    let server = Server::new("small", "1")
        .max_message_bytes(1024)
        .tool(echo())
        .build()
        .unwrap();
    let client = client(server);
    // Pad a valid request to an exact size with the text argument.
    let sized = |id: i64, bytes: usize| -> Vec<u8> {
        let base = serde_json::to_vec(&call(json!(id), "echo", json!({"text": ""}))).unwrap();
        let padded = call(
            json!(id),
            "echo",
            json!({"text": "x".repeat(bytes - base.len())}),
        );
        let bytes_out = serde_json::to_vec(&padded).unwrap();
        assert_eq!(bytes_out.len(), bytes);
        bytes_out
    };
    let response = client.send_raw(&sized(1, 1024)).await;
    assert_result(&response, json!(1));
    // One byte over: refused before parsing, so the id is not read.
    let response = client.send_raw(&sized(2, 1025)).await;
    assert_error(&response, -32600, None, Some(400));
    // The size check comes before the depth and parse checks.
    let response = client.send_raw(&vec![b'['; 2048]).await;
    assert_error(&response, -32600, None, Some(400));
}

#[tokio::test]
async fn invalid_json_is_a_parse_error_without_id() {
    let client = client(server());
    for bytes in [
        &br#"{"jsonrpc":"2.0","id":1,"method":"server/discover""#[..],
        b"not json at all",
        b"",
        br#"{"jsonrpc":"2.0","id":1,"method":"server/discover"} trailing"#,
        // Invalid UTF-8 inside a string.
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
    ] {
        let response = client.send_raw(bytes).await;
        assert_error(&response, -32700, None, Some(400));
    }
}

#[tokio::test]
async fn nesting_deeper_than_the_limit_is_a_parse_error_and_the_server_lives_on() {
    let client = client(server());
    let response = client.send_raw(&vec![b'['; 100_000]).await;
    assert_error(&response, -32700, None, Some(400));

    let response = client.send(&discover(json!(2))).await;
    assert_result(&response, json!(2));
}

#[tokio::test]
async fn nesting_at_the_limit_is_accepted_and_one_more_level_is_refused() {
    let client = client(server());
    // The request object, params and arguments are three levels; the default
    // limit is 128.
    let nested = |levels: usize| -> Value {
        let text = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        serde_json::from_str(&text).unwrap()
    };
    let at_limit = call(json!(1), "echo", json!({"text": "ok", "deep": nested(125)}));
    let response = client.send(&at_limit).await;
    assert_eq!(
        assert_result(&response, json!(1))["content"][0]["text"],
        "ok"
    );

    let over = call(json!(2), "echo", json!({"text": "ok", "deep": nested(126)}));
    assert_error(&client.send(&over).await, -32700, None, Some(400));
}

#[tokio::test]
async fn a_batch_is_an_invalid_request() {
    let batch = json!([discover(json!(1)), discover(json!(2))]);
    let response = client(server()).send(&batch).await;
    assert_error(&response, -32600, None, Some(400));

    let single = json!([discover(json!(1))]);
    assert_error(
        &client(server()).send(&single).await,
        -32600,
        None,
        Some(400),
    );

    assert_error(&send_bytes(b"[]").await, -32600, None, Some(400));
}

#[tokio::test]
async fn an_array_shaped_like_a_request_is_an_invalid_request() {
    // The members of a request, in order, as an array: still not an object.
    let array = json!(["2.0", 1, "server/discover", {"_meta": envelope()}]);
    let response = client(server()).send(&array).await;
    assert_error(&response, -32600, None, Some(400));
}

#[tokio::test]
async fn a_non_integer_id_is_an_invalid_request_without_id() {
    for id in [
        json!(1.5),
        json!(1e3),
        json!(-0.0),
        json!({"a": 1}),
        json!([1]),
        json!(true),
    ] {
        let response = client(server()).send(&discover(id.clone())).await;
        assert_error(&response, -32600, None, Some(400));
    }
}

#[tokio::test]
async fn a_null_id_is_an_invalid_request() {
    // `"id": null` is neither a request (the id must be a string or an integer)
    // nor a notification (which has no id member at all).
    let client = client(server());
    let response = client.send(&discover(json!(null))).await;
    assert_error(&response, -32600, None, Some(400));
    let response = client
        .send(&call(json!(null), "echo", json!({"text": "x"})))
        .await;
    assert_error(&response, -32600, None, Some(400));
}

#[tokio::test]
async fn a_missing_or_wrong_jsonrpc_member_is_an_invalid_request_echoing_the_id() {
    let client = client(server());
    let mut missing = discover(json!(7));
    missing.as_object_mut().unwrap().remove("jsonrpc");
    assert_error(
        &client.send(&missing).await,
        -32600,
        Some(json!(7)),
        Some(400),
    );

    for wrong in [json!("1.0"), json!(2.0), json!(null)] {
        let mut message = discover(json!("abc"));
        message["jsonrpc"] = wrong;
        assert_error(
            &client.send(&message).await,
            -32600,
            Some(json!("abc")),
            Some(400),
        );
    }
}

#[tokio::test]
async fn a_method_that_is_not_a_string_is_an_invalid_request_echoing_the_id() {
    let client = client(server());
    for method in [json!(42), json!(null), json!(["tools/list"])] {
        let mut message = discover(json!(8));
        message["method"] = method;
        assert_error(
            &client.send(&message).await,
            -32600,
            Some(json!(8)),
            Some(400),
        );
    }
    let mut no_method = discover(json!(9));
    no_method.as_object_mut().unwrap().remove("method");
    assert_error(
        &client.send(&no_method).await,
        -32600,
        Some(json!(9)),
        Some(400),
    );
}

#[tokio::test]
async fn a_response_object_is_an_invalid_request_echoing_the_id() {
    let client = client(server());
    let result = json!({"jsonrpc": "2.0", "id": 9, "result": {}});
    assert_error(
        &client.send(&result).await,
        -32600,
        Some(json!(9)),
        Some(400),
    );
    let error = json!({"jsonrpc": "2.0", "id": "e", "error": {"code": -1, "message": "x"}});
    assert_error(
        &client.send(&error).await,
        -32600,
        Some(json!("e")),
        Some(400),
    );
}

#[tokio::test]
async fn params_that_are_not_an_object_are_an_invalid_request() {
    let message = request(json!(3), "server/discover", json!([envelope()]));
    assert_error(
        &client(server()).send(&message).await,
        -32600,
        Some(json!(3)),
        Some(400),
    );
}

#[tokio::test]
async fn non_object_messages_are_invalid_requests() {
    for bytes in [&b"\"server/discover\""[..], b"42", b"null"] {
        assert_error(&send_bytes(bytes).await, -32600, None, Some(400));
    }
}

// ---------------------------------------------------------------------------
// Rung 6: notifications
// ---------------------------------------------------------------------------

#[tokio::test]
async fn notifications_are_never_answered() {
    let client = client(server());
    let notifications = [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345, "reason": "gone"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": null}}),
        json!({"jsonrpc": "2.0", "method": "no/such/method", "params": [1, 2]}),
        // A request method without id is a notification too.
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo"}}),
        json!({"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
    ];
    for notification in notifications {
        let response = client.send(&notification).await;
        assert!(
            response.messages.is_empty(),
            "{notification} was answered: {:?}",
            response.messages
        );
        assert_eq!(response.accepted, Accepted::Dropped, "{notification}");
    }
    // And the connection still serves requests.
    assert_result(&client.send(&discover(json!(1))).await, json!(1));
}

// ---------------------------------------------------------------------------
// Rung 7: legacy initialize
// ---------------------------------------------------------------------------

fn legacy_initialize() -> Value {
    request(
        json!(1),
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "legacy-client", "version": "1.0.0"}
        }),
    )
}

#[track_caller]
fn assert_legacy_refusal(response: &typed_mcp::testing::Response) {
    let error = assert_error(response, -32601, Some(json!(1)), Some(404));
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(VERSION),
        "the message must name {VERSION}: {message}"
    );
    let supported = error["data"]["supported"]
        .as_array()
        .expect("data.supported");
    assert!(supported.contains(&json!(VERSION)), "{error}");
    assert_eq!(error["data"]["requested"], "2025-11-25", "{error}");
}

#[tokio::test]
async fn legacy_initialize_over_stdio_names_the_supported_version() {
    let response = client(server()).send(&legacy_initialize()).await;
    assert_legacy_refusal(&response);
}

#[tokio::test]
async fn legacy_initialize_over_http_beats_the_missing_header_rung() {
    let hdrs = headers(&[("Content-Type", "application/json")]);
    let response = send_http(&client(server()), &legacy_initialize(), &hdrs).await;
    assert_legacy_refusal(&response);
}

#[tokio::test]
async fn initialize_with_a_valid_envelope_is_still_refused() {
    let client = client(server());
    let message = enveloped(json!(1), "initialize", json!({}));
    let error = assert_error(
        &client.send(&message).await,
        -32601,
        Some(json!(1)),
        Some(404),
    );
    assert!(
        error["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!(VERSION))
    );

    let response = send_http(&client, &message, &std_headers("initialize")).await;
    assert_error(&response, -32601, Some(json!(1)), Some(404));
}

// ---------------------------------------------------------------------------
// Rung 8: standard headers
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_missing_protocol_version_header_is_a_header_mismatch() {
    let hdrs = headers(&[
        ("Content-Type", "application/json"),
        ("Mcp-Method", "server/discover"),
    ]);
    let response = send_http(&client(server()), &discover(json!(1)), &hdrs).await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
}

#[tokio::test]
async fn a_missing_or_different_mcp_method_header_is_a_header_mismatch() {
    let client = client(server());
    let missing = headers(&[
        ("Content-Type", "application/json"),
        ("MCP-Protocol-Version", VERSION),
    ]);
    let response = send_http(&client, &discover(json!(1)), &missing).await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));

    let list = enveloped(json!(2), "tools/list", json!({}));
    for wrong in [
        "server/discover",
        "TOOLS/LIST",
        "tools/lis",
        "tools/list/",
        "",
    ] {
        let response = send_http(&client, &list, &std_headers(wrong)).await;
        assert_error(&response, -32020, Some(json!(2)), Some(400));
    }
}

#[tokio::test]
async fn mcp_method_surrounding_whitespace_is_accepted() {
    let client = client(server());
    let list = enveloped(json!(2), "tools/list", json!({}));
    for padded in ["  tools/list", "tools/list \t", " tools/list "] {
        let response = send_http(&client, &list, &std_headers(padded)).await;
        assert_result(&response, json!(2));
    }
}

#[tokio::test]
async fn header_names_are_case_insensitive() {
    let client = client(server());
    let list = enveloped(json!(3), "tools/list", json!({}));
    let spellings = [
        [
            ("mcp-protocol-version", VERSION),
            ("mcp-method", "tools/list"),
        ],
        [
            ("MCP-PROTOCOL-VERSION", VERSION),
            ("MCP-METHOD", "tools/list"),
        ],
        [
            ("Mcp-Protocol-Version", VERSION),
            ("mCp-MeThOd", "tools/list"),
        ],
    ];
    for pairs in spellings {
        let response = send_http(&client, &list, &headers(&pairs)).await;
        assert_result(&response, json!(3));
    }
    let call = call(json!(4), "echo", json!({"text": "hi"}));
    let hdrs = headers(&[
        ("mcp-protocol-version", VERSION),
        ("mcp-method", "tools/call"),
        ("MCP-NAME", "echo"),
    ]);
    let response = send_http(&client, &call, &hdrs).await;
    assert_eq!(
        assert_result(&response, json!(4))["content"][0]["text"],
        "hi"
    );
}

#[tokio::test]
async fn a_header_mismatch_on_the_method_beats_a_missing_envelope() {
    let message = request(json!(1), "tools/list", json!({}));
    let response = send_http(&client(server()), &message, &std_headers("prompts/list")).await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
}

// ---------------------------------------------------------------------------
// Rung 9: the required `_meta` keys
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_missing_envelope_is_invalid_params_with_status_400() {
    let client = client(server());
    let no_params = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"});
    let cases = [
        no_params,
        request(json!(1), "server/discover", json!({})),
        request(json!(1), "server/discover", json!({"_meta": null})),
        request(json!(1), "server/discover", json!({"_meta": "2026-07-28"})),
        with_meta(
            json!(1),
            "server/discover",
            json!({"io.modelcontextprotocol/clientCapabilities": {}}),
        ),
        with_meta(
            json!(1),
            "server/discover",
            json!({"io.modelcontextprotocol/protocolVersion": VERSION}),
        ),
        with_meta(
            json!(1),
            "server/discover",
            json!({
                "io.modelcontextprotocol/protocolVersion": 20260728,
                "io.modelcontextprotocol/clientCapabilities": {}
            }),
        ),
        with_meta(
            json!(1),
            "server/discover",
            json!({
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": ["sampling"]
            }),
        ),
    ];
    for message in cases {
        let response = client.send(&message).await;
        assert_error(&response, -32602, Some(json!(1)), Some(400));
        // The same over HTTP with correct headers.
        let response = send_http(&client, &message, &std_headers("server/discover")).await;
        assert_error(&response, -32602, Some(json!(1)), Some(400));
    }
}

#[tokio::test]
async fn a_missing_client_info_is_fine() {
    let client = client(server());
    // `envelope()` carries no clientInfo.
    assert_result(&client.send(&discover(json!(1))).await, json!(1));
    let response = send_http(
        &client,
        &discover(json!(2)),
        &std_headers("server/discover"),
    )
    .await;
    assert_result(&response, json!(2));
}

#[tokio::test]
async fn a_missing_version_in_meta_beats_a_header_version() {
    let message = with_meta(
        json!(1),
        "server/discover",
        json!({"io.modelcontextprotocol/clientCapabilities": {}}),
    );
    let response = send_http(&client(server()), &message, &std_headers("server/discover")).await;
    assert_error(&response, -32602, Some(json!(1)), Some(400));
}

// ---------------------------------------------------------------------------
// Rungs 10-11: header version, supported version
// ---------------------------------------------------------------------------

fn versioned(id: Value, version: &str) -> Value {
    with_meta(
        id,
        "server/discover",
        json!({
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {}
        }),
    )
}

#[tokio::test]
async fn a_header_version_different_from_meta_is_a_header_mismatch() {
    let client = client(server());
    // The header is supported, the body's version is not: the mismatch wins.
    let response = send_http(
        &client,
        &versioned(json!(1), "v999.0.0"),
        &std_headers("server/discover"),
    )
    .await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));

    // Both supported-looking, but different.
    let mut hdrs = std_headers("server/discover");
    hdrs[1].1 = "2025-11-25".into();
    let response = send_http(&client, &discover(json!(2)), &hdrs).await;
    assert_error(&response, -32020, Some(json!(2)), Some(400));
}

#[track_caller]
fn assert_unsupported(response: &typed_mcp::testing::Response, id: Value, requested: &str) {
    let error = assert_error(response, -32022, Some(id), Some(400));
    assert_eq!(error["data"]["requested"], requested, "{error}");
    let supported = error["data"]["supported"]
        .as_array()
        .expect("data.supported");
    assert_eq!(supported, &vec![json!(VERSION)], "{error}");
}

#[tokio::test]
async fn an_unsupported_version_in_header_and_meta_is_unsupported() {
    let client = client(server());
    let mut hdrs = std_headers("server/discover");
    hdrs[1].1 = "v999.0.0".into();
    let response = send_http(&client, &versioned(json!(1), "v999.0.0"), &hdrs).await;
    assert_unsupported(&response, json!(1), "v999.0.0");

    // Over stdio the body alone decides.
    for version in ["v999.0.0", "2025-11-25", "2025-06-18", ""] {
        let response = client.send(&versioned(json!(2), version)).await;
        assert_unsupported(&response, json!(2), version);
    }
}

#[tokio::test]
async fn the_supported_versions_in_the_error_are_those_discover_announces() {
    let client = client(server());
    let error = assert_error(
        &client.send(&versioned(json!(1), "1900-01-01")).await,
        -32022,
        Some(json!(1)),
        Some(400),
    );
    let discovered = client.discover().await.result()["supportedVersions"].clone();
    assert_eq!(error["data"]["supported"], discovered);
}

#[tokio::test]
async fn an_unsupported_version_beats_the_rest_of_the_envelope_and_the_method() {
    let client = client(server());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "v999.0.0",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/logLevel": "loud"
    });
    let response = client
        .send(&with_meta(json!(1), "server/discover", meta.clone()))
        .await;
    assert_unsupported(&response, json!(1), "v999.0.0");
    let response = client.send(&with_meta(json!(2), "ping", meta)).await;
    assert_unsupported(&response, json!(2), "v999.0.0");
}

// ---------------------------------------------------------------------------
// Rung 12: the rest of the envelope
// ---------------------------------------------------------------------------

fn meta_with(key: &str, value: Value) -> Value {
    let mut meta = envelope();
    meta[key] = value;
    meta
}

#[tokio::test]
async fn a_malformed_optional_envelope_key_is_invalid_params_with_status_400() {
    let client = client(server());
    let cases = [
        ("io.modelcontextprotocol/logLevel", json!("loud")),
        ("io.modelcontextprotocol/logLevel", json!("INFO")),
        ("io.modelcontextprotocol/logLevel", json!(3)),
        (
            "io.modelcontextprotocol/clientInfo",
            json!({"name": "no-version"}),
        ),
        ("io.modelcontextprotocol/clientInfo", json!("client")),
        ("progressToken", json!(1.5)),
        ("progressToken", json!({"t": 1})),
        ("progressToken", json!(null)),
        ("traceparent", json!(7)),
    ];
    for (key, value) in cases {
        let message = with_meta(json!(1), "server/discover", meta_with(key, value.clone()));
        let response = client.send(&message).await;
        let error = assert_error(&response, -32602, Some(json!(1)), Some(400));
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains(key.rsplit('/').next().unwrap()),
            "{key}={value}: the message should name the key: {error}"
        );
    }
}

#[tokio::test]
async fn every_valid_log_level_is_accepted() {
    let client = client(server());
    for level in [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ] {
        let message = with_meta(
            json!(level),
            "server/discover",
            meta_with("io.modelcontextprotocol/logLevel", json!(level)),
        );
        assert_result(&client.send(&message).await, json!(level));
    }
}

// ---------------------------------------------------------------------------
// Rung 13: method known and offered
// ---------------------------------------------------------------------------

#[tokio::test]
async fn removed_and_unknown_methods_are_not_found() {
    let client = client(server());
    for method in [
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/list",
        "tasks/result",
        "no/such/method",
        "Tools/List",
        "",
    ] {
        let message = enveloped(json!(method), method, json!({"uri": README}));
        let response = client.send(&message).await;
        assert_error(&response, -32601, Some(json!(method)), Some(404));
        let response = send_http(&client, &message, &std_headers(method)).await;
        assert_error(&response, -32601, Some(json!(method)), Some(404));
    }
}

#[tokio::test]
async fn a_method_behind_an_unannounced_capability_is_not_found() {
    let client = client(tools_only());
    let capabilities = client.discover().await.result()["capabilities"].clone();
    assert!(capabilities.get("tools").is_some(), "{capabilities}");
    for absent in ["prompts", "resources", "completions"] {
        assert!(
            capabilities.get(absent).is_none(),
            "{absent} announced: {capabilities}"
        );
    }
    let cases = [
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "greet"})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": README})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": ""}}),
        ),
        (
            "subscriptions/listen",
            json!({"filter": {"toolsListChanged": true}}),
        ),
    ];
    for (method, params) in cases {
        let response = client.send(&enveloped(json!(5), method, params)).await;
        assert_error(&response, -32601, Some(json!(5)), Some(404));
    }
}

// ---------------------------------------------------------------------------
// Rung 14: Mcp-Name
// ---------------------------------------------------------------------------

#[tokio::test]
async fn mcp_name_must_be_present_and_equal_to_the_body() {
    let client = client(server());
    let cases = [
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
            "echo",
        ),
        (
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
            "greet",
        ),
        ("resources/read", json!({"uri": README}), README),
    ];
    for (method, params, name) in cases {
        let message = enveloped(json!(1), method, params);
        let response = send_http(&client, &message, &std_headers(method)).await;
        assert_error(&response, -32020, Some(json!(1)), Some(400));

        for wrong in ["other", &name.to_uppercase(), &format!("{name}x")] {
            let response = send_http(&client, &message, &named_headers(method, wrong)).await;
            assert_error(&response, -32020, Some(json!(1)), Some(400));
        }

        let response = send_http(&client, &message, &named_headers(method, name)).await;
        assert_result(&response, json!(1));
    }
}

#[tokio::test]
async fn mcp_name_is_decoded_from_base64_before_comparing() {
    let client = client(server());
    // "echo" and "test://static/readme" in the sentinel form.
    let message = call(json!(1), "echo", json!({"text": "x"}));
    let response = send_http(
        &client,
        &message,
        &named_headers("tools/call", "=?base64?ZWNobw==?="),
    )
    .await;
    assert_result(&response, json!(1));

    let read = enveloped(json!(2), "resources/read", json!({"uri": README}));
    let response = send_http(
        &client,
        &read,
        &named_headers("resources/read", "=?base64?dGVzdDovL3N0YXRpYy9yZWFkbWU=?="),
    )
    .await;
    assert_result(&response, json!(2));

    // The sentinel is case-sensitive: an upper-case one is a literal value.
    let response = send_http(
        &client,
        &message,
        &named_headers("tools/call", "=?BASE64?ZWNobw==?="),
    )
    .await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
    // Undecodable base64.
    let response = send_http(
        &client,
        &message,
        &named_headers("tools/call", "=?base64?!!!?="),
    )
    .await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
    // Raw non-ASCII is an invalid character.
    let response = send_http(&client, &message, &named_headers("tools/call", "échø")).await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
}

// ---------------------------------------------------------------------------
// Rungs 15-16: params shape and target
// ---------------------------------------------------------------------------

#[tokio::test]
async fn malformed_method_params_are_invalid_params() {
    let client = client(server());
    let cases = [
        ("tools/call", json!({})),
        ("tools/call", json!({"name": 7})),
        ("tools/call", json!({"name": "echo", "arguments": [1]})),
        ("tools/call", json!({"name": "echo", "arguments": "text"})),
        ("prompts/get", json!({})),
        (
            "prompts/get",
            json!({"name": "greet", "arguments": ["Ada"]}),
        ),
        ("resources/read", json!({})),
        ("resources/read", json!({"uri": 5})),
        ("tools/list", json!({"cursor": 5})),
    ];
    for (method, params) in cases {
        let response = client
            .send(&enveloped(json!(1), method, params.clone()))
            .await;
        assert_error(&response, -32602, Some(json!(1)), Some(200));
    }
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params() {
    let response = client(server())
        .send(&call(json!(1), "nope", json!({})))
        .await;
    let error = assert_error(&response, -32602, Some(json!(1)), Some(200));
    assert!(
        error["message"].as_str().unwrap().contains("nope"),
        "{error}"
    );
}

#[tokio::test]
async fn an_unknown_prompt_is_invalid_params() {
    let message = enveloped(
        json!(1),
        "prompts/get",
        json!({"name": "nope", "arguments": {}}),
    );
    let response = client(server()).send(&message).await;
    assert_error(&response, -32602, Some(json!(1)), Some(200));
}

#[tokio::test]
async fn an_unknown_resource_is_invalid_params_naming_the_uri() {
    let client = client(server());
    for uri in [
        "test://static/missing",
        "test://static/readme/",
        "other:thing",
    ] {
        let message = enveloped(json!(1), "resources/read", json!({"uri": uri}));
        let error = assert_error(
            &client.send(&message).await,
            -32602,
            Some(json!(1)),
            Some(200),
        );
        assert_eq!(error["data"]["uri"], uri, "{error}");
    }
}

#[tokio::test]
async fn a_missing_required_prompt_argument_is_invalid_params() {
    let client = client(server());
    for arguments in [json!({}), json!({"mood": "happy"}), json!(null)] {
        let message = enveloped(
            json!(1),
            "prompts/get",
            json!({"name": "greet", "arguments": arguments}),
        );
        let error = assert_error(
            &client.send(&message).await,
            -32602,
            Some(json!(1)),
            Some(200),
        );
        assert!(
            error["message"].as_str().unwrap().contains("name"),
            "{error}"
        );
    }
    // The optional argument may be left out.
    let ok = enveloped(
        json!(2),
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
    );
    let result = assert_result(&client.send(&ok).await, json!(2));
    assert_eq!(result["messages"][0]["content"]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn a_non_string_prompt_argument_is_invalid_params() {
    let client = client(server());
    for value in [
        json!(42),
        json!(true),
        json!(null),
        json!({"first": "Ada"}),
        json!(["Ada"]),
    ] {
        let message = enveloped(
            json!(1),
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": value}}),
        );
        assert_error(
            &client.send(&message).await,
            -32602,
            Some(json!(1)),
            Some(200),
        );
    }
}

// ---------------------------------------------------------------------------
// Rung 17: Mcp-Param-*
// ---------------------------------------------------------------------------

async fn call_regional(arguments: Value, extra: &[(&str, &str)]) -> typed_mcp::testing::Response {
    let mut hdrs = named_headers("tools/call", "regional");
    hdrs.extend(headers(extra));
    let message = call(json!(1), "regional", arguments);
    send_http(&client(server()), &message, &hdrs).await
}

#[tokio::test]
async fn a_param_header_equal_to_the_argument_is_accepted() {
    let response = call_regional(
        json!({"region": "eu-west"}),
        &[("Mcp-Param-Region", "eu-west")],
    )
    .await;
    assert_result(&response, json!(1));
    // Any case of the header name.
    let response = call_regional(
        json!({"region": "eu-west"}),
        &[("mcp-param-region", "eu-west")],
    )
    .await;
    assert_result(&response, json!(1));
    // Base64 of "Zürich".
    let response = call_regional(
        json!({"region": "Zürich"}),
        &[("Mcp-Param-Region", "=?base64?WsO8cmljaA==?=")],
    )
    .await;
    assert_result(&response, json!(1));
    // Base64 of " padded " (leading/trailing spaces survive only encoded).
    let response = call_regional(
        json!({"region": " padded "}),
        &[("Mcp-Param-Region", "=?base64?IHBhZGRlZCA=?=")],
    )
    .await;
    assert_result(&response, json!(1));
    // Booleans.
    let response = call_regional(json!({"dry_run": true}), &[("Mcp-Param-Dry-Run", "true")]).await;
    assert_result(&response, json!(1));
}

#[tokio::test]
async fn param_headers_are_not_required_without_headers() {
    // Over stdio there are no headers to compare.
    let message = call(json!(1), "regional", json!({"region": "eu", "count": 3}));
    assert_result(&client(server()).send(&message).await, json!(1));
}

#[tokio::test]
async fn an_absent_or_null_argument_needs_no_param_header() {
    assert_result(&call_regional(json!({}), &[]).await, json!(1));
    assert_result(&call_regional(json!({"region": null}), &[]).await, json!(1));
}

#[tokio::test]
async fn a_param_header_that_disagrees_or_is_missing_is_a_header_mismatch() {
    let cases: [(Value, &[(&str, &str)]); 7] = [
        (
            json!({"region": "eu-west"}),
            &[("Mcp-Param-Region", "us-east")],
        ),
        (
            json!({"region": "eu-west"}),
            &[("Mcp-Param-Region", "EU-WEST")],
        ),
        (json!({"region": "eu-west"}), &[]),
        (
            json!({"region": "eu-west"}),
            &[("Mcp-Param-Region", "=?base64?!!!?=")],
        ),
        (
            json!({"region": "Zürich"}),
            &[("Mcp-Param-Region", "Zürich")],
        ),
        (json!({"dry_run": false}), &[("Mcp-Param-Dry-Run", "true")]),
        (json!({"count": 42}), &[("Mcp-Param-Count", "43")]),
    ];
    for (arguments, extra) in cases {
        let response = call_regional(arguments.clone(), extra).await;
        assert_error(&response, -32020, Some(json!(1)), Some(400));
    }
}

#[tokio::test]
async fn integer_param_headers_are_compared_numerically() {
    for (body, header) in [
        (json!(42), "42"),
        (json!(42.0), "42"),
        (json!(42), "42.0"),
        (json!(-7), "-7"),
        (json!(9_007_199_254_740_993_i64), "9007199254740993"),
    ] {
        let response = call_regional(json!({"count": body}), &[("Mcp-Param-Count", header)]).await;
        assert_result(&response, json!(1));
    }
    // Integers beyond f64 precision are compared exactly, not through a float.
    let response = call_regional(
        json!({"count": 9_007_199_254_740_993_i64}),
        &[("Mcp-Param-Count", "9007199254740992")],
    )
    .await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
}

#[tokio::test]
async fn a_nested_param_header_is_checked_at_its_path() {
    let zone = json!({"options": {"zone": "z1"}});
    assert_result(
        &call_regional(zone.clone(), &[("Mcp-Param-Zone", "z1")]).await,
        json!(1),
    );
    let response = call_regional(zone.clone(), &[("Mcp-Param-Zone", "z2")]).await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
    let response = call_regional(zone, &[]).await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
    assert_result(&call_regional(json!({"options": {}}), &[]).await, json!(1));
}

// ---------------------------------------------------------------------------
// Rung 18: multi round-trip fields
// ---------------------------------------------------------------------------

#[tokio::test]
async fn malformed_input_responses_or_request_state_are_invalid_params() {
    let client = client(server());
    let cases = [
        json!({"inputResponses": null}),
        json!({"inputResponses": []}),
        json!({"inputResponses": {"ask": 1}}),
        json!({"inputResponses": {"ok": {}, "bad": "yes"}}),
        json!({"requestState": 42}),
        json!({"requestState": {"s": 1}}),
        json!({"requestState": null}),
    ];
    for extra in cases {
        let mut params = json!({"name": "echo", "arguments": {"text": "x"}});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let response = client
            .send(&enveloped(json!(1), "tools/call", params))
            .await;
        assert_error(&response, -32602, Some(json!(1)), Some(200));
    }
    // Well-formed input responses reach the handler.
    let params = json!({
        "name": "echo",
        "arguments": {"text": "x"},
        "inputResponses": {"ask": {"action": "accept"}}
    });
    assert_result(
        &client
            .send(&enveloped(json!(2), "tools/call", params))
            .await,
        json!(2),
    );
    // A well-formed requestState this server did not seal for this request
    // never reaches the handler.
    let params = json!({
        "name": "echo",
        "arguments": {"text": "x"},
        "requestState": "opaque"
    });
    assert_error(
        &client
            .send(&enveloped(json!(3), "tools/call", params))
            .await,
        -32602,
        Some(json!(3)),
        None,
    );
}

// ---------------------------------------------------------------------------
// Rung 19: required client capabilities
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_tool_needing_an_undeclared_capability_is_refused_with_32021() {
    for capabilities in [json!({}), json!({"elicitation": {}}), json!({"roots": {}})] {
        let client = client_with_capabilities(server(), capabilities);
        let response = client.call_tool("needs_sampling", json!({})).await;
        let error = assert_error(
            &response,
            -32021,
            response.messages[0].get("id").cloned(),
            Some(400),
        );
        assert_eq!(
            error["data"]["requiredCapabilities"],
            json!({"sampling": {}}),
            "{error}"
        );
    }
    let client = client_with_capabilities(server(), json!({"sampling": {}}));
    let response = client.call_tool("needs_sampling", json!({})).await;
    assert_eq!(response.result()["content"][0]["text"], "sampled");
}

#[tokio::test]
async fn capabilities_are_per_request_never_remembered() {
    let client = client(server());
    let mut meta = envelope();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"sampling": {}});
    let with = request(
        json!(1),
        "tools/call",
        json!({"name": "needs_sampling", "_meta": meta}),
    );
    assert_result(&client.send(&with).await, json!(1));
    let without = call(json!(2), "needs_sampling", json!({}));
    assert_error(
        &client.send(&without).await,
        -32021,
        Some(json!(2)),
        Some(400),
    );
}

#[tokio::test]
async fn a_missing_capability_is_checked_after_the_headers() {
    // Over HTTP, a wrong Mcp-Name is reported before the missing capability.
    let message = call(json!(1), "needs_sampling", json!({}));
    let response = send_http(
        &client(server()),
        &message,
        &named_headers("tools/call", "echo"),
    )
    .await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
}

// ---------------------------------------------------------------------------
// Precedence between the later rungs
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_malformed_envelope_beats_an_unknown_method() {
    // Rung 12 before rung 13.
    let message = with_meta(
        json!(1),
        "ping",
        meta_with("io.modelcontextprotocol/logLevel", json!("loud")),
    );
    assert_error(
        &client(server()).send(&message).await,
        -32602,
        Some(json!(1)),
        Some(400),
    );
}

#[tokio::test]
async fn an_unoffered_method_beats_a_missing_mcp_name() {
    // Rung 13 before rung 14.
    let message = enveloped(json!(1), "prompts/get", json!({"name": "greet"}));
    let response = send_http(&client(tools_only()), &message, &std_headers("prompts/get")).await;
    assert_error(&response, -32601, Some(json!(1)), Some(404));
}

#[tokio::test]
async fn a_wrong_mcp_name_beats_an_unknown_tool() {
    // Rung 14 before rung 16.
    let message = call(json!(1), "nope", json!({}));
    let response = send_http(
        &client(server()),
        &message,
        &named_headers("tools/call", "echo"),
    )
    .await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
}

#[tokio::test]
async fn an_unknown_tool_beats_param_headers() {
    // Rung 16 before rung 17: a stray Mcp-Param header is not looked at.
    let message = call(json!(1), "nope", json!({"region": "x"}));
    let mut hdrs = named_headers("tools/call", "nope");
    hdrs.extend(headers(&[("Mcp-Param-Region", "y")]));
    let response = send_http(&client(server()), &message, &hdrs).await;
    assert_error(&response, -32602, Some(json!(1)), Some(200));
}

#[tokio::test]
async fn a_param_header_mismatch_beats_malformed_input_responses() {
    // Rung 17 before rung 18.
    let mut message = call(json!(1), "regional", json!({"region": "eu"}));
    message["params"]["inputResponses"] = json!(null);
    let mut hdrs = named_headers("tools/call", "regional");
    hdrs.extend(headers(&[("Mcp-Param-Region", "us")]));
    let response = send_http(&client(server()), &message, &hdrs).await;
    assert_error(&response, -32020, Some(json!(1)), Some(400));
}

#[tokio::test]
async fn malformed_input_responses_beat_a_missing_capability() {
    // Rung 18 before rung 19.
    let mut message = call(json!(1), "needs_sampling", json!({}));
    message["params"]["requestState"] = json!(7);
    assert_error(
        &client(server()).send(&message).await,
        -32602,
        Some(json!(1)),
        Some(200),
    );
}

// ---------------------------------------------------------------------------
// Ids
// ---------------------------------------------------------------------------

#[tokio::test]
async fn request_ids_are_echoed_exactly() {
    let client = client(server());
    for id in [
        json!("req-1"),
        json!(""),
        json!("ünïcode \"quoted\" \n line"),
        json!(7),
        json!(0),
        json!(-3),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1_712_345_678_901_i64),
    ] {
        assert_result(&client.send(&discover(id.clone())).await, id.clone());
        // Errors and invoked handlers echo it too.
        let unknown = enveloped(id.clone(), "no/such/method", json!({}));
        assert_error(
            &client.send(&unknown).await,
            -32601,
            Some(id.clone()),
            Some(404),
        );
        assert_result(
            &client
                .send(&call(id.clone(), "echo", json!({"text": "x"})))
                .await,
            id,
        );
    }
}

#[tokio::test]
async fn an_id_wider_than_64_bits_is_echoed_digit_for_digit() {
    let server = server();
    let meta = serde_json::to_string(&envelope()).unwrap();
    for digits in [
        "123456789012345678901234567890",
        "-123456789012345678901234567890",
    ] {
        for (method, member) in [("server/discover", "result"), ("no/such/method", "error")] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{digits},"method":"{method}","params":{{"_meta":{meta}}}}}"#
            );
            let Decision::Answer(answer) = server.router().route(body.as_bytes(), &Facts::NONE)
            else {
                panic!("{method} is answered by the router");
            };
            let text = String::from_utf8(answer.body.clone()).unwrap();
            let prefix = format!(r#"{{"jsonrpc":"2.0","id":{digits},"{member}":"#);
            assert!(text.starts_with(&prefix), "{text}");
            let value: Value = serde_json::from_str(&text).unwrap();
            schema::check(Some(method), &value);
        }
    }
}

#[tokio::test]
async fn methods_without_a_name_need_no_mcp_name_header() {
    // A server with resources offers subscriptions/listen: neither it nor
    // server/discover carries a name, so no Mcp-Name is expected of them.
    let client = client(server());
    for (method, params) in [("server/discover", json!({})), ("tools/list", json!({}))] {
        let response = send_http(
            &client,
            &enveloped(json!(8), method, params),
            &std_headers(method),
        )
        .await;
        assert_result(&response, json!(8));
    }
    // A subscription streams, so ask the router itself what it would do.
    let listen = enveloped(
        json!(9),
        "subscriptions/listen",
        json!({"notifications": {}}),
    );
    let headers = std_headers("subscriptions/listen");
    let decision = server().router().route(
        &serde_json::to_vec(&listen).unwrap(),
        &Facts {
            headers: Some(&headers),
            lists: None,
        },
    );
    assert!(matches!(decision, Decision::Invoke(_)), "{decision:?}");
}
