//! A file's history (the sessions and turns that read, edited or created it) and `why`: which
//! session is behind a line, through `git blame`.

use std::path::{Component, Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use trail_store::{FileMatch, FileTouchRow};

use crate::{Need, Query, QueryError, Result};

/// Which file, and how much of its history.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FileHistoryRequest {
    /// An absolute path, or one relative to `base_dir` (a person's shell) or to the root of
    /// `repo` (an agent naming `src/main.rs` in `owner/name`).
    pub path: String,
    /// The repository (`owner/name`) a relative path belongs to.
    pub repo: Option<String>,
    /// The folder a relative path is read from (the CLI passes its working directory).
    pub base_dir: Option<String>,
    /// At most this many touches (0: 50).
    pub limit: usize,
}

/// The file as the history understood it, and the turns that touched it, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct FileHistory {
    /// The absolute path, when the file could be placed on this machine.
    pub absolute: Option<String>,
    /// The path inside its repository.
    pub relative: Option<String>,
    /// The repository (`owner/name`), from the checkout's remote or the request.
    pub repository: Option<String>,
    pub touches: Vec<FileTouchRow>,
}

/// The line `git blame` attributed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BlameLine {
    pub line: u32,
    /// The commit's full hash; `None` when the line is not committed yet.
    pub commit: Option<String>,
    pub author: Option<String>,
    /// When the commit was made (ISO-8601 UTC).
    pub committed_at: Option<String>,
    pub summary: Option<String>,
    pub text: String,
}

/// How a session was found for a line.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "how", rename_all = "kebab-case")]
pub enum WhyVerdict {
    /// The session referenced the line's commit (it made or mentioned it).
    ReferencedCommit {
        session_id: String,
        turn: Option<i64>,
    },
    /// No session referenced the commit: the last session that edited the file before the
    /// commit was made (or, for a line not committed yet, the last that edited it at all).
    LastEditBefore {
        session_id: String,
        turn: Option<i64>,
        timestamp: Option<String>,
    },
}

/// `trail why PATH[:LINE]`.
#[derive(Debug, Clone, Serialize)]
pub struct Why {
    pub history: FileHistory,
    pub blame: Option<BlameLine>,
    /// The session behind the line, when one was found.
    pub verdict: Option<WhyVerdict>,
    /// What a session did to the file, as `trail diff` shows it: the verdict's session, or
    /// else the newest session that edited or wrote it (when its records show the change).
    pub change: Option<WhyChange>,
    /// Why a line was asked about but could not be blamed (the file is not on this machine,
    /// not in a git repository, or has fewer lines): the history is still the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blame_unavailable: Option<String>,
}

/// One session's changes to the file `why` was asked about.
#[derive(Debug, Clone, Serialize)]
pub struct WhyChange {
    pub session_id: String,
    pub file: trail_diff::FileDiff,
}

impl Query {
    /// The sessions and turns that touched a file, newest first.
    pub fn file_history(&self, r: &FileHistoryRequest) -> Result<FileHistory> {
        let place = Place::of(r)?;
        let limit = if r.limit == 0 { 50 } else { r.limit };
        // The store asks `place` about each session before reading its turns, so it reads
        // only what the answer needs.
        let touches: Vec<FileTouchRow> = self
            .reader(|| Need::FileNamed(file_name(&r.path)))?
            .file_history(
                &FileMatch {
                    absolute: place.absolute.clone(),
                    relative: place.relative.clone(),
                    repository: None,
                },
                limit,
                |row| place.matches(row),
            )?;
        Ok(FileHistory {
            absolute: place.absolute,
            relative: place.relative,
            repository: place.repository,
            touches,
        })
    }

    /// The history of a file and, for a line, the session behind it: `git blame` names the
    /// line's commit; a session that referenced that commit wins, else the last session that
    /// edited the file before the commit's time.
    pub fn why(&self, r: &FileHistoryRequest, line: Option<u32>) -> Result<Why> {
        let Some(line) = line else {
            let history = self.file_history(r)?;
            let change = self.change_to(&history, None)?;
            return Ok(Why {
                history,
                blame: None,
                verdict: None,
                change,
                blame_unavailable: None,
            });
        };
        // A line's verdict may rest on an edit older than the newest `limit` touches.
        let history = self.file_history(&FileHistoryRequest {
            limit: r.limit.max(200),
            ..r.clone()
        })?;
        let blame = match &history.absolute {
            Some(absolute) if Path::new(absolute).is_file() => {
                blame_line(Path::new(absolute), line)
            }
            _ => Err(QueryError::Git(format!(
                "{} is not a file on this machine, so no line of it can be blamed",
                r.path
            ))),
        };
        // A line that cannot be blamed still leaves the file's history to answer with.
        let (blame, blame_unavailable) = match blame {
            Ok(blame) => (Some(blame), None),
            Err(QueryError::Git(reason)) => (None, Some(reason)),
            Err(e) => return Err(e),
        };
        let mut verdict = None;
        if let Some(commit) = blame.as_ref().and_then(|b| b.commit.as_ref()) {
            let referencing = self
                .reader(|| Need::FileNamed(file_name(&r.path)))?
                .sessions_referencing_commit(commit)?;
            if let Some((session_id, turn)) = referencing.into_iter().next() {
                verdict = Some(WhyVerdict::ReferencedCommit { session_id, turn });
            }
        }
        if let (None, Some(blame)) = (&verdict, &blame) {
            let before = blame.committed_at.as_deref();
            verdict = history
                .touches
                .iter()
                .filter(|t| matches!(t.action.as_str(), "edit" | "write"))
                .filter(|t| match (before, t.timestamp.as_deref()) {
                    (Some(b), Some(ts)) => ts <= b,
                    (Some(_), None) => false,
                    (None, _) => true,
                })
                .max_by(|a, b| a.timestamp.cmp(&b.timestamp))
                .map(|t| WhyVerdict::LastEditBefore {
                    session_id: t.session_id.clone(),
                    turn: t.turn,
                    timestamp: t.timestamp.clone(),
                });
        }
        let mut history = history;
        let verdict_session = verdict.as_ref().map(|v| match v {
            WhyVerdict::ReferencedCommit { session_id, .. }
            | WhyVerdict::LastEditBefore { session_id, .. } => session_id.clone(),
        });
        let change = self.change_to(&history, verdict_session.as_deref())?;
        history
            .touches
            .truncate(if r.limit == 0 { 50 } else { r.limit });
        Ok(Why {
            history,
            blame,
            verdict,
            change,
            blame_unavailable,
        })
    }

    /// What `session` (else the newest session that edited or wrote the file, else the newest
    /// that touched it) changed in the file of `history`, when its records show it.
    fn change_to(&self, history: &FileHistory, session: Option<&str>) -> Result<Option<WhyChange>> {
        let editors: Vec<&str> = match session {
            Some(s) => vec![s],
            None => {
                // Sessions that edited or wrote it first; then the others, newest first (a
                // session may name the file by another spelling in its edits than in the row
                // that matched, and its diff tells).
                let mut v: Vec<&str> = Vec::new();
                for editing in [true, false] {
                    for t in &history.touches {
                        if matches!(t.action.as_str(), "edit" | "write") == editing
                            && !v.contains(&t.session_id.as_str())
                        {
                            v.push(&t.session_id);
                        }
                    }
                }
                v
            }
        };
        // A few sessions at most: each is a diff to build (from a team store, one snapshot
        // holds their rows).
        let editors: Vec<&str> = editors.into_iter().take(3).collect();
        if editors.is_empty() {
            return Ok(None);
        }
        let reader =
            self.reader(|| Need::SessionRows(editors.iter().map(|s| s.to_string()).collect()))?;
        for id in editors {
            let diff = reader.session_diff(id, None)?;
            let paths = [history.absolute.as_deref(), history.relative.as_deref()];
            let found = paths
                .into_iter()
                .flatten()
                .find_map(|p| diff.for_path(p).cloned());
            if let Some(file) = found {
                return Ok(Some(WhyChange {
                    session_id: id.to_string(),
                    file,
                }));
            }
        }
        Ok(None)
    }
}

/// Where a requested file is: on this machine, in a checkout, in a repository.
struct Place {
    absolute: Option<String>,
    relative: Option<String>,
    repository: Option<String>,
    /// The checkout's root on this machine.
    root: Option<String>,
}

impl Place {
    fn of(r: &FileHistoryRequest) -> Result<Place> {
        let path = r.path.trim();
        if path.is_empty() {
            return Err(QueryError::Invalid("the file path is empty".into()));
        }
        let given = Path::new(path);
        let repo = r.repo.as_deref().filter(|s| !s.is_empty());
        let absolute = if given.is_absolute() {
            Some(normalize(given))
        } else if repo.is_some() {
            // Relative to the named repository's root, wherever its checkouts are.
            None
        } else {
            r.base_dir
                .as_deref()
                .map(|b| normalize(&Path::new(b).join(given)))
        };
        let mut place = Place {
            absolute: None,
            relative: None,
            repository: r.repo.clone().filter(|s| !s.is_empty()),
            root: None,
        };
        if let Some(abs) = &absolute {
            // The checkout holding the file, when there is one on this machine.
            let start = abs.parent().unwrap_or(abs);
            if let Some(root) = trail_ingest::git::checkout_root(start) {
                if let Ok(rel) = abs.strip_prefix(&root) {
                    place.relative = Some(slash(rel));
                    place.root = Some(slash(&root));
                }
                if place.repository.is_none() {
                    place.repository = trail_ingest::git::repository_of(start);
                }
            }
            place.absolute = Some(slash(abs));
        } else {
            place.relative = Some(path.trim_start_matches("./").to_string());
        }
        Ok(place)
    }

    /// Whether a stored touch names this file: the same absolute path, or the same path inside
    /// a checkout of the same repository.
    fn matches(&self, row: &FileTouchRow) -> bool {
        let stored = Path::new(&row.file_path);
        let stored_abs = if stored.is_absolute() {
            Some(slash(&normalize(stored)))
        } else {
            row.cwd
                .as_deref()
                .map(|c| slash(&normalize(&Path::new(c).join(stored))))
        };
        if self.absolute.is_some() && stored_abs == self.absolute {
            return true;
        }
        let Some(rel) = &self.relative else {
            return false;
        };
        let same_path = row.file_path == *rel || row.file_path.ends_with(&format!("/{rel}"));
        if !same_path {
            return false;
        }
        let same_repo = self.repository.is_some() && row.repository == self.repository;
        let in_checkout = match (&self.root, &row.cwd) {
            (Some(root), Some(cwd)) => Path::new(cwd).starts_with(root),
            _ => false,
        };
        same_repo || in_checkout
    }
}

/// The last part of a path as written (`src/main.rs` -> `main.rs`): a remote copies only
/// the sessions that touched a file of that name.
fn file_name(path: &str) -> String {
    let path = path.trim().trim_end_matches(['/', '\\']);
    path.rsplit(['/', '\\']).next().unwrap_or(path).to_string()
}

/// Resolves `.` and `..` without touching the file system (the file may be gone).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn slash(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// Runs `git blame --porcelain` on one line of a file.
fn blame_line(file: &Path, line: u32) -> Result<BlameLine> {
    if line == 0 {
        return Err(QueryError::Invalid("lines are numbered from 1".into()));
    }
    let dir = file.parent().unwrap_or(Path::new("."));
    let name = file
        .file_name()
        .ok_or_else(|| QueryError::Git(format!("{} is not a file", file.display())))?;
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["blame", "--porcelain", "-L"])
        .arg(format!("{line},{line}"))
        .arg("--")
        .arg(name)
        .output()
        .map_err(|e| QueryError::Git(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        let msg = msg.lines().next().unwrap_or("git blame failed").trim();
        return Err(QueryError::Git(format!(
            "git blame {}:{line}: {msg}",
            file.display()
        )));
    }
    parse_porcelain(&String::from_utf8_lossy(&out.stdout), line)
        .ok_or_else(|| QueryError::Git(format!("git blame gave nothing for line {line}")))
}

/// Reads one line's `git blame --porcelain` record.
fn parse_porcelain(text: &str, line: u32) -> Option<BlameLine> {
    let mut lines = text.lines();
    let sha = lines.next()?.split_whitespace().next()?.to_string();
    let mut b = BlameLine {
        line,
        commit: (!sha.chars().all(|c| c == '0')).then_some(sha),
        author: None,
        committed_at: None,
        summary: None,
        text: String::new(),
    };
    for l in lines {
        if let Some(t) = l.strip_prefix('\t') {
            b.text = t.to_string();
            break;
        }
        let (key, value) = l.split_once(' ').unwrap_or((l, ""));
        match key {
            "author" => b.author = Some(value.to_string()),
            "committer-time" => {
                b.committed_at = value
                    .parse::<i64>()
                    .ok()
                    .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
                    .map(trail_model::time::format_utc)
            }
            "summary" => b.summary = Some(value.to_string()),
            _ => {}
        }
    }
    if b.commit.is_none() {
        b.author = None;
        b.committed_at = None;
        b.summary = None;
    }
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_records_are_read() {
        let text = "3f2a9c1d00000000000000000000000000000001 7 7 1\nauthor Ada\nauthor-time 1763900000\ncommitter-time 1763900060\nsummary Fix the retry loop\nfilename src/lib.rs\n\tlet retries = 3;\n";
        let b = parse_porcelain(text, 7).unwrap();
        assert_eq!(
            b.commit.as_deref(),
            Some("3f2a9c1d00000000000000000000000000000001")
        );
        assert_eq!(b.author.as_deref(), Some("Ada"));
        assert_eq!(b.committed_at.as_deref(), Some("2025-11-23T12:14:20.000Z"));
        assert_eq!(b.text, "let retries = 3;");
        let uncommitted =
            "0000000000000000000000000000000000000000 1 1 1\nauthor Not Committed Yet\n\tx\n";
        assert_eq!(parse_porcelain(uncommitted, 1).unwrap().commit, None);
    }

    #[test]
    fn dots_resolve_without_the_file_system() {
        assert_eq!(
            normalize(Path::new("/a/b/../c/./d.rs")),
            PathBuf::from("/a/c/d.rs")
        );
    }
}
