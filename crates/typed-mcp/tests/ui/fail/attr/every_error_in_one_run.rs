//! One compile run reports every mistake, of every family, in both declarations.

use typed_mcp::tool;

#[tool(nmae = "search", read_only, timeout = "soon")]
fn search(query: String, limit: u32, filter: &str) -> Vec<String> {
    let _ = (query, limit, filter);
    Vec::new()
}

struct Desk;

impl Desk {
    /// Close a ticket.
    ///
    /// # Arguments
    /// * `ticket` - The ticket.
    /// * `note`
    /// * ticket_id - without backticks
    #[tool]
    fn close<T>(&mut self, ticket_id: String, note: String) {
        let _ = (ticket_id, note);
    }
}

fn main() {}
