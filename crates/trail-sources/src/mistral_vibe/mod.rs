//! Mistral Vibe sessions: `<vibe home>/logs/session/<prefix>_<YYYYMMDD_HHMMSS>_<short id>/`
//! holding `messages.jsonl` (OpenAI-style messages, appended after each interaction) and
//! `meta.json` (rewritten whole: session id, parent, start and end times, git branch, working
//! folder, title, model and the session's token totals). A subagent started by the `task`
//! tool logs under its parent's folder, in `agents/<agent>_<ts>_<short id>/`.
//!
//! Read as Vibe writes them (mistralai/mistral-vibe `vibe/core/session/session_logger.py`):
//! system messages are not logged; a tool message has no `message_id`; an `injected` user
//! message was sent by Vibe or a hook, not typed. Messages carry no timestamps: the session's
//! times come from `meta.json`, else from the folder name.
//!
//! # Rewinds
//! A rewind in Vibe starts a new session folder whose `meta.json` names the old one as its
//! parent. A file that repeats a record (the same `message_id`, or a result for the same tool
//! call) replays the conversation up to it: the conversation continues from that record, and
//! what followed its first copy stays as an abandoned branch (off the main chain).
//!
//! # Usage rule
//! Messages hold no token counts. `meta.json`'s `stats` hold the session's totals: one usage
//! row, keyed `session`, with `session_prompt_tokens` as input, `session_completion_tokens` as
//! output and `session_cost` (Vibe's own estimate from its price table) as the cost. Each
//! parse rewrites that row, so it counts once however often the file grows.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use trail_model::{
    time, turns, Message, MessageKind, ParentLink, PromptSource, Role, Session, SessionMeta,
    SourceKind, TitleRank, UpdateMode, Usage,
};

use crate::json_fields::{jcount, jstr};
use crate::openai_chat::{self, ChatReader};
use crate::replay_chain::{parse_replaying, replaying_log, ReplayChain};
use crate::{discover, ids, jsonl, FileParse, ParseRequest, Source, SourceError};

/// Mistral Vibe session logs.
pub struct MistralVibe;

/// The messages file of a session folder.
pub const MESSAGES_FILE: &str = "messages.jsonl";
/// The metadata file beside it.
pub const META_FILE: &str = "meta.json";
/// Version of the resume state layout; a mismatch makes the next parse start over.
const STATE_VERSION: u32 = 1;
/// Characters of the first prompt kept as a title.
const TITLE_CHARS: usize = 200;
/// Tools whose output may hold git's commit lines.
const SHELL_TOOLS: &[&str] = &["bash"];

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version.
pub const PARSER_VERSION: u32 = 1;

impl Source for MistralVibe {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::MistralVibe
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            // The Vibe home (`logs/session` below it) or the session log folder itself.
            let logs = root.join("logs").join("session");
            let base = if logs.is_dir() { logs } else { root.clone() };
            out.extend(discover::walk_files(&base, 5, is_messages_file));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if !is_messages_file(path) {
            return false;
        }
        let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
        serde_json::from_slice::<Value>(first)
            .ok()
            .is_some_and(|v| v.get("role").is_some_and(Value::is_string))
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        parse_replaying::<Parser>(request, "a message")
    }
}

/// Returns whether `path` is a `messages.jsonl`.
fn is_messages_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == MESSAGES_FILE)
}

/// What a resumed parse needs of the lines before it.
#[derive(Serialize, Deserialize)]
struct State {
    version: u32,
    /// Messages so far (the next message's seq).
    seq: u32,
    turn_count: u32,
    current_turn: Option<u32>,
    /// Record key (`message_id`, or `tool:<call id>`) -> seq of its last message.
    keys: HashMap<String, u32>,
    tool_names: HashMap<String, String>,
}

impl State {
    fn new() -> Self {
        State {
            version: STATE_VERSION,
            seq: 0,
            turn_count: 0,
            current_turn: None,
            keys: HashMap::new(),
            tool_names: HashMap::new(),
        }
    }
}

replaying_log!(Parser, State, STATE_VERSION);

struct Parser {
    st: State,
    chat: ChatReader,
    /// Messages read by this parse.
    messages: Vec<Message>,
    /// Full parses: the conversation, rewinds included.
    chain: ReplayChain,
    /// A resumed parse met a replayed record.
    resumed: bool,
    replayed: bool,
}

impl Parser {
    fn new(mut st: State, resumed: bool) -> Self {
        let chat = ChatReader {
            tool_names: std::mem::take(&mut st.tool_names),
        };
        Parser {
            st,
            chat,
            messages: Vec::new(),
            chain: ReplayChain::default(),
            resumed,
            replayed: false,
        }
    }

    fn record(&mut self, v: &Value) {
        let key = record_key(v);
        if let Some(seen) = key.as_ref().and_then(|k| self.st.keys.get(k).copied()) {
            if self.resumed {
                self.replayed = true;
            } else {
                self.rewind_to(seen);
            }
            return;
        }
        let produced = self.convert(v);
        for m in produced {
            self.push(m);
        }
        if let Some(k) = key {
            if self.st.seq > 0 {
                self.st.keys.insert(k, self.st.seq - 1);
            }
        }
    }

    /// The conversation continues after the message at `seq`; what followed it is abandoned.
    fn rewind_to(&mut self, seq: u32) {
        self.chain.rewind_to(seq as usize);
    }

    fn convert(&mut self, v: &Value) -> Vec<Message> {
        let native = jstr(v, "message_id").map(str::to_string);
        let role = jstr(v, "role").unwrap_or("assistant");
        let mut out = match role {
            "user" => vec![prompt(v)],
            "assistant" => {
                let mut ms = self.chat.assistant(v, &["reasoning_content"]);
                if let (Some(th), Some(id)) = (
                    ms.iter_mut()
                        .find(|m| m.kind == Some(MessageKind::Thinking)),
                    jstr(v, "reasoning_message_id"),
                ) {
                    th.native_id = Some(id.to_string());
                }
                ms
            }
            "tool" => vec![self.chat.tool_result(v, is_error_output)],
            "system" => vec![Message::new(
                Role::System,
                MessageKind::Meta,
                openai_chat::content_text(v.get("content")),
            )],
            _ => {
                let mut m = Message::new(Role::System, MessageKind::Unknown, String::new());
                m.extra = Some(v.to_string());
                vec![m]
            }
        };
        for m in &mut out {
            if m.native_id.is_none() {
                m.native_id.clone_from(&native);
            }
        }
        out
    }

    fn push(&mut self, mut m: Message) {
        m.seq = self.st.seq;
        self.st.seq += 1;
        if self.resumed {
            // Appended lines continue the main chain.
            if m.kind == Some(MessageKind::Prompt) {
                self.st.current_turn = Some(self.st.turn_count);
                self.st.turn_count += 1;
            }
            m.turn_index = self.st.current_turn;
            m.on_main_chain = true;
        } else {
            self.chain.push();
        }
        self.messages.push(m);
    }

    /// Assigns main-chain membership and turns after a full parse.
    fn assign_turns(&mut self) {
        let chain = self.chain.main_chain();
        for &i in &chain {
            self.messages[i].on_main_chain = true;
        }
        self.st.turn_count = turns::assign_turn_indexes(&mut self.messages, &chain);
        self.st.current_turn = self.st.turn_count.checked_sub(1);
    }
}

/// The key a replay repeats: the `message_id`, or the tool call a result answers.
fn record_key(v: &Value) -> Option<String> {
    if let Some(id) = jstr(v, "message_id").filter(|s| !s.is_empty()) {
        return Some(id.to_string());
    }
    (jstr(v, "role") == Some("tool"))
        .then(|| jstr(v, "tool_call_id").map(|id| format!("tool:{id}")))
        .flatten()
}

fn prompt(v: &Value) -> Message {
    let mut m = Message::new(
        Role::User,
        MessageKind::Prompt,
        openai_chat::content_text(v.get("content")),
    );
    m.prompt_source = match v.get("injected").and_then(Value::as_bool) {
        Some(true) => Some(PromptSource::System),
        Some(false) => Some(PromptSource::Typed),
        None => None,
    };
    m
}

/// Vibe wraps a failed tool's message in `<tool_error>` and a cancelled one in
/// `<user_cancellation>` (`vibe/core/utils/tags.py`).
fn is_error_output(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<tool_error>") || t.starts_with("<user_cancellation>")
}

fn finish(path: &Path, mut p: Parser, outcome: jsonl::LinesOutcome, mode: UpdateMode) -> FileParse {
    if mode == UpdateMode::Replace {
        p.assign_turns();
    }
    let meta_json = read_meta(path);
    let mut session = Session::new(session_meta(path, meta_json.as_ref()));
    session.mode = mode;
    session.turn_count = p.st.turn_count;
    let model = meta_json.as_ref().and_then(model_of);
    for m in &mut p.messages {
        if m.role == Some(Role::Assistant) {
            m.model.clone_from(&model);
        }
    }
    if let Some(m) = &model {
        session.observe_model(m);
    }
    session.messages = std::mem::take(&mut p.messages);
    if mode == UpdateMode::Replace {
        session.turns = turns::build_turns(&session.messages);
        if session.meta.title.is_none() {
            session.meta.title = first_prompt_title(&session.messages);
            session.meta.title_rank = TitleRank::FIRST_PROMPT;
        }
    }
    openai_chat::derive_files_and_refs(&mut session, SHELL_TOOLS);
    if let Some(u) = meta_json
        .as_ref()
        .and_then(|m| usage_of(m, model.as_deref()))
    {
        session.usage.push(u);
    }
    p.st.tool_names = std::mem::take(&mut p.chat.tool_names);
    let empty = session.messages.is_empty() && meta_json.is_none();
    FileParse {
        sessions: if empty && mode == UpdateMode::Replace {
            Vec::new()
        } else {
            vec![session]
        },
        issues: outcome.issues,
        bytes_parsed: outcome.bytes_parsed,
        bytes_read: outcome.bytes_read,
        lines: outcome.lines,
        state: serde_json::to_vec(&p.st).ok(),
        more: outcome.more,
        ..FileParse::default()
    }
}

/// `meta.json` beside the messages, if it is there and is a JSON object.
fn read_meta(messages: &Path) -> Option<Value> {
    let bytes = crate::whole::read(&messages.parent()?.join(META_FILE)).ok()?;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

fn session_meta(path: &Path, meta: Option<&Value>) -> SessionMeta {
    let folder = folder_name(path.parent());
    let get = |k: &str| meta.and_then(|m| jstr(m, k)).filter(|s| !s.is_empty());
    let native = get("session_id")
        .map(str::to_string)
        .or_else(|| folder.clone())
        .unwrap_or_else(|| "unknown".into());
    let mut sm = SessionMeta::new(
        ids::session_id(SourceKind::MistralVibe, &native),
        SourceKind::MistralVibe,
        &native,
    );
    sm.cwd = meta
        .and_then(|m| m.get("environment"))
        .and_then(|e| jstr(e, "working_directory"))
        .map(str::to_string);
    sm.branch = get("git_branch").map(str::to_string);
    for k in ["start_time", "end_time"] {
        if let Some(t) = get(k).and_then(time::normalize) {
            sm.observe_timestamp(&t);
        }
    }
    if sm.created_at.is_none() {
        if let Some(t) = folder.as_deref().and_then(folder_time) {
            sm.observe_timestamp(&t);
        }
    }
    if let Some(title) = get("title") {
        sm.title = Some(trail_model::truncate_chars(title, TITLE_CHARS).to_string());
        sm.title_rank = match get("title_source") {
            Some("manual") => TitleRank::USER,
            _ => TitleRank::SUMMARY,
        };
    }
    sm.parent = parent_link(path, get("parent_session_id"));
    sm
}

/// The parent session: `parent_session_id` (a fork, a rewind or a subagent), else the
/// session folder a subagent's `agents/` folder sits in.
fn parent_link(path: &Path, parent_id: Option<&str>) -> Option<ParentLink> {
    let native = match parent_id {
        Some(id) => id.to_string(),
        None => {
            let agents = path.parent()?.parent()?;
            if agents.file_name()? != "agents" {
                return None;
            }
            let parent_dir = agents.parent()?;
            read_meta(&parent_dir.join(MESSAGES_FILE))
                .and_then(|m| jstr(&m, "session_id").map(str::to_string))
                .or_else(|| folder_name(Some(parent_dir)))?
        }
    };
    Some(ParentLink {
        session_id: ids::session_id(SourceKind::MistralVibe, &native),
        tool_call_id: None,
        agent_ref: None,
    })
}

fn folder_name(dir: Option<&Path>) -> Option<String> {
    dir?.file_name()?.to_str().map(str::to_string)
}

/// The time in a session folder's name, `<prefix>_<YYYYMMDD>_<HHMMSS>_<short id>` (UTC).
fn folder_time(name: &str) -> Option<String> {
    let parts: Vec<&str> = name.split('_').collect();
    parts.windows(2).find_map(|w| {
        let (d, t) = (w[0], w[1]);
        let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
        if !(digits(d, 8) && digits(t, 6)) {
            return None;
        }
        time::normalize(&format!(
            "{}-{}-{}T{}:{}:{}Z",
            &d[..4],
            &d[4..6],
            &d[6..],
            &t[..2],
            &t[2..4],
            &t[4..]
        ))
    })
}

/// The model: `model`, else the configuration's active model alias.
fn model_of(meta: &Value) -> Option<String> {
    jstr(meta, "model")
        .or_else(|| meta.get("config").and_then(|c| jstr(c, "active_model")))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn usage_of(meta: &Value, model: Option<&str>) -> Option<Usage> {
    let stats = meta.get("stats").filter(|s| s.is_object())?;
    let input = jcount(stats.get("session_prompt_tokens"));
    let output = jcount(stats.get("session_completion_tokens"));
    let cost = stats
        .get("session_cost")
        .and_then(Value::as_f64)
        .filter(|c| c.is_finite() && *c > 0.0);
    Some(Usage {
        request_key: "session".into(),
        model: model.map(str::to_string),
        timestamp: jstr(meta, "end_time").and_then(time::normalize),
        input_tokens: input,
        output_tokens: output,
        cost_usd: cost,
        tokens_known: crate::shared::blocks::any_count(&[input, output]),
        ..Usage::default()
    })
}

fn first_prompt_title(messages: &[Message]) -> Option<String> {
    messages
        .iter()
        .find(|m| {
            m.kind == Some(MessageKind::Prompt)
                && m.prompt_source != Some(PromptSource::System)
                && !m.text.trim().is_empty()
        })
        .map(|m| trail_model::truncate_chars(m.text.trim(), TITLE_CHARS).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_give_the_start_time() {
        assert_eq!(
            folder_time("session_20260707_215731_2abf1f41").as_deref(),
            Some("2026-07-07T21:57:31.000Z")
        );
        assert_eq!(folder_time("checkpoint-rewind"), None);
    }

    #[test]
    fn tool_errors_are_recognised() {
        assert!(is_error_output(
            "<tool_error>bash failed: boom</tool_error>"
        ));
        assert!(!is_error_output("ok"));
    }
}
