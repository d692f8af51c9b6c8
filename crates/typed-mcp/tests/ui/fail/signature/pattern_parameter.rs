//! A parameter without a plain name: the name is the argument's.

use typed_mcp::tool;

/// Add a pair.
///
/// # Arguments
/// * `pair` - The pair.
#[tool]
fn add((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
