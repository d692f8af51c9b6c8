//! Wire-level integration tests of typed-mcp.
//!
//! Every test talks to a built `Server` through typed-mcp-client's in-process
//! probe (`typed_mcp_client::testing::TestClient`) with real JSON-RPC bytes,
//! and every message a test receives is checked
//! against the official 2026-07-28 JSON schema (see `schema`).

mod api;
mod catalog;
mod eras;
mod governance;
mod macros;
mod models;
mod pipeline;
mod runtime;
mod schema;
mod scoped;
mod secrets;
mod subscriptions;
mod support;
mod tasks;
mod trace;
mod typed_layer;
mod validation;
mod wire_types;
