//! A parameter that only deserializes (a `Secret`) can be served, but not
//! sent by the typed call: the call is refused where it is written.

use serde_json::{Map, Value};
use typed_mcp::protocol::caller::CallTool;
use typed_mcp::wire::CallToolResult;
use typed_mcp::{Secret, tool};

/// Log in.
///
/// # Arguments
/// * `password` - The password.
#[tool]
fn login(password: Secret<String>) -> bool {
    password.expose_secret().is_empty()
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

async fn try_login() {
    let _ = call_login(&Offline, Secret::new("hunter2".to_owned())).await;
}

fn main() {
    let _ = try_login();
}
