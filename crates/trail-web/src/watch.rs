//! `--watch`: keeps the store fresh while serving. One thread runs the ingest's incremental
//! index, one at a time: first at start, then after agents' files change (notify events under
//! the discovery roots, debounced: agents write in bursts) and every `interval`. After each
//! index the new session count is published, and open pages hear of it through `/api/events`.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher as _};
use serde::Serialize;
use trail_ingest::{IndexOptions, NoProgress};
use trail_query::Query;
use trail_store::Store;

use crate::error::WebError;
use crate::WatchConfig;

/// What open pages are told.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub(crate) struct IndexState {
    /// Sessions in the store (main sessions and subagents).
    pub sessions: i64,
    /// When an index last finished.
    pub last_indexed_at: Option<String>,
    /// Counts the indexes this server ran (0: none yet).
    pub generation: u64,
}

impl IndexState {
    pub fn read(q: &Query) -> Result<IndexState, WebError> {
        Ok(IndexState {
            sessions: q.session_count()?,
            last_indexed_at: q.last_indexed_at()?,
            generation: 0,
        })
    }
}

enum Wake {
    Changed,
    Stop,
}

/// The indexing thread and the file watcher feeding it.
pub(crate) struct Watcher {
    wake: mpsc::Sender<Wake>,
    thread: Option<std::thread::JoinHandle<()>>,
    // Kept alive while serving; dropping it stops the events.
    _fs: Option<notify::RecommendedWatcher>,
}

impl Watcher {
    /// Runs the first index (so the store exists before the server answers), then starts
    /// watching.
    pub fn start(
        store: PathBuf,
        config: WatchConfig,
        publish: tokio::sync::watch::Sender<IndexState>,
    ) -> Result<Watcher, WebError> {
        let options = IndexOptions {
            roots: config.roots.clone(),
            ..IndexOptions::default()
        };
        let mut generation = 0;
        index_once(&store, &options, &publish, &mut generation)
            .map_err(|e| WebError::internal(format!("the first index failed: {e}")))?;
        let (wake, woken) = mpsc::channel();
        let fs = watch_roots(&config, wake.clone());
        let thread = std::thread::Builder::new()
            .name("trail-watch".into())
            .spawn(move || run(&store, &options, &config, &woken, &publish, &mut generation))
            .map_err(|e| WebError::internal(format!("cannot start the watcher: {e}")))?;
        Ok(Watcher {
            wake,
            thread: Some(thread),
            _fs: fs,
        })
    }

    /// Stops watching and waits for an index in progress to finish.
    pub fn stop(mut self) {
        let _ = self.wake.send(Wake::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Watches every existing root (recursively); a root that cannot be watched is left to the
/// interval.
fn watch_roots(
    config: &WatchConfig,
    wake: mpsc::Sender<Wake>,
) -> Option<notify::RecommendedWatcher> {
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(e) = event {
            // Reads (access events) change nothing.
            if !matches!(e.kind, notify::EventKind::Access(_)) {
                let _ = wake.send(Wake::Changed);
            }
        }
    })
    .map_err(|e| tracing::warn!(error = %e, "cannot watch files; indexing on the interval only"))
    .ok()?;
    for root in config.roots.by_source.values().flatten() {
        if root.exists() {
            if let Err(e) = watcher.watch(root, RecursiveMode::Recursive) {
                tracing::warn!(root = %root.display(), error = %e, "cannot watch a root");
            }
        }
    }
    Some(watcher)
}

fn run(
    store: &Path,
    options: &IndexOptions,
    config: &WatchConfig,
    woken: &mpsc::Receiver<Wake>,
    publish: &tokio::sync::watch::Sender<IndexState>,
    generation: &mut u64,
) {
    let mut next_tick = config.interval.map(|i| Instant::now() + i);
    loop {
        let timeout = next_tick
            .map(|t| t.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_secs(3600));
        match woken.recv_timeout(timeout) {
            Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            Ok(Wake::Changed) => {
                // Wait for the burst to end: until `debounce` passes with no new event.
                loop {
                    match woken.recv_timeout(config.debounce) {
                        Ok(Wake::Changed) => continue,
                        Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                        Err(RecvTimeoutError::Timeout) => break,
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        if let Err(e) = index_once(store, options, publish, generation) {
            tracing::warn!(error = %e, "index while serving failed; the next change retries");
        }
        next_tick = config.interval.map(|i| Instant::now() + i);
    }
}

fn index_once(
    path: &Path,
    options: &IndexOptions,
    publish: &tokio::sync::watch::Sender<IndexState>,
    generation: &mut u64,
) -> Result<(), String> {
    let mut store = Store::open(path).map_err(|e| e.to_string())?;
    let summary =
        trail_ingest::index(&mut store, options, &NoProgress).map_err(|e| e.to_string())?;
    *generation += 1;
    let query = Query::from_store(store);
    let state = IndexState {
        sessions: query.session_count().map_err(|e| e.to_string())?,
        last_indexed_at: query.last_indexed_at().map_err(|e| e.to_string())?,
        generation: *generation,
    };
    tracing::info!(
        new = summary.sessions_new,
        updated = summary.sessions_updated,
        sessions = state.sessions,
        "indexed while serving"
    );
    publish.send_replace(state);
    Ok(())
}
