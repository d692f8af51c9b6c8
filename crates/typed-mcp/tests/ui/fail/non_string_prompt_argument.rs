use typed_mcp::prompt;

struct Tone;

/// Draft a reply.
///
/// # Arguments
/// * `count` - How many drafts.
/// * `formal` - Whether to be formal.
/// * `tone` - The tone.
#[prompt]
fn draft(count: i32, formal: Option<bool>, tone: Tone) -> String {
    let _ = (count, formal, tone);
    String::new()
}

fn main() {}
