//! Keeping a store fresh while agents write: watching the discovery roots for changes (notify),
//! waiting for a burst of writes to end, then running the incremental index; and the lock a
//! watcher holds so that other processes (the status line, the MCP server, `serve --watch`) skip
//! their own index pass while one runs.
//!
//! Nothing here polls: the loop blocks until notify reports a change, a stop is asked for, or
//! an interval the caller chose passes. A root that does not exist yet is watched through its
//! nearest existing ancestor (not recursively), and watched itself once it appears.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher as _};

/// What wakes the watch loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Something changed under a root (or a missing root's ancestor).
    Changed,
    /// Stop after the index in progress, if any.
    Stop,
}

/// How a burst of writes is waited out: the index runs once no change came for `quiet`, or
/// `max_wait` after the burst's first change, whichever is first (an agent streaming an
/// answer writes for minutes; its lines must still be searchable within seconds).
#[derive(Debug, Clone, Copy)]
pub struct Debounce {
    pub quiet: Duration,
    pub max_wait: Duration,
}

impl Default for Debounce {
    fn default() -> Self {
        Debounce {
            quiet: Duration::from_millis(200),
            max_wait: Duration::from_millis(1000),
        }
    }
}

/// Watches the discovery roots. Existing roots are watched recursively; each missing one
/// through its nearest existing ancestor, until [`RootWatcher::refresh`] finds it.
pub struct RootWatcher {
    watcher: notify::RecommendedWatcher,
    /// The roots as the event handler sees them (shared with notify's thread).
    relevant: Arc<Mutex<Vec<PathBuf>>>,
    roots: Vec<PathBuf>,
    /// Roots watched recursively.
    watched: BTreeSet<PathBuf>,
    /// Ancestors of missing roots, watched alone (not recursively).
    ancestors: BTreeSet<PathBuf>,
}

impl RootWatcher {
    /// Starts watching `roots`; changes send [`Wake::Changed`] on `wake`. The files of `store`
    /// (`trail.db`, `trail.db-wal`, ...), should a root hold them, never wake the loop: the
    /// index's own writes would wake it again.
    pub fn new(
        roots: Vec<PathBuf>,
        store: Option<PathBuf>,
        wake: Sender<Wake>,
    ) -> notify::Result<RootWatcher> {
        let relevant = Arc::new(Mutex::new(roots.clone()));
        let seen = Arc::clone(&relevant);
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            let roots = seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if is_relevant(&event, &roots, store.as_deref()) {
                let _ = wake.send(Wake::Changed);
            }
        })?;
        let mut w = RootWatcher {
            watcher,
            relevant,
            roots,
            watched: BTreeSet::new(),
            ancestors: BTreeSet::new(),
        };
        w.refresh();
        Ok(w)
    }

    /// Watches every root folder that exists now, and the nearest existing folder above each
    /// other root (a missing root, or a file root such as a project's chat history, whose
    /// folder is watched alone so that its rewrites are seen too). Called after every wake, so a root created since is watched from then on (its first
    /// files are found by the index that follows, which walks every root).
    pub fn refresh(&mut self) {
        let mut ancestors = BTreeSet::new();
        for root in self.roots.clone() {
            if root.is_dir() {
                if !self.watched.contains(&root) {
                    match self.watcher.watch(&root, RecursiveMode::Recursive) {
                        Ok(()) => {
                            self.watched.insert(root);
                        }
                        Err(e) => {
                            tracing::warn!(root = %root.display(), error = %e, "cannot watch a root")
                        }
                    }
                }
            } else if let Some(a) = root.ancestors().skip(1).find(|a| a.is_dir()) {
                ancestors.insert(a.to_path_buf());
            }
        }
        // A root that was deleted (an agent clearing its history) is watched again through an
        // ancestor; its old recursive watch went with it.
        self.watched.retain(|r| r.is_dir());
        for gone in self.ancestors.difference(&ancestors) {
            let _ = self.watcher.unwatch(gone);
        }
        for a in ancestors.difference(&self.ancestors) {
            if let Err(e) = self.watcher.watch(a, RecursiveMode::NonRecursive) {
                tracing::warn!(folder = %a.display(), error = %e, "cannot watch for a root to appear");
            }
        }
        self.ancestors = ancestors;
    }

    /// Adds roots (files or folders) to watch from now on, such as the history files an agent
    /// keeps inside projects, found by an index.
    pub fn add_roots(&mut self, roots: impl IntoIterator<Item = PathBuf>) {
        let before = self.roots.len();
        for r in roots {
            if !self.roots.contains(&r) {
                self.roots.push(r);
            }
        }
        if self.roots.len() != before {
            self.relevant
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone_from(&self.roots);
            self.refresh();
        }
    }

    /// The roots watched recursively now.
    pub fn watched_roots(&self) -> impl Iterator<Item = &Path> {
        self.watched.iter().map(PathBuf::as_path)
    }
}

/// Whether a notify event can matter: a change (not a read) under a root, or at an ancestor of
/// a root (the root appearing), and not to one of the store's own files.
fn is_relevant(event: &notify::Event, roots: &[PathBuf], store: Option<&Path>) -> bool {
    if matches!(event.kind, notify::EventKind::Access(_)) {
        return false;
    }
    event.paths.iter().any(|p| {
        !store.is_some_and(|s| is_store_file(p, s))
            && roots.iter().any(|r| p.starts_with(r) || r.starts_with(p))
    })
}

/// Whether `path` is the store or one of its companions (`-wal`, `-search`, `.watch`, ...).
fn is_store_file(path: &Path, store: &Path) -> bool {
    let (Some(name), Some(store_name)) = (path.file_name(), store.file_name()) else {
        return false;
    };
    path.parent() == store.parent()
        && name
            .as_encoded_bytes()
            .starts_with(store_name.as_encoded_bytes())
}

/// Runs `index` after each burst of changes, and every `interval` when one is given, until
/// [`Wake::Stop`] arrives or every sender is gone. `watcher` is refreshed after each wake and
/// handed to `index`, which may add roots.
pub fn run(
    woken: &Receiver<Wake>,
    mut watcher: Option<&mut RootWatcher>,
    debounce: Debounce,
    interval: Option<Duration>,
    mut index: impl FnMut(Option<&mut RootWatcher>),
) {
    let mut next_tick = interval.map(|i| Instant::now() + i);
    loop {
        let wake = match next_tick {
            Some(t) => match woken.recv_timeout(t.saturating_duration_since(Instant::now())) {
                Ok(w) => Some(w),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            },
            // No interval: block until something happens (no polling).
            None => match woken.recv() {
                Ok(w) => Some(w),
                Err(_) => return,
            },
        };
        match wake {
            Some(Wake::Stop) => return,
            Some(Wake::Changed) => {
                if wait_out_burst(woken, debounce) == Some(Wake::Stop) {
                    return;
                }
                if let Some(w) = watcher.as_deref_mut() {
                    w.refresh();
                }
            }
            None => {}
        }
        index(watcher.as_deref_mut());
        next_tick = interval.map(|i| Instant::now() + i);
    }
}

/// Waits until no change came for `quiet` or `max_wait` passed; returns `Some(Stop)` when a
/// stop arrived meanwhile (or the senders are gone).
fn wait_out_burst(woken: &Receiver<Wake>, debounce: Debounce) -> Option<Wake> {
    let deadline = Instant::now() + debounce.max_wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        match woken.recv_timeout(debounce.quiet.min(left)) {
            Ok(Wake::Changed) => continue,
            Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return Some(Wake::Stop),
            Err(RecvTimeoutError::Timeout) => return None,
        }
    }
}

/// The file beside the store that a running watcher holds locked: `<store>.watch`, holding
/// its process id.
pub fn lock_path(store: &Path) -> PathBuf {
    let mut name = store.file_name().unwrap_or_default().to_os_string();
    name.push(".watch");
    store.with_file_name(name)
}

/// Held by the one watcher of a store, for as long as it runs. The operating system releases
/// the lock when the process ends, however it ends.
#[derive(Debug)]
pub struct WatchLock {
    _file: File,
}

/// Why a watcher could not start.
#[derive(Debug, thiserror::Error)]
pub enum WatchLockError {
    #[error("a watcher already keeps this store fresh (process {pid})")]
    Running { pid: String },
    #[error("cannot lock {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl WatchLock {
    /// Takes the store's watch lock and writes this process's id into it.
    pub fn acquire(store: &Path) -> Result<WatchLock, WatchLockError> {
        let path = lock_path(store);
        let io = |source| WatchLockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(WatchLockError::Running {
                    pid: read_pid(&mut file),
                })
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(WatchLock { _file: file })
    }
}

/// The process id of the watcher keeping `store` fresh, if one runs now.
pub fn running_watcher(store: &Path) -> Option<String> {
    let mut file = File::open(lock_path(store)).ok()?;
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            None
        }
        Err(TryLockError::WouldBlock) => Some(read_pid(&mut file)),
        Err(TryLockError::Error(_)) => None,
    }
}

fn read_pid(file: &mut File) -> String {
    let mut pid = String::new();
    let _ = file.rewind();
    let _ = file.take(32).read_to_string(&mut pid);
    match pid.trim() {
        "" => "unknown".to_string(),
        p => p.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_second_watcher_is_refused_and_others_see_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("trail.db");
        assert_eq!(running_watcher(&store), None);
        let lock = WatchLock::acquire(&store).unwrap();
        let me = std::process::id().to_string();
        assert_eq!(running_watcher(&store).as_deref(), Some(me.as_str()));
        match WatchLock::acquire(&store) {
            Err(WatchLockError::Running { pid }) => assert_eq!(pid, me),
            other => panic!("expected Running, got {other:?}"),
        }
        drop(lock);
        assert_eq!(running_watcher(&store), None);
        WatchLock::acquire(&store).unwrap();
    }

    #[test]
    fn a_root_that_appears_later_is_watched_and_wakes_the_loop() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("agent/sessions");
        let (tx, rx) = mpsc::channel();
        let mut w = RootWatcher::new(vec![root.clone()], None, tx).unwrap();
        assert_eq!(w.watched_roots().count(), 0);
        std::fs::create_dir_all(&root).unwrap();
        // The ancestor's event arrives; after a refresh the root itself is watched.
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(Wake::Changed));
        w.refresh();
        // `agent/` appeared first: the next refresh after its events finds `sessions` too.
        let deadline = Instant::now() + Duration::from_secs(5);
        while w.watched_roots().count() == 0 && Instant::now() < deadline {
            let _ = rx.recv_timeout(Duration::from_millis(100));
            w.refresh();
        }
        assert_eq!(w.watched_roots().collect::<Vec<_>>(), vec![root.as_path()]);
        while rx.try_recv().is_ok() {}
        std::fs::write(root.join("a.jsonl"), "{}\n").unwrap();
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(Wake::Changed));
    }

    #[test]
    fn unrelated_files_beside_a_missing_root_do_not_wake_the_loop() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(".agent");
        let (tx, rx) = mpsc::channel();
        let _w = RootWatcher::new(vec![root], None, tx).unwrap();
        std::fs::write(dir.path().join(".bash_history"), "ls\n").unwrap();
        assert_eq!(
            rx.recv_timeout(Duration::from_millis(500)),
            Err(RecvTimeoutError::Timeout)
        );
    }

    #[test]
    fn the_loop_indexes_once_per_burst_and_stops() {
        let (tx, rx) = mpsc::channel();
        for _ in 0..50 {
            tx.send(Wake::Changed).unwrap();
        }
        let stopper = tx.clone();
        let mut runs = 0;
        run(&rx, None, Debounce::default(), None, |_| {
            runs += 1;
            stopper.send(Wake::Stop).unwrap();
        });
        assert_eq!(runs, 1);
    }
}
