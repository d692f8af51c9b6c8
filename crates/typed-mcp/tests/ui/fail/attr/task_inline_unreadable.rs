//! `task_inline` is a duration with a unit.

use typed_mcp::tool;

/// Rebuild the report.
#[tool(task, task_inline = "soon")]
async fn rebuild() -> String {
    String::new()
}

fn main() {}
