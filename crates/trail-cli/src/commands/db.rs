//! `trail db migrate [URL]`: brings a team store's schema up to this trail's version (the first
//! `trail sync` does it too; a database owner runs it once for a team, docs/team.md).

use crate::commands::sync::sync_url;
use crate::error::CliResult;
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Apply the team store's pending migrations
    Migrate {
        /// The team store (else --store postgres://..., $TRAIL_SYNC_URL or [sync] url)
        #[arg(value_name = "postgres://...")]
        url: Option<String>,
    },
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    match args.action {
        Action::Migrate { url } => {
            let url = match (url, &ctx.team_store) {
                (Some(u), _) => sync_url(ctx, Some(&u))?,
                (None, Some(team)) => team.clone(),
                (None, None) => sync_url(ctx, None)?,
            };
            let mut client = trail_postgres::connect(&url)?;
            let before = trail_postgres::schema::version(&mut client)?;
            let applied = trail_postgres::schema::migrate(&mut client)?;
            let target = trail_postgres::redact_url(&url);
            if applied == 0 {
                ctx.ui.status(&format!(
                    "The team store at {target} is up to date (schema version {before})."
                ));
            } else {
                ctx.ui.status(&format!(
                    "Migrated the team store at {target} from schema version {before} to {} ({applied} migrations).",
                    before + applied as i64
                ));
            }
            Ok(0)
        }
    }
}
