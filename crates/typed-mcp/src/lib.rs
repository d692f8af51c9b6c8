//! Serve Model Context Protocol tools, resources and prompts from ordinary Rust.
//!
//! typed-mcp targets MCP revision **2026-07-28**, the stateless one: no
//! `initialize`, every request carries its own `_meta` envelope, and clients
//! learn what a server offers with `server/discover`. The same server, from the
//! same declarations, also serves clients of the dated revisions (2025-11-25,
//! 2025-06-18, 2025-03-26), which open a session with `initialize`
//! ([`ServerBuilder::legacy_clients`] turns that off).
//!
//! Write a function, mark it [`#[tool]`](tool) (or [`resource`], [`prompt`]),
//! and hand it to the [`Server`] builder: the input schema the model reads,
//! the decoding of its arguments and the encoding of the result all come from
//! the function's types, so they cannot drift. [`ServerBuilder::build`] validates
//! every declaration before a message is read ([`BuildError`] names each
//! fault); the server then runs calls on tokio (a concurrency limit,
//! cancellation, deadlines, panics contained) over stdio, over HTTP
//! (the `typed-mcp-http` crate) or any transport built on [`transport`].
//!
//! ```no_run
//! use serde::Deserialize;
//! use schemars::JsonSchema;
//! use typed_mcp::{Server, tool, tools};
//!
//! /// The two numbers to add.
//! #[derive(Deserialize, JsonSchema)]
//! struct Addends {
//!     /// The first addend.
//!     a: i64,
//!     /// The second addend.
//!     b: i64,
//! }
//!
//! /// Add two integers.
//! ///
//! /// # Arguments
//! /// * `args` - The numbers to add.
//! #[tool(read_only)]
//! async fn add(args: Addends) -> i64 {
//!     args.a + args.b
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     Server::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
//!         .tools(tools![add])
//!         .build()?
//!         .serve_stdio()
//!         .await?;
//!     Ok(())
//! }
//! ```
//!
//! What the crate root holds is what a server needs: the [`Server`] and its
//! [`ServerBuilder`], the per-call [`ToolContext`] and its [`Principal`],
//! [`Capability`] and [`Secret`], the [`Answer`] a handler gives when it may
//! ask the client for input first ([`NeedsInput`]), the error types
//! ([`ToolError`], [`RpcError`], [`BuildError`]), [`blocking`] for
//! synchronous work, [`Json`] resource contents, [`ResourceUpdates`], and the
//! macros. The rest lives in modules:
//!
//! - [`declare`]: declarations written by hand (dynamic catalogs), with one
//!   handler shape for tools, resources and prompts;
//! - [`wire`]: the protocol's messages; [`protocol`]: the I/O-free core they
//!   are routed by;
//! - governance: [`capability`] (what a call needs and the host grants),
//!   [`receipt`] (one per call), [`secret`] (secret values kept out of
//!   schemas, results, errors, logs and receipts), [`state`] (sealed
//!   `requestState`), [`trace`] (a span per request continuing the caller's
//!   W3C trace);
//! - [`schema`]: the schemas the macros derive, for hand-written declarations;
//! - [`transport`] and [`middleware`]: the seams for transports and for tower
//!   layers around handlers; [`extension`]: methods the core does not model,
//!   announced under `capabilities.extensions`;
//! - [`tasks`]: long-running calls as tasks (the Tasks extension), kept in a
//!   [`TaskStore`](tasks::TaskStore) of the application's choice.
//!
//! A server's tests talk to it through `typed-mcp-client`: `Client::in_process`
//! for what a client does, and `typed_mcp_client::testing::TestClient` (its
//! in-process transport as a raw-wire probe) for what no client would send.

#![doc = include_str!("features.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs, unreachable_pub)]
#![deny(unsafe_code)]

mod answer;
mod cancel;
pub mod capability;
mod context;
pub mod declare;
pub mod extension;
pub mod middleware;
mod pipeline;
pub mod receipt;
pub mod schema;
pub mod secret;
mod server;
mod session;
pub mod state;
mod stdio;
pub mod subscribe;
pub mod tasks;
pub mod trace;
pub mod transport;
mod typed;

pub use answer::{Answer, NeedsInput};
pub use capability::Capability;
pub use context::{Principal, ToolContext};
pub use declare::{ToolError, blocking};
pub use secret::Secret;
pub use server::{BuildError, Server, ServerBuilder};
pub use subscribe::ResourceUpdates;
pub use typed::resource::Json;
pub use typed_mcp_core::RpcError;
pub use typed_mcp_macros::{prompt, prompts, resource, resources, tool, tools};

/// The I/O-free protocol layer (the `typed-mcp-core` crate): the router,
/// catalog, limits, digests and JSON-RPC encoding the runtime is built on.
pub use typed_mcp_core as protocol;

/// The MCP 2026-07-28 wire types: descriptors, params, results, content,
/// and the ids a request carries.
pub mod wire {
    pub use typed_mcp_core::wire::*;
    pub use typed_mcp_core::{ProgressToken, RequestId, code};
}

/// What generated code refers to. Not a stable API: use the macros.
/// For the `simple_schema` fuzz target (built with `--cfg fuzzing` only).
#[cfg(fuzzing)]
#[doc(hidden)]
pub use crate::typed::simple_schema::beside_full as simple_schema_beside_full;

#[doc(hidden)]
pub mod __private {
    pub use crate::declare::{AnyResourceDecl, PromptDecl, ResourceRequest, ToolDecl};
    pub use crate::typed::answer::Answered;
    pub use crate::typed::args::{ArgumentCheck, CheckFn, GardeRules, NoRules, Rules};
    pub use crate::typed::call::{
        Argument, LibraryCall, Reading, Returned, Returns, StructuredCall, put_argument,
        read_nothing, send,
    };
    pub use crate::typed::output::{
        Contents, Fallible, Leaf, LibraryOutput, Optional, Output, OutputShape, Raw, Structured,
        StructuredOutput, Unit,
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
    pub use crate::{Answer, Capability, RpcError, ToolContext};
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use std::sync::Arc;
    pub use typed_mcp_core::caller::{CallTool, ToolCallError};
}

/// The README's examples, compiled as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
