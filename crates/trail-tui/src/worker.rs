//! The background threads that run every query, so the UI never waits on the store.
//!
//! Each worker has its own read-only [`Query`] (see [`Senders`] for who answers what). Each
//! request of the kinds a person can repeat faster than the store answers (list, search,
//! preview, transcript) carries a generation number; the UI bumps the generation of a kind with each new request and stores it in
//! [`Generations`]. The worker skips any request whose generation is no longer the newest of
//! its kind, and the UI drops any reply that is not the newest, so a newer keystroke always
//! wins and no stale answer is ever shown.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

use trail_query::{
    Clock, DetailRequest, ListRequest, Query, QueryError, Reopen, SearchRequest, SearchResults,
    SessionDetail, SessionPage,
};
use trail_render::{ExportOptions, Exporter, Format, Redactor};

/// The kinds of request that carry a generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Results,
    Preview,
    Transcript,
}

impl Kind {
    fn slot(self) -> usize {
        self as usize
    }
}

/// The newest generation asked for, per kind (shared by the UI and the worker).
#[derive(Debug, Default)]
pub struct Generations([AtomicU64; 3]);

impl Generations {
    /// Starts a new request of `kind`; returns its generation.
    pub fn bump(&self, kind: Kind) -> u64 {
        self.0[kind.slot()].fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The newest generation of `kind`.
    pub fn newest(&self, kind: Kind) -> u64 {
        self.0[kind.slot()].load(Ordering::SeqCst)
    }
}

/// What the UI asks for.
#[derive(Debug, Clone)]
pub enum Request {
    /// A page of sessions with their `+N` counts; `append` adds a next page to the list shown.
    List {
        gen: u64,
        req: ListRequest,
        append: bool,
    },
    Search {
        gen: u64,
        req: SearchRequest,
    },
    /// One turn of a session (none: its first), for the preview pane.
    Preview {
        gen: u64,
        id: String,
        turn: Option<i64>,
    },
    /// A whole session for the transcript view.
    Transcript {
        gen: u64,
        id: String,
        /// Where to put the cursor first: the turn of a search hit.
        turn: Option<i64>,
        /// The words to mark (the search box's words).
        terms: Vec<String>,
    },
    Reopen {
        id: String,
    },
    Export {
        id: String,
        format: Format,
        dir: PathBuf,
    },
    /// The active 5-hour block, priced with `prices` (the config file's overrides applied).
    Usage {
        prices: Box<trail_report::PriceTable>,
    },
    /// Write the session as a new session of another agent (trail-continue, as `trail resume
    /// --in` does, secrets redacted).
    Continue {
        id: String,
        target: trail_continue::Target,
        homes: trail_continue::TargetHomes,
    },
    /// What a session changed (`trail diff`).
    Diff {
        id: String,
    },
}

impl Request {
    fn generation(&self) -> Option<(Kind, u64)> {
        match self {
            Request::List { gen, .. } | Request::Search { gen, .. } => Some((Kind::Results, *gen)),
            Request::Preview { gen, .. } => Some((Kind::Preview, *gen)),
            Request::Transcript { gen, .. } => Some((Kind::Transcript, *gen)),
            _ => None,
        }
    }
}

/// Where requests go: lists and searches to one worker, previews, transcripts, resumes and
/// exports to another, each with its own read-only connection, so a slow preview never holds
/// up the answer to the next keystroke.
#[derive(Debug, Clone)]
pub struct Senders {
    pub results: Sender<Request>,
    pub details: Sender<Request>,
}

impl Senders {
    /// Sends `r` to its worker; false when that worker is gone.
    pub fn send(&self, r: Request) -> bool {
        let to = match r {
            Request::List { .. } | Request::Search { .. } => &self.results,
            _ => &self.details,
        };
        to.send(r).is_ok()
    }
}

/// A query's failure as the UI shows it: the message and, when there is one, what to do.
pub type Failure = String;

/// What the worker answers.
#[derive(Debug)]
pub enum Reply {
    List {
        gen: u64,
        append: bool,
        result: Result<(SessionPage, HashMap<String, i64>), Failure>,
    },
    Search {
        gen: u64,
        result: Result<SearchResults, Failure>,
    },
    Preview {
        gen: u64,
        turn: Option<i64>,
        result: Result<SessionDetail, Failure>,
    },
    Transcript {
        gen: u64,
        turn: Option<i64>,
        terms: Vec<String>,
        result: Result<SessionDetail, Failure>,
    },
    Reopen(Result<Reopen, Failure>),
    Exported(Result<(PathBuf, u64), Failure>),
    Continued(Result<trail_continue::Continuation, Failure>),
    Diff {
        id: String,
        result: Result<trail_query::SessionDiff, Failure>,
    },
    Usage(Result<trail_report::BlocksReport, Failure>),
}

/// Runs requests until the UI hangs up. `send` wraps each reply into the UI's event type.
pub fn run<M>(
    query: Query,
    clock: Option<Clock>,
    requests: Receiver<Request>,
    replies: Sender<M>,
    gens: Arc<Generations>,
    wrap: fn(Reply) -> M,
) {
    while let Ok(first) = requests.recv() {
        // Take everything queued: only the newest request of each kind is worth answering.
        let mut batch = vec![first];
        batch.extend(requests.try_iter());
        for req in batch {
            if let Some((kind, gen)) = req.generation() {
                if gen < gens.newest(kind) {
                    continue;
                }
            }
            let clock = clock.clone().unwrap_or_else(Clock::utc_now);
            let reply = answer(&query, &clock, req);
            if replies.send(wrap(reply)).is_err() {
                return;
            }
        }
    }
}

fn failure(e: QueryError) -> Failure {
    match e.hint() {
        Some(h) => format!("{e} ({h})"),
        None => e.to_string(),
    }
}

fn answer(query: &Query, clock: &Clock, req: Request) -> Reply {
    match req {
        Request::List { gen, req, append } => {
            let result = query
                .list(&req, clock)
                .and_then(|page| {
                    let ids: Vec<String> = page.sessions.iter().map(|s| s.id.to_string()).collect();
                    let counts = query.descendant_counts(&ids)?;
                    Ok((page, counts))
                })
                .map_err(failure);
            Reply::List {
                gen,
                append,
                result,
            }
        }
        Request::Search { gen, req } => Reply::Search {
            gen,
            result: query.search(&req, clock).map_err(failure),
        },
        Request::Preview { gen, id, turn } => {
            let result = query
                .detail(&DetailRequest {
                    id,
                    from_turn: turn,
                    to_turn: turn,
                })
                .map_err(failure);
            Reply::Preview { gen, turn, result }
        }
        Request::Transcript {
            gen,
            id,
            turn,
            terms,
        } => Reply::Transcript {
            gen,
            turn,
            terms,
            result: query
                .detail(&DetailRequest {
                    id,
                    ..DetailRequest::default()
                })
                .map_err(failure),
        },
        Request::Reopen { id } => Reply::Reopen(query.reopen(&id).map_err(failure)),
        Request::Export { id, format, dir } => Reply::Exported(export(query, &id, format, &dir)),
        Request::Continue { id, target, homes } => {
            Reply::Continued(continue_in(query, &id, target, homes))
        }
        Request::Diff { id } => Reply::Diff {
            result: query.session_diff_of(&id, None).map_err(failure),
            id,
        },
        Request::Usage { prices } => {
            let options = trail_report::BlockOptions {
                breakdown: true,
                active_only: true,
            };
            Reply::Usage(
                query
                    .blocks(
                        &trail_query::ReportFilter::default(),
                        &prices,
                        clock,
                        &options,
                    )
                    .map_err(failure),
            )
        }
    }
}

/// Continues session `id` in `target` with the defaults of `trail resume --in` (secrets
/// redacted, tool output cut at the usual cap).
fn continue_in(
    query: &Query,
    id: &str,
    target: trail_continue::Target,
    homes: trail_continue::TargetHomes,
) -> Result<trail_continue::Continuation, Failure> {
    use trail_continue::ContinueError;
    let said = |e: ContinueError| match e {
        ContinueError::Query(q) => failure(q),
        other => other.to_string(),
    };
    let options = trail_continue::ContinueOptions::new(homes).map_err(said)?;
    trail_continue::continue_session(query, id, target, &options).map_err(said)
}

/// Writes one session, secrets redacted, into `dir`; returns the file and how many values
/// were redacted.
fn export(
    query: &Query,
    id: &str,
    format: Format,
    dir: &std::path::Path,
) -> Result<(PathBuf, u64), Failure> {
    let row = query.session(id).map_err(failure)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(trail_render::file_name(&row.id, format));
    let file = std::fs::File::create(&path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let redactor = Redactor::new(&[]).map_err(|e| e.to_string())?;
    let rows = query
        .session_store(std::slice::from_ref(&row.id))
        .map_err(failure)?;
    let mut exporter = Exporter::new(
        &rows,
        &redactor,
        ExportOptions {
            agent_name: Some(trail_query::registry::name_of),
            ..ExportOptions::default()
        },
    );
    exporter
        .write_session(&row, format, &mut out)
        .map_err(|e| e.to_string())?;
    std::io::Write::flush(&mut out).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok((path, exporter.counts().total()))
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[test]
    fn a_newer_request_makes_older_ones_stale() {
        let store = trail_store::Store::open_in_memory().unwrap();
        let query = Query::from_store(store);
        let gens = Arc::new(Generations::default());
        let (req_tx, req_rx) = mpsc::channel();
        let (reply_tx, reply_rx) = mpsc::channel();
        // Three keystrokes queued before the worker looks: only the last is answered.
        for q in ["u", "un", "units"] {
            let gen = gens.bump(Kind::Results);
            req_tx
                .send(Request::Search {
                    gen,
                    req: SearchRequest {
                        query: q.into(),
                        ..SearchRequest::default()
                    },
                })
                .unwrap();
        }
        drop(req_tx);
        run(query, None, req_rx, reply_tx, gens.clone(), |r| r);
        let replies: Vec<Reply> = reply_rx.try_iter().collect();
        assert_eq!(replies.len(), 1, "{replies:?}");
        assert!(matches!(replies[0], Reply::Search { gen: 3, .. }));
        assert_eq!(gens.newest(Kind::Results), 3);
    }
}
