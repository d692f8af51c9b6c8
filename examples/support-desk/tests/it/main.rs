//! The support-desk server end to end, as a real process over stdio and HTTP.

mod http;
mod scoped;
mod stdio;
mod support;
mod tasks;
