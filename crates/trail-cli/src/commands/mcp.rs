//! `trail mcp`: serves MCP over stdio so agents can search and read their own history, or with
//! `--print-config AGENT` prints the snippet that registers it with an agent.

use std::path::PathBuf;

use trail_ingest::IndexOptions;
use trail_mcp::{Agent, McpConfig};
use trail_model::SourceKind;

use crate::agents::parse_root;
use crate::error::{CliError, CliResult};
use crate::{config, Ctx};

/// Fewest characters `--max-chars` accepts (a page must hold a message's head and a piece).
const MIN_MAX_CHARS: usize = 2_000;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the snippet that registers trail with AGENT (claude-code, vscode, copilot-cli, codex, gemini-cli, cursor, opencode) and exit
    #[arg(long, value_name = "AGENT", value_parser = parse_agent)]
    print_config: Option<Agent>,
    /// Send transcripts as they are (default: secrets become [REDACTED:kind])
    #[arg(long)]
    no_redact: bool,
    /// Largest response in characters (text and structured content together)
    #[arg(long, default_value_t = trail_mcp::DEFAULT_MAX_CHARS, value_name = "N")]
    max_chars: usize,
    /// Before answering, index what changed when the last index is older than this (waiting at
    /// most 2 s for it)
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    refresh_after: f64,
    /// Never index before answering
    #[arg(long)]
    no_refresh: bool,
    /// Look for a source's files here instead of its default location (SOURCE=PATH)
    #[arg(long = "root", value_name = "SOURCE=PATH", value_parser = parse_root)]
    roots: Vec<(SourceKind, PathBuf)>,
}

fn parse_agent(s: &str) -> Result<Agent, String> {
    s.parse()
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    if args.max_chars < MIN_MAX_CHARS {
        return Err(CliError::usage(format!(
            "--max-chars must be at least {MIN_MAX_CHARS}"
        )));
    }
    if !(args.refresh_after >= 0.0 && args.refresh_after.is_finite()) {
        return Err(CliError::usage(
            "--refresh-after must be a number of seconds",
        ));
    }
    if let Some(agent) = args.print_config {
        return print_config(ctx, agent, &args);
    }
    let roots = config::source_roots(&ctx.env, ctx.home.as_deref(), &args.roots);
    let mut config = McpConfig::new(
        ctx.store_path.clone(),
        IndexOptions {
            roots,
            project_roots: config::project_roots(&ctx.env, ctx.home.as_deref(), &ctx.config.config),
            ..IndexOptions::default()
        },
    );
    config.redact = !args.no_redact;
    config.continue_homes = config::continue_homes(&ctx.env, ctx.home.as_deref());
    config.max_chars = args.max_chars;
    config.refresh_after =
        (!args.no_refresh).then(|| std::time::Duration::from_secs_f64(args.refresh_after));
    trail_mcp::serve_stdio(config)?;
    Ok(0)
}

/// Prints how `agent` starts this server: this binary's absolute path (agents started from a
/// desktop often lack the shell's PATH) and the options this command was given.
fn print_config(ctx: &mut Ctx, agent: Agent, args: &Args) -> CliResult<u8> {
    let exe = std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "trail".to_string());
    let mut argv: Vec<String> = Vec::new();
    // A store other than the default one must be named, or the agent would read the default.
    if config::default_store_path(&ctx.env).as_ref() != Some(&ctx.store_path) {
        argv.push("--store".into());
        argv.push(ctx.store_path.to_string_lossy().into_owned());
    }
    if let Some(home) = &ctx.home {
        argv.push("--home".into());
        argv.push(home.to_string_lossy().into_owned());
    }
    argv.push("mcp".into());
    if args.no_redact {
        argv.push("--no-redact".into());
    }
    if args.max_chars != trail_mcp::DEFAULT_MAX_CHARS {
        argv.push("--max-chars".into());
        argv.push(args.max_chars.to_string());
    }
    if args.no_refresh {
        argv.push("--no-refresh".into());
    } else if args.refresh_after != 60.0 {
        argv.push("--refresh-after".into());
        argv.push(args.refresh_after.to_string());
    }
    for (source, path) in &args.roots {
        argv.push("--root".into());
        argv.push(format!("{}={}", source.as_str(), path.display()));
    }
    // The snippet alone on stdout (it can be redirected into the file); where it goes on
    // stderr.
    let snippet = trail_mcp::snippet(agent, &exe, &argv);
    ctx.ui.status(&format!("Put this in {}:", snippet.place));
    ctx.ui.line(&snippet.text)?;
    Ok(0)
}
