//! `trail tui` (and `trail` alone on a terminal): browse and search every session as you type.

use std::io::IsTerminal;

use crate::config;
use crate::error::{CliError, CliResult};
use crate::Ctx;

#[derive(Debug, Default, clap::Args)]
pub struct Args {}

pub fn run(ctx: &mut Ctx, _args: Args) -> CliResult<u8> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(CliError::usage("trail tui needs a terminal")
            .with_hint("use `trail list` or `trail search QUERY` in scripts and pipes"));
    }
    let section = &ctx.config.config.tui;
    let colors = section.colors().map_err(CliError::usage)?;
    let keys = section.keymap().map_err(CliError::usage)?;
    let here = config::here(&ctx.env);
    let export_dir = section
        .export_dir(ctx.env.home().as_deref())
        .or_else(|| config::data_dir(&ctx.env).map(|d| d.join("trail").join("exports")))
        .unwrap_or_else(|| std::env::temp_dir().join("trail-exports"));
    trail_tui::run(trail_tui::TuiConfig {
        store: ctx.store_path.clone(),
        here,
        colors,
        // Colour follows --color and NO_COLOR as every command's does.
        no_color: !ctx.ui.color,
        keys,
        export_dir,
        continue_homes: config::continue_homes(&ctx.env, ctx.home.as_deref()),
        clock: None,
        prices: ctx.config.price_table(),
        block_budget_usd: ctx.config.config.usage.block_budget_usd,
    })?;
    Ok(0)
}
