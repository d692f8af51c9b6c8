//! #[prompt] on an impl block: the message says to put it on a method.

use typed_mcp::prompt;

struct Desk;

/// The desk.
#[prompt]
impl Desk {}

fn main() {}
