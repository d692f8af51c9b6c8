//! `#[arg]` knows `default` only.

use typed_mcp::tool;

/// Search the tickets.
///
/// # Arguments
/// * `limit` - How many results.
#[tool]
fn search(#[arg(max = 10)] limit: u32) -> u32 {
    limit
}

fn main() {}
