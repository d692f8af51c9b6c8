//! Streamable HTTP on the wire: a real server on a loopback port, a real client.

mod batch;
mod build;
mod exposure;
mod header_size;
mod headers;
mod layers;
mod legacy;
mod limits;
mod memory;
mod overload;
mod principal;
mod protection;
mod quickstart;
mod reuse;
mod serve;
mod service;
mod signals;
mod soak;
mod statuses;
mod streaming;
mod subscriptions;
mod support;
