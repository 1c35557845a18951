//! Where reads come from: the local SQLite store, or a team store on another engine
//! (PostgreSQL, crate `trail-postgres`) behind [`RemoteBackend`].
//!
//! The remote side is kept narrow on purpose. A remote answers three things natively, where
//! its own engine must do the work: full-text search, read-only SQL and the schema. Every other
//! read (list, show, usage, standup, tips, improve, why...) runs the very same SQLite code over
//! a *snapshot*: an in-memory store holding the rows that read needs (the `sessions` table,
//! plus the rows of the sessions a report covers, or of one session), copied from the remote.
//! So the answers are the local store's by construction, and a query is written once.

use std::ops::Deref;

use trail_report::Filter;
use trail_store::{SearchOptions, SearchResults, SqlLimits, SqlResult, Store, TableDoc};

use crate::Result;

/// What a read needs in its snapshot, beyond the `sessions` table (always copied whole, within
/// the remote's user and host filters).
#[derive(Debug, Clone, PartialEq)]
pub enum Need {
    /// The `sessions` table only (list, resolving ids, short ids).
    SessionTable,
    /// Every row of these sessions (show, a transcript's pages).
    SessionRows(Vec<String>),
    /// The usage rollup of the sessions the filter covers and, with `rows`, their counted
    /// requests in the filter's range (usage in another zone or over part of a day, 5-hour
    /// blocks).
    Usage { filter: Filter, rows: bool },
    /// Every row of the sessions active in the filter's range, and of their subagents
    /// (standup, tips, improve).
    Activity(Filter),
    /// Every row of the sessions that touched a file of this name, and every commit reference
    /// (`why`, a file's history).
    FileNamed(String),
}

/// A team store's engine: the reads it answers natively and the snapshot it copies for the
/// rest (see the module doc).
pub trait RemoteBackend: Send {
    /// Names the store in messages (a URL without its password).
    fn describe(&self) -> String;
    /// Returns an in-memory store holding what `need` asks for.
    fn snapshot(&self, need: &Need) -> Result<Store>;
    /// Full-text search with the local store's query syntax and filters.
    fn search(&self, o: &SearchOptions) -> Result<SearchResults>;
    /// One read-only statement with the local store's caps.
    fn sql(&self, sql: &str, limits: SqlLimits) -> Result<SqlResult>;
    /// Every table and view with a line on each column.
    fn schema(&self) -> Result<Vec<TableDoc>>;
    /// When the store last received a sync (ISO time), if ever.
    fn last_synced_at(&self) -> Result<Option<String>>;
    /// How many sessions the store holds (within the user and host filters).
    fn session_count(&self) -> Result<i64>;
}

/// The store a read runs on: the local store, or a snapshot made for this read.
pub enum Reader<'a> {
    Local(&'a Store),
    Snapshot(Box<Store>),
}

impl Deref for Reader<'_> {
    type Target = Store;

    fn deref(&self) -> &Store {
        match self {
            Reader::Local(s) => s,
            Reader::Snapshot(s) => s,
        }
    }
}
