//! What can go wrong in a command: talking to the server (typed-mcp-client's
//! [`ClientError`]), or the lock file.

pub use typed_mcp_client::ClientError;

/// Any failure of a command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Talking to the server.
    #[error("{}", crate::connect::words(.0))]
    Client(#[from] ClientError),
    /// The lock file.
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
}
