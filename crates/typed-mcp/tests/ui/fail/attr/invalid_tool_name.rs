//! A tool name outside the spec's characters (the rule Server::build applies too).

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(name = "add two")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
