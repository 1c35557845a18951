//! `trail usage --by block`: usage in 5-hour blocks, as ccusage's `blocks` report counts them.
//!
//! The rule is ccusage's (`identifySessionBlocks` in ryoppippi/ccusage `src/_session-blocks.ts`,
//! read for this module): requests sorted by time; a block starts at the first request's UTC
//! hour (minutes and seconds dropped) and lasts 5 hours; a request more than 5 hours after the
//! block's start, or more than 5 hours after the previous request, closes the block and starts a
//! new one at its own hour. When the pause was longer than 5 hours a gap block covers it, from
//! 5 hours after the last request to the next one. A block is active while "now" is before its
//! end and less than 5 hours after its last request.
//!
//! Unlike ccusage, the burn rate is taken over the last 15 minutes (up to "now" for the active
//! block, up to the last request for the others) rather than the whole block, so it says how
//! fast money goes now; the window is part of the report. Every figure is an estimate from the
//! local logs: requests made elsewhere, or whose logs were deleted, are not in them.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use trail_store::Store;

use crate::prices::{Price, PriceTable, Tokens};
use crate::query::Where;
use crate::usage::{PriceUsed, Unpriced};
use crate::zone::DayZone;
use crate::{Filter, Result};

/// Hours in a block (Claude's usage window).
pub const BLOCK_HOURS: i64 = 5;
/// Minutes the burn rate is measured over.
pub const BURN_WINDOW_MINUTES: i64 = 15;
/// What every rendering of blocks says about where the figures come from.
pub const ESTIMATE_NOTE: &str =
    "estimate from local logs: requests made on other machines or whose logs are gone are not counted";

/// Tokens, requests and cost of a block or of one model in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BlockSums {
    pub requests: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_creation_tokens: i64,
    pub cache_read_tokens: i64,
    pub total_tokens: i64,
    /// USD, excluding unpriced models.
    pub cost_usd: f64,
    /// Requests of models without a price (tokens counted, cost not).
    pub unpriced_requests: i64,
}

/// One model's share of a block (`--breakdown`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSums {
    pub model: String,
    #[serde(flatten)]
    pub sums: BlockSums,
}

/// Spend per time over a window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BurnRate {
    /// The window's length in minutes (15).
    pub window_minutes: i64,
    /// The window: requests after `since` and at or before `until`.
    pub since: String,
    pub until: String,
    pub requests: i64,
    /// All four kinds of tokens per minute.
    pub tokens_per_minute: f64,
    pub cost_per_hour_usd: f64,
}

/// Where the active block ends up if the burn rate holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Projection {
    pub remaining_minutes: i64,
    pub total_tokens: i64,
    pub cost_usd: f64,
}

/// A 5-hour block, or a gap between blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Block {
    /// ccusage's id: the start (`2026-01-10T10:00:00.000Z`), or `gap-` and the start for a gap.
    pub id: String,
    pub start: String,
    /// Start plus 5 hours (a gap: the next request).
    pub end: String,
    /// `start` and `end` in the report's zone, `YYYY-MM-DD HH:MM`.
    pub start_local: String,
    pub end_local: String,
    pub first_request: Option<String>,
    pub last_request: Option<String>,
    /// Minutes from the first request to the last.
    pub active_minutes: i64,
    pub is_gap: bool,
    pub is_active: bool,
    /// Models used, in order of first use.
    pub models: Vec<String>,
    #[serde(flatten)]
    pub sums: BlockSums,
    /// Per model, most expensive first (with `--breakdown`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub breakdown: Vec<ModelSums>,
    /// Over the last 15 minutes of the block (up to now when active); none without requests.
    pub burn_rate: Option<BurnRate>,
    /// For the active block: minutes left and the projection to its end.
    pub projection: Option<Projection>,
}

/// The blocks report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlocksReport {
    pub filter: Filter,
    /// The zone `start_local` and `end_local` are shown in. Block boundaries are UTC hours
    /// whatever the zone (ccusage's rule).
    pub time_zone: String,
    pub block_hours: i64,
    /// The "now" active blocks and burn rates were computed against.
    pub now: String,
    pub estimate: &'static str,
    /// Oldest first; each gap between the two blocks it separates.
    pub blocks: Vec<Block>,
    /// Sums over every block in the report.
    pub totals: BlockSums,
    pub unpriced_models: Vec<Unpriced>,
    pub prices: Vec<PriceUsed>,
}

impl BlocksReport {
    /// The active block, if any.
    pub fn active(&self) -> Option<&Block> {
        self.blocks.iter().find(|b| b.is_active)
    }
}

/// One counted request.
#[derive(Debug, Clone)]
struct Entry {
    at: DateTime<Utc>,
    model: String,
    tokens: Tokens,
    cost: f64,
    unpriced: bool,
}

/// Options of the blocks report.
#[derive(Debug, Clone, Default)]
pub struct BlockOptions {
    /// Per-model rows under each block.
    pub breakdown: bool,
    /// Only the active block (and none when nothing is active), read from the last pause of
    /// more than 5 hours on instead of from the start of the range.
    pub active_only: bool,
}

/// Computes the blocks of the requests in `filter`'s range.
#[tracing::instrument(level = "debug", skip_all, err)]
pub fn blocks(
    store: &Store,
    filter: &Filter,
    prices: &PriceTable,
    zone: &DayZone,
    now: DateTime<Utc>,
    options: &BlockOptions,
) -> Result<BlocksReport> {
    let mut range = filter.clone();
    if options.active_only {
        // Only the active block's requests are read: from its first request to now.
        match active_block_start(store, filter, now)? {
            Some(first) => {
                let first = crate::Timestamp::from(first);
                range.since = Some(match range.since.take() {
                    Some(s) => s.max(first),
                    None => first,
                });
                let until = crate::Timestamp::from_utc(now + Duration::milliseconds(1));
                range.until = Some(match range.until.take() {
                    Some(u) => u.min(until),
                    None => until,
                });
            }
            None => {
                return Ok(BlocksReport {
                    filter: filter.clone(),
                    time_zone: zone.name().to_string(),
                    block_hours: BLOCK_HOURS,
                    now: trail_model::time::format_utc(now),
                    estimate: ESTIMATE_NOTE,
                    blocks: Vec::new(),
                    totals: BlockSums::default(),
                    unpriced_models: Vec::new(),
                    prices: Vec::new(),
                })
            }
        }
    }
    let mut pricing = Pricing::new(prices);
    let entries = load_entries(store, &range, &mut pricing)?;
    let mut blocks = identify(&entries, now, zone, options.breakdown);
    if options.active_only {
        blocks.retain(|b| b.is_active);
    }
    let mut totals = BlockSums::default();
    for b in &blocks {
        totals.add_sums(&b.sums);
    }
    Ok(BlocksReport {
        filter: filter.clone(),
        time_zone: zone.name().to_string(),
        block_hours: BLOCK_HOURS,
        now: trail_model::time::format_utc(now),
        estimate: ESTIMATE_NOTE,
        blocks,
        totals,
        unpriced_models: pricing.unpriced.into_values().collect(),
        prices: pricing.used.into_values().collect(),
    })
}

/// The timestamp of the active block's first request, or None when no block is active at `now`.
fn active_block_start(
    store: &Store,
    filter: &Filter,
    now: DateTime<Utc>,
) -> Result<Option<String>> {
    let until = trail_model::time::format_utc(now + Duration::milliseconds(1));
    let unfiltered = filter.since.is_none() && filter.source.is_none() && filter.repo.is_none();
    if !unfiltered {
        return Ok(walk_back(store, filter, now, &until)?.and_then(|b| b.active_first));
    }
    // The whole history: start from the remembered block start when it still holds (store
    // migration 15), else walk back to the last long pause; remember where the last block
    // starts for the next run.
    let generation = store.usage_generation()?;
    let anchor = store.block_anchor()?.filter(|a| a.first_request < until);
    let found = match &anchor {
        Some(a) => match walk_forward(store, &a.first_request, now, &until)? {
            Some(found) => Some(found),
            None => walk_back(store, filter, now, &until)?,
        },
        None => walk_back(store, filter, now, &until)?,
    };
    let Some(found) = found else {
        return Ok(None);
    };
    let last_first = trail_model::time::format_utc(found.last_first);
    let moved = anchor
        .as_ref()
        .is_none_or(|a| a.first_request != last_first);
    if moved
        && store.usage_generation()? == generation
        && store.has_counted_request_at(&last_first)?
    {
        // A cache: a read-only or busy store simply does not remember it.
        let _ = store.save_block_anchor(generation, &last_first);
    }
    Ok(found.active_first)
}

/// Where the last block of the chain starts, and the active block's first request (None when
/// the last block is over at `now`).
struct ChainEnd {
    last_first: DateTime<Utc>,
    active_first: Option<String>,
}

/// Follows ccusage's rule forward over request times, from a block's first request.
fn chain_forward(
    first: DateTime<Utc>,
    rest: impl Iterator<Item = DateTime<Utc>>,
    now: DateTime<Utc>,
) -> ChainEnd {
    let length = Duration::hours(BLOCK_HOURS);
    let (mut start, mut block_first, mut previous) = (floor_to_hour(first), first, first);
    for at in rest {
        if at - start > length || at - previous > length {
            start = floor_to_hour(at);
            block_first = at;
        }
        previous = at;
    }
    // The block of the last request is active if now is still inside it.
    ChainEnd {
        last_first: block_first,
        active_first: (now < start + length && now - previous < length)
            .then(|| trail_model::time::format_utc(block_first)),
    }
}

/// From a remembered block start: reads only the requests since it. None when the anchor's
/// request is not the first one read (then the caller walks back instead).
fn walk_forward(
    store: &Store,
    anchor: &str,
    now: DateTime<Utc>,
    until: &str,
) -> Result<Option<ChainEnd>> {
    let mut stmt = store.connection().prepare_cached(
        "SELECT u.timestamp FROM usage u
         WHERE u.counted = 1 AND u.timestamp >= ?1 AND u.timestamp < ?2
         ORDER BY u.timestamp",
    )?;
    let mut rows = stmt.query([anchor, until])?;
    let mut times = Vec::new();
    while let Some(r) = rows.next()? {
        if let Some(at) = r.get_ref(0)?.as_str().ok().and_then(parse) {
            times.push(at);
        }
    }
    let Some((&first, rest)) = times.split_first() else {
        return Ok(None);
    };
    if trail_model::time::format_utc(first) != anchor {
        return Ok(None);
    }
    Ok(Some(chain_forward(first, rest.iter().copied(), now)))
}

/// Blocks chain: where one starts depends on where the one before ended, back to the last
/// pause of more than 5 hours. So this walks the counted requests' timestamps back from `now`
/// to that pause (through a partial index holding just those timestamps; store migration 10),
/// then follows ccusage's rule forward over the timestamps alone. None when the last request
/// is 5 hours old (nothing is active, and no chain needs following).
fn walk_back(
    store: &Store,
    filter: &Filter,
    now: DateTime<Utc>,
    until: &str,
) -> Result<Option<ChainEnd>> {
    let length = Duration::hours(BLOCK_HOURS);
    let filtered = filter.source.is_some() || filter.repo.is_some();
    let w = Where::sessions(filter)
        .range("u.timestamp", filter.since.as_deref(), Some(until))
        .and("u.counted = 1");
    let sql = if filtered {
        format!(
            "SELECT u.timestamp FROM usage u JOIN sessions s ON s.id = u.session_id
             WHERE {} ORDER BY u.timestamp DESC",
            w.sql
        )
    } else {
        // No join: the walk reads the partial index alone.
        format!(
            "SELECT u.timestamp FROM usage u WHERE {} ORDER BY u.timestamp DESC",
            w.sql
        )
    };
    let mut stmt = store.connection().prepare(&sql)?;
    let mut rows = stmt.query(w.params())?;
    // Newest first, back to the first request after the last long pause. Read without
    // copying: tens of thousands of rows on a busy history.
    let mut walked: Vec<DateTime<Utc>> = Vec::new();
    while let Some(r) = rows.next()? {
        let Some(at) = r.get_ref(0)?.as_str().ok().and_then(parse) else {
            continue;
        };
        match walked.last() {
            // The last request is 5 hours old: nothing is active.
            None if now - at >= length => return Ok(None),
            Some(later) if *later - at > length => break,
            _ => walked.push(at),
        }
    }
    walked.reverse();
    let Some((&first, rest)) = walked.split_first() else {
        return Ok(None);
    };
    Ok(Some(chain_forward(first, rest.iter().copied(), now)))
}

/// Reads a stored timestamp. The store's own form (`2026-01-10T10:20:00.000Z`, what
/// `trail_model::time::format_utc` writes) is read digit by digit, because the status line walks
/// thousands of them per run; anything else goes through the RFC 3339 parser.
fn parse(ts: &str) -> Option<DateTime<Utc>> {
    parse_store_form(ts).or_else(|| {
        DateTime::parse_from_rfc3339(ts)
            .ok()
            .map(|d| d.with_timezone(&Utc))
    })
}

fn parse_store_form(ts: &str) -> Option<DateTime<Utc>> {
    let b = ts.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || b[19] != b'.' || b[23] != b'Z' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<u32> {
        b[from..to].iter().try_fold(0u32, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    let date = chrono::NaiveDate::from_ymd_opt(num(0, 4)? as i32, num(5, 7)?, num(8, 10)?)?;
    let time = date.and_hms_milli_opt(num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?)?;
    Some(time.and_utc())
}

/// Prices requests one by one, remembering which prices it used and which models it could not.
struct Pricing<'a> {
    table: &'a PriceTable,
    resolved: HashMap<String, Option<&'a Price>>,
    unpriced: BTreeMap<String, Unpriced>,
    used: BTreeMap<String, PriceUsed>,
}

impl<'a> Pricing<'a> {
    fn new(table: &'a PriceTable) -> Self {
        Pricing {
            table,
            resolved: HashMap::new(),
            unpriced: BTreeMap::new(),
            used: BTreeMap::new(),
        }
    }

    /// Returns (cost, unpriced) of one request.
    fn price(&mut self, model: &str, tokens: &Tokens, recorded: Option<f64>) -> (f64, bool) {
        if let Some(c) = recorded {
            return (c, false);
        }
        let table = self.table;
        let price = *self
            .resolved
            .entry(model.to_string())
            .or_insert_with(|| table.resolve(model));
        let total = tokens.input + tokens.output + tokens.cache_creation + tokens.cache_read;
        match price {
            Some(p) => {
                self.used
                    .entry(model.to_string())
                    .or_insert_with(|| PriceUsed {
                        model: model.to_string(),
                        price_id: p.id.clone(),
                        as_of: p.as_of.clone(),
                        source: p.source.clone(),
                    });
                (p.cost(tokens), false)
            }
            None if total > 0 => {
                let u = self
                    .unpriced
                    .entry(model.to_string())
                    .or_insert_with(|| Unpriced {
                        model: crate::usage::model_name(model).to_string(),
                        requests: 0,
                        total_tokens: 0,
                    });
                u.requests += 1;
                u.total_tokens += total;
                (0.0, true)
            }
            None => (0.0, false),
        }
    }
}

fn load_entries(store: &Store, f: &Filter, pricing: &mut Pricing<'_>) -> Result<Vec<Entry>> {
    let w = Where::sessions(f)
        .range("u.timestamp", f.since.as_deref(), f.until.as_deref())
        .and("u.counted = 1 AND u.timestamp IS NOT NULL");
    let sql = format!(
        "SELECT u.timestamp, coalesce(u.model, ''), u.input_tokens, u.output_tokens,
             u.cache_creation_tokens, u.cache_creation_1h_tokens, u.cache_read_tokens, u.cost_usd
         FROM usage u JOIN sessions s ON s.id = u.session_id WHERE {}
         ORDER BY u.timestamp, u.id",
        w.sql
    );
    let mut stmt = store.connection().prepare(&sql)?;
    let mut rows = stmt.query(w.params())?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let ts: String = r.get(0)?;
        let Some(at) = parse(&ts) else { continue };
        let model: String = r.get(1)?;
        let t = |i| r.get::<_, i64>(i);
        let (input, output, cache_creation, cache_read) = (t(2)?, t(3)?, t(4)?, t(6)?);
        let over = |n: i64| (n - 200_000).max(0);
        let tokens = Tokens {
            input,
            output,
            cache_creation,
            cache_creation_1h: t(5)?,
            cache_read,
            input_over_200k: over(input),
            output_over_200k: over(output),
            cache_creation_over_200k: over(cache_creation),
            cache_read_over_200k: over(cache_read),
        };
        let (cost, unpriced) = pricing.price(&model, &tokens, r.get(7)?);
        out.push(Entry {
            at,
            model,
            tokens,
            cost,
            unpriced,
        });
    }
    // The store's timestamps share one format, but sort on the instant to be sure.
    out.sort_by_key(|e| e.at);
    Ok(out)
}

fn floor_to_hour(t: DateTime<Utc>) -> DateTime<Utc> {
    let secs = t.timestamp();
    DateTime::from_timestamp(secs - secs.rem_euclid(3600), 0).unwrap_or(t)
}

/// Splits sorted entries into blocks and gaps (ccusage's rule, see the module notes).
fn identify(entries: &[Entry], now: DateTime<Utc>, zone: &DayZone, breakdown: bool) -> Vec<Block> {
    let length = Duration::hours(BLOCK_HOURS);
    let mut out = Vec::new();
    let mut start_index = 0;
    for i in 1..=entries.len() {
        let closes = match entries.get(i) {
            None => true,
            Some(e) => {
                let block_start = floor_to_hour(entries[start_index].at);
                e.at - block_start > length || e.at - entries[i - 1].at > length
            }
        };
        if !closes {
            continue;
        }
        let members = &entries[start_index..i];
        out.push(make_block(members, now, zone, breakdown));
        if let Some(next) = entries.get(i) {
            let last = entries[i - 1].at;
            if next.at - last > length {
                out.push(make_gap(last + length, next.at, zone));
            }
        }
        start_index = i;
    }
    // A gap stays between the blocks it separates, as ccusage's `identifySessionBlocks` emits
    // it, even when the next block's start (floored to the hour) is before the gap's start.
    out
}

fn local(zone: &DayZone, ts: &str) -> String {
    zone.minute_of(ts).unwrap_or_else(|| ts.to_string())
}

fn make_gap(start: DateTime<Utc>, end: DateTime<Utc>, zone: &DayZone) -> Block {
    let (start, end) = (
        trail_model::time::format_utc(start),
        trail_model::time::format_utc(end),
    );
    Block {
        id: format!("gap-{start}"),
        start_local: local(zone, &start),
        end_local: local(zone, &end),
        start,
        end,
        first_request: None,
        last_request: None,
        active_minutes: 0,
        is_gap: true,
        is_active: false,
        models: Vec::new(),
        sums: BlockSums::default(),
        breakdown: Vec::new(),
        burn_rate: None,
        projection: None,
    }
}

fn make_block(members: &[Entry], now: DateTime<Utc>, zone: &DayZone, breakdown: bool) -> Block {
    let length = Duration::hours(BLOCK_HOURS);
    let first = members[0].at;
    let last = members[members.len() - 1].at;
    let start = floor_to_hour(first);
    let end = start + length;
    let is_active = now - last < length && now < end;
    let mut sums = BlockSums::default();
    let mut models: Vec<String> = Vec::new();
    let mut per_model: BTreeMap<&str, BlockSums> = BTreeMap::new();
    for e in members {
        sums.add_entry(e);
        if !e.model.is_empty() && !models.contains(&e.model) {
            models.push(e.model.clone());
        }
        if breakdown {
            per_model.entry(&e.model).or_default().add_entry(e);
        }
    }
    let mut breakdown_rows: Vec<ModelSums> = per_model
        .into_iter()
        .map(|(m, s)| ModelSums {
            model: crate::usage::model_name(m).to_string(),
            sums: s,
        })
        .collect();
    breakdown_rows.sort_by(|a, b| {
        b.sums
            .cost_usd
            .total_cmp(&a.sums.cost_usd)
            .then(b.sums.total_tokens.cmp(&a.sums.total_tokens))
            .then(a.model.cmp(&b.model))
    });
    let window_end = if is_active { now } else { last };
    let burn_rate = burn_rate(members, window_end);
    let projection = match (&burn_rate, is_active) {
        (Some(rate), true) => {
            let remaining = (end - now).num_seconds().max(0) as f64 / 60.0;
            Some(Projection {
                remaining_minutes: remaining.round() as i64,
                total_tokens: sums.total_tokens
                    + (rate.tokens_per_minute * remaining).round() as i64,
                cost_usd: sums.cost_usd + rate.cost_per_hour_usd / 60.0 * remaining,
            })
        }
        _ => None,
    };
    let fmt = trail_model::time::format_utc;
    let (start_s, end_s) = (fmt(start), fmt(end));
    Block {
        id: start_s.clone(),
        start_local: local(zone, &start_s),
        end_local: local(zone, &end_s),
        start: start_s,
        end: end_s,
        first_request: Some(fmt(first)),
        last_request: Some(fmt(last)),
        active_minutes: (last - first).num_minutes(),
        is_gap: false,
        is_active,
        models,
        sums,
        breakdown: breakdown_rows,
        burn_rate,
        projection,
    }
}

/// The spend of the requests in the 15 minutes up to `until`.
fn burn_rate(members: &[Entry], until: DateTime<Utc>) -> Option<BurnRate> {
    let since = until - Duration::minutes(BURN_WINDOW_MINUTES);
    let mut window = BlockSums::default();
    for e in members.iter().filter(|e| e.at > since && e.at <= until) {
        window.add_entry(e);
    }
    let fmt = trail_model::time::format_utc;
    let minutes = BURN_WINDOW_MINUTES as f64;
    Some(BurnRate {
        window_minutes: BURN_WINDOW_MINUTES,
        since: fmt(since),
        until: fmt(until),
        requests: window.requests,
        tokens_per_minute: window.total_tokens as f64 / minutes,
        cost_per_hour_usd: window.cost_usd * 60.0 / minutes,
    })
}

impl BlockSums {
    fn add_entry(&mut self, e: &Entry) {
        let t = &e.tokens;
        self.requests += 1;
        self.input_tokens += t.input;
        self.output_tokens += t.output;
        self.cache_creation_tokens += t.cache_creation;
        self.cache_read_tokens += t.cache_read;
        self.total_tokens += t.input + t.output + t.cache_creation + t.cache_read;
        self.cost_usd += e.cost;
        if e.unpriced {
            self.unpriced_requests += 1;
        }
    }

    fn add_sums(&mut self, o: &BlockSums) {
        self.requests += o.requests;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cache_creation_tokens += o.cache_creation_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.total_tokens += o.total_tokens;
        self.cost_usd += o.cost_usd;
        self.unpriced_requests += o.unpriced_requests;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        parse(s).unwrap()
    }

    fn entry(ts: &str, output: i64) -> Entry {
        Entry {
            at: at(ts),
            model: "m".into(),
            tokens: Tokens {
                output,
                ..Tokens::default()
            },
            cost: output as f64 / 1000.0,
            unpriced: false,
        }
    }

    const LATER: &str = "2030-01-01T00:00:00Z";

    #[test]
    fn a_pause_of_4h59_stays_in_the_block_and_5h01_starts_a_new_one_after_a_gap() {
        let zone = DayZone::utc();
        // 10:20 -> 14:30 is 4h10 (same block: 14:30 is before the 15:00 end).
        let e = [
            entry("2026-01-10T10:20:00Z", 1),
            entry("2026-01-10T14:30:00Z", 2),
        ];
        let b = identify(&e, at(LATER), &zone, false);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].start, "2026-01-10T10:00:00.000Z");
        assert_eq!(b[0].end, "2026-01-10T15:00:00.000Z");
        assert_eq!(b[0].sums.output_tokens, 3);

        // A 4h59 pause past the block's end starts a new block, without a gap.
        let e = [
            entry("2026-01-10T10:20:00Z", 1),
            entry("2026-01-10T15:19:00Z", 2),
        ];
        let b = identify(&e, at(LATER), &zone, false);
        let ids: Vec<&str> = b.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(
            ids,
            ["2026-01-10T10:00:00.000Z", "2026-01-10T15:00:00.000Z"]
        );

        // A 5h01 pause: a new block and a gap from 5 hours after the last request.
        let e = [
            entry("2026-01-10T10:20:00Z", 1),
            entry("2026-01-10T15:21:00Z", 2),
        ];
        let b = identify(&e, at(LATER), &zone, false);
        let ids: Vec<&str> = b.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "2026-01-10T10:00:00.000Z",
                "gap-2026-01-10T15:20:00.000Z",
                "2026-01-10T15:00:00.000Z"
            ]
        );
        assert!(b[1].is_gap);
        assert_eq!(b[1].end, "2026-01-10T15:21:00.000Z");
    }

    #[test]
    fn store_timestamps_are_read_like_rfc_3339() {
        for ts in ["2026-01-10T10:20:00.000Z", "2024-02-29T23:59:59.999Z"] {
            assert_eq!(
                parse_store_form(ts),
                Some(
                    DateTime::parse_from_rfc3339(ts)
                        .unwrap()
                        .with_timezone(&Utc)
                )
            );
        }
        for other in [
            "2026-01-10T10:20:00Z",
            "2026-01-10T10:20:00.000+01:00",
            "2026-02-30T00:00:00.000Z",
            "2026-01-10T1x:20:00.000Z",
        ] {
            assert_eq!(parse_store_form(other), None, "{other}");
        }
        assert_eq!(
            parse("2026-01-10T11:20:00+01:00"),
            Some(at("2026-01-10T10:20:00Z"))
        );
    }

    #[test]
    fn active_block_has_a_burn_rate_and_a_projection() {
        let zone = DayZone::utc();
        let e = [
            entry("2026-01-10T10:20:00Z", 1000),
            entry("2026-01-10T11:50:00Z", 3000),
            entry("2026-01-10T11:58:00Z", 3000),
        ];
        let now = at("2026-01-10T12:00:00Z");
        let b = identify(&e, now, &zone, false);
        assert!(b[0].is_active);
        let rate = b[0].burn_rate.as_ref().unwrap();
        assert_eq!(rate.requests, 2);
        assert_eq!(rate.since, "2026-01-10T11:45:00.000Z");
        assert_eq!(rate.tokens_per_minute, 400.0);
        assert!((rate.cost_per_hour_usd - 24.0).abs() < 1e-9);
        let p = b[0].projection.as_ref().unwrap();
        assert_eq!(p.remaining_minutes, 180);
        assert_eq!(p.total_tokens, 7000 + 400 * 180);
        assert!((p.cost_usd - (7.0 + 72.0)).abs() < 1e-9);
        // Five hours after the last request nothing is active.
        let b = identify(&e, at("2026-01-10T16:58:00Z"), &zone, false);
        assert!(!b[0].is_active);
        assert!(b[0].projection.is_none());
    }
}
