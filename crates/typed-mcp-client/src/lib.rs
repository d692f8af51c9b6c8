//! An MCP client for any server, from Rust.
//!
//! One [`Client`] speaks both protocol eras — 2026-07-28 (stateless, the
//! `_meta` envelope on every request) first, the dated revisions (2025-11-25
//! and older, a session opened by `initialize`) when the server does not speak
//! it ([`Era::Auto`]) — over every transport:
//!
//! - **stdio**: [`Client::stdio`] starts a command ([`StdioCommand`]: piped
//!   stdio, a minimal environment, killed on drop), or [`Client::stdio_pair`]
//!   talks over any reader/writer pair;
//! - **Streamable HTTP** (feature `http`, on by default): [`Client::http`],
//!   with headers and a bearer token;
//! - **in process** (feature `in-process`): [`Client::in_process`] drives a
//!   typed-mcp `Server` through its `Connection`, with no transport; with
//!   feature `testing`, [`testing::TestClient`] is the same transport as a
//!   raw-wire probe for a server's own tests.
//!
//! It lists with automatic pagination ([`Client::list`] is a stream), calls
//! tools (raw with [`Client::call_tool`], typed with [`Client::call`]), reads
//! resources, gets prompts, completes arguments and listens for resource
//! updates (in a legacy session too: `resources/subscribe`, and over HTTP the
//! session's GET event stream); a [`Responder`] answers elicitation, sampling
//! and roots requests, whether a 2026-07-28 server asks through
//! `input_required` (the client retries with the answers and the echoed
//! `requestState`) or a legacy session sends a server-to-client request. Requests run concurrently; dropping one's
//! future cancels it on the server, and so does its [timeout](Options::timeout).
//! What the server sends is bounded in size and depth
//! ([`Options::max_message_bytes`], [`Options::max_depth`]).
//!
//! ```
//! # #[cfg(feature = "in-process")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use typed_mcp::{Server, tool, tools};
//! use typed_mcp_client::{Client, Options};
//!
//! /// Add two integers.
//! ///
//! /// # Arguments
//! /// * `a` - The first addend.
//! /// * `b` - The second addend.
//! #[tool(read_only)]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! let server = Server::new("demo", "1.0.0").tools(tools![add]).build()?;
//! let client = Client::in_process(server, Options::new()).await?;
//! let tools = client.list_tools().await?;
//! assert_eq!(tools[0].name, "add");
//! let sum: i64 = client.call("add", serde_json::json!({"a": 2, "b": 3})).await?;
//! assert_eq!(sum, 5);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "in-process"))]
//! # fn main() {}
//! ```

#![warn(missing_docs)]

mod client;
mod declared;
pub mod era;
mod error;
pub mod headers;
mod listeners;
mod responder;
#[cfg(feature = "testing")]
pub mod testing;
mod transport;

pub use client::{
    Catalog, Client, DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_TIMEOUT,
    NotificationSink, Options, Subscription,
};
pub use declared::{ArgumentProblem, CallTool, ToolCallError};
pub use era::{Era, Spoken};
pub use error::{CallError, ClientError};
pub use responder::{BoxFuture, Responder};
pub use transport::stdio::{INHERITED_ENV, StdioCommand};

/// The protocol's types, as servers send them (typed-mcp's own).
pub mod wire {
    pub use typed_mcp_core::wire::*;
}
