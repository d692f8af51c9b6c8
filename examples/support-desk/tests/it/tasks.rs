//! The desk's rebuild_search_index as a task on SQLite in the desk's own
//! database: tasks outlive a SIGKILL of the server, and the one that was
//! running is reported interrupted, never lost or run again.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{PATIENCE, Scratch, StdioDesk};

/// A request declaring the tasks extension.
fn tasks_request(id: i64, method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn ask(desk: &mut StdioDesk, id: i64, method: &str, params: Value) -> Value {
    desk.send_line(&tasks_request(id, method, params));
    let response = desk.response(&json!(id));
    response
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{method} failed: {response}"))
}

fn rebuild(desk: &mut StdioDesk, id: i64, batch_size: u32, pause_ms: u32) -> String {
    let handle = ask(
        desk,
        id,
        "tools/call",
        json!({"name": "rebuild_search_index", "arguments": {"batch_size": batch_size, "pause_ms": pause_ms}}),
    );
    assert_eq!(handle["resultType"], "task", "{handle}");
    handle["taskId"].as_str().expect("a task id").to_owned()
}

/// Polls `tasks/get` until the task's status is `status`.
fn until(desk: &mut StdioDesk, next_id: &mut i64, task: &str, status: &str) -> Value {
    let deadline = Instant::now() + PATIENCE;
    loop {
        *next_id += 1;
        let got = ask(desk, *next_id, "tasks/get", json!({"taskId": task}));
        if got["status"] == status {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "task {task} never became {status}: {got}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn tasks_survive_a_sigkill_and_the_running_one_is_reported_interrupted() {
    let scratch = Scratch::new();
    let mut next_id = 100;
    let (finished, running) = {
        let mut desk = StdioDesk::spawn(&scratch.args(&[]));
        let finished = rebuild(&mut desk, 1, 100, 0);
        let done = until(&mut desk, &mut next_id, &finished, "completed");
        assert!(
            done["result"]["structuredContent"]["tickets"]
                .as_u64()
                .unwrap()
                >= 1,
            "{done}"
        );
        // One ticket a batch, ten seconds apart: still running when killed.
        let running = rebuild(&mut desk, 2, 1, 10_000);
        until(&mut desk, &mut next_id, &running, "working");
        (finished, running)
        // Dropping the desk kills its process with SIGKILL.
    };

    let mut desk = StdioDesk::spawn(&scratch.args(&[]));
    let kept = until(&mut desk, &mut next_id, &finished, "completed");
    let report = &kept["result"]["structuredContent"];
    assert!(
        report["tickets"].as_u64().unwrap() >= 1,
        "the result survived: {kept}"
    );
    assert_eq!(report["batches"], 1);
    let lost = until(&mut desk, &mut next_id, &running, "failed");
    assert!(lost.get("result").is_none(), "{lost}");
    let message = lost["error"]["message"].as_str().expect("an error message");
    assert!(message.contains("interrupted"), "{lost}");
    assert_eq!(lost["error"]["data"]["interrupted"], true);
    // It stays failed: it is not run again.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        until(&mut desk, &mut next_id, &running, "failed")["status"],
        "failed"
    );
    // And the restarted desk runs new tasks.
    let again = rebuild(&mut desk, 3, 100, 0);
    until(&mut desk, &mut next_id, &again, "completed");
}
