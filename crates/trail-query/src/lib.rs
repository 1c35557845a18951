//! Every read a trail frontend needs, with its option types: resolve an id prefix, list
//! sessions (filters, keyset cursor), a session's detail by turn range, search, a file's
//! history and `why`, usage and the standup / tips / improve data, read-only SQL, and how to
//! reopen a session.
//!
//! The CLI, the MCP server, and the TUI / web viewer that follow call these functions and
//! never re-implement a query: option types take what a person or an agent writes (`7d`,
//! `2026-11-01`, an id prefix, a source name) and this crate resolves and validates it, so
//! every frontend accepts the same input and reports the same errors.
//!
//! No printing, no environment: the caller passes the store's path and the clock.

mod backend;
mod browse;
mod diff;
mod error;
mod files;
mod fresh;
mod reports;
mod resume;
mod search;
mod sessions;
mod sql;
pub mod time;

use std::path::{Path, PathBuf};

pub use backend::{Need, Reader, RemoteBackend};
pub use browse::InlineFilters;
pub use error::{QueryError, Result};
pub use files::{BlameLine, FileHistory, FileHistoryRequest, Why, WhyChange, WhyVerdict};
pub use fresh::{index_now, refresh, Freshen, Refreshed};
pub use reports::{parse_group, ReportFilter, ReportKind};
pub use resume::{reopen_command, shell_quote, Reopen};
pub use search::{highlight_terms, open_command, JsonHit, SearchRequest};
pub use sessions::{cursor_after, DetailRequest, ListRequest, SessionFilter, SessionPage};
pub use sql::{SqlRequest, SQL_SCHEMA_SUMMARY};
pub use time::{parse_time, Clock};
pub use trail_diff::{ChangeKind, FileChange, FileDiff, SessionDiff};

/// The source registry (every agent trail reads: id, display name, aliases, what it records,
/// how to resume), for frontends that do not depend on trail-sources.
pub mod registry {
    pub use trail_sources::{
        display_name, find, info, name_of, source_ids, sources, Records, SourceInfo,
    };
}

pub use trail_report::{
    BlockOptions, BlocksReport, DayZone, GroupBy, ImproveReport, PriceTable, Standup, Status,
    StatusRequest, Tips, UsageOptions, UsageReport,
};
pub use trail_store::{
    Cell, ContinuationLink, Correction, FileTouchRow, MessageRow, SearchHit, SearchResults,
    SearchSort, SessionDetail, SessionRow, SqlLimits, SqlResult, TableDoc, HIT_END, HIT_START,
};

use trail_store::Store;

/// A session store opened for frontends' reads: the local SQLite store, or a team store
/// ([`Query::from_remote`]).
pub struct Query {
    /// The local store; none for a team store (nothing is indexed into a team store: `trail
    /// sync` pushes to it).
    store: Option<Store>,
    path: PathBuf,
    remote: Option<Box<dyn RemoteBackend>>,
}

impl Query {
    /// Opens the store at `path` for reading only: no recovery, no migration, no index build,
    /// no write can happen through it (SQLite's read-only mode). A store older than this trail
    /// answers what its schema holds, and says to run `trail index` (the writer, which
    /// migrates) where it cannot. A store that does not exist yet is [`QueryError::NoStore`]
    /// (frontends say to run `trail index`), never an empty store created behind the user's
    /// back.
    pub fn open(path: &Path) -> Result<Query> {
        if !path.exists() {
            return Err(QueryError::NoStore(path.to_path_buf()));
        }
        let store = Store::open_read_only(path)?;
        Ok(Query {
            store: Some(store),
            path: path.to_path_buf(),
            remote: None,
        })
    }

    /// Wraps an open store (tests, and frontends that index and then read).
    pub fn from_store(store: Store) -> Query {
        let path = store.path().to_path_buf();
        Query {
            store: Some(store),
            path,
            remote: None,
        }
    }

    /// Reads from a team store (PostgreSQL: `trail_postgres::PgBackend`). The answers are the
    /// local store's for the same data (see [`RemoteBackend`]).
    pub fn from_remote(remote: Box<dyn RemoteBackend>) -> Result<Query> {
        let path = PathBuf::from(remote.describe());
        Ok(Query {
            store: None,
            path,
            remote: Some(remote),
        })
    }

    /// Whether this reads a team store.
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// The store a read runs on: the local one, or a snapshot holding what `need` asks for.
    pub(crate) fn reader(&self, need: impl FnOnce() -> Need) -> Result<Reader<'_>> {
        match (&self.remote, &self.store) {
            (Some(r), _) => Ok(Reader::Snapshot(Box::new(r.snapshot(&need())?))),
            (None, Some(store)) => Ok(Reader::Local(store)),
            (None, None) => unreachable!("a Query holds a local store or a team store"),
        }
    }

    /// The store holding every row of these sessions, for what reads them whole (an export, a
    /// session page): the local store, or a snapshot of the team store's rows.
    pub fn session_store<S: AsRef<str>>(&self, ids: &[S]) -> Result<Reader<'_>> {
        self.reader(|| Need::SessionRows(ids.iter().map(|i| i.as_ref().to_string()).collect()))
    }

    /// The team store, when this reads one.
    pub(crate) fn remote(&self) -> Option<&dyn RemoteBackend> {
        self.remote.as_deref()
    }

    /// The store's file (for a team store, its URL without the password).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The local store (`trail doctor`'s statistics); none when this reads a team store.
    pub fn local_store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    /// When an index run last finished (ISO time), if ever.
    pub fn last_indexed_at(&self) -> Result<Option<String>> {
        if let Some(r) = self.remote() {
            return r.last_synced_at();
        }
        Ok(self.reader(|| Need::SessionTable)?.last_indexed_at()?)
    }

    /// How many sessions the store holds (main sessions and subagents).
    pub fn session_count(&self) -> Result<i64> {
        if let Some(r) = self.remote() {
            return r.session_count();
        }
        Ok(self
            .reader(|| Need::SessionTable)?
            .connection()
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .map_err(trail_store::StoreError::from)?)
    }
}

/// Validates a source name: its id (`claude-code`, `codex`...) or an alias (`claude`), any
/// case, with the list of known ids on error.
pub fn parse_source(s: &str) -> Result<trail_model::SourceKind> {
    trail_sources::find(s).ok_or_else(|| {
        let all: Vec<&str> = trail_sources::source_ids().collect();
        QueryError::Invalid(format!("unknown source {s:?}; one of: {}", all.join(", ")))
    })
}
