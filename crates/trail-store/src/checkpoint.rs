//! Checkpoints of the store's write-ahead log on a thread of their own while an index writes
//! (issue 12).
//!
//! Why: SQLite checkpoints a WAL on the connection that committed, once the log passes 1,000
//! pages. Every batch the indexer committed was therefore copied from the log into the store on
//! the writer's own thread (reading the log back, writing the pages, two fsyncs): a quarter of
//! the writer's CPU on the 1 GiB corpus (`perf`), on the thread that bounds an index's wall time
//! while the second core had room. A checkpoint may run on any connection while another one
//! writes, so a second connection runs them as the writer goes on with its next batch.
//!
//! The writer waits only when checkpoints fall [`MAX_LAG`] commits behind, and only before it
//! begins its next transaction (after handing the last one's full-text rows on), which bounds
//! the log's size (a log that is never reset would also make each page lookup slower). A killed
//! process loses nothing: a checkpoint copies only committed pages, and a log left behind is
//! replayed by the next connection, as with SQLite's own checkpoints.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use crate::{Result, Store, BUSY_TIMEOUT};

/// Commits the checkpoints may trail by before the writer waits for them.
const MAX_LAG: u32 = 2;

/// Every this many commits the writer waits until the log is wholly copied, so that its next
/// transaction starts the log over from its beginning. SQLite restarts a log only when a
/// writer begins while nothing in it is left to copy, which a writer that never waits would
/// not see: the log would grow by everything the index writes.
const RESTART_EVERY: u32 = 4;

/// SQLite's own threshold (pages), restored when the background checkpoints stop.
const AUTO_CHECKPOINT_PAGES: u32 = 1000;

#[derive(Default)]
struct Lag {
    /// Commits not checkpointed yet.
    pending: u32,
    /// Commits since the log last started over.
    since_restart: u32,
    /// How long the writer waited for checkpoints in all.
    waited: Duration,
    /// No more commits will come: checkpoint what is left and stop.
    closing: bool,
}

#[derive(Default)]
struct Shared {
    lag: Mutex<Lag>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Lag> {
        self.lag.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A thread that checkpoints the store's WAL after the writer's commits; see the module docs.
pub(crate) struct BackgroundCheckpoints {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Store {
    /// Moves the WAL checkpoints of this connection's commits to a thread with a connection of
    /// its own, until [`Store::stop_background_checkpoints`]; the writer tells it of each
    /// commit. Nothing to do for an in-memory store (no log) or when already started.
    pub fn checkpoint_in_background(&mut self) -> Result<()> {
        if self.path.as_os_str() == ":memory:" || self.checkpoints.is_some() {
            return Ok(());
        }
        let conn = open_checkpointer(&self.path)?;
        if self.unsynced.is_some() {
            // A first index's checkpoints leave the syncs to its end (`unsynced.rs`).
            conn.execute_batch("PRAGMA synchronous = OFF")?;
        }
        self.conn
            .execute_batch("PRAGMA main.wal_autocheckpoint = 0")?;
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        let flush = self.unsynced.as_ref().map(|u| u.flusher.signal());
        let thread = std::thread::Builder::new()
            .name("trail-checkpoint".into())
            .spawn(move || run(&conn, &theirs, flush.as_deref()))
            .map_err(|e| crate::StoreError::Corrupt(format!("cannot start a thread: {e}")))?;
        self.checkpoints = Some(Box::new(BackgroundCheckpoints {
            shared,
            thread: Some(thread),
        }));
        Ok(())
    }

    /// Checkpoints what is left, stops the thread and gives this connection its automatic
    /// checkpoints back. Returns how long the writer waited for checkpoints in all.
    pub fn stop_background_checkpoints(&mut self) -> Result<Duration> {
        let Some(mut c) = self.checkpoints.take() else {
            return Ok(Duration::ZERO);
        };
        c.stop();
        self.conn.execute_batch(&format!(
            "PRAGMA main.wal_autocheckpoint = {AUTO_CHECKPOINT_PAGES}"
        ))?;
        let waited = c.shared.lock().waited;
        Ok(waited)
    }
}

fn open_checkpointer(path: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // The fsyncs of a checkpoint follow the store's setting.
    conn.execute_batch("PRAGMA synchronous = NORMAL")?;
    Ok(conn)
}

fn run(conn: &Connection, shared: &Shared, flush: Option<&crate::unsynced::FlushSignal>) {
    loop {
        let taken = {
            let mut lag = shared.lock();
            while lag.pending == 0 && !lag.closing {
                lag = shared
                    .changed
                    .wait(lag)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if lag.pending == 0 {
                return;
            }
            lag.pending
        };
        // PASSIVE, as SQLite's automatic checkpoints: never waits for readers or writers, and
        // copies what it can. A failure (another process checkpointing at the same moment) is
        // not an error of the index: the next commit's checkpoint, or SQLite's own after the
        // index, copies what this one could not.
        if let Err(e) = conn.query_row("PRAGMA main.wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::debug!(error = %e, "background checkpoint skipped");
        }
        if let Some(f) = flush {
            f.poke();
        }
        let mut lag = shared.lock();
        lag.pending -= taken;
        shared.changed.notify_all();
    }
}

impl BackgroundCheckpoints {
    /// Tells the checkpointer a transaction committed. Does not wait: the writer hands the
    /// batch's full-text rows to the search database's writer and gathers its next batch
    /// first, and waits (if at all) in [`BackgroundCheckpoints::before_writing`]. Waiting here,
    /// right after the commit, left the search writer and the parsers idle with it: the whole
    /// process waited for one checkpoint's fsyncs, a quarter-second at a time.
    pub(crate) fn committed(&self) {
        let mut lag = self.shared.lock();
        lag.pending += 1;
        lag.since_restart += 1;
        self.shared.changed.notify_all();
    }

    /// Called before the writer's next transaction: waits while the checkpoints trail by more
    /// than [`MAX_LAG`] commits, and every [`RESTART_EVERY`] commits until they caught up (so
    /// that the transaction about to begin starts the log over).
    pub(crate) fn before_writing(&self) {
        let started = Instant::now();
        let mut lag = self.shared.lock();
        let allowed = if lag.since_restart >= RESTART_EVERY {
            lag.since_restart = 0;
            0
        } else {
            MAX_LAG
        };
        while lag.pending > allowed {
            lag = self
                .shared
                .changed
                .wait(lag)
                .unwrap_or_else(PoisonError::into_inner);
        }
        lag.waited += started.elapsed();
    }

    fn stop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            // A panic in the checkpointer lost no data (checkpoints only copy committed pages).
            let _ = thread.join();
        }
    }
}

impl Drop for BackgroundCheckpoints {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wal_pages(path: &Path) -> u64 {
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        std::fs::metadata(wal).map_or(0, |m| m.len() / 4096)
    }

    #[test]
    fn commits_are_checkpointed_off_the_writer_and_the_log_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let mut store = Store::open(&path).unwrap();
        store.conn.execute_batch("CREATE TABLE t (x BLOB)").unwrap();
        store.checkpoint_in_background().unwrap();
        let autocheckpoint: i64 = store
            .conn
            .query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))
            .unwrap();
        assert_eq!(autocheckpoint, 0, "the writer no longer checkpoints");
        let mut largest = 0;
        for _ in 0..20 {
            // About 4 MB a commit: 1,000 pages, SQLite's own threshold.
            store
                .conn
                .execute_batch(
                    "BEGIN;
                     WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
                     INSERT INTO t SELECT randomblob(4000) FROM n;
                     COMMIT;",
                )
                .unwrap();
            store.checkpoints.as_ref().unwrap().committed();
            store.checkpoints.as_ref().unwrap().before_writing();
            largest = largest.max(wal_pages(&path));
        }
        store.stop_background_checkpoints().unwrap();
        let autocheckpoint: i64 = store
            .conn
            .query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))
            .unwrap();
        assert_eq!(autocheckpoint, 1000);
        // 20 commits of ~1,000 pages: without checkpoints the log would hold 20,000 pages.
        assert!(largest < 6_000, "the log grew to {largest} pages");
        // Everything reached the store file itself: a last checkpoint ran at the end.
        let (busy, log, copied): (i64, i64, i64) = store
            .conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap();
        assert_eq!(busy, 0);
        assert_eq!(log, copied, "every frame of the log was already copied");
        let rows: i64 = store
            .conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 20_000);
    }
}
