//! JSON: the normalized model of a session (`docs/session.schema.json`): the session's facts,
//! every message in order (abandoned branches included, tool results as their own messages),
//! and its subagents as nested sessions. One compact document per session, written message by
//! message.

use std::borrow::Cow;
use std::io::Write;

use serde::Serialize;
use trail_model::{MessageKind, Role};
use trail_store::{ExportMessage, SessionRow};

use crate::{Exporter, Result};

/// The value of the top-level `format` field.
pub const FORMAT_NAME: &str = "trail.session";
/// The version of the shape; bumped only when a field changes meaning.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Serialize)]
struct JsonSession<'a> {
    id: &'a str,
    source: &'a str,
    title: Option<String>,
    cwd: Option<String>,
    repository: Option<String>,
    branch: Option<String>,
    created_at: Option<&'a str>,
    updated_at: Option<&'a str>,
    turns: i64,
    messages: i64,
    input_tokens: i64,
    output_tokens: i64,
    cache_creation_tokens: i64,
    cache_read_tokens: i64,
    models: &'a [String],
    parent_session_id: Option<&'a str>,
    parent_tool_call_id: Option<&'a str>,
    agent_version: Option<&'a str>,
    /// A chat (a chat service's data export), not a coding session; absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    chat: bool,
}

#[derive(Serialize)]
struct JsonMessage<'a> {
    seq: i64,
    role: Option<&'a str>,
    kind: Option<&'a str>,
    text: Option<Cow<'a, str>>,
    tool_name: Option<&'a str>,
    tool_call_id: Option<&'a str>,
    tool_input: Option<Cow<'a, str>>,
    tool_output: Option<Cow<'a, str>>,
    is_error: bool,
    model: Option<&'a str>,
    timestamp: Option<&'a str>,
    is_sidechain: bool,
    on_main_chain: bool,
    turn_index: Option<i64>,
}

pub(crate) fn write_session(
    ex: &mut Exporter<'_>,
    s: &SessionRow,
    w: &mut dyn Write,
) -> Result<()> {
    write!(
        w,
        "{{\"format\":\"{FORMAT_NAME}\",\"version\":{FORMAT_VERSION},"
    )?;
    write_body(ex, s, w)?;
    w.write_all(b"}\n")?;
    Ok(())
}

/// Writes `"session":...,"messages":[...],"subagents":[...]` (no braces).
fn write_body(ex: &mut Exporter<'_>, s: &SessionRow, w: &mut dyn Write) -> Result<()> {
    let session = JsonSession {
        id: &s.id,
        source: &s.source,
        title: ex.redact_opt(s.title.as_deref()),
        cwd: ex.redact_opt(s.cwd.as_deref()),
        repository: ex.redact_opt(s.repository.as_deref()),
        branch: ex.redact_opt(s.branch.as_deref()),
        created_at: s.created_at.as_deref(),
        updated_at: s.updated_at.as_deref(),
        turns: s.turns,
        messages: s.messages,
        input_tokens: s.input_tokens,
        output_tokens: s.output_tokens,
        cache_creation_tokens: s.cache_creation_tokens,
        cache_read_tokens: s.cache_read_tokens,
        models: &s.models,
        parent_session_id: s.parent_session_id.as_deref(),
        parent_tool_call_id: s.parent_tool_call_id.as_deref(),
        agent_version: s.agent_version.as_deref(),
        chat: s.chat,
    };
    w.write_all(b"\"session\":")?;
    serde_json::to_writer(&mut *w, &session)?;
    w.write_all(b",\n\"messages\":[")?;
    let store = ex.store;
    let mut first = true;
    store.for_each_export_message(&s.id, |m: ExportMessage| -> Result<()> {
        let msg = &m.message;
        let redactor = ex.redactor;
        let counts = &mut ex.counts;
        let out = JsonMessage {
            seq: msg.seq,
            role: msg.role.map(Role::as_str),
            kind: msg.kind.map(MessageKind::as_str),
            text: msg.text.as_deref().map(|t| redactor.redact(t, counts)),
            tool_name: msg.tool_name.as_deref(),
            tool_call_id: msg.tool_call_id.as_deref(),
            tool_input: msg
                .tool_input
                .as_deref()
                .map(|t| redactor.redact(t, counts)),
            tool_output: msg
                .tool_output
                .as_deref()
                .map(|t| redactor.redact(t, counts)),
            is_error: msg.is_error,
            model: msg.model.as_deref(),
            timestamp: msg.timestamp.as_deref(),
            is_sidechain: msg.is_sidechain,
            on_main_chain: msg.on_main_chain,
            turn_index: msg.turn_index,
        };
        if !first {
            w.write_all(b",")?;
        }
        first = false;
        w.write_all(b"\n")?;
        serde_json::to_writer(&mut *w, &out)?;
        Ok(())
    })?;
    w.write_all(b"],\n\"subagents\":[")?;
    for (i, a) in store.subagent_sessions(&s.id)?.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        w.write_all(b"{")?;
        write_body(ex, a, w)?;
        w.write_all(b"}")?;
    }
    w.write_all(b"]")?;
    Ok(())
}
