//! Chat-service data exports: the `conversations.json` of a ChatGPT export ([`chatgpt`]) and
//! of a Claude.ai export ([`claude_ai`]). They are chats, not coding sessions: import only
//! (no default location; `trail import` or `trail index PATH` names them), and every session
//! carries `{"chat": true}` in its metadata, which the store reads as the session's mark
//! (`SessionRow::chat`) and the coding-session reports leave out.
//!
//! Both files are one JSON array of conversations, possibly hundreds of megabytes: they are
//! read one conversation at a time ([`stream`]). A conversation that is not what its format
//! says is one [`ParseIssue`] on the line it starts on; the others are kept. The files never
//! grow in place (an export is written once), so they are re-read whole when they change.

pub mod chatgpt;
pub mod claude_ai;
mod stream;

use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{ParseIssue, Session};

use crate::{discover, whole, FileParse, SourceError};

/// The metadata every session of an export carries: the store's mark of a chat.
pub(crate) fn chat_metadata(export: &str) -> Value {
    serde_json::json!({ "chat": true, "export": export })
}

/// Turns one conversation into a session: `Ok(None)` for a conversation with no message,
/// `Err(reason)` for one that is not in the format.
type Convert = fn(&Value) -> Result<Option<Session>, String>;

/// Reads every conversation of an export with `convert`, keeping the sessions.
pub(crate) fn parse_export(path: &Path, convert: Convert) -> Result<FileParse, SourceError> {
    let mut sessions = Vec::new();
    let mut out = parse_export_each(path, convert, &mut |s, _| {
        sessions.push(s);
        true
    })?;
    out.sessions = sessions;
    Ok(out)
}

/// Reads every conversation of an export with `convert`, handing each session to `each` (with
/// the bytes read so far) as soon as it is made: the file's sessions are never all held
/// ([`crate::Source::parse_each`]).
pub(crate) fn parse_export_each(
    path: &Path,
    convert: Convert,
    each: &mut dyn FnMut(Session, u64) -> bool,
) -> Result<FileParse, SourceError> {
    let mut out = FileParse::default();
    let mut conversations = 0u64;
    let mut sessions = 0u64;
    let outcome = stream::for_each_element(path, |v, line, read| {
        conversations += 1;
        match convert(&v) {
            Ok(Some(s)) => {
                sessions += 1;
                return each(s, read);
            }
            Ok(None) => {}
            Err(reason) => out.issues.push(ParseIssue {
                path: path.display().to_string(),
                line: Some(line),
                byte_offset: None,
                excerpt: None,
                reason: format!("conversation {conversations}: {reason}"),
            }),
        }
        true
    })?;
    out.issues.extend(outcome.issue);
    out.bytes_parsed = outcome.bytes;
    out.bytes_read = outcome.bytes;
    out.lines = outcome.lines;
    if sessions == 0 && out.issues.is_empty() {
        out.no_session = Some(format!(
            "{conversations} conversations, none with a message"
        ));
    }
    Ok(out)
}

/// Whether `head` (a file's first bytes, BOM skipped) opens a JSON array or object in a
/// `.json` file and holds every one of `keys` (quoted JSON keys).
pub(crate) fn head_has(path: &Path, head: &[u8], keys: &[&[u8]]) -> bool {
    let opens = head
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'[' || *b == b'{');
    discover::has_extension(path, "json")
        && opens
        && keys.iter().all(|k| memchr::memmem::find(head, k).is_some())
}

/// The export files under `roots` (only when a root is given: these sources have no default
/// location) that `detect` accepts.
pub(crate) fn discover_exports(
    roots: &[PathBuf],
    detect: impl Fn(&Path, &[u8]) -> bool,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for root in roots {
        out.extend(discover::walk_files(root, 4, |p| {
            discover::has_extension(p, "json") && detect(p, &whole::read_head(p))
        }));
    }
    out
}

/// The text of a JSON value that may be a string, or a list of strings and objects with a
/// `text` (objects without one are named by their `content_type` or `type`).
pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(text_of)
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Object(o) => {
            if let Some(t) = o.get("text").and_then(Value::as_str) {
                return t.to_string();
            }
            let kind = o
                .get("content_type")
                .or_else(|| o.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("attachment");
            format!("[{kind}]")
        }
        _ => String::new(),
    }
}
