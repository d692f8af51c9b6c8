//! Parses an arbitrary template (the input's first line) and matches an
//! arbitrary URI (the rest) against it.
//!
//! Properties: neither `parse` nor `matches` panics; a match names each
//! variable once, in template order; and re-expanding the matched values into
//! the template (every byte but ASCII letters and digits percent-encoded) gives
//! a URI that matches again with the same values — for templates whose
//! literals hold no `%`: a literal `%` also occurs in every escape of the
//! expansion, so such a template has several splits of one URI (the matcher
//! takes the shortest first value) and the round trip may find another.

#![no_main]

use std::fmt::Write as _;

use libfuzzer_sys::fuzz_target;
use typed_mcp_core::uri_template::UriTemplate;

/// The template's parts: literal text and variable names, in order.
fn parts(source: &str) -> Vec<Result<&str, &str>> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            out.push(Ok(&rest[..open]));
        }
        let close = open
            + rest[open..]
                .find('}')
                .expect("a parsed template closes every {");
        let name = &rest[open + 1..close];
        out.push(Err(name.strip_prefix('+').unwrap_or(name)));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Ok(rest));
    }
    out
}

fn encode(value: &str, out: &mut String) {
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (source, uri) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(template) = UriTemplate::parse(source) else {
        return;
    };
    assert_eq!(template.as_str(), source);
    let names: Vec<&str> = template.variables().collect();
    let Some(values) = template.matches(uri) else {
        return;
    };
    let matched: Vec<&str> = values.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(matched, names, "a match names every variable in order");

    if parts(source)
        .iter()
        .any(|part| matches!(part, Ok(literal) if literal.contains('%')))
    {
        return;
    }
    let mut expanded = String::new();
    for part in parts(source) {
        match part {
            Ok(literal) => expanded.push_str(literal),
            Err(name) => {
                let (_, value) = values.iter().find(|(n, _)| n == name).expect("matched");
                encode(value, &mut expanded);
            }
        }
    }
    assert_eq!(
        template.matches(&expanded).as_ref(),
        Some(&values),
        "{source:?} matched {uri:?} as {values:?}; its expansion {expanded:?} does not match alike"
    );
});
