//! Kimi Code CLI: `wire.jsonl` event logs, in two generations.
//!
//! - Current (`$KIMI_CODE_HOME`, default `~/.kimi-code`):
//!   `sessions/<workdir>/session_<uuid>/agents/<agent>/wire.jsonl`, with `state.json` in the
//!   session folder (title, `workDir`, times). Lines are `{"type": ..., "time": ms}` events:
//!   `metadata`, `config.update` (cwd, model alias), `turn.prompt`, `context.append_message`,
//!   `context.append_loop_event` wrapping `step.begin`, `content.part` (`text`/`think`),
//!   `tool.call`, `tool.result`, `step.end` (with the step's usage), `usage.record`,
//!   `llm.request` (the model), `context.apply_compaction`. The agent `main` is the session;
//!   any other agent folder is a subagent, the session `<uuid>:<agent>`, linked to the main one
//!   and (through the `agent_id:` line of the `Agent` tool's result) to the call that started it.
//! - Legacy (`~/.kimi`): `sessions/<workdir hash>/<session uuid>/wire.jsonl`, lines
//!   `{"timestamp": s, "message": {"type", "payload"}}`: `TurnBegin`, `StepBegin`, `ContentPart`,
//!   `ToolCall`, `ToolResult`, `StatusUpdate` (token usage), `CompactionEnd`, `TurnEnd`, and
//!   `SubagentEvent` wrapping a subagent's events (its own session, as above).
//!
//! A `wire.jsonl` given by any other name is its own session, named by its file stem, with the
//! `<stem>.state.json` beside it if there is one.
//!
//! # Usage rule
//! Current: one row per `step.end` usage, keyed by its step. `usage.record` repeats the usage
//! of the step that just ended: it is skipped when it equals it, and counted on its own
//! otherwise (a compaction's usage has no step). Legacy: one row per `StatusUpdate` message id
//! (repeats of an id are skipped). Counts are `inputOther`/`input_other` (input without
//! cache), `output`, `inputCacheRead`, `inputCacheCreation`.
//!
//! Both generations only grow (Kimi's `Wire` appends one record per event): a grown file is
//! read from where the last parse stopped ([`crate::resumable`]), with the model, cwd, the
//! usage of the step that ended last (so a `usage.record` after the cut is still recognised as
//! its repeat), the legacy `StatusUpdate` ids and subagent calls saved between parses. An
//! `Agent` call whose result (naming the subagent) comes after the cut is the one change a delta
//! cannot carry: that parse reads the file whole again.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use trail_model::{
    time, Checkpoint, Message, MessageKind, ParentLink, PromptSource, Role, Session, SessionMeta,
    SourceKind, TitleRank, UpdateMode, Usage,
};

use crate::blocks::{content_text, count_of, title_from};
use crate::json_fields::{jstr, value_text};
use crate::linear::{finish_linear_session, PendingFile};
use crate::resumable::{self, first_object, LineParser};
use crate::{discover, ids, FileParse, ParseRequest, Source, SourceError};

/// Kimi Code CLI wire logs.
pub struct Kimi;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version. 2: files are resumed where the last parse stopped.
pub const PARSER_VERSION: u32 = 2;

const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["Bash", "Shell", "bash"];
const MAIN_AGENT: &str = "main";

impl Source for Kimi {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Kimi
    }

    /// Roots are homes (`~/.kimi-code`, `~/.kimi`) or their `sessions` folders: every
    /// `wire.jsonl` below.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            let sessions = if root.file_name().is_some_and(|n| n == "sessions") {
                root.clone()
            } else {
                root.join("sessions")
            };
            out.extend(discover::walk_files(&sessions, 5, |p| {
                p.file_name().is_some_and(|n| n == "wire.jsonl")
            }));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        discover::has_extension(path, "jsonl")
            && first_object(head).is_some_and(|v| {
                jstr(&v, "type") == Some("metadata") && v.get("protocol_version").is_some()
            })
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let place = Place::of(request.path);
        resumable::parse(request, "a wire record", || Parser::new(&place))
    }
}

impl LineParser for Parser {
    fn record(&mut self, _line: u64, v: &Value) {
        self.read_record(v);
    }

    fn sessions(&self, path: &Path) -> Vec<Session> {
        let place = Place::of(path);
        let state = place.state_file.as_deref().and_then(read_state);
        self.clone().finish(&place, state.as_ref())
    }

    fn building_mut(&mut self) -> Vec<&mut Session> {
        self.agents.values_mut().map(|b| &mut b.session).collect()
    }
}

/// Where a wire file lies: which session and agent it is, and its `state.json`.
struct Place {
    /// The session's native id (the uuid of `session_<uuid>`, the legacy folder, or the stem).
    session: String,
    /// The agent of a current-layout file (`main` for the session itself).
    agent: String,
    state_file: Option<PathBuf>,
}

impl Place {
    fn of(path: &Path) -> Place {
        let name = |p: Option<&Path>| {
            p.and_then(Path::file_name)
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string()
        };
        let dir = path.parent();
        let is_wire = path.file_name().is_some_and(|n| n == "wire.jsonl");
        let agents = dir.and_then(Path::parent);
        if is_wire && agents.is_some_and(|a| a.file_name().is_some_and(|n| n == "agents")) {
            let session_dir = agents.and_then(Path::parent);
            let folder = name(session_dir);
            return Place {
                session: folder
                    .strip_prefix("session_")
                    .unwrap_or(&folder)
                    .to_string(),
                agent: name(dir),
                state_file: session_dir.map(|d| d.join("state.json")),
            };
        }
        if is_wire {
            return Place {
                session: name(dir),
                agent: MAIN_AGENT.into(),
                state_file: dir.map(|d| d.join("state.json")),
            };
        }
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("unknown")
            .to_string();
        Place {
            state_file: dir.map(|d| d.join(format!("{stem}.state.json"))),
            session: stem,
            agent: MAIN_AGENT.into(),
        }
    }

    fn native(&self, agent: &str) -> String {
        if agent == MAIN_AGENT {
            self.session.clone()
        } else {
            format!("{}:{agent}", self.session)
        }
    }
}

/// The session facts `state.json` holds.
struct State {
    title: Option<(String, u8)>,
    cwd: Option<String>,
    created: Option<String>,
    updated: Option<String>,
}

fn read_state(path: &Path) -> Option<State> {
    let bytes = std::fs::read(path).ok()?;
    let v: Value = serde_json::from_slice(crate::whole::strip_bom(&bytes)).ok()?;
    let custom = v.get("isCustomTitle").and_then(Value::as_bool) == Some(true);
    let rank = if custom {
        TitleRank::USER
    } else {
        TitleRank::FIRST_PROMPT
    };
    Some(State {
        title: jstr(&v, "title")
            .filter(|t| !t.trim().is_empty())
            .map(|t| (t.trim().to_string(), rank)),
        cwd: jstr(&v, "workDir").map(str::to_string),
        created: v.get("createdAt").and_then(time::from_json),
        updated: v.get("updatedAt").and_then(time::from_json),
    })
}

/// One agent's session being built.
#[derive(Clone, Serialize, Deserialize)]
struct Building {
    session: Session,
    files: Vec<PendingFile>,
    /// The usage of the step that ended last, until a `usage.record` repeats it.
    last_step_usage: Option<Counts>,
    status_ids: HashSet<String>,
}

type Counts = (u64, u64, u64, u64);

impl Building {
    fn new(native: &str) -> Self {
        let id = ids::session_id(SourceKind::Kimi, native);
        Building {
            session: Session::new(SessionMeta::new(id, SourceKind::Kimi, native)),
            files: Vec::new(),
            last_step_usage: None,
            status_ids: HashSet::new(),
        }
    }

    fn push(&mut self, m: Message) -> u32 {
        resumable::push(&mut self.session, m)
    }
}

#[derive(Clone, Serialize, Deserialize)]
struct Parser {
    /// The file's own agent, and subagents seen in legacy `SubagentEvent`s.
    agents: BTreeMap<String, Building>,
    own: String,
    model: Option<String>,
    cwd: Option<String>,
    /// Legacy subagents: the call that started each.
    sub_calls: BTreeMap<String, Option<String>>,
}

impl Parser {
    fn new(place: &Place) -> Self {
        let mut agents = BTreeMap::new();
        agents.insert(
            place.agent.clone(),
            Building::new(&place.native(&place.agent)),
        );
        Parser {
            agents,
            own: place.agent.clone(),
            model: None,
            cwd: None,
            sub_calls: BTreeMap::new(),
        }
    }

    fn read_record(&mut self, v: &Value) {
        if let Some(msg) = v.get("message").filter(|m| m.get("payload").is_some()) {
            let ts = v.get("timestamp").and_then(time::from_json);
            let agent = self.own.clone();
            self.legacy(&agent, msg, ts, 0);
            return;
        }
        let ts = v.get("time").and_then(time::from_json);
        let ty = jstr(v, "type").unwrap_or_default();
        match ty {
            "config.update" => {
                if let Some(cwd) = jstr(v, "cwd") {
                    self.cwd = Some(cwd.to_string());
                }
                if let Some(m) = jstr(v, "modelAlias").or_else(|| jstr(v, "model")) {
                    self.model = Some(m.to_string());
                }
            }
            "llm.request" => {
                if let Some(m) = jstr(v, "modelAlias").or_else(|| jstr(v, "model")) {
                    self.model = Some(m.to_string());
                }
            }
            "turn.prompt" => {
                let text = content_text(v.get("input"));
                let origin = v.pointer("/origin/kind").and_then(Value::as_str);
                let source = match origin {
                    None | Some("user") => PromptSource::Typed,
                    Some(_) => PromptSource::System,
                };
                let mut m = message(Role::User, MessageKind::Prompt, text, ts);
                m.prompt_source = Some(source);
                self.own_mut().push(m);
            }
            "context.append_message" => self.appended(v, ts),
            "context.append_loop_event" => {
                let event = v.get("event").unwrap_or(&Value::Null);
                self.loop_event(event, ts);
            }
            "usage.record" => self.usage_record(v, ts),
            "context.apply_compaction" => {
                let text = jstr(v, "summary").unwrap_or_default().to_string();
                compaction(self.own_mut(), text, ts);
            }
            "metadata"
            | "tools.set_active_tools"
            | "llm.tools_snapshot"
            | "plan_mode.enter"
            | "plan_mode.exit"
            | "permission.record_approval_result"
            | "full_compaction.begin"
            | "full_compaction.complete" => {}
            _ => {
                let mut m = message(Role::System, MessageKind::Unknown, String::new(), ts);
                m.extra = Some(v.to_string());
                self.own_mut().push(m);
            }
        }
    }

    fn own_mut(&mut self) -> &mut Building {
        let own = self.own.clone();
        self.agents
            .get_mut(&own)
            .expect("the file's own agent is created first")
    }

    /// Messages put into the context other than the prompt (reminders the agent injects).
    fn appended(&mut self, v: &Value, ts: Option<String>) {
        let msg = v.get("message").unwrap_or(&Value::Null);
        let origin = msg.pointer("/origin/kind").and_then(Value::as_str);
        if jstr(msg, "role") == Some("user") && origin.is_none_or(|o| o == "user") {
            return; // the prompt `turn.prompt` already gave
        }
        let text = content_text(msg.get("content"));
        self.own_mut()
            .push(message(Role::System, MessageKind::Meta, text, ts));
    }

    fn loop_event(&mut self, e: &Value, ts: Option<String>) {
        let model = self.model.clone();
        let b = self.own_mut();
        match jstr(e, "type").unwrap_or_default() {
            "content.part" => {
                let part = e.get("part").unwrap_or(&Value::Null);
                content_part(b, part, ts, model);
            }
            "tool.call" => {
                let args = e.get("args").cloned().unwrap_or(Value::Null);
                let name = jstr(e, "name").unwrap_or("unknown");
                let id = jstr(e, "toolCallId").or_else(|| jstr(e, "uuid"));
                tool_call(b, name, id, args, ts, model);
            }
            "tool.result" => {
                let r = e.get("result").unwrap_or(&Value::Null);
                let id = jstr(e, "toolCallId").or_else(|| jstr(e, "parentUuid"));
                let output = r.get("output").map(value_text).unwrap_or_default();
                let error = matches!(r.get("isError"), Some(Value::Bool(true)))
                    || r.get("error").is_some_and(|x| !x.is_null());
                tool_result(b, id, output, error, ts);
            }
            "step.end" => {
                if let Some(u) = e.get("usage").filter(|u| u.is_object()) {
                    let key = jstr(e, "uuid").unwrap_or_default().to_string();
                    b.last_step_usage = Some(counts(u));
                    add_usage(b, &key, u, model, ts);
                }
            }
            _ => {}
        }
    }

    fn usage_record(&mut self, v: &Value, ts: Option<String>) {
        let Some(u) = v.get("usage").filter(|u| u.is_object()) else {
            return;
        };
        let model = jstr(v, "model")
            .map(str::to_string)
            .or_else(|| self.model.clone());
        let b = self.own_mut();
        // The repeat of the step that just ended: counted there.
        if b.last_step_usage.take() == Some(counts(u)) {
            return;
        }
        let key = format!("usage.record:{}", b.session.usage.len());
        add_usage(b, &key, u, model, ts);
    }

    /// A legacy `{type, payload}` message of agent `agent` (depth: subagent nesting).
    fn legacy(&mut self, agent: &str, msg: &Value, ts: Option<String>, depth: u32) {
        let p = msg.get("payload").unwrap_or(&Value::Null);
        let model = self.model.clone();
        match jstr(msg, "type").unwrap_or_default() {
            "TurnBegin" => {
                let text = content_text(p.get("user_input"));
                let mut m = message(Role::User, MessageKind::Prompt, text, ts);
                m.prompt_source = Some(PromptSource::Typed);
                self.agent(agent).push(m);
            }
            "ContentPart" => content_part(self.agent(agent), p, ts, model),
            "ToolCall" => {
                let name = p
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                let raw = p.pointer("/function/arguments");
                let args = match raw {
                    Some(Value::String(s)) => {
                        serde_json::from_str(s).unwrap_or(Value::String(s.clone()))
                    }
                    Some(v) => v.clone(),
                    None => Value::Null,
                };
                tool_call(self.agent(agent), name, jstr(p, "id"), args, ts, model);
            }
            "ToolResult" => {
                let rv = p.get("return_value").unwrap_or(&Value::Null);
                let mut output = rv.get("output").map(value_text).unwrap_or_default();
                if output.is_empty() {
                    output = jstr(rv, "message").unwrap_or_default().to_string();
                }
                let error = rv.get("is_error").and_then(Value::as_bool) == Some(true);
                tool_result(
                    self.agent(agent),
                    jstr(p, "tool_call_id"),
                    output,
                    error,
                    ts,
                );
            }
            "StatusUpdate" => {
                let Some(u) = p.get("token_usage").filter(|u| u.is_object()) else {
                    return;
                };
                let b = self.agent(agent);
                let key = match jstr(p, "message_id") {
                    Some(id) if !b.status_ids.insert(id.to_string()) => return,
                    Some(id) => id.to_string(),
                    None => format!("status:{}", b.session.usage.len()),
                };
                add_usage(b, &key, u, model, ts);
            }
            "CompactionEnd" | "CompactionBegin" => {
                let text = jstr(p, "summary").unwrap_or_default().to_string();
                if jstr(msg, "type") == Some("CompactionEnd") {
                    compaction(self.agent(agent), text, ts);
                }
            }
            "SubagentEvent" if depth < 8 => {
                let call = jstr(p, "task_tool_call_id").map(str::to_string);
                let sub = jstr(p, "agent_id")
                    .map(str::to_string)
                    .or_else(|| call.clone())
                    .unwrap_or_else(|| "subagent".into());
                self.sub_calls.entry(sub.clone()).or_insert(call);
                if let Some(inner) = p.get("event") {
                    self.legacy(&sub, inner, ts, depth + 1);
                }
            }
            _ => {}
        }
    }

    /// The session of `agent`: the file's own, or a legacy subagent's (named in `finish`).
    fn agent(&mut self, agent: &str) -> &mut Building {
        self.agents
            .entry(agent.to_string())
            .or_insert_with(|| Building::new(agent))
    }

    fn finish(mut self, place: &Place, state: Option<&State>) -> Vec<Session> {
        let main_native = place.native(MAIN_AGENT);
        let mut out = Vec::new();
        for (agent, mut b) in std::mem::take(&mut self.agents) {
            let is_own = agent == self.own;
            if !is_own || place.agent != MAIN_AGENT {
                let native = if is_own {
                    place.native(&agent)
                } else {
                    format!("{main_native}:{agent}")
                };
                b.session.meta.native_id = native.clone();
                b.session.meta.id = ids::session_id(SourceKind::Kimi, &native);
                b.session.meta.parent = Some(ParentLink {
                    session_id: ids::session_id(SourceKind::Kimi, &main_native),
                    tool_call_id: self.sub_calls.get(&agent).cloned().flatten(),
                    agent_ref: Some(agent.clone()),
                });
            }
            if b.session.messages.is_empty() && b.session.usage.is_empty() && !is_own {
                continue;
            }
            out.push(self.finish_one(b, is_own && place.agent == MAIN_AGENT, state));
        }
        out
    }

    fn finish_one(&self, mut b: Building, is_main: bool, state: Option<&State>) -> Session {
        finish_linear_session(&mut b.session, b.files, SHELL_TOOLS);
        let meta = &mut b.session.meta;
        meta.cwd = self
            .cwd
            .clone()
            .or_else(|| state.and_then(|s| s.cwd.clone()));
        let first_prompt = b
            .session
            .messages
            .iter()
            .find(|m| m.kind == Some(MessageKind::Prompt))
            .and_then(|m| title_from(&m.text, TITLE_CHARS));
        let custom = state
            .and_then(|s| s.title.clone())
            .filter(|(_, r)| is_main && *r == TitleRank::USER);
        if let Some((t, r)) = custom {
            meta.title = Some(t);
            meta.title_rank = r;
        } else if let Some(t) = first_prompt {
            meta.title = Some(t);
            meta.title_rank = TitleRank::FIRST_PROMPT;
        }
        if is_main {
            for t in state
                .iter()
                .flat_map(|s| [&s.created, &s.updated])
                .flatten()
            {
                meta.observe_timestamp(t);
            }
        }
        b.session.mode = UpdateMode::Replace;
        b.session
    }
}

/// Sets `agent_ref` on the `Agent` tool call `call` from its result's `agent_id: <id>` line,
/// so the subagent's session links to the call.
fn link_agent_call(session: &mut Session, call: Option<&str>, output: &str) {
    let Some(call) = call else {
        return;
    };
    let Some(agent) = output.lines().find_map(|l| l.strip_prefix("agent_id: ")) else {
        return;
    };
    for m in &mut session.messages {
        if m.kind == Some(MessageKind::ToolCall) && m.tool_call_id.as_deref() == Some(call) {
            m.agent_ref = Some(agent.trim().to_string());
        }
    }
}

fn message(role: Role, kind: MessageKind, text: String, ts: Option<String>) -> Message {
    Message::new(role, kind, text).with_timestamp(ts)
}

fn content_part(b: &mut Building, part: &Value, ts: Option<String>, model: Option<String>) {
    let (kind, text) = match jstr(part, "type").unwrap_or_default() {
        "think" => (MessageKind::Thinking, jstr(part, "think")),
        "text" => (MessageKind::Text, jstr(part, "text")),
        _ => return,
    };
    let Some(text) = text.filter(|t| !t.is_empty()) else {
        return;
    };
    if let Some(m) = &model {
        b.session.observe_model(m);
    }
    let mut m = message(Role::Assistant, kind, text.to_string(), ts);
    m.model = model;
    b.push(m);
}

fn tool_call(
    b: &mut Building,
    name: &str,
    id: Option<&str>,
    args: Value,
    ts: Option<String>,
    model: Option<String>,
) {
    let mut m = message(
        Role::Assistant,
        MessageKind::ToolCall,
        String::new(),
        ts.clone(),
    );
    m.tool_name = Some(name.to_string());
    m.tool_call_id = id.map(str::to_string);
    m.tool_input = Some(args.to_string());
    m.model = model;
    let seq = b.push(m);
    b.files
        .extend(PendingFile::named_by(seq, &args, name, ts.as_deref()));
}

fn tool_result(
    b: &mut Building,
    id: Option<&str>,
    output: String,
    error: bool,
    ts: Option<String>,
) {
    let name = id.and_then(|id| {
        b.session
            .messages
            .iter()
            .rev()
            .find(|m| {
                m.kind == Some(MessageKind::ToolCall) && m.tool_call_id.as_deref() == Some(id)
            })
            .and_then(|m| m.tool_name.clone())
    });
    link_agent_call(&mut b.session, id, &output);
    let mut m = message(Role::Tool, MessageKind::ToolResult, String::new(), ts);
    m.tool_call_id = id.map(str::to_string);
    m.tool_name = name;
    m.tool_output = Some(output);
    m.is_error = error;
    b.push(m);
}

fn compaction(b: &mut Building, text: String, ts: Option<String>) {
    let number = u32::try_from(b.session.checkpoints.len() + 1).unwrap_or(u32::MAX);
    b.session.checkpoints.push(Checkpoint {
        number,
        title: Some("Compaction".into()),
        overview: (!text.is_empty()).then(|| text.clone()),
        created_at: ts.clone(),
        ..Checkpoint::default()
    });
    b.push(message(Role::System, MessageKind::Compaction, text, ts));
}

/// Input without cache, output, cache read, cache write, in either spelling.
fn counts(u: &Value) -> Counts {
    (
        count_of(u, &["inputOther", "input_other"]),
        count_of(u, &["output"]),
        count_of(u, &["inputCacheRead", "input_cache_read"]),
        count_of(u, &["inputCacheCreation", "input_cache_creation"]),
    )
}

fn add_usage(b: &mut Building, key: &str, u: &Value, model: Option<String>, ts: Option<String>) {
    let (input, output, read, write) = counts(u);
    if let Some(m) = &model {
        b.session.observe_model(m);
    }
    b.session.usage.push(Usage {
        request_key: key.to_string(),
        message_id: Some(key.to_string()),
        model,
        timestamp: ts,
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_creation_tokens: write,
        tokens_known: crate::shared::blocks::any_count(&[input, output, read, write]),
        ..Usage::default()
    });
}
