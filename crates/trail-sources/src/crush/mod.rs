//! Crush (`charmbracelet/crush`): one SQLite database per project, `<project>/.crush/crush.db`.
//!
//! # What was checked, and where
//! Read in the agent's own source (`charmbracelet/crush`):
//! - `internal/db/migrations/20250424200609_initial.sql`: `sessions(id, parent_session_id,
//!   title, message_count, prompt_tokens, completion_tokens, cost, updated_at, created_at)`,
//!   `messages(id, session_id, role, parts, model, created_at, updated_at, finished_at)` and
//!   `files(id, session_id, path, content, version, created_at, updated_at)`; later migrations
//!   add columns (`messages.provider`, `sessions.summary_message_id`, `workspace_cwd`...).
//!   Times are Unix **seconds** (real databases agree).
//! - `internal/message/content.go`: `parts` is a JSON array of `{type, data}`: `text`
//!   (`text`), `reasoning` (`thinking`), `image_url` (`url`), `binary` (`path`, `mime_type`),
//!   `tool_call` (`id, name, input` (a JSON string), `finished`), `tool_result`
//!   (`tool_call_id, name, content, metadata, is_error`), `finish` (`reason, time, message,
//!   details`), and newer `shell_command`, `subagent_note`, `context_note`.
//! - `internal/history`: a file's first edit stores its content before the edit as version 0,
//!   every edit after it the new content as the next version: the `files` table is versioned
//!   snapshots, which feed `trail diff`.
//! - `internal/llm/agent/agent-tool.go`: the `agent` tool runs a sub-agent in a child session
//!   whose id is the tool call's id (`parent_session_id` = the caller's session).
//! - `internal/projects/projects.go`: the projects Crush ran in are listed in `projects.json`
//!   (`{projects: [{path, data_dir, last_accessed}]}`) beside its global data.
//!
//! # Mapping
//! - Session ids are Crush's UUIDs. The cwd is `workspace_cwd` where recorded, else the folder
//!   holding the data folder (`<project>/.crush`).
//! - Usage is recorded per session only: one [`Usage`] per session (`prompt_tokens`,
//!   `completion_tokens`, `cost`), keyed `session`, with the session's last model.
//! - A user message's first text is the prompt; its other parts are `(User, Meta)`. A `finish`
//!   with reason `error` is an `Error` message; the message named by `summary_message_id` is a
//!   `Summary`.
//! - The database is opened read-only with its WAL (a private copy when the owner holds it):
//!   Crush keeps recent messages in the WAL for long stretches.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;
use trail_model::{
    time, truncate_chars, FileSnapshot, Message, MessageKind, ParentLink, ParseIssue, Role,
    Session, SessionMeta, SourceKind, Usage,
};

use crate::ids;
use crate::json_fields::{jcount, jstr, value_text};
use crate::linear::{finish_linear_session, push_message, PendingFile};
use crate::sqlite_readonly::{
    column_names, db_error, read_database, record_issue, require_tables, rows_as_json, SQLITE_MAGIC,
};
use crate::{FileParse, ParseRequest, Source, SourceError};

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
pub const PARSER_VERSION: u32 = 1;

/// The database's file name.
pub const DB_NAME: &str = "crush.db";
/// The project registry beside Crush's global data.
pub const PROJECTS_FILE: &str = "projects.json";
/// Crush's default data folder inside a project.
const DATA_DIR: &str = ".crush";
/// Where file snapshots come from, for `trail diff`.
pub const SNAPSHOT_ORIGIN: &str = "crush-file-history";
/// Characters of a prompt used as a title.
const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["bash"];

/// Crush's per-project databases.
pub struct Crush;

impl Source for Crush {
    fn kind(&self) -> SourceKind {
        SourceKind::Crush
    }

    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    /// Roots are Crush's global data folders (holding `projects.json`), data folders holding
    /// `crush.db`, or projects holding `.crush/crush.db`.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            for dir in registered_data_dirs(&root.join(PROJECTS_FILE)) {
                out.push(dir.join(DB_NAME));
            }
            out.push(root.join(DB_NAME));
            out.push(root.join(DATA_DIR).join(DB_NAME));
        }
        out.retain(|p| p.is_file());
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        path.file_name().is_some_and(|n| n == DB_NAME) && head.starts_with(SQLITE_MAGIC)
    }

    fn appendable(&self, _path: &Path) -> bool {
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        read_database(path, |conn| read_db(path, conn))
    }
}

/// The data folders `projects.json` lists (a relative `data_dir` is under its project).
/// A missing or unreadable registry lists none.
pub fn registered_data_dirs(registry: &Path) -> Vec<PathBuf> {
    let Ok(bytes) = crate::whole::read(registry) else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    let Some(list) = v.get("projects").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|p| {
            let project = PathBuf::from(jstr(p, "path")?);
            let data = jstr(p, "data_dir")
                .filter(|d| !d.is_empty())
                .unwrap_or(DATA_DIR);
            let data = Path::new(data);
            Some(if data.is_absolute() {
                data.to_path_buf()
            } else {
                project.join(data)
            })
        })
        .collect()
}

/// A Crush time: Unix seconds (milliseconds accepted, should a build write them).
fn crush_time(v: Option<&Value>) -> Option<String> {
    let n = v?.as_f64()?;
    if n <= 0.0 {
        return None;
    }
    let ms = if n > 1e11 { n } else { n * 1000.0 };
    time::from_epoch_millis(ms as i64)
}

fn read_db(path: &Path, conn: &Connection) -> Result<FileParse, SourceError> {
    let err = |e: rusqlite::Error| db_error(path, &e);
    let tables = require_tables(conn, path, &["sessions", "messages"], "Crush database")?;
    let order = if column_names(conn, "messages")
        .map_err(err)?
        .contains("created_at")
    {
        "created_at, rowid"
    } else {
        "rowid"
    };
    let sessions =
        rows_as_json(conn, "SELECT * FROM sessions ORDER BY created_at, rowid").map_err(err)?;
    let messages =
        rows_as_json(conn, &format!("SELECT * FROM messages ORDER BY {order}")).map_err(err)?;
    let files = if tables.contains("files") {
        rows_as_json(
            conn,
            "SELECT * FROM files ORDER BY path, version, created_at",
        )
        .map_err(err)?
    } else {
        Vec::new()
    };
    let mut out = FileParse::default();
    let mut by_session: HashMap<String, Vec<&Value>> = HashMap::new();
    for m in &messages {
        by_session
            .entry(text_of(m, "session_id"))
            .or_default()
            .push(m);
    }
    let mut files_by: HashMap<String, Vec<&Value>> = HashMap::new();
    for f in &files {
        files_by
            .entry(text_of(f, "session_id"))
            .or_default()
            .push(f);
    }
    let default_cwd = project_of(path);
    for row in &sessions {
        let id = text_of(row, "id");
        if id.is_empty() {
            out.issues.push(record_issue(
                path,
                "sessions row",
                &row.to_string(),
                "no id",
            ));
            continue;
        }
        let msgs = by_session.remove(&id).unwrap_or_default();
        let snaps = files_by.remove(&id).unwrap_or_default();
        let session = build_session(path, row, &msgs, &snaps, &default_cwd, &mut out.issues);
        out.sessions.push(session);
    }
    for (id, msgs) in by_session {
        out.issues.push(record_issue(
            path,
            "messages rows",
            &id,
            &format!(
                "{} messages of a session that is not in the sessions table",
                msgs.len()
            ),
        ));
    }
    link_agents(&mut out.sessions);
    Ok(out)
}

fn text_of(row: &Value, key: &str) -> String {
    row.get(key)
        .filter(|v| !v.is_null())
        .map(value_text)
        .unwrap_or_default()
}

/// `<project>` for a database at `<project>/.crush/crush.db`.
fn project_of(db: &Path) -> Option<String> {
    let data = db.parent()?;
    (data.file_name()? == DATA_DIR)
        .then(|| data.parent())
        .flatten()
        .map(|p| p.display().to_string())
}

fn build_session(
    path: &Path,
    row: &Value,
    msgs: &[&Value],
    files: &[&Value],
    default_cwd: &Option<String>,
    issues: &mut Vec<ParseIssue>,
) -> Session {
    let id = text_of(row, "id");
    let mut meta = SessionMeta::new(
        ids::session_id(SourceKind::Crush, &id),
        SourceKind::Crush,
        &id,
    );
    meta.title = Some(text_of(row, "title")).filter(|t| !t.trim().is_empty());
    meta.cwd = Some(text_of(row, "workspace_cwd"))
        .filter(|c| !c.is_empty())
        .or_else(|| default_cwd.clone());
    let parent = text_of(row, "parent_session_id");
    if !parent.is_empty() {
        meta.parent = Some(ParentLink {
            session_id: ids::session_id(SourceKind::Crush, &parent),
            tool_call_id: None,
            agent_ref: Some(id.clone()),
        });
    }
    for key in ["created_at", "updated_at"] {
        if let Some(ts) = crush_time(row.get(key)) {
            meta.observe_timestamp(&ts);
        }
    }
    let summary_id = text_of(row, "summary_message_id");
    let mut session = Session::new(meta);
    let mut pending = Vec::new();
    let mut first_prompt = None;
    for m in msgs {
        map_message(
            path,
            &mut session,
            m,
            &summary_id,
            &mut pending,
            &mut first_prompt,
            issues,
        );
    }
    if session.meta.title.is_none() {
        session.meta.title = first_prompt;
    }
    finish_linear_session(&mut session, pending, SHELL_TOOLS);
    add_usage(&mut session, row);
    add_snapshots(&mut session, files);
    session
}

/// One `messages` row: one message per part.
fn map_message(
    path: &Path,
    session: &mut Session,
    row: &Value,
    summary_id: &str,
    files: &mut Vec<PendingFile>,
    first_prompt: &mut Option<String>,
    issues: &mut Vec<ParseIssue>,
) {
    let id = text_of(row, "id");
    let role = text_of(row, "role");
    let raw = text_of(row, "parts");
    let parts: Vec<Value> = match serde_json::from_str::<Value>(&raw) {
        Ok(Value::Array(a)) => a,
        Ok(_) | Err(_) => {
            issues.push(record_issue(
                path,
                &format!("messages row id={id}"),
                &raw,
                "parts is not a JSON array",
            ));
            return;
        }
    };
    let model = Some(text_of(row, "model")).filter(|m| !m.is_empty());
    if let Some(m) = &model {
        session.observe_model(m);
    }
    let ts = crush_time(row.get("created_at"));
    let end = crush_time(row.get("finished_at")).or_else(|| ts.clone());
    let ctx = Ctx {
        id: &id,
        role: &role,
        model: &model,
        ts: &ts,
        summary: !summary_id.is_empty() && id == summary_id,
    };
    let mut prompt_taken = false;
    for part in &parts {
        let data = part.get("data").unwrap_or(&Value::Null);
        match jstr(part, "type").unwrap_or("") {
            "text" => {
                let text = jstr(data, "text").unwrap_or("").to_string();
                let kind = if ctx.summary {
                    MessageKind::Summary
                } else if role == "user" && !prompt_taken {
                    prompt_taken = true;
                    if first_prompt.is_none() && !text.trim().is_empty() {
                        *first_prompt = Some(truncate_chars(text.trim(), TITLE_CHARS).to_string());
                    }
                    MessageKind::Prompt
                } else if role == "user" {
                    MessageKind::Meta
                } else {
                    MessageKind::Text
                };
                let mut m = ctx.message(kind);
                m.text = text;
                push_message(session, m);
            }
            "reasoning" => {
                let mut m = ctx.message(MessageKind::Thinking);
                m.text = jstr(data, "thinking").unwrap_or("").to_string();
                if !m.text.is_empty() {
                    push_message(session, m);
                }
            }
            "tool_call" => map_call(session, &ctx, data, files),
            "tool_result" => {
                let mut m = ctx.message(MessageKind::ToolResult);
                m.role = Some(Role::Tool);
                m.tool_call_id = Some(jstr(data, "tool_call_id").unwrap_or("").to_string());
                m.tool_name = jstr(data, "name").map(str::to_string);
                m.tool_output = Some(jstr(data, "content").unwrap_or("").to_string());
                m.is_error = data.get("is_error").and_then(Value::as_bool) == Some(true);
                push_message(session, m);
            }
            "finish" => {
                if jstr(data, "reason") == Some("error") {
                    let mut m = ctx.message(MessageKind::Error);
                    m.timestamp = crush_time(data.get("time")).or_else(|| end.clone());
                    let text: Vec<&str> = ["message", "details"]
                        .iter()
                        .filter_map(|k| jstr(data, k))
                        .filter(|s| !s.is_empty())
                        .collect();
                    m.text = text.join("\n");
                    m.is_error = true;
                    push_message(session, m);
                }
            }
            "image_url" | "binary" | "shell_command" | "subagent_note" | "context_note" => {
                let mut m = ctx.message(MessageKind::Meta);
                m.text = ["url", "path", "command", "text"]
                    .iter()
                    .find_map(|k| jstr(data, k))
                    .unwrap_or("")
                    .to_string();
                if jstr(part, "type") == Some("shell_command") {
                    m.tool_output = jstr(data, "output").map(str::to_string);
                }
                push_message(session, m);
            }
            other => {
                let mut m = ctx.message(MessageKind::Unknown);
                m.role = Some(Role::System);
                m.text = other.to_string();
                m.extra = Some(part.to_string());
                push_message(session, m);
            }
        }
    }
}

struct Ctx<'a> {
    id: &'a str,
    role: &'a str,
    model: &'a Option<String>,
    ts: &'a Option<String>,
    summary: bool,
}

impl Ctx<'_> {
    fn message(&self, kind: MessageKind) -> Message {
        let role = match self.role {
            "user" => Role::User,
            "tool" => Role::Tool,
            "system" => Role::System,
            _ => Role::Assistant,
        };
        Message::new(role, kind, "")
            .with_native_id(self.id.to_string())
            .with_timestamp(self.ts.clone())
            .with_model(self.model.clone().filter(|_| role == Role::Assistant))
    }
}

/// A `tool_call` part: the call, and the file it names (tools take `file_path`).
fn map_call(session: &mut Session, ctx: &Ctx<'_>, data: &Value, files: &mut Vec<PendingFile>) {
    let mut m = ctx.message(MessageKind::ToolCall);
    m.role = Some(Role::Assistant);
    let name = jstr(data, "name").map(str::to_string);
    m.tool_name = name.clone();
    m.tool_call_id = Some(jstr(data, "id").unwrap_or("").to_string());
    let input = data.get("input").map(value_text).unwrap_or_default();
    let parsed: Option<Value> = serde_json::from_str(&input).ok();
    m.tool_input = Some(input);
    let seq = push_message(session, m);
    if let Some(p) = parsed.as_ref().and_then(|v| jstr(v, "file_path")) {
        files.push(PendingFile {
            seq: Some(seq),
            path: p.to_string(),
            tool_name: name,
            timestamp: ctx.ts.clone(),
        });
    }
}

/// The session's totals as one usage record (Crush keeps no per-request usage).
fn add_usage(session: &mut Session, row: &Value) {
    let input = jcount(row.get("prompt_tokens"));
    let output = jcount(row.get("completion_tokens"));
    let cost = row.get("cost").and_then(Value::as_f64).filter(|c| *c > 0.0);
    if input == 0 && output == 0 && cost.is_none() {
        return;
    }
    session.usage.push(Usage {
        request_key: "session".to_string(),
        model: session.models.last().cloned(),
        timestamp: session.meta.updated_at.clone(),
        input_tokens: input,
        output_tokens: output,
        cost_usd: cost,
        is_sidechain: session.meta.parent.is_some(),
        tokens_known: input > 0 || output > 0,
        ..Usage::default()
    });
}

/// The `files` rows as snapshots for `trail diff`. Rows of a path are renumbered from 0 in
/// version order. A snapshot's turn is the turn of the change that follows it (the next
/// version's turn), so each change between two versions lands in the turn that made it; the
/// last version is the file as the session left it (`None`).
fn add_snapshots(session: &mut Session, files: &[&Value]) {
    let mut by_path: Vec<(String, Vec<&Value>)> = Vec::new();
    for f in files {
        let path = text_of(f, "path");
        match by_path.last_mut() {
            Some((p, v)) if *p == path => v.push(f),
            _ => by_path.push((path, vec![f])),
        }
    }
    let mut seen = HashSet::new();
    for (path, rows) in by_path {
        if path.is_empty() || !seen.insert(path.clone()) {
            continue;
        }
        let taken: Vec<Option<String>> = rows
            .iter()
            .map(|r| crush_time(r.get("created_at")))
            .collect();
        for (i, r) in rows.iter().enumerate() {
            let turn_index = taken
                .get(i + 1)
                .map(|next| turn_at(session, next.as_deref()))
                .unwrap_or(None);
            session.snapshots.push(FileSnapshot {
                path: path.clone(),
                version: i as u32,
                turn_index,
                content: Some(text_of(r, "content")),
                taken_at: taken[i].clone(),
                origin: SNAPSHOT_ORIGIN.to_string(),
            });
        }
    }
}

/// The turn under way at `ts`: that of the last message at or before it.
fn turn_at(session: &Session, ts: Option<&str>) -> Option<u32> {
    let ts = ts?;
    session
        .messages
        .iter()
        .filter(|m| m.timestamp.as_deref().is_some_and(|t| t <= ts))
        .filter_map(|m| m.turn_index)
        .next_back()
        .or_else(|| session.messages.first().and_then(|m| m.turn_index))
}

/// A sub-agent's session has the id of the `agent` call that ran it: fills the link's call id
/// and the call's `agent_ref`.
fn link_agents(sessions: &mut [Session]) {
    let children: HashSet<String> = sessions
        .iter()
        .filter(|s| s.meta.parent.is_some())
        .map(|s| s.meta.native_id.clone())
        .collect();
    let mut calls = HashSet::new();
    for s in sessions.iter_mut() {
        for m in &mut s.messages {
            let Some(call) = m.tool_call_id.as_deref() else {
                continue;
            };
            if children.contains(call) {
                m.agent_ref = Some(call.to_string());
                calls.insert(call.to_string());
            }
        }
    }
    for s in sessions.iter_mut() {
        let native = s.meta.native_id.clone();
        if let Some(link) = &mut s.meta.parent {
            if calls.contains(&native) {
                link.tool_call_id = Some(native);
            }
        }
    }
}
