//! The `typed-mcp` binary against real servers: the quickstart example (over
//! stdio and over HTTP), the crate's `lock_fixture` example and `typed-mcp mcp`
//! itself, each a separate process.

mod client;
mod lock;
mod mcp;
mod support;
