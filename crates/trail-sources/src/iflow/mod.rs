//! iFlow CLI: `~/.iflow/projects/<project>/session-<uuid>.jsonl`, Claude-Code-like records
//! `{uuid, parentUuid, sessionId: "session-<uuid>", timestamp, type, isSidechain, message:
//! {role, content, model, usage}, cwd, gitBranch, version}`.
//!
//! iFlow writes a streamed response as several assistant records whose `parentUuid` all point
//! at the prompt, each repeating the previous record's last `tool_use`: the tree is not the
//! conversation, so records are read in file order and a `tool_use` whose id was already seen
//! is dropped. Tool results are `tool_result` blocks whose `content` is a string or an object
//! (`responseParts.functionResponse.response.output`, `resultDisplay`).
//!
//! # Usage rule
//! One row per assistant record whose `message.usage` counts anything (`input_tokens`,
//! `output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`); iFlow writes
//! zeros where it measured nothing, and those make no row.
//!
//! Files only grow as far as their shape shows (iFlow is closed source; like the Gemini CLI it
//! forks, it appends one record per line; a rewrite changes the indexed prefix, and the ingest
//! then reads the file whole): a grown file is read from where the last parse stopped ([`crate::resumable`]), with the tool ids seen so far saved between parses, so a
//! streamed record after the cut still drops the `tool_use` it repeats.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use trail_model::{
    time, Message, MessageKind, PromptSource, Role, Session, SourceKind, TitleRank, UpdateMode,
    Usage,
};

use crate::blocks::{arg_paths, claude_blocks, count_of, fill_tool_names, title_from};
use crate::json_fields::jstr;
use crate::linear::{finish_linear_session, push_message, PendingFile};
use crate::resumable::{self, first_object, session_named_by, LineParser};
use crate::{discover, ids, FileParse, ParseRequest, Source, SourceError};

/// iFlow CLI session files.
pub struct Iflow;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version. 2: files are resumed where the last parse stopped.
pub const PARSER_VERSION: u32 = 2;

const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["run_shell_command", "shell", "Bash"];

impl Source for Iflow {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Iflow
    }

    /// Roots are homes (`~/.iflow`) or their `projects` folder: `session-*.jsonl` files.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            let projects = if root.file_name().is_some_and(|n| n == "projects") {
                root.clone()
            } else {
                root.join("projects")
            };
            out.extend(discover::walk_files(&projects, 3, is_session_name));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        discover::has_extension(path, "jsonl") && is_iflow_record(head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        resumable::parse(request, "an iFlow record", || Parser::new(request.path))
    }
}

impl LineParser for Parser {
    fn record(&mut self, _line: u64, v: &Value) {
        self.read_record(v);
    }

    fn sessions(&self, _path: &Path) -> Vec<Session> {
        if self.session.messages.is_empty() {
            Vec::new()
        } else {
            vec![self.clone().finish()]
        }
    }

    fn building_mut(&mut self) -> Vec<&mut Session> {
        vec![&mut self.session]
    }
}

fn is_session_name(path: &Path) -> bool {
    discover::has_extension(path, "jsonl")
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("session-"))
}

/// Whether the first line is an iFlow record: a `uuid` and a `sessionId` of the form
/// `session-<id>` (Claude Code's session ids are bare UUIDs).
pub(crate) fn is_iflow_record(head: &[u8]) -> bool {
    let Some(v) = first_object(head) else {
        return false;
    };
    v.get("uuid").is_some()
        && jstr(&v, "sessionId").is_some_and(|s| s.starts_with("session-"))
        && v.get("message").is_some()
}

#[derive(Clone, Serialize, Deserialize)]
struct Parser {
    session: Session,
    named: bool,
    files: Vec<PendingFile>,
    calls_seen: HashSet<String>,
}

impl Parser {
    fn new(path: &Path) -> Self {
        Parser {
            session: session_named_by(SourceKind::Iflow, path, "session-"),
            named: false,
            files: Vec::new(),
            calls_seen: HashSet::new(),
        }
    }

    fn read_record(&mut self, v: &Value) {
        self.note_meta(v);
        let ts = v.get("timestamp").and_then(time::from_json);
        let msg = v.get("message").unwrap_or(&Value::Null);
        let user = jstr(v, "type") == Some("user") || jstr(msg, "role") == Some("user");
        let model = jstr(msg, "model")
            .filter(|m| !m.is_empty())
            .map(str::to_string);
        if let Some(m) = &model {
            self.session.observe_model(m);
        }
        let text_kind = if user {
            MessageKind::Prompt
        } else {
            MessageKind::Text
        };
        let native = jstr(v, "uuid").map(str::to_string);
        let sidechain = v.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let mut first_seq = None;
        for b in claude_blocks(msg.get("content"), text_kind) {
            if b.kind == MessageKind::ToolCall {
                let id = b.tool_call_id.clone().unwrap_or_default();
                if !id.is_empty() && !self.calls_seen.insert(id) {
                    continue; // repeated by the next streamed record
                }
            }
            let role = match b.kind {
                MessageKind::Prompt => Role::User,
                MessageKind::ToolResult => Role::Tool,
                _ => Role::Assistant,
            };
            let m = Message::new(role, b.kind, b.text)
                .with_native_id(native.clone())
                .with_tool_name(b.tool_name.clone())
                .with_call_id(b.tool_call_id)
                .with_input(b.tool_input.as_ref().map(Value::to_string))
                .with_output(b.tool_output)
                .with_error(b.is_error)
                .with_model(model.clone().filter(|_| !user))
                .with_timestamp(ts.clone())
                .with_sidechain(sidechain)
                .with_prompt_source((b.kind == MessageKind::Prompt).then_some(PromptSource::Typed));
            let seq = push_message(&mut self.session, m);
            first_seq = first_seq.or(Some(seq));
            for path in b.tool_input.iter().flat_map(arg_paths) {
                self.files.push(PendingFile {
                    seq: Some(seq),
                    path,
                    tool_name: b.tool_name.clone(),
                    timestamp: ts.clone(),
                });
            }
        }
        if let Some(u) = msg.get("usage").filter(|u| u.is_object() && !user) {
            self.usage(u, native, first_seq, model, ts);
        }
    }

    fn note_meta(&mut self, v: &Value) {
        let meta = &mut self.session.meta;
        if !self.named {
            if let Some(s) = jstr(v, "sessionId").filter(|s| !s.is_empty()) {
                let native = s.strip_prefix("session-").unwrap_or(s);
                meta.native_id = native.to_string();
                meta.id = ids::session_id(SourceKind::Iflow, native);
                self.named = true;
            }
        }
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

    fn usage(
        &mut self,
        u: &Value,
        native: Option<String>,
        seq: Option<u32>,
        model: Option<String>,
        ts: Option<String>,
    ) {
        let input = count_of(u, &["input_tokens"]);
        let output = count_of(u, &["output_tokens"]);
        let read = count_of(u, &["cache_read_input_tokens"]);
        let write = count_of(u, &["cache_creation_input_tokens"]);
        if !crate::shared::blocks::any_count(&[input, output, read, write]) {
            return;
        }
        let key = native.unwrap_or_else(|| format!("seq:{}", self.session.messages.len()));
        self.session.usage.push(Usage {
            request_key: key.clone(),
            message_id: Some(key),
            message_seq: seq,
            model,
            timestamp: ts,
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_creation_tokens: write,
            tokens_known: true,
            ..Usage::default()
        });
    }

    fn finish(mut self) -> Session {
        let files = std::mem::take(&mut self.files);
        fill_tool_names(&mut self.session);
        finish_linear_session(&mut self.session, files, SHELL_TOOLS);
        let first_prompt = self
            .session
            .messages
            .iter()
            .find(|m| m.kind == Some(MessageKind::Prompt))
            .and_then(|m| title_from(&m.text, TITLE_CHARS));
        if let Some(t) = first_prompt {
            self.session.meta.title = Some(t);
            self.session.meta.title_rank = TitleRank::FIRST_PROMPT;
        }
        self.session.mode = UpdateMode::Replace;
        self.session
    }
}
