//! Copilot Chat sessions that older VS Code kept in the workspace's state database, part of
//! the [`crate::copilot_vscode::CopilotVscode`] source. See `docs/formats/copilot-vscode-legacy.md`.
//!
//! Before chat sessions moved to `chatSessions/` files (2025), VS Code's chat service stored
//! them with the storage service: key `interactive.sessions`, workspace scope, so in
//! `User/workspaceStorage/<hash>/state.vscdb` (table `ItemTable(key, value)`), as a JSON array
//! of the same `ISerializableChatData` objects a `.json` session file holds (`sessionId`,
//! `creationDate`, `requests` with `message` and `response`...). When VS Code moved to files it
//! copied them into `chatSessions/` and left the key in place.
//!
//! The database is opened read-only (`mode=ro`; a private copy when VS Code holds it), the
//! sessions go through the request parser stored sessions use, and a session whose file
//! `chatSessions/<sessionId>.json[l]` exists beside the database is left to that file.

use std::path::{Path, PathBuf};

use rusqlite::OptionalExtension;
use serde_json::{json, Value};
use trail_model::{SessionId, SessionMeta, SourceKind};

use super::copilot_vscode_requests::build_session;
use crate::sqlite_readonly::{db_error, open_direct, read_database, record_issue, table_names};
use crate::uri::uri_to_path;
use crate::{discover, FileParse, SourceError};

/// The storage key older VS Code kept chat sessions under.
pub const LEGACY_KEY: &str = "interactive.sessions";
/// The workspace state database's name.
pub const STATE_DB: &str = "state.vscdb";

/// Whether `path` is a workspace's `state.vscdb` (`workspaceStorage/<hash>/state.vscdb`).
pub(crate) fn is_workspace_db(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == STATE_DB)
        && path
            .parent()
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_some_and(|n| n == "workspaceStorage")
}

/// Lists the workspace databases under `workspace_storage` that hold legacy sessions. Each is
/// opened read-only to look for the key, so the many workspaces without one are not indexed.
pub(crate) fn discover_legacy(workspace_storage: &Path) -> Vec<PathBuf> {
    discover::walk_files(workspace_storage, 2, is_workspace_db)
        .into_iter()
        .filter(|db| holds_legacy_sessions(db))
        .collect()
}

/// Whether a state database holds a non-empty `interactive.sessions` value.
pub(crate) fn holds_legacy_sessions(db: &Path) -> bool {
    let Ok(conn) = open_direct(db) else {
        return false;
    };
    conn.query_row(
        "SELECT length(value) > 2 FROM ItemTable WHERE key = ?1",
        [LEGACY_KEY],
        |r| r.get::<_, bool>(0),
    )
    .optional()
    .ok()
    .flatten()
    .unwrap_or(false)
}

/// Parses the legacy sessions of one workspace database.
pub(crate) fn parse_legacy(path: &Path) -> Result<FileParse, SourceError> {
    read_database(path, |conn| {
        let tables = table_names(conn).map_err(|e| db_error(path, &e))?;
        if !tables.contains("ItemTable") {
            return Err(SourceError::format(
                path,
                "not a VS Code state database: no ItemTable",
            ));
        }
        let raw: Option<Vec<u8>> = conn
            .query_row(
                "SELECT CAST(value AS BLOB) FROM ItemTable WHERE key = ?1",
                [LEGACY_KEY],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| db_error(path, &e))?;
        let mut out = FileParse::default();
        let Some(raw) = raw else {
            return Ok(out);
        };
        let display = path.display().to_string();
        let value: Value = match serde_json::from_slice(&raw) {
            Ok(v) => v,
            Err(e) => {
                out.issues.push(record_issue(
                    path,
                    LEGACY_KEY,
                    &String::from_utf8_lossy(&raw),
                    &format!("invalid JSON: {e}"),
                ));
                return Ok(out);
            }
        };
        // An array of sessions; some builds kept an object keyed by session id.
        let sessions: Vec<&Value> = match &value {
            Value::Array(a) => a.iter().collect(),
            Value::Object(o) => o.values().collect(),
            _ => {
                out.issues.push(record_issue(
                    path,
                    LEGACY_KEY,
                    &value.to_string(),
                    "neither an array nor an object of sessions",
                ));
                return Ok(out);
            }
        };
        let folder = path.parent().unwrap_or(Path::new(""));
        let cwd = workspace_folder(folder);
        let mut named: Vec<(String, &Value)> = Vec::new();
        for (i, s) in sessions.into_iter().enumerate() {
            let Some(obj) = s.as_object() else {
                out.issues.push(record_issue(
                    path,
                    &format!("{LEGACY_KEY}[{i}]"),
                    &s.to_string(),
                    "not a session object",
                ));
                continue;
            };
            let native = obj
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("{}-{i}", folder_name(folder)));
            // VS Code keyed the sessions by id on load: a later copy replaces an earlier one.
            named.retain(|(n, _)| *n != native);
            named.push((native, s));
        }
        for (native, s) in named {
            if has_session_file(folder, &native) {
                continue;
            }
            // The id a `chatSessions` file of this session gets (`stored_session`).
            let id = if crate::ids::is_uuid(&native) {
                native.clone()
            } else {
                format!("{}:{native}", SourceKind::CopilotVscode.as_str())
            };
            let mut meta = SessionMeta::new(SessionId::new(id), SourceKind::CopilotVscode, native);
            meta.cwd = cwd.clone();
            meta.metadata = Some(json!({ "storage": format!("{STATE_DB} {LEGACY_KEY}") }));
            let (session, notes) = build_session(meta, s, &display, &[], &mut out);
            out.notes.extend(notes);
            if !session.messages.is_empty() {
                out.sessions.push(session);
            }
        }
        Ok(out)
    })
}

/// `chatSessions/<id>.json` or `.jsonl` beside the database: VS Code copied the session there.
fn has_session_file(folder: &Path, id: &str) -> bool {
    let dir = folder.join("chatSessions");
    ["json", "jsonl"]
        .iter()
        .any(|ext| dir.join(format!("{id}.{ext}")).is_file())
}

fn folder_name(folder: &Path) -> String {
    folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The workspace's folder from `workspace.json` beside the database.
fn workspace_folder(folder: &Path) -> Option<String> {
    let v = crate::whole::read_json_lenient(&folder.join("workspace.json"))?;
    v.get("folder")
        .or_else(|| v.get("workspace"))
        .and_then(uri_to_path)
}
