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
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_nesting_outside_strings_only() {
        assert_eq!(depth_exceeds(br#"{"a":[[1]]}"#, 3), None);
        assert_eq!(depth_exceeds(br#"{"a":[[[1]]]}"#, 3), Some(4));
        assert_eq!(depth_exceeds(br#"{"a":"[[[[[[\"[[[["}"#, 1), None);
    }

    #[test]
    fn a_hundred_thousand_brackets_stop_at_the_limit() {
        let deep = vec![b'['; 100_000];
        assert_eq!(depth_exceeds(&deep, 128), Some(129));
    }
}
