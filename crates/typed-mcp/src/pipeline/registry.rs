//! The in-flight registry's decisions, apart from the runtime that acts on
//! them: which call may start under an id, whether a finishing call still
//! owns its id (and so sends its answer), and what a cancellation takes.
//!
//! A [`Registry`] is plain data behind a lock its caller holds: the
//! connection keeps it in a `std::sync::Mutex`
//! ([`Connection`](crate::transport::Connection)'s in-flight state), the
//! model test in a `loom` mutex, so the model checks the code that runs.
//!
//! The rules, each taken under that one lock:
//!
//! - [`register`](Registry::register) refuses an id a call in flight holds
//!   (two live requests with one id could be told apart neither by the client
//!   nor by a cancellation), and otherwise gives the call a fresh
//!   [`Generation`].
//! - [`cancel`](Registry::cancel) removes the entry: whatever the call does
//!   next, it no longer owns its id.
//! - [`finish`](Registry::finish) removes the entry only if it is still the
//!   caller's generation and says whether to send the answer: a cancelled
//!   call sends nothing, and a cancelled call that finishes after a new call
//!   reused its id leaves the new call's entry alone.
//!
//! # The model test
//!
//! `registry::model` (compiled only with `--cfg loom`) races accept, finish,
//! cancel and reuse of an id through every interleaving `loom` finds within
//! two preemptions (about a second in release), with
//! the handler slot modelled on loom's atomics, and checks that every call
//! ends exactly once (answered or cancelled, never both), that a cancelled
//! call never answers, and that every slot comes back:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test -p typed-mcp --release --lib pipeline::registry
//! ```
//!
//! Its own target directory keeps the flag from rebuilding the usual one.

use std::collections::hash_map::Entry;

use foldhash::HashMap;
use std::hash::Hash;

/// Which registration of an id an entry is: an id can be reused once its
/// call has finished or been cancelled, and only the registration that
/// holds the entry may remove it when it finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Generation(u64);

/// Refusal of [`Registry::register`]: a call in flight already holds the id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Duplicate;

/// The calls in flight on one connection, by request id, each with what a
/// cancellation needs of it (`V`).
#[derive(Debug)]
pub(crate) struct Registry<K, V> {
    last_generation: u64,
    running: HashMap<K, (Generation, V)>,
}

impl<K, V> Default for Registry<K, V> {
    fn default() -> Self {
        Registry {
            last_generation: 0,
            running: HashMap::default(),
        }
    }
}

impl<K: Eq + Hash, V> Registry<K, V> {
    /// Enters a call under `id` with `entry`, or refuses it when a call in
    /// flight holds the id.
    pub(crate) fn register(&mut self, id: K, entry: V) -> Result<Generation, Duplicate> {
        match self.running.entry(id) {
            Entry::Occupied(_) => Err(Duplicate),
            Entry::Vacant(vacant) => {
                self.last_generation += 1;
                let generation = Generation(self.last_generation);
                vacant.insert((generation, entry));
                Ok(generation)
            }
        }
    }

    /// The entry of this registration, while it still holds its id (to
    /// complete it once the call's task exists).
    pub(crate) fn entry_mut(&mut self, id: &K, generation: Generation) -> Option<&mut V> {
        self.running
            .get_mut(id)
            .filter(|(held, _)| *held == generation)
            .map(|(_, entry)| entry)
    }

    /// A call ends: true when its registration still held the id (the entry
    /// is removed, and the caller sends the answer), false when a
    /// cancellation took it (the caller sends nothing; a newer call under
    /// the same id keeps its entry).
    pub(crate) fn finish(&mut self, id: &K, generation: Generation) -> bool {
        let ours = self
            .running
            .get(id)
            .is_some_and(|(held, _)| *held == generation);
        if ours {
            self.running.remove(id);
        }
        ours
    }

    /// Cancels the call holding `id`: its entry, for the caller to stop the
    /// call with; `None` when no call holds it (it finished, or never was).
    pub(crate) fn cancel(&mut self, id: &K) -> Option<V> {
        self.running.remove(id).map(|(_, entry)| entry)
    }

    /// The entries of the calls in flight.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &V> {
        self.running.values().map(|(_, entry)| entry)
    }

    /// The ids of the calls in flight.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &K> {
        self.running.keys()
    }

    /// The number of calls in flight.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.running.len()
    }

    /// Whether no call is in flight.
    pub(crate) fn is_empty(&self) -> bool {
        self.running.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_in_flight_is_refused_and_free_again_once_its_call_finished() {
        let mut registry = Registry::default();
        let first = registry.register(7, "first").unwrap();
        assert_eq!(registry.register(7, "again"), Err(Duplicate));
        assert!(registry.finish(&7, first));
        let second = registry.register(7, "second").unwrap();
        assert_ne!(first, second);
        assert_eq!(registry.len(), 1);
    }

    #[test]
    fn a_cancelled_call_sends_nothing_and_leaves_the_id_to_its_reuser() {
        let mut registry = Registry::default();
        let cancelled = registry.register(7, "cancelled").unwrap();
        assert_eq!(registry.cancel(&7), Some("cancelled"));
        assert_eq!(registry.cancel(&7), None, "a second cancel finds nothing");
        let reuser = registry.register(7, "reuser").unwrap();
        // The cancelled call's task finishes late: it neither answers nor
        // removes the entry of the call that reused its id.
        assert!(!registry.finish(&7, cancelled));
        assert_eq!(registry.entry_mut(&7, cancelled), None);
        assert_eq!(registry.entry_mut(&7, reuser).copied(), Some("reuser"));
        assert!(registry.finish(&7, reuser));
        assert!(!registry.finish(&7, reuser), "a call answers once");
        assert_eq!(registry.len(), 0);
    }

    #[test]
    fn a_finished_call_is_not_cancelled_and_others_stay_in_flight() {
        let mut registry = Registry::default();
        let one = registry.register(1, "one").unwrap();
        registry.register(2, "two").unwrap();
        assert!(registry.finish(&1, one));
        assert_eq!(registry.cancel(&1), None);
        assert_eq!(registry.ids().collect::<Vec<_>>(), [&2]);
        assert_eq!(registry.entries().collect::<Vec<_>>(), [&"two"]);
    }
}

#[cfg(all(test, loom))]
mod model;
