//! `--watch`: keeps the store fresh while serving. One thread runs the ingest's incremental
//! index, one at a time: first at start, then after agents' files change (notify events under
//! the discovery roots, debounced: agents write in bursts) and every `interval`. After each
//! index the new session count is published, and open pages hear of it through `/api/events`.
//! The watching and waiting are the ingest's (`trail_ingest::watch`, shared with `trail index
//! --watch`); while such a watcher keeps the store fresh, this one only reads what it wrote.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use serde::Serialize;
use trail_ingest::watch::{self, Debounce, RootWatcher, Wake};
use trail_ingest::{IndexOptions, Roots};
use trail_query::{Freshen, Query, QueryError, Refreshed};

use crate::error::WebError;

/// How the store is kept fresh.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// Where each agent's files are (the CLI's discovery roots); changes under them start an
    /// incremental index.
    pub roots: Roots,
    /// Also index this often, whatever the file system says.
    pub interval: Option<Duration>,
    /// Quiet time after a change before indexing (agents write in bursts).
    pub debounce: Duration,
}

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

/// The indexing thread and the file watcher feeding it.
pub(crate) struct Watcher {
    wake: mpsc::Sender<Wake>,
    thread: Option<std::thread::JoinHandle<()>>,
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
        let roots: Vec<PathBuf> = config.roots.by_source.values().flatten().cloned().collect();
        let mut fs = RootWatcher::new(roots, Some(store.clone()), wake.clone())
            .map_err(
                |e| tracing::warn!(error = %e, "cannot watch files; indexing on the interval only"),
            )
            .ok();
        let debounce = Debounce {
            quiet: config.debounce,
            ..Debounce::default()
        };
        let thread = std::thread::Builder::new()
            .name("trail-watch".into())
            .spawn(move || {
                watch::run(&woken, fs.as_mut(), debounce, config.interval, |_| {
                    if let Err(e) = index_once(&store, &options, &publish, &mut generation) {
                        tracing::warn!(error = %e, "index while serving failed; the next change retries");
                    }
                })
            })
            .map_err(|e| WebError::internal(format!("cannot start the watcher: {e}")))?;
        Ok(Watcher {
            wake,
            thread: Some(thread),
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

fn index_once(
    path: &Path,
    options: &IndexOptions,
    publish: &tokio::sync::watch::Sender<IndexState>,
    generation: &mut u64,
) -> Result<(), QueryError> {
    let freshen = Freshen {
        index: options.clone(),
        busy_wait: None,
    };
    // `trail index --watch` keeps the store fresh: read what it wrote instead of indexing.
    let summary = match trail_query::refresh(path, &freshen) {
        Refreshed::Indexed(s) => *s,
        Refreshed::Watched | Refreshed::TeamStore => trail_ingest::IndexSummary::default(),
        Refreshed::Failed(e) => return Err(e),
    };
    let query = Query::open(path)?;
    *generation += 1;
    let state = IndexState {
        sessions: query.session_count()?,
        last_indexed_at: query.last_indexed_at()?,
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
