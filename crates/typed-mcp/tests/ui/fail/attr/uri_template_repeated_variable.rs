//! The same variable twice.

use typed_mcp::resource;

/// A ticket's notes.
///
/// # Arguments
/// * `id` - The ticket.
#[resource(uri = "desk://tickets/{id}/{id}")]
fn notes(id: String) -> String {
    String::new()
}

fn main() {}
