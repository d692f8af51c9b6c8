//! A method is bound to an `Arc<T>` or `&Arc<T>` (shared) or to a `T: Clone`
//! or `&T` (cloned), from any place expression.

use std::sync::Arc;

use typed_mcp::{tool, tools};

#[derive(Clone)]
struct Clock;

struct Desk;

impl Clock {
    /// The time.
    #[tool]
    fn now(&self) -> u64 {
        0
    }
}

impl Desk {
    /// Open tickets.
    #[tool]
    async fn open(&self) -> u32 {
        0
    }
}

struct State {
    desk: Arc<Desk>,
    clock: Clock,
}

impl State {
    fn tools(&self) -> Vec<typed_mcp::declare::ToolDecl> {
        tools![self.desk.open, self.clock.now]
    }
}

fn main() {
    let state = State {
        desk: Arc::new(Desk),
        clock: Clock,
    };
    let desk = Arc::new(Desk);
    let clock = Clock;
    let all = tools![desk.open, clock.now, state.desk.open, state.clock.now];
    assert_eq!(all.len() + state.tools().len(), 6);
    // Through references too: `&Arc<T>` is shared, `&T` is cloned.
    let desk_ref: &Arc<Desk> = &desk;
    let clock_ref: &Clock = &clock;
    assert_eq!(tools![desk_ref.open, clock_ref.now].len(), 2);
    // Still usable afterwards: the Arc was cloned, the value cloned.
    let _still: (Arc<Desk>, Clock) = (desk, clock);
}
