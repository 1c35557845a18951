//! Freshness without a daemon: before an answer, when the last index is older than the
//! configured age, the incremental index runs on its own thread and the answer waits for it at
//! most the configured budget. A run that takes longer keeps going; the answer says so and
//! uses what is stored, and the next answer sees what the run wrote.

use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use trail_ingest::{IndexOptions, IndexSummary};
use trail_query::{Freshen, QueryError, Refreshed};

/// The outcome of one index run on the background thread.
type RunResult = Result<IndexSummary, QueryError>;

/// The background index, when one runs.
#[derive(Default)]
pub struct Refresher {
    running: Mutex<Option<Running>>,
}

struct Running {
    started: Instant,
    /// None when no index ran (a watcher keeps the store fresh).
    done: Receiver<Option<RunResult>>,
}

impl Refresher {
    /// Refreshes the store when `last_indexed_at` is older than `after`, waiting at most
    /// `budget`. Returns a note for the answer when it did something, and whether the store
    /// changed (the caller reopens nothing: SQLite readers see committed rows).
    pub fn refresh(
        &self,
        store_path: &Path,
        options: &IndexOptions,
        last_indexed_at: Option<&str>,
        after: Duration,
        budget: Duration,
    ) -> Option<String> {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(run) = running.as_ref() {
            // A run an earlier answer started: report it, or wait the budget for it.
            return match run.done.recv_timeout(budget) {
                Ok(result) => {
                    *running = None;
                    result.as_ref().map(note_for)
                }
                Err(RecvTimeoutError::Timeout) => Some(still_running(run.started)),
                Err(RecvTimeoutError::Disconnected) => {
                    *running = None;
                    Some("The background index stopped without a result.".to_string())
                }
            };
        }
        if !is_stale(last_indexed_at, after, Utc::now()) {
            return None;
        }
        let (tx, rx) = mpsc::channel();
        let path = store_path.to_path_buf();
        let freshen = Freshen {
            index: options.clone(),
            busy_wait: None,
        };
        let spawned = std::thread::Builder::new()
            .name("trail-refresh".into())
            .spawn(move || {
                let result = match trail_query::refresh(&path, &freshen) {
                    Refreshed::Indexed(s) => Some(Ok(*s)),
                    Refreshed::Failed(e) => Some(Err(e)),
                    // `trail index --watch` keeps the store fresh: nothing to say.
                    Refreshed::Watched | Refreshed::TeamStore => None,
                };
                // The receiver is gone only when the server stopped; nothing to tell then.
                let _ = tx.send(result);
            });
        if let Err(e) = spawned {
            return Some(format!("Could not start the index: {e}."));
        }
        let started = Instant::now();
        match rx.recv_timeout(budget) {
            Ok(result) => result.as_ref().map(note_for),
            Err(RecvTimeoutError::Timeout) => {
                *running = Some(Running { started, done: rx });
                Some(still_running(started))
            }
            Err(RecvTimeoutError::Disconnected) => {
                Some("The index stopped without a result.".to_string())
            }
        }
    }

    /// Waits for a background run to end (the `index` tool runs its own right after).
    pub fn wait(&self) {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(run) = running.take() {
            let _ = run.done.recv();
        }
    }
}

/// Runs the incremental index into the store at `path` (opened for writing here only), watcher
/// or not: the `index` tool asked for it.
pub fn run_index(path: &Path, options: &IndexOptions) -> RunResult {
    trail_query::index_now(
        path,
        &Freshen {
            index: options.clone(),
            busy_wait: None,
        },
    )
}

/// True when the store was never indexed or its last index is older than `after`.
fn is_stale(last_indexed_at: Option<&str>, after: Duration, now: DateTime<Utc>) -> bool {
    let Some(last) = last_indexed_at.and_then(|t| DateTime::parse_from_rfc3339(t).ok()) else {
        return true;
    };
    let age = now.signed_duration_since(last.with_timezone(&Utc));
    age.to_std().map(|age| age > after).unwrap_or(false)
}

fn note_for(result: &RunResult) -> String {
    match result {
        Ok(s) if s.sessions_new + s.sessions_updated == 0 => {
            "Indexed just now: nothing new.".to_string()
        }
        Ok(s) => format!(
            "Indexed just now: {} new and {} updated sessions.",
            s.sessions_new, s.sessions_updated
        ),
        Err(e) => format!(
            "The index before this answer failed ({e}); answering from the store as it was."
        ),
    }
}

fn still_running(started: Instant) -> String {
    format!(
        "An index started {:.1} s ago is still running; this answer may miss the newest activity (ask again shortly).",
        started.elapsed().as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staleness_follows_the_last_index_time() {
        let now = DateTime::parse_from_rfc3339("2026-11-23T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let minute = Duration::from_secs(60);
        assert!(is_stale(None, minute, now));
        assert!(is_stale(Some("not a time"), minute, now));
        assert!(is_stale(Some("2026-11-23T11:58:00.000Z"), minute, now));
        assert!(!is_stale(Some("2026-11-23T11:59:30.000Z"), minute, now));
        // A clock that went backwards is not a reason to index.
        assert!(!is_stale(Some("2026-11-23T12:05:00.000Z"), minute, now));
    }
}
