//! `trail usage`: tokens and cost by day, week, month, model, session, repository or source.

use trail_report::markdown::{self, thousands, usage_key_label, usd};
use trail_report::{DayZone, Filter, GroupBy, UsageOptions};

use crate::commands::open_existing;
use crate::error::{CliError, CliResult};
use crate::output::{fit, Style};
use crate::util::time_arg;
use crate::Ctx;

/// The filter every report takes.
#[derive(Debug, Clone, clap::Args)]
pub struct FilterArgs {
    /// Only activity since this time (7d, 24h, 2026-11-01)
    #[arg(long)]
    pub since: Option<String>,
    /// Only activity before this time
    #[arg(long)]
    pub until: Option<String>,
    /// Only this source (claude-code, copilot-vscode, copilot-cli, ...)
    #[arg(long, value_parser = crate::commands::index::parse_source)]
    pub source: Option<trail_model::SourceKind>,
    /// Only sessions whose repository (owner/name) or folder contains this text
    #[arg(long)]
    pub repo: Option<String>,
    /// Time zone of days: dates in --since/--until, and usage's days, weeks and months
    /// (UTC, local, +05:30, Europe/Paris)
    #[arg(long, env = "TRAIL_TZ", default_value = "UTC")]
    pub tz: String,
}

impl FilterArgs {
    /// The time zone of `--tz`.
    pub fn zone(&self) -> CliResult<DayZone> {
        DayZone::parse(&self.tz).map_err(CliError::usage)
    }

    /// Resolves the arguments against `now`, a date being that day in `--tz`'s zone.
    pub fn filter(&self, now: chrono::DateTime<chrono::Utc>) -> CliResult<Filter> {
        self.filter_in(now, &self.zone()?)
    }

    /// Resolves the arguments against `now`, a date being that day in `zone`.
    pub fn filter_in(
        &self,
        now: chrono::DateTime<chrono::Utc>,
        zone: &DayZone,
    ) -> CliResult<Filter> {
        Ok(Filter {
            since: time_arg(&self.since, now, zone)?,
            until: time_arg(&self.until, now, zone)?,
            source: self.source.map(|s| s.as_str().to_string()),
            repo: self.repo.clone(),
        })
    }
}

/// How to print a report.
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
    let zone = args.filter.zone()?;
    let now = ctx.now()?;
    let filter = args.filter.filter_in(now, &zone)?;
    if args.watch {
        let watch = crate::blocks_view::Watch {
            interval: std::time::Duration::from_secs_f64(args.interval.clamp(0.1, 86_400.0)),
            count: args.count,
            breakdown: args.breakdown,
        };
        return crate::blocks_view::watch(ctx, &filter, &zone, &watch);
    }
    let by = match args.by {
        _ if args.active => return blocks(ctx, &args, &filter, &zone, now),
        By::Block => return blocks(ctx, &args, &filter, &zone, now),
        By::Day => GroupBy::Day,
        By::Week => GroupBy::Week,
        By::Month => GroupBy::Month,
        By::Model => GroupBy::Model,
        By::Session => GroupBy::Session,
        By::Repo => GroupBy::Repo,
        By::Source => GroupBy::Source,
    };
    let store = open_existing(ctx)?;
    let prices = ctx.config.price_table();
    let options = UsageOptions {
        breakdown: args.breakdown,
    };
    let report = trail_report::usage_with(&store, &filter, by, &prices, &zone, &options)?;
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
    let width = report
        .rows
        .iter()
        .map(|r| key_text(r, by).chars().count())
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
    let header = format!(
        "{}  {:>14}  {:>14}  {:>14}  {:>16}  {:>16}{self_header}  {:>12}",
        fit(&usage_key_label(&report), width),
        "INPUT",
        "OUTPUT",
        "CACHE WRITE",
        "CACHE READ",
        "TOTAL",
        if by_session { "WITH SUBAGENTS" } else { "COST" }
    );
    ctx.ui.line(&ctx.ui.paint(Style::Bold, &header))?;
    let line = |r: &trail_report::UsageRow, key: &str| {
        let own = match (by_session, r.self_cost_usd) {
            (true, Some(c)) => format!("  {:>12}", usd(c)),
            (true, None) => format!("  {:>12}", ""),
            _ => String::new(),
        };
        format!(
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
        )
    };
    for r in &report.rows {
        let text = line(r, &key_text(r, by));
        ctx.ui.line(&text)?;
        for sub in &r.breakdown {
            let text = line(sub, &format!("  └ {}", sub.key));
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
fn blocks(
    ctx: &mut Ctx,
    args: &Args,
    filter: &Filter,
    zone: &DayZone,
    now: chrono::DateTime<chrono::Utc>,
) -> CliResult<u8> {
    let store = open_existing(ctx)?;
    let prices = ctx.config.price_table();
    let options = trail_report::BlockOptions {
        breakdown: args.breakdown,
        active_only: args.active,
    };
    let report = trail_report::blocks(&store, filter, &prices, zone, now, &options)?;
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

fn key_text(r: &trail_report::UsageRow, by: GroupBy) -> String {
    match (by, &r.label) {
        (GroupBy::Session, Some(title)) => format!(
            "{} {}",
            r.key.chars().take(8).collect::<String>(),
            crate::output::one_line(title)
        ),
        _ => r.key.clone(),
    }
}
