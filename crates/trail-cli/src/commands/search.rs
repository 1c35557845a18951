//! `trail search QUERY`: full-text search over prompts, answers, tool calls and their outputs,
//! one hit per turn, each with the command that opens it.

use trail_query::{
    open_command, Clock, JsonHit, SearchHit, SearchRequest, SessionFilter, HIT_END, HIT_START,
};

use crate::commands::filter::SessionArgs;
use crate::commands::open_query;
use crate::error::{CliError, CliResult};
use crate::output::{self, Style};
use crate::Ctx;

/// Characters of a snippet shown on a terminal line.
const SNIPPET_CHARS: usize = 220;

#[derive(Debug, clap::Args)]
#[command(
    mut_arg("repo", |a| a.help("Only sessions whose repository (owner/name) contains this text")),
    mut_arg("since", |a| a.help("Only messages since this time (7d, 24h, 2026-11-01)")),
    mut_arg("until", |a| a.help("Only messages before this time")),
)]
pub struct Args {
    /// What to find: words (all must match), "a phrase", prefix*, OR, NOT
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    query: Vec<String>,
    #[command(flatten)]
    filter: SessionArgs,
    /// Only sessions whose folder contains this text
    #[arg(long)]
    cwd: Option<String>,
    /// Only sessions on this git branch
    #[arg(long)]
    branch: Option<String>,
    /// Only what the user, the assistant or a tool wrote
    #[arg(long, value_enum)]
    role: Option<RoleArg>,
    /// Only sessions that used a model whose name contains this text
    #[arg(long)]
    model: Option<String>,
    /// Only this session (a unique id prefix is enough)
    #[arg(long)]
    session: Option<String>,
    /// Order hits by relevance (bm25) or newest first
    #[arg(long, value_enum, default_value_t = SortArg::Relevance)]
    sort: SortArg,
    /// At most this many hits
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Print the hits as a JSON array (see docs/json.md)
    #[arg(long, conflicts_with = "jsonl")]
    json: bool,
    /// Print one JSON hit per line
    #[arg(long)]
    jsonl: bool,
    /// Search the words as typed: no near spelling when a word matches nothing or few turns
    #[arg(long)]
    exact: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum RoleArg {
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SortArg {
    Relevance,
    Recent,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query_store = open_query(ctx)?;
    let query = args.query.join(" ");
    let request = SearchRequest {
        query: query.clone(),
        filter: SessionFilter {
            cwd: args.cwd.clone(),
            branch: args.branch.clone(),
            model: args.model.clone(),
            ..args.filter.session_filter()
        },
        role: args.role.map(|r| {
            match r {
                RoleArg::User => "user",
                RoleArg::Assistant => "assistant",
                RoleArg::Tool => "tool",
            }
            .to_string()
        }),
        session: args.session.clone(),
        recent: args.sort == SortArg::Recent,
        limit: args.limit,
        exact: args.exact,
        ..SearchRequest::default()
    };
    let results = query_store
        .search(&request, &Clock::utc_now())
        .map_err(|e| match e {
            trail_query::QueryError::Store(trail_store::StoreError::InvalidQuery(m)) => {
                CliError::usage(format!("cannot search for {query:?}: {m}")).with_hint(
                    "plain words must all match; use \"a phrase\", prefix*, OR, NOT (for example: timeout OR deadline NOT test)",
                )
            }
            e => e.into(),
        })?;
    // On stderr, so that the hits on stdout stay what the format says (and a script sees it).
    if let Some(c) = &results.correction {
        ctx.ui.status(&c.message());
    }
    // What the hits' open commands mark: the query searched, when it replaced the typed one.
    let query = match &results.correction {
        Some(c) if c.no_match => c.query.clone(),
        _ => query,
    };
    if args.json || args.jsonl {
        let hits: Vec<JsonHit> = results
            .hits
            .iter()
            .map(|h| JsonHit::new(h, &query))
            .collect();
        if args.json {
            ctx.ui.json(&hits)?;
        } else {
            for h in &hits {
                ctx.ui.json_line(h)?;
            }
        }
        return Ok(if hits.is_empty() { 1 } else { 0 });
    }
    if results.hits.is_empty() {
        ctx.ui.status(&format!("No matches for {query:?}."));
        return Ok(1);
    }
    let short = query_store.short_ids(results.hits.iter().map(|h| h.session_id.as_str()))?;
    for (i, h) in results.hits.iter().enumerate() {
        if i > 0 {
            ctx.ui.line("")?;
        }
        print_hit(ctx, h, &query, &short[&h.session_id])?;
    }
    if results.capped {
        ctx.ui.status(&format!(
            "Ranked the {} most recently indexed matches; add words or filters to narrow it.",
            results.ranked
        ));
    }
    Ok(0)
}

fn print_hit(ctx: &mut Ctx, h: &SearchHit, query: &str, short_id: &str) -> CliResult {
    let ui = &mut ctx.ui;
    let title = output::one_line(h.title.as_deref().unwrap_or("(untitled)"));
    let mut facts = vec![h.source.clone(), output::when(h.timestamp.as_deref())];
    if let Some(place) = h.repository.clone().or_else(|| h.cwd.clone()) {
        facts.push(match &h.branch {
            Some(b) => format!("{place} ({b})"),
            None => place,
        });
    }
    facts.push(match h.turn {
        Some(t) => format!("turn {t}"),
        None => "before the first prompt".to_string(),
    });
    facts.push(what(h));
    ui.line(&format!(
        "{}  {}",
        ui.paint(Style::Bold, output::fit(&title, 80).trim_end()),
        ui.paint(Style::Dim, &facts.join(" · "))
    ))?;
    let snippet = output::one_line(&h.snippet);
    let snippet = cut_chars(&snippet, SNIPPET_CHARS);
    let (open, close) = ui.marks(Style::Hit, ("**", "**"));
    let rendered = snippet.replace(HIT_START, open).replace(HIT_END, close);
    ui.line(&format!("  {rendered}"))?;
    ui.line(&ui.paint(
        Style::Cyan,
        &format!("  {}", open_command(short_id, h.turn, query)),
    ))?;
    Ok(())
}

/// Says what matched: the prompt, the answer, a tool's input or output.
fn what(h: &SearchHit) -> String {
    let tool = h.tool_name.as_deref().unwrap_or("tool");
    match (h.kind.as_deref(), h.field.as_str()) {
        (Some("prompt"), _) => "prompt".to_string(),
        (Some("text"), _) => "answer".to_string(),
        (Some("tool_call"), "tool_input") => format!("{tool} input"),
        (Some("tool_call"), _) => format!("{tool} call"),
        (Some("tool_result"), _) => format!("{tool} output"),
        (Some(k), _) => k.to_string(),
        (None, _) => "message".to_string(),
    }
}

/// Cuts to `n` characters (marks included) with an ellipsis, keeping marks balanced.
fn cut_chars(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n).collect();
    if out.matches(HIT_START).count() > out.matches(HIT_END).count() {
        out.push(HIT_END);
    }
    out.push('…');
    out
}
