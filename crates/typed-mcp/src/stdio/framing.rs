//! Newline-delimited JSON framing with a size limit that never buffers an
//! oversized line: its bytes are counted and discarded as they arrive.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One inbound line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A line within the limit, without its `\n` (or `\r\n`).
    Line(Vec<u8>),
    /// A line longer than the limit, discarded; its length in bytes.
    Oversized(usize),
}

/// Reads lines up to `max` bytes each.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    reader: R,
    max: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        LineReader { reader, max }
    }

    /// The next line, or `None` at end of input.
    pub(crate) async fn next(&mut self) -> io::Result<Option<Frame>> {
        let mut line = Vec::new();
        let mut discarded: Option<usize> = None;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(match (discarded, line.is_empty()) {
                    (Some(len), _) => Some(Frame::Oversized(len)),
                    (None, true) => None,
                    (None, false) => Some(Frame::Line(trim_cr(line))),
                });
            }
            let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            match &mut discarded {
                Some(len) => *len += chunk.len(),
                None if line.len() + chunk.len() > self.max => {
                    discarded = Some(line.len() + chunk.len());
                    line = Vec::new();
                }
                None => line.extend_from_slice(chunk),
            }
            let consumed = done.unwrap_or(chunk.len());
            self.reader.consume(consumed);
            if done.is_some() {
                return Ok(Some(match discarded {
                    Some(len) => Frame::Oversized(len),
                    None => Frame::Line(trim_cr(line)),
                }));
            }
        }
    }
}

fn trim_cr(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        // A tiny buffer exercises lines that span many reads.
        let reader = tokio::io::BufReader::with_capacity(3, input);
        let mut lines = LineReader::new(reader, max);
        let mut out = Vec::new();
        while let Some(frame) = lines.next().await.unwrap() {
            out.push(frame);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_strips_carriage_returns() {
        assert_eq!(
            frames(b"ab\r\ncd\nlast", 10).await,
            vec![
                Frame::Line(b"ab".to_vec()),
                Frame::Line(b"cd".to_vec()),
                Frame::Line(b"last".to_vec())
            ]
        );
    }

    #[tokio::test]
    async fn oversized_lines_are_measured_and_skipped() {
        assert_eq!(
            frames(b"0123456789ABC\nok\n0123456789ABC", 10).await,
            vec![
                Frame::Oversized(13),
                Frame::Line(b"ok".to_vec()),
                Frame::Oversized(13)
            ]
        );
    }

    #[tokio::test]
    async fn a_line_of_exactly_the_limit_is_kept() {
        assert_eq!(
            frames(b"0123456789\n", 10).await,
            vec![Frame::Line(b"0123456789".to_vec())]
        );
    }
}
