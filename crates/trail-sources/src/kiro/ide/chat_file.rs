//! Kiro IDE's first generation: `<workspace hash>/<execution>.chat`, one JSON document per
//! execution of the agent.
//!
//! # Format
//! `{executionId, actionId, chat: [{role, content}], metadata: {modelId, modelProvider,
//! workflow, workflowId, startTime, endTime}}`; `role` is `human`, `bot` or `tool`, `content`
//! text; the times are epoch milliseconds. Several executions of one workflow may each have a
//! file.
//!
//! # Mapping
//! - One file is one session, its id the `executionId` (else the file's name); the workflow,
//!   its id and the action id are kept in the session's metadata.
//! - A `human` message is a prompt, except the system prompt Kiro sends as the first human
//!   message (it opens with `<identity>`), which is a meta message. A `bot` message is answer
//!   text (with the file's model), a `tool` message a tool's output. Kiro records no tool call
//!   apart from the text of its answers, and no token counts.
//! - The session's folder is the workspace VS Code's `workspaceStorage/<hash>/workspace.json`
//!   names for the workspace hash, when that file is there.
//! - A message that is not `{role, content}` with a text content is a problem, skipped.

use std::path::Path;

use serde_json::{json, Value};
use trail_model::{time, Message, MessageKind, Role, Session, SessionMeta, SourceKind};

use crate::json_fields::jstr;
use crate::{discover, ids, uri, whole, FileParse, SourceError};

/// How Kiro's system prompt opens.
const SYSTEM_PROMPT_OPENING: &str = "<identity>";

/// Whether `path` is named like a chat file.
pub(crate) fn is_chat_name(path: &Path) -> bool {
    discover::has_extension(path, "chat")
}

/// Whether `head` opens a JSON object with a chat and an execution id.
pub(crate) fn looks_like(head: &[u8]) -> bool {
    let has = |k: &[u8]| memchr::memmem::find(head, k).is_some();
    let opens = head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    opens && has(b"\"chat\"") && has(b"\"executionId\"")
}

pub(crate) fn parse(path: &Path) -> Result<FileParse, SourceError> {
    let (file, mut out) = super::read_document(path, "Kiro chat file")?;
    let chat = file
        .get("chat")
        .and_then(Value::as_array)
        .ok_or_else(|| SourceError::format(path, "no `chat` list"))?;
    let mut session = Session::new(session_meta(path, &file));
    let model = file
        .pointer("/metadata/modelId")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty());
    if let Some(m) = model {
        session.observe_model(m);
    }
    super::push_records(path, &mut session, &mut out, chat, "chat message", |r| {
        message_of(r, model)
    });
    Ok(super::finish(out, session, || {
        format!("a chat of {} messages, none with text", chat.len())
    }))
}

fn session_meta(path: &Path, file: &Value) -> SessionMeta {
    let kind = SourceKind::KiroIde;
    let native = jstr(file, "executionId")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| Some(path.file_stem()?.to_str()?.to_string()))
        .unwrap_or_else(|| "unknown".into());
    let mut meta = SessionMeta::new(ids::session_id(kind, &native), kind, &native);
    let info = file.get("metadata").unwrap_or(&Value::Null);
    for key in ["startTime", "endTime"] {
        if let Some(ts) = info.get(key).and_then(time::from_json) {
            meta.observe_timestamp(&ts);
        }
    }
    meta.cwd = workspace_folder(path);
    let mut facts = serde_json::Map::new();
    for (from, to) in [
        (info.get("workflow"), "workflow"),
        (info.get("workflowId"), "workflow_id"),
        (file.get("actionId"), "action_id"),
        (info.get("modelProvider"), "model_provider"),
    ] {
        if let Some(v) = from.filter(|v| v.as_str().is_some_and(|s| !s.is_empty())) {
            facts.insert(to.to_string(), v.clone());
        }
    }
    if !facts.is_empty() {
        meta.metadata = Some(Value::Object(facts));
    }
    meta
}

/// The folder VS Code's `User/workspaceStorage/<hash>/workspace.json` names for the workspace
/// hash `path` lies under (`User/globalStorage/kiro.kiroagent/<hash>/<file>.chat`).
fn workspace_folder(path: &Path) -> Option<String> {
    let hash_dir = path.parent()?;
    let hash = hash_dir.file_name()?;
    let user = hash_dir.parent()?.parent()?.parent()?;
    let workspace = whole::read_json_lenient(
        &user
            .join("workspaceStorage")
            .join(hash)
            .join("workspace.json"),
    )?;
    workspace.get("folder").and_then(uri::uri_to_path)
}

/// One chat message: `Ok(None)` for one without text.
fn message_of(record: &Value, model: Option<&str>) -> Result<Option<Message>, String> {
    let role = jstr(record, "role").ok_or("a message without a `role`")?;
    let text = match record.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(_) => return Err(format!("a `{role}` message whose content is not text")),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let m = match role {
        "human" if text.trim_start().starts_with(SYSTEM_PROMPT_OPENING) => {
            Message::new(Role::System, MessageKind::Meta, text)
        }
        "human" => Message::prompt(text),
        "bot" => Message::answer(text).with_model(model.map(str::to_string)),
        "tool" => {
            Message::new(Role::Tool, MessageKind::ToolResult, String::new()).with_output(Some(text))
        }
        other => Message::new(Role::System, MessageKind::Unknown, text)
            .with_extra(Some(json!({ "role": other }).to_string())),
    };
    Ok(Some(m))
}
