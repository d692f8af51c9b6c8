//! An entry for a parameter the function does not have.

use typed_mcp::tool;

/// Negate an integer.
///
/// # Arguments
/// * `a` - The integer.
/// * `b` - Left over from when this added two integers.
#[tool]
fn negate(a: i64) -> i64 {
    -a
}

fn main() {}
