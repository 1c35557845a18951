//! The writer: applies parsed files to the store in batched immediate transactions.
//!
//! Each file's rows and its `source_files` bookkeeping change in the same transaction, so a
//! killed index leaves either the old or the new state of every file, never a mix, and the next
//! index redoes what was not committed. A batch re-checks each file's stored state inside the
//! lock (compare and swap), so two indexers running at once never apply the same delta twice.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rusqlite::{params, OptionalExtension, Transaction};
use trail_model::{
    continuation, turns, Checkpoint, Message, MessageKind, ParseIssue, Role, Session, SessionMeta,
    SourceKind, TitleRank, UpdateMode, WorkspaceArtifact,
};

use crate::search_db::{
    self, checkpoint_rowid, IndexedMessage, SearchBatch, SessionSearch, CHECKPOINT_SECTIONS,
};
use crate::{Result, Store};

/// A run that wrote one in this many of the store's sessions merges the turn index
/// ([`Store::merge_search_index`]).
const MERGE_SHARE: u64 = 4;

/// What identifies a file's content cheaply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fingerprint {
    pub size: u64,
    pub mtime_ns: i64,
    pub inode: u64,
}

/// What the store knows of a source file.
#[derive(Debug, Clone, Default)]
pub struct StoredFile {
    pub path: String,
    pub source: String,
    pub fingerprint: Fingerprint,
    pub bytes_parsed: u64,
    pub lines: u64,
    pub head_hash: Option<i64>,
    pub tail_hash: Option<i64>,
    pub state: Option<Vec<u8>>,
    /// The ids of the sessions the file holds: read by the writer's own lookup of a file, left
    /// empty by [`Store::stored_files`] and [`Store::stored_files_at`] (an index run's plan
    /// needs none, and parsing 20,000 of them was a tenth of a no-change run).
    pub sessions: Vec<String>,
    pub missing: bool,
    /// The version of the source's parser that read the file (`Source::parser_version`).
    pub parser_version: u32,
}

/// One parsed file to write.
#[derive(Debug, Default)]
pub struct FileRecord {
    pub path: String,
    pub source: Option<SourceKind>,
    pub fingerprint: Fingerprint,
    pub head_hash: Option<i64>,
    pub tail_hash: Option<i64>,
    /// `bytes_parsed` of the stored state this parse resumed from; `None` for a full parse.
    pub resumed_from: Option<u64>,
    pub sessions: Vec<Session>,
    pub issues: Vec<ParseIssue>,
    pub bytes_parsed: u64,
    pub lines: u64,
    pub state: Option<Vec<u8>>,
    pub notes: Vec<String>,
    pub title_hints: Vec<(String, String)>,
    /// The whole file failed to parse: keep what was indexed before, record the error.
    pub error: Option<String>,
    /// A later piece of a file parsed in pieces: its sessions were counted with the first.
    pub continuation: bool,
    /// The version of the parser that produced this record (`Source::parser_version`).
    pub parser_version: u32,
}

/// What an index run wrote, for [`Store::resolve_links_in`].
#[derive(Debug, Default, Clone)]
pub struct LinkScope {
    /// Session ids written, each with the lowest `seq` of the messages written to it (`u32::MAX`:
    /// none). The messages before it were stored, and their links resolved, by earlier runs.
    pub sessions: BTreeMap<String, u32>,
    /// Source files written.
    pub paths: BTreeSet<String>,
}

impl LinkScope {
    /// Adds what a batch of records writes.
    pub fn add(&mut self, records: &[FileRecord]) {
        for record in records {
            self.paths.insert(record.path.clone());
            for s in &record.sessions {
                let from = match s.mode {
                    UpdateMode::Replace => 0,
                    UpdateMode::Append => {
                        s.messages.iter().map(|m| m.seq).min().unwrap_or(u32::MAX)
                    }
                };
                let lowest = self.sessions.entry(s.meta.id.0.clone()).or_insert(from);
                *lowest = (*lowest).min(from);
            }
        }
    }
}

/// What a batch changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WriteStats {
    pub sessions_new: u64,
    pub sessions_updated: u64,
    pub messages: u64,
    pub files_written: u64,
    /// Files another process had already written (skipped by the compare-and-swap).
    pub files_stale: u64,
}

impl WriteStats {
    pub fn add(&mut self, o: WriteStats) {
        self.sessions_new += o.sessions_new;
        self.sessions_updated += o.sessions_updated;
        self.messages += o.messages;
        self.files_written += o.files_written;
        self.files_stale += o.files_stale;
    }
}

impl Store {
    /// Returns what the store knows of every source file, by path. Whether a file has a resume
    /// state is not read ([`Store::has_file_state`] says it, for a file that may resume:
    /// reading it for every file was a quarter of this read on 20,000 files), nor the state
    /// itself (it can be large; [`Store::file_state`]).
    pub fn stored_files(&self) -> Result<HashMap<String, StoredFile>> {
        let mut stmt = self.conn.prepare(
            "SELECT path, source, size, mtime_ns, inode, bytes_parsed, lines, head_hash, tail_hash,
                    NULL, NULL, missing, parser_version
             FROM source_files",
        )?;
        // Sized up front: grown row by row, the table moved every row it held at each doubling
        // (a fifth of this read's time on 20,000 files, with the page faults of each new table).
        // The count reads the path index, a tenth of the table's pages.
        let rows: i64 = self
            .conn
            .query_row("SELECT count(*) FROM source_files", [], |r| r.get(0))?;
        let mut out = HashMap::with_capacity(usize::try_from(rows).unwrap_or(0));
        for r in stmt.query_map([], stored_file_from_row)? {
            let f = r?;
            out.insert(f.path.clone(), f);
        }
        Ok(out)
    }

    /// Whether a resume state is stored for the file at `path` (a key as
    /// [`Store::stored_files`] uses them).
    pub fn has_file_state(&self, path: &str) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached("SELECT 1 FROM source_file_state WHERE path = ?1")?
            .exists([path])?)
    }

    /// Returns what the store knows of the files at `paths` (keys as [`Store::stored_files`]
    /// uses them): one indexed lookup each, for an index of a few named files in a large store.
    pub fn stored_files_at(&self, paths: &[String]) -> Result<HashMap<String, StoredFile>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT path, source, size, mtime_ns, inode, bytes_parsed, lines, head_hash, tail_hash,
                    NULL, NULL, missing, parser_version
             FROM source_files WHERE path = ?1",
        )?;
        let mut out = HashMap::new();
        for p in paths {
            if let Some(f) = stmt.query_row([p], stored_file_from_row).optional()? {
                out.insert(f.path.clone(), f);
            }
        }
        Ok(out)
    }

    /// Returns the resume state stored for a file.
    pub fn file_state(&self, path: &str) -> Result<Option<Vec<u8>>> {
        Ok(self
            .conn
            .query_row(
                "SELECT state FROM source_file_state WHERE path = ?1",
                [path],
                |r| r.get(0),
            )
            .optional()?
            .flatten())
    }

    /// Writes a batch of parsed files in one transaction, then brings the search database up
    /// to date on this connection (see [`Store::write_batch_deferred`] to do that elsewhere).
    pub fn write_batch(&mut self, records: Vec<FileRecord>) -> Result<WriteStats> {
        let (stats, search) = self.write_batch_deferred(records)?;
        search_db::apply(&self.conn, Some(search))?;
        Ok(stats)
    }

    /// Writes a batch of parsed files in one transaction and returns, with what it changed,
    /// the batch's changes to the full-text indexes, for a [`crate::SearchWriter`] to apply
    /// (on another thread: the two databases are written in parallel).
    #[tracing::instrument(level = "debug", skip_all, fields(files = records.len()), err)]
    pub fn write_batch_deferred(
        &mut self,
        records: Vec<FileRecord>,
    ) -> Result<(WriteStats, SearchBatch)> {
        if let Some(c) = &self.checkpoints {
            c.before_writing();
        }
        // A store made before issue 45: its first batch brings Chronicle's index in.
        if !crate::chronicle::in_store(&self.conn)? {
            let t = std::time::Instant::now();
            let rows = crate::chronicle::move_in(&self.conn)?;
            tracing::info!(
                rows,
                ms = t.elapsed().as_millis() as u64,
                "Chronicle's search_index moved into the store"
            );
        }
        // Deferred, and the first statement writes the store: it takes the store's lock only
        // (BEGIN IMMEDIATE would take the attached search database's too, and wait for its
        // writer).
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Deferred)?;
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
        // What the search database has applied needs no log any more.
        tx.execute(
            "DELETE FROM search_log WHERE seq <= coalesce(
                 (SELECT CAST(value AS INTEGER) FROM search.search_state
                  WHERE key = 'applied_seq'), 0)",
            [],
        )?;
        let mut stats = WriteStats::default();
        let mut sessions = BTreeSet::new();
        let mut usage_written = BTreeSet::new();
        let mut search = SearchBuilder::default();
        for record in records {
            for s in &record.sessions {
                sessions.insert(s.meta.id.0.clone());
                usage_written.extend(s.usage.iter().filter_map(|u| u.message_id.clone()));
            }
            // Written and dropped one by one: a batch's parsed files never sit in memory twice.
            stats.add(write_file(&tx, &record, &mut search)?);
        }
        {
            let mut log = tx.prepare_cached(
                "INSERT OR IGNORE INTO search_log (seq, session_id) VALUES (?1, ?2)",
            )?;
            for s in &search.sessions {
                log.execute(params![seq, s.session_id])?;
            }
        }
        // Cross-session usage dedupe and the report rollup (issue 5).
        let t = std::time::Instant::now();
        crate::usage_rollup::refresh(&tx, &sessions, &usage_written)?;
        tracing::info!(
            ms = t.elapsed().as_millis() as u64,
            "usage rollup refreshed"
        );
        // Chronicle's rows last, all at once (one FTS5 segment for the batch).
        let t = std::time::Instant::now();
        crate::chronicle::write_rows(&tx, "main", &mut search.sessions)?;
        tracing::info!(
            ms = t.elapsed().as_millis() as u64,
            "Chronicle's rows written"
        );
        let t = std::time::Instant::now();
        tx.commit()?;
        tracing::info!(ms = t.elapsed().as_millis() as u64, "batch committed");
        if let Some(c) = &self.checkpoints {
            c.committed();
        }
        Ok((
            stats,
            SearchBatch {
                seq,
                sessions: search.sessions,
            },
        ))
    }

    /// Applies a batch from [`Store::write_batch_deferred`] on this connection.
    pub fn apply_search(&mut self, batch: SearchBatch) -> Result<()> {
        search_db::apply(&self.conn, Some(batch)).map(|_| ())
    }

    /// Merges the turn index into one segment after a run that wrote at least a quarter of
    /// the store's `written` sessions (a first index, or a store that grew by a third): a
    /// search then reads each word once instead of once per segment. Rewriting the index costs
    /// a pass over all of it (0.6 s at 1 GiB, 4.2 s at 10 GiB), so a run that adds a few
    /// sessions leaves their small segments to FTS5's automerge, unless the index holds so
    /// many deleted rows that every search pays for them ([`search_db::many_deleted`]).
    /// Returns whether it merged.
    pub fn merge_search_index(&mut self, written: u64) -> Result<bool> {
        if written == 0 {
            return Ok(false);
        }
        let sessions: u64 = self
            .conn
            .query_row("SELECT count(*) FROM main.sessions", [], |r| r.get(0))?;
        let large = written.saturating_mul(MERGE_SHARE) >= sessions;
        if !large && !search_db::many_deleted(&self.conn)? {
            return Ok(false);
        }
        search_db::optimize(&self.conn)?;
        Ok(true)
    }

    /// Gives the pages the search database's merges freed back to the file system (after an
    /// index run); returns the pages freed.
    pub fn compact_search(&mut self) -> Result<u64> {
        search_db::compact(&self.conn)
    }

    /// Rebuilds the search database whole from the store (what the first open of a store
    /// without one does); returns the sessions indexed.
    pub fn rebuild_search(&mut self) -> Result<u64> {
        self.conn.execute(
            "DELETE FROM search.search_state WHERE key = 'applied_seq'",
            [],
        )?;
        search_db::apply(&self.conn, None)
    }

    /// Brings the search database up to date with the store on this connection (batches a
    /// killed index committed to the store only); returns the sessions rebuilt.
    pub fn catch_up_search(&mut self) -> Result<u64> {
        if !search_db::lags(&self.conn)? {
            return Ok(0);
        }
        search_db::apply(&self.conn, None)
    }

    /// Records that an index run finished at `at` (ISO time), for freshness checks.
    pub fn record_index_run(&mut self, at: &str) -> Result<()> {
        self.conn.execute(
            "INSERT INTO store_meta (key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [crate::read::LAST_INDEX_AT, at],
        )?;
        Ok(())
    }

    /// Marks files (and the sessions they hold) as gone from disk; their content stays.
    pub fn mark_missing(&mut self, paths: &[String]) -> Result<usize> {
        // Deferred: each statement writes the store, and only the store is locked (see
        // `write_batch_deferred`).
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Deferred)?;
        let mut n = 0;
        {
            let mut file = tx.prepare_cached(
                "UPDATE source_files SET missing = 1 WHERE path = ?1 AND missing = 0",
            )?;
            let mut sessions =
                tx.prepare_cached("UPDATE sessions SET source_missing = 1 WHERE source_path = ?1")?;
            for p in paths {
                n += file.execute([p])?;
                sessions.execute([p])?;
            }
        }
        tx.commit()?;
        Ok(n)
    }

    /// Resolves links that span files: subagent sessions to the tool call that started them,
    /// and titles that name a conversation in another file.
    pub fn resolve_links(&mut self) -> Result<()> {
        self.resolve_links_in(None)
    }

    /// [`Store::resolve_links`] for what an index run wrote: links to or from `scope`'s
    /// sessions, and titles from its files or naming its sessions' messages. A run that
    /// appended to one transcript (the status line's) then costs lookups, not scans of every
    /// session and title hint (18 ms on the 1 GiB benchmark store). `None`: everything.
    pub fn resolve_links_in(&mut self, scope: Option<&LinkScope>) -> Result<()> {
        let (sessions, paths) = match scope {
            Some(s) => (
                serde_json::to_string(&s.sessions).unwrap_or_else(|_| "[]".into()),
                serde_json::to_string(&s.paths).unwrap_or_else(|_| "[]".into()),
            ),
            None => (String::new(), String::new()),
        };
        // Deferred: the first statement writes the store (see `write_batch_deferred`).
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Deferred)?;
        // `+m.seq`: the (session, agent_ref) index finds the call; ordering by `seq` made the
        // planner walk the parent's messages in order instead.
        let parent_links = "UPDATE sessions SET parent_tool_call_id = (
                 SELECT m.tool_call_id FROM messages m
                 WHERE m.session_id = sessions.parent_session_id
                   AND m.agent_ref = sessions.parent_agent_ref
                   AND m.tool_call_id IS NOT NULL
                 ORDER BY +m.seq LIMIT 1)
             WHERE parent_tool_call_id IS NULL AND parent_agent_ref IS NOT NULL
               AND parent_session_id IS NOT NULL";
        update_in_scope(&tx, parent_links, scope.is_some(), &sessions)?;
        // A subagent whose own file names no type takes the one its parent's call asked for:
        // `subagent_type` (Claude Code's Task/Agent, OpenCode's task), `agentName` or
        // `subagentType` (Copilot's runSubagent), `agent_type` (Codex).
        let subagent_types = "UPDATE sessions SET agent_description = (
                 SELECT coalesce(json_extract(m.tool_input, '$.subagent_type'),
                     json_extract(m.tool_input, '$.agentName'),
                     json_extract(m.tool_input, '$.subagentType'),
                     json_extract(m.tool_input, '$.agent_type'))
                 FROM tool_calls t JOIN messages m
                     ON m.session_id = t.session_id AND m.seq = t.call_seq
                 WHERE t.session_id = sessions.parent_session_id
                   AND t.tool_call_id = sessions.parent_tool_call_id
                   AND json_valid(m.tool_input)
                 LIMIT 1)
             WHERE agent_description IS NULL AND parent_tool_call_id IS NOT NULL
               AND parent_session_id IS NOT NULL";
        update_in_scope(&tx, subagent_types, scope.is_some(), &sessions)?;
        // A SpecStory copy whose header names no session (the extension's older files) is
        // linked to the agent's own session of the same conversation: same folder, same first
        // prompt, started within 14 hours (SpecStory's older headers give local time without a
        // zone, read as UTC, so the two clocks can differ by any zone's offset). The closest in
        // time wins. Copies the source already linked keep their link. (A correlated ORDER BY
        // is not allowed in the subquery, hence min() over a derived table.)
        tx.execute(
            "WITH m AS (
                 SELECT c.id AS copy_id, (
                     -- SQLite's min() with a bare column: the row of the smallest gap.
                     SELECT id FROM (
                         SELECT o.id AS id,
                             min(abs(julianday(o.created_at) - julianday(c.created_at)))
                         FROM sessions o
                         JOIN turns ot ON ot.session_id = o.id AND ot.turn_index = 0
                         WHERE o.cwd = c.cwd AND o.source != 'specstory'
                           AND o.parent_session_id IS NULL
                           AND trim(ot.user_message) = trim(ct.user_message)
                           AND abs(julianday(o.created_at) - julianday(c.created_at))
                               <= 14.0 / 24)) AS original_id
                 FROM sessions c
                 JOIN turns ct ON ct.session_id = c.id AND ct.turn_index = 0
                 WHERE c.source = 'specstory' AND c.parent_session_id IS NULL
                   AND c.cwd IS NOT NULL AND trim(coalesce(ct.user_message, '')) != '')
             UPDATE sessions SET
                 parent_session_id = (SELECT original_id FROM m WHERE copy_id = sessions.id),
                 parent_agent_ref = 'specstory'
             WHERE id IN (SELECT copy_id FROM m WHERE original_id IS NOT NULL)",
            [],
        )?;
        // CROSS JOIN keeps the hints as the outer loop: there are few of them, while the
        // planner would otherwise scan every message id (24 ms instead of 2 on 1 GiB).
        // `+m.session_id`: each hint's message is found by its native id; without statistics
        // the planner walked the session's messages by turn for every hint instead (7.2 s
        // instead of 7 ms with three hints on the 1 GiB store).
        // A hint from the session's own file is resolved by its parser, which knows the
        // file's title priorities. From another file, a summary replaces any title but the
        // user's own (rank 3).
        let titles = "UPDATE sessions SET summary = (
                 SELECT h.title FROM title_hints h CROSS JOIN messages m
                 ON m.native_id = h.leaf_native_id
                 WHERE +m.session_id = sessions.id AND h.path != coalesce(sessions.source_path, '')
                 LIMIT 1),
               title_rank = 2
             WHERE title_rank < 3 AND id IN";
        if scope.is_some() {
            // Hints from the files written, and hints naming the messages written: only
            // those of an appended session, since its older ones were matched when written
            // (reading every message of a long log to match one new line took 11 of an
            // append's 80 ms on the 1 GiB corpus).
            tx.execute(
                &format!(
                    "{titles} (
                     SELECT m.session_id FROM title_hints h CROSS JOIN messages m
                     ON m.native_id = h.leaf_native_id
                     JOIN sessions s ON s.id = m.session_id
                     WHERE h.path IN (SELECT value FROM json_each(?2))
                       AND h.path != coalesce(s.source_path, '')
                     UNION
                     SELECT m.session_id FROM json_each(?1) AS w
                     JOIN messages m ON m.session_id = w.key AND m.seq >= w.value
                     JOIN title_hints h ON h.leaf_native_id = m.native_id
                     JOIN sessions s ON s.id = m.session_id
                     WHERE m.native_id IS NOT NULL
                       AND h.path != coalesce(s.source_path, ''))"
                ),
                [&sessions, &paths],
            )?;
        } else {
            tx.execute(
                &format!(
                    "{titles} (
                     SELECT m.session_id FROM title_hints h CROSS JOIN messages m
                     ON m.native_id = h.leaf_native_id
                     JOIN sessions s ON s.id = m.session_id
                     WHERE h.path != coalesce(s.source_path, ''))"
                ),
                [],
            )?;
        }
        tx.commit()?;
        Ok(())
    }
}

/// Runs an `UPDATE sessions ... WHERE ...` on every session, or (`scoped`) only on the
/// sessions written (`sessions`, a JSON object keyed by id) and their children.
fn update_in_scope(tx: &Transaction<'_>, update: &str, scoped: bool, sessions: &str) -> Result<()> {
    if scoped {
        tx.execute(
            &format!(
                "{update} AND (id IN (SELECT key FROM json_each(?1))
                     OR parent_session_id IN (SELECT key FROM json_each(?1)))"
            ),
            [sessions],
        )?;
    } else {
        tx.execute(update, [])?;
    }
    Ok(())
}

fn stored_file_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredFile> {
    let sessions: Option<String> = r.get(10)?;
    Ok(StoredFile {
        path: r.get(0)?,
        source: r.get(1)?,
        fingerprint: Fingerprint {
            size: r.get::<_, i64>(2)? as u64,
            mtime_ns: r.get(3)?,
            inode: r.get::<_, i64>(4)? as u64,
        },
        bytes_parsed: r.get::<_, i64>(5)? as u64,
        lines: r.get::<_, i64>(6)? as u64,
        head_hash: r.get(7)?,
        tail_hash: r.get(8)?,
        state: r.get(9)?,
        sessions: sessions
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default(),
        missing: r.get::<_, i64>(11)? != 0,
        parser_version: r.get::<_, i64>(12)? as u32,
    })
}

/// Collects a batch's changes to the search database, one entry per session (a session written
/// twice in a batch, as pieces of a large log are, gets the two merged).
#[derive(Default)]
struct SearchBuilder {
    sessions: Vec<SessionSearch>,
    index: HashMap<String, usize>,
}

impl SearchBuilder {
    fn push(&mut self, s: SessionSearch) {
        let Some(&i) = self.index.get(&s.session_id) else {
            self.index.insert(s.session_id.clone(), self.sessions.len());
            self.sessions.push(s);
            return;
        };
        let earlier = &mut self.sessions[i];
        if s.replace {
            *earlier = s;
            return;
        }
        for turn in s.removed_turns {
            earlier.turns.retain(|t| t.turn != turn);
            if !earlier.replace {
                earlier.removed_turns.push(turn);
            }
        }
        for doc in s.turns {
            earlier.turns.retain(|t| t.turn != doc.turn);
            earlier.turns.push(doc);
        }
        for rowid in s.removed_rows {
            earlier.rows.retain(|r| r.rowid != rowid);
            if !earlier.replace {
                earlier.removed_rows.push(rowid);
            }
        }
        for row in s.rows {
            earlier.rows.retain(|r| r.rowid != row.rowid);
            earlier.rows.push(row);
        }
    }
}

fn write_file(
    tx: &Transaction<'_>,
    record: &FileRecord,
    search: &mut SearchBuilder,
) -> Result<WriteStats> {
    let mut stats = WriteStats::default();
    let stored = stored_file(tx, &record.path)?;
    if is_stale(stored.as_ref(), record) {
        stats.files_stale = 1;
        return Ok(stats);
    }
    let source = record
        .source
        .map(|s| s.as_str().to_string())
        .or_else(|| stored.as_ref().map(|s| s.source.clone()))
        .unwrap_or_default();
    let now = now_iso();
    if let Some(err) = &record.error {
        // Keep what was indexed; remember the failure for doctor.
        tx.execute(
            "INSERT INTO source_files (path, source, size, mtime_ns, inode, bytes_parsed, indexed_at, last_error)
             VALUES (?1, ?2, 0, 0, 0, 0, ?3, ?4)
             ON CONFLICT(path) DO UPDATE SET last_error = excluded.last_error",
            params![record.path, source, now, err],
        )?;
        return Ok(stats);
    }
    if record.resumed_from.is_none() {
        tx.prepare_cached("DELETE FROM parse_issues WHERE path = ?1")?
            .execute([&record.path])?;
        tx.prepare_cached("DELETE FROM title_hints WHERE path = ?1")?
            .execute([&record.path])?;
    }
    let session_ids = write_sessions(tx, record, stored.as_ref(), &now, search, &mut stats)?;
    write_issues_and_hints(tx, record, &source, &now)?;
    write_file_row(tx, record, &source, &session_ids, &now)?;
    stats.files_written = 1;
    Ok(stats)
}

/// The stored row of a file. Statements run once per file are cached too: a first index
/// writes thousands of files.
fn stored_file(tx: &Transaction<'_>, path: &str) -> Result<Option<StoredFile>> {
    Ok(tx
        .prepare_cached(
            "SELECT path, source, size, mtime_ns, inode, bytes_parsed, lines, head_hash, tail_hash,
                    NULL, sessions, missing, parser_version
             FROM source_files WHERE path = ?1",
        )?
        .query_row([path], stored_file_from_row)
        .optional()?)
}

/// Compare and swap: whether another process already committed this work (the record
/// resumes from where the store no longer is, or repeats what it holds).
fn is_stale(stored: Option<&StoredFile>, record: &FileRecord) -> bool {
    match (stored, record.resumed_from) {
        (Some(s), Some(from)) => s.bytes_parsed != from,
        (None, Some(_)) => true,
        (Some(s), None) => {
            record.error.is_none()
                && s.fingerprint == record.fingerprint
                && s.bytes_parsed == record.bytes_parsed
                && s.parser_version == record.parser_version
                && !s.missing
        }
        (None, None) => false,
    }
}

/// Writes the record's sessions (each new, updated or appended to) and returns the ids of
/// the sessions the file holds.
fn write_sessions(
    tx: &Transaction<'_>,
    record: &FileRecord,
    stored: Option<&StoredFile>,
    now: &str,
    search: &mut SearchBuilder,
    stats: &mut WriteStats,
) -> Result<Vec<String>> {
    let mut session_ids: Vec<String> = stored
        .filter(|_| record.resumed_from.is_some())
        .map(|s| s.sessions.clone())
        .unwrap_or_default();
    let mut listed: HashSet<String> = session_ids.iter().cloned().collect();
    for session in &record.sessions {
        // A session removed with `trail forget` stays gone until `trail forget --restore`.
        if is_forgotten(tx, session.meta.id.as_str())? {
            continue;
        }
        let existed = session_exists(tx, session.meta.id.as_str())?;
        // A later piece of a file goes on with the sessions of its earlier pieces (listed):
        // those were counted there. Any other session it holds is counted here, since one
        // file can hold thousands of sessions (a prompt history) in many pieces.
        let counted_by_an_earlier_piece =
            record.continuation && listed.contains(session.meta.id.as_str());
        if !existed {
            stats.sessions_new += 1;
        } else if !counted_by_an_earlier_piece {
            stats.sessions_updated += 1;
        }
        stats.messages += session.messages.len() as u64;
        search.push(match session.mode {
            UpdateMode::Replace => replace_session(tx, session, &record.path, existed, now)?,
            UpdateMode::Append if existed => append_session(tx, session, &record.path, now)?,
            // An append to a session the store lost (deleted by hand): write what we have.
            UpdateMode::Append => replace_session(tx, session, &record.path, false, now)?,
        });
        // A set beside the list: one file can hold tens of thousands of sessions (Claude
        // Code's prompt history), and a scan per session was quadratic.
        if listed.insert(session.meta.id.0.clone()) {
            session_ids.push(session.meta.id.0.clone());
        }
    }
    Ok(session_ids)
}

/// The record's parse issues and title hints.
fn write_issues_and_hints(
    tx: &Transaction<'_>,
    record: &FileRecord,
    source: &str,
    now: &str,
) -> Result<()> {
    {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO parse_issues (path, source, line, byte_offset, excerpt, reason, found_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for i in &record.issues {
            stmt.execute(params![
                i.path,
                source,
                i.line.map(|l| l as i64),
                i.byte_offset.map(|o| o as i64),
                i.excerpt,
                i.reason,
                now
            ])?;
        }
    }
    if !record.title_hints.is_empty() {
        let mut hint = tx.prepare_cached(
            "INSERT OR REPLACE INTO title_hints (leaf_native_id, title, path) VALUES (?1, ?2, ?3)",
        )?;
        for (leaf, title) in &record.title_hints {
            hint.execute(params![leaf, title, record.path])?;
        }
    }
    Ok(())
}

/// The file's row (its fingerprint, how far it was parsed, its sessions) and resume state.
fn write_file_row(
    tx: &Transaction<'_>,
    record: &FileRecord,
    source: &str,
    session_ids: &[String],
    now: &str,
) -> Result<()> {
    let issue_count: i64 = tx
        .prepare_cached("SELECT count(*) FROM parse_issues WHERE path = ?1")?
        .query_row([&record.path], |r| r.get(0))?;
    tx.prepare_cached(
        "INSERT INTO source_files (path, source, size, mtime_ns, inode, bytes_parsed, lines, head_hash,
             tail_hash, state, sessions, issue_count, notes, missing, last_error, indexed_at,
             parser_version)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, 0, NULL, ?14, ?15)
         ON CONFLICT(path) DO UPDATE SET source = excluded.source, size = excluded.size,
             mtime_ns = excluded.mtime_ns, inode = excluded.inode,
             bytes_parsed = excluded.bytes_parsed, lines = excluded.lines,
             head_hash = excluded.head_hash, tail_hash = excluded.tail_hash,
             state = excluded.state, sessions = excluded.sessions,
             issue_count = excluded.issue_count, notes = excluded.notes, missing = 0,
             last_error = NULL, indexed_at = excluded.indexed_at,
             parser_version = excluded.parser_version",
    )?
    .execute(params![
            record.path,
            source,
            record.fingerprint.size as i64,
            record.fingerprint.mtime_ns,
            record.fingerprint.inode as i64,
            record.bytes_parsed as i64,
            record.lines as i64,
            record.head_hash,
            record.tail_hash,
            None::<Vec<u8>>,
            serde_json::to_string(session_ids).unwrap_or_else(|_| "[]".into()),
            issue_count,
            if record.notes.is_empty() {
                None
            } else {
                Some(record.notes.join("\n"))
            },
            now,
            record.parser_version as i64,
        ])?;
    match &record.state {
        Some(state) => tx
            .prepare_cached(
                "INSERT INTO source_file_state (path, state) VALUES (?1, ?2)
                 ON CONFLICT(path) DO UPDATE SET state = excluded.state",
            )?
            .execute(params![record.path, state])?,
        None => tx
            .prepare_cached("DELETE FROM source_file_state WHERE path = ?1")?
            .execute([&record.path])?,
    };
    Ok(())
}

/// Whether session `id` has a tombstone (the writer skips it).
pub(crate) fn is_forgotten(tx: &Transaction<'_>, id: &str) -> Result<bool> {
    Ok(tx
        .prepare_cached("SELECT 1 FROM forgotten_sessions WHERE id = ?1")?
        .exists([id])?)
}

fn session_exists(tx: &Transaction<'_>, id: &str) -> Result<bool> {
    Ok(tx
        .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
        .exists([id])?)
}

/// Deletes everything stored under a session except its `sessions` row (its full-text rows go
/// with the search database's replacement of the session).
pub(crate) fn delete_session_children(tx: &Transaction<'_>, id: &str) -> Result<()> {
    for table in [
        "turns",
        "checkpoints",
        "session_files",
        "session_refs",
        "messages",
        "tool_calls",
        "usage",
        "file_snapshots",
        "workspace_artifacts",
    ] {
        tx.execute(&format!("DELETE FROM {table} WHERE session_id = ?1"), [id])?;
    }
    Ok(())
}

fn replace_session(
    tx: &Transaction<'_>,
    session: &Session,
    path: &str,
    existed: bool,
    now: &str,
) -> Result<SessionSearch> {
    let id = session.meta.id.as_str();
    if existed {
        delete_session_children(tx, id)?;
    }
    upsert_session_row(tx, &session.meta, &session.models, path, now, false)?;
    insert_messages(tx, id, &session.messages, false)?;
    insert_files_refs_usage(tx, session)?;
    let turns = if session.turns.is_empty() && !session.messages.is_empty() {
        turns::build_turns(&session.messages)
    } else {
        session.turns.clone()
    };
    let mut search = SessionSearch {
        session_id: id.to_string(),
        replace: true,
        turns: search_db::turn_docs(session.messages.iter().map(IndexedMessage::from_message)),
        ..SessionSearch::default()
    };
    for t in &turns {
        upsert_turn(tx, id, t, false, &mut search)?;
    }
    for c in &session.checkpoints {
        upsert_checkpoint(tx, id, c, &mut search)?;
    }
    upsert_artifacts(tx, id, &session.artifacts, &mut search)?;
    update_aggregates(tx, id, session.turn_count.max(turns.len() as u32))?;
    record_continuation(tx, session, true)?;
    Ok(search)
}

fn append_session(
    tx: &Transaction<'_>,
    session: &Session,
    path: &str,
    now: &str,
) -> Result<SessionSearch> {
    let id = session.meta.id.as_str();
    upsert_session_row(tx, &session.meta, &session.models, path, now, true)?;
    let mut search = SessionSearch {
        session_id: id.to_string(),
        ..SessionSearch::default()
    };
    let mut dirty: BTreeSet<u32> = BTreeSet::new();
    // The full-text rows to rebuild: every turn a message enters or leaves (-1: no turn).
    let mut dirty_docs: BTreeSet<i64> = BTreeSet::new();
    {
        let mut old = tx
            .prepare_cached("SELECT turn_index FROM messages WHERE session_id = ?1 AND seq = ?2")?;
        let mut upd = tx.prepare_cached(
            "UPDATE messages SET turn_index = ?3, on_main_chain = ?4 WHERE session_id = ?1 AND seq = ?2",
        )?;
        for r in &session.relinks {
            let before: Option<Option<i64>> = old
                .query_row(params![id, r.seq as i64], |row| row.get(0))
                .optional()?;
            if let Some(before) = before {
                dirty_docs.insert(before.unwrap_or(-1));
            }
            if let Some(Some(t)) = before {
                dirty.insert(t as u32);
            }
            if let Some(t) = r.turn_index {
                dirty.insert(t);
            }
            dirty_docs.insert(r.turn_index.map_or(-1, i64::from));
            upd.execute(params![
                id,
                r.seq as i64,
                r.turn_index.map(|t| t as i64),
                r.on_main_chain
            ])?;
        }
    }
    for m in &session.messages {
        if let Some(t) = m.turn_index {
            dirty.insert(t);
        }
        dirty_docs.insert(m.turn_index.map_or(-1, i64::from));
    }
    dirty_docs.extend(insert_messages(tx, id, &session.messages, true)?);
    for c in &session.checkpoints {
        upsert_checkpoint(tx, id, c, &mut search)?;
    }
    upsert_artifacts(tx, id, &session.artifacts, &mut search)?;
    insert_files_refs_usage(tx, session)?;
    // Rebuild the touched turns from what is stored.
    if !dirty.is_empty() {
        let lo = *dirty.iter().next().unwrap_or(&0) as i64;
        let mut stmt = tx.prepare_cached(
            "SELECT seq, role, kind, turn_index, timestamp, text FROM messages
             WHERE session_id = ?1 AND on_main_chain = 1 AND turn_index >= ?2
               AND kind IN ('prompt', 'text')",
        )?;
        let rows = stmt.query_map(params![id, lo], |r| {
            let role = r.get::<_, Option<String>>(1)?;
            let kind = r.get::<_, Option<String>>(2)?;
            let text = r.get::<_, Option<String>>(5)?.unwrap_or_default();
            Ok(Message::from_db(
                r.get::<_, i64>(0)? as u32,
                role.as_deref().and_then(Role::parse),
                kind.as_deref().and_then(MessageKind::parse),
                text,
            )
            .with_turn(r.get::<_, Option<i64>>(3)?.map(|t| t as u32))
            .with_timestamp(r.get::<_, Option<String>>(4)?)
            .with_main_chain(true))
        })?;
        let mut msgs = Vec::new();
        for m in rows {
            let m = m?;
            if m.turn_index.is_some_and(|t| dirty.contains(&t)) {
                msgs.push(m);
            }
        }
        msgs.sort_by_key(|m| m.seq);
        for t in turns::build_turns(&msgs) {
            upsert_turn(tx, id, &t, true, &mut search)?;
        }
    }
    // Turns past the end (a rewind made the conversation shorter).
    let gone: Vec<i64> = tx
        .prepare_cached("SELECT id FROM turns WHERE session_id = ?1 AND turn_index >= ?2")?
        .query_map(params![id, session.turn_count as i64], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for tid in gone {
        search.rows.retain(|r| r.rowid != tid);
        search.removed_rows.push(tid);
        tx.execute("DELETE FROM turns WHERE id = ?1", [tid])?;
    }
    for turn in dirty_docs {
        match search_db::turn_from_store(tx, id, turn)? {
            Some(doc) => search.turns.push(doc),
            None => search.removed_turns.push(turn),
        }
    }
    update_aggregates(tx, id, session.turn_count)?;
    record_continuation(tx, session, false)?;
    Ok(search)
}

/// Links a session written by `trail resume --in` to the one it continues: its first prompt
/// starts with the marker line. `replace`: the batch holds the whole session, so a session
/// without the marker (any more) is unlinked; an append only links when it brings the first
/// prompt.
fn record_continuation(tx: &Transaction<'_>, session: &Session, replace: bool) -> Result<()> {
    let first_prompt = session.messages.iter().find(|m| {
        m.kind == Some(MessageKind::Prompt) && m.on_main_chain && m.turn_index == Some(0)
    });
    let link = first_prompt.and_then(|m| continuation::parse_marker(&m.text));
    if link.is_none() && !replace {
        return Ok(());
    }
    tx.prepare_cached(
        "UPDATE sessions SET continues_session_id = ?2, continues_source = ?3 WHERE id = ?1",
    )?
    .execute(params![
        session.meta.id.as_str(),
        link.as_ref().map(|l| l.session_id.as_str()),
        link.as_ref().map(|l| l.source.as_str()),
    ])?;
    Ok(())
}

fn upsert_session_row(
    tx: &Transaction<'_>,
    meta: &SessionMeta,
    models: &[String],
    path: &str,
    now: &str,
    merge: bool,
) -> Result<()> {
    let parent = meta.parent.as_ref();
    let title_rank = match (&meta.title, meta.title_rank) {
        (None, _) => TitleRank::NONE,
        (Some(_), TitleRank::NONE) => TitleRank::FIRST_PROMPT,
        (Some(_), rank) => rank,
    } as i64;
    // Placeholders (`default`) name no model (issue 40).
    let models: Vec<&str> = models
        .iter()
        .filter_map(|m| trail_model::model_name(Some(m)))
        .collect();
    let models_json = if models.is_empty() {
        None
    } else {
        serde_json::to_string(&models).ok()
    };
    // Chronicle's rule on merge: earliest created_at, latest updated_at, other fields take the
    // new value when it is not null.
    let sql = if merge {
        "INSERT INTO sessions (id, cwd, repository, host_type, branch, summary, created_at, updated_at,
             source, native_id, agent_version, title_rank, parent_session_id, parent_tool_call_id,
             parent_agent_ref, source_path, source_missing, models, indexed_at, metadata,
             agent_name, agent_description)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?4, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 0, ?16, ?17, ?18,
             ?19, ?20)
         ON CONFLICT(id) DO UPDATE SET
             metadata = coalesce(excluded.metadata, metadata),
             agent_name = coalesce(excluded.agent_name, agent_name),
             agent_description = coalesce(excluded.agent_description, agent_description),
             cwd = coalesce(excluded.cwd, cwd),
             repository = coalesce(excluded.repository, repository),
             branch = coalesce(excluded.branch, branch),
             summary = CASE WHEN excluded.summary IS NOT NULL
                                 AND excluded.title_rank >= sessions.title_rank
                            THEN excluded.summary ELSE summary END,
             title_rank = CASE WHEN excluded.summary IS NOT NULL
                                 AND excluded.title_rank >= sessions.title_rank
                            THEN excluded.title_rank ELSE sessions.title_rank END,
             created_at = min(coalesce(excluded.created_at, created_at), coalesce(created_at, excluded.created_at)),
             updated_at = max(coalesce(excluded.updated_at, updated_at), coalesce(updated_at, excluded.updated_at)),
             agent_version = coalesce(excluded.agent_version, agent_version),
             parent_session_id = coalesce(excluded.parent_session_id, parent_session_id),
             parent_tool_call_id = coalesce(excluded.parent_tool_call_id, parent_tool_call_id),
             parent_agent_ref = coalesce(excluded.parent_agent_ref, parent_agent_ref),
             source_path = excluded.source_path, source_missing = 0,
             models = coalesce(excluded.models, models), indexed_at = excluded.indexed_at"
    } else {
        "INSERT INTO sessions (id, cwd, repository, host_type, branch, summary, created_at, updated_at,
             source, native_id, agent_version, title_rank, parent_session_id, parent_tool_call_id,
             parent_agent_ref, source_path, source_missing, models, indexed_at, metadata,
             agent_name, agent_description)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?4, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 0, ?16, ?17, ?18,
             ?19, ?20)
         ON CONFLICT(id) DO UPDATE SET
             metadata = excluded.metadata,
             agent_name = excluded.agent_name, agent_description = excluded.agent_description,
             cwd = excluded.cwd, repository = excluded.repository, host_type = excluded.host_type,
             branch = excluded.branch,
             summary = CASE WHEN sessions.title_rank > excluded.title_rank
                            THEN summary ELSE excluded.summary END,
             title_rank = max(sessions.title_rank, excluded.title_rank),
             created_at = excluded.created_at, updated_at = excluded.updated_at,
             source = excluded.source, native_id = excluded.native_id,
             agent_version = excluded.agent_version,
             parent_session_id = excluded.parent_session_id,
             parent_tool_call_id = coalesce(excluded.parent_tool_call_id, parent_tool_call_id),
             parent_agent_ref = excluded.parent_agent_ref, source_path = excluded.source_path,
             source_missing = 0, models = excluded.models, indexed_at = excluded.indexed_at"
    };
    tx.prepare_cached(sql)?.execute(params![
        meta.id.as_str(),
        meta.cwd,
        meta.repository,
        meta.source.as_str(),
        meta.branch,
        meta.title,
        meta.created_at,
        meta.updated_at,
        meta.native_id,
        meta.agent_version,
        title_rank,
        parent.map(|p| p.session_id.as_str()),
        parent.and_then(|p| p.tool_call_id.as_deref()),
        parent.and_then(|p| p.agent_ref.as_deref()),
        path,
        models_json,
        now,
        meta.metadata.as_ref().map(|m| m.to_string()),
        meta.agent_name,
        meta.agent_description,
    ])?;
    Ok(())
}

/// Calls sharing one call id, as `insert_messages` has seen them.
#[derive(Default)]
struct PendingCalls {
    name: Option<String>,
    /// `tool_calls` rowids still waiting for their result.
    unresolved: Vec<i64>,
}

/// Inserts messages. `append`: the session already has stored messages, so one with the same
/// `seq` may be replaced. Returns the turns (-1: none) the replaced messages were in.
fn insert_messages(
    tx: &Transaction<'_>,
    id: &str,
    messages: &[Message],
    append: bool,
) -> Result<BTreeSet<i64>> {
    let mut replaced_turns = BTreeSet::new();
    if append {
        // Messages past the last stored seq are new (a log that grew); one at or below it
        // replaces the stored row, deleted by key. Not `INSERT OR REPLACE`: on a table with
        // foreign keys it opens a statement journal for every row.
        let last: Option<i64> = tx
            .prepare_cached("SELECT max(seq) FROM messages WHERE session_id = ?1")?
            .query_row([id], |r| r.get(0))?;
        let mut old_turn = tx
            .prepare_cached("SELECT turn_index FROM messages WHERE session_id = ?1 AND seq = ?2")?;
        let mut delete =
            tx.prepare_cached("DELETE FROM messages WHERE session_id = ?1 AND seq = ?2")?;
        for m in messages {
            if last.is_some_and(|last| m.seq as i64 <= last) {
                if let Some(turn) = old_turn
                    .query_row(params![id, m.seq as i64], |r| r.get::<_, Option<i64>>(0))
                    .optional()?
                {
                    replaced_turns.insert(turn.unwrap_or(-1));
                }
                delete.execute(params![id, m.seq as i64])?;
            }
        }
    }
    let mut stmt = tx.prepare_cached(
        "INSERT INTO messages (session_id, seq, native_id, parent_native_id, role, kind,
             tool_name, tool_call_id, is_error, model, timestamp, is_sidechain, on_main_chain,
             turn_index, agent_ref, text, tool_input, tool_output, extra, prompt_source)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
             ?20)",
    )?;
    let mut call = tx.prepare_cached(
        "INSERT INTO tool_calls (session_id, tool_call_id, tool_name, call_seq, turn_index, timestamp)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    // The calls written so far, by call id: a result finds its call without a query, and
    // the result is recorded by rowid (a multi-row `UPDATE` would open a statement journal).
    let mut calls: HashMap<String, PendingCalls> = HashMap::new();
    let mut stored_calls = tx.prepare_cached(
        "SELECT id, tool_name, result_seq IS NULL FROM tool_calls
         WHERE session_id = ?1 AND tool_call_id = ?2 ORDER BY id",
    )?;
    let mut result =
        tx.prepare_cached("UPDATE tool_calls SET result_seq = ?2, is_error = ?3 WHERE id = ?1")?;
    for m in messages {
        let call_id = m.tool_call_id.as_deref();
        let is_result = m.kind() == MessageKind::ToolResult;
        if let (true, Some(call_id)) = (is_result, call_id) {
            if !calls.contains_key(call_id) {
                // A call from an earlier parse (an append, or an earlier piece of a large log).
                let mut pending = PendingCalls::default();
                let mut rows = stored_calls.query(params![id, call_id])?;
                while let Some(r) = rows.next()? {
                    pending.name = pending.name.or(r.get(1)?);
                    if r.get::<_, bool>(2)? {
                        pending.unresolved.push(r.get(0)?);
                    }
                }
                calls.insert(call_id.to_string(), pending);
            }
        }
        // A result takes its tool name from its call when it does not carry one.
        let tool_name = match (&m.tool_name, is_result, call_id) {
            (None, true, Some(call_id)) => calls.get(call_id).and_then(|c| c.name.clone()),
            _ => m.tool_name.clone(),
        };
        stmt.execute(params![
            id,
            m.seq as i64,
            m.native_id,
            m.parent_native_id,
            m.role.map(|r| r.as_str()),
            m.kind.map(|k| k.as_str()),
            tool_name,
            m.tool_call_id,
            m.is_error,
            trail_model::model_name(m.model.as_deref()),
            m.timestamp,
            m.is_sidechain,
            m.on_main_chain,
            m.turn_index.map(|t| t as i64),
            m.agent_ref,
            if m.text.is_empty() {
                None
            } else {
                Some(m.text.as_str())
            },
            m.tool_input,
            m.tool_output,
            m.extra,
            m.prompt_source.map(|p| p.as_str()),
        ])?;
        match (m.kind(), call_id) {
            (MessageKind::ToolCall, _) => {
                let call_row = call.insert(params![
                    id,
                    m.tool_call_id,
                    m.tool_name,
                    m.seq as i64,
                    m.turn_index.map(|t| t as i64),
                    m.timestamp
                ])?;
                if let Some(call_id) = call_id {
                    let pending = calls.entry(call_id.to_string()).or_default();
                    pending.name = pending.name.take().or_else(|| m.tool_name.clone());
                    pending.unresolved.push(call_row);
                }
            }
            (MessageKind::ToolResult, Some(call_id)) => {
                if let Some(pending) = calls.get_mut(call_id) {
                    for call_row in pending.unresolved.drain(..) {
                        result.execute(params![call_row, m.seq as i64, m.is_error])?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(replaced_turns)
}

fn insert_files_refs_usage(tx: &Transaction<'_>, session: &Session) -> Result<()> {
    let id = session.meta.id.as_str();
    let mut f = tx.prepare_cached(
        "INSERT OR IGNORE INTO session_files (session_id, file_path, tool_name, turn_index, first_seen_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for file in &session.files {
        f.execute(params![
            id,
            file.path,
            file.tool_name,
            file.turn_index.map(|t| t as i64),
            file.first_seen_at
        ])?;
    }
    let mut r = tx.prepare_cached(
        "INSERT OR IGNORE INTO session_refs (session_id, ref_type, ref_value, turn_index, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for rf in &session.refs {
        r.execute(params![
            id,
            rf.ref_type.as_str(),
            rf.value,
            rf.turn_index.map(|t| t as i64),
            rf.created_at
        ])?;
    }
    // The first write of a snapshot wins: a resumed log naming the same backup again, at a
    // later turn, is the same content seen later. (A whole-file reparse deletes them first.)
    let mut s = tx.prepare_cached(
        "INSERT OR IGNORE INTO file_snapshots
             (session_id, file_path, version, turn_index, content, taken_at, origin)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for snap in &session.snapshots {
        s.execute(params![
            id,
            snap.path,
            snap.version as i64,
            snap.turn_index.map(|t| t as i64),
            snap.content,
            snap.taken_at,
            snap.origin
        ])?;
    }
    // Keep the larger total on a repeated request (streamed chunks, replays).
    let mut u = tx.prepare_cached(
        "INSERT INTO usage (session_id, request_key, message_id, message_seq, model, timestamp,
             input_tokens, output_tokens, cache_creation_tokens, cache_creation_1h_tokens,
             cache_read_tokens, reasoning_tokens, cost_usd, is_sidechain, tokens_known, has_speed,
             web_search_requests, premium_requests)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
         ON CONFLICT(session_id, request_key) DO UPDATE SET
             web_search_requests = excluded.web_search_requests,
             premium_requests = excluded.premium_requests,
             message_seq = excluded.message_seq, model = excluded.model,
             timestamp = excluded.timestamp, input_tokens = excluded.input_tokens,
             output_tokens = excluded.output_tokens,
             cache_creation_tokens = excluded.cache_creation_tokens,
             cache_creation_1h_tokens = excluded.cache_creation_1h_tokens,
             cache_read_tokens = excluded.cache_read_tokens,
             reasoning_tokens = excluded.reasoning_tokens, cost_usd = excluded.cost_usd,
             has_speed = excluded.has_speed
         WHERE excluded.input_tokens + excluded.output_tokens + excluded.cache_creation_tokens
               + excluded.cache_read_tokens
             > usage.input_tokens + usage.output_tokens + usage.cache_creation_tokens
               + usage.cache_read_tokens",
    )?;
    for x in &session.usage {
        u.execute(params![
            id,
            x.request_key,
            x.message_id,
            x.message_seq.map(|s| s as i64),
            trail_model::model_name(x.model.as_deref()),
            x.timestamp,
            x.input_tokens as i64,
            x.output_tokens as i64,
            x.cache_creation_tokens as i64,
            x.cache_creation_1h_tokens as i64,
            x.cache_read_tokens as i64,
            x.reasoning_tokens as i64,
            x.cost_usd,
            x.is_sidechain,
            x.tokens_known,
            x.has_speed,
            x.web_search_requests as i64,
            x.premium_requests
        ])?;
    }
    Ok(())
}

fn upsert_checkpoint(
    tx: &Transaction<'_>,
    id: &str,
    c: &Checkpoint,
    search: &mut SessionSearch,
) -> Result<()> {
    // Looked up, then updated or inserted, rather than `RETURNING` (a statement journal).
    let stored: Option<i64> = tx
        .prepare_cached(
            "SELECT id FROM checkpoints WHERE session_id = ?1 AND checkpoint_number = ?2",
        )?
        .query_row(params![id, c.number as i64], |r| r.get(0))
        .optional()?;
    let cid = match stored {
        Some(cid) => {
            tx.prepare_cached(
                "UPDATE checkpoints SET title = ?2, overview = ?3, history = ?4, work_done = ?5,
                     technical_details = ?6, important_files = ?7, next_steps = ?8
                 WHERE id = ?1",
            )?
            .execute(params![
                cid,
                c.title,
                c.overview,
                c.history,
                c.work_done,
                c.technical_details,
                c.important_files,
                c.next_steps
            ])?;
            for section in 0..CHECKPOINT_SECTIONS.len() {
                let rowid = checkpoint_rowid(cid, section);
                search.rows.retain(|r| r.rowid != rowid);
                search.removed_rows.push(rowid);
            }
            cid
        }
        None => tx
            .prepare_cached(
                "INSERT INTO checkpoints (session_id, checkpoint_number, title, overview, history,
                     work_done, technical_details, important_files, next_steps, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .insert(params![
                id,
                c.number as i64,
                c.title,
                c.overview,
                c.history,
                c.work_done,
                c.technical_details,
                c.important_files,
                c.next_steps,
                c.created_at
            ])?,
    };
    search.rows.extend(search_db::chronicle_checkpoint_rows(
        id,
        cid,
        c.number as i64,
        [
            c.overview.as_deref(),
            c.history.as_deref(),
            c.work_done.as_deref(),
            c.technical_details.as_deref(),
            c.important_files.as_deref(),
            c.next_steps.as_deref(),
        ],
    ));
    Ok(())
}

fn upsert_turn(
    tx: &Transaction<'_>,
    id: &str,
    t: &trail_model::Turn,
    may_exist: bool,
    search: &mut SessionSearch,
) -> Result<()> {
    // Looked up, then updated or inserted: no `ON CONFLICT ... RETURNING`, which opens a
    // statement journal at every turn.
    let stored: Option<i64> = if may_exist {
        tx.prepare_cached("SELECT id FROM turns WHERE session_id = ?1 AND turn_index = ?2")?
            .query_row(params![id, t.index as i64], |r| r.get(0))
            .optional()?
    } else {
        None
    };
    let tid = match stored {
        Some(tid) => {
            tx.prepare_cached(
                "UPDATE turns SET user_message = ?2, assistant_response = ?3, timestamp = ?4
                 WHERE id = ?1",
            )?
            .execute(params![tid, t.user_message, t.assistant_response, t.timestamp])?;
            search.rows.retain(|r| r.rowid != tid);
            search.removed_rows.push(tid);
            tid
        }
        None => tx
            .prepare_cached(
                "INSERT INTO turns (session_id, turn_index, user_message, assistant_response, timestamp)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .insert(params![
                id,
                t.index as i64,
                t.user_message,
                t.assistant_response,
                t.timestamp
            ])?,
    };
    search.rows.extend(search_db::chronicle_turn_row(
        id,
        tid,
        t.index as i64,
        t.user_message.as_deref(),
        t.assistant_response.as_deref(),
    ));
    Ok(())
}

/// Writes a session's workspace artifacts (a later text of the same path replaces the earlier
/// one, keeping its id and so its `search_index` rowid) and their Chronicle rows.
fn upsert_artifacts(
    tx: &Transaction<'_>,
    id: &str,
    artifacts: &[WorkspaceArtifact],
    search: &mut SessionSearch,
) -> Result<()> {
    for a in artifacts {
        let stored: Option<i64> = tx
            .prepare_cached(
                "SELECT id FROM workspace_artifacts WHERE session_id = ?1 AND file_path = ?2",
            )?
            .query_row(params![id, a.path], |r| r.get(0))
            .optional()?;
        let aid = match stored {
            Some(aid) => {
                tx.prepare_cached("UPDATE workspace_artifacts SET content = ?2 WHERE id = ?1")?
                    .execute(params![aid, a.content])?;
                let rowid = crate::chronicle::ARTIFACT_ROWID_BASE + aid;
                search.rows.retain(|r| r.rowid != rowid);
                search.removed_rows.push(rowid);
                aid
            }
            None => tx
                .prepare_cached(
                    "INSERT INTO workspace_artifacts (session_id, file_path, content)
                     VALUES (?1, ?2, ?3)",
                )?
                .insert(params![id, a.path, a.content])?,
        };
        search
            .rows
            .extend(crate::chronicle::artifact_row(id, aid, &a.path, &a.content));
    }
    Ok(())
}

fn update_aggregates(tx: &Transaction<'_>, id: &str, turn_count: u32) -> Result<()> {
    // One pass over the session's usage rows for the four sums (a subquery each read them four
    // times, which a long log appended in pieces paid at every piece).
    tx.prepare_cached(
        "UPDATE sessions SET turn_count = ?2,
             message_count = (SELECT count(*) FROM messages WHERE session_id = ?1),
             (input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens) = (
                 SELECT coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
                     coalesce(sum(cache_creation_tokens), 0), coalesce(sum(cache_read_tokens), 0)
                 FROM usage WHERE session_id = ?1)
         WHERE id = ?1",
    )?
    .execute(params![id, turn_count as i64])?;
    Ok(())
}

/// Returns the current time in the store's timestamp format.
pub fn now_iso() -> String {
    trail_model::time::format_utc(chrono::Utc::now())
}
