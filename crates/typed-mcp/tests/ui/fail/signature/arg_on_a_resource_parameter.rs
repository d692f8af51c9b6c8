//! `#[arg]` is for #[tool] parameters.

use typed_mcp::resource;

/// A ticket.
///
/// # Arguments
/// * `id` - The ticket.
#[resource(uri = "desk://tickets/{id}")]
fn ticket(#[arg(default)] id: String) -> String {
    id
}

fn main() {}
