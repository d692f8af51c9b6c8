//! A value that only serializes can be served, but not read back by the
//! typed call: the call is refused where it is written.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use typed_mcp::protocol::caller::CallTool;
use typed_mcp::tool;
use typed_mcp::wire::CallToolResult;

/// A report.
#[derive(Serialize, JsonSchema)]
struct Report {
    /// How many.
    count: u32,
}

/// Report.
#[tool]
fn report() -> Report {
    Report { count: 1 }
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

async fn read() {
    let _ = call_report(&Offline).await;
}

fn main() {
    let _ = read();
}
