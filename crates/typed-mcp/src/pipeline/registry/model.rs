//! The model test of the in-flight registry and the handler slot, run through
//! every interleaving `loom` finds within two preemptions (the command is in
//! the parent module's docs).
//!
//! The registry is the real [`Registry`], behind a loom mutex. What the
//! runtime does around it is modelled as the pipeline and the transport do
//! it (`pipeline/mod.rs`'s call task, `Connection::cancel` and `drain`):
//!
//! - a call's task is a loom thread, spawned while the reader holds the
//!   registry's lock, as the real task is;
//! - an abort (the call's `CancellationToken` and `AbortHandle`) is a flag the
//!   task looks at where the real future may be dropped: while it waits for
//!   a slot, while its handler runs, and before it looks for its entry;
//! - the handler slot (a tokio semaphore permit) is a counter on loom's
//!   atomics and a guard that gives it back on drop, as the permit does; a
//!   `blocking` handler hands its guard to a thread of its own, which keeps
//!   it until the work returns, even once the call was cancelled;
//! - the answer is a line in a log, written only when
//!   [`finish`](Registry::finish) said the call still owned its id.
//!
//! Every model then checks that each accepted call ended exactly once
//! (answered, or cancelled, never both: so never two answers for one call
//! and never an answer after a cancellation), that a refused duplicate did
//! neither, that the registry is empty, and that every slot came back.

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread::{self, JoinHandle};

use super::{Duplicate, Generation, Registry};

/// `max_concurrent` of the model's server: one slot, so calls contend for it.
const SLOTS: usize = 1;

/// The handler slots (the server's `Semaphore`).
struct Slots {
    free: AtomicUsize,
}

/// One slot held (an `OwnedSemaphorePermit`): given back when dropped.
struct Permit(Arc<Slots>);

impl Slots {
    fn try_acquire(slots: &Arc<Slots>) -> Option<Permit> {
        let mut free = slots.free.load(Ordering::SeqCst);
        loop {
            if free == 0 {
                return None;
            }
            match slots
                .free
                .compare_exchange(free, free - 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return Some(Permit(slots.clone())),
                Err(now) => free = now,
            }
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.free.fetch_add(1, Ordering::SeqCst);
    }
}

/// What a cancellation takes of a call: its number (for the log) and the flag
/// standing for its cancellation token and abort handle.
type Entry = (usize, Arc<AtomicBool>);

/// What each call (by number) came to.
#[derive(Default, Debug)]
struct Log {
    answered: Vec<usize>,
    cancelled: Vec<usize>,
    refused: Vec<usize>,
}

/// How a call's handler works.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Work {
    /// An async handler: it holds the slot in its own future.
    Async,
    /// `blocking` work: the slot goes along to the work's thread.
    Blocking,
}

/// One connection: its registry, the server's slots, and what was sent.
struct Connection {
    in_flight: Mutex<Registry<u32, Entry>>,
    slots: Arc<Slots>,
    log: Mutex<Log>,
    /// The tasks spawned (and the blocking threads they left), joined at the end.
    threads: Mutex<Vec<JoinHandle<Option<JoinHandle<()>>>>>,
}

impl Connection {
    fn new() -> Arc<Connection> {
        Arc::new(Connection {
            in_flight: Mutex::new(Registry::default()),
            slots: Arc::new(Slots {
                free: AtomicUsize::new(SLOTS),
            }),
            log: Mutex::new(Log::default()),
            threads: Mutex::new(Vec::new()),
        })
    }

    /// `Connection::start`'s registration: the task is spawned under the lock.
    fn accept(this: &Arc<Connection>, id: u32, call: usize, work: Work) -> bool {
        let mut in_flight = this.in_flight.lock().unwrap();
        let abort = Arc::new(AtomicBool::new(false));
        match in_flight.register(id, (call, abort.clone())) {
            Err(Duplicate) => {
                drop(in_flight);
                this.log.lock().unwrap().refused.push(call);
                false
            }
            Ok(generation) => {
                let connection = this.clone();
                let task = thread::spawn(move || connection.run(id, call, generation, abort, work));
                this.threads.lock().unwrap().push(task);
                true
            }
        }
    }

    /// `Connection::cancel`: the entry is taken under the lock, the call
    /// stopped after.
    fn cancel(&self, id: u32) -> bool {
        let taken = self.in_flight.lock().unwrap().cancel(&id);
        match taken {
            Some((call, abort)) => {
                self.log.lock().unwrap().cancelled.push(call);
                abort.store(true, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    /// `Connection::drain_within` past its deadline: the ids in flight are
    /// read under the lock, then each is cancelled on its own.
    fn drain(&self) {
        let stuck: Vec<u32> = self.in_flight.lock().unwrap().ids().copied().collect();
        for id in stuck {
            self.cancel(id);
        }
    }

    /// The call's task. Returns the thread a blocking handler left behind.
    fn run(
        &self,
        id: u32,
        call: usize,
        generation: Generation,
        abort: Arc<AtomicBool>,
        work: Work,
    ) -> Option<JoinHandle<()>> {
        let aborted = || abort.load(Ordering::SeqCst);
        // Waiting for a slot: an abort drops the task holding none.
        let permit = loop {
            if aborted() {
                return None;
            }
            if let Some(permit) = Slots::try_acquire(&self.slots) {
                break permit;
            }
            thread::yield_now();
        };
        let mut left_behind = None;
        match work {
            Work::Async => {
                // The handler awaits something: an abort drops its future
                // there, and the permit with it.
                thread::yield_now();
                if aborted() {
                    return None;
                }
                drop(permit);
            }
            Work::Blocking => {
                let done = Arc::new(AtomicBool::new(false));
                let returned = done.clone();
                left_behind = Some(thread::spawn(move || {
                    let _permit = permit;
                    returned.store(true, Ordering::SeqCst);
                }));
                // The call awaits the thread; an abort drops only the wait.
                while !done.load(Ordering::SeqCst) {
                    if aborted() {
                        return left_behind;
                    }
                    thread::yield_now();
                }
            }
        }
        if aborted() {
            return left_behind;
        }
        let ours = self.in_flight.lock().unwrap().finish(&id, generation);
        if ours {
            self.log.lock().unwrap().answered.push(call);
        }
        left_behind
    }

    /// Joins every thread, checks the invariants every model shares, and
    /// returns the log.
    fn finish(&self, accepted: &[usize]) -> Log {
        loop {
            let Some(task) = self.threads.lock().unwrap().pop() else {
                break;
            };
            if let Some(blocking) = task.join().unwrap() {
                blocking.join().unwrap();
            }
        }
        let log = std::mem::take(&mut *self.log.lock().unwrap());
        for call in accepted {
            let answers = log.answered.iter().filter(|c| *c == call).count();
            let cancels = log.cancelled.iter().filter(|c| *c == call).count();
            assert_eq!(
                answers + cancels,
                1,
                "call {call} must end exactly once (answered or cancelled): {log:?}"
            );
        }
        for call in &log.refused {
            assert!(
                !log.answered.contains(call) && !log.cancelled.contains(call),
                "a refused call {call} never ran: {log:?}"
            );
        }
        assert_eq!(self.in_flight.lock().unwrap().len(), 0, "an entry was left");
        assert_eq!(
            self.slots.free.load(Ordering::SeqCst),
            SLOTS,
            "a slot was lost: {log:?}"
        );
        log
    }
}

/// Runs `model` through its interleavings with at most two preemptions
/// each (the bound loom recommends: most races need no more, and the
/// unbounded search of the four-thread models takes many minutes).
fn explore(model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(model);
}

#[test]
fn a_cancellation_racing_the_calls_finish_leaves_one_outcome() {
    explore(|| {
        let connection = Connection::new();
        assert!(Connection::accept(&connection, 1, 0, Work::Async));
        connection.cancel(1);
        connection.finish(&[0]);
    });
}

#[test]
fn an_id_reused_after_its_cancellation_answers_once_for_the_new_call() {
    explore(|| {
        let connection = Connection::new();
        assert!(Connection::accept(&connection, 1, 0, Work::Async));
        let cancelled = connection.cancel(1);
        // Once the first call lost its entry (cancelled, or finished before
        // the cancellation), the id is free again.
        assert!(Connection::accept(&connection, 1, 1, Work::Async));
        let log = connection.finish(&[0, 1]);
        assert!(
            log.answered.contains(&1),
            "the reusing call answers: {log:?}"
        );
        if cancelled {
            assert_eq!(log.answered, [1], "only the reusing call answers: {log:?}");
        }
    });
}

#[test]
fn a_duplicate_is_refused_while_the_first_call_holds_its_id() {
    explore(|| {
        let connection = Connection::new();
        assert!(Connection::accept(&connection, 1, 0, Work::Async));
        let accepted = Connection::accept(&connection, 1, 1, Work::Async);
        let log = connection.finish(if accepted { &[0, 1] } else { &[0] });
        assert_eq!(log.refused.is_empty(), accepted, "{log:?}");
        assert!(log.answered.contains(&0), "{log:?}");
    });
}

#[test]
fn blocking_work_keeps_its_slot_past_a_cancellation_and_then_returns_it() {
    explore(|| {
        let connection = Connection::new();
        assert!(Connection::accept(&connection, 1, 0, Work::Blocking));
        connection.cancel(1);
        assert!(Connection::accept(&connection, 2, 1, Work::Async));
        let log = connection.finish(&[0, 1]);
        assert!(log.answered.contains(&1), "{log:?}");
    });
}

#[test]
fn a_drain_racing_the_reader_and_the_calls_leaves_one_outcome_each() {
    explore(|| {
        let connection = Connection::new();
        assert!(Connection::accept(&connection, 1, 0, Work::Async));
        let drainer = {
            let connection = connection.clone();
            thread::spawn(move || connection.drain())
        };
        let reused = connection.cancel(1) && Connection::accept(&connection, 1, 1, Work::Async);
        drainer.join().unwrap();
        connection.finish(if reused { &[0, 1] } else { &[0] });
    });
}
