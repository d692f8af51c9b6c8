//! The SQLite store keeps the TaskStore contract, and its tasks outlive the
//! connection (the process) that wrote them.

use std::time::Duration;

use serde_json::json;
use typed_mcp::tasks::{
    TaskChange, TaskId, TaskOutcome, TaskOwner, TaskRecord, TaskStatus, TaskStore, check_store,
};
use typed_mcp_sqlite::SqliteTaskStore;

#[tokio::test]
async fn keeps_the_store_contract() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteTaskStore::open(dir.path().join("tasks.db")).unwrap();
    check_store(&store).await;
}

#[tokio::test]
async fn reopened_tasks_keep_results_and_unfinished_ones_are_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.db");
    let owner = TaskOwner::principal("alice");
    let task = || {
        TaskRecord::new(
            TaskId::random(),
            owner.clone(),
            "t",
            None,
            Duration::from_millis(100),
        )
    };
    let (done, running, waiting) = (task(), task(), task());
    {
        let store = SqliteTaskStore::open(&path).unwrap();
        for t in [&done, &running, &waiting] {
            store.create(t.clone()).await.unwrap();
        }
        let result = json!({"content": [{"type": "text", "text": "kept"}]});
        store
            .update(
                &done.id,
                TaskChange::Finished {
                    outcome: TaskOutcome::Result(result),
                    message: None,
                },
            )
            .await
            .unwrap();
        store
            .update(
                &waiting.id,
                TaskChange::InputRequired {
                    requests: Default::default(),
                    message: None,
                },
            )
            .await
            .unwrap();
    }
    let store = SqliteTaskStore::open(&path).unwrap();
    assert_eq!(
        store.recover_interrupted().await.unwrap(),
        2,
        "the running and the waiting task"
    );
    let kept = store
        .get(&owner, &done.id)
        .await
        .unwrap()
        .expect("the finished task survives");
    assert_eq!(kept.status, TaskStatus::Completed);
    assert_eq!(
        kept.outcome,
        Some(TaskOutcome::Result(
            json!({"content": [{"type": "text", "text": "kept"}]})
        ))
    );
    for id in [&running.id, &waiting.id] {
        let lost = store
            .get(&owner, id)
            .await
            .unwrap()
            .expect("an interrupted task is kept");
        assert_eq!(lost.status, TaskStatus::Failed);
        match lost.outcome {
            Some(TaskOutcome::Error(e)) => {
                assert!(e.message.contains("interrupted"), "{}", e.message)
            }
            other => panic!("expected the interruption error, found {other:?}"),
        }
    }
    assert_eq!(
        store.recover_interrupted().await.unwrap(),
        0,
        "recovery runs once per task"
    );
}

#[test]
fn an_unopenable_path_says_which() {
    let error = SqliteTaskStore::open("/nonexistent-dir/tasks.db").unwrap_err();
    assert!(
        error.to_string().contains("/nonexistent-dir/tasks.db"),
        "{error}"
    );
}
