//! "Make fresh, then read": the one place a frontend brings the local store up to date before
//! it reads (the live blocks view, the status line, the MCP server's freshness, `serve
//! --watch`).
//!
//! The index writes through a handle of its own, opened here for the run and closed after it;
//! the [`Query`] a frontend reads through never writes. A team store (`postgres://...`) is
//! never indexed into: `trail sync` fills it, so its refresh does nothing and no URL ever
//! reaches a file path.

use std::path::Path;
use std::time::Duration;

use trail_ingest::{IndexOptions, IndexSummary, NoProgress};
use trail_store::{Store, StoreError};

use crate::{Query, QueryError, Result};

/// How a refresh indexes.
#[derive(Debug, Clone, Default)]
pub struct Freshen {
    /// What the incremental index reads (roots, named files, sources).
    pub index: IndexOptions,
    /// How long the index waits for another writer before giving up (the read then shows what
    /// is stored); none: the store's usual wait.
    pub busy_wait: Option<Duration>,
}

/// What a refresh did.
#[derive(Debug)]
pub enum Refreshed {
    /// An index ran.
    Indexed(Box<IndexSummary>),
    /// `trail index --watch` keeps this store fresh: nothing to do.
    Watched,
    /// A team store: `trail sync` fills it, nothing is indexed here.
    TeamStore,
    /// The index failed (a file that vanished mid-read, another writer holding the store); the
    /// read shows the store as it is.
    Failed(QueryError),
}

impl Refreshed {
    /// The index's error, when it failed.
    pub fn error(&self) -> Option<&QueryError> {
        match self {
            Refreshed::Failed(e) => Some(e),
            _ => None,
        }
    }
}

/// Brings the store at `path` up to date, unless `trail index --watch` already does: one
/// incremental index through a writer opened for it (creating the store when new).
pub fn refresh(path: &Path, f: &Freshen) -> Refreshed {
    if trail_ingest::watch::running_watcher(path).is_some() {
        return Refreshed::Watched;
    }
    match index_now(path, f) {
        Ok(s) => Refreshed::Indexed(Box::new(s)),
        Err(e) => Refreshed::Failed(e),
    }
}

/// One incremental index into the store at `path`, watcher or not (an explicit request, such as
/// the MCP `index` tool). The writer is opened here and closed when it returns.
pub fn index_now(path: &Path, f: &Freshen) -> Result<IndexSummary> {
    let mut store = Store::open(path)?;
    if let Some(wait) = f.busy_wait {
        store
            .connection()
            .busy_timeout(wait)
            .map_err(StoreError::from)?;
    }
    Ok(trail_ingest::index(&mut store, &f.index, &NoProgress)?)
}

impl Query {
    /// Refreshes the store this reads (see [`refresh`]); a team store is left as it is.
    pub fn refresh(&self, f: &Freshen) -> Refreshed {
        if self.is_remote() {
            return Refreshed::TeamStore;
        }
        refresh(self.path(), f)
    }

    /// Refreshes the store at `path` (creating it when new), then opens it for reading.
    pub fn open_fresh(path: &Path, f: &Freshen) -> Result<(Query, Refreshed)> {
        let refreshed = refresh(path, f);
        Ok((Query::open(path)?, refreshed))
    }
}
