//! A generic function has no one input schema.

use typed_mcp::tool;

/// Echo a value.
///
/// # Arguments
/// * `value` - The value.
#[tool]
fn echo<T>(value: String) -> String {
    value
}

fn main() {}
