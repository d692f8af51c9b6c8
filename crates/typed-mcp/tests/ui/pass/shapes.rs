//! Each written return type picks its reply, including through aliases of
//! `Result` with one argument.

use typed_mcp::wire::{CallToolResult, ContentBlock};
use typed_mcp::{tool, tools};

type Result<T> = std::result::Result<T, std::io::Error>;

/// Nothing.
#[tool]
fn unit() {}

/// A number.
#[tool]
fn number() -> u8 {
    1
}

/// Maybe a number.
#[tool]
fn maybe() -> Option<u8> {
    None
}

/// One block.
#[tool]
fn block() -> ContentBlock {
    ContentBlock::text("x")
}

/// Blocks.
#[tool]
fn blocks() -> Vec<ContentBlock> {
    Vec::new()
}

/// As is.
#[tool]
fn raw() -> CallToolResult {
    CallToolResult::text("x")
}

/// A number or an error.
#[tool]
fn fallible() -> Result<u8> {
    Ok(1)
}

/// Nothing or an error.
#[tool]
async fn fallible_unit() -> Result<()> {
    Ok(())
}

/// Blocks or an error.
#[tool]
fn fallible_blocks() -> std::result::Result<Vec<ContentBlock>, std::fmt::Error> {
    Ok(Vec::new())
}

/// Maybe a number, or an error.
#[tool]
fn fallible_maybe() -> Result<Option<u8>> {
    Ok(None)
}

fn main() {
    let all = tools![
        unit,
        number,
        maybe,
        block,
        blocks,
        raw,
        fallible,
        fallible_unit,
        fallible_blocks,
        fallible_maybe,
    ];
    assert_eq!(all.len(), 10);
}
