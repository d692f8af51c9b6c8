//! The Tasks extension and the extension seam, on the wire: task creation,
//! polling, input, cancellation, principal isolation, governance, redaction,
//! refusals, and heartbeats of plain calls.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};
use typed_mcp::extension::{Extension, ExtensionMethod};
use typed_mcp::receipt::{MemorySink, Outcome};
use typed_mcp::tasks::{EXTENSION_ID, MemoryTaskStore, TaskOwner, TaskStore, TaskSupport};
use typed_mcp::transport::Inbound;
use typed_mcp::wire::{CallToolResult, ContentBlock, ElicitResult};
use typed_mcp::{Answer, NeedsInput, Principal, RpcError, Server, ToolContext, tool, tools};
use typed_mcp_client::testing::TestClient;

use crate::schema::client_with_capabilities;

/// Sleep for `millis`, then answer how long it slept.
///
/// # Arguments
/// * `millis` - How long to work.
#[tool(read_only, task)]
async fn nap(millis: u64) -> ContentBlock {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    ContentBlock::text(format!("slept {millis} ms"))
}

/// Work only as a task.
#[tool(read_only, task = "required")]
async fn only_task() -> ContentBlock {
    ContentBlock::text("done as a task")
}

/// Ask whether to go on; answer with the choice.
#[tool(task)]
async fn ask(ctx: ToolContext) -> Answer<ContentBlock> {
    match ctx.input_response::<ElicitResult>("go") {
        Some(Ok(answer)) => {
            Answer::Done(ContentBlock::text(format!("answer: {:?}", answer.action)))
        }
        _ => Answer::NeedsInput(NeedsInput::new().elicit(
            "go",
            "Go on?",
            json!({"type": "object", "properties": {"go": {"type": "boolean"}}}),
        )),
    }
}

/// Ask two questions, one after the other, then answer.
#[tool(task)]
async fn ask_twice(ctx: ToolContext) -> Answer<ContentBlock> {
    let question = |key: &str| {
        NeedsInput::new().elicit(key, "Go on?", json!({"type": "object", "properties": {}}))
    };
    match ctx.request_state() {
        None => Answer::NeedsInput(question("first").state("asked-first")),
        Some("asked-first") => Answer::NeedsInput(question("second").state("asked-second")),
        Some(_) => Answer::Done(ContentBlock::text("asked twice")),
    }
}

/// Work longer than the declaration allows.
#[tool(read_only, task, timeout_ms = 50)]
async fn overrun() -> ContentBlock {
    tokio::time::sleep(Duration::from_secs(5)).await;
    ContentBlock::text("too late")
}

/// Tell the secret.
#[tool(read_only, task)]
async fn leak() -> ContentBlock {
    ContentBlock::text("the password is hunter2-secret")
}

/// Count in rounds that leave only state, then answer how far it got.
#[tool(read_only, task)]
async fn count_in_rounds(ctx: ToolContext) -> Answer<ContentBlock> {
    let reached: u32 = ctx
        .request_state()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    if reached < 3 {
        return Answer::NeedsInput(NeedsInput::new().state((reached + 1).to_string()));
    }
    Answer::Done(ContentBlock::text(format!("counted to {reached}")))
}

/// Reading the vault (never granted in these tests).
const VAULT: typed_mcp::Capability = typed_mcp::Capability::new("vault.read", "Read the vault");

/// Open the vault; may run as a task.
#[tool(read_only, task, caps = [VAULT])]
async fn open_vault() -> ContentBlock {
    ContentBlock::text("opened")
}

/// Answer plainly (never a task).
#[tool(read_only)]
async fn plain() -> ContentBlock {
    ContentBlock::text("plain")
}

fn tasks_caps() -> Value {
    json!({"extensions": {EXTENSION_ID: {}}})
}

struct Fixture {
    server: Server,
    store: Arc<MemoryTaskStore>,
    receipts: MemorySink,
}

fn fixture(builder: impl FnOnce(typed_mcp::ServerBuilder) -> typed_mcp::ServerBuilder) -> Fixture {
    let store = Arc::new(MemoryTaskStore::default());
    let receipts = MemorySink::new();
    let server = builder(
        Server::new("tasks-test", "0.1.0")
            .tools(tools![
                nap,
                only_task,
                ask,
                ask_twice,
                overrun,
                leak,
                count_in_rounds,
                open_vault,
                plain
            ])
            .task_store_shared(store.clone())
            .task_poll_interval(Duration::from_millis(20))
            .secret_values(["hunter2-secret"])
            .receipt_sink(receipts.clone()),
    )
    .build()
    .expect("builds");
    Fixture {
        server,
        store,
        receipts,
    }
}

/// Sends `method` with `params` as `principal` (none: anonymous).
async fn send_as(
    client: &TestClient,
    principal: Option<&str>,
    method: &str,
    params: Value,
) -> Value {
    let mut params = params.as_object().cloned().unwrap_or_default();
    params.insert("_meta".into(), Value::Object(client.envelope()));
    let message = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let principal = principal.map(Principal::new);
    client
        .send_raw_with(
            &serde_json::to_vec(&message).unwrap(),
            Inbound::default().principal(principal.as_ref()),
        )
        .await
        .response()
        .expect("a response")
        .clone()
}

async fn get(client: &TestClient, id: &str) -> Value {
    client
        .request("tasks/get", json!({"taskId": id}))
        .await
        .response()
        .expect("a response")
        .clone()
}

/// Polls until the task is terminal (or `status`), for at most 5 s.
async fn until(client: &TestClient, id: &str, status: &str) -> Value {
    for _ in 0..250 {
        let task = get(client, id).await;
        let now = task["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if now == status || ["completed", "failed", "cancelled"].contains(&now.as_str()) {
            return task["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} did not reach {status} within 5 s");
}

#[tokio::test]
async fn a_call_becomes_a_task_that_is_polled_and_collected() {
    let f = fixture(|b| b);
    let discover = client_with_capabilities(f.server.clone(), tasks_caps())
        .discover()
        .await;
    assert_eq!(
        discover.result()["capabilities"]["extensions"][EXTENSION_ID],
        json!({}),
        "discover announces the extension"
    );
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let created = client.call_tool("nap", json!({"millis": 300})).await;
    let handle = created.result();
    assert_eq!(handle["resultType"], "task");
    assert_eq!(handle["status"], "working");
    assert_eq!(handle["content"], json!([]));
    for absent in [
        "result",
        "error",
        "inputRequests",
        "requestState",
        "ttl",
        "pollInterval",
    ] {
        assert!(
            handle.get(absent).is_none(),
            "a task handle has no {absent}: {handle}"
        );
    }
    assert_eq!(handle["ttlMs"], 3_600_000);
    assert_eq!(handle["pollIntervalMs"], 20);
    let id = handle["taskId"].as_str().expect("a task id").to_owned();
    assert_eq!(id.len(), 32, "128 random bits in hex: {id}");
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));

    let working = get(&client, &id).await;
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert_eq!(working["result"]["resultType"], "complete");
    assert!(working["result"].get("result").is_none());

    let done = until(&client, &id, "completed").await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "slept 300 ms");
    assert!(done["createdAt"].as_str().unwrap().ends_with('Z'));
    assert!(done["lastUpdatedAt"].as_str().unwrap() >= done["createdAt"].as_str().unwrap());

    // The same tool, from a client that does not declare the extension: a
    // plain call.
    let plain = client_with_capabilities(f.server.clone(), json!({}));
    let result = plain.call_tool("nap", json!({"millis": 1})).await;
    assert_eq!(result.result()["resultType"], "complete");
    assert_eq!(result.result()["content"][0]["text"], "slept 1 ms");
}

#[tokio::test]
async fn the_task_leaves_one_receipt_when_it_ends_naming_it_in_the_creating_trace() {
    let f = fixture(|b| b);
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let mut meta = client.envelope();
    meta.insert(
        "traceparent".into(),
        json!(format!("00-{trace}-00f067aa0ba902b7-01")),
    );
    let created = client
        .request(
            "tools/call",
            json!({"name": "nap", "arguments": {"millis": 200}, "_meta": meta}),
        )
        .await;
    let id = created.result()["taskId"].as_str().unwrap().to_owned();
    assert!(
        f.receipts.receipts().iter().all(|r| r.name != "nap"),
        "no receipt while the task runs"
    );
    until(&client, &id, "completed").await;
    // The receipt is left as the task ends, just after its result is stored.
    let mut receipts = Vec::new();
    for _ in 0..100 {
        receipts = f
            .receipts
            .receipts()
            .into_iter()
            .filter(|r| r.name == "nap")
            .collect();
        if !receipts.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(receipts.len(), 1, "one receipt: {receipts:?}");
    assert_eq!(receipts[0].task_id.as_deref(), Some(id.as_str()));
    assert_eq!(receipts[0].outcome, Outcome::Completed);
    assert_eq!(
        receipts[0].trace_id, trace,
        "the task runs in the creating request's trace"
    );
    assert!(
        receipts[0].duration_us >= 200_000,
        "the receipt covers the task's run"
    );
}

#[tokio::test]
async fn another_principal_can_neither_see_nor_cancel_a_task() {
    let f = fixture(|b| b);
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let created = send_as(
        &client,
        Some("alice"),
        "tools/call",
        json!({"name": "nap", "arguments": {"millis": 400}}),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();

    for (who, method) in [
        (Some("bob"), "tasks/get"),
        (Some("bob"), "tasks/cancel"),
        (None, "tasks/get"),
        (None, "tasks/cancel"),
    ] {
        let answer = send_as(&client, who, method, json!({"taskId": id})).await;
        assert_eq!(
            answer["error"]["code"], -32602,
            "{who:?} {method}: {answer}"
        );
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("unknown task"),
            "the same answer as for an id that does not exist: {answer}"
        );
    }
    // Bob's answers cannot reach Alice's task either (acknowledged, ignored).
    let update = send_as(
        &client,
        Some("bob"),
        "tasks/update",
        json!({"taskId": id, "inputResponses": {}}),
    )
    .await;
    assert_eq!(update["result"]["resultType"], "complete");

    let alice = send_as(&client, Some("alice"), "tasks/get", json!({"taskId": id})).await;
    assert_eq!(
        alice["result"]["status"], "working",
        "bob's cancel left it running: {alice}"
    );
    let record = f
        .store
        .get(
            &TaskOwner::principal("alice"),
            &typed_mcp::tasks::TaskId::from_wire(id.clone()),
        )
        .await
        .unwrap()
        .expect("stored under alice");
    assert_eq!(record.tool, "nap");
    for _ in 0..100 {
        let alice = send_as(&client, Some("alice"), "tasks/get", json!({"taskId": id})).await;
        if alice["result"]["status"] == "completed" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("alice's task did not complete");
}

#[tokio::test]
async fn a_cancelled_task_drops_its_handler_and_says_cancelled() {
    static DROPPED: AtomicUsize = AtomicUsize::new(0);
    struct Guard;
    impl Drop for Guard {
        fn drop(&mut self) {
            DROPPED.fetch_add(1, Ordering::SeqCst);
        }
    }
    let f = fixture(|b| {
        b.tool(
            typed_mcp::declare::ToolDecl::builder("hang")
                .description("Hang until cancelled.")
                .task(TaskSupport::optional())
                .handler(|_args, _ctx| async {
                    let _guard = Guard;
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok(CallToolResult::text("never"))
                }),
        )
    });
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let id = client.call_tool("hang", json!({})).await.result()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ack = client.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(
        ack.result(),
        &json!({"resultType": "complete", "_meta": ack.result()["_meta"]})
    );
    let task = until(&client, &id, "cancelled").await;
    assert_eq!(task["status"], "cancelled");
    for _ in 0..100 {
        if DROPPED.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        DROPPED.load(Ordering::SeqCst),
        1,
        "the handler's future was dropped"
    );
    // Cancelling again, or cancelling a finished task: the same empty ack.
    let again = client.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(again.result()["resultType"], "complete");
    assert_eq!(get(&client, &id).await["result"]["status"], "cancelled");
    let receipt = f
        .receipts
        .receipts()
        .into_iter()
        .find(|r| r.name == "hang")
        .expect("a receipt");
    assert_eq!(receipt.outcome, Outcome::Cancelled);
}

#[tokio::test]
async fn a_task_asks_for_input_and_resumes_with_the_answer() {
    let f = fixture(|b| b);
    let client = client_with_capabilities(
        f.server.clone(),
        tasks_caps()
            .as_object()
            .cloned()
            .map(|mut c| {
                c.insert("elicitation".into(), json!({}));
                Value::Object(c)
            })
            .unwrap(),
    );
    let id = client.call_tool("ask", json!({})).await.result()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let waiting = until(&client, &id, "input_required").await;
    assert_eq!(waiting["status"], "input_required");
    assert_eq!(
        waiting["inputRequests"]["go"]["method"],
        "elicitation/create"
    );
    // A malformed answer is refused, and the task still waits.
    let bad = client
        .request(
            "tasks/update",
            json!({"taskId": id, "inputResponses": "yes"}),
        )
        .await;
    assert_eq!(bad.error_code(), Some(-32602));
    assert_eq!(
        get(&client, &id).await["result"]["status"],
        "input_required"
    );
    let ack = client
        .request("tasks/update", json!({"taskId": id, "inputResponses": {"go": {"action": "accept", "content": {"go": true}}}}))
        .await;
    assert_eq!(ack.result()["resultType"], "complete");
    assert!(
        ack.result().get("status").is_none(),
        "the ack carries no task"
    );
    let done = until(&client, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "answer: Accept",
        "{done}"
    );
}

#[tokio::test]
async fn rounds_that_leave_only_state_run_on_inside_the_task() {
    let f = fixture(|b| b);
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let id = client
        .call_tool("count_in_rounds", json!({}))
        .await
        .result()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = until(&client, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "counted to 3",
        "{done}"
    );
}

#[tokio::test]
async fn capabilities_are_checked_before_a_task_is_created() {
    let f = fixture(|b| b);
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let refused = client.call_tool("open_vault", json!({})).await;
    let result = refused.result();
    assert_eq!(
        result["resultType"], "complete",
        "refused at once, not as a task: {result}"
    );
    assert_eq!(result["isError"], true);
    assert!(result.get("taskId").is_none());
    assert!(
        f.store
            .list(&TaskOwner::anonymous())
            .await
            .unwrap()
            .is_empty(),
        "no task was stored"
    );
    let receipt = f
        .receipts
        .receipts()
        .into_iter()
        .find(|r| r.name == "open_vault")
        .expect("a receipt");
    assert!(
        matches!(receipt.outcome, Outcome::Refused { .. }),
        "{:?}",
        receipt.outcome
    );
    assert_eq!(receipt.task_id, None);
}

#[tokio::test]
async fn results_are_redacted_before_they_reach_the_store() {
    let f = fixture(|b| b);
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let id = client.call_tool("leak", json!({})).await.result()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let done = until(&client, &id, "completed").await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("hunter2-secret"), "{text}");
    let stored = f.store.list(&TaskOwner::anonymous()).await.unwrap();
    let stored = serde_json::to_string(&stored).unwrap();
    assert!(stored.contains("the password is"), "{stored}");
    assert!(
        !stored.contains("hunter2-secret"),
        "the store never sees a secret: {stored}"
    );
}

#[tokio::test]
async fn a_task_only_tool_refuses_a_plain_call_and_the_server_serves_on() {
    let f = fixture(|b| b);
    let plain = client_with_capabilities(f.server.clone(), json!({}));
    let refused = plain.call_tool("only_task", json!({})).await;
    assert_eq!(refused.error_code(), Some(-32021));
    assert_eq!(
        refused.error().unwrap()["data"]["requiredCapabilities"]["extensions"][EXTENSION_ID],
        json!({})
    );
    assert_eq!(refused.http_status(), Some(400));
    // The task surface needs the extension too.
    let gated = plain.request("tasks/get", json!({"taskId": "x"})).await;
    assert_eq!(gated.error_code(), Some(-32021));
    // Served on: a plain tool, and the task-only one as a task.
    assert_eq!(
        plain.call_tool("plain", json!({})).await.result()["content"][0]["text"],
        "plain"
    );
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let id = client.call_tool("only_task", json!({})).await.result()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        until(&client, &id, "completed").await["result"]["content"][0]["text"],
        "done as a task"
    );
}

#[tokio::test]
async fn malformed_task_requests_are_refused_and_the_server_serves_on() {
    let f = fixture(|b| b);
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    for (method, params) in [
        ("tasks/get", json!({})),
        ("tasks/get", json!({"taskId": 42})),
        ("tasks/get", json!({"taskId": "no-such-task"})),
        ("tasks/cancel", json!({"taskId": "no-such-task"})),
        ("tasks/update", json!({"taskId": "t"})),
        (
            "tasks/update",
            json!({"taskId": "t", "inputResponses": [1]}),
        ),
    ] {
        let answer = client.request(method, params.clone()).await;
        assert_eq!(
            answer.error_code(),
            Some(-32602),
            "{method} {params}: {:?}",
            answer.response()
        );
    }
    for removed in ["tasks/list", "tasks/result"] {
        let answer = client.request(removed, json!({"taskId": "t"})).await;
        assert_eq!(answer.error_code(), Some(-32601), "{removed}");
    }
    // An unknown task's update is acknowledged (the extension says so).
    let ack = client
        .request("tasks/update", json!({"taskId": "t", "inputResponses": {}}))
        .await;
    assert_eq!(ack.result()["resultType"], "complete");
    assert_eq!(
        client.call_tool("plain", json!({})).await.result()["content"][0]["text"],
        "plain"
    );
}

#[tokio::test]
async fn a_full_store_refuses_the_task_and_the_server_serves_on() {
    let store = Arc::new(MemoryTaskStore::new(1));
    let server = Server::new("tasks-full", "0.1.0")
        .tools(tools![nap, plain])
        .task_store_shared(store)
        .build()
        .unwrap();
    let client = client_with_capabilities(server, tasks_caps());
    let first = client.call_tool("nap", json!({"millis": 2000})).await;
    assert_eq!(first.result()["resultType"], "task");
    let second = client.call_tool("nap", json!({"millis": 1})).await;
    assert_eq!(second.error_code(), Some(-32603));
    let message = second.error().unwrap()["message"].as_str().unwrap();
    assert!(message.contains("task store is full"), "{message}");
    assert_eq!(
        client.call_tool("plain", json!({})).await.result()["content"][0]["text"],
        "plain"
    );
}

#[tokio::test]
async fn discover_announces_tasks_only_when_a_tool_may_run_as_one() {
    let server = Server::new("no-tasks", "0.1.0")
        .tools(tools![plain])
        .build()
        .unwrap();
    let client = client_with_capabilities(server, tasks_caps());
    let discover = client.discover().await;
    assert!(
        discover.result()["capabilities"]
            .get("extensions")
            .is_none(),
        "{:?}",
        discover.result()
    );
    let answer = client.request("tasks/get", json!({"taskId": "t"})).await;
    assert_eq!(answer.error_code(), Some(-32601));
}

#[tokio::test]
async fn an_application_extension_is_served_through_the_seam() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let echo = Extension::new("com.example/echo")
        .settings(Map::from_iter([("version".to_owned(), json!(2))]))
        .method_with(
            ExtensionMethod::new("ignored", "echo/say")
                .with_name_param("text")
                .requiring_client_extension(),
            move |params, ctx| {
                counted.fetch_add(1, Ordering::SeqCst);
                async move {
                    match params.get("text").and_then(Value::as_str) {
                        Some("boom") => panic!("echo fails on purpose"),
                        Some(text) => Ok(Map::from_iter([
                            ("said".to_owned(), json!(text)),
                            (
                                "principal".to_owned(),
                                json!(ctx.principal().map(Principal::id)),
                            ),
                        ])),
                        None => Err(RpcError::invalid_params("text is required")),
                    }
                }
            },
        )
        // A method the core serves cannot be taken over.
        .method("tools/list", |_params, _ctx| async { Ok(Map::new()) });
    let server = Server::new("ext", "0.1.0")
        .tools(tools![plain])
        .extension(echo)
        .build()
        .unwrap();
    let caps = json!({"extensions": {"com.example/echo": {}}});
    let client = client_with_capabilities(server.clone(), caps);
    assert_eq!(
        client.discover().await.result()["capabilities"]["extensions"]["com.example/echo"],
        json!({"version": 2})
    );
    let said = send_as(&client, Some("carol"), "echo/say", json!({"text": "hi"})).await;
    assert_eq!(said["result"]["said"], "hi");
    assert_eq!(said["result"]["principal"], "carol");
    assert_eq!(said["result"]["resultType"], "complete");
    assert!(said["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    let refused = client.request("echo/say", json!({})).await;
    assert_eq!(refused.error_code(), Some(-32602));
    let panicked = client.request("echo/say", json!({"text": "boom"})).await;
    assert_eq!(panicked.error_code(), Some(-32603));
    assert!(
        client.list_tools(None).await.result()["tools"].is_array(),
        "tools/list stays the core's"
    );

    // Without the extension declared: -32021, and the handler never ran.
    let before = calls.load(Ordering::SeqCst);
    let undeclared = client_with_capabilities(server.clone(), json!({}));
    let gated = undeclared.request("echo/say", json!({"text": "hi"})).await;
    assert_eq!(gated.error_code(), Some(-32021));
    assert_eq!(calls.load(Ordering::SeqCst), before);

    // Over HTTP, Mcp-Name must mirror the named member.
    let headers: Vec<(String, String)> = vec![
        ("MCP-Protocol-Version".into(), "2026-07-28".into()),
        ("Mcp-Method".into(), "echo/say".into()),
        ("Mcp-Name".into(), "other".into()),
    ];
    let mut params = Map::new();
    params.insert("text".into(), json!("hi"));
    params.insert("_meta".into(), Value::Object(client.envelope()));
    let message = json!({"jsonrpc": "2.0", "id": 9, "method": "echo/say", "params": params});
    let mismatched = client
        .send_raw_with(
            &serde_json::to_vec(&message).unwrap(),
            Inbound::default().headers(&headers),
        )
        .await;
    assert_eq!(mismatched.error_code(), Some(-32020));
    assert_eq!(calls.load(Ordering::SeqCst), before);
    assert_eq!(
        client
            .request("echo/say", json!({"text": "still"}))
            .await
            .result()["said"],
        "still"
    );
}

/// Sleep for three seconds without reporting progress.
#[tool(read_only)]
async fn quiet_three_seconds() -> ContentBlock {
    tokio::time::sleep(Duration::from_secs(3)).await;
    ContentBlock::text("done")
}

async fn progress_of_a_quiet_call(heartbeat: Option<Duration>) -> Vec<Value> {
    let server = Server::new("beats", "0.1.0")
        .tools(tools![quiet_three_seconds])
        .heartbeat(heartbeat)
        .build()
        .unwrap();
    let client = client_with_capabilities(server, json!({}));
    let mut meta = client.envelope();
    meta.insert("progressToken".into(), json!("beat"));
    let response = client
        .request(
            "tools/call",
            json!({"name": "quiet_three_seconds", "arguments": {}, "_meta": meta}),
        )
        .await;
    assert_eq!(response.result()["content"][0]["text"], "done");
    response
        .notifications()
        .filter(|n| n["method"] == "notifications/progress")
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_quiet_call_gets_heartbeats_before_its_result() {
    let beats = progress_of_a_quiet_call(Some(Duration::from_secs(1))).await;
    assert!(
        beats.len() >= 2,
        "a 3 s call with a 1 s heartbeat: {beats:?}"
    );
    let values: Vec<f64> = beats
        .iter()
        .map(|b| b["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress increases: {values:?}"
    );
    assert!(beats.iter().all(|b| b["params"]["progressToken"] == "beat"));
    assert!(
        progress_of_a_quiet_call(None).await.is_empty(),
        "heartbeats off: none"
    );
}

/// A task-capable tool named `name` that works until `release` is
/// notified, then answers `released`.
fn gated(name: &'static str, release: Arc<tokio::sync::Notify>) -> typed_mcp::declare::ToolDecl {
    typed_mcp::declare::ToolDecl::builder(name)
        .description("Work until released.")
        .task(TaskSupport::optional())
        .handler(move |_args, _ctx| {
            let release = release.clone();
            async move {
                release.notified().await;
                Ok(CallToolResult::text("released"))
            }
        })
}

/// A `subscriptions/listen` for `task_ids` as `principal` (none:
/// anonymous), declaring the extension; the connection keeps it open.
async fn listen_for_tasks(
    server: &Server,
    principal: Option<&str>,
    task_ids: Value,
) -> (
    typed_mcp::transport::Connection,
    typed_mcp::transport::Inbox,
) {
    let connection = typed_mcp::transport::Connection::new(server.clone());
    let envelope = TestClient::new(server.clone())
        .with_capabilities(tasks_caps())
        .envelope();
    let message = json!({"jsonrpc": "2.0", "id": "watch", "method": "subscriptions/listen",
        "params": {"_meta": envelope, "notifications": {"taskIds": task_ids}}});
    let (outbox, inbox) = typed_mcp::transport::Outbox::channel();
    let principal = principal.map(Principal::new);
    let accepted = connection
        .accept(
            &serde_json::to_vec(&message).unwrap(),
            Inbound::default().principal(principal.as_ref()),
            &outbox,
        )
        .await;
    assert!(
        matches!(accepted, typed_mcp::transport::Accepted::Started { .. }),
        "the listen was not started: {accepted:?}"
    );
    (connection, inbox)
}

/// The next message of a listen stream, within 5 s.
async fn next_message(inbox: &mut typed_mcp::transport::Inbox, what: &str) -> Value {
    let out = tokio::time::timeout(Duration::from_secs(5), inbox.recv())
        .await
        .unwrap_or_else(|_| panic!("nothing within 5 s, waiting for {what}"))
        .unwrap_or_else(|| panic!("the stream ended, waiting for {what}"));
    serde_json::from_slice(out.body()).unwrap()
}

/// Nothing on the stream for `millis`.
async fn quiet_for(inbox: &mut typed_mcp::transport::Inbox, millis: u64, what: &str) {
    if let Ok(Some(out)) = tokio::time::timeout(Duration::from_millis(millis), inbox.recv()).await {
        panic!(
            "expected nothing ({what}), found {}",
            String::from_utf8_lossy(out.body())
        );
    }
}

/// A task as `tasks/get` answers it, without what only a result carries.
fn as_task(mut result: Value) -> Value {
    let task = result.as_object_mut().unwrap();
    task.remove("resultType");
    task.remove("_meta");
    result
}

#[tokio::test]
async fn task_status_notifications_carry_the_task_as_tasks_get_answers_it() {
    let release = Arc::new(tokio::sync::Notify::new());
    let f = fixture(|b| b.tool(gated("gated", release.clone())));
    let client = client_with_capabilities(
        f.server.clone(),
        json!({"extensions": {EXTENSION_ID: {}}, "elicitation": {}}),
    );
    let id = client.call_tool("gated", json!({})).await.result()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_connection, mut stream) =
        listen_for_tasks(&f.server, None, json!([id, "no-such-task", id])).await;
    let ack = next_message(&mut stream, "the acknowledgement").await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"taskIds": [id]}),
        "the caller's live task, once; an unknown id is not honoured"
    );
    quiet_for(&mut stream, 150, "no change yet, so no notification").await;

    release.notify_one();
    let done = next_message(&mut stream, "the completed task").await;
    assert_eq!(done["method"], "notifications/tasks", "{done}");
    assert_eq!(
        done["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "watch",
        "tagged with the subscription"
    );
    assert_eq!(done["params"]["status"], "completed");
    assert_eq!(done["params"]["result"]["content"][0]["text"], "released");
    let mut notified = done["params"].clone();
    notified.as_object_mut().unwrap().remove("_meta");
    assert_eq!(
        notified,
        as_task(get(&client, &id).await["result"].clone()),
        "the notification is the task as tasks/get answers it"
    );
    quiet_for(&mut stream, 150, "nothing after the terminal status").await;

    // A task that asks twice: watched while it waits for its first
    // answer (the state it had when the listen began is not notified), the
    // listener sees it ask again, then finish.
    let asking = client.call_tool("ask_twice", json!({})).await.result()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let first = until(&client, &asking, "input_required").await;
    assert!(first["inputRequests"].get("first").is_some(), "{first}");
    let (_connection, mut stream) = listen_for_tasks(&f.server, None, json!([asking])).await;
    next_message(&mut stream, "the acknowledgement").await;
    quiet_for(
        &mut stream,
        100,
        "the state at the listen's start is not notified",
    )
    .await;
    let answer = |key: &str| json!({"taskId": asking, "inputResponses": {key: {"action": "accept", "content": {}}}});
    client.request("tasks/update", answer("first")).await;
    let mut statuses = Vec::new();
    loop {
        let message = next_message(&mut stream, "the asking task's changes").await;
        assert_eq!(message["method"], "notifications/tasks", "{message}");
        let status = message["params"]["status"].as_str().unwrap().to_owned();
        statuses.push(status.clone());
        match status.as_str() {
            "input_required" => {
                let keys: Vec<&String> = message["params"]["inputRequests"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .collect();
                assert_eq!(keys, ["second#2"], "the second question: {message}");
                client.request("tasks/update", answer("second#2")).await;
            }
            "completed" => {
                assert_eq!(
                    message["params"]["result"]["content"][0]["text"],
                    "asked twice"
                );
                break;
            }
            "working" => {}
            other => panic!("unexpected status {other}: {message}"),
        }
    }
    assert!(
        statuses.contains(&"input_required".to_owned()),
        "the second wait for input was notified: {statuses:?}"
    );
    quiet_for(&mut stream, 100, "nothing after the terminal status").await;
}

#[tokio::test]
async fn a_cancelled_task_is_notified_and_its_handler_sees_the_cancellation() {
    let seen = Arc::new(std::sync::Mutex::new(None::<std::time::Instant>));
    let observed = seen.clone();
    let f = fixture(|b| {
        b.tool(
            typed_mcp::declare::ToolDecl::builder("watchful")
                .description("Work until cancelled, noting when.")
                .task(TaskSupport::optional())
                .handler(move |_args, ctx: ToolContext| {
                    let observed = observed.clone();
                    async move {
                        ctx.cancelled().await;
                        *observed.lock().unwrap() = Some(std::time::Instant::now());
                        Ok(CallToolResult::text("stopped"))
                    }
                }),
        )
    });
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let id = client.call_tool("watchful", json!({})).await.result()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_connection, mut stream) = listen_for_tasks(&f.server, None, json!([id])).await;
    next_message(&mut stream, "the acknowledgement").await;
    let cancelled_at = std::time::Instant::now();
    client.request("tasks/cancel", json!({"taskId": id})).await;
    let message = next_message(&mut stream, "the cancelled task").await;
    assert_eq!(
        (&message["method"], &message["params"]["status"]),
        (&json!("notifications/tasks"), &json!("cancelled")),
        "{message}"
    );
    assert!(message["params"].get("result").is_none(), "{message}");
    for _ in 0..100 {
        if seen.lock().unwrap().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let seen_at = seen
        .lock()
        .unwrap()
        .expect("the handler saw its cancellation");
    assert!(seen_at >= cancelled_at);
    // What it returned after is not the task's end: cancelled stays.
    assert_eq!(get(&client, &id).await["result"]["status"], "cancelled");
    let receipt = f
        .receipts
        .receipts()
        .into_iter()
        .find(|r| r.name == "watchful")
        .expect("a receipt");
    assert_eq!(receipt.outcome, Outcome::Cancelled);
}

#[tokio::test]
async fn a_listen_for_tasks_needs_the_extension_and_sees_only_the_callers_own_tasks() {
    let release = Arc::new(tokio::sync::Notify::new());
    let f = fixture(|b| b.tool(gated("gated", release.clone())));
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let created = send_as(
        &client,
        Some("alice"),
        "tools/call",
        json!({"name": "gated", "arguments": {}}),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();

    // Without the extension declared: -32021, naming it.
    let undeclared = client_with_capabilities(f.server.clone(), json!({}))
        .request(
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [id]}}),
        )
        .await;
    assert_eq!(
        undeclared.error_code(),
        Some(-32021),
        "{:?}",
        undeclared.error()
    );
    assert_eq!(
        undeclared.error().unwrap()["data"]["requiredCapabilities"],
        json!({"extensions": {EXTENSION_ID: {}}})
    );

    // Bob (and an anonymous caller) are not told of Alice's task.
    for who in [Some("bob"), None] {
        let (_connection, mut stream) = listen_for_tasks(&f.server, who, json!([id])).await;
        let ack = next_message(&mut stream, "the acknowledgement").await;
        assert_eq!(
            ack["params"]["notifications"],
            json!({}),
            "{who:?} is honoured no task id"
        );
        if who.is_some() {
            // Alice's task finishes while Bob listens.
            release.notify_one();
        }
        quiet_for(&mut stream, 200, "nothing of another principal's task").await;
    }
    let alice = send_as(&client, Some("alice"), "tasks/get", json!({"taskId": id})).await;
    assert_eq!(alice["result"]["status"], "completed", "{alice}");

    // The limit: only the first MAX_WATCHED_TASKS distinct ids are looked
    // up; the server then serves on.
    let running = send_as(
        &client,
        Some("alice"),
        "tools/call",
        json!({"name": "gated", "arguments": {}}),
    )
    .await["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut many: Vec<String> = (0..typed_mcp::tasks::MAX_WATCHED_TASKS)
        .map(|n| format!("missing-{n}"))
        .collect();
    many.push(running.clone());
    let (_connection, mut stream) = listen_for_tasks(&f.server, Some("alice"), json!(many)).await;
    let ack = next_message(&mut stream, "the acknowledgement").await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({}),
        "the id past the limit is not looked up"
    );
    let (_connection, mut stream) =
        listen_for_tasks(&f.server, Some("alice"), json!([running])).await;
    let ack = next_message(&mut stream, "the acknowledgement").await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"taskIds": [running]})
    );
    release.notify_one();
    let done = next_message(&mut stream, "alice's task, finished").await;
    assert_eq!(done["params"]["status"], "completed", "{done}");
}

#[tokio::test]
async fn invalid_arguments_on_a_task_call_are_answered_at_once_and_create_no_task() {
    let f = fixture(|b| b);
    let plain = client_with_capabilities(f.server.clone(), json!({}))
        .call_tool("nap", json!({"millis": "soon"}))
        .await;
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let refused = client.call_tool("nap", json!({"millis": "soon"})).await;
    let answer = refused.result();
    assert_eq!(answer["resultType"], "complete", "{answer}");
    assert_eq!(answer["isError"], true, "{answer}");
    assert!(answer.get("taskId").is_none(), "{answer}");
    assert_eq!(
        (
            &answer["content"],
            &answer["_meta"][typed_mcp::schema::ARGUMENT_ERRORS_META_KEY]
        ),
        (
            &plain.result()["content"],
            &plain.result()["_meta"][typed_mcp::schema::ARGUMENT_ERRORS_META_KEY]
        ),
        "the same report a plain call gets"
    );
    assert!(
        f.store
            .list(&TaskOwner::anonymous())
            .await
            .unwrap()
            .is_empty(),
        "no task was created"
    );
    let receipts = f.receipts.receipts();
    let receipt = receipts
        .iter()
        .rev()
        .find(|r| r.name == "nap")
        .expect("a receipt");
    assert!(receipt.task_id.is_none(), "{receipt:?}");
    // Valid arguments still make a task.
    let task = client.call_tool("nap", json!({"millis": 5})).await;
    assert_eq!(task.result()["resultType"], "task", "{}", task.result());
    let id = task.result()["taskId"].as_str().unwrap().to_owned();
    assert_eq!(
        until(&client, &id, "completed").await["status"],
        "completed"
    );
}

#[tokio::test]
async fn a_task_runs_under_its_declarations_deadline() {
    let f = fixture(|b| b);
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let created = client.call_tool("overrun", json!({})).await;
    assert_eq!(
        created.result()["resultType"],
        "task",
        "{}",
        created.result()
    );
    let id = created.result()["taskId"].as_str().unwrap().to_owned();
    let ended = until(&client, &id, "completed").await;
    // A timeout is the tool error a plain call gets, so the task completed
    // with it (the extension keeps `failed` for JSON-RPC errors).
    assert_eq!(ended["status"], "completed", "{ended}");
    assert_eq!(ended["result"]["isError"], true, "{ended}");
    assert!(
        ended["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("timed out after 50ms"),
        "{ended}"
    );
    let receipt = f
        .receipts
        .receipts()
        .into_iter()
        .find(|r| r.name == "overrun")
        .expect("a receipt");
    assert_eq!(receipt.outcome, Outcome::TimedOut { after_ms: 50 });
    assert_eq!(receipt.task_id.as_deref(), Some(id.as_str()));
}

#[tokio::test]
async fn a_task_whose_handler_panics_fails_with_the_error_and_a_status_message() {
    let f = fixture(|b| {
        b.tool(
            typed_mcp::declare::ToolDecl::builder("explode")
                .description("Panic, as a bug would.")
                .task(TaskSupport::optional())
                .handler(|_args, _ctx| async {
                    if std::hint::black_box(true) {
                        panic!("the handler has a bug");
                    }
                    Ok(CallToolResult::text("never"))
                }),
        )
    });
    let client = client_with_capabilities(f.server.clone(), tasks_caps());
    let id = client.call_tool("explode", json!({})).await.result()["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let ended = until(&client, &id, "failed").await;
    assert_eq!(ended["status"], "failed", "{ended}");
    assert_eq!(ended["error"]["code"], -32603, "{ended}");
    assert!(ended.get("result").is_none(), "{ended}");
    let message = ended["statusMessage"].as_str().expect("a status message");
    assert!(
        message.starts_with("the call failed: ") && message.len() > "the call failed: ".len(),
        "a diagnostic status message: {ended}"
    );
    // The server serves on.
    let next = client.call_tool("nap", json!({"millis": 1})).await;
    assert_eq!(next.result()["resultType"], "task");
}

#[tokio::test]
async fn a_dated_client_declaring_the_extension_gets_plain_calls() {
    let f = fixture(|b| b);
    let client = TestClient::new(f.server.clone());
    let init = client
        .send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"extensions": {EXTENSION_ID: {}}},
                "clientInfo": {"name": "dated-client", "version": "1.0.0"}
            }}),
        )
        .await;
    assert_eq!(
        init.result()["protocolVersion"],
        "2025-11-25",
        "{:?}",
        init.response()
    );
    client
        .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let call = client
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "nap", "arguments": {"millis": 1}}}))
        .await;
    assert_eq!(
        call.result()["content"][0]["text"],
        "slept 1 ms",
        "the extension is not defined for 2025-11-25: a plain call, {:?}",
        call.response()
    );
    assert!(call.result().get("taskId").is_none());
    assert!(
        f.store
            .list(&TaskOwner::anonymous())
            .await
            .unwrap()
            .is_empty()
    );
}
