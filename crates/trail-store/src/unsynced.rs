//! A first index writes without waiting for the disk, and makes the store durable once, at its
//! end (issue 12).
//!
//! Why: with `synchronous = NORMAL` every checkpoint syncs the log, then the store: everything
//! the writer logs reaches the disk once in the log and once more in the store. A full index of
//! the 3 GiB benchmark corpus wrote 7.1 GB for a store of 2.7 GB (`/proc/diskstats`), and the
//! disk's queue time grew 4.7x for 3.2x the bytes of the 1 GiB index: the checkpoints waited
//! for the disk, and the writer for the checkpoints (2.0-2.2 s at 3 GiB). Without those syncs
//! the log, rewritten in place, mostly never reaches the disk; a thread of its own
//! ([`Flusher`]) syncs the two databases after each checkpoint, so the end has little left.
//! Three interleaved pairs: written 3.9 GB instead of 7.1 (1.5 instead of 2.2 at 1 GiB), the
//! writer's waits 0.6-0.7 s, the end's sync 0.2-0.4 s, and the index 4-11% faster at 1 GiB
//! and 1-18% faster in two of three pairs at 3 GiB.
//!
//! What that risks, and what guards it:
//! * A killed process loses nothing: every write is in the kernel's hands, and SQLite's log
//!   rules hold without syncs. The next index carries on, as after any `kill -9`.
//! * A system crash or power loss before the data reaches the disk can leave the store with
//!   pages of different moments, which SQLite cannot repair. Only a first index runs this way:
//!   the store held no message before it, and everything it writes comes from agents' files.
//!   Before its first batch, the index leaves a marker beside the store,
//!   `<store>-unsynced-<pid>-<n>`, holding this boot's id (`/proc/sys/kernel/random/boot_id`),
//!   synced to disk; at its end it syncs the store's files and removes the marker. A store
//!   found with a marker from another boot was being filled when the machine went down: the
//!   next writable open moves its files aside (`<store>.interrupted-<seconds>`, kept for the
//!   user) and starts a new store, which the same index then fills; a reader is told to run
//!   `trail index`. A marker of this boot whose process is gone (killed) is cleared by the next
//!   writable open, after syncing the files.
//! * Where the boot id cannot be read (not Linux), a first index syncs as any other.

use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::{Result, Store, StoreError};

/// What a marker records: the boot it was written in and the process that wrote it (its id
/// and start time, so that a reused id is not taken for the writer).
#[derive(Debug, PartialEq, Eq)]
struct Marker {
    boot: String,
    pid: u32,
    start: u64,
}

impl Marker {
    fn parse(text: &str) -> Option<Marker> {
        let mut words = text.split_whitespace();
        Some(Marker {
            boot: words.next()?.to_string(),
            pid: words.next()?.parse().ok()?,
            start: words.next()?.parse().ok()?,
        })
    }

    fn render(&self) -> String {
        format!("{} {} {}\n", self.boot, self.pid, self.start)
    }

    /// Whether the process that wrote the marker still runs.
    fn writer_alive(&self) -> bool {
        process_start(self.pid) == Some(self.start)
    }
}

/// This boot's id, or `None` where the system does not tell it.
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty() && !id.contains(char::is_whitespace)).then(|| id.to_string())
}

/// When process `pid` started (clock ticks since boot), or `None` when it does not run.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name (which may hold spaces, in parentheses): the start
    // time is the 22nd field of the line, the 20th after the name.
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// `<store>` followed by `suffix`: the name of a file SQLite or trail keeps beside the store.
pub(crate) fn beside(store: &Path, suffix: &str) -> PathBuf {
    let mut s: OsString = store.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The folder the store's files are in.
fn folder(store: &Path) -> &Path {
    store
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The suffixes of a store's files: the store, the search database, and their logs and
/// shared-memory files.
const FILE_SUFFIXES: [&str; 6] = ["", "-wal", "-shm", "-search", "-search-wal", "-search-shm"];

/// The bytes on disk of the store at `store`: the store, its search database, and their logs
/// (the shared-memory files index the logs and hold no data). Files that do not exist count 0.
pub fn disk_bytes(store: &Path) -> u64 {
    FILE_SUFFIXES
        .iter()
        .filter(|suffix| !suffix.ends_with("-shm"))
        .filter_map(|suffix| std::fs::metadata(beside(store, suffix)).ok())
        .map(|m| m.len())
        .sum()
}

/// The markers left beside `store`, with what each holds (`None`: unreadable).
fn markers(store: &Path) -> Vec<(PathBuf, Option<Marker>)> {
    let Some(name) = store.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let prefix = format!("{name}-unsynced-");
    let Ok(entries) = std::fs::read_dir(folder(store)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
        })
        .map(|e| {
            let marker = std::fs::read_to_string(e.path())
                .ok()
                .and_then(|t| Marker::parse(&t));
            (e.path(), marker)
        })
        .collect()
}

/// Whether a marker says the store may be damaged: written in another boot, or unreadable (a
/// crash while it was written; it is written before the first batch, so the store is as new).
fn from_another_boot(marker: &Option<Marker>, boot: &str) -> bool {
    marker.as_ref().is_none_or(|m| m.boot != boot)
}

fn sync_dir(store: &Path) -> std::io::Result<()> {
    File::open(folder(store))?.sync_all()
}

/// Syncs the store's files that exist to disk (and their folder, where they were created);
/// the logs only when `logs` (a log whose every frame was copied into its database holds
/// nothing a crash could need).
fn sync_files(store: &Path, logs: bool) -> std::io::Result<()> {
    for suffix in FILE_SUFFIXES {
        if suffix.ends_with("-shm") || (!logs && suffix.ends_with("-wal")) {
            // Rebuilt from the log by SQLite; never needed after a crash.
            continue;
        }
        match File::open(beside(store, suffix)) {
            Ok(f) => f.sync_all()?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    sync_dir(store)
}

fn io_error(path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Corrupt(format!("{}: {e}", path.display()))
}

/// Before a writable open of the store at `store`. A store a first index was filling when the
/// system went down is moved aside (and a warning says where); markers of processes gone in
/// this boot are cleared once the files are synced.
pub(crate) fn recover(store: &Path) -> Result<()> {
    let Some(boot) = boot_id() else {
        return Ok(());
    };
    let found = markers(store);
    if found.is_empty() {
        return Ok(());
    }
    if found.iter().any(|(_, m)| from_another_boot(m, &boot)) {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let aside = beside(store, &format!(".interrupted-{stamp}"));
        for suffix in FILE_SUFFIXES {
            let from = beside(store, suffix);
            match std::fs::rename(&from, beside(&aside, suffix)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_error(&from, e)),
            }
        }
        for (path, _) in &found {
            let _ = std::fs::remove_file(path);
        }
        sync_dir(store).map_err(|e| io_error(store, e))?;
        tracing::warn!(
            store = %store.display(),
            moved_to = %aside.display(),
            "the store's first index was cut short by a system restart, so it may be damaged: its files were moved aside and a new store is made; run `trail index` to fill it again"
        );
        return Ok(());
    }
    let gone: Vec<&PathBuf> = found
        .iter()
        .filter(|(_, m)| m.as_ref().is_some_and(|m| !m.writer_alive()))
        .map(|(p, _)| p)
        .collect();
    if !gone.is_empty() {
        sync_files(store, true).map_err(|e| io_error(store, e))?;
        for path in gone {
            let _ = std::fs::remove_file(path);
        }
        sync_dir(store).map_err(|e| io_error(store, e))?;
    }
    Ok(())
}

/// Before a read-only open: a store a first index was filling when the system went down may be
/// damaged, and only a writable open may set it aside.
pub(crate) fn check_readable(store: &Path) -> Result<()> {
    let Some(boot) = boot_id() else {
        return Ok(());
    };
    if markers(store)
        .iter()
        .any(|(_, m)| from_another_boot(m, &boot))
    {
        return Err(StoreError::Interrupted {
            path: store.to_path_buf(),
        });
    }
    Ok(())
}

/// A first index writing without syncs: its marker, and the thread that syncs the databases.
pub(crate) struct Unsynced {
    marker: PathBuf,
    pub(crate) flusher: Flusher,
}

/// What the checkpointer tells the flusher.
#[derive(Default)]
struct FlushState {
    /// A checkpoint wrote pages since the last sync.
    dirty: bool,
    closing: bool,
}

/// Wakes the flusher after a checkpoint; shared with the checkpointer's thread.
#[derive(Default)]
pub(crate) struct FlushSignal {
    state: Mutex<FlushState>,
    changed: Condvar,
}

impl FlushSignal {
    fn lock(&self) -> std::sync::MutexGuard<'_, FlushState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A checkpoint copied pages into the store: write them to disk when the flusher can.
    pub(crate) fn poke(&self) {
        self.lock().dirty = true;
        self.changed.notify_all();
    }
}

/// A thread that writes the store's and the search database's pages to disk while a first
/// index runs, so that its end has little left to sync: without it, the kernel holds them
/// until its own thresholds (nothing of the 1 GiB index), and the end's sync took 0.65-1.08 s
/// with a core idle. It syncs the databases only, never the logs, and nobody waits for it.
pub(crate) struct Flusher {
    signal: Arc<FlushSignal>,
    thread: Option<JoinHandle<()>>,
}

impl Flusher {
    fn start(store: &Path) -> Result<Flusher> {
        let files: Vec<File> = ["", "-search"]
            .iter()
            .filter_map(|suffix| File::open(beside(store, suffix)).ok())
            .collect();
        let signal = Arc::new(FlushSignal::default());
        let theirs = Arc::clone(&signal);
        let thread = std::thread::Builder::new()
            .name("trail-flush".into())
            .spawn(move || loop {
                {
                    let mut state = theirs.lock();
                    while !state.dirty && !state.closing {
                        state = theirs
                            .changed
                            .wait(state)
                            .unwrap_or_else(PoisonError::into_inner);
                    }
                    if state.closing {
                        return;
                    }
                    state.dirty = false;
                }
                for f in &files {
                    // A failure here costs nothing: the end's sync reports it.
                    let _ = f.sync_data();
                }
            })
            .map_err(|e| StoreError::Corrupt(format!("cannot start a thread: {e}")))?;
        Ok(Flusher {
            signal,
            thread: Some(thread),
        })
    }

    pub(crate) fn signal(&self) -> Arc<FlushSignal> {
        Arc::clone(&self.signal)
    }

    fn stop(&mut self) {
        self.signal.lock().closing = true;
        self.signal.changed.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Store {
    /// For a first index (an empty store; see `bulk.rs`): leaves the marker and turns off the
    /// syncs of the store's and the search database's commits and checkpoints, on this
    /// connection and on the checkpointer's, until [`Store::make_durable`]. Returns whether it
    /// did (not for an in-memory store, nor where the boot id cannot be read).
    pub fn write_unsynced(&mut self) -> Result<bool> {
        if self.path.as_os_str() == ":memory:" || self.unsynced.is_some() {
            return Ok(false);
        }
        let Some(boot) = boot_id() else {
            return Ok(false);
        };
        let pid = std::process::id();
        let Some(start) = process_start(pid) else {
            return Ok(false);
        };
        let marker = Marker { boot, pid, start };
        // One marker per writer: two stores of one process may fill the same file at once.
        static WRITERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = beside(&self.path, &format!("-unsynced-{pid}-{n}"));
        let written = File::create(&path).and_then(|mut f| {
            f.write_all(marker.render().as_bytes())?;
            f.sync_all()
        });
        written
            .and_then(|()| sync_dir(&self.path))
            .map_err(|e| io_error(&path, e))?;
        self.conn.execute_batch(
            "PRAGMA main.synchronous = OFF;
             PRAGMA search.synchronous = OFF;",
        )?;
        self.unsynced = Some(Box::new(Unsynced {
            flusher: Flusher::start(&self.path)?,
            marker: path,
        }));
        Ok(true)
    }

    /// Whether this connection writes without syncs (between [`Store::write_unsynced`] and
    /// [`Store::make_durable`]).
    pub fn is_unsynced(&self) -> bool {
        self.unsynced.is_some()
    }

    /// Ends [`Store::write_unsynced`]: syncs back on, copies what the logs still hold into both
    /// databases, syncs every file of the store to disk, then removes the marker. Nothing to do
    /// otherwise. Call it after the checkpointer and the search database's writer stopped.
    pub fn make_durable(&mut self) -> Result<()> {
        let Some(mut unsynced) = self.unsynced.take() else {
            return Ok(());
        };
        unsynced.flusher.stop();
        let marker = unsynced.marker;
        self.conn.execute_batch(
            "PRAGMA main.synchronous = NORMAL;
             PRAGMA search.synchronous = NORMAL;",
        )?;
        // PASSIVE: never waits for a reader. A log not wholly copied (a reader held it) is
        // synced below with the rest.
        let mut copied = true;
        for schema in ["main", "search"] {
            let (busy, frames, done): (i64, i64, i64) = self.conn.query_row(
                &format!("PRAGMA {schema}.wal_checkpoint(PASSIVE)"),
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            copied &= busy == 0 && frames == done;
        }
        sync_files(&self.path, !copied).map_err(|e| io_error(&self.path, e))?;
        std::fs::remove_file(&marker).map_err(|e| io_error(&marker, e))?;
        sync_dir(&self.path).map_err(|e| io_error(&self.path, e))?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::print_stderr)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_reads_back_what_it_wrote() {
        let m = Marker {
            boot: "0f1e2d3c-aaaa-bbbb-cccc-123456789abc".into(),
            pid: 4242,
            start: 987654,
        };
        assert_eq!(Marker::parse(&m.render()), Some(m));
        assert_eq!(Marker::parse("boot 12"), None);
        assert_eq!(Marker::parse("boot x 12"), None);
    }

    #[test]
    fn disk_bytes_counts_the_store_the_search_database_and_their_logs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trail.db");
        assert_eq!(disk_bytes(&path), 0, "no store yet");
        for (suffix, len) in [
            ("", 4096),
            ("-wal", 100),
            ("-shm", 32768),
            ("-search", 8192),
            ("-search-wal", 10),
            ("-search-shm", 32768),
            ("-unsynced-42", 5),
        ] {
            std::fs::write(beside(&path, suffix), vec![0u8; len]).unwrap();
        }
        std::fs::write(dir.path().join("other.db"), [0u8; 7]).unwrap();
        assert_eq!(disk_bytes(&path), 4096 + 100 + 8192 + 10);
    }

    /// A folder for a store, this boot's id, or `None` (the test is skipped) where the system
    /// does not tell it.
    fn scratch() -> Option<(tempfile::TempDir, PathBuf, String)> {
        let Some(boot) = boot_id() else {
            eprintln!("skipped: this system does not tell its boot id");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trail.db");
        Some((dir, path, boot))
    }

    /// A store with one session's worth of rows, closed.
    fn store_with_data(path: &Path) {
        let store = Store::open(path).unwrap();
        store
            .conn
            .execute(
                "INSERT INTO sessions (id, source) VALUES ('s1', 'claude-code')",
                [],
            )
            .unwrap();
    }

    fn leave_marker(store: &Path, pid: u32, text: &str) -> PathBuf {
        let path = beside(store, &format!("-unsynced-{pid}"));
        std::fs::write(&path, text).unwrap();
        path
    }

    fn sessions(store: &Store) -> i64 {
        store
            .conn
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_first_index_leaves_a_marker_until_the_store_is_durable() {
        let Some((_dir, path, boot)) = scratch() else {
            return;
        };
        let mut store = Store::open(&path).unwrap();
        assert!(store.write_unsynced().unwrap());
        let found = markers(&path);
        assert_eq!(found.len(), 1);
        let marker = found[0].1.as_ref().unwrap();
        assert_eq!(marker.boot, boot);
        assert_eq!(marker.pid, std::process::id());
        assert!(marker.writer_alive());
        let sync: i64 = store
            .conn
            .query_row("PRAGMA main.synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 0, "OFF while the first index writes");
        // A reader and another writer of this boot leave a live index's marker alone.
        Store::open_read_only(&path).unwrap();
        drop(Store::open(&path).unwrap());
        assert_eq!(markers(&path).len(), 1);

        store.make_durable().unwrap();
        assert!(markers(&path).is_empty());
        let sync: i64 = store
            .conn
            .query_row("PRAGMA main.synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 1, "NORMAL again");
        assert!(!store.is_unsynced());
    }

    #[test]
    fn a_store_dropped_mid_index_is_made_durable() {
        let Some((_dir, path, _)) = scratch() else {
            return;
        };
        let mut store = Store::open(&path).unwrap();
        assert!(store.write_unsynced().unwrap());
        store.checkpoint_in_background().unwrap();
        drop(store);
        assert!(markers(&path).is_empty());
    }

    #[test]
    fn a_store_a_system_crash_cut_short_is_set_aside() {
        let Some((dir, path, _)) = scratch() else {
            return;
        };
        store_with_data(&path);
        leave_marker(&path, 12345, "an-earlier-boot 12345 678\n");

        // A reader is told what happened and what to do.
        let err = Store::open_read_only(&path)
            .err()
            .expect("a reader refuses");
        assert!(matches!(err, StoreError::Interrupted { .. }), "{err}");
        assert!(err.to_string().contains("trail index"), "{err}");

        // A writer sets the files aside and starts a new store.
        let store = Store::open(&path).unwrap();
        assert_eq!(sessions(&store), 0);
        assert!(markers(&path).is_empty());
        let aside: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("trail.db.interrupted-"))
            .collect();
        // The store itself is `trail.db.interrupted-<seconds>`; its companions end in `-wal`,
        // `-search` and so on.
        let old = aside
            .iter()
            .find(|n| {
                n.trim_start_matches("trail.db.interrupted-")
                    .chars()
                    .all(|c| c.is_ascii_digit())
            })
            .unwrap_or_else(|| panic!("the store set aside: {aside:?}"));
        assert!(
            aside.iter().any(|n| n == &format!("{old}-search")),
            "{aside:?}"
        );
        let kept = Store::open_read_only(&dir.path().join(old)).unwrap();
        assert_eq!(sessions(&kept), 1, "the old store is kept as it was");
    }

    #[test]
    fn an_unreadable_marker_counts_as_a_crash() {
        let Some((_dir, path, _)) = scratch() else {
            return;
        };
        store_with_data(&path);
        leave_marker(&path, 7, "");
        assert!(Store::open_read_only(&path).is_err());
        assert_eq!(sessions(&Store::open(&path).unwrap()), 0);
    }

    #[test]
    fn the_marker_of_a_killed_index_is_cleared_and_the_store_kept() {
        let Some((_dir, path, boot)) = scratch() else {
            return;
        };
        store_with_data(&path);
        // This boot, a process that is not running (no process has that start time).
        let pid = std::process::id();
        let start = process_start(pid).unwrap() + 1;
        let marker = leave_marker(&path, pid + 1, &format!("{boot} {pid} {start}\n"));
        // A reader leaves it: only this boot's writes may be missing from the disk, and the
        // kernel still holds them.
        Store::open_read_only(&path).unwrap();
        assert!(marker.exists());
        let store = Store::open(&path).unwrap();
        assert_eq!(sessions(&store), 1);
        assert!(!marker.exists());
    }

    #[test]
    fn this_process_is_alive_and_a_wrong_start_time_is_not() {
        let pid = std::process::id();
        let Some(start) = process_start(pid) else {
            eprintln!("skipped: this system has no /proc");
            return;
        };
        let boot = String::new();
        assert!(Marker {
            boot: boot.clone(),
            pid,
            start
        }
        .writer_alive());
        assert!(!Marker {
            boot,
            pid,
            start: start + 1
        }
        .writer_alive());
    }
}
