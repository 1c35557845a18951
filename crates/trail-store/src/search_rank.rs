//! Coherent ranking (issue 43): a turn where the query's words stand together ranks above one
//! where they are scattered over its prompt, answers and tool output.
//!
//! Hits are ordered by tier:
//! 0. the turn's prompt holds every word;
//! 1. one message (one of its fields: text, tool input or tool output) holds every word;
//! 2. the words are spread over the turn;
//!
//! then, within tier 0, by the prompt's own score: bm25 of the turn's prompt alone (its prompt
//! messages, without its answers and tool output), among the prompts of tier 0 for a query of
//! two groups or more (a group: a term, or terms joined by OR), among every prompt for one
//! group (below), which favours the prompt whose words weigh most against its length; then
//! proximity (every word within ten tokens of each other, FTS5's `NEAR`); then, in every tier,
//! bm25 of the whole turn (the index's column weights), then recency. Why the prompt's own
//! score: a person who remembers a few words of a prompt remembers that prompt, and bm25 of
//! the whole turn normalises by the length of the turn's answers and tool output, which say
//! nothing of it (BENCHMARKS.md, issues 43 and 44, has what each order found).
//!
//! Exact, without scoring anything twice: every match that can be shown is scored once with
//! the index's rank function (bm25 with the column weights, computed by FTS5) and sorted here,
//! and the rows are read in that order until the best `limit` are known; which turn a row is,
//! and how recent, is looked up only for the rows the choice needs. What puts a
//! turn in tier 0 is a column filter, so tier 0 is a set of rowids read off the index (its size
//! says when it is complete). Its prompts are scored up front, as FTS5 would on a table that
//! holds them alone (computed in Rust to FTS5's bits where they are ASCII, else on an in-memory
//! FTS5 table), so the members that can be among the best `limit` are known before the ranked
//! rows are read, which stop once those are all read. When tier 0 fills the page, only its
//! members that can be shown are scored, not every match: a common word's prompts are a
//! fraction of the turns that hold it. Tier 1 cannot
//! be read off a turn's row (a column holds all of the turn's messages of its kind), so the
//! index gives its candidates (a column holding every word) and each candidate is checked
//! against its messages, in rank order and only when tier 0 is complete, on the in-memory
//! table that snippets use; a candidate whose signatures say that no one field of its messages
//! holds every word (`search_sig.rs`) goes to tier 2 unread, and of the others only the
//! messages that may are read. A query of one group has no tier 2 (any match is in one message).
//! Its tier 0 is read off the index of prompts alone (`prompt_search`), with each member's
//! prompt score there: bm25 among every prompt, in which the group's word weighs the same in
//! each member, so its count against the prompt's length decides, as among tier 0's prompts
//! for more groups. Scoring the whole turn of every match of `the` instead read each instance
//! of the word in its answers and tool output (198 ms at 10 GiB, BENCHMARKS.md); a prompt
//! holds a few. Without that index (a search database before version 5, or one an older trail
//! wrote to since, `search_db::prompt_index_current`), tier 0 is ordered by bm25 of the turn.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::functions::FunctionFlags;
use rusqlite::types::Value;
use rusqlite::{OptionalExtension, ToSql};

use crate::search_query::{fts_error, whole_message_query, Keep, Needles, QueryShape, ALL_COLUMNS};
use crate::{Result, Store};

/// A set of index rowids, hashed by [`RowidHasher`].
pub(crate) type RowidSet = HashSet<i64, BuildHasherDefault<RowidHasher>>;
/// A map keyed by index rowids, hashed by [`RowidHasher`].
pub(crate) type RowidMap<V> = HashMap<i64, V, BuildHasherDefault<RowidHasher>>;

/// Hashes a rowid with one multiplication by an odd constant (Fibonacci hashing), which spreads
/// dense rowids over both the low bits that pick a bucket and the high bits the table compares
/// first. Rowids are the index's own numbers, not text someone chooses, so the flooding that
/// std's SipHash guards against does not arise; hashing them with SipHash was 7 % of `the` at
/// 10 GiB, whose tier 0 holds 94,492 rowids.
#[derive(Default, Clone, Copy)]
pub(crate) struct RowidHasher(u64);

impl Hasher for RowidHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Not called for rowids (`write_i64`); FNV-1a for anything else.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The rowids [`Store::scores_of`] scores, asked by SQL as `trail_scored(rowid)`: the function
/// is registered once per connection (defining or dropping one while any statement runs is an
/// error, and either makes every prepared statement compile again), and the set is put in for
/// the one statement that asks it.
#[derive(Clone, Default)]
pub(crate) struct ScoredSet(Arc<Mutex<Rowids>>);

/// A set of rowids as bits (rowids are `turn_docs` ids, from 1 and dense), asked in a few
/// nanoseconds; a set with a rowid beyond [`Rowids::MAX_BITS`] keeps a hash set instead.
#[derive(Default)]
struct Rowids {
    bits: Vec<u64>,
    sparse: Option<RowidSet>,
}

impl Rowids {
    /// 2^26 bits (8 MiB): rowids up to 67 million.
    const MAX_BITS: i64 = 1 << 26;

    fn of(set: &RowidSet) -> Rowids {
        let max = set.iter().copied().max().unwrap_or(0);
        if set.iter().any(|&r| r < 0) || max >= Self::MAX_BITS {
            return Rowids {
                bits: Vec::new(),
                sparse: Some(set.clone()),
            };
        }
        let mut bits = vec![0u64; max as usize / 64 + 1];
        for &r in set {
            bits[r as usize / 64] |= 1 << (r % 64);
        }
        Rowids { bits, sparse: None }
    }

    fn contains(&self, rowid: i64) -> bool {
        match &self.sparse {
            Some(set) => set.contains(&rowid),
            None => usize::try_from(rowid).is_ok_and(|r| {
                self.bits
                    .get(r / 64)
                    .is_some_and(|w| w & (1 << (r % 64)) != 0)
            }),
        }
    }
}

impl ScoredSet {
    pub(crate) fn register(conn: &rusqlite::Connection) -> rusqlite::Result<ScoredSet> {
        let set = ScoredSet::default();
        let asked = set.clone();
        let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DIRECTONLY;
        conn.create_scalar_function("trail_scored", 1, flags, move |ctx| {
            let rowid = ctx.get::<i64>(0)?;
            let set = asked.0.lock().unwrap_or_else(PoisonError::into_inner);
            Ok(set.contains(rowid))
        })?;
        Ok(set)
    }

    /// Runs `f` with `rowids` as the set; empty again afterwards, so nothing of one search
    /// outlives it.
    fn with<T>(&self, rowids: &RowidSet, f: impl FnOnce() -> T) -> T {
        let put = |set: Rowids| {
            *self.0.lock().unwrap_or_else(PoisonError::into_inner) = set;
        };
        put(Rowids::of(rowids));
        let out = f();
        put(Rowids::default());
        out
    }
}

/// A hit turn before its best message is chosen.
#[derive(Clone)]
pub(crate) struct HitTurn {
    /// Its row in the index (`turn_docs.id`).
    pub(crate) rowid: i64,
    pub(crate) session_id: String,
    pub(crate) turn: i64,
    /// Its tier, when ranked by tiers.
    pub(crate) tier: Option<usize>,
    pub(crate) score: f64,
}
/// What [`Store::read_hit_text`] reads of a hit turn.
pub(crate) struct TurnRead {
    /// The fields of these columns (`search_rank::column_bit`).
    pub(crate) columns: u8,
    /// Only these messages ([`Store::messages_to_read`]), or all of them.
    pub(crate) ids: Option<Vec<i64>>,
}

/// Candidates of tier 1 checked against their messages at once.
const CHECK_BATCH: usize = 16;

/// Tier 0's prompts are scored on their own up to this many; a larger tier 0 is ordered by
/// proximity, then bm25 of the turn. Scoring reads every member's prompt, about 0.15 ms each
/// on a quiet machine: a query of common words such as `the and` puts 6,900 prompts of the
/// 1 GiB corpus in tier 0 (a second) and ten times as many at 10 GiB. Words that so many
/// prompts hold do not single out a prompt anyway; proximity and the turn's bm25 still order
/// them. Class 2 of `bench/relevance.py` (three common words) had at most 178 members at 1 GiB.
pub const PROMPT_SCORE_MAX: usize = 2_000;

/// A ranked search: what [`Store::coherent_turns`] needs.
pub(crate) struct Ranking<'a> {
    /// The FTS5 expression every hit matches (the role's columns applied).
    pub matched: &'a str,
    /// The filters' SQL (` AND ...`, on `d` = turn_docs and `s` = sessions) ...
    pub filter: &'a str,
    /// ... and their values; `?1` is the match expression.
    pub args: &'a [Value],
    /// What a field must hold for each tier, read in Rust (`None`: FTS5 decides).
    pub needles: Option<&'a Needles>,
    /// Turns the filter leaves out, checked here instead of in SQL (`Store::excluded_turns`).
    pub excluded: Option<&'a RowidSet>,
    pub role: Option<&'a str>,
    pub shape: &'a QueryShape,
    /// Whether whatever matches a tier's definition matches `matched` too (the query has no
    /// NOT: its positive part is all of it), so a tier need not repeat `matched`, which read
    /// the query's doclists once more per tier.
    pub implied: bool,
    pub limit: usize,
}

/// The tiers' definitions for one query.
struct Tiers {
    /// Tier 0 as an index query (a rowid set), and its members' prompts near each other.
    prompt: Option<String>,
    prompt_near: Option<String>,
    /// What a tier-0 prompt is scored against (two groups or more): every word in the text.
    prompt_score: Option<String>,
    /// Tier 0 and its prompts' scores on the index of prompts alone (`prompt_search`), for a
    /// query of one group where that index can answer: `{prompt} : (group)`.
    prompt_index: Option<String>,
    /// The full-text table `prompt` and `prompt_near` are asked of: `turn_search`, or the index
    /// of prompts alone where it is current and the query has no NOT (a tier then needs no
    /// other column; [`Tiers::of`]'s `alone`): its doclists hold the prompts' words only (a
    /// known-item query's tier 0 at 10 GiB: 1.2 ms on `turn_search`, 0.1 ms on
    /// `prompt_search`).
    prompt_table: &'static str,
    /// Tier 1: the index query of its candidates in each column it looks at (with the
    /// column's bit, [`column_bit`]), and what one message must match.
    one_message: Option<(Vec<(u8, String)>, String)>,
    /// The tier of a match none of the above takes.
    rest: usize,
}

impl Tiers {
    /// `alone`: the index of prompts alone can answer for the prompt column (it is current and
    /// the query has no NOT).
    fn of(r: &Ranking<'_>, alone: bool) -> Tiers {
        let m = r.matched;
        let Some(positive) = r.shape.positive.as_deref() else {
            return Tiers {
                prompt: None,
                prompt_near: None,
                prompt_score: None,
                prompt_index: None,
                prompt_table: "turn_search",
                one_message: None,
                rest: 2,
            };
        };
        // The columns a role searches (`Store::search`'s column filter).
        let columns: &[&str] = match r.role {
            Some("user") => &["prompt"],
            Some("assistant") => &["answer", "tool_input"],
            Some("tool") => &["tool_output"],
            _ => &["prompt", "answer", "tool_input", "tool_output"],
        };
        let has_prompt = columns.contains(&"prompt");
        let within = |tier: String| {
            if r.implied {
                tier
            } else {
                format!("({m}) AND ({tier})")
            }
        };
        // One group: whatever matches holds it in one message (so no tier 2).
        let single = r.shape.groups <= 1;
        let prompt_near = r
            .shape
            .near
            .as_ref()
            .filter(|_| has_prompt && !single)
            .map(|near| within(format!("{{prompt}} : {near}")));
        let prompt = has_prompt.then(|| within(format!("{{prompt}} : ({positive})")));
        let prompt_score = (has_prompt && !single).then(|| format!("{{text}} : ({positive})"));
        let prompt_index =
            (alone && has_prompt && single).then(|| format!("{{prompt}} : ({positive})"));
        let others: Vec<(u8, String)> = columns
            .iter()
            .filter(|c| **c != "prompt")
            .map(|c| (column_bit(c), within(format!("{{{c}}} : ({positive})"))))
            .collect();
        let one_message =
            (!single && !others.is_empty()).then(|| (others, whole_message_query(positive)));
        Tiers {
            prompt,
            prompt_near,
            prompt_score,
            prompt_index,
            prompt_table: if alone {
                "prompt_search"
            } else {
                "turn_search"
            },
            one_message,
            rest: if single { 1 } else { 2 },
        }
    }
}

/// How tier 0 is ordered before bm25 of the turn, for a query of two groups or more.
struct PromptOrder {
    /// Each member's key: its prompt's score (lower is better), then 0 when its words are
    /// near each other, else 1.
    keys: RowidMap<(f64, u8)>,
    /// The members that can be among the best `limit`: those whose key is at most the
    /// `limit`-th best key (ties included).
    needed: RowidSet,
}

impl PromptOrder {
    fn of(scores: RowidMap<f64>, members: &RowidSet, near: &RowidSet, limit: usize) -> PromptOrder {
        let keys: RowidMap<(f64, u8)> = members
            .iter()
            .map(|id| {
                // A prompt the scoring table did not match (none should) ranks last.
                let score = scores.get(id).copied().unwrap_or(f64::INFINITY);
                (*id, (score, u8::from(!near.contains(id))))
            })
            .collect();
        // The `limit`-th best key, without sorting them all (94,492 for `the` at 10 GiB).
        let mut all: Vec<(f64, u8)> = keys.values().copied().collect();
        let nth = limit.saturating_sub(1);
        let last = (nth < all.len()).then(|| *all.select_nth_unstable_by(nth, key_order).1);
        let needed = match last {
            Some(last) if all.len() > limit => keys
                .iter()
                .filter(|(_, k)| key_order(k, &last).is_le())
                .map(|(id, _)| *id)
                .collect(),
            _ => members.clone(),
        };
        PromptOrder { keys, needed }
    }
}

/// Sorts matches by bm25 of the turn, best first (ties by rowid).
fn best_first(matches: &mut [(i64, f64)]) {
    matches.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
}

fn key_order(a: &(f64, u8), b: &(f64, u8)) -> std::cmp::Ordering {
    a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
}

/// A match read in rank order. Which turn it is, and how recent, is looked up only for the
/// rows a choice needs (tier-1 candidates checked, the rows shown and those tied with them):
/// joining every match to its turn and session cost more than ranking them (BENCHMARKS.md,
/// issue 44).
struct Row {
    rowid: i64,
    /// bm25 of the whole turn (lower is better).
    score: f64,
    /// 0-2, or `None` while a tier-1 candidate is unchecked.
    tier: Option<usize>,
    /// Its [`PromptOrder`] key in tier 0 (none without one).
    key: Option<(f64, u8)>,
}

/// A match's turn and its recency (`coalesce(last_at, updated_at)`: the tie-break, newest
/// first).
struct TurnOf {
    session_id: String,
    turn: i64,
    recency: Option<String>,
}

/// The ranking in progress: the rows read so far and what is known of each tier.
struct Progress {
    rows: Vec<Row>,
    /// Rows of each tier read so far.
    counts: [usize; 3],
    /// Members of tier 0 (from the index), and tier 1's candidates outside it.
    sizes: [usize; 2],
    /// Tier 0's order, for a query of two groups or more, and its needed members read so far.
    order: Option<PromptOrder>,
    needed_read: usize,
    /// Tier-1 candidates read so far, checked or not.
    candidates_read: usize,
    /// Indexes into `rows` of candidates not checked yet, in rank order.
    unchecked: Vec<usize>,
    /// The columns ([`column_bit`]) of each tier-1 candidate that hold every word: only the
    /// messages whose fields are in them can hold every word themselves.
    columns: RowidMap<u8>,
}

impl Progress {
    /// Adds the next row read with its tier (none for a tier-1 candidate, checked later) and
    /// its key in tier 0; counts it.
    fn push(&mut self, rowid: i64, score: f64, prompt: &RowidSet, rest: usize) {
        let mut key = None;
        let tier = if prompt.contains(&rowid) {
            if let Some(order) = &self.order {
                key = order.keys.get(&rowid).copied();
                self.needed_read += usize::from(order.needed.contains(&rowid));
            }
            Some(0)
        } else if self.columns.contains_key(&rowid) {
            self.candidates_read += 1;
            self.unchecked.push(self.rows.len());
            None
        } else {
            Some(rest)
        };
        if let Some(t) = tier {
            self.counts[t] += 1;
        }
        self.rows.push(Row {
            rowid,
            score,
            tier,
            key,
        });
    }
}

impl Store {
    /// The best `limit` matching turns (module doc); returns them and how many matches were
    /// read.
    pub(crate) fn coherent_turns(&self, r: &Ranking<'_>) -> Result<(Vec<HitTurn>, usize)> {
        let alone = r.implied && crate::search_db::prompt_index_current(&self.conn)?;
        let tiers = Tiers::of(r, alone);
        let by_index = match tiers.prompt_index.as_deref() {
            Some(expr) => Some(self.prompt_index_scores(r, expr)?),
            None => None,
        };
        let prompt = match &by_index {
            Some(scores) => scores.keys().copied().collect(),
            None => self.rowid_set(r, tiers.prompt_table, tiers.prompt.as_deref())?,
        };
        let order = match (by_index, tiers.prompt_score.as_deref()) {
            _ if prompt.is_empty() => None,
            (Some(scores), _) => Some(PromptOrder::of(
                scores,
                &prompt,
                &RowidSet::default(),
                r.limit,
            )),
            (None, Some(expr)) => Some(self.prompt_order(r, &tiers, &prompt, expr)?),
            (None, None) => None,
        };
        // Tier 0 fills the page: only its members can be shown, and only those that can be
        // need their turn's bm25. Ordered by its prompts, those are the members whose key can
        // be among the best (a common pair of words matches thousands of turns, `the` 94,492 at
        // 10 GiB); without that order (one group on a search database without the index of
        // prompts), every member, ordered by bm25 of the turn.
        let shown = match &order {
            _ if prompt.len() < r.limit => None,
            Some(order) => Some(&order.needed),
            None => Some(&prompt),
        };
        let ranked = match shown {
            Some(shown) if !self.most_turns(shown.len())? => self.scores_of(r, shown)?,
            _ => self.ranked_matches(r)?,
        };
        let columns = self.tier_one_candidates(r, &tiers, &prompt)?;
        let mut p = Progress {
            rows: Vec::new(),
            counts: [0; 3],
            sizes: [prompt.len(), columns.len()],
            order,
            needed_read: 0,
            candidates_read: 0,
            unchecked: Vec::new(),
            columns,
        };
        let check = tiers.one_message.as_ref().map(|t| t.1.as_str());
        if check.is_some() {
            // Created before the ranked rows are read: no schema change while they are.
            self.ensure_hit_text()?;
        }
        // Once the best are known, rows tied with the last one read still come in (recency
        // decides among them).
        let mut decided_at: Option<f64> = None;
        for (rowid, score) in ranked {
            if decided_at.is_some_and(|s| s != score) {
                break;
            }
            p.push(rowid, score, &prompt, tiers.rest);
            if decided_at.is_none() && self.decided(&mut p, r, check, false)? {
                decided_at = Some(score);
            }
        }
        // Every match read (or the ties of the last): check what the choice may still need.
        self.decided(&mut p, r, check, true)?;
        let read = p.rows.len();
        Ok((self.select(p, r.limit)?, read))
    }

    /// Tier 1's candidates (matches outside tier 0 one of whose columns holds every word), each
    /// with those columns' bits; none when tier 0 fills the page (tier 1 matters only when it
    /// cannot) or there is no tier 1.
    fn tier_one_candidates(
        &self,
        r: &Ranking<'_>,
        tiers: &Tiers,
        prompt: &RowidSet,
    ) -> Result<RowidMap<u8>> {
        let mut columns: RowidMap<u8> = RowidMap::default();
        let Some((queries, _)) = tiers
            .one_message
            .as_ref()
            .filter(|_| prompt.len() < r.limit)
        else {
            return Ok(columns);
        };
        for (bit, query) in queries {
            for id in self.rowid_set(r, "turn_search", Some(query))? {
                *columns.entry(id).or_default() |= bit;
            }
        }
        columns.retain(|id, _| !prompt.contains(id));
        Ok(columns)
    }

    /// Every match that passes the filters, with bm25 of its turn, best first (ties by rowid).
    /// Scored with the index's own rank function, once per match, and sorted here: FTS5's
    /// `ORDER BY rank` computed each match's bm25 twice (for the sort and for the `rank`
    /// column) and sorted in SQLite's sorter.
    fn ranked_matches(&self, r: &Ranking<'_>) -> Result<Vec<(i64, f64)>> {
        let score = rank_function();
        let sql = if r.filter.is_empty() {
            format!("SELECT rowid, {score} FROM turn_search WHERE turn_search MATCH ?1")
        } else {
            format!(
                "SELECT t.rowid, {score}
                 FROM turn_search t
                 JOIN turn_docs d ON d.id = t.rowid
                 JOIN main.sessions s ON s.id = d.session_id
                 WHERE turn_search MATCH ?1{}",
                r.filter
            )
        };
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let refs: Vec<&dyn ToSql> = r.args.iter().map(|v| v as &dyn ToSql).collect();
        let mut ranked: Vec<(i64, f64)> = stmt
            .query_map(refs.as_slice(), |row| Ok((row.get(0)?, row.get(1)?)))
            .and_then(|rows| rows.collect::<rusqlite::Result<_>>())
            .map_err(fts_error)?;
        if let Some(excluded) = r.excluded {
            ranked.retain(|(id, _)| !excluded.contains(id));
        }
        best_first(&mut ranked);
        Ok(ranked)
    }

    /// bm25 of the turn of each of `rowids` (matches of the query), best first: one pass
    /// over the matches that scores only these, and returns only these. SQLite asks
    /// `trail_scored(rowid)` ([`ScoredSet`]) of each match, and computes bm25
    /// only where it answers yes. (`rowid IN (...)` as a constraint would start FTS5's query
    /// once per rowid, and bm25 reads each word's whole doclist at every start; `+rowid IN
    /// (...)` built an index of the list first, 0.6 µs a member, a third of what bm25 of the
    /// member costs.)
    fn scores_of(&self, r: &Ranking<'_>, rowids: &RowidSet) -> Result<Vec<(i64, f64)>> {
        let score = rank_function();
        let sql = format!(
            "SELECT rowid, {score} FROM turn_search
             WHERE turn_search MATCH ?1 AND trail_scored(rowid)"
        );
        let mut scores = self
            .scored
            .with(rowids, || {
                let mut stmt = self.conn.prepare_cached(&sql)?;
                let rows = stmt.query_map([r.matched], |row| Ok((row.get(0)?, row.get(1)?)))?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(fts_error)?;
        best_first(&mut scores);
        Ok(scores)
    }

    /// Whether `n` turns are more than three quarters of the index. [`Self::scores_of`] asks
    /// its function of every match (about 0.3 µs each, a sixth to a third of bm25 of a
    /// match), so scoring a set that large alone saves less than it costs: `the` at 10 GiB,
    /// 94,492 prompts of 101,149 matches, took 8 % longer.
    fn most_turns(&self, n: usize) -> Result<bool> {
        let all = crate::search_db::turn_count(&self.conn)?;
        Ok(all.is_some_and(|all| n as u64 * 4 > all * 3))
    }

    /// The turns of `rowids` (index rows), looked up one by one.
    fn turns_of(&self, rowids: impl Iterator<Item = i64>) -> Result<RowidMap<TurnOf>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT d.session_id, d.turn_index, coalesce(d.last_at, s.updated_at)
             FROM turn_docs d JOIN main.sessions s ON s.id = d.session_id
             WHERE d.id = ?1",
        )?;
        let mut out = RowidMap::default();
        for rowid in rowids {
            let turn = stmt.query_row([rowid], |row| {
                Ok(TurnOf {
                    session_id: row.get(0)?,
                    turn: row.get(1)?,
                    recency: row.get(2)?,
                })
            })?;
            out.insert(rowid, turn);
        }
        Ok(out)
    }

    /// The best `limit` rows: by tier, then tier 0's [`PromptOrder`], then bm25, then the
    /// newest; rows not placed in a tier were not needed (they rank below `limit` placed
    /// ones). Recency is looked up only for the rows within `limit` and those tied with the
    /// last of them.
    fn select(&self, p: Progress, limit: usize) -> Result<Vec<HitTurn>> {
        let mut rows: Vec<Row> = p.rows.into_iter().filter(|r| r.tier.is_some()).collect();
        rows.sort_by(|a, b| before_recency(a, b).then(a.rowid.cmp(&b.rowid)));
        if let Some(last) = limit.checked_sub(1).filter(|&i| i < rows.len()) {
            let cut = (last + 1..rows.len())
                .find(|&i| before_recency(&rows[i], &rows[last]).is_gt())
                .unwrap_or(rows.len());
            rows.truncate(cut);
        }
        let mut turns = self.turns_of(rows.iter().map(|r| r.rowid))?;
        rows.sort_by(|a, b| {
            before_recency(a, b)
                .then_with(|| turns[&b.rowid].recency.cmp(&turns[&a.rowid].recency))
                .then(a.rowid.cmp(&b.rowid))
        });
        rows.truncate(limit);
        Ok(rows
            .iter()
            .map(|r| {
                let t = turns
                    .remove(&r.rowid)
                    .expect("every row's turn was looked up");
                HitTurn {
                    rowid: r.rowid,
                    session_id: t.session_id,
                    turn: t.turn,
                    tier: r.tier,
                    score: r.score,
                }
            })
            .collect())
    }

    /// Tier 0 of a query of one group, with each member's prompt score: the matches of `expr`
    /// in the index of prompts alone (`prompt_search`) that pass the filters, with bm25 of the
    /// prompt there (the index's statistics are every prompt's: the one group's words weigh
    /// the same in each member, so its count against the prompt's length orders them, as the
    /// prompt score of a query of two groups does among tier 0's prompts). Only where that
    /// index is current ([`crate::search_db::prompt_index_current`]).
    fn prompt_index_scores(&self, r: &Ranking<'_>, expr: &str) -> Result<RowidMap<f64>> {
        let scores =
            self.filtered_matches(r, "prompt_search", ", bm25(prompt_search)", expr, |row| {
                row.get(1)
            })?;
        Ok(scores.into_iter().collect())
    }

    /// The rowids of the matches of `expr` in full-text table `table` (`turn_search` or
    /// `prompt_search`) that pass the filters; empty when there is no such tier.
    fn rowid_set(&self, r: &Ranking<'_>, table: &str, expr: Option<&str>) -> Result<RowidSet> {
        let Some(expr) = expr else {
            return Ok(RowidSet::default());
        };
        let ids = self.filtered_matches(r, table, "", expr, |_| Ok(()))?;
        Ok(ids.into_iter().map(|(id, ())| id).collect())
    }

    /// The matches of `expr` in full-text table `table` that pass the filters and are not left
    /// out, each with what `read` reads of its row (`SELECT t.rowid{also}`); none when FTS5
    /// cannot read `expr` (a tier without members: the query itself was read).
    fn filtered_matches<T>(
        &self,
        r: &Ranking<'_>,
        table: &str,
        also: &str,
        expr: &str,
        read: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<(i64, T)>> {
        let sql = if r.filter.is_empty() {
            format!("SELECT t.rowid{also} FROM {table} t WHERE {table} MATCH ?1")
        } else {
            format!(
                "SELECT t.rowid{also} FROM {table} t
                 JOIN turn_docs d ON d.id = t.rowid
                 JOIN main.sessions s ON s.id = d.session_id
                 WHERE {table} MATCH ?1{}",
                r.filter
            )
        };
        let mut args: Vec<Value> = r.args.to_vec();
        args[0] = Value::Text(expr.to_string());
        let refs: Vec<&dyn ToSql> = args.iter().map(|v| v as &dyn ToSql).collect();
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt
            .query_map(refs.as_slice(), |row| Ok((row.get(0)?, read(row)?)))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<(i64, T)>>>());
        match rows.map_err(fts_error) {
            Ok(mut rows) => {
                if let Some(excluded) = r.excluded {
                    rows.retain(|(id, _)| !excluded.contains(id));
                }
                Ok(rows)
            }
            Err(crate::StoreError::InvalidQuery(_)) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Whether the best `limit` are known from the rows read so far (all of them when `done`):
    /// each tier, best first, either holds what is still needed or is complete. Checks tier-1
    /// candidates (in batches, in rank order) only once tier 0 is complete and short.
    fn decided(
        &self,
        p: &mut Progress,
        r: &Ranking<'_>,
        check: Option<&str>,
        done: bool,
    ) -> Result<bool> {
        let mut need = r.limit;
        match &p.order {
            // Ordered by the prompts' scores: the members that can be shown must all be read.
            Some(order) => {
                if !done && p.needed_read < order.needed.len() {
                    return Ok(false);
                }
                if p.sizes[0] >= need {
                    return Ok(true);
                }
            }
            None => {
                if p.counts[0] >= need {
                    return Ok(true);
                }
                if !done && p.counts[0] < p.sizes[0] {
                    return Ok(false);
                }
            }
        }
        need -= p.counts[0].min(need);
        if let Some(check) = check {
            let complete = p.candidates_read == p.sizes[1];
            if !done && !complete && p.unchecked.len() < CHECK_BATCH {
                return Ok(false);
            }
            while !p.unchecked.is_empty() && p.counts[1] < need {
                let batch: Vec<usize> = p
                    .unchecked
                    .drain(..p.unchecked.len().min(CHECK_BATCH))
                    .collect();
                self.check_one_message(p, &batch, check, r.needles, r.role)?;
            }
            if done {
                // Candidates tied with the last row read: recency decides among them.
                let last = p.rows.last().map(|row| row.score);
                let tied: Vec<usize> = p
                    .unchecked
                    .iter()
                    .copied()
                    .filter(|&i| Some(p.rows[i].score) == last)
                    .collect();
                p.unchecked.retain(|i| !tied.contains(i));
                if !tied.is_empty() {
                    self.check_one_message(p, &tied, check, r.needles, r.role)?;
                }
            }
            if p.counts[1] >= need {
                return Ok(true);
            }
            if !done && !complete {
                return Ok(false);
            }
            // Tier 1 is complete and short: the best of tier 2 fill the rest.
            return Ok(p.counts[2] >= need - p.counts[1]);
        }
        // No tier 1 to check: what is not in tier 0 is in the one tier after it.
        Ok(p.counts[1] + p.counts[2] >= need)
    }

    /// Puts each of `batch` (tier-1 candidates) in tier 1 if one of its messages holds every
    /// word, else in tier 2. Only the messages whose signatures say one of their fields may
    /// hold every word are read (`search_sig.rs`); a candidate without such a message goes to
    /// tier 2 unread.
    fn check_one_message(
        &self,
        p: &mut Progress,
        batch: &[usize],
        check: &str,
        needles: Option<&Needles>,
        role: Option<&str>,
    ) -> Result<()> {
        let mut of = self.turns_of(batch.iter().map(|&i| p.rows[i].rowid))?;
        let turns: Vec<HitTurn> = batch
            .iter()
            .map(|&i| {
                let t = of.remove(&p.rows[i].rowid).expect("looked up");
                HitTurn {
                    rowid: p.rows[i].rowid,
                    session_id: t.session_id,
                    turn: t.turn,
                    tier: None,
                    score: p.rows[i].score,
                }
            })
            .collect();
        let wanted = self.messages_to_read(needles, Keep::EveryWordInOneField, &turns)?;
        // The candidates with a message that may hold every word (positions in `batch`), and
        // what to read of each.
        let mut read = Vec::new();
        let mut to_read = Vec::new();
        let mut which = Vec::new();
        for (k, (turn, ids)) in turns.into_iter().zip(wanted).enumerate() {
            if ids.as_ref().is_some_and(Vec::is_empty) {
                continue;
            }
            read.push(k);
            to_read.push(turn);
            which.push(TurnRead {
                columns: p
                    .columns
                    .get(&p.rows[batch[k]].rowid)
                    .copied()
                    .unwrap_or(ALL_COLUMNS),
                ids,
            });
        }
        let whole: HashSet<usize> = self
            .one_message_holds_all(&to_read, &which, check, needles, role)?
            .into_iter()
            .map(|j| read[j])
            .collect();
        for (k, &i) in batch.iter().enumerate() {
            let t = if whole.contains(&k) { 1 } else { 2 };
            p.rows[i].tier = Some(t);
            p.counts[t] += 1;
        }
        Ok(())
    }

    /// Those of `turns` (positions) one of whose messages holds every word: read from the
    /// store (of each turn, what `which` says), decided in Rust where the tokenizer's reading
    /// is sure, else by FTS5 on the in-memory table.
    fn one_message_holds_all(
        &self,
        turns: &[HitTurn],
        which: &[TurnRead],
        check: &str,
        needles: Option<&Needles>,
        role: Option<&str>,
    ) -> Result<HashSet<usize>> {
        if turns.is_empty() {
            return Ok(HashSet::new());
        }
        let mut whole: HashSet<usize> = HashSet::new();
        let by_fts: HashSet<usize> = self.with_hit_text(|| {
            let keep = Keep::EveryWordInOneField;
            let (rows, owner) =
                self.read_hit_text(needles, keep, role, turns, which, Some(&mut whole))?;
            self.insert_hit_text(rows)?;
            if owner.is_empty() {
                return Ok(HashSet::new());
            }
            let ids = self.hit_text_matches(check)?;
            Ok(ids
                .iter()
                .filter_map(|id| owner.get(id).map(|(k, _)| *k))
                .collect())
        })?;
        whole.extend(by_fts);
        Ok(whole)
    }

    /// Tier 0's order: each member's prompt score and whether its words are near each other.
    /// Both are read off the members' prompts in Rust when they are ASCII (FTS5's answers,
    /// [`Needles::read_ascii`], each prompt read once for both); else FTS5 scores them on an
    /// in-memory table and the index says which are near. A tier 0 of more than
    /// [`PROMPT_SCORE_MAX`] members is not scored: proximity, then bm25 of the turn, decide.
    fn prompt_order(
        &self,
        r: &Ranking<'_>,
        tiers: &Tiers,
        members: &RowidSet,
        expr: &str,
    ) -> Result<PromptOrder> {
        if members.len() > PROMPT_SCORE_MAX {
            let near = self.rowid_set(r, tiers.prompt_table, tiers.prompt_near.as_deref())?;
            return Ok(PromptOrder::of(
                RowidMap::default(),
                members,
                &near,
                r.limit,
            ));
        }
        let prompts = self.member_prompts(members)?;
        let texts: Vec<&str> = prompts.iter().map(|(_, text)| text.as_str()).collect();
        let read = r.needles.and_then(|n| n.read_ascii(&texts));
        let near = match (&tiers.prompt_near, &read) {
            (None, _) => RowidSet::default(),
            (Some(_), Some(read)) => prompts
                .iter()
                .zip(read.near())
                .filter_map(|((id, _), near)| near.then_some(*id))
                .collect(),
            (Some(near), None) => self.rowid_set(r, tiers.prompt_table, Some(near))?,
        };
        let scores = match read {
            Some(read) => prompts
                .iter()
                .zip(read.bm25())
                .filter_map(|((id, _), score)| Some((*id, score?)))
                .collect(),
            None => self.prompt_scores_by_fts5(&prompts, expr)?,
        };
        Ok(PromptOrder::of(scores, members, &near, r.limit))
    }

    /// Each member of tier 0's prompt score (`prompts`: their prompt columns, as
    /// [`Store::member_prompts`] reads them): FTS5's bm25 of the turn's prompt column on a
    /// table of the members' prompts alone, against `expr`. Every such prompt holds every
    /// word, so each word weighs the same (FTS5 gives a word found in every row the same tiny
    /// weight) and the score is bm25's saturated term frequency against the prompt's length
    /// (normalised by the members' mean length). FTS5 itself, on an in-memory table, for the
    /// prompts Rust cannot read surely ([`Store::prompt_order`]).
    fn prompt_scores_by_fts5(
        &self,
        prompts: &[(i64, String)],
        expr: &str,
    ) -> Result<RowidMap<f64>> {
        self.with_hit_text(|| {
            let mut insert = self
                .conn
                .prepare_cached("INSERT INTO temp.hit_text (rowid, text) VALUES (?1, ?2)")?;
            for (id, text) in prompts {
                insert.execute(rusqlite::params![id, text])?;
            }
            let mut score = self.conn.prepare_cached(
                "SELECT rowid, bm25(hit_text) FROM temp.hit_text WHERE hit_text MATCH ?1",
            )?;
            let scores = score
                .query_map([expr], |row| Ok((row.get(0)?, row.get(1)?)))
                .and_then(|rows| rows.collect::<rusqlite::Result<_>>());
            match scores.map_err(fts_error) {
                Ok(scores) => Ok(scores),
                // What FTS5 cannot read scores nothing (the query itself was read).
                Err(crate::StoreError::InvalidQuery(_)) => Ok(RowidMap::default()),
                Err(e) => Err(e),
            }
        })
    }

    /// Each member's prompt column as the index holds it (`search_doc::push_line`), in rowid
    /// order: kept by the search database (`turn_prompts`), else read from the store's
    /// messages (a search database made before the table, or a turn an older trail indexed
    /// into one made after it).
    fn member_prompts(&self, members: &RowidSet) -> Result<Vec<(i64, String)>> {
        let mut ids: Vec<i64> = members.iter().copied().collect();
        ids.sort_unstable();
        let stored = crate::search_db::prompts_stored(&self.conn)?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let kept = if stored {
                self.conn
                    .prepare_cached("SELECT prompt FROM search.turn_prompts WHERE id = ?1")?
                    .query_row([id], |row| row.get(0))
                    .optional()?
            } else {
                None
            };
            let prompt = match kept {
                Some(prompt) => prompt,
                None => self.prompt_from_messages(id)?,
            };
            out.push((id, prompt));
        }
        Ok(out)
    }

    /// The prompt column of the turn of index row `id`, from the store's messages.
    fn prompt_from_messages(&self, id: i64) -> Result<String> {
        let (session, turn): (String, i64) = self
            .conn
            .prepare_cached("SELECT session_id, turn_index FROM search.turn_docs WHERE id = ?1")?
            .query_row([id], |row| Ok((row.get(0)?, row.get(1)?)))?;
        crate::search_db::prompt_column(&self.conn, &session, turn)
    }
}

/// A column's bit in a set of columns (`hit_messages_sql` reads a message's field only when
/// its column's bit is set).
fn column_bit(column: &str) -> u8 {
    match column {
        "answer" => 1,
        "tool_input" => 2,
        "tool_output" => 4,
        _ => 8,
    }
}

/// The order of rows before recency: tier, tier 0's [`PromptOrder`] key, bm25.
fn before_recency(a: &Row, b: &Row) -> std::cmp::Ordering {
    a.tier
        .cmp(&b.tier)
        .then_with(|| match (&a.key, &b.key) {
            (Some(x), Some(y)) => key_order(x, y),
            _ => std::cmp::Ordering::Equal,
        })
        .then(a.score.total_cmp(&b.score))
}

/// The rank function the index is ranked with ([`crate::search_db::RANK`]), as an expression
/// of `turn_search`: `bm25(turn_search, 4.0, ...)`.
fn rank_function() -> String {
    let rank = crate::search_db::RANK;
    let args = rank
        .strip_prefix("bm25(")
        .expect("the index ranks with bm25");
    format!("bm25(turn_search, {args}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set of rowids answers as the hash set it was made of, as bits (dense rowids from 1)
    /// or, with a rowid beyond what bits are kept for or below zero, as a hash set.
    #[test]
    fn a_rowid_set_answers_as_its_hash_set() {
        for ids in [
            vec![1, 2, 63, 64, 65, 1000],
            vec![5, Rowids::MAX_BITS],
            vec![-3, 7],
            vec![],
        ] {
            let set: RowidSet = ids.iter().copied().collect();
            let rowids = Rowids::of(&set);
            assert_eq!(
                rowids.sparse.is_some(),
                ids.iter().any(|r| !(0..Rowids::MAX_BITS).contains(r))
            );
            for probe in [
                -3,
                0,
                1,
                2,
                3,
                62,
                63,
                64,
                65,
                66,
                999,
                1000,
                1001,
                5,
                7,
                Rowids::MAX_BITS,
            ] {
                assert_eq!(
                    rowids.contains(probe),
                    set.contains(&probe),
                    "{ids:?} {probe}"
                );
            }
        }
        assert!(!Rowids::default().contains(1));
    }
}
