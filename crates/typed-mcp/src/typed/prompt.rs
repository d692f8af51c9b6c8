//! Typed prompts: a function of string arguments whose return value becomes
//! the prompt's messages.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use typed_mcp_core::RpcError;
use typed_mcp_core::wire::{GetPromptResult, PromptMessage};

use crate::answer::Answer;
use crate::context::ToolContext;
use crate::declare::{PromptBuilder, PromptDecl, PromptReply, blocking};

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
    /// The capabilities a `prompts/get` needs.
    pub caps: &'static [crate::Capability],
}

/// A prompt function's return value, turned into a `prompts/get` reply.
pub trait PromptOutput: Send + 'static {
    /// The reply, or the error to answer with.
    fn into_reply(self) -> PromptReply;
}

/// One user message holding the text.
impl PromptOutput for String {
    fn into_reply(self) -> PromptReply {
        Ok(Answer::Done(GetPromptResult::new(vec![
            PromptMessage::user_text(self),
        ])))
    }
}

impl PromptOutput for Vec<PromptMessage> {
    fn into_reply(self) -> PromptReply {
        Ok(Answer::Done(GetPromptResult::new(self)))
    }
}

impl PromptOutput for GetPromptResult {
    fn into_reply(self) -> PromptReply {
        Ok(Answer::Done(self))
    }
}

/// `NeedsInput` answers `input_required`; `Done` renders like `T`.
impl<T: PromptOutput> PromptOutput for Answer<T> {
    fn into_reply(self) -> PromptReply {
        match self {
            Answer::Done(value) => value.into_reply(),
            Answer::NeedsInput(needs) => Ok(Answer::NeedsInput(needs)),
        }
    }
}

/// `Err` answers `-32603` with the error's message chain.
impl<T: PromptOutput, E: std::error::Error + Send + 'static> PromptOutput for Result<T, E> {
    fn into_reply(self) -> PromptReply {
        match self {
            Ok(value) => value.into_reply(),
            Err(e) => Err(RpcError::internal(
                crate::ToolError::from_error(&e).to_string(),
            )),
        }
    }
}

fn builder(attrs: &PromptAttrs) -> PromptBuilder {
    let mut b = PromptDecl::builder(attrs.name)
        .description(attrs.description)
        .capabilities(attrs.caps);
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
        async move { f(arguments, ctx).await.into_reply() }
    })
}

/// A typed prompt whose function is synchronous: it runs on the blocking pool.
pub fn prompt_blocking<F, O>(attrs: PromptAttrs, f: F) -> PromptDecl
where
    F: Fn(BTreeMap<String, String>, ToolContext) -> O + Send + Sync + 'static,
    O: PromptOutput,
{
    let f = Arc::new(f);
    prompt_async(attrs, move |arguments, ctx| {
        let f = f.clone();
        blocking(move || f(arguments, ctx))
    })
}
