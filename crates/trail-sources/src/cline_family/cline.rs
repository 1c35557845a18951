//! Cline and its forks Roo Code and Kilo Code: the task folders the VS Code extension keeps.
//!
//! Layout (under a VS Code host's user-data folder such as `~/.config/Code`, and the same under
//! Code - Insiders, VSCodium, Code - OSS, Cursor and Windsurf):
//! `User/globalStorage/<extension id>/tasks/<task id>/` with
//! - `ui_messages.json`: the chat as the extension shows it, an array of `ClineMessage`
//!   (`{ts, type: "say"|"ask", say|ask, text, ...}`). It is the session's timeline here: it has
//!   a time on every record, the prompts (`task`, `user_feedback`), answers (`text`,
//!   `completion_result`), reasoning, tool rows (`tool` with a JSON `ClineSayTool`),
//!   commands and their output, checkpoints, and each API request's tokens and cost
//!   (`api_req_started`, whose JSON text also holds the request sent, and so the previous
//!   tools' results: `[read_file for 'x'] Result:` ...).
//! - `api_conversation_history.json`: the Anthropic-shaped messages sent to the model. Read
//!   only when `ui_messages.json` is missing (it has no times of its own).
//! - `task_metadata.json`: `files_in_context` (path, how the file came in, read and edit
//!   times), `model_usage`, `environment_history` (the extension's version and host).
//!
//! One source kind per fork (`cline`, `roo-code`, `kilo-code`), sharing this module: the forks
//! keep the same files under their own extension folder, and a kind of its own gives each
//! fork its name in `list`, `usage --by source`, filters (`--source roo-code`) and `doctor`.
//!
//! Roo Code and Kilo Code differ where this module says so: the task's first message is a
//! `text` (Cline writes `task`), checkpoints are `checkpoint_saved` (text: the commit), a
//! whole-file write to an existing file shows as `editedExistingFile` with the new `content`
//! and a unified `diff`, `apply_diff` as `appliedDiff`, and context condensing as
//! `condense_context` with its summary.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use trail_model::turns::{assign_turn_indexes, build_turns};
use trail_model::{
    time, truncate_chars, Checkpoint, FileTouch, Message, MessageKind, Origin, ParseIssue,
    PromptSource, Role, Session, SessionMeta, SourceKind, Usage,
};

use crate::{ids, refs, whole, FileParse, ParseRequest, Source, SourceError};

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 2: the `HAS_CHANGES` flag Cline appends to a completion result is no longer answer text.
/// 3: a leading BOM is skipped; bytes after the document keep it, as a problem (issue 40).
pub const PARSER_VERSION: u32 = 3;

/// The UI log: the file discovery lists for a task.
pub const UI_MESSAGES: &str = "ui_messages.json";
/// The model-facing history beside it.
pub const API_HISTORY: &str = "api_conversation_history.json";
/// Files in context, models and the extension's version.
pub const TASK_METADATA: &str = "task_metadata.json";

/// Characters of the first prompt used as a title.
const TITLE_CHARS: usize = 200;

/// One of the three extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fork {
    pub kind: SourceKind,
    /// The extension's id as VS Code names its `globalStorage` folder (lower case).
    pub extension_id: &'static str,
    /// The product's name.
    pub name: &'static str,
}

/// Cline, Roo Code and Kilo Code.
pub const FORKS: [Fork; 3] = [
    Fork {
        kind: SourceKind::Cline,
        extension_id: "saoudrizwan.claude-dev",
        name: "Cline",
    },
    Fork {
        kind: SourceKind::RooCode,
        extension_id: "rooveterinaryinc.roo-cline",
        name: "Roo Code",
    },
    Fork {
        kind: SourceKind::KiloCode,
        extension_id: "kilocode.kilo-code",
        name: "Kilo Code",
    },
];

/// Returns the fork reading `kind`.
pub fn fork(kind: SourceKind) -> Option<Fork> {
    FORKS.into_iter().find(|f| f.kind == kind)
}

/// The task folders of one fork. Registered three times, once per fork.
pub struct ClineTasks(pub Fork);

impl ClineTasks {
    /// Cline.
    pub fn cline() -> Self {
        ClineTasks(FORKS[0])
    }
    /// Roo Code.
    pub fn roo_code() -> Self {
        ClineTasks(FORKS[1])
    }
    /// Kilo Code.
    pub fn kilo_code() -> Self {
        ClineTasks(FORKS[2])
    }
}

impl Source for ClineTasks {
    fn kind(&self) -> SourceKind {
        self.0.kind
    }

    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            for tasks in tasks_dirs(root, self.0) {
                out.extend(task_files(&tasks));
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        // By name (a copy may carry a prefix: `x-ui_messages.json`), then by the first
        // record's own keys.
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !(name.ends_with(UI_MESSAGES) || name.ends_with(API_HISTORY)) {
            return false;
        }
        let starts_array = head
            .iter()
            .find(|b| !b.is_ascii_whitespace() && **b != 0xEF && **b != 0xBB && **b != 0xBF)
            == Some(&b'[');
        let has = |k: &[u8]| memchr::memmem::find(head, k).is_some();
        let records = (has(b"\"ts\"") && (has(b"\"say\"") || has(b"\"ask\"")))
            || has(b"\"role\"")
            || head.len() < 16;
        starts_array && records && fork_of_path(path) == self.0.kind
    }

    fn appendable(&self, _path: &Path) -> bool {
        // The extension rewrites the whole file on every message.
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        parse_task(request.path, self.0)
    }
}

/// Returns the fork a task file belongs to, from the extension folder in its path (Cline when
/// none is named).
pub fn fork_of_path(path: &Path) -> SourceKind {
    for c in path.components().rev() {
        let c = c.as_os_str().to_string_lossy().to_ascii_lowercase();
        if let Some(f) = FORKS.iter().find(|f| f.extension_id == c) {
            return f.kind;
        }
    }
    SourceKind::Cline
}

/// The `tasks` folders a root stands for: a host's user-data folder, its `User` or
/// `globalStorage` folder, the extension's folder, or a `tasks` folder itself.
fn tasks_dirs(root: &Path, fork: Fork) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if root.file_name().is_some_and(|n| n == "tasks") && root.is_dir() {
        out.push(root.to_path_buf());
        return out;
    }
    let mut ext_dirs = Vec::new();
    for global in [
        root.join("User").join("globalStorage"),
        root.join("globalStorage"),
        root.to_path_buf(),
    ] {
        // VS Code names the folder by the extension id in lower case; match either case.
        if let Ok(entries) = std::fs::read_dir(&global) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().to_ascii_lowercase() == fork.extension_id {
                    ext_dirs.push(e.path());
                }
            }
        }
    }
    let root_name = root
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase());
    if root_name.as_deref() == Some(fork.extension_id) {
        ext_dirs.push(root.to_path_buf());
    }
    // A folder holding `tasks/` directly (Cline's CLI keeps `~/.cline/data/tasks`).
    if fork.kind == SourceKind::Cline && root.join("tasks").is_dir() && ext_dirs.is_empty() {
        ext_dirs.push(root.to_path_buf());
    }
    for d in ext_dirs {
        let t = d.join("tasks");
        if t.is_dir() {
            out.push(t);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// One file per task folder: `ui_messages.json`, else `api_conversation_history.json`.
fn task_files(tasks: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(tasks) else {
        return out;
    };
    for e in entries.flatten() {
        let dir = e.path();
        if !dir.is_dir() {
            continue;
        }
        let ui = dir.join(UI_MESSAGES);
        let api = dir.join(API_HISTORY);
        if ui.is_file() {
            out.push(ui);
        } else if api.is_file() {
            out.push(api);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Parsing

/// Reads a task file: its value, its length, and the problem of bytes after the value.
fn read_json(path: &Path) -> Result<(Value, u64, Option<ParseIssue>), SourceError> {
    let bytes = std::fs::read(path).map_err(|e| SourceError::io(path, e))?;
    let len = bytes.len() as u64;
    // Invalid UTF-8 inside strings is replaced, as it was when the file was read as text.
    let text = String::from_utf8_lossy(&bytes);
    let doc = whole::parse_json(path, text.as_bytes())
        .map_err(|e| SourceError::format(path, format!("not a Cline task file: {e}")))?;
    Ok((doc.value, len, doc.trailing))
}

/// Reads a side file of the task folder; a missing or unreadable one is `None` (noted).
fn side_json(dir: &Path, name: &str, notes: &mut Vec<String>) -> Option<Value> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).ok()?;
    match whole::parse_json(&path, &bytes) {
        Ok(doc) => Some(doc.value),
        Err(e) => {
            notes.push(format!("{name} not read: {e}"));
            None
        }
    }
}

fn parse_task(path: &Path, fork: Fork) -> Result<FileParse, SourceError> {
    let (root, len, trailing) = read_json(path)?;
    let Value::Array(records) = root else {
        return Err(SourceError::format(
            path,
            "not a Cline task file: the document is not an array",
        ));
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let in_task_folder = path
        .file_name()
        .is_some_and(|n| n == UI_MESSAGES || n == API_HISTORY);
    // The task's id is its folder's name; a file copied out of its folder is named by its stem.
    let task_id = if in_task_folder {
        dir.file_name()
    } else {
        path.file_stem()
    }
    .map(|n| n.to_string_lossy().into_owned())
    .filter(|s| !s.is_empty())
    .unwrap_or_else(|| "task".into());
    let mut out = FileParse {
        bytes_parsed: len,
        bytes_read: len,
        issues: trailing.into_iter().collect(),
        ..FileParse::default()
    };
    let metadata = if in_task_folder {
        side_json(dir, TASK_METADATA, &mut out.notes)
    } else {
        None
    };
    let mut meta = SessionMeta::new(ids::session_id(fork.kind, &task_id), fork.kind, &task_id);
    // The UI log's records are `{ts, type: say|ask}`; the API history's `{role, content}`.
    let is_ui = match records.iter().find(|r| r.is_object()) {
        Some(r) => r.get("role").is_none(),
        None => !path.to_string_lossy().ends_with(API_HISTORY),
    };
    let display = path.display().to_string();
    let mut b = Builder::new(fork, &display, metadata.as_ref());
    if is_ui {
        for (i, r) in records.iter().enumerate() {
            b.ui_record(i, r);
        }
    } else {
        for (i, r) in records.iter().enumerate() {
            b.api_record(i, r);
        }
    }
    b.finish_pending();
    meta.cwd = b.cwd.clone();
    meta.metadata = Some(json!({ "extension": fork.extension_id }));
    if let Some(m) = &metadata {
        apply_metadata(&mut meta, m);
    }
    let mut session = Session::new(meta);
    let Builder {
        messages,
        usage,
        models,
        checkpoints,
        files,
        issues,
        ..
    } = b;
    session.messages = messages;
    session.usage = usage;
    session.checkpoints = checkpoints;
    for m in &models {
        session.observe_model(m);
    }
    out.issues.extend(issues);
    finish_session(&mut session, files, metadata.as_ref());
    if session.messages.is_empty() {
        out.notes.push("task holds no messages".into());
        return Ok(out);
    }
    out.sessions.push(session);
    Ok(out)
}

/// The extension's version and host from `environment_history` (the last entry).
fn apply_metadata(meta: &mut SessionMeta, m: &Value) {
    let Some(env) = m
        .get("environment_history")
        .and_then(Value::as_array)
        .and_then(|a| a.last())
    else {
        return;
    };
    if let Some(v) = env.get("cline_version").and_then(Value::as_str) {
        meta.agent_version = Some(v.to_string());
    }
    if let Some(Value::Object(o)) = meta.metadata.as_mut() {
        for (from, to) in [("host_name", "host"), ("host_version", "hostVersion")] {
            if let Some(v) = env.get(from).and_then(Value::as_str) {
                o.insert(to.into(), Value::String(v.to_string()));
            }
        }
    }
}

/// A file a tool call named, resolved to a turn after turns are assigned.
struct PendingFile {
    path: String,
    tool: String,
    seq: Option<usize>,
    at: Option<String>,
}

/// Assigns turns, then files (tool calls first, then `files_in_context`) and refs.
fn finish_session(session: &mut Session, files: Vec<PendingFile>, metadata: Option<&Value>) {
    let order: Vec<usize> = (0..session.messages.len()).collect();
    for (i, m) in session.messages.iter_mut().enumerate() {
        m.seq = i as u32;
        m.on_main_chain = true;
        if let Some(ts) = &m.timestamp {
            session.meta.observe_timestamp(ts);
        }
    }
    session.turn_count = assign_turn_indexes(&mut session.messages, &order);
    session.turns = build_turns(&session.messages);
    let cwd = session.meta.cwd.clone();
    let turn_at = |ts: Option<&str>, msgs: &[Message]| -> Option<u32> {
        let ts = ts?;
        msgs.iter()
            .filter(|m| m.kind() == MessageKind::Prompt)
            .take_while(|m| m.timestamp.as_deref().is_some_and(|t| t <= ts))
            .last()
            .and_then(|m| m.turn_index)
    };
    for f in files {
        let turn_index = f
            .seq
            .and_then(|s| session.messages.get(s))
            .and_then(|m| m.turn_index);
        session.add_file(FileTouch {
            path: absolute(cwd.as_deref(), &f.path),
            tool_name: Some(f.tool),
            turn_index,
            first_seen_at: f.at,
        });
    }
    if let Some(list) = metadata
        .and_then(|m| m.get("files_in_context"))
        .and_then(Value::as_array)
    {
        for e in list {
            let Some(p) = e.get("path").and_then(Value::as_str) else {
                continue;
            };
            let at = ["cline_edit_date", "cline_read_date", "user_edit_date"]
                .iter()
                .filter_map(|k| e.get(*k).and_then(Value::as_i64))
                .min()
                .and_then(time::from_epoch_millis);
            let source = e
                .get("record_source")
                .and_then(Value::as_str)
                .unwrap_or("in_context");
            let turn_index = turn_at(at.as_deref(), &session.messages);
            session.add_file(FileTouch {
                path: absolute(cwd.as_deref(), p),
                tool_name: Some(source.to_string()),
                turn_index,
                first_seen_at: at,
            });
        }
    }
    let mut found = Vec::new();
    for m in &session.messages {
        let (text, git) = match m.kind() {
            MessageKind::Prompt | MessageKind::Text => (Some(m.text.as_str()), false),
            MessageKind::ToolCall => (m.tool_input.as_deref(), false),
            MessageKind::ToolResult => (
                m.tool_output
                    .as_deref()
                    .filter(|_| m.tool_name.as_deref() == Some(EXECUTE_COMMAND)),
                true,
            ),
            _ => (None, false),
        };
        if let Some(text) = text {
            found.extend(refs::session_refs(
                text,
                git,
                m.turn_index,
                m.timestamp.as_deref(),
            ));
        }
    }
    for r in found {
        session.add_ref(r);
    }
    if let Some(first) = session
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::Prompt)
    {
        let t = first.text.trim();
        if !t.is_empty() {
            session.meta.title = Some(truncate_chars(t, TITLE_CHARS).to_string());
        }
    }
}

/// Joins a path relative to the task's folder onto it (Cline names files relative to cwd).
fn absolute(cwd: Option<&str>, p: &str) -> String {
    let b = p.as_bytes();
    let is_abs = p.starts_with('/')
        || p.starts_with('\\')
        || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':');
    match cwd {
        Some(c) if !is_abs && !c.is_empty() => {
            let sep = if c.contains('\\') && !c.contains('/') {
                '\\'
            } else {
                '/'
            };
            format!("{}{sep}{p}", c.trim_end_matches(['/', '\\']))
        }
        _ => p.to_string(),
    }
}

/// What Cline appends to a `completion_result` text when the task changed files since the
/// last checkpoint (`COMPLETION_RESULT_CHANGES_FLAG` in its `ExtensionMessage.ts`).
const COMPLETION_CHANGES_FLAG: &str = "HAS_CHANGES";
/// The tool that runs shell commands (its output is scanned for git's commit lines).
pub const EXECUTE_COMMAND: &str = "execute_command";

/// Say records that are errors.
const SAY_ERRORS: &[&str] = &[
    "error",
    "diff_error",
    "clineignore_error",
    "rooignore_error",
    "condense_context_error",
    "command_permission_denied",
];
/// Say records that add nothing: a request's end and retries (its tokens are on
/// `api_req_started`).
const SAY_SKIPPED: &[&str] = &[
    "api_req_finished",
    "api_req_retried",
    "api_req_deleted",
    "deleted_api_reqs",
    "mcp_server_request_started",
];
/// Say records kept as notes (when they hold text).
const SAY_NOTES: &[&str] = &[
    "task_progress",
    "info",
    "user_feedback_diff",
    "shell_integration_warning",
    "shell_integration_warning_with_suggestion",
    "load_mcp_documentation",
    "generate_explanation",
    "hook_status",
    "hook_output_stream",
    "subagent",
    "use_subagents",
    "subagent_usage",
    "conditional_rules_applied",
    "mcp_notification",
    "error_retry",
    "subtask_result",
    "codebase_search_result",
    "user_edit_todos",
    "image",
    "sliding_window_truncation",
    "api_req_retry_delayed",
    "api_req_rate_limited",
    "browser_session_status",
];

/// One UI message record being read: its position, the record, its fields and its time.
struct UiRecord<'r> {
    index: usize,
    raw: &'r Value,
    o: &'r Map<String, Value>,
    ts_ms: Option<i64>,
}

/// A tool call waiting for its result.
struct Pending {
    /// Index into `messages` of the call.
    index: usize,
    name: String,
    has_result: bool,
}

struct Builder<'a> {
    fork: Fork,
    path: &'a str,
    metadata: Option<&'a Value>,
    messages: Vec<Message>,
    usage: Vec<Usage>,
    models: Vec<String>,
    checkpoints: Vec<Checkpoint>,
    files: Vec<PendingFile>,
    issues: Vec<ParseIssue>,
    pending: Vec<Pending>,
    cwd: Option<String>,
    calls: u32,
}

impl<'a> Builder<'a> {
    fn new(fork: Fork, path: &'a str, metadata: Option<&'a Value>) -> Self {
        Builder {
            fork,
            path,
            metadata,
            messages: Vec::new(),
            usage: Vec::new(),
            models: Vec::new(),
            checkpoints: Vec::new(),
            files: Vec::new(),
            issues: Vec::new(),
            pending: Vec::new(),
            cwd: None,
            calls: 0,
        }
    }

    fn issue(&mut self, index: usize, record: &Value, reason: &str) {
        let excerpt = record.to_string();
        self.issues.push(ParseIssue {
            path: self.path.to_string(),
            line: None,
            byte_offset: None,
            excerpt: Some(truncate_chars(&excerpt, 200).to_string()),
            reason: format!("record {index}: {reason}"),
        });
    }

    fn has_prompt(&self) -> bool {
        self.messages
            .iter()
            .any(|m| m.kind() == MessageKind::Prompt)
    }

    fn push(&mut self, m: Message) -> usize {
        self.messages.push(m);
        self.messages.len() - 1
    }

    /// The model of a record: its `modelInfo`, else the last `model_usage` entry before it.
    fn model_at(&self, r: &Map<String, Value>, ts_ms: Option<i64>) -> Option<String> {
        if let Some(m) = r
            .get("modelInfo")
            .and_then(|m| m.get("modelId"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            return Some(m.to_string());
        }
        let list = self.metadata?.get("model_usage")?.as_array()?;
        list.iter()
            .filter(|e| match (e.get("ts").and_then(Value::as_i64), ts_ms) {
                (Some(t), Some(now)) => t <= now,
                _ => true,
            })
            .filter_map(|e| e.get("model_id").and_then(Value::as_str))
            .next_back()
            .or_else(|| {
                list.first()
                    .and_then(|e| e.get("model_id"))
                    .and_then(Value::as_str)
            })
            .map(str::to_string)
    }

    fn observe_model(&mut self, m: &str) {
        if !self.models.iter().any(|x| x == m) {
            self.models.push(m.to_string());
        }
    }

    fn ui_record(&mut self, index: usize, r: &Value) {
        let Value::Object(o) = r else {
            self.issue(index, r, "not an object");
            return;
        };
        let ts_ms = o.get("ts").and_then(Value::as_i64);
        let text = o
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let model = self.model_at(o, ts_ms);
        if let Some(m) = &model {
            self.observe_model(m);
        }
        let kind = o.get("type").and_then(Value::as_str);
        let (is_ask, name) = match kind {
            Some("say") => (false, o.get("say").and_then(Value::as_str)),
            Some("ask") => (true, o.get("ask").and_then(Value::as_str)),
            _ => {
                self.issue(index, r, "record is neither a say nor an ask");
                return;
            }
        };
        let Some(name) = name else {
            self.issue(index, r, "record names no say or ask kind");
            return;
        };
        let base = Origin {
            timestamp: ts_ms.and_then(time::from_epoch_millis),
            model,
            ..Origin::default()
        };
        let record = UiRecord {
            index,
            raw: r,
            o,
            ts_ms,
        };
        self.ui_message(&record, is_ask, name, text, base);
    }

    /// What one say (`is_ask` false) or ask record named `name` adds.
    fn ui_message(
        &mut self,
        r: &UiRecord<'_>,
        is_ask: bool,
        name: &str,
        text: String,
        base: Origin,
    ) {
        match (is_ask, name) {
            (false, "task") => self.prompt(text, r.o, base),
            (false, "user_feedback") => self.prompt(text, r.o, base),
            // Roo Code and Kilo Code open a task with a `text` message holding the task.
            (false, "text") if !self.has_prompt() => self.prompt(text, r.o, base),
            (false, "text") => self.note(Role::Assistant, MessageKind::Text, text, base),
            (_, "completion_result") => {
                // Cline marks a result after which the workspace changed by appending a flag
                // to its text (its webview strips it before showing the text).
                let text = text
                    .strip_suffix(COMPLETION_CHANGES_FLAG)
                    .map(str::to_string)
                    .unwrap_or(text);
                self.note(Role::Assistant, MessageKind::Text, text, base);
            }
            (false, "reasoning") => {
                let t = if text.is_empty() {
                    r.o.get("reasoning")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                } else {
                    text
                };
                self.note(Role::Assistant, MessageKind::Thinking, t, base);
            }
            (true, "followup" | "plan_mode_respond" | "act_mode_respond") => {
                let t = question_text(&text);
                self.note(Role::Assistant, MessageKind::Text, t, base);
            }
            (false, "api_req_started") => self.api_request(r.index, r.raw, &text, base, r.ts_ms),
            (_, "command") => {
                let input = json!({ "command": text }).to_string();
                self.call(EXECUTE_COMMAND, input, None, base);
            }
            (_, "command_output") => self.command_output(text, base),
            (_, "tool") => self.tool(r.index, r.raw, &text, base),
            (_, "browser_action_launch") => {
                let input = json!({ "action": "launch", "url": text }).to_string();
                self.call("browser_action", input, None, base);
            }
            (false, "browser_action") => {
                let input = if serde_json::from_str::<Value>(&text).is_ok() {
                    text
                } else {
                    json!({ "action": text }).to_string()
                };
                self.call("browser_action", input, None, base);
            }
            (false, "browser_action_result") => {
                let out = browser_result_text(&text);
                self.result_for("browser_action", out, false, base);
            }
            (_, "use_mcp_server") => {
                let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let name = v
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("use_mcp_tool")
                    .to_string();
                self.call(&name, text, None, base);
            }
            (false, "mcp_server_response") => self.mcp_response(text, base),
            (true, "new_task") => {
                let input = json!({ "context": text }).to_string();
                self.call("new_task", input, None, base);
            }
            (false, "checkpoint_created" | "checkpoint_saved") => {
                self.checkpoint(r.o, &text, base.timestamp)
            }
            (false, "condense_context") | (true, "condense" | "summarize_task") => {
                let summary =
                    r.o.get("contextCondense")
                        .and_then(|c| c.get("summary"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or(text);
                self.note(Role::System, MessageKind::Summary, summary, base);
            }
            (false, n) if SAY_ERRORS.contains(&n) => self.error(text, base),
            (true, "api_req_failed" | "mistake_limit_reached") => self.error(text, base),
            // The request's end and retries: its tokens are on `api_req_started`.
            (false, n) if SAY_SKIPPED.contains(&n) => {}
            (true, "resume_task" | "resume_completed_task") => {}
            (false, n) if SAY_NOTES.contains(&n) => {
                self.note(Role::System, MessageKind::Meta, text, base)
            }
            (true, "report_bug" | "auto_approval_max_req_reached" | "use_subagents") => {
                self.note(Role::System, MessageKind::Meta, text, base)
            }
            _ => {
                self.push(
                    base.message(Role::System, MessageKind::Unknown, "")
                        .with_extra(r.raw.to_string()),
                );
            }
        }
    }

    /// A message of `role` and `kind`, unless its text is blank.
    fn note(&mut self, role: Role, kind: MessageKind, text: String, base: Origin) {
        if !text.trim().is_empty() {
            self.push(base.message(role, kind, text));
        }
    }

    fn error(&mut self, text: String, base: Origin) {
        self.push(base.message(Role::System, MessageKind::Error, text));
    }

    /// An MCP server's response: the result of the last MCP call still waiting for one.
    fn mcp_response(&mut self, text: String, base: Origin) {
        let name = self
            .pending
            .iter()
            .rev()
            .find(|p| !p.has_result && p.name.contains("mcp"))
            .map(|p| p.name.clone())
            .unwrap_or_else(|| "use_mcp_tool".into());
        self.result_for(&name, text, false, base);
    }

    /// A checkpoint: a commit of the fork's shadow git repository.
    fn checkpoint(&mut self, o: &Map<String, Value>, text: &str, ts: Option<String>) {
        let hash = o
            .get("lastCheckpointHash")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| (!text.trim().is_empty()).then(|| text.trim().to_string()));
        let number = self.checkpoints.len() as u32 + 1;
        self.checkpoints.push(Checkpoint {
            number,
            title: Some(match &hash {
                Some(h) => format!("checkpoint {}", truncate_chars(h, 8)),
                None => "checkpoint".to_string(),
            }),
            overview: hash.map(|h| format!("{} checkpoint: shadow-git commit {h}", self.fork.name)),
            created_at: ts,
            ..Checkpoint::default()
        });
    }

    fn prompt(&mut self, text: String, o: &Map<String, Value>, base: Origin) {
        let images = o
            .get("images")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let mut t = text;
        if images > 0 {
            if !t.is_empty() {
                t.push('\n');
            }
            t.push_str(&format!(
                "[{images} image{}]",
                if images == 1 { "" } else { "s" }
            ));
        }
        self.push(
            base.message(Role::User, MessageKind::Prompt, t)
                .with_prompt_source(PromptSource::Typed),
        );
    }

    /// A tool call; `path` is a file it names.
    fn call(&mut self, name: &str, input: String, path: Option<String>, base: Origin) {
        self.calls += 1;
        let id = format!(
            "{}#{}",
            base.timestamp.as_deref().unwrap_or("call"),
            self.calls
        );
        let at = base.timestamp.clone();
        let index = self.push(
            base.message(Role::Assistant, MessageKind::ToolCall, "")
                .with_tool_name(name.to_string())
                .with_call_id(id)
                .with_input(input),
        );
        if let Some(p) = path.filter(|p| !p.is_empty()) {
            self.files.push(PendingFile {
                path: p,
                tool: name.to_string(),
                seq: Some(index),
                at,
            });
        }
        self.pending.push(Pending {
            index,
            name: name.to_string(),
            has_result: false,
        });
    }

    /// The result of the oldest pending call named `name`.
    fn result_for(&mut self, name: &str, output: String, is_error: bool, base: Origin) -> bool {
        let Some(p) = self
            .pending
            .iter_mut()
            .find(|p| !p.has_result && p.name == name)
        else {
            return false;
        };
        p.has_result = true;
        let call = &self.messages[p.index];
        let id = call.tool_call_id.clone();
        self.push(
            base.message(Role::Tool, MessageKind::ToolResult, "")
                .with_tool_name(name.to_string())
                .with_call_id(id)
                .with_output(output)
                .with_error(is_error)
                .with_model(None),
        );
        true
    }

    /// A command's output: the last command's result, extended when it streams in pieces.
    fn command_output(&mut self, text: String, base: Origin) {
        if let Some(last) = self.messages.last_mut() {
            if last.kind() == MessageKind::ToolResult
                && last.tool_name.as_deref() == Some(EXECUTE_COMMAND)
            {
                let out = last.tool_output.get_or_insert_with(String::new);
                out.push_str(&text);
                return;
            }
        }
        let name = EXECUTE_COMMAND;
        if !self.pending.iter().any(|p| !p.has_result && p.name == name) {
            // Output of a command the log does not show (a background terminal).
            self.call(
                name,
                json!({ "command": "" }).to_string(),
                None,
                base.clone(),
            );
        }
        self.result_for(name, text, false, base);
    }

    fn tool(&mut self, index: usize, r: &Value, text: &str, base: Origin) {
        let v: Value = match serde_json::from_str(text) {
            Ok(v @ Value::Object(_)) => v,
            _ => {
                self.issue(index, r, "tool record's text is not a JSON object");
                return;
            }
        };
        let (name, input, path) = map_tool(self.fork.kind, &v);
        self.call(&name, input.to_string(), path, base);
    }

    fn api_request(&mut self, index: usize, r: &Value, text: &str, base: Origin, ts: Option<i64>) {
        let info: Value = match serde_json::from_str(text) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) | Err(_) if text.trim().is_empty() => return,
            _ => {
                self.issue(index, r, "api_req_started text is not a JSON object");
                return;
            }
        };
        let request = info.get("request").and_then(Value::as_str).unwrap_or("");
        if self.cwd.is_none() {
            self.cwd = working_directory(request);
        }
        self.results_from_request(request, &base);
        let num = |k: &str| info.get(k).and_then(Value::as_f64);
        let tokens = [
            num("tokensIn"),
            num("tokensOut"),
            num("cacheWrites"),
            num("cacheReads"),
        ];
        let cost = num("cost");
        if tokens.iter().any(Option::is_some) || cost.is_some() {
            let n = |x: Option<f64>| x.filter(|v| v.is_finite() && *v > 0.0).unwrap_or(0.0) as u64;
            self.usage.push(Usage {
                request_key: format!("{}", ts.unwrap_or(index as i64)),
                model: base.model.clone(),
                timestamp: base.timestamp.clone(),
                input_tokens: n(tokens[0]),
                output_tokens: n(tokens[1]),
                cache_creation_tokens: n(tokens[2]),
                cache_read_tokens: n(tokens[3]),
                cost_usd: cost.filter(|c| c.is_finite()),
                tokens_known: tokens.iter().any(Option::is_some),
                ..Usage::default()
            });
        }
        if let Some(reason) = info.get("streamingFailedMessage").and_then(Value::as_str) {
            self.push(base.message(Role::System, MessageKind::Error, reason));
        }
    }

    /// Pairs the `[tool for 'x'] Result:` sections of a request with the pending calls.
    fn results_from_request(&mut self, request: &str, base: &Origin) {
        if self.pending.iter().all(|p| p.has_result) {
            self.pending.clear();
            return;
        }
        let body = match request.find("<environment_details>") {
            Some(i) => &request[..i],
            None => request,
        };
        for (name, output) in result_sections(body) {
            let output = output.trim().to_string();
            let is_error = output.starts_with("The tool execution failed")
                || output.starts_with("The user denied this operation")
                || output.starts_with("Error");
            let mut b = base.clone();
            b.model = None;
            // A command's output came with `command_output` already.
            if name == EXECUTE_COMMAND
                && !self
                    .pending
                    .iter()
                    .any(|p| !p.has_result && p.name == EXECUTE_COMMAND)
            {
                continue;
            }
            self.result_for(&name, output, is_error, b);
        }
        self.pending.clear();
    }

    /// Calls still waiting when the log ends keep no result.
    fn finish_pending(&mut self) {
        self.pending.clear();
    }

    /// A record of `api_conversation_history.json` (read when there is no UI log).
    fn api_record(&mut self, index: usize, r: &Value) {
        let Value::Object(o) = r else {
            self.issue(index, r, "not an object");
            return;
        };
        let ts = o
            .get("ts")
            .and_then(Value::as_i64)
            .and_then(time::from_epoch_millis)
            .or_else(|| o.get("timestamp").and_then(time::from_json));
        let model = o
            .get("modelInfo")
            .and_then(|m| m.get("modelId"))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(m) = &model {
            self.observe_model(m);
        }
        let base = Origin {
            timestamp: ts,
            model,
            ..Origin::default()
        };
        let role = o.get("role").and_then(Value::as_str);
        let blocks: Vec<Value> = match o.get("content") {
            Some(Value::String(s)) => vec![json!({"type": "text", "text": s})],
            Some(Value::Array(a)) => a.clone(),
            _ => Vec::new(),
        };
        match role {
            Some("user") => self.api_user(&blocks, base),
            Some("assistant") => self.api_assistant(&blocks, base),
            _ => self.issue(index, r, "message role is neither user nor assistant"),
        }
    }

    /// A user message of the API history: tool results, then the prompt (the task, feedback
    /// or user message inside it), or a note.
    fn api_user(&mut self, blocks: &[Value], base: Origin) {
        let mut text = String::new();
        for blk in blocks {
            match blk.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let t = blk.get("text").and_then(Value::as_str).unwrap_or("");
                    if !text.is_empty() {
                        text.push_str("\n\n");
                    }
                    text.push_str(t);
                }
                Some("tool_result") => {
                    let id = blk.get("tool_use_id").and_then(Value::as_str);
                    let out = match blk.get("content") {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Array(a)) => a
                            .iter()
                            .filter_map(|x| x.get("text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("\n"),
                        _ => String::new(),
                    };
                    let name = self
                        .messages
                        .iter()
                        .rev()
                        .find(|m| {
                            m.kind() == MessageKind::ToolCall && m.tool_call_id.as_deref() == id
                        })
                        .and_then(|m| m.tool_name.clone());
                    self.push(
                        base.message(Role::Tool, MessageKind::ToolResult, "")
                            .with_tool_name(name)
                            .with_call_id(id.map(str::to_string))
                            .with_output(out)
                            .with_error(blk.get("is_error").and_then(Value::as_bool) == Some(true)),
                    );
                }
                _ => {}
            }
        }
        let body = match text.find("<environment_details>") {
            Some(i) => text[..i].to_string(),
            None => text.clone(),
        };
        if self.cwd.is_none() {
            self.cwd = working_directory(&text);
        }
        let task = between(&body, "<task>", "</task>")
            .or_else(|| between(&body, "<feedback>", "</feedback>"))
            .or_else(|| between(&body, "<user_message>", "</user_message>"));
        if let Some(t) = task {
            self.push(
                base.message(Role::User, MessageKind::Prompt, t.trim().to_string())
                    .with_prompt_source(PromptSource::Typed),
            );
        } else if !self.has_prompt() && !body.trim().is_empty() {
            self.push(
                base.message(Role::User, MessageKind::Prompt, body.trim().to_string())
                    .with_prompt_source(PromptSource::Typed),
            );
        } else if !body.trim().is_empty() {
            self.push(base.message(Role::User, MessageKind::Meta, body.trim()));
        }
    }

    /// An assistant message of the API history: text, thinking and tool calls.
    fn api_assistant(&mut self, blocks: &[Value], base: Origin) {
        for blk in blocks {
            match blk.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let t = blk.get("text").and_then(Value::as_str).unwrap_or("");
                    if !t.trim().is_empty() {
                        self.push(base.message(Role::Assistant, MessageKind::Text, t));
                    }
                }
                Some("thinking") => {
                    let t = blk.get("thinking").and_then(Value::as_str).unwrap_or("");
                    if !t.trim().is_empty() {
                        self.push(base.message(Role::Assistant, MessageKind::Thinking, t));
                    }
                }
                Some("tool_use") => {
                    let name = blk
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("tool")
                        .to_string();
                    let input = blk.get("input").cloned().unwrap_or(Value::Null);
                    let path = input
                        .get("path")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    let id = blk.get("id").and_then(Value::as_str).map(str::to_string);
                    let index = self.push(
                        base.message(Role::Assistant, MessageKind::ToolCall, "")
                            .with_tool_name(name.clone())
                            .with_call_id(id)
                            .with_input(input.to_string()),
                    );
                    if let Some(p) = path {
                        self.files.push(PendingFile {
                            path: p,
                            tool: name,
                            seq: Some(index),
                            at: base.timestamp.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
    }
}

/// The text between two markers, if both are there.
fn between<'s>(s: &'s str, open: &str, close: &str) -> Option<&'s str> {
    let i = s.find(open)? + open.len();
    let j = s[i..].find(close)? + i;
    Some(&s[i..j])
}

/// The folder the environment details name: Cline's `# Current Working Directory (PATH)`,
/// Roo Code's `# Current Workspace Directory (PATH)`.
pub fn working_directory(request: &str) -> Option<String> {
    for marker in [
        "# Current Working Directory (",
        "# Current Workspace Directory (",
    ] {
        if let Some(i) = request.find(marker) {
            let rest = &request[i + marker.len()..];
            let line = rest.lines().next().unwrap_or("");
            if let Some(j) = line.rfind(')') {
                let p = line[..j].trim();
                if !p.is_empty() {
                    return Some(p.to_string());
                }
            }
        }
    }
    None
}

/// Splits a request's text into `(tool name, output)` at its `[name for 'x'] Result:` and
/// `[name] Result:` headers.
pub fn result_sections(body: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in body.split_inclusive('\n') {
        if let Some(h) = result_header(line) {
            out.push((h.0, h.1.to_string()));
        } else if let Some(last) = out.last_mut() {
            last.1.push_str(line);
        }
    }
    out
}

/// Reads a `[name for '...'] Result:` line: the name and what follows `Result:`.
fn result_header(line: &str) -> Option<(String, &str)> {
    let rest = line.strip_prefix('[')?;
    let end = rest.find("] Result:")?;
    let name: String = rest[..end]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        return None;
    }
    Some((name, &rest[end + "] Result:".len()..]))
}

/// The question (and options) of a `followup` or `plan_mode_respond` ask.
fn question_text(text: &str) -> String {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return text.to_string();
    };
    let Some(q) = v
        .get("question")
        .or_else(|| v.get("response"))
        .and_then(Value::as_str)
    else {
        return text.to_string();
    };
    let mut s = q.to_string();
    if let Some(opts) = v.get("options").and_then(Value::as_array) {
        for o in opts.iter().filter_map(Value::as_str) {
            s.push_str("\n- ");
            s.push_str(o);
        }
    }
    s
}

/// A browser action's result without its screenshot (a data URI).
fn browser_result_text(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut o)) => {
            if o.remove("screenshot").is_some() {
                o.insert("screenshot".into(), Value::String("[image]".into()));
            }
            Value::Object(o).to_string()
        }
        _ => text.to_string(),
    }
}

/// Whether a Cline `content` is a `replace_in_file` diff rather than a whole file.
fn is_search_replace(s: &str) -> bool {
    let t = s.trim_start();
    t.starts_with("------- SEARCH") || t.starts_with("<<<<<<< SEARCH")
}

/// Maps a `ClineSayTool` row to the tool the model called, with that tool's own parameter
/// names (so `trail diff` reads Cline's `replace_in_file {path, diff}` and `write_to_file
/// {path, content}` the same way from either file), and the file it names.
pub fn map_tool(kind: SourceKind, v: &Value) -> (String, Value, Option<String>) {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let tool = s("tool").unwrap_or_default();
    let path = s("path");
    let content = s("content");
    let diff = s("diff");
    let obj = |pairs: &[(&str, Option<String>)]| {
        let mut m = Map::new();
        for (k, val) in pairs {
            if let Some(val) = val {
                m.insert((*k).to_string(), Value::String(val.clone()));
            }
        }
        Value::Object(m)
    };
    let cline = kind == SourceKind::Cline;
    let (name, input) = match tool.as_str() {
        "editedExistingFile" => {
            // Cline shows a `replace_in_file` diff in `content`; Roo Code and Kilo Code show a
            // whole-file write there (with a unified `diff` beside it).
            match (&content, &diff) {
                (Some(c), _) if is_search_replace(c) => (
                    "replace_in_file",
                    obj(&[("path", path.clone()), ("diff", Some(c.clone()))]),
                ),
                (_, Some(d)) if is_search_replace(d) => (
                    "replace_in_file",
                    obj(&[("path", path.clone()), ("diff", Some(d.clone()))]),
                ),
                (Some(c), _) if !cline || !c.is_empty() => (
                    "write_to_file",
                    obj(&[("path", path.clone()), ("content", Some(c.clone()))]),
                ),
                _ => (
                    "write_to_file",
                    obj(&[("path", path.clone()), ("diff", diff.clone())]),
                ),
            }
        }
        "appliedDiff" => (
            "apply_diff",
            obj(&[
                ("path", path.clone()),
                ("diff", diff.clone().or(content.clone())),
            ]),
        ),
        "newFileCreated" => (
            "write_to_file",
            obj(&[("path", path.clone()), ("content", content.clone())]),
        ),
        "fileDeleted" => ("delete_file", obj(&[("path", path.clone())])),
        "readFile" => ("read_file", obj(&[("path", path.clone())])),
        "listFilesTopLevel" => (
            "list_files",
            obj(&[("path", path.clone()), ("recursive", Some("false".into()))]),
        ),
        "listFilesRecursive" => (
            "list_files",
            obj(&[("path", path.clone()), ("recursive", Some("true".into()))]),
        ),
        "listCodeDefinitionNames" => ("list_code_definition_names", obj(&[("path", path.clone())])),
        "searchFiles" => (
            "search_files",
            obj(&[
                ("path", path.clone()),
                ("regex", s("regex")),
                ("file_pattern", s("filePattern")),
            ]),
        ),
        "searchAndReplace" => (
            "search_and_replace",
            obj(&[
                ("path", path.clone()),
                ("search", s("search")),
                ("replace", s("replace")),
            ]),
        ),
        "insertContent" => (
            "insert_content",
            obj(&[
                ("path", path.clone()),
                (
                    "line",
                    v.get("lineNumber")
                        .and_then(Value::as_i64)
                        .map(|n| n.to_string()),
                ),
                ("content", content.clone().or(diff.clone())),
            ]),
        ),
        "codebaseSearch" => (
            "codebase_search",
            obj(&[("query", s("query")), ("path", path.clone())]),
        ),
        "webFetch" => ("web_fetch", obj(&[("url", path.clone().or(s("url")))])),
        _ => {
            // Everything else keeps its row as input under the tool's snake_case name.
            let mut name = String::new();
            for c in tool.chars() {
                if c.is_ascii_uppercase() {
                    name.push('_');
                    name.push(c.to_ascii_lowercase());
                } else {
                    name.push(c);
                }
            }
            let name = if name.is_empty() { "tool".into() } else { name };
            return (name, v.clone(), path);
        }
    };
    let file = match name {
        "web_fetch" | "codebase_search" => None,
        _ => path,
    };
    (name.to_string(), input, file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_sections_split_at_headers() {
        let body = "[read_file for 'a.txt'] Result:\nline 1\nline 2\n\n[execute_command for 'ls'] Result:\nCommand executed.\n";
        let s = result_sections(body);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].0, "read_file");
        assert_eq!(s[0].1.trim(), "line 1\nline 2");
        assert_eq!(s[1].0, "execute_command");
        assert_eq!(s[1].1.trim(), "Command executed.");
        assert!(result_sections("[attempt_completion] Result: Done").len() == 1);
        assert!(result_sections("no header\n").is_empty());
    }

    #[test]
    fn working_directory_from_environment_details() {
        assert_eq!(
            working_directory("x\n# Current Working Directory (/home/u/app) Files\na\n"),
            Some("/home/u/app".into())
        );
        assert_eq!(
            working_directory("# Current Workspace Directory (C:/w (1)) Files"),
            Some("C:/w (1)".into())
        );
        assert_eq!(working_directory("nothing"), None);
    }

    #[test]
    fn forks_are_told_apart_by_their_folder() {
        let p = Path::new("/h/.config/Code/User/globalStorage/RooVeterinaryInc.roo-cline/tasks/t/ui_messages.json");
        assert_eq!(fork_of_path(p), SourceKind::RooCode);
        let p = Path::new("/x/kilocode.kilo-code/tasks/t/ui_messages.json");
        assert_eq!(fork_of_path(p), SourceKind::KiloCode);
        assert_eq!(
            fork_of_path(Path::new("/tmp/t/ui_messages.json")),
            SourceKind::Cline
        );
    }

    #[test]
    fn edit_rows_map_to_the_model_tools() {
        let v = json!({"tool": "editedExistingFile", "path": "a.rs", "content": "------- SEARCH\nx\n=======\ny\n+++++++ REPLACE"});
        let (n, i, p) = map_tool(SourceKind::Cline, &v);
        assert_eq!(n, "replace_in_file");
        assert_eq!(i["path"], "a.rs");
        assert!(i["diff"].as_str().unwrap().starts_with("------- SEARCH"));
        assert_eq!(p.as_deref(), Some("a.rs"));
        let v = json!({"tool": "editedExistingFile", "path": "a.rs", "content": "new\n", "diff": "@@ -1 +1 @@\n-old\n+new\n"});
        let (n, i, _) = map_tool(SourceKind::RooCode, &v);
        assert_eq!(n, "write_to_file");
        assert_eq!(i["content"], "new\n");
        let v = json!({"tool": "listFilesRecursive", "path": "src"});
        assert_eq!(map_tool(SourceKind::Cline, &v).0, "list_files");
        let v = json!({"tool": "switchMode", "mode": "code"});
        assert_eq!(map_tool(SourceKind::RooCode, &v).0, "switch_mode");
    }
}
