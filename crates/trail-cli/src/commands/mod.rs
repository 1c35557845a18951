//! One module per subcommand: each exports `Args` (clap) and `run`.

pub mod doctor;
pub mod export;
pub mod import;
pub mod improve;
pub mod index;
pub mod list;
pub mod resume;
pub mod search;
pub mod show;
pub mod sql;
pub mod standup;
pub mod statusline;
pub mod tips;
pub mod usage;

use trail_store::Store;

use crate::error::{CliError, CliResult};
use crate::Ctx;

/// Opens the store for reading, with a helpful error when nothing was indexed yet.
pub fn open_existing(ctx: &Ctx) -> CliResult<Store> {
    if !ctx.store_path.exists() {
        return Err(CliError::usage(format!(
            "no store at {} yet",
            ctx.store_path.display()
        ))
        .with_hint("run `trail index` first (or `trail index --home examples/home` to try the samples)"));
    }
    Ok(Store::open(&ctx.store_path)?)
}
