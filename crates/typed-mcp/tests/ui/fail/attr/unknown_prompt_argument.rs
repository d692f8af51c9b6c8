//! #[prompt] takes no `description`: the doc comment is the description.

use typed_mcp::prompt;

/// Greet someone.
#[prompt(description = "Greets.")]
fn greet() -> String {
    String::new()
}

fn main() {}
