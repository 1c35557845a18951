//! `trail forget`: sessions removed from the store for good, with a tombstone
//! (`forgotten_sessions`, migration 13) that the writer honours (a later index does not bring
//! them back from the agent's files) and that `trail sync` carries to the team store.

use std::collections::BTreeSet;

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use crate::filter::like_escape;
use crate::{Result, Store, StoreError};

/// Which sessions to forget: ids (exact or unique prefixes, resolved by the caller), or every
/// session of a repository, or started before a time; the given conditions all hold.
#[derive(Debug, Clone, Default)]
pub struct ForgetSelection {
    /// Full session ids.
    pub ids: Vec<String>,
    /// `repository` (or, without one, `cwd`) contains this text.
    pub repo: Option<String>,
    /// Last active before this ISO time.
    pub before: Option<String>,
}

/// A session forgotten (or one whose tombstone was lifted).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Forgotten {
    pub id: String,
    pub source: Option<String>,
    pub source_path: Option<String>,
    pub forgotten_at: String,
}

impl Store {
    /// Returns the full ids of the sessions `sel` names, with their subagents and forks (a
    /// subagent's transcript belongs to the conversation that started it).
    pub fn forget_candidates(&self, sel: &ForgetSelection) -> Result<Vec<String>> {
        let mut roots: BTreeSet<String> = sel.ids.iter().cloned().collect();
        if sel.repo.is_some() || sel.before.is_some() {
            let mut stmt = self.conn.prepare(
                "SELECT id FROM sessions
                 WHERE (?1 IS NULL OR coalesce(repository, cwd, '') LIKE ?1 ESCAPE '\\'
                                   OR cwd LIKE ?1 ESCAPE '\\')
                   AND (?2 IS NULL OR coalesce(updated_at, created_at) < ?2)
                   AND (?3 = 0 OR id IN (SELECT value FROM json_each(?4)))",
            )?;
            let pattern = sel.repo.as_deref().map(|r| format!("%{}%", like_escape(r)));
            let ids_json = serde_json::to_string(&sel.ids).unwrap_or_else(|_| "[]".into());
            let rows = stmt.query_map(
                params![pattern, sel.before, !sel.ids.is_empty(), ids_json],
                |r| r.get::<_, String>(0),
            )?;
            roots = rows.collect::<rusqlite::Result<_>>()?;
        }
        let mut all = BTreeSet::new();
        let mut below = self.conn.prepare(
            "WITH RECURSIVE below(id, depth) AS (
                 SELECT ?1, 0
                 UNION
                 SELECT s.id, below.depth + 1 FROM sessions s
                 JOIN below ON s.parent_session_id = below.id
                 WHERE below.depth < 64
             )
             SELECT id FROM below WHERE id IN (SELECT id FROM sessions)",
        )?;
        for root in &roots {
            for id in below.query_map([root], |r| r.get::<_, String>(0))? {
                all.insert(id?);
            }
        }
        Ok(all.into_iter().collect())
    }

    /// Removes sessions `ids` (full ids) with everything stored under them, and leaves a
    /// tombstone for each, in one transaction: a killed `forget` changes nothing.
    ///
    /// For good, on disk too: a session is forgotten because it holds something it must not,
    /// so what SQLite frees is overwritten with zeros (`secure_delete`), the full-text indexes
    /// are rewritten without the forgotten turns' words (a delete there only marks them), and
    /// both write-ahead logs, which hold earlier images of the pages, are emptied.
    pub fn forget(&mut self, ids: &[String], at: &str) -> Result<Vec<Forgotten>> {
        self.conn.execute_batch(
            "PRAGMA main.secure_delete = ON;
             PRAGMA search.secure_delete = ON;",
        )?;
        let out = self.forget_rows(ids, at);
        let purged = out.is_ok().then(|| self.purge_freed());
        self.conn.execute_batch(
            "PRAGMA main.secure_delete = OFF;
             PRAGMA search.secure_delete = OFF;",
        )?;
        if let Some(purged) = purged {
            purged?;
        }
        out
    }

    /// Rewrites the full-text indexes (merging every segment drops the deleted turns' words)
    /// and empties both logs into the files they belong to.
    fn purge_freed(&self) -> Result<()> {
        let chronicle = if crate::chronicle::in_store(&self.conn)? {
            "main"
        } else {
            "search"
        };
        crate::search_db::optimize(&self.conn)?;
        self.conn.execute_batch(&format!(
            "INSERT INTO {chronicle}.search_index (search_index) VALUES ('optimize');"
        ))?;
        for schema in ["main", "search"] {
            self.conn.query_row(
                &format!("PRAGMA {schema}.wal_checkpoint(TRUNCATE)"),
                [],
                |_| Ok(()),
            )?;
        }
        Ok(())
    }

    fn forget_rows(&mut self, ids: &[String], at: &str) -> Result<Vec<Forgotten>> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut out = Vec::new();
        let mut gone = BTreeSet::new();
        // The search database drops their rows as it drops a batch's replaced sessions: the
        // forget is a numbered batch whose logged sessions it rebuilds from the store (where
        // they are gone). A kill before that leaves the batch logged for the next writer.
        tx.execute(
            "INSERT INTO store_meta (key, value) VALUES ('search_seq', '1')
             ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            [],
        )?;
        let seq: i64 = tx.query_row(
            "SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'search_seq'",
            [],
            |r| r.get(0),
        )?;
        let chronicle_in_store = crate::chronicle::in_store(&tx)?;
        for id in ids {
            let row: Option<(String, Option<String>)> = tx
                .query_row(
                    "SELECT source, source_path FROM sessions WHERE id = ?1",
                    [id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let Some((source, source_path)) = row else {
                return Err(StoreError::NotFound(id.clone()));
            };
            crate::write::delete_session_children(&tx, id)?;
            if chronicle_in_store {
                crate::chronicle::delete_session(&tx, id)?;
            }
            tx.execute(
                "INSERT OR IGNORE INTO search_log (seq, session_id) VALUES (?1, ?2)",
                params![seq, id],
            )?;
            tx.execute("DELETE FROM usage_rollup WHERE session_id = ?1", [id])?;
            tx.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
            tx.execute(
                "INSERT INTO forgotten_sessions (id, source, source_path, forgotten_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(id) DO UPDATE SET forgotten_at = excluded.forgotten_at",
                params![id, source, source_path, at],
            )?;
            gone.insert(id.clone());
            out.push(Forgotten {
                id: id.clone(),
                source: Some(source),
                source_path,
                forgotten_at: at.to_string(),
            });
        }
        // Requests the forgotten sessions shared with others (a resumed log repeats them) count
        // again where they remain.
        crate::usage_rollup::refresh(&tx, &gone, &BTreeSet::new())?;
        tx.commit()?;
        crate::search_db::apply(&self.conn, None)?;
        Ok(out)
    }

    /// Every tombstone, oldest first.
    pub fn forgotten(&self) -> Result<Vec<Forgotten>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, source, source_path, forgotten_at FROM forgotten_sessions
             ORDER BY forgotten_at, id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(Forgotten {
                id: r.get(0)?,
                source: r.get(1)?,
                source_path: r.get(2)?,
                forgotten_at: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Lifts the tombstones of `ids` (exact ids, or prefixes matching tombstones) and makes the
    /// next index read their files again (their `source_files` rows go, so the file is new to
    /// the index). Returns the tombstones lifted.
    pub fn restore_forgotten(&mut self, ids: &[String]) -> Result<Vec<Forgotten>> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut out = Vec::new();
        {
            let mut find = tx.prepare(
                "SELECT id, source, source_path, forgotten_at FROM forgotten_sessions
                 WHERE id = ?1 OR id LIKE ?2 ESCAPE '\\' OR id LIKE ?3 ESCAPE '\\' ORDER BY id",
            )?;
            for id in ids {
                let prefix = format!("{}%", like_escape(id));
                // A main session's subagents (`ID:agent-...`) come back with it.
                let rows =
                    find.query_map(params![id, prefix, format!("{}:%", like_escape(id))], |r| {
                        Ok(Forgotten {
                            id: r.get(0)?,
                            source: r.get(1)?,
                            source_path: r.get(2)?,
                            forgotten_at: r.get(3)?,
                        })
                    })?;
                for f in rows {
                    let f = f?;
                    if !out.contains(&f) {
                        out.push(f);
                    }
                }
            }
        }
        for f in &out {
            tx.execute("DELETE FROM forgotten_sessions WHERE id = ?1", [&f.id])?;
            if let Some(path) = &f.source_path {
                tx.execute("DELETE FROM source_files WHERE path = ?1", [path])?;
                tx.execute("DELETE FROM source_file_state WHERE path = ?1", [path])?;
            }
        }
        tx.commit()?;
        Ok(out)
    }
}
