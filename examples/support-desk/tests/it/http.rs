//! Over Streamable HTTP, as `--http ADDR` serves it.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::sync::Arc;

use http_body_util::BodyExt as _;
use serde_json::{Value, json};

use crate::support::{
    HttpDesk, Scratch, call_params, hit_ids, next_event, request, text_of, wait_for_receipt,
};

#[tokio::test]
async fn search_over_http_finds_the_seeded_tickets() {
    let scratch = Scratch::new();
    let desk = HttpDesk::spawn(&scratch.args(&[]));
    let result = desk
        .tool("search_tickets", json!({"query": "refund"}))
        .await;
    let ids = hit_ids(&result);
    assert!(ids.len() >= 2, "{result}");
    assert!(ids.contains(&"T-1001".to_owned()), "{result}");

    let read = desk
        .call("resources/read", json!({"uri": "ticket://T-1002"}))
        .await;
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "application/json");
    let ticket: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
    assert_eq!(ticket["title"], "Charged twice for the November invoice");
}

#[tokio::test]
async fn closing_needs_the_grant_and_the_close_reaches_a_listening_stream() {
    // Without the grant: refused, with a receipt, and the ticket stays open.
    let scratch = Scratch::new();
    let receipts = scratch.receipts();
    let receipts_arg = receipts.display().to_string();
    let ungranted = HttpDesk::spawn(&scratch.args(&["--receipts", &receipts_arg]));
    let refused = ungranted
        .tool(
            "close_ticket",
            json!({"ticket_id": "T-1002", "note": "Refunded."}),
        )
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text_of(&refused).contains("desk.write"), "{refused}");
    let receipt = wait_for_receipt(&receipts, |r| r["name"] == "close_ticket");
    assert_eq!(receipt["outcome"]["kind"], "refused", "{receipt}");
    drop(ungranted);

    // With it, on the same database: the close is announced to a subscriber.
    let desk = HttpDesk::spawn(&scratch.args(&["--allow", "desk.write"]));
    let listen = request(
        7,
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["ticket://T-1002"]}}),
    );
    let response = desk.open(&listen).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut stream = response.into_body();
    let ack = next_event(&mut stream).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    let closed = desk
        .tool(
            "close_ticket",
            json!({"ticket_id": "T-1002", "note": "Duplicate charge refunded (RF-21007)."}),
        )
        .await;
    assert_eq!(closed["structuredContent"]["status"], "closed", "{closed}");
    let updated = next_event(&mut stream).await;
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "ticket://T-1002");
    assert_eq!(
        updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );

    let again = desk
        .tool(
            "close_ticket",
            json!({"ticket_id": "T-1002", "note": "Twice."}),
        )
        .await;
    assert_eq!(again["isError"], true, "{again}");
    assert_eq!(text_of(&again), "ticket T-1002 is already closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_open_tickets_make_fifty_rows() {
    let scratch = Scratch::new();
    let desk = Arc::new(HttpDesk::spawn(&scratch.args(&[])));
    let calls: Vec<_> = (0..50)
        .map(|i| {
            let desk = desk.clone();
            tokio::spawn(async move {
                desk.tool(
                    "open_ticket",
                    json!({"title": format!("Load test ticket {i}"), "body": "Filed concurrently."}),
                )
                .await
            })
        })
        .collect();
    let mut ids = BTreeSet::new();
    for call in calls {
        let result = call.await.expect("the call task");
        assert_ne!(result["isError"], true, "{result}");
        assert!(!result.to_string().contains("locked"), "{result}");
        ids.insert(
            result["structuredContent"]["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert_eq!(ids.len(), 50, "fifty distinct tickets: {ids:?}");

    let db = rusqlite::Connection::open_with_flags(
        scratch.db(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let rows: i64 = db
        .query_row(
            "SELECT count(*) FROM tickets WHERE title LIKE 'Load test ticket %'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rows, 50);
    // The search index saw every one of them.
    let found = desk
        .tool(
            "search_tickets",
            json!({"query": "concurrently", "limit": 100}),
        )
        .await;
    assert_eq!(hit_ids(&found).len(), 50);
    assert!(!desk.stderr().contains("locked"), "{}", desk.stderr());
}

/// The README's curl line, run as written against a server on a free port.
#[tokio::test]
async fn the_readme_curl_line_finds_seeded_tickets() {
    let readme = include_str!("../../../../README.md");
    let start = readme
        .find("curl -s http://127.0.0.1:8080/mcp")
        .expect("the README has the support-desk curl line");
    let end = start + readme[start..].find("\n```").expect("the end of its block");
    let command = &readme[start..end];
    assert!(command.contains("search_tickets") && command.contains("refund"));

    if Command::new("curl").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "curl is needed to check the README's curl line"
        );
        eprintln!("curl not found: the README's curl line was not run");
        return;
    }
    let scratch = Scratch::new();
    let desk = HttpDesk::spawn(&scratch.args(&[]));
    let command = command.replace("127.0.0.1:8080", &desk.addr.to_string());
    let output = tokio::task::spawn_blocking(move || {
        Command::new("sh")
            .args(["-c", &command])
            .stderr(Stdio::inherit())
            .output()
            .expect("sh runs")
    })
    .await
    .unwrap();
    assert!(output.status.success(), "curl failed: {output:?}");
    let output = String::from_utf8(output.stdout).expect("UTF-8");
    let answer: Value = serde_json::from_str(&output)
        .unwrap_or_else(|e| panic!("one JSON answer ({e}): {output:?}"));
    let ids = hit_ids(&answer["result"]);
    assert!(ids.contains(&"T-1001".to_owned()), "{answer}");

    // The README shows the answer's structuredContent as it is.
    let shown = readme
        .split("whose `structuredContent` (sent as text too) is:\n\n```json\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the README shows the search result");
    let shown: Value = serde_json::from_str(shown).expect("the README's result is JSON");
    assert_eq!(answer["result"]["structuredContent"], shown);
}

#[tokio::test]
async fn over_the_rate_limit_a_call_is_503_with_retry_after_and_its_receipt_says_refused_by_layer()
{
    let scratch = Scratch::new();
    let receipts = scratch.receipts();
    let receipts_arg = receipts.display().to_string();
    let desk = HttpDesk::spawn(&scratch.args(&["--rate-limit", "1", "--receipts", &receipts_arg]));
    let search = request(
        1,
        "tools/call",
        call_params("search_tickets", json!({"query": "refund"})),
    );
    // One call a second: the second of two quick calls is refused (should a
    // call take over a second, the next window starts; try a few times).
    let mut refused = None;
    for _ in 0..10 {
        let response = desk.open(&search).await;
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("a readable body").to_bytes();
        if parts.status == 200 {
            continue;
        }
        refused = Some((parts, body));
        break;
    }
    let (parts, body) = refused.expect("a call over the rate limit is refused");
    let text = String::from_utf8_lossy(&body);
    assert_eq!(parts.status, 503, "{text}");
    assert!(
        parts.headers.contains_key("retry-after"),
        "{:?}",
        parts.headers
    );
    let body: Value = serde_json::from_slice(&body).expect("a JSON error");
    assert_eq!(body["id"], 1, "{body}");
    assert_eq!(body["error"]["code"], -31002, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("expected at most 1 calls per second from anonymous callers, found 2"),
        "{message}"
    );
    let receipt = wait_for_receipt(&receipts, |r| r["outcome"]["kind"] == "refused_by_layer");
    assert_eq!(receipt["name"], "search_tickets", "{receipt}");
    assert!(
        receipt["outcome"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("rate limit")),
        "{receipt}"
    );
    let served = wait_for_receipt(&receipts, |r| r["outcome"]["kind"] == "completed");
    assert_eq!(served["name"], "search_tickets", "{served}");
}
