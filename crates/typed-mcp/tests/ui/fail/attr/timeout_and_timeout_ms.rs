//! Two ways of giving one timeout.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(timeout = "5s", timeout_ms = 5000)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
