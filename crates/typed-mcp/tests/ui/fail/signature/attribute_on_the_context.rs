//! The context is not an argument, so it takes no attributes.

use typed_mcp::{ToolContext, tool};

/// Answer.
#[tool]
fn answer(#[arg(default)] ctx: &ToolContext) -> i64 {
    let _ = ctx;
    42
}

fn main() {}
