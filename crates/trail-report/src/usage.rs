//! `trail usage`: tokens and cost by day, week, month, model, session, repository or source.
//!
//! Reads `usage_rollup` (store migration 0003), where every request counts once across the
//! whole store (ccusage's rule: the same `message.id` + `requestId` in several files counts
//! once, keeping the larger total; a sidechain copy of a message loses to the main one). Whole
//! UTC days come from the rollup; a range that starts or ends inside a day adds that part from
//! the counted `usage` rows, through the timestamp index. Days of another time zone
//! ([`usage_in`]) are counted from the usage rows themselves.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{Datelike, Duration, NaiveDate};
use serde::Serialize;
use trail_store::Store;

use crate::prices::{PriceTable, Tokens};
use crate::query::Where;
use crate::zone::DayZone;
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
    /// For sessions: the shortest prefix of the id that opens it in `trail show` (issue 15);
    /// for display only.
    #[serde(skip)]
    pub short_key: Option<String>,
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
    /// Claude server-side web searches (priced per search, inside `cost_usd`).
    pub web_search_requests: i64,
    /// GitHub Copilot premium requests: a unit of their own, never in `cost_usd`.
    pub premium_requests: f64,
    /// `--by session`: the session's own spend; the row's figures include its subagents'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_total_tokens: Option<i64>,
    /// `--by session`: subagent sessions whose spend is counted in this row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent_sessions: Option<i64>,
    /// One row per model under this one (`--breakdown`), most expensive first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub breakdown: Vec<UsageRow>,
}

/// Options of the usage report beyond the grouping.
#[derive(Debug, Clone, Default)]
pub struct UsageOptions {
    /// Rows per model under each row.
    pub breakdown: bool,
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
    /// The time zone of the days, weeks and months (`UTC`, `Europe/Paris`, `+05:30`).
    pub time_zone: String,
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
    web_search_requests: i64,
    premium_requests: f64,
}

const CELL_COLUMNS: &str = "r.requests, r.input_tokens, r.output_tokens,
    r.cache_creation_tokens, r.cache_creation_1h_tokens, r.cache_read_tokens, r.input_over_200k,
    r.output_over_200k, r.cache_creation_over_200k, r.cache_read_over_200k, r.cost_usd,
    r.web_search_requests, r.premium_requests";

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
        web_search_requests: r.get::<_, Option<i64>>(15)?.unwrap_or(0),
        premium_requests: r.get::<_, Option<f64>>(16)?.unwrap_or(0.0),
    })
}

/// How a model is named in reports: requests logged without one have the empty key (kept in
/// `--json`), shown as "(no model recorded)".
pub fn model_name(model: &str) -> &str {
    if model.is_empty() {
        "(no model recorded)"
    } else {
        model
    }
}

/// Computes the usage report.
#[tracing::instrument(level = "debug", skip_all, err)]
pub fn usage(
    store: &Store,
    filter: &Filter,
    by: GroupBy,
    prices: &PriceTable,
) -> Result<UsageReport> {
    usage_in(store, filter, by, prices, &DayZone::utc())
}

/// Computes the usage report with days (and weeks and months) of `zone`.
#[tracing::instrument(level = "debug", skip_all, err)]
pub fn usage_in(
    store: &Store,
    filter: &Filter,
    by: GroupBy,
    prices: &PriceTable,
    zone: &DayZone,
) -> Result<UsageReport> {
    usage_with(store, filter, by, prices, zone, &UsageOptions::default())
}

/// Computes the usage report with days of `zone` and `options`. Grouped by session, a subagent's
/// spend counts in its top-level session's row, which also says what the session spent itself.
#[tracing::instrument(level = "debug", skip_all, err)]
pub fn usage_with(
    store: &Store,
    filter: &Filter,
    by: GroupBy,
    prices: &PriceTable,
    zone: &DayZone,
    options: &UsageOptions,
) -> Result<UsageReport> {
    let cells = if zone.is_utc() {
        load_cells(store, filter)?
    } else {
        load_cells_in(store, filter, zone)?
    };
    let roots = if by == GroupBy::Session {
        session_roots(store)?
    } else {
        HashMap::new()
    };
    let root_of = |id: &str| -> String { roots.get(id).cloned().unwrap_or_else(|| id.to_string()) };
    let sessions = if matches!(by, GroupBy::Session | GroupBy::Repo | GroupBy::Source) {
        let mut ids: BTreeSet<String> = cells.iter().map(|c| c.session_id.clone()).collect();
        ids.extend(cells.iter().map(|c| root_of(&c.session_id)));
        session_info(store, &ids)?
    } else {
        HashMap::new()
    };
    let mut per_model: BTreeMap<(String, String), UsageRow> = BTreeMap::new();
    let mut children: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut groups: BTreeMap<String, UsageRow> = BTreeMap::new();
    let mut totals = UsageRow {
        key: "total".into(),
        ..UsageRow::default()
    };
    let mut unpriced: BTreeMap<String, Unpriced> = BTreeMap::new();
    let mut used: BTreeMap<String, PriceUsed> = BTreeMap::new();
    for c in &cells {
        let (key, label, source) = group_key(by, c, &sessions, &root_of);
        let (cost, unpriced_requests) = price(c, prices, &mut used, &mut unpriced);
        if options.breakdown {
            let model = model_name(&c.model).to_string();
            let sub = per_model
                .entry((key.clone(), model.clone()))
                .or_insert_with(|| UsageRow {
                    key: model,
                    ..UsageRow::default()
                });
            add(sub, c, cost, unpriced_requests);
        }
        let row = groups.entry(key.clone()).or_insert_with(|| UsageRow {
            key: key.clone(),
            label,
            source,
            ..UsageRow::default()
        });
        if by == GroupBy::Session {
            let own = c.session_id == key;
            *row.self_cost_usd.get_or_insert(0.0) += if own { cost } else { 0.0 };
            *row.self_total_tokens.get_or_insert(0) += if own { total_of(&c.tokens) } else { 0 };
            let kids = children.entry(key.clone()).or_default();
            if !own {
                kids.insert(c.session_id.clone());
            }
            row.subagent_sessions = Some(kids.len() as i64);
        }
        for r in [row, &mut totals] {
            add(r, c, cost, unpriced_requests);
        }
    }
    for ((key, _), sub) in per_model {
        if let Some(row) = groups.get_mut(&key) {
            row.breakdown.push(sub);
        }
    }
    for row in groups.values_mut() {
        row.breakdown.sort_by(|a, b| {
            b.cost_usd
                .total_cmp(&a.cost_usd)
                .then(b.total_tokens.cmp(&a.total_tokens))
                .then(a.key.cmp(&b.key))
        });
    }
    let rows = order_rows(store, by, groups)?;
    Ok(UsageReport {
        filter: filter.clone(),
        group_by: by,
        time_zone: zone.name().to_string(),
        rows,
        totals,
        unpriced_models: unpriced.into_values().collect(),
        prices: used.into_values().collect(),
    })
}

/// The row a cell counts in, with the row's label and source.
fn group_key(
    by: GroupBy,
    c: &Cell,
    sessions: &HashMap<String, SessionInfo>,
    root_of: &dyn Fn(&str) -> String,
) -> (String, Option<String>, Option<String>) {
    let info = sessions.get(&c.session_id);
    match by {
        _ if c.day.is_empty() && matches!(by, GroupBy::Day | GroupBy::Week | GroupBy::Month) => {
            ("(no timestamp)".to_string(), None, None)
        }
        GroupBy::Day => (c.day.clone(), None, None),
        GroupBy::Week => (week_of(&c.day), None, None),
        GroupBy::Month => (c.day.get(..7).unwrap_or("").to_string(), None, None),
        GroupBy::Model => (c.model.clone(), None, None),
        GroupBy::Session => {
            let root = root_of(&c.session_id);
            let info = sessions.get(&root);
            (
                root.clone(),
                info.and_then(|i| i.title.clone()),
                info.map(|i| i.source.clone()),
            )
        }
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
    }
}

/// A cell's cost and its requests without a price; notes the price used or the model unpriced.
fn price(
    c: &Cell,
    prices: &PriceTable,
    used: &mut BTreeMap<String, PriceUsed>,
    unpriced: &mut BTreeMap<String, Unpriced>,
) -> (f64, i64) {
    let mut cost = 0.0;
    let mut unpriced_requests = 0;
    if c.priced {
        // Searches have a price of their own, whatever the model's.
        cost += prices.web_search_cost(c.web_search_requests);
    }
    if !c.priced {
        cost = c.recorded_cost;
    } else if let Some(p) = prices.resolve(&c.model) {
        cost += p.cost(&c.tokens);
        used.entry(c.model.clone()).or_insert_with(|| PriceUsed {
            model: c.model.clone(),
            price_id: p.id.clone(),
            as_of: p.as_of.clone(),
            source: p.source.clone(),
        });
    } else if total_of(&c.tokens) > 0 {
        unpriced_requests = c.requests;
        let u = unpriced.entry(c.model.clone()).or_insert_with(|| Unpriced {
            model: model_name(&c.model).to_string(),
            requests: 0,
            total_tokens: 0,
        });
        u.requests += c.requests;
        u.total_tokens += total_of(&c.tokens);
    }
    (cost, unpriced_requests)
}

/// The rows, by cost where the grouping is not by time (sessions with their short ids).
fn order_rows(
    store: &Store,
    by: GroupBy,
    groups: BTreeMap<String, UsageRow>,
) -> Result<Vec<UsageRow>> {
    let mut rows: Vec<UsageRow> = groups.into_values().collect();
    if by == GroupBy::Session {
        for r in &mut rows {
            r.short_key = Some(store.short_id(&r.key)?);
        }
    }
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
    Ok(rows)
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
    r.web_search_requests += c.web_search_requests;
    r.premium_requests += c.premium_requests;
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
        (Some(a), Some(b)) if a >= b => partial.push((
            f.since.as_deref().map(str::to_string),
            f.until.as_deref().map(str::to_string),
        )),
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
                 sum(max(u.cache_read_tokens - 200000, 0)), sum(u.cost_usd),
                 sum(u.web_search_requests), sum(u.premium_requests)
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

/// Loads cells whose days are `zone`'s. The rollup's days are UTC days, so the counted usage
/// rows in the range are read one by one and summed per session, local day, model and pricing.
/// Every zone's offset is a whole number of quarter hours, so a row's day is looked up by its
/// quarter hour, and names are interned: tens of thousands of rows take a few tens of ms.
fn load_cells_in(store: &Store, f: &Filter, zone: &DayZone) -> Result<Vec<Cell>> {
    let w = Where::sessions(f)
        .range("u.timestamp", f.since.as_deref(), f.until.as_deref())
        .and("u.counted = 1");
    let sql = format!(
        "SELECT u.session_id, u.timestamp, coalesce(u.model, ''), u.cost_usd IS NULL,
             u.input_tokens, u.output_tokens, u.cache_creation_tokens, u.cache_creation_1h_tokens,
             u.cache_read_tokens, u.cost_usd, u.web_search_requests, u.premium_requests
         FROM usage u JOIN sessions s ON s.id = u.session_id WHERE {}",
        w.sql
    );
    let mut stmt = store.connection().prepare(&sql)?;
    let mut rows = stmt.query(w.params())?;
    let mut names = Interner::default();
    let mut days = Interner::default();
    let mut day_of_quarter: HashMap<[u8; 16], usize> = HashMap::new();
    let mut cells: HashMap<(usize, usize, usize, bool), Cell> = HashMap::new();
    while let Some(r) = rows.next()? {
        let day = match text(r, 1)? {
            Some(ts) if ts.len() >= 16 => {
                let mut quarter = [0u8; 16];
                quarter.copy_from_slice(&ts.as_bytes()[..16]);
                // Minutes 00-14 -> 00, 15-29 -> 15...: the same local day for every zone.
                let minute = quarter[14].wrapping_sub(b'0') * 10 + quarter[15].wrapping_sub(b'0');
                let floored = minute.min(59) / 15 * 15;
                quarter[14] = b'0' + floored / 10;
                quarter[15] = b'0' + floored % 10;
                match day_of_quarter.get(&quarter) {
                    Some(&d) => d,
                    None => {
                        let at = format!("{}:00Z", String::from_utf8_lossy(&quarter));
                        let d = days.id(&zone.day_of(&at).unwrap_or_default());
                        day_of_quarter.insert(quarter, d);
                        d
                    }
                }
            }
            _ => days.id(""),
        };
        let session = names.id(text(r, 0)?.unwrap_or_default());
        let model = names.id(text(r, 2)?.unwrap_or_default());
        let priced = r.get::<_, i64>(3)? != 0;
        let t = |i| r.get::<_, i64>(i);
        let (input, output, cache_creation, cache_read) = (t(4)?, t(5)?, t(6)?, t(8)?);
        let over = |n: i64| (n - 200_000).max(0);
        let tokens = Tokens {
            input,
            output,
            cache_creation,
            cache_creation_1h: t(7)?,
            cache_read,
            input_over_200k: over(input),
            output_over_200k: over(output),
            cache_creation_over_200k: over(cache_creation),
            cache_read_over_200k: over(cache_read),
        };
        let cost = r.get::<_, Option<f64>>(9)?.unwrap_or(0.0);
        let cell = cells
            .entry((session, day, model, priced))
            .or_insert_with(|| Cell {
                session_id: names.name(session).to_string(),
                day: days.name(day).to_string(),
                model: names.name(model).to_string(),
                priced,
                requests: 0,
                tokens: Tokens::default(),
                recorded_cost: 0.0,
                web_search_requests: 0,
                premium_requests: 0.0,
            });
        cell.requests += 1;
        cell.tokens.add(&tokens);
        cell.recorded_cost += cost;
        cell.web_search_requests += r.get::<_, i64>(10)?;
        cell.premium_requests += r.get::<_, f64>(11)?;
    }
    // In a fixed order, so sums of costs come out the same, to the last bit, every run.
    let mut cells: Vec<Cell> = cells.into_values().collect();
    cells.sort_by(|a, b| {
        (&a.session_id, &a.day, &a.model, a.priced).cmp(&(
            &b.session_id,
            &b.day,
            &b.model,
            b.priced,
        ))
    });
    Ok(cells)
}

/// Column `i` as text borrowed from the row (no copy).
fn text<'r>(r: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<&'r str>> {
    r.get_ref(i)?.as_str_or_null().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// Strings by number, so a row's names are looked up without copying them.
#[derive(Default)]
struct Interner {
    ids: HashMap<String, usize>,
    names: Vec<String>,
}

impl Interner {
    fn id(&mut self, s: &str) -> usize {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        self.names.push(s.to_string());
        self.ids.insert(s.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    fn name(&self, id: usize) -> &str {
        &self.names[id]
    }
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

/// Each subagent session's top-level session (through nested subagents), for the sessions whose
/// parent is in the store.
fn session_roots(store: &Store) -> Result<HashMap<String, String>> {
    let mut stmt = store.connection().prepare(
        "SELECT c.id, c.parent_session_id FROM sessions c
         JOIN sessions p ON p.id = c.parent_session_id WHERE c.id != p.id",
    )?;
    let parent: HashMap<String, String> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut roots = HashMap::new();
    for child in parent.keys() {
        let mut at = child;
        // A cycle (a store written by a broken parser) stops after as many steps as links.
        for _ in 0..=parent.len() {
            match parent.get(at) {
                Some(p) => at = p,
                None => break,
            }
        }
        roots.insert(child.clone(), at.clone());
    }
    Ok(roots)
}

fn session_info(store: &Store, wanted: &BTreeSet<String>) -> Result<HashMap<String, SessionInfo>> {
    let mut stmt = store
        .connection()
        .prepare_cached("SELECT source, summary, repository, cwd FROM sessions WHERE id = ?1")?;
    let mut out = HashMap::new();
    for id in wanted {
        let info = stmt.query_row([id.as_str()], |r| {
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
