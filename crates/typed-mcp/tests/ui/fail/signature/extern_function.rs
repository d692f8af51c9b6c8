//! A function with an `extern` ABI.

use typed_mcp::tool;

/// Answer.
#[tool]
extern "C" fn answer() -> i64 {
    42
}

fn main() {}
