//! A `Secret` has no `Serialize`: a struct holding one cannot derive it.

use typed_mcp::secret::Secret;

#[derive(serde::Serialize)]
struct Session {
    user: String,
    api_key: Secret<String>,
}

fn main() {}
