//! Every wire type, serialized the way the server sends it (or a client sends
//! it), checked against its definition in the official schema. This covers the
//! types that the runtime does not emit yet (multi round-trip results, listen
//! streams), so the model is right before the features that use it land.
//!
//! Every value is built the way a user outside typed-mcp-core has to build it
//! (the wire types are `#[non_exhaustive]`): constructors and `with_*` setters,
//! never struct literals.

use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};
use typed_mcp::RpcError;
use typed_mcp::protocol::encode;
use typed_mcp::protocol::wire::*;
use typed_mcp::wire::RequestId;

use crate::schema;

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

fn valid(definition: &str, message: &Value) {
    if let Some(errors) = schema::violations(definition, message)
        && !errors.is_empty()
    {
        panic!(
            "{definition} rejects {}:\n  {}",
            serde_json::to_string_pretty(message).unwrap(),
            errors.join("\n  ")
        );
    }
}

fn response<T: Serialize>(result: &T) -> Value {
    serde_json::from_slice(&encode::result(&RequestId::integer(7), result)).unwrap()
}

fn notification<P: Serialize>(method: &str, params: &P) -> Value {
    serde_json::from_slice(&encode::notification(method, params)).unwrap()
}

fn server_meta() -> ResultMeta {
    ResultMeta::server(Arc::new(Implementation::new("wire-test", "1.0.0")))
}

fn listen_meta(id: RequestId) -> ResultMeta {
    ResultMeta::default().with_subscription_id(id)
}

fn envelope() -> RequestMetaObject {
    RequestMetaObject::new(
        "2026-07-28",
        ClientCapabilities::default()
            .with_elicitation(ElicitationCapability::default().with_form())
            .with_sampling(SamplingCapability::default().with_tools())
            .with_roots()
            .with_extension("io.example/ext", Default::default()),
    )
    .with_client_info(
        Implementation::new("client", "0.1.0")
            .with_title("Client")
            .with_description("A test client.")
            .with_website_url("https://example.com")
            .with_icons([Icon::new(format!("data:image/png;base64,{PNG}"))
                .with_mime_type("image/png")
                .with_sizes(["1x1".to_owned()])
                .with_theme("light")]),
    )
    .with_entry("progressToken", 9)
}

fn request<P: Serialize>(method: &str, params: &P) -> Value {
    json!({"jsonrpc": "2.0", "id": "r-1", "method": method, "params": params})
}

#[test]
fn the_schema_is_available_when_ci_says_so() {
    if std::env::var_os("MCP_SCHEMA").is_some() {
        assert!(schema::available());
    }
}

#[test]
fn call_tool_results_with_every_content_block() {
    let resource = Resource::new("test://linked", "linked")
        .with_description("A linked resource.")
        .with_mime_type("text/plain")
        .with_size(3)
        .with_annotations(
            Annotations::default()
                .with_audience([Role::User])
                .with_priority(0.5)
                .with_last_modified("2026-07-28T00:00:00Z"),
        );
    let mut extension = Meta::new();
    extension.insert("io.example/k".into(), json!(1));
    let result = CallToolResult::content(vec![
        ContentBlock::text("hello").with_annotations(Annotations::default().with_priority(1.0)),
        ContentBlock::image(PNG, "image/png").with_meta(extension.clone()),
        ContentBlock::audio("UklGRg==", "audio/wav"),
        ContentBlock::resource_link(resource),
        ContentBlock::embedded(
            ResourceContents::text("test://a", Some("text/plain"), "a").with_meta(extension),
        ),
        ContentBlock::embedded(ResourceContents::blob("test://b", Some("image/png"), PNG)),
    ])
    .with_structured_content(json!({"ok": true}))
    .with_meta(server_meta());
    valid("CallToolResultResponse", &response(&result));
    valid(
        "CallToolResultResponse",
        &response(&CallToolResult::error("it failed")),
    );
}

#[test]
fn input_required_results_with_each_kind_of_input_request() {
    let requests = [
        (
            "user_name",
            InputRequest::Elicit(ElicitRequestParams::form(
                "What is your name?",
                json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                }),
            )),
        ),
        (
            "consent",
            InputRequest::Elicit(ElicitRequestParams::url(
                "Connect your account.",
                "https://example.com/connect",
            )),
        ),
        (
            "capital",
            InputRequest::Sample(
                CreateMessageRequestParams::new(
                    vec![SamplingMessage::new(
                        Role::User,
                        ContentBlock::text("Capital of France?"),
                    )],
                    100,
                )
                .with_system_prompt("Answer in one word.")
                .with_temperature(0.0)
                .with_entry("stopSequences", json!(["."])),
            ),
        ),
        ("roots", InputRequest::ListRoots(Default::default())),
    ];
    let result = InputRequiredResult::new(
        requests
            .into_iter()
            .map(|(k, v)| (k.to_owned(), serde_json::to_value(v).unwrap()))
            .collect(),
    )
    .with_request_state("opaque")
    .with_meta(server_meta());
    // A retry that only needs its state back carries no input requests.
    let state_only = InputRequiredResult::new(Default::default()).with_request_state("opaque");
    assert_eq!(
        response(&state_only)["result"],
        json!({"resultType": "input_required", "requestState": "opaque"})
    );
    for definition in [
        "CallToolResultResponse",
        "ReadResourceResultResponse",
        "GetPromptResultResponse",
    ] {
        valid(definition, &response(&result));
        valid(definition, &response(&state_only));
    }
}

#[test]
fn the_other_results() {
    let discover = DiscoverResult::new(
        vec!["2026-07-28".into()],
        ServerCapabilities::default()
            .with_tools(ListChangedCapability::default().with_list_changed(true))
            .with_prompts(ListChangedCapability::default())
            .with_resources(
                ResourcesCapability::default()
                    .with_subscribe(true)
                    .with_list_changed(true),
            )
            .with_completions()
            .with_logging(),
        CacheHint::new(0, CacheScope::Private),
    )
    .with_instructions("Be brief.")
    .with_meta(server_meta());
    valid("DiscoverResultResponse", &response(&discover));

    let tool = Tool::new("search", json!({"type": "object"}))
        .with_title("Search")
        .with_description("Search.")
        .with_output_schema(json!({"type": "object"}))
        .with_annotations(
            ToolAnnotations::default()
                .with_title("Search")
                .with_read_only_hint(true)
                .with_destructive_hint(false)
                .with_idempotent_hint(true)
                .with_open_world_hint(false),
        );
    let tools = ListToolsResult::new(vec![tool], CacheHint::PUBLIC_HOUR)
        .with_next_cursor("next")
        .with_meta(server_meta());
    valid("ListToolsResultResponse", &response(&tools));
    let resources = ListResourcesResult::new(
        vec![Resource::new("test://x", "x").with_title("X")],
        CacheHint::PUBLIC_HOUR,
    );
    valid("ListResourcesResultResponse", &response(&resources));
    let templates = ListResourceTemplatesResult::new(
        vec![
            ResourceTemplate::new("test://{id}", "item")
                .with_description("An item.")
                .with_mime_type("text/plain"),
        ],
        CacheHint::PUBLIC_HOUR,
    );
    valid("ListResourceTemplatesResultResponse", &response(&templates));
    let prompts = ListPromptsResult::new(
        vec![
            Prompt::new("greet")
                .with_description("Greet.")
                .with_argument(
                    PromptArgument::new("name")
                        .with_description("Who.")
                        .with_required(true),
                ),
        ],
        CacheHint::PUBLIC_HOUR,
    );
    valid("ListPromptsResultResponse", &response(&prompts));

    let read = ReadResourceResult::new(
        vec![ResourceContents::text("test://x", None, "x")],
        CacheHint::new(1000, CacheScope::Public),
    )
    .with_meta(server_meta());
    valid("ReadResourceResultResponse", &response(&read));

    let prompt = GetPromptResult::new(vec![
        PromptMessage::user_text("hello"),
        PromptMessage::new(Role::Assistant, ContentBlock::image(PNG, "image/png")),
        PromptMessage::assistant_text("hi"),
    ])
    .with_description("A prompt.")
    .with_meta(server_meta());
    valid("GetPromptResultResponse", &response(&prompt));

    let complete = CompleteResult::new(
        Completion::new(vec!["a".into(), "b".into()])
            .with_total(2)
            .with_has_more(false),
    )
    .with_meta(server_meta());
    valid("CompleteResultResponse", &response(&complete));

    let listen_end = EmptyResult::default().with_meta(listen_meta(RequestId::from("listen-1")));
    valid("SubscriptionsListenResultResponse", &response(&listen_end));
}

#[test]
fn notifications() {
    let progress = ProgressNotificationParams::new(RequestId::integer(5), 50.0)
        .with_total(100.0)
        .with_message("half");
    valid(
        "ProgressNotification",
        &notification(methods::PROGRESS, &progress),
    );

    let log = LoggingMessageNotificationParams::new(LoggingLevel::Warning, json!({"slow": true}))
        .with_logger("db");
    valid(
        "LoggingMessageNotification",
        &notification(methods::MESSAGE, &log),
    );

    let cancelled =
        CancelledNotificationParams::new(RequestId::integer(1)).with_reason("server shutting down");
    valid(
        "CancelledNotification",
        &notification(methods::CANCELLED, &cancelled),
    );

    let ack = SubscriptionsAcknowledgedParams::new(
        SubscriptionFilter::default()
            .with_tools_list_changed(true)
            .with_resource_subscriptions(["test://x".to_owned()]),
        listen_meta(RequestId::integer(1)),
    );
    valid(
        "SubscriptionsAcknowledgedNotification",
        &notification(methods::SUBSCRIPTIONS_ACKNOWLEDGED, &ack),
    );

    let changed = ListChangedParams::new(listen_meta(RequestId::integer(1)));
    for (definition, method) in [
        ("ToolListChangedNotification", methods::TOOLS_LIST_CHANGED),
        (
            "PromptListChangedNotification",
            methods::PROMPTS_LIST_CHANGED,
        ),
        (
            "ResourceListChangedNotification",
            methods::RESOURCES_LIST_CHANGED,
        ),
    ] {
        valid(definition, &notification(method, &changed));
    }

    let updated =
        ResourceUpdatedParams::new("test://x/child", listen_meta(RequestId::from("listen-2")));
    valid(
        "ResourceUpdatedNotification",
        &notification(methods::RESOURCES_UPDATED, &updated),
    );
}

#[test]
fn errors() {
    let id = RequestId::integer(3);
    let message =
        |e: &RpcError| -> Value { serde_json::from_slice(&encode::error(Some(&id), e)).unwrap() };
    valid(
        "UnsupportedProtocolVersionError",
        &message(&RpcError::unsupported_version("1900-01-01")),
    );
    valid(
        "MissingRequiredClientCapabilityError",
        &message(&RpcError::missing_client_capability(
            "needs sampling",
            json!({"sampling": {}}),
        )),
    );
    valid(
        "HeaderMismatchError",
        &message(&RpcError::header_mismatch("no")),
    );
    let not_found = message(&RpcError::resource_not_found("test://missing"));
    valid("JSONRPCErrorResponse", &not_found);
    valid("InvalidParamsError", &not_found["error"]);
    valid(
        "MethodNotFoundError",
        &message(&RpcError::method_not_found("unknown method"))["error"],
    );
    let parse: Value =
        serde_json::from_slice(&encode::error(None, &RpcError::parse_error("bad"))).unwrap();
    valid("JSONRPCErrorResponse", &parse);
}

#[test]
fn client_requests_written_with_the_request_types() {
    let call = CallToolRequestParams::new(envelope(), "add")
        .with_arguments(json!({"a": 1}).as_object().unwrap().clone())
        .with_input_responses(
            json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}})
                .as_object()
                .unwrap()
                .clone(),
        )
        .with_request_state("opaque");
    valid("CallToolRequest", &request(methods::TOOLS_CALL, &call));

    let list = PaginatedRequestParams::new(envelope()).with_cursor("abc");
    valid("ListToolsRequest", &request(methods::TOOLS_LIST, &list));

    let read = ReadResourceRequestParams::new(envelope(), "test://x").with_request_state("s");
    valid(
        "ReadResourceRequest",
        &request(methods::RESOURCES_READ, &read),
    );

    let get = GetPromptRequestParams::new(envelope(), "p")
        .with_arguments(json!({"x": "y"}).as_object().unwrap().clone());
    valid("GetPromptRequest", &request(methods::PROMPTS_GET, &get));

    let complete = CompleteRequestParams::new(
        envelope(),
        CompletionReference::Prompt { name: "p".into() },
        CompletionArgument::new("x", "y"),
    )
    .with_context(CompletionContext::default().with_argument("a", "b"));
    valid("CompleteRequest", &request(methods::COMPLETE, &complete));

    let listen = SubscriptionsListenRequestParams::new(
        envelope(),
        SubscriptionFilter::default()
            .with_prompts_list_changed(true)
            .with_resources_list_changed(false),
    );
    valid(
        "SubscriptionsListenRequest",
        &request(methods::SUBSCRIPTIONS_LISTEN, &listen),
    );
}

#[test]
fn client_answers_to_input_requests_parse_into_the_response_types() {
    let elicit: ElicitResult =
        serde_json::from_value(json!({"action": "accept", "content": {"name": "Ada"}})).unwrap();
    assert_eq!(elicit.action, ElicitAction::Accept);
    let sampled: CreateMessageResult = serde_json::from_value(json!({
        "role": "assistant", "content": {"type": "text", "text": "Paris"},
        "model": "m", "stopReason": "endTurn"
    }))
    .unwrap();
    assert_eq!(sampled.model, "m");
    let roots: ListRootsResult = serde_json::from_value(
        json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}),
    )
    .unwrap();
    assert_eq!(roots.roots[0].uri, "file:///test/root");
    // The same answers, as a test client writes them.
    assert_eq!(
        ElicitResult::new(ElicitAction::Accept)
            .with_content(json!({"name": "Ada"}).as_object().unwrap().clone()),
        elicit
    );
    assert_eq!(
        CreateMessageResult::new(
            Role::Assistant,
            json!({"type": "text", "text": "Paris"}),
            "m"
        )
        .with_stop_reason("endTurn"),
        sampled
    );
    assert_eq!(
        ListRootsResult::new(vec![Root::new("file:///test/root").with_name("Test Root")]),
        roots
    );
    for (definition, value) in [
        ("ElicitResult", serde_json::to_value(&elicit).unwrap()),
        (
            "CreateMessageResult",
            serde_json::to_value(&sampled).unwrap(),
        ),
        ("ListRootsResult", serde_json::to_value(&roots).unwrap()),
    ] {
        valid(definition, &value);
    }
}
