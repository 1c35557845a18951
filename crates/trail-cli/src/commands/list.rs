//! `trail list`: recent sessions.

use trail_query::{Clock, ListRequest, SessionFilter};

use crate::commands::open_query;
use crate::error::CliResult;
use crate::output::{self, fit, Style};
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only sessions from this source (claude-code, copilot-vscode, copilot-cli, ...)
    #[arg(long, value_parser = crate::commands::index::parse_source)]
    source: Option<trail_model::SourceKind>,
    /// Only sessions whose repository (owner/name) or folder contains this text
    #[arg(long)]
    repo: Option<String>,
    /// Only sessions active since this time (7d, 24h, 2026-11-01)
    #[arg(long)]
    since: Option<String>,
    /// Only sessions started before this time
    #[arg(long)]
    until: Option<String>,
    /// At most this many sessions
    #[arg(long, default_value_t = 30)]
    limit: usize,
    /// Include subagent sessions
    #[arg(long)]
    all: bool,
    /// Print JSON (an array of sessions; see docs/json.md)
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query = open_query(ctx)?;
    let page = query.list(
        &ListRequest {
            filter: SessionFilter {
                source: args.source.map(|s| s.as_str().to_string()),
                repo: args.repo.clone(),
                since: args.since.clone(),
                until: args.until.clone(),
                ..SessionFilter::default()
            },
            include_subagents: args.all,
            limit: args.limit,
            cursor: None,
            oldest_first: false,
        },
        &Clock::utc_now(),
    )?;
    let rows = page.sessions;
    if args.json {
        ctx.ui.json(&rows)?;
        return Ok(0);
    }
    if rows.is_empty() {
        ctx.ui.status("No sessions match.");
        return Ok(0);
    }
    let header = format!(
        "{}  {}  {}  {}  {}  {:>5}  {:>7}  {}",
        fit("WHEN", 16),
        fit("SOURCE", 14),
        fit("REPO / FOLDER", 28),
        fit("BRANCH", 14),
        fit("ID", 10),
        "TURNS",
        "TOKENS",
        "TITLE"
    );
    ctx.ui.line(&ctx.ui.paint(Style::Bold, &header))?;
    for r in &rows {
        let place = r
            .repository
            .clone()
            .or_else(|| r.cwd.clone())
            .unwrap_or_else(|| "-".into());
        let short_id: String = r.id.chars().take(10).collect();
        let title = output::one_line(r.title.as_deref().unwrap_or("(untitled)"));
        let missing = if r.source_missing { " [file gone]" } else { "" };
        let line = format!(
            "{}  {}  {}  {}  {}  {:>5}  {:>7}  {}{}",
            ctx.ui
                .paint(Style::Dim, &fit(&output::when(r.updated_at.as_deref()), 16)),
            ctx.ui.paint(Style::Cyan, &fit(&r.source, 14)),
            fit(&place, 28),
            ctx.ui
                .paint(Style::Magenta, &fit(r.branch.as_deref().unwrap_or("-"), 14)),
            ctx.ui.paint(Style::Yellow, &fit(&short_id, 10)),
            r.turns,
            output::tokens(r.total_tokens()),
            fit(&title, 70).trim_end(),
            missing
        );
        ctx.ui.line(&line)?;
    }
    Ok(0)
}
