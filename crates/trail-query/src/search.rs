//! Search: the CLI's query syntax and filters, plus what an agent needs: leave out the
//! sessions that are still active (the conversation asking) and any session it names.

use chrono::Duration;
use serde::{Deserialize, Serialize};
use trail_model::Role;
use trail_store::{SearchHit, SearchOptions, SearchResults, SearchSort, HIT_END, HIT_START};

use crate::sessions::SessionFilter;
use crate::time::Clock;
use crate::{shell_quote, Need, Query, QueryError, Result};

/// Hits a search returns at most, whatever the caller asks.
pub const MAX_HITS: usize = 500;

/// A session last updated up to this long after now still counts as active (a clock ahead of
/// this one, a local time written as UTC: at most 14 hours); one dated later is not the
/// conversation going on now (the benchmark corpora date half their sessions up to two years
/// ahead, and all of those were left out).
const ACTIVE_AHEAD: Duration = Duration::days(1);

/// A search.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchRequest {
    /// Words (all must match), "a phrase", prefix*, OR, NOT.
    pub query: String,
    #[serde(flatten)]
    pub filter: SessionFilter,
    /// `user`, `assistant` or `tool`.
    pub role: Option<String>,
    /// Only this session (an id or a unique prefix).
    pub session: Option<String>,
    /// Newest first instead of by relevance.
    pub recent: bool,
    /// At most this many hits (0: 20).
    pub limit: usize,
    /// Leave out sessions active within this many minutes (agents: 10): last updated since
    /// then, up to a day ahead of now ([`ACTIVE_AHEAD`]), or never.
    pub exclude_active_minutes: Option<i64>,
    /// Leave out these sessions (ids or unique prefixes).
    pub exclude_sessions: Vec<String>,
    /// Search the words as typed: no near spelling for a word that matches nothing or few
    /// turns.
    pub exact: bool,
}

impl Query {
    /// Full-text search, one hit per turn, best first (or newest first).
    pub fn search(&self, r: &SearchRequest, clock: &Clock) -> Result<SearchResults> {
        if r.query.trim().is_empty() {
            return Err(QueryError::Invalid("the search query is empty".into()));
        }
        let filter = r.filter.resolve(clock)?;
        let role = match r.role.as_deref() {
            None | Some("") => None,
            Some(name) => match Role::parse(name) {
                Some(role @ (Role::User | Role::Assistant | Role::Tool)) => Some(role),
                _ => {
                    return Err(QueryError::Invalid(format!(
                        "unknown role {name:?}; one of: user, assistant, tool"
                    )))
                }
            },
        };
        let session = r
            .session
            .as_deref()
            .map(|s| self.resolve_id(s))
            .transpose()?;
        // A session to skip that is not in the store is simply not there to skip.
        let mut exclude_sessions = Vec::new();
        for s in &r.exclude_sessions {
            match self.resolve_id(s) {
                Ok(id) => exclude_sessions.push(id),
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        let exclude_updated_within = match r.exclude_active_minutes {
            Some(m) if m > 0 => {
                let since =
                    clock.ago(Duration::try_minutes(m).ok_or_else(|| {
                        QueryError::Invalid(format!("{m} minutes is out of range"))
                    })?);
                Some((since, clock.ahead(ACTIVE_AHEAD)))
            }
            _ => None,
        };
        let options = SearchOptions {
            query: r.query.clone(),
            filter,
            role,
            session,
            exclude_updated_within,
            exclude_sessions,
            sort: if r.recent {
                SearchSort::Recent
            } else {
                SearchSort::Relevance
            },
            limit: match r.limit {
                0 => 20,
                n => n.min(MAX_HITS),
            },
            exact: r.exact,
        };
        match self.remote() {
            Some(remote) => remote.search(&options),
            None => Ok(self.reader(|| Need::SessionTable)?.search(&options)?),
        }
    }
}

/// A hit as every frontend's JSON shows it (`trail search --json`, the web viewer's
/// `/api/search`; docs/json.md): matches between `**`, and the command that opens the hit.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct JsonHit {
    /// The hit, its snippet's matches between `**` marks.
    #[serde(flatten)]
    pub hit: SearchHit,
    /// The command that opens the hit.
    pub open: String,
}

impl JsonHit {
    /// The JSON shape of hit `h` found by `query`.
    pub fn new(h: &SearchHit, query: &str) -> JsonHit {
        JsonHit {
            hit: SearchHit {
                snippet: h.snippet.replace([HIT_START, HIT_END], "**"),
                ..h.clone()
            },
            open: open_command(&h.session_id, h.turn, query),
        }
    }
}

/// The `trail show` command that opens a hit in session `id` (whole, or a unique prefix): its
/// turn, with the query's words marked.
pub fn open_command(id: &str, turn: Option<i64>, query: &str) -> String {
    let mut cmd = format!("trail show {}", shell_quote(id));
    if let Some(t) = turn {
        cmd.push_str(&format!(" --turn {t}"));
    } else {
        cmd.push_str(" --full");
    }
    cmd.push_str(" --highlight ");
    cmd.push_str(&shell_quote(query));
    cmd
}

/// The words of a search query worth marking where they appear: operators (`AND`, `OR`,
/// `NOT`), what follows `NOT`, quotes and a trailing `*` left out; each word once (ASCII case
/// folded), longest first so a longer word wins over a word inside it.
pub fn highlight_terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    let mut after_not = false;
    for w in query.split(|c: char| c.is_whitespace() || c == '"') {
        let w = w.trim_end_matches('*');
        if w.is_empty() {
            continue;
        }
        // What follows NOT is what the search excluded: nothing to mark.
        let excluded = std::mem::replace(&mut after_not, w == "NOT");
        if excluded || matches!(w, "AND" | "OR" | "NOT") || !w.chars().any(char::is_alphanumeric) {
            continue;
        }
        if !terms.iter().any(|t| t.eq_ignore_ascii_case(w)) {
            terms.push(w.to_string());
        }
    }
    terms.sort_by_key(|t| std::cmp::Reverse(t.len()));
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlight_terms_leave_out_operators_and_excluded_words() {
        assert_eq!(
            highlight_terms("\"Imperial units\" OR metric* NOT x units"),
            vec!["Imperial", "metric", "units"]
        );
        assert!(highlight_terms("  * \"\" ").is_empty());
    }
}
