//! A field by position names no method.

use typed_mcp::prompts;

struct Desk;

fn main() {
    let desk = (Desk,);
    let _ = prompts![desk.0];
}
