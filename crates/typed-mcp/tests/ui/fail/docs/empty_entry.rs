//! An entry that names its parameter and says nothing about it.

use typed_mcp::tool;

/// Negate an integer.
///
/// # Arguments
/// * `a`
#[tool]
fn negate(a: i64) -> i64 {
    -a
}

fn main() {}
