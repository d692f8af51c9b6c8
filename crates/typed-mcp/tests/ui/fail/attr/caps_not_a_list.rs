//! `caps` takes a list of capability constants.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(caps = "all")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
