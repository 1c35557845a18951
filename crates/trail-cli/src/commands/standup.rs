//! `trail standup`: what happened in the last 24 hours (or a given range), by work stream.

use trail_report::markdown;

use crate::commands::open_existing;
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
    let store = open_existing(ctx)?;
    let now = chrono::Utc::now();
    let filter = args.filter.filter(now)?;
    let mut report = trail_report::standup(&store, &filter, now)?;
    report.time_zone = args.filter.zone()?.name().to_string();
    if args.json {
        ctx.ui.json(&report)?;
    } else if args.prompt {
        ctx.ui.line(markdown::standup_prompt(&report).trim_end())?;
    } else {
        ctx.ui.line(markdown::standup(&report).trim_end())?;
    }
    Ok(0)
}
