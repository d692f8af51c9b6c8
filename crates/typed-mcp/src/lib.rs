//! Serve Model Context Protocol tools, resources and prompts from ordinary Rust.
//!
//! typed-mcp targets MCP revision **2026-07-28**, the stateless one: no
//! `initialize`, every request carries its own `_meta` envelope, and clients
//! learn what a server offers with `server/discover`.
//!
//! This crate is the runtime: declarations ([`ToolDecl`], [`ResourceDecl`],
//! [`ResourceTemplateDecl`], [`PromptDecl`]), the [`Server`] builder that
//! validates them all before reading a message, the dispatch of calls (async
//! handlers on tokio, blocking ones off the executor, a concurrency limit,
//! cancellation, panics contained), the stdio transport and an in-process
//! [`testing::TestClient`]. The protocol rules themselves live in
//! [`typed_mcp_core`], re-exported here as [`core`].
//!
//! Governance: declarations name the [`Capability`]s a call needs and the host
//! grants them ([`capability`]); every call of a declaration leaves one
//! [`receipt`]; [`secret`] keeps secret values out of schemas, results, errors,
//! logs and receipts; deadlines and cancellation drop a handler's future; and
//! each request runs in a [`trace`] span continuing the caller's W3C trace.
//!
//! ```no_run
//! use serde_json::json;
//! use typed_mcp::{Server, ToolDecl, ToolError};
//! use typed_mcp::wire::CallToolResult;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let add = ToolDecl::builder("add")
//!         .description("Add two integers.")
//!         .input_schema(json!({
//!             "type": "object",
//!             "properties": {
//!                 "a": {"type": "integer", "description": "The first addend."},
//!                 "b": {"type": "integer", "description": "The second addend."}
//!             },
//!             "required": ["a", "b"]
//!         }))
//!         .blocking_handler(|args, _ctx| {
//!             let (Some(a), Some(b)) = (args["a"].as_i64(), args["b"].as_i64()) else {
//!                 return Err(ToolError::execution("a and b must be integers"));
//!             };
//!             Ok(CallToolResult::structured(json!({"sum": a + b})))
//!         });
//!     Server::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
//!         .tool(add)
//!         .build()?
//!         .serve_stdio()
//!         .await?;
//!     Ok(())
//! }
//! ```

#![warn(missing_docs, unreachable_pub)]
#![deny(unsafe_code)]

pub mod capability;
mod context;
mod declare;
pub mod middleware;
mod pipeline;
pub mod receipt;
pub mod secret;
mod server;
pub mod state;
mod stdio;
mod subscribe;
pub mod testing;
pub mod trace;
pub mod transport;
pub mod typed;

pub use capability::Capability;
pub use context::{Principal, ToolContext};
pub use declare::{
    AnyResourceDecl, CompletionRequest, PromptBuilder, PromptDecl, PromptOutcome, PromptReply,
    PromptReplyOutcome, ReplyOutcome, ResourceBuilder, ResourceDecl, ResourceOutcome,
    ResourceReply, ResourceReplyOutcome, ResourceRequest, ResourceTemplateBuilder,
    ResourceTemplateDecl, ToolBuilder, ToolDecl, ToolError, ToolOutcome, ToolReply,
};
pub use pipeline::{CAPABILITY_NOT_GRANTED, MISSING_CAPABILITIES_META_KEY};
pub use secret::{Redactor, Secret};
pub use server::{
    BuildError, DEFAULT_DRAIN_TIMEOUT, DEFAULT_MAX_PENDING, DEFAULT_MAX_PENDING_BYTES,
    DEFAULT_QUEUE_TIMEOUT, MAX_DEPTH_CEILING, Server, ServerBuilder,
};
pub use subscribe::ResourceUpdates;
pub use transport::Shutdown;
pub use typed::answer::{Answer, NeedsInput};
pub use typed_mcp_core as core;
pub use typed_mcp_core::{RequestId, RpcError, wire};
pub use typed_mcp_macros::{prompt, prompts, resource, resources, tool, tools};

/// What generated code refers to. Not a stable API: use the macros.
#[doc(hidden)]
pub mod __private {
    pub use crate::typed::answer::Answered;
    pub use crate::typed::args::{ArgumentCheck, GardeRules, NoRules, Rules};
    pub use crate::typed::output::{
        Contents, Fallible, Optional, Output, OutputShape, Raw, Structured, Unit,
    };
    pub use crate::typed::prompt::{PromptAttrs, PromptOutput, prompt_async, prompt_blocking};
    pub use crate::typed::resource::{
        Json, ResourceAttrs, ResourceOutput, resource_async, resource_blocking,
    };
    pub use crate::typed::{
        BindArc, BindClone, BindRefClone, Binder, PromptArgumentType, ToolArgument, ToolAttrs,
        assert_argument, assert_prompt_argument, tool_async, tool_blocking,
    };
    pub use crate::wire::{
        CallToolResult, ContentBlock, GetPromptResult, PromptMessage, ResourceContents,
    };
    pub use crate::{
        AnyResourceDecl, Capability, PromptDecl, ResourceRequest, RpcError, ToolContext, ToolDecl,
    };
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use std::sync::Arc;
}

/// The README's examples, compiled as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
