//! A `}` without its `{`.

use typed_mcp::resource;

/// A ticket's notes.
#[resource(uri = "desk://tickets/id}")]
fn notes() -> String {
    String::new()
}

fn main() {}
