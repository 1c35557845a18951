//! Chronicle's `search_index` in the store file itself (issue 45), so that a plain SQLite client
//! that opens only the store (`sqlite3 STORE`, Datasette, a notebook) runs Chronicle's search
//! (`SELECT session_id, content FROM search_index WHERE search_index MATCH ...`), as it runs
//! every other Chronicle table.
//!
//! The store's writer writes the rows in each batch's own transaction, after the batch's other
//! rows: deletions first, then insertions in rowid order, one row at a time, so FTS5 keeps the
//! batch in memory and writes it as one segment at the commit (see `search_db.rs`). trail's own
//! index (`turn_search`) stays in the search database, written on its own thread.
//!
//! A store made before keeps the table in the search database (attached as `search`) until its
//! next `trail index`, whose first batch builds the store's copy from `turns`, `checkpoints` and
//! `workspace_artifacts` in its own transaction: readers meanwhile answer from the search
//! database's copy, and from the commit on, from the store's (the store's schema comes first in
//! SQLite's name lookup). The search database's copy is dropped after that commit.

use rusqlite::{params, Connection};

use crate::search_doc::{self, ChronicleRow, SessionSearch};
use crate::Result;

/// `search_index` rowids of workspace artifacts start here (turn rows use their `turns.id`,
/// checkpoint sections `2^50 + ...`).
pub(crate) const ARTIFACT_ROWID_BASE: i64 = 1 << 51;

/// FTS5's in-memory buffer (a batch's rows become one segment; see `search_db.rs`).
const HASH_SIZE: i64 = 32 << 20;
/// Segments of one level merged at once (as the search database's tables do).
const AUTOMERGE: i64 = 8;

/// Returns whether Chronicle's `search_index` lives in the store file.
pub(crate) fn in_store(conn: &Connection) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM main.sqlite_schema WHERE type = 'table' AND name = 'search_index'",
        )?
        .exists([])?)
}

/// Returns whether the search database attached as `search` still holds Chronicle's tables.
pub(crate) fn in_search_database(conn: &Connection) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM search.sqlite_schema WHERE type = 'table' AND name = 'search_index'",
        )?
        .exists([])?)
}

/// Creates `search_index` in the store, defined as GitHub Copilot's session store defines it.
fn create(conn: &Connection) -> Result<()> {
    let leaf: i64 = conn.query_row("PRAGMA main.page_size", [], |r| r.get::<_, i64>(0))? - 46;
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE main.search_index USING fts5(
             content, session_id UNINDEXED, source_type UNINDEXED, source_id UNINDEXED);
         INSERT INTO main.search_index (search_index, rank) VALUES ('hashsize', {HASH_SIZE});
         INSERT INTO main.search_index (search_index, rank) VALUES ('automerge', {AUTOMERGE});
         INSERT INTO main.search_index (search_index, rank) VALUES ('pgsz', {leaf});"
    ))?;
    Ok(())
}

/// Makes the store's `search_index` for a store that holds no session yet (a new store), at
/// its first writable open; a store with sessions gets it from its next index ([`move_in`]).
pub(crate) fn create_if_new(conn: &Connection) -> Result<()> {
    if in_store(conn)? {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let r = (|| {
        let empty = !conn
            .prepare("SELECT 1 FROM main.sessions LIMIT 1")?
            .exists([])?;
        if empty && !in_store(conn)? {
            create(conn)?;
        }
        Ok(())
    })();
    finish(conn, r)
}

fn finish(conn: &Connection, r: Result<()>) -> Result<()> {
    match r {
        Ok(()) => {
            conn.execute_batch("COMMIT")?;
            Ok(())
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Brings Chronicle's `search_index` into the store (a store made before issue 45), built from
/// what the store holds, in one transaction of the store; then drops the search database's
/// copy. Returns the rows indexed (`None`: it was in the store already).
pub(crate) fn move_in(conn: &Connection) -> Result<Option<u64>> {
    let mut rows = None;
    if !in_store(conn)? {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let r = (|| {
            if in_store(conn)? {
                return Ok(());
            }
            create(conn)?;
            conn.execute_batch("DELETE FROM main.chronicle_rows")?;
            rows = Some(fill_from_store(conn)?);
            Ok(())
        })();
        finish(conn, r)?;
    }
    if in_search_database(conn)? {
        conn.execute_batch(
            "BEGIN;
             DROP TABLE search.search_index;
             DROP TABLE search.chronicle_rows;
             COMMIT;",
        )?;
    }
    Ok(rows)
}

/// Indexes every turn, checkpoint section and artifact the store holds, in rowid order (turns
/// by id, then checkpoint sections from `2^50`, then artifacts from `2^51`), as they are read.
fn fill_from_store(conn: &Connection) -> Result<u64> {
    let mut n = 0u64;
    let mut stmt = conn.prepare(
        "SELECT session_id, id, turn_index, user_message, assistant_response FROM main.turns
         ORDER BY id",
    )?;
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        let session: String = r.get(0)?;
        let (u, a): (Option<String>, Option<String>) = (r.get(3)?, r.get(4)?);
        let row = search_doc::chronicle_turn_row(
            &session,
            r.get(1)?,
            r.get(2)?,
            u.as_deref(),
            a.as_deref(),
        );
        n += insert_rows(conn, "main", &session, row)?;
    }
    let mut stmt = conn.prepare(
        "SELECT session_id, id, checkpoint_number, overview, history, work_done,
                technical_details, important_files, next_steps
         FROM main.checkpoints ORDER BY id",
    )?;
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        let session: String = r.get(0)?;
        let s: [Option<String>; 6] = [
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
            r.get(8)?,
        ];
        let rows = search_doc::chronicle_checkpoint_rows(
            &session,
            r.get(1)?,
            r.get(2)?,
            s.each_ref().map(|x| x.as_deref()),
        );
        n += insert_rows(conn, "main", &session, rows)?;
    }
    let mut stmt = conn.prepare(
        "SELECT session_id, id, file_path, content FROM main.workspace_artifacts ORDER BY id",
    )?;
    let mut q = stmt.query([])?;
    while let Some(r) = q.next()? {
        let session: String = r.get(0)?;
        let (path, content): (String, String) = (r.get(2)?, r.get(3)?);
        n += insert_rows(
            conn,
            "main",
            &session,
            artifact_row(&session, r.get(1)?, &path, &content),
        )?;
    }
    Ok(n)
}

/// Chronicle's row for a workspace artifact (none for an empty one, as Copilot skips them).
pub(crate) fn artifact_row(
    session: &str,
    artifact_id: i64,
    path: &str,
    content: &str,
) -> Option<ChronicleRow> {
    if content.trim().is_empty() {
        return None;
    }
    Some(ChronicleRow {
        rowid: ARTIFACT_ROWID_BASE + artifact_id,
        content: crate::text::strip_ansi(content).into_owned(),
        source_type: "workspace_artifact".to_string(),
        source_id: format!("{session}:workspace:{path}"),
    })
}

fn insert_rows(
    conn: &Connection,
    db: &str,
    session: &str,
    rows: impl IntoIterator<Item = ChronicleRow>,
) -> Result<u64> {
    let mut ins = conn.prepare_cached(&format!(
        "INSERT INTO {db}.search_index (rowid, content, session_id, source_type, source_id)
         VALUES (?1, ?2, ?3, ?4, ?5)"
    ))?;
    let mut key = conn.prepare_cached(&format!(
        "INSERT INTO {db}.chronicle_rows (id, session_id) VALUES (?1, ?2)"
    ))?;
    let mut n = 0;
    for r in rows {
        ins.execute(params![
            r.rowid,
            r.content,
            session,
            r.source_type,
            r.source_id
        ])?;
        key.execute(params![r.rowid, session])?;
        n += 1;
    }
    Ok(n)
}

/// Writes sessions' Chronicle rows into the schema `db` (`main` or `search`) and takes them out
/// of `sessions`: deletions first, then each insertion in rowid order, a deletion of the same
/// rowid just before it (FTS5 keeps its buffer while rowids only grow).
pub(crate) fn write_rows(
    conn: &Connection,
    db: &str,
    sessions: &mut [SessionSearch],
) -> Result<()> {
    let mut row_ids = conn.prepare_cached(&format!(
        "SELECT id FROM {db}.chronicle_rows WHERE session_id = ?1"
    ))?;
    let mut row_exists =
        conn.prepare_cached(&format!("SELECT 1 FROM {db}.chronicle_rows WHERE id = ?1"))?;
    let mut gone_rows: Vec<i64> = Vec::new();
    let mut new_rows: Vec<(String, ChronicleRow)> = Vec::new();
    for s in sessions.iter_mut() {
        if s.replace {
            let ids: Vec<i64> = row_ids
                .query_map([&s.session_id], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            gone_rows.extend(ids);
        } else {
            for rowid in s
                .rows
                .iter()
                .map(|r| r.rowid)
                .chain(s.removed_rows.drain(..))
            {
                if row_exists.exists([rowid])? {
                    gone_rows.push(rowid);
                }
            }
        }
        new_rows.extend(s.rows.drain(..).map(|r| (s.session_id.clone(), r)));
    }
    gone_rows.sort_unstable();
    gone_rows.dedup();
    new_rows.sort_by_key(|(_, r)| r.rowid);
    let mut del_row =
        conn.prepare_cached(&format!("DELETE FROM {db}.search_index WHERE rowid = ?1"))?;
    let mut del_key =
        conn.prepare_cached(&format!("DELETE FROM {db}.chronicle_rows WHERE id = ?1"))?;
    let mut gone = gone_rows.into_iter().peekable();
    let mut delete_until = |limit: Option<i64>| -> Result<()> {
        while let Some(&id) = gone.peek() {
            if limit.is_some_and(|l| id > l) {
                break;
            }
            del_row.execute([id])?;
            del_key.execute([id])?;
            gone.next();
        }
        Ok(())
    };
    for (session, r) in new_rows {
        delete_until(Some(r.rowid))?;
        insert_rows(conn, db, &session, [r])?;
    }
    delete_until(None)?;
    Ok(())
}

/// Deletes every Chronicle row of a session from the store's `search_index` (`trail forget`).
pub(crate) fn delete_session(conn: &Connection, session: &str) -> Result<()> {
    let ids: Vec<i64> = conn
        .prepare_cached("SELECT id FROM main.chronicle_rows WHERE session_id = ?1 ORDER BY id")?
        .query_map([session], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut del_row = conn.prepare_cached("DELETE FROM main.search_index WHERE rowid = ?1")?;
    let mut del_key = conn.prepare_cached("DELETE FROM main.chronicle_rows WHERE id = ?1")?;
    for id in ids {
        del_row.execute([id])?;
        del_key.execute([id])?;
    }
    Ok(())
}
