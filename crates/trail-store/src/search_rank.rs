//! Coherent ranking (issue 43): a turn where the query's words stand together ranks above one
//! where they are scattered over its prompt, answers and tool output.
//!
//! Hits are ordered by tier, then bm25 (the index's column weights), then recency:
//! 0. the turn's prompt holds every word, near each other (FTS5's `NEAR`, ten tokens);
//! 1. the prompt holds every word;
//! 2. one message (one of its fields: text, tool input or tool output) holds every word;
//! 3. the words are spread over the turn.
//!
//! Exact, without scoring anything twice: FTS5 ranks every match once (`ORDER BY rank`, as
//! before), and the rows are read in that order until the best `limit` by tier are known. What
//! puts a turn in tier 0 or 1 is a column filter, so those tiers are sets of rowids read off the
//! index (their sizes say when each is complete). Tier 2 cannot be read off a turn's row (a
//! column holds all of the turn's messages of its kind), so the index gives its candidates (a
//! column holding every word) and each candidate is checked against its messages, in rank
//! order and only when the tiers above are complete, on the in-memory table that snippets use.
//! A query of one term (or one OR group) has no tier 3: any match is in one message.

use std::collections::HashSet;

use rusqlite::types::Value;
use rusqlite::ToSql;

use crate::search::{fts_error, whole_message_query, HitTurn, Needles, QueryShape};
use crate::{Result, Store};

/// Candidates of tier 2 checked against their messages at once.
const CHECK_BATCH: usize = 16;

/// A ranked search: what [`Store::coherent_turns`] needs.
pub(crate) struct Ranking<'a> {
    /// The FTS5 expression every hit matches (the role's columns applied).
    pub matched: &'a str,
    /// The filters' SQL (` AND ...`, on `d` = turn_docs and `s` = sessions) ...
    pub filter: &'a str,
    /// ... and their values; `?1` is the match expression.
    pub args: &'a [Value],
    pub role: Option<&'a str>,
    pub shape: &'a QueryShape,
    /// The query as the user wrote it.
    pub query: &'a str,
    pub limit: usize,
}

/// The tiers' definitions for one query.
struct Tiers {
    /// Tier 0 and tier 1 as index queries (rowid sets).
    prompt_near: Option<String>,
    prompt: Option<String>,
    /// Tier 2: the index query of its candidates, and what one message must match.
    one_message: Option<(String, String)>,
    /// The tier of a match none of the above takes.
    rest: usize,
}

impl Tiers {
    fn of(r: &Ranking<'_>) -> Tiers {
        let m = r.matched;
        let Some(positive) = r.shape.positive.as_deref() else {
            return Tiers {
                prompt_near: None,
                prompt: None,
                one_message: None,
                rest: 3,
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
        let prompt_near = r
            .shape
            .near
            .as_ref()
            .filter(|_| has_prompt)
            .map(|near| format!("({m}) AND ({{prompt}} : {near})"));
        let prompt = has_prompt.then(|| format!("({m}) AND ({{prompt}} : ({positive}))"));
        let others: Vec<String> = columns
            .iter()
            .filter(|c| **c != "prompt")
            .map(|c| format!("({{{c}}} : ({positive}))"))
            .collect();
        // One group: whatever matches holds it in one message (so no tier 3).
        let single = r.shape.groups <= 1;
        let one_message = (!single && !others.is_empty()).then(|| {
            (
                format!("({m}) AND ({})", others.join(" OR ")),
                whole_message_query(positive),
            )
        });
        Tiers {
            prompt_near,
            prompt,
            one_message,
            rest: if single { 2 } else { 3 },
        }
    }
}

/// A match read in rank order.
struct Row {
    rowid: i64,
    turn: HitTurn,
    /// `coalesce(last_at, updated_at)`: the tie-break, newest first.
    recency: Option<String>,
    /// 0-3, or `None` while a tier-2 candidate is unchecked.
    tier: Option<usize>,
}

/// The ranking in progress: the rows read so far and what is known of each tier.
struct Progress {
    rows: Vec<Row>,
    /// Rows of each tier read so far.
    counts: [usize; 4],
    /// Members of tiers 0 and 1 (from the index), and tier 2's candidates outside them.
    sizes: [usize; 3],
    /// Tier-2 candidates read so far, checked or not.
    candidates_read: usize,
    /// Indexes into `rows` of candidates not checked yet, in rank order.
    unchecked: Vec<usize>,
}

impl Store {
    /// The best `limit` matching turns by tier, bm25 and recency (module doc); returns them
    /// and how many matches were read.
    pub(crate) fn coherent_turns(&self, r: &Ranking<'_>) -> Result<(Vec<HitTurn>, usize)> {
        let tiers = Tiers::of(r);
        let near = self.rowid_set(r, tiers.prompt_near.as_deref())?;
        let prompt = self.rowid_set(r, tiers.prompt.as_deref())?;
        let mut candidates = self.rowid_set(r, tiers.one_message.as_ref().map(|t| t.0.as_str()))?;
        candidates.retain(|id| !prompt.contains(id));
        let mut p = Progress {
            rows: Vec::new(),
            counts: [0; 4],
            sizes: [
                near.len(),
                prompt.iter().filter(|id| !near.contains(id)).count(),
                candidates.len(),
            ],
            candidates_read: 0,
            unchecked: Vec::new(),
        };
        let check = tiers.one_message.as_ref().map(|t| t.1.as_str());
        let needles = Needles::of(r.query);
        if check.is_some() {
            // Created before the ranked rows are read: no schema change while they are.
            self.ensure_hit_text()?;
        }
        let sql = format!(
            "SELECT t.rowid, d.session_id, d.turn_index, t.rank, coalesce(d.last_at, s.updated_at)
             FROM turn_search t
             JOIN turn_docs d ON d.id = t.rowid
             JOIN main.sessions s ON s.id = d.session_id
             WHERE turn_search MATCH ?1{}
             ORDER BY t.rank",
            r.filter
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let refs: Vec<&dyn ToSql> = r.args.iter().map(|v| v as &dyn ToSql).collect();
        let mut rows = stmt.query(refs.as_slice()).map_err(fts_error)?;
        // Once the best are known, rows tied with the last one read still come in (recency
        // decides among them).
        let mut decided_at: Option<f64> = None;
        while let Some(row) = rows.next().map_err(fts_error)? {
            let rowid: i64 = row.get(0)?;
            let score: f64 = row.get(3)?;
            if decided_at.is_some_and(|s| s != score) {
                break;
            }
            let tier = if near.contains(&rowid) {
                Some(0)
            } else if prompt.contains(&rowid) {
                Some(1)
            } else if candidates.contains(&rowid) {
                p.candidates_read += 1;
                p.unchecked.push(p.rows.len());
                None
            } else {
                Some(tiers.rest)
            };
            if let Some(t) = tier {
                p.counts[t] += 1;
            }
            p.rows.push(Row {
                rowid,
                turn: HitTurn {
                    session_id: row.get(1)?,
                    turn: row.get(2)?,
                    score,
                },
                recency: row.get(4)?,
                tier,
            });
            if decided_at.is_none() && self.decided(&mut p, r, check, needles.as_ref(), false)? {
                decided_at = Some(score);
            }
        }
        drop(rows);
        // Every match read (or the ties of the last): check what the choice may still need.
        self.decided(&mut p, r, check, needles.as_ref(), true)?;
        let read = p.rows.len();
        Ok((select(p, r.limit), read))
    }

    /// The rowids of the matches of `expr` that pass the filters; empty when there is no such
    /// tier.
    fn rowid_set(&self, r: &Ranking<'_>, expr: Option<&str>) -> Result<HashSet<i64>> {
        let Some(expr) = expr else {
            return Ok(HashSet::new());
        };
        let sql = if r.filter.is_empty() {
            "SELECT rowid FROM turn_search WHERE turn_search MATCH ?1".to_string()
        } else {
            format!(
                "SELECT t.rowid FROM turn_search t
                 JOIN turn_docs d ON d.id = t.rowid
                 JOIN main.sessions s ON s.id = d.session_id
                 WHERE turn_search MATCH ?1{}",
                r.filter
            )
        };
        let mut args: Vec<Value> = r.args.to_vec();
        args[0] = Value::Text(expr.to_string());
        let refs: Vec<&dyn ToSql> = args.iter().map(|v| v as &dyn ToSql).collect();
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let ids = stmt
            .query_map(refs.as_slice(), |row| row.get(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<_>>());
        match ids.map_err(fts_error) {
            Ok(ids) => Ok(ids),
            // A tier FTS5 cannot read is a tier without members (the query itself was read).
            Err(crate::StoreError::InvalidQuery(_)) => Ok(HashSet::new()),
            Err(e) => Err(e),
        }
    }

    /// Whether the best `limit` are known from the rows read so far (all of them when `done`):
    /// each tier, best first, either holds what is still needed or is complete. Checks tier-2
    /// candidates (in batches, in rank order) only once tiers 0 and 1 are complete and short.
    fn decided(
        &self,
        p: &mut Progress,
        r: &Ranking<'_>,
        check: Option<&str>,
        needles: Option<&Needles>,
        done: bool,
    ) -> Result<bool> {
        let mut need = r.limit;
        for t in 0..2 {
            if p.counts[t] >= need {
                return Ok(true);
            }
            if !done && p.counts[t] < p.sizes[t] {
                return Ok(false);
            }
            need -= p.counts[t];
        }
        if let Some(check) = check {
            let complete = p.candidates_read == p.sizes[2];
            if !done && !complete && p.unchecked.len() < CHECK_BATCH {
                return Ok(false);
            }
            while !p.unchecked.is_empty() && p.counts[2] < need {
                let batch: Vec<usize> = p
                    .unchecked
                    .drain(..p.unchecked.len().min(CHECK_BATCH))
                    .collect();
                self.check_one_message(p, &batch, check, needles, r.role)?;
            }
            if done {
                // Candidates tied with the last row read: recency decides among them.
                let last = p.rows.last().map(|row| row.turn.score);
                let tied: Vec<usize> = p
                    .unchecked
                    .iter()
                    .copied()
                    .filter(|&i| Some(p.rows[i].turn.score) == last)
                    .collect();
                p.unchecked.retain(|i| !tied.contains(i));
                if !tied.is_empty() {
                    self.check_one_message(p, &tied, check, needles, r.role)?;
                }
            }
            if p.counts[2] >= need {
                return Ok(true);
            }
            if !done && !complete {
                return Ok(false);
            }
            need -= p.counts[2];
        }
        Ok(p.counts[2] + p.counts[3] >= need)
    }

    /// Puts each of `batch` (tier-2 candidates) in tier 2 if one of its messages holds every
    /// word, else in tier 3.
    fn check_one_message(
        &self,
        p: &mut Progress,
        batch: &[usize],
        check: &str,
        needles: Option<&Needles>,
        role: Option<&str>,
    ) -> Result<()> {
        let turns: Vec<HitTurn> = batch
            .iter()
            .map(|&i| HitTurn {
                session_id: p.rows[i].turn.session_id.clone(),
                turn: p.rows[i].turn.turn,
                score: p.rows[i].turn.score,
            })
            .collect();
        let whole: HashSet<usize> = self.with_hit_text(|| {
            let owner = self.load_hit_text(needles, role, &turns)?;
            let ids = self.hit_text_matches(check)?;
            Ok(ids
                .iter()
                .filter_map(|id| owner.get(id).map(|(i, _)| *i))
                .collect())
        })?;
        for (k, &i) in batch.iter().enumerate() {
            let t = if whole.contains(&k) { 2 } else { 3 };
            p.rows[i].tier = Some(t);
            p.counts[t] += 1;
        }
        Ok(())
    }
}

/// The best `limit` rows: by tier, then bm25, then the newest; rows not placed in a tier were
/// not needed (they rank below `limit` placed ones).
fn select(p: Progress, limit: usize) -> Vec<HitTurn> {
    let mut rows: Vec<Row> = p.rows.into_iter().filter(|r| r.tier.is_some()).collect();
    rows.sort_by(|a, b| {
        a.tier
            .cmp(&b.tier)
            .then(a.turn.score.total_cmp(&b.turn.score))
            .then_with(|| b.recency.cmp(&a.recency))
            .then(a.rowid.cmp(&b.rowid))
    });
    rows.truncate(limit);
    rows.into_iter().map(|r| r.turn).collect()
}
