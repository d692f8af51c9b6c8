//! Every tool gets its typed call, and a server whose types go only one way
//! (a `Secret` parameter, a value that only serializes) still compiles when
//! their calls are not used. Calls compile for every shape, free functions
//! and methods, through any caller, and their futures are `Send`.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use typed_mcp::protocol::caller::{CallTool, ToolCallError};
use typed_mcp::wire::{CallToolResult, ContentBlock};
use typed_mcp::{Answer, Secret, ToolContext, tool, tools};

/// A report that only serializes.
#[derive(Serialize, JsonSchema)]
struct Report {
    /// How many.
    count: u32,
}

/// Log in.
///
/// # Arguments
/// * `password` - The password.
#[tool]
fn login(password: Secret<String>) -> Report {
    Report {
        count: password.expose_secret().len() as u32,
    }
}

/// A parameter named like the call's own, and a type named like its caller.
///
/// # Arguments
/// * `client` - Who asks.
/// * `caller` - What they use.
#[tool]
fn named(client: String, caller: Caller) -> Option<String> {
    Some(format!("{client}{}", caller.0))
}

/// A type of the application's that happens to be named `Caller`.
#[derive(Serialize, serde::Deserialize, JsonSchema)]
struct Caller(u8);

/// Nothing back.
#[tool]
async fn nothing(ctx: ToolContext) {
    let _ = ctx;
}

/// Content.
#[tool]
fn blocks() -> Result<Vec<ContentBlock>, std::io::Error> {
    Ok(Vec::new())
}

/// A whole result.
#[tool]
fn raw() -> CallToolResult {
    CallToolResult::text("x")
}

struct Desk;

impl Desk {
    /// Ask first.
    ///
    /// # Arguments
    /// * `id` - The ticket.
    #[tool]
    async fn ask(&self, id: String, ctx: &ToolContext) -> Result<Answer<u64>, std::io::Error> {
        let _ = (id, ctx);
        Ok(Answer::Done(1))
    }
}

struct Offline;

impl CallTool for Offline {
    type Error = std::io::Error;

    async fn call_tool_result(
        &self,
        _: &str,
        _: Map<String, Value>,
    ) -> Result<CallToolResult, std::io::Error> {
        Err(std::io::Error::other("offline"))
    }
}

fn spawnable<F: std::future::Future + Send>(future: F) -> F {
    future
}

async fn calls() -> Result<(), ToolCallError<std::io::Error>> {
    let _: Option<String> = call_named(&Offline, "a".into(), Caller(1)).await?;
    let (): () = call_nothing(&Offline).await?;
    let _: Vec<ContentBlock> = call_blocks(&Offline).await?;
    let _: CallToolResult = call_raw(&Offline).await?;
    let _: u64 = spawnable(Desk::call_ask(&Offline, "T-1".into())).await?;
    Ok(())
}

fn main() {
    let desk = Arc::new(Desk);
    let _ = tools![login, named, nothing, blocks, raw, desk.ask];
    let _ = calls();
}
