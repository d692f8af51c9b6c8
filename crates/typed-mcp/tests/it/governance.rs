//! Governance on the wire: capabilities declared by tools and granted by the
//! host, the ceiling a handler's `authorize` enforces, hidden lists, deadlines,
//! and exactly one receipt per call whatever its outcome.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Notify;
use typed_mcp::receipt::{MemorySink, Outcome, Receipt};
use typed_mcp::{
    Capability, Principal, Server, ServerBuilder, ToolContext,
    capability::MISSING_CAPABILITIES_META_KEY, prompts, resources, tools,
};
use typed_mcp_client::testing::TestClient;

use crate::schema::client;

const DESK_WRITE: Capability = Capability::new("desk.write", "Change tickets in the support desk");
const DESK_ADMIN: Capability = Capability::new("desk.admin", "Administer the support desk");

/// Counts handler runs and signals when a running handler is dropped.
#[derive(Default)]
struct Desk {
    runs: AtomicUsize,
    dropped: Notify,
    hang_started: Notify,
    hang_dropped: Notify,
}

/// Signals when the future holding it is dropped (an aborted handler).
struct OnDrop(Arc<Desk>, fn(&Desk) -> &Notify);

impl Drop for OnDrop {
    fn drop(&mut self) {
        (self.1)(&self.0).notify_one();
    }
}

/// Why closing a ticket failed.
#[derive(Debug, thiserror::Error)]
enum DeskError {
    /// No such ticket.
    #[error("ticket {id} was not found")]
    NotFound { id: u32 },
    /// Closed before.
    #[error("the ticket is already closed")]
    AlreadyClosed,
}

impl Desk {
    /// Close a ticket.
    ///
    /// # Arguments
    /// * `ticket` - The ticket number.
    #[typed_mcp::tool(caps = [DESK_WRITE])]
    fn close(&self, ticket: u32) -> Result<String, DeskError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        match ticket {
            2 => Err(DeskError::AlreadyClosed),
            3 => Err(DeskError::NotFound { id: 3 }),
            n => Ok(format!("closed {n}")),
        }
    }
}

/// Shared state for free-function tools.
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Look at the desk without changing it (a hint that grants nothing).
#[typed_mcp::tool(read_only, caps = [DESK_WRITE])]
fn peek() -> String {
    RUNS.fetch_add(1, Ordering::SeqCst);
    "peeked".into()
}

/// Try to administer the desk with only desk.write declared.
#[typed_mcp::tool(caps = [DESK_WRITE])]
fn overreach(ctx: ToolContext) -> Result<String, typed_mcp::capability::NotAuthorized> {
    ctx.authorize(&DESK_WRITE)?;
    ctx.authorize(&DESK_ADMIN)?;
    Ok("administered".into())
}

/// Administer the desk.
#[typed_mcp::tool(caps = [DESK_ADMIN])]
fn administer(ctx: ToolContext) -> Result<String, typed_mcp::capability::NotAuthorized> {
    ctx.authorize(&DESK_ADMIN)?;
    Ok("administered".into())
}

/// Panic.
#[typed_mcp::tool]
fn boom() -> String {
    panic!("the desk exploded")
}

/// Ask for confirmation first.
#[typed_mcp::tool]
fn confirm(ctx: ToolContext) -> typed_mcp::Answer<String> {
    match ctx.request_state() {
        Some("asked") => typed_mcp::Answer::Done("confirmed".into()),
        _ => typed_mcp::Answer::NeedsInput(typed_mcp::NeedsInput::new().state("asked")),
    }
}

/// A ticket's text.
///
/// # Arguments
/// * `id` - The ticket id.
#[typed_mcp::resource(uri = "desk://tickets/{id}", caps = [DESK_WRITE])]
fn ticket(id: String) -> String {
    format!("ticket {id}")
}

/// Triage a ticket.
///
/// # Arguments
/// * `id` - The ticket id.
#[typed_mcp::prompt(caps = [DESK_ADMIN])]
fn triage(id: String) -> String {
    format!("Triage ticket {id}.")
}

struct Fixture {
    desk: Arc<Desk>,
    receipts: MemorySink,
}

/// A server with the desk, the free tools, a slow and a hanging tool, and a
/// memory receipt sink; `grants` finishes the builder.
fn build(grants: impl FnOnce(ServerBuilder) -> ServerBuilder) -> (Server, Fixture) {
    let desk = Arc::new(Desk::default());
    let receipts = MemorySink::new();
    let (slow_desk, hang_desk) = (desk.clone(), desk.clone());
    let builder = Server::new("governance", "0.1.0")
        .tools(tools![
            desk.close, peek, overreach, administer, boom, confirm
        ])
        .tool(
            typed_mcp::declare::ToolDecl::builder("slow")
                .description("Take longer than the deadline.")
                .timeout(Duration::from_millis(50))
                .handler(move |_args, ctx| {
                    let desk = slow_desk.clone();
                    async move {
                        let _guard = OnDrop(desk.clone(), |d| &d.dropped);
                        assert!(ctx.deadline().is_some(), "a deadline is set");
                        tokio::time::sleep(Duration::from_secs(30)).await;
                        Ok(typed_mcp::wire::CallToolResult::text("late"))
                    }
                }),
        )
        .tool(
            typed_mcp::declare::ToolDecl::builder("hang")
                .description("Never finish.")
                .handler(move |_args, _ctx| {
                    let desk = hang_desk.clone();
                    async move {
                        let _guard = OnDrop(desk.clone(), |d| &d.hang_dropped);
                        desk.hang_started.notify_one();
                        std::future::pending::<()>().await;
                        Ok(typed_mcp::wire::CallToolResult::text("never"))
                    }
                }),
        )
        .resources(resources![ticket])
        .prompts(prompts![triage])
        .receipt_sink(receipts.clone());
    let server = grants(builder).build().expect("valid");
    (server, Fixture { desk, receipts })
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn only_receipt(receipts: &MemorySink) -> Receipt {
    let all = receipts.take();
    assert_eq!(all.len(), 1, "exactly one receipt: {all:#?}");
    all.into_iter().next().unwrap()
}

#[tokio::test]
async fn a_call_without_the_grant_is_refused_before_its_handler_runs() {
    let (server, fx) = build(|b| b);
    let client = client(server);
    let response = client.call_tool("close", json!({"ticket": 1})).await;
    let result = response.result();
    assert_eq!(result["isError"], json!(true));
    let message = text(result);
    assert!(message.contains("desk.write"), "{message}");
    assert!(message.contains("not granted"), "{message}");
    assert_eq!(
        result["_meta"][MISSING_CAPABILITIES_META_KEY],
        json!(["desk.write"])
    );
    assert_eq!(
        fx.desk.runs.load(Ordering::SeqCst),
        0,
        "the handler never ran"
    );
    let receipt = only_receipt(&fx.receipts);
    assert_eq!(receipt.method, "tools/call");
    assert_eq!(receipt.name, "close");
    assert_eq!(
        receipt.outcome,
        Outcome::Refused {
            missing: vec!["desk.write".into()]
        }
    );
    assert!(receipt.scope.is_empty());
    // The server keeps serving.
    let ok = client.call_tool("confirm", json!({})).await;
    assert_eq!(ok.result()["resultType"], json!("input_required"));
}

#[tokio::test]
async fn a_read_only_hint_grants_nothing() {
    let (server, fx) = build(|b| b);
    let before = RUNS.load(Ordering::SeqCst);
    let client = client(server);
    let response = client.call_tool("peek", json!({})).await;
    assert_eq!(response.result()["isError"], json!(true));
    assert_eq!(RUNS.load(Ordering::SeqCst), before, "peek did not run");
    assert!(matches!(
        only_receipt(&fx.receipts).outcome,
        Outcome::Refused { .. }
    ));
}

#[tokio::test]
async fn with_the_grant_the_call_runs_within_its_declared_scope() {
    let (server, fx) = build(|b| b.grant(DESK_WRITE));
    let client = client(server);
    let response = client.call_tool("close", json!({"ticket": 1})).await;
    assert_eq!(
        response.result()["structuredContent"],
        json!({"result": "closed 1"})
    );
    let receipt = only_receipt(&fx.receipts);
    assert_eq!(receipt.outcome, Outcome::Completed);
    assert_eq!(receipt.scope, ["desk.write"]);
    assert_eq!(receipt.request_id, response.response().unwrap()["id"]);
}

#[tokio::test]
async fn authorize_fails_for_a_granted_but_undeclared_capability() {
    // The host grants both; `overreach` declares only desk.write.
    let (server, fx) = build(|b| b.grant(DESK_WRITE).grant(DESK_ADMIN));
    let client = client(server);
    let response = client.call_tool("overreach", json!({})).await;
    let result = response.result();
    assert_eq!(result["isError"], json!(true));
    let message = text(result);
    assert!(message.contains("desk.admin"), "{message}");
    assert!(message.contains("outside this call's scope"), "{message}");
    let receipt = only_receipt(&fx.receipts);
    assert_eq!(
        receipt.outcome,
        Outcome::Failed {
            error_type: Some("typed_mcp::capability::NotAuthorized".into()),
            variant: Some("NotAuthorized".into()),
        }
    );
    // Declared and granted: allowed.
    let response = client.call_tool("administer", json!({})).await;
    assert_eq!(
        response.result()["structuredContent"],
        json!({"result": "administered"})
    );
}

#[test]
fn outside_a_call_the_context_is_empty() {
    let block_on = |f| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    };
    let ctx = ToolContext::current();
    assert!(!ctx.in_call());
    assert!(ctx.principal().is_none());
    assert!(ctx.deadline().is_none());
    assert!(ctx.scope().is_empty());
    assert!(ctx.authorize(&DESK_WRITE).is_err());
    assert!(!block_on(ctx.progress(1.0, None, None)));
    // A tool function can be called directly (`peek` would race with the
    // test that counts its runs).
    assert!(
        overreach(ctx).is_err(),
        "desk.write is outside an empty scope"
    );
}

/// What the request needs, and the outcome its receipt must carry.
struct Case {
    tool: &'static str,
    arguments: Value,
    expect: Outcome,
}

#[tokio::test]
async fn every_outcome_leaves_exactly_one_receipt() {
    let cases = [
        Case {
            tool: "close",
            arguments: json!({"ticket": 1}),
            expect: Outcome::Completed,
        },
        Case {
            tool: "administer",
            arguments: json!({}),
            expect: Outcome::Refused {
                missing: vec!["desk.admin".into()],
            },
        },
        Case {
            tool: "close",
            arguments: json!({"ticket": "one"}),
            expect: Outcome::InvalidArguments,
        },
        Case {
            tool: "close",
            arguments: json!({"ticket": 2}),
            expect: Outcome::Failed {
                error_type: Some(format!("{}::DeskError", module_path!())),
                variant: Some("AlreadyClosed".into()),
            },
        },
        Case {
            tool: "close",
            arguments: json!({"ticket": 3}),
            expect: Outcome::Failed {
                error_type: Some(format!("{}::DeskError", module_path!())),
                variant: Some("NotFound".into()),
            },
        },
        Case {
            tool: "slow",
            arguments: json!({}),
            expect: Outcome::TimedOut { after_ms: 50 },
        },
        Case {
            tool: "boom",
            arguments: json!({}),
            expect: Outcome::Panicked,
        },
        Case {
            tool: "confirm",
            arguments: json!({}),
            expect: Outcome::InputRequired,
        },
    ];
    let (server, fx) = build(|b| b.grant(DESK_WRITE));
    let catalog_digest = |name: &str| {
        let index = server.catalog().tool_index(name).unwrap();
        server.catalog().tool_digest(index).digest.to_string()
    };
    let client = client(server.clone());
    for case in &cases {
        client.call_tool(case.tool, case.arguments.clone()).await;
        let receipt = only_receipt(&fx.receipts);
        assert_eq!(
            receipt.outcome, case.expect,
            "{} {}",
            case.tool, case.arguments
        );
        assert_eq!(receipt.name, case.tool);
        // The same digest `typed-mcp lock` records for the tool.
        assert_eq!(receipt.digest, Some(catalog_digest(case.tool)));
        assert!(!receipt.time.is_empty());
    }
    // Cancelled: the handler is dropped, nothing is sent, one receipt.
    let call = json!({
        "jsonrpc": "2.0", "id": "hang-1", "method": "tools/call",
        "params": {"name": "hang", "_meta": client.envelope()}
    });
    let cancel = json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "hang-1"}
    });
    let (response, _) = tokio::join!(client.send(&call), async {
        fx.desk.hang_started.notified().await;
        client.send(&cancel).await
    });
    assert!(response.messages.is_empty());
    fx.desk.hang_dropped.notified().await;
    client.drain().await;
    assert_eq!(only_receipt(&fx.receipts).outcome, Outcome::Cancelled);
    // Resources and prompts get receipts too.
    client.read_resource("desk://tickets/7").await;
    let receipt = only_receipt(&fx.receipts);
    assert_eq!(receipt.method, "resources/read");
    assert_eq!(receipt.uri.as_deref(), Some("desk://tickets/7"));
    assert_eq!(receipt.outcome, Outcome::Completed);
    client.get_prompt("triage", json!({"id": "7"})).await;
    let receipt = only_receipt(&fx.receipts);
    assert_eq!(receipt.method, "prompts/get");
    assert!(matches!(receipt.outcome, Outcome::Refused { .. }));
}

#[tokio::test]
async fn a_timeout_drops_the_handler_and_says_so() {
    let (server, fx) = build(|b| b);
    let client = client(server);
    let (response, ()) = tokio::join!(client.call_tool("slow", json!({})), async {
        fx.desk.dropped.notified().await;
    });
    let result = response.result();
    assert_eq!(result["isError"], json!(true));
    assert_eq!(text(result), "tool \"slow\" timed out after 50ms");
    assert_eq!(
        only_receipt(&fx.receipts).outcome,
        Outcome::TimedOut { after_ms: 50 }
    );
}

#[tokio::test]
async fn a_server_default_timeout_applies_to_tools_without_one() {
    let server = Server::new("deadline", "0.1.0")
        .tool(
            typed_mcp::declare::ToolDecl::builder("wait")
                .description("Wait a long time.")
                .handler(|_args, ctx| async move {
                    let left = ctx.remaining().expect("a deadline");
                    assert!(left <= Duration::from_millis(30));
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    Ok(typed_mcp::wire::CallToolResult::text("late"))
                }),
        )
        .default_timeout(Duration::from_millis(30))
        .build()
        .unwrap();
    let response = client(server).call_tool("wait", json!({})).await;
    assert_eq!(
        text(response.result()),
        "tool \"wait\" timed out after 30ms"
    );
}

#[tokio::test]
async fn refused_resources_and_prompts_are_json_rpc_errors() {
    let (server, fx) = build(|b| b);
    let client = client(server);
    let read = client.read_resource("desk://tickets/1").await;
    assert_eq!(
        read.error_code(),
        Some(i64::from(typed_mcp::capability::NOT_GRANTED))
    );
    assert_eq!(
        read.error().unwrap()["data"]["missingCapabilities"],
        json!(["desk.write"])
    );
    let prompt = client.get_prompt("triage", json!({"id": "1"})).await;
    assert_eq!(
        prompt.error_code(),
        Some(i64::from(typed_mcp::capability::NOT_GRANTED))
    );
    assert_eq!(fx.receipts.take().len(), 2);
}

#[test]
fn allow_lists_name_declared_capabilities_only() {
    let (server, _) = build(|b| b.allow(["desk.write, desk.admin"]));
    drop(server);
    let error = Server::new("typo", "0.1.0")
        .tools(tools![peek])
        .allow(["desk.wrte"])
        .build()
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("desk.wrte"), "{message}");
    assert!(
        message.contains("desk.write"),
        "lists what is declared: {message}"
    );
}

#[tokio::test]
async fn allow_grants_what_it_names() {
    let (server, fx) = build(|b| b.allow(["desk.write"]));
    let response = client(server)
        .call_tool("close", json!({"ticket": 1}))
        .await;
    assert_eq!(response.result()["isError"], Value::Null);
    assert_eq!(only_receipt(&fx.receipts).outcome, Outcome::Completed);
}

fn admin_policy(principal: Option<&Principal>) -> Vec<Capability> {
    match principal.map(Principal::id) {
        Some("alice") => vec![DESK_WRITE, DESK_ADMIN],
        _ => vec![],
    }
}

/// Calls `tool` as `principal` through the connection, as the HTTP transport
/// does for an authenticated request.
async fn call_as(server: &Server, principal: Option<&str>, tool: &str) -> Value {
    use typed_mcp::transport::Inbound;
    let client = TestClient::new(server.clone());
    let message = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": {"ticket": 1}, "_meta": client.envelope()}
    });
    let principal = principal.map(Principal::new);
    let response = client
        .send_raw_with(
            &serde_json::to_vec(&message).unwrap(),
            Inbound::default().principal(principal.as_ref()),
        )
        .await;
    response.response().expect("a response").clone()
}

#[tokio::test]
async fn a_policy_grants_per_principal() {
    let (server, fx) = build(|b| b.grant_policy(admin_policy));
    let refused = call_as(&server, Some("bob"), "close").await;
    assert_eq!(refused["result"]["isError"], json!(true));
    let allowed = call_as(&server, Some("alice"), "close").await;
    assert_eq!(
        allowed["result"]["structuredContent"],
        json!({"result": "closed 1"})
    );
    let receipts = fx.receipts.take();
    assert_eq!(receipts.len(), 2);
    assert_eq!(receipts[0].principal.as_deref(), Some("bob"));
    assert!(matches!(receipts[0].outcome, Outcome::Refused { .. }));
    assert_eq!(receipts[1].principal.as_deref(), Some("alice"));
    assert_eq!(receipts[1].outcome, Outcome::Completed);
}

fn tool_names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn hidden_lists_omit_what_the_caller_may_not_use() {
    // Static grants: the same list for everyone, still publicly cacheable.
    let (server, _) = build(|b| b.grant(DESK_WRITE).hide_ungranted(true));
    let client = client(server.clone());
    let list = client.list_tools(None).await;
    let names = tool_names(list.result());
    assert!(names.contains(&"close".to_owned()));
    assert!(!names.contains(&"administer".to_owned()), "{names:?}");
    assert_eq!(list.result()["cacheScope"], json!("public"));
    let prompts = client.list_prompts(None).await;
    assert_eq!(prompts.result()["prompts"], json!([]));
    // Hidden is still refused with a receipt when called by name.
    let refused = client.call_tool("administer", json!({})).await;
    assert_eq!(refused.result()["isError"], json!(true));

    // A policy: each caller sees their own list, privately cacheable.
    let (server, _) = build(|b| b.grant_policy(admin_policy).hide_ungranted(true));
    let alice = server.list_view(Some(&Principal::new("alice"))).unwrap();
    let anonymous = server.list_view(None).unwrap();
    assert!(!Arc::ptr_eq(&alice, &anonymous));
    let list = client_list(&server).await;
    assert!(!tool_names(&list).contains(&"close".to_owned()));
    assert_eq!(list["cacheScope"], json!("private"));
    // Without hiding, everything is listed.
    let (server, _) = build(|b| b);
    assert!(server.list_view(None).is_none());
    assert!(tool_names(&client_list(&server).await).contains(&"administer".to_owned()));
}

async fn client_list(server: &Server) -> Value {
    client(server.clone())
        .list_tools(None)
        .await
        .result()
        .clone()
}

#[tokio::test]
async fn a_call_cancelled_while_waiting_for_a_slot_leaves_a_receipt() {
    let (server, fx) = build(|b| b.max_concurrent(1));
    let client = client(server);
    let hang = json!({
        "jsonrpc": "2.0", "id": "busy", "method": "tools/call",
        "params": {"name": "hang", "_meta": client.envelope()}
    });
    let queued = json!({
        "jsonrpc": "2.0", "id": "queued", "method": "tools/call",
        "params": {"name": "confirm", "_meta": client.envelope()}
    });
    let cancel = |id: &str| {
        json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id}
        })
    };
    let ((), _, _) = tokio::join!(
        async {
            fx.desk.hang_started.notified().await;
            // `queued` waits for the only slot; cancel it there.
            client.send(&cancel("queued")).await;
            client.send(&cancel("busy")).await;
        },
        client.send(&hang),
        client.send(&queued),
    );
    client.drain().await;
    let mut receipts = fx.receipts.take();
    receipts.sort_by(|a, b| a.name.cmp(&b.name));
    let outcomes: Vec<(&str, &Outcome)> = receipts
        .iter()
        .map(|r| (r.name.as_str(), &r.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("confirm", &Outcome::Cancelled),
            ("hang", &Outcome::Cancelled)
        ]
    );
}

#[tokio::test]
async fn receipts_carry_the_callers_trace_id() {
    let (server, fx) = build(|b| b.grant(DESK_WRITE));
    let client = client(server);
    let call = |id: u32, traceparent: &str| {
        let mut meta = client.envelope();
        meta.insert("traceparent".into(), json!(traceparent));
        json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "close", "arguments": {"ticket": 1}, "_meta": meta}
        })
    };
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let response = client
        .send(&call(1, &format!("00-{trace_id}-00f067aa0ba902b7-01")))
        .await;
    assert!(response.error().is_none());
    assert_eq!(only_receipt(&fx.receipts).trace_id, trace_id);
    // An invalid traceparent is ignored: the call succeeds in a fresh trace.
    let response = client.send(&call(2, "00-not-a-trace-01")).await;
    assert!(response.error().is_none());
    let fresh = only_receipt(&fx.receipts).trace_id;
    assert_eq!(fresh.len(), 32);
    assert_ne!(fresh, trace_id);
    assert_ne!(fresh, "0".repeat(32));
}

#[tokio::test]
async fn a_refused_call_does_not_wait_for_a_handler_slot() {
    let (server, fx) = build(|b| b.max_concurrent(1));
    let client = client(server);
    let hang = json!({
        "jsonrpc": "2.0", "id": "busy", "method": "tools/call",
        "params": {"name": "hang", "_meta": client.envelope()}
    });
    let (_, ()) = tokio::join!(client.send(&hang), async {
        // The only slot is taken; the refusal still comes back at once.
        fx.desk.hang_started.notified().await;
        let refused = tokio::time::timeout(
            Duration::from_secs(5),
            client.call_tool("close", json!({"ticket": 1})),
        )
        .await
        .expect("answered without a slot");
        assert_eq!(refused.result()["isError"], json!(true));
        client
            .send(&json!({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": "busy"}
            }))
            .await;
    });
    client.drain().await;
    let kinds: Vec<&str> = fx
        .receipts
        .take()
        .iter()
        .map(|r| r.outcome.kind())
        .collect();
    assert_eq!(kinds, ["refused", "cancelled"]);
}
