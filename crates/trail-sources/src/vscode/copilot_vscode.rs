//! GitHub Copilot Chat in VS Code: the chat sessions VS Code stores per workspace.
//!
//! Layout (under a VS Code user-data folder such as `~/.config/Code`):
//! - `User/workspaceStorage/<hash>/chatSessions/<sessionId>.json` (flat snapshot, versions 1-3)
//!   or `<sessionId>.jsonl` (mutation log, VS Code 1.109 and later); `workspace.json` beside
//!   `chatSessions/` names the workspace folder, which becomes the session's cwd.
//! - `User/globalStorage/emptyWindowChatSessions/<sessionId>.json[l]` for windows without a
//!   folder, and the older `User/workspaceStorage/no-workspace/chatSessions/`.
//!
//! The mutation log holds one JSON entry per line: kind 0 (the whole object), 1 (set the value
//! at a key path), 2 (push to the array at a key path, first truncating it to `i` when given)
//! and 3 (delete the property at a key path). Replaying it yields the object a `.json`
//! snapshot would hold, which is then parsed by the same code.
//!
//! Duplicate rules applied by discovery:
//! - a `.json` and a `.jsonl` for the same session id in the same folder: only the `.jsonl`
//!   (the log is what current VS Code reads and writes);
//! - a session copied from an empty window into a workspace (VS Code copies, the original
//!   stays): when the same file stem (the session id) exists under a workspace's
//!   `chatSessions/`, the empty-window copies (`emptyWindowChatSessions/` and
//!   `workspaceStorage/no-workspace/`) are dropped, so the session is indexed once, with the
//!   workspace's cwd.
//!
//! Sessions older VS Code kept in the workspace's `state.vscdb` (key `interactive.sessions`)
//! are read by [`crate::copilot_vscode_legacy`], through the same request parser.
//!
//! Copilot Chat 0.51+ also writes `User/workspaceStorage/<hash>/GitHub.copilot-chat/
//! transcripts/<sessionId>.jsonl`: an event log in Copilot CLI's vocabulary (`session.start`,
//! `user.message`, `assistant.message` with `toolRequests` and `reasoningText`,
//! `tool.execution_start`/`tool.execution_complete`), read with the Copilot CLI parser. It
//! describes the same conversation as the `chatSessions` file of the same id, with the tool
//! arguments and results that file lacks, so the two make one session: the chat file's parse
//! reads the transcript beside it and takes its messages when it holds at least as many
//! prompts, keeping the chat file's title, folder, models and token counts; a transcript with
//! no chat file (deleted, or not yet written) is discovered and read alone.
//!
//! Models and tokens: a request's `modelId` (`copilot/auto`...) gives way to the model the
//! service resolved it to (`result.metadata.resolvedModel`); token counts written late, by
//! `kind: 1` sets on the request's `promptTokens`/`completionTokens` (or under `result`), are
//! read wherever they land.
//!
//! The request-to-messages code, shared with [`crate::vscode_export`] and the legacy storage,
//! is [`super::copilot_vscode_requests`].
//!
//! Subagents (`runSubagent`): the tools a subagent calls are written into the parent request's
//! `response` as `toolInvocationSerialized` parts carrying `subAgentInvocationId`, the id of
//! the `runSubagent` call that started it (VS Code's chat model and copilot-chat's subagent
//! tool set it to the stream's tool call id). They are not in the request's
//! `toolCallRounds`, which hold only the parent model's calls. Each subagent becomes its own
//! session `<parent id>:agent:<runSubagent call id>` linked to that call (as Claude Code's
//! Task subagents are), holding the `runSubagent` prompt as its one turn and its tool calls;
//! the `runSubagent` call carries the same id in `agent_ref`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{FileTouch, MessageKind, Session, SessionId, SessionMeta, SourceKind};

pub use super::copilot_vscode_requests::TRUNCATION_MARKER;
use super::copilot_vscode_requests::{build_session, file_issue};
use crate::uri::uri_to_path;
use crate::{discover, jsonl, FileParse, ParseRequest, Source, SourceError};

/// Longest key path accepted in a mutation-log entry (keeps replayed objects shallow).
const MAX_PATH_LEN: usize = 64;
/// Array holes a single entry may create (JavaScript fills them, JSON writes them as null).
const MAX_HOLES: usize = 4096;

/// The operating system whose default VS Code locations [`default_roots`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Linux,
    MacOs,
    Windows,
}

impl Platform {
    /// Returns the platform this binary was built for.
    pub fn current() -> Platform {
        if cfg!(target_os = "windows") {
            Platform::Windows
        } else if cfg!(target_os = "macos") {
            Platform::MacOs
        } else {
            Platform::Linux
        }
    }
}

/// VS Code builds whose user-data folders are searched by default.
pub const PRODUCT_FOLDERS: [&str; 4] = ["Code", "Code - Insiders", "VSCodium", "Code - OSS"];

/// Returns the default user-data folders of VS Code, VS Code Insiders, VSCodium and Code - OSS
/// for `platform`. `appdata` is `%APPDATA%` on Windows (the caller reads the environment);
/// without it `<home>/AppData/Roaming` is used. Folders that do not exist are listed too:
/// discovery skips them.
pub fn default_roots(home: &Path, platform: Platform, appdata: Option<&Path>) -> Vec<PathBuf> {
    let base = match platform {
        Platform::Linux => home.join(".config"),
        Platform::MacOs => home.join("Library").join("Application Support"),
        Platform::Windows => appdata
            .map(Path::to_path_buf)
            .unwrap_or_else(|| home.join("AppData").join("Roaming")),
    };
    PRODUCT_FOLDERS.iter().map(|p| base.join(p)).collect()
}

/// GitHub Copilot Chat sessions stored by VS Code.
pub struct CopilotVscode;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 2: the late-2026 format changes of issue 18.
/// 3: a `runSubagent` subagent's tools become its own linked session (issue 21).
/// 4: the chat editing session of the same id gives the files changed and their snapshots
///    (issue 16).
/// 5: newer editing sessions (`timeline`) are read too; `textEditGroup` edits extend a file's
///    snapshots past the editing session's last point.
/// 6: a leading BOM is skipped; bytes after a session document keep it, as a problem; token
///    counts are read field by field from every place a request records them (issue 40).
/// 7: the custom agent of a request or a subagent (`agent_description`, issue 45).
pub const PARSER_VERSION: u32 = 7;

impl Source for CopilotVscode {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::CopilotVscode
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        discover_sessions(roots)
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        detect_stored(path, head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        // Logs are compacted (rewritten as one Initial line) and snapshots are rewritten whole:
        // reparse the file when it changes.
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        let mut out = if is_transcript_file(path) {
            return parse_transcript_alone(path);
        } else if crate::copilot_vscode_legacy::is_workspace_db(path) {
            return crate::copilot_vscode_legacy::parse_legacy(path);
        } else if discover::has_extension(path, "jsonl") {
            parse_log_file(path)?
        } else {
            parse_snapshot_file(path)?
        };
        if let Some(t) = transcript_for_chat_file(path) {
            merge_transcript(&mut out, &t);
        }
        Ok(out)
    }
}

// ---------------------------------------------------------------------------------------------
// Discovery and detection

fn is_session_file(p: &Path) -> bool {
    discover::has_extension(p, "json") || discover::has_extension(p, "jsonl")
}

fn parent_name(p: &Path) -> Option<&str> {
    p.parent()?.file_name()?.to_str()
}

/// The `workspaceStorage` and `globalStorage` folders a root stands for.
fn storage_dirs(root: &Path) -> (Option<PathBuf>, Option<PathBuf>) {
    if root.file_name().is_some_and(|n| n == "workspaceStorage") {
        return (Some(root.to_path_buf()), None);
    }
    let user = if root.join("User").is_dir() {
        root.join("User")
    } else {
        root.to_path_buf()
    };
    (
        Some(user.join("workspaceStorage")),
        Some(user.join("globalStorage")),
    )
}

fn discover_sessions(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for root in roots {
        let (ws, global) = storage_dirs(root);
        if let Some(ws) = ws {
            // <ws>/<hash>/chatSessions/<file>
            found.extend(discover::walk_files(&ws, 3, |p| {
                is_session_file(p) && parent_name(p) == Some("chatSessions")
            }));
            // <ws>/<hash>/GitHub.copilot-chat/transcripts/<id>.jsonl, when no chat file of the
            // same id holds the session (that file's parse reads the transcript beside it).
            found.extend(
                discover::walk_files(&ws, 4, is_transcript_file)
                    .into_iter()
                    .filter(|t| chat_file_for_transcript(t).is_none()),
            );
            // <ws>/<hash>/state.vscdb holding sessions older VS Code kept there.
            found.extend(crate::copilot_vscode_legacy::discover_legacy(&ws));
        }
        if let Some(global) = global {
            let dir = global.join("emptyWindowChatSessions");
            found.extend(discover::walk_files(&dir, 1, is_session_file));
        }
    }
    found.sort();
    found.dedup();
    select_authoritative(found)
}

/// Whether `p` is a Copilot Chat transcript: `<hash>/GitHub.copilot-chat/transcripts/*.jsonl`.
fn is_transcript_file(p: &Path) -> bool {
    discover::has_extension(p, "jsonl")
        && parent_name(p) == Some("transcripts")
        && p.parent()
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_some_and(|n| n == "GitHub.copilot-chat")
}

/// The workspace folder (`workspaceStorage/<hash>`) of a transcript.
fn transcript_workspace(transcript: &Path) -> Option<&Path> {
    transcript.parent()?.parent()?.parent()
}

/// The `chatSessions` file holding the same session as a transcript, if any.
fn chat_file_for_transcript(transcript: &Path) -> Option<PathBuf> {
    let stem = transcript.file_stem()?;
    let dir = transcript_workspace(transcript)?.join("chatSessions");
    ["jsonl", "json"]
        .iter()
        .map(|ext| dir.join(stem).with_extension(ext))
        .find(|p| p.is_file())
}

/// The transcript beside a `chatSessions` file, if Copilot Chat wrote one.
fn transcript_for_chat_file(chat: &Path) -> Option<PathBuf> {
    let dir = chat.parent()?;
    if dir.file_name()? != "chatSessions" {
        return None;
    }
    let t = dir
        .parent()?
        .join("GitHub.copilot-chat")
        .join("transcripts")
        .join(chat.file_stem()?)
        .with_extension("jsonl");
    t.is_file().then_some(t)
}

/// Whether a session file belongs to an empty window rather than a workspace.
fn is_empty_window_file(p: &Path) -> bool {
    let parent = parent_name(p);
    if parent == Some("emptyWindowChatSessions") {
        return true;
    }
    parent == Some("chatSessions")
        && p.parent()
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_some_and(|n| n == "no-workspace")
}

/// Applies the duplicate rules described in the module docs.
fn select_authoritative(files: Vec<PathBuf>) -> Vec<PathBuf> {
    // A .jsonl wins over a .json with the same stem in the same folder.
    let logs: HashSet<PathBuf> = files
        .iter()
        .filter(|p| discover::has_extension(p, "jsonl"))
        .map(|p| p.with_extension(""))
        .collect();
    let files: Vec<PathBuf> = files
        .into_iter()
        .filter(|p| !(discover::has_extension(p, "json") && logs.contains(&p.with_extension(""))))
        .collect();
    // Session ids present in a workspace.
    let in_workspace: HashSet<String> = files
        .iter()
        .filter(|p| !is_empty_window_file(p))
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_string))
        .collect();
    let mut out: Vec<PathBuf> = files
        .into_iter()
        .filter(|p| {
            !(is_empty_window_file(p)
                && p.file_stem()
                    .and_then(|s| s.to_str())
                    .is_some_and(|s| in_workspace.contains(s)))
        })
        .collect();
    // Empty-window copies in both the old and the new folder: keep one (the log if any).
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut keep = vec![true; out.len()];
    for (i, p) in out.iter().enumerate() {
        if !is_empty_window_file(p) {
            continue;
        }
        let Some(stem) = p.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        match seen.get(stem) {
            Some(&j) => {
                let prefer_new = discover::has_extension(p, "jsonl")
                    && !discover::has_extension(&out[j], "jsonl");
                if prefer_new {
                    keep[j] = false;
                    seen.insert(stem.to_string(), i);
                } else {
                    keep[i] = false;
                }
            }
            None => {
                seen.insert(stem.to_string(), i);
            }
        }
    }
    let mut i = 0;
    out.retain(|_| {
        let k = keep[i];
        i += 1;
        k
    });
    out
}

/// Finds `needle` in `hay`.
pub(crate) fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

fn trim_start(head: &[u8]) -> &[u8] {
    let skip = head
        .iter()
        .position(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF)
        .unwrap_or(head.len());
    &head[skip..]
}

/// Whether the head of a JSONL file starts with a mutation log's Initial entry.
fn looks_like_log(head: &[u8]) -> bool {
    let compact: Vec<u8> = trim_start(head)
        .iter()
        .take(64)
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    compact.starts_with(b"{\"kind\":0,\"v\":{")
}

/// Whether the head of a JSON document is a chat object (stored session or export).
pub(crate) fn looks_like_chat_json(head: &[u8]) -> bool {
    let head = trim_start(head);
    head.first() == Some(&b'{')
        && find_bytes(head, b"\"requests\"").is_some()
        && (find_bytes(head, b"\"responderUsername\"").is_some()
            || find_bytes(head, b"\"initialLocation\"").is_some()
            || find_bytes(head, b"\"requesterUsername\"").is_some())
}

/// Whether the chat JSON head has a top-level `version` before its requests (stored sessions
/// of versions 2 and 3 start with it; exports never have it).
pub(crate) fn has_version_before_requests(head: &[u8]) -> bool {
    match (
        find_bytes(head, b"\"version\""),
        find_bytes(head, b"\"requests\""),
    ) {
        (Some(v), Some(r)) => v < r,
        (Some(_), None) => true,
        _ => false,
    }
}

/// Whether `path` sits in a folder VS Code stores sessions in.
pub(crate) fn in_session_folder(path: &Path) -> bool {
    matches!(
        parent_name(path),
        Some("chatSessions" | "emptyWindowChatSessions" | "transferredChatSessions")
    )
}

fn detect_stored(path: &Path, head: &[u8]) -> bool {
    if crate::copilot_vscode_legacy::is_workspace_db(path) {
        return crate::copilot_vscode_legacy::holds_legacy_sessions(path);
    }
    if is_transcript_file(path) {
        return find_bytes(head, b"\"session.start\"").is_some()
            || find_bytes(head, b"\"user.message\"").is_some();
    }
    if discover::has_extension(path, "jsonl") {
        return looks_like_log(head);
    }
    if !discover::has_extension(path, "json") {
        return false;
    }
    let head_t = trim_start(head);
    if in_session_folder(path) {
        return head_t.first() == Some(&b'{');
    }
    looks_like_chat_json(head_t) && has_version_before_requests(head_t)
}

// ---------------------------------------------------------------------------------------------
// Files

/// Reads a transcript with the Copilot CLI parser and makes its sessions Copilot Chat ones:
/// the same ids (a UUID as is, else `copilot-vscode:<id>`), this source, the workspace's
/// folder as cwd when the transcript does not say.
fn transcript_sessions(path: &Path) -> Result<FileParse, SourceError> {
    let mut out = crate::copilot_cli::parse_file(
        ParseRequest {
            path,
            resume: None,
            max_bytes: None,
        },
        None,
    )?;
    let cwd = transcript_workspace(path).and_then(|ws| {
        let v = crate::whole::read_json_lenient(&ws.join("workspace.json"))?;
        v.get("folder")
            .or_else(|| v.get("workspace"))
            .and_then(uri_to_path)
    });
    let cli_prefix = format!("{}:", SourceKind::CopilotCli.as_str());
    let relabel = |id: &SessionId| match id.as_str().strip_prefix(&cli_prefix) {
        Some(rest) => SessionId::new(format!("{}:{rest}", SourceKind::CopilotVscode.as_str())),
        None => id.clone(),
    };
    for s in &mut out.sessions {
        s.meta.source = SourceKind::CopilotVscode;
        s.meta.id = relabel(&s.meta.id);
        if let Some(p) = s.meta.parent.as_mut() {
            p.session_id = relabel(&p.session_id);
        }
        if s.meta.cwd.is_none() {
            s.meta.cwd = cwd.clone();
        }
    }
    // The CLI parser resumes appended logs; this source re-reads its files whole.
    out.state = None;
    Ok(out)
}

/// Reads the chat editing session of the same id (`chatEditingSessions/<id>/`), if VS Code
/// kept one: the files the session changed, as snapshots for `trail diff` (the chat's
/// `textEditGroup` edits extending them where the editing session stops), and as files
/// touched.
fn attach_editing_session(
    chat: &Path,
    root: &Value,
    session: &mut Session,
    notes: &mut Vec<String>,
) {
    let Some(folder) = crate::vscode_editing::folder_for_chat_file(chat) else {
        return;
    };
    let turns: HashMap<String, u32> = session
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Prompt)
        .filter_map(|m| Some((m.native_id.clone()?, m.turn_index?)))
        .collect();
    let turn_of = |r: &str| turns.get(r).copied();
    let edits = crate::vscode_editing::text_edit_groups(root, &turn_of);
    match crate::vscode_editing::read_snapshots(&folder, &turn_of, &edits) {
        Ok(snapshots) => {
            for s in &snapshots {
                if s.version == 0 {
                    session.add_file(FileTouch {
                        path: s.path.clone(),
                        tool_name: Some("chatEditingSession".into()),
                        turn_index: s.turn_index,
                        first_seen_at: None,
                    });
                }
            }
            session.snapshots = snapshots;
        }
        Err(e) => notes.push(format!("chat editing session not read: {e}")),
    }
}

/// A transcript with no chat file beside it: the session as the transcript tells it.
fn parse_transcript_alone(path: &Path) -> Result<FileParse, SourceError> {
    let mut out = transcript_sessions(path)?;
    for s in &mut out.sessions {
        s.mode = trail_model::UpdateMode::Replace;
    }
    Ok(out)
}

/// Folds the transcript beside a chat file into the chat file's session (see the module
/// docs): one session, not two.
fn merge_transcript(out: &mut FileParse, transcript: &Path) {
    let parsed = match transcript_sessions(transcript) {
        Ok(p) => p,
        Err(e) => {
            out.notes.push(format!("transcript not read: {e}"));
            return;
        }
    };
    out.issues.extend(parsed.issues);
    let Some(chat) = out.sessions.first_mut() else {
        return;
    };
    let chat_id = chat.meta.id.clone();
    let mut from_transcript = parsed.sessions.into_iter();
    let Some(main) = from_transcript.next() else {
        return;
    };
    let prompts = |s: &Session| {
        s.messages
            .iter()
            .filter(|m| m.kind() == MessageKind::Prompt)
            .count()
    };
    if prompts(&main) >= prompts(chat) && !main.messages.is_empty() {
        chat.messages = main.messages;
        chat.turns = main.turns;
        chat.turn_count = main.turn_count;
        chat.checkpoints = main.checkpoints;
        // Usage stays the chat file's (its token counts and resolved models) unless it has none.
        if chat.usage.is_empty() {
            chat.usage = main.usage;
        } else {
            for u in &mut chat.usage {
                u.message_seq = None;
            }
        }
    }
    for f in main.files {
        chat.add_file(f);
    }
    for r in main.refs {
        chat.add_ref(r);
    }
    for m in &main.models {
        chat.observe_model(m);
    }
    if chat.meta.title.is_none() {
        chat.meta.title = main.meta.title;
    }
    if chat.meta.cwd.is_none() {
        chat.meta.cwd = main.meta.cwd;
    }
    if let Some(ts) = main.meta.created_at.as_deref() {
        chat.meta.observe_timestamp(ts);
    }
    if let Some(ts) = main.meta.updated_at.as_deref() {
        chat.meta.observe_timestamp(ts);
    }
    // Subagents the transcript saw belong to the merged session.
    for mut sub in from_transcript {
        if let Some(p) = sub.meta.parent.as_mut() {
            p.session_id = chat_id.clone();
        }
        out.sessions.push(sub);
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, SourceError> {
    std::fs::read(path).map_err(|e| SourceError::io(path, e))
}

fn parse_snapshot_file(path: &Path) -> Result<FileParse, SourceError> {
    let bytes = read_file(path)?;
    let doc = crate::whole::parse_json(path, &bytes)
        .map_err(|e| SourceError::format(path, format!("not a VS Code chat session: {e}")))?;
    let root = doc.value;
    if !root.is_object() {
        return Err(SourceError::format(
            path,
            "not a VS Code chat session: the document is not an object",
        ));
    }
    let mut out = FileParse {
        bytes_parsed: bytes.len() as u64,
        bytes_read: bytes.len() as u64,
        issues: doc.trailing.into_iter().collect(),
        ..FileParse::default()
    };
    stored_session(path, &root, &[], &mut out);
    Ok(out)
}

fn parse_log_file(path: &Path) -> Result<FileParse, SourceError> {
    let display = path.display().to_string();
    let mut state: Option<Value> = None;
    let mut request_lines: Vec<u64> = Vec::new();
    let outcome = jsonl::read_lines(path, 0, 0, |pos, line| {
        let entry: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
        let touched = requests_touched(&entry);
        apply_entry(&mut state, entry)?;
        note_request_lines(&mut request_lines, touched, state.as_ref(), pos.number);
        Ok(())
    })?;
    let mut out = FileParse {
        bytes_parsed: outcome.bytes_parsed,
        bytes_read: outcome.bytes_read,
        lines: outcome.lines,
        issues: outcome.issues,
        ..FileParse::default()
    };
    match state {
        Some(root) if root.is_object() => stored_session(path, &root, &request_lines, &mut out),
        Some(_) => out.issues.push(file_issue(
            &display,
            "the replayed mutation log is not an object",
        )),
        None => {
            let has_entries = out.lines > 0 && !out.issues.is_empty();
            let reason = if outcome.bytes_read == 0 || (out.lines == 0 && !has_entries) {
                "empty chat session log"
            } else {
                "chat session log has no initial entry (kind 0); nothing to replay"
            };
            out.issues.push(file_issue(&display, reason));
        }
    }
    Ok(out)
}

/// Which requests a mutation-log entry writes: all of them (the initial entry, or the whole
/// `requests` array set or deleted), those it pushes onto the array, or one.
enum RequestsTouched {
    All,
    Pushed(usize),
    One(usize),
}

fn requests_touched(entry: &Value) -> Option<RequestsTouched> {
    let kind = entry.get("kind").and_then(Value::as_u64);
    if kind == Some(0) {
        return Some(RequestsTouched::All);
    }
    let k = entry.get("k").and_then(Value::as_array)?;
    if k.first().and_then(Value::as_str) != Some("requests") {
        return None;
    }
    match (k.get(1), kind) {
        (None, Some(2)) => Some(RequestsTouched::Pushed(
            entry.get("v").and_then(Value::as_array).map_or(0, Vec::len),
        )),
        (None, _) => Some(RequestsTouched::All),
        (Some(i), _) => Some(RequestsTouched::One(usize::try_from(i.as_u64()?).ok()?)),
    }
}

/// Notes `line` as the last to write the requests `touched` names, once the entry is applied
/// (`state`: the replayed document).
fn note_request_lines(
    lines: &mut Vec<u64>,
    touched: Option<RequestsTouched>,
    state: Option<&Value>,
    line: u64,
) {
    let Some(touched) = touched else {
        return;
    };
    let len = state
        .and_then(|s| s.get("requests"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    lines.resize(len, 0);
    let range = match touched {
        RequestsTouched::All => 0..len,
        RequestsTouched::Pushed(n) => len.saturating_sub(n)..len,
        RequestsTouched::One(i) => i.min(len)..i.saturating_add(1).min(len),
    };
    lines[range].fill(line);
}

// ---------------------------------------------------------------------------------------------
// Mutation log replay

/// One step of a key path: an object key or an array index.
enum Step {
    Key(String),
    Index(usize),
}

fn path_steps(k: Option<&Value>) -> Result<Vec<Step>, String> {
    let Some(Value::Array(items)) = k else {
        return Err("entry has no key path (`k`)".into());
    };
    if items.len() > MAX_PATH_LEN {
        return Err(format!("key path longer than {MAX_PATH_LEN}"));
    }
    items
        .iter()
        .map(|s| match s {
            Value::String(k) => Ok(Step::Key(k.clone())),
            Value::Number(n) => n
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .map(Step::Index)
                .ok_or_else(|| "key path index is not a non-negative integer".to_string()),
            _ => Err("key path step is neither a string nor an index".to_string()),
        })
        .collect()
}

/// Adapts a step to the container it applies to, as JavaScript property access does: a
/// numeric string indexes an array, a number names an object property.
fn fit_step(cur: &Value, step: &Step) -> Step {
    match (cur, step) {
        (Value::Array(_), Step::Key(k)) => match k.parse::<usize>() {
            Ok(i) => Step::Index(i),
            Err(_) => Step::Key(k.clone()),
        },
        (Value::Object(_), Step::Index(i)) => Step::Key(i.to_string()),
        (_, Step::Key(k)) => Step::Key(k.clone()),
        (_, Step::Index(i)) => Step::Index(*i),
    }
}

/// Returns the existing container a step leads to. Like VS Code's reader, a missing
/// intermediate value is an error (the entry is rejected, nothing is changed).
fn descend<'v>(cur: &'v mut Value, step: &Step) -> Result<&'v mut Value, String> {
    let step = fit_step(cur, step);
    let next = match (cur, &step) {
        (Value::Object(map), Step::Key(k)) => map.get_mut(k.as_str()),
        (Value::Array(arr), Step::Index(i)) => arr.get_mut(*i),
        _ => None,
    };
    match next {
        Some(v) if v.is_object() || v.is_array() => Ok(v),
        _ => Err(
            "key path goes through a missing value or one that is not an object or array".into(),
        ),
    }
}

/// Walks to the parent of the last step.
fn walk_to_parent<'v>(
    root: &'v mut Value,
    steps: &[Step],
) -> Result<(&'v mut Value, Step), String> {
    let mut cur = root;
    for step in &steps[..steps.len() - 1] {
        cur = descend(cur, step)?;
    }
    let last = fit_step(cur, &steps[steps.len() - 1]);
    Ok((cur, last))
}

fn set_at(root: &mut Value, steps: &[Step], value: Option<Value>) -> Result<(), String> {
    if steps.is_empty() {
        if let Some(v) = value {
            *root = v;
        }
        return Ok(());
    }
    let (parent, step) = walk_to_parent(root, steps)?;
    match (parent, &step) {
        (Value::Object(map), Step::Key(k)) => {
            match value {
                Some(v) => {
                    map.insert(k.clone(), v);
                }
                None => {
                    map.remove(k.as_str());
                }
            }
            Ok(())
        }
        (Value::Array(arr), Step::Index(i)) => {
            let i = *i;
            if i >= arr.len() {
                if value.is_none() {
                    return Ok(());
                }
                if i - arr.len() > MAX_HOLES {
                    return Err("index far beyond the array's end".into());
                }
                arr.resize(i + 1, Value::Null);
            }
            // A deleted array element serializes as null.
            arr[i] = value.unwrap_or(Value::Null);
            Ok(())
        }
        _ => Err("cannot set a value there: parent type does not match the key".into()),
    }
}

fn push_at(
    root: &mut Value,
    steps: &[Step],
    values: Option<Value>,
    truncate: Option<&Value>,
) -> Result<(), String> {
    let truncate = match truncate {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| "push index `i` is not a non-negative integer".to_string())?,
        ),
    };
    let values = match values {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(v)) => v,
        Some(_) => return Err("push values `v` is not an array".into()),
    };
    let target: &mut Value = if steps.is_empty() {
        root
    } else {
        let (parent, step) = walk_to_parent(root, steps)?;
        match (parent, &step) {
            (Value::Object(map), Step::Key(k)) => map.entry(k.clone()).or_insert(Value::Null),
            (Value::Array(arr), Step::Index(i)) => {
                let i = *i;
                if i >= arr.len() {
                    if i - arr.len() > MAX_HOLES {
                        return Err("index far beyond the array's end".into());
                    }
                    arr.resize(i + 1, Value::Null);
                }
                &mut arr[i]
            }
            _ => return Err("cannot push there: parent type does not match the key".into()),
        }
    };
    if target.is_null() {
        *target = Value::Array(Vec::new());
    }
    let Value::Array(arr) = target else {
        return Err("push target is not an array".into());
    };
    if let Some(i) = truncate {
        if i <= arr.len() {
            arr.truncate(i);
        } else if i - arr.len() > MAX_HOLES {
            return Err("push index far beyond the array's end".into());
        } else {
            arr.resize(i, Value::Null);
        }
    }
    arr.extend(values);
    Ok(())
}

/// Applies one mutation-log entry to the replayed state.
fn apply_entry(state: &mut Option<Value>, entry: Value) -> Result<(), String> {
    let Value::Object(mut entry) = entry else {
        return Err("entry is not an object".into());
    };
    let kind = entry.get("kind").and_then(Value::as_u64);
    if kind == Some(0) {
        *state = Some(entry.remove("v").unwrap_or(Value::Null));
        return Ok(());
    }
    let Some(root) = state.as_mut() else {
        return Err("entry before the log's initial entry (kind 0)".into());
    };
    match kind {
        Some(1) => {
            let value = entry.remove("v").unwrap_or(Value::Null);
            let steps = path_steps(entry.get("k"))?;
            set_at(root, &steps, Some(value))
        }
        Some(2) => {
            let values = entry.remove("v");
            let steps = path_steps(entry.get("k"))?;
            push_at(root, &steps, values, entry.get("i"))
        }
        Some(3) => {
            let steps = path_steps(entry.get("k"))?;
            set_at(root, &steps, None)
        }
        _ => Err("unknown mutation-log entry kind".into()),
    }
}

/// Replays a mutation log given as text (one entry per line) and returns the object it
/// describes, or why it cannot. Lines that do not parse are skipped, as in [`CopilotVscode`]'s
/// parse. Exposed for tests and tools.
pub fn replay_log(text: &str) -> Result<Value, String> {
    let mut state = None;
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if let Ok(entry) = serde_json::from_str::<Value>(line) {
            let _ = apply_entry(&mut state, entry);
        }
    }
    state.ok_or_else(|| "log has no initial entry".to_string())
}

// ---------------------------------------------------------------------------------------------
// Session building (shared with vscode_export)

fn looks_like_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `request_lines`: the line of the mutation log that last wrote each request (empty for a
/// whole document), so that a problem with a request names its line.
fn stored_session(path: &Path, root: &Value, request_lines: &[u64], out: &mut FileParse) {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    let native = root
        .get("sessionId")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or(stem);
    let id = if looks_like_uuid(&native) {
        native.clone()
    } else {
        format!("{}:{}", SourceKind::CopilotVscode.as_str(), native)
    };
    let mut meta = SessionMeta::new(SessionId::new(id), SourceKind::CopilotVscode, native);
    meta.cwd = workspace_cwd(path).or_else(|| root.get("workingDirectory").and_then(uri_to_path));
    let (mut session, notes) =
        build_session(meta, root, &path.display().to_string(), request_lines, out);
    out.notes.extend(notes);
    attach_editing_session(path, root, &mut session, &mut out.notes);
    out.sessions.push(session);
}

/// Reads `workspace.json` beside the `chatSessions/` folder holding `path`.
fn workspace_cwd(path: &Path) -> Option<String> {
    let dir = path.parent()?;
    if dir.file_name()? != "chatSessions" {
        return None;
    }
    let v = crate::whole::read_json_lenient(&dir.parent()?.join("workspace.json"))?;
    v.get("folder")
        .or_else(|| v.get("workspace"))
        .and_then(uri_to_path)
}
