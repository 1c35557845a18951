//! The one filter every read takes, resolved: which sessions (source, repository, folder,
//! branch, model) and which time range, and its compilation to a SQLite `WHERE` over
//! `sessions` with bound values only.
//!
//! It lives here, the lowest crate every user of a filter reaches (the reports, the query
//! layer, the team store's engine, every frontend): what people and agents write (`7d`, a
//! source's alias) is parsed into it by trail-query; the reports and the store compile it.

use std::fmt;
use std::ops::Deref;

use chrono::{DateTime, Utc};
use rusqlite::types::{ToSql, ToSqlOutput, Value};
use serde::Serialize;
use trail_model::SourceKind;

/// An instant as the store writes and compares it: ISO-8601 UTC with milliseconds
/// (`2026-11-21T12:00:00.000Z`), so that text order is time order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Timestamp(String);

impl Timestamp {
    /// The store's text of `t`.
    pub fn from_utc(t: DateTime<Utc>) -> Timestamp {
        Timestamp(trail_model::time::format_utc(t))
    }

    /// Reads an RFC 3339 time (any offset) into the store's form; none when it is not one.
    pub fn parse(s: &str) -> Option<Timestamp> {
        trail_model::time::normalize(s).map(Timestamp)
    }

    /// The text, as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, owned.
    pub fn into_string(self) -> String {
        self.0
    }
}

/// Text already in the store's form (a stored column, a test's literal).
impl From<String> for Timestamp {
    fn from(s: String) -> Timestamp {
        Timestamp(s)
    }
}

/// Text already in the store's form (a test's literal).
impl From<&str> for Timestamp {
    fn from(s: &str) -> Timestamp {
        Timestamp(s.to_string())
    }
}

impl Deref for Timestamp {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl ToSql for Timestamp {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        self.0.to_sql()
    }
}

/// Which sessions and which time range a read covers; every field optional, all given ones
/// must hold. How `since`/`until` bound a row depends on the read (a session active in the
/// range, a request made in it, a turn overlapping it): see [`Where`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Filter {
    /// At or after this time.
    pub since: Option<Timestamp>,
    /// Before this time.
    pub until: Option<Timestamp>,
    /// Only this source.
    pub source: Option<SourceKind>,
    /// The repository (`owner/name`) or the folder contains this text.
    pub repo: Option<String>,
    /// The folder contains this text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Exactly this git branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// One of the session's models contains this text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A SQL `WHERE` fragment over `sessions` aliased `s`, with its bound values: the SQLite
/// compilation of a [`Filter`] (the team store's is `trail-postgres`'s `read.rs`).
pub struct Where {
    pub sql: String,
    pub args: Vec<Value>,
}

impl Where {
    /// The conditions of `f` on the sessions `s` themselves (source, repository, folder,
    /// branch, model); the time range is the read's to add ([`Where::active`],
    /// [`Where::range`]).
    pub fn sessions(f: &Filter) -> Where {
        let mut w = Where {
            sql: String::from("1=1"),
            args: Vec::new(),
        };
        if let Some(src) = f.source {
            w.sql.push_str(" AND s.source = ?");
            w.args.push(Value::Text(src.as_str().to_string()));
        }
        if let Some(r) = &f.repo {
            w.sql
                .push_str(" AND (s.repository LIKE ? ESCAPE '\\' OR s.cwd LIKE ? ESCAPE '\\')");
            let pat = format!("%{}%", like_escape(r));
            w.args.push(Value::Text(pat.clone()));
            w.args.push(Value::Text(pat));
        }
        if let Some(c) = &f.cwd {
            w.sql.push_str(" AND s.cwd LIKE ? ESCAPE '\\'");
            w.args.push(Value::Text(format!("%{}%", like_escape(c))));
        }
        if let Some(b) = &f.branch {
            w.sql.push_str(" AND s.branch = ?");
            w.args.push(Value::Text(b.clone()));
        }
        if let Some(m) = &f.model {
            w.sql.push_str(" AND s.models LIKE ? ESCAPE '\\'");
            w.args.push(Value::Text(format!("%{}%", like_escape(m))));
        }
        w
    }

    /// Leaves out chats (sessions of chat-service data exports, [`crate::is_chat_sql`]) unless
    /// `f` names a source: the coding-session views count coding sessions.
    pub fn coding(mut self, f: &Filter) -> Where {
        if f.source.is_none() {
            self.sql.push_str(" AND NOT ");
            self.sql.push_str(&crate::is_chat_sql("s"));
        }
        self
    }

    /// Adds `column >= since` / `column < until`.
    pub fn range(mut self, column: &str, since: Option<&str>, until: Option<&str>) -> Where {
        if let Some(s) = since {
            self.sql.push_str(&format!(" AND {column} >= ?"));
            self.args.push(Value::Text(s.to_string()));
        }
        if let Some(u) = until {
            self.sql.push_str(&format!(" AND {column} < ?"));
            self.args.push(Value::Text(u.to_string()));
        }
        self
    }

    /// Adds sessions active in the range: updated at or after `since`, started before `until`.
    pub fn active(mut self, f: &Filter) -> Where {
        if let Some(s) = &f.since {
            self.sql.push_str(" AND s.updated_at >= ?");
            self.args.push(Value::Text(s.to_string()));
        }
        if let Some(u) = &f.until {
            self.sql
                .push_str(" AND coalesce(s.created_at, s.updated_at) < ?");
            self.args.push(Value::Text(u.to_string()));
        }
        self
    }

    /// Adds a raw condition with no values.
    pub fn and(mut self, cond: &str) -> Where {
        self.sql.push_str(" AND ");
        self.sql.push_str(cond);
        self
    }

    /// Adds a condition with its values.
    pub fn and_with(mut self, cond: &str, args: impl IntoIterator<Item = Value>) -> Where {
        self.sql.push_str(" AND ");
        self.sql.push_str(cond);
        self.args.extend(args);
        self
    }

    /// The bound values, for `query` / `prepare`.
    pub fn params(&self) -> rusqlite::ParamsFromIter<std::slice::Iter<'_, Value>> {
        rusqlite::params_from_iter(self.args.iter())
    }
}

/// The SQL condition "session `alias` is a chat": its `metadata` holds `"chat": true`, which
/// the sources of chat-service exports write. Coding-session reports leave such sessions out.
pub fn is_chat_sql(alias: &str) -> String {
    format!(
        "coalesce(CASE WHEN json_valid({alias}.metadata) \
         THEN json_extract({alias}.metadata, '$.chat') END, 0) = 1"
    )
}

/// Escapes `%`, `_` and `\` for a LIKE pattern with `ESCAPE '\'`.
pub fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
