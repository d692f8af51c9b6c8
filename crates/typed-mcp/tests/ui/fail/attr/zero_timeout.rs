//! A timeout that would fail every call.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(timeout_ms = 0)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
