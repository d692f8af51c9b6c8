//! The same argument twice.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(read_only, read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
