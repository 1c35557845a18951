//! `trail diff ID [--turn N]`: what a session changed, as unified diffs per file, from every
//! record of it (edit tool inputs, `apply_patch` bodies, Claude Code file-history backups, VS
//! Code chat editing snapshots). Exit 1 when the session changed nothing trail can see.

use serde::Serialize;
use trail_query::SessionDiff;

use crate::commands::open_query;
use crate::error::CliResult;
use crate::output::{Style, Ui};
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session id (a unique prefix is enough)
    id: String,
    /// Only the changes made in this turn
    #[arg(long)]
    turn: Option<u32>,
    /// Print {session_id, turn, files, added, removed} as JSON (see docs/json.md)
    #[arg(long)]
    json: bool,
}

/// The `--json` shape.
#[derive(Serialize)]
struct DiffJson<'a> {
    session_id: &'a str,
    turn: Option<u32>,
    #[serde(flatten)]
    diff: &'a SessionDiff,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query = open_query(ctx)?;
    let id = query.resolve_id(&args.id)?;
    let diff = query.session_diff_of(&id, args.turn)?;
    if args.json {
        ctx.ui.json(&DiffJson {
            session_id: &id,
            turn: args.turn,
            diff: &diff,
        })?;
        return Ok(if diff.files.is_empty() { 1 } else { 0 });
    }
    if diff.files.is_empty() {
        let scope = args
            .turn
            .map(|t| format!(" in turn {t}"))
            .unwrap_or_default();
        ctx.ui.status(&format!(
            "Session {id} changed no file{scope} that its records show (trail reads edit tool calls, patches and the file snapshots agents keep)."
        ));
        return Ok(1);
    }
    print(&mut ctx.ui, &diff)?;
    Ok(0)
}

/// Prints a session's changes: per file a header with its line counts, then each change (turn,
/// tool, time) and its diff, coloured on a terminal. Shared with `show --full`.
pub fn print(ui: &mut Ui, diff: &SessionDiff) -> CliResult {
    for (i, f) in diff.files.iter().enumerate() {
        if i > 0 {
            ui.line("")?;
        }
        let counts = format!(
            "{} {}",
            ui.paint(Style::Green, &format!("+{}", f.added)),
            ui.paint(Style::Red, &format!("-{}", f.removed))
        );
        ui.line(&format!("{}  {counts}", ui.paint(Style::Bold, &f.path)))?;
        for c in &f.changes {
            ui.line(&ui.paint(
                Style::Dim,
                &format!("  {}", trail_render::change_heading(c)),
            ))?;
            for line in c.diff.lines() {
                use trail_render::DiffLine;
                let style = match DiffLine::of(line) {
                    DiffLine::Header => Style::Bold,
                    DiffLine::Added => Style::Green,
                    DiffLine::Removed => Style::Red,
                    DiffLine::Hunk => Style::Cyan,
                    DiffLine::Context => {
                        ui.line(&format!("  {line}"))?;
                        continue;
                    }
                };
                ui.line(&format!("  {}", ui.paint(style, line)))?;
            }
        }
    }
    if diff.files.len() > 1 {
        ui.line("")?;
        ui.line(&format!(
            "{} files changed, {} lines added, {} removed",
            diff.files.len(),
            diff.added,
            diff.removed
        ))?;
    }
    Ok(())
}
