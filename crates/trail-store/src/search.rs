//! Full-text search over every message: the writer's side of `message_index` (migration 2) and
//! the query behind `trail search`.
//!
//! `message_index` is an external-content FTS5 table over the view `message_search_source`,
//! which picks the message kinds worth finding and caps long tool inputs and outputs. The text
//! is stored once (in `messages`); FTS5 reads it back through the view for `snippet()` and for
//! its 'delete' command, so what is indexed and what is removed are the same by construction.
//!
//! Ranking: bm25 over a huge posting list (a word in most messages) must score every match
//! before the first result can be returned, so a naive `ORDER BY rank` costs time proportional
//! to the number of matches. Search instead reads at most [`CANDIDATES`] matches, newest
//! messages first, straight off the index in rowid order (stopping early), scores only those,
//! and ranks them. A query with fewer matches than that (any specific query) is ranked exactly;
//! a very common word is ranked among its most recently indexed matches.

use std::collections::HashSet;

use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{params, OptionalExtension, ToSql, Transaction};
use serde::Serialize;

use crate::read::like_escape;
use crate::{Result, Store, StoreError};

/// How many matches are read and scored at most per search.
pub const CANDIDATES: usize = 500;

/// Marks the start of a match in [`SearchHit::snippet`].
pub const HIT_START: char = '\u{E000}';
/// Marks the end of a match in [`SearchHit::snippet`].
pub const HIT_END: char = '\u{E001}';

/// Terms a query may hold at most.
const MAX_TERMS: usize = 64;

/// Inserts one message's row into the index.
const INDEX_ROW: &str =
    "INSERT INTO message_index (rowid, text, tool_input, tool_output) VALUES (?1, ?2, ?3, ?4)";
/// FTS5's 'delete' needs the exact values that were indexed; the view gives them while the
/// messages are still stored.
const UNINDEX_ROW: &str =
    "INSERT INTO message_index (message_index, rowid, text, tool_input, tool_output)
     VALUES ('delete', ?1, ?2, ?3, ?4)";

/// Indexes the stored messages with ids in `lo..=hi` (the view leaves out kinds not indexed).
pub(crate) fn index_messages(tx: &Transaction<'_>, lo: i64, hi: i64) -> Result<()> {
    feed_index(
        tx,
        "SELECT id, text, tool_input, tool_output FROM message_search_source
         WHERE id BETWEEN ?1 AND ?2",
        params![lo, hi],
        INDEX_ROW,
    )
}

/// Removes the stored message at `(session, seq)`, if any, from the index.
pub(crate) fn unindex_message(tx: &Transaction<'_>, session: &str, seq: u32) -> Result<()> {
    feed_index(
        tx,
        "SELECT id, text, tool_input, tool_output FROM message_search_source
         WHERE id = (SELECT id FROM messages WHERE session_id = ?1 AND seq = ?2)",
        params![session, seq as i64],
        UNINDEX_ROW,
    )
}

/// Removes every message of a session from the index, before the messages are deleted.
pub(crate) fn unindex_session_messages(tx: &Transaction<'_>, session: &str) -> Result<()> {
    feed_index(
        tx,
        "SELECT id, text, tool_input, tool_output FROM message_search_source
         WHERE id IN (SELECT id FROM messages WHERE session_id = ?1)",
        params![session],
        UNINDEX_ROW,
    )
}

/// Runs `insert` once per row `select` returns.
///
/// Rows are read from the view and inserted one `VALUES` at a time: an `INSERT ... SELECT`
/// opens a statement journal, and FTS5 writes its in-memory buffer out as a new segment at
/// each one, so a statement per session left a segment per session to merge.
fn feed_index(
    tx: &Transaction<'_>,
    select: &str,
    args: impl rusqlite::Params,
    insert: &str,
) -> Result<()> {
    let mut read = tx.prepare_cached(select)?;
    let mut write = tx.prepare_cached(insert)?;
    let mut rows = read.query(args)?;
    while let Some(r) = rows.next()? {
        let cell = |i| r.get_ref(i).map(ToSqlOutput::Borrowed);
        write.execute(params![cell(0)?, cell(1)?, cell(2)?, cell(3)?])?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Query translation

/// One lexical item of a user query.
#[derive(Debug, Clone, PartialEq)]
enum Lexeme {
    /// A word or a quoted phrase; `prefix` when it ended with `*`.
    Term {
        text: String,
        prefix: bool,
    },
    And,
    Or,
    Not,
}

fn lex(q: &str) -> Vec<Lexeme> {
    let mut out = Vec::new();
    let mut chars = q.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if c == '"' {
            chars.next();
            let mut text = String::new();
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                text.push(c);
            }
            let mut prefix = false;
            while chars.peek() == Some(&'*') {
                chars.next();
                prefix = true;
            }
            out.push(Lexeme::Term { text, prefix });
            continue;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || c == '"' {
                break;
            }
            word.push(c);
            chars.next();
        }
        out.push(match word.as_str() {
            "AND" => Lexeme::And,
            "OR" => Lexeme::Or,
            "NOT" => Lexeme::Not,
            _ => {
                let stem = word.trim_end_matches('*');
                Lexeme::Term {
                    prefix: stem.len() != word.len(),
                    text: stem.to_string(),
                }
            }
        });
    }
    out
}

/// Quotes a term as an FTS5 string (so `-`, `:`, `.`, `(` in it are text, not syntax).
fn fts_string(text: &str, prefix: bool) -> Option<String> {
    // A term without a letter or digit holds no token; FTS5 would see an empty phrase.
    if !text.chars().any(char::is_alphanumeric) {
        return None;
    }
    let mut s = String::with_capacity(text.len() + 4);
    s.push('"');
    for c in text.chars() {
        if c == '"' {
            s.push('"');
        }
        s.push(c);
    }
    s.push('"');
    if prefix {
        s.push('*');
    }
    Some(s)
}

/// Translates a user query into an FTS5 expression.
///
/// Plain words must all match (`cargo test`); `"quoted phrases"` match in order; `word*`
/// matches a prefix; `A OR B` matches either (OR binds tighter than the implicit AND:
/// `timeout retry OR backoff` is `timeout AND (retry OR backoff)`); `A NOT B` excludes; `AND`
/// may be written. Every term is quoted, so punctuation inside words is text. Words without a
/// letter or digit are ignored. Errors name what is wrong in the user's terms.
pub fn translate_query(q: &str) -> Result<String, String> {
    let mut lexemes: Vec<Lexeme> = Vec::new();
    let mut terms = 0;
    for l in lex(q) {
        match l {
            Lexeme::Term { text, prefix } => {
                if let Some(s) = fts_string(&text, prefix) {
                    terms += 1;
                    lexemes.push(Lexeme::Term { text: s, prefix });
                }
            }
            op => lexemes.push(op),
        }
    }
    if terms == 0 {
        return Err("the query has no word to search for".to_string());
    }
    if terms > MAX_TERMS {
        return Err(format!(
            "the query has {terms} terms; at most {MAX_TERMS} are allowed"
        ));
    }
    // query := group ((AND)? group | NOT group)*; group := term (OR term)*
    let mut out = String::new();
    let mut i = 0;
    let mut first = true;
    while i < lexemes.len() {
        let op = match &lexemes[i] {
            Lexeme::And => {
                i += 1;
                Some("AND")
            }
            Lexeme::Not => {
                i += 1;
                Some("NOT")
            }
            Lexeme::Or => return Err(operator_error("OR", first)),
            Lexeme::Term { .. } => None,
        };
        if first && op.is_some() {
            let name = op.unwrap_or("AND");
            return Err(operator_error(name, true));
        }
        let (group, next) = parse_group(&lexemes, i, op.unwrap_or("AND"))?;
        i = next;
        if first {
            out = group;
            first = false;
        } else {
            // Parenthesize the left side so NOT applies to all of it, as written.
            out = format!("({out}) {} {group}", op.unwrap_or("AND"));
        }
    }
    Ok(out)
}

fn operator_error(op: &str, at_start: bool) -> String {
    if at_start {
        format!("{op} needs a word before it (for example `error {op} warning`)")
    } else {
        format!("{op} needs a word after it (for example `error {op} warning`)")
    }
}

/// Parses `term (OR term)*` from `i`; returns the FTS5 text and the next index.
fn parse_group(lexemes: &[Lexeme], mut i: usize, after: &str) -> Result<(String, usize), String> {
    let mut alts: Vec<&str> = Vec::new();
    loop {
        match lexemes.get(i) {
            Some(Lexeme::Term { text, .. }) => {
                alts.push(text);
                i += 1;
            }
            Some(Lexeme::Or) => {
                return Err(if alts.is_empty() {
                    format!("{after} and OR cannot follow each other")
                } else {
                    "OR cannot follow OR".to_string()
                })
            }
            Some(Lexeme::And | Lexeme::Not) | None => {
                return Err(operator_error(
                    if alts.is_empty() { after } else { "OR" },
                    false,
                ))
            }
        }
        if lexemes.get(i) == Some(&Lexeme::Or) {
            i += 1;
            continue;
        }
        break;
    }
    let text = if alts.len() == 1 {
        alts[0].to_string()
    } else {
        format!("({})", alts.join(" OR "))
    };
    Ok((text, i))
}

// ---------------------------------------------------------------------------------------------
// Searching

/// How hits are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchSort {
    /// Best bm25 score first.
    #[default]
    Relevance,
    /// Newest message first.
    Recent,
}

/// A search: the user's query and filters.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// The query as the user wrote it (see [`translate_query`]).
    pub query: String,
    pub source: Option<String>,
    /// `repository` contains this text.
    pub repo: Option<String>,
    /// `cwd` contains this text.
    pub cwd: Option<String>,
    pub branch: Option<String>,
    /// ISO timestamps bounding the message's time.
    pub since: Option<String>,
    pub until: Option<String>,
    /// `user`, `assistant` or `tool`.
    pub role: Option<String>,
    /// One of the session's models contains this text.
    pub model: Option<String>,
    /// A full session id.
    pub session: Option<String>,
    /// Leaves out sessions updated at or after this ISO time (an agent must not find the
    /// conversation it is having).
    pub exclude_updated_since: Option<String>,
    /// Leaves out these sessions (full ids).
    pub exclude_sessions: Vec<String>,
    pub sort: SearchSort,
    pub limit: usize,
}

/// One hit: the best matching message of a turn.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SearchHit {
    pub session_id: String,
    pub title: Option<String>,
    pub source: String,
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub cwd: Option<String>,
    /// The turn (from 0) the message belongs to; none before the first prompt.
    pub turn: Option<i64>,
    pub seq: i64,
    pub role: Option<String>,
    pub kind: Option<String>,
    pub tool_name: Option<String>,
    pub timestamp: Option<String>,
    /// Where the match is: `text`, `tool_input` or `tool_output`.
    pub field: String,
    /// Text around the match; matches between [`HIT_START`] and [`HIT_END`].
    pub snippet: String,
    /// bm25 score (lower is better).
    pub score: f64,
}

/// What a search found.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    /// The FTS5 expression the query became.
    pub fts_query: String,
    pub hits: Vec<SearchHit>,
    /// Matches read and ranked ([`CANDIDATES`] at most).
    pub ranked: usize,
    /// True when there were more matches than were ranked (a very common word).
    pub capped: bool,
}

struct Candidate {
    rowid: i64,
    score: f64,
    timestamp: Option<String>,
}

const FIELDS: [&str; 3] = ["text", "tool_input", "tool_output"];

impl Store {
    /// Searches messages: the query as the user wrote it, with filters.
    // No `err` here: a query the user mistyped is not an error worth logging.
    #[tracing::instrument(level = "debug", skip_all)]
    pub fn search(&self, o: &SearchOptions) -> Result<SearchResults> {
        let fts = translate_query(&o.query).map_err(StoreError::InvalidQuery)?;
        // Filters are fixed SQL fragments with bound values; never the user's text in SQL.
        let mut filter = String::new();
        let mut args: Vec<Value> = vec![Value::Text(fts.clone())];
        let mut bind = |sql: &str, v: String, filter: &mut String| {
            args.push(Value::Text(v));
            filter.push_str(&sql.replace('?', &format!("?{}", args.len())));
        };
        if let Some(v) = &o.source {
            bind(" AND s.source = ?", v.clone(), &mut filter);
        }
        if let Some(v) = &o.repo {
            bind(
                " AND s.repository LIKE ? ESCAPE '\\'",
                format!("%{}%", like_escape(v)),
                &mut filter,
            );
        }
        if let Some(v) = &o.cwd {
            bind(
                " AND s.cwd LIKE ? ESCAPE '\\'",
                format!("%{}%", like_escape(v)),
                &mut filter,
            );
        }
        if let Some(v) = &o.branch {
            bind(" AND s.branch = ?", v.clone(), &mut filter);
        }
        if let Some(v) = &o.since {
            bind(
                " AND coalesce(m.timestamp, s.updated_at) >= ?",
                v.clone(),
                &mut filter,
            );
        }
        if let Some(v) = &o.until {
            bind(
                " AND coalesce(m.timestamp, s.created_at) < ?",
                v.clone(),
                &mut filter,
            );
        }
        if let Some(v) = &o.role {
            bind(" AND m.role = ?", v.clone(), &mut filter);
        }
        if let Some(v) = &o.model {
            bind(
                " AND s.models LIKE ? ESCAPE '\\'",
                format!("%{}%", like_escape(v)),
                &mut filter,
            );
        }
        if let Some(v) = &o.session {
            bind(" AND m.session_id = ?", v.clone(), &mut filter);
        }
        if let Some(v) = &o.exclude_updated_since {
            bind(" AND s.updated_at < ?", v.clone(), &mut filter);
        }
        for v in &o.exclude_sessions {
            bind(" AND m.session_id <> ?", v.clone(), &mut filter);
        }
        args.push(Value::Integer(CANDIDATES as i64 + 1));
        let limit_arg = args.len();
        // Matches come off the index newest first (rowid order, no sort), each scored as it
        // passes; LIMIT stops the scan. Prompts and answers weigh more than tool text. The
        // join is only paid for when a filter or the sort needs it.
        let sql = if filter.is_empty() && o.sort == SearchSort::Relevance {
            format!(
                "SELECT rowid, bm25(message_index, 1.0, 0.75, 0.5), NULL FROM message_index
                 WHERE message_index MATCH ?1 ORDER BY rowid DESC LIMIT ?{limit_arg}"
            )
        } else {
            format!(
                "SELECT message_index.rowid, bm25(message_index, 1.0, 0.75, 0.5),
                        coalesce(m.timestamp, s.updated_at)
                 FROM message_index
                 JOIN messages m ON m.id = message_index.rowid
                 JOIN sessions s ON s.id = m.session_id
                 WHERE message_index MATCH ?1{filter}
                 ORDER BY message_index.rowid DESC LIMIT ?{limit_arg}"
            )
        };
        let mut stmt = self.conn.prepare(&sql)?;
        let refs: Vec<&dyn ToSql> = args.iter().map(|v| v as &dyn ToSql).collect();
        let mut candidates: Vec<Candidate> = stmt
            .query_map(refs.as_slice(), |r| {
                Ok(Candidate {
                    rowid: r.get(0)?,
                    score: r.get(1)?,
                    timestamp: r.get(2)?,
                })
            })
            .map_err(fts_error)?
            .collect::<rusqlite::Result<_>>()
            .map_err(fts_error)?;
        let capped = candidates.len() > CANDIDATES;
        candidates.truncate(CANDIDATES);
        let ranked = candidates.len();
        match o.sort {
            SearchSort::Relevance => candidates.sort_by(|a, b| {
                a.score
                    .total_cmp(&b.score)
                    .then_with(|| b.rowid.cmp(&a.rowid))
            }),
            SearchSort::Recent => candidates.sort_by(|a, b| {
                b.timestamp
                    .cmp(&a.timestamp)
                    .then_with(|| b.rowid.cmp(&a.rowid))
            }),
        }
        // One hit per turn: its best message.
        let mut seen: HashSet<(String, Option<i64>)> = HashSet::new();
        let mut hits = Vec::new();
        for c in &candidates {
            if hits.len() >= o.limit {
                break;
            }
            let mut hit = self.hit_meta(c)?;
            if !seen.insert((hit.session_id.clone(), hit.turn)) {
                continue;
            }
            let (field, snippet) = self.snippet(&fts, c.rowid)?;
            hit.field = field.to_string();
            hit.snippet = snippet;
            hits.push(hit);
        }
        Ok(SearchResults {
            fts_query: fts,
            hits,
            ranked,
            capped,
        })
    }

    fn hit_meta(&self, c: &Candidate) -> Result<SearchHit> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT m.session_id, s.summary, s.source, s.repository, s.branch, s.cwd, m.turn_index,
                    m.seq, m.role, m.kind, m.tool_name, coalesce(m.timestamp, s.updated_at)
             FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ?1",
        )?;
        Ok(stmt.query_row([c.rowid], |r| {
            Ok(SearchHit {
                session_id: r.get(0)?,
                title: r.get(1)?,
                source: r.get(2)?,
                repository: r.get(3)?,
                branch: r.get(4)?,
                cwd: r.get(5)?,
                turn: r.get(6)?,
                seq: r.get(7)?,
                role: r.get(8)?,
                kind: r.get(9)?,
                tool_name: r.get(10)?,
                timestamp: r.get(11)?,
                field: String::new(),
                snippet: String::new(),
                score: c.score,
            })
        })?)
    }

    /// Returns the best field of a hit and its snippet.
    fn snippet(&self, fts: &str, rowid: i64) -> Result<(&'static str, String)> {
        let start = HIT_START.to_string();
        let end = HIT_END.to_string();
        // The snippet of each column; the first that highlights a match wins.
        let mut stmt = self.conn.prepare_cached(
            "SELECT snippet(message_index, 0, ?3, ?4, '…', 24),
                    snippet(message_index, 1, ?3, ?4, '…', 24),
                    snippet(message_index, 2, ?3, ?4, '…', 24)
             FROM message_index WHERE message_index MATCH ?1 AND rowid = ?2",
        )?;
        let snippets: [Option<String>; 3] = stmt
            .query_row(params![fts, rowid, start, end], |r| {
                Ok([r.get(0)?, r.get(1)?, r.get(2)?])
            })
            .optional()
            .map_err(fts_error)?
            .unwrap_or_default();
        let pick = |want: &dyn Fn(&str) -> bool| {
            snippets
                .iter()
                .enumerate()
                .find(|(_, s)| s.as_deref().is_some_and(want))
                .map(|(i, s)| (FIELDS[i], s.clone().unwrap_or_default()))
        };
        Ok(pick(&|s: &str| s.contains(HIT_START))
            .or_else(|| pick(&|s: &str| !s.is_empty()))
            .unwrap_or(("text", String::new())))
    }
}

/// Turns FTS5's complaints about a query into [`StoreError::InvalidQuery`]; the translator
/// should never let one through, this is the safety net.
fn fts_error(e: rusqlite::Error) -> StoreError {
    let msg = e.to_string();
    if msg.starts_with("fts5:") || msg.contains("malformed MATCH") {
        StoreError::InvalidQuery(format!("cannot search for that ({msg})"))
    } else {
        StoreError::Sqlite(e)
    }
}

#[cfg(test)]
mod tests {
    use trail_model::MessageKind;

    use super::*;

    #[test]
    fn words_phrases_prefixes_and_operators() {
        let t = |q: &str| translate_query(q).unwrap();
        assert_eq!(t("cargo test"), r#"("cargo") AND "test""#);
        assert_eq!(
            t(r#""cargo test" --release"#),
            r#"("cargo test") AND "--release""#
        );
        assert_eq!(t("pars*"), r#""pars"*"#);
        assert_eq!(
            t("timeout retry OR backoff"),
            r#"("timeout") AND ("retry" OR "backoff")"#
        );
        assert_eq!(t("error NOT warning"), r#"("error") NOT "warning""#);
        assert_eq!(t("a AND b"), r#"("a") AND "b""#);
        assert_eq!(t("src/main.rs:12"), r#""src/main.rs:12""#);
        assert_eq!(t(r#"say "hi"#), r#"("say") AND "hi""#);
        assert_eq!(t("or not and"), r#"(("or") AND "not") AND "and""#);
        assert_eq!(t("-> x"), r#""x""#);
    }

    #[test]
    fn bad_queries_say_why() {
        for q in [
            "",
            "   ",
            "->",
            "OR x",
            "x OR",
            "NOT x",
            "x NOT",
            "x AND",
            "a OR OR b",
            "x AND OR y",
        ] {
            assert!(translate_query(q).is_err(), "{q:?}");
        }
    }

    /// A store with a few messages of each indexed kind, indexed through the view.
    fn sample_store() -> Store {
        let store = Store::open_in_memory().unwrap();
        store
            .connection()
            .execute_batch(
                "INSERT INTO sessions (id, source, summary, updated_at) VALUES ('s1', 'codex', 'T', '2026-01-02T00:00:00.000Z');
                 INSERT INTO messages (session_id, seq, role, kind, turn_index, text, tool_input, tool_output) VALUES
                   ('s1', 0, 'user', 'prompt', 0, 'why does cargo test fail on src/main.rs:12?', NULL, NULL),
                   ('s1', 1, 'assistant', 'text', 0, 'The timeout is too short; retry with backoff.', NULL, NULL),
                   ('s1', 2, 'assistant', 'tool_call', 0, NULL, '{\"command\":\"cargo test --release\"}', NULL),
                   ('s1', 3, 'tool', 'tool_result', 0, NULL, NULL, 'error[E0308]: mismatched types — café'),
                   ('s1', 4, 'assistant', 'thinking', 0, 'secret pondering', NULL, NULL);
                 INSERT INTO message_index (message_index) VALUES ('rebuild');",
            )
            .unwrap();
        store
    }

    fn search(store: &Store, q: &str) -> Result<SearchResults> {
        store.search(&SearchOptions {
            query: q.to_string(),
            limit: 10,
            ..SearchOptions::default()
        })
    }

    #[test]
    fn finds_every_indexed_kind_but_not_thinking() {
        let store = sample_store();
        let kinds = |q: &str| -> Vec<(String, String)> {
            search(&store, q)
                .unwrap()
                .hits
                .into_iter()
                .map(|h| (h.kind.unwrap_or_default(), h.field))
                .collect()
        };
        // One hit per turn: the best message of turn 0.
        assert_eq!(kinds("src/main.rs:12"), [("prompt".into(), "text".into())]);
        assert_eq!(kinds("retry backoff"), [("text".into(), "text".into())]);
        assert_eq!(
            kinds("\"cargo test --release\""),
            [("tool_call".into(), "tool_input".into())]
        );
        assert_eq!(
            kinds("mismatched NOT timeout"),
            [("tool_result".into(), "tool_output".into())]
        );
        assert_eq!(kinds("timeout NOT backoff"), []);
        assert_eq!(
            kinds("E0308 cafe"),
            [("tool_result".into(), "tool_output".into())]
        );
        assert!(kinds("pondering").is_empty());
        let hit = &search(&store, "mismatch*").unwrap().hits[0];
        assert!(
            hit.snippet
                .contains(&format!("{HIT_START}mismatched{HIT_END}")),
            "{}",
            hit.snippet
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Whatever the user types, search answers or says the query cannot be read; it never
        /// fails with an SQL error and never panics.
        #[test]
        fn any_query_is_answered_or_refused_cleanly(q in "(\\PC|[\"*()^:+-]| OR | NOT | AND |NEAR){0,40}") {
            let store = sample_store();
            match search(&store, &q) {
                Ok(_) => proptest::prop_assert!(translate_query(&q).is_ok()),
                Err(StoreError::InvalidQuery(m)) => {
                    proptest::prop_assert!(translate_query(&q).is_err(), "FTS5 refused {:?}: {}", q, m)
                }
                Err(e) => proptest::prop_assert!(false, "{:?} -> {}", q, e),
            }
        }
    }

    /// Message kinds the index holds (the view `message_search_source` says the same in SQL).
    const INDEXED_KINDS: [MessageKind; 6] = [
        MessageKind::Prompt,
        MessageKind::Text,
        MessageKind::ToolCall,
        MessageKind::ToolResult,
        MessageKind::Error,
        MessageKind::Summary,
    ];

    #[test]
    fn the_view_lists_the_indexed_kinds() {
        let list: Vec<String> = INDEXED_KINDS
            .iter()
            .map(|k| format!("'{}'", k.as_str()))
            .collect();
        for sql in [
            include_str!("../migrations/0002_search.sql"),
            include_str!("../migrations/0008_index_without_escapes.sql"),
        ] {
            assert!(sql.contains(&format!("kind IN ({})", list.join(", "))));
        }
    }

    const COLOURED: &str = "build \x1b[31mRED\x1b[0m failed \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1b]52;c;aGk=\x07";

    fn coloured_store() -> Store {
        let store = Store::open_in_memory().unwrap();
        {
            let conn = store.connection();
            conn.execute(
                "INSERT INTO sessions (id, source, summary, updated_at) VALUES ('s1', 'codex', 'T', '2026-01-02T00:00:00.000Z')",
                [],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO messages (session_id, seq, role, kind, turn_index, text, tool_input, tool_output)
                 VALUES ('s1', 0, 'user', 'prompt', 0, ?1, NULL, NULL),
                        ('s1', 1, 'tool', 'tool_result', 0, NULL, NULL, ?1)",
                [COLOURED],
            )
            .unwrap();
            conn.execute_batch("INSERT INTO message_index (message_index) VALUES ('rebuild');")
                .unwrap();
        }
        store
    }

    /// Issue 15: `ESC[31mRED` was indexed as the token `31mred`.
    #[test]
    fn coloured_words_are_found_and_snippets_hold_no_escape() {
        let store = coloured_store();
        for q in ["RED", "red failed", "link", "\"build RED failed\""] {
            let hits = search(&store, q).unwrap().hits;
            assert_eq!(hits.len(), 1, "{q}");
            let snippet = &hits[0].snippet;
            assert!(
                !snippet.contains('\x1b') && !snippet.contains('\x07'),
                "{snippet:?}"
            );
            assert!(snippet.contains(HIT_START), "{snippet:?}");
        }
        assert!(search(&store, "31mred").unwrap().hits.is_empty());
        // The stored text keeps its bytes.
        let text: String = store
            .connection()
            .query_row("SELECT text FROM messages WHERE seq = 0", [], |r| r.get(0))
            .unwrap();
        assert_eq!(text, COLOURED);
    }

    /// A store indexed before migration 8 (escapes in the index) is fixed by it: the coloured
    /// word is found, and FTS5's integrity check passes (deletes matched what was indexed).
    #[test]
    fn migration_8_reindexes_escaped_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let store = Store::open(&path).unwrap();
            let conn = store.connection();
            // Back to version 7: the old view, its index, escapes in search_index.
            conn.execute_batch(
                "DROP INDEX idx_sessions_id_nocase;
                 DROP VIEW message_search_source;
                 CREATE VIEW message_search_source AS
                 SELECT id, text, substr(tool_input, 1, 1000) AS tool_input,
                     CASE WHEN length(tool_output) > 800
                          THEN substr(tool_output, 1, 600) || char(10) || '…' || char(10) || substr(tool_output, -200)
                          ELSE tool_output END AS tool_output
                 FROM messages
                 WHERE kind IN ('prompt', 'text', 'tool_call', 'tool_result', 'error', 'summary');
                 INSERT INTO sessions (id, source, summary, updated_at) VALUES ('s1', 'codex', 'T', '2026-01-02T00:00:00.000Z');",
            )
            .unwrap();
            conn.execute(
                "INSERT INTO messages (session_id, seq, role, kind, turn_index, text) VALUES
                   ('s1', 0, 'user', 'prompt', 0, ?1), ('s1', 1, 'assistant', 'text', 0, 'plain answer')",
                [COLOURED],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO search_index (rowid, content, session_id, source_type, source_id)
                 VALUES (1, ?1, 's1', 'turn', 's1:turn:0')",
                [COLOURED],
            )
            .unwrap();
            conn.execute_batch(
                "INSERT INTO message_index (message_index) VALUES ('rebuild');
                 PRAGMA user_version = 7;",
            )
            .unwrap();
            assert!(search(&store, "RED").unwrap().hits.is_empty());
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), crate::schema::CURRENT);
        assert_eq!(search(&store, "RED").unwrap().hits.len(), 1);
        assert_eq!(search(&store, "plain").unwrap().hits.len(), 1);
        let conn = store.connection();
        conn.execute_batch(
            "INSERT INTO message_index (message_index) VALUES ('integrity-check');
             INSERT INTO search_index (search_index) VALUES ('integrity-check');",
        )
        .unwrap();
        let chronicle: i64 = conn
            .query_row(
                "SELECT count(*) FROM search_index WHERE search_index MATCH 'RED'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(chronicle, 1);
    }
}
