//! What the ingest asks before writing a session that only stands in for another source's
//! (Claude Code's prompt history for a deleted transcript): whether the store holds the real
//! one, and where a session's stored messages end.

use rusqlite::{params, OptionalExtension};

use crate::{Result, Store};

impl Store {
    /// Returns whether the store holds a session with this id.
    pub fn has_session(&self, id: &str) -> Result<bool> {
        Ok(self
            .connection()
            .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
            .exists([id])?)
    }

    /// Returns the next free `seq` and the turn count of a stored session (`(0, 0)` when the
    /// store does not hold it), so an append continues after what is stored.
    pub fn session_extent(&self, id: &str) -> Result<(u32, u32)> {
        let next: i64 = self
            .connection()
            .prepare_cached("SELECT coalesce(max(seq) + 1, 0) FROM messages WHERE session_id = ?1")?
            .query_row([id], |r| r.get(0))?;
        let turns: Option<i64> = self
            .connection()
            .prepare_cached("SELECT turn_count FROM sessions WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?;
        Ok((
            u32::try_from(next).unwrap_or(0),
            u32::try_from(turns.unwrap_or(0)).unwrap_or(0),
        ))
    }

    /// Returns the sessions of `source` run in `cwd`, with their first and last times.
    pub fn sessions_in(&self, source: &str, cwd: &str) -> Result<Vec<(String, String, String)>> {
        let mut stmt = self.connection().prepare_cached(
            "SELECT id, coalesce(created_at, ''), coalesce(updated_at, '') FROM sessions
             WHERE cwd = ?1 AND source = ?2",
        )?;
        let rows = stmt.query_map(params![cwd, source], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Returns the texts of the prompts a session received between `from` and `to` (store
    /// timestamps, inclusive).
    pub fn prompts_between(&self, session: &str, from: &str, to: &str) -> Result<Vec<String>> {
        let mut stmt = self.connection().prepare_cached(
            // Named: both this partial index and the (session, turn) one lead with the
            // session, and without statistics the planner took the wider one (every message
            // of the session read: 4 ms instead of 0.5 a call on a big session).
            "SELECT text FROM messages INDEXED BY idx_messages_prompts
             WHERE session_id = ?1 AND kind = 'prompt' AND timestamp >= ?2 AND timestamp <= ?3",
        )?;
        let rows = stmt.query_map(params![session, from, to], |r| {
            r.get::<_, Option<String>>(0)
        })?;
        let mut out = Vec::new();
        for r in rows {
            if let Some(t) = r? {
                out.push(t);
            }
        }
        Ok(out)
    }
}
