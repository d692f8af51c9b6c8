//! Newline-delimited JSON framing with a size limit that never buffers an
//! oversized line: its bytes are counted and discarded as they arrive.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One inbound line.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// The length of the last line longer than one buffer fill: room taken
    /// at once for the next such line, which would otherwise be copied at
    /// every doubling of its buffer (about its own length in copies).
    long_line: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        LineReader {
            reader,
            max,
            long_line: 0,
        }
    }

    /// The next line, or `None` at end of input.
    pub(crate) async fn next(&mut self) -> io::Result<Option<Frame>> {
        let mut line = Vec::new();
        let mut discarded: Option<usize> = None;
        // Whether the last byte seen of the line is a `\r`: a discarded line's
        // length excludes its `\r\n` ending as a kept line's does.
        let mut ends_in_cr = false;
        // Whether the line is kept and outlasted a buffer fill.
        let mut long = false;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                let discarded = discarded.map(|len| len - usize::from(ends_in_cr));
                return Ok(
                    (discarded.is_some() || !line.is_empty()).then(|| self.finish(line, discarded))
                );
            }
            // A vectorized search: a large message is mostly one long line.
            let (chunk, done) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if let Some(&last) = chunk.last() {
                ends_in_cr = last == b'\r';
            }
            // One byte beyond the limit is buffered: it may be the `\r` of a
            // `\r\n` ending, which does not count against the limit.
            match &mut discarded {
                Some(len) => *len += chunk.len(),
                None if line.len() + chunk.len() > self.max + 1 => {
                    discarded = Some(line.len() + chunk.len());
                    line = Vec::new();
                }
                None => {
                    if done.is_none() && line.is_empty() {
                        line.reserve(self.long_line.max(chunk.len()));
                    }
                    long |= done.is_none();
                    line.extend_from_slice(chunk);
                }
            }
            let consumed = done.unwrap_or(chunk.len());
            self.reader.consume(consumed);
            if done.is_some() {
                if long && discarded.is_none() {
                    self.long_line = line.len();
                }
                let discarded = discarded.map(|len| len - usize::from(ends_in_cr));
                return Ok(Some(self.finish(line, discarded)));
            }
        }
    }
}

impl<R> LineReader<R> {
    fn finish(&self, mut line: Vec<u8>, discarded: Option<usize>) -> Frame {
        if let Some(len) = discarded {
            return Frame::Oversized(len);
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.len() > self.max {
            Frame::Oversized(line.len())
        } else {
            Frame::Line(line)
        }
    }
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
    async fn lines_longer_or_shorter_than_the_last_long_one_read_whole() {
        let lengths = [5_000, 7, 12_000, 3_000, 0, 12_001, 40];
        let mut input = Vec::new();
        for (i, &len) in lengths.iter().enumerate() {
            input.extend(std::iter::repeat_n(b'a' + i as u8, len));
            input.push(b'\n');
        }
        let expected: Vec<Frame> = lengths
            .iter()
            .enumerate()
            .map(|(i, &len)| Frame::Line(vec![b'a' + i as u8; len]))
            .collect();
        assert_eq!(frames(&input, 20_000).await, expected);
        // Over the limit, the line after a long one is measured, not kept.
        let mut limited = expected;
        limited[5] = Frame::Oversized(12_001);
        assert_eq!(frames(&input, 12_000).await, limited);
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
    async fn a_line_of_exactly_the_limit_is_kept_whatever_its_ending() {
        assert_eq!(
            frames(b"0123456789\n0123456789\r\n0123456789", 10).await,
            vec![Frame::Line(b"0123456789".to_vec()); 3]
        );
        assert_eq!(
            frames(b"0123456789A\r\n", 10).await,
            vec![Frame::Oversized(11)]
        );
    }

    /// Found by the `stdio_framing` fuzz target: a discarded line counted its
    /// `\r` (the answer said 291 bytes for a 290-byte message).
    #[tokio::test]
    async fn an_oversized_line_is_measured_without_its_crlf_ending() {
        for input in [&b"0123456789ABCDEF\r\nok\n"[..], b"0123456789ABCDEF\r"] {
            let frames = frames(input, 10).await;
            assert_eq!(frames[0], Frame::Oversized(16), "{input:?}");
        }
        // A `\r` inside the line counts; only the ending's is dropped.
        assert_eq!(
            frames(b"0123456789\rABCDE\n", 10).await,
            vec![Frame::Oversized(16)]
        );
    }
}
