//! Grok Build (xAI's coding CLI): one folder per session,
//! `~/.grok/sessions/<percent-encoded cwd>/<session id>/` (`$GROK_HOME/sessions`).
//!
//! # What was read, and where
//! The producer is `xai-org/grok-build` (`xai-grok-shell` session storage and
//! `extensions/notification.rs`); its shapes as peers decode them (agentsview, codecast):
//! - `updates.jsonl`, the authoritative log: each line `{timestamp: <Unix seconds>, method,
//!   params: {sessionId, update}}` (older lines are a bare `{sessionId, update}`); `update` is
//!   an ACP session update tagged by `sessionUpdate`: `user_message_chunk`,
//!   `agent_message_chunk`, `agent_thought_chunk` (streamed deltas, `content` one block or a
//!   list, `_meta.promptIndex`, `_meta.modelId`), `tool_call` (`toolCallId, title, kind,
//!   rawInput`), `tool_call_update` (`toolCallId, status, content`: its content replaces the
//!   call's result), and xAI's own `turn_completed` (`prompt_id, stop_reason, agent_result,
//!   usage {inputTokens (cache reads inside), outputTokens, cachedReadTokens,
//!   cacheCreationTokens, reasoningTokens, costUsdTicks (10^10 per USD), modelUsage {model:
//!   same}}`), `rewind_marker` (`target_prompt_index`: turns from that index on are undone;
//!   the file is never truncated) and `model_changed`;
//! - `summary.json`: `generated_title` / `title`, `info {id, cwd}`, `created_at`,
//!   `updated_at`, `session_kind` (`subagent` for sub-agents), `parent_session_id` where
//!   recorded;
//! - `chat_history.jsonl`: the model's context, rewritten by compaction: read only when a
//!   session has no `updates.jsonl`.
//!
//! # Mapping
//! - Consecutive chunks of one kind make one message; a user chunk with a new prompt index
//!   starts a turn. A rewind drops the undone turns' messages (their usage stays: it was
//!   spent). A torn last line (Grok heals it on its next write) is skipped without an issue;
//!   other bad lines are issues.
//! - Usage: one record per `turn_completed` and model (`<prompt_id>#<model>`), input without
//!   the cache reads.
//! - The file is re-read whole when it changes (`appendable` false): a rewind can undo
//!   earlier lines, and the files are small.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{
    time, truncate_chars, Message, MessageKind, ParentLink, ParseIssue, Role, Session, SessionMeta,
    SourceKind, Usage,
};

use crate::ids;
use crate::json_fields::{jcount, jstr, value_text};
use crate::linear::{finish_linear_session, push_message, PendingFile};
use crate::uri::percent_decode;
use crate::{discover, FileParse, ParseRequest, Source, SourceError};

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
pub const PARSER_VERSION: u32 = 1;

const UPDATES: &str = "updates.jsonl";
const CHAT_HISTORY: &str = "chat_history.jsonl";
const SUMMARY: &str = "summary.json";
const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["run_terminal_cmd", "bash", "shell"];

/// Grok Build's session folders.
pub struct Grok;

impl Source for Grok {
    fn kind(&self) -> SourceKind {
        SourceKind::Grok
    }

    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    /// Roots are Grok's home (`~/.grok`, holding `sessions/`) or the `sessions` folder. One
    /// file per session folder: `updates.jsonl`, else `chat_history.jsonl`.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            let sessions = if root.join("sessions").is_dir() {
                root.join("sessions")
            } else {
                root.clone()
            };
            let found = discover::walk_files(&sessions, 3, |p| {
                p.file_name()
                    .is_some_and(|n| n == UPDATES || n == CHAT_HISTORY)
            });
            for p in found {
                let is_history = p.file_name().is_some_and(|n| n == CHAT_HISTORY);
                if !(is_history && p.with_file_name(UPDATES).is_file()) {
                    out.push(p);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
        let Ok(v) = serde_json::from_slice::<Value>(first) else {
            return false;
        };
        match name {
            UPDATES => line_update(&v).is_some(),
            CHAT_HISTORY => v.get("role").is_some() && path.with_file_name(SUMMARY).is_file(),
            _ => false,
        }
    }

    fn appendable(&self, _path: &Path) -> bool {
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        let data = crate::whole::read(path)?;
        let text = String::from_utf8_lossy(&data);
        let summary = read_summary(path);
        let mut session = new_session(path, &summary);
        let mut issues = Vec::new();
        if path.file_name().is_some_and(|n| n == CHAT_HISTORY) {
            read_history(path, &text, &mut session, &mut issues);
        } else {
            read_updates(path, &text, &mut session, &mut issues);
        }
        Ok(FileParse {
            sessions: vec![session],
            issues,
            bytes_parsed: data.len() as u64,
            bytes_read: data.len() as u64,
            lines: text.lines().count() as u64,
            ..FileParse::default()
        })
    }
}

/// The update of one `updates.jsonl` line (wrapped or bare), if it has a kind.
fn line_update(v: &Value) -> Option<&Value> {
    v.pointer("/params/update")
        .or_else(|| v.get("update"))
        .filter(|u| u.get("sessionUpdate").is_some())
}

fn read_summary(path: &Path) -> Value {
    crate::whole::read(&path.with_file_name(SUMMARY))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

fn new_session(path: &Path, summary: &Value) -> Session {
    let dir = path.parent();
    let id = summary
        .pointer("/info/id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            dir.and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let mut meta = SessionMeta::new(
        ids::session_id(SourceKind::Grok, &id),
        SourceKind::Grok,
        &id,
    );
    meta.title = ["generated_title", "title"]
        .iter()
        .find_map(|k| jstr(summary, k))
        .filter(|t| !t.trim().is_empty())
        .map(str::to_string);
    meta.cwd = summary
        .pointer("/info/cwd")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            let folder = dir?.parent()?.file_name()?.to_string_lossy().into_owned();
            Some(percent_decode(&folder)).filter(|c| c.starts_with('/') || c.contains(':'))
        });
    let parent = ["parent_session_id", "parentSessionId"]
        .iter()
        .find_map(|k| jstr(summary, k).or_else(|| summary.get("info").and_then(|i| jstr(i, k))));
    if let Some(p) = parent {
        meta.parent = Some(ParentLink {
            session_id: ids::session_id(SourceKind::Grok, p),
            tool_call_id: None,
            agent_ref: Some(id.clone()),
        });
    }
    for k in ["created_at", "updated_at"] {
        if let Some(ts) = summary.get(k).and_then(time::from_json) {
            meta.observe_timestamp(&ts);
        }
    }
    Session::new(meta)
}

/// A message being built, with the turn it belongs to (for rewinds).
struct Pending {
    msg: Message,
    prompt: i64,
}

#[derive(Default)]
struct Updates {
    done: Vec<Pending>,
    open: Option<Pending>,
    prompt: i64,
    model: Option<String>,
    tools: HashMap<String, (Option<String>, usize)>,
}

impl Updates {
    fn close(&mut self) {
        if let Some(p) = self.open.take() {
            self.done.push(p);
        }
    }

    fn open_kind(&self) -> Option<MessageKind> {
        self.open.as_ref().and_then(|p| p.msg.kind)
    }
}

/// The text of a chunk's or a result's content: one block or a list; `{type: content,
/// content}` wrappers and `diff` blocks (edit results) included.
fn content_text(v: Option<&Value>) -> String {
    let mut out = String::new();
    let blocks: Vec<&Value> = match v {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(o @ Value::Object(_)) => vec![o],
        Some(Value::String(s)) => return s.clone(),
        _ => Vec::new(),
    };
    for b in blocks {
        match jstr(b, "type") {
            Some("text") => out.push_str(jstr(b, "text").unwrap_or("")),
            Some("content") => out.push_str(&content_text(b.get("content"))),
            Some("diff") => {
                out.push_str(jstr(b, "path").unwrap_or(""));
                out.push('\n');
                out.push_str(jstr(b, "newText").unwrap_or(""));
            }
            _ => {}
        }
    }
    out
}

fn read_updates(path: &Path, text: &str, session: &mut Session, issues: &mut Vec<ParseIssue>) {
    let mut u = Updates {
        prompt: -1,
        ..Updates::default()
    };
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                // The last line may be torn mid-write; Grok heals it on its next append.
                if i + 1 < lines.len() || text.ends_with('\n') {
                    issues.push(ParseIssue {
                        path: path.display().to_string(),
                        line: Some(i as u64 + 1),
                        byte_offset: None,
                        excerpt: Some(truncate_chars(line, 200).to_string()),
                        reason: format!("invalid JSON: {e}"),
                    });
                }
                continue;
            }
        };
        let Some(update) = line_update(&v) else {
            continue;
        };
        let ts = v
            .get("timestamp")
            .and_then(Value::as_f64)
            .and_then(|s| time::from_epoch_millis((s * 1000.0) as i64));
        if let Some(t) = &ts {
            session.meta.observe_timestamp(t);
        }
        apply(session, &mut u, update, ts);
    }
    u.close();
    let mut files = Vec::new();
    let mut first_prompt = None;
    for p in u.done {
        let m = p.msg;
        if m.kind() == MessageKind::Prompt && first_prompt.is_none() && !m.text.trim().is_empty() {
            first_prompt = Some(truncate_chars(m.text.trim(), TITLE_CHARS).to_string());
        }
        let path_in = m
            .tool_input
            .as_deref()
            .and_then(|i| serde_json::from_str::<Value>(i).ok())
            .and_then(|v| {
                ["path", "file_path", "target_file"]
                    .iter()
                    .find_map(|k| jstr(&v, k).map(str::to_string))
            });
        let (name, ts) = (m.tool_name.clone(), m.timestamp.clone());
        let is_call = m.kind() == MessageKind::ToolCall;
        let seq = push_message(session, m);
        if let (true, Some(p)) = (is_call, path_in) {
            files.push(PendingFile {
                seq: Some(seq),
                path: p,
                tool_name: name,
                timestamp: ts,
            });
        }
    }
    if session.meta.title.is_none() {
        session.meta.title = first_prompt;
    }
    finish_linear_session(session, files, SHELL_TOOLS);
}

fn apply(session: &mut Session, u: &mut Updates, update: &Value, ts: Option<String>) {
    let kind = jstr(update, "sessionUpdate").unwrap_or("");
    let message = |role: Role, kind: MessageKind, model: &Option<String>| {
        Message::new(role, kind, "")
            .with_timestamp(ts.clone())
            .with_model(if role == Role::Assistant {
                model.clone()
            } else {
                None
            })
    };
    match kind {
        "user_message_chunk" => {
            if let Some(m) = update.pointer("/_meta/modelId").and_then(Value::as_str) {
                u.model = Some(m.to_string());
            }
            let index = update.pointer("/_meta/promptIndex").and_then(Value::as_i64);
            let new_turn =
                u.open_kind() != Some(MessageKind::Prompt) || index.is_some_and(|i| i != u.prompt);
            if new_turn {
                u.close();
                u.prompt = index.unwrap_or(u.prompt + 1);
                u.open = Some(Pending {
                    msg: message(Role::User, MessageKind::Prompt, &None),
                    prompt: u.prompt,
                });
            }
            if let Some(p) = u.open.as_mut() {
                p.msg.text.push_str(&content_text(update.get("content")));
            }
        }
        "agent_message_chunk" | "agent_thought_chunk" => {
            let want = if kind == "agent_thought_chunk" {
                MessageKind::Thinking
            } else {
                MessageKind::Text
            };
            if u.open_kind() != Some(want) {
                u.close();
                u.open = Some(Pending {
                    msg: message(Role::Assistant, want, &u.model),
                    prompt: u.prompt,
                });
            }
            if let Some(p) = u.open.as_mut() {
                p.msg.text.push_str(&content_text(update.get("content")));
            }
        }
        "tool_call" => {
            u.close();
            let id = jstr(update, "toolCallId").unwrap_or("").to_string();
            let mut m = message(Role::Assistant, MessageKind::ToolCall, &u.model);
            let name = jstr(update, "kind")
                .or_else(|| jstr(update, "title"))
                .map(str::to_string);
            m.tool_name = name.clone();
            m.text = jstr(update, "title").unwrap_or("").to_string();
            m.tool_call_id = Some(id.clone());
            m.tool_input = update
                .get("rawInput")
                .filter(|v| !v.is_null())
                .map(Value::to_string);
            u.done.push(Pending {
                msg: m,
                prompt: u.prompt,
            });
            u.tools.insert(id, (name, usize::MAX));
        }
        "tool_call_update" => {
            let id = jstr(update, "toolCallId").unwrap_or("").to_string();
            let Some((name, slot)) = u.tools.get(&id).cloned() else {
                return;
            };
            let status = jstr(update, "status").unwrap_or("");
            if slot == usize::MAX && !matches!(status, "completed" | "failed") {
                return;
            }
            if slot == usize::MAX {
                u.close();
                let mut m = message(Role::Tool, MessageKind::ToolResult, &None);
                m.tool_name = name.clone();
                m.tool_call_id = Some(id.clone());
                m.tool_output = Some(content_text(update.get("content")));
                m.is_error = status == "failed";
                u.done.push(Pending {
                    msg: m,
                    prompt: u.prompt,
                });
                u.tools.insert(id, (name, u.done.len() - 1));
            }
        }
        "turn_completed" => {
            u.close();
            add_turn_usage(session, update, &u.model, ts);
            let has_text = u
                .done
                .iter()
                .any(|p| p.prompt == u.prompt && p.msg.kind() == MessageKind::Text);
            if let Some(r) =
                jstr(update, "agent_result").filter(|r| !has_text && !r.trim().is_empty())
            {
                let mut m = Message::answer("").with_model(u.model.clone());
                m.text = r.to_string();
                u.done.push(Pending {
                    msg: m,
                    prompt: u.prompt,
                });
            }
            u.tools.clear();
        }
        "rewind_marker" => {
            if let Some(target) = update.get("target_prompt_index").and_then(Value::as_i64) {
                u.close();
                u.done.retain(|p| p.prompt < target);
                u.tools.clear();
                u.prompt = u.prompt.min(target - 1);
            }
        }
        "model_changed" | "model_auto_switched" => {
            if let Some(m) = jstr(update, "model_id").or_else(|| jstr(update, "modelId")) {
                u.model = Some(m.to_string());
            }
        }
        _ => {}
    }
}

fn add_turn_usage(
    session: &mut Session,
    update: &Value,
    model: &Option<String>,
    ts: Option<String>,
) {
    let Some(usage) = update.get("usage").filter(|v| v.is_object()) else {
        return;
    };
    let prompt = jstr(update, "prompt_id").unwrap_or("turn").to_string();
    let per_model: Vec<(Option<String>, &Value)> =
        match usage.get("modelUsage").and_then(Value::as_object) {
            Some(m) if !m.is_empty() => m.iter().map(|(k, v)| (Some(k.clone()), v)).collect(),
            _ => vec![(model.clone(), usage)],
        };
    let many = per_model.len() > 1;
    for (name, v) in per_model {
        let input = jcount(v.get("inputTokens"));
        let read = jcount(v.get("cachedReadTokens")).min(input);
        let output = jcount(v.get("outputTokens"));
        let u = Usage {
            request_key: match (&name, many) {
                (Some(n), true) => format!("{prompt}#{n}"),
                _ => prompt.clone(),
            },
            model: name.clone(),
            timestamp: ts.clone(),
            input_tokens: input - read,
            output_tokens: output,
            cache_read_tokens: read,
            cache_creation_tokens: jcount(v.get("cacheCreationTokens")),
            reasoning_tokens: jcount(v.get("reasoningTokens")).min(output),
            cost_usd: v
                .get("costUsdTicks")
                .and_then(Value::as_f64)
                .map(|t| t / 1e10),
            tokens_known: crate::shared::blocks::any_count(&[input, output]),
            is_sidechain: session.meta.parent.is_some(),
            ..Usage::default()
        };
        if let Some(n) = &name {
            session.observe_model(n);
        }
        session.usage.push(u);
    }
}

/// `chat_history.jsonl` (no `updates.jsonl`): `{role, content}` rows, content text or parts.
fn read_history(path: &Path, text: &str, session: &mut Session, issues: &mut Vec<ParseIssue>) {
    let mut first_prompt = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                issues.push(ParseIssue {
                    path: path.display().to_string(),
                    line: Some(i as u64 + 1),
                    byte_offset: None,
                    excerpt: Some(truncate_chars(line, 200).to_string()),
                    reason: format!("invalid JSON: {e}"),
                });
                continue;
            }
        };
        let content = content_text(v.get("content"));
        let (role, kind) = match jstr(&v, "role").unwrap_or("") {
            "user" => (Role::User, MessageKind::Prompt),
            "assistant" => (Role::Assistant, MessageKind::Text),
            "tool" => (Role::Tool, MessageKind::ToolResult),
            _ => (Role::System, MessageKind::Meta),
        };
        if kind == MessageKind::Prompt && first_prompt.is_none() {
            first_prompt = Some(truncate_chars(content.trim(), TITLE_CHARS).to_string());
        }
        let mut m = Message::new(role, kind, "");
        if kind == MessageKind::ToolResult {
            m.tool_call_id = jstr(&v, "tool_call_id").map(str::to_string);
            m.tool_output = Some(content);
        } else {
            m.text = content;
        }
        push_message(session, m);
        for call in v
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let f = call.get("function").unwrap_or(call);
            let mut c = Message::new(Role::Assistant, MessageKind::ToolCall, "");
            c.tool_call_id = jstr(call, "id").map(str::to_string);
            c.tool_name = jstr(f, "name").map(str::to_string);
            c.tool_input = f.get("arguments").map(value_text);
            push_message(session, c);
        }
    }
    if session.meta.title.is_none() {
        session.meta.title = first_prompt.filter(|t| !t.is_empty());
    }
    finish_linear_session(session, Vec::new(), SHELL_TOOLS);
}
