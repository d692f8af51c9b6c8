//! Typed prompts: a function of string arguments whose return value becomes
//! the prompt's messages.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use typed_mcp_core::RpcError;
use typed_mcp_core::wire::{GetPromptResult, PromptMessage};

use crate::context::ToolContext;
use crate::declare::PromptDecl;

/// The static facts of a typed prompt, as a macro writes them.
#[derive(Debug, Clone, Copy)]
pub struct PromptAttrs {
    /// Wire name.
    pub name: &'static str,
    /// Display name.
    pub title: Option<&'static str>,
    /// What the prompt is for.
    pub description: &'static str,
    /// Each argument: name, description, required.
    pub arguments: &'static [(&'static str, &'static str, bool)],
}

/// A prompt function's return value, turned into a `prompts/get` result.
pub trait PromptOutput: Send + 'static {
    /// The result, or the error to answer with.
    fn into_result(self) -> Result<GetPromptResult, RpcError>;
}

/// One user message holding the text.
impl PromptOutput for String {
    fn into_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult::new(vec![PromptMessage::user_text(self)]))
    }
}

impl PromptOutput for Vec<PromptMessage> {
    fn into_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(GetPromptResult::new(self))
    }
}

impl PromptOutput for GetPromptResult {
    fn into_result(self) -> Result<GetPromptResult, RpcError> {
        Ok(self)
    }
}

/// `Err` answers `-32603` with the error's message chain.
impl<T: PromptOutput, E: std::error::Error + Send + 'static> PromptOutput for Result<T, E> {
    fn into_result(self) -> Result<GetPromptResult, RpcError> {
        match self {
            Ok(value) => value.into_result(),
            Err(e) => Err(RpcError::internal(
                crate::ToolError::from_error(&e).to_string(),
            )),
        }
    }
}

fn builder(attrs: &PromptAttrs) -> crate::PromptBuilder {
    let mut b = PromptDecl::builder(attrs.name).description(attrs.description);
    if let Some(t) = attrs.title {
        b = b.title(t);
    }
    for (name, description, required) in attrs.arguments {
        b = b.argument(*name, *description, *required);
    }
    b
}

/// A typed prompt whose function is async.
pub fn prompt_async<F, Fut, O>(attrs: PromptAttrs, f: F) -> PromptDecl
where
    F: Fn(BTreeMap<String, String>, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
    O: PromptOutput,
{
    let f = Arc::new(f);
    builder(&attrs).handler(move |arguments, ctx| {
        let f = f.clone();
        async move { f(arguments, ctx).await.into_result() }
    })
}

/// A typed prompt whose function is synchronous: it runs on the blocking pool.
pub fn prompt_blocking<F, O>(attrs: PromptAttrs, f: F) -> PromptDecl
where
    F: Fn(BTreeMap<String, String>, ToolContext) -> O + Send + Sync + 'static,
    O: PromptOutput,
{
    builder(&attrs).blocking_handler(move |arguments, ctx| f(arguments, ctx).into_result())
}
