//! The task branch of a `tools/call` (the Tasks extension; see
//! [`tasks`](crate::tasks)).
//!
//! A call of a task-capable tool whose request declares the extension runs
//! its handler in rounds, each a spawned job holding a handler slot, inside
//! the call's request span (so its trace continues the creating request's):
//!
//! 1. The first round starts at once. With an inline window, a round that
//!    ends within it is answered directly, as a plain call would be.
//! 2. Otherwise the task is created in the store (durably: the
//!    `CreateTaskResult` is sent only after the store said yes) and the
//!    creating request is answered with the handle.
//! 3. A round that asks for input parks the task `input_required` with its
//!    requests; once the client's `tasks/update` answered all of them, the
//!    next round runs with the answers (and the state the handler sealed),
//!    holding a new slot.
//! 4. A round that ends stores the redacted result (`completed`, an
//!    `isError` result included) or JSON-RPC error (`failed`); a
//!    `tasks/cancel` (here, or through another replica sharing the store:
//!    seen at once with an update bus, else at the poll interval) or the task's expiry fires the handler's
//!    cancellation, gives it up to a poll interval (a second at most) to
//!    end by itself, and drops it.
//!    The call's receipt is left then, once, naming the task.
//!
//! The grants were checked when the call was accepted, like every call's;
//! each round runs under the declaration's deadline.

use std::sync::Arc;

use futures_util::future::{Either, select};
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;
use tracing::Instrument as _;
use typed_mcp_core::wire::meta_keys;
use typed_mcp_core::{RequestId, RequestMeta, RpcError, Target, encode};

use super::{CallRecord, Slot};
use crate::cancel::CallCancel;
use crate::context::ToolContext;
use crate::receipt::Outcome;
use crate::server::Server;
use crate::tasks::{
    EXTENSION_ID, StoredError, TaskChange, TaskId, TaskOutcome, TaskOwner, TaskRecord, TaskRuntime,
    TaskStatus, TaskSupport, owner_of, task_fields,
};
use crate::transport::Reply;

/// The longest a cancelled task's handler is given to end by itself after
/// its cancellation fired (one poll interval, at most this), before it is
/// dropped.
const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// What one round of a task's handler produced.
type RoundEnd = (Result<Vec<u8>, RpcError>, Option<Outcome>);

/// How a round ended, read from its encoded answer (already redacted).
enum Ended {
    /// `input_required`: the requests by key, and the sealed state.
    Input {
        requests: Map<String, Value>,
        state: Option<String>,
    },
    Result(Value),
    Error(StoredError),
}

impl Server {
    /// How this call may run as a task, when it runs as one: a task-capable
    /// tool, called with the extension declared in the request's `_meta`.
    pub(super) fn task_support_for(
        &self,
        target: &Target,
        meta: &RequestMeta,
    ) -> Option<TaskSupport> {
        let Target::Tool { index, .. } = target else {
            return None;
        };
        let support = self.inner.tools[*index].task?;
        self.inner.tasks.as_ref()?;
        // The extension is not defined for the dated revisions, whose
        // clients declaring it are served as if they had not (SEP-2663's
        // compatibility table); their own experimental tasks (2025-11-25)
        // are another, incompatible protocol, not served here.
        if typed_mcp_core::legacy::is_legacy_version(&meta.protocol_version) {
            return None;
        }
        meta.client_capabilities
            .has_extension(EXTENSION_ID)
            .then_some(support)
    }

    /// Runs a call as a task (see the module docs); the reply is the
    /// creating request's answer. `ctx` carries the task's own cancellation,
    /// `request` the creating request's.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn call_as_task(
        &self,
        id: &RequestId,
        target: Target,
        request_state: Option<String>,
        ctx: ToolContext,
        task_cancel: CallCancel,
        request_cancel: CallCancel,
        mut record: CallRecord,
        slot: Slot,
        support: TaskSupport,
    ) -> Reply {
        let runtime = self
            .inner
            .tasks
            .clone()
            .expect("a task-capable call runs on a server with a task runtime");
        let Target::Tool { index, arguments } = target else {
            unreachable!("only tools/call runs as a task")
        };
        // A task keeps its arguments for every round: as the map, parsed once.
        let arguments = arguments.into_map();
        record.grant_to(&ctx);
        // Arguments the handler would refuse get, at once, the report a
        // plain call gets, and no task is created: the extension leaves it
        // to the server whether a call becomes a task (SEP-2663: "the server
        // is the sole decider", and a plain CallToolResult stays a valid
        // answer to a client that declared it), and a task that could only
        // end in that report would make the client poll for it.
        let refused = self.inner.tools[index]
            .arguments_valid
            .as_ref()
            .is_some_and(|valid| !valid(&arguments));
        let mut round = self.spawn_round(id, index, arguments.clone(), request_state, &ctx, slot);

        // How long the first round runs inline: until it ends (refused
        // arguments: the handler answers at once), or for the tool's window.
        let inline = if refused {
            Some(None)
        } else {
            support.window().map(Some)
        };
        if let Some(limit) = inline {
            let ended = async {
                match limit {
                    Some(window) => tokio::time::timeout(window, &mut round).await.ok(),
                    None => Some((&mut round).await),
                }
            };
            let inline_end =
                match select(Box::pin(ended), Box::pin(request_cancel.cancelled())).await {
                    Either::Left((joined, _)) => Ok(joined),
                    Either::Right(((), _)) => Err(()),
                };
            match inline_end {
                Ok(Some(joined)) => {
                    let (answer, outcome) = joined.unwrap_or_else(|_| round_stopped());
                    return finish_inline(id, answer, outcome, record);
                }
                Ok(None) => {}
                Err(()) => {
                    // The client gave up on the request before a task existed.
                    task_cancel.cancel();
                    round.abort();
                    record.finish(Outcome::Cancelled);
                    return Reply::error(Some(id), &RpcError::internal("the call was cancelled"));
                }
            }
        }

        let owner = owner_of(ctx.principal());
        let name = self.catalog().tools()[index].tool.name.clone();
        let task = TaskRecord::new(
            TaskId::random(),
            owner.clone(),
            name,
            runtime.ttl,
            runtime.poll_interval,
        );
        runtime.ready().await;
        if let Err(error) = runtime.store.create(task.clone()).await {
            task_cancel.cancel();
            round.abort();
            tracing::error!(%error, "a task could not be created");
            let error = RpcError::internal(format!("the call could not run as a task: {error}"));
            record.finish(Outcome::Error { code: error.code });
            return Reply::error(Some(id), &error);
        }
        runtime.created().await;
        record.run_as_task(task.id.as_str(), &task_cancel);
        let span = record.span().clone();
        let driver = Driver {
            server: self.clone(),
            runtime: runtime.clone(),
            id: id.clone(),
            index,
            arguments,
            task: task.id.clone(),
            owner,
            running: runtime.register(&task.id, task_cancel.token()),
        };
        tokio::spawn(driver.drive(ctx, round, record).instrument(span));

        let mut handle = task_fields(&task, false);
        handle.insert("resultType".into(), json!("task"));
        // The 2026-07-28 schema types every tools/call result as a
        // CallToolResult, whose `content` is required, and the conformance
        // suite checks each response against it: an empty `content` keeps
        // the handle valid there, and the extension forbids only `result`,
        // `error` and `inputRequests` on it.
        handle.insert("content".into(), json!([]));
        handle.insert(
            "_meta".into(),
            json!({ meta_keys::SERVER_INFO: &**self.catalog().server_info() }),
        );
        Reply::new(encode::result(id, &Value::Object(handle)), 200)
    }

    /// Spawns one round of a task's handler; it takes `slot`, or waits for
    /// one of the server's.
    fn spawn_round(
        &self,
        id: &RequestId,
        index: usize,
        arguments: Map<String, Value>,
        request_state: Option<String>,
        ctx: &ToolContext,
        slot: Slot,
    ) -> JoinHandle<RoundEnd> {
        let (server, id, ctx) = (self.clone(), id.clone(), ctx.clone());
        tokio::spawn(
            async move {
                let slot = match slot {
                    Some(slot) => Some(slot),
                    None => Some(server.acquire_slot().await),
                };
                let mut outcome = None;
                let target = Target::Tool {
                    index,
                    arguments: arguments.into(),
                };
                let answer = server
                    .invoke_target(&id, target, request_state, ctx, slot, None, &mut outcome)
                    .await;
                (answer, outcome)
            }
            .in_current_span(),
        )
    }
}

/// A round that did not return (its job panicked outside the handler's own
/// catch, or was aborted).
fn round_stopped() -> RoundEnd {
    (
        Err(RpcError::internal(
            "the task's handler stopped unexpectedly",
        )),
        Some(Outcome::Panicked),
    )
}

/// The direct answer of a call that ended within its inline window.
fn finish_inline(
    id: &RequestId,
    answer: Result<Vec<u8>, RpcError>,
    outcome: Option<Outcome>,
    record: CallRecord,
) -> Reply {
    match answer {
        Ok(body) => {
            record.finish(outcome.unwrap_or(Outcome::Completed));
            Reply::new(body, 200)
        }
        Err(error) => {
            record.finish(outcome.unwrap_or(Outcome::Error { code: error.code }));
            Reply::error(Some(id), &error)
        }
    }
}

/// Runs a created task to its end.
struct Driver {
    server: Server,
    runtime: Arc<TaskRuntime>,
    id: RequestId,
    index: usize,
    arguments: Map<String, Value>,
    task: TaskId,
    owner: TaskOwner,
    running: Arc<crate::tasks::Running>,
}

impl Driver {
    async fn drive(
        self,
        mut ctx: ToolContext,
        mut round: JoinHandle<RoundEnd>,
        record: CallRecord,
    ) {
        let mut round_number = 1u32;
        let outcome = loop {
            let Some((answer, outcome)) = self.wait_for(&mut round).await else {
                // The handler's ToolContext cancellation has fired: it gets
                // a moment to see it and end by itself (cooperative
                // cancellation; what it returns is not stored, the task is
                // cancelled), then it is dropped.
                let grace = self.runtime.poll_interval.min(CANCEL_GRACE);
                let _ = tokio::time::timeout(grace, &mut round).await;
                round.abort();
                self.change(TaskChange::Cancelled { message: None }).await;
                break Outcome::Cancelled;
            };
            match self.read(answer) {
                Ended::Input { requests, state } => {
                    // Keys stay unique over the task's life (the extension
                    // says so) though a handler may reuse its own.
                    let keyed: Map<String, Value> = requests
                        .into_iter()
                        .map(|(key, request)| (wire_key(&key, round_number), request))
                        .collect();
                    // A round that left only state (nothing to ask) runs
                    // again at once, as a client's retry would.
                    let answers = if keyed.is_empty() {
                        Map::new()
                    } else {
                        self.change(TaskChange::InputRequired {
                            requests: keyed,
                            message: None,
                        })
                        .await;
                        let Some(answers) = self.wait_for_answers().await else {
                            self.change(TaskChange::Cancelled { message: None }).await;
                            break Outcome::Cancelled;
                        };
                        answers
                    };
                    let answers: Map<String, Value> = answers
                        .into_iter()
                        .map(|(key, answer)| (handler_key(&key, round_number), answer))
                        .collect();
                    self.change(TaskChange::Resumed).await;
                    round_number += 1;
                    ctx = ctx.next_round(answers, None);
                    round = self.server.spawn_round(
                        &self.id,
                        self.index,
                        self.arguments.clone(),
                        state,
                        &ctx,
                        None,
                    );
                }
                Ended::Result(result) => {
                    self.change(TaskChange::Finished {
                        outcome: TaskOutcome::Result(result),
                        message: None,
                    })
                    .await;
                    break outcome.unwrap_or(Outcome::Completed);
                }
                Ended::Error(error) => {
                    let code = error.code;
                    // The extension asks for a diagnostic statusMessage on a
                    // failed task; the error's message is redacted already.
                    let message = Some(format!("the call failed: {}", error.message));
                    self.change(TaskChange::Finished {
                        outcome: TaskOutcome::Error(error),
                        message,
                    })
                    .await;
                    break outcome.unwrap_or(Outcome::Error { code });
                }
            }
        };
        self.runtime.unregister(&self.task);
        ctx.finish();
        record.finish(outcome);
    }

    /// The round's end, or `None` when the task was cancelled (here, through
    /// the store, or by its expiry) first.
    async fn wait_for(&self, round: &mut JoinHandle<RoundEnd>) -> Option<RoundEnd> {
        loop {
            // The store is read at the poll interval, or at once when news
            // of a change came (another replica's cancel, through the bus).
            let poll = tokio::time::sleep(self.runtime.poll_interval);
            let tick = select(Box::pin(poll), Box::pin(self.running.changed.notified()));
            let cancelled = self.running.cancel.cancelled();
            let stop = select(Box::pin(cancelled), Box::pin(tick));
            match select(&mut *round, stop).await {
                Either::Left((joined, _)) => {
                    return Some(joined.unwrap_or_else(|_| round_stopped()));
                }
                Either::Right((Either::Left(_), _)) => return None,
                Either::Right((Either::Right(_), _)) => {
                    if self.gone_or_cancelled().await {
                        self.running.cancel.cancel();
                        return None;
                    }
                }
            }
        }
    }

    /// The answers of a finished round of input, or `None` when the task was
    /// cancelled or expired while it waited.
    async fn wait_for_answers(&self) -> Option<Map<String, Value>> {
        loop {
            if self.running.cancel.is_cancelled() {
                return None;
            }
            match self.runtime.store.get(&self.owner, &self.task).await {
                Ok(None) => return None,
                Ok(Some(task)) => match task.status {
                    TaskStatus::Working if task.input_requests.is_none() => {
                        return Some(task.input_responses);
                    }
                    status if status.is_terminal() => return None,
                    _ => {}
                },
                Err(error) => tracing::warn!(%error, task = %self.task, "reading a task failed"),
            }
            let woken = self.running.changed.notified();
            let cancelled = self.running.cancel.cancelled();
            let tick = tokio::time::sleep(self.runtime.poll_interval);
            let _ = select(Box::pin(woken), select(Box::pin(cancelled), Box::pin(tick))).await;
        }
    }

    /// True when the store says the task is cancelled, or no longer has it.
    async fn gone_or_cancelled(&self) -> bool {
        match self.runtime.store.get(&self.owner, &self.task).await {
            Ok(None) => true,
            Ok(Some(task)) => task.status == TaskStatus::Cancelled,
            Err(error) => {
                tracing::warn!(%error, task = %self.task, "reading a task failed");
                false
            }
        }
    }

    async fn change(&self, change: TaskChange) {
        match self.runtime.store.update(&self.task, change).await {
            Ok(Some(_)) => self.runtime.changed(&self.task),
            Ok(None) => {}
            Err(error) => {
                tracing::error!(%error, task = %self.task, "a task's change could not be stored");
            }
        }
    }

    /// How a round ended, from its encoded answer; registered secrets are
    /// redacted before anything reaches the store.
    fn read(&self, answer: Result<Vec<u8>, RpcError>) -> Ended {
        let body = match answer {
            Ok(body) => body,
            Err(error) => {
                let body = encode::error(Some(&self.id), &error);
                return self.read(Ok(body));
            }
        };
        let body = self.server.redactor().redact_json(&body);
        let mut message: Map<String, Value> = match serde_json::from_slice(&body) {
            Ok(message) => message,
            Err(e) => {
                return Ended::Error(StoredError {
                    code: typed_mcp_core::code::INTERNAL_ERROR,
                    message: format!("the task's result could not be read: {e}"),
                    data: None,
                });
            }
        };
        if let Some(Value::Object(error)) = message.remove("error") {
            return Ended::Error(StoredError {
                code: error
                    .get("code")
                    .and_then(Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok())
                    .unwrap_or(typed_mcp_core::code::INTERNAL_ERROR),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                data: error.get("data").cloned(),
            });
        }
        let mut result = match message.remove("result") {
            Some(Value::Object(result)) => result,
            _ => Map::new(),
        };
        if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
            let requests = match result.remove("inputRequests") {
                Some(Value::Object(requests)) => requests,
                _ => Map::new(),
            };
            let state = match result.remove("requestState") {
                Some(Value::String(state)) => Some(state),
                _ => None,
            };
            return Ended::Input { requests, state };
        }
        Ended::Result(Value::Object(result))
    }
}

/// The key a handler's input request is shown under in round `round`: as
/// the handler named it in the first round, suffixed after.
fn wire_key(key: &str, round: u32) -> String {
    if round == 1 {
        key.to_owned()
    } else {
        format!("{key}#{round}")
    }
}

/// The handler's own key of an answer given in round `round`.
fn handler_key(key: &str, round: u32) -> String {
    let suffix = format!("#{round}");
    match key.strip_suffix(&suffix) {
        Some(key) if round > 1 => key.to_owned(),
        _ => key.to_owned(),
    }
}
