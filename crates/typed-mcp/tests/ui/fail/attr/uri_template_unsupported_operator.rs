//! An RFC 6570 operator other than `+`.

use typed_mcp::resource;

/// A ticket's notes.
#[resource(uri = "desk://tickets{?page}")]
fn notes() -> String {
    String::new()
}

fn main() {}
