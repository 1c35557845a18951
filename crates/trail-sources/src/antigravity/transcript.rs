//! Antigravity's `transcript.jsonl`: one step a line, `{step_index, source, type, status,
//! created_at, content, thinking?, tool_calls?}` (kenn-io/agentsview and ingo-eichhorst/Irrlicht
//! read it the same way):
//! - `USER_INPUT`: the prompt, wrapped in `<USER_REQUEST>…</USER_REQUEST>` with metadata
//!   blocks; a `<USER_SETTINGS_CHANGE>` block names the model picked (`… from X to Y.`);
//! - `PLANNER_RESPONSE` (source `MODEL`): thinking, answer text and `tool_calls`
//!   (`{name, args}`, each argument value JSON text); calls carry no id and run one at a time;
//! - any other `MODEL` step (`RUN_COMMAND`, `VIEW_FILE`…): the result of the oldest open call;
//!   a command that failed says "The command failed";
//! - `SYSTEM` steps: `CHECKPOINT` (a summary of truncated context), `EPHEMERAL_MESSAGE`
//!   (reminders), `CONVERSATION_HISTORY`.
//!
//! Lines are kept in file order. The transcript records no token counts.

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use trail_model::{
    time, Message, MessageKind, PromptSource, Role, Session, SessionMeta, SourceKind, TitleRank,
    UpdateMode,
};

use super::gen_metadata;
use crate::json_fields::{jstr, value_text};
use crate::openai_chat::derive_files_and_refs;
use crate::{ids, jsonl, FileParse, ParseRequest, SourceError};

const STATE_VERSION: u32 = 1;
const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["run_command"];

/// Returns whether `head` starts with an Antigravity step.
pub(crate) fn looks_like_steps(head: &[u8]) -> bool {
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<Value>(first).is_ok_and(|v| {
        v.get("step_index").is_some() && jstr(&v, "type").is_some() && jstr(&v, "source").is_some()
    })
}

/// What a resumed parse needs of the lines before it.
#[derive(Serialize, Deserialize)]
struct State {
    version: u32,
    seq: u32,
    turn_count: u32,
    current_turn: Option<u32>,
    /// Calls without a result yet, oldest first: (id, name).
    open_calls: VecDeque<(String, String)>,
    /// The model the user last picked (display name).
    picked_model: Option<String>,
    cwd: Option<String>,
}

pub(crate) fn parse(request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
    let path = request.path;
    let resumed = request.resume.and_then(|r| {
        let st: State = serde_json::from_slice(r.state).ok()?;
        (st.version == STATE_VERSION).then_some((st, r.offset, r.line))
    });
    let (st, offset, line, mode) = match resumed {
        Some((st, o, l)) => (st, o, l, UpdateMode::Append),
        None => (State::new(), 0, 0, UpdateMode::Replace),
    };
    let store = super::store_of(path).filter(|p| p.is_file());
    let requests = store
        .as_deref()
        .map(gen_metadata::requests)
        .unwrap_or_default();
    let mut p = Parser {
        st,
        messages: Vec::new(),
        request_models: requests
            .iter()
            .filter_map(|r| Some((r.answer_step?, r.model.clone().or(r.display_model.clone())?)))
            .collect(),
    };
    let outcome = jsonl::read_lines_limited(path, offset, line, request.max_bytes, |_, text| {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
        match v {
            Value::Object(o) => {
                p.step(&o);
                Ok(())
            }
            _ => Err("a step must be a JSON object".into()),
        }
    })?;
    let mut out = finish(path, p, mode);
    if store.is_some() {
        out.notes.push(
            "conversations/<id>.db: the step payloads and token counts (protobuf without a \
             published schema) are not read; each request's model is"
                .to_string(),
        );
    }
    out.issues = outcome.issues;
    out.bytes_parsed = outcome.bytes_parsed;
    out.bytes_read = outcome.bytes_read;
    out.lines = outcome.lines;
    out.more = outcome.more;
    Ok(out)
}

impl State {
    fn new() -> Self {
        State {
            version: STATE_VERSION,
            seq: 0,
            turn_count: 0,
            current_turn: None,
            open_calls: VecDeque::new(),
            picked_model: None,
            cwd: None,
        }
    }
}

struct Parser {
    st: State,
    messages: Vec<Message>,
    /// Step index of a request's answer -> the model that wrote it (from the store).
    request_models: HashMap<i64, String>,
}

impl Parser {
    fn step(&mut self, o: &Map<String, Value>) {
        let v = Value::Object(o.clone());
        let source = jstr(&v, "source").unwrap_or("");
        let kind = jstr(&v, "type").unwrap_or("");
        let step = step_index(&v);
        let ts = v.get("created_at").and_then(time::from_json);
        let content = v.get("content").map(value_text).unwrap_or_default();
        let produced = match (source, kind) {
            (_, "USER_INPUT") => vec![self.prompt(source, &content)],
            ("MODEL", "PLANNER_RESPONSE") => self.planner(&v, step, content),
            ("MODEL", _) => vec![self.result(&v, kind, content)],
            ("SYSTEM", "CHECKPOINT") => {
                vec![Message::new(Role::System, MessageKind::Summary, content)]
            }
            ("SYSTEM", _) if content.trim().is_empty() => Vec::new(),
            ("SYSTEM", _) => vec![Message::new(Role::System, MessageKind::Meta, content)],
            _ => {
                let mut m = Message::new(Role::System, MessageKind::Unknown, String::new());
                m.extra = Some(v.to_string());
                vec![m]
            }
        };
        for mut m in produced {
            m.native_id = step.map(|s| s.to_string());
            m.timestamp.clone_from(&ts);
            self.push(m);
        }
    }

    fn prompt(&mut self, source: &str, content: &str) -> Message {
        if let Some(model) = picked_model(content) {
            self.st.picked_model = Some(model);
        }
        let mut m = Message::new(Role::User, MessageKind::Prompt, user_request(content));
        m.prompt_source = Some(if source == "USER_EXPLICIT" {
            PromptSource::Typed
        } else {
            PromptSource::System
        });
        m
    }

    fn planner(&mut self, v: &Value, step: Option<i64>, content: String) -> Vec<Message> {
        let model = step
            .and_then(|s| self.request_models.get(&s).cloned())
            .or_else(|| self.st.picked_model.clone());
        let mut out = Vec::new();
        let thinking = v.get("thinking").map(value_text).unwrap_or_default();
        if !thinking.trim().is_empty() {
            out.push(Message::new(
                Role::Assistant,
                MessageKind::Thinking,
                thinking,
            ));
        }
        if !content.trim().is_empty() {
            out.push(Message::new(Role::Assistant, MessageKind::Text, content));
        }
        let calls = v.get("tool_calls").and_then(Value::as_array);
        for (i, call) in calls.into_iter().flatten().enumerate() {
            let name = jstr(call, "name").unwrap_or("unknown").to_string();
            let id = format!("{}-{i}", step.unwrap_or(-1));
            let args = decoded_args(call.get("args"));
            if name == "run_command" {
                if let Some(cwd) = jstr(&args, "Cwd").filter(|c| !is_scratch(c)) {
                    self.st.cwd = Some(cwd.to_string());
                }
            }
            self.st.open_calls.push_back((id.clone(), name.clone()));
            let mut m = Message::new(Role::Assistant, MessageKind::ToolCall, String::new());
            m.tool_name = Some(name);
            m.tool_call_id = Some(id);
            m.tool_input = Some(args.to_string());
            out.push(m);
        }
        for m in &mut out {
            m.model.clone_from(&model);
        }
        out
    }

    fn result(&mut self, v: &Value, kind: &str, content: String) -> Message {
        let (id, name) = match self.st.open_calls.pop_front() {
            Some((id, name)) => (Some(id), name),
            None => (None, kind.to_ascii_lowercase()),
        };
        let status = jstr(v, "status").unwrap_or("");
        let mut m = Message::new(Role::Tool, MessageKind::ToolResult, String::new());
        m.is_error = content.contains("The command failed")
            || status.contains("ERROR")
            || status.contains("CANCEL");
        m.tool_name = Some(name);
        m.tool_call_id = id;
        m.tool_output = Some(content);
        m
    }

    fn push(&mut self, mut m: Message) {
        m.seq = self.st.seq;
        self.st.seq += 1;
        if m.kind == Some(MessageKind::Prompt) {
            self.st.current_turn = Some(self.st.turn_count);
            self.st.turn_count += 1;
        }
        m.turn_index = self.st.current_turn;
        m.on_main_chain = true;
        self.messages.push(m);
    }
}

fn step_index(v: &Value) -> Option<i64> {
    match v.get("step_index")? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The text inside `<USER_REQUEST>…</USER_REQUEST>`, else the whole content.
fn user_request(content: &str) -> String {
    let inner = content
        .split_once("<USER_REQUEST>")
        .and_then(|(_, rest)| rest.split_once("</USER_REQUEST>"))
        .map(|(req, _)| req);
    inner.unwrap_or(content).trim().to_string()
}

/// The model a `<USER_SETTINGS_CHANGE>` block says the user picked: "`Model Selection` from X
/// to Y." gives Y.
fn picked_model(content: &str) -> Option<String> {
    let (_, after) = content.split_once("Model Selection")?;
    let (_, to) = after.split_once(" to ")?;
    let end = to.find(". ").or_else(|| to.find('\n')).unwrap_or(to.len());
    let name = to[..end].trim().trim_end_matches('.');
    (!name.is_empty()).then(|| name.to_string())
}

/// Tool arguments: each value is JSON text (`"Cwd": "\"/home/me\""`); decoded where it parses.
fn decoded_args(args: Option<&Value>) -> Value {
    match args {
        Some(Value::Object(o)) => Value::Object(
            o.iter()
                .map(|(k, v)| {
                    let decoded = v
                        .as_str()
                        .and_then(|s| serde_json::from_str::<Value>(s).ok())
                        .unwrap_or_else(|| v.clone());
                    (k.clone(), decoded)
                })
                .collect(),
        ),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// Antigravity's own sandbox folder, never a project.
fn is_scratch(cwd: &str) -> bool {
    cwd.contains(".gemini/antigravity") && cwd.contains("scratch")
}

fn finish(path: &Path, mut p: Parser, mode: UpdateMode) -> FileParse {
    let native = super::conversation_id(path).unwrap_or_else(|| "unknown".into());
    let mut meta = SessionMeta::new(
        ids::session_id(SourceKind::Antigravity, &native),
        SourceKind::Antigravity,
        &native,
    );
    meta.cwd.clone_from(&p.st.cwd);
    let mut session = Session::new(meta);
    session.mode = mode;
    session.turn_count = p.st.turn_count;
    for m in &p.messages {
        if let Some(t) = &m.timestamp {
            session.meta.observe_timestamp(t);
        }
    }
    let models: Vec<String> = p.messages.iter().filter_map(|m| m.model.clone()).collect();
    for m in &models {
        session.observe_model(m);
    }
    session.messages = std::mem::take(&mut p.messages);
    if mode == UpdateMode::Replace {
        session.turns = trail_model::turns::build_turns(&session.messages);
        session.meta.title = session
            .messages
            .iter()
            .find(|m| m.kind == Some(MessageKind::Prompt) && !m.text.trim().is_empty())
            .map(|m| trail_model::truncate_chars(m.text.trim(), TITLE_CHARS).to_string());
        session.meta.title_rank = TitleRank::FIRST_PROMPT;
    }
    derive_files_and_refs(&mut session, SHELL_TOOLS);
    let keep = mode == UpdateMode::Append || !session.messages.is_empty();
    FileParse {
        sessions: if keep { vec![session] } else { Vec::new() },
        state: serde_json::to_vec(&p.st).ok(),
        ..FileParse::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_and_picked_models_are_read_from_their_blocks() {
        let c = "<USER_REQUEST>\nWhat is 6 times 7?\n</USER_REQUEST>\n<USER_SETTINGS_CHANGE>\n\
                 The user changed setting `Model Selection` from None to Gemini 3.1 Pro (High). \
                 No need to comment.\n</USER_SETTINGS_CHANGE>";
        assert_eq!(user_request(c), "What is 6 times 7?");
        assert_eq!(picked_model(c).as_deref(), Some("Gemini 3.1 Pro (High)"));
        assert_eq!(user_request("plain"), "plain");
        let args = serde_json::json!({"CommandLine": "\"ls -la\"", "Cwd": "\"/home/me\"", "n": 3});
        assert_eq!(
            decoded_args(Some(&args)),
            serde_json::json!({"CommandLine": "ls -la", "Cwd": "/home/me", "n": 3})
        );
    }
}
