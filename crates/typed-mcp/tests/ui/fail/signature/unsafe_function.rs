//! An `unsafe fn` is called with whatever a client sends.

use typed_mcp::tool;

/// Answer.
#[tool]
unsafe fn answer() -> i64 {
    42
}

fn main() {}
