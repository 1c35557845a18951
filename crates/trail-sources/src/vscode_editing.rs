//! VS Code's chat editing sessions: what a Copilot Chat session changed in the workspace.
//!
//! `User/workspaceStorage/<hash>/chatEditingSessions/<chat session id>/` holds `state.json` and
//! `contents/<hash>` files (each a file's full text, named by a short hash of it). `state.json`
//! (storage versions 1 and 2):
//! - `linearHistory`: one item per request, `{requestId, stops: [{stopId, entries}], postEdit}`
//!   (version 1: `{requestId, workingSet, entries}`); the first stop's entries are the files as
//!   they were when the request started;
//! - `recentSnapshot`: `{stopId, entries}`, the files as the session left them;
//! - an entry: `{resource (file URI), languageId, originalHash, currentHash, state,
//!   snapshotUri, telemetryInfo: {requestId, ...}, isDeleted?}`: `original` is the file before
//!   the session's pending edits, `current` the file at that point.
//!
//! Read with the chat file of the same id (see `copilot_vscode`): each file becomes
//! [`FileSnapshot`]s, the first its content before the request that first edited it, then one
//! per request start and the session's end, so `trail diff` shows each request's change.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::FileSnapshot;

/// `origin` of the snapshots read here.
pub const ORIGIN: &str = "vscode-chat-editing";

/// Largest content file read (bigger ones are left out of the diff).
const MAX_CONTENT_BYTES: u64 = 8 << 20;

/// The editing-session folder for the chat file `chat` (`<hash>/chatSessions/<id>.json[l]`), if
/// VS Code kept one.
pub fn folder_for_chat_file(chat: &Path) -> Option<PathBuf> {
    let dir = chat.parent()?;
    if dir.file_name()? != "chatSessions" {
        return None;
    }
    let folder = dir
        .parent()?
        .join("chatEditingSessions")
        .join(chat.file_stem()?);
    folder.join("state.json").is_file().then_some(folder)
}

/// One point of a file in the editing history.
struct Point {
    path: String,
    turn: Option<u32>,
    current: Option<String>,
    original: Option<String>,
    request_id: Option<String>,
    deleted: bool,
}

/// Reads an editing-session folder into snapshots. `turn_of` maps a request id to its turn.
pub fn read_snapshots(
    folder: &Path,
    turn_of: &dyn Fn(&str) -> Option<u32>,
) -> Result<Vec<FileSnapshot>, String> {
    let bytes = std::fs::read(folder.join("state.json")).map_err(|e| e.to_string())?;
    let state: Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("state.json is not JSON: {e}"))?;
    Ok(snapshots_from_state(
        &state,
        &|hash| read_content(&folder.join("contents"), hash),
        turn_of,
    ))
}

fn read_content(contents: &Path, hash: &str) -> Option<String> {
    // A hash names a file in `contents/`: never a path elsewhere.
    if hash.is_empty() || hash.contains(['/', '\\']) || hash.starts_with('.') {
        return None;
    }
    let p = contents.join(hash);
    if std::fs::metadata(&p).ok()?.len() > MAX_CONTENT_BYTES {
        return None;
    }
    std::fs::read(&p)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Builds snapshots from a parsed `state.json`; `content` reads a content hash.
pub fn snapshots_from_state(
    state: &Value,
    content: &dyn Fn(&str) -> Option<String>,
    turn_of: &dyn Fn(&str) -> Option<u32>,
) -> Vec<FileSnapshot> {
    let mut points: Vec<Point> = Vec::new();
    let entries_of = |item: &Value| -> Vec<Value> {
        let stop = item
            .get("stops")
            .and_then(Value::as_array)
            .and_then(|s| s.first())
            .unwrap_or(item);
        stop.get("entries")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut push = |e: &Value, turn: Option<u32>| {
        let Some(path) = e
            .get("resource")
            .and_then(crate::copilot_vscode::uri_to_path)
        else {
            return;
        };
        let h = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_string);
        points.push(Point {
            path,
            turn,
            current: h("currentHash"),
            original: h("originalHash"),
            request_id: e
                .get("telemetryInfo")
                .and_then(|t| t.get("requestId"))
                .and_then(Value::as_str)
                .map(str::to_string),
            deleted: e.get("isDeleted").and_then(Value::as_bool) == Some(true),
        });
    };
    if let Some(items) = state.get("linearHistory").and_then(Value::as_array) {
        for item in items {
            let turn = item
                .get("requestId")
                .and_then(Value::as_str)
                .and_then(turn_of);
            let Some(turn) = turn else { continue };
            for e in entries_of(item) {
                push(&e, Some(turn));
            }
        }
    }
    if let Some(recent) = state.get("recentSnapshot") {
        for e in entries_of(recent) {
            push(&e, None);
        }
    }
    // Files in order of first appearance.
    let mut order: Vec<String> = Vec::new();
    let mut by_path: HashMap<String, Vec<&Point>> = HashMap::new();
    for p in &points {
        if !by_path.contains_key(&p.path) {
            order.push(p.path.clone());
        }
        by_path.entry(p.path.clone()).or_default().push(p);
    }
    let mut cache: HashMap<String, Option<String>> = HashMap::new();
    let mut text = |hash: &Option<String>| -> Option<Option<String>> {
        let h = hash.as_ref()?;
        Some(cache.entry(h.clone()).or_insert_with(|| content(h)).clone()).filter(Option::is_some)
    };
    let mut out = Vec::new();
    for path in order {
        let pts = &by_path[&path];
        // (turn, content): the file before the request that first edited it, then each point.
        let mut seq: Vec<(Option<u32>, Option<String>)> = Vec::new();
        let first = pts[0];
        let base_turn = first
            .request_id
            .as_deref()
            .and_then(turn_of)
            .filter(|t| first.turn.is_none_or(|f| *t <= f))
            .or(first.turn);
        let mut baseline = 0;
        if let Some(Some(original)) = text(&first.original) {
            seq.push((base_turn, Some(original)));
            baseline = 1;
        }
        for p in pts {
            let c = if p.deleted {
                Some(None)
            } else {
                text(&p.current)
            };
            let Some(c) = c else { continue };
            if seq.last().is_some_and(|(_, last)| *last == c) {
                continue;
            }
            if seq.len() > baseline && seq.last().is_some_and(|(t, _)| *t == p.turn) {
                // Two points at one turn: keep the later content.
                seq.pop();
            }
            seq.push((p.turn, c));
        }
        if seq.len() < 2 {
            continue;
        }
        for (version, (turn, content)) in seq.into_iter().enumerate() {
            out.push(FileSnapshot {
                path: path.clone(),
                version: version as u32,
                turn_index: turn,
                content,
                taken_at: None,
                origin: ORIGIN.to_string(),
            });
        }
    }
    out
}
