//! Tests of the crate's pure functions as pure functions: bytes and facts in,
//! a decision out, no async runtime and no server.

mod extension;
mod route;
