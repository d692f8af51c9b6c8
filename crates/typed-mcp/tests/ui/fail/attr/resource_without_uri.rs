//! A resource needs its URI.

use typed_mcp::resource;

/// The desk's opening hours.
#[resource(mime_type = "text/plain")]
fn hours() -> String {
    "9-17".into()
}

fn main() {}
