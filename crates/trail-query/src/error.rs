//! What can go wrong answering a query, split the way every frontend needs it: the caller's
//! mistake (a usage error, an MCP tool error, HTTP 400/404) or a failure of the store.

use std::path::PathBuf;

use trail_store::{SqlError, StoreError};

/// Errors from the query layer.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// Nothing was indexed yet at this path.
    #[error("no store at {} yet", .0.display())]
    NoStore(PathBuf),
    /// An argument that cannot be read (a time, a turn range, a cursor, a source name).
    #[error("{0}")]
    Invalid(String),
    /// The store failed, or an id / search query is wrong (see [`QueryError::is_caller_error`]).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Read-only SQL was refused or failed.
    #[error(transparent)]
    Sql(#[from] SqlError),
    /// A report failed.
    #[error(transparent)]
    Report(#[from] trail_report::ReportError),
    /// The index that brings a store up to date failed.
    #[error(transparent)]
    Index(#[from] trail_ingest::IngestError),
    /// `git` could not answer (not a repository, no such line, git missing).
    #[error("{0}")]
    Git(String),
    /// The team store failed (cannot connect, a query failed on the server).
    #[error("team store: {0}")]
    Remote(String),
    /// The team store refused something the caller asked (a role without the right, a
    /// query it cannot read).
    #[error("{0}")]
    RemoteRefused(String),
}

impl QueryError {
    /// True when the caller asked for something that cannot be: an unknown or ambiguous id, a
    /// query or argument that cannot be read, no store yet, SQL that would write. Frontends
    /// answer these as usage errors (exit 2, MCP `isError`, HTTP 4xx), never as crashes.
    pub fn is_caller_error(&self) -> bool {
        match self {
            QueryError::NoStore(_)
            | QueryError::Invalid(_)
            | QueryError::Git(_)
            | QueryError::RemoteRefused(_) => true,
            QueryError::Remote(_) => false,
            QueryError::Store(e) => matches!(
                e,
                StoreError::NotFound(_)
                    | StoreError::Ambiguous { .. }
                    | StoreError::InvalidQuery(_)
                    | StoreError::NeedsUpgrade { .. }
            ),
            QueryError::Sql(e) => matches!(e, SqlError::Denied(_) | SqlError::Invalid(_)),
            QueryError::Report(_) | QueryError::Index(_) => false,
        }
    }

    /// True for an unknown session id (HTTP 404).
    pub fn is_not_found(&self) -> bool {
        matches!(self, QueryError::Store(StoreError::NotFound(_)))
    }

    /// What to do about it, when there is something to say.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            QueryError::NoStore(_) => Some(
                "run `trail index` first (or `trail index --home examples/home` to try the samples)",
            ),
            QueryError::Store(StoreError::InvalidQuery(_)) => Some(
                "plain words must all match; use \"a phrase\", prefix*, OR, NOT (for example: timeout OR deadline NOT test)",
            ),
            // A read of a store an older trail made, opened read-only (never migrated by a
            // reader), that needs a table or column it lacks.
            QueryError::Store(StoreError::Sqlite(e)) if e.to_string().starts_with("no such") => {
                Some("the store may be older than this trail: run `trail index` to upgrade it")
            }
            QueryError::Report(trail_report::ReportError::Sqlite(e))
                if e.to_string().starts_with("no such") =>
            {
                Some("the store may be older than this trail: run `trail index` to upgrade it")
            }
            _ => None,
        }
    }
}

pub type Result<T, E = QueryError> = std::result::Result<T, E>;
