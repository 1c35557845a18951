//! `trail list`: recent sessions.

use trail_query::{Clock, ContinuationLink, ListRequest};

use crate::commands::filter::SessionArgs;
use crate::commands::open_query;
use crate::error::CliResult;
use crate::output::{self, fit, Style};
use crate::Ctx;

#[derive(Debug, clap::Args)]
#[command(
    mut_arg("since", |a| a.help("Only sessions active since this time (7d, 24h, 2026-11-01)")),
    mut_arg("until", |a| a.help("Only sessions started before this time")),
)]
pub struct Args {
    #[command(flatten)]
    filter: SessionArgs,
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
            filter: args.filter.session_filter(),
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
    // Each id as its shortest prefix that opens exactly that session (issue 15).
    let short = query.short_ids(rows.iter().map(|r| r.id.as_str()))?;
    let id_width = short.values().map(|s| s.chars().count()).max().unwrap_or(8);
    let header = format!(
        "{}  {}  {}  {}  {}  {:>5}  {:>7}  {}",
        fit("WHEN", 16),
        fit("SOURCE", 14),
        fit("REPO / FOLDER", 28),
        fit("BRANCH", 14),
        fit("ID", id_width),
        "TURNS",
        "TOKENS",
        "TITLE"
    );
    ctx.ui.line(&ctx.ui.paint(Style::Bold, &header))?;
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    let links = query.continuation_links(&ids)?;
    for r in &rows {
        let place = r
            .repository
            .clone()
            .or_else(|| r.cwd.clone())
            .unwrap_or_else(|| "-".into());
        let title = output::one_line(r.title.as_deref().unwrap_or("(untitled)"));
        let missing = match (r.chat, r.source_missing) {
            (true, true) => " [chat] [file gone]",
            (true, false) => " [chat]",
            (false, true) => " [file gone]",
            (false, false) => "",
        };
        let line = format!(
            "{}  {}  {}  {}  {}  {:>5}  {:>7}  {}{}",
            ctx.ui
                .paint(Style::Dim, &fit(&output::when(r.updated_at.as_deref()), 16)),
            ctx.ui.paint(Style::Cyan, &fit(&r.source, 14)),
            fit(&place, 28),
            ctx.ui
                .paint(Style::Magenta, &fit(r.branch.as_deref().unwrap_or("-"), 14)),
            ctx.ui
                .paint(Style::Yellow, &fit(&short[r.id.as_str()], id_width)),
            r.turns,
            output::tokens(r.total_tokens()),
            fit(&title, 70).trim_end(),
            missing
        );
        ctx.ui.line(&line)?;
        for link in continuation_lines(&links, &r.id) {
            ctx.ui
                .line(&ctx.ui.paint(Style::Dim, &format!("  ↳ {link}")))?;
        }
    }
    Ok(0)
}

/// The continuation links of one session, both ways, as `show` and `list` print them:
/// "continues claude-code session ID", "continued in codex as ID".
pub fn continuation_lines(links: &[ContinuationLink], id: &str) -> Vec<String> {
    let mut out = Vec::new();
    for l in links.iter().filter(|l| l.continuation_id == id) {
        out.push(format!(
            "continues {} session {}",
            l.original_source, l.original_id
        ));
    }
    for l in links.iter().filter(|l| l.original_id == id) {
        out.push(format!(
            "continued in {} as {}",
            l.continuation_source, l.continuation_id
        ));
    }
    out
}
