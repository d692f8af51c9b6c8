//! #[tool] functions are never generic.

use typed_mcp::{tool, tools};

/// Answer.
#[tool]
fn answer() -> i64 {
    42
}

fn main() {
    let _ = tools![answer::<i64>];
}
