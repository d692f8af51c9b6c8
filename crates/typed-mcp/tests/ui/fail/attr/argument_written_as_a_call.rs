//! An argument written `key(...)` instead of `key = value`.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(name("add"))]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
