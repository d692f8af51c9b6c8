//! The I/O-free core of typed-mcp.
//!
//! This crate holds every protocol rule of MCP revision 2026-07-28 that does not
//! need a clock, a socket or an async runtime:
//!
//! - [`wire`]: serde types for the messages a server receives and sends;
//! - [`guard`]: size and depth limits checked on raw bytes;
//! - [`catalog`]: the validated, indexed set of tools, resources and prompts;
//! - [`digest`]: SHA-256 digests of declarations over RFC 8785 canonical JSON;
//! - [`router`]: a total function from one inbound message to a [`Decision`];
//! - [`encode`]: compact JSON-RPC framing of results, errors and notifications;
//! - [`caller`]: the seam a typed call through a `#[tool]` declaration sends through.
//!
//! The runtime (`typed-mcp`) runs handlers and transports on top of it.
//!
//! ```
//! use typed_mcp_core::catalog::{Catalog, CatalogOptions, ToolEntry};
//! use typed_mcp_core::router::{Decision, RouteContext, Router};
//! use typed_mcp_core::wire::{Implementation, Tool};
//! use typed_mcp_core::Limits;
//!
//! let tool = Tool::new(
//!     "echo",
//!     serde_json::json!({
//!         "type": "object",
//!         "properties": {"text": {"type": "string", "description": "What to repeat."}}
//!     }),
//! )
//! .with_description("Repeat the text.");
//! let catalog = Catalog::build(
//!     CatalogOptions::new(Implementation::new("demo", "1.0.0")),
//!     vec![ToolEntry::new(tool)],
//!     vec![],
//!     vec![],
//!     vec![],
//! )?;
//! let router = Router::new(catalog, Limits::default());
//! let request = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
//!     "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!              "io.modelcontextprotocol/clientCapabilities":{}},
//!     "name":"echo","arguments":{"text":"hi"}}}"#;
//! assert!(matches!(router.route(request, &RouteContext::NONE), Decision::Invoke(_)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod caller;
pub mod catalog;
pub mod digest;
pub mod encode;
mod error;
pub mod guard;
mod id;
pub mod legacy;
pub mod router;
#[cfg(test)]
mod tests;
pub mod uri_template;
pub mod wire;

pub use error::{RpcError, code};
pub use guard::Limits;
pub use id::{ProgressToken, RequestId};
pub use legacy::{LEGACY_VERSIONS, SessionFacts};
pub use router::{
    AnsweredRequest, Call, Decision, Declaration, Dropped, RequestMeta, Response, RouteContext,
    Router, Target, ToolArguments,
};

/// The protocol revision this crate implements.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// Every protocol revision a server built on this crate accepts.
pub const SUPPORTED_VERSIONS: &[&str] = &[PROTOCOL_VERSION];
