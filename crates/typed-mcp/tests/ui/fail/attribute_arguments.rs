use typed_mcp::{prompt, resource, tool};

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool(name = "add two", read_only, destructive, timeout_ms = 0, caps = "all", colour = "red")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The desk's opening hours.
#[resource(mime_type = "text/plain")]
fn hours() -> String {
    "9-17".into()
}

/// A ticket's notes.
#[resource(uri = "desk://tickets/{id}{page}")]
fn notes() -> String {
    String::new()
}

/// Greet someone.
#[prompt(name = 3, description = "Greets.")]
fn greet() -> String {
    String::new()
}

fn main() {}
