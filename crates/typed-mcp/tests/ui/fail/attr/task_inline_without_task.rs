//! `task_inline` applies only to a task-capable tool.

use typed_mcp::tool;

/// Rebuild the report.
#[tool(task_inline = "200ms")]
async fn rebuild() -> String {
    String::new()
}

fn main() {}
