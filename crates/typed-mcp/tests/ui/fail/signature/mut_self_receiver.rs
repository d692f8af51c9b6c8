//! `&mut self`: calls run at the same time.

use typed_mcp::tool;

struct Desk;

impl Desk {
    /// Reset the desk.
    #[tool]
    fn reset(&mut self) {}
}

fn main() {}
