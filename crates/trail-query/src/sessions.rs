//! Sessions: resolve an id prefix, list with filters and a keyset cursor, a session's detail
//! cut to a turn range.

use serde::{Deserialize, Serialize};
use trail_store::{ContinuationLink, Filter, ListFilter, MessageRow, SessionDetail, SessionRow};

use crate::time::Clock;
use crate::{parse_source, Need, Query, QueryError, Result};

/// Which sessions: every field optional, all given ones must hold. Times are as people write
/// them (`7d`, `2026-11-01`, RFC 3339), read by the request's [`Clock`].
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct SessionFilter {
    /// A source name (`claude-code`, `codex`...).
    pub source: Option<String>,
    /// The repository (`owner/name`) or folder contains this text.
    pub repo: Option<String>,
    /// The folder contains this text.
    pub cwd: Option<String>,
    /// Exactly this git branch.
    pub branch: Option<String>,
    /// One of the session's models contains this text.
    pub model: Option<String>,
    /// Active at or after this time.
    pub since: Option<String>,
    /// Started before this time.
    pub until: Option<String>,
}

impl SessionFilter {
    /// The store's [`Filter`]: the source validated (an id or an alias, any case), the times
    /// read by `clock`. The one place the words of a filter become the type every read takes.
    pub fn resolve(&self, clock: &Clock) -> Result<Filter> {
        let time = |s: &Option<String>| clock.resolve(s.as_deref()).map_err(QueryError::Invalid);
        Ok(Filter {
            since: time(&self.since)?,
            until: time(&self.until)?,
            source: self
                .source
                .as_deref()
                .filter(|s| !s.is_empty())
                .map(parse_source)
                .transpose()?,
            repo: self.repo.clone(),
            cwd: self.cwd.clone(),
            branch: self.branch.clone(),
            model: self.model.clone(),
        })
    }
}

/// A page of `list`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ListRequest {
    #[serde(flatten)]
    pub filter: SessionFilter,
    /// Subagents too (else only main sessions).
    pub include_subagents: bool,
    /// At most this many sessions (0: no limit).
    pub limit: usize,
    /// Where the previous page stopped ([`SessionPage::next_cursor`]).
    pub cursor: Option<String>,
    /// Least recently active first (a cursor is only good for the order that gave it).
    pub oldest_first: bool,
}

/// Sessions, newest first, and where the next page starts.
#[derive(Debug, Clone, Serialize)]
pub struct SessionPage {
    pub sessions: Vec<SessionRow>,
    /// Give this as `cursor` for the next page; none on the last page.
    pub next_cursor: Option<String>,
}

/// A session's detail, optionally only some turns.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DetailRequest {
    /// An exact id or a unique prefix.
    pub id: String,
    /// First turn to include (from 0).
    pub from_turn: Option<i64>,
    /// Last turn to include (inclusive).
    pub to_turn: Option<i64>,
}

impl Query {
    /// Resolves an exact id or a unique prefix to the session's id.
    pub fn resolve_id(&self, id_or_prefix: &str) -> Result<String> {
        resolve(&*self.reader(|| Need::SessionTable)?, id_or_prefix)
    }

    /// One session's row.
    pub fn session(&self, id_or_prefix: &str) -> Result<SessionRow> {
        let store = self.reader(|| Need::SessionTable)?;
        let id = resolve(&store, id_or_prefix)?;
        Ok(store.session(&id)?)
    }

    /// Sessions, most recently active first, one page at a time.
    pub fn list(&self, r: &ListRequest, clock: &Clock) -> Result<SessionPage> {
        let filter = r.filter.resolve(clock)?;
        let after = r.cursor.as_deref().map(decode_cursor).transpose()?;
        let limit = (r.limit > 0).then_some(r.limit);
        let mut sessions = self
            .reader(|| Need::SessionTable)?
            .list_sessions(&ListFilter {
                filter,
                // One more than asked tells whether there is a next page.
                limit: limit.map(|l| l + 1),
                include_subagents: r.include_subagents,
                after,
                oldest_first: r.oldest_first,
            })?;
        let next_cursor = match limit {
            Some(l) if sessions.len() > l => {
                sessions.truncate(l);
                sessions.last().map(encode_cursor)
            }
            _ => None,
        };
        Ok(SessionPage {
            sessions,
            next_cursor,
        })
    }

    /// A session with its messages (only the turns asked for), subagents, files, refs and
    /// checkpoints.
    pub fn detail(&self, r: &DetailRequest) -> Result<SessionDetail> {
        let id = self.resolve_id(&r.id)?;
        let store = self.reader(|| Need::SessionRows(vec![id.clone()]))?;
        let session = store.session(&id)?;
        check_turn_range(&session, r.from_turn, r.to_turn)?;
        // Only the turns asked for are read (a one-turn preview of a huge session stays cheap).
        let range = (r.from_turn.is_some() || r.to_turn.is_some())
            .then(|| (r.from_turn.unwrap_or(0), r.to_turn.unwrap_or(i64::MAX)));
        Ok(store.session_detail_turns(&id, range)?)
    }

    /// Continuation links (`trail resume ID --in AGENT`) touching any of `ids`, either way.
    pub fn continuation_links(&self, ids: &[&str]) -> Result<Vec<ContinuationLink>> {
        Ok(self
            .reader(|| Need::SessionTable)?
            .continuation_links(ids)?)
    }

    /// Calls `f` with the messages of `session` from `from_seq` on, in order, until it returns
    /// false, after checking the turn range against the session (the caller filters by turn):
    /// a frontend that pages a long session reads only what one page shows, not the whole
    /// session as [`Query::detail`] does.
    pub fn messages_from(
        &self,
        session: &SessionRow,
        from_turn: Option<i64>,
        to_turn: Option<i64>,
        from_seq: i64,
        f: impl FnMut(MessageRow) -> bool,
    ) -> Result<()> {
        check_turn_range(session, from_turn, to_turn)?;
        Ok(self
            .reader(|| Need::SessionRows(vec![session.id.to_string()]))?
            .for_each_message_from(&session.id, from_seq, f)?)
    }

    /// Each id's shortest prefix that opens exactly that session (at least 8 characters after
    /// a `source:` prefix), for frontends that show ids to be typed back.
    pub fn short_ids<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> Result<std::collections::HashMap<String, String>> {
        Ok(self.reader(|| Need::SessionTable)?.short_ids(ids)?)
    }

    /// The sessions whose parent is `id` (subagents, forks), oldest first.
    pub fn children(&self, id: &str) -> Result<Vec<SessionRow>> {
        Ok(self.reader(|| Need::SessionTable)?.subagent_sessions(id)?)
    }
}

/// Resolves an id or unique prefix on `store`.
fn resolve(store: &trail_store::Store, id_or_prefix: &str) -> Result<String> {
    let id = id_or_prefix.trim();
    if id.is_empty() {
        return Err(QueryError::Invalid("a session id is empty".into()));
    }
    Ok(store.resolve_session_id(id)?)
}

/// Refuses a turn range outside the session's turns, or one whose first turn comes after its
/// last.
fn check_turn_range(session: &SessionRow, from: Option<i64>, to: Option<i64>) -> Result<()> {
    let (id, turns) = (&session.id, session.turns);
    for t in [from, to].into_iter().flatten() {
        if t < 0 || t >= turns {
            return Err(QueryError::Invalid(format!(
                "session {id} has {turns} turns (0 to {}); there is no turn {t}",
                (turns - 1).max(0)
            )));
        }
    }
    if let (Some(a), Some(b)) = (from, to) {
        if a > b {
            return Err(QueryError::Invalid(format!(
                "the turn range {a}..{b} is empty (the first turn comes after the last)"
            )));
        }
    }
    Ok(())
}

/// Returns the cursor of the page that starts after `row`: a frontend that cuts a page short
/// (the MCP server under its size cap) continues from its last row.
pub fn cursor_after(row: &SessionRow) -> String {
    encode_cursor(row)
}

/// A cursor is the last row's `(updated_at, id)`, hex-encoded so it is one opaque token that
/// survives URLs and JSON unchanged.
fn encode_cursor(row: &SessionRow) -> String {
    let raw = format!("{}\n{}", row.updated_at.as_deref().unwrap_or(""), row.id);
    raw.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_cursor(s: &str) -> Result<(String, String)> {
    let bad = || QueryError::Invalid(format!("{s:?} is not a cursor this store gave out"));
    if !s.len().is_multiple_of(2) || s.len() > 4096 {
        return Err(bad());
    }
    let bytes = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2).ok_or_else(bad)?, 16).map_err(|_| bad()))
        .collect::<Result<Vec<u8>>>()?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    let (updated, id) = text.split_once('\n').ok_or_else(bad)?;
    Ok((updated.to_string(), id.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        let row = SessionRow {
            id: "opencode:ses_1".into(),
            source: "opencode".into(),
            updated_at: Some("2026-11-01T00:00:00.000Z".into()),
            ..SessionRow::default()
        };
        let c = encode_cursor(&row);
        assert_eq!(
            decode_cursor(&c).unwrap(),
            ("2026-11-01T00:00:00.000Z".into(), "opencode:ses_1".into())
        );
        for bad in ["zz", "abc", "00", "ffff"] {
            assert!(decode_cursor(bad).is_err(), "{bad}");
        }
    }
}
