//! The request parser of GitHub Copilot Chat in VS Code: a chat object's `requests` (a stored
//! session, a session from the legacy state database, or a chat export) as a session's
//! messages, turns, files, references, usage and subagent sessions. Used by
//! [`crate::copilot_vscode`], [`crate::copilot_vscode_legacy`] and [`crate::vscode_export`].

use std::collections::HashMap;

use serde_json::{Map, Value};
use trail_model::turns::{assign_turn_indexes, build_turns};
use trail_model::{
    time, truncate_chars, Checkpoint, FileTouch, Message, MessageKind, ParentLink, ParseIssue,
    Role, Session, SessionId, SessionMeta, Usage,
};

use crate::uri::{file_uri_path, uri_to_path};
use crate::{jsonl, refs, FileParse};

/// The marker VS Code writes in place of strings too long to persist.
pub const TRUNCATION_MARKER: &str = "[JustRide: value truncated";

/// Characters of the first prompt used as a title.
const TITLE_CHARS: usize = 200;

pub(crate) fn file_issue(path: &str, reason: &str) -> ParseIssue {
    ParseIssue {
        path: path.to_string(),
        line: None,
        byte_offset: None,
        excerpt: None,
        reason: reason.to_string(),
    }
}

/// Counts strings carrying VS Code's truncation marker.
fn count_truncated(v: &Value) -> usize {
    match v {
        Value::String(s) => usize::from(s.starts_with(TRUNCATION_MARKER)),
        Value::Array(a) => a.iter().map(count_truncated).sum(),
        Value::Object(o) => o.values().map(count_truncated).sum(),
        _ => 0,
    }
}

/// Text of a markdown-ish value: a string, an `IMarkdownString` (`{value}`) or a
/// `markdownContent` part (`{content: {value}}`).
fn markdown_text(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Object(o) => match o.get("value") {
            Some(Value::String(s)) => Some(s),
            _ => o.get("content").and_then(markdown_text),
        },
        _ => None,
    }
}

/// Concatenates the text leaves of a tool result (plain strings, prompt-tsx node trees).
fn collect_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => out.push_str(s),
        Value::Array(a) => a.iter().for_each(|x| collect_text(x, out)),
        Value::Object(o) => {
            if let Some(Value::String(t)) = o.get("text") {
                out.push_str(t);
            } else if let Some(val) = o.get("value") {
                collect_text(val, out);
            } else if let Some(node) = o.get("node") {
                collect_text(node, out);
            } else if let Some(children) = o.get("children") {
                collect_text(children, out);
            } else if let Some(content) = o.get("content") {
                collect_text(content, out);
            }
        }
        _ => {}
    }
}

fn result_text(v: &Value) -> String {
    let mut s = String::new();
    match v.get("content") {
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 && !s.is_empty() && !s.ends_with('\n') {
                    s.push('\n');
                }
                collect_text(item, &mut s);
            }
        }
        _ => collect_text(v, &mut s),
    }
    s
}

fn first_line(s: &str) -> String {
    truncate_chars(
        s.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim(),
        300,
    )
    .to_string()
}

fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn is_shell_tool(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("terminal") || n.contains("shell") || n.contains("bash") || n == "run_in_terminal"
}

fn is_file_tool(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('_', "");
    [
        "readfile",
        "createfile",
        "editfile",
        "insertedit",
        "replacestring",
        "applypatch",
        "editnotebook",
        "createnotebook",
    ]
    .iter()
    .any(|k| n.contains(k))
}

/// Paths a tool call's input names: `filePath`, `filePaths` and apply-patch file headers.
fn input_files(input: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Value::Object(o) = input else {
        return out;
    };
    if let Some(p) = o.get("filePath").and_then(Value::as_str) {
        out.push(p.to_string());
    }
    if let Some(Value::Array(ps)) = o.get("filePaths") {
        out.extend(ps.iter().filter_map(Value::as_str).map(str::to_string));
    }
    if let Some(Value::Array(rs)) = o.get("replacements") {
        for r in rs {
            if let Some(p) = r.get("filePath").and_then(Value::as_str) {
                out.push(p.to_string());
            }
        }
    }
    if let Some(patch) = o.get("input").and_then(Value::as_str) {
        for line in patch.lines() {
            for prefix in ["*** Update File: ", "*** Add File: ", "*** Delete File: "] {
                if let Some(p) = line.strip_prefix(prefix) {
                    out.push(p.trim().to_string());
                }
            }
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// A tool call the model made, from `result.metadata.toolCallRounds`.
struct RoundCall<'a> {
    call: &'a Value,
    timestamp: Option<&'a Value>,
}

/// Builds messages from a chat object's requests. Shared by both VS Code formats.
struct Builder<'a> {
    session: Session,
    issues: &'a mut Vec<ParseIssue>,
    path: &'a str,
    /// The line of a mutation log that last wrote each request (0 or none: not a log).
    request_lines: &'a [u64],
    seq: u32,
    /// The turn of the request being built (files and refs carry it).
    turn: u32,
    prompts: u32,
    tool_counter: u32,
    /// Subagent sessions built so far (from `runSubagent` calls).
    subagents: Vec<Session>,
    /// What each `runSubagent` call (by id) asked for, to open its session with.
    subagent_asks: HashMap<String, SubagentAsk>,
}

/// The prompt and description of a `runSubagent` call, and its final answer when recorded.
#[derive(Debug, Default, Clone)]
struct SubagentAsk {
    prompt: Option<String>,
    description: Option<String>,
    agent_name: Option<String>,
    result: Option<String>,
}

impl SubagentAsk {
    /// Reads `{prompt, description, agentName|subagentType, result}` from a call's arguments
    /// or a part's `toolSpecificData` (`kind: "subagent"`).
    fn from_value(v: &Value) -> SubagentAsk {
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .filter(|t| !t.trim().is_empty())
                .map(str::to_string)
        };
        SubagentAsk {
            prompt: s("prompt"),
            description: s("description"),
            agent_name: s("agentName").or_else(|| s("subagentType")),
            result: s("result"),
        }
    }

    fn merge(&mut self, other: SubagentAsk) {
        self.prompt = self.prompt.take().or(other.prompt);
        self.description = self.description.take().or(other.description);
        self.agent_name = self.agent_name.take().or(other.agent_name);
        self.result = self.result.take().or(other.result);
    }
}

/// The name VS Code gives the tool that starts a subagent.
const RUN_SUBAGENT: &str = "runSubagent";

/// Joins adjacent markdown (or thinking) parts into one message.
#[derive(Default)]
struct Pending {
    kind: Option<MessageKind>,
    text: String,
}

impl<'a> Builder<'a> {
    fn push(&mut self, mut m: Message) -> usize {
        m.seq = self.seq;
        m.on_main_chain = true;
        self.seq += 1;
        self.session.messages.push(m);
        self.session.messages.len() - 1
    }

    fn add_file(&mut self, path: String, tool: Option<&str>, ts: &Option<String>) {
        self.session.add_file(FileTouch {
            path,
            tool_name: tool.map(str::to_string),
            turn_index: Some(self.turn),
            first_seen_at: ts.clone(),
        });
    }

    /// A tool's result, with the refs its output names (a shell's output read as git's).
    fn push_result(
        &mut self,
        ctx: &RequestCtx,
        name: String,
        id: String,
        output: String,
        is_error: bool,
        ts: Option<String>,
    ) {
        self.add_refs(&output, is_shell_tool(&name), &ts);
        self.push(
            Message::new(Role::Tool, MessageKind::ToolResult, "")
                .with_native_id(ctx.native_id.clone())
                .with_tool_name(name)
                .with_call_id(id)
                .with_output(output)
                .with_error(is_error)
                .with_timestamp(ts),
        );
    }

    fn add_refs(&mut self, text: &str, git_output: bool, ts: &Option<String>) {
        for r in refs::session_refs(text, git_output, Some(self.turn), ts.as_deref()) {
            self.session.add_ref(r);
        }
    }

    fn flush(&mut self, pending: &mut Pending, ctx: &RequestCtx) {
        let Some(kind) = pending.kind.take() else {
            return;
        };
        let text = std::mem::take(&mut pending.text);
        if text.trim().is_empty() {
            return;
        }
        if kind == MessageKind::Text {
            self.add_refs(&text, false, &ctx.ts);
        }
        self.push(
            Message::new(Role::Assistant, kind, text)
                .with_native_id(ctx.native_id.clone())
                .with_model(ctx.model.clone())
                .with_timestamp(ctx.ts.clone()),
        );
    }

    fn append(&mut self, pending: &mut Pending, kind: MessageKind, text: &str, ctx: &RequestCtx) {
        if pending.kind != Some(kind) {
            self.flush(pending, ctx);
            pending.kind = Some(kind);
        }
        pending.text.push_str(text);
    }

    fn next_tool_id(&mut self, ctx: &RequestCtx) -> String {
        self.tool_counter += 1;
        format!(
            "{}#tool{}",
            ctx.native_id.as_deref().unwrap_or("request"),
            self.tool_counter
        )
    }

    /// A model tool call from `toolCallRounds`, with its result from `toolCallResults`.
    fn emit_round_call(&mut self, rc: &RoundCall<'_>, results: Option<&Value>, ctx: &RequestCtx) {
        let name = rc
            .call
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("tool")
            .to_string();
        let id = match rc.call.get("id").and_then(Value::as_str) {
            Some(s) if !s.is_empty() => s.to_string(),
            _ => self.next_tool_id(ctx),
        };
        let input_text = rc.call.get("arguments").map(json_text);
        let ts = rc
            .timestamp
            .and_then(time::from_json)
            .or_else(|| ctx.ts.clone());
        if let Some(ts) = &ts {
            self.session.meta.observe_timestamp(ts);
        }
        if let Some(input) = &input_text {
            self.add_refs(input, false, &ts);
            let parsed: Value = serde_json::from_str(input).unwrap_or(Value::Null);
            for f in input_files(&parsed) {
                self.add_file(f, Some(&name), &ts);
            }
        }
        let agent_ref = (name == RUN_SUBAGENT).then(|| id.clone());
        if agent_ref.is_some() {
            let args = input_text
                .as_deref()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
                .unwrap_or(Value::Null);
            self.subagent_asks
                .entry(id.clone())
                .or_default()
                .merge(SubagentAsk::from_value(&args));
        }
        self.push(
            Message::new(Role::Assistant, MessageKind::ToolCall, "")
                .with_native_id(ctx.native_id.clone())
                .with_tool_name(name.clone())
                .with_call_id(id.clone())
                .with_input(input_text)
                .with_model(ctx.model.clone())
                .with_timestamp(ts.clone())
                .with_agent_ref(agent_ref),
        );
        let Some(result) = results.and_then(|r| r.get(&id)) else {
            return;
        };
        let output = result_text(result);
        let is_error = result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.push_result(ctx, name, id, output, is_error, ts);
    }

    /// A tool invocation part (`toolInvocationSerialized`), used when the request carries no
    /// model tool-call rounds.
    fn emit_invocation(&mut self, part: &Map<String, Value>, ctx: &RequestCtx) {
        let name = part
            .get("toolId")
            .and_then(Value::as_str)
            .unwrap_or("tool")
            .to_string();
        let id = match part.get("toolCallId").and_then(Value::as_str) {
            Some(s) if !s.is_empty() => s.to_string(),
            _ => self.next_tool_id(ctx),
        };
        let intent = part
            .get("invocationMessage")
            .and_then(markdown_text)
            .map(first_line)
            .unwrap_or_default();
        let details = part.get("resultDetails");
        let specific = part.get("toolSpecificData");
        let input = details
            .and_then(|d| d.get("input"))
            .map(json_text)
            .or_else(|| {
                specific.map(|s| match s.get("rawInput") {
                    Some(raw) => json_text(raw),
                    None => s.to_string(),
                })
            });
        if let Some(input) = &input {
            self.add_refs(input, false, &ctx.ts);
            // The paths in the input, as for a model round's arguments (a subagent's tools
            // exist only as parts).
            let parsed: Value = serde_json::from_str(input).unwrap_or(Value::Null);
            for f in input_files(&parsed) {
                self.add_file(f, Some(&name), &ctx.ts);
            }
        }
        if is_file_tool(&name) {
            for key in ["invocationMessage", "pastTenseMessage"] {
                if let Some(Value::Object(uris)) = part.get(key).and_then(|m| m.get("uris")) {
                    let paths: Vec<String> = uris.values().filter_map(file_uri_path).collect();
                    for p in paths {
                        self.add_file(p, Some(&name), &ctx.ts);
                    }
                }
            }
        }
        let agent_ref = (name == RUN_SUBAGENT).then(|| id.clone());
        self.push(
            Message::new(Role::Assistant, MessageKind::ToolCall, intent)
                .with_native_id(ctx.native_id.clone())
                .with_tool_name(name.clone())
                .with_call_id(id.clone())
                .with_input(input)
                .with_model(ctx.model.clone())
                .with_timestamp(ctx.ts.clone())
                .with_agent_ref(agent_ref),
        );
        let complete = part.get("isComplete").and_then(Value::as_bool) == Some(true);
        if !complete && details.is_none() {
            return;
        }
        let mut output = String::new();
        let mut is_error = false;
        match details {
            Some(Value::Object(d)) => {
                if let Some(o) = d.get("output") {
                    collect_text(o, &mut output);
                }
                is_error = d.get("isError").and_then(Value::as_bool).unwrap_or(false);
            }
            Some(Value::Array(locations)) => {
                let lines: Vec<String> = locations
                    .iter()
                    .filter_map(|l| l.get("uri").map_or_else(|| uri_to_path(l), uri_to_path))
                    .collect();
                output = lines.join("\n");
            }
            _ => {}
        }
        if output.is_empty() {
            if let Some(t) = part.get("pastTenseMessage").and_then(markdown_text) {
                output = t.to_string();
            }
        }
        self.push_result(ctx, name, id, output, is_error, ctx.ts.clone());
    }

    fn emit_other(
        &mut self,
        role: Role,
        kind: MessageKind,
        text: String,
        raw: &Value,
        ctx: &RequestCtx,
    ) {
        let extra = (kind == MessageKind::Unknown).then(|| raw.to_string());
        self.push(
            Message::new(role, kind, text)
                .with_native_id(ctx.native_id.clone())
                .with_timestamp(ctx.ts.clone())
                .with_extra(extra),
        );
    }

    fn request(&mut self, index: usize, req: &Value) {
        let Value::Object(r) = req else {
            self.issues.push(ParseIssue {
                path: self.path.to_string(),
                line: self.request_lines.get(index).copied().filter(|&l| l > 0),
                byte_offset: None,
                excerpt: Some(truncate_chars(&req.to_string(), jsonl::EXCERPT_CHARS).to_string()),
                reason: format!("request {index} is not an object; kept as an empty turn"),
            });
            let ctx = RequestCtx::default();
            self.prompt(String::new(), &ctx);
            return;
        };
        let ctx = self.request_ctx(r);
        let prompt = request_prompt(r);
        self.prompt(prompt, &ctx);

        let metadata = r.get("result").and_then(|x| x.get("metadata"));
        let rounds = round_calls(metadata);
        let results = metadata.and_then(|m| m.get("toolCallResults"));
        let use_rounds = !rounds.is_empty();
        let mut rounds = rounds.into_iter();

        let mut pending = Pending::default();
        let mut sub_parts: Vec<(String, Vec<&Map<String, Value>>)> = Vec::new();
        match r.get("response") {
            Some(Value::Array(parts)) => {
                for part in parts {
                    self.part(
                        part,
                        &mut pending,
                        &ctx,
                        use_rounds,
                        &mut rounds,
                        results,
                        &mut sub_parts,
                    );
                }
            }
            Some(Value::String(s)) => self.append(&mut pending, MessageKind::Text, s, &ctx),
            _ => {}
        }
        if let Some(Value::String(s)) = r.get("completion") {
            self.append(&mut pending, MessageKind::Text, s, &ctx);
        }
        self.flush(&mut pending, &ctx);
        for rc in rounds {
            self.emit_round_call(&rc, results, &ctx);
        }
        for (call_id, parts) in sub_parts {
            self.subagent(&call_id, &parts, &ctx);
        }

        self.summary(metadata, &ctx);
        for e in r
            .get("editedFileEvents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(p) = e.get("uri").and_then(file_uri_path) {
                self.add_file(p, Some("editedFileEvents"), &ctx.ts);
            }
        }

        self.error(r, &ctx);
        self.usage(index, r, &ctx);
    }

    /// A request's context: its id, time and model (the time and model also go to the
    /// session, with the custom agent it ran under).
    fn request_ctx(&mut self, r: &Map<String, Value>) -> RequestCtx {
        let ts = r.get("timestamp").and_then(time::from_json);
        if let Some(t) = &ts {
            self.session.meta.observe_timestamp(t);
        }
        // `modelId` is what was picked (`copilot/auto` included); `resolvedModel` is the model
        // that answered, written with the result.
        let resolved = r
            .get("result")
            .and_then(|x| x.get("metadata"))
            .and_then(|m| m.get("resolvedModel"))
            .or_else(|| r.get("resolvedModel"))
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty());
        let model = resolved
            .or_else(|| r.get("modelId").and_then(Value::as_str))
            .filter(|m| !m.is_empty())
            .map(str::to_string);
        if let Some(m) = &model {
            self.session.observe_model(m);
        }
        // A custom agent the request ran under (`modeInfo` of a mode that is not built in):
        // Chronicle's `agent_description`.
        if let Some(name) = r
            .get("modeInfo")
            .filter(|m| m.get("isBuiltin").and_then(Value::as_bool) == Some(false))
            .and_then(|m| m.get("modeName"))
            .and_then(Value::as_str)
            .filter(|n| !n.trim().is_empty())
        {
            self.session.meta.agent_description = Some(name.to_string());
        }
        RequestCtx {
            native_id: r
                .get("requestId")
                .and_then(Value::as_str)
                .map(str::to_string),
            ts,
            model,
        }
    }

    /// Conversation summaries written by the agent when it compacted its context.
    fn summary(&mut self, metadata: Option<&Value>, ctx: &RequestCtx) {
        if let Some(summary) = metadata
            .and_then(|m| m.get("summary"))
            .and_then(|s| s.get("text"))
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
        {
            let number = self.session.checkpoints.len() as u32 + 1;
            self.session.checkpoints.push(Checkpoint {
                number,
                title: Some("Conversation summary".into()),
                overview: Some(summary.to_string()),
                created_at: ctx.ts.clone(),
                ..Checkpoint::default()
            });
            self.emit_other(
                Role::System,
                MessageKind::Summary,
                summary.to_string(),
                &Value::Null,
                ctx,
            );
        }
    }

    /// Builds the session of the subagent a `runSubagent` call (`call_id`) started: its prompt
    /// as the one turn, then its tool calls (`parts`), then its answer when recorded. The
    /// builder's session and counters are swapped out meanwhile, so the tool code is shared.
    fn subagent(&mut self, call_id: &str, parts: &[&Map<String, Value>], ctx: &RequestCtx) {
        let parent = &self.session.meta;
        let mut meta = SessionMeta::new(
            SessionId::new(format!("{}:agent:{call_id}", parent.id)),
            parent.source,
            call_id,
        );
        meta.cwd = parent.cwd.clone();
        meta.parent = Some(ParentLink {
            session_id: parent.id.clone(),
            tool_call_id: Some(call_id.to_string()),
            agent_ref: Some(call_id.to_string()),
        });
        let ask = self.subagent_asks.get(call_id).cloned().unwrap_or_default();
        if let Some(ts) = &ctx.ts {
            meta.observe_timestamp(ts);
        }
        let title = ask.description.clone().or_else(|| ask.prompt.clone());
        meta.title = title.map(|t| truncate_chars(first_line(&t).trim(), TITLE_CHARS).to_string());
        // The custom agent or subagent type it ran as (Chronicle's `agent_description`).
        meta.agent_description = ask.agent_name.clone();
        let mut saved = Session::new(meta);
        std::mem::swap(&mut self.session, &mut saved);
        let (seq, turn) = (self.seq, self.turn);
        (self.seq, self.turn) = (0, 0);
        if let Some(m) = &ctx.model {
            self.session.observe_model(m);
        }
        let prompt = ask
            .prompt
            .clone()
            .or_else(|| ask.description.clone())
            .unwrap_or_default();
        self.add_refs(&prompt, false, &ctx.ts);
        self.push(
            Message::prompt(prompt)
                .with_native_id(ctx.native_id.clone())
                .with_timestamp(ctx.ts.clone())
                .with_sidechain(true),
        );
        for part in parts {
            self.emit_invocation(part, ctx);
        }
        if let Some(answer) = ask.result {
            self.push(
                Message::answer(answer)
                    .with_native_id(ctx.native_id.clone())
                    .with_model(ctx.model.clone())
                    .with_timestamp(ctx.ts.clone()),
            );
        }
        std::mem::swap(&mut self.session, &mut saved);
        (self.seq, self.turn) = (seq, turn);
        let mut sub = saved;
        for m in &mut sub.messages {
            m.is_sidechain = true;
        }
        let order: Vec<usize> = (0..sub.messages.len()).collect();
        sub.turn_count = assign_turn_indexes(&mut sub.messages, &order);
        sub.turns = build_turns(&sub.messages);
        self.subagents.push(sub);
    }

    fn prompt(&mut self, text: String, ctx: &RequestCtx) {
        self.turn = self.prompts;
        self.prompts += 1;
        self.add_refs(&text, false, &ctx.ts);
        if self.session.meta.title.is_none() {
            let t = text.trim();
            if !t.is_empty() {
                self.session.meta.title = Some(truncate_chars(t, TITLE_CHARS).to_string());
            }
        }
        self.push(
            Message::prompt(text)
                .with_native_id(ctx.native_id.clone())
                .with_timestamp(ctx.ts.clone()),
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn part<'v>(
        &mut self,
        part: &'v Value,
        pending: &mut Pending,
        ctx: &RequestCtx,
        use_rounds: bool,
        rounds: &mut impl Iterator<Item = RoundCall<'v>>,
        results: Option<&Value>,
        sub_parts: &mut Vec<(String, Vec<&'v Map<String, Value>>)>,
    ) {
        let obj = match part {
            Value::String(s) => {
                self.append(pending, MessageKind::Text, s, ctx);
                return;
            }
            Value::Object(o) => o,
            Value::Null => return,
            other => {
                self.flush(pending, ctx);
                self.emit_other(
                    Role::Assistant,
                    MessageKind::Unknown,
                    String::new(),
                    other,
                    ctx,
                );
                return;
            }
        };
        let kind = obj.get("kind").and_then(Value::as_str);
        match kind {
            None | Some("markdownContent") => match markdown_text(part) {
                Some(t) => self.append(pending, MessageKind::Text, t, ctx),
                None => {
                    // A bare tree part or something newer: keep it.
                    self.flush(pending, ctx);
                    self.emit_other(
                        Role::Assistant,
                        MessageKind::Unknown,
                        String::new(),
                        part,
                        ctx,
                    );
                }
            },
            Some("markdownVuln") => {
                if let Some(t) = obj.get("content").and_then(markdown_text) {
                    self.append(pending, MessageKind::Text, t, ctx);
                }
            }
            Some("inlineReference") => {
                let name = inline_reference_name(obj);
                if !name.is_empty() {
                    self.append(pending, MessageKind::Text, &format!("`{name}`"), ctx);
                }
            }
            Some("thinking") => {
                let text = thinking_text(obj);
                if !text.is_empty() {
                    self.append(pending, MessageKind::Thinking, &text, ctx);
                }
            }
            Some("toolInvocationSerialized" | "toolInvocation") => {
                self.flush(pending, ctx);
                self.tool_part(obj, ctx, use_rounds, rounds, results, sub_parts);
            }
            Some("textEditGroup" | "notebookEditGroup") => {
                if let Some(p) = obj.get("uri").and_then(file_uri_path) {
                    self.add_file(p, kind, &ctx.ts);
                }
            }
            Some("codeblockUri") => {
                if obj.get("isEdit").and_then(Value::as_bool) == Some(true) {
                    if let Some(p) = obj.get("uri").and_then(file_uri_path) {
                        self.add_file(p, Some("codeblockUri"), &ctx.ts);
                    }
                }
            }
            Some(
                "undoStop"
                | "prepareToolInvocation"
                | "mcpServersStarting"
                | "clearToPreviousToolInvocation"
                | "codeCitation",
            ) => {}
            Some(
                "progressMessage"
                | "progressTask"
                | "progressTaskSerialized"
                | "warning"
                | "confirmation",
            ) => {
                let text = progress_text(obj);
                self.flush(pending, ctx);
                self.emit_other(Role::System, MessageKind::Meta, text, part, ctx);
            }
            Some(_) => {
                self.flush(pending, ctx);
                self.emit_other(
                    Role::Assistant,
                    MessageKind::Unknown,
                    String::new(),
                    part,
                    ctx,
                );
            }
        }
    }

    /// A tool invocation part: a subagent's tool goes to the subagent's parts; a run of a
    /// subagent notes what was asked; the call itself comes from the request's model rounds
    /// when it has them.
    fn tool_part<'v>(
        &mut self,
        obj: &'v Map<String, Value>,
        ctx: &RequestCtx,
        use_rounds: bool,
        rounds: &mut impl Iterator<Item = RoundCall<'v>>,
        results: Option<&Value>,
        sub_parts: &mut Vec<(String, Vec<&'v Map<String, Value>>)>,
    ) {
        if let Some(parent_call) = obj
            .get("subAgentInvocationId")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            // A subagent's tool: not one of this request's model rounds.
            match sub_parts.iter_mut().find(|(id, _)| id == parent_call) {
                Some((_, parts)) => parts.push(obj),
                None => sub_parts.push((parent_call.to_string(), vec![obj])),
            }
            return;
        }
        let specific = obj.get("toolSpecificData");
        let is_run_subagent = obj.get("toolId").and_then(Value::as_str) == Some(RUN_SUBAGENT)
            || specific.and_then(|d| d.get("kind")).and_then(Value::as_str) == Some("subagent");
        if is_run_subagent {
            if let Some(id) = obj.get("toolCallId").and_then(Value::as_str) {
                let ask = specific.map(SubagentAsk::from_value).unwrap_or_default();
                self.subagent_asks
                    .entry(id.to_string())
                    .or_default()
                    .merge(ask);
                if !sub_parts.iter().any(|(x, _)| x == id) {
                    sub_parts.push((id.to_string(), Vec::new()));
                }
            }
        }
        if use_rounds {
            if let Some(rc) = rounds.next() {
                self.emit_round_call(&rc, results, ctx);
            }
        } else {
            self.emit_invocation(obj, ctx);
        }
    }
    fn error(&mut self, r: &Map<String, Value>, ctx: &RequestCtx) {
        let details = r.get("result").and_then(|x| x.get("errorDetails"));
        let state = r
            .get("modelState")
            .and_then(|m| m.get("value"))
            .and_then(Value::as_u64);
        let cancelled =
            state == Some(2) || r.get("isCanceled").and_then(Value::as_bool) == Some(true);
        let failed = state == Some(3);
        let text = match details
            .and_then(|d| d.get("message"))
            .and_then(Value::as_str)
        {
            Some(m) if !m.is_empty() => m.to_string(),
            _ if failed => "request failed".to_string(),
            _ if cancelled => "request cancelled".to_string(),
            _ if details.is_some_and(|d| !d.is_null()) => "request error".to_string(),
            _ => return,
        };
        let role = if details.is_some_and(|d| !d.is_null()) {
            Role::Assistant
        } else {
            Role::System
        };
        self.push(
            Message::new(role, MessageKind::Error, text)
                .with_native_id(ctx.native_id.clone())
                .with_error(true)
                .with_model(ctx.model.clone())
                .with_timestamp(ctx.ts.clone())
                .with_extra(details.filter(|d| !d.is_null()).map(Value::to_string)),
        );
    }

    /// One usage row per request, each count taken from the first place that records it: a
    /// request may record `completionTokens` on itself and `promptTokens` in
    /// `result.metadata` (issue 40), so the places are merged field by field.
    fn usage(&mut self, index: usize, r: &Map<String, Value>, ctx: &RequestCtx) {
        let counts = request_token_counts(r);
        if counts.input.is_none() && counts.output.is_none() {
            return;
        }
        let key = ctx
            .native_id
            .clone()
            .unwrap_or_else(|| format!("request-{index}"));
        if self.session.usage.iter().any(|u| u.request_key == key) {
            return;
        }
        let message_seq = self
            .session
            .messages
            .iter()
            .rev()
            .find(|m| m.native_id == ctx.native_id && m.role == Some(Role::Assistant))
            .map(|m| m.seq);
        let (input, output) = (counts.input.unwrap_or(0), counts.output.unwrap_or(0));
        self.session.usage.push(Usage {
            request_key: key,
            message_seq,
            model: ctx.model.clone(),
            timestamp: ctx.ts.clone(),
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: counts.cache_read.unwrap_or(0),
            reasoning_tokens: counts.reasoning.unwrap_or(0),
            tokens_known: crate::shared::blocks::any_count(&[input, output]),
            ..Usage::default()
        });
    }
}

/// A request's token counts, each `None` when no place records it.
#[derive(Debug, Default, PartialEq)]
struct TokenCounts {
    input: Option<u64>,
    output: Option<u64>,
    cache_read: Option<u64>,
    reasoning: Option<u64>,
}

/// Reads a request's token counts from every place VS Code writes them, in order: the request
/// itself (`kind: 1` sets on `promptTokens`/`completionTokens` once the response is done), its
/// `usage`, `result.usage`, `result.metadata.usage` and `result.metadata`. Each count comes from
/// the first place that has it.
fn request_token_counts(r: &Map<String, Value>) -> TokenCounts {
    let result = r.get("result");
    let metadata = result.and_then(|x| x.get("metadata"));
    let places = [
        Some(r),
        r.get("usage").and_then(Value::as_object),
        result
            .and_then(|x| x.get("usage"))
            .and_then(Value::as_object),
        metadata
            .and_then(|m| m.get("usage"))
            .and_then(Value::as_object),
        metadata.and_then(Value::as_object),
    ];
    let first = |keys: &[&str]| {
        places
            .iter()
            .flatten()
            .find_map(|c| keys.iter().find_map(|k| c.get(*k).and_then(Value::as_u64)))
    };
    TokenCounts {
        input: first(&[
            "promptTokens",
            "prompt_tokens",
            "inputTokens",
            "input_tokens",
        ]),
        output: first(&[
            "completionTokens",
            "completion_tokens",
            "outputTokens",
            "output_tokens",
        ]),
        cache_read: first(&["cachedTokens", "cache_read_tokens", "cacheReadTokens"]),
        reasoning: first(&["reasoningTokens", "reasoning_tokens"]),
    }
}

fn parts_text(parts: Option<&Value>) -> String {
    let mut s = String::new();
    for p in parts.and_then(Value::as_array).into_iter().flatten() {
        if let Some(t) = p.get("text").and_then(Value::as_str) {
            s.push_str(t);
        }
    }
    s
}

#[derive(Default)]
struct RequestCtx {
    native_id: Option<String>,
    ts: Option<String>,
    model: Option<String>,
}

/// Builds a session from a chat object (stored session or export): one turn per request.
/// Returns the session and notes for `doctor`. Used by both VS Code formats.
pub(crate) fn build_session(
    mut meta: SessionMeta,
    root: &Value,
    path: &str,
    request_lines: &[u64],
    out: &mut FileParse,
) -> (Session, Vec<String>) {
    if let Some(title) = ["customTitle", "computedTitle"]
        .iter()
        .find_map(|k| root.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        meta.title = Some(title.to_string());
    }
    for key in ["creationDate", "lastMessageDate"] {
        if let Some(ts) = root.get(key).and_then(time::from_json) {
            meta.observe_timestamp(&ts);
        }
    }
    let mut b = Builder {
        session: Session::new(meta),
        issues: &mut out.issues,
        path,
        request_lines,
        seq: 0,
        turn: 0,
        prompts: 0,
        tool_counter: 0,
        subagents: Vec::new(),
        subagent_asks: HashMap::new(),
    };
    match root.get("requests") {
        Some(Value::Array(reqs)) => {
            for (i, req) in reqs.iter().enumerate() {
                b.request(i, req);
            }
        }
        None | Some(Value::Null) => {}
        Some(_) => b
            .issues
            .push(file_issue(path, "`requests` is not an array")),
    }
    let mut session = b.session;
    for mut sub in b.subagents {
        // The parent's folder is known only now for stored sessions read before it.
        if sub.meta.cwd.is_none() {
            sub.meta.cwd = session.meta.cwd.clone();
        }
        out.sessions.push(sub);
    }
    let order: Vec<usize> = (0..session.messages.len()).collect();
    session.turn_count = assign_turn_indexes(&mut session.messages, &order);
    session.turns = build_turns(&session.messages);
    let mut notes = Vec::new();
    let truncated = count_truncated(root);
    if truncated > 0 {
        notes.push(format!("truncated values: {truncated}"));
    }
    (session, notes)
}

/// A request's prompt: its message (a string, or an object's text or parts) or `prompt`.
fn request_prompt(r: &Map<String, Value>) -> String {
    match r.get("message") {
        Some(Value::String(s)) => s.clone(),
        Some(m @ Value::Object(_)) => m
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| parts_text(m.get("parts"))),
        _ => r
            .get("prompt")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    }
}

/// The tool calls of a request's model rounds, in order, each with its round's time.
fn round_calls(metadata: Option<&Value>) -> Vec<RoundCall<'_>> {
    let mut rounds: Vec<RoundCall<'_>> = Vec::new();
    if let Some(Value::Array(rs)) = metadata.and_then(|m| m.get("toolCallRounds")) {
        for round in rs {
            if let Some(Value::Array(calls)) = round.get("toolCalls") {
                for call in calls {
                    rounds.push(RoundCall {
                        call,
                        timestamp: round.get("timestamp"),
                    });
                }
            }
        }
    }
    rounds
}

/// The name an inline reference shows: its own, else its target's file name.
fn inline_reference_name(obj: &Map<String, Value>) -> String {
    obj.get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            let r = obj.get("inlineReference")?;
            let target = r.get("uri").unwrap_or(r);
            let p = uri_to_path(target)?;
            let base = p.rsplit(['/', '\\']).next().unwrap_or(&p).to_string();
            Some(base)
        })
        .unwrap_or_default()
}

/// A thinking part's text: a string, or an array of strings.
fn thinking_text(obj: &Map<String, Value>) -> String {
    let mut text = String::new();
    match obj.get("value") {
        Some(Value::String(s)) => text.push_str(s),
        Some(Value::Array(a)) => {
            for s in a.iter().filter_map(Value::as_str) {
                text.push_str(s);
            }
        }
        _ => {}
    }
    text
}

/// A progress, warning or confirmation part's text: `title: content`.
fn progress_text(obj: &Map<String, Value>) -> String {
    let mut text = String::new();
    if let Some(t) = obj.get("title").and_then(Value::as_str) {
        text.push_str(t);
    }
    if let Some(t) = obj
        .get("content")
        .or_else(|| obj.get("message"))
        .and_then(markdown_text)
    {
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(t);
    }
    text
}
