//! Query-string parameters as people and forms write them, turned into the query layer's
//! requests. Every value is text here (an empty form field is no value); the query layer
//! validates times, sources and ids, this module only numbers and names of its own.

use trail_query::{
    FileHistoryRequest, GroupBy, ListRequest, ReportFilter, SearchRequest, SessionFilter,
};

use crate::error::WebError;

/// Sessions on one page unless `limit` says otherwise.
pub(crate) const PAGE_SIZE: usize = 50;
/// The most sessions or hits one request returns.
pub(crate) const MAX_LIMIT: usize = 500;

/// A request's parameters; the last of a repeated name wins.
#[derive(Debug, Default, Clone)]
pub(crate) struct Params(Vec<(String, String)>);

impl Params {
    pub fn new(pairs: Vec<(String, String)>) -> Params {
        Params(pairs)
    }

    /// A non-empty value, trimmed.
    pub fn get(&self, key: &str) -> Option<String> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.trim().to_string())
            .filter(|v| !v.is_empty())
    }

    /// True for `1`, `true`, `on`, `yes` (a checked box sends `on`).
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key).as_deref(), Some("1" | "true" | "on" | "yes"))
    }

    /// A count, `default` when absent, at most [`MAX_LIMIT`].
    pub fn count(&self, key: &str, default: usize) -> Result<usize, WebError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => Ok(n),
                _ => Err(WebError::bad_request(format!(
                    "{key} must be a number from 1 to {MAX_LIMIT}, not {v:?}"
                ))),
            },
        }
    }

    /// A turn number (from 0).
    pub fn turn(&self, key: &str) -> Result<Option<i64>, WebError> {
        self.get(key)
            .map(|v| {
                v.parse::<i64>().map_err(|_| {
                    WebError::bad_request(format!("{key} must be a turn number, not {v:?}"))
                })
            })
            .transpose()
    }

    pub fn session_filter(&self) -> SessionFilter {
        SessionFilter {
            source: self.get("source"),
            repo: self.get("repo"),
            cwd: self.get("cwd"),
            branch: self.get("branch"),
            model: self.get("model"),
            since: self.get("since"),
            until: self.get("until"),
        }
    }

    /// `sort=newest` (default) or `oldest`.
    pub fn oldest_first(&self) -> Result<bool, WebError> {
        match self.get("sort").as_deref() {
            None | Some("newest") => Ok(false),
            Some("oldest") => Ok(true),
            Some(other) => Err(WebError::bad_request(format!(
                "unknown sort {other:?}; one of: newest, oldest"
            ))),
        }
    }

    pub fn list_request(&self) -> Result<ListRequest, WebError> {
        Ok(ListRequest {
            filter: self.session_filter(),
            include_subagents: self.flag("all"),
            limit: self.count("limit", PAGE_SIZE)?,
            cursor: self.get("cursor"),
            oldest_first: self.oldest_first()?,
        })
    }

    /// The search in `q` with its filters; `sort=relevance` (default) or `recent`.
    pub fn search_request(&self) -> Result<SearchRequest, WebError> {
        let recent = match self.get("sort").as_deref() {
            None | Some("relevance") => false,
            Some("recent") => true,
            Some(other) => {
                return Err(WebError::bad_request(format!(
                    "unknown sort {other:?}; one of: relevance, recent"
                )))
            }
        };
        Ok(SearchRequest {
            query: self.get("q").unwrap_or_default(),
            filter: self.session_filter(),
            role: self.get("role"),
            session: self.get("session"),
            recent,
            limit: self.count("limit", 20)?,
            exact: self.flag("exact"),
            ..SearchRequest::default()
        })
    }

    pub fn report_filter(&self) -> ReportFilter {
        ReportFilter {
            filter: SessionFilter {
                since: self.get("since"),
                until: self.get("until"),
                source: self.get("source"),
                repo: self.get("repo"),
                ..SessionFilter::default()
            },
            tz: self.get("tz"),
        }
    }

    /// `by` for usage (default: day).
    pub fn group_by(&self) -> Result<GroupBy, WebError> {
        Ok(trail_query::parse_group(
            self.get("by").as_deref().unwrap_or("day"),
        )?)
    }

    /// `path` (required), `line`, `repo`, `limit` for a file's history.
    pub fn file_request(&self) -> Result<(FileHistoryRequest, Option<u32>), WebError> {
        let path = self
            .get("path")
            .ok_or_else(|| WebError::bad_request("give a file's path: ?path=/abs/path/file.rs"))?;
        let line = self
            .get("line")
            .map(|l| {
                l.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    WebError::bad_request(format!("line must be a line number, not {l:?}"))
                })
            })
            .transpose()?;
        Ok((
            FileHistoryRequest {
                path,
                repo: self.get("repo"),
                base_dir: None,
                limit: self.count("limit", 50)?,
            },
            line,
        ))
    }
}
