//! The stdio transport (`Server::serve_io`) over arbitrary byte streams
//! delivered in arbitrary pieces.
//!
//! Input format: the first 8 bytes seed the piece sizes (1 to 300 bytes each);
//! the rest is the stream. The server's line limit is 256 bytes.
//!
//! Properties: nothing panics and the server ends at end of input; every line
//! it writes is one JSON-RPC 2.0 object; it never writes more lines than the
//! stream has non-blank or oversized lines; each line over the limit is answered exactly
//! once, with the oversized error for its length; and how the stream was cut
//! into pieces changes nothing (the same answers as one piece).

#![no_main]

#[path = "serve_io.rs"]
mod serve_io;

use std::io;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};
use typed_mcp::Server;
use typed_mcp_core::router::oversized_answer;

const MAX_LINE: usize = 256;

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        Server::new("fuzz-stdio", "0.0.0")
            .max_message_bytes(MAX_LINE)
            .build()
            .expect("the fuzz server builds")
    })
}

/// Yields `data` in pieces whose sizes come from a xorshift generator.
struct Pieces {
    data: Vec<u8>,
    at: usize,
    /// `None`: everything in one piece.
    state: Option<u64>,
}

impl AsyncRead for Pieces {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let size = match &mut this.state {
            Some(state) => {
                *state ^= *state << 13;
                *state ^= *state >> 7;
                *state ^= *state << 17;
                1 + (*state % 300) as usize
            }
            None => this.data.len(),
        };
        let end = (this.at + size)
            .min(this.data.len())
            .min(this.at + buf.remaining());
        buf.put_slice(&this.data[this.at..end]);
        this.at = end;
        Poll::Ready(Ok(()))
    }
}

fn serve(data: &[u8], seed: Option<u64>) -> Vec<Vec<u8>> {
    let input = Pieces {
        data: data.to_vec(),
        at: 0,
        state: seed,
    };
    let bytes = serve_io::serve(server(), input);
    assert!(
        bytes.is_empty() || bytes.ends_with(b"\n"),
        "a partial line was written"
    );
    let mut lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    lines.pop();
    lines
}

/// The stream's lines as the transport must frame them: split at `\n`, one
/// trailing `\r` dropped, the last line kept when it has no `\n`.
fn reference_lines(data: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect()
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 8 {
        return;
    }
    // Zero would stay zero (pieces of one byte); any other seed cycles.
    let seed = u64::from_le_bytes(input[..8].try_into().unwrap()).max(1);
    let data = &input[8..];
    let answers = serve(data, Some(seed));

    let lines = reference_lines(data);
    // A blank line is skipped, unless it is over the limit: the transport
    // discards an oversized line unread, so it cannot know it was blank.
    let answerable = lines
        .iter()
        .filter(|l| l.len() > MAX_LINE || !l.iter().all(u8::is_ascii_whitespace))
        .count();
    assert!(
        answers.len() <= answerable,
        "{} answers to {answerable} lines",
        answers.len()
    );
    for answer in &answers {
        let value: Value = serde_json::from_slice(answer).expect("every answer is JSON");
        assert_eq!(value["jsonrpc"], "2.0", "{value}");
    }
    // Each oversized line has its answer, once per such line.
    let mut expected: Vec<Vec<u8>> = lines
        .iter()
        .filter(|l| l.len() > MAX_LINE)
        .map(|l| oversized_answer(l.len(), MAX_LINE).body.to_vec())
        .collect();
    let mut oversized: Vec<Vec<u8>> = answers
        .iter()
        .filter(|a| expected.contains(a))
        .cloned()
        .collect();
    expected.sort();
    oversized.sort();
    assert_eq!(
        oversized,
        expected,
        "oversized lines answered once each; all answers: {:?}",
        answers
            .iter()
            .map(|a| String::from_utf8_lossy(a))
            .collect::<Vec<_>>()
    );

    // Cut differently (one piece), the answers are the same.
    let mut whole = serve(data, None);
    let mut pieces = answers;
    whole.sort();
    pieces.sort();
    assert_eq!(pieces, whole, "the piece sizes changed the answers");
});
