//! An expression that makes no declaration.

use typed_mcp::resources;

fn main() {
    let _ = resources![1 + 2];
}
