//! Against typed-mcp's own server, over every transport and in both eras.

use std::sync::Arc;
use std::time::Duration;

use futures_util::TryStreamExt as _;
use serde_json::{Map, Value, json};
use typed_mcp::wire::{ContentBlock, CreateMessageResult, ElicitAction, ElicitResult, Role, Root};
use typed_mcp_client::{CallError, ClientError, Era, Options, Responder, Spoken};

use crate::support::{EVERY_WAY, Sum, Via, Waiter, connect, connect_to, kept, server_with};

fn responder() -> Responder {
    Responder::new()
        .on_elicit(|params| async move {
            let asked = serde_json::to_value(&params).unwrap_or_default();
            if asked["message"] != "What is your name?" {
                return Err(format!("unexpected elicitation {asked}"));
            }
            let mut content = Map::new();
            content.insert("name".into(), json!("Ada"));
            Ok(ElicitResult::new(ElicitAction::Accept).with_content(content))
        })
        .on_sample(|params| async move {
            let asked = serde_json::to_value(&params.messages).unwrap_or_default();
            assert_eq!(asked[0]["content"]["text"], "Capital of France?");
            Ok(CreateMessageResult::new(
                Role::Assistant,
                serde_json::to_value(ContentBlock::text("Paris")).unwrap_or_default(),
                "test-model",
            ))
        })
        .roots(vec![Root::new("file:///a"), Root::new("file:///b")])
}

#[tokio::test]
async fn every_way_settles_the_era_lists_every_page_and_calls_typed() {
    for (via, era) in EVERY_WAY {
        let client = connect(via, Options::new().era(era)).await;
        match (era, client.spoken()) {
            (
                Era::Auto,
                Spoken::Modern {
                    discovered: Some(d),
                },
            ) => {
                assert_eq!(
                    d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "client-demo",
                    "{via:?}: {d}"
                );
            }
            (Era::Legacy, Spoken::Legacy(session)) => assert_eq!(session.version, "2025-11-25"),
            (era, spoken) => panic!("{via:?} {era:?}: spoke {spoken:?}"),
        }
        // Seven tools at two a page: four pages, read as one stream.
        let names: Vec<String> = client
            .list("tools/list", "tools")
            .map_ok(|tool| tool["name"].as_str().unwrap_or_default().to_owned())
            .try_collect()
            .await
            .unwrap_or_else(|e| panic!("{via:?} {era:?}: {e}"));
        assert_eq!(
            names,
            [
                "add",
                "greet",
                "capital",
                "count_roots",
                "count",
                "big",
                "wait_for_cancel"
            ],
            "{via:?} {era:?}"
        );
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools.len(), 7);

        let sum: Sum = client.call("add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(sum, Sum { sum: 5 }, "{via:?} {era:?}");

        // The server's argument report, every bad field, as a typed error.
        match client
            .call::<Sum>("add", json!({"a": "two", "b": 1.5}))
            .await
        {
            Err(CallError::Tool { tool, message, .. }) => {
                assert_eq!(tool, "add");
                assert!(
                    message.contains("a: expected an integer"),
                    "{via:?} {era:?}: {message}"
                );
                assert!(message.contains("b:"), "{via:?} {era:?}: {message}");
            }
            other => panic!("{via:?} {era:?}: expected the tool's error, got {other:?}"),
        }
        // A result that is not the type asked for.
        assert!(matches!(
            client
                .call::<Vec<String>>("add", json!({"a": 1, "b": 1}))
                .await,
            Err(CallError::Decode { .. })
        ));

        let read = client.read_resource("file:///project").await.unwrap();
        assert_eq!(
            read["contents"][0]["text"], "the project",
            "{via:?} {era:?}"
        );
        let prompt = client
            .get_prompt("review", json!({"code": "fn main(){}"}))
            .await
            .unwrap();
        assert_eq!(
            prompt["messages"][0]["content"]["text"], "Review this code: fn main(){}",
            "{via:?} {era:?}"
        );
        assert_eq!(client.list_prompts().await.unwrap()[0].name, "review");
        assert_eq!(
            client.list_resources().await.unwrap()[0].uri,
            "file:///project"
        );
        let completion = client
            .complete(
                json!({"type": "ref/prompt", "name": "review"}),
                "language",
                "ru",
            )
            .await
            .unwrap_or_else(|e| panic!("{via:?} {era:?}: {e}"));
        assert_eq!(
            completion["values"],
            json!(["rust", "ruby"]),
            "{via:?} {era:?}"
        );

        let error = client
            .request("no/such/method", Map::new())
            .await
            .unwrap_err();
        assert_eq!(error.rpc_code(), Some(-32601), "{via:?} {era:?}: {error}");
        // Still serving after the error.
        let sum: Sum = client.call("add", json!({"a": 1, "b": 1})).await.unwrap();
        assert_eq!(sum.sum, 2);
        client.close().await.unwrap();
    }
}

#[tokio::test]
async fn every_input_kind_is_answered_every_way() {
    for (via, era) in EVERY_WAY {
        let client = connect(via, Options::new().era(era).responder(responder())).await;
        let greeting: String = client
            .call("greet", json!({}))
            .await
            .unwrap_or_else(|e| panic!("{via:?} {era:?}: {e}"));
        assert_eq!(greeting, "Hello, Ada!", "{via:?} {era:?}");
        let capital: String = client
            .call("capital", json!({}))
            .await
            .unwrap_or_else(|e| panic!("{via:?} {era:?}: {e}"));
        assert_eq!(capital, "the model said Paris", "{via:?} {era:?}");
        let roots: String = client
            .call("count_roots", json!({}))
            .await
            .unwrap_or_else(|e| panic!("{via:?} {era:?}: {e}"));
        assert_eq!(roots, "2 roots: file:///a, file:///b", "{via:?} {era:?}");
        client.close().await.unwrap();
    }
}

#[tokio::test]
async fn a_client_that_answers_no_input_gets_an_error_and_goes_on() {
    for (via, era) in EVERY_WAY {
        let client = connect(via, Options::new().era(era)).await;
        let result = client.call::<String>("greet", json!({})).await;
        assert!(result.is_err(), "{via:?} {era:?}: {result:?}");
        let sum: Sum = client.call("add", json!({"a": 4, "b": 4})).await.unwrap();
        assert_eq!(sum.sum, 8, "{via:?} {era:?}");
    }
}

#[tokio::test]
async fn mrtr_retries_carry_the_answers_and_the_state_on_the_wire() {
    // The in-process wire shows what the client sent: the retry of `capital`
    // is a new request carrying the sampling answer and the echoed state.
    let (seen, sink) = kept();
    let client = connect(
        Via::InProcess,
        Options::new().responder(responder()).on_notification(sink),
    )
    .await;
    let result = client
        .request_resolved("tools/call", {
            let mut params = Map::new();
            params.insert("name".into(), json!("capital"));
            params.insert("arguments".into(), json!({}));
            params
        })
        .await
        .unwrap();
    assert_eq!(
        result["structuredContent"]["result"],
        "the model said Paris"
    );
    // Without resolving, the interim result is returned as it is.
    let mut params = Map::new();
    params.insert("name".into(), json!("capital"));
    let interim = client.request("tools/call", params).await.unwrap();
    assert_eq!(interim["resultType"], "input_required");
    // Sealed by the server: opaque to the client, which only echoes it.
    assert!(
        interim["requestState"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{interim}"
    );
    assert!(interim["inputRequests"]["capital"]["method"] == "sampling/createMessage");
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn progress_and_log_messages_reach_the_callback_every_way() {
    for (via, era) in EVERY_WAY {
        let (seen, sink) = kept();
        let options = Options::new()
            .era(era)
            .progress(true)
            .log_level("info")
            .on_notification(sink);
        let client = connect(via, options).await;
        let said: String = client.call("count", json!({"n": 3})).await.unwrap();
        assert_eq!(said, "counted to 3");
        let seen = seen.lock().unwrap().clone();
        let progress: Vec<&Value> = seen
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .map(|m| &m["params"]["progress"])
            .collect();
        assert_eq!(
            progress,
            [&json!(1.0), &json!(2.0), &json!(3.0)],
            "{via:?} {era:?}: {seen:#?}"
        );
        assert!(
            seen.iter()
                .any(|m| m["method"] == "notifications/message"
                    && m["params"]["data"] == "counted to 3"),
            "{via:?} {era:?}: {seen:#?}"
        );
    }
}

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_server_every_way() {
    for (via, era) in EVERY_WAY {
        let waiter = Arc::new(Waiter::default());
        let client = connect_to(
            server_with(Arc::clone(&waiter)),
            via,
            Options::new().era(era),
        )
        .await;
        let call = client.call_tool("wait_for_cancel", json!({}));
        // The caller gives up: its future is dropped.
        let gave_up = tokio::time::timeout(Duration::from_millis(300), call).await;
        assert!(
            gave_up.is_err(),
            "{via:?} {era:?}: the call ended by itself"
        );
        assert!(
            Waiter::saw(&waiter.started).await,
            "{via:?} {era:?}: never started"
        );
        assert!(
            Waiter::saw(&waiter.cancelled).await,
            "{via:?} {era:?}: not cancelled on the server"
        );
        // And the connection goes on.
        let sum: Sum = client.call("add", json!({"a": 1, "b": 2})).await.unwrap();
        assert_eq!(sum.sum, 3, "{via:?} {era:?}");
    }
}

#[tokio::test]
async fn a_request_past_its_timeout_fails_and_is_cancelled() {
    for (via, era) in EVERY_WAY {
        let waiter = Arc::new(Waiter::default());
        let server = server_with(Arc::clone(&waiter));
        // Not through `connect_to`, which sets a long timeout.
        let options = Options::new().era(era).timeout(Duration::from_millis(400));
        let client = match via {
            Via::InProcess => typed_mcp_client::Client::in_process(server, options)
                .await
                .unwrap(),
            Via::Stdio => {
                let (r, w) = crate::support::stdio_pair(server);
                typed_mcp_client::Client::stdio_pair(r, w, options)
                    .await
                    .unwrap()
            }
            Via::Http => {
                let addr = crate::support::serve_http(server).await;
                typed_mcp_client::Client::http(&format!("http://{addr}/mcp"), options)
                    .await
                    .unwrap()
            }
        };
        match client.call_tool("wait_for_cancel", json!({})).await {
            Err(ClientError::Timeout { method, .. }) => assert_eq!(method, "tools/call"),
            other => panic!("{via:?} {era:?}: expected a timeout, got {other:?}"),
        }
        assert!(
            Waiter::saw(&waiter.cancelled).await,
            "{via:?} {era:?}: not cancelled on the server"
        );
    }
}

#[tokio::test]
async fn concurrent_calls_on_one_client_each_get_their_answer() {
    for (via, era) in EVERY_WAY {
        let client = connect(via, Options::new().era(era)).await;
        let calls = (0..8).map(|i| {
            let client = client.clone();
            async move { client.call::<Sum>("add", json!({"a": i, "b": 100})).await }
        });
        let sums = futures_util::future::join_all(calls).await;
        for (i, sum) in sums.into_iter().enumerate() {
            assert_eq!(sum.unwrap().sum, i as i64 + 100, "{via:?} {era:?}");
        }
    }
}

#[tokio::test]
async fn a_subscription_is_a_stream_and_dropping_it_ends_it() {
    for via in [Via::InProcess, Via::Stdio, Via::Http] {
        let server = crate::support::server();
        let updates = server.resource_updates().clone();
        let client = connect_to(server, via, Options::new()).await;
        let mut subscription = client
            .listen(json!({"resourceSubscriptions": ["file:///project"]}))
            .await
            .unwrap();
        let ack = subscription.next().await.unwrap().unwrap();
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{via:?}"
        );
        updates.publish("file:///project/src/main.rs");
        let update = tokio::time::timeout(Duration::from_secs(5), subscription.next())
            .await
            .unwrap_or_else(|_| panic!("{via:?}: no update"))
            .unwrap()
            .unwrap();
        assert_eq!(
            update["method"], "notifications/resources/updated",
            "{via:?}"
        );
        assert_eq!(
            update["params"]["uri"], "file:///project/src/main.rs",
            "{via:?}"
        );
        drop(subscription);
        let sum: Sum = client.call("add", json!({"a": 1, "b": 2})).await.unwrap();
        assert_eq!(sum.sum, 3);
    }
}

#[tokio::test]
async fn a_message_over_the_limit_is_refused_and_the_client_goes_on() {
    // In process, each request has its own stream: the refused one ends, the
    // connection stays usable.
    let client = connect(Via::InProcess, Options::new().max_message_bytes(64 * 1024)).await;
    match client.call_tool("big", json!({"size": 200_000})).await {
        Err(ClientError::Limit { what, .. }) => {
            assert!(what.contains("at most 65536"), "{what}");
        }
        other => panic!("expected the limit, got {other:?}"),
    }
    let sum: Sum = client.call("add", json!({"a": 1, "b": 2})).await.unwrap();
    assert_eq!(sum.sum, 3);
    // Over HTTP too: the body is not read past the limit.
    let client = connect(Via::Http, Options::new().max_message_bytes(64 * 1024)).await;
    assert!(matches!(
        client.call_tool("big", json!({"size": 200_000})).await,
        Err(ClientError::Limit { .. })
    ));
    let sum: Sum = client.call("add", json!({"a": 2, "b": 2})).await.unwrap();
    assert_eq!(sum.sum, 4);
}

#[tokio::test]
async fn a_bearer_token_is_never_shown_and_the_typed_mcp_server_still_answers() {
    let addr = crate::support::serve_http(crate::support::server()).await;
    let options = Options::new()
        .header("X-Trace", "t-1")
        .bearer("sk-secret-token");
    assert!(!format!("{options:?}").contains("sk-secret-token"));
    let client = typed_mcp_client::Client::http(&format!("http://{addr}/mcp"), options)
        .await
        .unwrap();
    assert!(!format!("{client:?}").contains("sk-secret-token"));
    let sum: Sum = client.call("add", json!({"a": 1, "b": 2})).await.unwrap();
    assert_eq!(sum.sum, 3);
}
