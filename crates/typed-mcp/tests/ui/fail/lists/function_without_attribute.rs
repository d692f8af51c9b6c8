//! A function that is not a #[tool] has no declaration to list.

use typed_mcp::tools;

/// Not decorated with #[tool].
fn plain(a: i64) -> i64 {
    a
}

fn main() {
    let _ = tools![plain];
}
