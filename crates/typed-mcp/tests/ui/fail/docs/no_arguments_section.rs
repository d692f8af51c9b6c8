//! A doc comment without an `# Arguments` section: the message shows the section to add.

use typed_mcp::tool;

/// Negate an integer.
#[tool]
fn negate(a: i64) -> i64 {
    -a
}

fn main() {}
