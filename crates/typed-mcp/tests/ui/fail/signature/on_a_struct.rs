//! #[tool] on a struct.

use typed_mcp::tool;

/// A ticket.
#[tool]
struct Ticket {
    id: String,
}

fn main() {}
