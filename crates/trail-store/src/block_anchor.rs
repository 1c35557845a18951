//! The status line's remembered block start (issue 19; migration 15 says why and how it stays
//! true). The report crate decides what a block is; the store only keeps the fact "this request
//! starts a block" and says whether any change since could have made it false.

use rusqlite::{params, OptionalExtension};

use crate::{Result, Store};

/// A request known to start a 5-hour block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockAnchor {
    /// Its timestamp (the store's form).
    pub first_request: String,
}

impl Store {
    /// How many changes counted usage rows have seen (triggers count them). Reading it before
    /// and after a walk over the requests tells whether the walk saw one state of the store.
    pub fn usage_generation(&self) -> Result<i64> {
        Ok(self
            .conn
            .prepare_cached("SELECT generation FROM usage_watch WHERE id = 1")?
            .query_row([], |r| r.get(0))
            .optional()?
            .unwrap_or(0))
    }

    /// Whether a counted request has exactly this timestamp (the store's form), so that an
    /// anchor saved from a parsed time names a stored one.
    pub fn has_counted_request_at(&self, timestamp: &str) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached("SELECT 1 FROM usage WHERE counted = 1 AND timestamp = ?1")?
            .exists([timestamp])?)
    }

    /// The remembered block start, when no counted request at or before it has been added,
    /// removed or changed since it was saved.
    pub fn block_anchor(&self) -> Result<Option<BlockAnchor>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT a.first_request FROM block_anchor a, usage_watch w
                 WHERE a.id = 1 AND w.id = 1 AND w.low > a.first_request",
            )?
            .query_row([], |r| r.get(0))
            .optional()?
            .map(|first_request| BlockAnchor { first_request }))
    }

    /// Remembers that the request at `first_request` starts a block, as computed from the store
    /// at usage generation `generation`. Nothing is saved when the store changed since (the
    /// next run saves it). Best effort: a read-only store answers Ok(false).
    pub fn save_block_anchor(&self, generation: i64, first_request: &str) -> Result<bool> {
        if self.conn.is_readonly(rusqlite::DatabaseName::Main)? {
            return Ok(false);
        }
        // A status line never waits for an indexer's lock to save a cache entry.
        self.conn.busy_timeout(std::time::Duration::ZERO)?;
        let saved = self.save_block_anchor_now(generation, first_request);
        self.conn.busy_timeout(crate::BUSY_TIMEOUT)?;
        match saved {
            Err(crate::StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    || e.code == rusqlite::ErrorCode::DatabaseLocked =>
            {
                Ok(false)
            }
            other => other,
        }
    }

    fn save_block_anchor_now(&self, generation: i64, first_request: &str) -> Result<bool> {
        // Two statements, each checking that no change came in since the walk: the anchor is
        // replaced, then the watch forgets the changes the walk already saw. A change landing
        // between the two leaves `low` where it was, which only makes the anchor trusted less.
        let saved = self
            .conn
            .prepare_cached(
                "INSERT INTO block_anchor (id, generation, first_request)
             SELECT 1, ?1, ?2 WHERE (SELECT generation FROM usage_watch WHERE id = 1) = ?1
             ON CONFLICT (id) DO UPDATE SET generation = excluded.generation,
                                            first_request = excluded.first_request",
            )?
            .execute(params![generation, first_request])?;
        if saved == 0 {
            return Ok(false);
        }
        self.conn
            .prepare_cached("UPDATE usage_watch SET low = '~' WHERE id = 1 AND generation = ?1")?
            .execute([generation])?;
        Ok(true)
    }
}
