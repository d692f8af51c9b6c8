//! An integer too large for a timeout.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(timeout_ms = 99999999999999999999999)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
