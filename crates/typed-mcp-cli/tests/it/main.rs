//! The `typed-mcp` binary against real servers: the quickstart example (over
//! stdio and over HTTP), the crate's `lock_fixture` example and `typed-mcp mcp`
//! itself, each a separate process; and, with `--ignored` (scripts/cli-legacy-check),
//! a legacy-only server of the Python SDK.

mod client;
mod era;
mod legacy_peer;
mod lock;
mod mcp;
mod support;
