//! The context is shared, never `&mut`.

use typed_mcp::{ToolContext, tool};

/// Answer.
#[tool]
fn answer(ctx: &mut ToolContext) -> i64 {
    let _ = ctx;
    42
}

fn main() {}
