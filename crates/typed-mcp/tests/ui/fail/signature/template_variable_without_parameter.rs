//! A template variable no parameter receives.

use typed_mcp::resource;

/// A note of a ticket.
///
/// # Arguments
/// * `id` - The ticket.
#[resource(uri = "desk://tickets/{id}/notes/{note}")]
fn note(id: String) -> String {
    id
}

fn main() {}
