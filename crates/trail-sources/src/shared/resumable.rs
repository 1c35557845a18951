//! Resuming the parse of a JSONL session file that only grows (Pi, Qwen Code, Kimi, Factory
//! Droid, iFlow): one driver for the formats whose parser is a plain value that can be saved
//! between two parses.
//!
//! A format's parser ([`LineParser`]) reads one JSON object per line and can say, at any point,
//! which sessions the lines so far make (a whole parse's result, [`LineParser::sessions`]).
//! After a parse the driver saves the parser itself in [`FileParse::state`], its messages cut
//! down to skeletons ([`skeleton`]: ids, parents, kinds, tool ids and names, a prompt's title
//! line; no text, input or output), and what it returned ([`Seen`]: each message's main-chain
//! flag and turn, a fingerprint of its skeleton, the usage rows, files, refs and checkpoints).
//! A resumed parse restores the parser, reads only the new lines, asks for the sessions again
//! and returns the difference as [`UpdateMode::Append`] deltas:
//!
//! - the new messages; [`Relink`]s for older ones whose main chain or turn moved (a later line
//!   of a tree-shaped file can make another branch the conversation);
//! - usage rows that are new or changed (a streamed record repeating cumulative counts; the
//!   store keeps one row per `request_key`), files, refs and checkpoints not returned before;
//! - the session's facts (meta, models, turn count) as they stand.
//!
//! A delta cannot change anything else of a message already stored. When a new line would
//! (Kimi naming a subagent on a call written before), the fingerprints of the older messages
//! differ and the file is parsed again whole, in one piece whatever the byte budget (in
//! pieces, the piece holding that line would be resumed into again and again). An unreadable
//! state starts over too.
//!
//! The first line of each of these formats is a JSON object that says what the file is;
//! [`first_object`] reads it for `detect`, and [`session_named_by`] makes the session a file's
//! name stands for until its header names it.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use trail_model::{
    Message, MessageKind, Relink, Session, SessionMeta, SourceKind, UpdateMode, Usage,
};

use crate::blocks::title_from;
use crate::{ids, jsonl, FileParse, ParseRequest, SourceError};

/// Characters of a prompt's first line kept in a skeleton: every parser using this driver
/// titles a session by at most this many characters of its first prompt.
pub(crate) const TITLE_CHARS: usize = 200;

/// A format's line parser, saved between two parses of a growing file.
pub(crate) trait LineParser: Serialize + DeserializeOwned {
    /// Reads the object on line `line` (1-based).
    fn record(&mut self, line: u64, v: &Value);

    /// The sessions the lines read so far make, as a whole parse returns them
    /// ([`UpdateMode::Replace`]). Works on copies: the parser goes on after it.
    fn sessions(&self, path: &Path) -> Vec<Session>;

    /// The sessions being built, so the driver can cut their messages down to skeletons.
    fn building_mut(&mut self) -> Vec<&mut Session>;
}

/// What one session's last parse returned, to tell the next one's news from it.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Seen {
    id: String,
    /// Per message (by seq): on the main chain, turn, fingerprint of its skeleton.
    links: Vec<(bool, Option<u32>, u64)>,
    usage: Vec<Usage>,
    files: Vec<String>,
    refs: Vec<(String, String)>,
    checkpoints: usize,
}

/// The state saved after a parse.
#[derive(Serialize, Deserialize)]
struct Saved<P> {
    parser: P,
    seen: Vec<Seen>,
}

/// Parses `request`'s file with `fresh()` (or the saved parser when resumed); `what` names a
/// line in the problem a line that is not a JSON object gives ("a Pi entry").
pub(crate) fn parse<P: LineParser>(
    request: ParseRequest<'_>,
    what: &str,
    fresh: impl Fn() -> P,
) -> Result<FileParse, SourceError> {
    let path = request.path;
    let restored = request.resume.and_then(|r| {
        let saved = serde_json::from_slice::<Saved<P>>(r.state).ok()?;
        Some((saved, r.offset, r.line))
    });
    let appending = restored.is_some();
    let (mut parser, seen, start, start_line) = match restored {
        Some((saved, offset, line)) => (saved.parser, saved.seen, offset, line),
        None => (fresh(), Vec::new(), 0, 0),
    };
    let outcome =
        jsonl::read_lines_limited(path, start, start_line, request.max_bytes, |pos, line| {
            let v: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
            if !v.is_object() {
                return Err(format!("{what} must be a JSON object"));
            }
            parser.record(pos.number, &v);
            Ok(())
        })?;
    let mut sessions = parser.sessions(path);
    let now_seen: Vec<Seen> = sessions.iter().map(seen_of).collect();
    if appending && !into_deltas(&mut sessions, &seen) {
        // A new line changed a message already stored: parse the file whole, in one piece (a
        // piece that ended before that line would meet it again on the next resume).
        return parse(
            ParseRequest {
                resume: None,
                max_bytes: None,
                ..request
            },
            what,
            fresh,
        );
    }
    for s in parser.building_mut() {
        for m in &mut s.messages {
            *m = skeleton(m);
        }
    }
    let state = serde_json::to_vec(&Saved {
        parser,
        seen: now_seen,
    })
    .ok();
    Ok(FileParse {
        sessions,
        issues: outcome.issues,
        bytes_parsed: outcome.bytes_parsed,
        bytes_read: outcome.bytes_read,
        lines: outcome.lines,
        more: outcome.more,
        state,
        ..FileParse::default()
    })
}

/// The parts of a message a later line can look back at: ids, parent, kind, tool call id and
/// name, the subagent it names, flags, and a prompt's first line (its title).
pub(crate) fn skeleton(m: &Message) -> Message {
    let text = if m.kind == Some(MessageKind::Prompt) {
        title_from(&m.text, TITLE_CHARS).unwrap_or_default()
    } else {
        String::new()
    };
    m.outline(text)
}

fn fingerprint(m: &Message) -> u64 {
    let mut h = DefaultHasher::new();
    serde_json::to_string(&skeleton(m))
        .unwrap_or_default()
        .hash(&mut h);
    h.finish()
}

fn seen_of(s: &Session) -> Seen {
    Seen {
        id: s.meta.id.0.clone(),
        links: s
            .messages
            .iter()
            .map(|m| (m.on_main_chain, m.turn_index, fingerprint(m)))
            .collect(),
        usage: s.usage.clone(),
        files: s.files.iter().map(|f| f.path.clone()).collect(),
        refs: s
            .refs
            .iter()
            .map(|r| (r.ref_type.as_str().to_string(), r.value.clone()))
            .collect(),
        checkpoints: s.checkpoints.len(),
    }
}

/// Turns whole sessions into what changed since `seen`; false when a change is more than a
/// delta can say (an older message changed, a session lost messages or went away).
fn into_deltas(sessions: &mut [Session], seen: &[Seen]) -> bool {
    let kept = seen
        .iter()
        .all(|old| sessions.iter().any(|s| s.meta.id.0 == old.id));
    kept && sessions.iter_mut().all(|s| {
        let empty = Seen::default();
        let old = seen.iter().find(|o| o.id == s.meta.id.0).unwrap_or(&empty);
        into_delta(s, old)
    })
}

fn into_delta(s: &mut Session, old: &Seen) -> bool {
    let n = old.links.len();
    if s.messages.len() < n {
        return false;
    }
    let mut relinks = Vec::new();
    for (m, &(main, turn, print)) in s.messages.iter().zip(&old.links) {
        if fingerprint(m) != print {
            return false;
        }
        if (m.on_main_chain, m.turn_index) != (main, turn) {
            relinks.push(Relink {
                seq: m.seq,
                turn_index: m.turn_index,
                on_main_chain: m.on_main_chain,
            });
        }
    }
    s.messages.drain(..n);
    s.relinks = relinks;
    s.turns.clear();
    s.mode = UpdateMode::Append;
    s.usage.retain(|u| !old.usage.contains(u));
    let files: HashSet<&str> = old.files.iter().map(String::as_str).collect();
    s.files.retain(|f| !files.contains(f.path.as_str()));
    let refs: HashSet<(&str, &str)> = old
        .refs
        .iter()
        .map(|(t, v)| (t.as_str(), v.as_str()))
        .collect();
    s.refs
        .retain(|r| !refs.contains(&(r.ref_type.as_str(), r.value.as_str())));
    s.checkpoints
        .drain(..old.checkpoints.min(s.checkpoints.len()));
    true
}

/// Returns the first line of `head` as a JSON object, if it is one.
pub(crate) fn first_object(head: &[u8]) -> Option<Value> {
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<Value>(first)
        .ok()
        .filter(Value::is_object)
}

/// The session a file stands for until its header names one: its file stem, without
/// `prefix` (iFlow's `session-`).
pub(crate) fn session_named_by(kind: SourceKind, path: &Path, prefix: &str) -> Session {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("unknown");
    let native = stem.strip_prefix(prefix).unwrap_or(stem);
    Session::new(SessionMeta::new(
        ids::session_id(kind, native),
        kind,
        native,
    ))
}

/// Appends `m` to `session` with the next seq, widening the session's times; returns the seq.
pub(crate) fn push(session: &mut Session, m: Message) -> u32 {
    if let Some(ts) = &m.timestamp {
        session.meta.observe_timestamp(ts);
    }
    let seq = u32::try_from(session.messages.len()).unwrap_or(u32::MAX);
    session.messages.push(m.with_seq(seq));
    seq
}
