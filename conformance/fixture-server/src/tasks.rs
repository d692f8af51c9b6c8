//! The tools the suite's `tasks-*` scenarios call (the Tasks extension):
//! their names, arguments and behaviour are the suite's fixture contract.

use std::time::Duration;

use typed_mcp::wire::ContentBlock;
use typed_mcp::{Answer, NeedsInput, ToolContext, tool};

use crate::{accepted_string, elicited, one_field};

/// A failure the tool reports as its result (`isError: true`).
#[derive(Debug)]
pub(crate) struct JobFailed;

impl std::fmt::Display for JobFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the job failed on purpose")
    }
}

impl std::error::Error for JobFailed {}

/// Greet someone by name (never a task).
///
/// # Arguments
/// * `name` - Who to greet.
#[tool(read_only)]
pub(crate) async fn greet(name: String) -> ContentBlock {
    ContentBlock::text(format!("Hello, {name}!"))
}

/// Sleep for `seconds`, then report what was computed; cancellable while it
/// sleeps. May run as a task.
///
/// # Arguments
/// * `seconds` - How long to work (0 answers at once).
/// * `label` - A label echoed in the result.
#[tool(read_only, task)]
pub(crate) async fn slow_compute(
    ctx: ToolContext,
    seconds: f64,
    label: Option<String>,
) -> ContentBlock {
    let work = Duration::from_secs_f64(seconds.clamp(0.0, 3600.0));
    tokio::select! {
        () = tokio::time::sleep(work) => {}
        () = ctx.cancelled() => {}
    }
    ContentBlock::text(format!(
        "computed {} after {seconds}s",
        label.as_deref().unwrap_or("a result")
    ))
}

/// Work for a second, then fail with a tool error. Runs only as a task.
#[tool(read_only, task = "required")]
pub(crate) async fn failing_job() -> Result<ContentBlock, JobFailed> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(JobFailed)
}

/// Panic: the task fails with a protocol error. May run as a task.
#[tool(read_only, task)]
pub(crate) async fn protocol_error_job() -> ContentBlock {
    tokio::time::sleep(Duration::from_millis(200)).await;
    panic!("protocol_error_job fails on purpose")
}

/// Ask the user to confirm deleting `filename`; report the answer. May run
/// as a task.
///
/// # Arguments
/// * `filename` - The file to delete (nothing is deleted).
#[tool(task)]
pub(crate) async fn confirm_delete(ctx: ToolContext, filename: String) -> Answer<ContentBlock> {
    match elicited(&ctx, "confirm") {
        Some(answer) => Answer::Done(ContentBlock::text(format!(
            "delete {filename}: the user answered {:?}",
            answer.action
        ))),
        None => Answer::NeedsInput(NeedsInput::new().elicit(
            "confirm",
            format!("Delete {filename}?"),
            one_field("confirm", "boolean"),
        )),
    }
}

/// Ask two questions at once; report both answers. May run as a task.
#[tool(read_only, task)]
pub(crate) async fn multi_input(ctx: ToolContext) -> Answer<ContentBlock> {
    match (elicited(&ctx, "first"), elicited(&ctx, "second")) {
        (Some(first), Some(second)) => Answer::Done(ContentBlock::text(format!(
            "answers: {:?}, {:?}",
            first.action, second.action
        ))),
        _ => Answer::NeedsInput(
            NeedsInput::new()
                .elicit("first", "First question?", one_field("name", "string"))
                .elicit(
                    "second",
                    "Second question?",
                    one_field("confirm", "boolean"),
                ),
        ),
    }
}

/// Ask for the user's name (answered at once, before any task), then work
/// for a second as a task and greet them. Runs only as a task.
#[tool(read_only, task = "required", task_inline = "200ms")]
pub(crate) async fn test_tool_with_task(ctx: ToolContext) -> Answer<ContentBlock> {
    match accepted_string(&ctx, "user_name", "name") {
        Some(Ok(name)) => {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Answer::Done(ContentBlock::text(format!("Hello, {name}! (from a task)")))
        }
        Some(Err(action)) => Answer::Done(ContentBlock::text(format!(
            "The user {action} to give a name."
        ))),
        None => Answer::NeedsInput(NeedsInput::new().elicit(
            "user_name",
            "What is your name?",
            one_field("name", "string"),
        )),
    }
}
