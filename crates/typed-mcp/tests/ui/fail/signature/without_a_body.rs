//! #[tool] on a function declaration without a body.

use typed_mcp::tool;

trait Desk {
    /// Close a ticket.
    #[tool]
    fn close(&self);
}

fn main() {}
