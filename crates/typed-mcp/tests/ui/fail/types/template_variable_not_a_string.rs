//! A template variable is text: its parameter is a `String`.

use typed_mcp::resource;

/// A ticket.
///
/// # Arguments
/// * `id` - The ticket.
#[resource(uri = "desk://tickets/{id}")]
fn ticket(id: u64) -> String {
    id.to_string()
}

fn main() {}
