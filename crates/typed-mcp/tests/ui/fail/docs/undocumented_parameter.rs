//! A parameter missing from the `# Arguments` list.

use typed_mcp::tool;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
