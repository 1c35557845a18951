//! Kiro CLI's JSONL sessions: `sessions/cli/<uuid>.jsonl` plus `<uuid>.json`.
//!
//! Each line is `{"version":"v1","kind":K,"data":{"message_id",…,"content":[blocks]}}`:
//! - `Prompt`: text blocks (`{"kind":"text","data":…}`), `meta.timestamp` in epoch seconds;
//! - `AssistantMessage`: text blocks and `toolUse` blocks
//!   (`{toolUseId, name, input}`, the input's `__tool_use_purpose` saying why);
//! - `ToolResults`: `toolResult` blocks (`{toolUseId, content:[text|json blocks], status}`);
//! - `Clear`: `/clear` emptied the context and the conversation went on in the same file.
//!
//! A line that repeats an earlier `message_id` is a rewind replayed into the file (a real
//! recording of `/rewind` shows it): see [`crate::replay_chain`].
//!
//! The `.json` beside the file (rewritten whole) gives the session id, folder, times, title,
//! the model (`session_state.rts_model_state.model_info.model_id`) and one entry per user
//! turn in `session_state.conversation_metadata.user_turn_metadatas`.
//!
//! # Usage rule
//! One usage row per user turn of the `.json`, keyed by the turn's first message id, with its
//! `input_token_count` and `output_token_count` (Kiro records zeros it never measured: such a
//! row has `tokens_known = false`). Kiro bills in credits, not dollars: the turns'
//! `metering_usage` credits are summed into the session's metadata (`credits`). Each parse
//! rewrites the rows, so appends never count a turn twice.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use trail_model::{
    time, turns, Message, MessageKind, Role, Session, SessionMeta, SourceKind, TitleRank,
    UpdateMode, Usage,
};

use crate::json_fields::{jcount, jstr, value_text};
use crate::openai_chat::derive_files_and_refs;
use crate::replay_chain::{parse_replaying, replaying_log, ReplayChain};
use crate::{ids, jsonl, FileParse, ParseRequest, SourceError};

/// Version of the resume state layout; a mismatch makes the next parse start over.
const STATE_VERSION: u32 = 1;
const TITLE_CHARS: usize = 200;
/// Tools whose output may hold git's commit lines.
const SHELL_TOOLS: &[&str] = &["shell", "execute_bash", "executeBash"];
/// The record kinds Kiro writes.
const KINDS: &[&str] = &["Prompt", "AssistantMessage", "ToolResults", "Clear"];

/// Returns whether `head` starts with a Kiro CLI session record.
pub(crate) fn looks_like_session(head: &[u8]) -> bool {
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let Ok(v) = serde_json::from_slice::<Value>(first) else {
        return false;
    };
    jstr(&v, "version").is_some()
        && jstr(&v, "kind").is_some_and(|k| KINDS.contains(&k))
        && v.get("data").is_some_and(Value::is_object)
}

pub(crate) fn parse(request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
    parse_replaying::<Parser>(request, "a record")
}

/// What a resumed parse needs of the lines before it.
#[derive(Serialize, Deserialize)]
struct State {
    version: u32,
    seq: u32,
    turn_count: u32,
    current_turn: Option<u32>,
    /// `message_id` -> seq of the record's last message.
    keys: HashMap<String, u32>,
    /// Tool use id -> tool name.
    tool_names: HashMap<String, String>,
    /// The last prompt's time: Kiro stamps prompts only.
    last_time: Option<String>,
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
            last_time: None,
        }
    }
}

replaying_log!(Parser, State, STATE_VERSION);

struct Parser {
    st: State,
    messages: Vec<Message>,
    chain: ReplayChain,
    resumed: bool,
    replayed: bool,
}

impl Parser {
    fn new(st: State, resumed: bool) -> Self {
        Parser {
            st,
            messages: Vec::new(),
            chain: ReplayChain::default(),
            resumed,
            replayed: false,
        }
    }

    fn record(&mut self, v: &Value) {
        let data = v.get("data").unwrap_or(&Value::Null);
        let key = jstr(data, "message_id")
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        if let Some(seen) = key.as_ref().and_then(|k| self.st.keys.get(k).copied()) {
            if self.resumed {
                self.replayed = true;
            } else {
                self.chain.rewind_to(seen as usize);
            }
            return;
        }
        let produced = self.convert(jstr(v, "kind").unwrap_or(""), v, data);
        let produced_any = !produced.is_empty();
        for mut m in produced {
            m.native_id.clone_from(&key);
            self.push(m);
        }
        if let (Some(k), true) = (key, produced_any) {
            self.st.keys.insert(k, self.st.seq - 1);
        }
    }

    fn convert(&mut self, kind: &str, v: &Value, data: &Value) -> Vec<Message> {
        let blocks = data
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        match kind {
            "Prompt" => {
                if let Some(t) = data
                    .get("meta")
                    .and_then(|m| m.get("timestamp"))
                    .and_then(time::from_json)
                {
                    self.st.last_time = Some(t);
                }
                vec![Message::new(
                    Role::User,
                    MessageKind::Prompt,
                    block_text(blocks),
                )]
            }
            "AssistantMessage" => self.assistant(blocks),
            "ToolResults" => blocks
                .iter()
                .filter(|b| jstr(b, "kind") == Some("toolResult"))
                .map(|b| self.tool_result(b.get("data").unwrap_or(&Value::Null)))
                .collect(),
            "Clear" => vec![Message::new(
                Role::System,
                MessageKind::Compaction,
                "/clear",
            )],
            _ => {
                let mut m = Message::new(Role::System, MessageKind::Unknown, String::new());
                m.extra = Some(v.to_string());
                vec![m]
            }
        }
    }

    fn assistant(&mut self, blocks: &[Value]) -> Vec<Message> {
        let mut out = Vec::new();
        for b in blocks {
            match jstr(b, "kind") {
                Some("text") => {
                    let text = b.get("data").map(value_text).unwrap_or_default();
                    if !text.trim().is_empty() {
                        out.push(Message::new(Role::Assistant, MessageKind::Text, text));
                    }
                }
                Some("toolUse") => out.push(self.tool_use(b.get("data").unwrap_or(&Value::Null))),
                _ => {
                    let mut m = Message::new(Role::Assistant, MessageKind::Unknown, String::new());
                    m.extra = Some(b.to_string());
                    out.push(m);
                }
            }
        }
        out
    }

    fn tool_use(&mut self, d: &Value) -> Message {
        let name = jstr(d, "name").unwrap_or("unknown").to_string();
        let id = jstr(d, "toolUseId").map(str::to_string);
        if let Some(id) = &id {
            self.st.tool_names.insert(id.clone(), name.clone());
        }
        let input = d.get("input").cloned().unwrap_or(Value::Null);
        let purpose = jstr(&input, "__tool_use_purpose").unwrap_or("").to_string();
        let mut m = Message::new(Role::Assistant, MessageKind::ToolCall, purpose);
        m.tool_name = Some(name);
        m.tool_call_id = id;
        m.tool_input = Some(input.to_string());
        m
    }

    fn tool_result(&self, d: &Value) -> Message {
        let id = jstr(d, "toolUseId").map(str::to_string);
        let blocks = d
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let output = block_text(blocks);
        let failed_status = jstr(d, "status").is_some_and(|s| s.eq_ignore_ascii_case("error"));
        let mut m = Message::new(Role::Tool, MessageKind::ToolResult, String::new());
        m.is_error = failed_status || blocks.iter().any(failed_command);
        m.tool_name = id.as_ref().and_then(|i| self.st.tool_names.get(i).cloned());
        m.tool_call_id = id;
        m.tool_output = Some(output);
        m
    }

    fn push(&mut self, mut m: Message) {
        m.seq = self.st.seq;
        self.st.seq += 1;
        if m.timestamp.is_none() {
            m.timestamp.clone_from(&self.st.last_time);
        }
        if self.resumed {
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

    fn assign_turns(&mut self) {
        let chain = self.chain.main_chain();
        for &i in &chain {
            self.messages[i].on_main_chain = true;
        }
        self.st.turn_count = turns::assign_turn_indexes(&mut self.messages, &chain);
        self.st.current_turn = chain.last().and_then(|&i| self.messages[i].turn_index);
    }
}

/// The text of content blocks: text as it is, JSON serialized.
fn block_text(blocks: &[Value]) -> String {
    let texts: Vec<String> = blocks
        .iter()
        .filter_map(|b| match jstr(b, "kind") {
            Some("text") => b.get("data").map(value_text),
            Some("json") => b.get("data").map(Value::to_string),
            _ => None,
        })
        .filter(|t| !t.is_empty())
        .collect();
    texts.join("\n")
}

/// A shell result whose `exit_status` is not 0 (`"exit status: 1"`).
fn failed_command(block: &Value) -> bool {
    let status = block
        .get("data")
        .and_then(|d| jstr(d, "exit_status"))
        .unwrap_or("");
    let code = status.rsplit(':').next().unwrap_or("").trim();
    !code.is_empty() && code != "0"
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
    if let Some(m) = &model {
        session.observe_model(m);
        for msg in p
            .messages
            .iter_mut()
            .filter(|m| m.role == Some(Role::Assistant))
        {
            msg.model = Some(m.clone());
        }
    }
    for t in p.messages.iter().filter_map(|m| m.timestamp.clone()) {
        session.meta.observe_timestamp(&t);
    }
    session.messages = std::mem::take(&mut p.messages);
    if mode == UpdateMode::Replace {
        session.turns = turns::build_turns(&session.messages);
        if session.meta.title.is_none() {
            session.meta.title = session
                .messages
                .iter()
                .find(|m| m.kind == Some(MessageKind::Prompt) && !m.text.trim().is_empty())
                .map(|m| trail_model::truncate_chars(m.text.trim(), TITLE_CHARS).to_string());
            session.meta.title_rank = TitleRank::FIRST_PROMPT;
        }
    }
    derive_files_and_refs(&mut session, SHELL_TOOLS);
    if let Some(meta) = &meta_json {
        session.usage = turn_usage(meta, model.as_deref());
    }
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

/// The `<uuid>.json` beside `<uuid>.jsonl`.
fn meta_path(path: &Path) -> PathBuf {
    path.with_extension("json")
}

fn read_meta(path: &Path) -> Option<Value> {
    let bytes = crate::whole::read(&meta_path(path)).ok()?;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

fn session_meta(path: &Path, meta: Option<&Value>) -> SessionMeta {
    let get = |k: &str| meta.and_then(|m| jstr(m, k)).filter(|s| !s.is_empty());
    let native = get("session_id")
        .map(str::to_string)
        .or_else(|| path.file_stem()?.to_str().map(str::to_string))
        .unwrap_or_else(|| "unknown".into());
    let mut sm = SessionMeta::new(
        ids::session_id(SourceKind::Kiro, &native),
        SourceKind::Kiro,
        &native,
    );
    sm.cwd = get("cwd").map(str::to_string);
    for k in ["created_at", "updated_at"] {
        if let Some(t) = get(k).and_then(time::normalize) {
            sm.observe_timestamp(&t);
        }
    }
    if let Some(title) = get("title") {
        sm.title = Some(trail_model::truncate_chars(title, TITLE_CHARS).to_string());
        sm.title_rank = TitleRank::FIRST_PROMPT;
    }
    sm.metadata = meta.and_then(session_facts);
    sm
}

/// Facts without a field of their own: why the session was created, the agent, credits.
fn session_facts(meta: &Value) -> Option<Value> {
    let state = meta.get("session_state");
    let credits: f64 = turns_of(meta)
        .iter()
        .flat_map(|t| {
            t.get("metering_usage")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter(|m| jstr(m, "unit") == Some("credit"))
        .filter_map(|m| m.get("value").and_then(Value::as_f64))
        .sum();
    let mut facts = serde_json::Map::new();
    if let Some(r) = jstr(meta, "session_created_reason") {
        facts.insert("created_reason".into(), json!(r));
    }
    if let Some(a) = state.and_then(|s| jstr(s, "agent_name")) {
        facts.insert("agent".into(), json!(a));
    }
    if credits > 0.0 {
        facts.insert("credits".into(), json!(credits));
    }
    (!facts.is_empty()).then_some(Value::Object(facts))
}

fn turns_of(meta: &Value) -> &[Value] {
    meta.pointer("/session_state/conversation_metadata/user_turn_metadatas")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn model_of(meta: &Value) -> Option<String> {
    let info = meta.pointer("/session_state/rts_model_state/model_info")?;
    jstr(info, "model_id")
        .or_else(|| jstr(info, "model_name"))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn turn_usage(meta: &Value, model: Option<&str>) -> Vec<Usage> {
    turns_of(meta)
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let key = t
                .get("message_ids")
                .and_then(Value::as_array)
                .and_then(|ids| ids.first())
                .and_then(Value::as_str)
                .map_or_else(|| format!("turn:{i}"), |id| format!("turn:{id}"));
            let input = jcount(t.get("input_token_count"));
            let output = jcount(t.get("output_token_count"));
            Usage {
                request_key: key,
                model: model.map(str::to_string),
                timestamp: jstr(t, "end_timestamp").and_then(time::normalize),
                input_tokens: input,
                output_tokens: output,
                tokens_known: crate::shared::blocks::any_count(&[input, output]),
                ..Usage::default()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_status_marks_failed_commands() {
        let ok = json!({"kind": "json", "data": {"exit_status": "exit status: 0"}});
        let bad = json!({"kind": "json", "data": {"exit_status": "exit status: 2"}});
        assert!(!failed_command(&ok));
        assert!(failed_command(&bad));
        assert!(looks_like_session(
            br#"{"version":"v1","kind":"Prompt","data":{"content":[]}}"#
        ));
    }
}
