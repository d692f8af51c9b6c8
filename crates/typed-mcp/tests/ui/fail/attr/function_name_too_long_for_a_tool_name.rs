//! A function whose name, used as the tool name, is longer than 128 characters.

use typed_mcp::tool;

/// Answer.
#[tool]
fn aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa() -> i64 {
    42
}

fn main() {}
