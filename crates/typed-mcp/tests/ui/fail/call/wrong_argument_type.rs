//! The typed call takes the declaration's own parameter types.

use serde_json::{Map, Value};
use typed_mcp::protocol::caller::CallTool;
use typed_mcp::tool;
use typed_mcp::wire::CallToolResult;

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

struct Offline;

impl CallTool for Offline {
    type Error = std::io::Error;

    async fn call_tool_result(
        &self,
        _: &str,
        _: Map<String, Value>,
    ) -> Result<CallToolResult, std::io::Error> {
        Err(std::io::Error::other("offline"))
    }
}

async fn sum() -> i64 {
    call_add(&Offline, "two", 3).await.unwrap()
}

fn main() {
    let _ = sum();
}
