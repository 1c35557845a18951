//! Reading OTLP-JSON trace lines into spans, and spans into conversations.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use serde_json::{Map, Value};
use trail_model::{
    time, Message, MessageKind, PromptSource, Role, Session, SessionMeta, SourceKind, TitleRank,
    UpdateMode, Usage,
};

use crate::json_fields::{jstr, value_text};
use crate::linear::{finish_linear_session, push_message};
use crate::openai_chat::input_path;
use crate::{ids, jsonl, FileParse, SourceError};

const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["run_command_in_terminal", "run_in_terminal"];

/// One span, its attributes flattened to JSON values.
#[derive(Debug, Clone)]
struct Span {
    trace_id: String,
    span_id: String,
    start_ns: u64,
    operation: String,
    attrs: Map<String, Value>,
    failed: bool,
    service_version: Option<String>,
}

impl Span {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }
    fn conversation(&self) -> String {
        self.attr("gen_ai.conversation.id")
            .map_or_else(|| format!("trace:{}", self.trace_id), str::to_string)
    }
    fn rank(&self) -> u8 {
        match self.operation.as_str() {
            "invoke_agent" => 0,
            "chat" => 1,
            _ => 2,
        }
    }
}

pub(super) fn parse(path: &Path) -> Result<FileParse, SourceError> {
    let mut own = Vec::new();
    let outcome = jsonl::read_lines(path, 0, 0, |_, line| {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
        if !v.get("resourceSpans").is_some_and(Value::is_array) {
            return Err("not an OTLP trace line (no `resourceSpans`)".into());
        }
        own.extend(spans_of(&v));
        Ok(())
    })?;
    let mut out = FileParse {
        issues: outcome.issues,
        bytes_parsed: outcome.bytes_parsed,
        bytes_read: outcome.bytes_read,
        lines: outcome.lines,
        ..FileParse::default()
    };
    let wanted: BTreeSet<String> = own.iter().map(Span::conversation).collect();
    if wanted.is_empty() {
        return Ok(out);
    }
    let mut all = own;
    for sibling in super::siblings(path) {
        all.extend(
            sibling_spans(&sibling)
                .into_iter()
                .filter(|s| wanted.contains(&s.conversation())),
        );
    }
    let mut seen = HashSet::new();
    all.retain(|s| seen.insert((s.trace_id.clone(), s.span_id.clone())));
    let mut by_conv: BTreeMap<String, Vec<Span>> = BTreeMap::new();
    for s in all {
        by_conv.entry(s.conversation()).or_default().push(s);
    }
    for (conv, spans) in by_conv {
        out.sessions.push(build_session(&conv, spans));
    }
    Ok(out)
}

/// The spans of a sibling file; its bad lines are its own parse's to report.
fn sibling_spans(path: &Path) -> Vec<Span> {
    let Ok(bytes) = crate::whole::read(path) else {
        return Vec::new();
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .flat_map(|v| spans_of(&v))
        .collect()
}

fn spans_of(v: &Value) -> Vec<Span> {
    let mut out = Vec::new();
    for rs in v["resourceSpans"].as_array().into_iter().flatten() {
        let resource = attributes(rs.pointer("/resource/attributes"));
        let version = resource
            .get("service.version")
            .and_then(Value::as_str)
            .map(str::to_string);
        for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
            for sp in ss["spans"].as_array().into_iter().flatten() {
                out.push(span(sp, version.clone()));
            }
        }
    }
    out
}

fn span(sp: &Value, service_version: Option<String>) -> Span {
    let attrs = attributes(sp.get("attributes"));
    let name = jstr(sp, "name").unwrap_or("");
    let operation = attrs
        .get("gen_ai.operation.name")
        .and_then(Value::as_str)
        .unwrap_or_else(|| name.split(' ').next().unwrap_or(""))
        .to_string();
    let code = sp.pointer("/status/code");
    let failed = code.and_then(Value::as_i64) == Some(2)
        || code.and_then(Value::as_str) == Some("STATUS_CODE_ERROR");
    Span {
        trace_id: jstr(sp, "traceId").unwrap_or("").to_string(),
        span_id: jstr(sp, "spanId").unwrap_or("").to_string(),
        start_ns: nanos(sp.get("startTimeUnixNano")),
        operation,
        attrs,
        failed,
        service_version,
    }
}

fn nanos(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    }
}

/// OTLP `attributes` (`[{key, value: {stringValue|intValue|doubleValue|boolValue}}]`) as a
/// map of plain JSON values.
fn attributes(v: Option<&Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for a in v.and_then(Value::as_array).into_iter().flatten() {
        let Some(key) = jstr(a, "key") else { continue };
        let value = a.get("value").and_then(|val| {
            val.get("stringValue")
                .or_else(|| val.get("intValue"))
                .or_else(|| val.get("doubleValue"))
                .or_else(|| val.get("boolValue"))
                .cloned()
        });
        if let Some(value) = value {
            out.insert(key.to_string(), value);
        }
    }
    out
}

/// A span attribute holding JSON text, parsed.
fn json_attr(s: &Span, key: &str) -> Option<Value> {
    s.attr(key).and_then(|t| serde_json::from_str(t).ok())
}

/// The text of the last user message of a `gen_ai.input.messages` list.
fn last_user_text(messages: &Value) -> Option<String> {
    messages
        .as_array()?
        .iter()
        .rev()
        .find(|m| jstr(m, "role") == Some("user"))
        .map(|m| parts_text(m, "text"))
}

/// The joined `content` of a message's parts of one type.
fn parts_text(m: &Value, kind: &str) -> String {
    let texts: Vec<String> = m["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| jstr(p, "type") == Some(kind))
        .filter_map(|p| p.get("content").map(value_text))
        .collect();
    texts.join("\n")
}

fn build_session(conv: &str, mut spans: Vec<Span>) -> Session {
    spans.sort_by(|a, b| {
        (a.start_ns, a.rank(), &a.span_id).cmp(&(b.start_ns, b.rank(), &b.span_id))
    });
    let mut meta = SessionMeta::new(
        ids::session_id(SourceKind::VisualStudioCopilot, conv),
        SourceKind::VisualStudioCopilot,
        conv,
    );
    meta.agent_version = spans.iter().find_map(|s| s.service_version.clone());
    let mut b = Builder {
        session: Session::new(meta),
        prompts: first_prompts(&spans),
        opened: HashSet::new(),
        calls: HashSet::new(),
    };
    for s in &spans {
        b.span(s);
    }
    let mut session = b.session;
    session.mode = UpdateMode::Replace;
    session.meta.metadata = facts(&spans);
    finish_linear_session(&mut session, Vec::new(), SHELL_TOOLS);
    let touches: Vec<trail_model::FileTouch> = session
        .messages
        .iter()
        .filter(|m| m.kind == Some(MessageKind::ToolCall))
        .filter_map(|m| {
            Some(trail_model::FileTouch {
                path: input_path(m.tool_input.as_deref()?)?,
                tool_name: m.tool_name.clone(),
                turn_index: m.turn_index,
                first_seen_at: m.timestamp.clone(),
            })
        })
        .collect();
    for t in touches {
        session.add_file(t);
    }
    session.meta.title = session
        .messages
        .iter()
        .find(|m| m.kind == Some(MessageKind::Prompt) && !m.text.trim().is_empty())
        .map(|m| trail_model::truncate_chars(m.text.trim(), TITLE_CHARS).to_string());
    session.meta.title_rank = TitleRank::FIRST_PROMPT;
    session
}

/// Per trace, the prompt: the last user message of its earliest `chat` span.
fn first_prompts(spans: &[Span]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for s in spans.iter().filter(|s| s.operation == "chat") {
        if out.contains_key(&s.trace_id) {
            continue;
        }
        if let Some(text) = json_attr(s, "gen_ai.input.messages").and_then(|m| last_user_text(&m)) {
            out.insert(s.trace_id.clone(), text);
        }
    }
    out
}

/// The mode and client of the conversation's requests.
fn facts(spans: &[Span]) -> Option<Value> {
    let agent = spans.iter().find(|s| s.operation == "invoke_agent")?;
    let mut o = Map::new();
    for (key, name) in [
        ("copilot_chat.mode", "mode"),
        ("copilot_chat.client_id", "client"),
        ("copilot_chat.entry_point", "entry_point"),
    ] {
        if let Some(v) = agent.attr(key) {
            o.insert(name.into(), Value::String(v.to_string()));
        }
    }
    (!o.is_empty()).then_some(Value::Object(o))
}

struct Builder {
    session: Session,
    /// Trace id -> its prompt text.
    prompts: HashMap<String, String>,
    /// Traces whose turn is open.
    opened: HashSet<String>,
    /// Tool call ids already listed.
    calls: HashSet<String>,
}

impl Builder {
    fn push(&mut self, mut m: Message, s: &Span) {
        m.timestamp = time::from_epoch_millis(i64::try_from(s.start_ns / 1_000_000).unwrap_or(0));
        push_message(&mut self.session, m);
    }

    fn span(&mut self, s: &Span) {
        match s.operation.as_str() {
            "invoke_agent" => self.open_turn(s),
            "chat" => {
                if !self.opened.contains(&s.trace_id) {
                    self.open_turn(s);
                }
                self.chat(s);
            }
            "execute_tool" => self.tool(s),
            _ => {}
        }
    }

    fn open_turn(&mut self, s: &Span) {
        if !self.opened.insert(s.trace_id.clone()) {
            return;
        }
        let text = self.prompts.get(&s.trace_id).cloned().unwrap_or_default();
        let mut m = Message::new(Role::User, MessageKind::Prompt, text);
        let initiator = s.attr("copilot_chat.initiator_type").unwrap_or("user");
        m.prompt_source = Some(if initiator.eq_ignore_ascii_case("user") {
            PromptSource::Typed
        } else {
            PromptSource::System
        });
        if let Some(model) = s.attr("gen_ai.request.model") {
            self.session.observe_model(model);
        }
        self.push(m, s);
    }

    fn chat(&mut self, s: &Span) {
        let model = s
            .attr("gen_ai.response.model")
            .or_else(|| s.attr("gen_ai.request.model"))
            .map(str::to_string);
        if let Some(m) = &model {
            self.session.observe_model(m);
        }
        let outputs = json_attr(s, "gen_ai.output.messages");
        for out in outputs
            .as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for part in out["parts"].as_array().into_iter().flatten() {
                let mut m = match jstr(part, "type") {
                    Some("text") => Message::new(
                        Role::Assistant,
                        MessageKind::Text,
                        part.get("content").map(value_text).unwrap_or_default(),
                    ),
                    Some("reasoning") => Message::new(
                        Role::Assistant,
                        MessageKind::Thinking,
                        part.get("content").map(value_text).unwrap_or_default(),
                    ),
                    Some("tool_call") => {
                        self.call(jstr(part, "id"), jstr(part, "name"), part.get("arguments"))
                    }
                    _ => continue,
                };
                m.model.clone_from(&model);
                self.push(m, s);
            }
        }
        let n = |k: &str| {
            s.attrs.get(k).map_or(0, |v| match v {
                Value::String(t) => t.parse().unwrap_or(0),
                other => other.as_u64().unwrap_or(0),
            })
        };
        let (input, output) = (
            n("gen_ai.usage.input_tokens"),
            n("gen_ai.usage.output_tokens"),
        );
        if crate::shared::blocks::any_count(&[input, output]) {
            self.session.usage.push(Usage {
                request_key: format!("span:{}", s.span_id),
                model,
                timestamp: time::from_epoch_millis(
                    i64::try_from(s.start_ns / 1_000_000).unwrap_or(0),
                ),
                input_tokens: input,
                output_tokens: output,
                tokens_known: true,
                ..Usage::default()
            });
        }
    }

    fn call(&mut self, id: Option<&str>, name: Option<&str>, args: Option<&Value>) -> Message {
        let mut m = Message::new(Role::Assistant, MessageKind::ToolCall, String::new());
        m.tool_name = Some(name.unwrap_or("unknown").to_string());
        m.tool_call_id = id.map(str::to_string);
        m.tool_input = args.map(value_text);
        if let Some(id) = id {
            self.calls.insert(id.to_string());
        }
        m
    }

    fn tool(&mut self, s: &Span) {
        let id = s.attr("gen_ai.tool.call.id");
        let name = s.attr("gen_ai.tool.name");
        if id.is_none_or(|i| !self.calls.contains(i)) {
            let args = s.attrs.get("gen_ai.tool.call.arguments").cloned();
            let m = self.call(id, name, args.as_ref());
            self.push(m, s);
        }
        let mut r = Message::new(Role::Tool, MessageKind::ToolResult, String::new());
        r.tool_name = name.map(str::to_string);
        r.tool_call_id = id.map(str::to_string);
        r.tool_output = Some(s.attr("gen_ai.tool.call.result").unwrap_or("").to_string());
        r.is_error = s.failed;
        self.push(r, s);
    }
}
