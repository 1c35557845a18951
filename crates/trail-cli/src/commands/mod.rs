//! One module per subcommand: each exports `Args` (clap) and `run`.

pub mod completions;
pub mod db;
pub mod diff;
pub mod doctor;
pub mod export;
pub mod filter;
pub mod forget;
pub mod import;
pub mod improve;
pub mod index;
pub mod list;
pub mod man;
pub mod mcp;
pub mod resume;
pub mod search;
pub mod serve;
pub mod service;
pub mod show;
pub mod sql;
pub mod standup;
pub mod statusline;
pub mod sync;
pub mod tips;
pub mod tui;
pub mod usage;
pub mod watch;
pub mod why;

use trail_query::Query;

use crate::error::CliResult;
use crate::Ctx;

/// Opens the store for reading through the query layer; a store not indexed yet is a usage
/// error that says how to make one.
pub fn open_query(ctx: &Ctx) -> CliResult<Query> {
    if let Some(url) = &ctx.team_store {
        let backend = trail_postgres::PgBackend::open(url, ctx.team_scope.clone())
            .map_err(trail_query::QueryError::from)?;
        return Ok(Query::from_remote(Box::new(backend))?);
    }
    Ok(Query::open(&ctx.store_path)?)
}
