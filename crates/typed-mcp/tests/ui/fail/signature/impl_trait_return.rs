//! `impl Trait` in return position hides the type the reply is derived from.

use typed_mcp::tool;

/// Say hello.
#[tool]
fn hello() -> impl std::fmt::Display {
    "hello"
}

fn main() {}
