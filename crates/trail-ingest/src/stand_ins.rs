//! Sessions that stand in for another source's: Claude Code's prompt history keeps the prompts
//! of sessions whose transcripts Claude Code deleted. Before such a record is written, what the
//! store already holds from the transcripts is taken out, and what remains is numbered after
//! what is stored, so nothing is indexed twice.

use std::collections::HashMap;

use trail_model::{time, Message, SourceKind, UpdateMode};
use trail_sources::claude_history;
use trail_store::{FileRecord, Store, StoreError};

/// A history line and a stored prompt this close in time (and of the same text) are one prompt.
const SAME_PROMPT_SECONDS: i64 = 60;
/// Texts that agree on this many first characters are the same prompt (a paste the history
/// kept as a placeholder, a prompt the transcript stored with attachments).
const SAME_PREFIX_CHARS: usize = 40;

/// Drops from a Claude Code history record the sessions the store holds as transcripts, and
/// the undated-session prompts a stored transcript already has; renumbers the rest.
pub(crate) fn drop_held_elsewhere(
    store: &Store,
    record: &mut FileRecord,
) -> Result<(), StoreError> {
    if record.source != Some(SourceKind::ClaudeHistory) {
        return Ok(());
    }
    let mut kept = Vec::with_capacity(record.sessions.len());
    // Claude Code sessions per folder, read once per record: a history holds many undated
    // prompts per folder.
    let mut by_folder: HashMap<String, Vec<(String, String, String)>> = HashMap::new();
    for mut s in std::mem::take(&mut record.sessions) {
        let real = claude_history::stand_in_for(&s);
        if let Some(real) = &real {
            if store.has_session(real)? {
                continue;
            }
        }
        let (next, turns) = match s.mode {
            UpdateMode::Append if store.has_session(s.meta.id.as_str())? => {
                store.session_extent(s.meta.id.as_str())?
            }
            _ => {
                // Not stored (new, or every earlier prompt was dropped): written whole.
                s.mode = UpdateMode::Replace;
                (0, 0)
            }
        };
        let mut keep = Vec::with_capacity(s.messages.len());
        for m in &s.messages {
            let dup = match (&real, s.meta.cwd.as_deref()) {
                (None, Some(cwd)) => {
                    if !by_folder.contains_key(cwd) {
                        let found = store.sessions_in(SourceKind::ClaudeCode.as_str(), cwd)?;
                        by_folder.insert(cwd.to_string(), found);
                    }
                    stored_prompt(store, &by_folder[cwd], m)?
                }
                _ => false,
            };
            keep.push(!dup);
        }
        let mut verdicts = keep.into_iter();
        if claude_history::retain_prompts(&mut s, |_| verdicts.next().unwrap_or(true), next, turns)
        {
            kept.push(s);
        }
    }
    record.sessions = kept;
    Ok(())
}

/// Whether one of `sessions` (Claude Code sessions of the prompt's folder: id, first and last
/// time) has this prompt, within a minute of it.
fn stored_prompt(
    store: &Store,
    sessions: &[(String, String, String)],
    m: &Message,
) -> Result<bool, StoreError> {
    let Some(ts) = m.timestamp.as_deref() else {
        return Ok(false);
    };
    let (Some(from), Some(to)) = (
        time::shift_seconds(ts, -SAME_PROMPT_SECONDS),
        time::shift_seconds(ts, SAME_PROMPT_SECONDS),
    ) else {
        return Ok(false);
    };
    let want = m.text.trim();
    for (id, first, last) in sessions {
        // Only sessions whose time span meets the minute around the prompt.
        if first.as_str() > to.as_str() || (!last.is_empty() && last.as_str() < from.as_str()) {
            continue;
        }
        let texts = store.prompts_between(id, &from, &to)?;
        if texts.iter().any(|t| same_prompt(t.trim(), want)) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn same_prompt(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let long = |s: &str| s.chars().count() >= SAME_PREFIX_CHARS;
    long(a)
        && long(b)
        && a.chars()
            .take(SAME_PREFIX_CHARS)
            .eq(b.chars().take(SAME_PREFIX_CHARS))
}
