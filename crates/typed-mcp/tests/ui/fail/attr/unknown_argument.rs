//! An argument #[tool] does not know: the message lists the ones it does.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(colour = "red")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
