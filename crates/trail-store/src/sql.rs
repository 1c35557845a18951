//! Read-only SQL for people and agents: `trail sql`.
//!
//! Three independent walls, none of them string filtering:
//! 1. a separate connection opened `SQLITE_OPEN_READ_ONLY` (the file cannot be written through
//!    it, whatever the statement);
//! 2. SQLite's authorizer, which allows only READ, SELECT, FUNCTION, RECURSIVE and the
//!    `data_version` pragma FTS5 needs, and denies everything else, functions that load code
//!    included (fail closed: an action it does not know is denied);
//! 3. one statement per call: text after the first statement is refused, not run.
//!
//! A row cap and a byte cap (the result says `truncated`) and a time cap (a progress handler
//! interrupts the statement once the deadline passes) bound what a query can cost. The byte cap
//! also bounds a single value: SQLite's own `SQLITE_LIMIT_LENGTH` is set to it on this
//! connection, so `SELECT randomblob(1000000000)` fails inside SQLite before anything that size
//! is allocated, and a stored value over the cap is refused as it is read.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use crate::BUSY_TIMEOUT;

/// Default row cap.
pub const DEFAULT_MAX_ROWS: usize = 1000;
/// Default byte cap: the bytes of the values a result holds (text in full, any other value
/// counted as 8 bytes: blobs are reported by size only).
pub const DEFAULT_MAX_BYTES: usize = 64 << 20;
/// Default time cap.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// SQLite virtual machine steps between two looks at the clock.
const PROGRESS_STEPS: i32 = 10_000;

/// Why a query did not run.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// The statement wants to do something other than read.
    #[error("not allowed: trail sql only reads ({0})")]
    Denied(String),
    /// The statement does not parse, or names something that does not exist.
    #[error("{0}")]
    Invalid(String),
    /// One value is larger than the byte cap (SQLite refused to make or read it).
    #[error("a value in the result is larger than the byte cap of {0} bytes (raise it with --max-bytes, or select less of it with substr())")]
    TooBig(usize),
    /// The query ran past the time cap and was stopped.
    #[error("the query was stopped after {0:?} (the time cap; raise it with --timeout)")]
    Timeout(Duration),
    /// The store could not be opened or read.
    #[error("store error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl SqlError {
    /// Returns true when the store's file is not a SQLite database (SQLite's code 26).
    pub fn is_not_a_database(&self) -> bool {
        matches!(self, SqlError::Sqlite(rusqlite::Error::SqliteFailure(f, _))
            if f.code == rusqlite::ErrorCode::NotADatabase)
    }
}

/// A cell of a result row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    /// A blob, shown as its size (results are for reading, not for copying bytes).
    Blob {
        blob_bytes: usize,
    },
}

/// What a query returned.
#[derive(Debug, Clone, Serialize)]
pub struct SqlResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// True when the query had more rows than the row cap, or more bytes than the byte cap.
    pub truncated: bool,
    pub elapsed_ms: u64,
}

/// Limits for one query.
#[derive(Debug, Clone, Copy)]
pub struct SqlLimits {
    pub max_rows: usize,
    /// Bytes of values the result may hold (see [`DEFAULT_MAX_BYTES`]); also the largest single
    /// value SQLite may build or read on the connection.
    pub max_bytes: usize,
    pub timeout: Duration,
}

impl Default for SqlLimits {
    fn default() -> Self {
        SqlLimits {
            max_rows: DEFAULT_MAX_ROWS,
            max_bytes: DEFAULT_MAX_BYTES,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// Bytes a non-text cell counts for towards the byte cap.
const CELL_BYTES: usize = 8;

/// A read-only connection to a store that runs user SQL.
pub struct ReadOnlySql {
    conn: Connection,
    path: PathBuf,
}

impl ReadOnlySql {
    /// Opens the store at `path` read-only, with the authorizer installed.
    pub fn open(path: &Path) -> Result<ReadOnlySql, SqlError> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        crate::text::register_functions(&conn)?;
        attach_search(&conn, path)?;
        conn.authorizer(Some(authorize));
        Ok(ReadOnlySql {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Runs one SELECT with the caps. Anything but reading is refused by the authorizer.
    pub fn query(&self, sql: &str, limits: SqlLimits) -> Result<SqlResult, SqlError> {
        let started = Instant::now();
        let deadline = started + limits.timeout;
        let timed_out = Arc::new(AtomicBool::new(false));
        {
            let timed_out = Arc::clone(&timed_out);
            self.conn.progress_handler(
                PROGRESS_STEPS,
                Some(move || {
                    if Instant::now() >= deadline {
                        timed_out.store(true, Ordering::Relaxed);
                        true
                    } else {
                        false
                    }
                }),
            );
        }
        // SQLite refuses to build or read a string or blob longer than this: one value can
        // never cost more memory than the whole result may.
        let length_limit = i32::try_from(limits.max_bytes.max(1)).unwrap_or(i32::MAX);
        let previous = self
            .conn
            .set_limit(Limit::SQLITE_LIMIT_LENGTH, length_limit);
        let result = self.run(sql, limits, started);
        self.conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, previous);
        self.conn.progress_handler(0, None::<fn() -> bool>);
        match result {
            Err(_) if timed_out.load(Ordering::Relaxed) => Err(SqlError::Timeout(limits.timeout)),
            Err(SqlError::Invalid(m)) if m.contains("too big") => {
                Err(SqlError::TooBig(limits.max_bytes))
            }
            Err(SqlError::Sqlite(rusqlite::Error::SqliteFailure(f, _)))
                if f.code == rusqlite::ErrorCode::TooBig =>
            {
                Err(SqlError::TooBig(limits.max_bytes))
            }
            r => r,
        }
    }

    fn run(&self, sql: &str, limits: SqlLimits, started: Instant) -> Result<SqlResult, SqlError> {
        let mut stmt = prepare_one(&self.conn, sql)?;
        if !stmt.readonly() {
            return Err(SqlError::Denied("the statement would write".to_string()));
        }
        let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
        let n = columns.len();
        let mut rows = Vec::new();
        let mut truncated = false;
        let mut bytes = 0usize;
        let mut q = stmt.query([]).map_err(classify)?;
        while let Some(r) = q.next().map_err(classify)? {
            if rows.len() == limits.max_rows {
                truncated = true;
                break;
            }
            // Count the row before copying any of it: a row that would pass the cap ends the
            // result (as the row cap does), so memory stays within the cap.
            let mut row_bytes = 0usize;
            for i in 0..n {
                row_bytes += match r.get_ref(i)? {
                    ValueRef::Text(t) => t.len(),
                    _ => CELL_BYTES,
                };
            }
            bytes = bytes.saturating_add(row_bytes);
            if bytes > limits.max_bytes {
                truncated = true;
                break;
            }
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(match r.get_ref(i)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(v) => Cell::Integer(v),
                    ValueRef::Real(v) => Cell::Real(v),
                    ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Cell::Blob {
                        blob_bytes: b.len(),
                    },
                });
            }
            rows.push(row);
        }
        Ok(SqlResult {
            columns,
            rows,
            truncated,
            elapsed_ms: started.elapsed().as_millis() as u64,
        })
    }
}

/// Attaches the search database (read-only, as the connection is), so Chronicle's
/// `search_index` and trail's `turn_search` answer by their names; before the authorizer,
/// which would refuse the ATTACH.
fn attach_search(conn: &Connection, path: &Path) -> Result<(), SqlError> {
    conn.execute_batch("PRAGMA temp_store = MEMORY")?;
    crate::search_db::attach(conn, path, crate::search_db::Attach::Read)
        .map(|_| ())
        .map_err(|e| match e {
            crate::StoreError::Sqlite(e) => SqlError::Sqlite(e),
            other => SqlError::Invalid(other.to_string()),
        })
}

/// Prepares the first statement of `sql`, and refuses the text when another statement
/// follows (preparing it runs nothing; the authorizer sees it too).
fn prepare_one<'c>(conn: &'c Connection, sql: &str) -> Result<rusqlite::Statement<'c>, SqlError> {
    let one = || {
        SqlError::Denied("one statement at a time; remove what follows the first `;`".to_string())
    };
    let mut batch = rusqlite::Batch::new(conn, sql);
    let first = batch
        .next()
        .map_err(classify)?
        .ok_or_else(|| SqlError::Invalid("no SQL statement given".to_string()))?;
    match batch.next() {
        Ok(None) => Ok(first),
        Ok(Some(_)) | Err(_) => Err(one()),
    }
}

/// Sorts SQLite's errors into denied (the authorizer said no) and invalid (the SQL is wrong).
fn classify(e: rusqlite::Error) -> SqlError {
    match &e {
        rusqlite::Error::SqliteFailure(f, msg) => {
            let text = msg.clone().unwrap_or_else(|| f.to_string());
            match f.code {
                rusqlite::ErrorCode::AuthorizationForStatementDenied
                | rusqlite::ErrorCode::PermissionDenied => SqlError::Denied(text),
                rusqlite::ErrorCode::ReadOnly => SqlError::Denied(text),
                // Not a statement problem: the store itself is not SQLite.
                rusqlite::ErrorCode::OperationInterrupted | rusqlite::ErrorCode::NotADatabase => {
                    SqlError::Sqlite(e)
                }
                _ if text.contains("not authorized") || text.contains("prohibited") => {
                    SqlError::Denied(text)
                }
                _ => SqlError::Invalid(text),
            }
        }
        rusqlite::Error::SqlInputError { msg, .. } => {
            if msg.contains("not authorized") {
                SqlError::Denied(msg.clone())
            } else {
                SqlError::Invalid(msg.clone())
            }
        }
        _ => SqlError::Sqlite(e),
    }
}

/// The authorizer: reads only. Fails closed on anything it does not name.
fn authorize(ctx: AuthContext<'_>) -> Authorization {
    match ctx.action {
        AuthAction::Read { .. } | AuthAction::Select | AuthAction::Recursive => {
            Authorization::Allow
        }
        AuthAction::Function { function_name } => {
            if function_allowed(function_name) {
                Authorization::Allow
            } else {
                Authorization::Deny
            }
        }
        // FTS5 reads `PRAGMA data_version` to know whether its cache is stale.
        AuthAction::Pragma {
            pragma_name,
            pragma_value: None,
        } if pragma_name.eq_ignore_ascii_case("data_version") => Authorization::Allow,
        _ => Authorization::Deny,
    }
}

/// Returns whether a SQL function may be called: every function except those that reach
/// outside the query (loading code, changing limits, sleeping, touching files).
fn function_allowed(name: &str) -> bool {
    const DENIED: [&str; 6] = [
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
        "sqlite_sleep",
    ];
    !DENIED.iter().any(|d| d.eq_ignore_ascii_case(name))
}

/// One table or view and its columns, described for `trail sql --schema`.
#[derive(Debug, Clone, Serialize)]
pub struct TableDoc {
    pub name: String,
    /// `table`, `view` or `fts5`.
    pub kind: String,
    pub description: String,
    pub columns: Vec<ColumnDoc>,
}

/// A column with its declared type and meaning.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnDoc {
    pub name: String,
    pub decl_type: String,
    pub description: String,
}

impl ReadOnlySql {
    /// Describes every table and view of the store (shadow tables of FTS5 left out), with a
    /// one-line description of each column.
    pub fn schema(&self) -> Result<Vec<TableDoc>, SqlError> {
        // Fixed queries of trail's own, on a plain read-only connection (the authorizer of
        // the user's connection would refuse the table_info pragma).
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        crate::text::register_functions(&conn)?;
        attach_search(&conn, &self.path)?;
        // The search database's tables (attached, or empty stand-ins in TEMP) after the
        // store's own.
        let search_schema: String = conn.query_row(
            "SELECT CASE WHEN EXISTS (SELECT 1 FROM pragma_database_list WHERE name = 'search')
                    THEN 'search' ELSE 'temp' END",
            [],
            |r| r.get(0),
        )?;
        let mut tables: Vec<(String, String, Option<String>, String)> = Vec::new();
        for schema in ["main", search_schema.as_str()] {
            let mut stmt = conn.prepare(&format!(
                "SELECT name, type, sql FROM {schema}.sqlite_schema
                 WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'
                 ORDER BY CASE WHEN name IN ('schema_version', 'sessions', 'turns', 'checkpoints',
                     'session_files', 'session_refs', 'search_index') THEN 0 ELSE 1 END, rowid"
            ))?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, schema.to_string()))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            tables.extend(rows);
        }
        let shadow: Vec<String> = tables
            .iter()
            .filter(|(_, _, sql, _)| sql.as_deref().is_some_and(is_fts5))
            .map(|(n, _, _, _)| format!("{n}_"))
            .collect();
        let mut out = Vec::new();
        for (name, kind, sql, schema) in tables {
            if name == "search_state" {
                continue;
            }
            if shadow.iter().any(|p| name.starts_with(p.as_str())) {
                continue;
            }
            let kind = if sql.as_deref().is_some_and(is_fts5) {
                "fts5".to_string()
            } else {
                kind
            };
            let mut cols = conn.prepare("SELECT name, type FROM pragma_table_info(?1, ?2)")?;
            let columns = cols
                .query_map([&name, &schema], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?
                .into_iter()
                .map(|(c, t)| ColumnDoc {
                    description: column_doc(&name, &c).to_string(),
                    name: c,
                    decl_type: t,
                })
                .collect();
            out.push(TableDoc {
                description: table_doc(&name).to_string(),
                name,
                kind,
                columns,
            });
        }
        Ok(out)
    }
}

fn is_fts5(sql: &str) -> bool {
    sql.to_ascii_lowercase().contains("using fts5")
}

/// Returns what a table or view holds.
fn table_doc(table: &str) -> &'static str {
    match table {
        "schema_version" => "Chronicle: the Chronicle schema version this store follows (one row, 3).",
        "sessions" => "Chronicle: one row per conversation, from every agent; trail's columns follow Chronicle's.",
        "turns" => "Chronicle: one row per prompt and the answer to it (turn_index from 0).",
        "checkpoints" => "Chronicle: compaction summaries and summaries, numbered per session from 1.",
        "session_files" => "Chronicle: files a session's tools read or edited (first occurrence).",
        "session_refs" => "Chronicle: pull requests, issues and commits a session mentions.",
        "search_index" => "Chronicle: FTS5 over turns (prompt + answer), checkpoint sections and workspace artifacts; `WHERE search_index MATCH ?`. In the store file itself, so a plain SQLite client runs it too (a store made before issue 45 keeps it in the search database until its next `trail index`).",
        "messages" => "Every normalized message in order, including abandoned branches and sidechains.",
        "tool_calls" => "One row per tool call, joined to its result.",
        "usage" => "Token usage: one row per deduplicated API request.",
        "source_files" => "Each agent file read: fingerprint, bytes parsed, resume state.",
        "parse_issues" => "Problems met while parsing (file, line, reason); the rest was indexed.",
        "file_snapshots" => "File contents an agent kept while a session changed them (Claude Code file-history backups, VS Code chat editing snapshots); `trail diff` compares consecutive versions.",
        "title_hints" => "Titles naming a conversation by one of its message ids (Claude summaries).",
        "usage_watch" => "One row: a count of changes to counted usage rows and the earliest timestamp they touched since the status line last saved its block anchor (kept by triggers).",
        "block_anchor" => "One row: a request known to start a 5-hour block, so the status line walks from it rather than from the last long pause.",
        "search_log" => "Which sessions each batch of the writer wrote, until the search database has applied it.",
        "turn_search" => "trail's full-text index: one row per turn (prompts, answers, tool inputs, tool outputs; contentless, the text is in messages); `WHERE turn_search MATCH ? ORDER BY rank` ranks turns by bm25 (rowid = turn_docs.id). In the search database.",
        "turn_docs" => "The turn each turn_search row stands for, and its time range. In the search database.",
        "turn_prompts" => "Each turn's prompts as turn_search indexed them (one per line), for ranking; turns without a prompt have no row. In the search database.",
        "prompt_search" => "turn_prompts indexed alone (contentless; rowid = turn_docs.id): bm25 of a prompt among every prompt, which orders the turns whose prompt holds a one-word query. In the search database.",
        "turn_sigs" => "Each turn's signatures: a Bloom filter of the tokens of each field of its messages, which tells search which messages may hold a query's words without reading them. In the search database.",
        "chronicle_rows" => "The session of each search_index row.",
        "workspace_artifacts" => "Plans and context files a session recorded (a Claude Code plan, a Copilot CLI plan.md), indexed in search_index as `workspace_artifact`.",
        _ => "",
    }
}

/// `sessions.source`'s note: every source id (the store does not depend on trail-sources, so
/// the ids come from `SourceKind::ALL`).
static SOURCE_DOC: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let ids: Vec<&str> = trail_model::SourceKind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect();
    format!("Agent: {}.", ids.join(", "))
});

/// Returns what a column means, for `trail sql --schema`.
fn column_doc(table: &str, column: &str) -> &'static str {
    match (table, column) {
        ("schema_version", "version") => "Chronicle schema version (3).",
        ("sessions", "id") => "Session id: the agent's own UUID, else `<source>:<native id>`.",
        ("sessions", "cwd") => "Working folder the session ran in.",
        ("sessions", "repository") => "`owner/name` of the git remote, when known.",
        ("sessions", "host_type") => "Chronicle's host type; trail writes the source here too.",
        ("sessions", "branch") => "Git branch at the time, when recorded.",
        ("sessions", "summary") => "Title: the agent's title or the first prompt.",
        ("sessions", "agent_name") => "The agent as people name it: `VS Code agent`, `Copilot CLI` for Copilot's sources, else the source's name (`Claude Code`, `Codex`, ...).",
        ("sessions", "agent_description") => "The custom agent, subagent type or mode the source records (a Claude Code subagent's type, a Copilot custom agent, an OpenCode agent); else NULL.",
        ("sessions", "created_at") => "First timestamp seen (ISO-8601 UTC text).",
        ("sessions", "updated_at") => "Last timestamp seen (ISO-8601 UTC text).",
        ("sessions", "source") => SOURCE_DOC.as_str(),
        ("sessions", "native_id") => "The agent's own id for the session.",
        ("sessions", "agent_version") => "Version of the agent that wrote it.",
        ("sessions", "title_rank") => "How good the title is: 0 none, 1 the first prompt, 2 a summary (in the session's file or another), 3 the user's own.",
        ("sessions", "parent_session_id") => "For a subagent: the session that started it.",
        ("sessions", "parent_tool_call_id") => "For a subagent: the tool call that started it.",
        ("sessions", "parent_agent_ref") => "For a subagent: the agent's reference used to link it.",
        ("sessions", "source_path") => "The agent file the session was read from.",
        ("sessions", "source_missing") => "1 when that file is gone (trail's copy remains).",
        ("sessions", "models") => "JSON array of the models used.",
        ("sessions", "turn_count") => "Number of turns.",
        ("sessions", "message_count") => "Number of messages.",
        ("sessions", "input_tokens") => "Input tokens over all requests.",
        ("sessions", "output_tokens") => "Output tokens over all requests.",
        ("sessions", "cache_creation_tokens") => "Cache-write tokens over all requests.",
        ("sessions", "cache_read_tokens") => "Cache-read tokens over all requests.",
        ("sessions", "indexed_at") => "When trail last wrote the session.",
        ("sessions", "metadata") => "JSON facts the format records without a column of their own: a Claude Code workflow agent's run (`workflowRun`: name, status, tokens, phases, agents; `journalResult`), a fork's origin (`forkedFrom`); `chat: true` marks a chat from a ChatGPT or Claude.ai data export, not a coding session (`json_extract(metadata, '$.chat') = 1`).",
        ("turns", "id") => "Row id; also the turn's rowid in search_index.",
        ("turns", "session_id") => "The session (sessions.id).",
        ("turns", "turn_index") => "Turn number within the session, from 0.",
        ("turns", "user_message") => "The prompt.",
        ("turns", "assistant_response") => "The answer text of the turn (tool calls not included).",
        ("turns", "timestamp") => "When the turn started.",
        ("checkpoints", "id") => "Row id.",
        ("checkpoints", "session_id") => "The session (sessions.id).",
        ("checkpoints", "checkpoint_number") => "Number within the session, from 1.",
        ("checkpoints", "title") => "Title.",
        ("checkpoints", "overview") => "Overview section.",
        ("checkpoints", "history") => "History section (a summary's full text).",
        ("checkpoints", "work_done") => "Work done section.",
        ("checkpoints", "technical_details") => "Technical details section.",
        ("checkpoints", "important_files") => "Important files section.",
        ("checkpoints", "next_steps") => "Next steps section.",
        ("checkpoints", "created_at") => "When it was written.",
        ("session_files", "id") => "Row id.",
        ("session_files", "session_id") => "The session (sessions.id).",
        ("session_files", "file_path") => "Path a tool read or edited.",
        ("session_files", "tool_name") => "The first tool that touched it.",
        ("session_files", "turn_index") => "Turn of that first touch.",
        ("session_files", "first_seen_at") => "When it was first touched.",
        ("session_refs", "id") => "Row id.",
        ("session_refs", "session_id") => "The session (sessions.id).",
        ("session_refs", "ref_type") => "`pr`, `issue` or `commit`.",
        ("session_refs", "ref_value") => "The reference (URL, number or hash).",
        ("session_refs", "turn_index") => "Turn where it first appeared.",
        ("session_refs", "created_at") => "When it first appeared.",
        ("search_index", "content") => "Indexed text: prompt and answer joined by a newline, or a checkpoint section.",
        ("search_index", "session_id") => "The session (sessions.id).",
        ("search_index", "source_type") => "`turn`, `checkpoint_overview`, `checkpoint_history`, ... or `workspace_artifact`.",
        ("search_index", "source_id") => "`<session>:turn:<n>`, `<session>:ckpt:<n>:<section>` or `<session>:workspace:<path>`.",
        ("workspace_artifacts", "id") => "Row id; the artifact's rowid in search_index is 2^51 + id.",
        ("workspace_artifacts", "session_id") => "The session (sessions.id).",
        ("workspace_artifacts", "file_path") => "The file's path (or the name the source gives it).",
        ("workspace_artifacts", "content") => "Its text, the latest the session recorded.",
        ("messages", "id") => "Row id.",
        ("messages", "session_id") => "The session (sessions.id).",
        ("messages", "seq") => "Order within the session, from 0.",
        ("messages", "native_id") => "The agent's id for the record.",
        ("messages", "parent_native_id") => "The agent's id of the record it follows.",
        ("messages", "role") => "user, assistant, tool or system.",
        ("messages", "kind") => "prompt, text, thinking, tool_call, tool_result, summary, compaction, error, meta, unknown.",
        ("messages", "tool_name") => "Tool of a tool_call or tool_result.",
        ("messages", "tool_call_id") => "Joins a tool_call to its tool_result.",
        ("messages", "is_error") => "1 when a tool result is an error.",
        ("messages", "model") => "Model that wrote an assistant message.",
        ("messages", "timestamp") => "When it was written (ISO-8601 UTC text).",
        ("messages", "is_sidechain") => "1 for sidechain (inline subagent) records.",
        ("messages", "on_main_chain") => "0 for abandoned branches (rewinds, retries).",
        ("messages", "turn_index") => "Turn it belongs to (turns.turn_index); null before the first prompt.",
        ("messages", "agent_ref") => "Reference to a subagent started here.",
        ("messages", "text") => "Text (prompt, answer, thinking, error, or a tool call's intent).",
        ("messages", "tool_input") => "A tool call's input (JSON text).",
        ("messages", "tool_output") => "A tool result's full output.",
        ("messages", "extra") => "Raw JSON of records trail does not model.",
        ("messages", "prompt_source") => "Prompts: who wrote it, when the format says: typed, queued (typed while the agent worked), system (sent by the agent or a hook), sdk (sent by a program). Reports count typed, queued and unknown.",
        ("tool_calls", "id") => "Row id.",
        ("tool_calls", "session_id") => "The session (sessions.id).",
        ("tool_calls", "tool_call_id") => "The agent's id of the call.",
        ("tool_calls", "tool_name") => "Tool name (Bash, Read, Edit...).",
        ("tool_calls", "call_seq") => "messages.seq of the call.",
        ("tool_calls", "result_seq") => "messages.seq of its result; null when none came.",
        ("tool_calls", "is_error") => "1 when the result is an error.",
        ("tool_calls", "turn_index") => "Turn of the call.",
        ("tool_calls", "timestamp") => "When it was called.",
        ("usage", "id") => "Row id.",
        ("usage", "session_id") => "The session (sessions.id).",
        ("usage", "request_key") => "The request's key, unique within the session.",
        ("usage", "message_id") => "The API message id, when known.",
        ("usage", "message_seq") => "messages.seq of the message it belongs to.",
        ("usage", "model") => "Model of the request.",
        ("usage", "timestamp") => "When it was made.",
        ("usage", "input_tokens") => "Input tokens.",
        ("usage", "output_tokens") => "Output tokens.",
        ("usage", "cache_creation_tokens") => "Cache-write tokens.",
        ("usage", "cache_creation_1h_tokens") => "Of those, written to the 1-hour cache.",
        ("usage", "cache_read_tokens") => "Cache-read tokens.",
        ("usage", "reasoning_tokens") => "Reasoning tokens, when reported apart.",
        ("usage", "cost_usd") => "Cost the agent recorded, when it did.",
        ("usage", "is_sidechain") => "1 for sidechain requests.",
        ("usage", "tokens_known") => "0 when the agent recorded zeros it never measured.",
        ("usage", "has_speed") => "1 when the request recorded a speed mode.",
        ("usage", "web_search_requests") => "Server-side web searches the request ran (Claude), priced per search.",
        ("usage", "premium_requests") => "GitHub Copilot premium requests the request used (multiplier applied): a plan's unit, never dollars.",
        ("source_files", "path") => "The agent file.",
        ("source_files", "source") => "Its format.",
        ("source_files", "size") => "Size when last read.",
        ("source_files", "mtime_ns") => "Modification time when last read (ns).",
        ("source_files", "inode") => "Inode when last read.",
        ("source_files", "bytes_parsed") => "Bytes read so far (an appendable log resumes here).",
        ("source_files", "lines") => "Lines read so far.",
        ("source_files", "head_hash") => "Hash of the first 64 KiB read.",
        ("source_files", "tail_hash") => "Hash of the last 64 KiB read.",
        ("source_files", "state") => "The parser's resume state (blob).",
        ("source_files", "sessions") => "JSON array of the session ids it holds.",
        ("source_files", "issue_count") => "Parse problems found in it.",
        ("source_files", "notes") => "Notes from the parser.",
        ("source_files", "missing") => "1 when the file is gone.",
        ("source_files", "last_error") => "Why the last read failed, if it did.",
        ("source_files", "indexed_at") => "When it was last read.",
        ("source_files", "parser_version") => "The version of its source's parser that read it; a different current version re-reads the file.",
        ("parse_issues", "id") => "Row id.",
        ("parse_issues", "path") => "The file.",
        ("parse_issues", "source") => "Its format.",
        ("parse_issues", "line") => "Line number, from 1.",
        ("parse_issues", "byte_offset") => "Byte offset of the line.",
        ("parse_issues", "excerpt") => "The first 200 characters of the line.",
        ("parse_issues", "reason") => "What was wrong.",
        ("parse_issues", "found_at") => "When it was found.",
        ("file_snapshots", "session_id") => "The session (sessions.id).",
        ("file_snapshots", "file_path") => "The file, as the agent names it.",
        ("file_snapshots", "version") => "Order of this file's snapshots, from 0.",
        ("file_snapshots", "turn_index") => "The turn at whose start the file had this content; NULL: as the session left it.",
        ("file_snapshots", "content") => "The content; NULL when the file did not exist then.",
        ("file_snapshots", "taken_at") => "When the agent took it.",
        ("file_snapshots", "origin") => "claude-file-history or vscode-chat-editing.",
        ("title_hints", "leaf_native_id") => "The message id the title names.",
        ("title_hints", "title") => "The title.",
        ("title_hints", "path") => "File the hint came from.",
        ("turn_search", "prompt") => "The turn's prompts (weight 4 in the rank).",
        ("turn_search", "answer") => "The turn's answers, errors and summaries (weight 1).",
        ("turn_search", "tool_input") => "Its tool calls' inputs, each its first 1,000 characters (weight 0.5).",
        ("turn_search", "tool_output") => "Its tool outputs, each up to 800 characters: longer ones by their first 600 and last 200 (weight 0.25).",
        ("turn_docs", "id") => "turn_search's rowid.",
        ("turn_docs", "session_id") => "The session (sessions.id).",
        ("turn_docs", "turn_index") => "The turn (messages.turn_index); -1 for messages before the first prompt.",
        ("turn_docs", "first_at") => "Its first message's time.",
        ("turn_docs", "last_at") => "Its last message's time.",
        ("turn_docs", "digest") => "xxh3 of what the turn's row indexes, its times and its signatures: a turn written again unchanged keeps its row (null: written before search database version 3).",
        ("turn_prompts", "id") => "turn_search's rowid (turn_docs.id).",
        ("turn_prompts", "prompt") => "The turn's prompt messages' text, escape sequences removed, one per line.",
        ("prompt_search", "prompt") => "The turn's prompt column, as turn_prompts holds it.",
        ("turn_sigs", "id") => "turn_search's rowid (turn_docs.id).",
        ("turn_sigs", "sigs") => "For each of its indexed messages in seq order: one byte, its number of fields; then for each field one byte b and a filter of 8 << (b - 1) bytes (b = 0: a field that may hold any word, no filter).",
        ("chronicle_rows", "id") => "search_index's rowid.",
        ("chronicle_rows", "session_id") => "The session (sessions.id).",
        ("usage_watch", "generation") => "Changes to counted usage rows so far.",
        ("usage_watch", "low") => "Earliest timestamp a change touched since the anchor was saved ('' = unknown).",
        ("block_anchor", "generation") => "usage_watch.generation when it was computed.",
        ("block_anchor", "first_request") => "The timestamp of the request that starts the block.",
        ("search_log", "seq") => "The writer's batch number.",
        ("search_log", "session_id") => "A session that batch wrote.",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, ReadOnlySql) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        crate::Store::open(&path).unwrap();
        let db = ReadOnlySql::open(&path).unwrap();
        (dir, db)
    }

    /// Issue 15: `SELECT randomblob(1000000000)` returned a 1 GB value.
    #[test]
    fn a_value_over_the_byte_cap_is_refused_inside_sqlite() {
        let (_dir, db) = store();
        let err = db
            .query("SELECT randomblob(1000000000)", SqlLimits::default())
            .unwrap_err();
        assert!(
            matches!(err, SqlError::TooBig(DEFAULT_MAX_BYTES)),
            "{err:?}"
        );
        let err = db
            .query(
                "SELECT zeroblob(2000)",
                SqlLimits {
                    max_bytes: 1000,
                    ..SqlLimits::default()
                },
            )
            .unwrap_err();
        assert!(matches!(err, SqlError::TooBig(1000)), "{err:?}");
        // The connection's limit is restored: the next query with a larger cap runs.
        let r = db
            .query("SELECT length(zeroblob(2000))", SqlLimits::default())
            .unwrap();
        assert_eq!(r.rows, vec![vec![Cell::Integer(2000)]]);
    }

    #[test]
    fn rows_stop_at_the_byte_cap_and_say_truncated() {
        let (_dir, db) = store();
        let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
                   SELECT printf('%.100c', 'x') FROM n";
        let capped = db
            .query(
                sql,
                SqlLimits {
                    max_bytes: 1050,
                    ..SqlLimits::default()
                },
            )
            .unwrap();
        assert_eq!(capped.rows.len(), 10);
        assert!(capped.truncated);
        let all = db.query(sql, SqlLimits::default()).unwrap();
        assert_eq!(all.rows.len(), 100);
        assert!(!all.truncated);
    }

    /// Chronicle's table lives in the search database; `trail sql` finds it by its name.
    #[test]
    fn chronicle_search_index_answers_by_its_name() {
        let (_dir, db) = store();
        let r = db
            .query(
                "SELECT content, session_id, source_type, bm25(search_index) AS rank FROM search_index
                 WHERE search_index MATCH 'x' ORDER BY rank LIMIT 10",
                SqlLimits::default(),
            )
            .unwrap();
        assert!(r.rows.is_empty());
        let tables: Vec<String> = db.schema().unwrap().into_iter().map(|t| t.name).collect();
        for want in ["sessions", "search_index", "turn_search", "turn_docs"] {
            assert!(tables.iter().any(|t| t == want), "{want}: {tables:?}");
        }
        let err = db
            .query(
                "INSERT INTO search_index (search_index) VALUES ('delete-all')",
                SqlLimits::default(),
            )
            .unwrap_err();
        assert!(matches!(err, SqlError::Denied(_)), "{err:?}");
    }
}
