//! The ticket store: one SQLite file in WAL mode, full-text search through an
//! FTS5 index kept in sync by triggers, a migration and demo data on first
//! start.
//!
//! SQLite allows one writer at a time. Rather than let concurrent calls race for
//! the write lock (and surface `database is locked` when a busy timeout runs
//! out), every write goes through one dedicated writer thread that owns the only
//! writing connection, in arrival order. Reads run on tokio's blocking pool over
//! a small pool of read-only connections; WAL lets them proceed while the writer
//! commits. Nothing here blocks the async executor.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};
use tokio::sync::oneshot;

use crate::model::{Comment, DeskError, SearchHit, Status, Ticket, TicketId};

/// How long a connection waits for a lock held by another process (a second
/// server on the same file, a backup) before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Idle read connections kept open for the next read.
const IDLE_READERS: usize = 4;

/// The schema version this build writes (`PRAGMA user_version`).
const SCHEMA_VERSION: i64 = 1;

/// A job for the writer thread.
type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// The ticket store. Cheap to clone: clones share the writer and the readers.
#[derive(Clone)]
pub(crate) struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    writer: mpsc::Sender<Job>,
    readers: Mutex<Vec<Connection>>,
}

impl Store {
    /// Opens (creating if needed) the database at `path`, migrates it and seeds
    /// the demo tickets on first start, and starts the writer thread.
    pub(crate) fn open(path: impl AsRef<Path>) -> Result<Store, DeskError> {
        let path = path.as_ref().to_path_buf();
        let mut conn = Connection::open(&path)?;
        configure(&conn)?;
        // WAL: readers never wait for the writer, and a commit is one append.
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(DeskError::Unavailable(format!(
                "{} cannot use write-ahead logging (journal mode stays {mode:?})",
                path.display()
            )));
        }
        // In WAL mode NORMAL is durable against application crashes; only a power
        // loss may undo the last commits.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        migrate(&mut conn)?;

        let (tx, rx) = mpsc::channel::<Job>();
        thread::Builder::new()
            .name("desk-writer".into())
            .spawn(move || {
                for job in rx {
                    // A panicking job drops its reply sender (its caller sees an
                    // error) and rolls back its transaction; the writer goes on.
                    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| job(&mut conn)));
                }
            })
            .map_err(|e| DeskError::Unavailable(format!("cannot start the writer thread: {e}")))?;

        Ok(Store {
            inner: Arc::new(Inner {
                path,
                writer: tx,
                readers: Mutex::new(Vec::new()),
            }),
        })
    }

    /// Runs `f` inside one write transaction on the writer thread; commits when
    /// it returns `Ok`, rolls back otherwise.
    async fn write<T, F>(&self, f: F) -> Result<T, DeskError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, DeskError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |conn: &mut Connection| {
            let result = (|| {
                // IMMEDIATE takes the write lock up front, so a transaction never
                // fails half-way on a lock upgrade.
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let value = f(&tx)?;
                tx.commit()?;
                Ok(value)
            })();
            let _ = reply.send(result);
        });
        self.inner.writer.send(job).map_err(|_| writer_gone())?;
        answer.await.map_err(|_| writer_gone())?
    }

    /// Runs `f` on a read-only connection, off the async executor.
    async fn read<T, F>(&self, f: F) -> Result<T, DeskError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, DeskError> + Send + 'static,
    {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || {
            let pooled = inner.readers.lock().ok().and_then(|mut idle| idle.pop());
            let conn = match pooled {
                Some(conn) => conn,
                None => open_reader(&inner.path)?,
            };
            let result = f(&conn);
            if let Ok(mut idle) = inner.readers.lock()
                && idle.len() < IDLE_READERS
            {
                idle.push(conn);
            }
            result
        })
        .await
        .map_err(|e| DeskError::Unavailable(format!("a read stopped: {e}")))?
    }

    /// Tickets matching any word of `query`, best first (BM25 over title and body).
    pub(crate) async fn search(
        &self,
        query: &str,
        limit: u32,
    ) -> Result<Vec<SearchHit>, DeskError> {
        let Some(expression) = fts_expression(query) else {
            return Err(DeskError::InvalidInput(format!(
                "the query {query:?} has no words to search for"
            )));
        };
        self.read(move |conn| {
            let mut statement = conn.prepare_cached(
                "SELECT t.id, t.title, t.status, t.created_at,
                        snippet(tickets_fts, 1, '[', ']', '…', 12)
                 FROM tickets_fts JOIN tickets t ON t.id = tickets_fts.rowid
                 WHERE tickets_fts MATCH ?1
                 ORDER BY bm25(tickets_fts, 2.0, 1.0), t.id
                 LIMIT ?2",
            )?;
            let hits = statement
                .query_map((expression, limit), |row| {
                    Ok(SearchHit {
                        id: TicketId(row.get(0)?),
                        title: row.get(1)?,
                        status: status_of(row.get_ref(2)?.as_str()?),
                        created_at: row.get(3)?,
                        snippet: row.get(4)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(hits)
        })
        .await
    }

    /// The ticket with its comments, oldest first.
    pub(crate) async fn ticket(&self, id: TicketId) -> Result<Ticket, DeskError> {
        self.read(move |conn| load_ticket(conn, id)).await
    }

    /// Files a new open ticket.
    pub(crate) async fn open_ticket(
        &self,
        title: String,
        body: String,
    ) -> Result<Ticket, DeskError> {
        self.write(move |tx| {
            tx.execute(
                "INSERT INTO tickets (title, body, status, created_at)
                 VALUES (?1, ?2, 'open', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                (&title, &body),
            )?;
            load_ticket(tx, TicketId(tx.last_insert_rowid()))
        })
        .await
    }

    /// Closes an open ticket with a resolution note.
    pub(crate) async fn close_ticket(
        &self,
        id: TicketId,
        note: String,
    ) -> Result<Ticket, DeskError> {
        self.write(move |tx| {
            let status: Option<String> = tx
                .query_row("SELECT status FROM tickets WHERE id = ?1", [id.0], |r| {
                    r.get(0)
                })
                .optional()?;
            match status.as_deref() {
                None => return Err(DeskError::NotFound(id)),
                Some("closed") => return Err(DeskError::AlreadyClosed(id)),
                Some(_) => {}
            }
            tx.execute(
                "UPDATE tickets SET status = 'closed', resolution = ?2,
                        closed_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
                 WHERE id = ?1",
                (id.0, &note),
            )?;
            load_ticket(tx, id)
        })
        .await
    }

    /// Every ticket's id, in order (for batch jobs).
    pub(crate) async fn ticket_ids(&self) -> Result<Vec<i64>, DeskError> {
        self.read(|conn| {
            let mut query = conn.prepare("SELECT id FROM tickets ORDER BY id")?;
            let ids = query.query_map([], |r| r.get(0))?;
            Ok(ids.collect::<Result<Vec<i64>, _>>()?)
        })
        .await
    }

    /// Rebuilds the search-index rows of these tickets in one transaction;
    /// returns how many tickets it found.
    pub(crate) async fn reindex(&self, ids: Vec<i64>) -> Result<usize, DeskError> {
        self.write(move |tx| {
            let mut rebuilt = 0;
            for id in ids {
                let row: Option<(String, String)> = tx
                    .query_row("SELECT title, body FROM tickets WHERE id = ?1", [id], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .optional()?;
                let Some((title, body)) = row else {
                    continue;
                };
                // The 'delete' command needs the indexed values; the row's own
                // are what the triggers indexed.
                tx.execute(
                    "INSERT INTO tickets_fts (tickets_fts, rowid, title, body) VALUES ('delete', ?1, ?2, ?3)",
                    (id, &title, &body),
                )?;
                tx.execute(
                    "INSERT INTO tickets_fts (rowid, title, body) VALUES (?1, ?2, ?3)",
                    (id, &title, &body),
                )?;
                rebuilt += 1;
            }
            Ok(rebuilt)
        })
        .await
    }

    /// Merges the search index's segments (after a rebuild).
    pub(crate) async fn optimize_index(&self) -> Result<(), DeskError> {
        self.write(|tx| {
            tx.execute(
                "INSERT INTO tickets_fts (tickets_fts) VALUES ('optimize')",
                [],
            )?;
            Ok(())
        })
        .await
    }

    /// Adds a comment to a ticket, open or closed.
    pub(crate) async fn add_comment(
        &self,
        id: TicketId,
        body: String,
    ) -> Result<Comment, DeskError> {
        self.write(move |tx| {
            let exists: Option<i64> = tx
                .query_row("SELECT id FROM tickets WHERE id = ?1", [id.0], |r| r.get(0))
                .optional()?;
            if exists.is_none() {
                return Err(DeskError::NotFound(id));
            }
            tx.execute(
                "INSERT INTO comments (ticket_id, body, created_at)
                 VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                (id.0, &body),
            )?;
            let comment_id = tx.last_insert_rowid();
            Ok(tx.query_row(
                "SELECT id, body, created_at FROM comments WHERE id = ?1",
                [comment_id],
                |r| {
                    Ok(Comment {
                        id: r.get(0)?,
                        ticket_id: id,
                        body: r.get(1)?,
                        created_at: r.get(2)?,
                    })
                },
            )?)
        })
        .await
    }
}

fn writer_gone() -> DeskError {
    DeskError::Unavailable("the database writer has stopped".into())
}

/// Settings every connection needs.
fn configure(conn: &Connection) -> Result<(), DeskError> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

fn open_reader(path: &Path) -> Result<Connection, DeskError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    configure(&conn)?;
    // Read-write at the file level (WAL readers may need to recover the
    // shared-memory index) but refusing every write statement.
    conn.pragma_update(None, "query_only", "ON")?;
    Ok(conn)
}

fn status_of(text: &str) -> Status {
    if text == "closed" {
        Status::Closed
    } else {
        Status::Open
    }
}

fn load_ticket(conn: &Connection, id: TicketId) -> Result<Ticket, DeskError> {
    let ticket = conn
        .query_row(
            "SELECT title, body, status, created_at, closed_at, resolution
             FROM tickets WHERE id = ?1",
            [id.0],
            |r| {
                Ok(Ticket {
                    id,
                    title: r.get(0)?,
                    body: r.get(1)?,
                    status: status_of(r.get_ref(2)?.as_str()?),
                    created_at: r.get(3)?,
                    closed_at: r.get(4)?,
                    resolution: r.get(5)?,
                    comments: Vec::new(),
                })
            },
        )
        .optional()?;
    let mut ticket = ticket.ok_or(DeskError::NotFound(id))?;
    let mut statement = conn.prepare_cached(
        "SELECT id, body, created_at FROM comments WHERE ticket_id = ?1 ORDER BY id",
    )?;
    ticket.comments = statement
        .query_map([id.0], |r| {
            Ok(Comment {
                id: r.get(0)?,
                ticket_id: id,
                body: r.get(1)?,
                created_at: r.get(2)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ticket)
}

/// An FTS5 expression matching any word of `query`: each word quoted (so the
/// query language's operators and punctuation are searched for, never parsed),
/// joined with `OR`. `None` when the query holds no word.
fn fts_expression(query: &str) -> Option<String> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\""))
        .collect();
    (!words.is_empty()).then(|| words.join(" OR "))
}

/// Brings the schema to [`SCHEMA_VERSION`], seeding the demo tickets when the
/// database is new. One immediate transaction: two servers starting on the same
/// new file migrate it once.
fn migrate(conn: &mut Connection) -> Result<(), DeskError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(DeskError::Unavailable(format!(
            "the database has schema version {version}, newer than this build's {SCHEMA_VERSION}"
        )));
    }
    if version < 1 {
        tx.execute_batch(SCHEMA_V1).map_err(|e| match e {
            rusqlite::Error::SqliteFailure(_, Some(ref message)) if message.contains("fts5") => {
                DeskError::Unavailable(format!("this SQLite build has no FTS5: {message}"))
            }
            other => other.into(),
        })?;
        tx.execute_batch(SEED)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(())
}

const SCHEMA_V1: &str = "
CREATE TABLE tickets (
    id          INTEGER PRIMARY KEY,
    title       TEXT NOT NULL,
    body        TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    created_at  TEXT NOT NULL,
    closed_at   TEXT,
    resolution  TEXT
);
CREATE TABLE comments (
    id          INTEGER PRIMARY KEY,
    ticket_id   INTEGER NOT NULL REFERENCES tickets (id),
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX comments_by_ticket ON comments (ticket_id, id);

-- Full-text index over titles and bodies, stored once (external content) and
-- kept in step with the table by triggers.
CREATE VIRTUAL TABLE tickets_fts USING fts5 (
    title, body,
    content = 'tickets', content_rowid = 'id',
    tokenize = 'porter unicode61'
);
CREATE TRIGGER tickets_fts_insert AFTER INSERT ON tickets BEGIN
    INSERT INTO tickets_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
END;
CREATE TRIGGER tickets_fts_delete AFTER DELETE ON tickets BEGIN
    INSERT INTO tickets_fts (tickets_fts, rowid, title, body)
    VALUES ('delete', old.id, old.title, old.body);
END;
CREATE TRIGGER tickets_fts_update AFTER UPDATE OF title, body ON tickets BEGIN
    INSERT INTO tickets_fts (tickets_fts, rowid, title, body)
    VALUES ('delete', old.id, old.title, old.body);
    INSERT INTO tickets_fts (rowid, title, body) VALUES (new.id, new.title, new.body);
END;
";

/// The demo data set: a few tickets a support team would recognise, so a new
/// user's first search (`refund`) finds something.
const SEED: &str = "
INSERT INTO tickets (id, title, body, status, created_at, closed_at, resolution) VALUES
(1001, 'Refund not received after cancelling annual plan',
 'I cancelled my annual subscription on 3 November and was told the refund would reach my card within 5 business days. Two weeks later nothing has arrived. Order A-55821, card ending 4417.',
 'open', '2026-11-17T09:12:00Z', NULL, NULL),
(1002, 'Charged twice for the November invoice',
 'Our company card shows two identical charges of 249.00 USD on 1 November for invoice INV-2026-1187. Please refund the duplicate charge and confirm by email.',
 'open', '2026-11-18T14:40:00Z', NULL, NULL),
(1003, 'Password reset email never arrives',
 'I requested a password reset four times today for jana.novak@example.com. Nothing in the inbox or the spam folder. I cannot log in to approve this week''s invoices.',
 'open', '2026-11-20T08:05:00Z', NULL, NULL),
(1004, 'CSV export times out for large projects',
 'Exporting the Logistics project (about 120,000 rows) to CSV fails after a minute with a gateway timeout. Smaller projects export fine.',
 'open', '2026-11-21T16:27:00Z', NULL, NULL),
(1005, 'Cannot add a second admin to the workspace',
 'The Invite admin button is greyed out in Settings > Members. We need a second administrator before our office manager goes on leave.',
 'closed', '2026-11-10T11:00:00Z', '2026-11-11T10:30:00Z',
 'Additional admin seats come with the Team plan; the customer upgraded and invited the second admin.'),
(1006, 'Mobile app crashes when uploading photos on Android 15',
 'Since the last update the Android app closes as soon as I attach a photo to a delivery report. Pixel 8, Android 15, app version 4.12.0.',
 'open', '2026-11-24T07:48:00Z', NULL, NULL);

INSERT INTO comments (ticket_id, body, created_at) VALUES
(1001, 'Billing confirms the refund was issued on 4 November (reference RF-20931). Asked the customer to check with their bank, which can take up to 10 days to post it.', '2026-11-17T11:30:00Z'),
(1004, 'Reproduced with a 100,000-row project. Engineering ticket ENG-3312 filed; suggested exporting by date range meanwhile.', '2026-11-22T09:15:00Z'),
(1006, 'Crash report received from the customer; it points at the image compression step.', '2026-11-24T10:02:00Z');
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_is_quoted_and_operators_are_not_parsed() {
        assert_eq!(fts_expression("refund"), Some("\"refund\"".into()));
        assert_eq!(
            fts_expression("  refund NEAR(\"card\" -x) OR "),
            Some("\"refund\" OR \"NEAR\" OR \"card\" OR \"x\" OR \"OR\"".into())
        );
        assert_eq!(
            fts_expression("über straße"),
            Some("\"über\" OR \"straße\"".into())
        );
        assert_eq!(fts_expression(" \"*-( "), None);
    }

    #[tokio::test]
    async fn a_new_database_is_migrated_seeded_and_searchable() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("desk.db")).unwrap();
        let hits = store.search("refund", 20).await.unwrap();
        let ids: Vec<i64> = hits.iter().map(|h| h.id.0).collect();
        assert!(ids.contains(&1001) && ids.contains(&1002), "{ids:?}");
        assert!(hits[0].snippet.contains("[refund]") || hits[0].snippet.contains("[Refund]"));
        // Stems match: "refunded" finds "refund".
        assert!(!store.search("refunded", 20).await.unwrap().is_empty());
        assert!(store.search("zeppelin", 20).await.unwrap().is_empty());
        assert!(matches!(
            store.search("!!", 20).await,
            Err(DeskError::InvalidInput(_))
        ));
    }

    #[tokio::test]
    async fn reopening_the_file_migrates_nothing_and_keeps_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("desk.db");
        let opened = {
            let store = Store::open(&path).unwrap();
            store
                .open_ticket(
                    "Invoice PDF is blank".into(),
                    "The zeppelin invoice is empty.".into(),
                )
                .await
                .unwrap()
        };
        let store = Store::open(&path).unwrap();
        let hits = store.search("zeppelin", 5).await.unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].id, opened.id);
        assert_eq!(
            store.ticket(TicketId(1001)).await.unwrap().comments.len(),
            1
        );
    }

    #[tokio::test]
    async fn close_and_comment_follow_the_ticket_rules() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("desk.db")).unwrap();
        let closed = store
            .close_ticket(TicketId(1003), "Mail provider unblocked.".into())
            .await
            .unwrap();
        assert_eq!(closed.status, Status::Closed);
        assert_eq!(
            closed.resolution.as_deref(),
            Some("Mail provider unblocked.")
        );
        assert!(closed.closed_at.is_some());
        assert!(matches!(
            store.close_ticket(TicketId(1003), "again".into()).await,
            Err(DeskError::AlreadyClosed(TicketId(1003)))
        ));
        assert!(matches!(
            store.close_ticket(TicketId(9), "x".into()).await,
            Err(DeskError::NotFound(TicketId(9)))
        ));
        let comment = store
            .add_comment(TicketId(1003), "Customer confirmed.".into())
            .await
            .unwrap();
        assert_eq!(comment.ticket_id, TicketId(1003));
        assert!(matches!(
            store.add_comment(TicketId(9), "x".into()).await,
            Err(DeskError::NotFound(TicketId(9)))
        ));
        let ticket = store.ticket(TicketId(1003)).await.unwrap();
        assert_eq!(ticket.comments, vec![comment]);
    }

    #[tokio::test]
    async fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("desk.db")).unwrap();
        let result: Result<(), DeskError> = store
            .write(|tx| {
                tx.execute(
                    "INSERT INTO tickets (title, body, status, created_at) VALUES ('zeppelin', '', 'open', '')",
                    [],
                )?;
                Err(DeskError::InvalidInput("changed my mind".into()))
            })
            .await;
        assert!(result.is_err());
        assert!(store.search("zeppelin", 5).await.unwrap().is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_writes_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("desk.db")).unwrap();
        let writes = (0..64).map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .open_ticket(format!("Load test {i}"), "zeppelin".into())
                    .await
            })
        });
        for write in writes.collect::<Vec<_>>() {
            write.await.unwrap().unwrap();
        }
        assert_eq!(store.search("zeppelin", 100).await.unwrap().len(), 64);
    }
}
