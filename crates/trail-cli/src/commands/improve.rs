//! `trail improve`: where the agents struggled, with evidence, and what to tell them.

use trail_report::markdown;

use trail_query::Clock;

use crate::commands::open_query;
use crate::commands::usage::{FilterArgs, FormatArgs};
use crate::error::CliResult;
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    filter: FilterArgs,
    #[command(flatten)]
    format: FormatArgs,
    /// Print an LLM prompt holding the same data, to pipe into an agent
    #[arg(long, conflicts_with = "json")]
    prompt: bool,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query = open_query(ctx)?;
    let report = query.improve(&args.filter.report_filter(), &Clock::utc_now())?;
    if args.format.json {
        ctx.ui.json(&report)?;
    } else if args.prompt {
        ctx.ui.line(markdown::improve_prompt(&report).trim_end())?;
    } else {
        ctx.ui.line(markdown::improve(&report).trim_end())?;
    }
    Ok(0)
}
