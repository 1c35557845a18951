//! Migrations: SQL files under `migrations/`, embedded at compile time and applied in order.
//! `PRAGMA user_version` records how many have run. Never edit one that has shipped.

use std::path::Path;

use rusqlite::Connection;

use crate::{Result, StoreError};

/// Every migration, in order. Append only.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_init.sql"),
    include_str!("../migrations/0002_search.sql"),
    include_str!("../migrations/0003_reports.sql"),
    include_str!("../migrations/0004_file_state.sql"),
    include_str!("../migrations/0005_turn_rebuild_index.sql"),
    include_str!("../migrations/0006_store_meta.sql"),
    include_str!("../migrations/0007_parser_versions.sql"),
    include_str!("../migrations/0008_index_without_escapes.sql"),
    include_str!("../migrations/0009_continuations.sql"),
    include_str!("../migrations/0010_usage_counted_time.sql"),
    include_str!("../migrations/0011_tool_call_index.sql"),
    include_str!("../migrations/0012_file_snapshots.sql"),
    include_str!("../migrations/0013_forget.sql"),
    include_str!("../migrations/0014_search_database.sql"),
    include_str!("../migrations/0015_block_anchor.sql"),
    include_str!("../migrations/0016_lookups_by_path.sql"),
    include_str!("../migrations/0017_chronicle_schema_3.sql"),
    include_str!("../migrations/0018_prompts_by_turn.sql"),
];

/// The schema version this build writes.
pub const CURRENT: i64 = MIGRATIONS.len() as i64;

/// Applies the migrations the store lacks, each in its own immediate transaction.
pub fn migrate(conn: &Connection, path: &Path) -> Result<()> {
    loop {
        let version = check_version(conn, path)?;
        if version >= CURRENT {
            return Ok(());
        }
        // Another process may migrate at the same time: re-check inside the lock.
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let now: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if now == version {
            let sql = MIGRATIONS[version as usize];
            if let Err(e) = conn.execute_batch(sql) {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e.into());
            }
            conn.execute_batch(&format!("PRAGMA user_version = {}", version + 1))?;
        }
        conn.execute_batch("COMMIT")?;
    }
}

/// Returns the store's version, or an error when a newer trail wrote it.
pub fn check_version(conn: &Connection, path: &Path) -> Result<i64> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > CURRENT {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: version,
            supported: CURRENT,
        });
    }
    Ok(version)
}

/// Whether the store has the index `name` (one lookup; the usage dedupe asks it at every
/// batch, see `usage_rollup.rs`).
pub(crate) fn index_exists(conn: &rusqlite::Connection, name: &str) -> Result<bool> {
    let mut stmt = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM main.sqlite_master WHERE type = 'index' AND name = ?1)",
    )?;
    Ok(stmt.query_row([name], |r| r.get(0))?)
}
