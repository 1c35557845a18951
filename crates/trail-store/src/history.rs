//! A file's history: the sessions and turns that read, edited or created a path, newest first,
//! with the prompt of each turn and the commits the session referenced. Behind `trail why` and
//! the MCP server's `file_history`.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::params;
use serde::Serialize;

use crate::filter::like_escape;
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
    /// Returns every turn that touched the file `m` names, newest first, at most `limit`, one
    /// row per session and turn (a session that recorded the file under two spellings gives
    /// the turn once). `keep` decides, from a session's first row, whether that session's
    /// stored path is the caller's file (the query layer checks the checkout); it is asked
    /// before the session's turns are read, so the answer stops as soon as it is complete.
    pub fn file_history(
        &self,
        m: &FileMatch,
        limit: usize,
        keep: impl Fn(&FileTouchRow) -> bool,
    ) -> Result<Vec<FileTouchRow>> {
        let candidates = self.file_candidates(m)?;
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
        for c in &candidates {
            // Candidates come newest session first, and no turn of a session is newer than
            // the session's last update: once `limit` touches are newer than the next
            // candidate's update, no later candidate can enter the answer.
            if out.len() >= limit {
                if let (Some(kth), Some(next)) = (kth_newest(&out, limit), &c.updated_at) {
                    if kth.as_str() > next.as_str() {
                        break;
                    }
                }
            }
            let probe = FileTouchRow {
                session_id: c.session_id.clone(),
                source: c.source.clone(),
                title: None,
                repository: c.repository.clone(),
                branch: None,
                cwd: c.cwd.clone(),
                file_path: c.file_path.clone(),
                turn: None,
                tool_name: None,
                action: String::new(),
                timestamp: None,
                prompt: None,
                commits: Vec::new(),
            };
            if !keep(&probe) {
                continue;
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
        let mut seen = HashSet::new();
        out.retain(|row| seen.insert((row.session_id.clone(), row.turn)));
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

/// A session that recorded the file (one row of `session_files`), with what a touch row shows.
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
    updated_at: Option<String>,
}

const CANDIDATE_COLUMNS: &str = "sf.session_id, sf.file_path, sf.tool_name, sf.turn_index,
    sf.first_seen_at, s.source, s.summary, s.repository, s.branch, s.cwd, s.updated_at
    FROM session_files sf JOIN sessions s ON s.id = sf.session_id";

impl Store {
    /// The sessions whose recorded files name the file `m` describes, newest first, at most
    /// [`MAX_SESSIONS`]. Each way a stored path can name the file is its own indexed lookup
    /// (an `OR` of them made SQLite scan every stored path):
    /// - the absolute path, or the relative path as given;
    /// - a relative stored path that the session's folder completes into the absolute path
    ///   (one lookup of every tail of the absolute path);
    /// - a stored path ending in `/relative` (any checkout): within the repository when one is
    ///   given, else a scan of the stored paths.
    fn file_candidates(&self, m: &FileMatch) -> Result<Vec<Candidate>> {
        let rel = m
            .relative
            .as_deref()
            .map(|r| r.trim_start_matches("./"))
            .filter(|r| !r.is_empty());
        let abs = m.absolute.as_deref().filter(|a| !a.is_empty());
        let mut found: Vec<Candidate> = Vec::new();
        let mut seen: HashSet<(String, String)> = HashSet::new();
        let mut keep = |rows: Vec<Candidate>, found: &mut Vec<Candidate>| {
            for c in rows {
                if let Some(repo) = &m.repository {
                    if c.repository.as_deref() != Some(repo.as_str()) {
                        continue;
                    }
                }
                if seen.insert((c.session_id.clone(), c.file_path.clone())) {
                    found.push(c);
                }
            }
        };
        let exact: Vec<&str> = abs.into_iter().chain(rel).collect();
        keep(
            self.candidates_where("sf.file_path = ?1", &exact)?,
            &mut found,
        );
        if let Some(abs) = abs {
            // `/home/me/p/src/a.rs` → `home/me/p/src/a.rs`, `me/p/src/a.rs`, ... `a.rs`.
            let tails: Vec<&str> = abs
                .match_indices('/')
                .map(|(i, _)| &abs[i + 1..])
                .filter(|t| !t.is_empty())
                .collect();
            let joined =
                self.candidates_where("sf.file_path = ?1 AND s.cwd IS NOT NULL", &tails)?;
            let completes = |c: &Candidate| {
                c.cwd.as_deref().is_some_and(|cwd| {
                    format!("{}/{}", cwd.trim_end_matches('/'), c.file_path) == abs
                })
            };
            keep(joined.into_iter().filter(completes).collect(), &mut found);
        }
        if let Some(rel) = rel {
            let suffix = format!("%/{}", like_escape(rel));
            let rows = match &m.repository {
                Some(repo) => self.candidates_query(
                    "s.repository = ?1 AND sf.file_path LIKE ?2 ESCAPE '\\'",
                    params![repo, suffix],
                )?,
                None => {
                    self.candidates_query("sf.file_path LIKE ?1 ESCAPE '\\'", params![suffix])?
                }
            };
            keep(rows, &mut found);
        }
        found.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
        found.truncate(MAX_SESSIONS);
        Ok(found)
    }

    /// Runs the candidate query with `condition` once per value (bound as `?1`).
    fn candidates_where(&self, condition: &str, values: &[&str]) -> Result<Vec<Candidate>> {
        let mut out = Vec::new();
        for v in values {
            out.extend(self.candidates_query(condition, params![v])?);
        }
        Ok(out)
    }

    fn candidates_query(
        &self,
        condition: &str,
        args: impl rusqlite::Params,
    ) -> Result<Vec<Candidate>> {
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS} WHERE {condition} ORDER BY s.updated_at DESC LIMIT {MAX_SESSIONS}"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(args, |r| {
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
                updated_at: r.get(10)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// The time of the `k`-th newest distinct turn in `rows` (touches without a time sort last,
/// so they never count).
fn kth_newest(rows: &[FileTouchRow], k: usize) -> Option<String> {
    let mut newest: HashMap<(&str, Option<i64>), &str> = HashMap::new();
    for r in rows {
        if let Some(t) = r.timestamp.as_deref() {
            let e = newest.entry((r.session_id.as_str(), r.turn)).or_insert(t);
            if t > *e {
                *e = t;
            }
        }
    }
    let mut times: Vec<&str> = newest.into_values().collect();
    if times.len() < k {
        return None;
    }
    times.sort_unstable_by(|a, b| b.cmp(a));
    Some(times[k - 1].to_string())
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
