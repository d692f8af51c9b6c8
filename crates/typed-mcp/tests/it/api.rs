//! The public API's shapes, on the wire: one handler per builder (async, with
//! `blocking` for synchronous work), one `Answer` for tools, resources and
//! prompts, and return values classified by type rather than by name.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use typed_mcp::declare::{PromptDecl, ResourceDecl, ToolDecl};
use typed_mcp::wire::{
    CallToolResult, ContentBlock, ElicitResult, GetPromptResult, PromptMessage, ResourceContents,
};
use typed_mcp::{Answer, NeedsInput, RpcError, Server, ToolError, blocking, tool, tools};

use crate::schema::{client, client_with_capabilities};

/// A type of the application's own that happens to be called `Content`.
#[derive(Serialize, JsonSchema)]
struct Content {
    /// The body.
    body: String,
}

/// Return the application's own `Content`.
///
/// # Arguments
/// * `body` - The body.
#[tool]
fn own_content(body: String) -> Content {
    Content { body }
}

/// Return the library's content block.
///
/// # Arguments
/// * `text` - The text.
#[tool]
fn library_content(text: String) -> ContentBlock {
    ContentBlock::text(text)
}

#[tokio::test]
async fn a_users_own_content_type_is_structured_output_and_the_librarys_is_content() {
    let server = Server::new("api", "0.0.1")
        .tools(tools![own_content, library_content])
        .build()
        .unwrap();
    let client = client(server);
    let listed = client.list_tools(None).await;
    let tools = listed.result()["tools"].as_array().unwrap();
    let own = tools.iter().find(|t| t["name"] == "own_content").unwrap();
    assert_eq!(own["outputSchema"]["properties"]["body"]["type"], "string");
    let library = tools
        .iter()
        .find(|t| t["name"] == "library_content")
        .unwrap();
    assert!(library.get("outputSchema").is_none(), "{library}");

    let own = client.call_tool("own_content", json!({"body": "hi"})).await;
    assert_eq!(own.result()["structuredContent"], json!({"body": "hi"}));
    let library = client
        .call_tool("library_content", json!({"text": "hi"}))
        .await;
    assert!(library.result().get("structuredContent").is_none());
    assert_eq!(library.result()["content"][0]["text"], "hi");
}

fn form() -> serde_json::Value {
    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}})
}

/// A hand-written declaration of each kind that asks for input first, with
/// the same `Answer`.
fn asking_server() -> Server {
    let tool = ToolDecl::builder("confirm")
        .description("Ask before answering.")
        .handler(|_args, ctx| async move {
            Ok(match ctx.input_response::<ElicitResult>("ok") {
                Some(_) => Answer::Done(CallToolResult::text("confirmed")),
                None => Answer::NeedsInput(NeedsInput::new().elicit("ok", "Go on?", form())),
            })
        });
    let resource = ResourceDecl::builder("file:///guarded", "guarded")
        .description("Read after a confirmation.")
        .handler(|request, ctx| {
            blocking(move || {
                Ok(match ctx.input_response::<ElicitResult>("ok") {
                    Some(_) => Answer::Done(vec![ResourceContents::text(&request.uri, None, "ok")]),
                    None => Answer::NeedsInput(NeedsInput::new().elicit("ok", "Read?", form())),
                })
            })
        });
    let prompt = PromptDecl::builder("careful")
        .description("A prompt after a confirmation.")
        .handler(|_args, ctx| async move {
            Ok(match ctx.input_response::<ElicitResult>("ok") {
                Some(_) => Answer::Done(GetPromptResult::new(vec![PromptMessage::user_text("go")])),
                None => Answer::NeedsInput(NeedsInput::new().elicit("ok", "Render?", form())),
            })
        });
    Server::new("api", "0.0.1")
        .tool(tool)
        .resource(resource)
        .prompt(prompt)
        .build()
        .unwrap()
}

#[tokio::test]
async fn tools_resources_and_prompts_ask_for_input_with_the_same_answer() {
    let client = client_with_capabilities(asking_server(), json!({"elicitation": {}}));
    let answers = [
        client.call_tool("confirm", json!({})).await,
        client.read_resource("file:///guarded").await,
        client.get_prompt("careful", json!({})).await,
    ];
    for answer in &answers {
        assert_eq!(
            answer.result()["resultType"],
            "input_required",
            "{answer:?}"
        );
        assert_eq!(
            answer.result()["inputRequests"]["ok"]["method"],
            "elicitation/create"
        );
    }
}

#[tokio::test]
async fn a_hand_written_declaration_may_not_ask_for_input_the_client_did_not_declare() {
    // No elicitation capability on the request: every kind is refused alike.
    let client = client(asking_server());
    let answers = [
        client.call_tool("confirm", json!({})).await,
        client.read_resource("file:///guarded").await,
        client.get_prompt("careful", json!({})).await,
    ];
    for answer in &answers {
        assert_eq!(answer.error_code(), Some(-32021), "{answer:?}");
    }
    // And the server still serves.
    let listed = client.list_tools(None).await;
    assert_eq!(listed.result()["tools"][0]["name"], "confirm");
}

#[tokio::test]
async fn blocking_work_answers_like_the_async_function_it_sits_in() {
    let server = Server::new("api", "0.0.1")
        .tool(
            ToolDecl::builder("sum")
                .description("Add on a blocking thread.")
                .allow_undocumented_inputs()
                .handler(|args, _ctx| {
                    blocking(move || {
                        let number = |key: &str| args.get(key).and_then(serde_json::Value::as_i64);
                        let (Some(a), Some(b)) = (number("a"), number("b")) else {
                            return Err(ToolError::execution("a and b must be integers"));
                        };
                        Ok(CallToolResult::text((a + b).to_string()))
                    })
                }),
        )
        .tool(
            ToolDecl::builder("refuse")
                .description("A protocol error from blocking work.")
                .handler(|_args, _ctx| {
                    blocking(|| {
                        Err::<CallToolResult, _>(ToolError::Protocol(RpcError::invalid_params(
                            "never valid",
                        )))
                    })
                }),
        )
        .build()
        .unwrap();
    let client = client(server);
    let sum = client.call_tool("sum", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.result()["content"][0]["text"], "5");
    let bad = client.call_tool("sum", json!({"a": "x"})).await;
    assert_eq!(bad.result()["isError"], true);
    assert_eq!(
        bad.result()["content"][0]["text"],
        "a and b must be integers"
    );
    let refused = client.call_tool("refuse", json!({})).await;
    assert_eq!(refused.error_code(), Some(-32602));
}

#[tokio::test]
async fn blocking_outside_a_handler_is_plain_blocking_work() {
    assert_eq!(blocking(|| 2 + 2).await, 4);
    let panicked = tokio::spawn(blocking(|| -> u8 { panic!("boom") })).await;
    assert!(panicked.unwrap_err().is_panic());
}

/// A user's pattern that is not a regular expression.
#[derive(serde::Deserialize, JsonSchema)]
struct BadPattern {
    /// A code.
    #[schemars(regex(pattern = r"^(unclosed"))]
    code: String,
}

/// Take a code.
///
/// # Arguments
/// * `args` - The code.
#[tool]
fn take_code(args: BadPattern) -> String {
    args.code
}

#[test]
fn an_invalid_schema_pattern_is_a_build_error_naming_the_tool() {
    let error = Server::new("api", "0.0.1")
        .tools(tools![take_code])
        .build()
        .expect_err("the pattern does not compile");
    match &error {
        typed_mcp::BuildError::InvalidSchema {
            declaration,
            reason,
        } => {
            assert_eq!(declaration, "tool `take_code`");
            assert!(!reason.is_empty());
        }
        other => panic!("expected InvalidSchema, got {other:?}"),
    }
    assert!(
        error
            .to_string()
            .starts_with("tool `take_code`: its schema cannot be served")
    );
    // The same process builds a good server afterwards.
    Server::new("api", "0.0.1")
        .tools(tools![own_content])
        .build()
        .unwrap();
}
