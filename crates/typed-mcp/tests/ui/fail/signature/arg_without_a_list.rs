//! `#[arg]` needs its list: `#[arg(default)]` or `#[arg(default = expr)]`.

use typed_mcp::tool;

/// Search the tickets.
///
/// # Arguments
/// * `limit` - How many results.
#[tool]
fn search(#[arg] limit: u32) -> u32 {
    limit
}

fn main() {}
