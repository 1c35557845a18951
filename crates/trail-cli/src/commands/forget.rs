//! `trail forget ID... [--repo R] [--before DATE]`: removes sessions (and their subagents) from
//! the local store for good and leaves tombstones, so a later index does not bring them back
//! and the next `trail sync` removes them from the team store; `--restore` lifts tombstones
//! (the next index reads their files again).

use serde::Serialize;
use trail_query::{Clock, DayZone};
use trail_store::{ForgetSelection, Forgotten, Store};

use crate::error::{CliError, CliResult};
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session ids (exact or unique prefixes; with --restore, forgotten ids)
    #[arg(value_name = "ID")]
    ids: Vec<String>,
    /// Every session whose repository (owner/name) or folder contains this text
    #[arg(long)]
    repo: Option<String>,
    /// Every session last active before this time (2026-01-01, 90d)
    #[arg(long)]
    before: Option<String>,
    /// Lift the tombstones of these ids: the next `trail index` reads their files again
    #[arg(long)]
    restore: bool,
    /// List what would be forgotten; change nothing
    #[arg(long)]
    dry_run: bool,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    forgotten: Vec<Forgotten>,
    restored: Vec<Forgotten>,
    dry_run: bool,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    if !ctx.store_path.exists() {
        return Err(CliError::usage(format!(
            "no store at {} yet",
            ctx.store_path.display()
        )));
    }
    let mut store = Store::open(&ctx.store_path)?;
    if args.restore {
        if args.ids.is_empty() {
            return Err(CliError::usage("--restore needs the ids to bring back"));
        }
        let restored = store.restore_forgotten(&args.ids)?;
        if restored.is_empty() {
            return Err(CliError::usage(format!(
                "no forgotten session matches {}",
                args.ids.join(", ")
            )));
        }
        if args.json {
            ctx.ui.json(&Report {
                forgotten: Vec::new(),
                restored,
                dry_run: false,
            })?;
        } else {
            for f in &restored {
                ctx.ui.line(&format!("restored {}", f.id))?;
            }
            ctx.ui.status(&format!(
                "Lifted {} tombstones; the next `trail index` reads their files again.",
                restored.len()
            ));
        }
        return Ok(0);
    }
    if args.ids.is_empty() && args.repo.is_none() && args.before.is_none() {
        return Err(CliError::usage(
            "name the sessions to forget: ID..., --repo or --before",
        ));
    }
    let clock = Clock {
        now: ctx.now()?,
        zone: DayZone::utc(),
    };
    let before = clock
        .resolve(args.before.as_deref())
        .map_err(CliError::usage)?
        .map(trail_store::Timestamp::into_string);
    let ids = args
        .ids
        .iter()
        .map(|i| store.resolve_session_id(i.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    let chosen = store.forget_candidates(&ForgetSelection {
        ids,
        repo: args.repo.clone(),
        before,
    })?;
    if chosen.is_empty() {
        // A script asked for JSON gets JSON, empty, rather than nothing to parse.
        if args.json {
            ctx.ui.json(&Report {
                forgotten: Vec::new(),
                restored: Vec::new(),
                dry_run: args.dry_run,
            })?;
        }
        ctx.ui.status("No session matches; nothing was forgotten.");
        return Ok(0);
    }
    let forgotten = if args.dry_run {
        chosen
            .iter()
            .map(|id| Forgotten {
                id: id.clone(),
                source: None,
                source_path: None,
                forgotten_at: String::new(),
            })
            .collect()
    } else {
        store.forget(&chosen, &trail_store::now_iso())?
    };
    if args.json {
        ctx.ui.json(&Report {
            forgotten,
            restored: Vec::new(),
            dry_run: args.dry_run,
        })?;
        return Ok(0);
    }
    for f in &forgotten {
        ctx.ui.line(&format!(
            "{} {}",
            if args.dry_run {
                "would forget"
            } else {
                "forgot"
            },
            f.id
        ))?;
    }
    if !args.dry_run {
        ctx.ui.status(&format!(
            "Forgot {} sessions; `trail index` will not bring them back (`trail forget --restore ID` does), and the next `trail sync` removes them from the team store.",
            forgotten.len()
        ));
    }
    Ok(0)
}
