//! A borrowed parameter: arguments are decoded into owned values.

use typed_mcp::tool;

/// Count the names.
///
/// # Arguments
/// * `names` - The names.
#[tool]
fn count(names: &[String]) -> usize {
    names.len()
}

fn main() {}
