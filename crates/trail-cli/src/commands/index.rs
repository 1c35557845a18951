//! `trail index`: discover agent sessions and index what is new or changed.

use std::path::PathBuf;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use trail_ingest::{FileReason, IndexOptions, IndexSummary, Progress};
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
    /// Only index these sources (an id or an alias)
    #[arg(long = "source", value_name = "SOURCE", value_parser = crate::agents::source_parser())]
    sources: Vec<SourceKind>,
    /// Look for a source's files here instead of its default location (SOURCE=PATH, SOURCE one
    /// of --source's values)
    #[arg(long = "root", value_name = "SOURCE=PATH", value_parser = crate::agents::parse_root)]
    roots: Vec<(SourceKind, PathBuf)>,
    /// Reparse every file, even unchanged ones
    #[arg(long)]
    force: bool,
    /// Print the summary as JSON
    #[arg(long)]
    json: bool,
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
    // Named files that no source reads: when that is all the user named, say so before a
    // store is created for nothing (issue 21: `trail index notes.json` used to print "0 files"
    // and exit 0). Folders are walked once, by the index itself.
    if !args.paths.is_empty() && args.paths.iter().all(|p| p.is_file()) {
        let sources = trail_sources::registry();
        let unread: Vec<FileReason> = args
            .paths
            .iter()
            .filter(|p| trail_ingest::detect_paths(&sources, p).is_empty())
            .map(|p| FileReason {
                path: p.display().to_string(),
                reason: trail_ingest::NOT_A_SESSION_FILE.to_string(),
            })
            .collect();
        if unread.len() == args.paths.len() {
            return Err(nothing_readable(&unread));
        }
    }
    let roots = config::source_roots(&ctx.env, ctx.home.as_deref(), &args.roots);
    let options = IndexOptions {
        roots,
        paths: args.paths.clone(),
        sources: args.sources.clone(),
        project_roots: config::project_roots(&ctx.env, ctx.home.as_deref(), &ctx.config.config),
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
    if !args.paths.is_empty() && summary.unread_paths.len() == args.paths.len() {
        // Nothing the user named could be read (folders holding no session file).
        return Err(nothing_readable(&summary.unread_paths));
    }
    let total_sessions: i64 = store
        .connection()
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap_or(0);
    if args.json {
        ctx.ui.json(&summary)?;
    } else {
        print_summary(ctx, &summary, total_sessions, args.paths.is_empty())?;
    }
    // A named path that could not be read is a failure of this run, like a file that failed.
    Ok(
        if summary.files_failed > 0 || !summary.unread_paths.is_empty() {
            1
        } else {
            0
        },
    )
}

/// The usage error for an index of named paths none of which trail reads (exit 2): each one
/// by name, with the reason.
fn nothing_readable(unread: &[FileReason]) -> CliError {
    let each: Vec<String> = unread
        .iter()
        .map(|u| format!("{}: {}", u.path, u.reason))
        .collect();
    CliError::usage(each.join("; ")).with_hint(crate::agents::reads_hint())
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
    for u in &s.unread_paths {
        let msg = format!("  not read: {}: {}", u.path, u.reason);
        ctx.ui.line(&ctx.ui.paint(Style::Red, &msg))?;
    }
    // Named files that held no session say why; in a full discovery only the count is shown
    // (`--json` lists them), as agents leave such files routinely (Claude's title-only files).
    if default_locations {
        if !s.empty_files.is_empty() {
            ctx.ui.line(&format!(
                "  {} files held no session (`--json` lists them with the reason)",
                s.empty_files.len()
            ))?;
        }
    } else {
        for e in &s.empty_files {
            ctx.ui.line(&format!("  {}: {}", e.path, e.reason))?;
        }
    }
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
