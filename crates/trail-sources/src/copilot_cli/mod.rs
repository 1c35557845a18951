//! GitHub Copilot CLI: `<copilot home>/session-state/<session id>/events.jsonl`.
//!
//! # Layout
//! Each root is a `.copilot` folder (`~/.copilot`, `$XDG_STATE_HOME/.copilot`, `$COPILOT_HOME`:
//! the CLI resolves them). A session folder holds `events.jsonl` (an append-only event log, one
//! JSON envelope `{type, id, parentId, timestamp, data}` a line), `workspace.yaml` (`cwd`,
//! `repository`, `branch`, `summary`, read by hand: only flat `key: value` lines, quoted values
//! and block scalars) and sometimes `checkpoints/*.md` (compaction summaries).
//!
//! # Mapping
//! - One session per file. Its id is `data.sessionId` of `session.start` when that is a UUID,
//!   else `copilot-cli:<native id>`; the native id falls back to the session folder name (or the
//!   file stem outside the `session-state` layout). `session.resume` appends to the same session.
//!   A log with no `session.start` or `session.resume` and no prompt, answer, reasoning or tool
//!   event (one cut off at its start, holding only events trail does not map) is no session,
//!   in its folder or named by path alike, and the parse says what is missing
//!   (`FileParse::no_session`). Detection skips a torn first line and judges the next one.
//! - `user.message` is a prompt and opens a turn. `assistant.message` yields `Thinking`
//!   (`reasoningText`), `Text` (`content`) and one `ToolCall` per `toolRequests` entry;
//!   `assistant.reasoning` yields `Thinking`. `tool.execution_start` yields a `ToolCall` only when
//!   no tool request announced that `toolCallId` before (some logs write the start first);
//!   `tool.execution_complete` yields the `ToolResult` (`success`, `result.content`, `error`).
//! - Events whose `data.parentToolCallId` is set belong to a subagent: they go to the session
//!   `<parent id>:agent:<toolCallId>` with `meta.parent` pointing at that tool call, marked
//!   `is_sidechain`, and never count in the parent's turns or usage.
//! - `session.compaction_complete` yields a `Compaction` marker and a `Summary`; its summary (or
//!   the `checkpoints/<file>.md` it names) becomes a checkpoint. Checkpoint files no event names
//!   are added after, in name order (`index.md` is skipped). Sections are taken from
//!   `<overview>`-style tags or from markdown headings matching Chronicle's columns.
//! - `session.error`, `abort` and `subagent.failed` are `(System, Error)`; informational events
//!   (`session.info`, `session.warning`, `session.resume`, `session.model_change`,
//!   `session.truncation`, `session.shutdown`, `system.message`, `system.notification`,
//!   `hook.*`, `subagent.*`) are `(System, Meta)`. `session.start`, `assistant.turn_*` and
//!   `session.compaction_start` produce no message. Any other type is `(System, Unknown)` with the
//!   raw line in `extra`.
//! - Hook-style logs (flat `{session_id, type, prompt|output, timestamp(ms)}` lines, written by
//!   user hooks rather than the CLI) are read with the same rules: a line without `data` is its
//!   own data, `prompt`/`output` stand for `content` and `session_id` names the session.
//!
//! # Usage rule
//! `assistant.usage` is ephemeral, so per request only `assistant.message.outputTokens` is on
//! disk. Rows:
//! - one row per `assistant.message` carrying `outputTokens` (output only; `tokens_known` is
//!   false when it is 0), key `msg:<messageId>@<line>`;
//! - one row per `compactionTokensUsed`, key `compaction@<line>`;
//! - at `session.shutdown`, per model of `modelMetrics` (or the flat `tokenDetails`, charged to
//!   the current model, when no model carries `usage`): the segment's totals **minus what the
//!   rows above already carried for that model since the segment began** (a segment starts at
//!   the file start or a `session.resume` and ends at its shutdown), key
//!   `shutdown@<line>:<model>`. So a segment with a shutdown sums to exactly its totals and a
//!   segment without one keeps its per-message outputs: nothing is counted twice, and the rule
//!   works on appended bytes because rows are never revised. Subagent message and compaction rows
//!   are subtracted as well (the totals are per process); subagent input tokens cannot be told
//!   apart and stay in the parent's shutdown row.
//!
//! Line numbers make every key unique within the session.
//!
//! # Incremental parsing
//! The file only grows, so `appendable` is true. `FileParse.state` holds a JSON [`State`]: seq
//! and turn counters per session, open tool calls, files and refs already emitted, models, the
//! current model, the usage segment accumulators, checkpoint numbering, title sources. A resumed
//! parse returns `UpdateMode::Append` deltas whose union with the earlier result equals a parse
//! from scratch. A state that does not decode makes the parse start over from offset 0 (Replace).
//!
//! # Chronicle store
//! [`read_session_store`] reads `~/.copilot/session-store.db` read-only (or a private copy when
//! the WAL cannot be read in place) into [`StoreExtras`]. [`CopilotCli::with_store_extras`]
//! returns a source that fills, per session id, the title (when neither `workspace.yaml` nor the
//! log names one), cwd, repository and branch (when missing) and the checkpoints (only when the
//! session has none of its own) from it. [`CopilotCli::store_path_for`] finds the store beside a
//! session folder. The plain [`CopilotCli`] never opens the store.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use trail_model::{
    time, truncate_chars, Checkpoint, FileTouch, Message, MessageKind, ParentLink, Role, Session,
    SessionId, SessionMeta, SourceKind, UpdateMode, Usage, WorkspaceArtifact,
};

use crate::{discover, ids, jsonl, refs, FileParse, ParseRequest, Source, SourceError};

/// The Copilot CLI source (`session-state/<id>/events.jsonl`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CopilotCli;

/// A [`CopilotCli`] that also fills gaps from Copilot's own `session-store.db`.
#[derive(Debug, Clone, Default)]
pub struct CopilotCliWithStore {
    extras: StoreExtras,
}

/// What `session-store.db` knows beyond the event logs, keyed by session id.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StoreExtras {
    pub sessions: BTreeMap<String, StoreSession>,
}

/// One `sessions` row of the store and its `checkpoints` rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StoreSession {
    pub summary: Option<String>,
    pub cwd: Option<String>,
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// In `checkpoint_number` order.
    pub checkpoints: Vec<Checkpoint>,
}

const EVENTS_FILE: &str = "events.jsonl";
const STATE_VERSION: u32 = 1;
const TITLE_CHARS: usize = 200;

/// Tools whose `path`-like argument names a file they read or write.
const FILE_TOOLS: &[&str] = &[
    "view",
    "edit",
    "create",
    "str_replace_editor",
    "str_replace",
    "insert",
    "write",
    "write_file",
    "read",
    "read_file",
    "edit_file",
    "create_file",
    "multi_edit",
    "undo_edit",
];
const PATH_ARGS: &[&str] = &["path", "file_path", "filePath", "filename"];
/// Tools whose output is shell output (git's commit lines count as refs there).
const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "powershell",
    "pwsh",
    "read_bash",
    "write_bash",
    "run_command",
    "run_in_terminal",
];

impl CopilotCli {
    /// Returns a source that merges `extras` (from [`read_session_store`]) into what it parses.
    pub fn with_store_extras(extras: StoreExtras) -> CopilotCliWithStore {
        CopilotCliWithStore { extras }
    }

    /// Returns `<copilot home>/session-store.db` for an `events.jsonl` in the
    /// `session-state/<id>/` layout, when that file exists.
    pub fn store_path_for(events: &Path) -> Option<PathBuf> {
        let session_dir = events.parent()?;
        let state_dir = session_dir.parent()?;
        if state_dir.file_name()? != "session-state" {
            return None;
        }
        let db = state_dir.parent()?.join("session-store.db");
        db.is_file().then_some(db)
    }
}

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 2: premium requests from `session.shutdown` (issue 18).
/// 3: a leading BOM is skipped; a log that lost its head is judged by its first whole line; a
///    log with no event that starts or carries a conversation is no session, and says what is
///    missing (issue 40).
/// 4: a subagent's agent name (`agent_description`) and `plan.md` as a workspace artifact
///    (issue 45).
pub const PARSER_VERSION: u32 = 4;

impl Source for CopilotCli {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::CopilotCli
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            let dir = if root.file_name().is_some_and(|n| n == "session-state") {
                root.clone()
            } else {
                root.join("session-state")
            };
            out.extend(discover::walk_files(&dir, 2, |p| {
                p.file_name().is_some_and(|n| n == EVENTS_FILE)
            }));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        detect_head(path, head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    /// Parses the events, filling gaps (summary, cwd, repository, branch, checkpoints) from
    /// Copilot's own `session-store.db` beside `session-state/` when there is one. The store is
    /// read once per process and per version of the file (read-only, see
    /// [`read_session_store`]); a store that cannot be read is noted, not an error.
    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let Some(db) = Self::store_path_for(request.path) else {
            return parse_file(request, None);
        };
        match cached_store_extras(&db) {
            Ok(extras) => parse_file(request, Some(&extras)),
            Err(e) => {
                let mut out = parse_file(request, None)?;
                out.notes.push(format!("session-store.db not read: {e}"));
                Ok(out)
            }
        }
    }
}

/// `session-store.db` contents by path, valid while the file's size and mtime stay the same.
type StoreCache = HashMap<PathBuf, (u64, Option<SystemTime>, Arc<StoreExtras>)>;

fn cached_store_extras(db: &Path) -> Result<Arc<StoreExtras>, SourceError> {
    static CACHE: OnceLock<Mutex<StoreCache>> = OnceLock::new();
    let md = std::fs::metadata(db).map_err(|e| SourceError::io(db, e))?;
    let stamp = (md.len(), md.modified().ok());
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Ok(map) = cache.lock() {
        if let Some((len, mtime, extras)) = map.get(db) {
            if (*len, *mtime) == stamp {
                return Ok(Arc::clone(extras));
            }
        }
    }
    let extras = Arc::new(read_session_store(db)?);
    if let Ok(mut map) = cache.lock() {
        map.insert(db.to_path_buf(), (stamp.0, stamp.1, Arc::clone(&extras)));
    }
    Ok(extras)
}

impl Source for CopilotCliWithStore {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::CopilotCli
    }
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        CopilotCli.discover(roots)
    }
    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        detect_head(path, head)
    }
    fn appendable(&self, _path: &Path) -> bool {
        true
    }
    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        parse_file(request, Some(&self.extras))
    }
}

// ---------------------------------------------------------------------------------------------
// Detection

fn is_copilot_type(t: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "session.",
        "user.",
        "assistant.",
        "tool.",
        "subagent.",
        "hook.",
        "system.",
        "skill.",
        "permission.",
    ];
    t == "abort"
        || PREFIXES
            .iter()
            .any(|p| t.starts_with(p) && t.len() > p.len())
}

fn detect_head(path: &Path, head: &[u8]) -> bool {
    let name_is_events = path.file_name().is_some_and(|n| n == EVENTS_FILE);
    // VS Code's transcripts use the same vocabulary; they belong to the copilot-vscode source.
    if !name_is_events
        && path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "transcripts")
    {
        return false;
    }
    let text = String::from_utf8_lossy(head);
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(line) = lines.next() else {
        return false;
    };
    let event = |l: &str| serde_json::from_str::<Value>(l).is_ok_and(|v| looks_like_event(&v));
    match serde_json::from_str::<Value>(line) {
        Ok(v) => looks_like_event(&v),
        // A first line longer than the head: judge by its opening.
        Err(_) if !text.contains('\n') => {
            line.starts_with('{')
                && line.contains("\"type\"")
                && line.contains("\"session.start\"")
                && line.contains("\"data\"")
        }
        // A log that lost its head (the first line is the torn end of a record): judge by the
        // next line, as the parse reads past the torn one (issue 40).
        Err(_) => lines.next().is_some_and(event),
    }
}

fn looks_like_event(v: &Value) -> bool {
    let Some(t) = v.get("type").and_then(Value::as_str) else {
        return false;
    };
    if !is_copilot_type(t) {
        return false;
    }
    let envelope = v.get("data").is_some_and(Value::is_object)
        && (v.get("id").is_some() || v.get("parentId").is_some());
    let hook_style = v.get("session_id").is_some_and(Value::is_string)
        && (v.get("prompt").is_some() || v.get("output").is_some());
    envelope || hook_style
}

// ---------------------------------------------------------------------------------------------
// Resumable state

/// Per-session counters carried from one parse to the next.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct SessState {
    seq: u32,
    turns: u32,
    title: Option<String>,
    agent_ref: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
    models: Vec<String>,
    files: BTreeSet<String>,
    refs: BTreeSet<String>,
    /// Tool calls announced and not completed yet: id -> tool name.
    open_calls: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
struct Tokens {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
}

/// Everything a resumed parse needs (serialized as JSON into `FileParse.state`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct State {
    version: u32,
    native_id: Option<String>,
    main: SessState,
    subs: BTreeMap<String, SessState>,
    cwd: Option<String>,
    repository: Option<String>,
    branch: Option<String>,
    agent_version: Option<String>,
    event_title: Option<String>,
    first_prompt: Option<String>,
    current_model: Option<String>,
    /// Resume segments seen (0 for the first lifetime).
    segment: u32,
    /// Tokens already carried by rows in the current segment, per model.
    emitted: BTreeMap<String, Tokens>,
    checkpoints: u32,
    checkpoint_files: BTreeSet<String>,
    store_checkpoints: bool,
    events: u64,
    /// An event that starts or carries a conversation was seen (see [`carries_conversation`]).
    #[serde(default)]
    conversation: bool,
}

// ---------------------------------------------------------------------------------------------
// Parsing

fn placeholder_session() -> Session {
    Session::new(SessionMeta::new(
        SessionId::default(),
        SourceKind::CopilotCli,
        "",
    ))
}

struct Parser {
    st: State,
    main: Session,
    subs: BTreeMap<String, Session>,
    session_dir: Option<PathBuf>,
}

pub(crate) fn parse_file(
    request: ParseRequest<'_>,
    extras: Option<&StoreExtras>,
) -> Result<FileParse, SourceError> {
    let path = request.path;
    let (state, offset, line, mode) = match request.resume {
        Some(r) => match serde_json::from_slice::<State>(r.state) {
            Ok(s) if s.version == STATE_VERSION => (s, r.offset, r.line, UpdateMode::Append),
            _ => (State::default(), 0, 0, UpdateMode::Replace),
        },
        None => (State::default(), 0, 0, UpdateMode::Replace),
    };
    let session_dir = if path.file_name().is_some_and(|n| n == EVENTS_FILE) {
        path.parent().map(Path::to_path_buf)
    } else {
        None
    };
    let mut p = Parser {
        st: state,
        main: placeholder_session(),
        subs: BTreeMap::new(),
        session_dir,
    };
    p.st.version = STATE_VERSION;
    let outcome = jsonl::read_lines_limited(path, offset, line, request.max_bytes, |pos, text| {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
        if !v.is_object() {
            return Err("not a JSON object".to_string());
        }
        p.event(&v, text, pos.number);
        Ok(())
    })?;
    let sessions = p.finish(path, mode, extras);
    let no_session = (p.st.events > 0 && !p.st.conversation).then(|| {
        format!(
            "not a whole Copilot CLI log: no `session.start` and no prompt, answer or tool event \
             (`user.message`, `assistant.message`, `tool.execution_complete`...) in its {} events \
             and {} malformed lines; it looks cut off at its start",
            p.st.events,
            outcome.issues.len()
        )
    });
    tracing::debug!(
        path = %path.display(),
        sessions = sessions.len(),
        issues = outcome.issues.len(),
        "parsed copilot-cli events"
    );
    Ok(FileParse {
        more: outcome.more,
        sessions,
        issues: outcome.issues,
        bytes_parsed: outcome.bytes_parsed,
        bytes_read: outcome.bytes_read,
        lines: outcome.lines,
        state: serde_json::to_vec(&p.st).ok(),
        no_session,
        ..FileParse::default()
    })
}

/// Whether an event of type `ty` starts or carries a conversation: the session's start or
/// resumption, a prompt, an answer, reasoning or a tool's run. A log with none of them holds
/// no session (a file that lost its head to truncation, issue 40).
fn carries_conversation(ty: &str) -> bool {
    matches!(
        ty,
        "session.start"
            | "session.resume"
            | "user.message"
            | "assistant.message"
            | "assistant.reasoning"
            | "tool.execution_start"
            | "tool.execution_complete"
            | "session.compaction_complete"
    ) || ty.starts_with("subagent.")
}

/// A side file's text (`workspace.yaml`, a checkpoint), without a byte-order mark.
fn read_text(path: &Path) -> Option<String> {
    let bytes = crate::whole::read(path).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn u64_of(v: &Value, key: &str) -> Option<u64> {
    let x = v.get(key)?;
    x.as_u64()
        .or_else(|| x.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
}

fn looks_like_repo(s: &str) -> bool {
    let mut parts = s.split('/');
    matches!((parts.next(), parts.next(), parts.next()), (Some(a), Some(b), None)
        if !a.is_empty() && !b.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c)))
}

/// Tool arguments as a JSON value (some logs store them as a JSON string).
fn args_value(args: &Value) -> Value {
    match args {
        Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
        other => other.clone(),
    }
}

/// Tool arguments as the JSON text stored in `tool_input`.
fn args_text(args: Option<&Value>) -> Option<String> {
    match args? {
        Value::Null => None,
        Value::String(s) if serde_json::from_str::<Value>(s).is_ok() => Some(s.clone()),
        other => serde_json::to_string(other).ok(),
    }
}

fn file_of_call(tool: &str, args: &Value) -> Option<String> {
    if !FILE_TOOLS.contains(&tool) {
        return None;
    }
    PATH_ARGS
        .iter()
        .find_map(|k| str_of(args, k))
        .map(str::to_string)
}

/// Text of a tool result: `content`, else `detailedContent`, else the text of `contents[]`.
fn result_text(result: &Value) -> Option<String> {
    if let Some(s) = result.as_str() {
        return Some(s.to_string());
    }
    if let Some(s) = result.get("content").and_then(Value::as_str) {
        return Some(s.to_string());
    }
    if let Some(s) = result.get("detailedContent").and_then(Value::as_str) {
        return Some(s.to_string());
    }
    let parts: Vec<&str> = result
        .get("contents")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

fn error_text(data: &Value) -> Option<String> {
    match data.get("error")? {
        Value::String(s) => Some(s.clone()),
        Value::Object(_) => {
            let e = data.get("error")?;
            str_of(e, "message")
                .or_else(|| str_of(e, "code"))
                .map(str::to_string)
        }
        _ => None,
    }
}

/// What one event says about where it goes and when.
struct Ctx<'a> {
    id: Option<String>,
    parent_id: Option<String>,
    ts: Option<String>,
    sub: Option<&'a str>,
    line: u64,
}

impl Parser {
    /// The state and output session an event is routed to.
    fn slot(&mut self, sub: Option<&str>) -> (&mut SessState, &mut Session) {
        match sub {
            None => (&mut self.st.main, &mut self.main),
            Some(id) => (
                self.st.subs.entry(id.to_string()).or_default(),
                self.subs
                    .entry(id.to_string())
                    .or_insert_with(placeholder_session),
            ),
        }
    }

    fn message(&self, c: &Ctx<'_>, role: Role, kind: MessageKind, text: String) -> Message {
        Message::new(role, kind, text)
            .with_native_id(c.id.clone())
            .with_parent(c.parent_id.clone())
            .with_timestamp(c.ts.clone())
            .with_sidechain(c.sub.is_some())
            .with_main_chain(true)
    }

    /// Appends a message to its session (seq and turn index assigned here) and returns its seq.
    fn push(&mut self, c: &Ctx<'_>, mut m: Message) -> u32 {
        let (ss, sess) = self.slot(c.sub);
        m.seq = ss.seq;
        ss.seq = ss.seq.saturating_add(1);
        if m.kind == Some(MessageKind::Prompt) {
            ss.turns = ss.turns.saturating_add(1);
        }
        m.turn_index = ss.turns.checked_sub(1);
        m.on_main_chain = true;
        let seq = m.seq;
        sess.messages.push(m);
        seq
    }

    fn observe_model(&mut self, sub: Option<&str>, model: &str) {
        if model.is_empty() {
            return;
        }
        let (ss, _) = self.slot(sub);
        if !ss.models.iter().any(|m| m == model) {
            ss.models.push(model.to_string());
        }
    }

    fn current_turn(&mut self, sub: Option<&str>) -> Option<u32> {
        self.slot(sub).0.turns.checked_sub(1)
    }

    fn add_file(&mut self, c: &Ctx<'_>, path: String, tool: &str) {
        let turn = self.current_turn(c.sub);
        let (ss, sess) = self.slot(c.sub);
        if !path.is_empty() && ss.files.insert(path.clone()) {
            sess.files.push(FileTouch {
                path,
                tool_name: Some(tool.to_string()),
                turn_index: turn,
                first_seen_at: c.ts.clone(),
            });
        }
    }

    fn add_refs(&mut self, c: &Ctx<'_>, text: &str, git_output: bool) {
        if text.is_empty() {
            return;
        }
        let mut found = refs::session_refs(text, git_output, None, c.ts.as_deref()).peekable();
        if found.peek().is_none() {
            return;
        }
        // Only now: looking the slot up creates a subagent's session.
        let turn = self.current_turn(c.sub);
        let (ss, sess) = self.slot(c.sub);
        for mut r in found {
            r.turn_index = turn;
            if ss.refs.insert(refs::key(&r)) {
                sess.refs.push(r);
            }
        }
    }

    fn add_usage(&mut self, c: &Ctx<'_>, mut u: Usage) {
        let t = self
            .st
            .emitted
            .entry(u.model.clone().unwrap_or_default())
            .or_default();
        t.input = t.input.saturating_add(u.input_tokens);
        t.output = t.output.saturating_add(u.output_tokens);
        t.cache_read = t.cache_read.saturating_add(u.cache_read_tokens);
        t.cache_write = t.cache_write.saturating_add(u.cache_creation_tokens);
        u.is_sidechain = c.sub.is_some();
        u.timestamp = c.ts.clone();
        self.slot(c.sub).1.usage.push(u);
    }

    fn apply_context(&mut self, data: &Value) {
        let Some(ctx) = data.get("context").filter(|c| c.is_object()) else {
            return;
        };
        if let Some(cwd) = str_of(ctx, "cwd") {
            self.st.cwd = Some(cwd.to_string());
        }
        if let Some(b) = str_of(ctx, "branch") {
            self.st.branch = Some(b.to_string());
        }
        if let Some(r) = str_of(ctx, "repository").filter(|r| looks_like_repo(r)) {
            self.st.repository = Some(r.to_string());
        }
    }

    fn event(&mut self, v: &Value, raw: &str, line: u64) {
        self.st.events += 1;
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        self.st.conversation |= carries_conversation(ty);
        // Hook-style lines have no `data`: the line is its own data.
        let data = v.get("data").filter(|d| d.is_object()).unwrap_or(v);
        let sub = str_of(data, "parentToolCallId");
        let c = Ctx {
            id: str_of(v, "id").map(str::to_string),
            parent_id: str_of(v, "parentId").map(str::to_string),
            ts: v.get("timestamp").and_then(time::from_json),
            sub,
            line,
        };
        if let Some(ts) = &c.ts {
            observe_ts(&mut self.st.main, ts);
            if let Some(s) = sub {
                observe_ts(self.st.subs.entry(s.to_string()).or_default(), ts);
            }
        }
        if self.st.native_id.is_none() {
            if let Some(id) = str_of(v, "session_id") {
                self.st.native_id = Some(id.to_string());
            }
        }
        if v.get("data").is_none() {
            if let Some(cwd) = str_of(v, "cwd") {
                self.st.cwd = Some(cwd.to_string());
            }
        }
        match ty {
            "session.start" => self.session_start(data),
            "session.resume" => self.session_resume(&c, data),
            "session.model_change" => self.model_change(&c, data),
            "session.title_changed" => {
                if let Some(t) = str_of(data, "title") {
                    self.st.event_title = Some(t.trim().to_string());
                }
            }
            "session.start_failed" | "session.compaction_start" | "assistant.turn_end" => {}
            "assistant.turn_start" => {
                if let Some(m) = str_of(data, "model") {
                    self.observe_model(sub, m);
                }
            }
            "user.message" => self.user_message(&c, data),
            "assistant.message" => self.assistant_message(&c, data),
            "assistant.reasoning" => {
                let text = str_of(data, "content").unwrap_or_default().to_string();
                let mut m = self.message(&c, Role::Assistant, MessageKind::Thinking, text);
                m.model = self.model_for(sub, data);
                self.push(&c, m);
            }
            "tool.execution_start" => {
                let id = str_of(data, "toolCallId").unwrap_or_default().to_string();
                let known = self.slot(sub).0.open_calls.contains_key(&id);
                if id.is_empty() || !known {
                    let name = str_of(data, "toolName").unwrap_or_default().to_string();
                    self.tool_call(&c, &id, &name, data.get("arguments"), None, None);
                }
            }
            "tool.execution_complete" => self.tool_complete(&c, data),
            "subagent.started" | "subagent.completed" | "subagent.failed" => {
                self.subagent_event(&c, ty, data)
            }
            "session.compaction_complete" => self.compaction(&c, data),
            "session.shutdown" => self.shutdown(&c, data),
            "session.error" | "abort" => self.error_event(&c, ty, data),
            "session.info" | "session.warning" => {
                self.note(&c, str_of(data, "message").unwrap_or_default().to_string())
            }
            "session.truncation" => self.note(&c, "context truncated".into()),
            "system.message" | "system.notification" => {
                self.note(&c, str_of(data, "content").unwrap_or_default().to_string())
            }
            "hook.start" | "hook.end" => {
                let hook = str_of(data, "hookType").unwrap_or("hook");
                let what = if ty == "hook.start" {
                    "started"
                } else {
                    "ended"
                };
                self.note(&c, format!("hook {hook} {what}"));
            }
            _ => {
                let mut m = self.message(&c, Role::System, MessageKind::Unknown, String::new());
                m.extra = Some(raw.to_string());
                self.push(&c, m);
            }
        }
    }

    fn session_start(&mut self, data: &Value) {
        if let Some(id) = str_of(data, "sessionId") {
            if self.st.native_id.is_none() {
                self.st.native_id = Some(id.to_string());
            }
        }
        let version = str_of(data, "copilotVersion")
            .map(str::to_string)
            .or_else(|| str_of(data, "version").map(str::to_string));
        if version.is_some() {
            self.st.agent_version = version;
        }
        if let Some(m) = str_of(data, "selectedModel") {
            self.st.current_model = Some(m.to_string());
            self.observe_model(None, m);
        }
        self.apply_context(data);
    }

    /// A resumed session starts a new segment of the log.
    fn session_resume(&mut self, c: &Ctx, data: &Value) {
        self.st.segment = self.st.segment.saturating_add(1);
        self.st.emitted.clear();
        if let Some(m) = str_of(data, "selectedModel") {
            self.st.current_model = Some(m.to_string());
            self.observe_model(None, m);
        }
        self.apply_context(data);
        self.note(c, "session resumed".into());
    }

    fn model_change(&mut self, c: &Ctx, data: &Value) {
        let new = str_of(data, "newModel").unwrap_or_default().to_string();
        if !new.is_empty() {
            self.st.current_model = Some(new.clone());
            self.observe_model(c.sub, &new);
        }
        let mut m = self.message(
            c,
            Role::System,
            MessageKind::Meta,
            format!("model changed to {new}"),
        );
        m.model = (!new.is_empty()).then_some(new);
        self.push(c, m);
    }

    /// `session.error` and `abort`: an error message with the detail the event gives.
    fn error_event(&mut self, c: &Ctx, ty: &str, data: &Value) {
        let detail = str_of(data, "message")
            .or_else(|| str_of(data, "reason"))
            .or_else(|| str_of(data, "errorType"))
            .unwrap_or_default();
        let text = if ty == "abort" {
            format!("aborted: {detail}")
                .trim_end_matches([':', ' '])
                .to_string()
        } else {
            detail.to_string()
        };
        let mut m = self.message(c, Role::System, MessageKind::Error, text);
        m.is_error = true;
        self.push(c, m);
    }

    /// A system note.
    fn note(&mut self, c: &Ctx, text: String) {
        let m = self.message(c, Role::System, MessageKind::Meta, text);
        self.push(c, m);
    }

    /// The model an assistant event ran on: its own field, else (main session) the current one.
    fn model_for(&self, sub: Option<&str>, data: &Value) -> Option<String> {
        str_of(data, "model").map(str::to_string).or_else(|| {
            if sub.is_none() {
                self.st.current_model.clone()
            } else {
                None
            }
        })
    }

    fn user_message(&mut self, c: &Ctx<'_>, data: &Value) {
        let text = str_of(data, "content")
            .or_else(|| str_of(data, "prompt"))
            .or_else(|| str_of(data, "transformedContent"))
            .unwrap_or_default()
            .to_string();
        if c.sub.is_none() && self.st.first_prompt.is_none() {
            let t = text.trim();
            if !t.is_empty() {
                self.st.first_prompt = Some(truncate_chars(t, TITLE_CHARS).trim().to_string());
            }
        }
        let m = self.message(c, Role::User, MessageKind::Prompt, text.clone());
        self.push(c, m);
        self.add_refs(c, &text, false);
    }

    fn assistant_message(&mut self, c: &Ctx<'_>, data: &Value) {
        let model = self.model_for(c.sub, data);
        if let Some(m) = str_of(data, "model") {
            self.observe_model(c.sub, m);
        }
        let mut first_seq = None;
        if let Some(r) = str_of(data, "reasoningText") {
            let mut m = self.message(c, Role::Assistant, MessageKind::Thinking, r.to_string());
            m.model = model.clone();
            first_seq = Some(self.push(c, m));
        }
        let content = str_of(data, "content")
            .or_else(|| str_of(data, "output"))
            .unwrap_or_default()
            .to_string();
        let requests: Vec<&Value> = data
            .get("toolRequests")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter(|r| r.is_object()).collect())
            .unwrap_or_default();
        if !content.is_empty() || (first_seq.is_none() && requests.is_empty()) {
            let mut m = self.message(c, Role::Assistant, MessageKind::Text, content.clone());
            m.model = model.clone();
            let seq = self.push(c, m);
            first_seq.get_or_insert(seq);
            self.add_refs(c, &content, false);
        }
        for r in requests {
            let id = str_of(r, "toolCallId").unwrap_or_default().to_string();
            if !id.is_empty() && self.slot(c.sub).0.open_calls.contains_key(&id) {
                continue;
            }
            let name = str_of(r, "name").unwrap_or_default().to_string();
            let seq = self.tool_call(
                c,
                &id,
                &name,
                r.get("arguments"),
                str_of(r, "intentionSummary"),
                model.clone(),
            );
            first_seq.get_or_insert(seq);
        }
        if let Some(out) = u64_of(data, "outputTokens") {
            let key_id = str_of(data, "messageId")
                .map(str::to_string)
                .or_else(|| c.id.clone())
                .unwrap_or_default();
            let u = Usage {
                request_key: format!("msg:{key_id}@{}", c.line),
                message_id: str_of(data, "messageId").map(str::to_string),
                message_seq: first_seq,
                model: model.clone(),
                output_tokens: out,
                tokens_known: out > 0,
                ..Usage::default()
            };
            self.add_usage(c, u);
        }
    }

    fn tool_call(
        &mut self,
        c: &Ctx<'_>,
        id: &str,
        name: &str,
        args: Option<&Value>,
        intent: Option<&str>,
        model: Option<String>,
    ) -> u32 {
        let input = args_text(args);
        let mut m = self.message(
            c,
            Role::Assistant,
            MessageKind::ToolCall,
            intent.unwrap_or_default().to_string(),
        );
        m.tool_name = (!name.is_empty()).then(|| name.to_string());
        m.tool_call_id = (!id.is_empty()).then(|| id.to_string());
        m.tool_input = input.clone();
        m.model = model;
        if name == "task" && !id.is_empty() {
            m.agent_ref = Some(id.to_string());
        }
        let seq = self.push(c, m);
        if !id.is_empty() {
            self.slot(c.sub)
                .0
                .open_calls
                .insert(id.to_string(), name.to_string());
        }
        if let Some(a) = args {
            if let Some(path) = file_of_call(name, &args_value(a)) {
                self.add_file(c, path, name);
            }
        }
        if let Some(input) = input {
            self.add_refs(c, &input, false);
        }
        seq
    }

    fn tool_complete(&mut self, c: &Ctx<'_>, data: &Value) {
        let id = str_of(data, "toolCallId").unwrap_or_default().to_string();
        let name = self
            .slot(c.sub)
            .0
            .open_calls
            .remove(&id)
            .filter(|n| !n.is_empty())
            .or_else(|| str_of(data, "toolName").map(str::to_string));
        if let Some(model) = str_of(data, "model") {
            self.observe_model(c.sub, model);
        }
        let error = error_text(data);
        let success = data
            .get("success")
            .and_then(Value::as_bool)
            .unwrap_or(error.is_none());
        let output = data.get("result").and_then(result_text).or(error.clone());
        let text = if success {
            String::new()
        } else {
            error.unwrap_or_default()
        };
        let mut m = self.message(c, Role::Tool, MessageKind::ToolResult, text);
        m.tool_call_id = (!id.is_empty()).then(|| id.clone());
        m.tool_name = name.clone();
        m.tool_output = output.clone();
        m.is_error = !success;
        m.model = str_of(data, "model").map(str::to_string);
        self.push(c, m);
        if let (Some(name), Some(out)) = (name, output) {
            if SHELL_TOOLS.contains(&name.as_str()) {
                self.add_refs(c, &out, true);
            }
        }
    }

    fn subagent_event(&mut self, c: &Ctx<'_>, ty: &str, data: &Value) {
        let call = str_of(data, "toolCallId").unwrap_or_default().to_string();
        let name = str_of(data, "agentDisplayName")
            .or_else(|| str_of(data, "agentName"))
            .unwrap_or("subagent")
            .to_string();
        if !call.is_empty() {
            let ss = self.st.subs.entry(call.clone()).or_default();
            if ss.title.is_none() {
                ss.title = Some(name.clone());
            }
            if let Some(a) = str_of(data, "agentName") {
                ss.agent_ref.get_or_insert_with(|| a.to_string());
            }
            if let Some(m) = str_of(data, "model") {
                self.observe_model(Some(&call), m);
            }
        }
        let (kind, what) = match ty {
            "subagent.started" => (MessageKind::Meta, "started"),
            "subagent.completed" => (MessageKind::Meta, "completed"),
            _ => (MessageKind::Error, "failed"),
        };
        let mut text = format!("subagent {name} {what}");
        if let Some(e) = str_of(data, "error") {
            text = format!("{text}: {e}");
        }
        let mut m = self.message(c, Role::System, kind, text);
        m.is_error = kind == MessageKind::Error;
        m.agent_ref = (!call.is_empty()).then_some(call);
        self.push(c, m);
    }

    fn compaction(&mut self, c: &Ctx<'_>, data: &Value) {
        let mut marker = self.message(
            c,
            Role::System,
            MessageKind::Compaction,
            "compaction".into(),
        );
        if data.get("success").and_then(Value::as_bool) == Some(false) {
            marker.text = "compaction failed".into();
            marker.is_error = true;
        }
        self.push(c, marker);
        let summary = str_of(data, "summaryContent").map(str::to_string);
        if let Some(s) = &summary {
            let m = self.message(c, Role::System, MessageKind::Summary, s.clone());
            self.push(c, m);
        }
        if c.sub.is_none() {
            let file = str_of(data, "checkpointPath")
                .and_then(|p| p.rsplit(['/', '\\']).next())
                .filter(|n| n.ends_with(".md"))
                .map(str::to_string);
            let from_file = file.as_ref().and_then(|name| {
                let dir = self.session_dir.as_ref()?.join("checkpoints");
                let text = read_text(&dir.join(name))?;
                Some((name.clone(), text))
            });
            match from_file {
                Some((name, _)) if self.st.checkpoint_files.contains(&name) => {}
                Some((name, text)) => {
                    self.st.checkpoint_files.insert(name.clone());
                    let title = title_from_file_name(&name);
                    self.add_checkpoint(&text, title, c.ts.clone());
                }
                None => {
                    if let Some(s) = &summary {
                        if let Some(name) = file {
                            self.st.checkpoint_files.insert(name);
                        }
                        self.add_checkpoint(s, None, c.ts.clone());
                    }
                }
            }
        }
        if let Some(u) = data.get("compactionTokensUsed").filter(|u| u.is_object()) {
            let usage = Usage {
                request_key: format!("compaction@{}", c.line),
                model: str_of(u, "model").map(str::to_string),
                // Older CLIs wrote `input`/`output`/`cachedInput`.
                input_tokens: u64_of(u, "inputTokens")
                    .or_else(|| u64_of(u, "input"))
                    .unwrap_or(0),
                output_tokens: u64_of(u, "outputTokens")
                    .or_else(|| u64_of(u, "output"))
                    .unwrap_or(0),
                cache_read_tokens: u64_of(u, "cacheReadTokens")
                    .or_else(|| u64_of(u, "cachedInput"))
                    .unwrap_or(0),
                cache_creation_tokens: u64_of(u, "cacheWriteTokens").unwrap_or(0),
                tokens_known: true,
                ..Usage::default()
            };
            if let Some(m) = &usage.model {
                let m = m.clone();
                self.observe_model(c.sub, &m);
            }
            self.add_usage(c, usage);
        }
    }

    fn add_checkpoint(&mut self, text: &str, title: Option<String>, at: Option<String>) {
        self.st.checkpoints = self.st.checkpoints.saturating_add(1);
        let mut cp = checkpoint_from_text(text);
        cp.number = self.st.checkpoints;
        if cp.title.is_none() {
            cp.title = title;
        }
        cp.created_at = at;
        self.main.checkpoints.push(cp);
    }

    fn shutdown(&mut self, c: &Ctx<'_>, data: &Value) {
        let kind = str_of(data, "shutdownType").unwrap_or("ended");
        let m = self.message(
            c,
            Role::System,
            MessageKind::Meta,
            format!("session ended ({kind})"),
        );
        let seq = self.push(c, m);
        let mut totals: Vec<(String, Tokens, u64)> = Vec::new();
        // Premium requests per model: `modelMetrics[model].requests.cost` is the model's
        // request count with its premium multiplier applied (a unit of the plan, never
        // dollars); `totalPremiumRequests` is their sum for the process.
        let mut premium: BTreeMap<String, f64> = BTreeMap::new();
        if let Some(metrics) = data.get("modelMetrics").and_then(Value::as_object) {
            for (model, mm) in metrics {
                if let Some(cost) = mm
                    .get("requests")
                    .and_then(|r| r.get("cost"))
                    .and_then(Value::as_f64)
                {
                    premium.insert(model.clone(), cost);
                }
                if let Some(u) = mm.get("usage").filter(|u| u.is_object()) {
                    let t = Tokens {
                        input: u64_of(u, "inputTokens").unwrap_or(0),
                        output: u64_of(u, "outputTokens").unwrap_or(0),
                        cache_read: u64_of(u, "cacheReadTokens").unwrap_or(0),
                        cache_write: u64_of(u, "cacheWriteTokens").unwrap_or(0),
                    };
                    totals.push((model.clone(), t, u64_of(u, "reasoningTokens").unwrap_or(0)));
                }
            }
        }
        let total_premium = data.get("totalPremiumRequests").and_then(Value::as_f64);
        if totals.is_empty() {
            if let Some(td) = data.get("tokenDetails").filter(|t| t.is_object()) {
                let count = |k: &str| td.get(k).and_then(|x| u64_of(x, "tokenCount")).unwrap_or(0);
                let single = data
                    .get("modelMetrics")
                    .and_then(Value::as_object)
                    .filter(|m| m.len() == 1)
                    .and_then(|m| m.keys().next().cloned());
                let model = str_of(data, "currentModel")
                    .map(str::to_string)
                    .or(single)
                    .or_else(|| self.st.current_model.clone())
                    .unwrap_or_default();
                let t = Tokens {
                    input: count("input"),
                    output: count("output"),
                    cache_read: count("cache_read"),
                    cache_write: count("cache_write"),
                };
                totals.push((model, t, 0));
            }
        }
        let single_model = totals.len() == 1;
        for (model, t, reasoning) in totals {
            let premium_requests = premium
                .get(&model)
                .copied()
                .or(total_premium.filter(|_| single_model))
                .unwrap_or(0.0);
            let done = self.st.emitted.get(&model).copied().unwrap_or_default();
            let rest = Tokens {
                input: t.input.saturating_sub(done.input),
                output: t.output.saturating_sub(done.output),
                cache_read: t.cache_read.saturating_sub(done.cache_read),
                cache_write: t.cache_write.saturating_sub(done.cache_write),
            };
            if rest == Tokens::default() && reasoning == 0 {
                continue;
            }
            if !model.is_empty() {
                self.observe_model(None, &model);
            }
            let u = Usage {
                request_key: format!("shutdown@{}:{model}", c.line),
                message_seq: Some(seq),
                model: (!model.is_empty()).then_some(model),
                timestamp: c.ts.clone(),
                input_tokens: rest.input,
                output_tokens: rest.output,
                cache_read_tokens: rest.cache_read,
                cache_creation_tokens: rest.cache_write,
                reasoning_tokens: reasoning,
                tokens_known: true,
                premium_requests,
                ..Usage::default()
            };
            self.main.usage.push(u);
        }
        // The totals were per process lifetime: the next lifetime starts from zero.
        self.st.emitted.clear();
    }

    /// Builds the output sessions and updates the state's session facts.
    fn finish(
        &mut self,
        path: &Path,
        mode: UpdateMode,
        extras: Option<&StoreExtras>,
    ) -> Vec<Session> {
        if self.st.events == 0 || !self.st.conversation {
            // Nothing in the log yet (its folder may only hold workspace.yaml), or a log that
            // lost its start and holds no prompt, answer or tool event: no session, wherever
            // the file lies (`parse_file` says why).
            return Vec::new();
        }
        // Checkpoint files no compaction event named.
        if let Some(dir) = self.session_dir.clone() {
            for (name, text) in checkpoint_files(&dir.join("checkpoints")) {
                if self.st.checkpoint_files.insert(name.clone()) {
                    let title = title_from_file_name(&name);
                    self.add_checkpoint(&text, title, None);
                }
            }
        }
        let workspace = self
            .session_dir
            .as_ref()
            .and_then(|d| read_text(&d.join("workspace.yaml")))
            .map(|t| parse_simple_yaml(&t))
            .unwrap_or_default();
        let ws = |k: &str| workspace.get(k).filter(|v| !v.is_empty()).cloned();

        if self.st.native_id.is_none() {
            let from_path = if path.file_name().is_some_and(|n| n == EVENTS_FILE) {
                path.parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
            } else {
                path.file_stem().map(|n| n.to_string_lossy().into_owned())
            };
            self.st.native_id = ws("id").or(from_path);
        }
        let Some(native) = self.st.native_id.clone() else {
            return Vec::new();
        };
        let id = if ids::is_uuid(&native) {
            native.clone()
        } else {
            format!("{}:{native}", SourceKind::CopilotCli.as_str())
        };
        let store = extras.and_then(|e| e.sessions.get(&native).or_else(|| e.sessions.get(&id)));

        let mut meta =
            SessionMeta::new(SessionId::new(id.clone()), SourceKind::CopilotCli, &native);
        meta.title = ws("summary")
            .or_else(|| self.st.event_title.clone())
            .or_else(|| store.and_then(|s| s.summary.clone()))
            .or_else(|| self.st.first_prompt.clone())
            .map(|t| truncate_chars(t.trim(), TITLE_CHARS).to_string())
            .filter(|t| !t.is_empty());
        meta.cwd = ws("cwd")
            .or_else(|| self.st.cwd.clone())
            .or_else(|| store.and_then(|s| s.cwd.clone()));
        meta.repository = ws("repository")
            .filter(|r| looks_like_repo(r))
            .or_else(|| self.st.repository.clone())
            .or_else(|| store.and_then(|s| s.repository.clone()));
        meta.branch = ws("branch")
            .or_else(|| self.st.branch.clone())
            .or_else(|| store.and_then(|s| s.branch.clone()));
        meta.agent_version = self.st.agent_version.clone();
        meta.created_at = self.st.main.created_at.clone();
        meta.updated_at = self.st.main.updated_at.clone();

        if let Some(s) = store {
            if self.st.checkpoints == 0 && !self.st.store_checkpoints && !s.checkpoints.is_empty() {
                self.st.store_checkpoints = true;
                for cp in &s.checkpoints {
                    self.st.checkpoints += 1;
                    let mut cp = cp.clone();
                    cp.number = self.st.checkpoints;
                    self.main.checkpoints.push(cp);
                }
            }
        }

        let mut out = Vec::new();
        let mut main = std::mem::replace(&mut self.main, placeholder_session());
        // The plan the session keeps beside its log (Chronicle's workspace artifact).
        if let Some(plan) = self.session_dir.as_ref().and_then(|d| plan_artifact(d)) {
            main.artifacts.push(plan);
        }
        finish_session(&mut main, meta.clone(), &self.st.main, mode);
        out.push(main);

        let subs = std::mem::take(&mut self.subs);
        for (call, mut sess) in subs {
            let Some(ss) = self.st.subs.get(&call) else {
                continue;
            };
            let mut m = SessionMeta::new(
                SessionId::new(format!("{id}:agent:{call}")),
                SourceKind::CopilotCli,
                format!("{native}:agent:{call}"),
            );
            m.title = ss.title.clone();
            m.cwd = meta.cwd.clone();
            m.repository = meta.repository.clone();
            m.branch = meta.branch.clone();
            m.agent_version = meta.agent_version.clone();
            m.created_at = ss.created_at.clone();
            m.updated_at = ss.updated_at.clone();
            m.parent = Some(ParentLink {
                session_id: SessionId::new(id.clone()),
                tool_call_id: Some(call.clone()),
                agent_ref: ss.agent_ref.clone(),
            });
            // `subagent.started`'s agentName: the custom agent or subagent that ran.
            m.agent_description = ss.agent_ref.clone();
            finish_session(&mut sess, m, ss, mode);
            out.push(sess);
        }
        out
    }
}

fn observe_ts(ss: &mut SessState, ts: &str) {
    if ss.created_at.as_deref().is_none_or(|c| ts < c) {
        ss.created_at = Some(ts.to_string());
    }
    if ss.updated_at.as_deref().is_none_or(|u| ts > u) {
        ss.updated_at = Some(ts.to_string());
    }
}

fn finish_session(sess: &mut Session, meta: SessionMeta, ss: &SessState, mode: UpdateMode) {
    sess.meta = meta;
    sess.mode = mode;
    sess.models = ss.models.clone();
    sess.turn_count = ss.turns;
    if mode == UpdateMode::Replace {
        let order: Vec<usize> = (0..sess.messages.len()).collect();
        // Same rule as the running count kept for appends (a prompt opens a turn).
        sess.turn_count = trail_model::turns::assign_turn_indexes(&mut sess.messages, &order);
        sess.turns = trail_model::turns::build_turns(&sess.messages);
    }
}

/// `plan.md` in the session's folder, as Chronicle indexes it (`workspace_artifact`).
fn plan_artifact(dir: &Path) -> Option<WorkspaceArtifact> {
    let path = dir.join("plan.md");
    let content = String::from_utf8_lossy(&std::fs::read(&path).ok()?).into_owned();
    (!content.trim().is_empty()).then(|| WorkspaceArtifact {
        path: path.to_string_lossy().into_owned(),
        content,
    })
}

// ---------------------------------------------------------------------------------------------
// Checkpoints

/// Lists `checkpoints/*.md` (without `index.md`), sorted by name, with their text.
fn checkpoint_files(dir: &Path) -> Vec<(String, String)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && !n.eq_ignore_ascii_case("index.md"))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|n| {
            let text = read_text(&dir.join(&n))?;
            Some((n, text))
        })
        .collect()
}

/// `003-fix-the-parser.md` -> `fix the parser`.
fn title_from_file_name(name: &str) -> Option<String> {
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let t = stem
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '_')
        .replace(['-', '_'], " ");
    let t = t.trim();
    (!t.is_empty()).then(|| t.to_string())
}

#[derive(Clone, Copy, PartialEq)]
enum Section {
    Title,
    Overview,
    History,
    WorkDone,
    Technical,
    Files,
    NextSteps,
}

fn section_of(name: &str) -> Option<Section> {
    let n: String = name
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let n = n.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(if n.contains("title") {
        Section::Title
    } else if n.contains("overview") || n == "summary" {
        Section::Overview
    } else if n.contains("history") {
        Section::History
    } else if n.contains("work done")
        || n.contains("completed")
        || n.contains("accomplished")
        || n.contains("progress")
    {
        Section::WorkDone
    } else if n.contains("technical") {
        Section::Technical
    } else if n.contains("file") {
        Section::Files
    } else if n.contains("next step") || n.contains("remaining") || n.contains("todo") {
        Section::NextSteps
    } else {
        return None;
    })
}

fn set_section(cp: &mut Checkpoint, s: Section, text: String) {
    let text = text.trim().to_string();
    if text.is_empty() {
        return;
    }
    let slot = match s {
        Section::Title => &mut cp.title,
        Section::Overview => &mut cp.overview,
        Section::History => &mut cp.history,
        Section::WorkDone => &mut cp.work_done,
        Section::Technical => &mut cp.technical_details,
        Section::Files => &mut cp.important_files,
        Section::NextSteps => &mut cp.next_steps,
    };
    match slot {
        Some(old) => {
            old.push_str("\n\n");
            old.push_str(&text);
        }
        None => *slot = Some(text),
    }
}

/// Maps a compaction summary onto Chronicle's checkpoint columns: `<overview>…</overview>`-style
/// tags first, else markdown headings; text that matches neither is the overview.
fn checkpoint_from_text(text: &str) -> Checkpoint {
    let mut cp = Checkpoint::default();
    const TAGS: &[(&str, Section)] = &[
        ("checkpoint_title", Section::Title),
        ("title", Section::Title),
        ("overview", Section::Overview),
        ("history", Section::History),
        ("work_done", Section::WorkDone),
        ("technical_details", Section::Technical),
        ("important_files", Section::Files),
        ("next_steps", Section::NextSteps),
    ];
    let mut tagged = false;
    for (tag, s) in TAGS {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        if let Some(start) = text.find(&open) {
            let body = &text[start + open.len()..];
            let end = body.find(&close).unwrap_or(body.len());
            if *s == Section::Title && cp.title.is_some() {
                continue;
            }
            set_section(&mut cp, *s, body[..end].to_string());
            tagged = true;
        }
    }
    if tagged {
        return cp;
    }
    let mut current: Option<Section> = None;
    let mut buf = String::new();
    let mut preamble = String::new();
    let mut any = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let level = trimmed.chars().take_while(|c| *c == '#').count();
        let is_heading = level > 0 && trimmed[level..].starts_with(' ');
        if is_heading {
            let name = trimmed[level..].trim();
            match section_of(name) {
                Some(s) => {
                    if let Some(cur) = current {
                        set_section(&mut cp, cur, std::mem::take(&mut buf));
                    }
                    current = Some(s);
                    any = true;
                    continue;
                }
                None if level == 1 && cp.title.is_none() && current.is_none() => {
                    cp.title = Some(name.to_string());
                    continue;
                }
                None => {}
            }
        }
        let target = if current.is_some() {
            &mut buf
        } else {
            &mut preamble
        };
        target.push_str(line);
        target.push('\n');
    }
    if let Some(cur) = current {
        set_section(&mut cp, cur, buf);
    }
    if !any || (cp.overview.is_none() && !preamble.trim().is_empty()) {
        let pre = preamble.trim().to_string();
        if !pre.is_empty() {
            match &mut cp.overview {
                Some(o) => *o = format!("{pre}\n\n{o}"),
                None => cp.overview = Some(pre),
            }
        }
    }
    cp
}

// ---------------------------------------------------------------------------------------------
// workspace.yaml

/// Reads top-level `key: value` pairs of a simple YAML file. Values may be single- or
/// double-quoted or block scalars (`|`, `>`); nested mappings and lists are skipped.
fn parse_simple_yaml(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.starts_with([' ', '\t', '#', '-']) || line.trim().is_empty() {
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']).to_string();
        let rest = rest.trim();
        let value = if rest.starts_with('|') || rest.starts_with('>') {
            let folded = rest.starts_with('>');
            let keep_trailing = rest.contains('+');
            let mut block: Vec<&str> = Vec::new();
            while i < lines.len()
                && (lines[i].trim().is_empty() || lines[i].starts_with([' ', '\t']))
            {
                block.push(lines[i]);
                i += 1;
            }
            let indent = block
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| l.len() - l.trim_start().len())
                .min()
                .unwrap_or(0);
            let body: Vec<&str> = block
                .iter()
                .map(|l| l.get(indent..).unwrap_or("").trim_end())
                .collect();
            let joined = if folded {
                body.join(" ")
            } else {
                body.join("\n")
            };
            if keep_trailing {
                joined
            } else {
                joined.trim_end().to_string()
            }
        } else {
            unquote_yaml(rest)
        };
        out.insert(key, value);
    }
    out
}

fn unquote_yaml(v: &str) -> String {
    if let Some(body) = v.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = body.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some('0') => out.push('\0'),
                    Some(o) => out.push(o),
                    None => break,
                },
                o => out.push(o),
            }
        }
        out
    } else if let Some(body) = v.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = body.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    out.push('\'');
                } else {
                    break;
                }
            } else {
                out.push(c);
            }
        }
        out
    } else {
        let v = match v.find(" #") {
            Some(i) => &v[..i],
            None => v,
        };
        let v = v.trim();
        if v == "~" || v == "null" {
            String::new()
        } else {
            v.to_string()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// session-store.db

fn db_error(path: &Path, e: impl std::fmt::Display) -> SourceError {
    SourceError::Database {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Builds a `file:` URI, escaping what SQLite's URI parser would read as syntax.
fn sqlite_uri(path: &Path) -> String {
    let mut out = String::from("file:");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'%' | b'?' | b'#' => out.push_str(&format!("%{b:02X}")),
            _ => out.push(b as char),
        }
    }
    out.push_str("?mode=ro");
    out
}

/// Reads `session-store.db` (the Chronicle schema) without writing to it or taking more than a
/// read lock: opened with `mode=ro`; when that cannot read it (the owner holds the WAL, or the
/// `-shm` cannot be created), the database and its `-wal` are copied into a private temporary
/// folder, read there, and the copy is removed. Tables and columns are detected, not assumed.
pub fn read_session_store(path: &Path) -> Result<StoreExtras, SourceError> {
    if !path.is_file() {
        return Err(SourceError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        ));
    }
    // A WAL database without its `-shm` would make even a read-only connection create one in
    // the agent's folder: read a copy instead.
    if is_wal_database(path) && !sibling(path, "-shm").exists() {
        return read_store_copy(path);
    }
    match read_store_in_place(path) {
        Ok(x) => Ok(x),
        Err(first) => {
            tracing::debug!(path = %path.display(), "reading a private copy of the store");
            read_store_copy(path).map_err(|_| first)
        }
    }
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// Whether the database header says WAL (file format read and write versions 2).
fn is_wal_database(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && head[18] == 2
        && head[19] == 2
}

fn read_store_in_place(path: &Path) -> Result<StoreExtras, SourceError> {
    use rusqlite::OpenFlags;
    let conn = rusqlite::Connection::open_with_flags(
        sqlite_uri(path),
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| db_error(path, e))?;
    conn.busy_timeout(std::time::Duration::from_millis(2000))
        .map_err(|e| db_error(path, e))?;
    query_store(&conn, path)
}

fn read_store_copy(path: &Path) -> Result<StoreExtras, SourceError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "trail-copilot-store-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir(&dir).map_err(|e| SourceError::io(&dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    }
    let result = (|| {
        let copy = dir.join("session-store.db");
        std::fs::copy(path, &copy).map_err(|e| SourceError::io(path, e))?;
        let wal = sibling(path, "-wal");
        if wal.is_file() {
            std::fs::copy(&wal, dir.join("session-store.db-wal"))
                .map_err(|e| SourceError::io(&wal, e))?;
        }
        let conn = rusqlite::Connection::open_with_flags(
            &copy,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| db_error(path, e))?;
        query_store(&conn, path)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn columns(conn: &rusqlite::Connection, table: &str) -> Result<BTreeSet<String>, rusqlite::Error> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1)",
        [table],
        |r| r.get(0),
    )?;
    if !exists {
        return Ok(BTreeSet::new());
    }
    let mut stmt = conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(1))?
        .collect::<Result<BTreeSet<_>, _>>()?;
    Ok(names)
}

fn value_text(v: rusqlite::types::Value) -> Option<String> {
    use rusqlite::types::Value as V;
    match v {
        V::Null => None,
        V::Integer(i) => Some(i.to_string()),
        V::Real(f) => Some(f.to_string()),
        V::Text(s) => Some(s),
        V::Blob(b) => Some(String::from_utf8_lossy(&b).into_owned()),
    }
    .filter(|s| !s.is_empty())
}

fn query_store(conn: &rusqlite::Connection, path: &Path) -> Result<StoreExtras, SourceError> {
    let err = |e: rusqlite::Error| db_error(path, e);
    let mut out = StoreExtras::default();
    let scols = columns(conn, "sessions").map_err(err)?;
    if scols.contains("id") {
        let wanted = [
            "summary",
            "cwd",
            "repository",
            "branch",
            "created_at",
            "updated_at",
        ];
        let present: Vec<&str> = wanted
            .iter()
            .copied()
            .filter(|c| scols.contains(*c))
            .collect();
        let mut sql = String::from("SELECT id");
        for c in &present {
            sql.push_str(&format!(", \"{c}\""));
        }
        sql.push_str(" FROM sessions");
        let mut stmt = conn.prepare(&sql).map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            let Some(id) = value_text(row.get(0).map_err(err)?) else {
                continue;
            };
            let mut s = StoreSession::default();
            for (i, c) in present.iter().enumerate() {
                let v = value_text(row.get(i + 1).map_err(err)?);
                match *c {
                    "summary" => s.summary = v,
                    "cwd" => s.cwd = v,
                    "repository" => s.repository = v,
                    "branch" => s.branch = v,
                    "created_at" => s.created_at = v.and_then(|t| time::normalize(&t).or(Some(t))),
                    _ => s.updated_at = v.and_then(|t| time::normalize(&t).or(Some(t))),
                }
            }
            out.sessions.insert(id, s);
        }
    }
    let ccols = columns(conn, "checkpoints").map_err(err)?;
    if ccols.contains("session_id") {
        let wanted = [
            "title",
            "overview",
            "history",
            "work_done",
            "technical_details",
            "important_files",
            "next_steps",
            "created_at",
        ];
        let present: Vec<&str> = wanted
            .iter()
            .copied()
            .filter(|c| ccols.contains(*c))
            .collect();
        let number = if ccols.contains("checkpoint_number") {
            "checkpoint_number"
        } else {
            "rowid"
        };
        let mut sql = format!("SELECT session_id, {number}");
        for c in &present {
            sql.push_str(&format!(", \"{c}\""));
        }
        sql.push_str(&format!(" FROM checkpoints ORDER BY session_id, {number}"));
        let mut stmt = conn.prepare(&sql).map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            let Some(sid) = value_text(row.get(0).map_err(err)?) else {
                continue;
            };
            let n: Option<i64> = row.get::<_, Option<i64>>(1).ok().flatten();
            let mut cp = Checkpoint {
                number: n.and_then(|n| u32::try_from(n).ok()).unwrap_or(0),
                ..Checkpoint::default()
            };
            for (i, c) in present.iter().enumerate() {
                let v = value_text(row.get(i + 2).map_err(err)?);
                match *c {
                    "title" => cp.title = v,
                    "overview" => cp.overview = v,
                    "history" => cp.history = v,
                    "work_done" => cp.work_done = v,
                    "technical_details" => cp.technical_details = v,
                    "important_files" => cp.important_files = v,
                    "next_steps" => cp.next_steps = v,
                    _ => cp.created_at = v.and_then(|t| time::normalize(&t).or(Some(t))),
                }
            }
            out.sessions.entry(sid).or_default().checkpoints.push(cp);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_values_and_blocks() {
        let y = parse_simple_yaml(
            "id: abc\ncwd: \"/home/x/my \\\"proj\\\"\"\nbranch: 'it''s'\nsummary: |\n  line one\n  line two\nrepository: acme/widgets # comment\nnested:\n  a: b\n",
        );
        assert_eq!(y["id"], "abc");
        assert_eq!(y["cwd"], "/home/x/my \"proj\"");
        assert_eq!(y["branch"], "it's");
        assert_eq!(y["summary"], "line one\nline two");
        assert_eq!(y["repository"], "acme/widgets");
        assert!(!y.contains_key("a"));
    }

    #[test]
    fn checkpoint_sections_from_tags_and_headings() {
        let cp =
            checkpoint_from_text("<overview>Fixing X</overview>\n<next_steps>ship</next_steps>");
        assert_eq!(cp.overview.as_deref(), Some("Fixing X"));
        assert_eq!(cp.next_steps.as_deref(), Some("ship"));
        let cp = checkpoint_from_text(
            "# Parser work\n\n## Overview\nA\n\n## Work Done\nB\n### detail\nC\n## Important Files\nD\n",
        );
        assert_eq!(cp.title.as_deref(), Some("Parser work"));
        assert_eq!(cp.overview.as_deref(), Some("A"));
        assert_eq!(cp.work_done.as_deref(), Some("B\n### detail\nC"));
        assert_eq!(cp.important_files.as_deref(), Some("D"));
        let cp = checkpoint_from_text("just text");
        assert_eq!(cp.overview.as_deref(), Some("just text"));
    }

    #[test]
    fn uuid_and_repo_shapes() {
        assert!(ids::is_uuid("0f8fad5b-d9cb-469f-a165-70867728950e"));
        assert!(!ids::is_uuid("copilot_stage0_small"));
        assert!(looks_like_repo("acme/widgets"));
        assert!(!looks_like_repo("[trimmed for fixture]"));
        assert_eq!(
            sqlite_uri(Path::new("/a b/x?#%.db")),
            "file:/a b/x%3F%23%25.db?mode=ro"
        );
    }
}

#[cfg(test)]
mod store_tests {
    use super::*;

    fn make_store(dir: &Path) -> (PathBuf, rusqlite::Connection) {
        let db = dir.join("session-store.db");
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE sessions (id TEXT PRIMARY KEY, summary TEXT);
             INSERT INTO sessions VALUES ('s1', 'one');",
        )
        .unwrap();
        (db, c)
    }

    #[test]
    fn in_place_and_copy_read_the_same_committed_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let (db, writer) = make_store(tmp.path());
        writer
            .execute_batch("BEGIN IMMEDIATE; INSERT INTO sessions VALUES ('s2', 'two');")
            .unwrap();
        let a = read_store_in_place(&db).unwrap();
        let b = read_store_copy(&db).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.sessions.len(), 1);
        writer.execute_batch("COMMIT").unwrap();
        assert_eq!(read_store_copy(&db).unwrap().sessions.len(), 2);
    }
}
