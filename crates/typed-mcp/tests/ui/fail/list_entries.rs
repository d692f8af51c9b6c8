use typed_mcp::tools;

/// Not decorated with #[tool].
fn plain(a: i64) -> i64 {
    a
}

fn main() {
    let _ = tools![plain];
    let _ = tools!["plain", 1 + 2];
}
