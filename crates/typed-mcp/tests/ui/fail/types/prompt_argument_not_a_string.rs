//! Prompt arguments are strings on the wire.

use typed_mcp::prompt;

/// Draft replies.
///
/// # Arguments
/// * `count` - How many drafts.
#[prompt]
fn draft(count: i32) -> String {
    count.to_string()
}

fn main() {}
