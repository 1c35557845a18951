//! Claude Code's prompt history, `~/.claude/history.jsonl`: every prompt typed, with its project
//! and time. See `docs/formats/claude-history.md`.
//!
//! Claude Code deletes a session's transcript after `cleanupPeriodDays` (30 by default) but
//! keeps the prompt history, so the prompts of a deleted session are often all that is left.
//! This source makes them searchable: a session per Claude Code session id (or, for older lines
//! without one, per project and day), prompts only, marked in `sessions.metadata`
//! (`{"transcript": "deleted", "prompts_only": true, ...}`).
//!
//! # Layout
//! One JSON object a line, appended as prompts are typed: `display` (the prompt as typed, with
//! `[Pasted text #N +X lines]` / `[Image #N]` placeholders), `pastedContents` (`{"N": {id, type:
//! "text"|"image", content?, contentHash?}}`), `timestamp` (epoch milliseconds), `project` (the
//! working folder), and since mid-2025 `sessionId`.
//!
//! # Mapping
//! - Session id `claude-history:<sessionId>` (never the bare UUID: that is the transcript's id),
//!   else `claude-history:<YYYY-MM-DD>-<8 hex of the project path>` (UTC day); cwd = `project`.
//! - Each line is a `(User, Prompt)`, typed, opening a turn; placeholders are replaced by pasted
//!   text the line carries (`extra` keeps `pastedContents`).
//! - No duplicates: a line whose session's transcript is on disk
//!   (`<history folder>/projects/*/<sessionId>.jsonl`) is skipped here; sessions and prompts the
//!   store already holds from transcripts are dropped by the ingest
//!   ([`Source::reads_after_others`], [`stand_in_for`], [`retain_prompts`]).
//!
//! # Incremental parsing
//! The file only grows (`appendable`). The state maps each session seen to its next `seq` and
//! turn count; a resumed parse appends to those sessions and starts the others.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use trail_model::{
    time, truncate_chars, turns, Message, PromptSource, Session, SessionId, SessionMeta,
    SourceKind, TitleRank, UpdateMode,
};

use crate::{ids, jsonl, FileParse, ParseRequest, Source, SourceError};

/// The prompt history's name in a Claude Code config folder.
pub const FILE_NAME: &str = "history.jsonl";
/// `sessions.metadata.transcript` of a prompts-only session.
pub const TRANSCRIPT_DELETED: &str = "deleted";
const TITLE_CHARS: usize = 200;
const STATE_VERSION: u32 = 1;
/// Most bytes one parse reads when the ingest asks for pieces: a history line is one short
/// prompt, so a piece of the ingest's size would hold several times the messages (and memory)
/// a transcript's would.
const PIECE_BYTES: u64 = 8 << 20;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version.
/// 2: a leading BOM is skipped (issue 40).
pub const PARSER_VERSION: u32 = 2;

/// Claude Code's `history.jsonl`.
pub struct ClaudeHistory;

impl Source for ClaudeHistory {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::ClaudeHistory
    }

    /// Roots are Claude Code config folders (`~/.claude`), or their `projects/` folders.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            let mut candidates = vec![root.join(FILE_NAME)];
            if root.file_name().is_some_and(|n| n == "projects") {
                if let Some(parent) = root.parent() {
                    candidates.push(parent.join(FILE_NAME));
                }
            }
            out.extend(candidates.into_iter().filter(|p| p.is_file()));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if path.file_name().is_none_or(|n| n != FILE_NAME) {
            return false;
        }
        let text = String::from_utf8_lossy(head);
        let Some(first) = text.lines().find(|l| !l.trim().is_empty()) else {
            return false;
        };
        serde_json::from_str::<Value>(first).is_ok_and(|v| {
            v.get("display").is_some_and(Value::is_string)
                && v.get("timestamp").is_some_and(Value::is_number)
                && v.get("uuid").is_none()
        })
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    fn reads_after_others(&self) -> bool {
        true
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        parse_file(request)
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    version: u32,
    /// Per session seen: next seq, turns.
    sessions: BTreeMap<String, (u32, u32)>,
}

/// One line of the history.
#[derive(Debug, Deserialize)]
struct Line {
    display: String,
    #[serde(rename = "pastedContents", default)]
    pasted: Option<Value>,
    timestamp: Option<Value>,
    #[serde(default)]
    project: Option<String>,
    #[serde(rename = "sessionId", default)]
    session_id: Option<String>,
}

fn parse_file(request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
    let path = request.path;
    let resumed = request.resume.and_then(|r| {
        let st: State = serde_json::from_slice(r.state).ok()?;
        (st.version == STATE_VERSION).then_some((st, r.offset, r.line))
    });
    let (mut st, start, start_line) = resumed.unwrap_or_else(|| {
        (
            State {
                version: STATE_VERSION,
                ..State::default()
            },
            0,
            0,
        )
    });
    let on_disk = transcripts_beside(path);
    // Sessions made or extended by this parse, in order of first line.
    let mut order: Vec<String> = Vec::new();
    let mut built: BTreeMap<String, Session> = BTreeMap::new();
    let budget = request.max_bytes.map(|b| b.min(PIECE_BYTES));
    let outcome = jsonl::read_lines_limited(path, start, start_line, budget, |_, raw| {
        let line: Line =
            serde_json::from_str(raw).map_err(|e| format!("not a history line: {e}"))?;
        let ts = line.timestamp.as_ref().and_then(time::from_json);
        let sid = line
            .session_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        if sid.is_some_and(|s| on_disk.contains(s)) {
            return Ok(());
        }
        let project = line.project.clone().filter(|p| !p.is_empty());
        let native = match sid {
            Some(s) => s.to_string(),
            None => {
                let day = ts.as_deref().map_or("undated", |t| &t[..10]).to_string();
                let hash =
                    xxhash_rust::xxh3::xxh3_64(project.as_deref().unwrap_or_default().as_bytes());
                format!("{day}-{:08x}", hash as u32)
            }
        };
        let session = built.entry(native.clone()).or_insert_with(|| {
            order.push(native.clone());
            let known = st.sessions.contains_key(&native);
            new_session(&native, sid, project.as_deref(), known)
        });
        let counters = st.sessions.entry(native).or_insert((0, 0));
        let text = expand_pastes(&line.display, line.pasted.as_ref());
        if session.meta.title.is_none() && session.mode == UpdateMode::Replace {
            session.meta.title = Some(truncate_chars(text.trim(), TITLE_CHARS).to_string());
            session.meta.title_rank = TitleRank::FIRST_PROMPT;
        }
        if let Some(t) = &ts {
            session.meta.observe_timestamp(t);
        }
        let extra = line
            .pasted
            .as_ref()
            .filter(|p| p.as_object().is_some_and(|o| !o.is_empty()))
            .map(Value::to_string);
        session.messages.push(
            Message::prompt(text)
                .with_seq(counters.0)
                .with_timestamp(ts)
                .with_main_chain(true)
                .with_turn(counters.1)
                .with_extra(extra)
                .with_prompt_source(PromptSource::Typed),
        );
        counters.0 += 1;
        counters.1 += 1;
        session.turn_count = counters.1;
        Ok(())
    })?;
    let mut sessions = Vec::new();
    for native in order {
        if let Some(mut s) = built.remove(&native) {
            if s.mode == UpdateMode::Replace {
                s.turns = turns::build_turns(&s.messages);
            }
            sessions.push(s);
        }
    }
    Ok(FileParse {
        sessions,
        issues: outcome.issues,
        bytes_parsed: outcome.bytes_parsed,
        bytes_read: outcome.bytes_read,
        lines: outcome.lines,
        state: serde_json::to_vec(&st).ok(),
        more: outcome.more,
        ..FileParse::default()
    })
}

fn new_session(native: &str, sid: Option<&str>, project: Option<&str>, known: bool) -> Session {
    let id = SessionId::new(format!("{}:{native}", SourceKind::ClaudeHistory.as_str()));
    let mut meta = SessionMeta::new(id, SourceKind::ClaudeHistory, native);
    meta.cwd = project.map(str::to_string);
    let mut facts = json!({
        "transcript": TRANSCRIPT_DELETED,
        "prompts_only": true,
        "from": "~/.claude/history.jsonl",
    });
    if let Some(s) = sid {
        facts["claude_session_id"] = json!(claude_session_id(s));
    }
    meta.metadata = Some(facts);
    let mut s = Session::new(meta);
    s.mode = if known {
        UpdateMode::Append
    } else {
        UpdateMode::Replace
    };
    s
}

/// The store id of the Claude Code session a history session id names.
fn claude_session_id(sid: &str) -> String {
    ids::session_id(SourceKind::ClaudeCode, sid).0
}

/// Returns the store id of the Claude Code session a prompts-only session stands in for, when
/// its lines named one. The ingest drops the session when the store holds that one.
pub fn stand_in_for(session: &Session) -> Option<String> {
    session
        .meta
        .metadata
        .as_ref()?
        .get("claude_session_id")?
        .as_str()
        .map(str::to_string)
}

/// Keeps the prompts `keep` accepts and numbers what is left from `next_seq` and `turns` (what
/// the store holds of the session already: 0 and 0 for a new one). Returns whether any prompt
/// is left.
pub fn retain_prompts(
    session: &mut Session,
    mut keep: impl FnMut(&Message) -> bool,
    next_seq: u32,
    turns_before: u32,
) -> bool {
    session.messages.retain(|m| keep(m));
    for (i, m) in session.messages.iter_mut().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        m.seq = next_seq.saturating_add(i);
        m.turn_index = Some(turns_before.saturating_add(i));
    }
    let n = u32::try_from(session.messages.len()).unwrap_or(u32::MAX);
    session.turn_count = turns_before.saturating_add(n);
    // The session's times are those of the prompts it keeps.
    let mut times = session.messages.iter().filter_map(|m| m.timestamp.clone());
    if let Some(first) = times.next() {
        let last = times.next_back().unwrap_or_else(|| first.clone());
        session.meta.created_at = Some(first);
        session.meta.updated_at = Some(last);
    }
    if session.mode == UpdateMode::Replace {
        session.turns = turns::build_turns(&session.messages);
        session.meta.title = session
            .messages
            .first()
            .map(|m| truncate_chars(m.text.trim(), TITLE_CHARS).to_string());
    }
    !session.messages.is_empty()
}

/// The session ids whose transcript is on disk: `<folder of history.jsonl>/projects/*/*.jsonl`.
fn transcripts_beside(history: &Path) -> HashSet<String> {
    let mut out = HashSet::new();
    let Some(projects) = history.parent().map(|p| p.join("projects")) else {
        return out;
    };
    let Ok(dirs) = std::fs::read_dir(&projects) else {
        return out;
    };
    for d in dirs.filter_map(Result::ok) {
        let Ok(files) = std::fs::read_dir(d.path()) else {
            continue;
        };
        for f in files.filter_map(Result::ok) {
            let name = f.file_name();
            if let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".jsonl")) {
                out.insert(stem.to_string());
            }
        }
    }
    out
}

/// Replaces `[Pasted text #N ...]` placeholders with the text pasted, when the line has it.
fn expand_pastes(display: &str, pasted: Option<&Value>) -> String {
    let Some(map) = pasted.and_then(Value::as_object).filter(|m| !m.is_empty()) else {
        return display.to_string();
    };
    let mut out = String::with_capacity(display.len());
    let mut rest = display;
    while let Some(at) = rest.find("[Pasted text #") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let Some(end) = tail.find(']') else {
            out.push_str(tail);
            return out;
        };
        let inner = &tail["[Pasted text #".len()..end];
        let n: String = inner.chars().take_while(char::is_ascii_digit).collect();
        let content = map
            .get(&n)
            .filter(|p| p.get("type").and_then(Value::as_str) != Some("image"))
            .and_then(|p| p.get("content"))
            .and_then(Value::as_str);
        match content {
            Some(c) => out.push_str(c),
            None => out.push_str(&tail[..=end]),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pastes_are_expanded_when_the_line_has_them() {
        let p = json!({"1": {"id": 1, "type": "text", "content": "line a\nline b"},
                       "2": {"id": 2, "type": "text", "contentHash": "ab12"}});
        assert_eq!(
            expand_pastes(
                "see [Pasted text #1 +2 lines] and [Pasted text #2 +9 lines]",
                Some(&p)
            ),
            "see line a\nline b and [Pasted text #2 +9 lines]"
        );
        assert_eq!(
            expand_pastes("[Pasted text #3", Some(&p)),
            "[Pasted text #3"
        );
        assert_eq!(expand_pastes("plain", None), "plain");
    }
}
