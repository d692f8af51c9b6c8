//! Every kind of declaration compiles, and each list macro makes a `Vec`.

use std::sync::Arc;

use typed_mcp::{ToolContext, prompt, prompts, resource, resources, tool, tools, declare::{AnyResourceDecl, PromptDecl, ToolDecl}};

/// Add two integers.
///
/// # Arguments
/// * `a` - The first addend.
/// * `b` - The second addend.
#[tool]
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Wait for nothing.
#[tool(timeout = "1m")]
pub(crate) async fn idle(ctx: &ToolContext) {
    let _ = ctx;
}

struct Counter;

impl Counter {
    /// Count to a number.
    ///
    /// # Arguments
    /// * `to` - Where to stop.
    #[tool]
    fn count(&self, to: u32) -> Vec<u32> {
        (1..=to).collect()
    }

    /// Say a number.
    ///
    /// # Arguments
    /// * `n` - The number.
    #[prompt]
    async fn say(&self, n: String) -> String {
        n
    }
}

/// A page.
///
/// # Arguments
/// * `slug` - The page's slug.
#[resource(uri = "site://pages/{slug}")]
async fn page(slug: String, _ctx: ToolContext) -> String {
    slug
}

fn main() {
    let counter = Arc::new(Counter);
    let tools: Vec<ToolDecl> = tools![add, idle, counter.count];
    let resources: Vec<AnyResourceDecl> = resources![page];
    let prompts: Vec<PromptDecl> = prompts![counter.say];
    assert_eq!((tools.len(), resources.len(), prompts.len()), (3, 1, 1));
    assert_eq!(add(1, 2), 3);
}
