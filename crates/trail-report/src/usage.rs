//! `trail usage`: tokens and cost by day, week, month, model, session, repository or source.
//!
//! Reads `usage_rollup` (store migration 0003), where every request counts once across the
//! whole store (ccusage's rule: the same `message.id` + `requestId` in several files counts
//! once, keeping the larger total; a sidechain copy of a message loses to the main one). Whole
//! UTC days come from the rollup; a range that starts or ends inside a day adds that part from
//! the counted `usage` rows, through the timestamp index.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{Datelike, Duration, NaiveDate};
use serde::Serialize;
use trail_store::Store;

use crate::prices::{PriceTable, Tokens};
use crate::query::Where;
use crate::{Filter, Result};

/// How `trail usage` groups its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    #[default]
    Day,
    /// Weeks starting on Monday, keyed by that Monday.
    Week,
    Month,
    Model,
    Session,
    Repo,
    Source,
}

/// One row of the report (or the totals).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UsageRow {
    /// The day, week (its Monday), month, model, session id, repository or source.
    pub key: String,
    /// For sessions: the title; for repositories without a known remote: the folder.
    pub label: Option<String>,
    /// For sessions: the source.
    pub source: Option<String>,
    /// Models used, by name as recorded.
    pub models: Vec<String>,
    pub requests: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_creation_tokens: i64,
    pub cache_read_tokens: i64,
    pub total_tokens: i64,
    /// USD: prices from the table, or the cost the agent recorded. Excludes unpriced models.
    pub cost_usd: f64,
    /// Requests of models without a price (their tokens are counted, their cost is not).
    pub unpriced_requests: i64,
}

/// A model the price table does not know.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unpriced {
    pub model: String,
    pub requests: i64,
    pub total_tokens: i64,
}

/// A price the report applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PriceUsed {
    /// The model name as recorded.
    pub model: String,
    /// The table entry it resolved to.
    pub price_id: String,
    pub as_of: String,
    pub source: String,
}

/// The usage report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageReport {
    pub filter: Filter,
    pub group_by: GroupBy,
    pub rows: Vec<UsageRow>,
    pub totals: UsageRow,
    /// Models shown as unpriced: never counted as $0 silently.
    pub unpriced_models: Vec<Unpriced>,
    pub prices: Vec<PriceUsed>,
}

/// One rollup cell: a session's counted requests of one model on one UTC day.
#[derive(Debug, Clone)]
struct Cell {
    session_id: String,
    day: String,
    model: String,
    /// No recorded cost: price the tokens.
    priced: bool,
    requests: i64,
    tokens: Tokens,
    recorded_cost: f64,
}

const CELL_COLUMNS: &str = "r.requests, r.input_tokens, r.output_tokens,
    r.cache_creation_tokens, r.cache_creation_1h_tokens, r.cache_read_tokens, r.input_over_200k,
    r.output_over_200k, r.cache_creation_over_200k, r.cache_read_over_200k, r.cost_usd";

fn cell_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Cell> {
    Ok(Cell {
        session_id: r.get(0)?,
        day: r.get(1)?,
        model: r.get(2)?,
        priced: r.get::<_, i64>(3)? != 0,
        requests: r.get(4)?,
        tokens: Tokens {
            input: r.get(5)?,
            output: r.get(6)?,
            cache_creation: r.get(7)?,
            cache_creation_1h: r.get(8)?,
            cache_read: r.get(9)?,
            input_over_200k: r.get(10)?,
            output_over_200k: r.get(11)?,
            cache_creation_over_200k: r.get(12)?,
            cache_read_over_200k: r.get(13)?,
        },
        recorded_cost: r.get::<_, Option<f64>>(14)?.unwrap_or(0.0),
    })
}

/// Computes the usage report.
#[tracing::instrument(level = "debug", skip_all, err)]
pub fn usage(
    store: &Store,
    filter: &Filter,
    by: GroupBy,
    prices: &PriceTable,
) -> Result<UsageReport> {
    let cells = load_cells(store, filter)?;
    let sessions = if matches!(by, GroupBy::Session | GroupBy::Repo | GroupBy::Source) {
        session_info(store, &cells)?
    } else {
        HashMap::new()
    };
    let mut groups: BTreeMap<String, UsageRow> = BTreeMap::new();
    let mut totals = UsageRow {
        key: "total".into(),
        ..UsageRow::default()
    };
    let mut unpriced: BTreeMap<String, Unpriced> = BTreeMap::new();
    let mut used: BTreeMap<String, PriceUsed> = BTreeMap::new();
    for c in &cells {
        let info = sessions.get(&c.session_id);
        let (key, label, source) = match by {
            _ if c.day.is_empty()
                && matches!(by, GroupBy::Day | GroupBy::Week | GroupBy::Month) =>
            {
                ("(no timestamp)".to_string(), None, None)
            }
            GroupBy::Day => (c.day.clone(), None, None),
            GroupBy::Week => (week_of(&c.day), None, None),
            GroupBy::Month => (c.day.get(..7).unwrap_or("").to_string(), None, None),
            GroupBy::Model => (c.model.clone(), None, None),
            GroupBy::Session => (
                c.session_id.clone(),
                info.and_then(|i| i.title.clone()),
                info.map(|i| i.source.clone()),
            ),
            GroupBy::Repo => match info {
                Some(SessionInfo {
                    repository: Some(r),
                    ..
                }) => (r.clone(), None, None),
                Some(SessionInfo { cwd: Some(d), .. }) => (d.clone(), Some("folder".into()), None),
                _ => ("(unknown)".into(), None, None),
            },
            GroupBy::Source => (
                info.map(|i| i.source.clone()).unwrap_or_default(),
                None,
                None,
            ),
        };
        let mut cost = 0.0;
        let mut unpriced_requests = 0;
        if !c.priced {
            cost = c.recorded_cost;
        } else if let Some(p) = prices.resolve(&c.model) {
            cost = p.cost(&c.tokens);
            used.entry(c.model.clone()).or_insert_with(|| PriceUsed {
                model: c.model.clone(),
                price_id: p.id.clone(),
                as_of: p.as_of.clone(),
                source: p.source.clone(),
            });
        } else if total_of(&c.tokens) > 0 {
            unpriced_requests = c.requests;
            let u = unpriced.entry(c.model.clone()).or_insert_with(|| Unpriced {
                model: if c.model.is_empty() {
                    "(no model recorded)".into()
                } else {
                    c.model.clone()
                },
                requests: 0,
                total_tokens: 0,
            });
            u.requests += c.requests;
            u.total_tokens += total_of(&c.tokens);
        }
        let row = groups.entry(key.clone()).or_insert_with(|| UsageRow {
            key,
            label,
            source,
            ..UsageRow::default()
        });
        for r in [row, &mut totals] {
            add(r, c, cost, unpriced_requests);
        }
    }
    let mut rows: Vec<UsageRow> = groups.into_values().collect();
    if matches!(
        by,
        GroupBy::Model | GroupBy::Session | GroupBy::Repo | GroupBy::Source
    ) {
        rows.sort_by(|a, b| {
            b.cost_usd
                .total_cmp(&a.cost_usd)
                .then(b.total_tokens.cmp(&a.total_tokens))
                .then(a.key.cmp(&b.key))
        });
    }
    Ok(UsageReport {
        filter: filter.clone(),
        group_by: by,
        rows,
        totals,
        unpriced_models: unpriced.into_values().collect(),
        prices: used.into_values().collect(),
    })
}

fn total_of(t: &Tokens) -> i64 {
    t.input + t.output + t.cache_creation + t.cache_read
}

fn add(r: &mut UsageRow, c: &Cell, cost: f64, unpriced_requests: i64) {
    r.requests += c.requests;
    r.input_tokens += c.tokens.input;
    r.output_tokens += c.tokens.output;
    r.cache_creation_tokens += c.tokens.cache_creation;
    r.cache_read_tokens += c.tokens.cache_read;
    r.total_tokens += total_of(&c.tokens);
    r.cost_usd += cost;
    r.unpriced_requests += unpriced_requests;
    if !c.model.is_empty() && !r.models.contains(&c.model) {
        r.models.push(c.model.clone());
        r.models.sort();
    }
}

/// Returns the Monday of `day`'s week (`YYYY-MM-DD`).
fn week_of(day: &str) -> String {
    match NaiveDate::parse_from_str(day, "%Y-%m-%d") {
        Ok(d) => {
            let monday = d - Duration::days(d.weekday().num_days_from_monday() as i64);
            monday.format("%Y-%m-%d").to_string()
        }
        Err(_) => day.to_string(),
    }
}

const MIDNIGHT: &str = "T00:00:00.000Z";

/// Loads the cells in the filter's range: whole days from the rollup, partial days from the
/// counted usage rows.
fn load_cells(store: &Store, f: &Filter) -> Result<Vec<Cell>> {
    let conn = store.connection();
    let since = f.since.as_deref();
    let until = f.until.as_deref();
    // The whole days [first_day, end_day) come from the rollup.
    let first_day = since.map(|s| {
        let day = &s[..s.len().min(10)];
        if s.ends_with(MIDNIGHT) {
            day.to_string()
        } else {
            next_day(day)
        }
    });
    let end_day = until.map(|u| u[..u.len().min(10)].to_string());
    let mut cells = Vec::new();
    let mut partial: Vec<(Option<String>, Option<String>)> = Vec::new();
    match (&first_day, &end_day) {
        (Some(a), Some(b)) if a >= b => partial.push((f.since.clone(), f.until.clone())),
        _ => {
            let w = Where::sessions(f).range("r.day", first_day.as_deref(), end_day.as_deref());
            let sql = format!(
                "SELECT r.session_id, r.day, r.model, r.priced, {CELL_COLUMNS}
                 FROM usage_rollup r JOIN sessions s ON s.id = r.session_id WHERE {}",
                w.sql
            );
            let mut stmt = conn.prepare(&sql)?;
            for c in stmt.query_map(w.params(), cell_from_row)? {
                cells.push(c?);
            }
            if let (Some(s), Some(d)) = (since, &first_day) {
                if !s.ends_with(MIDNIGHT) {
                    partial.push((Some(s.to_string()), Some(format!("{d}{MIDNIGHT}"))));
                }
            }
            if let (Some(u), Some(d)) = (until, &end_day) {
                if !u.ends_with(MIDNIGHT) {
                    partial.push((Some(format!("{d}{MIDNIGHT}")), Some(u.to_string())));
                }
            }
        }
    }
    for (lo, hi) in partial {
        let w = Where::sessions(f)
            .range("u.timestamp", lo.as_deref(), hi.as_deref())
            .and("u.counted = 1");
        let sql = format!(
            "SELECT u.session_id, substr(u.timestamp, 1, 10), coalesce(u.model, ''),
                 u.cost_usd IS NULL, count(*), sum(u.input_tokens), sum(u.output_tokens),
                 sum(u.cache_creation_tokens), sum(u.cache_creation_1h_tokens),
                 sum(u.cache_read_tokens), sum(max(u.input_tokens - 200000, 0)),
                 sum(max(u.output_tokens - 200000, 0)),
                 sum(max(u.cache_creation_tokens - 200000, 0)),
                 sum(max(u.cache_read_tokens - 200000, 0)), sum(u.cost_usd)
             FROM usage u JOIN sessions s ON s.id = u.session_id WHERE {}
             GROUP BY 1, 2, 3, 4",
            w.sql
        );
        let mut stmt = conn.prepare(&sql)?;
        for c in stmt.query_map(w.params(), cell_from_row)? {
            cells.push(c?);
        }
    }
    Ok(cells)
}

fn next_day(day: &str) -> String {
    match NaiveDate::parse_from_str(day, "%Y-%m-%d") {
        Ok(d) => (d + Duration::days(1)).format("%Y-%m-%d").to_string(),
        Err(_) => day.to_string(),
    }
}

struct SessionInfo {
    source: String,
    title: Option<String>,
    repository: Option<String>,
    cwd: Option<String>,
}

fn session_info(store: &Store, cells: &[Cell]) -> Result<HashMap<String, SessionInfo>> {
    let wanted: BTreeSet<&str> = cells.iter().map(|c| c.session_id.as_str()).collect();
    let mut stmt = store
        .connection()
        .prepare_cached("SELECT source, summary, repository, cwd FROM sessions WHERE id = ?1")?;
    let mut out = HashMap::new();
    for id in wanted {
        let info = stmt.query_row([id], |r| {
            Ok(SessionInfo {
                source: r.get(0)?,
                title: r.get(1)?,
                repository: r.get(2)?,
                cwd: r.get(3)?,
            })
        })?;
        out.insert(id.to_string(), info);
    }
    Ok(out)
}
