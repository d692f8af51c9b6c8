//! A variable name with a `-`.

use typed_mcp::resource;

/// A ticket's notes.
#[resource(uri = "desk://tickets/{ticket-id}")]
fn notes() -> String {
    String::new()
}

fn main() {}
