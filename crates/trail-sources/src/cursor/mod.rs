//! Cursor: composer (chat and agent) conversations in the `state.vscdb` SQLite key/value stores
//! of Cursor's user data dir (`~/.config/Cursor`, `~/Library/Application Support/Cursor`,
//! `%APPDATA%/Cursor`, resolved by the CLI).
//!
//! # What was checked, and where
//! Cursor is closed source: this follows third-party readers and their notes (seen through the
//! search index), not a spec.
//! - `michaeldhood/chatrxiv` `docs/cursor/storage-reference.md`: `User/globalStorage/state.vscdb`
//!   has `cursorDiskKV(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`. `composerData:<id>` is
//!   `{composerId, name?, createdAt (ms), lastUpdatedAt? (ms), fullConversationHeadersOnly
//!   [{bubbleId, type, serverBubbleId?}], conversation[]? (older, inline bubbles), modelConfig
//!   {modelName}, createdOnBranch?, subComposerIds[]?, status}`. `bubbleId:<composer>:<bubble>`
//!   is one message: `type` 1 (user) or 2 (assistant), `text`, `createdAt` (ISO text),
//!   `thinking{text}`, `modelInfo{modelName}`, `tokenCount{inputTokens, outputTokens}`,
//!   `requestId`. Workspace databases have the same tables, with an empty `cursorDiskKV`.
//! - A third-party "Cursor tool bubble data format" note: tool calls are assistant bubbles with
//!   `toolFormerData{tool (number), toolCallId, name, status (loading|completed|cancelled|error),
//!   rawArgs (JSON text), params (JSON text), result (JSON text), additionalData}`.
//! - `hanzoai/agents` `docs/desktop/CURSOR_MESSAGE_HISTORY.md` and a Rust reader: each
//!   `User/workspaceStorage/<hash>/state.vscdb` has an `ItemTable` row `composer.composerData`
//!   whose `allComposers[].composerId` lists the workspace's composers; the folder's
//!   `workspace.json` holds `{"folder": "file:///..."}` (VS Code's own layout).
//!
//! # Mapping
//! - One session per composer that has messages; its id is the composer UUID. Title: `name`,
//!   else the first prompt. `createdAt`/`lastUpdatedAt` bound the session, bubbles' `createdAt`
//!   stamp messages. `createdOnBranch` is the branch. The cwd comes from the workspace whose
//!   `composer.composerData` lists the composer; a composer listed by two folders gets none.
//!   A sub-composer (best-of-N sibling or subagent) gets its parent from its own
//!   `subagentInfo.parentComposerId` or `parentComposerId`, else from the composer whose
//!   `subComposerIds` or `subagentComposerIds` lists it.
//! - Bubbles are the `bubbleId:` rows, plus those kept inline in `conversationMap` (by id).
//!   Order follows `fullConversationHeadersOnly` (headers whose bubble is missing are counted in
//!   a note), else the inline `conversation` list, else bubble `createdAt`.
//! - A user bubble is the prompt; an assistant bubble gives, in order, thinking, text, a tool
//!   call (input: `rawArgs`, else `params`) and its result (`result`; `status == "error"` is an
//!   error). Other bubble types are `(System, Unknown)` with the raw JSON in `extra`.
//! - Usage: one [`Usage`] per assistant bubble with a `tokenCount` (key: the bubble id). Local
//!   counts are often zero: both zero means `tokens_known = false`.
//! - Bad JSON in a value is a parse issue naming its key; the rest is indexed.
//! - Not read: the pre-composer `ItemTable` chat (`workbench.panel.aichat.view.aichat.chatdata`).
//! - Agent transcripts (`~/.cursor/projects/<project>/agent-transcripts/`), where Cursor now
//!   keeps the messages of composers `state.vscdb` holds only the metadata of, are read by
//!   [`crate::cursor_transcripts`] and joined with that metadata.

pub(crate) mod cursor_transcripts;
mod workspace;

pub(crate) use workspace::workspace_folders;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;
use trail_model::{
    time, truncate_chars, Message, MessageKind, ParentLink, ParseIssue, Role, Session, SessionId,
    SessionMeta, SourceKind, Usage,
};

use crate::json_fields::{jcount, jstr, value_text};
use crate::linear::{finish_linear_session, push_message, PendingFile};
use crate::sqlite_readonly::{cell_text, read_database, record_issue, table_names, SQLITE_MAGIC};
use crate::{ids, refs, FileParse, ParseRequest, Source, SourceError};

/// Cursor's global `state.vscdb`.
pub struct Cursor;

const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &[
    "run_terminal_cmd",
    "run_terminal_command",
    "run_terminal_command_v2",
    "shell",
];
const FILE_KEYS: &[&str] = &[
    "target_file",
    "targetFile",
    "file_path",
    "filePath",
    "relativeWorkspacePath",
];

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 2: the late-2026 format changes of issue 18.
/// 3: a leading BOM is skipped in agent transcripts (issue 40).
pub const PARSER_VERSION: u32 = 3;

impl Source for Cursor {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Cursor
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            // `~/.cursor/projects/<project>/agent-transcripts/` (see `cursor_transcripts`).
            out.extend(crate::cursor_transcripts::discover_transcripts(root));
            for candidate in [
                root.join("User").join("globalStorage").join("state.vscdb"),
                root.join("globalStorage").join("state.vscdb"),
            ] {
                if candidate.is_file() {
                    out.push(candidate);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if crate::cursor_transcripts::is_agent_transcript(path) {
            return true;
        }
        path.file_name().is_some_and(|n| n == "state.vscdb")
            && head.starts_with(SQLITE_MAGIC)
            && memchr::memmem::find(head, b"cursorDiskKV").is_some()
    }

    fn appendable(&self, _path: &Path) -> bool {
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        if crate::cursor_transcripts::is_agent_transcript(path) {
            return crate::cursor_transcripts::parse(path);
        }
        read_database(path, |conn| read_global(path, conn))
    }
}

/// The rows of `cursorDiskKV` whose key starts with `prefix` (a key range, no `LIKE` scan).
fn kv_range(conn: &Connection, prefix: &str) -> rusqlite::Result<Vec<(String, Option<String>)>> {
    // Every prefix used here ends with ':'; ';' is the next character.
    let end = format!("{};", prefix.trim_end_matches(':'));
    let mut stmt = conn.prepare_cached(
        "SELECT key, value FROM cursorDiskKV WHERE key >= ?1 AND key < ?2 ORDER BY key",
    )?;
    let mut rows = stmt.query([prefix, end.as_str()])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let key = row.get_ref(0).ok().and_then(cell_text).unwrap_or_default();
        let value = row.get_ref(1).ok().and_then(cell_text);
        out.push((key, value));
    }
    Ok(out)
}

/// Parses a value; bad JSON becomes an issue naming the key.
fn parse_value(
    path: &Path,
    key: &str,
    raw: Option<&str>,
    issues: &mut Vec<ParseIssue>,
) -> Option<Value> {
    let raw = raw?;
    match serde_json::from_str::<Value>(raw) {
        Ok(v) => Some(v),
        Err(e) => {
            issues.push(record_issue(
                path,
                &format!("key {key}"),
                raw,
                &format!("invalid JSON: {e}"),
            ));
            None
        }
    }
}

fn read_global(path: &Path, conn: &Connection) -> Result<FileParse, SourceError> {
    let err = |e: rusqlite::Error| SourceError::Database {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let tables = table_names(conn).map_err(err)?;
    if !tables.contains("cursorDiskKV") {
        return Err(SourceError::format(
            path,
            "not a Cursor database: no cursorDiskKV table",
        ));
    }
    let mut out = FileParse::default();
    let mut composers: Vec<(String, Value)> = Vec::new();
    for (key, raw) in kv_range(conn, "composerData:").map_err(err)? {
        let id = key["composerData:".len()..].to_string();
        if id.is_empty() {
            continue;
        }
        if let Some(v) = parse_value(path, &key, raw.as_deref(), &mut out.issues) {
            composers.push((id, v));
        }
    }
    // A sub-composer (best-of-N sibling, subagent) is linked to its parent from either side:
    // the child's own `subagentInfo.parentComposerId` / `parentComposerId`, else the parent's
    // `subComposerIds` / `subagentComposerIds` listing it.
    let mut parents: HashMap<String, String> = HashMap::new();
    for (id, data) in &composers {
        let named = data
            .pointer("/subagentInfo/parentComposerId")
            .or_else(|| data.get("parentComposerId"))
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty() && p != id);
        if let Some(parent) = named {
            parents.insert(id.clone(), parent.to_string());
        }
    }
    for (id, data) in &composers {
        for list in ["subComposerIds", "subagentComposerIds"] {
            let children = data.get(list).and_then(Value::as_array);
            for child in children.into_iter().flatten().filter_map(Value::as_str) {
                if child != id {
                    parents
                        .entry(child.to_string())
                        .or_insert_with(|| id.clone());
                }
            }
        }
    }
    let (folders, unreadable) = workspace_folders(path);
    if unreadable > 0 {
        out.notes
            .push(format!("unreadable workspace databases: {unreadable}"));
    }
    let mut missing = 0usize;
    for (id, data) in composers {
        let rows = kv_range(conn, &format!("bubbleId:{id}:")).map_err(err)?;
        let prefix_len = "bubbleId:".len() + id.len() + 1;
        let mut bubbles: HashMap<String, Value> = HashMap::new();
        for (key, raw) in rows {
            let bubble_id = key.get(prefix_len..).unwrap_or("").to_string();
            if let Some(v) = parse_value(path, &key, raw.as_deref(), &mut out.issues) {
                bubbles.insert(bubble_id, v);
            }
        }
        let ordered = order_bubbles(&data, bubbles, &mut missing);
        let cwd = folders.get(&id).cloned();
        let parent = parents.get(&id).map(|p| session_id(p));
        if let Some(session) = build_session(&id, &data, &ordered, cwd, parent) {
            out.sessions.push(session);
        }
    }
    if missing > 0 {
        out.notes
            .push(format!("conversation headers without a bubble: {missing}"));
    }
    Ok(out)
}

/// The conversation's bubbles in order, as `(bubble id, bubble)`.
fn order_bubbles(
    data: &Value,
    mut bubbles: HashMap<String, Value>,
    missing: &mut usize,
) -> Vec<(String, Value)> {
    // Some versions keep the bubbles inline, keyed by id; a `bubbleId:` row wins over its copy.
    if let Some(map) = data.get("conversationMap").and_then(Value::as_object) {
        for (id, b) in map {
            if b.is_object() {
                bubbles.entry(id.clone()).or_insert_with(|| b.clone());
            }
        }
    }
    if let Some(headers) = data
        .get("fullConversationHeadersOnly")
        .and_then(Value::as_array)
    {
        let mut out = Vec::new();
        for h in headers {
            let Some(id) = jstr(h, "bubbleId") else {
                continue;
            };
            match bubbles.remove(id) {
                Some(b) => out.push((id.to_string(), b)),
                None => *missing += 1,
            }
        }
        return out;
    }
    if let Some(inline) = data.get("conversation").and_then(Value::as_array) {
        return inline
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let id = jstr(b, "bubbleId")
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("#{i}"));
                (id, b.clone())
            })
            .collect();
    }
    let mut out: Vec<(String, Value)> = bubbles.into_iter().collect();
    out.sort_by_cached_key(|(id, b)| {
        let ts = b.get("createdAt").and_then(time::from_json);
        (ts.is_none(), ts, id.clone())
    });
    out
}

fn session_id(composer_id: &str) -> SessionId {
    ids::session_id(SourceKind::Cursor, composer_id)
}

fn model_name(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty() && *m != "default")
        .map(str::to_string)
}

fn build_session(
    id: &str,
    data: &Value,
    bubbles: &[(String, Value)],
    cwd: Option<String>,
    parent: Option<SessionId>,
) -> Option<Session> {
    let mut meta = SessionMeta::new(session_id(id), SourceKind::Cursor, id);
    meta.title = jstr(data, "name")
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| truncate_chars(t, TITLE_CHARS).to_string());
    meta.cwd = cwd;
    meta.branch = jstr(data, "createdOnBranch")
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .map(str::to_string);
    meta.parent = parent.map(|session_id| ParentLink {
        session_id,
        tool_call_id: None,
        agent_ref: Some(id.to_string()),
    });
    for key in ["createdAt", "lastUpdatedAt"] {
        if let Some(ts) = data.get(key).and_then(time::from_json) {
            meta.observe_timestamp(&ts);
        }
    }
    let mut session = Session::new(meta);
    let mut files = Vec::new();
    let mut model = model_name(data.pointer("/modelConfig/modelName"));
    let mut first_prompt: Option<String> = None;
    for (bubble_id, b) in bubbles {
        map_bubble(
            &mut session,
            &mut files,
            &mut model,
            &mut first_prompt,
            bubble_id,
            b,
        );
    }
    if session.messages.is_empty() {
        return None;
    }
    if session.meta.title.is_none() {
        session.meta.title = first_prompt;
    }
    finish_linear_session(&mut session, files, SHELL_TOOLS);
    add_terminal_refs(&mut session);
    Some(session)
}

/// Terminal results are JSON (`{"output": ...}`): scan the decoded output for git's commit
/// lines too.
fn add_terminal_refs(session: &mut Session) {
    let mut found = Vec::new();
    for m in &session.messages {
        let shell = m
            .tool_name
            .as_deref()
            .is_some_and(|t| SHELL_TOOLS.contains(&t));
        if m.kind() != MessageKind::ToolResult || !shell {
            continue;
        }
        let Some(v) = m
            .tool_output
            .as_deref()
            .and_then(|o| serde_json::from_str::<Value>(o).ok())
        else {
            continue;
        };
        if let Some(output) = jstr(&v, "output") {
            found.extend(refs::session_refs(
                output,
                true,
                m.turn_index,
                m.timestamp.as_deref(),
            ));
        }
    }
    for r in found {
        session.add_ref(r);
    }
}

fn thinking_text(v: &Value) -> Option<&str> {
    match v.get("thinking")? {
        Value::String(s) => Some(s.as_str()),
        t => jstr(t, "text"),
    }
}

/// Tool arguments as JSON text: a JSON string is taken as it is, other text is quoted.
fn args_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(if serde_json::from_str::<Value>(s).is_ok() {
            s.clone()
        } else {
            Value::String(s.clone()).to_string()
        }),
        other => Some(other.to_string()),
    }
}

fn map_bubble(
    session: &mut Session,
    files: &mut Vec<PendingFile>,
    model: &mut Option<String>,
    first_prompt: &mut Option<String>,
    bubble_id: &str,
    b: &Value,
) {
    let ts = b.get("createdAt").and_then(time::from_json);
    if let Some(m) = model_name(b.pointer("/modelInfo/modelName")) {
        *model = Some(m);
    }
    let base = |role: Role, kind: MessageKind| {
        Message::new(role, kind, "")
            .with_native_id(bubble_id.to_string())
            .with_timestamp(ts.clone())
    };
    let text = jstr(b, "text").unwrap_or("");
    match b.get("type").and_then(Value::as_i64) {
        Some(1) => {
            if text.trim().is_empty() {
                return;
            }
            if first_prompt.is_none() {
                *first_prompt = Some(truncate_chars(text.trim(), TITLE_CHARS).to_string());
            }
            let mut m = base(Role::User, MessageKind::Prompt);
            m.text = text.to_string();
            push_message(session, m);
        }
        Some(2) => {
            let asst = |kind: MessageKind| {
                let mut m = base(Role::Assistant, kind);
                m.model = model.clone();
                m
            };
            let first = session.messages.len();
            if let Some(t) = thinking_text(b).filter(|t| !t.trim().is_empty()) {
                let mut m = asst(MessageKind::Thinking);
                m.text = t.to_string();
                push_message(session, m);
            }
            if !text.trim().is_empty() {
                let mut m = asst(MessageKind::Text);
                m.text = text.to_string();
                push_message(session, m);
            }
            if let Some(tfd) = b.get("toolFormerData").filter(|t| t.is_object()) {
                map_tool(session, files, &asst, bubble_id, tfd, &ts);
            }
            if session.messages.len() > first {
                if let Some(m) = model.as_deref() {
                    session.observe_model(m);
                }
            }
            if let Some(tc) = b.get("tokenCount").filter(|t| t.is_object()) {
                let input = jcount(tc.get("inputTokens"));
                let output = jcount(tc.get("outputTokens"));
                let message_seq = (session.messages.len() > first)
                    .then(|| u32::try_from(first).ok())
                    .flatten();
                session.usage.push(Usage {
                    request_key: bubble_id.to_string(),
                    message_id: Some(bubble_id.to_string()),
                    message_seq,
                    model: model.clone(),
                    timestamp: ts.clone(),
                    input_tokens: input,
                    output_tokens: output,
                    tokens_known: input != 0 || output != 0,
                    ..Usage::default()
                });
            }
        }
        _ => {
            let mut m = base(Role::System, MessageKind::Unknown);
            m.text = text.to_string();
            m.extra = Some(b.to_string());
            push_message(session, m);
        }
    }
}

fn map_tool(
    session: &mut Session,
    files: &mut Vec<PendingFile>,
    asst: &dyn Fn(MessageKind) -> Message,
    bubble_id: &str,
    tfd: &Value,
    ts: &Option<String>,
) {
    let name = jstr(tfd, "name")
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .or_else(|| {
            tfd.get("tool")
                .and_then(Value::as_i64)
                .map(|n| format!("tool-{n}"))
        });
    let call_id = jstr(tfd, "toolCallId")
        .filter(|c| !c.is_empty())
        .unwrap_or(bubble_id)
        .to_string();
    let raw_args = tfd.get("rawArgs").and_then(args_text);
    let params = tfd.get("params").and_then(args_text);
    let mut call = asst(MessageKind::ToolCall);
    call.tool_name = name.clone();
    call.tool_call_id = Some(call_id.clone());
    call.tool_input = raw_args.clone().or_else(|| params.clone());
    let seq = push_message(session, call);
    let mut seen = HashSet::new();
    for args in [raw_args, params].into_iter().flatten() {
        let Ok(v) = serde_json::from_str::<Value>(&args) else {
            continue;
        };
        for key in FILE_KEYS {
            if let Some(p) = v
                .get(*key)
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
            {
                if seen.insert(p.to_string()) {
                    files.push(PendingFile {
                        seq: Some(seq),
                        path: p.to_string(),
                        tool_name: name.clone(),
                        timestamp: ts.clone(),
                    });
                }
            }
        }
    }
    let status = jstr(tfd, "status").unwrap_or("");
    let result = tfd.get("result").filter(|r| !r.is_null());
    if result.is_none() && status != "error" {
        return;
    }
    let mut m = asst(MessageKind::ToolResult);
    m.role = Some(Role::Tool);
    m.model = None;
    m.tool_name = name;
    m.tool_call_id = Some(call_id);
    m.tool_output = Some(result.map(value_text).unwrap_or_default());
    m.is_error = status == "error";
    push_message(session, m);
}
