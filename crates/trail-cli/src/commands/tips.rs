//! `trail tips`: usage patterns with the numbers behind each tip.

use trail_query::{Clock, PriceTable};
use trail_report::markdown;

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
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query = open_query(ctx)?;
    let report = query.tips(
        &args.filter.report_filter(),
        PriceTable::shipped(),
        &Clock::utc_now(),
    )?;
    if args.format.json {
        ctx.ui.json(&report)?;
    } else {
        // Markdown reads well in a terminal too.
        ctx.ui.line(markdown::tips(&report).trim_end())?;
    }
    Ok(0)
}
