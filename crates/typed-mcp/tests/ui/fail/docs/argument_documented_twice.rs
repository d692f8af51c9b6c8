//! One parameter with two entries.

use typed_mcp::tool;

/// Negate an integer.
///
/// # Arguments
/// * `a` - The integer.
/// * `a` - The integer, again.
#[tool]
fn negate(a: i64) -> i64 {
    -a
}

fn main() {}
