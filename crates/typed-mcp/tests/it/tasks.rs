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
