use typed_mcp::tool;

struct Desk;

impl Desk {
    /// Reset the desk.
    #[tool]
    fn reset(&mut self) {}

    /// Shut the desk down.
    #[tool]
    fn shut(self) {}
}

fn main() {}
