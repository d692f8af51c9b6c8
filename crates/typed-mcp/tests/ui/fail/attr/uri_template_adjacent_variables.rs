//! Two variables with nothing between them (the template rules Server::build applies too).

use typed_mcp::resource;

/// A ticket's notes.
#[resource(uri = "desk://tickets/{id}{page}")]
fn notes() -> String {
    String::new()
}

fn main() {}
