//! Sealed `requestState` (typed_mcp::state) against arbitrary and mutated tokens.
//!
//! Input format, one field a line (missing lines are empty):
//! 1. the state to seal;
//! 2. binding A: `method<TAB>target<TAB>arguments JSON<TAB>principal` (a
//!    missing arguments field or one that is not a JSON object means no
//!    arguments; a missing principal field means no principal);
//! 3. binding B, the same way;
//! 4. an arbitrary token;
//! 5. mutations of A's sealed token: byte pairs (position, xor).
//!
//! Properties: nothing panics; the arbitrary token never opens; A's token opens
//! with A (to the state), is refused once expired, and is refused with B unless
//! B is the same binding; a mutated token never opens.

#![no_main]

use std::time::{Duration, UNIX_EPOCH};

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use typed_mcp::state::{StateBinding, StateError, StateKeys};

struct Binding {
    method: String,
    target: String,
    arguments: Option<Map<String, Value>>,
    principal: Option<String>,
}

impl Binding {
    fn parse(line: &str) -> Binding {
        let mut fields = line.split('\t');
        let method = fields.next().unwrap_or_default().to_owned();
        let target = fields.next().unwrap_or_default().to_owned();
        let arguments = fields
            .next()
            .and_then(|a| serde_json::from_str::<Map<String, Value>>(a).ok());
        let principal = fields.next().map(str::to_owned);
        Binding {
            method,
            target,
            arguments,
            principal,
        }
    }

    fn state_binding(&self) -> StateBinding<'_> {
        StateBinding {
            method: &self.method,
            target: &self.target,
            arguments: self.arguments.as_ref(),
            principal: self.principal.as_deref(),
        }
    }

    /// The same request: equal fields, arguments equal as JSON values.
    fn same(&self, other: &Binding) -> bool {
        self.method == other.method
            && self.target == other.target
            && self.arguments == other.arguments
            && self.principal == other.principal
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let mut line = || lines.next().unwrap_or_default();
    let state = line().to_owned();
    let a = Binding::parse(line());
    let b = Binding::parse(line());
    let arbitrary = line().to_owned();
    let mutations = line().as_bytes().to_vec();

    let keys = StateKeys::from_secrets(&[[7; 32], [9; 32]]);
    let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let ttl = Duration::from_secs(60);
    let (da, db) = (a.state_binding().digest(), b.state_binding().digest());

    assert_eq!(
        keys.open(&arbitrary, &da, now),
        Err(StateError::Invalid),
        "an arbitrary token does not open"
    );

    let token = keys.seal(&state, &da, now, ttl);
    assert_eq!(keys.open(&token, &da, now).as_deref(), Ok(state.as_str()));
    assert_eq!(
        keys.open(&token, &da, now + ttl + Duration::from_millis(1)),
        Err(StateError::Expired)
    );
    // Only the second key opens too (rotation); a key set without either does not.
    let rotated = StateKeys::from_secrets(&[[1; 32], [7; 32]]);
    assert_eq!(
        rotated.open(&token, &da, now).as_deref(),
        Ok(state.as_str())
    );
    assert_eq!(
        StateKeys::from_secrets(&[[9; 32]]).open(&token, &da, now),
        Err(StateError::Invalid)
    );

    if a.same(&b) {
        assert_eq!(keys.open(&token, &db, now).as_deref(), Ok(state.as_str()));
    } else {
        assert_eq!(
            keys.open(&token, &db, now),
            Err(StateError::Invalid),
            "a token sealed for {:?} opens for {:?}",
            a.state_binding(),
            b.state_binding()
        );
    }

    let mut mutated = token.clone().into_bytes();
    for pair in mutations.chunks_exact(2) {
        let at = usize::from(pair[0]) % mutated.len();
        mutated[at] ^= pair[1];
    }
    if let Ok(mutated) = String::from_utf8(mutated) {
        if mutated != token {
            assert_eq!(
                keys.open(&mutated, &da, now),
                Err(StateError::Invalid),
                "a mutated token does not open"
            );
        }
    }
});
