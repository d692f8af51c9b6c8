//! Receipts: one record of every `tools/call`, `resources/read` and
//! `prompts/get` that reached a declaration, whatever its outcome — completed,
//! refused, invalid arguments, a typed error, input required, timed out,
//! cancelled, panicked.
//!
//! A receipt names the declaration and its digest, the principal (its id, never
//! a credential), the capabilities the call was allowed, the outcome — for a
//! typed error its Rust type and variant, kept on the server and never parsed
//! back from the message the client saw — the duration and the trace id. Secret
//! values registered with the server are redacted from it.
//!
//! Receipts go to every [`ReceiptSink`] given to
//! [`ServerBuilder::receipt_sink`](crate::ServerBuilder::receipt_sink); without
//! one, to [`TracingSink`]. [`JsonLinesSink`] keeps an append-only file and
//! [`MemorySink`] collects them for tests.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// The record of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Receipt {
    /// When the call started, RFC 3339 in UTC with milliseconds.
    pub time: String,
    /// The JSON-RPC id of the request, as sent.
    pub request_id: serde_json::Value,
    /// `tools/call`, `resources/read` or `prompts/get`.
    pub method: String,
    /// The declaration's name: the tool or prompt name, or the resource's (or
    /// template's) name.
    pub name: String,
    /// For `resources/read`, the URI read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The declaration's digest (`sha256:…`) over its name, description and
    /// schemas: which version of the declaration ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The caller's id, when the transport authenticated one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// The capabilities the call was allowed to use (those its declaration
    /// names; empty for a refused call).
    pub scope: Vec<String>,
    /// The scope each scoped grant of the call was narrowed to, by capability
    /// name (each entry as `--allow` writes it after `NAME=`: a root, a host
    /// pattern, a resource pattern). Capabilities granted unscoped are not
    /// listed; empty for a refused call.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: BTreeMap<String, Vec<String>>,
    /// What happened.
    pub outcome: Outcome,
    /// From the start of the call (after it got a handler slot) to its end.
    pub duration_us: u64,
    /// The W3C trace id of the request (the caller's, from `traceparent`, or a
    /// fresh one).
    pub trace_id: String,
    /// The protocol revision the request was written in: `2026-07-28`, or
    /// the dated revision of a legacy client's session (e.g. `2025-11-25`).
    /// Absent when the request was refused before its revision was known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// For a call that ran as a task (the Tasks extension), the task's id:
    /// the receipt is left when the task ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// The handler answered with a result.
    Completed,
    /// The handler answered with a tool error (`isError: true`).
    Failed {
        /// For a typed error, its Rust type (`std::any::type_name`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_type: Option<String>,
        /// For a typed error, its variant (or struct) name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        variant: Option<String>,
    },
    /// A capability the declaration needs is not granted: the handler did not
    /// run.
    Refused {
        /// The capabilities that were missing.
        missing: Vec<String>,
    },
    /// The handler ran and a scoped handle refused what it asked for (a path
    /// outside the granted roots, a write through a read-only grant, a host
    /// or resource outside the patterns), and the call answered `isError`.
    RefusedInCall {
        /// The capability whose handle refused.
        capability: String,
        /// What was asked: a path, a host (never a URL's credentials or
        /// query) or a resource id, redacted of the server's secrets.
        asked: String,
    },
    /// The arguments did not match the input schema: the function did not run.
    InvalidArguments,
    /// The handler asked for input (`resultType: "input_required"`).
    InputRequired,
    /// The deadline passed; the handler was dropped.
    TimedOut {
        /// The deadline, in milliseconds.
        after_ms: u64,
    },
    /// The client cancelled the call, or its transport went away; the handler
    /// was dropped and nothing was sent.
    Cancelled,
    /// The handler panicked (answered `-32603`).
    Panicked,
    /// Answered with a JSON-RPC error (e.g. a refused `requestState`, a
    /// resource not found, a header that disagrees with the body).
    Error {
        /// The JSON-RPC error code.
        code: i32,
    },
    /// The server was saturated and shed the call (`-31002`): the handler
    /// did not run.
    Overloaded,
    /// A layer around the handlers (see
    /// [`ServerBuilder::layer`](crate::ServerBuilder::layer)) refused the
    /// call (`-31003`, or `-31002` for a load-shedding layer).
    RefusedByLayer {
        /// The layer's error, as it displays (redacted).
        reason: String,
    },
}

impl Outcome {
    /// A short name of the outcome (`"completed"`, `"refused"`, …), as the
    /// request span records it.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Failed { .. } => "failed",
            Outcome::Refused { .. } => "refused",
            Outcome::RefusedInCall { .. } => "refused_in_call",
            Outcome::InvalidArguments => "invalid_arguments",
            Outcome::InputRequired => "input_required",
            Outcome::TimedOut { .. } => "timed_out",
            Outcome::Cancelled => "cancelled",
            Outcome::Panicked => "panicked",
            Outcome::Error { .. } => "error",
            Outcome::Overloaded => "overloaded",
            Outcome::RefusedByLayer { .. } => "refused_by_layer",
        }
    }
}

/// Where receipts go. Implementations must be quick: `record` runs on the
/// call's task as it ends (hand slow work to a thread of your own).
pub trait ReceiptSink: Send + Sync + 'static {
    /// Records one receipt.
    fn record(&self, receipt: &Receipt);

    /// Whether this sink wants receipts now; when no sink does, none is built.
    fn enabled(&self) -> bool {
        true
    }
}

impl<S: ReceiptSink + ?Sized> ReceiptSink for Arc<S> {
    fn record(&self, receipt: &Receipt) {
        (**self).record(receipt)
    }

    fn enabled(&self) -> bool {
        (**self).enabled()
    }
}

/// The default sink: one `tracing` event per receipt, at INFO level with the
/// target `typed_mcp::receipt`, its fields flattened and the whole receipt as
/// JSON in `receipt`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingSink;

/// The `tracing` target of [`TracingSink`]'s events.
pub const RECEIPT_TARGET: &str = "typed_mcp::receipt";

impl ReceiptSink for TracingSink {
    fn record(&self, receipt: &Receipt) {
        let json = serde_json::to_string(receipt).unwrap_or_default();
        tracing::info!(
            target: RECEIPT_TARGET,
            method = %receipt.method,
            name = %receipt.name,
            outcome = receipt.outcome.kind(),
            principal = receipt.principal.as_deref(),
            duration_us = receipt.duration_us,
            trace_id = %receipt.trace_id,
            receipt = %json,
            "receipt"
        );
    }

    fn enabled(&self) -> bool {
        tracing::enabled!(target: RECEIPT_TARGET, tracing::Level::INFO)
    }
}

/// An append-only JSON Lines file: one receipt per line.
///
/// Each receipt is encoded first and then written with a single `write` to a
/// file opened in append mode, with no user-space buffer: a process killed at
/// any moment leaves only whole lines (at worst, the receipts of calls still
/// running are missing). Lines reach the operating system at once; they
/// reach the disk when the OS flushes, or at each receipt with
/// [`sync_each`](Self::sync_each).
#[derive(Debug)]
pub struct JsonLinesSink {
    file: Mutex<File>,
    sync_each: bool,
}

impl JsonLinesSink {
    /// Opens (or creates) the file for appending.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path.as_ref())?;
        Ok(JsonLinesSink {
            file: Mutex::new(file),
            sync_each: false,
        })
    }

    /// Also waits for each line to reach the disk (`fsync`): survives a power
    /// loss, at the cost of a disk flush per call.
    pub fn sync_each(mut self, sync: bool) -> Self {
        self.sync_each = sync;
        self
    }
}

impl ReceiptSink for JsonLinesSink {
    fn record(&self, receipt: &Receipt) {
        let mut line = match serde_json::to_vec(receipt) {
            Ok(line) => line,
            Err(e) => {
                tracing::error!(error = %e, "a receipt could not be encoded");
                return;
            }
        };
        line.push(b'\n');
        let file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let mut writer: &File = &file;
        let written = writer.write_all(&line).and_then(|()| {
            if self.sync_each {
                file.sync_data()
            } else {
                Ok(())
            }
        });
        if let Err(e) = written {
            tracing::error!(error = %e, "a receipt could not be written");
        }
    }
}

/// Keeps receipts in memory, for tests. Clones share one list.
#[derive(Debug, Clone, Default)]
pub struct MemorySink {
    receipts: Arc<Mutex<Vec<Receipt>>>,
}

impl MemorySink {
    /// An empty sink.
    pub fn new() -> Self {
        MemorySink::default()
    }

    /// The receipts recorded so far.
    pub fn receipts(&self) -> Vec<Receipt> {
        self.receipts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Removes and returns the receipts recorded so far.
    pub fn take(&self) -> Vec<Receipt> {
        std::mem::take(&mut *self.receipts.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl ReceiptSink for MemorySink {
    fn record(&self, receipt: &Receipt) {
        self.receipts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(receipt.clone());
    }
}

/// RFC 3339 in UTC with milliseconds (`2026-11-30T08:22:45.123Z`).
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (the
/// well-known era-based conversion).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_796_026_965_123);
        assert_eq!(rfc3339(t), "2026-11-30T08:22:45.123Z");
        // A leap day.
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(t), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn outcomes_serialize_with_their_kind() {
        let json = serde_json::to_value(Outcome::Refused {
            missing: vec!["desk.write".into()],
        })
        .unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "refused", "missing": ["desk.write"]})
        );
        assert_eq!(Outcome::Cancelled.kind(), "cancelled");
    }
}
