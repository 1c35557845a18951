//! The search database: both full-text indexes in a SQLite file of their own beside the store
//! (`<store>-search`), attached to every connection trail opens as the schema `search` (issue 12).
//!
//! Why a file of its own: SQLite has one writer per file, and tokenizing was half of all
//! indexing work on the store's single writer while the second core idled. The store's writer
//! commits a batch, hands what the full-text indexes need as a [`SearchBatch`] to a
//! [`SearchWriter`] (its own connection, on its own thread), and goes on with the next batch.
//!
//! What it holds:
//! * `turn_search`: trail's index, one row per turn of a session (its prompt, its answers, its
//!   tool inputs and its tool outputs, four columns weighted in that order), contentless: the
//!   text lives once, in the store's `messages`. One row per turn because a search shows one
//!   hit per turn, and because ranking every match exactly (`ORDER BY rank`) then costs a
//!   bm25 per turn, not per message: 10,056 turns instead of 152,769 messages for `the` on the
//!   1 GiB benchmark corpus. `turn_docs` maps its rowids to `(session_id, turn_index)`, and
//!   `turn_prompts` keeps each turn's prompt column as it was indexed: ranking reads the
//!   prompts of the turns whose prompt holds every word (`search_rank.rs`), and reading them
//!   from the store's `messages` cost a third of a two-word search.
//! * `prompt_search`: those prompts indexed alone (rowid: the turn's), which rank the turns
//!   whose prompt holds a query of one group by the prompt's own bm25: scoring the whole turn
//!   of every match of `the` read each of its tool outputs' many instances of the word.
//! * `search_index`: Chronicle's table, exactly as GitHub Copilot's session store defines it,
//!   so Copilot's own queries (`... WHERE search_index MATCH ? ORDER BY rank`) run unchanged
//!   through the attached schema; `chronicle_rows` lists each session's rows.
//!
//! Consistency with the store, without a transaction spanning two files: the store's writer
//! numbers its batches (`store_meta.search_seq`) and logs the sessions each one touched
//! (`search_log`) in the batch's own transaction; the search database records the last batch it
//! applied (`search_state.applied_seq`) in the transaction that applies it. A batch is applied
//! only after every earlier one: when some are missing (a killed index, or another indexer's
//! batches not applied yet), their sessions are rebuilt from what the store holds now, which is
//! at least as new. A search database that is new, or was made for another store, is rebuilt
//! whole. So a `kill -9` anywhere leaves both files openable, and the next writer repairs the
//! search side from the store.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, OptionalExtension};
use trail_model::{Message, MessageKind};

use crate::caps::{cap_tool_input, cap_tool_output};

pub(crate) use crate::search_doc::{
    checkpoint_rowid, chronicle_checkpoint_rows, chronicle_turn_row, push_line, SessionSearch,
    TurnDoc, CHECKPOINT_SECTIONS,
};
use crate::{Result, BUSY_TIMEOUT};

/// The schema name the search database is attached as.
pub const SEARCH_SCHEMA: &str = "search";

/// The search database's own schema version (its `user_version`): 2 added `turn_prompts`, 3
/// `turn_docs.digest`, 4 `turn_sigs`, 5 `prompt_search`. A reader reads versions 1 to 4 too (a
/// version-1 database's prompts then come from the store, [`prompts_stored`]; before version 4
/// every candidate of tier 1 is read, [`sigs_stored`]; before version 5 a query of one group
/// orders its prompt tier by bm25 of the turn, [`prompt_index_current`]); a writer brings it up
/// to date ([`upgrade`]).
const SCHEMA_VERSION: i64 = 5;

/// The oldest search database a reader can search.
const READABLE_VERSION: i64 = 1;

/// bm25 weights of `turn_search`'s columns: what a person typed weighs most, then the answers,
/// then tool inputs (commands, paths), then tool output. Chosen with the known-item benchmark
/// (`bench/relevance.py`; BENCHMARKS.md has the figures).
pub(crate) const RANK: &str = "bm25(4.0, 1.0, 0.5, 0.25)";

/// FTS5 keeps this many bytes of changes in memory before writing a segment (the default is
/// 1 MB): a batch's text becomes one segment, not dozens to merge.
const HASH_SIZE: i64 = 32 << 20;

/// FTS5 merges this many segments of one size into one of the next (the default is 4). With
/// 8, a byte is rewritten by fewer merges as the index grows: the search writer's CPU on the
/// 3 GiB corpus fell by a sixth (20.0 -> 16.8 s, 24.4 -> 19.9 s in two interleaved runs), and
/// searches on the 1 GiB store answered in the same times (`bench/search.py`).
const AUTOMERGE: i64 = 8;

/// The search database's page size (the store keeps SQLite's 4 KiB: at 16 KiB its tool
/// outputs' last overflow pages were half empty, BENCHMARKS.md). FTS5 writes each leaf of a
/// segment as a row of its `_data` table, so with leaves four times larger its flushes and
/// merges insert, read and log a quarter as many rows: on the 3 GiB benchmark corpus the search
/// writer's CPU fell from 13.58 to 11.81 s (medians of eight alternating pairs; at 1 GiB, where
/// less is merged, 3.84 to 3.39 s in six), the store with its search database came out a little
/// smaller (921 against 924-925 MB at 1 GiB), and searches answered in the same times
/// (`bench/search.py`; BENCHMARKS.md, "2026-11-27, late morning"). SQLite sets a page size only
/// on an empty file: a search database made before keeps 4 KiB pages and works as it did.
const PAGE_SIZE: i64 = 16384;

/// FTS5's leaves are made this much smaller than the file's pages (its default, 4050 bytes,
/// leaves a 4 KiB page the same room for the page's header and the row's), so each fills one.
const LEAF_HEADROOM: i64 = 46;

/// The page size of the database attached as `db`.
fn page_size(conn: &Connection, db: &str) -> Result<i64> {
    Ok(conn.query_row(&format!("PRAGMA {db}.page_size"), [], |r| r.get(0))?)
}

/// The size of FTS5's leaves in the database attached as `db`.
fn leaf_size(conn: &Connection, db: &str) -> Result<i64> {
    Ok(page_size(conn, db)? - LEAF_HEADROOM)
}

/// Message kinds the full-text index holds (not thinking, injected context or unknown records).
pub(crate) const INDEXED_KINDS: [&str; 6] = [
    "prompt",
    "text",
    "tool_call",
    "tool_result",
    "error",
    "summary",
];

/// A turn's prompt messages in order (`?1` the session, `?2` the turn or NULL before the first
/// prompt, `?3` a role or NULL): through `idx_messages_prompts` (session, turn), which holds
/// prompts alone, so a turn's other messages are not read (store migration 18). Read here for
/// a turn's prompt column, and by search for a hit turn's prompts.
pub(crate) const TURN_PROMPTS_SQL: &str =
    "SELECT id, seq, role, tool_name, timestamp, text FROM main.messages
     WHERE session_id = ?1 AND turn_index IS ?2 AND kind = 'prompt' AND (?3 IS NULL OR role = ?3)
     ORDER BY +seq";

/// Returns the search database's path for the store at `store`.
pub fn search_path(store: &Path) -> PathBuf {
    crate::unsynced::beside(store, "-search")
}

/// The two full-text tables a search database made before [`AUTOMERGE`] may lack its setting
/// for: Chronicle's `search_index` and trail's `turn_search` (`prompt_search` came later, and
/// always with it).
const FULL_TEXT_TABLES: [&str; 2] = ["search_index", "turn_search"];

/// The settings trail gives each full-text table (kept in the table's config).
fn settings_sql(db: &str, table: &str, leaf: i64) -> String {
    format!(
        "INSERT INTO {db}.{table} ({table}, rank) VALUES ('hashsize', {HASH_SIZE});
         INSERT INTO {db}.{table} ({table}, rank) VALUES ('automerge', {AUTOMERGE});
         INSERT INTO {db}.{table} ({table}, rank) VALUES ('pgsz', {leaf});"
    )
}

/// The search database's tables. `chronicle`: with Chronicle's `search_index` (a store made
/// before issue 45, which keeps it here until its next index; see `chronicle.rs`).
fn schema_sql(db: &str, leaf: i64, chronicle: bool) -> String {
    let [search_index, turn_search] = FULL_TEXT_TABLES.map(|t| settings_sql(db, t, leaf));
    let turn_prompts = turn_prompts_sql(db);
    let turn_sigs = turn_sigs_sql(db);
    let prompt_search = prompt_search_sql(db, leaf);
    let chronicle = if chronicle {
        format!(
            "CREATE VIRTUAL TABLE {db}.search_index USING fts5(
                 content, session_id UNINDEXED, source_type UNINDEXED, source_id UNINDEXED);
             {search_index}
             CREATE TABLE {db}.chronicle_rows (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL);
             CREATE INDEX {db}.idx_chronicle_rows_session ON chronicle_rows (session_id);"
        )
    } else {
        String::new()
    };
    format!(
        "CREATE TABLE {db}.search_state (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
         {chronicle}
         CREATE VIRTUAL TABLE {db}.turn_search USING fts5(
             prompt, answer, tool_input, tool_output,
             content = '', contentless_delete = 1,
             tokenize = 'unicode61 remove_diacritics 2');
         INSERT INTO {db}.turn_search (turn_search, rank) VALUES ('rank', '{RANK}');
         {turn_search}
         CREATE TABLE {db}.turn_docs (
             id INTEGER PRIMARY KEY AUTOINCREMENT,
             session_id TEXT NOT NULL,
             turn_index INTEGER NOT NULL,
             first_at TEXT,
             last_at TEXT,
             digest INTEGER,
             UNIQUE (session_id, turn_index));
         {turn_prompts}
         {prompt_search}
         {turn_sigs}
         PRAGMA {db}.user_version = {SCHEMA_VERSION};"
    )
}

/// `turn_prompts`: the prompt column of each turn whose prompt column is not empty (its id is
/// the turn's `turn_docs.id`).
fn turn_prompts_sql(db: &str) -> String {
    format!("CREATE TABLE {db}.turn_prompts (id INTEGER PRIMARY KEY, prompt TEXT NOT NULL);")
}

/// `prompt_search`: `turn_prompts`' text indexed alone (rowid: the turn's `turn_docs.id`), with
/// `turn_search`'s tokenizer, so a prompt matches in it exactly when its turn's prompt column
/// matches in `turn_search`. Its rows are current only while [`PROMPTS_SEQ`] says so.
fn prompt_search_sql(db: &str, leaf: i64) -> String {
    let settings = settings_sql(db, "prompt_search", leaf);
    format!(
        "CREATE VIRTUAL TABLE {db}.prompt_search USING fts5(
             prompt, content = '', contentless_delete = 1,
             tokenize = 'unicode61 remove_diacritics 2');
         {settings}"
    )
}

/// The `search_state` key of the last batch applied by a writer that keeps `prompt_search`
/// (version 5 on), set with `applied_seq` in the same transactions. A writer of an older trail
/// applies batches without it: the two then differ, a reader does not use `prompt_search`
/// ([`prompt_index_current`]), and the next writer that keeps it fills it again
/// ([`refill_prompt_search`]).
const PROMPTS_SEQ: &str = "prompts_seq";

/// Sets `applied_seq` and [`PROMPTS_SEQ`] to `seq` (every table written to it).
fn set_applied(conn: &Connection, seq: i64) -> Result<()> {
    set_state(conn, "applied_seq", &seq.to_string())?;
    set_state(conn, PROMPTS_SEQ, &seq.to_string())
}

/// Fills `prompt_search` again from `turn_prompts` (an upgrade to version 5, or an older
/// writer's batches since the last of a writer that keeps it).
fn refill_prompt_search(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "INSERT INTO search.prompt_search (prompt_search) VALUES ('delete-all');
         INSERT INTO search.prompt_search (rowid, prompt)
             SELECT id, prompt FROM search.turn_prompts ORDER BY id;",
    )?;
    Ok(())
}

/// Whether `prompt_search` holds the prompts of every turn `turn_search` holds: the last batch
/// applied was applied by a writer that keeps it ([`PROMPTS_SEQ`]). False for a search
/// database before version 5 and for the empty stand-ins of a reader without one.
pub(crate) fn prompt_index_current(conn: &Connection) -> Result<bool> {
    // Unqualified: a reader without a search database has stand-in tables in TEMP.
    let current: Option<bool> = conn
        .query_row(
            "SELECT p.value = a.value FROM search_state p, search_state a
             WHERE p.key = ?1 AND a.key = 'applied_seq'",
            [PROMPTS_SEQ],
            |r| r.get(0),
        )
        .optional()?;
    Ok(current == Some(true))
}

/// `turn_sigs`: the signatures of each turn's messages (`search_sig.rs`; its id is the turn's
/// `turn_docs.id`).
fn turn_sigs_sql(db: &str) -> String {
    format!("CREATE TABLE {db}.turn_sigs (id INTEGER PRIMARY KEY, sigs BLOB NOT NULL);")
}

/// Gives the full-text tables of a search database made before [`AUTOMERGE`] that setting
/// (it is kept in the tables' config, so only their first index run writes it).
fn set_automerge(conn: &Connection) -> Result<()> {
    let chronicle = crate::chronicle::in_search_database(conn)?;
    for table in FULL_TEXT_TABLES {
        if table == "search_index" && !chronicle {
            continue;
        }
        let current: Option<i64> = conn
            .query_row(
                &format!("SELECT v FROM search.{table}_config WHERE k = 'automerge'"),
                [],
                |r| r.get(0),
            )
            .optional()?;
        if current != Some(AUTOMERGE) {
            conn.execute(
                &format!("INSERT INTO search.{table} ({table}, rank) VALUES ('automerge', ?1)"),
                [AUTOMERGE],
            )?;
        }
    }
    Ok(())
}

/// How a connection attaches the search database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attach {
    /// Created (and brought up to date) when missing.
    Write,
    /// Read as it is; when it does not exist yet, empty tables of the same names stand in for
    /// it (in the connection's TEMP schema), so queries answer nothing instead of failing.
    Read,
}

/// Attaches the search database of the store at `store` (`:memory:`: a private in-memory one).
/// Returns false when a reader found none it can read (missing, or made by an older trail) and
/// empty stand-ins answer instead.
pub(crate) fn attach(conn: &Connection, store: &Path, how: Attach) -> Result<bool> {
    let memory = store.as_os_str() == ":memory:";
    let path = search_path(store);
    // Chronicle's `search_index` is the store's own since issue 45 (`chronicle.rs`).
    let chronicle = !crate::chronicle::in_store(conn)?;
    if how == Attach::Read && !memory && !path.exists() {
        conn.execute_batch(&schema_sql("temp", leaf_size(conn, "temp")?, chronicle))?;
        return Ok(false);
    }
    let name = if memory {
        ":memory:".to_string()
    } else {
        path.display().to_string()
    };
    conn.execute("ATTACH DATABASE ?1 AS search", [name])?;
    if how == Attach::Read {
        let version = search_version(conn)?;
        if version < READABLE_VERSION {
            conn.execute_batch("DETACH DATABASE search")?;
            conn.execute_batch(&schema_sql("temp", leaf_size(conn, "temp")?, chronicle))?;
            return Ok(false);
        }
        // A reader maps the index: its doclists are read in long runs, and through `pread`
        // a third of a search's time was the kernel copying them (the store itself is read
        // through `pread`, `Store::open_read_only`).
        conn.execute_batch("PRAGMA search.mmap_size = 1073741824")?;
        return Ok(true);
    }
    if !memory {
        // Incremental auto-vacuum (before the first table; nothing once there are tables):
        // FTS5's segment merges free pages, which an index run gives back at its end
        // (`compact`) instead of keeping them in the file.
        // Only on an empty file: on any other the pragma writes its header at every open.
        let pages: i64 = conn.query_row("PRAGMA search.page_count", [], |r| r.get(0))?;
        if pages == 0 {
            conn.execute_batch(&format!(
                "PRAGMA search.page_size = {PAGE_SIZE}; PRAGMA search.auto_vacuum = INCREMENTAL"
            ))?;
        }
        crate::enable_wal(conn, SEARCH_SCHEMA)?;
        conn.execute_batch("PRAGMA search.synchronous = NORMAL")?;
    }
    ensure_schema(conn, chronicle)?;
    Ok(true)
}

/// Creates the search database's tables once, or brings an older one up to date; two
/// processes opening a store at once agree.
fn ensure_schema(conn: &Connection, chronicle: bool) -> Result<()> {
    loop {
        let version = search_version(conn)?;
        if version >= SCHEMA_VERSION {
            return Ok(());
        }
        let leaf = leaf_size(conn, SEARCH_SCHEMA)?;
        let made = in_transaction(conn, || {
            if version == 0 {
                Ok(conn.execute_batch(&schema_sql(SEARCH_SCHEMA, leaf, chronicle))?)
            } else {
                upgrade(conn)
            }
        });
        match made {
            // Another process created it first: read the version again.
            Err(e) if e.to_string().contains("already exists") => {}
            other => other?,
        }
    }
}

/// Brings a search database of version 1 to 4 to [`SCHEMA_VERSION`] (in the caller's
/// transaction): `turn_prompts` where it is missing, filled from the store's messages as
/// [`turn_docs`] builds the column ([`fill_turn_prompts`]); `turn_docs.digest` where it is
/// missing (unknown for the turns written before: the next write of each replaces it);
/// `turn_sigs` where it is missing, filled from the store's messages ([`fill_turn_sigs`]);
/// `prompt_search` where it is missing, filled from `turn_prompts`; and
/// FTS5's totals counted again ([`recount_totals`]; nothing else
/// writes the table in it).
fn upgrade(conn: &Connection) -> Result<()> {
    // The lock first: what another process upgraded meanwhile is then seen, not written twice.
    lock_search(conn)?;
    let has = |sql: &str| -> Result<bool> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
    if !has("SELECT count(*) > 0 FROM search.sqlite_schema WHERE name = 'turn_prompts'")? {
        conn.execute_batch(&turn_prompts_sql(SEARCH_SCHEMA))?;
        fill_turn_prompts(conn)?;
    }
    if !has(
        "SELECT count(*) > 0 FROM pragma_table_info('turn_docs', 'search') WHERE name = 'digest'",
    )? {
        conn.execute_batch("ALTER TABLE search.turn_docs ADD COLUMN digest INTEGER")?;
    }
    if !has("SELECT count(*) > 0 FROM search.sqlite_schema WHERE name = 'turn_sigs'")? {
        conn.execute_batch(&turn_sigs_sql(SEARCH_SCHEMA))?;
        fill_turn_sigs(conn)?;
    }
    if !has("SELECT count(*) > 0 FROM search.sqlite_schema WHERE name = 'prompt_search'")? {
        let leaf = leaf_size(conn, SEARCH_SCHEMA)?;
        conn.execute_batch(&prompt_search_sql(SEARCH_SCHEMA, leaf))?;
        refill_prompt_search(conn)?;
        conn.execute(
            "INSERT OR REPLACE INTO search.search_state (key, value)
             SELECT ?1, value FROM search.search_state WHERE key = 'applied_seq'",
            [PROMPTS_SEQ],
        )?;
    }
    recount_totals(conn)?;
    conn.execute_batch(&format!("PRAGMA search.user_version = {SCHEMA_VERSION}"))?;
    Ok(())
}

/// Fills `turn_prompts` from the store's messages (an upgrade from version 1).
fn fill_turn_prompts(conn: &Connection) -> Result<()> {
    let mut turns = conn.prepare("SELECT id, session_id, turn_index FROM search.turn_docs")?;
    let mut write = conn.prepare("INSERT INTO search.turn_prompts (id, prompt) VALUES (?1, ?2)")?;
    let mut rows = turns.query([])?;
    while let Some(row) = rows.next()? {
        let session: String = row.get(1)?;
        let prompt = prompt_column(conn, &session, row.get(2)?)?;
        if !prompt.is_empty() {
            write.execute(params![row.get::<_, i64>(0)?, prompt])?;
        }
    }
    Ok(())
}

/// Fills `turn_sigs` from the store's messages, session by session, as an index builds each
/// turn ([`session_from_store`]). The digests stay as they are: the signatures are part of a
/// turn's digest now, so no digest written before matches, and each turn's row is written again
/// with the next write of its session. Setting them here would be wrong where the store has
/// moved on from what the index holds (a batch not applied yet): that turn would then look
/// unchanged to the batch that brings its new text.
fn fill_turn_sigs(conn: &Connection) -> Result<()> {
    let sessions: Vec<String> = conn
        .prepare("SELECT DISTINCT session_id FROM search.turn_docs")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut doc =
        conn.prepare("SELECT id FROM search.turn_docs WHERE session_id = ?1 AND turn_index = ?2")?;
    let mut write = conn.prepare("INSERT INTO search.turn_sigs (id, sigs) VALUES (?1, ?2)")?;
    for session in sessions {
        for turn in session_from_store(conn, &session, true)?.turns {
            let id: Option<i64> = doc
                .query_row(params![session, turn.turn], |r| r.get(0))
                .optional()?;
            if let Some(id) = id {
                write.execute(params![id, turn.sigs])?;
            }
        }
    }
    Ok(())
}

/// The prompt column of turn `turn` of `session` (-1: the messages before its first prompt)
/// as the index holds it, read from the store's messages: what [`turn_docs`] builds from the
/// messages it is given.
pub(crate) fn prompt_column(conn: &Connection, session: &str, turn: i64) -> Result<String> {
    let mut prompts = conn.prepare_cached(TURN_PROMPTS_SQL)?;
    let mut column = String::new();
    let turn = (turn >= 0).then_some(turn);
    let mut rows = prompts.query(params![session, turn, None::<String>])?;
    while let Some(row) = rows.next()? {
        let text: Option<String> = row.get(5)?;
        push_line(&mut column, text.as_deref().unwrap_or_default());
    }
    Ok(column)
}

/// The attached search database's schema version (its `user_version`).
fn search_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA search.user_version", [], |r| r.get(0))?)
}

/// Whether the attached search database has `turn_prompts`; a version-1 database, read before
/// its next index upgrades it, does not.
pub(crate) fn prompts_stored(conn: &Connection) -> Result<bool> {
    Ok(search_version(conn)? >= 2)
}

/// Whether the attached search database has `turn_sigs`; one made before version 4, read
/// before its next index upgrades it, does not.
pub(crate) fn sigs_stored(conn: &Connection) -> Result<bool> {
    Ok(search_version(conn)? >= 4)
}

// ---------------------------------------------------------------------------------------------
// What is indexed

/// What one batch of the store's writer changes in the search database. Produced by
/// [`crate::Store::write_batch_deferred`], applied by [`SearchWriter::apply`] (on any thread).
#[derive(Debug, Clone, Default)]
pub struct SearchBatch {
    /// The batch's number in the store (`store_meta.search_seq`).
    pub(crate) seq: i64,
    pub(crate) sessions: Vec<SessionSearch>,
}

impl SearchBatch {
    /// The bytes of text the batch indexes (for logs and progress).
    pub fn text_bytes(&self) -> usize {
        self.sessions
            .iter()
            .map(|s| {
                s.turns
                    .iter()
                    .map(|t| t.columns.iter().map(String::len).sum::<usize>())
                    .sum::<usize>()
                    + s.rows.iter().map(|r| r.content.len()).sum::<usize>()
            })
            .sum()
    }
}

/// A message as the index reads it (from a parsed session or from the store).
pub(crate) struct IndexedMessage<'a> {
    pub turn: Option<i64>,
    pub kind: Option<&'a str>,
    pub timestamp: Option<&'a str>,
    pub text: Option<&'a str>,
    pub tool_input: Option<&'a str>,
    pub tool_output: Option<&'a str>,
}

impl<'a> IndexedMessage<'a> {
    pub(crate) fn from_message(m: &'a Message) -> IndexedMessage<'a> {
        IndexedMessage {
            turn: m.turn_index.map(i64::from),
            kind: m.kind.map(MessageKind::as_str),
            timestamp: m.timestamp.as_deref(),
            text: Some(m.text.as_str()).filter(|t| !t.is_empty()),
            tool_input: m.tool_input.as_deref(),
            tool_output: m.tool_output.as_deref(),
        }
    }
}

/// The column a message's text goes to: prompts to `prompt`, tool calls to `tool_input`, tool
/// results to `tool_output`, everything else (answers, errors, summaries) to `answer`.
fn text_column(kind: &str) -> usize {
    match kind {
        "prompt" => 0,
        "tool_call" => 2,
        "tool_result" => 3,
        _ => 1,
    }
}

/// Builds the turn rows of messages given in `seq` order (any number of turns, interleaved).
pub(crate) fn turn_docs<'a>(
    messages: impl IntoIterator<Item = IndexedMessage<'a>>,
) -> Vec<TurnDoc> {
    let mut docs: BTreeMap<i64, TurnDoc> = BTreeMap::new();
    for m in messages {
        let Some(kind) = m.kind.filter(|k| INDEXED_KINDS.contains(k)) else {
            continue;
        };
        let turn = m.turn.unwrap_or(-1);
        let doc = docs.entry(turn).or_insert_with(|| TurnDoc {
            turn,
            ..TurnDoc::default()
        });
        let at = doc.begin_message();
        if let Some(text) = m.text {
            doc.add(at, text_column(kind), text);
        }
        if let Some(input) = m.tool_input {
            doc.add(at, 2, cap_tool_input(input));
        }
        if let Some(output) = m.tool_output {
            doc.add(at, 3, &cap_tool_output(output));
        }
        if let Some(ts) = m.timestamp {
            if doc.first_at.as_deref().is_none_or(|f| ts < f) {
                doc.first_at = Some(ts.to_string());
            }
            if doc.last_at.as_deref().is_none_or(|l| ts > l) {
                doc.last_at = Some(ts.to_string());
            }
        }
    }
    docs.into_values().collect()
}

/// Everything the search database holds for a session, read from the store as it is now.
/// `chronicle_in_store`: Chronicle's rows are the store's own (issue 45, `chronicle.rs`), so
/// none are read here.
pub(crate) fn session_from_store(
    conn: &Connection,
    session: &str,
    chronicle_in_store: bool,
) -> Result<SessionSearch> {
    let mut stmt = conn.prepare_cached(
        "SELECT turn_index, kind, timestamp, text, tool_input, tool_output FROM main.messages
         WHERE session_id = ?1 ORDER BY seq",
    )?;
    let mut rows = stmt.query([session])?;
    let mut owned = Vec::new();
    while let Some(r) = rows.next()? {
        let kind: Option<String> = r.get(1)?;
        if !kind.as_deref().is_some_and(|k| INDEXED_KINDS.contains(&k)) {
            continue;
        }
        owned.push((
            r.get::<_, Option<i64>>(0)?,
            kind,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, Option<String>>(5)?,
        ));
    }
    let turns = turn_docs(owned.iter().map(|m| IndexedMessage {
        turn: m.0,
        kind: m.1.as_deref(),
        timestamp: m.2.as_deref(),
        text: m.3.as_deref(),
        tool_input: m.4.as_deref(),
        tool_output: m.5.as_deref(),
    }));
    drop(owned);
    let mut out = SessionSearch {
        session_id: session.to_string(),
        replace: true,
        turns,
        ..SessionSearch::default()
    };
    if chronicle_in_store {
        return Ok(out);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT id, turn_index, user_message, assistant_response FROM main.turns
         WHERE session_id = ?1",
    )?;
    let mut rows = stmt.query([session])?;
    while let Some(r) = rows.next()? {
        let (u, a): (Option<String>, Option<String>) = (r.get(2)?, r.get(3)?);
        out.rows.extend(chronicle_turn_row(
            session,
            r.get(0)?,
            r.get(1)?,
            u.as_deref(),
            a.as_deref(),
        ));
    }
    let mut stmt = conn.prepare_cached(
        "SELECT id, checkpoint_number, overview, history, work_done, technical_details,
                important_files, next_steps
         FROM main.checkpoints WHERE session_id = ?1",
    )?;
    let mut rows = stmt.query([session])?;
    while let Some(r) = rows.next()? {
        let s: [Option<String>; 6] = [
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
        ];
        out.rows.extend(chronicle_checkpoint_rows(
            session,
            r.get(0)?,
            r.get(1)?,
            s.each_ref().map(|x| x.as_deref()),
        ));
    }
    let mut stmt = conn.prepare_cached(
        "SELECT id, file_path, content FROM main.workspace_artifacts WHERE session_id = ?1",
    )?;
    let mut rows = stmt.query([session])?;
    while let Some(r) = rows.next()? {
        let (path, content): (String, String) = (r.get(1)?, r.get(2)?);
        out.rows.extend(crate::chronicle::artifact_row(
            session,
            r.get(0)?,
            &path,
            &content,
        ));
    }
    Ok(out)
}

/// One turn's row, read from the store as it is now (`None`: no indexed message is left).
pub(crate) fn turn_from_store(
    conn: &Connection,
    session: &str,
    turn: i64,
) -> Result<Option<TurnDoc>> {
    // `+seq`: the planner would walk the whole session in `seq` order (see search.rs).
    let mut stmt = conn.prepare_cached(
        "SELECT turn_index, kind, timestamp, text, tool_input, tool_output FROM main.messages
         WHERE session_id = ?1 AND turn_index IS ?2 ORDER BY +seq",
    )?;
    let turn_arg = (turn >= 0).then_some(turn);
    let mut rows = stmt.query(params![session, turn_arg])?;
    let mut owned = Vec::new();
    while let Some(r) = rows.next()? {
        owned.push((
            r.get::<_, Option<i64>>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, Option<String>>(5)?,
        ));
    }
    Ok(turn_docs(owned.iter().map(|m| IndexedMessage {
        turn: m.0,
        kind: m.1.as_deref(),
        timestamp: m.2.as_deref(),
        text: m.3.as_deref(),
        tool_input: m.4.as_deref(),
        tool_output: m.5.as_deref(),
    }))
    .pop())
}

// ---------------------------------------------------------------------------------------------
// Applying

/// The search database's writer: its own connection to the store (read) and the search
/// database (written), so it can run on another thread than the store's writer.
pub struct SearchWriter {
    conn: Connection,
    /// Time spent applying batches and catching up, for the index's timing log.
    pub busy: Duration,
}

impl SearchWriter {
    /// Opens a writer for the store at `store` (a file: an in-memory store applies its batches
    /// on its own connection).
    pub fn open(store: &Path) -> Result<SearchWriter> {
        let conn = Connection::open(store)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.set_prepared_statement_cache_capacity(crate::STATEMENT_CACHE);
        crate::text::register_functions(&conn)?;
        conn.execute_batch(
            "PRAGMA temp_store = MEMORY;
             PRAGMA cache_size = -16000;",
        )?;
        attach(&conn, store, Attach::Write)?;
        set_automerge(&conn)?;
        Ok(SearchWriter {
            conn,
            busy: Duration::ZERO,
        })
    }

    /// Bounds this connection's page cache, for both databases (see [`crate::Store::limit_cache`]).
    pub(crate) fn limit_cache(&self, kib: u32) -> Result<()> {
        self.conn
            .execute_batch(&crate::cache_pragmas(kib, &["main", "search"]))?;
        Ok(())
    }

    /// Leaves the syncs of the search database's commits and checkpoints to the end of a first
    /// index, as the store's writer does ([`crate::Store::write_unsynced`], which syncs this
    /// file too at its end).
    pub fn write_unsynced(&self) -> Result<()> {
        self.conn.execute_batch("PRAGMA search.synchronous = OFF")?;
        Ok(())
    }

    /// Applies one batch of the store's writer (and any earlier batch not applied yet).
    pub fn apply(&mut self, batch: SearchBatch) -> Result<()> {
        let t = Instant::now();
        let r = apply(&self.conn, Some(batch));
        self.busy += t.elapsed();
        r.map(|_| ())
    }

    /// Brings the search database up to date with the store; returns the sessions rebuilt.
    pub fn catch_up(&mut self) -> Result<u64> {
        let t = Instant::now();
        let r = apply(&self.conn, None);
        self.busy += t.elapsed();
        r
    }
}

/// Merges the segments of `turn_search`, and of `prompt_search` with it, into one each (FTS5's
/// `optimize`), in one transaction (a merge also drops the deleted rows' words). A search
/// looks each word up in every segment and merges their doclists as it reads them: a first
/// index leaves ten segments at 1 GiB and eighteen at 10 GiB (automerge merges [`AUTOMERGE`]
/// of a size at a time), and a two-word search on one segment took 9 % less time
/// (BENCHMARKS.md, issue 43). The old segments' pages are then free for [`compact`].
pub(crate) fn optimize(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "INSERT INTO search.turn_search (turn_search) VALUES ('optimize');
         INSERT INTO search.prompt_search (prompt_search) VALUES ('optimize');",
    )?;
    Ok(())
}

/// Whether `turn_search` holds enough deleted rows to merge it ([`optimize`] applies them):
/// at least [`DELETED_MERGE_MIN`], and one in [`DELETED_MERGE_SHARE`] of its rows.
///
/// FTS5 keeps a `contentless_delete` table's deleted rows as tombstones beside each segment,
/// and tests every match of every search against them, in a hash that probes from the rowid's
/// slot onwards: the consecutive rowids of a session's turns deleted together fill consecutive
/// slots, and a match whose rowid lands among them probes to the end of the run. 311 of them
/// in the 10 GiB benchmark's one large segment (one 41 MB session read again whole, before the
/// writer kept unchanged turns) made a two-word search 2.4 times slower; FTS5 merges a segment
/// on its own only once a tenth of its rows are deleted.
pub(crate) fn many_deleted(conn: &Connection) -> Result<bool> {
    // The tombstone pages' rowids (FTS5's `FTS5_TOMBSTONE_ROWID`: segment id + 2^16, shifted
    // 37 bits) start at 2^53; each page counts its entries in bytes 4-7, big-endian.
    let mut pages =
        conn.prepare("SELECT block FROM search.turn_search_data WHERE id >= 9007199254740992")?;
    let mut deleted = 0u64;
    let mut each = pages.query([])?;
    while let Some(row) = each.next()? {
        if let Ok(block) = row.get_ref(0)?.as_blob() {
            if let Some(n) = block.get(4..8) {
                deleted += u64::from(u32::from_be_bytes([n[0], n[1], n[2], n[3]]));
            }
        }
    }
    if deleted < DELETED_MERGE_MIN {
        return Ok(false);
    }
    // FTS5's own count (exact: each run that deletes counts it again, `recount_totals`).
    let rows = turn_count(conn)?.unwrap_or_default();
    Ok(deleted.saturating_mul(DELETED_MERGE_SHARE) >= rows)
}

/// [`many_deleted`]: so many deleted rows at least ...
const DELETED_MERGE_MIN: u64 = 64;
/// ... and one in this many of the table's rows.
const DELETED_MERGE_SHARE: u64 = 1000;

/// Free pages worth less than this stay in the search database, for its next writes.
const COMPACT_FROM_BYTES: i64 = 1 << 20;

/// Gives the pages FTS5's merges freed back to the file system, when they are worth
/// [`COMPACT_FROM_BYTES`] (the search database is made with incremental auto-vacuum).
pub(crate) fn compact(conn: &Connection) -> Result<u64> {
    let free: i64 = conn.query_row("PRAGMA search.freelist_count", [], |r| r.get(0))?;
    if free * page_size(conn, SEARCH_SCHEMA)? < COMPACT_FROM_BYTES {
        return Ok(0);
    }
    // The pragma frees one page per step: step it to the end (`execute_batch` steps once).
    let mut stmt = conn.prepare("PRAGMA search.incremental_vacuum")?;
    let mut rows = stmt.query([])?;
    while rows.next()?.is_some() {}
    let left: i64 = conn.query_row("PRAGMA search.freelist_count", [], |r| r.get(0))?;
    Ok((free - left).max(0) as u64)
}

fn meta_seq(conn: &Connection) -> Result<i64> {
    Ok(conn
        .query_row(
            "SELECT CAST(value AS INTEGER) FROM main.store_meta WHERE key = 'search_seq'",
            [],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0))
}

/// Returns whether the search database is new or was made for another store.
pub(crate) fn needs_rebuild(conn: &Connection) -> Result<bool> {
    let applied: Option<String> = conn
        .query_row(
            "SELECT value FROM search.search_state WHERE key = 'applied_seq'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let owner: Option<String> = conn
        .query_row(
            "SELECT value FROM search.search_state WHERE key = 'store_id'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let id = store_search_id(conn)?;
    Ok(applied.is_none() || owner.unwrap_or_default() != id.unwrap_or_default())
}

/// Returns whether the search database lags behind the store (cheap: a few lookups).
pub(crate) fn lags(conn: &Connection) -> Result<bool> {
    let applied: Option<i64> = conn
        .query_row(
            "SELECT CAST(value AS INTEGER) FROM search.search_state WHERE key = 'applied_seq'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let owner: Option<String> = conn
        .query_row(
            "SELECT value FROM search.search_state WHERE key = 'store_id'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let id = store_search_id(conn)?;
    Ok(applied.is_none_or(|a| a < meta_seq(conn).unwrap_or(0))
        || owner.unwrap_or_default() != id.unwrap_or_default())
}

/// Applies `batch` (or, with `None`, only catches up) in one transaction of the search
/// database. Returns the sessions rebuilt from the store.
pub(crate) fn apply(conn: &Connection, batch: Option<SearchBatch>) -> Result<u64> {
    // Read before the transaction (the store's migration 14 wrote it once): a read of `main`
    // inside it would hold a snapshot of the store's log until the commit, and a batch takes
    // the search writer a few hundred milliseconds, during which the store's writer could not
    // start its log over. It never could during an index (the log grew to 913 MB for the
    // 1 GiB corpus, every page of it new to the file system); now only the rare rebuilds below
    // read the store inside the transaction.
    let store_id = store_search_id(conn)?;
    // Read here for the same reason: where Chronicle's rows live (the store since issue 45).
    let chronicle_in_store = crate::chronicle::in_store(conn)?;
    // Deferred, and the first statement writes `search`: it waits for the search database's
    // lock and never takes the store's (its writer keeps writing meanwhile).
    let (rebuilt, deleted) = in_transaction(conn, || {
        apply_locked(conn, batch, store_id, chronicle_in_store)
    })?;
    // After the commit: FTS5 wrote its own totals at it. What is applied stays applied if
    // this fails (the next deletion counts them again).
    if deleted {
        if let Err(e) = in_transaction(conn, || recount_totals(conn)) {
            tracing::warn!(error = %e, "bm25's totals were not counted again");
        }
    }
    Ok(rebuilt)
}

/// Runs `f` in a deferred transaction of the search database, committed when it succeeds.
/// `f`'s first statement must write the search database ([`lock_search`]): the transaction
/// then waits for its lock only (BEGIN IMMEDIATE would lock the store too).
fn in_transaction<T>(conn: &Connection, f: impl FnOnce() -> Result<T>) -> Result<T> {
    conn.execute_batch("BEGIN")?;
    match f() {
        Ok(out) => {
            conn.execute_batch("COMMIT")?;
            Ok(out)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// A write to the search database that changes nothing: the first statement of its
/// transactions, which takes its write lock before anything is read.
fn lock_search(conn: &Connection) -> Result<()> {
    conn.execute(
        "INSERT INTO search.search_state (key, value) VALUES ('lock', '1')
         ON CONFLICT (key) DO UPDATE SET value = value",
        [],
    )?;
    Ok(())
}

/// FTS5's totals record of `turn_search` (its row id 1: the row count, then each column's
/// tokens, as varints); `None` when the index has none yet.
pub(crate) fn totals_record(conn: &Connection) -> Result<Option<Vec<u8>>> {
    totals_record_of(conn, "turn_search")
}

/// [`totals_record`] of the full-text table `table`.
fn totals_record_of(conn: &Connection, table: &str) -> Result<Option<Vec<u8>>> {
    // Unqualified: a reader without a search database has stand-in tables in TEMP; a writer's
    // is the attached database's.
    Ok(conn
        .query_row(
            &format!("SELECT block FROM {table}_data WHERE id = 1"),
            [],
            |r| r.get(0),
        )
        .optional()?)
}

/// How many turns the index holds: FTS5's own count (the first varint of its totals record,
/// bm25's N), one row read. `None` when the index is empty or not there.
pub(crate) fn turn_count(conn: &Connection) -> Result<Option<u64>> {
    Ok(totals_record(conn)?.and_then(|b| crate::varint::Varints(&b).next()))
}

/// Counts the rows of `turn_search` and `prompt_search` and each column's tokens again from
/// their rows' sizes (`_docsize`), and writes them as each table's FTS5 totals record (bm25's N
/// and mean length), when they differ.
///
/// FTS5 does not take a deleted row out of a `contentless_delete` table's totals: every turn
/// the writer replaced (a session read again, a log's last turn grown by an append) counted
/// twice, so a store kept fresh by `index --watch` drifted further from the same corpus indexed
/// once, and bm25 with it. Run in a transaction that writes nothing else into the table: FTS5
/// writes the totals it holds in memory at the commit of any transaction that wrote it.
fn recount_totals(conn: &Connection) -> Result<()> {
    lock_search(conn)?;
    recount_table_totals(conn, "turn_search", 4)?;
    recount_table_totals(conn, "prompt_search", 1)
}

/// [`recount_totals`] of one full-text table of `columns` columns.
fn recount_table_totals(conn: &Connection, table: &str, columns: usize) -> Result<()> {
    let Some(current) = totals_record_of(conn, table)? else {
        return Ok(());
    };
    let mut rows = 0u64;
    let mut totals = vec![0u64; columns];
    let mut sizes = conn.prepare(&format!("SELECT sz FROM search.{table}_docsize"))?;
    let mut each = sizes.query([])?;
    while let Some(row) = each.next()? {
        rows += 1;
        let sz = row
            .get_ref(0)?
            .as_blob()
            .map_err(|e| crate::StoreError::Corrupt(format!("{table}_docsize: {e}")))?;
        for (total, size) in totals.iter_mut().zip(crate::varint::Varints(sz)) {
            *total += size;
        }
    }
    let mut block = Vec::with_capacity(current.len());
    for value in std::iter::once(rows).chain(totals) {
        crate::varint::put(&mut block, value);
    }
    if block != current {
        conn.execute(
            &format!("UPDATE search.{table}_data SET block = ?1 WHERE id = 1"),
            [block],
        )?;
    }
    Ok(())
}

fn store_search_id(conn: &Connection) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT value FROM main.store_meta WHERE key = 'search_id'",
            [],
            |r| r.get(0),
        )
        .optional()?)
}

/// Applies what [`apply`] applies in its transaction; returns the sessions rebuilt and whether
/// any turn row was deleted.
fn apply_locked(
    conn: &Connection,
    batch: Option<SearchBatch>,
    store_id: Option<String>,
    chronicle_in_store: bool,
) -> Result<(u64, bool)> {
    lock_search(conn)?;
    let state = |key: &str| -> Result<Option<String>> {
        Ok(conn
            .query_row(
                "SELECT value FROM search.search_state WHERE key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()?)
    };
    let applied = state("applied_seq")?.and_then(|v| v.parse::<i64>().ok());
    let owner = state("store_id")?;
    let mut rebuilt = 0u64;
    let mut deleted = false;
    let applied = match applied {
        Some(a) if owner.as_deref().unwrap_or("") == store_id.as_deref().unwrap_or("") => {
            // An older trail applied batches since the last one that kept `prompt_search`.
            if state(PROMPTS_SEQ)?.and_then(|v| v.parse::<i64>().ok()) != Some(a) {
                refill_prompt_search(conn)?;
                set_state(conn, PROMPTS_SEQ, &a.to_string())?;
            }
            a
        }
        _ => {
            // New, or made for another store: rebuild it whole from the store.
            clear(conn)?;
            let ids: Vec<String> = conn
                .prepare("SELECT id FROM main.sessions ORDER BY id")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            rebuilt += rebuild_sessions(conn, &ids, chronicle_in_store)?.0;
            set_state(conn, "store_id", store_id.as_deref().unwrap_or(""))?;
            set_applied(conn, meta_seq(conn)?)?;
            return Ok((rebuilt, false));
        }
    };
    // A catch-up (no batch) goes as far as the store's count of batches.
    let target = match &batch {
        Some(b) => b.seq,
        None => meta_seq(conn)?,
    };
    if applied >= target {
        return Ok((0, false));
    }
    // Batches between the last one applied and this one: their sessions as the store has
    // them now.
    let missing_until = if batch.is_some() { target } else { target + 1 };
    if applied + 1 < missing_until {
        let ids: Vec<String> = conn
            .prepare(
                "SELECT DISTINCT session_id FROM main.search_log WHERE seq > ?1 AND seq < ?2
                 ORDER BY session_id",
            )?
            .query_map(params![applied, missing_until], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let (n, gone) = rebuild_sessions(conn, &ids, chronicle_in_store)?;
        rebuilt += n;
        deleted |= gone;
    }
    if let Some(b) = batch {
        deleted |= write_sessions(conn, b.sessions, chronicle_in_store)?;
    }
    set_applied(conn, target)?;
    Ok((rebuilt, deleted))
}

/// Rewrites sessions from what the store holds, a few MB of text per write (one segment each).
/// Returns how many, and whether any turn row was deleted.
fn rebuild_sessions(
    conn: &Connection,
    ids: &[String],
    chronicle_in_store: bool,
) -> Result<(u64, bool)> {
    const CHUNK_BYTES: usize = 16 << 20;
    let mut chunk = SearchBatch::default();
    let mut deleted = false;
    for id in ids {
        chunk
            .sessions
            .push(session_from_store(conn, id, chronicle_in_store)?);
        if chunk.text_bytes() >= CHUNK_BYTES {
            deleted |= write_sessions(
                conn,
                std::mem::take(&mut chunk.sessions),
                chronicle_in_store,
            )?;
        }
    }
    deleted |= write_sessions(conn, chunk.sessions, chronicle_in_store)?;
    Ok((ids.len() as u64, deleted))
}

fn set_state(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO search.search_state (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )?
    .execute([key, value])?;
    Ok(())
}

/// Empties every table of the search database.
fn clear(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        "INSERT INTO search.turn_search (turn_search) VALUES ('delete-all');
         INSERT INTO search.prompt_search (prompt_search) VALUES ('delete-all');
         DELETE FROM search.turn_docs;
         DELETE FROM search.turn_prompts;
         DELETE FROM search.turn_sigs;
         DELETE FROM search.search_state WHERE key <> 'lock';",
    )?;
    if crate::chronicle::in_search_database(conn)? {
        conn.execute_batch(
            "DELETE FROM search.search_index;
             DELETE FROM search.chronicle_rows;",
        )?;
    }
    Ok(())
}

/// Writes sessions' rows: deletions first, then insertions in rowid order, so FTS5 keeps the
/// whole batch in memory and writes it out as one segment per table at the commit (it writes
/// its buffer out whenever a rowid comes lower than the one before). Chronicle's rows go here
/// only while the store has no `search_index` of its own (`chronicle.rs`). Returns whether
/// any turn row was deleted (FTS5's totals then need [`recount_totals`]).
fn write_sessions(
    conn: &Connection,
    mut sessions: Vec<SessionSearch>,
    chronicle_in_store: bool,
) -> Result<bool> {
    if !chronicle_in_store {
        crate::chronicle::write_rows(conn, SEARCH_SCHEMA, &mut sessions)?;
    }
    // Turn rows whose text goes (their new text gets a new rowid), and the turns to insert.
    let mut gone_docs: Vec<i64> = Vec::new();
    let mut new_docs: Vec<NewTurn> = Vec::new();
    for s in sessions {
        changed_turns(conn, s, &mut gone_docs, &mut new_docs)?;
    }
    gone_docs.sort_unstable();
    gone_docs.dedup();
    let deleted = !gone_docs.is_empty();
    let mut del_doc = conn.prepare_cached("DELETE FROM search.turn_search WHERE rowid = ?1")?;
    let mut del_doc_key = conn.prepare_cached("DELETE FROM search.turn_docs WHERE id = ?1")?;
    let mut del_prompt = conn.prepare_cached("DELETE FROM search.turn_prompts WHERE id = ?1")?;
    let mut del_sigs = conn.prepare_cached("DELETE FROM search.turn_sigs WHERE id = ?1")?;
    let mut del_prompt_doc =
        conn.prepare_cached("DELETE FROM search.prompt_search WHERE rowid = ?1")?;
    for id in gone_docs {
        del_doc.execute([id])?;
        del_doc_key.execute([id])?;
        if del_prompt.execute([id])? > 0 {
            del_prompt_doc.execute([id])?;
        }
        del_sigs.execute([id])?;
    }
    let mut ins_doc_key = conn.prepare_cached(
        "INSERT INTO search.turn_docs (session_id, turn_index, first_at, last_at, digest)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut ins_doc = conn.prepare_cached(
        "INSERT INTO search.turn_search (rowid, prompt, answer, tool_input, tool_output)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut ins_prompt =
        conn.prepare_cached("INSERT INTO search.turn_prompts (id, prompt) VALUES (?1, ?2)")?;
    let mut ins_prompt_doc =
        conn.prepare_cached("INSERT INTO search.prompt_search (rowid, prompt) VALUES (?1, ?2)")?;
    let mut ins_sigs =
        conn.prepare_cached("INSERT INTO search.turn_sigs (id, sigs) VALUES (?1, ?2)")?;
    for NewTurn {
        session,
        doc: d,
        digest,
    } in &new_docs
    {
        let id = ins_doc_key.insert(params![session, d.turn, d.first_at, d.last_at, digest])?;
        if !d.columns[0].is_empty() {
            ins_prompt.execute(params![id, d.columns[0]])?;
            ins_prompt_doc.execute(params![id, d.columns[0]])?;
        }
        ins_sigs.execute(params![id, d.sigs])?;
        ins_doc.execute(params![
            id,
            d.columns[0],
            d.columns[1],
            d.columns[2],
            d.columns[3]
        ])?;
    }
    Ok(deleted)
}

/// A turn row to insert, with its session and its digest ([`TurnDoc::digest`]).
struct NewTurn {
    session: String,
    doc: TurnDoc,
    digest: i64,
}

/// What writing session `s` changes among its turn rows: the rows that go (into `gone`) and
/// the turns to insert (into `new`). A turn written again as the search database holds it (the
/// same digest) keeps its row: a whole-file format read again after each turn (Gemini CLI,
/// Copilot Chat's JSON) rewrote every turn before, and each rewrite left FTS5 a tombstone to
/// test every match against (a session's turns have consecutive rowids, which FTS5's tombstone
/// hash probes one after another: after one such session was read again, 61 % of a two-word
/// search on the 10 GiB store went to those tests, BENCHMARKS.md).
fn changed_turns(
    conn: &Connection,
    s: SessionSearch,
    gone: &mut Vec<i64>,
    new: &mut Vec<NewTurn>,
) -> Result<()> {
    // The rows the write may replace: all of the session's when it is written whole, else
    // those of the turns it sends or removes.
    let mut stored: HashMap<i64, (i64, Option<i64>)> = HashMap::new();
    if s.replace {
        let mut rows = conn.prepare_cached(
            "SELECT turn_index, id, digest FROM search.turn_docs WHERE session_id = ?1",
        )?;
        let found = rows.query_map([&s.session_id], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
        for row in found {
            let (turn, doc) = row?;
            stored.insert(turn, doc);
        }
    } else {
        let mut row = conn.prepare_cached(
            "SELECT id, digest FROM search.turn_docs WHERE session_id = ?1 AND turn_index = ?2",
        )?;
        for turn in s
            .turns
            .iter()
            .map(|t| t.turn)
            .chain(s.removed_turns.iter().copied())
        {
            let doc = row
                .query_row(params![s.session_id, turn], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            if let Some(doc) = doc {
                stored.insert(turn, doc);
            }
        }
    }
    for doc in s.turns {
        let digest = doc.digest();
        match stored.remove(&doc.turn) {
            Some((_, Some(kept))) if kept == digest => continue,
            Some((id, _)) => gone.push(id),
            None => {}
        }
        new.push(NewTurn {
            session: s.session_id.clone(),
            doc,
            digest,
        });
    }
    // What is left: turns the session no longer has (written whole) or removes.
    gone.extend(stored.into_values().map(|(id, _)| id));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames in the store's log, as a checkpoint from its own connection reports them.
    fn log_frames(checkpointer: &Connection) -> i64 {
        checkpointer
            .query_row("PRAGMA main.wal_checkpoint(PASSIVE)", [], |r| r.get(1))
            .unwrap()
    }

    /// While the search writer applies a batch, the store's writer goes on, and once the
    /// checkpoints have copied its log it must be able to start the log over: a search
    /// transaction that read the store held a snapshot of the log, and during an index the log
    /// then grew by everything written (913 MB for the 1 GiB corpus).
    #[test]
    fn applying_a_batch_leaves_the_stores_log_free_to_start_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let mut store = crate::Store::open(&path).unwrap();
        store
            .conn
            .execute_batch(
                "PRAGMA wal_autocheckpoint = 0;
                 CREATE TABLE filler (x BLOB);
                 INSERT INTO filler VALUES (randomblob(400000));",
            )
            .unwrap();
        let (_, batch) = store.write_batch_deferred(Vec::new()).unwrap();
        let checkpointer = Connection::open(&path).unwrap();
        let search = SearchWriter::open(&path).unwrap();

        // The search writer is inside its transaction while the log holds uncopied frames.
        let store_id = store_search_id(&search.conn).unwrap();
        search.conn.execute_batch("BEGIN").unwrap();
        apply_locked(&search.conn, Some(batch), store_id, true).unwrap();
        let before = log_frames(&checkpointer);
        assert!(before > 90, "{before} frames");
        store
            .conn
            .execute_batch("INSERT INTO store_meta (key, value) VALUES ('probe', '1')")
            .unwrap();
        let after = log_frames(&checkpointer);
        assert!(
            after < 10,
            "the store's log went on from frame {before} to {after} instead of starting over"
        );
        search.conn.execute_batch("COMMIT").unwrap();
    }
}
