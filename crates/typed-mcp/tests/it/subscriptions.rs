//! `subscriptions/listen` on the wire: the acknowledgement first and tagged,
//! only honoured filters acknowledged, updates for subscribed URIs and their
//! sub-resources only, resynchronization of a lagging subscriber, cancellation,
//! graceful end, and no handler slot held.

use std::time::Duration;

use serde_json::{Value, json};
use typed_mcp::wire::{CallToolResult, ResourceContents};
use typed_mcp::{
    Server,
    declare::{ResourceDecl, ResourceTemplateDecl, ToolDecl},
};

use crate::schema::client;

const QUIET: Duration = Duration::from_millis(200);

fn server() -> Server {
    Server::new("subscriptions", "0.1.0")
        .resource(
            ResourceDecl::builder("file:///project", "project")
                .description("The project.")
                .handler(|r, _| async move { Ok(vec![ResourceContents::text(r.uri, None, "p")]) }),
        )
        .resource(
            ResourceTemplateDecl::builder("notes://{id}", "note")
                .description("A note.")
                .parameter("id", "The note.")
                .handler(|r, _| async move { Ok(vec![ResourceContents::text(r.uri, None, "n")]) }),
        )
        .tool(
            ToolDecl::builder("ping_back")
                .description("Answer pong.")
                .handler(|_, _| async { Ok(CallToolResult::text("pong")) }),
        )
        .max_concurrent(1)
        .build()
        .unwrap()
}

fn assert_tagged(message: &Value, id: &Value) {
    assert_eq!(
        message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], *id,
        "untagged: {message}"
    );
}

#[tokio::test]
async fn discover_announces_subscriptions_but_no_list_changes() {
    let client = client(server());
    let caps = client.discover().await.result()["capabilities"].clone();
    assert_eq!(caps["resources"], json!({"subscribe": true}));
    assert!(caps["tools"].get("listChanged").is_none(), "{caps}");
}

#[tokio::test]
async fn the_acknowledgement_comes_first_and_names_only_what_is_honoured() {
    let client = client(server());
    let mut stream = client
        .listen(json!({
            "toolsListChanged": true,
            "resourceSubscriptions": ["file:///project", "notes://7", "file:///elsewhere"]
        }))
        .await;
    let id = serde_json::to_value(stream.id()).unwrap();
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_tagged(&ack, &id);
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["file:///project", "notes://7"]})
    );
}

#[tokio::test]
async fn updates_reach_the_subscriptions_that_asked_for_them() {
    let server = server();
    let updates = server.resource_updates().clone();
    let client = client(server);
    let mut project = client
        .listen(json!({"resourceSubscriptions": ["file:///project"]}))
        .await;
    let mut notes = client
        .listen(json!({"resourceSubscriptions": ["notes://7"]}))
        .await;
    let project_id = serde_json::to_value(project.id()).unwrap();
    project.next().await.unwrap();
    notes.next().await.unwrap();

    updates.publish("file:///project/src/main.rs");
    updates.publish("file:///projector");
    updates.publish("notes://8");
    let update = project.next().await.unwrap();
    assert_eq!(update["method"], "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "file:///project/src/main.rs");
    assert_tagged(&update, &project_id);
    assert_eq!(
        project.next_within(QUIET).await,
        None,
        "file:///projector is not a sub-resource"
    );
    assert_eq!(
        notes.next_within(QUIET).await,
        None,
        "notes://8 was not subscribed"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_lagging_subscriber_is_told_to_reread_rather_than_sent_invented_events() {
    let server = server();
    let updates = server.resource_updates().clone();
    let client = client(server);
    let mut stream = client
        .listen(json!({"resourceSubscriptions": ["file:///project"]}))
        .await;
    stream.next().await.unwrap();
    // The subscription's task cannot run while this loop holds the only thread,
    // so it falls far behind the broadcast's backlog.
    for i in 0..1_000 {
        updates.publish(format!("file:///project/{i}"));
    }
    let first = stream.next().await.unwrap();
    assert_eq!(
        first["params"]["uri"], "file:///project",
        "resync of the subscribed URI"
    );
    // What follows are real updates, the most recent ones, in order.
    let next = stream.next().await.unwrap();
    let uri = next["params"]["uri"].as_str().unwrap();
    let n: usize = uri.rsplit('/').next().unwrap().parse().unwrap();
    assert!(n >= 1_000 - 256, "{uri}");
}

#[tokio::test]
async fn a_cancelled_subscription_sends_nothing_more() {
    let server = server();
    let updates = server.resource_updates().clone();
    let client = client(server);
    let mut stream = client
        .listen(json!({"resourceSubscriptions": ["file:///project"]}))
        .await;
    stream.next().await.unwrap();
    let id = stream.id().clone();
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
    client.send(&cancel).await;
    updates.publish("file:///project");
    assert_eq!(stream.next_within(QUIET).await, None);
    assert_eq!(
        updates.subscribers(),
        0,
        "the subscription's receiver is gone"
    );
}

#[tokio::test]
async fn end_of_input_ends_subscriptions_with_their_result() {
    let client = client(server());
    let mut stream = client
        .listen(json!({"resourceSubscriptions": ["file:///project"]}))
        .await;
    let id = serde_json::to_value(stream.id()).unwrap();
    stream.next().await.unwrap();
    client.drain().await;
    let end = stream.next().await.unwrap();
    assert_eq!(end["id"], id);
    assert_eq!(end["result"]["resultType"], "complete");
    assert_eq!(
        end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
}

#[tokio::test]
async fn open_subscriptions_hold_no_handler_slot() {
    let client = client(server()); // max_concurrent(1)
    let mut a = client.listen(json!({})).await;
    let mut b = client.listen(json!({})).await;
    a.next().await.unwrap();
    b.next().await.unwrap();
    let response = tokio::time::timeout(
        Duration::from_secs(10),
        client.call_tool("ping_back", json!({})),
    )
    .await
    .expect("a call runs while subscriptions are open");
    assert_eq!(response.result()["content"][0]["text"], "pong");
}

#[tokio::test]
async fn a_missing_filter_is_invalid_and_a_server_without_resources_offers_no_listen() {
    let client = client(server());
    let response = client.request("subscriptions/listen", json!({})).await;
    assert_eq!(response.error_code(), Some(-32602));
    let bare = Server::new("bare", "0.1.0")
        .tool(
            ToolDecl::builder("t")
                .description("A tool.")
                .handler(|_, _| async { Ok(CallToolResult::text("x")) }),
        )
        .build()
        .unwrap();
    let response = crate::schema::client(bare)
        .request("subscriptions/listen", json!({"notifications": {}}))
        .await;
    assert_eq!(response.error_code(), Some(-32601));
}
