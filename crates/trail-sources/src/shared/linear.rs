//! Building a session whose messages form one line (no branches): OpenCode, Cursor and the
//! other formats that record a conversation in order. Messages are pushed with the next `seq`,
//! then [`finish_linear_session`] assigns turns and derives files and refs.

use serde_json::Value;
use trail_model::turns::{assign_turn_indexes, build_turns};
use trail_model::{FileTouch, Message, MessageKind, Session};

use crate::refs;

/// A file a tool touched, waiting for turn indexes.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct PendingFile {
    pub seq: Option<u32>,
    pub path: String,
    pub tool_name: Option<String>,
    pub timestamp: Option<String>,
}

impl PendingFile {
    /// The files the tool call at `seq` names in its arguments ([`crate::blocks::arg_paths`]).
    pub(crate) fn named_by(
        seq: u32,
        args: &Value,
        tool_name: &str,
        timestamp: Option<&str>,
    ) -> impl Iterator<Item = PendingFile> {
        let tool_name = tool_name.to_string();
        let timestamp = timestamp.map(str::to_string);
        crate::blocks::arg_paths(args)
            .into_iter()
            .map(move |path| PendingFile {
                seq: Some(seq),
                path,
                tool_name: Some(tool_name.clone()),
                timestamp: timestamp.clone(),
            })
    }
}

/// Assigns turns, builds turn rows, and derives files and refs for a linear session.
/// Tool results of `shell_tools` are scanned for git's commit lines.
pub(crate) fn finish_linear_session(
    session: &mut Session,
    files: Vec<PendingFile>,
    shell_tools: &[&str],
) {
    let order: Vec<usize> = (0..session.messages.len()).collect();
    for m in &mut session.messages {
        m.on_main_chain = true;
    }
    session.turn_count = assign_turn_indexes(&mut session.messages, &order);
    session.turns = build_turns(&session.messages);
    derive_files_and_refs(session, files, shell_tools);
}

/// Adds the files tools touched (with their turns, which must be assigned already) and the refs
/// the messages mention. Tool results of `shell_tools` are scanned for git's commit lines.
pub(crate) fn derive_files_and_refs(
    session: &mut Session,
    files: Vec<PendingFile>,
    shell_tools: &[&str],
) {
    for f in files {
        let turn_index = f
            .seq
            .and_then(|s| session.messages.get(s as usize))
            .and_then(|m| m.turn_index);
        session.add_file(FileTouch {
            path: f.path,
            tool_name: f.tool_name,
            turn_index,
            first_seen_at: f.timestamp,
        });
    }
    let mut found = Vec::new();
    for m in &session.messages {
        let (text, git) = match m.kind() {
            MessageKind::Prompt | MessageKind::Text => (Some(m.text.as_str()), false),
            MessageKind::ToolCall => (m.tool_input.as_deref(), false),
            MessageKind::ToolResult => {
                let shell = m
                    .tool_name
                    .as_deref()
                    .is_some_and(|t| shell_tools.contains(&t));
                (m.tool_output.as_deref().filter(|_| shell), true)
            }
            _ => (None, false),
        };
        if let Some(text) = text {
            found.extend(refs::session_refs(
                text,
                git,
                m.turn_index,
                m.timestamp.as_deref(),
            ));
        }
    }
    for r in found {
        session.add_ref(r);
    }
}

/// Appends `m` with the next `seq`; returns the seq.
pub(crate) fn push_message(session: &mut Session, mut m: Message) -> u32 {
    let seq = u32::try_from(session.messages.len()).unwrap_or(u32::MAX);
    m.seq = seq;
    m.on_main_chain = true;
    if let Some(ts) = &m.timestamp {
        session.meta.observe_timestamp(ts);
    }
    session.messages.push(m);
    seq
}
