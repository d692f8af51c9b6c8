use typed_mcp::{prompt, tool};

#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// # Arguments
/// * `topic` - What to write about.
#[prompt]
fn essay(topic: String) -> String {
    topic
}

fn main() {}
