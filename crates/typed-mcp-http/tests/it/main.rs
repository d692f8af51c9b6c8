//! Streamable HTTP on the wire: a real server on a loopback port, a real client.

mod batch;
mod build;
mod exposure;
mod header_size;
mod headers;
mod limits;
mod principal;
mod protection;
mod statuses;
mod streaming;
mod subscriptions;
mod support;
