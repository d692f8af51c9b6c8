//! Every wire type, serialized the way the server sends it (or a client sends
//! it), checked against its definition in the official schema. This covers the
//! types that the runtime does not emit yet (multi round-trip results, listen
//! streams), so the model is right before the features that use it land.

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
    ResultMeta {
        subscription_id: Some(id),
        ..Default::default()
    }
}

fn envelope() -> RequestMetaObject {
    RequestMetaObject {
        protocol_version: "2026-07-28".into(),
        client_capabilities: ClientCapabilities {
            elicitation: Some(ElicitationCapability::default()),
            ..Default::default()
        },
        client_info: Some(Implementation::new("client", "0.1.0")),
        other: Default::default(),
    }
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
    let resource = Resource {
        uri: "test://linked".into(),
        name: "linked".into(),
        title: None,
        description: Some("A linked resource.".into()),
        mime_type: Some("text/plain".into()),
        size: Some(3),
        icons: None,
        annotations: Some(Annotations {
            audience: Some(vec![Role::User]),
            priority: Some(0.5),
            last_modified: None,
        }),
        meta: None,
    };
    let result = CallToolResult {
        content: vec![
            ContentBlock::text("hello"),
            ContentBlock::image(PNG, "image/png"),
            ContentBlock::audio("UklGRg==", "audio/wav"),
            ContentBlock::ResourceLink(Box::new(resource)),
            ContentBlock::embedded(ResourceContents::text("test://a", Some("text/plain"), "a")),
            ContentBlock::embedded(ResourceContents::blob("test://b", Some("image/png"), PNG)),
        ],
        structured_content: Some(json!({"ok": true})),
        is_error: Some(false),
        meta: server_meta(),
        ..Default::default()
    };
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
            InputRequest::Elicit(ElicitRequestParams::Form {
                message: "What is your name?".into(),
                requested_schema: json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"]
                }),
            }),
        ),
        (
            "consent",
            InputRequest::Elicit(ElicitRequestParams::Url {
                message: "Connect your account.".into(),
                url: "https://example.com/connect".into(),
            }),
        ),
        (
            "capital",
            InputRequest::Sample(CreateMessageRequestParams {
                messages: vec![SamplingMessage {
                    role: Role::User,
                    content: ContentBlock::text("Capital of France?"),
                }],
                max_tokens: 100,
                system_prompt: None,
                temperature: None,
                other: Default::default(),
            }),
        ),
        ("roots", InputRequest::ListRoots(Default::default())),
    ];
    let result = InputRequiredResult {
        result_type: ResultType::InputRequired,
        input_requests: Some(
            requests
                .into_iter()
                .map(|(k, v)| (k.to_owned(), serde_json::to_value(v).unwrap()))
                .collect(),
        ),
        request_state: Some("opaque".into()),
        meta: server_meta(),
    };
    for definition in [
        "CallToolResultResponse",
        "ReadResourceResultResponse",
        "GetPromptResultResponse",
    ] {
        valid(definition, &response(&result));
    }
}

#[test]
fn the_other_results() {
    let discover = DiscoverResult {
        result_type: ResultType::Complete,
        supported_versions: vec!["2026-07-28".into()],
        capabilities: ServerCapabilities {
            tools: Some(ListChangedCapability {
                list_changed: Some(true),
            }),
            prompts: Some(ListChangedCapability::default()),
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
            }),
            completions: Some(Default::default()),
            logging: Some(Default::default()),
            ..Default::default()
        },
        instructions: Some("Be brief.".into()),
        ttl_ms: 0,
        cache_scope: CacheScope::Private,
        meta: server_meta(),
    };
    valid("DiscoverResultResponse", &response(&discover));

    let read = ReadResourceResult {
        result_type: ResultType::Complete,
        contents: vec![ResourceContents::text("test://x", None, "x")],
        ttl_ms: 1000,
        cache_scope: CacheScope::Public,
        meta: server_meta(),
    };
    valid("ReadResourceResultResponse", &response(&read));

    let prompt = GetPromptResult {
        description: Some("A prompt.".into()),
        messages: vec![
            PromptMessage::user_text("hello"),
            PromptMessage {
                role: Role::Assistant,
                content: ContentBlock::image(PNG, "image/png"),
            },
        ],
        meta: server_meta(),
        ..Default::default()
    };
    valid("GetPromptResultResponse", &response(&prompt));

    let complete = CompleteResult {
        completion: Completion {
            values: vec!["a".into(), "b".into()],
            total: Some(2),
            has_more: Some(false),
        },
        meta: server_meta(),
        ..Default::default()
    };
    valid("CompleteResultResponse", &response(&complete));

    let listen_end = EmptyResult {
        result_type: ResultType::Complete,
        meta: listen_meta(RequestId::from("listen-1")),
    };
    valid("SubscriptionsListenResultResponse", &response(&listen_end));
}

#[test]
fn notifications() {
    let progress = ProgressNotificationParams {
        progress_token: RequestId::integer(5),
        progress: 50.0,
        total: Some(100.0),
        message: Some("half".into()),
    };
    valid(
        "ProgressNotification",
        &notification(methods::PROGRESS, &progress),
    );

    let log = LoggingMessageNotificationParams {
        level: LoggingLevel::Warning,
        logger: Some("db".into()),
        data: json!({"slow": true}),
    };
    valid(
        "LoggingMessageNotification",
        &notification(methods::MESSAGE, &log),
    );

    let cancelled = CancelledNotificationParams {
        request_id: RequestId::integer(1),
        reason: Some("server shutting down".into()),
    };
    valid(
        "CancelledNotification",
        &notification(methods::CANCELLED, &cancelled),
    );

    let ack = SubscriptionsAcknowledgedParams {
        notifications: SubscriptionFilter {
            tools_list_changed: Some(true),
            resource_subscriptions: Some(vec!["test://x".into()]),
            ..Default::default()
        },
        meta: listen_meta(RequestId::integer(1)),
    };
    valid(
        "SubscriptionsAcknowledgedNotification",
        &notification(methods::SUBSCRIPTIONS_ACKNOWLEDGED, &ack),
    );

    let changed = ListChangedParams {
        meta: listen_meta(RequestId::integer(1)),
    };
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

    let updated = ResourceUpdatedParams {
        uri: "test://x/child".into(),
        meta: listen_meta(RequestId::from("listen-2")),
    };
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
    let call = CallToolRequestParams {
        meta: envelope(),
        name: "add".into(),
        arguments: Some(json!({"a": 1}).as_object().unwrap().clone()),
        input_responses: Some(
            json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}})
                .as_object()
                .unwrap()
                .clone(),
        ),
        request_state: Some("opaque".into()),
    };
    valid("CallToolRequest", &request(methods::TOOLS_CALL, &call));

    let list = PaginatedRequestParams {
        meta: envelope(),
        cursor: Some("abc".into()),
    };
    valid("ListToolsRequest", &request(methods::TOOLS_LIST, &list));

    let read = ReadResourceRequestParams {
        meta: envelope(),
        uri: "test://x".into(),
        input_responses: None,
        request_state: None,
    };
    valid(
        "ReadResourceRequest",
        &request(methods::RESOURCES_READ, &read),
    );

    let get = GetPromptRequestParams {
        meta: envelope(),
        name: "p".into(),
        arguments: Some(json!({"x": "y"}).as_object().unwrap().clone()),
        input_responses: None,
        request_state: None,
    };
    valid("GetPromptRequest", &request(methods::PROMPTS_GET, &get));

    let complete = CompleteRequestParams {
        meta: envelope(),
        reference: CompletionReference::Prompt { name: "p".into() },
        argument: CompletionArgument {
            name: "x".into(),
            value: "y".into(),
        },
        context: Some(CompletionContext {
            arguments: Some([("a".to_owned(), "b".to_owned())].into()),
        }),
    };
    valid("CompleteRequest", &request(methods::COMPLETE, &complete));

    let listen = SubscriptionsListenRequestParams {
        meta: envelope(),
        notifications: SubscriptionFilter {
            prompts_list_changed: Some(true),
            ..Default::default()
        },
    };
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
