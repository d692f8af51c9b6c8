//! `name` takes a string literal.

use typed_mcp::prompt;

/// Greet someone.
#[prompt(name = 3)]
fn greet() -> String {
    String::new()
}

fn main() {}
