//! `trail standup`: what happened in the last 24 hours (or a given range), by work stream.

use trail_report::markdown;

use trail_query::Clock;

use crate::commands::open_query;
use crate::commands::usage::FilterArgs;
use crate::error::CliResult;
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    filter: FilterArgs,
    /// Print JSON
    #[arg(long, conflicts_with = "prompt")]
    json: bool,
    /// Print an LLM prompt holding the same data, to pipe into an agent
    #[arg(long)]
    prompt: bool,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query = open_query(ctx)?;
    let report = query.standup(&args.filter.report_filter(), &Clock::utc_now())?;
    if args.json {
        ctx.ui.json(&report)?;
    } else if args.prompt {
        ctx.ui.line(markdown::standup_prompt(&report).trim_end())?;
    } else {
        ctx.ui.line(markdown::standup(&report).trim_end())?;
    }
    Ok(0)
}
