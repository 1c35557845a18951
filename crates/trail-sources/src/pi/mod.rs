//! Pi (`pi-coding-agent`) and the agents built on it (Oh My Pi, Prime Agent, OpenClaw, QClaw):
//! `<agent dir>/sessions/[<--encoded-cwd-->/]<time>_<uuid>.jsonl`, one JSON entry per line.
//!
//! Line 1 is the header `{"type":"session","version":3,"id","timestamp","cwd"}` (with
//! `parentSession` or `branchedFrom`, the file a `/fork` started from: the parent link). Every
//! later entry has an `id` and a `parentId`: the entries form a tree, the last entry written is
//! the active leaf, and the path from it to the root is the conversation. Entries on other
//! branches (left by `/tree`) are kept off the main chain. Version 1 files have no ids: their
//! entries are chained in file order.
//!
//! Entry types: `message` (`message.role` `user`, `assistant` with `text`/`thinking`/`toolCall`
//! blocks, `toolResult`, `bashExecution`, `custom`, `branchSummary`, `compactionSummary`),
//! `model_change`, `thinking_level_change`, `compaction`, `branch_summary`, `session_info`
//! (the name the user gave: the title), `custom` and `custom_message` (extensions), `label`,
//! Prime Agent's `child_usage_attributed`; anything else is kept as an unknown message.
//!
//! # Usage rule
//! One row per assistant message with `usage`, keyed by its entry id: `input` (which excludes
//! cache reads), `output`, `cacheRead`, `cacheWrite`, and `cost.total` as the agent priced it.
//! Older files spell the counts `inputTokens`/`input_tokens`... or put them on the message
//! itself (flat); both are read. A `child_usage_attributed` entry replaces its target's row by
//! its `aggregateUsage` (what Pi shows on reload), so a child's usage is counted once.
//!
//! Files are append-only (Pi's `SessionManager` only appends entries; `/tree` and `/fork` move
//! the leaf by appending, a fork writes a new file): a grown file is read from where the last
//! parse stopped ([`crate::resumable`]), with the id -> parent tree, the active leaf, the usage
//! rows and the model saved between parses. A later entry that moves the leaf to another branch
//! relinks the earlier messages it takes off (or puts on) the conversation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use trail_model::{
    time, Checkpoint, Message, MessageKind, Origin, ParentLink, PromptSource, Role, Session,
    SourceKind, TitleRank, UpdateMode, Usage,
};

use crate::blocks::{content_text, count_of, title_from};
use crate::chat_tree::finish_tree_session;
use crate::json_fields::jstr;
use crate::linear::PendingFile;
use crate::resumable::{self, first_object, session_named_by, LineParser};
use crate::{discover, ids, FileParse, ParseRequest, Source, SourceError};

/// Pi session files.
pub struct Pi;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version. 2: files are resumed where the last parse stopped.
pub const PARSER_VERSION: u32 = 2;

const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["bash", "bashExecution"];

impl Source for Pi {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Pi
    }

    /// Roots are agent folders (`~/.pi/agent`, `~/.openclaw/agents`...): the `.jsonl` files in
    /// or below a `sessions` folder under them (or the root itself when it is one).
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            let root_is_sessions = root.file_name().is_some_and(|n| n == "sessions");
            out.extend(discover::walk_files(root, 5, |p| {
                discover::has_extension(p, "jsonl")
                    && (root_is_sessions || in_sessions_folder(root, p))
            }));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        discover::has_extension(path, "jsonl") && is_header(head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        resumable::parse(request, "a Pi entry", || Parser::new(request.path))
    }
}

impl LineParser for Parser {
    fn record(&mut self, line: u64, v: &Value) {
        self.entry(line, v);
    }

    fn sessions(&self, _path: &Path) -> Vec<Session> {
        if self.header_seen || !self.session.messages.is_empty() {
            vec![self.clone().finish()]
        } else {
            Vec::new()
        }
    }

    fn building_mut(&mut self) -> Vec<&mut Session> {
        vec![&mut self.session]
    }
}

/// Whether `path` lies in a `sessions` folder below `root`.
fn in_sessions_folder(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rel| {
        rel.parent()
            .is_some_and(|d| d.components().any(|c| c.as_os_str() == "sessions"))
    })
}

/// Whether the first line is a Pi session header.
pub(crate) fn is_header(head: &[u8]) -> bool {
    let Some(v) = first_object(head) else {
        return false;
    };
    jstr(&v, "type") == Some("session")
        && jstr(&v, "id").is_some()
        && (v.get("cwd").is_some() || v.get("version").is_some())
}

/// Which agent of the Pi family wrote a file, from the folder it lies in.
fn family_of(path: &Path) -> &'static str {
    let text = path.to_string_lossy().replace('\\', "/");
    for (marker, name) in [
        ("/.omp/", "oh-my-pi"),
        ("/.prime/", "prime-agent"),
        ("/.openclaw/", "openclaw"),
        ("/.kimi_openclaw/", "openclaw"),
        ("/.qclaw/", "qclaw"),
        ("/.clawdbot/", "clawdbot"),
    ] {
        if text.contains(marker) {
            return name;
        }
    }
    "pi"
}

/// The session id a `parentSession` path names: the uuid after the last `_` of its file name.
fn session_of_path(p: &str) -> Option<String> {
    let name = p.rsplit(['/', '\\']).next()?;
    let stem = name.strip_suffix(".jsonl").unwrap_or(name);
    let id = stem.rsplit('_').next().unwrap_or(stem);
    (!id.is_empty()).then(|| id.to_string())
}

#[derive(Clone, Serialize, Deserialize)]
struct Parser {
    session: Session,
    header_seen: bool,
    /// Version 1 files have no entry ids: entries are chained in file order.
    linear: bool,
    last_id: Option<String>,
    model: Option<String>,
    files: Vec<PendingFile>,
    /// Index into `session.usage` of each assistant entry's row.
    usage_of: HashMap<String, usize>,
    user_title: Option<String>,
}

impl Parser {
    fn new(path: &Path) -> Self {
        let mut session = session_named_by(SourceKind::Pi, path, "");
        let meta = &mut session.meta;
        if let Some(native) = session_of_path(&meta.native_id) {
            meta.id = ids::session_id(SourceKind::Pi, &native);
            meta.native_id = native;
        }
        meta.metadata = Some(serde_json::json!({ "agent": family_of(path) }));
        Parser {
            session,
            header_seen: false,
            linear: false,
            last_id: None,
            model: None,
            files: Vec::new(),
            usage_of: HashMap::new(),
            user_title: None,
        }
    }

    fn entry(&mut self, line: u64, v: &Value) {
        let kind = jstr(v, "type").unwrap_or_default();
        if kind == "session" && !self.header_seen {
            self.header(v);
            return;
        }
        let ts = v.get("timestamp").and_then(time::from_json);
        let (id, parent) = self.node_of(line, v);
        let base = Origin {
            native_id: id.clone(),
            parent_native_id: parent,
            timestamp: ts.clone(),
            ..Origin::default()
        };
        match kind {
            "message" => self.message(base, v.get("message").unwrap_or(&Value::Null)),
            "model_change" => {
                let model = jstr(v, "modelId").unwrap_or_default().to_string();
                let provider = jstr(v, "provider").unwrap_or_default();
                self.session.observe_model(&model);
                self.model = Some(model.clone()).filter(|m| !m.is_empty());
                self.push(meta(base, format!("model: {provider}/{model}")));
            }
            "thinking_level_change" => {
                let level = jstr(v, "thinkingLevel").unwrap_or_default();
                self.push(meta(base, format!("thinking level: {level}")));
            }
            "service_tier_change" => {
                let tier = jstr(v, "serviceTier").unwrap_or_default();
                self.push(meta(base, format!("service tier: {tier}")));
            }
            "compaction" => self.compaction(base, v),
            "branch_summary" => {
                let text = jstr(v, "summary").unwrap_or_default().to_string();
                self.push(base.message(Role::System, MessageKind::Summary, text));
            }
            "session_info" => {
                if let Some(name) = jstr(v, "name").filter(|n| !n.trim().is_empty()) {
                    self.user_title = Some(name.trim().to_string());
                }
                let name = jstr(v, "name").unwrap_or_default();
                self.push(meta(base, format!("session name: {name}")));
            }
            "label" => {
                let label = jstr(v, "label").unwrap_or_default();
                let target = jstr(v, "targetId").unwrap_or_default();
                self.push(meta(base, format!("label {target}: {label}")));
            }
            "custom_message" => {
                let text = content_text(v.get("content"));
                self.push(meta(base, text));
            }
            "child_usage_attributed" => {
                self.child_usage(v, ts.as_deref());
                let target = jstr(v, "targetId").unwrap_or_default();
                self.push(meta(base, format!("child usage attributed to {target}")));
            }
            _ => {
                let mut m = base.message(Role::System, MessageKind::Unknown, String::new());
                if kind == "custom" {
                    m.kind = Some(MessageKind::Meta);
                    m.text = jstr(v, "customType").unwrap_or_default().to_string();
                }
                m.extra = Some(v.to_string());
                self.push(m);
            }
        }
    }

    fn header(&mut self, v: &Value) {
        self.header_seen = true;
        let meta = &mut self.session.meta;
        if let Some(id) = jstr(v, "id").filter(|s| !s.is_empty()) {
            meta.native_id = id.to_string();
            meta.id = ids::session_id(SourceKind::Pi, id);
        }
        meta.cwd = jstr(v, "cwd").map(str::to_string);
        if let Some(ts) = v.get("timestamp").and_then(time::from_json) {
            meta.observe_timestamp(&ts);
        }
        self.linear = v.get("version").and_then(Value::as_u64).unwrap_or(1) < 2;
        let parent = jstr(v, "parentSession").or_else(|| jstr(v, "branchedFrom"));
        if let Some(parent) = parent.and_then(session_of_path) {
            meta.parent = Some(ParentLink {
                session_id: ids::session_id(SourceKind::Pi, &parent),
                tool_call_id: None,
                agent_ref: None,
            });
        }
        if let Some(model) = jstr(v, "modelId") {
            self.session.observe_model(model);
            self.model = Some(model.to_string());
        }
    }

    /// The entry's tree node: its own id and parent, or (version 1, no ids) one chained after
    /// the previous entry. Entries without an id in a tree file are bookkeeping: no node.
    fn node_of(&mut self, line: u64, v: &Value) -> (Option<String>, Option<String>) {
        if let Some(id) = jstr(v, "id").filter(|s| !s.is_empty()) {
            let parent = jstr(v, "parentId").map(str::to_string);
            self.last_id = Some(id.to_string());
            return (Some(id.to_string()), parent);
        }
        if !self.linear {
            return (None, None);
        }
        let id = format!("line:{line}");
        let parent = self.last_id.replace(id.clone());
        (Some(id), parent)
    }

    fn push(&mut self, m: Message) -> u32 {
        resumable::push(&mut self.session, m)
    }

    fn message(&mut self, mut base: Origin, msg: &Value) {
        if base.timestamp.is_none() {
            base.timestamp = msg.get("timestamp").and_then(time::from_json);
        }
        let role = jstr(msg, "role").unwrap_or_default();
        match role {
            "user" => {
                let mut m = base.message(
                    Role::User,
                    MessageKind::Prompt,
                    content_text(msg.get("content")),
                );
                m.prompt_source = Some(PromptSource::Typed);
                self.push(m);
            }
            "assistant" => self.assistant(base, msg),
            "toolResult" => {
                let mut m = base.message(Role::Tool, MessageKind::ToolResult, String::new());
                m.tool_call_id = jstr(msg, "toolCallId").map(str::to_string);
                m.tool_name = jstr(msg, "toolName").map(str::to_string);
                m.tool_output = Some(content_text(msg.get("content")));
                m.is_error = msg.get("isError").and_then(Value::as_bool).unwrap_or(false);
                self.push(m);
            }
            "bashExecution" => self.bash_execution(base, msg),
            "branchSummary" | "compactionSummary" => {
                let text = jstr(msg, "summary").unwrap_or_default().to_string();
                self.push(base.message(Role::System, MessageKind::Summary, text));
            }
            "custom" | "hookMessage" => {
                let text = content_text(msg.get("content"));
                self.push(meta(base, text));
            }
            _ => {
                let mut m = base.message(Role::System, MessageKind::Unknown, String::new());
                m.extra = Some(msg.to_string());
                self.push(m);
            }
        }
    }

    fn assistant(&mut self, base: Origin, msg: &Value) {
        let model = jstr(msg, "model")
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .or_else(|| self.model.clone());
        if let Some(m) = &model {
            self.session.observe_model(m);
        }
        let base = Origin {
            model: model.clone(),
            ..base
        };
        let mut first_seq = None;
        let blocks = msg
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for b in &blocks {
            let seq = match jstr(b, "type").unwrap_or_default() {
                "text" => {
                    let text = jstr(b, "text").unwrap_or_default();
                    (!text.is_empty())
                        .then(|| self.push(base.message(Role::Assistant, MessageKind::Text, text)))
                }
                "thinking" => {
                    let text = jstr(b, "thinking").unwrap_or_default();
                    (!text.is_empty()).then(|| {
                        let m = base.message(Role::Assistant, MessageKind::Thinking, text);
                        self.push(m)
                    })
                }
                "toolCall" => Some(self.tool_call(base.clone(), b)),
                _ => None,
            };
            first_seq = first_seq.or(seq);
        }
        if let Some(err) = jstr(msg, "errorMessage").filter(|e| !e.is_empty()) {
            let seq = self.push(base.message(Role::Assistant, MessageKind::Error, err));
            first_seq = first_seq.or(Some(seq));
        }
        let usage = msg.get("usage").filter(|u| u.is_object()).unwrap_or(msg);
        let key = base
            .native_id
            .clone()
            .unwrap_or_else(|| format!("seq:{}", self.session.messages.len()));
        let mut row = usage_row(usage, &key);
        row.message_seq = first_seq;
        row.model = model;
        row.timestamp = base.timestamp.clone();
        if row.tokens_known || row.cost_usd.is_some() {
            self.usage_of.insert(key, self.session.usage.len());
            self.session.usage.push(row);
        }
    }

    fn tool_call(&mut self, base: Origin, b: &Value) -> u32 {
        let args = b.get("arguments").cloned().unwrap_or(Value::Null);
        let name = jstr(b, "name").unwrap_or("unknown").to_string();
        let mut m = base.message(Role::Assistant, MessageKind::ToolCall, String::new());
        m.tool_name = Some(name.clone());
        m.tool_call_id = jstr(b, "id").map(str::to_string);
        m.tool_input = Some(args.to_string());
        let ts = m.timestamp.clone();
        let seq = self.push(m);
        self.files
            .extend(PendingFile::named_by(seq, &args, &name, ts.as_deref()));
        seq
    }

    /// A command the user ran with `!`: a call and its result.
    fn bash_execution(&mut self, base: Origin, msg: &Value) {
        let command = jstr(msg, "command").unwrap_or_default();
        let call_id = base.native_id.clone();
        let mut call = base.message(Role::User, MessageKind::ToolCall, String::new());
        call.tool_name = Some("bashExecution".into());
        call.tool_call_id = call_id.clone();
        call.tool_input = Some(serde_json::json!({ "command": command }).to_string());
        self.push(call);
        let mut result = base.message(Role::Tool, MessageKind::ToolResult, String::new());
        result.tool_name = Some("bashExecution".into());
        result.tool_call_id = call_id;
        result.tool_output = Some(jstr(msg, "output").unwrap_or_default().to_string());
        let exit = msg.get("exitCode").and_then(Value::as_i64);
        result.is_error = exit.is_some_and(|c| c != 0)
            || msg.get("cancelled").and_then(Value::as_bool) == Some(true);
        self.push(result);
    }

    fn compaction(&mut self, base: Origin, v: &Value) {
        let text = jstr(v, "summary").unwrap_or_default().to_string();
        let number = u32::try_from(self.session.checkpoints.len() + 1).unwrap_or(u32::MAX);
        self.session.checkpoints.push(Checkpoint {
            number,
            title: Some("Compaction".into()),
            overview: (!text.is_empty()).then(|| text.clone()),
            created_at: base.timestamp.clone(),
            ..Checkpoint::default()
        });
        self.push(base.message(Role::System, MessageKind::Compaction, text));
    }

    /// Prime Agent: a child's usage folded into an assistant message; the aggregate replaces
    /// the message's own row (Pi applies it the same way on reload).
    fn child_usage(&mut self, v: &Value, ts: Option<&str>) {
        let (Some(target), Some(agg)) = (jstr(v, "targetId"), v.get("aggregateUsage")) else {
            return;
        };
        let mut row = usage_row(agg, target);
        match self.usage_of.get(target).copied() {
            Some(i) => {
                let old = &self.session.usage[i];
                row.message_seq = old.message_seq;
                row.model = old.model.clone();
                row.timestamp = old.timestamp.clone();
                self.session.usage[i] = row;
            }
            None => {
                row.timestamp = ts.map(str::to_string);
                self.usage_of
                    .insert(target.to_string(), self.session.usage.len());
                self.session.usage.push(row);
            }
        }
    }

    fn finish(mut self) -> Session {
        let leaf = self.last_id.clone();
        let files = std::mem::take(&mut self.files);
        finish_tree_session(&mut self.session, leaf.as_deref(), files, SHELL_TOOLS);
        let first_prompt = self
            .session
            .messages
            .iter()
            .find(|m| m.on_main_chain && m.kind == Some(MessageKind::Prompt))
            .and_then(|m| title_from(&m.text, TITLE_CHARS));
        let meta = &mut self.session.meta;
        if let Some(t) = self.user_title {
            meta.title = Some(t);
            meta.title_rank = TitleRank::USER;
        } else if let Some(t) = first_prompt {
            meta.title = Some(t);
            meta.title_rank = TitleRank::FIRST_PROMPT;
        }
        self.session.mode = UpdateMode::Replace;
        self.session
    }
}

/// A usage row from Pi's `Usage` (or its older flat spellings).
fn usage_row(u: &Value, key: &str) -> Usage {
    let input = count_of(u, &["input", "inputTokens", "input_tokens", "promptTokens"]);
    let output = count_of(
        u,
        &[
            "output",
            "outputTokens",
            "output_tokens",
            "completionTokens",
        ],
    );
    let cache_read = count_of(
        u,
        &[
            "cacheRead",
            "cacheReadTokens",
            "cache_read",
            "cache_read_input_tokens",
        ],
    );
    let cache_write = count_of(
        u,
        &[
            "cacheWrite",
            "cacheWriteTokens",
            "cache_write",
            "cache_creation_input_tokens",
        ],
    );
    let cost = match u.get("cost") {
        Some(Value::Number(n)) => n.as_f64(),
        Some(c @ Value::Object(_)) => c.get("total").and_then(Value::as_f64),
        _ => None,
    };
    Usage {
        request_key: key.to_string(),
        message_id: Some(key.to_string()),
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: cache_read,
        cache_creation_tokens: cache_write,
        cost_usd: cost.filter(|c| *c > 0.0),
        tokens_known: crate::shared::blocks::any_count(&[input, output, cache_read, cache_write]),
        ..Usage::default()
    }
}

fn meta(base: Origin, text: String) -> Message {
    base.message(Role::System, MessageKind::Meta, text)
}
