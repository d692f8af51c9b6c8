//! A parameter of a static resource, whose URI fills none.

use typed_mcp::resource;

/// The readme.
///
/// # Arguments
/// * `section` - Which section.
#[resource(uri = "desk://readme")]
fn readme(section: String) -> String {
    section
}

fn main() {}
