//! A doc comment with an `# Arguments` list but no first paragraph.

use typed_mcp::prompt;

/// # Arguments
/// * `topic` - What to write about.
#[prompt]
fn essay(topic: String) -> String {
    topic
}

fn main() {}
