//! `trail standup`: what happened in a time range (default: the last 24 hours), grouped by
//! work stream (repository or folder, and branch).
//!
//! Per stream: the sessions (title, source, when), what was asked (the first prompts, trimmed),
//! the files edited most, the pull requests, issues and commits mentioned (linked on GitHub when
//! the repository is known), and which sessions look done or still in progress: a session
//! active within [`IN_PROGRESS_WINDOW_MINUTES`] of the end of the range is in progress.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use trail_store::Store;

use crate::query::Where;
use crate::text::trim;
use crate::{Filter, Result};

/// A session active this close to the end of the range counts as in progress.
pub const IN_PROGRESS_WINDOW_MINUTES: i64 = 120;
/// Prompts shown per session.
const PROMPTS_PER_SESSION: usize = 3;
/// Characters kept of each prompt.
const PROMPT_CHARS: usize = 160;
/// Sessions a stream lists before "and N more".
const SESSIONS_PER_STREAM: usize = 20;

/// The standup.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standup {
    /// The start of the range (the filter's, or 24 hours before `now`).
    pub since: String,
    /// The end of the range (the filter's, or `now`).
    pub until: String,
    /// Whether the range is the default one (the last 24 hours).
    pub default_range: bool,
    /// The zone the range is shown in (`UTC` unless the caller sets another).
    pub time_zone: String,
    pub source: Option<String>,
    pub repo: Option<String>,
    pub streams: Vec<Stream>,
}

/// A work stream: one repository (or folder) and branch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stream {
    /// `owner/name` when known.
    pub repository: Option<String>,
    /// The folder, when no repository is known.
    pub folder: Option<String>,
    pub branch: Option<String>,
    pub sessions: Vec<StandupSession>,
    /// Sessions not listed (past the limit).
    pub more_sessions: usize,
    pub key_files: Vec<FileEdits>,
    pub refs: Vec<RefLink>,
}

/// A session in a stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StandupSession {
    pub id: String,
    /// The shortest id prefix that opens this session in `trail show` (issue 15); for display
    /// only, JSON carries the whole id.
    #[serde(skip)]
    pub short_id: String,
    pub title: Option<String>,
    pub source: String,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    pub turns: i64,
    /// The first prompts, trimmed.
    pub asked: Vec<String>,
    pub in_progress: bool,
}

/// A file and how many edits it got.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileEdits {
    /// Relative to the stream's folder when inside it.
    pub path: String,
    pub edits: i64,
}

/// A pull request, issue or commit mentioned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefLink {
    /// `pr`, `issue` or `commit`.
    pub kind: String,
    /// `owner/name#12`, or a commit hash.
    pub value: String,
    /// The GitHub page, when the repository is known.
    pub url: Option<String>,
}

/// Repository, folder (when no repository), branch.
type StreamKey = (Option<String>, Option<String>, Option<String>);

struct Row {
    id: String,
    source: String,
    title: Option<String>,
    cwd: Option<String>,
    repository: Option<String>,
    branch: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
    turns: i64,
}

/// Computes the standup. `filter.since` defaults to 24 hours before `now`, `filter.until` to
/// `now`.
#[tracing::instrument(level = "debug", skip_all, err)]
pub fn standup(store: &Store, filter: &Filter, now: DateTime<Utc>) -> Result<Standup> {
    let default_range = filter.since.is_none() && filter.until.is_none();
    let since = filter
        .since
        .clone()
        .map(crate::Timestamp::into_string)
        .unwrap_or_else(|| trail_model::time::format_utc(now - Duration::hours(24)));
    let until = filter
        .until
        .clone()
        .map(crate::Timestamp::into_string)
        .unwrap_or_else(|| trail_model::time::format_utc(now));
    let f = Filter {
        since: Some(since.as_str().into()),
        until: Some(until.as_str().into()),
        ..filter.clone()
    };
    let rows = session_rows(store.connection(), &f)?;
    let cutoff = DateTime::parse_from_rfc3339(&until)
        .map(|t| t.with_timezone(&Utc) - Duration::minutes(IN_PROGRESS_WINDOW_MINUTES))
        .map(trail_model::time::format_utc)
        .unwrap_or_else(|_| until.clone());
    let mut lookups = Lookups::prepare(store.connection())?;
    let mut streams = Vec::new();
    for (key, rows) in group_streams(rows) {
        streams.push(lookups.stream(store, key, &rows, &cutoff)?);
    }
    Ok(Standup {
        since,
        until,
        default_range,
        time_zone: "UTC".into(),
        source: filter.source.map(|s| s.as_str().to_string()),
        repo: filter.repo.clone(),
        streams,
    })
}

/// The top-level sessions of the range, newest first.
fn session_rows(conn: &rusqlite::Connection, f: &Filter) -> Result<Vec<Row>> {
    let w = Where::sessions(f)
        .coding(f)
        .active(f)
        .and("s.parent_session_id IS NULL");
    let sql = format!(
        "SELECT s.id, s.source, s.summary, s.cwd, s.repository, s.branch, s.created_at,
                s.updated_at, s.turn_count
         FROM sessions s WHERE {} ORDER BY s.updated_at DESC, s.id",
        w.sql
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt
        .query_map(w.params(), |r| {
            Ok(Row {
                id: r.get(0)?,
                source: r.get(1)?,
                title: r.get(2)?,
                cwd: r.get(3)?,
                repository: r.get(4)?,
                branch: r.get(5)?,
                created_at: r.get(6)?,
                updated_at: r.get(7)?,
                turns: r.get(8)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// The sessions by stream (repository or folder, and branch), streams in order of their
/// latest activity (rows come newest first).
fn group_streams(rows: Vec<Row>) -> Vec<(StreamKey, Vec<Row>)> {
    let mut order: Vec<StreamKey> = Vec::new();
    let mut by_stream: BTreeMap<StreamKey, Vec<Row>> = BTreeMap::new();
    for r in rows {
        let folder = if r.repository.is_some() {
            None
        } else {
            r.cwd.clone()
        };
        let key = (r.repository.clone(), folder, r.branch.clone());
        if !by_stream.contains_key(&key) {
            order.push(key.clone());
        }
        by_stream.entry(key).or_default().push(r);
    }
    order
        .into_iter()
        .filter_map(|key| by_stream.remove(&key).map(|rows| (key, rows)))
        .collect()
}

/// The statements read for each session of a stream.
struct Lookups<'c> {
    prompts: rusqlite::CachedStatement<'c>,
    edits: rusqlite::CachedStatement<'c>,
    refs: rusqlite::CachedStatement<'c>,
}

impl<'c> Lookups<'c> {
    fn prepare(conn: &'c rusqlite::Connection) -> Result<Lookups<'c>> {
        // What was asked: the prompts a person wrote, not those the agent or a program sent.
        let prompts = conn.prepare_cached(&format!(
            "SELECT user_message FROM turns t WHERE session_id = ?1 AND user_message IS NOT NULL
             AND user_message != '' AND {} ORDER BY turn_index LIMIT ?2",
            crate::query::PERSON_TURN
        ))?;
        // `ORDER BY seq` leads the planner to the tool calls' (session, seq) partial index rather
        // than every message of the session by turn.
        let edits = conn.prepare_cached(
            "SELECT json_extract(tool_input, '$.file_path'), json_extract(tool_input, '$.path'),
                    json_extract(tool_input, '$.filePath'), json_extract(tool_input, '$.notebook_path')
             FROM messages
             WHERE session_id = ?1 AND kind = 'tool_call' AND json_valid(tool_input)
               AND (tool_name LIKE '%edit%' OR tool_name LIKE '%write%' OR tool_name LIKE '%replace%'
                    OR tool_name LIKE '%create%' OR tool_name LIKE '%patch%')
             ORDER BY seq",
        )?;
        let refs = conn.prepare_cached(
            "SELECT ref_type, ref_value FROM session_refs WHERE session_id = ?1 ORDER BY id",
        )?;
        Ok(Lookups {
            prompts,
            edits,
            refs,
        })
    }

    /// One stream: its sessions with what was asked in each, the files edited most and the
    /// references (PRs, issues, commits) the sessions hold.
    fn stream(
        &mut self,
        store: &Store,
        key: StreamKey,
        rows: &[Row],
        cutoff: &str,
    ) -> Result<Stream> {
        let (repository, folder, branch) = key;
        let mut files: BTreeMap<String, i64> = BTreeMap::new();
        let mut links: Vec<RefLink> = Vec::new();
        let mut sessions = Vec::new();
        for r in rows {
            let asked = self
                .prompts
                .query_map(rusqlite::params![r.id, PROMPTS_PER_SESSION as i64], |x| {
                    x.get::<_, String>(0)
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?
                .iter()
                .map(|p| trim(p, PROMPT_CHARS))
                .collect();
            for e in self.edits.query_map([&r.id], |x| {
                Ok([
                    x.get::<_, Option<String>>(0)?,
                    x.get::<_, Option<String>>(1)?,
                    x.get::<_, Option<String>>(2)?,
                    x.get::<_, Option<String>>(3)?,
                ])
            })? {
                if let Some(p) = e?.into_iter().flatten().next() {
                    *files.entry(relative(&p, r.cwd.as_deref())).or_default() += 1;
                }
            }
            for x in self.refs.query_map([&r.id], |x| {
                Ok((x.get::<_, String>(0)?, x.get::<_, String>(1)?))
            })? {
                let (kind, value) = x?;
                if !links.iter().any(|l| l.kind == kind && l.value == value) {
                    let url = link(&kind, &value, repository.as_deref());
                    links.push(RefLink { kind, value, url });
                }
            }
            sessions.push(StandupSession {
                id: r.id.clone(),
                short_id: store.short_id(&r.id)?,
                title: r.title.clone(),
                source: r.source.clone(),
                started_at: r.created_at.clone(),
                updated_at: r.updated_at.clone(),
                turns: r.turns,
                asked,
                in_progress: r.updated_at.as_deref().is_some_and(|u| u >= cutoff),
            });
        }
        let mut key_files: Vec<FileEdits> = files
            .into_iter()
            .map(|(path, edits)| FileEdits { path, edits })
            .collect();
        key_files.sort_by(|a, b| b.edits.cmp(&a.edits).then(a.path.cmp(&b.path)));
        key_files.truncate(5);
        links.sort_by(|a, b| {
            ref_rank(&a.kind)
                .cmp(&ref_rank(&b.kind))
                .then(a.value.cmp(&b.value))
        });
        let more_sessions = sessions.len().saturating_sub(SESSIONS_PER_STREAM);
        sessions.truncate(SESSIONS_PER_STREAM);
        Ok(Stream {
            repository,
            folder,
            branch,
            sessions,
            more_sessions,
            key_files,
            refs: links,
        })
    }
}

fn ref_rank(kind: &str) -> u8 {
    match kind {
        "pr" => 0,
        "issue" => 1,
        _ => 2,
    }
}

/// Returns `path` relative to `cwd` when inside it.
fn relative(path: &str, cwd: Option<&str>) -> String {
    if let Some(c) = cwd {
        let c = c.trim_end_matches('/');
        if let Some(rest) = path.strip_prefix(c).and_then(|r| r.strip_prefix('/')) {
            return rest.to_string();
        }
    }
    path.to_string()
}

/// Returns the GitHub page of a ref. PRs and issues carry their repository (`owner/name#N`);
/// a commit is linked in the stream's repository, when known.
fn link(kind: &str, value: &str, repository: Option<&str>) -> Option<String> {
    match kind {
        "pr" | "issue" => {
            let (repo, num) = value.rsplit_once('#')?;
            let page = if kind == "pr" { "pull" } else { "issues" };
            Some(format!("https://github.com/{repo}/{page}/{num}"))
        }
        "commit" => repository.map(|r| format!("https://github.com/{r}/commit/{value}")),
        _ => None,
    }
}
