//! Full-text search: the query behind `trail search`.
//!
//! The index (`turn_search`, in the search database: see `search_db.rs`) holds one row per
//! turn. Ranking is exact: FTS5 scores every matching turn with bm25 and sorts
//! (`ORDER BY rank`), whatever the number of matches; filters are joined in the same query, so
//! it stops as soon as the hits asked for have passed them. Ranking turns rather than
//! messages is what keeps that affordable: a near-stopword matches every turn, but there are
//! ~18 times fewer turns than messages.
//!
//! A hit then shows the turn's best message: the hit turns' messages are put into a small
//! in-memory FTS5 table (the same tokenizer), which scores each message against the query's
//! words (any of them) and makes the snippet.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use rusqlite::types::Value;
use rusqlite::{params, OptionalExtension, ToSql};
use serde::Serialize;
use trail_model::Role;

use crate::caps::{
    cap_tool_input, cap_tool_output, CappedFields, LONG_INPUT_BYTES, LONG_OUTPUT_BYTES,
};
use crate::filter::like_escape;
use crate::filter::{Filter, Timestamp};
use crate::search_db::{INDEXED_KINDS, TURN_PROMPTS_SQL};
pub use crate::search_query::translate_query;
use crate::search_query::{
    any_word_query, fts_error, whole_message_query, Keep, Needles, QueryShape, ALL_COLUMNS, FIELDS,
};
use crate::search_rank::{HitTurn, TurnRead};
pub use crate::search_typo::Correction;
pub use crate::text::{HIT_END, HIT_START};
use crate::{Result, Store, StoreError};

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
    /// Which sessions and turns. For a search, `repo` matches the repository alone, and a
    /// turn is in the time range when it overlaps it.
    pub filter: Filter,
    /// Only what this role wrote: the user's prompts, the assistant's answers and tool calls,
    /// the tools' output.
    pub role: Option<Role>,
    /// A full session id.
    pub session: Option<String>,
    /// Leaves out sessions updated within this window, from its start up to (not at) its end,
    /// and those never updated (an agent must not find the conversation it is having).
    pub exclude_updated_within: Option<(Timestamp, Timestamp)>,
    /// Leaves out these sessions (full ids).
    pub exclude_sessions: Vec<String>,
    pub sort: SearchSort,
    pub limit: usize,
    /// Searches the words as typed: no near spelling when they match nothing or few turns.
    pub exact: bool,
}

/// One condition of a search's filter, in no SQL dialect: which of a [`SearchOptions`]'s
/// filters apply, and what each asks of a turn and its session, is decided here once;
/// SQLite (`Store::search`) and PostgreSQL (trail-postgres) only number the placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchCondition {
    Source(String),
    /// The repository holds this (a substring, any case).
    Repository(String),
    /// The working folder holds this.
    Cwd(String),
    Branch(String),
    /// The turn ends at or after this (a turn is in a range when it overlaps it).
    EndsSince(String),
    /// The turn starts before this.
    StartsBefore(String),
    /// One of the session's models holds this.
    Model(String),
    Session(String),
    /// The session was last updated before the first time, or at or after the second.
    UpdatedOutside(String, String),
    NotSession(String),
}

impl SearchOptions {
    /// The conditions of this search's filter, in a fixed order.
    pub fn conditions(&self) -> Vec<SearchCondition> {
        use SearchCondition as C;
        let f = &self.filter;
        let mut out = Vec::new();
        out.extend(f.source.map(|v| C::Source(v.as_str().to_string())));
        out.extend(f.repo.clone().map(C::Repository));
        out.extend(f.cwd.clone().map(C::Cwd));
        out.extend(f.branch.clone().map(C::Branch));
        out.extend(f.since.as_ref().map(|v| C::EndsSince(v.to_string())));
        out.extend(f.until.as_ref().map(|v| C::StartsBefore(v.to_string())));
        out.extend(f.model.clone().map(C::Model));
        out.extend(self.session.clone().map(C::Session));
        out.extend(
            self.exclude_updated_within
                .as_ref()
                .map(|(since, until)| C::UpdatedOutside(since.to_string(), until.to_string())),
        );
        out.extend(self.exclude_sessions.iter().cloned().map(C::NotSession));
        out
    }
}

impl SearchCondition {
    /// The condition as ` AND ...` SQL with a `?` for each of its values, and those values:
    /// `turn` is the alias of the turn table (sessions are `s`), `contains` the dialect's
    /// substring match with its `?` (the value is a pattern made with [`like_escape`]).
    pub fn sql(&self, turn: &str, contains: &str) -> (String, Vec<String>) {
        use SearchCondition as C;
        let pattern = |v: &str| format!("%{}%", like_escape(v));
        let one = |sql: String, value: String| (sql, vec![value]);
        match self {
            C::Source(v) => one(" AND s.source = ?".into(), v.clone()),
            C::Repository(v) => one(format!(" AND s.repository {contains}"), pattern(v)),
            C::Cwd(v) => one(format!(" AND s.cwd {contains}"), pattern(v)),
            C::Branch(v) => one(" AND s.branch = ?".into(), v.clone()),
            C::EndsSince(v) => one(
                format!(" AND coalesce({turn}.last_at, s.updated_at) >= ?"),
                v.clone(),
            ),
            C::StartsBefore(v) => one(
                format!(" AND coalesce({turn}.first_at, s.created_at) < ?"),
                v.clone(),
            ),
            C::Model(v) => one(format!(" AND s.models {contains}"), pattern(v)),
            C::Session(v) => one(format!(" AND {turn}.session_id = ?"), v.clone()),
            C::UpdatedOutside(since, until) => (
                " AND (s.updated_at < ? OR s.updated_at >= ?)".into(),
                vec![since.clone(), until.clone()],
            ),
            C::NotSession(v) => one(format!(" AND {turn}.session_id <> ?"), v.clone()),
        }
    }

    /// For a condition that only leaves sessions out, the query of the ids of those it
    /// leaves out (`?1`, `?2`: its values), each answered by an index: a filter of these alone
    /// is checked without testing each match in SQL (`Store::excluded_turns`). What it leaves
    /// out is what [`SearchCondition::sql`] does not keep: `updated_at < ? OR updated_at >= ?`
    /// keeps no session updated within the window, nor one never updated.
    pub(crate) fn left_out(&self) -> Option<(&'static str, Vec<&str>)> {
        match self {
            SearchCondition::UpdatedOutside(since, until) => Some((
                "SELECT id FROM main.sessions WHERE updated_at >= ?1 AND updated_at < ?2
                 UNION ALL SELECT id FROM main.sessions WHERE updated_at IS NULL",
                vec![since, until],
            )),
            SearchCondition::NotSession(id) => Some(("SELECT ?1", vec![id])),
            _ => None,
        }
    }
}

/// `sql` with its `?`s numbered in order from `first`, each written as `mark` and its number
/// (`?3` for SQLite, `$3` for PostgreSQL).
pub fn number_placeholders(sql: &str, first: usize, mark: &str) -> String {
    let mut parts = sql.split('?');
    let mut out = parts.next().unwrap_or_default().to_string();
    for (n, part) in (first..).zip(parts) {
        out.push_str(&format!("{mark}{n}{part}"));
    }
    out
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
    /// Matching turns read in rank order until the hits were known (the hits are the best of
    /// every match: a match not read ranks below them).
    pub ranked: usize,
    /// Always false: every match is ranked (a cap on ranked matches is gone; kept so callers
    /// that said when it applied keep compiling).
    pub capped: bool,
    /// Words replaced by near spellings from the index, when the query as typed matched
    /// nothing or few turns (never with [`SearchOptions::exact`]).
    pub correction: Option<Correction>,
}

/// What the best message of a hit turn says.
pub(crate) struct BestMessage {
    score: f64,
    /// [`WHOLE_PROMPT`], [`WHOLE_MESSAGE`] or [`WHOLE_NONE`].
    class: u8,
    seq: i64,
    role: Option<String>,
    kind: Option<String>,
    tool_name: Option<String>,
    timestamp: Option<String>,
    field: &'static str,
    snippet: String,
}

impl Store {
    /// Searches every session: the query as the user wrote it, with filters. One hit per turn,
    /// the turns whose words stand together first (`search_rank.rs`), then best bm25 (or
    /// newest first), ranked over every match. When the query matches nothing or few turns
    /// and a word of it has a far more frequent near spelling in the index, the hits of the
    /// query with that spelling come too (`search_typo.rs`), unless `exact`.
    // No `err` here: a query the user mistyped is not an error worth logging.
    #[tracing::instrument(level = "debug", skip_all)]
    pub fn search(&self, o: &SearchOptions) -> Result<SearchResults> {
        let mut results = self.search_as_typed(o)?;
        if o.exact || results.hits.len() >= o.limit {
            return Ok(results);
        }
        let no_match = results.hits.is_empty();
        let Some(correction) = self.correct_query(&o.query, no_match)? else {
            return Ok(results);
        };
        let corrected = self.search_as_typed(&SearchOptions {
            query: correction.query.clone(),
            ..o.clone()
        })?;
        if corrected.hits.is_empty() {
            return Ok(results);
        }
        let seen: std::collections::HashSet<(String, Option<i64>)> = results
            .hits
            .iter()
            .map(|h| (h.session_id.clone(), h.turn))
            .collect();
        let room = o.limit - results.hits.len();
        results.hits.extend(
            corrected
                .hits
                .into_iter()
                .filter(|h| !seen.contains(&(h.session_id.clone(), h.turn)))
                .take(room),
        );
        results.ranked += corrected.ranked;
        results.correction = Some(correction);
        Ok(results)
    }

    /// [`Store::search`] of the words as typed.
    fn search_as_typed(&self, o: &SearchOptions) -> Result<SearchResults> {
        if let Some(e) = self.unsearchable() {
            return Err(e);
        }
        let fts = translate_query(&o.query).map_err(StoreError::InvalidQuery)?;
        // A role is a column filter: prompts are the user's, answers and tool calls the
        // assistant's, tool output the tool's.
        let matched = match o.role {
            Some(Role::User) => format!("{{prompt}} : ({fts})"),
            Some(Role::Assistant) => format!("{{answer tool_input}} : ({fts})"),
            Some(Role::Tool) => format!("{{tool_output}} : ({fts})"),
            Some(Role::System) | None => fts.clone(),
        };
        let role = o.role.map(Role::as_str);
        let mut conditions = o.conditions();
        // A filter that only leaves out a few sessions (an agent's own conversation: the MCP
        // server's default) leaves out their turns, checked in Rust as the matches are read:
        // joining every match to its session to test it doubled a common word's search.
        let excluded = match o.sort {
            SearchSort::Relevance => self.excluded_turns(&conditions)?,
            SearchSort::Recent => None,
        };
        if excluded.is_some() {
            conditions.clear();
        }
        // Filters are fixed SQL fragments with bound values; never the user's text in SQL.
        let mut filter = String::new();
        let mut args: Vec<Value> = vec![Value::Text(matched.clone())];
        for c in conditions {
            let (sql, values) = c.sql("d", "LIKE ? ESCAPE '\\'");
            filter.push_str(&number_placeholders(&sql, args.len() + 1, "?"));
            args.extend(values.into_iter().map(Value::Text));
        }
        // The query read once for the ranking and the best messages.
        let shape = QueryShape::of(&o.query);
        let needles = Needles::of(&o.query);
        let (turns, ranked) = match o.sort {
            SearchSort::Relevance => {
                let ranking = crate::search_rank::Ranking {
                    matched: &matched,
                    filter: &filter,
                    args: &args,
                    needles: needles.as_ref(),
                    excluded: excluded.as_ref(),
                    role,
                    shape: &shape,
                    implied: shape.positive.as_deref() == Some(fts.as_str()),
                    limit: o.limit,
                };
                self.coherent_turns(&ranking)?
            }
            SearchSort::Recent => {
                let turns = self.recent_turns(&filter, args, o.limit)?;
                let n = turns.len();
                (turns, n)
            }
        };
        let best = self.best_messages(&o.query, &shape, needles.as_ref(), role, &turns)?;
        let mut hits = Vec::with_capacity(turns.len());
        for (t, best) in turns.iter().zip(best) {
            hits.push(self.hit(t, best)?);
        }
        Ok(SearchResults {
            fts_query: fts,
            hits,
            ranked,
            capped: false,
            correction: None,
        })
    }

    /// The turns (index rowids) a filter of exclusions alone leaves out (each condition's
    /// [`SearchCondition::left_out`]). `None` when the filter asks anything else, or leaves out more than
    /// [`EXCLUDED_SESSIONS_MAX`] sessions or [`EXCLUDED_MAX`] turns (then SQL tests each
    /// match).
    fn excluded_turns(
        &self,
        conditions: &[SearchCondition],
    ) -> Result<Option<crate::search_rank::RowidSet>> {
        let Some(left_out) = conditions
            .iter()
            .map(SearchCondition::left_out)
            .collect::<Option<Vec<_>>>()
            .filter(|l| !l.is_empty())
        else {
            return Ok(None);
        };
        let mut sessions: Vec<String> = Vec::new();
        for (sql, values) in left_out {
            let mut stmt = self.conn.prepare_cached(sql)?;
            let mut ids = stmt.query(rusqlite::params_from_iter(values))?;
            while let Some(row) = ids.next()? {
                sessions.push(row.get(0)?);
                if sessions.len() > EXCLUDED_SESSIONS_MAX {
                    return Ok(None);
                }
            }
        }
        let mut turns = self
            .conn
            .prepare_cached("SELECT id FROM search.turn_docs WHERE session_id = ?1")?;
        let mut out = crate::search_rank::RowidSet::default();
        for session in &sessions {
            for id in turns.query_map([session], |r| r.get(0))? {
                out.insert(id?);
            }
            if out.len() > EXCLUDED_MAX {
                return Ok(None);
            }
        }
        Ok(Some(out))
    }

    /// The newest matching turns first (`--sort recent`): no ranking to do.
    fn recent_turns(
        &self,
        filter: &str,
        mut args: Vec<Value>,
        limit: usize,
    ) -> Result<Vec<HitTurn>> {
        args.push(Value::Integer(limit as i64));
        let limit_arg = args.len();
        let sql = format!(
            "SELECT d.session_id, d.turn_index, t.rank, t.rowid
             FROM turn_search t
             JOIN turn_docs d ON d.id = t.rowid
             JOIN main.sessions s ON s.id = d.session_id
             WHERE turn_search MATCH ?1{filter}
             ORDER BY coalesce(d.last_at, s.updated_at) DESC, t.rowid DESC LIMIT ?{limit_arg}"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let refs: Vec<&dyn ToSql> = args.iter().map(|v| v as &dyn ToSql).collect();
        let turns = stmt
            .query_map(refs.as_slice(), |r| {
                Ok(HitTurn {
                    rowid: r.get(3)?,
                    session_id: r.get(0)?,
                    turn: r.get(1)?,
                    tier: None,
                    score: r.get(2)?,
                })
            })
            .map_err(fts_error)?
            .collect::<rusqlite::Result<_>>()
            .map_err(fts_error)?;
        Ok(turns)
    }

    fn hit(&self, t: &HitTurn, best: Option<BestMessage>) -> Result<SearchHit> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT summary, source, repository, branch, cwd, updated_at FROM main.sessions
             WHERE id = ?1",
        )?;
        let (title, source, repository, branch, cwd, updated_at) =
            stmt.query_row([&t.session_id], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get::<_, Option<String>>(5)?,
                ))
            })?;
        let best = best.unwrap_or(BestMessage {
            score: t.score,
            class: WHOLE_NONE,
            seq: 0,
            role: None,
            kind: None,
            tool_name: None,
            timestamp: None,
            field: "text",
            snippet: String::new(),
        });
        let _ = best.score;
        Ok(SearchHit {
            session_id: t.session_id.clone(),
            title,
            source,
            repository,
            branch,
            cwd,
            turn: (t.turn >= 0).then_some(t.turn),
            seq: best.seq,
            role: best.role,
            kind: best.kind,
            tool_name: best.tool_name,
            timestamp: best.timestamp.or(updated_at),
            field: best.field.to_string(),
            snippet: best.snippet,
            score: t.score,
        })
    }

    /// Chooses each hit turn's best message and makes its snippet, with FTS5 itself on an
    /// in-memory table of those turns' messages: a message that holds all the query's words
    /// (the prompt first), then the best bm25 for any of them. A turn with one prompt that
    /// holds every word (known in Rust, [`Store::lone_whole_prompt`]) has its best message
    /// already, and only that prompt goes into the table, for its snippet: its other messages,
    /// tool outputs among them, are not read.
    fn best_messages(
        &self,
        query: &str,
        shape: &QueryShape,
        needles: Option<&Needles>,
        role: Option<&str>,
        turns: &[HitTurn],
    ) -> Result<Vec<Option<BestMessage>>> {
        let Some(words) = any_word_query(query) else {
            return Ok(turns.iter().map(|_| None).collect());
        };
        let whole = shape.positive.as_deref().map(whole_message_query);
        self.with_hit_text(|| {
            let mut rows = Vec::new();
            let mut owner = HashMap::new();
            let mut rest = Vec::new();
            let mut lowered = Vec::new();
            for (i, t) in turns.iter().enumerate() {
                // A whole prompt puts its turn in tier 0: a turn ranked lower has none.
                let may_have_one = t.tier.is_none_or(|tier| tier == 0);
                let lone = match needles {
                    Some(n) if may_have_one && role.is_none_or(|r| r == "user") => {
                        self.lone_whole_prompt(n, role, t, &mut lowered)?
                    }
                    _ => None,
                };
                match lone {
                    Some((row, best)) => {
                        owner.insert(row.0, (i, best));
                        rows.push(row);
                    }
                    None => rest.push(i),
                }
            }
            let others: Vec<HitTurn> = rest.iter().map(|&i| turns[i].clone()).collect();
            // Only the messages whose signatures say they may hold a word are read.
            let which: Vec<TurnRead> = self
                .messages_to_read(needles, Keep::AnyWord, &others)?
                .into_iter()
                .map(|ids| TurnRead {
                    columns: ALL_COLUMNS,
                    ids,
                })
                .collect();
            let (more, of_others) =
                self.read_hit_text(needles, Keep::AnyWord, role, &others, &which, None)?;
            rows.extend(more);
            owner.extend(of_others.into_iter().map(|(id, (k, m))| (id, (rest[k], m))));
            self.insert_hit_text(rows)?;
            self.choose_best(&words, whole.as_deref(), owner, turns.len())
        })
    }

    /// The row for `temp.hit_text` and the best message of turn `t` when its prompts decide
    /// it: exactly one of them holds every word, as [`Needles::one_field_holds_all`] reads it
    /// (surely), and none other does or may. A prompt that holds every word is the best a
    /// turn can show; among two or more, bm25 decides, on the table.
    fn lone_whole_prompt(
        &self,
        needles: &Needles,
        role: Option<&str>,
        t: &HitTurn,
        lowered: &mut Vec<u8>,
    ) -> Result<Option<(HitTextRow, BestMessage)>> {
        let mut read = self.conn.prepare_cached(TURN_PROMPTS_SQL)?;
        let turn = (t.turn >= 0).then_some(t.turn);
        let mut rows = read.query(params![t.session_id, turn, role])?;
        let mut found = None;
        while let Some(r) = rows.next()? {
            let text: Option<String> = r.get(5)?;
            let text = text.map(|s| crate::text::strip_ansi(&s).into_owned());
            match needles.one_field_holds_all(&[text.as_deref()], lowered) {
                Some(false) => continue,
                Some(true) if found.is_none() => {}
                // A second whole prompt, or one only FTS5 can read.
                _ => return Ok(None),
            }
            let id: i64 = r.get(0)?;
            let best = BestMessage {
                score: f64::INFINITY,
                class: WHOLE_NONE,
                seq: r.get(1)?,
                role: r.get(2)?,
                kind: Some("prompt".to_string()),
                tool_name: r.get(3)?,
                timestamp: r.get(4)?,
                field: "text",
                snippet: String::new(),
            };
            found = Some(((id, text, None, None), best));
        }
        Ok(found)
    }

    /// Runs `f` with `temp.hit_text` to fill, inside a savepoint rolled back at the end:
    /// outside one, FTS5 wrote a segment per inserted message (and merged them), a fifth of a
    /// search's time; rolled back, nothing is ever written.
    pub(crate) fn with_hit_text<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.ensure_hit_text()?;
        self.conn.execute_batch("SAVEPOINT hit_text")?;
        let r = f();
        let undo = self
            .conn
            .execute_batch("ROLLBACK TO hit_text; RELEASE hit_text");
        let out = r?;
        undo?;
        Ok(out)
    }

    /// Creates the in-memory table hit turns' messages go into (same tokenizer as the index).
    pub(crate) fn ensure_hit_text(&self) -> Result<()> {
        self.conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.hit_text USING fts5(
                 text, tool_input, tool_output, tokenize = 'unicode61 remove_diacritics 2');",
        )?;
        Ok(())
    }

    /// Reads the indexed messages of `turns` as rows for `temp.hit_text` (rowid: the message
    /// id; [`Store::insert_hit_text`] puts them in), leaving out those `needles` say cannot
    /// match; returns them with each message's turn (its index in `turns`) and what a hit
    /// would show of it. `which`: what to read of each turn.
    pub(crate) fn read_hit_text(
        &self,
        needles: Option<&Needles>,
        keep: Keep,
        role: Option<&str>,
        turns: &[HitTurn],
        which: &[TurnRead],
        whole: Option<&mut HashSet<usize>>,
    ) -> Result<(Vec<HitTextRow>, Owners)> {
        let mut by_turn = self
            .conn
            .prepare_cached(&hit_messages_sql(HitMessages::OfTurn))?;
        let mut by_id = self
            .conn
            .prepare_cached(&hit_messages_sql(HitMessages::ById))?;
        let mut read = HitRead {
            needles,
            keep,
            long_fields: CappedFields::new(&self.conn),
            owner: HashMap::new(),
            rows_in: Vec::new(),
            lowered: Vec::new(),
            whole,
        };
        for (i, (t, which)) in turns.iter().zip(which).enumerate() {
            let columns = which.columns;
            match &which.ids {
                None => {
                    let turn = (t.turn >= 0).then_some(t.turn);
                    let mut rows = by_turn.query(params![t.session_id, turn, role, columns])?;
                    while let Some(r) = rows.next()? {
                        if read.take(r, i)? {
                            break;
                        }
                    }
                }
                Some(ids) => {
                    for id in ids {
                        let mut rows = by_id.query(params![id, None::<i64>, role, columns])?;
                        if let Some(r) = rows.next()? {
                            if read.take(r, i)? {
                                break;
                            }
                        }
                    }
                }
            }
        }
        Ok((read.rows_in, read.owner))
    }

    /// The messages of each of `turns` worth reading for `keep`: the ids, in `seq` order, of
    /// those whose signatures (`search_sig.rs`) say one of their fields may hold what `keep`
    /// asks of it (none: the turn has no such message). `None` for a turn whose signatures
    /// cannot say (no needles, a search database without signatures, a turn without a row, or
    /// messages that are not those its signatures were made of): all of its messages are read.
    pub(crate) fn messages_to_read(
        &self,
        needles: Option<&Needles>,
        keep: Keep,
        turns: &[HitTurn],
    ) -> Result<Vec<Option<Vec<i64>>>> {
        let probe = match needles.and_then(|n| n.probe(keep)) {
            Some(probe) if crate::search_db::sigs_stored(&self.conn)? => probe,
            _ => return Ok(vec![None; turns.len()]),
        };
        let mut sigs_of = self
            .conn
            .prepare_cached("SELECT sigs FROM search.turn_sigs WHERE id = ?1")?;
        let mut ids_of = self.conn.prepare_cached(&indexed_messages_sql())?;
        let mut out = Vec::with_capacity(turns.len());
        for t in turns {
            let may = sigs_of
                .query_row([t.rowid], |r| {
                    Ok(r.get_ref(0)?.as_blob().ok().and_then(|b| probe.messages(b)))
                })
                .optional()?
                .flatten();
            let Some(may) = may else {
                out.push(None);
                continue;
            };
            if !may.contains(&true) {
                out.push(Some(Vec::new()));
                continue;
            }
            let turn = (t.turn >= 0).then_some(t.turn);
            let ids: Vec<i64> = ids_of
                .query_map(params![t.session_id, turn], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            out.push((ids.len() == may.len()).then(|| {
                ids.into_iter()
                    .zip(may)
                    .filter_map(|(id, may)| may.then_some(id))
                    .collect()
            }));
        }
        Ok(out)
    }

    /// Inserts rows (id, text, tool input, tool output) into `temp.hit_text`, in rowid order:
    /// FTS5 writes its pending terms out as a segment whenever a rowid is lower than the one
    /// before, and hits come in rank order, so inserted as read, nearly every turn made a
    /// segment of its own (a tenth of a two-word search's time went to those writes).
    pub(crate) fn insert_hit_text(&self, mut rows: Vec<HitTextRow>) -> Result<()> {
        let mut insert = self.conn.prepare_cached(
            "INSERT INTO temp.hit_text (rowid, text, tool_input, tool_output)
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        rows.sort_unstable_by_key(|row| row.0);
        for (id, text, input, output) in rows {
            insert.execute(params![id, text, input, output])?;
        }
        Ok(())
    }

    /// The messages of `temp.hit_text` that match `expr` (FTS5 text).
    pub(crate) fn hit_text_matches(&self, expr: &str) -> Result<std::collections::HashSet<i64>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT rowid FROM temp.hit_text WHERE hit_text MATCH ?1")?;
        let ids = stmt
            .query_map([expr], |r| r.get(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<_>>());
        match ids.map_err(fts_error) {
            Ok(ids) => Ok(ids),
            // What FTS5 cannot read matches nothing (the query itself was read).
            Err(StoreError::InvalidQuery(_)) => Ok(Default::default()),
            Err(e) => Err(e),
        }
    }

    /// Picks each turn's best message among those loaded into `temp.hit_text`.
    fn choose_best(
        &self,
        words: &str,
        whole: Option<&str>,
        mut owner: Owners,
        turns: usize,
    ) -> Result<Vec<Option<BestMessage>>> {
        let whole = match whole {
            Some(expr) => self.hit_text_matches(expr)?,
            None => Default::default(),
        };
        let start = HIT_START.to_string();
        let end = HIT_END.to_string();
        let mut best: Vec<Option<BestMessage>> = (0..turns).map(|_| None).collect();
        let mut stmt = self.conn.prepare_cached(
            "SELECT rowid, bm25(hit_text, 1.0, 0.75, 0.5),
                    snippet(hit_text, 0, ?2, ?3, '…', 24),
                    snippet(hit_text, 1, ?2, ?3, '…', 24),
                    snippet(hit_text, 2, ?2, ?3, '…', 24)
             FROM temp.hit_text WHERE hit_text MATCH ?1",
        )?;
        let mut rows = stmt.query(params![words, start, end]).map_err(fts_error)?;
        while let Some(r) = rows.next().map_err(fts_error)? {
            let id: i64 = r.get(0)?;
            let score: f64 = r.get(1)?;
            let Some((i, m)) = owner.get(&id) else {
                continue;
            };
            let i = *i;
            let class = match (whole.contains(&id), m.kind.as_deref()) {
                (true, Some("prompt")) => WHOLE_PROMPT,
                (true, _) => WHOLE_MESSAGE,
                (false, _) => WHOLE_NONE,
            };
            if best[i]
                .as_ref()
                .is_some_and(|b| (b.class, b.score) <= (class, score))
            {
                continue;
            }
            let snippets: [Option<String>; 3] = [r.get(2)?, r.get(3)?, r.get(4)?];
            let Some((_, mut m)) = owner.remove(&id) else {
                continue;
            };
            let pick = |want: &dyn Fn(&str) -> bool| {
                snippets
                    .iter()
                    .enumerate()
                    .find(|(_, s)| s.as_deref().is_some_and(want))
                    .map(|(f, s)| (FIELDS[f], s.clone().unwrap_or_default()))
            };
            let (field, snippet) = pick(&|s: &str| s.contains(HIT_START))
                .or_else(|| pick(&|s: &str| !s.is_empty()))
                .unwrap_or(("text", String::new()));
            m.score = score;
            m.class = class;
            m.field = field;
            // Tool inputs are JSON text: show `\n` and `\"` as what they stand for.
            m.snippet = if field == "tool_input" {
                crate::text::unescape_json_snippet(&snippet).into_owned()
            } else {
                snippet
            };
            best[i] = Some(m);
        }
        Ok(best)
    }
}

/// The messages in `temp.hit_text`, by id: each one's turn (an index into the hit turns) and
/// what a hit would show of it.
pub(crate) type Owners = HashMap<i64, (usize, BestMessage)>;

/// A row of `temp.hit_text`: the message id, its text, tool input and tool output.
pub(crate) type HitTextRow = (i64, Option<String>, Option<String>, Option<String>);

/// A filter of exclusions is checked in Rust up to this many sessions and turns left out (a
/// set this size is read in a few milliseconds); more are left to SQL.
const EXCLUDED_SESSIONS_MAX: usize = 256;
const EXCLUDED_MAX: usize = 20_000;

/// A best message's class: a prompt that holds every word of the query, another message that
/// does, one that holds only some (lower is better).
const WHOLE_PROMPT: u8 = 0;
const WHOLE_MESSAGE: u8 = 1;
const WHOLE_NONE: u8 = 2;

/// What [`Store::read_hit_text`] has read so far.
struct HitRead<'a, 'c> {
    needles: Option<&'a Needles>,
    keep: Keep,
    long_fields: CappedFields<'c>,
    owner: Owners,
    rows_in: Vec<HitTextRow>,
    lowered: Vec<u8>,
    whole: Option<&'a mut HashSet<usize>>,
}

impl HitRead<'_, '_> {
    /// Takes row `r` (a message of turn `i`, [`hit_messages_sql`]'s columns) if it may match;
    /// true when it decides that the turn holds every word in one message (its other messages
    /// need not be read).
    fn take(&mut self, r: &rusqlite::Row<'_>, i: usize) -> Result<bool> {
        let id: i64 = r.get(0)?;
        // Borrowed from SQLite's row: a long tool output is not copied to be capped.
        let field = |i: usize| {
            r.get_ref(i)?.as_str_or_null().map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    i,
                    rusqlite::types::Type::Text,
                    Box::new(e),
                )
            })
        };
        // As the index holds them: capped, without escape sequences (copied only when
        // kept, or when capping or stripping changed them).
        let strip = crate::text::strip_ansi;
        let stripped = |s: String| Cow::Owned(strip(&s).into_owned());
        let text = field(6)?.map(strip);
        // A long tool field is read in parts ([`CappedFields`]); its length is in
        // column 9 or 10 instead.
        let input = match r.get::<_, Option<usize>>(9)? {
            Some(len) => Some(stripped(self.long_fields.tool_input(id, len)?)),
            None => field(7)?.map(|s| strip(cap_tool_input(s))),
        };
        let output = match r.get::<_, Option<usize>>(10)? {
            Some(len) => Some(stripped(self.long_fields.tool_output(id, len)?)),
            None => field(8)?.map(|s| match cap_tool_output(s) {
                Cow::Borrowed(s) => strip(s),
                Cow::Owned(s) => stripped(s),
            }),
        };
        let fields = [text.as_deref(), input.as_deref(), output.as_deref()];
        let kept = match (self.needles, self.keep) {
            (None, _) => true,
            (Some(n), Keep::AnyWord) => n.may_match(&fields, &mut self.lowered),
            // A message whose fields are ASCII is decided here (its turn goes into
            // `whole` when one field holds every word); only the others go into the
            // table for FTS5 to decide.
            (Some(n), Keep::EveryWordInOneField) => {
                match (
                    n.one_field_holds_all(&fields, &mut self.lowered),
                    self.whole.as_deref_mut(),
                ) {
                    (Some(true), Some(whole)) => {
                        // The turn holds every word in one message: its other
                        // messages need not be read.
                        whole.insert(i);
                        return Ok(true);
                    }
                    (Some(false), Some(_)) => false,
                    _ => n.may_match_one_field(&fields, &mut self.lowered),
                }
            }
        };
        if !kept {
            return Ok(false);
        }
        let own = |s: Option<Cow<'_, str>>| s.map(Cow::into_owned);
        self.rows_in.push((id, own(text), own(input), own(output)));
        self.owner.insert(
            id,
            (
                i,
                BestMessage {
                    score: f64::INFINITY,
                    class: WHOLE_NONE,
                    seq: r.get(1)?,
                    role: r.get(2)?,
                    kind: r.get(3)?,
                    tool_name: r.get(4)?,
                    timestamp: r.get(5)?,
                    field: "text",
                    snippet: String::new(),
                },
            ),
        );
        Ok(false)
    }
}

/// The kinds of message the index holds, as an SQL list (`'prompt', 'text', ...`).
fn indexed_kinds_sql() -> String {
    INDEXED_KINDS.map(|k| format!("'{k}'")).join(", ")
}

/// Which messages [`hit_messages_sql`] reads.
#[derive(Clone, Copy)]
enum HitMessages {
    /// A hit turn's indexed messages (`?1` session, `?2` turn).
    OfTurn,
    /// One message (`?1` its id; `?2` unused), if it is indexed.
    ById,
}

/// Reads hit messages (`?3` role or NULL, `?4` the columns to read, below).
///
/// `+seq`: without statistics the planner walked the whole session in `seq` order to skip a
/// sort, a table read per message of the session for each hit (more than half of a search's
/// time); the unary plus leaves it the (session, turn) index.
fn hit_messages_sql(which: HitMessages) -> String {
    let kinds = indexed_kinds_sql();
    let which = match which {
        HitMessages::OfTurn => "session_id = ?1 AND turn_index IS ?2",
        HitMessages::ById => "id = ?1 AND ?2 IS NULL",
    };
    // A field is read only when its column's bit is in ?4 (`search_rank::column_bit`): the
    // text goes to the column of its kind, the tool input and output to their own (as
    // `search_db::turn_docs` puts them). Not read, a long tool output's pages are not touched.
    // A long tool field is not read here but in parts ([`CappedFields`]): its length in bytes
    // (`octet_length`, which does not read the value) comes instead, in columns 9 and 10.
    format!(
        "SELECT id, seq, role, kind, tool_name, timestamp,
                CASE WHEN ?4 & (CASE kind WHEN 'prompt' THEN 8 WHEN 'tool_call' THEN 2
                                          WHEN 'tool_result' THEN 4 ELSE 1 END)
                     THEN text END,
                CASE WHEN ?4 & 2 AND octet_length(tool_input) <= {LONG_INPUT_BYTES}
                     THEN tool_input END,
                CASE WHEN ?4 & 4 AND octet_length(tool_output) <= {LONG_OUTPUT_BYTES}
                     THEN tool_output END,
                CASE WHEN ?4 & 2 AND octet_length(tool_input) > {LONG_INPUT_BYTES}
                     THEN octet_length(tool_input) END,
                CASE WHEN ?4 & 4 AND octet_length(tool_output) > {LONG_OUTPUT_BYTES}
                     THEN octet_length(tool_output) END
         FROM main.messages
         WHERE {which} AND kind IN ({kinds})
           AND (?3 IS NULL OR role = ?3)
         ORDER BY +seq"
    )
}

/// The ids of a turn's indexed messages in `seq` order (`?1` session, `?2` turn), as
/// `search_db::turn_docs` builds the turn's row and signatures from them: the columns read
/// are in the rows' first pages, so a long message costs no more than a short one.
fn indexed_messages_sql() -> String {
    let kinds = indexed_kinds_sql();
    format!(
        "SELECT id FROM main.messages
         WHERE session_id = ?1 AND turn_index IS ?2 AND kind IN ({kinds})
         ORDER BY +seq"
    )
}

#[cfg(test)]
mod tests {
    use trail_model::MessageKind;

    use super::*;

    /// Every filter becomes one condition with a placeholder per value, whatever the dialect;
    /// a substring is a pattern with LIKE's characters escaped.
    #[test]
    fn each_filter_is_one_condition_with_a_placeholder_per_value() {
        let mut o = SearchOptions {
            session: Some("s1".into()),
            exclude_sessions: vec!["a".into(), "b".into()],
            ..Default::default()
        };
        o.filter.repo = Some("acme/50%_off".into());
        o.filter.branch = Some("main".into());
        o.exclude_updated_within = Some((
            "2026-01-01T00:00:00.000Z".into(),
            "2026-01-02T00:00:00.000Z".into(),
        ));
        let conditions = o.conditions();
        assert_eq!(conditions.len(), 6);
        assert_eq!(
            conditions[0],
            SearchCondition::Repository("acme/50%_off".into())
        );
        for c in &conditions {
            for (turn, contains) in [("d", "LIKE ? ESCAPE '\\'"), ("t", "ILIKE ?")] {
                let (sql, values) = c.sql(turn, contains);
                assert_eq!(sql.matches('?').count(), values.len(), "{sql}");
                assert!(sql.starts_with(" AND "), "{sql}");
            }
        }
        let (sql, value) = conditions[0].sql("t", "ILIKE ?");
        assert_eq!(sql, " AND s.repository ILIKE ?");
        assert_eq!(value, ["%acme/50\\%\\_off%"]);
        assert_eq!(conditions[5].sql("d", "").0, " AND d.session_id <> ?");
        let (sql, values) = conditions[3].sql("d", "");
        assert_eq!(
            number_placeholders(&sql, 7, "$"),
            " AND (s.updated_at < $7 OR s.updated_at >= $8)"
        );
        assert_eq!(
            values,
            ["2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z"]
        );
    }

    /// The plans read one turn's messages through the (session, turn) index, not the whole
    /// session in `seq` order (what SQLite chose without statistics), and one message by its
    /// id.
    #[test]
    fn a_hit_turn_is_read_through_the_turn_index() {
        let store = Store::open_in_memory().unwrap();
        let plan = |sql: &str, args: &[&dyn ToSql]| -> Vec<String> {
            store
                .connection()
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap()
                .query_map(args, |r| r.get(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let turn_index = "idx_messages_turn (session_id=? AND turn_index=?)";
        let no_role = None::<String>;
        let of_turn = plan(
            &hit_messages_sql(HitMessages::OfTurn),
            params!["s", 0, no_role, ALL_COLUMNS],
        );
        assert!(
            of_turn.iter().any(|p| p.contains(turn_index)),
            "{of_turn:?}"
        );
        let listed = plan(&indexed_messages_sql(), params!["s", 0]);
        assert!(listed.iter().any(|p| p.contains(turn_index)), "{listed:?}");
        let by_id = plan(
            &hit_messages_sql(HitMessages::ById),
            params![7, None::<i64>, no_role, ALL_COLUMNS],
        );
        assert!(
            by_id
                .iter()
                .any(|p| p.contains("INTEGER PRIMARY KEY (rowid=?)")),
            "{by_id:?}"
        );
    }

    /// A turn's prompts are read through the prompts' index, not every message of the turn.
    #[test]
    fn a_turns_prompts_are_read_through_the_prompts_index() {
        let store = Store::open_in_memory().unwrap();
        let plan: Vec<String> = store
            .connection()
            .prepare(&format!("EXPLAIN QUERY PLAN {TURN_PROMPTS_SQL}"))
            .unwrap()
            .query_map(params!["s", 0, None::<String>], |r| r.get(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(
            plan.iter()
                .any(|p| p.contains("idx_messages_prompts (session_id=? AND turn_index=?)")),
            "{plan:?}"
        );
    }

    /// Builds the search database from the store's rows, as an upgraded store's first open does.
    fn rebuild(store: &Store) {
        store
            .connection()
            .execute_batch("DELETE FROM search.search_state WHERE key = 'applied_seq'")
            .unwrap();
        crate::search_db::apply(store.connection(), None).unwrap();
    }

    /// A store with a few messages of each indexed kind, in one turn.
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
                   ('s1', 4, 'assistant', 'thinking', 0, 'secret pondering', NULL, NULL);",
            )
            .unwrap();
        rebuild(&store);
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
    fn snippets_still_come_after_the_deferred_indexes_were_built_on_the_same_connection() {
        let store = sample_store();
        let snippets = |store: &Store| -> Vec<String> {
            search(store, "retry backoff")
                .unwrap()
                .hits
                .into_iter()
                .map(|h| h.snippet)
                .collect()
        };
        let before = snippets(&store);
        assert!(before.iter().any(|s| s.contains("retry")), "{before:?}");
        // As a handle that searched, then indexed into a store left without them (the MCP
        // server's): the build switches `temp_store`, which drops the snippets' temporary table.
        store
            .connection()
            .execute_batch("DROP INDEX idx_messages_native")
            .unwrap();
        let hit_text = |store: &Store| -> i64 {
            store
                .connection()
                .query_row(
                    "SELECT count(*) FROM temp.sqlite_master WHERE name = 'hit_text'",
                    [],
                    |r| r.get(0),
                )
                .unwrap()
        };
        assert_eq!(hit_text(&store), 1);
        store.build_deferred_indexes().unwrap();
        assert_eq!(hit_text(&store), 0, "dropped with the temporary database");
        assert_eq!(snippets(&store), before);
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
        // One hit per turn, showing its best message for the query's words.
        assert_eq!(kinds("src/main.rs:12"), [("prompt".into(), "text".into())]);
        assert_eq!(kinds("retry backoff"), [("text".into(), "text".into())]);
        assert_eq!(
            kinds("\"cargo test --release\""),
            [("tool_call".into(), "tool_input".into())]
        );
        assert_eq!(
            kinds("E0308 cafe"),
            [("tool_result".into(), "tool_output".into())]
        );
        // Words match anywhere in the turn; NOT leaves out turns that hold the word anywhere.
        assert_eq!(
            kinds("mismatched backoff").len(),
            1,
            "words of one turn, in two messages"
        );
        assert_eq!(kinds("mismatched NOT timeout"), []);
        assert_eq!(
            kinds("mismatched NOT pondering"),
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
        assert_eq!((hit.seq, hit.turn), (3, Some(0)));
        // A role is a column: the prompt is the user's, the answer the assistant's.
        let role = |q: &str, role: &str| {
            store
                .search(&SearchOptions {
                    query: q.to_string(),
                    role: Role::parse(role),
                    limit: 10,
                    ..SearchOptions::default()
                })
                .unwrap()
                .hits
                .len()
        };
        assert_eq!(role("cargo", "user"), 1);
        assert_eq!(role("backoff", "user"), 0);
        assert_eq!(role("backoff", "assistant"), 1);
        assert_eq!(role("mismatched", "tool"), 1);
        assert_eq!(role("mismatched", "assistant"), 0);
    }

    /// The snippets' table is filled in message-id order, whatever the order of the hits: each
    /// hit still shows its own turn's best message when the ranking runs against the ids.
    #[test]
    fn hits_ranked_against_message_order_each_show_their_own_best_message() {
        let store = Store::open_in_memory().unwrap();
        let mut sql = String::from(
            "INSERT INTO sessions (id, source, summary, updated_at) VALUES ('s1', 'codex', 'T', '2026-01-02T00:00:00.000Z');",
        );
        // Turn n says `deploy` n + 1 times in its prompt (so later turns rank first) and once
        // in a long answer; each turn has its own marker word in both messages.
        for (turn, marker) in ["alpha", "bravo", "charlie", "delta"].iter().enumerate() {
            let prompt = format!("{marker} {}", "deploy ".repeat(turn + 1));
            let answer = format!("{marker} deploy {}", "filler words here ".repeat(20));
            sql.push_str(&format!(
                "INSERT INTO messages (session_id, seq, role, kind, turn_index, text) VALUES
                   ('s1', {}, 'user', 'prompt', {turn}, '{prompt}'),
                   ('s1', {}, 'assistant', 'text', {turn}, '{answer}');",
                2 * turn,
                2 * turn + 1
            ));
        }
        store.connection().execute_batch(&sql).unwrap();
        rebuild(&store);
        let hits = search(&store, "deploy").unwrap().hits;
        let shown: Vec<(Option<i64>, i64, String)> = hits
            .iter()
            .map(|h| (h.turn, h.seq, h.kind.clone().unwrap_or_default()))
            .collect();
        assert_eq!(
            shown,
            [
                (Some(3), 6, "prompt".to_string()),
                (Some(2), 4, "prompt".to_string()),
                (Some(1), 2, "prompt".to_string()),
                (Some(0), 0, "prompt".to_string()),
            ]
        );
        for (hit, marker) in hits.iter().zip(["delta", "charlie", "bravo", "alpha"]) {
            assert!(hit.snippet.starts_with(marker), "{}", hit.snippet);
            assert!(
                hit.snippet.contains(&format!("{HIT_START}deploy{HIT_END}")),
                "{}",
                hit.snippet
            );
        }
    }

    /// Each turn's best message, by each way it is chosen: the one prompt that holds every
    /// word (decided in Rust, its other messages unread); three such prompts (bm25 decides,
    /// on the table: the shortest); a prompt only FTS5 can read (beyond ASCII); no whole prompt, so the
    /// answer that holds every word; and a tool output that holds only one of them.
    #[test]
    fn the_best_message_of_each_kind_of_turn() {
        let store = Store::open_in_memory().unwrap();
        store
            .connection()
            .execute_batch(
                "INSERT INTO sessions (id, source, summary, updated_at) VALUES ('s1', 'codex', 'T', '2026-01-02T00:00:00.000Z');
                 INSERT INTO messages (session_id, seq, role, kind, turn_index, text, tool_output) VALUES
                   ('s1', 0, 'user', 'prompt', 0, 'lone: the build fails', NULL),
                   ('s1', 1, 'assistant', 'text', 0, 'build fails build fails build fails', NULL),
                   ('s1', 2, 'user', 'prompt', 1, 'thrice: the build fails again and again while we wait for it', NULL),
                   ('s1', 3, 'user', 'prompt', 1, 'thrice: build fails', NULL),
                   ('s1', 4, 'user', 'prompt', 1, 'thrice: and the build fails once more, as it did the day before', NULL),
                   ('s1', 5, 'user', 'prompt', 2, 'wide: the Büild fails, build fails', NULL),
                   ('s1', 6, 'user', 'prompt', 3, 'answered: why does it fail', NULL),
                   ('s1', 7, 'assistant', 'text', 3, 'answered: the build fails here', NULL),
                   ('s1', 8, 'tool', 'tool_result', 3, NULL, 'build log'),
                   ('s1', 9, 'user', 'prompt', 4, 'spread: build it', NULL),
                   ('s1', 10, 'tool', 'tool_result', 4, NULL, 'it fails');",
            )
            .unwrap();
        rebuild(&store);
        let hits = search(&store, "build fails").unwrap().hits;
        let mut shown: Vec<(Option<i64>, i64)> = hits.iter().map(|h| (h.turn, h.seq)).collect();
        shown.sort();
        assert_eq!(
            shown,
            [
                (Some(0), 0),
                (Some(1), 3),
                (Some(2), 5),
                (Some(3), 7),
                (Some(4), 9)
            ]
        );
        for h in &hits {
            assert!(h.snippet.contains(HIT_START), "{h:?}");
        }
    }

    /// Sessions left out by exclusions alone (checked in Rust, `Store::excluded_turns`) are
    /// the ones SQL leaves out: updated within the window or never, or named; the hits match the
    /// SQL path's (forced by a condition that keeps every session).
    #[test]
    fn exclusions_leave_out_what_sql_would() {
        let store = Store::open_in_memory().unwrap();
        let mut sql = String::new();
        for (i, updated) in [
            "'2026-01-01T00:00:00.000Z'",
            "'2026-03-01T00:00:00.000Z'",
            "NULL",
            "'2026-01-05T00:00:00.000Z'",
            "'2026-06-01T00:00:00.000Z'",
        ]
        .iter()
        .enumerate()
        {
            sql.push_str(&format!(
                "INSERT INTO sessions (id, source, summary, updated_at) VALUES ('s{i}', 'codex', 'T', {updated});
                 INSERT INTO messages (session_id, seq, role, kind, turn_index, text) VALUES
                   ('s{i}', 0, 'user', 'prompt', 0, 'deploy the build {i}'),
                   ('s{i}', 1, 'user', 'prompt', 1, 'deploy again {i}');"
            ));
        }
        store.connection().execute_batch(&sql).unwrap();
        rebuild(&store);
        let found = |o: SearchOptions| -> Vec<(String, Option<i64>)> {
            let mut hits: Vec<_> = store
                .search(&o)
                .unwrap()
                .hits
                .into_iter()
                .map(|h| (h.session_id, h.turn))
                .collect();
            hits.sort();
            hits
        };
        let options = SearchOptions {
            query: "deploy".into(),
            limit: 10,
            exclude_updated_within: Some((
                "2026-02-01T00:00:00.000Z".into(),
                "2026-04-01T00:00:00.000Z".into(),
            )),
            exclude_sessions: vec!["s3".into()],
            ..SearchOptions::default()
        };
        let in_rust = found(options.clone());
        // s1 was updated within the window, s2 never, s3 is named; s4 after the window.
        assert_eq!(
            in_rust,
            [
                ("s0".to_string(), Some(0)),
                ("s0".to_string(), Some(1)),
                ("s4".to_string(), Some(0)),
                ("s4".to_string(), Some(1))
            ]
        );
        let mut through_sql = options;
        through_sql.filter.source = Some(trail_model::SourceKind::Codex);
        assert_eq!(found(through_sql), in_rust);
    }

    #[test]
    fn the_words_a_hit_marks() {
        assert_eq!(
            any_word_query("a b OR c NOT d OR e f").as_deref(),
            Some(r#""a" OR "b" OR "c" OR "f""#)
        );
        assert_eq!(any_word_query("x NOT y").as_deref(), Some(r#""x""#));
        assert_eq!(
            any_word_query(r#""two words" pre*"#).as_deref(),
            Some(r#""two words" OR "pre"*"#)
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

    /// Message kinds the index holds.
    #[test]
    fn the_indexed_kinds() {
        let kinds = [
            MessageKind::Prompt,
            MessageKind::Text,
            MessageKind::ToolCall,
            MessageKind::ToolResult,
            MessageKind::Error,
            MessageKind::Summary,
        ]
        .map(MessageKind::as_str);
        assert_eq!(kinds, INDEXED_KINDS);
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
                        ('s1', 1, 'tool', 'tool_result', 1, NULL, NULL, ?1)",
                [COLOURED],
            )
            .unwrap();
        }
        rebuild(&store);
        store
    }

    /// Issue 15: `ESC[31mRED` was indexed as the token `31mred`.
    #[test]
    fn coloured_words_are_found_and_snippets_hold_no_escape() {
        let store = coloured_store();
        for q in ["RED", "red failed", "link", "\"build RED failed\""] {
            let hits = search(&store, q).unwrap().hits;
            assert_eq!(hits.len(), 2, "{q}");
            for hit in hits {
                let snippet = &hit.snippet;
                assert!(
                    !snippet.contains('\x1b') && !snippet.contains('\x07'),
                    "{snippet:?}"
                );
                assert!(snippet.contains(HIT_START), "{snippet:?}");
            }
        }
        assert!(search(&store, "31mred").unwrap().hits.is_empty());
        // The stored text keeps its bytes.
        let text: String = store
            .connection()
            .query_row("SELECT text FROM messages WHERE seq = 0", [], |r| r.get(0))
            .unwrap();
        assert_eq!(text, COLOURED);
    }

    /// A store of version 7 (escapes in its full-text indexes, both in the store's own file)
    /// opens as a current one: migration 8 fixes the escapes, migration 14 drops the store's
    /// full-text tables, and the first open builds the search database from the store's rows.
    #[test]
    fn a_version_7_store_is_upgraded_and_its_search_database_built() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let store = Store::open(&path).unwrap();
            let conn = store.connection();
            // Back to version 7: the old view, its index, Chronicle's table in the store, and
            // without what later migrations add.
            conn.execute_batch(
                "DETACH DATABASE search;
                 DROP TABLE search_index;
                 DROP TABLE chronicle_rows;
                 DROP TABLE workspace_artifacts;
                 ALTER TABLE sessions DROP COLUMN agent_name;
                 ALTER TABLE sessions DROP COLUMN agent_description;
                 UPDATE schema_version SET version = 2;
                 DROP INDEX idx_sessions_continues;
                 ALTER TABLE sessions DROP COLUMN continues_session_id;
                 ALTER TABLE sessions DROP COLUMN continues_source;
                 DROP INDEX idx_sessions_id_nocase;
                 DROP TABLE search_log;
                 DELETE FROM store_meta;
                 DROP INDEX idx_messages_turn;
                 CREATE INDEX idx_messages_turn_text ON messages(session_id, turn_index)
                     WHERE on_main_chain = 1 AND kind IN ('prompt', 'text');
                 CREATE VIRTUAL TABLE search_index USING fts5(
                     content, session_id UNINDEXED, source_type UNINDEXED, source_id UNINDEXED);
                 CREATE VIEW message_search_source AS
                 SELECT id, text, substr(tool_input, 1, 1000) AS tool_input,
                     CASE WHEN length(tool_output) > 800
                          THEN substr(tool_output, 1, 600) || char(10) || '…' || char(10) || substr(tool_output, -200)
                          ELSE tool_output END AS tool_output
                 FROM messages
                 WHERE kind IN ('prompt', 'text', 'tool_call', 'tool_result', 'error', 'summary');
                 CREATE VIRTUAL TABLE message_index USING fts5(
                     text, tool_input, tool_output, content = 'message_search_source',
                     content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2');
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
                "INSERT INTO turns (session_id, turn_index, user_message, assistant_response)
                 VALUES ('s1', 0, ?1, 'plain answer')",
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
        }
        std::fs::remove_file(crate::search_path(&path)).unwrap();
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), crate::schema::CURRENT);
        assert_eq!(search(&store, "RED").unwrap().hits.len(), 1);
        assert_eq!(search(&store, "plain").unwrap().hits.len(), 1);
        let conn = store.connection();
        let main_fts: i64 = conn
            .query_row(
                "SELECT count(*) FROM main.sqlite_schema WHERE name IN ('message_index', 'search_index')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(main_fts, 0, "the store's own full-text tables are gone");
        conn.execute_batch(
            "INSERT INTO search_index (search_index) VALUES ('integrity-check');
             INSERT INTO turn_search (turn_search) VALUES ('integrity-check');",
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
        drop(store);
        moved_into_the_store_by_the_next_index(&path);
    }

    fn red_rows(conn: &rusqlite::Connection) -> i64 {
        conn.query_row(
            "SELECT count(*) FROM search_index WHERE search_index MATCH 'RED'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    }

    /// Issue 45: until its next index, an upgraded store's readers answer Chronicle's search
    /// from the search database; that index's first batch moves the table into the store
    /// file, where a plain connection to the file alone finds it.
    fn moved_into_the_store_by_the_next_index(path: &std::path::Path) {
        let reader = Store::open_read_only(path).unwrap();
        assert_eq!(red_rows(reader.connection()), 1);
        let plain = rusqlite::Connection::open(path).unwrap();
        assert!(plain.prepare("SELECT count(*) FROM search_index").is_err());
        let mut store = Store::open(path).unwrap();
        store.write_batch(Vec::new()).unwrap();
        assert_eq!(red_rows(plain_again(path).as_ref().unwrap()), 1);
        assert_eq!(red_rows(reader.connection()), 1, "the reader opened before");
        assert_eq!(red_rows(store.connection()), 1);
        let left: i64 = store
            .connection()
            .query_row(
                "SELECT count(*) FROM search.sqlite_schema WHERE name IN ('search_index', 'chronicle_rows')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0, "the search database's copy is dropped");
        assert_eq!(store.chronicle_schema_version().unwrap(), 3);
    }

    /// A search database made before `turn_prompts`, `turn_docs.digest`, `turn_sigs` and
    /// `prompt_search` is still searched (its prompts read from the store, every candidate
    /// read, the same hits), and the next writer fills the tables as an index writes them, adds
    /// the column and counts FTS5's totals again.
    /// A turn without a row (indexed by an older trail) is read from the store too.
    #[test]
    fn a_version_1_search_database_is_read_and_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trail.db");
        let prompts = |store: &Store| -> Vec<(i64, String)> {
            let mut stmt = store
                .connection()
                .prepare("SELECT id, prompt FROM search.turn_prompts ORDER BY id")
                .unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let totals = |store: &Store| -> Vec<u64> {
            let block = crate::search_db::totals_record(store.connection())
                .unwrap()
                .unwrap();
            crate::varint::Varints(&block).collect()
        };
        let signed = |store: &Store| -> Vec<(i64, Vec<u8>, Option<i64>)> {
            let mut stmt = store
                .connection()
                .prepare(
                    "SELECT s.id, s.sigs, d.digest FROM search.turn_sigs s
                     JOIN search.turn_docs d ON d.id = s.id ORDER BY s.id",
                )
                .unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let hits = |store: &Store| -> Vec<(String, Option<i64>, String)> {
            let found = search(store, "cargo fails").unwrap().hits;
            found
                .into_iter()
                .map(|h| (h.session_id, h.turn, h.snippet))
                .collect()
        };
        let (indexed, before, sigs) = {
            let store = Store::open(&path).unwrap();
            store
                .connection()
                .execute_batch(&format!(
                    "INSERT INTO sessions (id, source, updated_at) VALUES
                       ('a', 'codex', '2026-01-02T00:00:00.000Z'),
                       ('b', 'codex', '2026-01-03T00:00:00.000Z');
                     INSERT INTO messages (session_id, seq, role, kind, turn_index, text) VALUES
                       ('a', 0, 'user', 'prompt', 0, 'cargo fails'),
                       ('a', 1, 'user', 'prompt', 0, NULL),
                       ('a', 2, 'user', 'prompt', 0, '\x1b[31mcargo\x1b[0m fails'),
                       ('a', 4, 'user', 'prompt', 1, 'no match here'),
                       ('a', 5, 'assistant', 'text', 1, 'cargo fails'),
                       ('b', 0, 'assistant', 'text', NULL, 'before any prompt'),
                       ('b', 1, 'user', 'prompt', 0, 'why cargo fails'),
                       ('b', 2, 'user', 'prompt', 0, ''),
                       ('b', 3, 'assistant', 'text', 0, 'cargo fails');
                     INSERT INTO messages (session_id, seq, role, kind, turn_index, tool_output)
                       VALUES ('a', 3, 'tool', 'tool_result', 0, '{}');",
                    "output ".repeat(200)
                ))
                .unwrap();
            rebuild(&store);
            let indexed = prompts(&store);
            let sigs = signed(&store);
            let before = hits(&store);
            // FTS5's totals as a version-1 database may have them: turns counted twice.
            let mut drifted = Vec::new();
            for v in totals(&store).iter().map(|v| v * 2) {
                crate::varint::put(&mut drifted, v);
            }
            store
                .connection()
                .execute(
                    "UPDATE search.turn_search_data SET block = ?1 WHERE id = 1",
                    [drifted],
                )
                .unwrap();
            store
                .connection()
                .execute_batch(
                    "DROP TABLE search.turn_prompts;
                     DROP TABLE search.turn_sigs;
                     DROP TABLE search.prompt_search;
                     DELETE FROM search.search_state WHERE key = 'prompts_seq';
                     ALTER TABLE search.turn_docs DROP COLUMN digest;
                     PRAGMA search.user_version = 1;",
                )
                .unwrap();
            (indexed, before, sigs)
        };
        assert_eq!(indexed.len(), 3, "turns with a prompt: {indexed:?}");
        assert!(indexed.iter().all(|(_, p)| !p.contains('\x1b')));
        // The prompts decide the order: b's turn scores better as a whole (a's is long), a's
        // prompt alone.
        let order: Vec<(&str, Option<i64>)> =
            before.iter().map(|(s, t, _)| (s.as_str(), *t)).collect();
        assert_eq!(order, [("a", Some(0)), ("b", Some(0)), ("a", Some(1))]);
        let read = Store::open_read_only(&path).unwrap();
        assert!(!crate::search_db::prompts_stored(read.connection()).unwrap());
        assert!(!crate::search_db::sigs_stored(read.connection()).unwrap());
        assert!(!crate::search_db::prompt_index_current(read.connection()).unwrap());
        assert_eq!(hits(&read), before);
        drop(read);
        let upgraded = Store::open(&path).unwrap();
        assert!(crate::search_db::prompts_stored(upgraded.connection()).unwrap());
        // Counted again: four turn rows (three turns and the messages before b's first prompt).
        assert_eq!(totals(&upgraded)[0], 4);
        let digest: i64 = upgraded
            .connection()
            .query_row(
                "SELECT count(*) FROM pragma_table_info('turn_docs', 'search') WHERE name = 'digest'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(digest, 1, "turn_docs.digest added");
        assert_eq!(prompts(&upgraded), indexed);
        // The index of prompts alone, filled from them and current.
        assert!(crate::search_db::prompt_index_current(upgraded.connection()).unwrap());
        let matching = |sql: &str, arg: &str| -> Vec<i64> {
            let conn = upgraded.connection();
            let mut stmt = conn.prepare(sql).unwrap();
            let ids = stmt.query_map([arg], |r| r.get(0)).unwrap();
            ids.collect::<rusqlite::Result<_>>().unwrap()
        };
        for word in ["cargo", "fails", "match", "why"] {
            assert_eq!(
                matching(
                    "SELECT rowid FROM search.prompt_search WHERE prompt_search MATCH ?1",
                    word
                ),
                matching(
                    "SELECT rowid FROM search.turn_search WHERE turn_search MATCH '{prompt} : ' || ?1",
                    word
                ),
                "{word}"
            );
        }
        // Every turn signed as an index signs it; no digest (the digests before signatures
        // match none now): each turn's row is written again with its session's next write.
        assert_eq!(sigs.len(), 4);
        assert!(sigs.iter().all(|(_, _, digest)| digest.is_some()));
        let upgraded_sigs = signed(&upgraded);
        assert!(upgraded_sigs.iter().all(|(_, _, digest)| digest.is_none()));
        let without_digests = |rows: Vec<(i64, Vec<u8>, Option<i64>)>| -> Vec<(i64, Vec<u8>)> {
            rows.into_iter().map(|(id, sigs, _)| (id, sigs)).collect()
        };
        assert_eq!(without_digests(upgraded_sigs), without_digests(sigs));
        assert_eq!(hits(&upgraded), before);
        // A turn an older trail indexed into it has no row: its prompt comes from the store.
        upgraded
            .connection()
            .execute_batch("DELETE FROM search.turn_prompts WHERE id = (SELECT min(id) FROM search.turn_prompts)")
            .unwrap();
        assert_eq!(hits(&upgraded), before);
    }

    fn plain_again(path: &std::path::Path) -> rusqlite::Result<rusqlite::Connection> {
        rusqlite::Connection::open(path)
    }
}
