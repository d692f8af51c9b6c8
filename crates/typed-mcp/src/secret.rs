//! Secrets: values that no client and no log may see again.
//!
//! Two tools, for two kinds of secret:
//!
//! * [`Secret<T>`] wraps a sensitive **input**, such as an API key a client
//!   passes to a tool. It prints as [`REDACTION_MARKER`], appears in the input
//!   schema with `writeOnly: true` and no `default` or `examples`, never has its
//!   value echoed by an argument error, is wiped from memory when dropped, and
//!   cannot be serialized at all.
//! * [`Redactor`] holds the secret **values** the server itself knows (API keys
//!   loaded at startup) and removes them from text: a reply, an error message,
//!   a log line. It finds each value in its raw form and in the escaped forms it
//!   takes inside JSON strings and Rust `Debug` output.
//!
//! ```
//! use typed_mcp::secret::{REDACTION_MARKER, Redactor, Secret};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let key = Secret::new(String::from("sk-live-4f9a2c7e"));
//! assert_eq!(format!("{key:?}"), REDACTION_MARKER);
//! assert!(key.expose_secret().starts_with("sk-"));
//!
//! let redactor = Redactor::new(["sk-live-4f9a2c7e"])?;
//! assert_eq!(
//!     redactor.redact_str("upstream refused key sk-live-4f9a2c7e"),
//!     "upstream refused key [REDACTED]"
//! );
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;
use std::io::{self, Write};
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use zeroize::ZeroizeOnDrop;

/// The trait a [`Secret`]'s value implements so it can be wiped; implement it
/// for your own secret types (re-exported from [`zeroize`]).
pub use zeroize::Zeroize;

/// What a secret prints as, and what replaces a secret value in redacted text.
pub const REDACTION_MARKER: &str = "[REDACTED]";

/// The fewest characters a value registered with [`Redactor::new`] may have.
///
/// A very short value (`"a"`, `"1234"`) occurs by chance in ordinary text, so
/// redacting it would garble every message while protecting nothing that
/// deserves the name secret.
pub const MIN_SECRET_CHARS: usize = 8;

/// What a [`Secret`]'s deserialization error says instead of its type's own
/// message, which could quote the refused value.
const WITHHELD_DECODE_ERROR: &str =
    "the secret value was refused by its type (details withheld so the value is not echoed)";

// ---------------------------------------------------------------------------
// Secret<T>
// ---------------------------------------------------------------------------

/// A sensitive value: an API key, a password, a token.
///
/// ```
/// use typed_mcp::{Server, tool, tools};
/// use typed_mcp::secret::Secret;
///
/// /// Check that an API key is accepted upstream.
/// ///
/// /// # Arguments
/// /// * `api_key` - The key to check.
/// #[tool]
/// fn check_key(api_key: Secret<String>) -> bool {
///     api_key.expose_secret().starts_with("sk-")
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = Server::new("keys", "1.0.0").tools(tools![check_key]).build()?;
/// # let _ = server;
/// # Ok(())
/// # }
/// ```
///
/// * `Debug` and `Display` print [`REDACTION_MARKER`], so a secret in a log
///   line, a `tracing` field or a panic message shows as `[REDACTED]`.
/// * As a tool parameter (`api_key: Secret<String>`), it is decoded from the
///   JSON form of `T` and described by `T`'s schema plus `"writeOnly": true`,
///   never with a `default` or `examples`. An argument error at or under it
///   never quotes the value, and a refusal by `T`'s own `Deserialize` is
///   reported without `T`'s message (which could quote the value).
/// * The value is wiped (with [`zeroize`]) when the secret is dropped, which
///   is why `T` must implement [`Zeroize`] (`String`, `Vec<u8>`, the integer
///   types and arrays of them do; implement it for your own type or wrap a
///   `String`). This is best effort: copies made before decoding, such as the
///   request's bytes, are beyond its reach.
/// * Reading the value is explicit and easy to find in review:
///   [`expose_secret`](Secret::expose_secret).
///
/// A `Secret` deliberately does **not** implement `serde::Serialize`, so
/// putting one in a tool's result, in an error type that is serialized, or in
/// any other encoded output is a compile error, not a runtime redaction that
/// could be forgotten (and a `Secret` returned by a `#[tool]` is refused the
/// same way). To send something derived from a secret, expose it and encode
/// exactly what you mean to send.
///
/// ```compile_fail,E0277
/// use typed_mcp::secret::Secret;
///
/// #[derive(serde::Serialize)]
/// struct Reply {
///     key: Secret<String>, // error: `Secret<String>` does not implement `Serialize`
/// }
/// ```
pub struct Secret<T: Zeroize>(T);

impl<T: Zeroize> Secret<T> {
    /// Wraps a sensitive value.
    pub fn new(value: T) -> Self {
        Secret(value)
    }

    /// The value itself. Every read of a secret goes through this method, so
    /// the places that handle the plaintext are easy to find.
    pub fn expose_secret(&self) -> &T {
        &self.0
    }
}

impl<T: Zeroize> From<T> for Secret<T> {
    fn from(value: T) -> Self {
        Secret(value)
    }
}

impl<T: Zeroize> Drop for Secret<T> {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl<T: Zeroize> ZeroizeOnDrop for Secret<T> {}

impl<T: Zeroize + Clone> Clone for Secret<T> {
    fn clone(&self) -> Self {
        Secret(self.0.clone())
    }
}

/// The default of `T`, so `#[arg(default)]` works on an optional secret (the
/// schema still shows no `default`).
impl<T: Zeroize + Default> Default for Secret<T> {
    fn default() -> Self {
        Secret(T::default())
    }
}

impl<T: Zeroize> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTION_MARKER)
    }
}

impl<T: Zeroize> fmt::Display for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTION_MARKER)
    }
}

/// Decoded from `T`'s form. When `T` refuses the input, the error says so
/// without `T`'s own message, which could quote the value.
impl<'de, T: Zeroize + Deserialize<'de>> Deserialize<'de> for Secret<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer)
            .map(Secret)
            .map_err(|_| D::Error::custom(WITHHELD_DECODE_ERROR))
    }
}

/// `T`'s schema, inlined, plus `"writeOnly": true`, without `default` or
/// `examples`.
impl<T: Zeroize + JsonSchema> JsonSchema for Secret<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        format!("Secret_{}", T::schema_name()).into()
    }

    fn schema_id() -> Cow<'static, str> {
        format!("typed_mcp::Secret<{}>", T::schema_id()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = generator.subschema_for::<T>();
        let object = schema.ensure_object();
        object.remove("default");
        object.remove("examples");
        object.insert("writeOnly".into(), true.into());
        schema
    }
}

// ---------------------------------------------------------------------------
// Redactor
// ---------------------------------------------------------------------------

/// Why [`Redactor::new`] refused a set of secret values. The messages never
/// include a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RedactorError {
    /// A value is shorter than [`MIN_SECRET_CHARS`].
    #[error(
        "secret value #{index} is {chars} characters long; a registered secret needs at least \
         {MIN_SECRET_CHARS}, since redacting a shorter one would also erase ordinary text"
    )]
    TooShort {
        /// The value's position in the list given (from 0).
        index: usize,
        /// How many characters it has.
        chars: usize,
    },
    /// The values are too many or too long to build one search automaton.
    #[error("the secret values are too many or too long to search for: {0}")]
    TooLarge(String),
}

/// The set of secret values a server knows (API keys loaded at startup), and
/// the scan that removes them from text before a client or a log sees it.
///
/// Each value is searched for in every form it can take in output: as is, as
/// the content of a JSON string (once and twice escaped, since a text block
/// often carries JSON that is then encoded again), and as the content of a
/// Rust `Debug` string (how `tracing` prints string fields). Every occurrence,
/// overlapping ones included, becomes [`REDACTION_MARKER`].
///
/// Cloning is cheap (one `Arc`). An empty redactor costs nothing: its methods
/// return their input borrowed without scanning it.
///
/// Register values exactly as they appear in output: a key read from a file
/// usually needs its trailing newline trimmed first.
///
/// ```
/// use typed_mcp::secret::Redactor;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // An unset variable reads as "", which is skipped.
/// let upstream = std::env::var("UPSTREAM_KEY").unwrap_or_default();
/// let redactor = Redactor::new([upstream.as_str(), "hunter2-hunter2"])?;
/// let line = serde_json::to_vec(&serde_json::json!({"text": "password=hunter2-hunter2"}))?;
/// assert_eq!(&redactor.redact_json(&line)[..], br#"{"text":"password=[REDACTED]"}"#);
///
/// // Log lines: secrets in tracing fields never reach stderr.
/// let logs = redactor.clone();
/// let _writer = move || logs.writer(std::io::stderr());
/// // tracing_subscriber::fmt().with_writer(_writer).init();
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Default)]
pub struct Redactor {
    patterns: Option<Arc<Patterns>>,
}

struct Patterns {
    matcher: AhoCorasick,
    /// The longest form's length in bytes: how much of a stream's tail could
    /// still be the start of a secret.
    longest: usize,
    /// How many distinct secret values the set holds.
    secrets: usize,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.len())
            .finish()
    }
}

impl Redactor {
    /// The redactor for these secret values.
    ///
    /// Empty values are skipped (an unset environment variable read as `""`
    /// protects nothing and must not redact everything). A non-empty value
    /// shorter than [`MIN_SECRET_CHARS`] characters is refused rather than
    /// silently left unprotected.
    pub fn new<I, S>(values: I) -> Result<Self, RedactorError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut secrets = BTreeSet::new();
        for (index, value) in values.into_iter().enumerate() {
            let value = value.as_ref();
            if value.is_empty() {
                continue;
            }
            let chars = value.chars().count();
            if chars < MIN_SECRET_CHARS {
                return Err(RedactorError::TooShort { index, chars });
            }
            secrets.insert(value.to_owned());
        }
        Self::build(secrets)
    }

    /// The redactor for values of any length (empty ones skipped), for
    /// scrubbing one message of values known to be in it, where a short value
    /// garbling the message is better than echoing it. `None` when the values
    /// do not fit one automaton.
    pub(crate) fn for_values(values: impl IntoIterator<Item = String>) -> Option<Self> {
        let secrets: BTreeSet<String> = values.into_iter().filter(|v| !v.is_empty()).collect();
        Self::build(secrets).ok()
    }

    fn build(secrets: BTreeSet<String>) -> Result<Self, RedactorError> {
        let count = secrets.len();
        let mut forms = BTreeSet::new();
        for secret in &secrets {
            let json = json_escaped(secret);
            let debug = debug_escaped(secret);
            forms.insert(json_escaped(&json));
            forms.insert(json_escaped(&debug));
            forms.insert(secret.clone());
            forms.insert(json);
            forms.insert(debug);
        }
        Ok(Self::build_forms(forms.into_iter().collect(), count)?.unwrap_or_default())
    }

    fn build_forms(forms: Vec<String>, secrets: usize) -> Result<Option<Self>, RedactorError> {
        if forms.is_empty() {
            return Ok(None);
        }
        let longest = forms.iter().map(String::len).max().unwrap_or(0);
        // Standard semantics: overlapping matches are all reported, so two
        // secrets that overlap in the text are both removed.
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(&forms)
            .map_err(|e| RedactorError::TooLarge(e.to_string()))?;
        Ok(Some(Redactor {
            patterns: Some(Arc::new(Patterns {
                matcher,
                longest,
                secrets,
            })),
        }))
    }

    /// How many distinct secret values are registered.
    pub fn len(&self) -> usize {
        self.patterns.as_ref().map_or(0, |p| p.secrets)
    }

    /// True when no value is registered: every method returns its input as is.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_none()
    }

    /// True when both are the same redactor (clones of one another).
    pub(crate) fn same_as(&self, other: &Redactor) -> bool {
        match (&self.patterns, &other.patterns) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }

    /// Every occurrence in `haystack` (any form, overlaps merged), in order.
    fn ranges(&self, haystack: &[u8]) -> Vec<(usize, usize)> {
        let Some(patterns) = &self.patterns else {
            return Vec::new();
        };
        let mut ranges: Vec<(usize, usize)> = patterns
            .matcher
            .find_overlapping_iter(haystack)
            .map(|m| (m.start(), m.end()))
            .collect();
        merge(&mut ranges);
        ranges
    }

    /// `text` with every secret replaced by [`REDACTION_MARKER`]; borrowed
    /// when nothing matched (and unscanned when the set is empty).
    pub fn redact_str<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let ranges = self.ranges(text.as_bytes());
        if ranges.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (start, end) in ranges {
            // Patterns are UTF-8 and so is the text: matches start and end on
            // character boundaries.
            out.push_str(&text[last..start]);
            out.push_str(REDACTION_MARKER);
            last = end;
        }
        out.push_str(&text[last..]);
        Cow::Owned(out)
    }

    /// The bytes with every secret replaced by [`REDACTION_MARKER`], with no
    /// knowledge of their format (log output).
    fn redact_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let ranges = self.ranges(bytes);
        if ranges.is_empty() {
            return Cow::Borrowed(bytes);
        }
        Cow::Owned(splice(bytes, &ranges, |_| REDACTION_MARKER.as_bytes()))
    }

    /// An encoded JSON message with every secret removed; borrowed when
    /// nothing matched (and unscanned when the set is empty).
    ///
    /// A secret inside a string becomes `[REDACTED]` in that string (a match
    /// that cuts an escape sequence is widened to the whole sequence); one
    /// outside strings (a numeric key sent as a number) replaces the whole
    /// token with the string `"[REDACTED]"`. So the result is still valid JSON,
    /// except when a value happens to match across JSON structure (a value
    /// such as `a","b`): that text is redacted all the same, since a secret
    /// reaching the client is worse than a malformed message.
    pub fn redact_json<'a>(&self, json: &'a [u8]) -> Cow<'a, [u8]> {
        let ranges = self.ranges(json);
        if ranges.is_empty() {
            return Cow::Borrowed(json);
        }
        let strings = string_spans(json);
        let mut widened: Vec<(usize, usize, bool)> = ranges
            .into_iter()
            .map(|(start, end)| widen_in_json(json, &strings, start, end))
            .collect();
        widened.sort_unstable();
        let mut merged: Vec<(usize, usize, bool)> = Vec::with_capacity(widened.len());
        for (start, end, quoted) in widened {
            match merged.last_mut() {
                Some(last) if start < last.1 => {
                    last.1 = last.1.max(end);
                    last.2 |= quoted;
                }
                _ => merged.push((start, end, quoted)),
            }
        }
        let ranges: Vec<(usize, usize)> = merged.iter().map(|&(s, e, _)| (s, e)).collect();
        let quoted_marker = format!("\"{REDACTION_MARKER}\"");
        Cow::Owned(splice(json, &ranges, |i| {
            if merged[i].2 {
                quoted_marker.as_bytes()
            } else {
                REDACTION_MARKER.as_bytes()
            }
        }))
    }

    /// A writer that passes everything written to `inner` with the secrets
    /// removed. It buffers what is written and writes it, redacted, on
    /// `flush` and on drop, so a secret split across several `write` calls is
    /// still found. Made for one log event per writer:
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use typed_mcp::secret::Redactor;
    ///
    /// let redactor = Redactor::new(["sk-live-4f9a2c7e"])?;
    /// let make_writer = move || redactor.writer(std::io::stderr());
    /// // tracing_subscriber::fmt().with_writer(make_writer).init();
    /// # let _ = make_writer;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// A long-lived writer never holds more than 64 KiB plus the longest
    /// secret: past that it writes out all but the tail that could still be
    /// the start of a secret. A secret split by an explicit `flush` is not
    /// found, so flush between events, not inside one. With an empty set the
    /// writer writes straight through. Write errors during drop are ignored
    /// (there is no one to report them to).
    pub fn writer<W: Write>(&self, inner: W) -> RedactingWriter<W> {
        RedactingWriter {
            redactor: self.clone(),
            inner,
            buffer: Vec::new(),
        }
    }
}

/// The content of a JSON string holding `s` (no quotes), as `serde_json`
/// writes it.
fn json_escaped(s: &str) -> String {
    let quoted = serde_json::to_string(s).expect("a string always serializes");
    quoted[1..quoted.len() - 1].to_owned()
}

/// The content of `s`'s `Debug` form (no quotes).
fn debug_escaped(s: &str) -> String {
    let quoted = format!("{s:?}");
    quoted[1..quoted.len() - 1].to_owned()
}

/// Sorts and merges overlapping or touching ranges.
fn merge(ranges: &mut Vec<(usize, usize)>) {
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for &(start, end) in ranges.iter() {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    *ranges = merged;
}

/// `bytes` with each of the sorted, disjoint `ranges` replaced.
fn splice<'r>(
    bytes: &[u8],
    ranges: &[(usize, usize)],
    mut replacement: impl FnMut(usize) -> &'r [u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut last = 0;
    for (i, &(start, end)) in ranges.iter().enumerate() {
        out.extend_from_slice(&bytes[last..start]);
        out.extend_from_slice(replacement(i));
        last = end;
    }
    out.extend_from_slice(&bytes[last..]);
    out
}

/// The string literals of a JSON text, as `(opening quote, closing quote)`
/// byte positions (an unterminated string runs to the end).
fn string_spans(json: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < json.len() {
        if json[i] == b'"' {
            let open = i;
            i += 1;
            while i < json.len() && json[i] != b'"' {
                i += if json[i] == b'\\' { 2 } else { 1 };
            }
            let close = i.min(json.len());
            spans.push((open, close));
        }
        i += 1;
    }
    spans
}

/// The string literal whose quotes enclose byte `at` (quotes included).
fn string_at(strings: &[(usize, usize)], at: usize) -> Option<(usize, usize)> {
    let i = strings.partition_point(|&(open, _)| open <= at);
    let (open, close) = *strings.get(i.checked_sub(1)?)?;
    (at <= close).then_some((open, close))
}

/// A byte of a bare JSON token (number, `true`, ...): not structure, not
/// whitespace, not a quote.
fn is_token_byte(b: u8) -> bool {
    !matches!(
        b,
        b'{' | b'}' | b'[' | b']' | b',' | b':' | b'"' | b' ' | b'\t' | b'\n' | b'\r'
    )
}

/// Widens a match so that replacing it keeps the JSON well formed: inside a
/// string, to whole escape sequences (replaced by the marker); otherwise to
/// whole tokens (replaced by the quoted marker).
fn widen_in_json(
    json: &[u8],
    strings: &[(usize, usize)],
    mut start: usize,
    mut end: usize,
) -> (usize, usize, bool) {
    if let Some((open, close)) = string_at(strings, start)
        && start > open
        && end <= close
    {
        let mut i = open + 1;
        while i < close {
            let len = match (json[i], json.get(i + 1)) {
                (b'\\', Some(b'u')) => 6,
                (b'\\', _) => 2,
                _ => 1,
            };
            if start > i && start < i + len {
                start = i;
            }
            if end > i && end < i + len {
                end = i + len;
            }
            i += len;
        }
        return (start, end.min(close), false);
    }
    match string_at(strings, start) {
        Some((open, _)) => start = open,
        None => {
            while start > 0 && is_token_byte(json[start - 1]) {
                start -= 1;
            }
        }
    }
    match string_at(strings, end - 1) {
        Some((_, close)) => end = (close + 1).min(json.len()),
        None => {
            while end < json.len() && is_token_byte(json[end]) {
                end += 1;
            }
        }
    }
    (start, end, true)
}

// ---------------------------------------------------------------------------
// RedactingWriter
// ---------------------------------------------------------------------------

/// Past this many buffered bytes, a [`RedactingWriter`] writes out what can no
/// longer be part of an unfinished secret.
const SPILL_AT: usize = 64 * 1024;

/// A [`Write`] that removes a [`Redactor`]'s secrets from everything written
/// through it (see [`Redactor::writer`]).
pub struct RedactingWriter<W: Write> {
    redactor: Redactor,
    inner: W,
    buffer: Vec<u8>,
}

impl<W: Write> fmt::Debug for RedactingWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedactingWriter")
            .field("redactor", &self.redactor)
            .field("buffered", &self.buffer.len())
            .finish_non_exhaustive()
    }
}

impl<W: Write> RedactingWriter<W> {
    /// Writes out the whole buffer, redacted.
    fn write_buffer(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let buffer = std::mem::take(&mut self.buffer);
        let result = self.inner.write_all(&self.redactor.redact_bytes(&buffer));
        // Keep the allocation for the next event.
        self.buffer = buffer;
        self.buffer.clear();
        result
    }

    /// Writes out, redacted, all of the buffer but a tail that could be the
    /// start of a secret still being written.
    fn spill(&mut self) -> io::Result<()> {
        let Some(longest) = self.redactor.patterns.as_ref().map(|p| p.longest) else {
            return Ok(());
        };
        let ranges = self.redactor.ranges(&self.buffer);
        let mut cut = self.buffer.len().saturating_sub(longest - 1);
        // A match that crosses the cut is complete: emit all of it.
        for &(start, end) in &ranges {
            if start < cut && end > cut {
                cut = end;
            }
        }
        let before: Vec<(usize, usize)> = ranges.into_iter().filter(|r| r.1 <= cut).collect();
        let out = splice(&self.buffer[..cut], &before, |_| {
            REDACTION_MARKER.as_bytes()
        });
        self.buffer.drain(..cut);
        self.inner.write_all(&out)
    }
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.redactor.is_empty() {
            return self.inner.write(buf);
        }
        self.buffer.extend_from_slice(buf);
        if self.buffer.len() >= SPILL_AT {
            self.spill()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_buffer()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for RedactingWriter<W> {
    fn drop(&mut self) {
        let _ = self.write_buffer();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const KEY: &str = "sk-live-4f9a2c7e";

    fn redactor(values: &[&str]) -> Redactor {
        Redactor::new(values).expect("valid secrets")
    }

    #[test]
    fn a_secret_prints_as_the_marker() {
        let key = Secret::new(String::from(KEY));
        assert_eq!(format!("{key:?}"), REDACTION_MARKER);
        assert_eq!(key.to_string(), REDACTION_MARKER);
        assert_eq!(format!("{:?}", Some(key.clone())), "Some([REDACTED])");
        assert_eq!(key.expose_secret(), KEY);
    }

    #[test]
    fn a_secret_decodes_from_its_inner_form_and_hides_refusals() {
        let key: Secret<String> = serde_json::from_value(json!(KEY)).unwrap();
        assert_eq!(key.expose_secret(), KEY);
        let refused = serde_json::from_value::<Secret<u32>>(json!("4f9a2c7e-not-a-number"))
            .unwrap_err()
            .to_string();
        assert!(!refused.contains("4f9a2c7e"), "{refused}");
        assert!(refused.contains("withheld"), "{refused}");
    }

    #[test]
    fn a_secret_schema_is_write_only_without_examples() {
        let schema = schemars::schema_for!(Secret<String>).to_value();
        assert_eq!(schema["type"], "string");
        assert_eq!(schema["writeOnly"], true);
        let nested = schemars::schema_for!(Option<Secret<u8>>).to_value();
        assert_eq!(nested["writeOnly"], true);
        assert_eq!(nested["type"], json!(["integer", "null"]));
    }

    #[test]
    fn empty_values_are_skipped_and_short_ones_refused() {
        let empty = Redactor::new(["", ""]).unwrap();
        assert!(empty.is_empty());
        assert_eq!(empty.len(), 0);
        assert!(matches!(empty.redact_str("anything"), Cow::Borrowed(_)));
        let err = Redactor::new([KEY, "1234"]).unwrap_err();
        assert_eq!(err, RedactorError::TooShort { index: 1, chars: 4 });
        assert!(!err.to_string().contains("1234"), "{err}");
        // Characters, not bytes: eight two-byte letters are enough, four are not.
        assert_eq!(redactor(&["éééééééé"]).len(), 1);
        assert!(Redactor::new(["éééé"]).is_err());
        assert_eq!(redactor(&[KEY, KEY]).len(), 1);
    }

    #[test]
    fn text_is_borrowed_when_nothing_matches() {
        let r = redactor(&[KEY]);
        assert!(matches!(r.redact_str("nothing here"), Cow::Borrowed(_)));
        assert!(matches!(r.redact_json(b"{\"a\":1}"), Cow::Borrowed(_)));
        assert_eq!(
            r.redact_str(&format!("{KEY}:{KEY} and {KEY}")),
            "[REDACTED]:[REDACTED] and [REDACTED]"
        );
    }

    #[test]
    fn overlapping_secrets_leave_no_fragment() {
        let r = redactor(&["abcdefgh12", "defgh12345"]);
        assert_eq!(r.redact_str("x abcdefgh12345 y"), "x [REDACTED] y");
    }

    #[test]
    fn escaped_forms_are_found() {
        let secret = "pa\"ss\\wo\nrd\u{1b}";
        let r = redactor(&[secret]);
        // Raw, JSON once and twice, Debug, JSON of Debug.
        let json1 = serde_json::to_string(secret).unwrap();
        let json2 = serde_json::to_string(&json1).unwrap();
        let debug = format!("{secret:?}");
        for text in [
            format!("<{secret}>"),
            format!("<{json1}>"),
            format!("<{json2}>"),
            format!("<{debug}>"),
            serde_json::to_string(&debug).unwrap(),
        ] {
            let out = r.redact_str(&text);
            assert!(out.contains(REDACTION_MARKER), "{text:?} -> {out:?}");
            for fragment in ["pa", "wo", "rd"] {
                assert!(!out.contains(fragment), "{text:?} -> {out:?}");
            }
        }
    }

    #[test]
    fn redacted_json_stays_valid() {
        let secret = "pa\"ss\\wo\nrd-12345";
        let numeric = "1234567890";
        let r = redactor(&[secret, numeric]);
        let message = json!({
            "text": format!("the key is {secret}!"),
            "nested": json!({"k": secret}).to_string(),
            "pin": 1234567890_u64,
            "pins": [91234567890_u64, 5],
            numeric: "a key that is a secret"
        });
        let bytes = serde_json::to_vec(&message).unwrap();
        let out = r.redact_json(&bytes);
        let text = String::from_utf8(out.to_vec()).unwrap();
        assert!(!text.contains("wo"), "{text}");
        assert!(!text.contains("1234567890"), "{text}");
        let value: Value = serde_json::from_slice(&out).expect(&text);
        assert_eq!(value["text"], "the key is [REDACTED]!");
        assert_eq!(value["nested"], "{\"k\":\"[REDACTED]\"}");
        assert_eq!(value["pin"], REDACTION_MARKER);
        assert_eq!(value["pins"], json!([REDACTION_MARKER, 5]));
        assert_eq!(value[REDACTION_MARKER], "a key that is a secret");
    }

    #[test]
    fn a_match_cutting_an_escape_takes_the_whole_escape() {
        // The secret's raw form begins with `n`, the tail of the `\n` escape.
        let r = redactor(&["nabcdefgh"]);
        let bytes = serde_json::to_vec(&json!({"t": "x\nabcdefgh y"})).unwrap();
        let out = r.redact_json(&bytes);
        let value: Value = serde_json::from_slice(&out).expect("still JSON");
        assert_eq!(value["t"], "x[REDACTED] y");
    }

    #[test]
    fn the_writer_redacts_secrets_split_across_writes() {
        let r = redactor(&[KEY]);
        let mut sink = Vec::new();
        {
            let mut w = r.writer(&mut sink);
            w.write_all(b"key=sk-live-").unwrap();
            w.write_all(b"4f9a2c7e done\n").unwrap();
        }
        assert_eq!(sink, b"key=[REDACTED] done\n");
        let mut sink = Vec::new();
        let mut w = r.writer(&mut sink);
        w.write_all(KEY.as_bytes()).unwrap();
        w.flush().unwrap();
        drop(w);
        assert_eq!(sink, REDACTION_MARKER.as_bytes());
    }

    #[test]
    fn a_long_lived_writer_spills_without_cutting_a_secret() {
        let r = redactor(&[KEY]);
        let mut sink = Vec::new();
        {
            let mut w = r.writer(&mut sink);
            let filler = vec![b'.'; SPILL_AT - 5];
            w.write_all(&filler).unwrap();
            // The secret straddles the spill point, in three pieces.
            w.write_all(&KEY.as_bytes()[..3]).unwrap();
            w.write_all(&KEY.as_bytes()[3..9]).unwrap();
            assert!(w.buffer.len() < SPILL_AT, "the buffer was spilled");
            w.write_all(&KEY.as_bytes()[9..]).unwrap();
            w.write_all(b"\n").unwrap();
        }
        let text = String::from_utf8(sink).unwrap();
        assert!(
            text.ends_with(".[REDACTED]\n"),
            "{}",
            &text[text.len() - 40..]
        );
        assert_eq!(text.len(), SPILL_AT - 5 + REDACTION_MARKER.len() + 1);
    }

    #[test]
    fn an_empty_redactor_writes_straight_through() {
        let mut sink = Vec::new();
        let mut w = Redactor::default().writer(&mut sink);
        w.write_all(b"abc").unwrap();
        assert!(w.buffer.is_empty());
        drop(w);
        assert_eq!(sink, b"abc");
    }

    #[test]
    fn values_of_any_length_for_one_message() {
        let r = Redactor::for_values(["7".to_owned(), String::new()]).unwrap();
        assert_eq!(r.redact_str("got 17"), "got 1[REDACTED]");
        assert!(Redactor::for_values([String::new()]).unwrap().is_empty());
    }
}
