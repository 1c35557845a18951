//! `trail index`: discover agent sessions and index what is new or changed.

use std::path::PathBuf;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use trail_ingest::{IndexOptions, IndexSummary, Progress};
use trail_model::SourceKind;
use trail_store::Store;

use crate::error::{CliError, CliResult};
use crate::output::Style;
use crate::{config, Ctx};

/// Parse problems listed after the summary (all are in `trail doctor`).
const SHOWN_PROBLEMS: usize = 10;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files or folders to index (format detected); default: every known location
    paths: Vec<PathBuf>,
    /// Only index these sources (claude-code, copilot-vscode, copilot-cli, codex, ...)
    #[arg(long = "source", value_name = "SOURCE", value_parser = parse_source)]
    sources: Vec<SourceKind>,
    /// Look for a source's files here instead of its default location (SOURCE=PATH)
    #[arg(long = "root", value_name = "SOURCE=PATH", value_parser = parse_root)]
    roots: Vec<(SourceKind, PathBuf)>,
    /// Reparse every file, even unchanged ones
    #[arg(long)]
    force: bool,
    /// Print the summary as JSON
    #[arg(long)]
    json: bool,
}

pub fn parse_source(s: &str) -> Result<SourceKind, String> {
    SourceKind::parse(s).ok_or_else(|| {
        let all: Vec<&str> = SourceKind::ALL.iter().map(|k| k.as_str()).collect();
        format!("unknown source {s:?}; one of: {}", all.join(", "))
    })
}

fn parse_root(s: &str) -> Result<(SourceKind, PathBuf), String> {
    let (k, p) = s
        .split_once('=')
        .ok_or_else(|| format!("expected SOURCE=PATH, got {s:?}"))?;
    Ok((parse_source(k)?, PathBuf::from(p)))
}

struct Bar(ProgressBar);

impl Progress for Bar {
    fn start(&self, files: u64, bytes: u64) {
        self.0.set_length(bytes);
        self.0.set_message(format!("{files} files"));
        self.0.enable_steady_tick(Duration::from_millis(120));
    }
    fn advance(&self, bytes: u64) {
        self.0.inc(bytes);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    for p in &args.paths {
        if !p.exists() {
            return Err(CliError::usage(format!("{} does not exist", p.display())));
        }
    }
    let roots = config::source_roots(&ctx.env, ctx.home.as_deref(), &args.roots);
    let options = IndexOptions {
        roots,
        paths: args.paths.clone(),
        sources: args.sources.clone(),
        force: args.force,
        chunk_bytes: None,
    };
    let mut store = Store::open(&ctx.store_path)?;
    let bar = if ctx.ui.stderr_tty && !args.json {
        let pb = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        pb.set_style(
            ProgressStyle::with_template(
                "{spinner} indexing {msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        Some(Bar(pb))
    } else {
        None
    };
    let progress: &dyn Progress = match &bar {
        Some(b) => b,
        None => &trail_ingest::NoProgress,
    };
    let summary = trail_ingest::index(&mut store, &options, progress)?;
    let total_sessions: i64 = store
        .connection()
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap_or(0);
    if args.json {
        ctx.ui.json(&summary)?;
    } else {
        print_summary(ctx, &summary, total_sessions, args.paths.is_empty())?;
    }
    Ok(if summary.files_failed > 0 { 1 } else { 0 })
}

fn print_summary(
    ctx: &mut Ctx,
    s: &IndexSummary,
    total_sessions: i64,
    default_locations: bool,
) -> CliResult {
    let secs = s.elapsed_ms as f64 / 1000.0;
    let mut line = format!(
        "Indexed {} new and {} updated sessions from {} files in {secs:.2}s ({} parsed, {} resumed, {} unchanged",
        s.sessions_new,
        s.sessions_updated,
        s.files_seen,
        s.files_parsed,
        s.files_resumed,
        s.files_unchanged
    );
    if s.files_failed > 0 {
        line.push_str(&format!(", {} failed", s.files_failed));
    }
    if s.files_missing > 0 {
        line.push_str(&format!(", {} gone from disk (kept)", s.files_missing));
    }
    if s.files_upgraded > 0 {
        line.push_str(&format!(
            ", {} read again by an updated parser",
            s.files_upgraded
        ));
    }
    line.push_str(&format!(
        "); {} parse problems. The store holds {total_sessions} sessions.",
        s.issues.len()
    ));
    ctx.ui.line(&line)?;
    for (path, err) in &s.failures {
        let msg = format!("  failed: {path}: {err}");
        ctx.ui.line(&ctx.ui.paint(Style::Red, &msg))?;
    }
    for i in s.issues.iter().take(SHOWN_PROBLEMS) {
        let loc = match i.line {
            Some(l) => format!("{}:{l}", i.path),
            None => i.path.clone(),
        };
        let msg = format!("  {loc}: {}", i.reason);
        ctx.ui.line(&ctx.ui.paint(Style::Yellow, &msg))?;
    }
    if s.issues.len() > SHOWN_PROBLEMS {
        ctx.ui.line(&format!(
            "  ... and {} more (see `trail doctor`)",
            s.issues.len() - SHOWN_PROBLEMS
        ))?;
    }
    if s.files_seen == 0 && total_sessions == 0 && default_locations {
        ctx.ui
            .line("No agent history found on this machine. Looked in:")?;
        for (source, roots) in &s.searched {
            // A format with no default place (VS Code exports) is read from files you name.
            let places = if roots.is_empty() {
                "no default place: `trail import FILE` or `trail index PATH`".to_string()
            } else {
                roots.join(", ")
            };
            ctx.ui.line(&format!("  {source}: {places}"))?;
        }
        ctx.ui
            .line("Try the bundled samples (a separate store, so nothing mixes with yours):")?;
        ctx.ui.line(
            "  trail --store /tmp/trail-demo.db --home examples/home index && trail --store /tmp/trail-demo.db list",
        )?;
    }
    Ok(())
}
