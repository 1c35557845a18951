//! Kiro IDE's chats, in its agent extension's VS Code-style storage folder
//! `User/globalStorage/kiro.kiroagent` (`~/.config/Kiro`, `~/Library/Application Support/Kiro`,
//! `%APPDATA%\Kiro`; `~/.kiro-server/data` on a remote host). Two generations are read:
//! - `<workspace hash>/<execution>.chat`: one execution's chat, `{executionId, actionId,
//!   chat: [{role: human|bot|tool, content}], metadata: {modelId, workflow, workflowId,
//!   startTime, endTime}}` ([`chat_file`]);
//! - `workspace-sessions/<base64 folder>/<session>.json` with the folder's `sessions.json`
//!   index: `{sessionId, title, selectedModel, workspaceDirectory, history: [{message: {role,
//!   content}, executionId, promptLogs}]}` ([`workspace_session`]).
//!
//! Kiro IDE is closed source and documents neither: the schemas were settled from public
//! readers that agree on them (getagentseal/codeburn `src/providers/kiro.ts`,
//! obodnikov/claude-chat-manager's Kiro parser, and two more readers of the same fields), with
//! no real file to check against. The third generation, execution logs without a file extension
//! in `<workspace hash>/<folder>/`, is not read: those readers disagree on where its messages
//! lie (`messagesFromExecutionId` at the top, under `input.data`, or `context.messages`), so
//! `doctor` reports those files as found but not read (`registry::UNREADABLE`).

pub mod chat_file;
pub mod workspace_session;

use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{Message, ParseIssue, Session, SourceKind};

use crate::linear::{finish_linear_session, push_message};
use crate::{discover, whole, FileParse, ParseRequest, Source, SourceError};

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version.
pub const PARSER_VERSION: u32 = 1;

/// The folder of the newer generation's sessions, under the storage folder.
pub const WORKSPACE_SESSIONS: &str = "workspace-sessions";
/// The index of one workspace's sessions (not a session).
pub const SESSIONS_INDEX: &str = "sessions.json";

/// Kiro IDE's `.chat` files and `workspace-sessions` JSON.
pub struct KiroIde;

impl Source for KiroIde {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::KiroIde
    }

    /// `*.chat` one folder below a root (the storage folder), and the session files of
    /// `workspace-sessions/<folder>/` (a root may also be `workspace-sessions` itself).
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            out.extend(discover::walk_files(root, 3, |p| {
                chat_file::is_chat_name(p) || is_session_name(p)
            }));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if chat_file::is_chat_name(path) {
            return chat_file::looks_like(head);
        }
        discover::has_extension(path, "json")
            && !is_index(path)
            && workspace_session::looks_like(path, head)
    }

    /// Both generations rewrite their files whole.
    fn appendable(&self, _path: &Path) -> bool {
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        if chat_file::is_chat_name(request.path) {
            chat_file::parse(request.path)
        } else {
            workspace_session::parse(request.path)
        }
    }
}

/// Whether `path` is the `sessions.json` index.
fn is_index(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == SESSIONS_INDEX)
}

/// A `.json` other than the index in a folder of `workspace-sessions`.
fn is_session_name(path: &Path) -> bool {
    let in_sessions = path
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|n| n == WORKSPACE_SESSIONS);
    in_sessions && discover::has_extension(path, "json") && !is_index(path)
}

/// A Kiro IDE JSON file (`what` it should be) read whole: its document, and its parse so far
/// (the bytes read, and any bytes after the document as a problem).
fn read_document(path: &Path, what: &str) -> Result<(Value, FileParse), SourceError> {
    let (doc, len) = whole::read_json(path)?;
    let doc = doc.map_err(|e| SourceError::format(path, format!("not a {what}: {e}")))?;
    let mut out = FileParse {
        bytes_parsed: len,
        bytes_read: len,
        ..FileParse::default()
    };
    out.issues.extend(doc.trailing);
    Ok((doc.value, out))
}

/// Makes each of `records` a message of `session` with `make` (`None`: a record without
/// text); a record it cannot read is a problem naming it (`record`: what one is called).
fn push_records(
    path: &Path,
    session: &mut Session,
    out: &mut FileParse,
    records: &[Value],
    record: &str,
    make: impl Fn(&Value) -> Result<Option<Message>, String>,
) {
    for (i, r) in records.iter().enumerate() {
        match make(r) {
            Ok(Some(m)) => {
                push_message(session, m);
            }
            Ok(None) => {}
            Err(reason) => out.issues.push(ParseIssue {
                path: path.display().to_string(),
                line: None,
                byte_offset: None,
                excerpt: None,
                reason: format!("{record} {}: {reason}", i + 1),
            }),
        }
    }
}

/// The file's one session, finished; or, without a message, why there is none.
fn finish(mut out: FileParse, mut session: Session, none: impl FnOnce() -> String) -> FileParse {
    if session.messages.is_empty() {
        out.no_session = Some(none());
        return out;
    }
    finish_linear_session(&mut session, Vec::new(), &[]);
    out.sessions.push(session);
    out
}
