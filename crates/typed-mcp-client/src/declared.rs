//! Calls through a tool's declaration: [`Client`] is a [`CallTool`], so the
//! `call_<name>` function `#[tool]` generates beside each typed-mcp tool
//! calls it with the declaration's own Rust types.
//!
//! ```
//! # #[cfg(feature = "in-process")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp::{Server, tool, tools};
//! use typed_mcp_client::{Client, Options, ToolCallError};
//!
//! /// Divide two integers.
//! ///
//! /// # Arguments
//! /// * `dividend` - What is divided.
//! /// * `divisor` - What it is divided by; not zero.
//! #[tool(read_only)]
//! fn divide(dividend: i64, divisor: i64) -> Result<i64, std::io::Error> {
//!     dividend
//!         .checked_div(divisor)
//!         .ok_or_else(|| std::io::Error::other("cannot divide by zero"))
//! }
//!
//! let server = Server::new("demo", "1.0.0").tools(tools![divide]).build()?;
//! let client = Client::in_process(server, Options::new()).await?;
//! // The same parameters as `divide`, checked by the compiler; the `Ok` type back.
//! let quotient: i64 = call_divide(&client, 7, 2).await?;
//! assert_eq!(quotient, 3);
//! // The handler's `Err` comes back as the tool's error.
//! match call_divide(&client, 7, 0).await {
//!     Err(ToolCallError::Tool { message, .. }) => assert_eq!(message, "cannot divide by zero"),
//!     other => panic!("expected the tool's error, found {other:?}"),
//! }
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "in-process"))]
//! # fn main() {}
//! ```

use serde_json::{Map, Value};
pub use typed_mcp_core::caller::{ArgumentProblem, CallTool, ToolCallError};
use typed_mcp_core::wire::CallToolResult;

use crate::{Client, ClientError};

impl CallTool for Client {
    type Error = ClientError;

    /// [`Client::call_tool`] (input the server asks for answered by the
    /// [`Responder`](crate::Responder)), its result read as a
    /// `CallToolResult`.
    async fn call_tool_result(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallToolResult, ClientError> {
        let mut result = self.call_tool(name, Value::Object(arguments)).await?;
        // A dated revision has no `resultType`: every result it sends is final.
        if self.spoken().is_legacy()
            && let Some(object) = result.as_object_mut()
        {
            object
                .entry("resultType")
                .or_insert_with(|| Value::String("complete".into()));
        }
        serde_json::from_value(result).map_err(|e| ClientError::NotMcp {
            what: format!("tools/call {name:?}: the result is not a CallToolResult: {e}"),
            stderr: self.stderr(),
        })
    }
}
