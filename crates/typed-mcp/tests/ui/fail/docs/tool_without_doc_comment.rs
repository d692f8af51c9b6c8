//! A tool without a doc comment: the message shows the comment to write.

use typed_mcp::tool;

#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
