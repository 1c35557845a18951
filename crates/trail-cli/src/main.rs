//! `trail`: one fast, local, searchable history of every AI coding agent session.

#![allow(clippy::print_stderr)]

mod agents;
mod blocks_view;
mod commands;
mod config;
mod error;
mod output;
mod tui_config;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::config::Env;
use crate::error::{CliError, CliResult};
use crate::output::{ColorChoice, Ui};

/// `trail --version`: the version, the git commit it was built from and the build date
/// (build.rs), e.g. `trail 0.1.0 (8de27b9a1c2e 2026-11-27)`.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("TRAIL_GIT_COMMIT"),
    " ",
    env!("TRAIL_BUILD_DATE"),
    ")"
);

/// One searchable history of every AI coding agent session on this machine.
#[derive(Debug, Parser)]
#[command(name = "trail", version = VERSION, about, long_about = None, propagate_version = true)]
struct Cli {
    /// Use this store instead of $TRAIL_STORE or ~/.local/share/trail/trail.db; a
    /// postgres://... URL reads a team store (list, show, search, sql, usage, standup, tips,
    /// improve, why)
    #[arg(long, global = true, value_name = "PATH|URL")]
    store: Option<PathBuf>,
    /// On a team store: only sessions this database role pushed
    #[arg(long, global = true, value_name = "ROLE")]
    user: Option<String>,
    /// On a team store: only sessions pushed from this machine
    #[arg(long, global = true, value_name = "NAME")]
    host: Option<String>,
    /// Look for agent history under this folder instead of the home directory (try `examples/home`)
    #[arg(long, global = true, value_name = "DIR", env = "TRAIL_HOME")]
    home: Option<PathBuf>,
    /// Read settings from this file instead of $TRAIL_CONFIG or ~/.config/trail/config.toml
    #[arg(long, global = true, value_name = "PATH")]
    config: Option<PathBuf>,
    /// When to use colour
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Log more to stderr (-v info, -vv debug); never logs message content
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Option<Command>,
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
    /// Show tokens and cost by day, week, month, model, session, repository, source or 5-hour block
    Usage(commands::usage::Args),
    /// Print one status line (model, costs, 5-hour block, context) from an agent's hook JSON on stdin
    Statusline(commands::statusline::Args),
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
    /// Show what a session changed, as unified diffs per file (exit 1 when nothing)
    Diff(commands::diff::Args),
    /// Serve MCP on stdio so agents can search and read their history (--print-config AGENT)
    Mcp(commands::mcp::Args),
    /// Browse and search every session in the terminal, as you type (also: `trail` alone)
    Tui(commands::tui::Args),
    /// Serve a local web viewer for every session (127.0.0.1 only; --watch keeps it fresh)
    Serve(commands::serve::Args),
    /// Push new and changed sessions to a team store on PostgreSQL (redacted; --dry-run)
    Sync(commands::sync::Args),
    /// Manage the team store's schema (`trail db migrate`)
    Db(commands::db::Args),
    /// Remove sessions from the store for good; the next sync removes them from the team store
    Forget(commands::forget::Args),
    /// Run `trail index --watch` at login as a service (systemd, launchd, Task Scheduler)
    Service(commands::service::Args),
    /// Print the completion script for a shell: bash, zsh, fish, powershell, elvish
    Completions(commands::completions::Args),
    /// Print the manual page (roff), or write one page per command with --dir
    Man(commands::man::Args),
}

impl Command {
    /// Whether the command reads a team store (`--store postgres://...`) as well as a local
    /// one; the others work on the local store only.
    fn reads_team_store(&self) -> bool {
        matches!(
            self,
            Command::List(_)
                | Command::Show(_)
                | Command::Search(_)
                | Command::Sql(_)
                | Command::Usage(_)
                | Command::Standup(_)
                | Command::Tips(_)
                | Command::Improve(_)
                | Command::Why(_)
                | Command::Diff(_)
                | Command::Db(_)
        )
    }

    fn name(&self) -> &'static str {
        match self {
            Command::Index(_) => "index",
            Command::Resume(_) => "resume",
            Command::Doctor(_) => "doctor",
            Command::Statusline(_) => "statusline",
            Command::Export(_) => "export",
            Command::Import(_) => "import",
            Command::Mcp(_) => "mcp",
            Command::Tui(_) => "tui",
            Command::Serve(_) => "serve",
            Command::Sync(_) => "sync",
            Command::Forget(_) => "forget",
            Command::Service(_) => "service",
            _ => "this command",
        }
    }
}

/// What every command receives.
pub struct Ctx {
    pub env: Env,
    pub store_path: PathBuf,
    /// `--store postgres://...` (or `TRAIL_STORE`): the team store reads go to.
    pub team_store: Option<String>,
    /// `--user` / `--host`: whose sessions a team store's reads see.
    pub team_scope: trail_postgres::TeamScope,
    pub home: Option<PathBuf>,
    pub ui: Ui,
    /// The config file, read once.
    pub config: config::LoadedConfig,
}

impl Ctx {
    /// "Now": the clock, or `TRAIL_NOW` (tests).
    pub fn now(&self) -> CliResult<chrono::DateTime<chrono::Utc>> {
        config::now(&self.env).map_err(CliError::usage)
    }
}

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    // `trail` alone opens the browser on a terminal; elsewhere it prints the help, as a
    // missing subcommand always did.
    let command = match cli.command.take() {
        Some(c) => c,
        None if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() => {
            Command::Tui(commands::tui::Args::default())
        }
        None => {
            eprintln!("{}", Cli::command().render_help());
            return ExitCode::from(2);
        }
    };
    init_logging(cli.verbose);
    // Completions and the manual describe the command line itself: no store, no config.
    if let Some(code) = describe_the_command_line(&command) {
        return code;
    }
    let env = Env::from_process();
    let ui = Ui::new(cli.color, env.get("NO_COLOR").is_some());
    let Some(store_path) = config::store_path(cli.store.as_deref(), &env) else {
        eprintln!("error: no home directory; give --store PATH or set TRAIL_STORE");
        return ExitCode::from(2);
    };
    let loaded = match config::load_config(config::config_path(cli.config.as_deref(), &env)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
    }
    let team_store = store_path
        .to_str()
        .filter(|s| trail_postgres::is_postgres_url(s))
        .map(str::to_string);
    if team_store.is_some() && !command.reads_team_store() {
        eprintln!(
            "error: `trail {}` works on the local store; a team store (postgres://...) is read with list, show, search, sql, usage, standup, tips, improve, why and diff",
            command.name()
        );
        return ExitCode::from(2);
    }
    if team_store.is_none()
        && (cli.user.is_some() || cli.host.is_some())
        && command.reads_team_store()
    {
        eprintln!("error: --user and --host filter a team store: give --store postgres://...");
        return ExitCode::from(2);
    }
    let mut ctx = Ctx {
        env,
        store_path,
        team_store,
        team_scope: trail_postgres::TeamScope {
            user: cli.user.clone(),
            host: cli.host.clone(),
        },
        home: cli.home.clone(),
        ui,
        config: loaded,
    };
    let result = run(&mut ctx, command).and_then(|code| {
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
        Command::Statusline(a) => commands::statusline::run(ctx, a),
        Command::Standup(a) => commands::standup::run(ctx, a),
        Command::Tips(a) => commands::tips::run(ctx, a),
        Command::Improve(a) => commands::improve::run(ctx, a),
        Command::Export(a) => commands::export::run(ctx, a),
        Command::Import(a) => commands::import::run(ctx, a),
        Command::Why(a) => commands::why::run(ctx, a),
        Command::Diff(a) => commands::diff::run(ctx, a),
        Command::Mcp(a) => commands::mcp::run(ctx, a),
        Command::Tui(a) => commands::tui::run(ctx, a),
        Command::Serve(a) => commands::serve::run(ctx, a),
        Command::Sync(a) => commands::sync::run(ctx, a),
        Command::Db(a) => commands::db::run(ctx, a),
        Command::Forget(a) => commands::forget::run(ctx, a),
        Command::Service(a) => commands::service::run(ctx, a),
        Command::Completions(_) | Command::Man(_) => Ok(0),
    }
}

/// Runs `completions` and `man`, which need neither a store nor a config; `None` for every
/// other command.
fn describe_the_command_line(command: &Command) -> Option<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    let result = match command {
        Command::Completions(a) => {
            commands::completions::write(a, &mut Cli::command(), &mut stdout)
        }
        Command::Man(a) => commands::man::write(a, Cli::command(), &mut stdout),
        _ => return None,
    };
    Some(match result {
        Ok(code) => ExitCode::from(code),
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => report(e),
    })
}

fn report(e: CliError) -> ExitCode {
    // Errors quote paths, ids and queries the user or a transcript supplied: show them inert.
    let safe = trail_render::terminal_safe;
    eprintln!("error: {}", safe(&format!("{:#}", e.error)));
    for h in &e.hints {
        eprintln!("hint: {}", safe(h));
    }
    ExitCode::from(e.exit_code() as u8)
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    // The MCP SDK logs each error response with its message at warn (and requests at debug),
    // which would put what a model asked on stderr: only its own failures are shown.
    let default = format!("{default},rmcp=error");
    let filter = tracing_subscriber::EnvFilter::try_from_env("TRAIL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Log fields carry file paths, which can hold any byte: lines go out terminal-safe,
        // so tracing's own colours are off (they would show as symbols).
        .with_writer(|| trail_render::TerminalSafeWriter::new(std::io::stderr()))
        .with_ansi(false)
        .without_time()
        .try_init();
}
