//! Qwen Code (and Qoder, which writes the same records): ChatRecord JSONL at
//! `~/.qwen/projects/<encoded project>/chats/<sessionId>.jsonl`.
//!
//! Each line is a record `{uuid, parentUuid, sessionId, timestamp, type, subtype, cwd, version,
//! gitBranch, model, message: {role, parts}, usageMetadata, toolCallResult, systemPayload}`:
//! Gemini API `parts` (`text`, `thought`, `functionCall`, `functionResponse`) in a Claude-like
//! envelope. Records form a tree through `uuid`/`parentUuid`; a streamed response writes
//! several records with the same `uuid` (its parts in order), which are one node. The
//! conversation is the path from the last conversation record (a user, assistant or tool
//! record, or a rewind, compression or command) to the root: metadata records re-appended at
//! the end of the file (titles, artifact snapshots) never become the leaf. Records of other
//! branches are kept off the main chain.
//!
//! Prompts: `type: user` records; the text is `systemPayload.displayText` where present (the
//! parts may carry hook context), else the text parts. `mid_turn_user_message` prompts were
//! typed while the agent worked (queued); `notification`, `cron` and
//! `background_task_completed` ones were sent by the agent itself.
//!
//! Subagents: records with `isSidechain` and an `agentId` are a subagent's, kept as the session
//! `<sessionId>:<agentId>` linked to this one. A `parent_session` record (a sub-session) and
//! `forkedFrom` (a `/branch` copy) link the session to the one it came from.
//!
//! # Usage rule
//! Streamed records repeat the response's cumulative `usageMetadata`: one row per `uuid`, the
//! last values seen. As for Gemini, `promptTokenCount` includes `cachedContentTokenCount`:
//! `input = prompt - cached + toolUsePrompt`, `cache_read = cached`,
//! `output = candidates + thoughts`, `reasoning = thoughts`.
//!
//! Files only grow (Qwen Code's `ChatRecordingService` appends each record; a rewind or a
//! re-appended title is a new record): a grown file is read from where the last parse stopped
//! ([`crate::resumable`]), with the tree, the leaf, the titles and the rows per `uuid` saved
//! between parses, so a streamed record after the cut still replaces its response's row. A
//! later record that moves the leaf relinks the earlier messages it moves on or off the
//! conversation.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use trail_model::{
    time, Checkpoint, Message, MessageKind, Origin, ParentLink, PromptSource, Role, Session,
    SessionMeta, SourceKind, TitleRank, UpdateMode, Usage,
};

use crate::blocks::{count_of, title_from};
use crate::chat_tree::finish_tree_session;
use crate::json_fields::{jstr, value_text};
use crate::linear::PendingFile;
use crate::resumable::{self, first_object, LineParser};
use crate::{discover, ids, FileParse, ParseRequest, Source, SourceError};

/// Qwen Code chat record files.
pub struct QwenCode;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version. 2: files are resumed where the last parse stopped.
pub const PARSER_VERSION: u32 = 2;

const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["run_shell_command", "shell", "bash"];
/// System subtypes that are part of the conversation (may be its leaf).
const CONVERSATION_SUBTYPES: &[&str] =
    &["rewind", "chat_compression", "slash_command", "at_command"];

impl Source for QwenCode {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::QwenCode
    }

    /// Roots are agent homes (`~/.qwen`, `~/.qoder`...): the `.jsonl` files under `projects`.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            let projects = if root.file_name().is_some_and(|n| n == "projects") {
                root.clone()
            } else {
                root.join("projects")
            };
            out.extend(discover::walk_files(&projects, 4, |p| {
                discover::has_extension(p, "jsonl")
            }));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        discover::has_extension(path, "jsonl") && is_chat_record(head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        resumable::parse(request, "a chat record", Parser::default)
    }
}

impl LineParser for Parser {
    fn record(&mut self, _line: u64, v: &Value) {
        self.read_record(v);
    }

    fn sessions(&self, path: &Path) -> Vec<Session> {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("unknown");
        self.clone().finish(stem)
    }

    fn building_mut(&mut self) -> Vec<&mut Session> {
        let agents = self.agents.values_mut().map(|b| &mut b.session);
        self.main
            .iter_mut()
            .map(|b| &mut b.session)
            .chain(agents)
            .collect()
    }
}

/// Whether the first line is a chat record: `uuid`, `sessionId` and `type`, with Gemini
/// `parts`, a `systemPayload` or `usageMetadata` (Claude Code and iFlow records have
/// `content`, not `parts`).
pub(crate) fn is_chat_record(head: &[u8]) -> bool {
    let Some(v) = first_object(head) else {
        return false;
    };
    v.get("uuid").is_some()
        && v.get("sessionId").is_some()
        && v.get("type").is_some()
        && (v.pointer("/message/parts").is_some()
            || v.get("systemPayload").is_some()
            || v.get("usageMetadata").is_some())
}

/// One session being built (the main one, or a subagent's).
#[derive(Clone, Serialize, Deserialize)]
struct Building {
    session: Session,
    files: Vec<PendingFile>,
    leaf: Option<String>,
    usage_of: HashMap<String, usize>,
    /// `custom_title` records: (record id, title, rank), in file order.
    titles: Vec<(Option<String>, String, u8)>,
}

impl Building {
    fn new(native: &str) -> Self {
        let id = ids::session_id(SourceKind::QwenCode, native);
        Building {
            session: Session::new(SessionMeta::new(id, SourceKind::QwenCode, native)),
            files: Vec::new(),
            leaf: None,
            usage_of: HashMap::new(),
            titles: Vec::new(),
        }
    }

    fn push(&mut self, m: Message) -> u32 {
        resumable::push(&mut self.session, m)
    }
}

#[derive(Default, Clone, Serialize, Deserialize)]
struct Parser {
    main: Option<Building>,
    /// Subagent sessions by agent id.
    agents: BTreeMap<String, Building>,
    session_id: Option<String>,
    parent: Option<ParentLink>,
}

impl Parser {
    fn read_record(&mut self, v: &Value) {
        let session_id = jstr(v, "sessionId").unwrap_or_default().to_string();
        if self.session_id.is_none() && !session_id.is_empty() {
            self.session_id = Some(session_id.clone());
        }
        let main_native = self.session_id.clone().unwrap_or_default();
        self.note_parent(v);
        let agent = jstr(v, "agentId")
            .filter(|_| v.get("isSidechain").and_then(Value::as_bool) == Some(true))
            .map(str::to_string);
        let b = match &agent {
            Some(a) => self.agents.entry(a.clone()).or_insert_with(|| {
                let mut b = Building::new(&format!("{main_native}:{a}"));
                b.session.meta.parent = Some(ParentLink {
                    session_id: ids::session_id(SourceKind::QwenCode, &main_native),
                    tool_call_id: None,
                    agent_ref: Some(a.clone()),
                });
                b
            }),
            None => self.main.get_or_insert_with(|| Building::new(&main_native)),
        };
        record_into(b, v);
    }

    /// `parent_session` records and `forkedFrom` name the session this one came from.
    fn note_parent(&mut self, v: &Value) {
        if self.parent.is_some() {
            return;
        }
        let parent = if jstr(v, "subtype") == Some("parent_session") {
            v.pointer("/systemPayload/parentSessionId")
                .and_then(Value::as_str)
        } else {
            v.pointer("/forkedFrom/sessionId").and_then(Value::as_str)
        };
        if let Some(p) = parent.filter(|p| !p.is_empty()) {
            self.parent = Some(ParentLink {
                session_id: ids::session_id(SourceKind::QwenCode, p),
                tool_call_id: None,
                agent_ref: None,
            });
        }
    }

    fn finish(self, stem: &str) -> Vec<Session> {
        let mut out = Vec::new();
        if let Some(mut main) = self.main {
            if main.session.meta.native_id.is_empty() {
                main.session.meta.native_id = stem.to_string();
                main.session.meta.id = ids::session_id(SourceKind::QwenCode, stem);
            }
            main.session.meta.parent = self.parent;
            out.push(finish_building(main));
        }
        out.extend(self.agents.into_values().map(finish_building));
        out
    }
}

fn finish_building(mut b: Building) -> Session {
    finish_tree_session(&mut b.session, b.leaf.as_deref(), b.files, SHELL_TOOLS);
    let first_prompt = b
        .session
        .messages
        .iter()
        .find(|m| m.on_main_chain && m.kind == Some(MessageKind::Prompt))
        .and_then(|m| title_from(&m.text, TITLE_CHARS));
    // The last title written on the conversation (on it, or hanging off it); a title left on
    // an abandoned branch only when there is no other.
    let on_chain = |id: &Option<String>| {
        let title = b.session.messages.iter().find(|m| m.native_id == *id);
        title.is_some_and(|t| {
            t.on_main_chain
                || b.session.messages.iter().any(|m| {
                    m.on_main_chain && m.native_id.is_some() && m.native_id == t.parent_native_id
                })
        })
    };
    let title = b
        .titles
        .iter()
        .rev()
        .find(|(id, _, _)| on_chain(id))
        .or(b.titles.last())
        .map(|(_, t, r)| (t.clone(), *r));
    let meta = &mut b.session.meta;
    if let Some((t, rank)) = title {
        meta.title = Some(t);
        meta.title_rank = rank;
    } else if let Some(t) = first_prompt {
        meta.title = Some(t);
        meta.title_rank = TitleRank::FIRST_PROMPT;
    }
    b.session.mode = UpdateMode::Replace;
    b.session
}

/// Adds one record's messages, usage and metadata to `b`.
fn record_into(b: &mut Building, v: &Value) {
    let ty = jstr(v, "type").unwrap_or_default();
    let subtype = jstr(v, "subtype");
    let uuid = jstr(v, "uuid").map(str::to_string);
    note_meta(b, v);
    let conversation = matches!(ty, "user" | "assistant" | "tool_result")
        || subtype.is_some_and(|s| CONVERSATION_SUBTYPES.contains(&s));
    if conversation && uuid.is_some() {
        b.leaf = uuid.clone();
    }
    let base = Origin {
        native_id: uuid,
        parent_native_id: jstr(v, "parentUuid").map(str::to_string),
        timestamp: v.get("timestamp").and_then(time::from_json),
        is_sidechain: v.get("isSidechain").and_then(Value::as_bool) == Some(true),
        ..Origin::default()
    };
    match ty {
        "user" => user(b, base, v, subtype),
        "assistant" => assistant(b, base, v),
        "tool_result" => tool_result(b, base, v),
        "system" => system(b, base, v, subtype.unwrap_or_default()),
        _ => {
            let mut m = base.message(Role::System, MessageKind::Unknown, String::new());
            m.extra = Some(v.to_string());
            b.push(m);
        }
    }
}

/// Session facts every record repeats: cwd, branch, version.
fn note_meta(b: &mut Building, v: &Value) {
    let meta = &mut b.session.meta;
    if meta.cwd.is_none() {
        meta.cwd = jstr(v, "cwd").filter(|c| !c.is_empty()).map(str::to_string);
    }
    if meta.branch.is_none() {
        meta.branch = jstr(v, "gitBranch")
            .filter(|c| !c.is_empty())
            .map(str::to_string);
    }
    if let Some(ver) = jstr(v, "version") {
        meta.agent_version = Some(ver.to_string());
    }
}

fn user(b: &mut Building, base: Origin, v: &Value, subtype: Option<&str>) {
    let text = match v
        .pointer("/systemPayload/displayText")
        .and_then(Value::as_str)
    {
        Some(t) => t.to_string(),
        None => prompt_parts_text(v.pointer("/message/parts")),
    };
    let source = match subtype {
        None => Some(PromptSource::Typed),
        Some("mid_turn_user_message") => Some(PromptSource::Queued),
        Some("notification" | "cron" | "background_task_completed") => Some(PromptSource::System),
        Some(_) => None,
    };
    let mut m = match source {
        Some(_) => base.message(Role::User, MessageKind::Prompt, text),
        None => base.message(Role::User, MessageKind::Meta, text),
    };
    m.prompt_source = source;
    b.push(m);
}

/// The user's text parts, without the hook context Qwen adds as tagged parts.
fn prompt_parts_text(parts: Option<&Value>) -> String {
    let Some(parts) = parts.and_then(Value::as_array) else {
        return String::new();
    };
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| jstr(p, "text"))
        .filter(|t| !t.trim_start().starts_with("<qwen:"))
        .collect();
    texts.join("\n\n")
}

fn assistant(b: &mut Building, base: Origin, v: &Value) {
    let model = jstr(v, "model")
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    if let Some(m) = &model {
        b.session.observe_model(m);
    }
    let base = Origin {
        model: model.clone(),
        ..base
    };
    let mut first_seq = None;
    let parts = v.pointer("/message/parts").and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        let seq = if let Some(call) = part.get("functionCall") {
            Some(tool_call(b, base.clone(), call))
        } else if let Some(text) = jstr(part, "text").filter(|t| !t.is_empty()) {
            let kind = if part.get("thought").and_then(Value::as_bool) == Some(true) {
                MessageKind::Thinking
            } else {
                MessageKind::Text
            };
            Some(b.push(base.message(Role::Assistant, kind, text.to_string())))
        } else {
            None
        };
        first_seq = first_seq.or(seq);
    }
    if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
        let key = base
            .native_id
            .clone()
            .unwrap_or_else(|| format!("seq:{}", b.session.messages.len()));
        let mut row = usage_row(u, &key);
        row.model = model;
        row.timestamp = base.timestamp.clone();
        row.message_seq = first_seq;
        match b.usage_of.get(&key).copied() {
            // A streamed record repeats the cumulative counts: the last one stands.
            Some(i) => {
                row.message_seq = b.session.usage[i].message_seq.or(first_seq);
                b.session.usage[i] = row;
            }
            None => {
                b.usage_of.insert(key, b.session.usage.len());
                b.session.usage.push(row);
            }
        }
    }
}

fn tool_call(b: &mut Building, base: Origin, call: &Value) -> u32 {
    let name = jstr(call, "name").unwrap_or("unknown").to_string();
    let args = call.get("args").cloned().unwrap_or(Value::Null);
    let mut m = base.message(Role::Assistant, MessageKind::ToolCall, String::new());
    m.tool_name = Some(name.clone());
    m.tool_call_id = jstr(call, "id").map(str::to_string);
    m.tool_input = Some(args.to_string());
    let ts = m.timestamp.clone();
    let seq = b.push(m);
    b.files
        .extend(PendingFile::named_by(seq, &args, &name, ts.as_deref()));
    seq
}

fn tool_result(b: &mut Building, base: Origin, v: &Value) {
    let status = v.pointer("/toolCallResult/status").and_then(Value::as_str);
    let call_error = v
        .pointer("/toolCallResult/error")
        .is_some_and(|e| !e.is_null());
    let parts = v.pointer("/message/parts").and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        let Some(resp) = part.get("functionResponse") else {
            continue;
        };
        let response = resp.get("response").unwrap_or(&Value::Null);
        let (output, error) = match (response.get("output"), response.get("error")) {
            (_, Some(e)) if !e.is_null() => (value_text(e), true),
            (Some(o), _) => (value_text(o), false),
            _ => (value_text(response), false),
        };
        let mut m = base.message(Role::Tool, MessageKind::ToolResult, String::new());
        m.tool_name = jstr(resp, "name").map(str::to_string);
        m.tool_call_id = jstr(resp, "id")
            .or_else(|| v.pointer("/toolCallResult/callId").and_then(Value::as_str))
            .map(str::to_string);
        m.tool_output = Some(output);
        m.is_error = error || call_error || matches!(status, Some("error" | "cancelled"));
        b.push(m);
    }
}

fn system(b: &mut Building, base: Origin, v: &Value, subtype: &str) {
    let payload = v.get("systemPayload").unwrap_or(&Value::Null);
    match subtype {
        "custom_title" => {
            if let Some(t) = jstr(payload, "customTitle").filter(|t| !t.trim().is_empty()) {
                let rank = match jstr(payload, "titleSource") {
                    Some("auto") => TitleRank::SUMMARY,
                    _ => TitleRank::USER,
                };
                b.titles
                    .push((base.native_id.clone(), t.trim().to_string(), rank));
            }
            let text = jstr(payload, "customTitle").unwrap_or_default().to_string();
            b.push(base.message(Role::System, MessageKind::Meta, text));
        }
        "chat_compression" => {
            let text = compression_text(payload);
            let number = u32::try_from(b.session.checkpoints.len() + 1).unwrap_or(u32::MAX);
            b.session.checkpoints.push(Checkpoint {
                number,
                title: Some("Compression".into()),
                overview: (!text.is_empty()).then(|| text.clone()),
                created_at: base.timestamp.clone(),
                ..Checkpoint::default()
            });
            b.push(base.message(Role::System, MessageKind::Compaction, text));
        }
        "slash_command" | "at_command" => {
            let text = jstr(payload, "rawCommand")
                .or_else(|| jstr(payload, "userText"))
                .unwrap_or_default()
                .to_string();
            let mut m = base.message(Role::System, MessageKind::Meta, text);
            m.extra = Some(payload.to_string());
            b.push(m);
        }
        _ => {
            let mut m = base.message(Role::System, MessageKind::Meta, subtype.to_string());
            if !payload.is_null() {
                m.extra = Some(payload.to_string());
            }
            b.push(m);
        }
    }
}

/// The summary a compression kept: the text of its compressed history's first turn.
fn compression_text(payload: &Value) -> String {
    payload
        .get("compressedHistory")
        .and_then(Value::as_array)
        .and_then(|h| h.first())
        .and_then(|c| c.get("parts"))
        .map(|p| prompt_parts_text(Some(p)))
        .unwrap_or_default()
}

/// A usage row from Gemini's `usageMetadata` (see the module's usage rule).
fn usage_row(u: &Value, key: &str) -> Usage {
    let counts = crate::shared::blocks::GeminiCounts {
        prompt: count_of(u, &["promptTokenCount"]),
        cached: count_of(u, &["cachedContentTokenCount"]),
        candidates: count_of(u, &["candidatesTokenCount"]),
        thoughts: count_of(u, &["thoughtsTokenCount"]),
        tool: count_of(u, &["toolUsePromptTokenCount"]),
        total: count_of(u, &["totalTokenCount"]),
    };
    counts.apply(Usage {
        request_key: key.to_string(),
        message_id: Some(key.to_string()),
        ..Usage::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts near `u64::MAX` (a corrupt file; the fuzz harness found one) saturate instead of
    /// overflowing.
    #[test]
    fn huge_usage_counts_saturate() {
        let u = serde_json::json!({
            "promptTokenCount": u64::MAX,
            "cachedContentTokenCount": 1,
            "toolUsePromptTokenCount": 5,
            "candidatesTokenCount": u64::MAX,
            "thoughtsTokenCount": 7,
            "totalTokenCount": u64::MAX,
        });
        let row = usage_row(&u, "k");
        assert_eq!(row.input_tokens, u64::MAX);
        assert_eq!(row.output_tokens, u64::MAX);
        assert_eq!(row.cache_read_tokens, 1);
        assert!(row.tokens_known);
    }
}
