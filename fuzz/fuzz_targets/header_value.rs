//! `decode_header_value` on arbitrary text.
//!
//! Properties: it never panics; a literal it accepts is the trimmed input, all
//! printable ASCII; and the `=?base64?…?=` sentinel of any text decodes to it.

#![no_main]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use libfuzzer_sys::fuzz_target;
use typed_mcp_core::router::decode_header_value;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(value) = decode_header_value(&text) {
        let trimmed = text.trim();
        let sentinel = trimmed.starts_with("=?base64?") && trimmed.ends_with("?=");
        if !sentinel {
            assert_eq!(value, trimmed);
            assert!(value.bytes().all(|b| b.is_ascii() && !b.is_ascii_control()));
        }
    }
    let wrapped = format!("=?base64?{}?=", STANDARD.encode(text.as_bytes()));
    assert_eq!(decode_header_value(&wrapped).as_deref(), Ok(&*text));
});
