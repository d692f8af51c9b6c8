//! An entry of `caps` that is not a constant.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(caps = ["desk.write"])]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
