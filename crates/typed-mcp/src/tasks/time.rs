//! ISO 8601 timestamps of task records (UTC, milliseconds).

/// `ms` since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`: the receipts'
/// format, so a task's times and its receipt's read alike.
pub(crate) fn iso8601(ms: u64) -> String {
    crate::receipt::rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::iso8601;

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century year divisible by 400).
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(1_798_761_599_999), "2026-12-31T23:59:59.999Z");
        assert_eq!(iso8601(1_764_592_496_123), "2025-12-01T12:34:56.123Z");
    }
}
