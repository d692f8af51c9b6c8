//! A `Secret` has no `Serialize`: it cannot be a tool's result.

use typed_mcp::secret::Secret;
use typed_mcp::tool;

/// Open a session with a key.
///
/// # Arguments
/// * `api_key` - The key.
#[tool]
fn open(api_key: Secret<String>) -> Secret<String> {
    api_key
}

fn main() {}
