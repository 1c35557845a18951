//! `trail`: one fast, local, searchable history of every AI coding agent session.

#![allow(clippy::print_stderr)]

mod commands;
mod config;
mod error;
mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::Env;
use crate::error::{CliError, CliResult};
use crate::output::{ColorChoice, Ui};

/// One searchable history of every AI coding agent session on this machine.
#[derive(Debug, Parser)]
#[command(name = "trail", version, about, long_about = None, propagate_version = true)]
struct Cli {
    /// Use this store instead of $TRAIL_STORE or ~/.local/share/trail/trail.db
    #[arg(long, global = true, value_name = "PATH")]
    store: Option<PathBuf>,
    /// Look for agent history under this folder instead of the home directory (try `examples/home`)
    #[arg(long, global = true, value_name = "DIR", env = "TRAIL_HOME")]
    home: Option<PathBuf>,
    /// When to use colour
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Log more to stderr (-v info, -vv debug); never logs message content
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Discover agent sessions and index new or changed ones
    Index(commands::index::Args),
    /// List recent sessions
    List(commands::list::Args),
    /// Print a session's transcript
    Show(commands::show::Args),
    /// Search prompts, answers, tool calls and outputs (exit 1 when nothing matches)
    Search(commands::search::Args),
    /// Run one read-only SELECT on the store (`--schema` describes the tables)
    Sql(commands::sql::Args),
    /// Print (or --exec) the command that reopens a session in its agent
    Resume(commands::resume::Args),
    /// Show where trail looked, what it found and what it could not read
    Doctor(commands::doctor::Args),
    /// Show tokens and cost by day, week, month, model, session, repository or source
    Usage(commands::usage::Args),
    /// Summarize recent work by repository and branch (default: the last 24 hours)
    Standup(commands::standup::Args),
    /// Show usage patterns and tips, with the numbers behind them
    Tips(commands::tips::Args),
    /// Show where the agents struggled, with evidence, and what to tell them
    Improve(commands::improve::Args),
    /// Export sessions as Markdown, HTML, JSON or VS Code chat files, secrets redacted
    Export(commands::export::Args),
    /// Store named files: VS Code "Export Chat" files or any session file trail reads
    Import(commands::import::Args),
    /// Show the sessions that read or edited a file; with :LINE, the session behind that line
    Why(commands::why::Args),
    /// Serve a local web viewer for every session (127.0.0.1 only; --watch keeps it fresh)
    Serve(commands::serve::Args),
}

/// What every command receives.
pub struct Ctx {
    pub env: Env,
    pub store_path: PathBuf,
    pub home: Option<PathBuf>,
    pub ui: Ui,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let env = Env::from_process();
    let ui = Ui::new(cli.color, env.get("NO_COLOR").is_some());
    let Some(store_path) = config::store_path(cli.store.as_deref(), &env) else {
        eprintln!("error: no home directory; give --store PATH or set TRAIL_STORE");
        return ExitCode::from(2);
    };
    let mut ctx = Ctx {
        env,
        store_path,
        home: cli.home.clone(),
        ui,
    };
    let result = run(&mut ctx, cli.command).and_then(|code| {
        ctx.ui.flush()?;
        Ok(code)
    });
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => report(e),
    }
}

fn run(ctx: &mut Ctx, command: Command) -> CliResult<u8> {
    match command {
        Command::Index(a) => commands::index::run(ctx, a),
        Command::List(a) => commands::list::run(ctx, a),
        Command::Show(a) => commands::show::run(ctx, a),
        Command::Search(a) => commands::search::run(ctx, a),
        Command::Sql(a) => commands::sql::run(ctx, a),
        Command::Resume(a) => commands::resume::run(ctx, a),
        Command::Doctor(a) => commands::doctor::run(ctx, a),
        Command::Usage(a) => commands::usage::run(ctx, a),
        Command::Standup(a) => commands::standup::run(ctx, a),
        Command::Tips(a) => commands::tips::run(ctx, a),
        Command::Improve(a) => commands::improve::run(ctx, a),
        Command::Export(a) => commands::export::run(ctx, a),
        Command::Import(a) => commands::import::run(ctx, a),
        Command::Why(a) => commands::why::run(ctx, a),
        Command::Serve(a) => commands::serve::run(ctx, a),
    }
}

fn report(e: CliError) -> ExitCode {
    eprintln!("error: {:#}", e.error);
    for h in &e.hints {
        eprintln!("hint: {h}");
    }
    ExitCode::from(e.exit_code() as u8)
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("TRAIL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .try_init();
}
