//! Factory Droid: `~/.factory/sessions/[<workspace slug>/]<uuid>.jsonl`, with
//! `<uuid>.settings.json` beside it.
//!
//! Line 1 is `{"type":"session_start","id","title","sessionTitle","owner","version","cwd"}`;
//! then `{"type":"message","id","parentId","timestamp","message":{"role","content"}}` with
//! Claude-style content blocks (`text`, `thinking`, `tool_use`, `tool_result`). Messages form a
//! tree through `parentId` (the first one's parent is the session id); one without a
//! `parentId` follows the message before it. The conversation is the path from the last
//! message to the root; other branches are kept off the main chain.
//!
//! A user message of text blocks is a prompt (its `<system-reminder>` blocks removed); one of
//! `tool_result` blocks carries results. A title set by hand (`isSessionTitleManuallySet`)
//! outranks the first prompt.
//!
//! # Usage rule
//! Droid keeps usage per session only, in the settings file: `model` and `tokenUsage`
//! (`inputTokens`, `outputTokens`, `cacheCreationTokens`, `cacheReadTokens`,
//! `thinkingTokens`). It becomes one usage row keyed `settings`; `thinkingTokens` is kept as
//! reasoning, not added to the output.
//!
//! Session files only grow as far as their shape shows (Droid is closed source: one message per
//! line, a branch is a later message whose `parentId` names an older one; a rewrite of line 1,
//! say a new title, changes the indexed prefix, and the ingest then reads the file whole): a
//! grown file is read from where the last parse stopped
//! ([`crate::resumable`]), with the tree, the last message and the title saved between
//! parses. The settings file is read again with every parse of its session file, so its usage
//! row follows it; a later message that starts a branch relinks the messages it moves on or
//! off the conversation.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use trail_model::{
    time, Message, MessageKind, PromptSource, Role, Session, SourceKind, TitleRank, UpdateMode,
    Usage,
};

use crate::blocks::{arg_paths, claude_blocks, count_of, fill_tool_names, title_from};
use crate::chat_tree::finish_tree_session;
use crate::claude_code::strip_system_reminders;
use crate::json_fields::jstr;
use crate::linear::PendingFile;
use crate::resumable::{self, first_object, session_named_by, LineParser};
use crate::{discover, ids, FileParse, ParseRequest, Source, SourceError};

/// Factory Droid session files.
pub struct Droid;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version. 2: files are resumed where the last parse stopped.
pub const PARSER_VERSION: u32 = 2;

const TITLE_CHARS: usize = 200;
const SHELL_TOOLS: &[&str] = &["Execute", "Bash", "bash"];

impl Source for Droid {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Droid
    }

    /// Roots are homes (`~/.factory`) or their `sessions` folder.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            let sessions = if root.file_name().is_some_and(|n| n == "sessions") {
                root.clone()
            } else {
                root.join("sessions")
            };
            out.extend(discover::walk_files(&sessions, 3, |p| {
                discover::has_extension(p, "jsonl")
            }));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        discover::has_extension(path, "jsonl")
            && first_object(head).is_some_and(|v| jstr(&v, "type") == Some("session_start"))
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        resumable::parse(request, "a Droid record", || Parser::new(request.path))
    }
}

impl LineParser for Parser {
    fn record(&mut self, _line: u64, v: &Value) {
        self.read_record(v);
    }

    fn sessions(&self, path: &Path) -> Vec<Session> {
        if self.started || !self.session.messages.is_empty() {
            let settings = settings_path(path);
            vec![self.clone().finish(settings.as_deref())]
        } else {
            Vec::new()
        }
    }

    fn building_mut(&mut self) -> Vec<&mut Session> {
        vec![&mut self.session]
    }
}

/// `<uuid>.settings.json` beside `<uuid>.jsonl`.
fn settings_path(path: &Path) -> Option<PathBuf> {
    let stem = path.file_stem()?.to_str()?;
    Some(path.with_file_name(format!("{stem}.settings.json")))
}

#[derive(Clone, Serialize, Deserialize)]
struct Parser {
    session: Session,
    started: bool,
    last_id: Option<String>,
    files: Vec<PendingFile>,
    title: Option<(String, u8)>,
}

impl Parser {
    fn new(path: &Path) -> Self {
        Parser {
            session: session_named_by(SourceKind::Droid, path, ""),
            started: false,
            last_id: None,
            files: Vec::new(),
            title: None,
        }
    }

    fn read_record(&mut self, v: &Value) {
        match jstr(v, "type").unwrap_or_default() {
            "session_start" if !self.started => self.start(v),
            "message" => self.message(v),
            _ => {
                let mut m = Message::new(Role::System, MessageKind::Unknown, "")
                    .with_timestamp(v.get("timestamp").and_then(time::from_json))
                    .with_extra(v.to_string());
                m.seq = self.next_seq();
                self.session.messages.push(m);
            }
        }
    }

    fn start(&mut self, v: &Value) {
        self.started = true;
        let meta = &mut self.session.meta;
        if let Some(id) = jstr(v, "id").filter(|s| !s.is_empty()) {
            meta.native_id = id.to_string();
            meta.id = ids::session_id(SourceKind::Droid, id);
        }
        meta.cwd = jstr(v, "cwd").map(str::to_string);
        meta.agent_version = v.get("version").map(|x| match x {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let manual = v.get("isSessionTitleManuallySet").and_then(Value::as_bool) == Some(true);
        let title = jstr(v, "sessionTitle").or_else(|| jstr(v, "title"));
        if let Some(t) = title.filter(|t| !t.trim().is_empty()) {
            let rank = if manual {
                TitleRank::USER
            } else {
                TitleRank::SUMMARY
            };
            self.title = Some((t.trim().to_string(), rank));
        }
    }

    fn next_seq(&self) -> u32 {
        u32::try_from(self.session.messages.len()).unwrap_or(u32::MAX)
    }

    fn message(&mut self, v: &Value) {
        let id = jstr(v, "id").map(str::to_string);
        let parent = jstr(v, "parentId")
            .map(str::to_string)
            .or_else(|| self.last_id.clone());
        if id.is_some() {
            self.last_id.clone_from(&id);
        }
        let ts = v.get("timestamp").and_then(time::from_json);
        if let Some(t) = &ts {
            self.session.meta.observe_timestamp(t);
        }
        let msg = v.get("message").unwrap_or(&Value::Null);
        let user = jstr(msg, "role") == Some("user");
        let text_kind = if user {
            MessageKind::Prompt
        } else {
            MessageKind::Text
        };
        for b in claude_blocks(msg.get("content"), text_kind) {
            let mut text = b.text;
            if b.kind == MessageKind::Prompt {
                text = strip_system_reminders(&text).trim().to_string();
                if text.is_empty() {
                    continue;
                }
            }
            let role = match b.kind {
                MessageKind::Prompt => Role::User,
                MessageKind::ToolResult => Role::Tool,
                _ => Role::Assistant,
            };
            let input = b.tool_input.as_ref().map(Value::to_string);
            let m = Message::new(role, b.kind, text)
                .with_seq(self.next_seq())
                .with_native_id(id.clone())
                .with_parent(parent.clone())
                .with_tool_name(b.tool_name.clone())
                .with_call_id(b.tool_call_id)
                .with_input(input)
                .with_output(b.tool_output)
                .with_error(b.is_error)
                .with_timestamp(ts.clone())
                .with_prompt_source((b.kind == MessageKind::Prompt).then_some(PromptSource::Typed));
            for path in b.tool_input.iter().flat_map(arg_paths) {
                self.files.push(PendingFile {
                    seq: Some(m.seq),
                    path,
                    tool_name: b.tool_name.clone(),
                    timestamp: ts.clone(),
                });
            }
            self.session.messages.push(m);
        }
    }

    fn finish(mut self, settings: Option<&Path>) -> Session {
        fill_tool_names(&mut self.session);
        let files = std::mem::take(&mut self.files);
        finish_tree_session(
            &mut self.session,
            self.last_id.as_deref(),
            files,
            SHELL_TOOLS,
        );
        if let Some(s) = settings.and_then(read_settings) {
            if let Some(m) = &s.model {
                self.session.observe_model(m);
            }
            self.session.usage.push(s);
        }
        let first_prompt = self
            .session
            .messages
            .iter()
            .find(|m| m.on_main_chain && m.kind == Some(MessageKind::Prompt))
            .and_then(|m| title_from(&m.text, TITLE_CHARS));
        let meta = &mut self.session.meta;
        if let Some((t, r)) = self.title {
            meta.title = Some(t);
            meta.title_rank = r;
        } else if let Some(t) = first_prompt {
            meta.title = Some(t);
            meta.title_rank = TitleRank::FIRST_PROMPT;
        }
        self.session.mode = UpdateMode::Replace;
        self.session
    }
}

/// The session's usage row from its settings file.
fn read_settings(path: &Path) -> Option<Usage> {
    let bytes = std::fs::read(path).ok()?;
    let v: Value = serde_json::from_slice(crate::whole::strip_bom(&bytes)).ok()?;
    let model = jstr(&v, "model")
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    let u = v.get("tokenUsage").filter(|u| u.is_object())?;
    let input = count_of(u, &["inputTokens"]);
    let output = count_of(u, &["outputTokens"]);
    let write = count_of(u, &["cacheCreationTokens"]);
    let read = count_of(u, &["cacheReadTokens"]);
    let thinking = count_of(u, &["thinkingTokens"]);
    Some(Usage {
        request_key: "settings".into(),
        model,
        input_tokens: input,
        output_tokens: output,
        cache_creation_tokens: write,
        cache_read_tokens: read,
        reasoning_tokens: thinking,
        tokens_known: crate::shared::blocks::any_count(&[input, output, write, read, thinking]),
        ..Usage::default()
    })
}
