//! `impl Trait` in a parameter makes the function generic.

use typed_mcp::tool;

/// Measure a text.
///
/// # Arguments
/// * `text` - The text.
#[tool]
fn measure(text: impl Into<String>) -> usize {
    text.into().len()
}

fn main() {}
