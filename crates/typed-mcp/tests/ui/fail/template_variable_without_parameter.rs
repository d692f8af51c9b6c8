use typed_mcp::resource;

/// A note of a ticket.
///
/// # Arguments
/// * `id` - The ticket.
#[resource(uri = "desk://tickets/{id}/notes/{note}")]
fn note(id: String) -> String {
    id
}

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
