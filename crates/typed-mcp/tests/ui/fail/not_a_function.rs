use typed_mcp::{prompt, tool};

/// A ticket.
#[tool]
struct Ticket {
    id: String,
}

struct Desk;

/// The desk.
#[prompt]
impl Desk {}

fn main() {}
