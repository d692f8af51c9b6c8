//! A type the macro cannot see through must still be a string (a trait error).

use typed_mcp::prompt;

struct Tone;

/// Draft a reply.
///
/// # Arguments
/// * `tone` - The tone.
#[prompt]
fn draft(tone: Tone) -> String {
    let _ = tone;
    String::new()
}

fn main() {}
