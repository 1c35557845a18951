//! `trail statusline`: what one line under an agent's prompt says, computed from the store.
//!
//! Model, the session's cost (its subagents' included), today's cost, the active 5-hour block
//! (cost, share of a budget, time left) and how full the context window is (the last request's
//! input and cache tokens against the model's window). Every figure is read from indexed logs:
//! nothing asks a vendor.

use chrono::{DateTime, Utc};
use serde::Serialize;
use trail_store::Store;

use crate::blocks::{blocks, BlockOptions};
use crate::markdown::{hours_minutes, usd};
use crate::prices::{PriceTable, Tokens};
use crate::usage::{usage_in, GroupBy};
use crate::zone::DayZone;
use crate::{Filter, Result};

/// What the caller knows besides the store (from the agent's hook payload and the config).
#[derive(Debug, Clone, Default)]
pub struct StatusRequest {
    /// The agent's session id (Claude Code's `session_id`, trail's session id for Claude).
    pub session_id: Option<String>,
    /// The model as the agent names it for display (`Opus`), else its id.
    pub model: Option<String>,
    /// The model's id (`claude-opus-4-1-20250805`, `claude-sonnet-4-5[1m]`).
    pub model_id: Option<String>,
    /// The context window size the agent reported, when it did.
    pub context_window: Option<i64>,
    /// The budget of a block in USD (config `[usage] block_budget_usd`).
    pub block_budget_usd: Option<f64>,
}

/// The active block as the status line shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusBlock {
    pub cost_usd: f64,
    pub end: String,
    pub minutes_left: i64,
    pub budget_usd: Option<f64>,
    /// Cost as a percentage of the budget.
    pub budget_percent: Option<f64>,
}

/// How full the context window is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusContext {
    /// The last request's input, cache write and cache read tokens.
    pub tokens: i64,
    pub window: Option<i64>,
    pub percent: Option<f64>,
}

/// Everything the status line shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    pub model: Option<String>,
    /// The session and its subagents.
    pub session_cost_usd: f64,
    /// Since midnight in the report's zone.
    pub today_cost_usd: f64,
    pub block: Option<StatusBlock>,
    pub context: Option<StatusContext>,
}

/// Computes the status for `request` at `now`, days in `zone`.
#[tracing::instrument(level = "debug", skip_all, err)]
pub fn status(
    store: &Store,
    request: &StatusRequest,
    prices: &PriceTable,
    zone: &DayZone,
    now: DateTime<Utc>,
) -> Result<Status> {
    let now_s = trail_model::time::format_utc(now);
    // Today: from this zone's midnight to the next one (a day of 23 or 25 hours on a clock
    // change), whatever the logs hold after "now".
    let day = zone
        .day_of(&now_s)
        .unwrap_or_else(|| now_s[..10].to_string());
    let next = chrono::NaiveDate::parse_from_str(&day, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.succ_opt())
        .map(|d| d.format("%Y-%m-%d").to_string());
    let day = Filter {
        since: zone.start_of_day(&day).map(crate::Timestamp::from),
        until: next
            .and_then(|n| zone.start_of_day(&n))
            .map(crate::Timestamp::from),
        ..Filter::default()
    };
    let today_cost_usd = usage_in(store, &day, GroupBy::Day, prices, zone)?
        .totals
        .cost_usd;
    let options = BlockOptions {
        active_only: true,
        ..BlockOptions::default()
    };
    let report = blocks(store, &Filter::default(), prices, zone, now, &options)?;
    let block = report.active().map(|b| {
        let end = DateTime::parse_from_rfc3339(&b.end)
            .map(|e| e.with_timezone(&Utc))
            .unwrap_or(now);
        let budget = request.block_budget_usd.filter(|b| *b > 0.0);
        StatusBlock {
            cost_usd: b.sums.cost_usd,
            end: b.end.clone(),
            minutes_left: (end - now).num_minutes().max(0),
            budget_usd: budget,
            budget_percent: budget.map(|x| b.sums.cost_usd / x * 100.0),
        }
    });
    let (session_cost_usd, last) = match &request.session_id {
        Some(id) => (session_cost(store, id, prices)?, last_request(store, id)?),
        None => (0.0, None),
    };
    let model_id = request
        .model_id
        .clone()
        .or_else(|| last.as_ref().map(|l| l.1.clone()));
    let context = last.map(|(tokens, _)| {
        let window = request
            .context_window
            .filter(|w| *w > 0)
            .or_else(|| model_id.as_deref().and_then(context_window_of));
        StatusContext {
            tokens,
            window,
            percent: window.map(|w| tokens as f64 / w as f64 * 100.0),
        }
    });
    Ok(Status {
        model: request.model.clone().or(model_id),
        session_cost_usd,
        today_cost_usd,
        block,
        context,
    })
}

/// The context window of a model trail knows: Claude models have 200k tokens, 1M when the id
/// says `[1m]` (Claude Code's name for the long-context variant).
pub fn context_window_of(model_id: &str) -> Option<i64> {
    let m = model_id.to_ascii_lowercase();
    if m.contains("[1m]") {
        Some(1_000_000)
    } else if m.contains("claude") {
        Some(200_000)
    } else {
        None
    }
}

/// The cost of a session and of its subagents (nested ones included), from the rollup.
fn session_cost(store: &Store, id: &str, prices: &PriceTable) -> Result<f64> {
    let mut stmt = store.connection().prepare_cached(
        "WITH RECURSIVE tree(id) AS (
             SELECT ?1
             UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_session_id = t.id
         )
         SELECT r.model, r.priced, sum(r.input_tokens), sum(r.output_tokens),
             sum(r.cache_creation_tokens), sum(r.cache_creation_1h_tokens),
             sum(r.cache_read_tokens), sum(r.input_over_200k), sum(r.output_over_200k),
             sum(r.cache_creation_over_200k), sum(r.cache_read_over_200k), sum(r.cost_usd)
         FROM usage_rollup r WHERE r.session_id IN (SELECT id FROM tree)
         GROUP BY 1, 2",
    )?;
    let mut rows = stmt.query([id])?;
    let mut total = 0.0;
    while let Some(r) = rows.next()? {
        let model: String = r.get(0)?;
        if r.get::<_, i64>(1)? == 0 {
            total += r.get::<_, Option<f64>>(11)?.unwrap_or(0.0);
            continue;
        }
        let t = |i| r.get::<_, i64>(i);
        let tokens = Tokens {
            input: t(2)?,
            output: t(3)?,
            cache_creation: t(4)?,
            cache_creation_1h: t(5)?,
            cache_read: t(6)?,
            input_over_200k: t(7)?,
            output_over_200k: t(8)?,
            cache_creation_over_200k: t(9)?,
            cache_read_over_200k: t(10)?,
        };
        if let Some(p) = prices.resolve(&model) {
            total += p.cost(&tokens);
        }
    }
    Ok(total)
}

/// The last main-chain request of a session: its input and cache tokens (what the context held)
/// and its model.
fn last_request(store: &Store, id: &str) -> Result<Option<(i64, String)>> {
    let mut stmt = store.connection().prepare_cached(
        "SELECT input_tokens + cache_creation_tokens + cache_read_tokens, coalesce(model, '')
         FROM usage WHERE session_id = ?1 AND is_sidechain = 0 AND tokens_known = 1
         ORDER BY timestamp DESC, id DESC LIMIT 1",
    )?;
    let mut rows = stmt.query([id])?;
    Ok(match rows.next()? {
        Some(r) => Some((r.get(0)?, r.get(1)?)),
        None => None,
    })
}

/// `45.7k`, `1.2M`, `850`.
fn short_tokens(n: i64) -> String {
    let (value, unit) = match n {
        n if n >= 1_000_000 => (n as f64 / 1e6, "M"),
        n if n >= 1_000 => (n as f64 / 1e3, "k"),
        n => return n.to_string(),
    };
    let text = format!("{value:.1}");
    format!("{}{unit}", text.strip_suffix(".0").unwrap_or(&text))
}

/// The status as one line of plain text (no colour):
/// `Opus · session $1.23 · today $4.56 · block $7.89 (39% of $20.00) 2h13m left · ctx 45.7k/200k (23%)`.
pub fn render(s: &Status) -> String {
    let mut parts = Vec::new();
    if let Some(m) = &s.model {
        parts.push(m.clone());
    }
    parts.push(format!("session {}", usd(s.session_cost_usd)));
    parts.push(format!("today {}", usd(s.today_cost_usd)));
    parts.push(match &s.block {
        Some(b) => {
            let share = match (b.budget_percent, b.budget_usd) {
                (Some(p), Some(budget)) => format!(" ({p:.0}% of {})", usd(budget)),
                _ => String::new(),
            };
            format!(
                "block {}{share} {} left",
                usd(b.cost_usd),
                hours_minutes(b.minutes_left)
            )
        }
        None => "no active block".to_string(),
    });
    if let Some(c) = &s.context {
        parts.push(match (c.window, c.percent) {
            (Some(w), Some(p)) => format!(
                "ctx {}/{} ({p:.0}%)",
                short_tokens(c.tokens),
                short_tokens(w)
            ),
            _ => format!("ctx {}", short_tokens(c.tokens)),
        });
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_part_and_leaves_out_what_is_unknown() {
        let s = Status {
            model: Some("Opus".into()),
            session_cost_usd: 1.234,
            today_cost_usd: 4.56,
            block: Some(StatusBlock {
                cost_usd: 7.89,
                end: "2026-01-10T15:00:00.000Z".into(),
                minutes_left: 133,
                budget_usd: Some(20.0),
                budget_percent: Some(39.45),
            }),
            context: Some(StatusContext {
                tokens: 45_678,
                window: Some(200_000),
                percent: Some(22.839),
            }),
        };
        assert_eq!(
            render(&s),
            "Opus · session $1.23 · today $4.56 · block $7.89 (39% of $20.00) 2h13m left · ctx 45.7k/200k (23%)"
        );
        let bare = Status {
            model: None,
            session_cost_usd: 0.0,
            today_cost_usd: 0.0,
            block: None,
            context: None,
        };
        assert_eq!(
            render(&bare),
            "session $0.00 · today $0.00 · no active block"
        );
        assert_eq!(context_window_of("claude-sonnet-4-5[1m]"), Some(1_000_000));
        assert_eq!(context_window_of("claude-opus-4-1-20250805"), Some(200_000));
        assert_eq!(context_window_of("gpt-5"), None);
    }
}
