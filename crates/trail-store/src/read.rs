//! Queries behind `list`, `show` and `doctor`. Every value is bound, never formatted into SQL.

use rusqlite::{params, OptionalExtension, ToSql};
use serde::Serialize;
use trail_model::{MessageKind, Role, SessionId, Source};

use crate::filter::{like_escape, Filter, Where};
use crate::{Result, Store, StoreError};

/// A session as `list` shows it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SessionRow {
    pub id: SessionId,
    pub source: Source,
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub turns: i64,
    pub messages: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_creation_tokens: i64,
    pub cache_read_tokens: i64,
    pub models: Vec<String>,
    pub parent_session_id: Option<String>,
    pub parent_tool_call_id: Option<String>,
    pub agent_version: Option<String>,
    pub source_path: Option<String>,
    pub source_missing: bool,
    /// A chat (a chat service's data export), not a coding session: its metadata says
    /// `"chat": true` ([`crate::is_chat_sql`]).
    pub chat: bool,
}

impl SessionRow {
    /// Returns all tokens (input, output, cache write, cache read).
    pub fn total_tokens(&self) -> i64 {
        self.input_tokens + self.output_tokens + self.cache_creation_tokens + self.cache_read_tokens
    }
}

/// Filters for `list`.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Which sessions: those active in the time range (updated at or after `since`, started
    /// before `until`).
    pub filter: Filter,
    pub limit: Option<usize>,
    /// Include subagent sessions.
    pub include_subagents: bool,
    /// Keyset paging: only sessions after this `(updated_at, id)` in the list's order
    /// (newest first, then by id; oldest first with `oldest_first`).
    pub after: Option<(String, String)>,
    /// Least recently active first (the keyset runs the other way).
    pub oldest_first: bool,
}

const SESSION_COLUMNS: &str =
    "id, source, summary, cwd, repository, branch, created_at, updated_at,
    turn_count, message_count, input_tokens, output_tokens, cache_creation_tokens,
    cache_read_tokens, models, parent_session_id, parent_tool_call_id, agent_version,
    source_path, source_missing,
    coalesce(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.chat') END, 0) = 1";

fn session_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    let models: Option<String> = r.get(14)?;
    Ok(SessionRow {
        id: SessionId(r.get(0)?),
        source: Source::from(r.get::<_, String>(1)?),
        title: r.get(2)?,
        cwd: r.get(3)?,
        repository: r.get(4)?,
        branch: r.get(5)?,
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
        turns: r.get(8)?,
        messages: r.get(9)?,
        input_tokens: r.get(10)?,
        output_tokens: r.get(11)?,
        cache_creation_tokens: r.get(12)?,
        cache_read_tokens: r.get(13)?,
        models: models
            .and_then(|m| serde_json::from_str(&m).ok())
            .unwrap_or_default(),
        parent_session_id: r.get(15)?,
        parent_tool_call_id: r.get(16)?,
        agent_version: r.get(17)?,
        source_path: r.get(18)?,
        source_missing: r.get::<_, i64>(19)? != 0,
        chat: r.get::<_, i64>(20)? != 0,
    })
}

/// One message as `show` prints it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MessageRow {
    pub seq: i64,
    /// None when the stored role is one this version does not know.
    pub role: Option<Role>,
    /// None when the stored kind is one this version does not know.
    pub kind: Option<MessageKind>,
    pub text: Option<String>,
    pub tool_name: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_input: Option<String>,
    pub tool_output: Option<String>,
    pub is_error: bool,
    pub model: Option<String>,
    pub timestamp: Option<String>,
    pub is_sidechain: bool,
    pub on_main_chain: bool,
    pub turn_index: Option<i64>,
}

/// A tool call that may have changed a file (see [`Store::edit_calls`]).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct EditCallRow {
    pub seq: i64,
    pub tool_name: String,
    pub tool_input: Option<String>,
    pub turn_index: Option<i64>,
    pub timestamp: Option<String>,
    /// The call's result was an error (the edit was not applied).
    pub is_error: bool,
    pub tool_output: Option<String>,
}

/// The columns [`message_from_row`] reads, in its order.
const MESSAGE_COLUMNS: &str = "seq, role, kind, text, tool_name, tool_call_id, tool_input, \
     tool_output, is_error, model, timestamp, is_sidechain, on_main_chain, turn_index";

/// Reads a [`MessageRow`] from the first 14 columns: seq, role, kind, text, tool_name,
/// tool_call_id, tool_input, tool_output, is_error, model, timestamp, is_sidechain,
/// on_main_chain, turn_index ([`MESSAGE_COLUMNS`]).
pub(crate) fn message_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<MessageRow> {
    Ok(MessageRow {
        seq: r.get(0)?,
        role: r
            .get::<_, Option<String>>(1)?
            .as_deref()
            .and_then(Role::parse),
        kind: r
            .get::<_, Option<String>>(2)?
            .as_deref()
            .and_then(MessageKind::parse),
        text: r.get(3)?,
        tool_name: r.get(4)?,
        tool_call_id: r.get(5)?,
        tool_input: r.get(6)?,
        tool_output: r.get(7)?,
        is_error: r.get::<_, i64>(8)? != 0,
        model: r.get(9)?,
        timestamp: r.get(10)?,
        is_sidechain: r.get::<_, i64>(11)? != 0,
        on_main_chain: r.get::<_, i64>(12)? != 0,
        turn_index: r.get(13)?,
    })
}

/// A session with its messages, subagents, files and refs.
#[derive(Debug, Clone, Serialize)]
pub struct SessionDetail {
    pub session: SessionRow,
    pub messages: Vec<MessageRow>,
    pub subagents: Vec<SessionRow>,
    pub files: Vec<(String, Option<String>)>,
    pub refs: Vec<(String, String)>,
    pub checkpoints: Vec<(i64, Option<String>)>,
    /// Continuation links either way: the session this one continues, the sessions that
    /// continue it (`trail resume ID --in AGENT`).
    pub continuations: Vec<ContinuationLink>,
}

/// A continuation link between two sessions (`trail resume ID --in AGENT`): `continuation`
/// was written from `original`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ContinuationLink {
    /// The session that was continued.
    pub original_id: String,
    /// Its source, as the continuation's first line names it.
    pub original_source: String,
    /// The session written in the other agent.
    pub continuation_id: String,
    /// The agent it was written for.
    pub continuation_source: String,
}

/// Per-source counts for `doctor`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct SourceStats {
    pub source: String,
    pub sessions: i64,
    pub files: i64,
    pub files_missing: i64,
    pub parse_issues: i64,
}

/// Per-file counts for `doctor --files`.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorFileStats {
    pub path: String,
    pub source: String,
    pub bytes_parsed: i64,
    pub issue_count: i64,
    pub missing: bool,
    pub last_error: Option<String>,
    pub notes: Option<String>,
}

/// A parse problem.
#[derive(Debug, Clone, Serialize)]
pub struct IssueRow {
    pub path: String,
    pub source: String,
    pub line: Option<i64>,
    pub byte_offset: Option<i64>,
    pub excerpt: Option<String>,
    pub reason: String,
}

impl Store {
    /// Returns the distinct folders sessions ran in (`cwd`), sorted: the project folders the
    /// ingest searches for files kept inside projects (SpecStory histories).
    pub fn known_cwds(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(
            "SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL AND cwd != '' ORDER BY cwd",
        )?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Lists sessions, most recently updated first.
    pub fn list_sessions(&self, f: &ListFilter) -> Result<Vec<SessionRow>> {
        let w = Where::sessions(&f.filter).active(&f.filter);
        let mut sql = format!("SELECT {SESSION_COLUMNS} FROM sessions s WHERE {}", w.sql);
        let mut args: Vec<Box<dyn ToSql>> = w
            .args
            .into_iter()
            .map(|v| Box::new(v) as Box<dyn ToSql>)
            .collect();
        if let Some((updated, id)) = &f.after {
            sql.push_str(if f.oldest_first {
                " AND (coalesce(updated_at, '') > ? OR (coalesce(updated_at, '') = ? AND id > ?))"
            } else {
                " AND (coalesce(updated_at, '') < ? OR (coalesce(updated_at, '') = ? AND id > ?))"
            });
            args.push(Box::new(updated.clone()));
            args.push(Box::new(updated.clone()));
            args.push(Box::new(id.clone()));
        }
        if !f.include_subagents {
            // A session linked to one the store does not hold (a SpecStory copy whose original
            // was never indexed, a subagent whose parent file is gone) is the only record of
            // it, so it is listed.
            sql.push_str(
                " AND (parent_session_id IS NULL OR NOT EXISTS \
                 (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id))",
            );
        }
        sql.push_str(if f.oldest_first {
            " ORDER BY coalesce(updated_at, '') ASC, id"
        } else {
            " ORDER BY coalesce(updated_at, '') DESC, id"
        });
        if let Some(l) = f.limit {
            sql.push_str(" LIMIT ?");
            args.push(Box::new(l as i64));
        }
        let mut stmt = self.conn.prepare(&sql)?;
        let refs: Vec<&dyn ToSql> = args.iter().map(|b| b.as_ref()).collect();
        let rows = stmt.query_map(refs.as_slice(), session_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Resolves a session id or a unique prefix of one.
    ///
    /// An exact id wins. Otherwise the ids the prefix starts (ASCII case ignored, as `LIKE`
    /// does) must be one session and, optionally, ids that extend it (a main session and its
    /// subagents, `ID:agent-...`): the shortest is chosen. Anything else is ambiguous.
    pub fn resolve_session_id(&self, id_or_prefix: &str) -> Result<String> {
        if self
            .conn
            .prepare_cached("SELECT 1 FROM sessions WHERE id = ?1")?
            .exists([id_or_prefix])?
        {
            return Ok(id_or_prefix.to_string());
        }
        let pat = format!("{}%", like_escape(id_or_prefix));
        let shortest: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT id FROM sessions WHERE id LIKE ?1 ESCAPE '\\' ORDER BY length(id), id LIMIT 1",
            )?
            .query_row([&pat], |r| r.get(0))
            .optional()?;
        let Some(shortest) = shortest else {
            return Err(StoreError::NotFound(id_or_prefix.to_string()));
        };
        let other: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT id FROM sessions WHERE id LIKE ?1 ESCAPE '\\'
                 AND NOT id LIKE ?2 ESCAPE '\\' ORDER BY length(id), id LIMIT 1",
            )?
            .query_row([&pat, &format!("{}%", like_escape(&shortest))], |r| {
                r.get(0)
            })
            .optional()?;
        match other {
            None => Ok(shortest),
            Some(other) => Err(StoreError::Ambiguous {
                prefix: id_or_prefix.to_string(),
                count: self.count_prefix(id_or_prefix)?,
                examples: format!("{shortest}, {other}"),
            }),
        }
    }

    /// Returns the shortest prefix of session `id` that [`Store::resolve_session_id`] resolves
    /// to exactly that session (issue 15): at least [`SHORT_ID_MIN`] characters (as git
    /// shortens commit ids; counted after a source prefix such as `opencode:`), longer where
    /// another id shares more, the whole id when only the whole id tells it apart.
    ///
    /// A prefix resolves to `id` when every id it starts is `id` or extends it (its
    /// subagents), so the prefix must be longer than what `id` shares with any id that does
    /// not extend it. In `COLLATE NOCASE` order (prefixes match with `LIKE`, which ignores
    /// ASCII case) the one sharing the most is the id just before `id` or the first after it
    /// that does not extend it: two probes of `idx_sessions_id_nocase` (migration 8),
    /// whatever the store's size.
    pub fn short_id(&self, id: &str) -> Result<String> {
        // An id differing from `id` only in case matches every prefix `id` has and sorts
        // first or last by chance: only the whole id opens `id` for sure.
        let twin = self
            .conn
            .prepare_cached(
                "SELECT 1 FROM sessions WHERE id = ?1 COLLATE NOCASE AND id <> ?1 COLLATE BINARY",
            )?
            .exists([id])?;
        if twin {
            return Ok(id.to_string());
        }
        let before: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT id FROM sessions WHERE id COLLATE NOCASE < ?1
                 ORDER BY id COLLATE NOCASE DESC LIMIT 1",
            )?
            .query_row([id], |r| r.get(0))
            .optional()?;
        let after: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT id FROM sessions WHERE id COLLATE NOCASE > ?1
                 AND NOT id LIKE ?2 ESCAPE '\\' ORDER BY id COLLATE NOCASE LIMIT 1",
            )?
            .query_row(params![id, format!("{}%", like_escape(id))], |r| r.get(0))
            .optional()?;
        let shared = [before, after]
            .iter()
            .flatten()
            .map(|other| common_prefix_nocase(id, other))
            .max()
            .unwrap_or(0);
        Ok(shortest_prefix(id, shared + 1))
    }

    /// Returns [`Store::short_id`] for each of `ids`, by id.
    pub fn short_ids<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> Result<std::collections::HashMap<String, String>> {
        let mut out = std::collections::HashMap::new();
        for id in ids {
            if !out.contains_key(id) {
                out.insert(id.to_string(), self.short_id(id)?);
            }
        }
        Ok(out)
    }

    fn count_prefix(&self, prefix: &str) -> Result<usize> {
        let pat = format!("{}%", like_escape(prefix));
        Ok(self.conn.query_row(
            "SELECT count(*) FROM sessions WHERE id LIKE ?1 ESCAPE '\\'",
            [pat],
            |r| r.get::<_, i64>(0),
        )? as usize)
    }

    /// Returns one session row.
    pub fn session(&self, id: &str) -> Result<SessionRow> {
        self.find_session(id)?
            .ok_or_else(|| StoreError::NotFound(id.to_string()))
    }

    /// Returns the agent's own id of a session (what its agent resumes with), when recorded.
    pub fn native_id(&self, id: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT native_id FROM sessions WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?
            .flatten())
    }

    /// Returns the sessions whose parent is `id`, oldest first.
    pub fn subagent_sessions(&self, id: &str) -> Result<Vec<SessionRow>> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {SESSION_COLUMNS} FROM sessions WHERE parent_session_id = ?1
                 ORDER BY created_at, id"
            ))?
            .query_map([id], session_from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Returns, for each of `ids` that has any, how many sessions descend from it (subagents,
    /// forks and theirs, through `parent_session_id`; 64 levels at most, so corrupt links
    /// cannot loop).
    pub fn descendant_counts(
        &self,
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, i64>> {
        let mut counts = std::collections::HashMap::new();
        // One statement per id keeps every value bound and the plan on idx_sessions_parent; a
        // browser asks for one page of ids at a time.
        let mut stmt = self.conn.prepare_cached(
            "WITH RECURSIVE below(id, depth) AS (
                 SELECT id, 1 FROM sessions WHERE parent_session_id = ?1
                 UNION
                 SELECT s.id, below.depth + 1 FROM sessions s
                 JOIN below ON s.parent_session_id = below.id
                 WHERE below.depth < 64
             )
             SELECT count(DISTINCT id) FROM below",
        )?;
        for id in ids {
            let n: i64 = stmt.query_row([id], |r| r.get(0))?;
            if n > 0 {
                counts.insert(id.clone(), n);
            }
        }
        Ok(counts)
    }

    /// Returns the session row of `id` if it exists.
    pub fn find_session(&self, id: &str) -> Result<Option<SessionRow>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?1"),
                [id],
                session_from_row,
            )
            .optional()?)
    }

    /// Returns a session with everything `show` needs.
    pub fn session_detail(&self, id: &str) -> Result<SessionDetail> {
        self.session_detail_turns(id, None)
    }

    /// Returns a session with everything `show` needs, its messages only those of turns
    /// `lo..=hi` when a range is given. The range is applied in SQL, so a preview of one turn
    /// of a session with megabytes of tool output reads only that turn's text.
    pub fn session_detail_turns(
        &self,
        id: &str,
        turns: Option<(i64, i64)>,
    ) -> Result<SessionDetail> {
        let session = self.session(id)?;
        let messages = match turns {
            None => self
                .conn
                .prepare_cached(&format!(
                    "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ?1 ORDER BY seq"
                ))?
                .query_map(rusqlite::params![id], message_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?,
            // `+seq`: without statistics the planner walked the whole session in `seq` order
            // to skip a sort, reading every row (past megabytes of tool output) to test its
            // turn; the unary plus leaves it the (session, turn) index.
            Some((lo, hi)) => self
                .conn
                .prepare_cached(&format!(
                    "SELECT {MESSAGE_COLUMNS} FROM messages
                     WHERE session_id = ?1 AND turn_index BETWEEN ?2 AND ?3 ORDER BY +seq"
                ))?
                .query_map(rusqlite::params![id, lo, hi], message_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?,
        };
        let subagents = self.subagent_sessions(id)?;
        let files = self
            .conn
            .prepare(
                "SELECT file_path, tool_name FROM session_files WHERE session_id = ?1 ORDER BY id",
            )?
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let refs = self
            .conn
            .prepare(
                "SELECT ref_type, ref_value FROM session_refs WHERE session_id = ?1 ORDER BY id",
            )?
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let checkpoints = self
            .conn
            .prepare(
                "SELECT checkpoint_number, title FROM checkpoints WHERE session_id = ?1 ORDER BY checkpoint_number",
            )?
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let continuations = self.continuation_links(&[id])?;
        Ok(SessionDetail {
            session,
            messages,
            subagents,
            files,
            refs,
            checkpoints,
            continuations,
        })
    }

    /// Returns the tool calls of session `id` (main chain, in order) that may have changed a
    /// file, with whether their result was an error: what `trail diff` rebuilds edits from.
    /// `names` are the tool names to read (every format's edit tools); `turn` keeps one turn.
    /// The call is found by its id and position (the `(session_id, tool_call_id)` index): by
    /// position alone, every call of the session was scanned for each (quadratic). A call with
    /// no id has no result row either, so nothing is lost.
    pub fn edit_calls(
        &self,
        id: &str,
        names: &[&str],
        turn: Option<i64>,
    ) -> Result<Vec<EditCallRow>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT m.seq, m.tool_name, m.tool_input, m.turn_index, m.timestamp,
                    COALESCE(tc.is_error, 0), r.tool_output
             FROM messages m
             LEFT JOIN tool_calls tc ON tc.session_id = m.session_id
                  AND tc.tool_call_id = m.tool_call_id AND tc.call_seq = m.seq
             LEFT JOIN messages r ON r.session_id = m.session_id AND r.seq = tc.result_seq
             WHERE m.session_id = ?1 AND m.kind = 'tool_call' AND m.on_main_chain = 1
               AND (m.tool_name IN (SELECT value FROM json_each(?2))
                    OR instr(m.tool_input, '*** Begin Patch') > 0)
               AND (?3 IS NULL OR m.turn_index = ?3)
             ORDER BY m.seq",
        )?;
        let names = serde_json::to_string(names).unwrap_or_else(|_| "[]".into());
        let rows = stmt
            .query_map(params![id, names, turn], |r| {
                Ok(EditCallRow {
                    seq: r.get(0)?,
                    tool_name: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                    tool_input: r.get(2)?,
                    turn_index: r.get(3)?,
                    timestamp: r.get(4)?,
                    is_error: r.get::<_, i64>(5)? != 0,
                    tool_output: r.get(6)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Returns what session `id` changed, per file (edit tool inputs, `apply_patch` bodies,
    /// file snapshots; see `trail_diff`); with `turn`, only the changes made in that turn. The
    /// one implementation `trail-query`, the exports and every frontend share.
    pub fn session_diff(&self, id: &str, turn: Option<u32>) -> Result<trail_diff::SessionDiff> {
        // Every turn is read: an edit applies to the content earlier turns left.
        let calls: Vec<trail_diff::EditCall> = self
            .edit_calls(id, trail_diff::EDIT_TOOLS, None)?
            .into_iter()
            .map(|r| trail_diff::EditCall {
                seq: r.seq,
                tool_name: r.tool_name,
                input: r.tool_input.unwrap_or_default(),
                turn: r.turn_index.and_then(|t| u32::try_from(t).ok()),
                timestamp: r.timestamp,
                failed: r.is_error,
            })
            .collect();
        let snapshots = self.file_snapshots(id)?;
        Ok(match turn {
            Some(t) => trail_diff::build_turn(&calls, &snapshots, t),
            None => trail_diff::build(&calls, &snapshots),
        })
    }

    /// Returns the file snapshots stored for session `id`, by path and version.
    pub fn file_snapshots(&self, id: &str) -> Result<Vec<trail_model::FileSnapshot>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT file_path, version, turn_index, content, taken_at, origin
             FROM file_snapshots WHERE session_id = ?1 ORDER BY file_path, version",
        )?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(trail_model::FileSnapshot {
                    path: r.get(0)?,
                    version: r.get::<_, i64>(1)? as u32,
                    turn_index: r.get::<_, Option<i64>>(2)?.map(|t| t as u32),
                    content: r.get(3)?,
                    taken_at: r.get(4)?,
                    origin: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// Returns the continuation links that touch any of `ids`, either way: the sessions they
    /// continue and the sessions that continue them (oldest continuation first).
    pub fn continuation_links(&self, ids: &[&str]) -> Result<Vec<ContinuationLink>> {
        let mut out: Vec<ContinuationLink> = Vec::new();
        let mut by_continuation = self.conn.prepare_cached(
            "SELECT continues_session_id, continues_source, id, source FROM sessions
             WHERE id = ?1 AND continues_session_id IS NOT NULL",
        )?;
        let mut by_original = self.conn.prepare_cached(
            "SELECT continues_session_id, continues_source, id, source FROM sessions
             WHERE continues_session_id = ?1 ORDER BY created_at, id",
        )?;
        let link = |r: &rusqlite::Row<'_>| {
            Ok(ContinuationLink {
                original_id: r.get(0)?,
                original_source: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                continuation_id: r.get(2)?,
                continuation_source: r.get(3)?,
            })
        };
        for id in ids {
            for stmt in [&mut by_continuation, &mut by_original] {
                for l in stmt.query_map([id], link)? {
                    let l = l?;
                    if !out.contains(&l) {
                        out.push(l);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Calls `f` with the messages of session `id` from `from_seq` on, in order, until it
    /// returns false. Rows are read one at a time (through the `(session_id, seq)` index), so a
    /// frontend paging a long session reads only the page it shows.
    pub fn for_each_message_from(
        &self,
        id: &str,
        from_seq: i64,
        mut f: impl FnMut(MessageRow) -> bool,
    ) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ?1 AND seq >= ?2
             ORDER BY seq"
        ))?;
        let mut rows = stmt.query(params![id, from_seq])?;
        while let Some(r) = rows.next()? {
            if !f(message_from_row(r)?) {
                break;
            }
        }
        Ok(())
    }

    /// Returns a value from `store_meta`.
    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM store_meta WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// When an index run last finished: `store_meta.last_index_at`, or for a store written
    /// before that key existed, the newest time a source file was read.
    pub fn last_indexed_at(&self) -> Result<Option<String>> {
        if let Some(t) = self.meta(LAST_INDEX_AT)? {
            return Ok(Some(t));
        }
        Ok(self
            .conn
            .query_row("SELECT max(indexed_at) FROM source_files", [], |r| r.get(0))?)
    }

    /// Returns per-source counts.
    pub fn source_stats(&self) -> Result<Vec<SourceStats>> {
        let mut out: Vec<SourceStats> = Vec::new();
        let mut stmt = self
            .conn
            .prepare("SELECT source, count(*) FROM sessions GROUP BY source")?;
        for r in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
            let (source, n) = r?;
            stats_for(&mut out, &source).sessions = n;
        }
        let mut stmt = self.conn.prepare(
            "SELECT source, count(*), sum(missing), sum(issue_count) FROM source_files GROUP BY source",
        )?;
        for r in stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<i64>>(2)?,
                r.get::<_, Option<i64>>(3)?,
            ))
        })? {
            let (source, files, missing, issues) = r?;
            let s = stats_for(&mut out, &source);
            s.files = files;
            s.files_missing = missing.unwrap_or(0);
            s.parse_issues = issues.unwrap_or(0);
        }
        Ok(out)
    }

    /// Returns parse problems, newest files first, at most `limit`.
    pub fn parse_issues(&self, source: Option<&str>, limit: usize) -> Result<Vec<IssueRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT path, source, line, byte_offset, excerpt, reason FROM parse_issues
             WHERE ?1 IS NULL OR source = ?1 ORDER BY path, line LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![source, limit as i64], |r| {
            Ok(IssueRow {
                path: r.get(0)?,
                source: r.get(1)?,
                line: r.get(2)?,
                byte_offset: r.get(3)?,
                excerpt: r.get(4)?,
                reason: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Returns files that failed or carry notes.
    pub fn file_notes(&self) -> Result<Vec<DoctorFileStats>> {
        let mut stmt = self.conn.prepare(
            "SELECT path, source, bytes_parsed, issue_count, missing, last_error, notes FROM source_files
             WHERE last_error IS NOT NULL OR notes IS NOT NULL ORDER BY path",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(DoctorFileStats {
                path: r.get(0)?,
                source: r.get(1)?,
                bytes_parsed: r.get(2)?,
                issue_count: r.get(3)?,
                missing: r.get::<_, i64>(4)? != 0,
                last_error: r.get(5)?,
                notes: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

fn stats_for<'a>(v: &'a mut Vec<SourceStats>, source: &str) -> &'a mut SourceStats {
    if let Some(i) = v.iter().position(|s| s.source == source) {
        return &mut v[i];
    }
    v.push(SourceStats {
        source: source.to_string(),
        ..SourceStats::default()
    });
    v.last_mut().expect("just pushed")
}

/// The `store_meta` key of the time the last index run finished.
pub const LAST_INDEX_AT: &str = "last_index_at";

/// Characters a short session id has at least (see [`Store::short_id`]).
pub const SHORT_ID_MIN: usize = 8;

/// Returns how many leading bytes `a` and `b` share, ASCII case ignored (as `LIKE` does).
fn common_prefix_nocase(a: &str, b: &str) -> usize {
    a.bytes()
        .zip(b.bytes())
        .take_while(|(x, y)| x.eq_ignore_ascii_case(y))
        .count()
}

/// Returns the prefix of `id` of at least `bytes` bytes and [`SHORT_ID_MIN`] characters
/// (after a source prefix such as `opencode:`, which says nothing about which session), cut on
/// a character boundary and not right after a separator (`-`, `:`, `_`), so a cut reads as
/// part of a word; the whole id when that is longer than it.
fn shortest_prefix(id: &str, bytes: usize) -> String {
    let source = id
        .find(':')
        .filter(|&k| k > 0 && id[..k].bytes().all(|b| b.is_ascii_lowercase() || b == b'-'))
        .map_or(0, |k| k + 1);
    let min_chars = id[source..]
        .char_indices()
        .nth(SHORT_ID_MIN)
        .map_or(id.len(), |(i, _)| source + i);
    let mut end = bytes.max(min_chars).min(id.len());
    while !id.is_char_boundary(end) || (end < id.len() && id[..end].ends_with(['-', ':', '_'])) {
        end += 1;
    }
    id[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 15: `trail list` cut every id at 10 characters, so a session and its subagent
    /// showed the same id.
    #[test]
    fn short_ids_open_exactly_their_session() {
        let store = Store::open_in_memory().unwrap();
        let ids = [
            "7c1e2f40-5a1b-4c3d-9e8f-0a1b2c3d4e5f",
            "7c1e2f40-5a1b-4c3d-9e8f-0a1b2c3d4e5f:agent-a1",
            "7c1e2f40-5a1b-4c3d-9e8f-0a1b2c3d4e5f:agent-a2",
            "7c1e2f40-5bff-0000-0000-000000000000",
            "opencode:ses_4b2a1c",
            "opencode:ses_4b2a1d",
            "OPENCODE:SES_9",
            "opencode:ses_77aa00bb11cc",
            "abc",
            "abcdefgh",
            "abcdefghij",
            "3b9e7c51-2",
            "3B9E7C51-2",
        ];
        for id in ids {
            store
                .connection()
                .execute(
                    "INSERT INTO sessions (id, source) VALUES (?1, 'codex')",
                    [id],
                )
                .unwrap();
        }
        let short = store.short_ids(ids).unwrap();
        for id in ids {
            let s = &short[id];
            assert!(id.starts_with(s.as_str()), "{s} of {id}");
            assert!(
                s.chars().count() >= SHORT_ID_MIN.min(id.chars().count()),
                "{s}"
            );
            assert_eq!(store.resolve_session_id(s).unwrap(), id, "{s}");
        }
        assert_eq!(short["7c1e2f40-5bff-0000-0000-000000000000"], "7c1e2f40-5b");
        // A main session opens with a prefix its subagents share; they need more.
        assert_eq!(short["7c1e2f40-5a1b-4c3d-9e8f-0a1b2c3d4e5f"], "7c1e2f40-5a");
        assert_eq!(
            short["7c1e2f40-5a1b-4c3d-9e8f-0a1b2c3d4e5f:agent-a2"],
            "7c1e2f40-5a1b-4c3d-9e8f-0a1b2c3d4e5f:agent-a2"
        );
        assert_eq!(short["opencode:ses_4b2a1c"], "opencode:ses_4b2a1c");
        assert_eq!(short["OPENCODE:SES_9"], "OPENCODE:SES_9");
        // Eight characters after the source prefix.
        assert_eq!(short["opencode:ses_77aa00bb11cc"], "opencode:ses_77aa");
        assert_eq!(short["abcdefgh"], "abcdefgh");
        assert_eq!(short["abcdefghij"], "abcdefghi");
        assert_eq!(short["abc"], "abc");
        // Only case tells these apart, which LIKE ignores: only the whole id opens each.
        assert_eq!(short["3b9e7c51-2"], "3b9e7c51-2");
        assert_eq!(short["3B9E7C51-2"], "3B9E7C51-2");
        assert_eq!(
            short["7c1e2f40-5a1b-4c3d-9e8f-0a1b2c3d4e5f:agent-a1"],
            "7c1e2f40-5a1b-4c3d-9e8f-0a1b2c3d4e5f:agent-a1"
        );
    }
}
