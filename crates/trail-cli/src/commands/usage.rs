//! `trail usage`: tokens and cost by day, week, month, model, session, repository or source.

use trail_query::{BlockOptions, UsageOptions};
use trail_query::{Clock, GroupBy, ReportFilter};
use trail_report::markdown;

use crate::commands::filter::SessionArgs;
use crate::commands::open_query;
use crate::error::CliResult;
use crate::Ctx;

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
    // The table as every other rendering writes it (trail_report::render), laid out for the
    // terminal: numbers to the right, the totals bold, breakdown rows dim.
    let mut sink = trail_render::TerminalSink::painted(ctx.ui.painter());
    trail_report::render::usage_table(&report, &mut sink);
    trail_report::render::unpriced_models(&report.unpriced_models, &mut sink);
    ctx.ui.document(&sink.finish())?;
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
        if args.active {
            for l in crate::blocks_view::active_lines(&ctx.ui, &report, budget) {
                ctx.ui.line(&l)?;
            }
        } else {
            // The blocks report as every other rendering writes it, laid out for the terminal.
            let mut sink = trail_render::TerminalSink::painted(ctx.ui.painter());
            trail_report::render::blocks(&report, &mut sink);
            ctx.ui.document(&sink.finish())?;
        }
    }
    Ok(0)
}
