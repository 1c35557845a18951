//! Search: the CLI's query syntax and filters, plus what an agent needs: leave out the
//! sessions that are still active (the conversation asking) and any session it names.

use chrono::Duration;
use serde::{Deserialize, Serialize};
use trail_store::{SearchOptions, SearchResults, SearchSort};

use crate::sessions::SessionFilter;
use crate::time::Clock;
use crate::{Query, QueryError, Result};

/// Hits a search returns at most, whatever the caller asks.
pub const MAX_HITS: usize = 500;

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
    /// Leave out sessions active within this many minutes (agents: 10).
    pub exclude_active_minutes: Option<i64>,
    /// Leave out these sessions (ids or unique prefixes).
    pub exclude_sessions: Vec<String>,
}

impl Query {
    /// Full-text search, one hit per turn, best first (or newest first).
    pub fn search(&self, r: &SearchRequest, clock: &Clock) -> Result<SearchResults> {
        if r.query.trim().is_empty() {
            return Err(QueryError::Invalid("the search query is empty".into()));
        }
        let (since, until) = r.filter.bounds(clock)?;
        let role = match r.role.as_deref() {
            None | Some("") => None,
            Some(role @ ("user" | "assistant" | "tool")) => Some(role.to_string()),
            Some(other) => {
                return Err(QueryError::Invalid(format!(
                    "unknown role {other:?}; one of: user, assistant, tool"
                )))
            }
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
        let exclude_updated_since =
            match r.exclude_active_minutes {
                Some(m) if m > 0 => {
                    Some(clock.ago(Duration::try_minutes(m).ok_or_else(|| {
                        QueryError::Invalid(format!("{m} minutes is out of range"))
                    })?))
                }
                _ => None,
            };
        Ok(self.store.search(&SearchOptions {
            query: r.query.clone(),
            source: r.filter.source_name()?,
            repo: r.filter.repo.clone(),
            cwd: r.filter.cwd.clone(),
            branch: r.filter.branch.clone(),
            since,
            until,
            role,
            model: r.filter.model.clone(),
            session,
            exclude_updated_since,
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
        })?)
    }
}
