//! A file's history: the sessions and turns that read, edited or created a path, newest first,
//! with the prompt of each turn and the commits the session referenced. Behind `trail why` and
//! the MCP server's `file_history`.

use std::collections::{BTreeMap, HashMap};

use rusqlite::params;
use serde::Serialize;

use crate::read::like_escape;
use crate::{Result, Store};

/// Characters of a turn's prompt carried with each touch.
const PROMPT_CHARS: usize = 400;
/// Sessions a file's history reads at most (the newest ones).
const MAX_SESSIONS: usize = 200;

/// Which stored paths name the file.
#[derive(Debug, Clone, Default)]
pub struct FileMatch {
    /// The file's absolute path (as the user's machine names it).
    pub absolute: Option<String>,
    /// The path relative to its repository's root (`src/main.rs`): matches a stored path that
    /// ends with it, in any checkout.
    pub relative: Option<String>,
    /// Only sessions of this repository (`owner/name`).
    pub repository: Option<String>,
}

/// One turn that touched the file.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FileTouchRow {
    pub session_id: String,
    pub source: String,
    pub title: Option<String>,
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub cwd: Option<String>,
    /// The path as the session recorded it.
    pub file_path: String,
    /// The turn (from 0); none when the session recorded the file outside any turn.
    pub turn: Option<i64>,
    /// The tool that touched it (`Edit`, `apply_patch`, `read_file`...).
    pub tool_name: Option<String>,
    /// `read`, `edit`, `write` or `mention` (from the tool's name).
    pub action: String,
    pub timestamp: Option<String>,
    /// The prompt of that turn, cut to a few hundred characters.
    pub prompt: Option<String>,
    /// Commits the session referenced (its `session_refs` of type `commit`).
    pub commits: Vec<String>,
}

/// Classifies a tool by what it does to a file.
pub fn tool_action(tool: &str) -> &'static str {
    let t = tool.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
    if has(&["write", "create"]) {
        "write"
    } else if has(&[
        "edit",
        "patch",
        "replace",
        "insert",
        "str_replace",
        "apply",
        "modify",
        "update",
    ]) {
        "edit"
    } else if has(&["read", "view", "cat", "get_file"]) {
        "read"
    } else {
        "mention"
    }
}

impl Store {
    /// Returns every turn that touched the file `m` names, newest first, at most `limit`.
    pub fn file_history(&self, m: &FileMatch, limit: usize) -> Result<Vec<FileTouchRow>> {
        let rel = m.relative.as_deref().filter(|r| !r.is_empty());
        let suffix = rel.map(|r| format!("%/{}", like_escape(r.trim_start_matches("./"))));
        let mut stmt = self.conn.prepare_cached(
            "SELECT sf.session_id, sf.file_path, sf.tool_name, sf.turn_index, sf.first_seen_at,
                    s.source, s.summary, s.repository, s.branch, s.cwd, s.updated_at
             FROM session_files sf JOIN sessions s ON s.id = sf.session_id
             WHERE sf.file_path = ?1 OR sf.file_path = ?2 OR sf.file_path LIKE ?3 ESCAPE '\\'
                OR (substr(sf.file_path, 1, 1) <> '/' AND ?1 IS NOT NULL
                    AND s.cwd IS NOT NULL AND rtrim(s.cwd, '/') || '/' || sf.file_path = ?1)
             ORDER BY s.updated_at DESC
             LIMIT ?4",
        )?;
        struct Candidate {
            session_id: String,
            file_path: String,
            tool_name: Option<String>,
            turn: Option<i64>,
            first_seen_at: Option<String>,
            source: String,
            title: Option<String>,
            repository: Option<String>,
            branch: Option<String>,
            cwd: Option<String>,
        }
        let candidates: Vec<Candidate> = stmt
            .query_map(params![m.absolute, rel, suffix, MAX_SESSIONS as i64], |r| {
                Ok(Candidate {
                    session_id: r.get(0)?,
                    file_path: r.get(1)?,
                    tool_name: r.get(2)?,
                    turn: r.get(3)?,
                    first_seen_at: r.get(4)?,
                    source: r.get(5)?,
                    title: r.get(6)?,
                    repository: r.get(7)?,
                    branch: r.get(8)?,
                    cwd: r.get(9)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = Vec::new();
        let mut touches = self.conn.prepare_cached(
            "SELECT turn_index, tool_name, timestamp FROM messages
             WHERE session_id = ?1 AND kind = 'tool_call' AND instr(tool_input, ?2) > 0
             ORDER BY seq",
        )?;
        let mut prompt = self.conn.prepare_cached(
            "SELECT substr(user_message, 1, ?3) FROM turns WHERE session_id = ?1 AND turn_index = ?2",
        )?;
        let mut commits = self.conn.prepare_cached(
            "SELECT ref_value FROM session_refs WHERE session_id = ?1 AND ref_type = 'commit'
             ORDER BY id",
        )?;
        for c in candidates {
            if let Some(repo) = &m.repository {
                if c.repository.as_deref() != Some(repo.as_str()) {
                    continue;
                }
            }
            // One row per turn: the strongest action of the turn wins (write > edit > read).
            let mut by_turn: BTreeMap<Option<i64>, TurnTouch> = BTreeMap::new();
            let rows = touches.query_map(params![c.session_id, c.file_path], |r| {
                Ok((
                    r.get::<_, Option<i64>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })?;
            for row in rows {
                let (turn, tool, ts) = row?;
                let action = tool.as_deref().map(tool_action).unwrap_or("mention");
                let entry = by_turn
                    .entry(turn)
                    .or_insert((tool.clone(), action, ts.clone()));
                if rank(action) > rank(entry.1) {
                    *entry = (tool, action, ts.or(entry.2.take()));
                }
            }
            if by_turn.is_empty() {
                let action = c.tool_name.as_deref().map(tool_action).unwrap_or("mention");
                by_turn.insert(
                    c.turn,
                    (c.tool_name.clone(), action, c.first_seen_at.clone()),
                );
            }
            let session_commits: Vec<String> = commits
                .query_map([&c.session_id], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let mut prompts: HashMap<i64, Option<String>> = HashMap::new();
            for (turn, (tool, action, ts)) in by_turn {
                let p = match turn {
                    Some(t) => match prompts.get(&t) {
                        Some(p) => p.clone(),
                        None => {
                            let p: Option<String> = prompt
                                .query_row(params![c.session_id, t, PROMPT_CHARS as i64], |r| {
                                    r.get(0)
                                })
                                .ok()
                                .flatten();
                            prompts.insert(t, p.clone());
                            p
                        }
                    },
                    None => None,
                };
                out.push(FileTouchRow {
                    session_id: c.session_id.clone(),
                    source: c.source.clone(),
                    title: c.title.clone(),
                    repository: c.repository.clone(),
                    branch: c.branch.clone(),
                    cwd: c.cwd.clone(),
                    file_path: c.file_path.clone(),
                    turn,
                    tool_name: tool,
                    action: action.to_string(),
                    timestamp: ts,
                    prompt: p,
                    commits: session_commits.clone(),
                });
            }
        }
        // Newest first; a touch without a time goes last.
        out.sort_by(|a, b| {
            b.timestamp
                .cmp(&a.timestamp)
                .then_with(|| a.session_id.cmp(&b.session_id))
                .then_with(|| b.turn.cmp(&a.turn))
        });
        out.truncate(limit);
        Ok(out)
    }

    /// Returns the sessions that referenced a commit: `sha` is a full or abbreviated hash; a
    /// stored ref matches when one is a prefix of the other (at least 7 characters).
    pub fn sessions_referencing_commit(&self, sha: &str) -> Result<Vec<(String, Option<i64>)>> {
        let sha = sha.to_ascii_lowercase();
        if sha.len() < 7 {
            return Ok(Vec::new());
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT session_id, turn_index FROM session_refs
             WHERE ref_type = 'commit' AND length(ref_value) >= 7
               AND (substr(?1, 1, length(ref_value)) = lower(ref_value)
                    OR substr(lower(ref_value), 1, length(?1)) = ?1)
             ORDER BY id",
        )?;
        let rows = stmt.query_map([&sha], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// The tool, action and time of a turn's strongest touch of a file.
type TurnTouch = (Option<String>, &'static str, Option<String>);

fn rank(action: &str) -> u8 {
    match action {
        "write" => 3,
        "edit" => 2,
        "read" => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::tool_action;

    #[test]
    fn tools_are_classified_by_what_they_do() {
        assert_eq!(tool_action("Write"), "write");
        assert_eq!(tool_action("create_file"), "write");
        assert_eq!(tool_action("Edit"), "edit");
        assert_eq!(tool_action("MultiEdit"), "edit");
        assert_eq!(tool_action("apply_patch"), "edit");
        assert_eq!(tool_action("replace_string_in_file"), "edit");
        assert_eq!(tool_action("Read"), "read");
        assert_eq!(tool_action("read_file"), "read");
        assert_eq!(tool_action("Bash"), "mention");
    }
}
