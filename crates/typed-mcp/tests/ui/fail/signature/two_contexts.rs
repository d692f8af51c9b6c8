//! One parameter receives the context.

use typed_mcp::{ToolContext, tool};

/// Answer.
#[tool]
fn answer(first: &ToolContext, second: &ToolContext) -> i64 {
    let _ = (first, second);
    42
}

fn main() {}
