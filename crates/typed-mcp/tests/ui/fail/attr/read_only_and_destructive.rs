//! Annotations that contradict each other.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(read_only, destructive)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
