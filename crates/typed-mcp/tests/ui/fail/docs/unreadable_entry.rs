//! An entry without backticks around the name.

use typed_mcp::tool;

/// Negate an integer.
///
/// # Arguments
/// * a - The integer.
#[tool]
fn negate(a: i64) -> i64 {
    -a
}

fn main() {}
