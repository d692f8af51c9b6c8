//! `task` is "optional" or "required".

use typed_mcp::tool;

/// Rebuild the report.
#[tool(task = "sometimes")]
async fn rebuild() -> String {
    String::new()
}

fn main() {}
