use typed_mcp::tool;

/// Look things up.
///
/// # Arguments
/// * `names` - The names.
/// * `pair` - A pair.
/// * `filter` - A filter.
#[tool]
fn lookup(names: &[String], (a, b): (i64, i64), filter: impl Into<String>) -> i64 {
    let _ = (names, filter);
    a + b
}

fn main() {}
