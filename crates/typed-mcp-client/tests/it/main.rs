//! typed-mcp-client against typed-mcp's own servers, in both eras, over each
//! transport (in process, stdio framing, Streamable HTTP), and against
//! misbehaving servers; `legacy_listen.rs` subscriptions in a dated session;
//! `peers.rs` holds the third-party servers.

mod legacy_listen;
mod misbehaving;
mod peers;
mod served;
mod support;
