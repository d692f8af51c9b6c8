//! `self` by value: the declaration shares the value in an `Arc`.

use typed_mcp::tool;

struct Desk;

impl Desk {
    /// Shut the desk down.
    #[tool]
    fn shut(self) {}
}

fn main() {}
