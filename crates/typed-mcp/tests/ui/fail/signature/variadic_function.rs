//! A C-variadic function takes arguments no schema describes.

use typed_mcp::tool;

/// Sum integers.
///
/// # Arguments
/// * `first` - The first integer.
#[tool]
fn sum(first: i64, ...) -> i64 {
    first
}

fn main() {}
