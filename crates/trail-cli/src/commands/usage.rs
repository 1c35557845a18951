//! `trail usage`: tokens and cost by day, week, month, model, session, repository or source.

use trail_query::{BlockOptions, UsageOptions};
use trail_query::{Clock, GroupBy, ReportFilter};
use trail_report::markdown::{self, thousands, usage_key_label, usd};

use crate::commands::filter::SessionArgs;
use crate::commands::open_query;
use crate::error::CliResult;
use crate::output::{fit, Style};
use crate::Ctx;

/// What stands before a model's row under its bucket (`--breakdown`).
const BREAKDOWN_INDENT: &str = "  └ ";

/// The filter every report takes.
#[derive(Debug, Clone, clap::Args)]
#[command(mut_arg("source", |a| a.help("Only this source (an id or an alias)")))]
pub struct FilterArgs {
    #[command(flatten)]
    pub sessions: SessionArgs,
    /// Time zone of days: dates in --since/--until, and usage's days, weeks and months
    /// (UTC, local, +05:30, Europe/Paris)
    #[arg(long, env = "TRAIL_TZ", default_value = "UTC")]
    pub tz: String,
}

impl FilterArgs {
    /// The filter as the query layer reads it (times and the zone resolved there).
    pub fn report_filter(&self) -> ReportFilter {
        ReportFilter {
            filter: self.sessions.session_filter(),
            tz: Some(self.tz.clone()),
        }
    }
}

#[derive(Debug, Clone, Copy, clap::Args)]
pub struct FormatArgs {
    /// Print Markdown
    #[arg(long, conflicts_with = "json")]
    pub md: bool,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum By {
    Day,
    Week,
    Month,
    Model,
    Session,
    Repo,
    Source,
    /// 5-hour blocks (ccusage's rule)
    Block,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Group rows by (block: 5-hour usage blocks)
    #[arg(long, value_enum, default_value_t = By::Day)]
    by: By,
    /// Under each row, one row per model
    #[arg(long)]
    breakdown: bool,
    /// Only the active 5-hour block: time left, burn rate, projection (implies --by block)
    #[arg(long)]
    active: bool,
    /// Redraw the active block every --interval seconds (Ctrl-C stops); indexes before each
    #[arg(long, conflicts_with_all = ["json", "md"])]
    watch: bool,
    /// Seconds between --watch refreshes
    #[arg(
        long,
        default_value_t = 5.0,
        value_name = "SECONDS",
        requires = "watch"
    )]
    interval: f64,
    /// Stop --watch after this many refreshes
    #[arg(long, value_name = "N", requires = "watch")]
    count: Option<u64>,
    #[command(flatten)]
    filter: FilterArgs,
    #[command(flatten)]
    format: FormatArgs,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let filter = args.filter.report_filter();
    // A bad zone is reported before the store is opened (it is the user's typo either way).
    filter.zone()?;
    let clock = Clock {
        now: ctx.now()?,
        zone: trail_query::DayZone::utc(),
    };
    if args.watch {
        // Unreadable times are the user's typo: said before anything is indexed.
        filter.resolve(&clock)?;
        let watch = crate::blocks_view::Watch {
            interval: std::time::Duration::from_secs_f64(args.interval.clamp(0.1, 86_400.0)),
            count: args.count,
            breakdown: args.breakdown,
        };
        return crate::blocks_view::watch(ctx, &filter, &watch);
    }
    let by = match args.by {
        _ if args.active => return blocks(ctx, &args, &filter, &clock),
        By::Block => return blocks(ctx, &args, &filter, &clock),
        By::Day => GroupBy::Day,
        By::Week => GroupBy::Week,
        By::Month => GroupBy::Month,
        By::Model => GroupBy::Model,
        By::Session => GroupBy::Session,
        By::Repo => GroupBy::Repo,
        By::Source => GroupBy::Source,
    };
    let query = open_query(ctx)?;
    let prices = ctx.config.price_table();
    let options = UsageOptions {
        breakdown: args.breakdown,
    };
    let report = query.usage_with(&filter, by, &prices, &clock, &options)?;
    if args.format.json {
        ctx.ui.json(&report)?;
        return Ok(0);
    }
    if args.format.md {
        ctx.ui.line(markdown::usage(&report).trim_end())?;
        return Ok(0);
    }
    if report.rows.is_empty() {
        ctx.ui.status("No usage in this range.");
        return Ok(0);
    }
    // Breakdown rows (`  └ model`) share the key column, so they count for its width.
    let width = report
        .rows
        .iter()
        .map(|r| key_text(r, by).chars().count())
        .chain(
            report
                .rows
                .iter()
                .flat_map(|r| &r.breakdown)
                .map(|sub| sub.key.chars().count() + BREAKDOWN_INDENT.chars().count()),
        )
        .max()
        .unwrap_or(5)
        .max(usage_key_label(&report).chars().count())
        .clamp(5, 48);
    // Grouped by session, a row counts its subagents: SELF is the session's own cost.
    let by_session = by == GroupBy::Session;
    let self_header = if by_session {
        format!("  {:>12}", "SELF")
    } else {
        String::new()
    };
    // GitHub Copilot premium requests are a unit of their own (never dollars): a column of
    // their own when any were recorded.
    let premium = report.totals.premium_requests > 0.0;
    let mut header = format!(
        "{}  {:>14}  {:>14}  {:>14}  {:>16}  {:>16}{self_header}  {:>12}",
        fit(&usage_key_label(&report), width),
        "INPUT",
        "OUTPUT",
        "CACHE WRITE",
        "CACHE READ",
        "TOTAL",
        if by_session { "WITH SUBAGENTS" } else { "COST" }
    );
    if premium {
        header.push_str(&format!("  {:>9}", "PREMIUM"));
    }
    ctx.ui.line(&ctx.ui.paint(Style::Bold, &header))?;
    let line = |r: &trail_report::UsageRow, key: &str| {
        let own = match (by_session, r.self_cost_usd) {
            (true, Some(c)) => format!("  {:>12}", usd(c)),
            (true, None) => format!("  {:>12}", ""),
            _ => String::new(),
        };
        let mut text = format!(
            "{}  {:>14}  {:>14}  {:>14}  {:>16}  {:>16}{own}  {:>12}",
            fit(key, width),
            thousands(r.input_tokens),
            thousands(r.output_tokens),
            thousands(r.cache_creation_tokens),
            thousands(r.cache_read_tokens),
            thousands(r.total_tokens),
            format!(
                "{}{}",
                usd(r.cost_usd),
                if r.unpriced_requests > 0 { "*" } else { "" }
            )
        );
        if premium {
            text.push_str(&format!("  {:>9}", premium_text(r.premium_requests)));
        }
        text
    };
    for r in &report.rows {
        let text = line(r, &key_text(r, by));
        ctx.ui.line(&text)?;
        for sub in &r.breakdown {
            let text = line(sub, &format!("{BREAKDOWN_INDENT}{}", sub.key));
            ctx.ui.line(&ctx.ui.paint(Style::Dim, &text))?;
        }
    }
    let total = line(&report.totals, "Total");
    ctx.ui.line(&ctx.ui.paint(Style::Bold, &total))?;
    if !report.unpriced_models.is_empty() {
        ctx.ui.line("")?;
        ctx.ui.line(&ctx.ui.paint(
            Style::Yellow,
            "* unpriced models (tokens counted, cost not included):",
        ))?;
        for u in &report.unpriced_models {
            ctx.ui.line(&format!(
                "  {}: {} request{}, {} tokens",
                u.model,
                thousands(u.requests),
                if u.requests == 1 { "" } else { "s" },
                thousands(u.total_tokens)
            ))?;
        }
    }
    Ok(0)
}

/// `--by block` and `--active`.
fn blocks(ctx: &mut Ctx, args: &Args, filter: &ReportFilter, clock: &Clock) -> CliResult<u8> {
    let query = open_query(ctx)?;
    let prices = ctx.config.price_table();
    let options = BlockOptions {
        breakdown: args.breakdown,
        active_only: args.active,
    };
    let report = query.blocks(filter, &prices, clock, &options)?;
    if args.format.json {
        ctx.ui.json(&report)?;
    } else if args.format.md {
        ctx.ui.line(markdown::blocks(&report).trim_end())?;
    } else {
        let budget = ctx.config.config.usage.block_budget_usd;
        let lines = if args.active {
            crate::blocks_view::active_lines(&ctx.ui, &report, budget)
        } else {
            crate::blocks_view::table_lines(&ctx.ui, &report)
        };
        for l in lines {
            ctx.ui.line(&l)?;
        }
    }
    Ok(0)
}

/// Premium requests with at most two decimals (multipliers such as 0.33 make fractions).
fn premium_text(n: f64) -> String {
    let s = format!("{n:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn key_text(r: &trail_report::UsageRow, by: GroupBy) -> String {
    match (by, &r.label) {
        (GroupBy::Session, Some(title)) => format!(
            "{} {}",
            r.short_key.as_deref().unwrap_or(&r.key),
            crate::output::one_line(title)
        ),
        (GroupBy::Model, _) => trail_report::usage::model_name(&r.key).to_string(),
        _ => r.key.clone(),
    }
}
