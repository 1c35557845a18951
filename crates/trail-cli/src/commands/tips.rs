//! `trail tips`: usage patterns with the numbers behind each tip.

use trail_report::{markdown, PriceTable};

use crate::commands::open_existing;
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
    let store = open_existing(ctx)?;
    let filter = args.filter.filter(chrono::Utc::now())?;
    let report = trail_report::tips(&store, &filter, PriceTable::shipped())?;
    if args.format.json {
        ctx.ui.json(&report)?;
    } else {
        // Markdown reads well in a terminal too.
        ctx.ui.line(markdown::tips(&report).trim_end())?;
    }
    Ok(0)
}
