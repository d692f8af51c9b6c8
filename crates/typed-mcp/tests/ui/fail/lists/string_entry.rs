//! A tool's name is not a tool: the message lists what an entry can be.

use typed_mcp::tools;

fn main() {
    let _ = tools!["plain"];
}
