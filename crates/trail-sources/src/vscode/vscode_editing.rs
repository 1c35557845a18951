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
//! Newer builds (still storage version 2) write a `timeline` instead of `linearHistory`:
//! `{checkpoints, fileBaselines: [[key, {uri, requestId, content, epoch, telemetryInfo}]],
//! operations: [{type: create | delete | rename | textEdit | notebookEdit, uri, requestId,
//! epoch, ...}], currentEpoch, epochCounter}`. A baseline is a file's text when a request first
//! edited it; operations from `currentEpoch` on were undone. [`snapshots_from_timeline`]
//! replays the operations from the baselines into the same snapshots.
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

/// A file's text at a point of the session (`None`: the file did not exist), with the turn
/// it was taken at (`None`: the session's end).
type TextAt = (Option<u32>, Option<String>);

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
/// `edits` are the chat's `textEditGroup` parts (see [`TextEditGroup`]).
pub fn read_snapshots(
    folder: &Path,
    turn_of: &dyn Fn(&str) -> Option<u32>,
    edits: &[TextEditGroup],
) -> Result<Vec<FileSnapshot>, String> {
    let bytes = std::fs::read(folder.join("state.json")).map_err(|e| e.to_string())?;
    let state = crate::whole::parse_json(&folder.join("state.json"), &bytes)
        .map_err(|e| format!("state.json is not JSON: {e}"))?
        .value;
    Ok(snapshots_from_state_and_edits(
        &state,
        &|hash| read_content(&folder.join("contents"), hash),
        turn_of,
        edits,
    ))
}

/// The `textEditGroup` parts of a chat object's requests, each with its request's turn.
pub fn text_edit_groups(root: &Value, turn_of: &dyn Fn(&str) -> Option<u32>) -> Vec<TextEditGroup> {
    let mut out = Vec::new();
    for req in root
        .get("requests")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(turn) = req
            .get("requestId")
            .and_then(Value::as_str)
            .and_then(turn_of)
        else {
            continue;
        };
        for part in req
            .get("response")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if part.get("kind").and_then(Value::as_str) != Some("textEditGroup") {
                continue;
            }
            let Some(path) = part.get("uri").and_then(crate::uri::uri_to_path) else {
                continue;
            };
            let batches = part
                .get("edits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|b| b.as_array().cloned())
                .collect();
            out.push(TextEditGroup {
                path,
                turn,
                batches,
            });
        }
    }
    out
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
    snapshots_from_state_and_edits(state, content, turn_of, &[])
}

/// [`snapshots_from_state`], with the chat's `textEditGroup` edits extending a file past the
/// last point the editing session recorded (see [`TextEditGroup`]).
pub fn snapshots_from_state_and_edits(
    state: &Value,
    content: &dyn Fn(&str) -> Option<String>,
    turn_of: &dyn Fn(&str) -> Option<u32>,
    edits: &[TextEditGroup],
) -> Vec<FileSnapshot> {
    if let Some(timeline) = state
        .get("timeline")
        .filter(|t| t.get("operations").is_some_and(Value::is_array))
    {
        return timeline_snapshots(timeline, turn_of, edits);
    }
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
        let Some(path) = e.get("resource").and_then(crate::uri::uri_to_path) else {
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
    let mut files = Vec::new();
    for path in order {
        let pts = &by_path[&path];
        // (turn, content): the file before the request that first edited it, then each point.
        let mut seq: Vec<TextAt> = Vec::new();
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
                if seq.last().is_some_and(|(_, last)| *last == c) {
                    continue;
                }
            }
            seq.push((p.turn, c));
        }
        files.push((path, seq));
    }
    finish(files, edits)
}

/// What the replay knows of a file.
#[derive(Clone, PartialEq)]
enum Content {
    /// Not known (a notebook edit, an edit that does not apply).
    Unknown,
    /// The file does not exist.
    Absent,
    Text(String),
}

impl Content {
    fn snapshot(&self) -> Option<Option<String>> {
        match self {
            Content::Unknown => None,
            Content::Absent => Some(None),
            Content::Text(t) => Some(Some(t.clone())),
        }
    }
}

/// One operation of a timeline, as read.
struct Operation<'v> {
    epoch: f64,
    request_id: Option<&'v str>,
    path: String,
    op: &'v Value,
}

/// Builds snapshots from a `timeline` (newer VS Code builds): for each file, its text at the
/// start of every request that edited it (the request's baseline when VS Code recorded one,
/// else the replayed text) and its text after the last operation not undone.
pub fn snapshots_from_timeline(
    timeline: &Value,
    turn_of: &dyn Fn(&str) -> Option<u32>,
) -> Vec<FileSnapshot> {
    timeline_snapshots(timeline, turn_of, &[])
}

fn timeline_snapshots(
    timeline: &Value,
    turn_of: &dyn Fn(&str) -> Option<u32>,
    edits: &[TextEditGroup],
) -> Vec<FileSnapshot> {
    let current_epoch = timeline
        .get("currentEpoch")
        .and_then(Value::as_f64)
        .unwrap_or(f64::INFINITY);
    let path_of = |v: Option<&Value>| v.and_then(crate::uri::uri_to_path);
    // (path, request id) -> the file's text when that request first edited it.
    let mut baselines: HashMap<(String, String), String> = HashMap::new();
    for pair in timeline
        .get("fileBaselines")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(b) = pair.get(1) else { continue };
        let (Some(path), Some(req), Some(content)) = (
            path_of(b.get("uri")),
            b.get("requestId").and_then(Value::as_str),
            b.get("content").and_then(Value::as_str),
        ) else {
            continue;
        };
        baselines.insert((path, req.to_string()), content.to_string());
    }
    let mut ops: Vec<Operation> = timeline
        .get("operations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|op| {
            let epoch = op.get("epoch").and_then(Value::as_f64)?;
            // From `currentEpoch` on, operations were undone.
            if epoch >= current_epoch {
                return None;
            }
            let path = match op.get("type").and_then(Value::as_str) {
                Some("rename") => path_of(op.get("oldUri")).or_else(|| path_of(op.get("uri"))),
                _ => path_of(op.get("uri")),
            }?;
            Some(Operation {
                epoch,
                request_id: op.get("requestId").and_then(Value::as_str),
                path,
                op,
            })
        })
        .collect();
    ops.sort_by(|a, b| a.epoch.total_cmp(&b.epoch));

    let mut order: Vec<String> = Vec::new();
    let mut state: HashMap<String, Content> = HashMap::new();
    let mut last_request: HashMap<String, Option<String>> = HashMap::new();
    // Per file: (turn, text) points, in order.
    let mut seqs: HashMap<String, Vec<TextAt>> = HashMap::new();
    for o in &ops {
        let path = o.path.clone();
        let kind = o.op.get("type").and_then(Value::as_str).unwrap_or_default();
        let req = o.request_id.map(str::to_string);
        if !seqs.contains_key(&path) {
            order.push(path.clone());
            seqs.insert(path.clone(), Vec::new());
        }
        // A request's first operation on this file: the file as that request found it.
        if last_request.get(&path) != Some(&req) {
            last_request.insert(path.clone(), req.clone());
            let baseline = req
                .as_ref()
                .and_then(|r| baselines.get(&(path.clone(), r.clone())));
            let before = match baseline {
                Some(text) => Content::Text(text.clone()),
                None if kind == "create" && !state.contains_key(&path) => Content::Absent,
                None => state.get(&path).cloned().unwrap_or(Content::Unknown),
            };
            state.insert(path.clone(), before.clone());
            if let (Some(turn), Some(c)) = (req.as_deref().and_then(turn_of), before.snapshot()) {
                if let Some(s) = seqs.get_mut(&path) {
                    s.push((Some(turn), c));
                }
            }
        }
        let now = state.get(&path).cloned().unwrap_or(Content::Unknown);
        let next = match kind {
            "create" => match o.op.get("initialContent").and_then(Value::as_str) {
                Some(t) => Content::Text(t.to_string()),
                None => Content::Unknown,
            },
            "delete" => Content::Absent,
            "textEdit" => match (&now, o.op.get("edits").and_then(Value::as_array)) {
                (Content::Text(t), Some(edits)) => match apply_text_edits(t, edits) {
                    Some(after) => Content::Text(after),
                    None => Content::Unknown,
                },
                _ => Content::Unknown,
            },
            "rename" => {
                if let Some(to) = path_of(o.op.get("newUri")) {
                    if !seqs.contains_key(&to) {
                        order.push(to.clone());
                        seqs.insert(to.clone(), vec![]);
                    }
                    if let (Some(turn), Some(c)) = (
                        o.request_id.and_then(turn_of),
                        state
                            .get(&to)
                            .cloned()
                            .unwrap_or(Content::Absent)
                            .snapshot(),
                    ) {
                        if let Some(s) = seqs.get_mut(&to) {
                            s.push((Some(turn), c));
                        }
                    }
                    last_request.insert(to.clone(), req.clone());
                    state.insert(to, now.clone());
                }
                Content::Absent
            }
            // Notebook cell edits are not replayed.
            _ => Content::Unknown,
        };
        state.insert(path, next);
    }
    let mut files = Vec::new();
    for path in order {
        let mut seq = seqs.remove(&path).unwrap_or_default();
        if let Some(end) = state.get(&path).and_then(Content::snapshot) {
            seq.push((None, end));
        }
        // Equal neighbours collapse; two points at one turn keep the later.
        let mut kept: Vec<TextAt> = Vec::new();
        for (turn, content) in seq {
            if kept.last().is_some_and(|(_, c)| *c == content) {
                continue;
            }
            if kept.len() > 1 && kept.last().is_some_and(|(t, _)| *t == turn) {
                kept.pop();
                if kept.last().is_some_and(|(_, c)| *c == content) {
                    continue;
                }
            }
            kept.push((turn, content));
        }
        files.push((path, kept));
    }
    finish(files, edits)
}

/// A `textEditGroup` response part: the edits Copilot Chat streamed into one file in one
/// request, batch by batch (each batch's ranges refer to the text the earlier ones left).
#[derive(Debug, Clone)]
pub struct TextEditGroup {
    pub path: String,
    pub turn: u32,
    pub batches: Vec<Vec<Value>>,
}

/// Turns each file's points into snapshots. A file whose last point is the start of a request
/// (nothing recorded after it) and that request's `textEditGroup` edits apply to that text
/// gets one more point, the text they leave: the edits alone never say what they replaced,
/// so they are used only on a known text. Files with fewer than two points have no change.
fn finish(files: Vec<(String, Vec<TextAt>)>, edits: &[TextEditGroup]) -> Vec<FileSnapshot> {
    let mut out = Vec::new();
    for (path, mut seq) in files {
        if let Some((Some(turn), Some(start))) = seq.last().cloned() {
            let mut text = Some(start.clone());
            let mut any = false;
            for g in edits.iter().filter(|g| g.turn == turn && g.path == path) {
                for batch in &g.batches {
                    any = true;
                    text = text.and_then(|t| apply_text_edits(&t, batch));
                }
            }
            if let Some(after) = text.filter(|t| any && *t != start) {
                seq.push((None, Some(after)));
            }
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

/// A position in a text: 1-based line and UTF-16 column, as VS Code's ranges count them.
fn offset_of(text: &str, line_starts: &[usize], line: i64, column: i64) -> usize {
    if line < 1 {
        return 0;
    }
    let Some(&start) = line_starts.get(line as usize - 1) else {
        return text.len();
    };
    let end = line_starts
        .get(line as usize)
        .map(|&next| next - 1)
        .unwrap_or(text.len());
    // The line without its end of line.
    let body = text[start..end]
        .strip_suffix('\r')
        .unwrap_or(&text[start..end]);
    let mut units = 0i64;
    for (i, ch) in body.char_indices() {
        if units >= column - 1 {
            return start + i;
        }
        units += ch.len_utf16() as i64;
    }
    start + body.len()
}

/// Applies VS Code `TextEdit`s (`{range: {startLineNumber, startColumn, endLineNumber,
/// endColumn}, text}`, all relative to `text`, as a model applies one batch) to `text`. `None`
/// when an edit is malformed or two overlap: the result would be a guess.
pub fn apply_text_edits(text: &str, edits: &[Value]) -> Option<String> {
    let mut line_starts = vec![0];
    line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    let crlf = text.matches("\r\n").count();
    let use_crlf = crlf > 0 && crlf * 2 >= text.matches('\n').count();
    let mut spans: Vec<(usize, usize, String)> = Vec::with_capacity(edits.len());
    for e in edits {
        let r = e.get("range")?;
        let n = |k: &str| r.get(k).and_then(Value::as_i64);
        let start = offset_of(text, &line_starts, n("startLineNumber")?, n("startColumn")?);
        let end = offset_of(text, &line_starts, n("endLineNumber")?, n("endColumn")?);
        let (start, end) = (start.min(end), start.max(end));
        let mut insert = e
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if use_crlf {
            // The model keeps its end of line: inserted lines take it.
            insert = insert.replace("\r\n", "\n").replace('\n', "\r\n");
        }
        spans.push((start, end, insert));
    }
    spans.sort_by_key(|(s, e, _)| (*s, *e));
    if spans.windows(2).any(|w| w[1].0 < w[0].1) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, insert) in &spans {
        out.push_str(&text[at..*start]);
        out.push_str(insert);
        at = *end;
    }
    out.push_str(&text[at..]);
    Some(out)
}
