//! A `Secret` has no `Serialize`: it cannot be part of a tool's result.

use typed_mcp::secret::Secret;
use typed_mcp::tool;

#[derive(serde::Serialize)]
struct Session {
    user: String,
    api_key: Secret<String>,
}

/// Open a session with a key.
///
/// # Arguments
/// * `api_key` - The key.
#[tool]
fn open(api_key: Secret<String>) -> Secret<String> {
    api_key
}

fn main() {}
