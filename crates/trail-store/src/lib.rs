//! trail's SQLite store: the Chronicle-compatible schema plus trail's own tables, append-only
//! migrations run on open, the writer the indexer uses, and the queries the commands use.
//!
//! Connections are opened with explicit pragmas (WAL, a long busy timeout, foreign keys,
//! `synchronous=NORMAL`). Every write goes through `BEGIN IMMEDIATE`, so two indexers queue
//! behind SQLite's lock instead of failing with "database is locked", and a killed process
//! leaves the last committed state.

mod block_anchor;
mod bulk;
mod caps;
mod checkpoint;
mod chronicle;
mod export;
pub mod filter;
mod forget;
mod history;
mod read;
mod schema;
mod search;
mod search_db;
mod search_doc;
mod search_query;
mod search_rank;
mod search_sig;
mod search_typo;
mod sql;
mod stand_ins;
mod text;
mod unsynced;
mod usage_rollup;
mod varint;
mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

pub use block_anchor::BlockAnchor;
pub use export::{ExportMessage, ToolResultRow};
pub use filter::{is_chat_sql, like_escape, Filter, Timestamp, Where};
pub use forget::{ForgetSelection, Forgotten};
pub use history::{FileMatch, FileTouchRow};
pub use read::{
    ContinuationLink, DoctorFileStats, EditCallRow, IssueRow, ListFilter, MessageRow,
    SessionDetail, SessionRow, SourceStats, LAST_INDEX_AT, SHORT_ID_MIN,
};
pub use search::{
    number_placeholders, Correction, SearchCondition, SearchHit, SearchOptions, SearchResults,
    SearchSort, HIT_END, HIT_START,
};
pub use search_db::{search_path, SearchBatch, SearchWriter};
pub use search_query::{lex as lex_query, translate_query, Lexeme as QueryLexeme};
pub use search_rank::PROMPT_SCORE_MAX;
pub use sql::{
    Cell, ColumnDoc, ReadOnlySql, SqlError, SqlLimits, SqlResult, TableDoc, DEFAULT_MAX_BYTES,
};
pub use text::{strip_ansi, unescape_json_snippet};
pub use unsynced::disk_bytes;
pub use write::{now_iso, FileRecord, Fingerprint, LinkScope, StoredFile, WriteStats};

/// How long a writer waits for another process's transaction before giving up. Long enough
/// for a concurrent indexer's batch.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Errors from the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error. Not marked as the error's source: rusqlite's own source
    /// repeats its message, and a chained report printed it three times (issue 21).
    #[error("store error: {0}")]
    Sqlite(rusqlite::Error),
    /// The store's file exists but is not a SQLite database (another file at that path).
    #[error("{} is not a SQLite database, so it cannot be trail's store", path.display())]
    NotADatabase { path: PathBuf },
    /// The store folder could not be created.
    #[error("cannot create {path}: {source}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The store was written by a newer trail.
    #[error("the store at {path} has schema version {found}, newer than this trail supports ({supported}); upgrade trail")]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    /// No session matches an id or prefix.
    #[error("no session matches {0:?}")]
    NotFound(String),
    /// A search query that cannot be run (the message says why, in the user's terms).
    #[error("cannot read the search query: {0}")]
    InvalidQuery(String),
    /// Several sessions match an id prefix.
    #[error("{prefix:?} matches {count} sessions; give more of the id (for example {examples})")]
    Ambiguous {
        prefix: String,
        count: usize,
        examples: String,
    },
    /// A stored value could not be decoded.
    #[error("corrupt value in the store: {0}")]
    Corrupt(String),
    /// A first index was filling the store when the system went down (`unsynced.rs`).
    #[error("the store at {} was being filled by its first index when the system went down, so it may be damaged; run `trail index` to set it aside and index again", path.display())]
    Interrupted { path: PathBuf },
    /// A reader found the store older than this trail reads (its schema, or its search
    /// database): a writer brings it up to date, a reader never does.
    #[error("the store at {} needs `trail index` to bring it up to date: {reason}", path.display())]
    NeedsUpgrade { path: PathBuf, reason: String },
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sqlite(e)
    }
}

impl StoreError {
    /// Names the file in SQLite's "file is not a database" (code 26), which says neither
    /// which file nor what to do.
    fn at_path(self, path: &Path) -> StoreError {
        match self {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::NotADatabase =>
            {
                StoreError::NotADatabase {
                    path: path.to_path_buf(),
                }
            }
            other => other,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// An open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// While an index writes: the thread that checkpoints this connection's commits.
    checkpoints: Option<Box<checkpoint::BackgroundCheckpoints>>,
    /// While a first index writes without syncs: its marker and the thread that writes the
    /// databases' pages to disk meanwhile (`unsynced.rs`).
    unsynced: Option<Box<unsynced::Unsynced>>,
    /// The page cache each writing connection may hold, in KiB, when [`Store::limit_cache`]
    /// lowered it (otherwise [`MEMORY_SETTINGS`]' and the search writer's own).
    cache_kib: Option<u32>,
    /// Opened read-only without a search database it can read (missing, or made by an older
    /// trail): a search says to run `trail index` instead of answering nothing.
    unsearchable: bool,
    /// The rowids a search scores alone, asked by SQL (`search_rank::ScoredSet`).
    scored: search_rank::ScoredSet,
}

impl Drop for Store {
    /// A first index that ended early (an error, a panic) still leaves a durable store.
    fn drop(&mut self) {
        if self.unsynced.is_some() {
            let _ = self.stop_background_checkpoints();
            if let Err(e) = self.make_durable() {
                tracing::warn!(error = %e, "could not sync the store to disk");
            }
        }
    }
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    ///
    /// A failure is logged at debug level only: the caller reports it, and an error-level log
    /// printed it a second time.
    #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
    pub fn open(path: &Path) -> Result<Store> {
        Self::open_inner(path).map_err(|e| e.at_path(path))
    }

    fn open_inner(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        unsynced::recover(path)?;
        let conn = Connection::open(path)?;
        configure(&conn)?;
        schema::migrate(&conn, path)?;
        chronicle::create_if_new(&conn)?;
        attach_search(&conn, path)?;
        let scored = search_rank::ScoredSet::register(&conn)?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
            checkpoints: None,
            unsynced: None,
            cache_kib: None,
            scored,
            unsearchable: false,
        };
        // A first index killed before its end left these out (see `bulk.rs`).
        store.build_deferred_indexes()?;
        Ok(store)
    }

    /// Opens an existing store for reading only (no migrations, no writes possible).
    pub fn open_read_only(path: &Path) -> Result<Store> {
        Self::open_read_only_inner(path).map_err(|e| e.at_path(path))
    }

    fn open_read_only_inner(path: &Path) -> Result<Store> {
        unsynced::check_readable(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        text::register_functions(&conn)?;
        let version = schema::check_version(&conn, path)?;
        // The store's pages through `pread` and SQLite's page cache, the search index's
        // through a memory map (`search_db::attach`). A search reads a few scattered pages of
        // this file (each hit's messages): mapped, each cost a page fault that mapped sixteen
        // pages around it and their unmapping at exit, 5 % of a two-word search; and every
        // page a long-lived reader (the TUI, the MCP server) ever touched stayed in its
        // resident memory (a TUI session of five searches: 112 MB mapped, 27 MB read).
        conn.execute_batch("PRAGMA temp_store = MEMORY;")?;
        let searchable = search_db::attach(&conn, path, search_db::Attach::Read)?;
        if version < schema::CURRENT {
            // Read as it is: what the old schema holds still answers; the next index migrates.
            tracing::debug!(version, current = schema::CURRENT, "reading an older store");
        }
        let scored = search_rank::ScoredSet::register(&conn)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            checkpoints: None,
            unsynced: None,
            cache_kib: None,
            scored,
            unsearchable: !searchable,
        })
    }

    /// Opens an in-memory store (tests).
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory()?;
        configure(&conn)?;
        schema::migrate(&conn, Path::new(":memory:"))?;
        chronicle::create_if_new(&conn)?;
        attach_search(&conn, Path::new(":memory:"))?;
        let scored = search_rank::ScoredSet::register(&conn)?;
        Ok(Store {
            conn,
            path: PathBuf::from(":memory:"),
            checkpoints: None,
            unsynced: None,
            cache_kib: None,
            scored,
            unsearchable: false,
        })
    }

    /// Bounds the page cache of this store's writing connections (this one, for both of its
    /// databases, and the search writer [`Store::search_writer`] opens) to `kib` KiB each.
    ///
    /// For a process that stays resident and writes little at a time (`index --watch`): an
    /// FTS5 merge, which a small commit can start, otherwise fills the caches to their full
    /// size (48 MB together) and the process keeps that as its peak. With a small cache the
    /// merge spills its pages to the WAL instead, which costs a little time and no memory.
    pub fn limit_cache(&mut self, kib: u32) -> Result<()> {
        self.conn
            .execute_batch(&cache_pragmas(kib, &["main", "search"]))?;
        self.cache_kib = Some(kib);
        Ok(())
    }

    /// Opens the writer of the search database, with this store's cache limit.
    pub fn search_writer(&self) -> Result<SearchWriter> {
        let w = SearchWriter::open(&self.path)?;
        if let Some(kib) = self.cache_kib {
            w.limit_cache(kib)?;
        }
        Ok(w)
    }

    /// Returns the store's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Returns the raw connection, for read-only queries in tests and tools.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Returns the Chronicle schema version the store follows (its `schema_version` row: 3 since
    /// issue 45).
    pub fn chronicle_schema_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT version FROM schema_version", [], |r| r.get(0))?)
    }

    /// Fills `sessions.agent_name` where a store made before Chronicle schema 3 left it empty,
    /// from each session's source (`name` maps `sessions.source` to the agent's name); once per
    /// store, after migration 17 (`store_meta.fill_agent_names`). Returns the sessions filled.
    pub fn fill_agent_names(&mut self, name: &dyn Fn(&str) -> Option<&'static str>) -> Result<u64> {
        let pending = self
            .conn
            .prepare_cached("SELECT 1 FROM store_meta WHERE key = 'fill_agent_names'")?
            .exists([])?;
        if !pending {
            return Ok(0);
        }
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let sources: Vec<String> = tx
            .prepare("SELECT DISTINCT source FROM sessions WHERE agent_name IS NULL")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut filled = 0u64;
        for source in sources {
            if let Some(n) = name(&source) {
                filled += tx.execute(
                    "UPDATE sessions SET agent_name = ?2 WHERE source = ?1 AND agent_name IS NULL",
                    rusqlite::params![source, n],
                )? as u64;
            }
        }
        tx.execute("DELETE FROM store_meta WHERE key = 'fill_agent_names'", [])?;
        tx.commit()?;
        Ok(filled)
    }

    /// The error a search gives on a store opened read-only without a search database it can
    /// read (see [`StoreError::NeedsUpgrade`]).
    pub(crate) fn unsearchable(&self) -> Option<StoreError> {
        self.unsearchable.then(|| StoreError::NeedsUpgrade {
            path: self.path.clone(),
            reason: "its search database is missing or older than this trail reads".into(),
        })
    }

    /// Returns trail's schema version (the number of migrations applied).
    pub fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }
}

/// Attaches the search database (creating it when new) and, when it is new or was made for
/// another store (a store upgraded from before issue 12, a search file deleted by hand),
/// builds it from the store. A search database that merely lags (a killed index) is caught up
/// by the next index instead, so opening stays cheap while another process indexes.
fn attach_search(conn: &Connection, path: &Path) -> Result<()> {
    search_db::attach(conn, path, search_db::Attach::Write)?;
    if search_db::needs_rebuild(conn)? {
        let t = std::time::Instant::now();
        let sessions = search_db::apply(conn, None)?;
        tracing::info!(
            sessions,
            ms = t.elapsed().as_millis() as u64,
            "search database built"
        );
    }
    Ok(())
}

/// Prepared statements a connection keeps (rusqlite keeps 16 by default). Writing one session
/// runs about 30 distinct statements in turn, so with 16 each was evicted before its next use
/// and prepared again for every session: parsed and planned anew, thousands of times per batch.
pub(crate) const STATEMENT_CACHE: usize = 128;

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // Before the migrations: migration 8 calls it.
    text::register_functions(conn)?;
    enable_wal(conn, "main")?;
    conn.execute_batch(
        "PRAGMA foreign_keys = ON;
         PRAGMA synchronous = NORMAL;",
    )?;
    conn.execute_batch(MEMORY_SETTINGS)?;
    Ok(())
}

/// Where a writable connection keeps temporary data, how large its page cache is (32 MB), and
/// that its sorts use no helper thread (SQLite's default). The deferred indexes change all
/// three while they are built (`bulk.rs`'s `SORT_IN_PIECES`), then set these again.
pub(crate) const MEMORY_SETTINGS: &str =
    "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -32000; PRAGMA threads = 0;";

/// `PRAGMA cache_size` for each of `schemas`, at `kib` KiB.
pub(crate) fn cache_pragmas(kib: u32, schemas: &[&str]) -> String {
    schemas
        .iter()
        .map(|s| format!("PRAGMA {s}.cache_size = -{kib};"))
        .collect()
}

/// Switches the store to WAL (readers run while an index writes). Switching needs the file to
/// itself, and SQLite reports "database is locked" at once instead of waiting when another
/// process holds it (two indexers starting on a new store), so this waits and retries.
pub(crate) fn enable_wal(conn: &Connection, schema: &str) -> Result<()> {
    let started = std::time::Instant::now();
    loop {
        let mode: rusqlite::Result<String> =
            conn.query_row(&format!("PRAGMA {schema}.journal_mode = WAL"), [], |r| {
                r.get(0)
            });
        match mode {
            Ok(_) => return Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && started.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e.into()),
        }
    }
}
