//! The behavioural contract of a [`TaskStore`], as one function every store's
//! tests call (feature `testing`).

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::store::{
    StoredError, TaskChange, TaskId, TaskOutcome, TaskOwner, TaskRecord, TaskStatus, TaskStore,
    TaskStoreError,
};

fn record(owner: &TaskOwner, ttl: Option<Duration>) -> TaskRecord {
    TaskRecord::new(
        TaskId::random(),
        owner.clone(),
        "contract_tool",
        ttl,
        Duration::from_millis(250),
    )
}

fn requests(keys: &[&str]) -> Map<String, Value> {
    keys.iter()
        .map(|k| {
            (
                (*k).to_owned(),
                json!({"method": "elicitation/create", "params": {"message": k}}),
            )
        })
        .collect()
}

/// Runs the [`TaskStore`] contract (see the store module's docs) against
/// `store` and panics, saying which rule broke and what it found, at the
/// first violation.
///
/// It creates tasks under random owners, so it may run against a store that
/// holds other tasks (a shared Redis, a used database); each run takes
/// about half a second (one expiry waits for a 200 ms time-to-live).
/// Interruption recovery is left out: what a store recovers depends on
/// where its runners live, and each store tests it on its own.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let store = typed_mcp::tasks::MemoryTaskStore::default();
/// typed_mcp::tasks::check_store(&store).await;
/// # }
/// ```
pub async fn check_store<S: TaskStore + ?Sized>(store: &S) {
    let alice = TaskOwner::principal(&format!("alice-{}", TaskId::random()));
    let bob = TaskOwner::principal(&format!("bob-{}", TaskId::random()));
    let hour = Some(Duration::from_secs(3600));

    // create → get: durable at once, every field kept.
    let created = record(&alice, hour);
    let id = created.id.clone();
    store.create(created.clone()).await.expect("create");
    let got = store.get(&alice, &id).await.expect("get");
    assert_eq!(
        got.as_ref(),
        Some(&created),
        "get right after create must return the record as created"
    );

    // A second create with the same id is refused, and changes nothing.
    let mut again = created.clone();
    again.tool = String::from("other_tool");
    match store.create(again).await {
        Err(TaskStoreError::Duplicate(dup)) => assert_eq!(dup, id, "duplicate names the id"),
        other => panic!("a create with an existing id must be Duplicate, found {other:?}"),
    }
    assert_eq!(
        store.get(&alice, &id).await.expect("get").map(|r| r.tool),
        Some(String::from("contract_tool")),
        "a refused duplicate must not overwrite the task"
    );

    // Principal isolation: another owner sees nothing and changes nothing.
    assert_eq!(
        store.get(&bob, &id).await.expect("get"),
        None,
        "another owner's get must be None"
    );
    assert_eq!(
        store.cancel(&bob, &id).await.expect("cancel"),
        None,
        "another owner's cancel must be None"
    );
    assert!(
        store.list(&bob).await.expect("list").is_empty(),
        "another owner's list must not show the task"
    );
    assert_eq!(
        store.get(&alice, &id).await.expect("get").map(|r| r.status),
        Some(TaskStatus::Working),
        "another owner's cancel must leave the task working"
    );
    assert_eq!(
        store.get(&TaskOwner::anonymous(), &id).await.expect("get"),
        None,
        "an anonymous caller must not see a principal's task"
    );

    // Unknown ids.
    let unknown = TaskId::random();
    assert_eq!(store.get(&alice, &unknown).await.expect("get"), None);
    assert_eq!(store.cancel(&alice, &unknown).await.expect("cancel"), None);
    assert_eq!(
        store
            .update(&unknown, TaskChange::Resumed)
            .await
            .expect("update"),
        None,
        "update of an unknown id must be None"
    );

    // Input: two requests, answered one at a time; unknown keys ignored.
    let after = store
        .update(
            &id,
            TaskChange::InputRequired {
                requests: requests(&["first", "second"]),
                message: Some(String::from("waiting")),
            },
        )
        .await
        .expect("update")
        .expect("the task exists");
    assert_eq!(after.status, TaskStatus::InputRequired);
    let mut answer = Map::new();
    answer.insert(String::from("first"), json!({"action": "accept"}));
    answer.insert(String::from("never-asked"), json!({"action": "accept"}));
    assert_eq!(
        store
            .respond(&bob, &id, answer.clone())
            .await
            .expect("respond"),
        None,
        "another owner's answers must be refused"
    );
    let after = store
        .respond(&alice, &id, answer)
        .await
        .expect("respond")
        .expect("the task exists");
    assert_eq!(
        after.status,
        TaskStatus::InputRequired,
        "a partial answer keeps the task input_required"
    );
    let outstanding: Vec<&String> = after
        .input_requests
        .as_ref()
        .expect("still outstanding")
        .keys()
        .collect();
    assert_eq!(
        outstanding,
        vec!["second"],
        "only the unanswered key stays outstanding"
    );
    assert!(
        !after.input_responses.contains_key("never-asked"),
        "an answer to a key never asked must be ignored"
    );
    let mut answer = Map::new();
    answer.insert(String::from("second"), json!({"action": "decline"}));
    let after = store
        .respond(&alice, &id, answer)
        .await
        .expect("respond")
        .expect("the task exists");
    assert_eq!(
        after.status,
        TaskStatus::Working,
        "the last answer makes the task working again"
    );
    assert_eq!(after.input_requests, None);
    let keys: Vec<&String> = after.input_responses.keys().collect();
    assert_eq!(
        keys,
        vec!["first", "second"],
        "both answers wait for the runner"
    );
    let after = store
        .update(&id, TaskChange::Resumed)
        .await
        .expect("update")
        .expect("the task exists");
    assert!(
        after.input_responses.is_empty(),
        "Resumed hands the answers over"
    );

    // complete: the result is kept; terminal is sticky.
    let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
    let after = store
        .update(
            &id,
            TaskChange::Finished {
                outcome: TaskOutcome::Result(result.clone()),
                message: None,
            },
        )
        .await
        .expect("update")
        .expect("the task exists");
    assert_eq!(after.status, TaskStatus::Completed);
    assert_eq!(after.outcome, Some(TaskOutcome::Result(result.clone())));
    assert!(after.updated_at_ms >= created.updated_at_ms);
    let after = store
        .cancel(&alice, &id)
        .await
        .expect("cancel")
        .expect("a finished task is still there");
    assert_eq!(
        after.status,
        TaskStatus::Completed,
        "cancelling a completed task must leave it completed"
    );
    let after = store
        .update(&id, TaskChange::Working { message: None })
        .await
        .expect("update")
        .expect("the task exists");
    assert_eq!(
        after.status,
        TaskStatus::Completed,
        "no change leaves a terminal status"
    );

    // cancel a working task; a later finish is ignored.
    let second = record(&alice, hour);
    let second_id = second.id.clone();
    store.create(second).await.expect("create");
    let after = store
        .cancel(&alice, &second_id)
        .await
        .expect("cancel")
        .expect("the task exists");
    assert_eq!(after.status, TaskStatus::Cancelled);
    let after = store
        .update(
            &second_id,
            TaskChange::Finished {
                outcome: TaskOutcome::Error(StoredError {
                    code: -32603,
                    message: String::from("late"),
                    data: None,
                }),
                message: None,
            },
        )
        .await
        .expect("update")
        .expect("the task exists");
    assert_eq!(
        after.status,
        TaskStatus::Cancelled,
        "a finish after a cancel must leave the task cancelled"
    );
    assert_eq!(after.outcome, None);

    // A failed task keeps its error.
    let third = record(&alice, None);
    let third_id = third.id.clone();
    store.create(third).await.expect("create");
    let error = StoredError {
        code: -32603,
        message: String::from("boom"),
        data: Some(json!({"detail": 1})),
    };
    let after = store
        .update(
            &third_id,
            TaskChange::Finished {
                outcome: TaskOutcome::Error(error.clone()),
                message: Some(String::from("it failed")),
            },
        )
        .await
        .expect("update")
        .expect("the task exists");
    assert_eq!(after.status, TaskStatus::Failed);
    assert_eq!(after.outcome, Some(TaskOutcome::Error(error)));
    assert_eq!(after.status_message.as_deref(), Some("it failed"));
    assert_eq!(
        after.expires_at_ms, None,
        "a task without a ttl never expires"
    );

    // list: the owner's tasks, oldest first.
    let listed: Vec<TaskId> = store
        .list(&alice)
        .await
        .expect("list")
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(
        listed.len(),
        3,
        "list shows the owner's three tasks, found {listed:?}"
    );
    assert_eq!(listed[0], id, "list is oldest first");
    for task in [&id, &second_id, &third_id] {
        assert!(listed.contains(task), "list must show {task}");
    }

    // Expiry: gone for every read once its ttl passed, then purged.
    let brief = record(&bob, Some(Duration::from_millis(200)));
    let brief_id = brief.id.clone();
    store.create(brief).await.expect("create");
    assert!(
        store.get(&bob, &brief_id).await.expect("get").is_some(),
        "a task is there before its ttl passes"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        store.get(&bob, &brief_id).await.expect("get"),
        None,
        "an expired task must be gone"
    );
    assert!(
        store.list(&bob).await.expect("list").is_empty(),
        "an expired task must not be listed"
    );
    assert_eq!(
        store.cancel(&bob, &brief_id).await.expect("cancel"),
        None,
        "an expired task cannot be cancelled"
    );
    let purged = store.purge_expired().await.expect("purge");
    assert!(
        purged >= 1,
        "purge_expired must count the expired task, found {purged}"
    );
    assert_eq!(store.get(&bob, &brief_id).await.expect("get"), None);
    assert!(
        store.get(&alice, &id).await.expect("get").is_some(),
        "purge must keep live tasks"
    );
}
