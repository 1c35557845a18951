//! The reports as Markdown (each report is written once, in [`crate::render`], and
//! rendered here through a [`MarkdownSink`]), the LLM prompts that carry the same data, and the
//! number formats every rendering shares.
//!
//! Pure functions from a report to a `String`: no terminal, no colour.

use trail_render::MarkdownSink;

pub use crate::format::{group_label, hours_minutes, thousands, usage_key_label, usd};
use crate::improve::ImproveReport;
use crate::render::{self, range_words};
use crate::standup::Standup;
use crate::tips::Tips;
use crate::usage::UsageReport;

/// A report written through `render` into Markdown.
fn markdown<R: ?Sized>(report: &R, render: fn(&R, &mut dyn trail_render::Sink)) -> String {
    let mut sink = MarkdownSink::new();
    render(report, &mut sink);
    sink.finish()
}

/// Renders the usage report as a Markdown table with a totals row.
pub fn usage(r: &UsageReport) -> String {
    markdown(r, render::usage)
}

/// Renders the 5-hour blocks as a Markdown table, gaps as rows of their own, with the active
/// block's burn rate and projection below.
pub fn blocks(r: &crate::BlocksReport) -> String {
    markdown(r, render::blocks)
}

/// Renders the standup as Markdown.
pub fn standup(s: &Standup) -> String {
    markdown(s, render::standup)
}

/// Returns an LLM prompt holding the standup's data.
pub fn standup_prompt(s: &Standup) -> String {
    let data = serde_json::to_string_pretty(s).unwrap_or_default();
    format!(
        "Write my standup update for {} from the coding-agent sessions below (collected by trail).\n\
         Group it by work stream (repository and branch). For each: one or two sentences on what was done, \
         what is still in progress, and the pull requests, issues or commits involved (keep the links). \
         Mention blockers only if the data shows them. Be brief and concrete; do not invent work that is \
         not in the data.\n\n```json\n{data}\n```\n",
        range_words(s)
    )
}

/// Returns an LLM prompt holding the tips' data (the MCP server's `tips` prompt).
pub fn tips_prompt(t: &Tips) -> String {
    let data = serde_json::to_string_pretty(t).unwrap_or_default();
    format!(
        "Below are numbers on how I use my coding agents (collected by trail from my session \
         history): sessions and turns per day, agents and models, the tools they call and how \
         often those fail, cache hits, the longest and most expensive sessions, prompts I repeat, \
         one-turn sessions.\n\
         Give me at most five tips, most valuable first, each one sentence of advice followed by \
         the numbers below that support it. Only advise what the data shows; say so when it is \
         too thin to advise.\n\n```json\n{data}\n```\n"
    )
}

/// Renders the tips as Markdown.
pub fn tips(t: &Tips) -> String {
    markdown(t, render::tips)
}

/// Renders the improve report as Markdown.
pub fn improve(r: &ImproveReport) -> String {
    markdown(r, render::improve)
}

/// Returns an LLM prompt holding the improve report's data.
pub fn improve_prompt(r: &ImproveReport) -> String {
    let data = serde_json::to_string_pretty(r).unwrap_or_default();
    format!(
        "Below are the places where my coding agents struggled (collected by trail from my session \
         history): failed tool calls and commands, refused permissions, interrupts, corrections, \
         rewinds, compactions and errors, each with quoted evidence.\n\
         Propose concrete additions to the agent's instruction file (CLAUDE.md or \
         .github/copilot-instructions.md): short imperative rules, each tied to the evidence it \
         prevents. Skip findings no instruction can fix (API outages).\n\n```json\n{data}\n```\n"
    )
}

/// How a line of a block's detail wants to be shown (each frontend picks its colours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emphasis {
    Plain,
    /// The figure a reader looks for first (the block's cost).
    Strong,
    /// Under 80 % of the budget.
    Good,
    /// 80 % of the budget or more.
    Warn,
    /// The budget is spent.
    Alert,
    /// Per-model rows under the block.
    Dim,
}

/// One line of a block's detail: a label padded to 10 columns (empty for per-model rows), the
/// value, and how the value wants to be shown.
#[derive(Debug, Clone, PartialEq)]
pub struct DetailLine {
    pub label: &'static str,
    pub value: String,
    pub emphasis: Emphasis,
}

impl DetailLine {
    fn new(label: &'static str, value: String, emphasis: Emphasis) -> DetailLine {
        DetailLine {
            label,
            value,
            emphasis,
        }
    }
}

/// The active block's figures as `trail usage --active`, its live view and the TUI's usage
/// panel show them: time left, cost (against `budget`), tokens, burn rate, projection, models.
pub fn block_detail(
    r: &crate::BlocksReport,
    b: &crate::blocks::Block,
    budget: Option<f64>,
) -> Vec<DetailLine> {
    use crate::zone::DayZone;
    let mut out = Vec::new();
    let s = &b.sums;
    let cost =
        |cost: f64, unpriced: i64| format!("{}{}", usd(cost), if unpriced > 0 { "*" } else { "" });
    let left = b
        .projection
        .as_ref()
        .map(|p| hours_minutes(p.remaining_minutes))
        .unwrap_or_else(|| "-".into());
    // The block's end as a time of day (`end_local` is "YYYY-MM-DD HH:MM").
    let end_clock = b.end_local.get(11..).unwrap_or(&b.end_local);
    // A timestamp as the block's zone's clock time (HH:MM).
    let zone = DayZone::parse(&r.time_zone).ok();
    let clock = |ts: &str| {
        zone.as_ref()
            .and_then(|z| z.minute_of(ts))
            .and_then(|m| m.get(11..).map(str::to_string))
            .unwrap_or_else(|| ts.to_string())
    };
    out.push(DetailLine::new(
        "Block     ",
        format!(
            "{} – {}, {left} left (now {})",
            b.start_local,
            end_clock,
            clock(&r.now)
        ),
        Emphasis::Plain,
    ));
    out.push(DetailLine::new(
        "Cost      ",
        cost(s.cost_usd, s.unpriced_requests),
        Emphasis::Strong,
    ));
    if let Some(budget) = budget.filter(|b| *b > 0.0) {
        let percent = s.cost_usd / budget * 100.0;
        let emphasis = match percent {
            p if p >= 100.0 => Emphasis::Alert,
            p if p >= 80.0 => Emphasis::Warn,
            _ => Emphasis::Good,
        };
        out.push(DetailLine::new(
            "Budget    ",
            format!("{} of {} ({percent:.0}%)", usd(s.cost_usd), usd(budget)),
            emphasis,
        ));
    }
    out.push(DetailLine::new(
        "Tokens    ",
        format!(
            "{} ({} requests: input {}, output {}, cache write {}, cache read {})",
            thousands(s.total_tokens),
            thousands(s.requests),
            thousands(s.input_tokens),
            thousands(s.output_tokens),
            thousands(s.cache_creation_tokens),
            thousands(s.cache_read_tokens)
        ),
        Emphasis::Plain,
    ));
    if let Some(rate) = &b.burn_rate {
        out.push(DetailLine::new(
            "Burn      ",
            format!(
                "{}/h, {} tokens/min (last {} min, {}–{})",
                usd(rate.cost_per_hour_usd),
                thousands(rate.tokens_per_minute.round() as i64),
                rate.window_minutes,
                clock(&rate.since),
                clock(&rate.until)
            ),
            Emphasis::Plain,
        ));
    }
    if let Some(p) = &b.projection {
        out.push(DetailLine::new(
            "Projected ",
            format!(
                "{} and {} tokens by {} if this rate holds",
                usd(p.cost_usd),
                thousands(p.total_tokens),
                end_clock
            ),
            Emphasis::Plain,
        ));
    }
    out.push(DetailLine::new(
        "Models    ",
        b.models.join(", "),
        Emphasis::Plain,
    ));
    for m in &b.breakdown {
        out.push(DetailLine::new(
            "",
            format!(
                "  └ {}: {}, {} tokens, {} requests",
                m.model,
                cost(m.sums.cost_usd, m.sums.unpriced_requests),
                thousands(m.sums.total_tokens),
                thousands(m.sums.requests)
            ),
            Emphasis::Dim,
        ));
    }
    out
}
