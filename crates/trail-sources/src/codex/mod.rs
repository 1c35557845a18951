//! OpenAI Codex CLI rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (and
//! `archived_sessions/`).
//!
//! Each line is `{timestamp, type, payload}` with `type` one of `session_meta`, `turn_context`,
//! `response_item`, `event_msg`, `compacted` (plus newer kinds). Early Rust builds wrote a bare
//! meta object first and response items without the wrapper; both shapes are read.
//!
//! Messages come from `response_item`s (the model-visible history). `event_msg`s that only echo
//! a response item for the UI (`user_message`, `agent_message`, `exec_command_end`...) add no
//! message, but some feed derived rows (token counts, files from `patch_apply_end` and
//! `exec_command_end.parsed_cmd`, the thread name). `agent_reasoning` is the exception: it is
//! thinking unless a `reasoning` response item of the same turn holds the same text (before or
//! after it), so reasoning shown only in events is kept, and kept once.
//!
//! # Usage rule
//! `token_count` events carry `total_token_usage`, cumulative for the thread. One usage row is
//! the difference between successive totals (a repeated event gives a zero difference and no
//! row), which is idempotent where `last_token_usage` would double count repeated events. When
//! a total goes backwards, that event's `last_token_usage` is taken instead. Codex reports
//! `cached_input_tokens` (and `cache_write_input_tokens`) inside `input_tokens` and
//! `reasoning_output_tokens` inside `output_tokens`: we store
//! `input = input - cached - cache_write`, `cache_read = cached`,
//! `cache_creation = cache_write`, `output = output`, `reasoning = reasoning` (a subset of
//! output, as the model says), so the four summed columns equal Codex's own total.
//!
//! Sub-agent and forked rollouts (`source.subagent`, `forked_from_id`, `parent_thread_id`)
//! begin by replaying the parent's history, token counts included, stamped at spawn time. A
//! `token_count` in such a file whose timestamp (to the second) is not after the second of
//! the session's own `session_meta` (or, without one, the second of the first token count)
//! only seeds the running total and is not counted; the first later one ends the replay.
//!
//! Files without `total_token_usage` (older or headless shapes with per-request numbers:
//! `last_token_usage`, `input_tokens`/`output_tokens`, `prompt_tokens`/`completion_tokens`,
//! `prompt`/`completion`) count each event as one request.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use trail_model::{
    time, turns, Checkpoint, FileTouch, Message, MessageKind, ParentLink, Role, Session, SessionId,
    SessionMeta, SessionRef, SourceKind, TitleRank, UpdateMode, Usage,
};

use crate::{discover, ids, jsonl, refs, FileParse, ParseRequest, Source, SourceError};

/// Codex CLI rollout files.
pub struct Codex;

/// Version of the resume state layout; a mismatch makes the next parse start over.
const STATE_VERSION: u32 = 1;
/// Characters of the first prompt kept as a title.
const TITLE_CHARS: usize = 200;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 2: the late-2026 format changes of issue 18.
/// 3: error events keep the kind and message of an `error` object (issue 21).
/// 4: a leading BOM is skipped; an `agent_reasoning` event no `reasoning` item repeats is
///    thinking (issue 40).
pub const PARSER_VERSION: u32 = 4;

impl Source for Codex {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Codex
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            let live_dir = root.join("sessions");
            let live = discover::walk_files(&live_dir, 6, is_rollout_name);
            let live_rel: BTreeSet<PathBuf> = live
                .iter()
                .filter_map(|p| p.strip_prefix(&live_dir).ok().map(Path::to_path_buf))
                .collect();
            let live_names: BTreeSet<std::ffi::OsString> = live
                .iter()
                .filter_map(|p| p.file_name().map(Into::into))
                .collect();
            out.extend(live);
            // An archived copy of a live session is skipped: `sessions/` wins.
            let archived_dir = root.join("archived_sessions");
            for p in discover::walk_files(&archived_dir, 6, is_rollout_name) {
                let rel = p.strip_prefix(&archived_dir).ok().map(Path::to_path_buf);
                let dup_rel = rel.is_some_and(|r| live_rel.contains(&r));
                let dup_name = p.file_name().is_some_and(|n| live_names.contains(n));
                if !dup_rel && !dup_name {
                    out.push(p);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        // Agents writing Codex's rollouts in their own folders (TraeX) read them as theirs.
        crate::relabel::claimed_by(path, head).is_none() && detect_format(path, head)
    }

    fn appendable(&self, path: &Path) -> bool {
        discover::has_extension(path, "jsonl")
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        let resumed = request.resume.and_then(|r| {
            let st: State = serde_json::from_slice(r.state).ok()?;
            (st.version == STATE_VERSION).then_some((st, r.offset, r.line))
        });
        let (state, start, start_line, mode) = match resumed {
            Some((st, off, line)) => (st, off, line, UpdateMode::Append),
            None => (State::new(path), 0, 0, UpdateMode::Replace),
        };
        let mut p = Parser {
            st: state,
            out: Delta::default(),
        };
        let outcome =
            jsonl::read_lines_limited(path, start, start_line, request.max_bytes, |pos, line| {
                let v: Value =
                    serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
                if !v.is_object() {
                    return Err("a rollout line must be a JSON object".into());
                }
                p.record(pos.number, v);
                Ok(())
            })?;
        tracing::debug!(
            path = %path.display(),
            messages = p.out.messages.len(),
            usage = p.out.usage.len(),
            "parsed codex rollout"
        );
        let empty = p.out.messages.is_empty() && p.out.usage.is_empty();
        let mut sessions = if mode == UpdateMode::Replace && empty && !p.st.meta_seen {
            Vec::new()
        } else {
            vec![p.finish(mode)]
        };
        // Codex keeps thread titles in its own SQLite state (`session_index.jsonl` is gone):
        // a name the user gave outranks what the rollout says.
        for s in &mut sessions {
            if let Some((title, rank)) = state_db_title(path, &s.meta.native_id) {
                if rank >= s.meta.title_rank.max(u8::from(s.meta.title.is_some())) {
                    s.meta.title = Some(title);
                    s.meta.title_rank = rank;
                }
            }
        }
        let state = serde_json::to_vec(&p.st).ok();
        Ok(FileParse {
            more: outcome.more,
            sessions,
            issues: outcome.issues,
            bytes_parsed: outcome.bytes_parsed,
            bytes_read: outcome.bytes_read,
            lines: outcome.lines,
            state,
            ..FileParse::default()
        })
    }
}

/// Returns the Codex state database beside a rollout: `$CODEX_HOME/state_<n>.sqlite` (the
/// highest `n`: `state_5.sqlite` in openai/codex `codex-rs/state/src/lib.rs`), where
/// `$CODEX_HOME` holds the rollout's `sessions/` or `archived_sessions/` folder.
fn state_db_of(rollout: &Path) -> Option<PathBuf> {
    let home = rollout
        .ancestors()
        .find(|a| {
            a.file_name()
                .is_some_and(|n| n == "sessions" || n == "archived_sessions")
        })?
        .parent()?;
    std::fs::read_dir(home)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let n: u32 = name
                .strip_prefix("state_")?
                .strip_suffix(".sqlite")?
                .parse()
                .ok()?;
            Some((n, e.path()))
        })
        .max()
        .map(|(_, p)| p)
}

/// Returns a thread's title from Codex's state database, read-only, with its rank: the name
/// the user gave (`threads.name` with `name_state = 'explicit'`, migration 0040) is the
/// user's; otherwise `threads.title` (Codex's own) is a summary. `None` when there is no
/// database, no such thread, or the schema is older than expected.
fn state_db_title(rollout: &Path, thread_id: &str) -> Option<(String, u8)> {
    let db = state_db_of(rollout)?;
    // Read once per rollout: a locked database is skipped rather than copied each time.
    let conn = crate::sqlite_readonly::open_direct(&db).ok()?;
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('threads')")
        .ok()?
        .query_map([], |r| r.get(0))
        .ok()?
        .filter_map(Result::ok)
        .collect();
    let has = |c: &str| columns.iter().any(|x| x == c);
    if !has("id") || !has("title") {
        return None;
    }
    let sql = if has("name") && has("name_state") {
        "SELECT CASE WHEN name_state = 'explicit' THEN name END, title FROM threads WHERE id = ?1"
    } else {
        "SELECT NULL, title FROM threads WHERE id = ?1"
    };
    let (name, title): (Option<String>, Option<String>) = conn
        .query_row(sql, [thread_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .ok()?;
    let clean = |t: Option<String>| {
        t.map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|t| !t.is_empty())
            .map(|t| trail_model::truncate_chars(&t, TITLE_CHARS).to_string())
    };
    match (clean(name), clean(title)) {
        (Some(n), _) => Some((n, TitleRank::USER)),
        (None, Some(t)) => Some((t, TitleRank::SUMMARY)),
        (None, None) => None,
    }
}

fn is_rollout_name(path: &Path) -> bool {
    discover::has_extension(path, "jsonl")
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("rollout-"))
}

/// Token counters as Codex reports them (cached inside input, reasoning inside output).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Counts {
    input: u64,
    cached: u64,
    cache_write: u64,
    output: u64,
    reasoning: u64,
}

impl Counts {
    fn from_json(v: &Value) -> Option<Counts> {
        let obj = v.as_object()?;
        let n = |k: &str| obj.get(k).and_then(Value::as_u64);
        let input = n("input_tokens")
            .or_else(|| n("prompt_tokens"))
            .or_else(|| n("prompt"));
        let output = n("output_tokens")
            .or_else(|| n("completion_tokens"))
            .or_else(|| n("completion"));
        if input.is_none() && output.is_none() {
            return None;
        }
        Some(Counts {
            input: input.unwrap_or(0),
            cached: n("cached_input_tokens").unwrap_or(0),
            cache_write: n("cache_write_input_tokens").unwrap_or(0),
            output: output.unwrap_or(0),
            reasoning: n("reasoning_output_tokens").unwrap_or(0),
        })
    }

    fn is_zero(&self) -> bool {
        *self == Counts::default()
    }

    /// Returns `self - earlier`, or `None` when a counter went backwards.
    fn minus(&self, earlier: &Counts) -> Option<Counts> {
        Some(Counts {
            input: self.input.checked_sub(earlier.input)?,
            cached: self.cached.checked_sub(earlier.cached)?,
            cache_write: self.cache_write.checked_sub(earlier.cache_write)?,
            output: self.output.checked_sub(earlier.output)?,
            reasoning: self.reasoning.checked_sub(earlier.reasoning)?,
        })
    }
}

/// A tool call waiting for its output.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct OpenCall {
    name: String,
    shell: bool,
}

/// Everything needed to continue parsing after the last complete line.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct State {
    version: u32,
    seq: u32,
    turn_count: u32,
    current_turn: Option<u32>,
    /// Whether a `session_meta` (or legacy meta line) was seen.
    meta_seen: bool,
    native_id: Option<String>,
    /// The uuid in the file name, used when no meta names the session.
    name_id: Option<String>,
    title: Option<String>,
    title_from_agent: bool,
    cwd: Option<String>,
    repository: Option<String>,
    branch: Option<String>,
    agent_version: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
    parent: Option<ParentLink>,
    /// Sub-agent or fork: its first token counts replay the parent's.
    replays_parent: bool,
    /// The second (`YYYY-MM-DDTHH:MM:SS`) up to which token counts are replayed.
    replay_second: Option<String>,
    replay_done: bool,
    model: Option<String>,
    models: Vec<String>,
    last_total: Option<Counts>,
    open_calls: BTreeMap<String, OpenCall>,
    files: BTreeSet<String>,
    refs: BTreeSet<String>,
    checkpoints: u32,
    last_assistant_seq: Option<u32>,
    /// Call ids of the tool calls read from `response_item`s: a completed item
    /// (`item_completed`, 0.148+) for one of them adds its files but no second call.
    #[serde(default)]
    known_calls: BTreeSet<String>,
    /// Calls a completed item reported failed (a non-zero exit) before their output line,
    /// whose `function_call_output` carries no status of its own.
    #[serde(default)]
    failed_calls: BTreeSet<String>,
    /// Hashes of the reasoning texts kept as thinking in the current turn: an `agent_reasoning`
    /// event and the `reasoning` response item that holds the same text (before or after it)
    /// make one thinking message.
    #[serde(default)]
    reasoning_seen: BTreeSet<u64>,
}

impl State {
    fn new(path: &Path) -> State {
        State {
            version: STATE_VERSION,
            seq: 0,
            turn_count: 0,
            current_turn: None,
            meta_seen: false,
            native_id: None,
            name_id: uuid_in_name(path),
            title: None,
            title_from_agent: false,
            cwd: None,
            repository: None,
            branch: None,
            agent_version: None,
            created_at: None,
            updated_at: None,
            parent: None,
            replays_parent: false,
            replay_second: None,
            replay_done: false,
            model: None,
            models: Vec::new(),
            last_total: None,
            open_calls: BTreeMap::new(),
            files: BTreeSet::new(),
            refs: BTreeSet::new(),
            checkpoints: 0,
            last_assistant_seq: None,
            known_calls: BTreeSet::new(),
            failed_calls: BTreeSet::new(),
            reasoning_seen: BTreeSet::new(),
        }
    }
}

/// What this parse adds.
#[derive(Default)]
struct Delta {
    messages: Vec<Message>,
    files: Vec<FileTouch>,
    refs: Vec<SessionRef>,
    usage: Vec<Usage>,
    checkpoints: Vec<Checkpoint>,
}

struct Parser {
    st: State,
    out: Delta,
}

impl Parser {
    fn record(&mut self, line: u64, v: Value) {
        let ts = v
            .get("timestamp")
            .and_then(time::from_json)
            .filter(|t| !t.is_empty());
        if let Some(t) = &ts {
            self.observe_timestamp(t);
        }
        let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
        let payload = v.get("payload");
        match (kind, payload) {
            ("session_meta", Some(p)) => self.session_meta(p, ts.as_deref()),
            ("turn_context", Some(p)) => self.turn_context(p),
            ("response_item", Some(p)) => self.response_item(p, ts.as_deref(), &v),
            ("event_msg", Some(p)) => self.event(line, p, ts.as_deref(), &v),
            ("compacted", Some(p)) => self.compacted(p, ts.as_deref()),
            // Session state snapshots and inter-agent bookkeeping: no conversation content.
            ("world_state", _) | ("inter_agent_communication_metadata", _) => {}
            (_, None) => self.legacy(line, &v, ts.as_deref()),
            _ => self.unknown(&v, ts.as_deref()),
        }
    }

    /// Lines without the `{type, payload}` envelope (early Rust builds).
    fn legacy(&mut self, line: u64, v: &Value, ts: Option<&str>) {
        if v.get("record_type").is_some() {
            return; // `{"record_type":"state"}` markers
        }
        match v.get("type").and_then(Value::as_str) {
            Some(t) if is_response_item_type(t) => self.response_item(v, ts, v),
            None if line == 1 || !self.st.meta_seen && v.get("id").is_some() => {
                self.session_meta(v, ts)
            }
            _ => self.unknown(v, ts),
        }
    }

    fn observe_timestamp(&mut self, t: &str) {
        if self.st.created_at.as_deref().is_none_or(|c| t < c) {
            self.st.created_at = Some(t.to_string());
        }
        if self.st.updated_at.as_deref().is_none_or(|u| t > u) {
            self.st.updated_at = Some(t.to_string());
        }
    }

    fn session_meta(&mut self, p: &Value, ts: Option<&str>) {
        let s = |k: &str| {
            p.get(k)
                .and_then(Value::as_str)
                .filter(|x| !x.is_empty())
                .map(str::to_string)
        };
        let first = !self.st.meta_seen;
        self.st.meta_seen = true;
        if let Some(t) = p.get("timestamp").and_then(time::from_json) {
            self.observe_timestamp(&t);
        }
        if !first {
            // A later meta line (a fork's copied history, a resumed thread) keeps the
            // identity of the first; it only fills facts still missing.
            if self.st.cwd.is_none() {
                self.st.cwd = s("cwd").filter(|c| looks_like_path(c));
            }
            return;
        }
        self.st.native_id = s("id").or_else(|| s("session_id"));
        self.st.cwd = s("cwd").filter(|c| looks_like_path(c));
        // The system prompt the thread ran with: `base_instructions: {text}` (0.139+), or
        // `instructions` (a string) in older builds. Context, kept as meta.
        let instructions = p
            .get("base_instructions")
            .and_then(|b| b.get("text").or(Some(b)))
            .and_then(Value::as_str)
            .or_else(|| p.get("instructions").and_then(Value::as_str))
            .map(str::trim)
            .filter(|t| !t.is_empty());
        if let Some(text) = instructions {
            let mut m = self.message(Role::System, MessageKind::Meta, text.to_string(), ts);
            m.extra = Some(r#"{"codex":"base_instructions"}"#.into());
            self.push(m);
        }
        self.st.agent_version = s("cli_version");
        if let Some(git) = p.get("git") {
            self.st.branch = git
                .get("branch")
                .and_then(Value::as_str)
                .filter(|b| !b.is_empty())
                .map(str::to_string);
            self.st.repository = git
                .get("repository_url")
                .and_then(Value::as_str)
                .and_then(github_repo);
        }
        let spawn = p
            .get("source")
            .and_then(|s| s.get("subagent"))
            .and_then(|s| s.get("thread_spawn"));
        let subagent = p.get("source").and_then(|s| s.get("subagent")).is_some();
        let parent_id = spawn
            .and_then(|t| t.get("parent_thread_id"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| s("parent_thread_id"))
            .or_else(|| s("forked_from_id"))
            .filter(|x| !x.is_empty());
        if let Some(pid) = parent_id {
            self.st.parent = Some(ParentLink {
                session_id: session_id_for(&pid),
                tool_call_id: None,
                agent_ref: spawn.and(self.st.native_id.clone()),
            });
        }
        self.st.replays_parent = subagent || self.st.parent.is_some();
        let meta_ts = p
            .get("timestamp")
            .and_then(time::from_json)
            .or_else(|| ts.map(str::to_string));
        self.st.replay_second = meta_ts.map(|t| second_of(&t));
    }

    fn turn_context(&mut self, p: &Value) {
        if let Some(m) = p
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
        {
            self.set_model(m);
        }
        if let Some(c) = p
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|c| looks_like_path(c))
        {
            self.st.cwd = Some(c.to_string());
        }
    }

    fn set_model(&mut self, m: &str) {
        self.st.model = Some(m.to_string());
        if !self.st.models.iter().any(|x| x == m) {
            self.st.models.push(m.to_string());
        }
    }

    fn push(&mut self, mut m: Message) -> u32 {
        if m.kind == Some(MessageKind::Prompt) {
            self.st.current_turn = Some(self.st.turn_count);
            self.st.turn_count += 1;
            self.st.reasoning_seen.clear();
        }
        m.seq = self.st.seq;
        self.st.seq += 1;
        m.on_main_chain = true;
        m.turn_index = self.st.current_turn;
        if m.role == Some(Role::Assistant) {
            self.st.last_assistant_seq = Some(m.seq);
        }
        let seq = m.seq;
        self.out.messages.push(m);
        seq
    }

    fn message(&self, role: Role, kind: MessageKind, text: String, ts: Option<&str>) -> Message {
        Message::new(role, kind, text)
            .with_timestamp(ts.map(str::to_string))
            .with_model(if role == Role::Assistant {
                self.st.model.clone()
            } else {
                None
            })
    }

    fn add_refs(&mut self, text: &str, git_output: bool, ts: Option<&str>) {
        for r in refs::session_refs(text, git_output, self.st.current_turn, ts) {
            if self.st.refs.insert(refs::key(&r)) {
                self.out.refs.push(r);
            }
        }
    }

    fn add_file(&mut self, path: &str, tool: &str, ts: Option<&str>) {
        let path = path.trim();
        if path.is_empty() || !self.st.files.insert(path.to_string()) {
            return;
        }
        self.out.files.push(FileTouch {
            path: path.to_string(),
            tool_name: Some(tool.to_string()),
            turn_index: self.st.current_turn,
            first_seen_at: ts.map(str::to_string),
        });
    }

    fn unknown(&mut self, v: &Value, ts: Option<&str>) {
        let mut m = self.message(Role::System, MessageKind::Unknown, String::new(), ts);
        m.extra = Some(v.to_string());
        self.push(m);
    }

    fn response_item(&mut self, p: &Value, ts: Option<&str>, raw: &Value) {
        let t = p.get("type").and_then(Value::as_str).unwrap_or_default();
        let native_id = p.get("id").and_then(Value::as_str).map(str::to_string);
        match t {
            "message" => {
                let role = p.get("role").and_then(Value::as_str).unwrap_or_default();
                let text = content_text(p.get("content"));
                let mut m = match role {
                    "user" if is_injected(&text) => {
                        self.message(Role::User, MessageKind::Meta, text, ts)
                    }
                    "user" => {
                        if !self.st.title_from_agent && self.st.title.is_none() {
                            let title = text.trim();
                            if !title.is_empty() {
                                self.st.title =
                                    Some(trail_model::truncate_chars(title, TITLE_CHARS).into());
                            }
                        }
                        self.add_refs(&text, false, ts);
                        self.message(Role::User, MessageKind::Prompt, text, ts)
                    }
                    "assistant" => {
                        self.add_refs(&text, false, ts);
                        self.message(Role::Assistant, MessageKind::Text, text, ts)
                    }
                    _ => self.message(Role::System, MessageKind::Meta, text, ts),
                };
                m.native_id = native_id;
                self.push(m);
            }
            "reasoning" => {
                let mut parts = texts_of(p.get("summary"));
                if parts.is_empty() {
                    parts = texts_of(p.get("content"));
                }
                // Parts an `agent_reasoning` event already gave are not repeated.
                parts.retain(|t| self.first_reasoning(t));
                let text = parts.join("\n");
                if !text.is_empty() {
                    let mut m = self.message(Role::Assistant, MessageKind::Thinking, text, ts);
                    m.native_id = native_id;
                    self.push(m);
                }
            }
            "function_call" | "custom_tool_call" | "local_shell_call" | "tool_search_call" => {
                self.tool_call(t, p, ts, native_id)
            }
            "function_call_output"
            | "custom_tool_call_output"
            | "local_shell_call_output"
            | "tool_search_output" => self.tool_output(t, p, ts, native_id),
            "web_search_call" | "image_generation_call" => {
                let name = t.trim_end_matches("_call").to_string();
                let input = match t {
                    "web_search_call" => p.get("action").cloned().unwrap_or(Value::Null),
                    _ => serde_json::json!({ "revised_prompt": p.get("revised_prompt") }),
                };
                let mut m = self.message(Role::Assistant, MessageKind::ToolCall, String::new(), ts);
                m.tool_name = Some(name);
                m.tool_call_id = native_id.clone();
                m.tool_input = Some(input.to_string());
                m.is_error = p.get("status").and_then(Value::as_str) == Some("failed");
                m.native_id = native_id;
                self.push(m);
            }
            "agent_message" => {
                // A message between agents (sub-agent reports): injected context.
                let text = content_text(p.get("content"));
                let mut m = self.message(Role::User, MessageKind::Meta, text, ts);
                m.native_id = native_id;
                self.push(m);
            }
            "compaction" | "context_compaction" | "compaction_summary" => {
                let mut m = self.message(Role::System, MessageKind::Compaction, String::new(), ts);
                m.native_id = native_id;
                self.push(m);
            }
            // Undo snapshots: git bookkeeping, nothing the conversation shows.
            "ghost_snapshot" => {}
            _ => self.unknown(raw, ts),
        }
    }

    fn tool_call(&mut self, t: &str, p: &Value, ts: Option<&str>, native_id: Option<String>) {
        let call_id = p
            .get("call_id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| native_id.clone());
        let name = match t {
            "local_shell_call" => "local_shell".to_string(),
            "tool_search_call" => "tool_search".to_string(),
            _ => p
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_string(),
        };
        let input: String = match t {
            "function_call" => json_text(p.get("arguments")),
            "custom_tool_call" => json_text(p.get("input")),
            "local_shell_call" => p.get("action").cloned().unwrap_or(Value::Null).to_string(),
            _ => p
                .get("arguments")
                .cloned()
                .unwrap_or(Value::Null)
                .to_string(),
        };
        let shell = is_shell_tool(&name);
        if let Some(id) = &call_id {
            self.st.known_calls.insert(id.clone());
        }
        self.touch_files_from_call(&name, p, &input, ts);
        self.add_refs(&input, false, ts);
        if let Some(id) = &call_id {
            self.st.open_calls.insert(
                id.clone(),
                OpenCall {
                    name: name.clone(),
                    shell,
                },
            );
        }
        let mut m = self.message(Role::Assistant, MessageKind::ToolCall, String::new(), ts);
        m.tool_name = Some(name);
        m.tool_call_id = call_id;
        m.tool_input = Some(input);
        m.native_id = native_id;
        self.push(m);
    }

    fn tool_output(&mut self, t: &str, p: &Value, ts: Option<&str>, native_id: Option<String>) {
        let call_id = p.get("call_id").and_then(Value::as_str).map(str::to_string);
        let call = call_id
            .as_ref()
            .and_then(|id| self.st.open_calls.remove(id));
        let (output, mut is_error) = match t {
            "tool_search_output" => (
                p.get("tools").cloned().unwrap_or(Value::Null).to_string(),
                false,
            ),
            _ => output_text(p.get("output")),
        };
        let flagged = call_id
            .as_ref()
            .is_some_and(|id| self.st.failed_calls.remove(id));
        if flagged
            || p.get("success").and_then(Value::as_bool) == Some(false)
            || p.get("status").and_then(Value::as_str) == Some("failed")
        {
            is_error = true;
        }
        let name = call.as_ref().map(|c| c.name.clone()).or_else(|| {
            Some(match t {
                "tool_search_output" => "tool_search".into(),
                "local_shell_call_output" => "local_shell".into(),
                _ => return None,
            })
        });
        if call.as_ref().is_some_and(|c| c.shell) {
            self.add_refs(&output, true, ts);
        }
        let mut m = self.message(Role::Tool, MessageKind::ToolResult, String::new(), ts);
        m.tool_name = name;
        m.tool_call_id = call_id;
        m.tool_output = Some(output);
        m.is_error = is_error;
        m.native_id = native_id;
        self.push(m);
    }

    fn touch_files_from_call(&mut self, name: &str, p: &Value, input: &str, ts: Option<&str>) {
        // apply_patch: freeform input, `{"input": patch}` arguments, or a shell command whose
        // argument is the patch.
        let patch: Option<String> = if input.contains("*** ") {
            match serde_json::from_str::<Value>(input) {
                Ok(Value::String(s)) => Some(s),
                Ok(v) => Some(collect_strings(&v)),
                Err(_) => Some(input.to_string()),
            }
        } else {
            None
        };
        if let Some(patch) = patch {
            for path in patch_files(&patch) {
                self.add_file(&path, "apply_patch", ts);
            }
        }
        if is_shell_tool(name) {
            let cmd = p
                .get("action")
                .and_then(|a| a.get("command"))
                .cloned()
                .or_else(|| {
                    serde_json::from_str::<Value>(input)
                        .ok()
                        .and_then(|v| v.get("command").or_else(|| v.get("cmd")).cloned())
                });
            if let Some(cmd) = cmd {
                for path in shell_read_paths(&cmd) {
                    self.add_file(&path, name, ts);
                }
            }
        }
    }

    /// A completed turn item (`event_msg` `item_completed`, Codex 0.148+): `{thread_id,
    /// turn_id, item: TurnItem}` where the item is tagged by `type` (`CommandExecution`,
    /// `FileChange`, `McpToolCall`, `WebSearch`...; snake_case names and the legacy event
    /// names `exec_command_end`, `patch_apply_end`, `mcp_tool_call_end`, `web_search_end`
    /// read the same). Rollouts whose history holds no `function_call` for the work keep the
    /// commands and edited files only here: each becomes a tool call and its result, unless
    /// a response item already recorded that call, in which case only its files are added.
    /// Messages, reasoning and plans are echoes of response items and add nothing.
    fn item_completed(&mut self, item: &Value, ts: Option<&str>) {
        let ty = item.get("type").and_then(Value::as_str).unwrap_or_default();
        let str_at = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| item.get(*k).and_then(Value::as_str))
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let id = str_at(&["call_id", "callId", "id"]);
        let status = str_at(&["status"]).unwrap_or_default().to_ascii_lowercase();
        let failed = matches!(status.as_str(), "failed" | "declined" | "error");
        let (name, input, output, is_error) = match ty {
            "CommandExecution" | "command_execution" | "exec_command_end" => {
                let command = item.get("command").cloned().unwrap_or(Value::Null);
                let parsed = item.get("parsedCmd").or_else(|| item.get("parsed_cmd"));
                for c in parsed.and_then(Value::as_array).into_iter().flatten() {
                    if c.get("type").and_then(Value::as_str) == Some("read") {
                        if let Some(path) = c.get("path").and_then(Value::as_str) {
                            self.add_file(path, "shell", ts);
                        }
                    }
                }
                for path in shell_read_paths(&command) {
                    self.add_file(&path, "shell", ts);
                }
                let exit = item
                    .get("exitCode")
                    .or_else(|| item.get("exit_code"))
                    .and_then(Value::as_i64);
                let output = str_at(&["aggregatedOutput", "aggregated_output", "formattedOutput"])
                    .or_else(|| str_at(&["stdout"]))
                    .unwrap_or_default();
                let input = serde_json::json!({ "command": command, "cwd": item.get("cwd") });
                let error = failed || exit.is_some_and(|c| c != 0);
                ("shell".to_string(), input, output, error)
            }
            "FileChange" | "file_change" | "patch_apply_end" => {
                let paths: Vec<String> = item
                    .get("changes")
                    .and_then(Value::as_object)
                    .map(|c| c.keys().cloned().collect())
                    .unwrap_or_default();
                for path in &paths {
                    self.add_file(path, "apply_patch", ts);
                }
                let success = item.get("success").and_then(Value::as_bool);
                let output = [str_at(&["stdout"]), str_at(&["stderr"])]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("\n");
                let input = serde_json::json!({ "files": paths });
                (
                    "apply_patch".to_string(),
                    input,
                    output,
                    failed || success == Some(false),
                )
            }
            "McpToolCall" | "mcp_tool_call" | "mcp_tool_call_end" => {
                let inv = item.get("invocation").unwrap_or(item);
                let part = |k: &str| inv.get(k).and_then(Value::as_str).unwrap_or("unknown");
                let name = format!("mcp__{}__{}", part("server"), part("tool"));
                let input = inv.get("arguments").cloned().unwrap_or(Value::Null);
                let error = item.get("error").filter(|e| !e.is_null()).map(|e| {
                    e.get("message")
                        .and_then(Value::as_str)
                        .map_or_else(|| e.to_string(), str::to_string)
                });
                let result = item.get("result").filter(|r| !r.is_null());
                let is_error = failed
                    || error.is_some()
                    || result
                        .and_then(|r| r.get("isError").or_else(|| r.get("Err")))
                        .is_some_and(|e| e.as_bool() != Some(false));
                let output = error.unwrap_or_else(|| {
                    result
                        .map(|r| content_text(r.get("content").or(Some(r))))
                        .unwrap_or_default()
                });
                (name, input, output, is_error)
            }
            "WebSearch" | "web_search" | "web_search_end" => {
                let input = serde_json::json!({
                    "query": item.get("query"),
                    "action": item.get("action"),
                });
                ("web_search".to_string(), input, String::new(), failed)
            }
            // Echoes of response items, and items with nothing to index.
            _ => return,
        };
        let input = input.to_string();
        self.add_refs(&input, false, ts);
        if name == "shell" {
            self.add_refs(&output, true, ts);
        }
        if let Some(known) = id.as_ref().filter(|id| self.st.known_calls.contains(*id)) {
            if is_error {
                // The call's output may already be in this parse, or come later.
                let result = self.out.messages.iter_mut().rev().find(|m| {
                    m.kind() == MessageKind::ToolResult && m.tool_call_id.as_ref() == Some(known)
                });
                match result {
                    Some(m) => m.is_error = true,
                    None => {
                        self.st.failed_calls.insert(known.clone());
                    }
                }
            }
            return;
        }
        if let Some(id) = &id {
            self.st.known_calls.insert(id.clone());
        }
        let mut call = self.message(Role::Assistant, MessageKind::ToolCall, String::new(), ts);
        call.tool_name = Some(name.clone());
        call.tool_call_id = id.clone();
        call.tool_input = Some(input);
        self.push(call);
        let mut result = self.message(Role::Tool, MessageKind::ToolResult, String::new(), ts);
        result.tool_name = Some(name);
        result.tool_call_id = id;
        result.tool_output = Some(output);
        result.is_error = is_error;
        self.push(result);
    }

    /// Returns whether reasoning `text` is new in this turn, and remembers it.
    fn first_reasoning(&mut self, text: &str) -> bool {
        let t = text.trim();
        !t.is_empty()
            && self
                .st
                .reasoning_seen
                .insert(xxhash_rust::xxh3::xxh3_64(t.as_bytes()))
    }

    fn event(&mut self, line: u64, p: &Value, ts: Option<&str>, raw: &Value) {
        let t = p.get("type").and_then(Value::as_str).unwrap_or_default();
        match t {
            "token_count" => self.token_count(line, p, ts),
            // Usually an echo of a `reasoning` response item; some rollouts hold no such item
            // for it (issue 40), so it is kept unless that item gives the same text.
            "agent_reasoning" => {
                let text = p.get("text").and_then(Value::as_str).unwrap_or_default();
                if self.first_reasoning(text) {
                    let m = self.message(
                        Role::Assistant,
                        MessageKind::Thinking,
                        text.trim().to_string(),
                        ts,
                    );
                    self.push(m);
                }
            }
            "item_completed" => {
                if let Some(item) = p.get("item").filter(|i| i.is_object()) {
                    self.item_completed(item, ts);
                }
            }
            "thread_name_updated" => {
                if let Some(n) = p
                    .get("thread_name")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                {
                    self.st.title = Some(n.to_string());
                    self.st.title_from_agent = true;
                }
            }
            "patch_apply_end" => {
                if let Some(changes) = p.get("changes").and_then(Value::as_object) {
                    let paths: Vec<String> = changes.keys().cloned().collect();
                    for path in paths {
                        self.add_file(&path, "apply_patch", ts);
                    }
                }
            }
            "exec_command_end" => {
                if let Some(parsed) = p.get("parsed_cmd").and_then(Value::as_array) {
                    let paths: Vec<String> = parsed
                        .iter()
                        .filter(|c| c.get("type").and_then(Value::as_str) == Some("read"))
                        .filter_map(|c| c.get("path").and_then(Value::as_str))
                        .map(str::to_string)
                        .collect();
                    for path in paths {
                        self.add_file(&path, "shell", ts);
                    }
                }
            }
            "collab_agent_spawn_end" => {
                // Links the spawned thread (a subagent rollout whose session_meta names this
                // thread as its parent) to the call that spawned it.
                let call = p
                    .get("call_id")
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty());
                let child = p
                    .get("new_thread_id")
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty());
                if let (Some(call), Some(child)) = (call, child) {
                    let name = p
                        .get("new_agent_nickname")
                        .and_then(Value::as_str)
                        .unwrap_or("subagent");
                    let mut m = self.message(
                        Role::System,
                        MessageKind::Meta,
                        format!("spawned {name}"),
                        ts,
                    );
                    m.tool_call_id = Some(call.to_string());
                    m.agent_ref = Some(child.to_string());
                    self.push(m);
                }
            }
            "error" | "stream_error" => {
                let m = self.message(Role::System, MessageKind::Error, error_text(p), ts);
                self.push(m);
            }
            "context_compacted" => {
                let m = self.message(Role::System, MessageKind::Compaction, String::new(), ts);
                self.push(m);
            }
            "turn_aborted"
            | "thread_rolled_back"
            | "entered_review_mode"
            | "exited_review_mode"
            | "undo_completed" => {
                let detail = p
                    .get("reason")
                    .or_else(|| p.get("message"))
                    .and_then(Value::as_str)
                    .map(|r| format!("{t}: {r}"))
                    .unwrap_or_else(|| t.to_string());
                let mut m = self.message(Role::System, MessageKind::Meta, detail, ts);
                m.extra = Some(p.to_string());
                self.push(m);
            }
            // UI echoes of response items and telemetry: the response items hold the content.
            "user_message"
            | "agent_message"
            | "agent_reasoning_raw_content"
            | "agent_reasoning_section_break"
            | "task_started"
            | "task_complete"
            | "turn_started"
            | "turn_complete"
            | "exec_command_begin"
            | "patch_apply_begin"
            | "mcp_tool_call_begin"
            | "mcp_tool_call_end"
            | "web_search_begin"
            | "web_search_end"
            | "image_generation_begin"
            | "image_generation_end"
            | "view_image_tool_call"
            | "dynamic_tool_call_request"
            | "dynamic_tool_call_response"
            | "collab_agent_spawn_begin"
            | "collab_waiting_begin"
            | "collab_waiting_end"
            | "collab_close_begin"
            | "collab_close_end"
            | "collab_agent_interaction_begin"
            | "collab_agent_interaction_end"
            | "item_started"
            | "thread_settings_applied"
            | "thread_goal_updated"
            | "guardian_assessment"
            | "sub_agent_activity"
            | "turn_diff"
            | "plan_update"
            | "background_event" => {}
            _ => self.unknown(raw, ts),
        }
    }

    fn compacted(&mut self, p: &Value, ts: Option<&str>) {
        let text = p
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.st.checkpoints += 1;
        self.out.checkpoints.push(Checkpoint {
            number: self.st.checkpoints,
            title: Some("Compaction".into()),
            overview: (!text.is_empty()).then(|| text.clone()),
            created_at: ts.map(str::to_string),
            ..Checkpoint::default()
        });
        let m = self.message(Role::System, MessageKind::Summary, text, ts);
        self.push(m);
    }

    fn token_count(&mut self, line: u64, p: &Value, ts: Option<&str>) {
        let info = p.get("info").filter(|i| !i.is_null());
        let total = info
            .and_then(|i| i.get("total_token_usage"))
            .and_then(Counts::from_json);
        let last = info
            .and_then(|i| i.get("last_token_usage"))
            .and_then(Counts::from_json);
        let delta = match total {
            Some(total) => {
                if self.in_replay(ts) {
                    self.st.last_total = Some(total);
                    return;
                }
                let prev = self.st.last_total.unwrap_or_default();
                let d = match total.minus(&prev) {
                    Some(d) => d,
                    // The counter restarted: this event's own numbers are the request.
                    None => last.unwrap_or(total),
                };
                self.st.last_total = Some(total);
                d
            }
            None => {
                // Per-request shapes (older and headless builds).
                match last
                    .or_else(|| info.and_then(Counts::from_json))
                    .or_else(|| Counts::from_json(p))
                    .or_else(|| p.get("usage").and_then(Counts::from_json))
                {
                    Some(c) => c,
                    None => return,
                }
            }
        };
        if delta.is_zero() {
            return;
        }
        let cached = delta.cached.min(delta.input);
        let cache_write = delta.cache_write.min(delta.input - cached);
        self.out.usage.push(Usage {
            request_key: format!("line:{line}"),
            message_id: None,
            message_seq: self.st.last_assistant_seq,
            model: self.st.model.clone(),
            timestamp: ts.map(str::to_string),
            input_tokens: delta.input - cached - cache_write,
            output_tokens: delta.output,
            cache_creation_tokens: cache_write,
            cache_creation_1h_tokens: 0,
            cache_read_tokens: cached,
            reasoning_tokens: delta.reasoning.min(delta.output),
            cost_usd: None,
            is_sidechain: false,
            tokens_known: true,
            has_speed: false,
            ..Usage::default()
        });
    }

    /// Whether a cumulative token count replays the parent's counters (see the module docs).
    fn in_replay(&mut self, ts: Option<&str>) -> bool {
        if !self.st.replays_parent || self.st.replay_done {
            return false;
        }
        let second = ts.map(second_of);
        if self.st.replay_second.is_none() {
            self.st.replay_second = second.clone();
        }
        let replayed = match (&second, &self.st.replay_second) {
            (Some(s), Some(r)) => s <= r,
            // Without timestamps only the first count can be told to be a replay.
            _ => self.st.last_total.is_none(),
        };
        if !replayed {
            self.st.replay_done = true;
        }
        replayed
    }

    fn finish(&mut self, mode: UpdateMode) -> Session {
        let st = &self.st;
        let native = st
            .native_id
            .clone()
            .or_else(|| st.name_id.clone())
            .unwrap_or_else(|| "unknown".into());
        let mut meta = SessionMeta::new(session_id_for(&native), SourceKind::Codex, native);
        meta.title = st.title.clone();
        meta.cwd = st.cwd.clone();
        meta.repository = st.repository.clone();
        meta.branch = st.branch.clone();
        meta.created_at = st.created_at.clone();
        meta.updated_at = st.updated_at.clone();
        meta.agent_version = st.agent_version.clone();
        meta.parent = st.parent.clone();
        let mut session = Session::new(meta);
        session.mode = mode;
        session.messages = std::mem::take(&mut self.out.messages);
        if mode == UpdateMode::Replace {
            let order: Vec<usize> = (0..session.messages.len()).collect();
            turns::assign_turn_indexes(&mut session.messages, &order);
            session.turns = turns::build_turns(&session.messages);
        }
        session.turn_count = st.turn_count;
        session.files = std::mem::take(&mut self.out.files);
        session.refs = std::mem::take(&mut self.out.refs);
        session.usage = std::mem::take(&mut self.out.usage);
        session.checkpoints = std::mem::take(&mut self.out.checkpoints);
        for m in &st.models {
            session.observe_model(m);
        }
        session
    }
}

/// Returns whether a file is a Codex rollout by its name or its first line (whatever folder
/// it sits in).
pub fn detect_format(path: &Path, head: &[u8]) -> bool {
    if is_rollout_name(path) {
        return true;
    }
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let Ok(v) = serde_json::from_slice::<Value>(first) else {
        return false;
    };
    v.get("type").and_then(Value::as_str) == Some("session_meta")
        && v.get("payload").is_some_and(Value::is_object)
}

/// The store id for a Codex thread id: the UUID itself, else `codex:<id>`.
fn session_id_for(native: &str) -> SessionId {
    ids::session_id(SourceKind::Codex, native)
}

/// The uuid at the end of `rollout-<timestamp>-<uuid>.jsonl`.
fn uuid_in_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let tail = stem.get(stem.len().checked_sub(36)?..)?;
    ids::is_uuid(tail).then(|| tail.to_ascii_lowercase())
}

/// `YYYY-MM-DDTHH:MM:SS` of a normalized timestamp.
fn second_of(ts: &str) -> String {
    trail_model::truncate_chars(ts, 19).to_string()
}

fn looks_like_path(s: &str) -> bool {
    let b = s.as_bytes();
    s.starts_with('/')
        || s.starts_with('\\')
        || s.starts_with('~')
        || (b.len() >= 3
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && matches!(b[2], b'\\' | b'/'))
}

/// `owner/name` of a GitHub remote URL (https, ssh or scp-like).
pub(crate) fn github_repo(url: &str) -> Option<String> {
    let url = url.trim();
    let rest = [
        "https://github.com/",
        "http://github.com/",
        "ssh://git@github.com/",
        "git@github.com:",
        "git://github.com/",
    ]
    .iter()
    .find_map(|p| url.strip_prefix(p))?;
    let rest = rest.trim_end_matches('/');
    let rest = rest.strip_suffix(".git").unwrap_or(rest);
    let mut parts = rest.split('/');
    let owner = parts.next().filter(|o| !o.is_empty())?;
    let name = parts.next().filter(|n| !n.is_empty())?;
    if parts.next().is_some() {
        return None;
    }
    Some(format!("{owner}/{name}"))
}

fn is_response_item_type(t: &str) -> bool {
    matches!(
        t,
        "message"
            | "reasoning"
            | "function_call"
            | "function_call_output"
            | "custom_tool_call"
            | "custom_tool_call_output"
            | "local_shell_call"
            | "local_shell_call_output"
            | "web_search_call"
    )
}

fn is_shell_tool(name: &str) -> bool {
    matches!(
        name,
        "shell" | "local_shell" | "exec_command" | "shell_command" | "container.exec" | "bash"
    )
}

/// Whether a user message is context Codex injected rather than what the human typed: a
/// single tagged block (`<environment_context>...</environment_context>`), or AGENTS.md text.
fn is_injected(text: &str) -> bool {
    let t = text.trim();
    if t.starts_with("# AGENTS.md instructions") || t.starts_with("<environment_context") {
        return true;
    }
    let Some(rest) = t.strip_prefix('<') else {
        return false;
    };
    let tag: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    !tag.is_empty() && t.ends_with(&format!("</{tag}>"))
}

/// Joins the text parts of a message's `content` (a string or a list of parts).
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(_)) => join_texts(content),
        _ => String::new(),
    }
}

/// Joins the `text` fields of a list of parts (`input_text`, `output_text`, `summary_text`...).
/// The texts of a list of parts (strings or `{text}` objects).
fn texts_of(parts: Option<&Value>) -> Vec<String> {
    let Some(parts) = parts.and_then(Value::as_array) else {
        return Vec::new();
    };
    parts
        .iter()
        .filter_map(|p| match p {
            Value::String(s) => Some(s.as_str()),
            _ => p.get("text").and_then(Value::as_str),
        })
        .map(str::to_string)
        .collect()
}

fn join_texts(parts: Option<&Value>) -> String {
    let Some(parts) = parts.and_then(Value::as_array) else {
        return String::new();
    };
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| match p {
            Value::String(s) => Some(s.as_str()),
            _ => p.get("text").and_then(Value::as_str),
        })
        .collect();
    texts.join("\n")
}

/// A value as JSON text: strings that hold JSON are kept, other strings are quoted.
fn json_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => {
            if serde_json::from_str::<Value>(s).is_ok() {
                s.clone()
            } else {
                Value::String(s.clone()).to_string()
            }
        }
        Some(v) => v.to_string(),
        None => "null".into(),
    }
}

/// The readable text of an `error` / `stream_error` event: `kind: message`.
///
/// Codex has written the message at the top (`{"message": ...}`, the `ErrorEvent` of
/// openai/codex's protocol, sometimes with a `codex_error_info` classification) and inside an
/// `error` object (`{"error": {"kind"|"type"|"code": ..., "message": ...}}`, as app-server
/// notifications carry it). Both halves are kept so `show` and `improve` say what failed
/// (issue 21: an error object used to leave a bare `!`).
fn error_text(p: &Value) -> String {
    let obj = p.get("error").filter(|e| e.is_object());
    let message = p
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| obj.and_then(|e| e.get("message")).and_then(Value::as_str))
        .or_else(|| p.get("error").and_then(Value::as_str))
        .unwrap_or_default()
        .trim();
    let label = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Value::Number(n) => Some(n.to_string()),
            // `codex_error_info` is an enum: a bare string, or `{"variant": {...}}`.
            Value::Object(o) => o.keys().next().cloned(),
            _ => None,
        }
    };
    let kind = obj
        .and_then(|e| ["kind", "type", "code"].iter().find_map(|k| e.get(*k)))
        .or_else(|| p.get("codex_error_info"))
        .or_else(|| p.get("codexErrorInfo"))
        .and_then(label);
    match kind {
        Some(k) if message.is_empty() => k,
        Some(k) if !message.starts_with(&k) => format!("{k}: {message}"),
        _ if message.is_empty() => "error (no message recorded)".to_string(),
        _ => message.to_string(),
    }
}

fn collect_strings(v: &Value) -> String {
    let mut out = String::new();
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(v, &mut out);
    out
}

/// A tool output as text, and whether it reports a failure (non-zero exit code).
fn output_text(v: Option<&Value>) -> (String, bool) {
    let text = match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(_)) => join_texts(v),
        Some(Value::Object(o)) => match o.get("text").and_then(Value::as_str) {
            Some(t) => t.to_string(),
            None => Value::Object(o.clone()).to_string(),
        },
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let is_error = exit_code(&text).is_some_and(|c| c != 0);
    (text, is_error)
}

/// The exit code a shell output reports: `{"metadata":{"exit_code":N}}` JSON, or an
/// `Exit code: N` / `Process exited with code N` line near the top.
fn exit_code(text: &str) -> Option<i64> {
    if text.starts_with('{') {
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            if let Some(c) = v
                .get("metadata")
                .and_then(|m| m.get("exit_code"))
                .and_then(Value::as_i64)
            {
                return Some(c);
            }
        }
    }
    for line in text.lines().take(8) {
        let line = line.trim();
        let rest = line
            .strip_prefix("Exit code:")
            .or_else(|| line.strip_prefix("Process exited with code"));
        if let Some(n) = rest.and_then(|r| r.trim().parse::<i64>().ok()) {
            return Some(n);
        }
    }
    None
}

/// Paths an apply_patch body adds, updates, deletes or moves to.
fn patch_files(patch: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end();
        for prefix in [
            "*** Update File: ",
            "*** Add File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ] {
            if let Some(p) = line.strip_prefix(prefix) {
                let p = p.trim();
                if !p.is_empty() && !out.iter().any(|x| x == p) {
                    out.push(p.to_string());
                }
            }
        }
    }
    out
}

/// Files a simple read-only shell command names (`cat a b`, `sed -n 1,5p f`, `head f`...).
/// Anything with pipes, redirections or substitutions is left alone.
fn shell_read_paths(cmd: &Value) -> Vec<String> {
    let script: String = match cmd {
        Value::String(s) => s.clone(),
        Value::Array(a) => {
            let words: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [sh, flag, script] if sh.ends_with("sh") && flag.starts_with('-') => {
                    script.to_string()
                }
                _ => words.join(" "),
            }
        }
        _ => return Vec::new(),
    };
    if script.contains(['|', ';', '&', '>', '<', '$', '`', '\n', '*', '"', '\'']) {
        return Vec::new();
    }
    let mut words = script.split_whitespace();
    let Some(prog) = words.next() else {
        return Vec::new();
    };
    let args: Vec<&str> = words.collect();
    let files: Vec<&str> = match prog {
        "cat" | "head" | "tail" | "nl" | "less" | "wc" => {
            args.into_iter().filter(|a| !a.starts_with('-')).collect()
        }
        // `sed -n 1,20p file`: the last word.
        "sed" if args.first() == Some(&"-n") && args.len() == 3 => vec![args[2]],
        _ => Vec::new(),
    };
    files
        .into_iter()
        .filter(|f| !f.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_urls_map_to_owner_name() {
        assert_eq!(
            github_repo("https://github.com/acme/widgets.git").as_deref(),
            Some("acme/widgets")
        );
        assert_eq!(
            github_repo("git@github.com:acme/widgets.git").as_deref(),
            Some("acme/widgets")
        );
        assert_eq!(github_repo("https://example.invalid/repo.git"), None);
    }

    #[test]
    fn injected_context_is_recognized() {
        assert!(is_injected(
            "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"
        ));
        assert!(is_injected("# AGENTS.md instructions for /x\n\nbe nice"));
        assert!(!is_injected("<b>bold</b> is not a context block? fix it"));
        assert!(!is_injected("fix the bug"));
    }

    #[test]
    fn exit_codes() {
        assert_eq!(
            exit_code(r#"{"output":"x","metadata":{"exit_code":2}}"#),
            Some(2)
        );
        assert_eq!(
            exit_code("Exit code: 1\nWall time: 0.1s\nOutput:\n"),
            Some(1)
        );
        assert_eq!(exit_code("Process exited with code 0\n"), Some(0));
        assert_eq!(exit_code("plain"), None);
    }

    #[test]
    fn shell_reads() {
        let cmd = serde_json::json!(["bash", "-lc", "sed -n 1,40p src/main.rs"]);
        assert_eq!(shell_read_paths(&cmd), vec!["src/main.rs"]);
        let cmd = serde_json::json!(["bash", "-lc", "cat a.txt | wc -l"]);
        assert!(shell_read_paths(&cmd).is_empty());
    }
}
