//! Markdown renderings of the reports, and the LLM prompts that carry the same data.
//!
//! Pure functions from a report to a `String`: no terminal, no colour.

use std::fmt::Write as _;

use crate::blocks::{BlockSums, BlocksReport};
use crate::improve::ImproveReport;
use crate::standup::Standup;
use crate::text::{count, minute, trim};

/// Transcript text (a title, a prompt, a quote) on one line of the Markdown, at most `max`
/// characters, written to show as text: HTML and unsafe links in it stay inert (the exports'
/// rule, `trail_render::inert_markdown_inline`).
fn prose(s: &str, max: usize) -> String {
    trail_render::inert_markdown_inline(&trim(s, max)).into_owned()
}

/// Characters kept of a session title.
const TITLE_CHARS: usize = 80;
use crate::tips::Tips;
use crate::usage::{GroupBy, UsageReport};
use crate::zone::DayZone;

/// Formats USD with cents (`$1,234.56`).
pub fn usd(v: f64) -> String {
    let cents = (v * 100.0).round() as i64;
    format!("${}.{:02}", thousands(cents / 100), (cents % 100).abs())
}

/// Formats an integer with thousands separators.
pub fn thousands(n: i64) -> String {
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && matches!((s.len() - i) % 3, 0) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Returns the header of the first column for a grouping.
pub fn group_label(by: GroupBy) -> &'static str {
    match by {
        GroupBy::Day => "Day",
        GroupBy::Week => "Week of",
        GroupBy::Month => "Month",
        GroupBy::Model => "Model",
        GroupBy::Session => "Session",
        GroupBy::Repo => "Repository",
        GroupBy::Source => "Source",
    }
}

/// The first column's heading of a usage report: the grouping, and for days, weeks and months in
/// another zone than UTC, that zone (`Day (Europe/Paris)`).
pub fn usage_key_label(r: &UsageReport) -> String {
    let label = group_label(r.group_by);
    match r.group_by {
        GroupBy::Day | GroupBy::Week | GroupBy::Month if r.time_zone != "UTC" => {
            format!("{label} ({})", r.time_zone)
        }
        _ => label.to_string(),
    }
}

/// Renders the usage report as a Markdown table with a totals row.
pub fn usage(r: &UsageReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Usage\n");
    if r.rows.is_empty() {
        let _ = writeln!(out, "_no usage in this range_");
        return out;
    }
    // Copilot premium requests are their own unit, never dollars: their own column.
    let premium = r.totals.premium_requests > 0.0;
    let (premium_head, premium_rule) = if premium {
        (" Premium requests |", "---:|")
    } else {
        ("", "")
    };
    if r.group_by == GroupBy::Session {
        let _ = writeln!(
            out,
            "| {} | Input | Output | Cache write | Cache read | Total tokens | Cost (self) | Cost (with subagents) |{premium_head}",
            usage_key_label(r)
        );
        let _ = writeln!(
            out,
            "|---|---:|---:|---:|---:|---:|---:|---:|{premium_rule}"
        );
    } else {
        let _ = writeln!(
            out,
            "| {} | Input | Output | Cache write | Cache read | Total tokens | Cost |{premium_head}",
            usage_key_label(r)
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|{premium_rule}");
    }
    let key = |row: &crate::usage::UsageRow| match (&row.label, r.group_by) {
        (Some(l), GroupBy::Session) => format!(
            "{} {}",
            row.short_key.as_deref().unwrap_or(&row.key),
            l.replace('|', "\\|")
        ),
        (_, GroupBy::Model) => crate::usage::model_name(&row.key).replace('|', "\\|"),
        _ => row.key.replace('|', "\\|"),
    };
    let by_session = r.group_by == GroupBy::Session;
    let cost_of = |row: &crate::usage::UsageRow| {
        format!(
            "{}{}",
            usd(row.cost_usd),
            if row.unpriced_requests > 0 {
                " + unpriced"
            } else {
                ""
            }
        )
    };
    let line = |out: &mut String, name: String, row: &crate::usage::UsageRow, own: &str| {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {}{} |{}",
            name,
            thousands(row.input_tokens),
            thousands(row.output_tokens),
            thousands(row.cache_creation_tokens),
            thousands(row.cache_read_tokens),
            thousands(row.total_tokens),
            own,
            cost_of(row),
            if premium {
                format!(" {:.2} |", row.premium_requests)
            } else {
                String::new()
            }
        );
    };
    for row in r.rows.iter().chain(std::iter::once(&r.totals)) {
        let is_total = std::ptr::eq(row, &r.totals);
        let name = if is_total {
            "**Total**".to_string()
        } else {
            key(row)
        };
        let own = match (by_session, row.self_cost_usd) {
            (true, Some(c)) => format!("{} | ", usd(c)),
            (true, None) => " | ".to_string(),
            _ => String::new(),
        };
        line(&mut out, name, row, &own);
        for sub in &row.breakdown {
            let own = if by_session { " | " } else { "" };
            line(
                &mut out,
                format!("└ {}", sub.key.replace('|', "\\|")),
                sub,
                own,
            );
        }
    }
    if !r.unpriced_models.is_empty() {
        let _ = writeln!(out, "\nUnpriced models (tokens counted, cost not):");
        for u in &r.unpriced_models {
            let _ = writeln!(
                out,
                "- `{}`: {}, {} tokens",
                u.model,
                count(u.requests, "request", "requests"),
                thousands(u.total_tokens)
            );
        }
    }
    out
}

/// `2h05m`, `45m`.
pub fn hours_minutes(minutes: i64) -> String {
    if minutes >= 60 {
        format!("{}h{:02}m", minutes / 60, minutes % 60)
    } else {
        format!("{minutes}m")
    }
}

/// Renders the 5-hour blocks as a Markdown table, gaps as rows of their own, with the active
/// block's burn rate and projection below.
pub fn blocks(r: &BlocksReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Usage by 5-hour block\n");
    let _ = writeln!(out, "_{}._\n", r.estimate);
    if r.blocks.is_empty() {
        let _ = writeln!(out, "_no usage in this range_");
        return out;
    }
    let _ = writeln!(
        out,
        "| Block start ({}) | End | Requests | Input | Output | Cache write | Cache read | Total tokens | Cost |",
        r.time_zone
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for b in &r.blocks {
        if b.is_gap {
            let _ = writeln!(
                out,
                "| _gap_ {} | {} | | | | | | | |",
                b.start_local, b.end_local
            );
            continue;
        }
        let mark = if b.is_active { " (active)" } else { "" };
        let row = |out: &mut String, name: &str, end: &str, s: &BlockSums| {
            let _ = writeln!(
                out,
                "| {name} | {end} | {} | {} | {} | {} | {} | {} | {}{} |",
                thousands(s.requests),
                thousands(s.input_tokens),
                thousands(s.output_tokens),
                thousands(s.cache_creation_tokens),
                thousands(s.cache_read_tokens),
                thousands(s.total_tokens),
                usd(s.cost_usd),
                if s.unpriced_requests > 0 {
                    " + unpriced"
                } else {
                    ""
                }
            );
        };
        row(
            &mut out,
            &format!("{}{mark}", b.start_local),
            &b.end_local,
            &b.sums,
        );
        for m in &b.breakdown {
            row(
                &mut out,
                &format!("└ {}", m.model.replace('|', "\\|")),
                "",
                &m.sums,
            );
        }
    }
    let _ = writeln!(
        out,
        "| **Total** | | {} | {} | {} | {} | {} | {} | {} |",
        thousands(r.totals.requests),
        thousands(r.totals.input_tokens),
        thousands(r.totals.output_tokens),
        thousands(r.totals.cache_creation_tokens),
        thousands(r.totals.cache_read_tokens),
        thousands(r.totals.total_tokens),
        usd(r.totals.cost_usd)
    );
    if let Some(a) = r.active() {
        if let Some(rate) = &a.burn_rate {
            let _ = writeln!(
                out,
                "\nBurn rate (last {} min, {} – {}): {} tokens/min, {}/hour.",
                rate.window_minutes,
                minute(&rate.since),
                minute(&rate.until),
                thousands(rate.tokens_per_minute.round() as i64),
                usd(rate.cost_per_hour_usd)
            );
        }
        if let Some(p) = &a.projection {
            let _ = writeln!(
                out,
                "Projected by the block's end ({} left): {} tokens, {}.",
                hours_minutes(p.remaining_minutes),
                thousands(p.total_tokens),
                usd(p.cost_usd)
            );
        }
    }
    if !r.unpriced_models.is_empty() {
        let _ = writeln!(out, "\nUnpriced models (tokens counted, cost not):");
        for u in &r.unpriced_models {
            let _ = writeln!(
                out,
                "- `{}`: {}, {} tokens",
                u.model,
                count(u.requests, "request", "requests"),
                thousands(u.total_tokens)
            );
        }
    }
    out
}

/// Describes the standup's range.
fn range_words(s: &Standup) -> String {
    if s.default_range {
        "the last 24 hours".to_string()
    } else {
        match DayZone::parse(&s.time_zone) {
            Ok(zone) if !zone.is_utc() => format!(
                "{} – {} ({})",
                zone.minute_of(&s.since).unwrap_or_else(|| minute(&s.since)),
                zone.minute_of(&s.until).unwrap_or_else(|| minute(&s.until)),
                s.time_zone
            ),
            _ => format!("{} – {} UTC", minute(&s.since), minute(&s.until)),
        }
    }
}

/// Renders the standup as Markdown.
pub fn standup(s: &Standup) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Standup: {}\n", range_words(s));
    if s.streams.is_empty() {
        let _ = writeln!(out, "no sessions in {}", range_words(s));
        return out;
    }
    for st in &s.streams {
        let place = st
            .repository
            .as_deref()
            .or(st.folder.as_deref())
            .unwrap_or("(no folder)");
        match &st.branch {
            Some(b) => {
                let _ = writeln!(
                    out,
                    "## {} · {}\n",
                    prose(place, usize::MAX),
                    prose(b, usize::MAX)
                );
            }
            None => {
                let _ = writeln!(out, "## {}\n", prose(place, usize::MAX));
            }
        }
        let _ = writeln!(out, "Sessions:");
        for x in &st.sessions {
            let _ = writeln!(
                out,
                "- {} · {} · {} (`{}`, {})",
                x.updated_at
                    .as_deref()
                    .map(minute)
                    .unwrap_or_else(|| "-".into()),
                x.source,
                prose(x.title.as_deref().unwrap_or("(untitled)"), TITLE_CHARS),
                x.short_id,
                count(x.turns, "turn", "turns")
            );
        }
        if st.more_sessions > 0 {
            let _ = writeln!(out, "- and {} more", st.more_sessions);
        }
        let asked: Vec<&String> = st.sessions.iter().flat_map(|x| &x.asked).collect();
        if !asked.is_empty() {
            let _ = writeln!(out, "\nAsked:");
            for a in asked {
                let _ = writeln!(out, "- \"{}\"", prose(a, usize::MAX));
            }
        }
        if !st.key_files.is_empty() {
            let files: Vec<String> = st
                .key_files
                .iter()
                .map(|f| {
                    format!(
                        "`{}` ({} edit{})",
                        f.path,
                        f.edits,
                        if f.edits == 1 { "" } else { "s" }
                    )
                })
                .collect();
            let _ = writeln!(out, "\nKey files: {}", files.join(", "));
        }
        if !st.refs.is_empty() {
            let refs: Vec<String> = st
                .refs
                .iter()
                .map(|r| {
                    let text = match r.kind.as_str() {
                        "pr" => format!("PR {}", r.value),
                        "issue" => format!("issue {}", r.value),
                        _ => format!("commit {}", &r.value[..r.value.len().min(10)]),
                    };
                    match &r.url {
                        Some(u) => format!("[{text}]({u})"),
                        None => text,
                    }
                })
                .collect();
            let _ = writeln!(out, "\nRefs: {}", refs.join(", "));
        }
        let titles = |done: bool| -> Vec<String> {
            st.sessions
                .iter()
                .filter(|x| x.in_progress != done)
                .map(|x| {
                    let title = x.title.as_deref().unwrap_or("(untitled)");
                    format!("{} (`{}`)", prose(title, 60), x.short_id)
                })
                .collect()
        };
        let done = titles(true);
        let open = titles(false);
        if !done.is_empty() {
            let _ = writeln!(out, "\nDone: {}", done.join("; "));
        }
        if !open.is_empty() {
            let _ = writeln!(out, "\nIn progress: {}", open.join("; "));
        }
        let _ = writeln!(out);
    }
    out
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
    let mut out = String::new();
    let _ = writeln!(out, "# Tips\n");
    if t.sessions == 0 {
        let _ = writeln!(out, "no sessions in this range");
        return out;
    }
    let _ = writeln!(
        out,
        "- {} sessions and {} turns over {} active days: {:.1} sessions and {:.1} turns a day.",
        thousands(t.sessions),
        thousands(t.turns),
        t.active_days,
        t.sessions_per_day,
        t.turns_per_day
    );
    let list = |v: &[crate::tips::Count]| {
        v.iter()
            .map(|c| format!("{} ({})", c.name, thousands(c.count)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "- Agents (sessions): {}.", list(&t.agents));
    if !t.models.is_empty() {
        let _ = writeln!(out, "- Models (requests): {}.", list(&t.models));
    }
    if let Some(r) = t.cache_hit_ratio {
        let _ = writeln!(
            out,
            "- Cache-hit ratio: {:.1}% of input tokens were cache reads.",
            100.0 * r
        );
    }
    let _ = writeln!(
        out,
        "- Sessions abandoned after one turn: {} of {}.",
        t.one_turn_sessions, t.sessions
    );
    if !t.tools.is_empty() {
        let _ = writeln!(
            out,
            "\n## Tools\n\n| Tool | Calls | Errors |\n|---|---:|---:|"
        );
        for x in &t.tools {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                x.name,
                thousands(x.calls),
                thousands(x.errors)
            );
        }
    }
    let sessions = |out: &mut String, title: &str, v: &[crate::tips::SessionStat]| {
        if v.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n## {title}\n");
        for s in v {
            let _ = writeln!(
                out,
                "- `{}` {} · {} · {} · {}",
                s.short_id,
                prose(s.title.as_deref().unwrap_or("(untitled)"), TITLE_CHARS),
                s.source,
                count(s.turns, "turn", "turns"),
                usd(s.cost_usd)
            );
        }
    };
    sessions(&mut out, "Longest sessions", &t.longest_sessions);
    sessions(
        &mut out,
        "Most expensive sessions",
        &t.most_expensive_sessions,
    );
    if !t.repeated_prompts.is_empty() {
        let _ = writeln!(out, "\n## Prompts repeated across sessions\n");
        for p in &t.repeated_prompts {
            let _ = writeln!(
                out,
                "- \"{}\" ({} sessions)",
                prose(&p.prompt, usize::MAX),
                p.sessions
            );
        }
    }
    if !t.advice.is_empty() {
        let _ = writeln!(out, "\n## Tips\n");
        for a in &t.advice {
            let _ = writeln!(out, "- {a}");
        }
    }
    out
}

/// Renders the improve report as Markdown.
pub fn improve(r: &ImproveReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Where the agents struggled\n");
    if r.findings.is_empty() {
        if r.sessions == 0 {
            let _ = writeln!(out, "no sessions in this range");
        } else {
            let _ = writeln!(out, "Nothing stood out in {} sessions.", r.sessions);
        }
        return out;
    }
    for (i, f) in r.findings.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. **{}** ({} session{})",
            i + 1,
            f.title,
            f.sessions,
            if f.sessions == 1 { "" } else { "s" }
        );
        for e in &f.evidence {
            let turn = e.turn.map(|t| format!(", turn {t}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "   - `{}`{}: \"{}\"",
                e.short_id,
                turn,
                prose(&e.quote, usize::MAX)
            );
        }
    }
    if !r.suggestions.is_empty() {
        let _ = writeln!(
            out,
            "\n## Suggestions for CLAUDE.md / .github/copilot-instructions.md\n"
        );
        for s in &r.suggestions {
            let _ = writeln!(out, "- {s}");
        }
    }
    out
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
