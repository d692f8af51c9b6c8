use typed_mcp::tool;

fn open_ticket(_id: &str, _context: &()) -> Result<(), String> {
    Ok(())
}

/// Close a ticket.
///
/// # Arguments
/// * `id` - The ticket (its length is checked by the schema).
/// * `note` - Why.
/// * `tags` - Labels.
#[tool]
fn close(
    #[garde(length(min = 3), custom(open_ticket))] id: String,
    #[garde(ascii)] note: String,
    #[garde(inner(length(max = 9), alphanumeric))] tags: Vec<String>,
) {
    let _ = (id, note, tags);
}

fn main() {}
