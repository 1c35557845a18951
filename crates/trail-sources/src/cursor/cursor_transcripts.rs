//! Cursor agent transcripts: `~/.cursor/projects/<project>/agent-transcripts/`, read by the
//! [`crate::cursor::Cursor`] source beside its `state.vscdb` stores.
//!
//! # What was checked, and where
//! Cursor is closed source; this follows third-party readers seen through the search index:
//! - Plain text, `agent-transcripts/<composerId>.txt`: turns start at a line `user:`, the
//!   prompt is wrapped in `<user_query>...</user_query>`, and the answer follows after a line
//!   `A:` (a scanner of Cursor's three stores, and several ingesters naming `*.txt`). Lines
//!   `assistant:` are read like `A:`; `[Tool call] <name>` / `[Tool result] <name>` lines, when
//!   present, become a tool call and its result (their shape is inferred).
//! - JSONL, `agent-transcripts/<uuid>/<uuid>.jsonl` (or `<uuid>.jsonl`): one record per line,
//!   `{role: "user"|"assistant", message: {content: [...]}}` with Claude-style blocks (`text`,
//!   `tool_use{id?, name, input}`, `tool_result{tool_use_id?, content}`), and `turn_ended`
//!   lines; no ids and no timestamps (an OpenCode-style importer documents these).
//!
//! # Join with the composer
//! The file stem is the composer id. `state.vscdb` may keep only the composer's metadata
//! (`composerData:<id>`: name, times, branch, model, parent), its messages living in the
//! transcript. The transcript's session takes that metadata, and the folder from the
//! workspace that lists the composer; a composer whose messages are still in `state.vscdb`
//! is read there, and its transcript adds nothing (one session, never two). The global store
//! is looked for beside the home folder that holds `.cursor/` (Cursor's default user-data
//! folders on Linux, macOS and Windows), opened read-only; without one the transcript stands
//! alone, titled by its first prompt.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use serde_json::Value;
use trail_model::{
    truncate_chars, Message, MessageKind, ParentLink, Role, Session, SessionMeta, SourceKind,
};

use crate::json_fields::{jstr, value_text};
use crate::linear::{finish_linear_session, push_message, PendingFile};
use crate::{discover, FileParse, SourceError};

const TITLE_CHARS: usize = 200;

/// Whether `path` is an agent transcript: a `.txt` or `.jsonl` file under an
/// `agent-transcripts` folder (directly, or in the per-composer folder of the JSONL layout).
pub(crate) fn is_agent_transcript(path: &Path) -> bool {
    let ext_ok = discover::has_extension(path, "txt") || discover::has_extension(path, "jsonl");
    let in_dir = |d: Option<&Path>| {
        d.and_then(Path::file_name)
            .is_some_and(|n| n == "agent-transcripts")
    };
    let parent = path.parent();
    ext_ok && (in_dir(parent) || in_dir(parent.and_then(Path::parent)))
}

/// Lists the agent transcripts under a root holding `projects/` (`~/.cursor`) or under
/// `projects/` itself.
pub(crate) fn discover_transcripts(root: &Path) -> Vec<PathBuf> {
    let projects = if root.join("projects").is_dir() {
        root.join("projects")
    } else if root.file_name().is_some_and(|n| n == "projects") {
        root.to_path_buf()
    } else {
        return Vec::new();
    };
    discover::walk_files(&projects, 4, is_agent_transcript)
}

/// One turn's worth of transcript, before it becomes messages.
enum Piece {
    Prompt(String),
    Text(String),
    Thinking(String),
    Call {
        name: String,
        id: Option<String>,
        input: Option<String>,
    },
    Result {
        name: Option<String>,
        id: Option<String>,
        output: String,
        error: bool,
    },
}

/// Parses one transcript file into its session (or nothing, see the module docs).
pub(crate) fn parse(path: &Path) -> Result<FileParse, SourceError> {
    let bytes = std::fs::read(path).map_err(|e| SourceError::io(path, e))?;
    let body = crate::whole::strip_bom(&bytes);
    let bom = (bytes.len() - body.len()) as u64;
    let text = String::from_utf8_lossy(body);
    let mut out = FileParse {
        bytes_parsed: bytes.len() as u64,
        bytes_read: bytes.len() as u64,
        lines: text.lines().count() as u64,
        ..FileParse::default()
    };
    let pieces = if discover::has_extension(path, "jsonl") {
        jsonl_pieces(path, &text, bom, &mut out)
    } else {
        text_pieces(&text)
    };
    let composer = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if composer.is_empty() || pieces.is_empty() {
        return Ok(out);
    }
    let store =
        global_store_for(path).and_then(|db| composer_facts(&db, &composer).map(|f| (db, f)));
    if let Some((_, facts)) = &store {
        if facts.has_messages {
            out.notes
                .push("the composer's messages are in state.vscdb: read there".into());
            return Ok(out);
        }
    }
    let mut meta = SessionMeta::new(
        crate::ids::session_id(SourceKind::Cursor, &composer),
        SourceKind::Cursor,
        &composer,
    );
    if let Some((db, facts)) = &store {
        meta.title = facts.name.clone();
        meta.branch = facts.branch.clone();
        meta.cwd = cached_folders(db).get(&composer).cloned();
        for ts in [&facts.created, &facts.updated].into_iter().flatten() {
            meta.observe_timestamp(ts);
        }
        meta.parent = facts.parent.as_ref().map(|p| ParentLink {
            session_id: crate::ids::session_id(SourceKind::Cursor, p),
            tool_call_id: None,
            agent_ref: Some(composer.clone()),
        });
    }
    let model = store.as_ref().and_then(|(_, f)| f.model.clone());
    let mut session = Session::new(meta);
    if let Some(m) = &model {
        session.observe_model(m);
    }
    let mut files = Vec::new();
    let mut first_prompt = None;
    let mut call_names: HashMap<String, String> = HashMap::new();
    let mut last_call: Option<(String, Option<String>)> = None;
    for piece in pieces {
        let m = match piece {
            Piece::Prompt(t) => {
                if first_prompt.is_none() {
                    let one_line = t.split_whitespace().collect::<Vec<_>>().join(" ");
                    first_prompt = Some(truncate_chars(&one_line, TITLE_CHARS).to_string());
                }
                Message::new(Role::User, MessageKind::Prompt, t)
            }
            Piece::Text(t) => {
                Message::new(Role::Assistant, MessageKind::Text, t).with_model(model.clone())
            }
            Piece::Thinking(t) => Message::new(Role::Assistant, MessageKind::Thinking, t),
            Piece::Call { name, id, input } => {
                if let Some(id) = &id {
                    call_names.insert(id.clone(), name.clone());
                }
                if let Some(path) = input.as_deref().and_then(file_of) {
                    files.push(PendingFile {
                        seq: Some(session.messages.len() as u32),
                        path,
                        tool_name: Some(name.clone()),
                        timestamp: None,
                    });
                }
                last_call = Some((name.clone(), id.clone()));
                Message::new(Role::Assistant, MessageKind::ToolCall, String::new())
                    .with_tool_name(name)
                    .with_call_id(id)
                    .with_input(input)
                    .with_model(model.clone())
            }
            Piece::Result {
                name,
                id,
                output,
                error,
            } => {
                // A result names its call by id (JSONL) or follows it (text).
                let (name, id) = match (name, id) {
                    (n, Some(id)) => (n.or_else(|| call_names.get(&id).cloned()), Some(id)),
                    (n, None) => match last_call.take() {
                        Some((call_name, call_id)) => (n.or(Some(call_name)), call_id),
                        None => (n, None),
                    },
                };
                Message::new(Role::Tool, MessageKind::ToolResult, String::new())
                    .with_tool_name(name)
                    .with_call_id(id)
                    .with_output(output)
                    .with_error(error)
            }
        };
        push_message(&mut session, m);
    }
    if session.meta.title.is_none() {
        session.meta.title = first_prompt;
    }
    finish_linear_session(&mut session, files, &["run_terminal_cmd", "Shell", "shell"]);
    out.sessions.push(session);
    Ok(out)
}

/// The file a tool's input names, if any.
fn file_of(input: &str) -> Option<String> {
    let v: Value = serde_json::from_str(input).ok()?;
    ["target_file", "targetFile", "file_path", "filePath", "path"]
        .iter()
        .find_map(|k| jstr(&v, k))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
}

/// Removes a `<user_query>` wrapper, keeping what it wraps.
fn strip_user_query(text: &str) -> String {
    let t = text.trim();
    match (t.find("<user_query>"), t.rfind("</user_query>")) {
        (Some(a), Some(b)) if b > a => t[a + "<user_query>".len()..b].trim().to_string(),
        _ => t.to_string(),
    }
}

/// The plain-text layout (see the module docs).
fn text_pieces(text: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut role: Option<&str> = None;
    let mut buf: Vec<&str> = Vec::new();
    let flush = |role: Option<&str>, buf: &mut Vec<&str>, pieces: &mut Vec<Piece>| {
        let body = buf.join("\n");
        buf.clear();
        match role {
            Some("user") => {
                // The prompt is the `<user_query>`; an answer may follow in the same block.
                let (q, rest) = match body.find("</user_query>") {
                    Some(end) => (
                        &body[..end + "</user_query>".len()],
                        &body[end + "</user_query>".len()..],
                    ),
                    None => (body.as_str(), ""),
                };
                let prompt = strip_user_query(q);
                if !prompt.is_empty() {
                    pieces.push(Piece::Prompt(prompt));
                }
                assistant_pieces(rest, pieces);
            }
            Some(_) => assistant_pieces(&body, pieces),
            None => {}
        }
    };
    for line in text.lines() {
        match line.trim_end() {
            "user:" => {
                flush(role, &mut buf, &mut pieces);
                role = Some("user");
            }
            "A:" | "assistant:" => {
                flush(role, &mut buf, &mut pieces);
                role = Some("assistant");
            }
            _ => buf.push(line),
        }
    }
    flush(role, &mut buf, &mut pieces);
    pieces
}

/// An answer's text, with `[Thinking]`, `[Tool call] name` and `[Tool result] name` lines.
fn assistant_pieces(body: &str, pieces: &mut Vec<Piece>) {
    let mut text: Vec<&str> = Vec::new();
    let mut pending: Option<Piece> = None;
    let mut detail: Vec<&str> = Vec::new();
    let close = |pending: &mut Option<Piece>, detail: &mut Vec<&str>, pieces: &mut Vec<Piece>| {
        if let Some(p) = pending.take() {
            let body = detail.join("\n").trim().to_string();
            pieces.push(match p {
                Piece::Call { name, id, .. } => Piece::Call {
                    name,
                    id,
                    input: (!body.is_empty()).then(|| arguments_json(&body)),
                },
                Piece::Result {
                    name, id, error, ..
                } => Piece::Result {
                    name,
                    id,
                    output: body,
                    error,
                },
                Piece::Thinking(_) => Piece::Thinking(body),
                other => other,
            });
        }
        detail.clear();
    };
    let push_text = |text: &mut Vec<&str>, pieces: &mut Vec<Piece>| {
        let t = text.join("\n").trim().to_string();
        text.clear();
        if !t.is_empty() {
            pieces.push(Piece::Text(t));
        }
    };
    for line in body.lines() {
        let marker = line.trim_start();
        let next = if let Some(name) = marker.strip_prefix("[Tool call]") {
            Some(Piece::Call {
                name: name.trim().to_string(),
                id: None,
                input: None,
            })
        } else if let Some(name) = marker.strip_prefix("[Tool result]") {
            let name = name.trim();
            Some(Piece::Result {
                name: (!name.is_empty()).then(|| name.to_string()),
                id: None,
                output: String::new(),
                error: false,
            })
        } else if let Some(rest) = marker.strip_prefix("[Thinking]") {
            detail.push(rest);
            Some(Piece::Thinking(String::new()))
        } else {
            None
        };
        match next {
            Some(p) => {
                let first_detail = if matches!(p, Piece::Thinking(_)) {
                    detail.pop()
                } else {
                    None
                };
                close(&mut pending, &mut detail, pieces);
                push_text(&mut text, pieces);
                if let Some(d) = first_detail {
                    detail.push(d);
                }
                pending = Some(p);
            }
            None if pending.is_some() => {
                if line.trim().is_empty() {
                    close(&mut pending, &mut detail, pieces);
                } else {
                    detail.push(line);
                }
            }
            None => text.push(line),
        }
    }
    close(&mut pending, &mut detail, pieces);
    push_text(&mut text, pieces);
}

/// A text transcript's call arguments (`key: value` lines) as a JSON object; other text is
/// kept as a JSON string.
fn arguments_json(body: &str) -> String {
    let mut args = serde_json::Map::new();
    for line in body.lines().filter(|l| !l.trim().is_empty()) {
        match line.trim().split_once(": ") {
            Some((k, v)) if !k.is_empty() && !k.contains(' ') => {
                args.insert(k.to_string(), Value::String(v.trim().to_string()));
            }
            _ => return Value::String(body.to_string()).to_string(),
        }
    }
    Value::Object(args).to_string()
}

/// The JSONL layout (see the module docs). A line that is not JSON is a parse issue.
/// Reads the JSONL transcript `text`, which starts at byte `offset` of the file.
fn jsonl_pieces(path: &Path, text: &str, mut offset: u64, out: &mut FileParse) -> Vec<Piece> {
    let mut pieces = Vec::new();
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len() as u64;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                out.issues.push(trail_model::ParseIssue {
                    path: path.display().to_string(),
                    line: Some(n as u64 + 1),
                    byte_offset: Some(start),
                    excerpt: Some(truncate_chars(line, crate::jsonl::EXCERPT_CHARS).to_string()),
                    reason: format!("invalid JSON: {e}"),
                });
                continue;
            }
        };
        let role = jstr(&v, "role").unwrap_or_default();
        let content = v.pointer("/message/content").or_else(|| v.get("content"));
        let blocks: Vec<Value> = match content {
            Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
            Some(Value::Array(a)) => a.clone(),
            _ => continue,
        };
        for b in &blocks {
            match (role, jstr(b, "type")) {
                ("user", Some("text")) => {
                    let t = strip_user_query(jstr(b, "text").unwrap_or_default());
                    if !t.is_empty() {
                        pieces.push(Piece::Prompt(t));
                    }
                }
                (_, Some("text")) => {
                    let t = jstr(b, "text").unwrap_or_default().trim().to_string();
                    if !t.is_empty() {
                        pieces.push(Piece::Text(t));
                    }
                }
                (_, Some("thinking")) => {
                    let t = jstr(b, "thinking")
                        .or_else(|| jstr(b, "text"))
                        .unwrap_or_default();
                    pieces.push(Piece::Thinking(t.to_string()));
                }
                (_, Some("tool_use")) => pieces.push(Piece::Call {
                    name: jstr(b, "name").unwrap_or("unknown").to_string(),
                    id: jstr(b, "id").map(str::to_string),
                    input: b.get("input").map(Value::to_string),
                }),
                (_, Some("tool_result")) => pieces.push(Piece::Result {
                    name: None,
                    id: jstr(b, "tool_use_id").map(str::to_string),
                    output: b.get("content").map(value_text).unwrap_or_default(),
                    error: b.get("is_error").and_then(Value::as_bool) == Some(true),
                }),
                _ => {}
            }
        }
    }
    pieces
}

/// The global `state.vscdb` of the home folder holding this transcript's `.cursor/`.
fn global_store_for(transcript: &Path) -> Option<PathBuf> {
    let home = transcript
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == ".cursor"))?
        .parent()?;
    [
        ".config/Cursor",
        "Library/Application Support/Cursor",
        "AppData/Roaming/Cursor",
    ]
    .iter()
    .map(|d| home.join(d).join("User/globalStorage/state.vscdb"))
    .find(|p| p.is_file())
}

/// What `state.vscdb` says of one composer.
struct ComposerFacts {
    name: Option<String>,
    created: Option<String>,
    updated: Option<String>,
    branch: Option<String>,
    model: Option<String>,
    parent: Option<String>,
    /// The store still holds the composer's messages.
    has_messages: bool,
}

fn composer_facts(db: &Path, composer: &str) -> Option<ComposerFacts> {
    let conn = crate::sqlite_readonly::open_direct(db).ok()?;
    let raw: Option<String> = conn
        .query_row(
            "SELECT CAST(value AS TEXT) FROM cursorDiskKV WHERE key = ?1",
            [format!("composerData:{composer}")],
            |r| r.get(0),
        )
        .ok()?;
    let data: Value = serde_json::from_str(&raw?).ok()?;
    let prefix = format!("bubbleId:{composer}:");
    let upper = format!("bubbleId:{composer};");
    let bubbles: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM cursorDiskKV WHERE key >= ?1 AND key < ?2)",
            [&prefix, &upper],
            |r| r.get(0),
        )
        .unwrap_or(false);
    let inline = ["conversation", "conversationMap"]
        .iter()
        .any(|k| match data.get(*k) {
            Some(Value::Array(a)) => !a.is_empty(),
            Some(Value::Object(o)) => !o.is_empty(),
            _ => false,
        });
    let text = |k: &str| {
        jstr(&data, k)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Some(ComposerFacts {
        name: text("name").map(|t| truncate_chars(&t, TITLE_CHARS).to_string()),
        created: data.get("createdAt").and_then(trail_model::time::from_json),
        updated: data
            .get("lastUpdatedAt")
            .and_then(trail_model::time::from_json),
        branch: text("createdOnBranch"),
        model: data
            .pointer("/modelConfig/modelName")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty() && *m != "default")
            .map(str::to_string),
        parent: data
            .pointer("/subagentInfo/parentComposerId")
            .or_else(|| data.get("parentComposerId"))
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty() && *p != composer)
            .map(str::to_string),
        has_messages: bubbles || inline,
    })
}

/// Composer folders of a global store (read from every workspace database once per process
/// and per version of the store, as many transcripts ask).
fn cached_folders(db: &Path) -> HashMap<String, String> {
    type Cache = HashMap<PathBuf, (u64, Option<SystemTime>, HashMap<String, String>)>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let stamp = std::fs::metadata(db)
        .map(|m| (m.len(), m.modified().ok()))
        .unwrap_or((0, None));
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Ok(map) = cache.lock() {
        if let Some((len, mtime, folders)) = map.get(db) {
            if (*len, *mtime) == stamp {
                return folders.clone();
            }
        }
    }
    let (folders, _) = crate::cursor::workspace::workspace_folders(db);
    if let Ok(mut map) = cache.lock() {
        map.insert(db.to_path_buf(), (stamp.0, stamp.1, folders.clone()));
    }
    folders
}
