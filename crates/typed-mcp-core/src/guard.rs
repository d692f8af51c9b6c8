//! Size and depth guards that run on raw bytes, before anything is parsed.

/// Limits applied to every inbound message, on every transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest accepted message in bytes (default 4 MiB).
    pub max_message_bytes: usize,
    /// Deepest accepted nesting of arrays and objects (default 128).
    pub max_depth: usize,
}

impl Limits {
    /// Sets the largest accepted message in bytes.
    #[must_use]
    pub fn with_max_message_bytes(mut self, max_message_bytes: usize) -> Self {
        self.max_message_bytes = max_message_bytes;
        self
    }

    /// Sets the deepest accepted nesting of arrays and objects.
    #[must_use]
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_message_bytes: 4 * 1024 * 1024,
            max_depth: 128,
        }
    }
}

/// Returns the nesting depth of the JSON text once it exceeds `max`, or `None`
/// when it stays within `max`.
///
/// This is a single pass over the bytes that tracks strings and escapes; it does
/// not validate the JSON (the parser does that next), it only guarantees that
/// the parser never recurses deeper than `max`.
pub fn depth_exceeds(bytes: &[u8], max: usize) -> Option<usize> {
    // Nesting deeper than `max` takes more than `max` opening brackets. A
    // short message (nearly every request: an envelope has three or four)
    // is told by counting them, a pass the compiler vectorizes, instead of
    // stepping through its strings. A long one is mostly string, which the
    // scan below skips faster than this counts.
    if bytes.len() <= COUNT_FIRST_UP_TO && opening_brackets(bytes) <= max {
        return None;
    }
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        at += 1;
        match b {
            // A string's body is skipped to its closing quote by a vectorized
            // search for `"` and `\` (a large text argument is most of a
            // large message), stepping over each escaped byte.
            b'"' => loop {
                match memchr::memchr2(b'"', b'\\', &bytes[at..]) {
                    None => return None,
                    Some(i) if bytes[at + i] == b'"' => {
                        at += i + 1;
                        break;
                    }
                    Some(i) => at += i + 2,
                }
                if at >= bytes.len() {
                    return None;
                }
            },
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(depth);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The longest message whose brackets are counted before it is scanned.
const COUNT_FIRST_UP_TO: usize = 4096;

/// How many `[` and `{` bytes `bytes` holds, in strings or not.
fn opening_brackets(bytes: &[u8]) -> usize {
    // `[` is `{` less 0x20, so with that bit set both are `{` and no other
    // byte is. A block of 255 cannot overflow its byte-sized tally, which
    // lets the compiler count sixteen bytes a step.
    bytes
        .chunks(255)
        .map(|block| {
            let tally = block
                .iter()
                .fold(0u8, |tally, &b| tally + u8::from(b | 0x20 == b'{'));
            usize::from(tally)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_nesting_outside_strings_only() {
        assert_eq!(depth_exceeds(br#"{"a":[[1]]}"#, 3), None);
        assert_eq!(depth_exceeds(br#"{"a":[[[1]]]}"#, 3), Some(4));
        assert_eq!(depth_exceeds(br#"{"a":"[[[[[[\"[[[["}"#, 1), None);
    }

    /// The byte-at-a-time scan the vectorized one must agree with.
    fn reference(bytes: &[u8], max: usize) -> Option<usize> {
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        for &b in bytes {
            if in_string {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > max {
                        return Some(depth);
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        None
    }

    #[test]
    fn strings_are_skipped_as_the_byte_scan_skips_them() {
        // Every string of up to 6 bytes (and many of 7 and 8) over an alphabet of the bytes that
        // matter, and each cut short: escapes at the end, escaped quotes and
        // backslashes, brackets inside and outside strings.
        let alphabet = [b'"', b'\\', b'[', b']', b'{', b'x'];
        let mut cases = 0;
        for len in 0..=8u32 {
            for n in 0..alphabet.len().pow(len) {
                let mut text = Vec::with_capacity(len as usize);
                let mut rest = n;
                for _ in 0..len {
                    text.push(alphabet[rest % alphabet.len()]);
                    rest /= alphabet.len();
                }
                for max in [0, 1, 2] {
                    assert_eq!(
                        depth_exceeds(&text, max),
                        reference(&text, max),
                        "{:?} max {max}",
                        String::from_utf8_lossy(&text)
                    );
                }
                cases += 1;
                if len > 6 && n > 100_000 {
                    break;
                }
            }
        }
        assert!(cases > 100_000);
    }

    #[test]
    fn short_and_long_messages_agree_with_the_byte_scan() {
        // Brackets inside strings count toward the short path's tally but
        // not toward the depth, on both sides of the length that picks it.
        for len in [COUNT_FIRST_UP_TO - 40, COUNT_FIRST_UP_TO + 40] {
            for depth in [2, 3, 4] {
                let mut text = "[".repeat(depth).into_bytes();
                text.extend_from_slice(br#""[[[[{{\"[""#);
                text.resize(len - depth, b' ');
                text.extend(std::iter::repeat_n(b']', depth));
                for max in [2, 3] {
                    assert_eq!(
                        depth_exceeds(&text, max),
                        reference(&text, max),
                        "{len} {depth} {max}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_hundred_thousand_brackets_stop_at_the_limit() {
        let deep = vec![b'['; 100_000];
        assert_eq!(depth_exceeds(&deep, 128), Some(129));
    }
}
