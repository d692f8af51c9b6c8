//! A variable with a `.` cannot name a Rust parameter: the message says to rename it.

use typed_mcp::resource;

/// A user.
#[resource(uri = "desk://users/{user.id}")]
fn user() -> String {
    String::new()
}

fn main() {}
