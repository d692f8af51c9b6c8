//! Entries are separated by commas.

use typed_mcp::tools;

fn main() {
    let _ = tools![a; b];
}
