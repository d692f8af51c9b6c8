//! A parameter the URI template does not fill.

use typed_mcp::resource;

/// A ticket.
///
/// # Arguments
/// * `id` - The ticket.
/// * `verbose` - Whether to say more.
#[resource(uri = "desk://tickets/{id}")]
fn ticket(id: String, verbose: String) -> String {
    id + &verbose
}

fn main() {}
