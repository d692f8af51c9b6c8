//! A misspelt argument: the message suggests the one meant.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(nmae = "add")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
