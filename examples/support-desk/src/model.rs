//! What the tools take and give: tickets, comments, search hits, and the typed
//! error every tool returns. Each field's doc comment is its description in the
//! JSON Schema a client sees.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use typed_mcp::capability::OutOfScope;
use typed_mcp::capability::fs::FsError;

/// A ticket's id, written `T-1001` (the number is the database row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TicketId(pub(crate) i64);

impl TicketId {
    /// The resource URI of this ticket.
    pub(crate) fn uri(self) -> String {
        format!("ticket://{self}")
    }
}

impl fmt::Display for TicketId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T-{}", self.0)
    }
}

impl FromStr for TicketId {
    type Err = DeskError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.strip_prefix("T-")
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse().ok())
            .map(TicketId)
            .ok_or_else(|| {
                DeskError::InvalidInput(format!(
                    "{text:?} is not a ticket id (expected `T-` and a number, e.g. T-1001)"
                ))
            })
    }
}

impl Serialize for TicketId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TicketId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for TicketId {
    fn schema_name() -> Cow<'static, str> {
        "TicketId".into()
    }

    // Inline, so the parameter's own description sits beside the pattern.
    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^T-[0-9]{1,18}$",
            "examples": ["T-1001"]
        })
    }
}

/// Whether a ticket still needs work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    /// Waiting for the support team.
    Open,
    /// Resolved; see the resolution note.
    Closed,
}

/// A support ticket with its comments.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub(crate) struct Ticket {
    /// The ticket's id, e.g. `T-1001`; its resource is `ticket://T-1001`.
    pub(crate) id: TicketId,
    /// One-line summary of the problem.
    pub(crate) title: String,
    /// The customer's description of the problem.
    pub(crate) body: String,
    /// `open` or `closed`.
    pub(crate) status: Status,
    /// When the ticket was filed (UTC, RFC 3339).
    pub(crate) created_at: String,
    /// When the ticket was closed (UTC, RFC 3339); absent while open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) closed_at: Option<String>,
    /// The note given when the ticket was closed; absent while open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) resolution: Option<String>,
    /// The comments on the ticket, oldest first.
    pub(crate) comments: Vec<Comment>,
}

/// A comment on a ticket.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub(crate) struct Comment {
    /// The comment's number, unique across the desk.
    pub(crate) id: i64,
    /// The ticket the comment belongs to.
    pub(crate) ticket_id: TicketId,
    /// What the comment says.
    pub(crate) body: String,
    /// When the comment was added (UTC, RFC 3339).
    pub(crate) created_at: String,
}

/// One ticket found by a search.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub(crate) struct SearchHit {
    /// The ticket's id; read `ticket://<id>` for the whole ticket.
    pub(crate) id: TicketId,
    /// One-line summary of the problem.
    pub(crate) title: String,
    /// `open` or `closed`.
    pub(crate) status: Status,
    /// When the ticket was filed (UTC, RFC 3339).
    pub(crate) created_at: String,
    /// The best-matching passage of the title or body, matched words in `[brackets]`.
    pub(crate) snippet: String,
}

/// What a rebuild of the search index did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Reindexed {
    /// Tickets whose index rows were rebuilt.
    pub(crate) tickets: usize,
    /// Transactions it took.
    pub(crate) batches: usize,
}

/// The result of a search.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SearchResults {
    /// Matching tickets, best match first; empty when nothing matches.
    pub(crate) tickets: Vec<SearchHit>,
}

/// A ticket written to the desk's file directory.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Exported {
    /// Where it was written, relative to the desk's file directory.
    pub(crate) path: String,
    /// How many bytes were written.
    pub(crate) bytes: u64,
}

/// Why a support-desk operation failed. The message is what the client reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DeskError {
    /// No ticket has this id.
    #[error("no ticket {0} exists")]
    NotFound(TicketId),
    /// The ticket was closed before.
    #[error("ticket {0} is already closed")]
    AlreadyClosed(TicketId),
    /// An argument the schema admits but the desk does not (a blank title, a
    /// query without words).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A database operation failed; its source says how.
    #[error("the ticket store failed")]
    Storage(#[from] rusqlite::Error),
    /// The database cannot be used at all (the reason says why).
    #[error("the ticket store is unavailable: {0}")]
    Unavailable(String),
    /// A path, host or ticket outside what the operator granted.
    #[error(transparent)]
    OutOfScope(#[from] OutOfScope),
    /// A file inside the granted directory could not be read or written.
    #[error("file error: {0}")]
    File(FsError),
}

impl From<FsError> for DeskError {
    fn from(e: FsError) -> DeskError {
        match e {
            FsError::OutOfScope(refused) => DeskError::OutOfScope(refused),
            other => DeskError::File(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticket_ids_round_trip_as_text() {
        let id: TicketId = "T-1001".parse().unwrap();
        assert_eq!(id, TicketId(1001));
        assert_eq!(id.to_string(), "T-1001");
        assert_eq!(id.uri(), "ticket://T-1001");
        assert_eq!(serde_json::to_value(id).unwrap(), "T-1001");
        assert_eq!(
            serde_json::from_value::<TicketId>("T-7".into()).unwrap(),
            TicketId(7)
        );
        for bad in [
            "1001",
            "T-",
            "T-12a",
            "t-1",
            "T--1",
            "T-+1",
            "T-99999999999999999999",
        ] {
            let e = bad.parse::<TicketId>().unwrap_err();
            assert!(e.to_string().contains("is not a ticket id"), "{bad}: {e}");
        }
    }
}
