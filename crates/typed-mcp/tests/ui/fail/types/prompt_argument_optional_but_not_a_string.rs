//! An optional prompt argument is an `Option<String>`.

use typed_mcp::prompt;

/// Draft a reply.
///
/// # Arguments
/// * `formal` - Whether to be formal.
#[prompt]
fn draft(formal: Option<bool>) -> String {
    format!("{formal:?}")
}

fn main() {}
