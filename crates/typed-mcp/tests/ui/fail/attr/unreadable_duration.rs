//! A duration without a number and a unit.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(timeout = "soon")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
