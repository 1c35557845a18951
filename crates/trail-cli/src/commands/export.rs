//! `trail export`: write sessions as Markdown, HTML, JSON or VS Code chat files, secrets
//! redacted unless `--no-redact`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use trail_query::{Clock, ListRequest, Query, SessionRow};
use trail_render::{ExportOptions, Exporter, Format, Redactor};

use crate::commands::filter::SessionArgs;
use crate::commands::open_query;
use crate::error::{CliError, CliResult};
use crate::Ctx;

/// Output buffer per file: large writes keep the export I/O-light.
const BUFFER: usize = 256 << 10;

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// Markdown
    Md,
    /// Self-contained HTML pages
    Html,
    /// The normalized session model (docs/session.schema.json)
    Json,
    /// VS Code "Export Chat" files (open with "Chat: Import Chat...")
    Vscode,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Md => Format::Markdown,
            FormatArg::Html => Format::Html,
            FormatArg::Json => Format::Json,
            FormatArg::Vscode => Format::Vscode,
        }
    }
}

#[derive(Debug, clap::Args)]
#[command(
    mut_arg("source", |a| a.help("With --all: only sessions from this source")),
    mut_arg("repo", |a| a.help("With --all: only sessions whose repository (owner/name) or folder contains this text")),
    mut_arg("since", |a| a.help("With --all: only sessions active since this time (7d, 24h, 2026-11-01)")),
    mut_arg("until", |a| a.help("With --all: only sessions started before this time")),
)]
pub struct Args {
    /// Session ids (a unique prefix is enough)
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    ids: Vec<String>,
    /// Export every session matching the filters (subagents are nested in their parents)
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    filter: SessionArgs,
    /// Output format
    #[arg(long, value_enum, default_value_t = FormatArg::Md)]
    format: FormatArg,
    /// Write one file per session into this folder (`-` for stdout, the default)
    #[arg(long, short, value_name = "DIR", default_value = "-")]
    out: PathBuf,
    /// Include the model's reasoning in Markdown and HTML
    #[arg(long)]
    thinking: bool,
    /// Do not redact secrets (the export then holds tokens and passwords as recorded)
    #[arg(long)]
    no_redact: bool,
    /// Also redact matches of this regular expression (repeatable; a group named `s...` limits the replacement to it)
    #[arg(long, value_name = "REGEX")]
    redact_pattern: Vec<String>,
    /// Also redact the patterns in this file (one regular expression per line, `#` comments)
    #[arg(long, value_name = "PATH", env = "TRAIL_REDACT_PATTERNS")]
    redact_patterns_file: Option<PathBuf>,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    if !args.all && args.filter.is_set() {
        return Err(CliError::usage(
            "--source, --repo, --since and --until choose the sessions of --all",
        )
        .with_hint("add --all, or name the sessions by id"));
    }
    let redactor = build_redactor(&args)?;
    let query = open_query(ctx)?;
    let sessions = select(&query, &args)?;
    let ids: Vec<String> = sessions.iter().map(|s| s.id.to_string()).collect();
    let store = query.session_store(&ids)?;
    let format = Format::from(args.format);
    let to_stdout = args.out.as_os_str() == "-";
    if to_stdout && sessions.len() > 1 && matches!(format, Format::Html | Format::Vscode) {
        return Err(CliError::usage(format!(
            "{} sessions selected; {} writes one file per session",
            sessions.len(),
            format.extension()
        ))
        .with_hint("give --out DIR"));
    }
    if sessions.is_empty() {
        ctx.ui.status("No sessions match.");
        return Ok(0);
    }
    let mut exporter = Exporter::new(
        &store,
        &redactor,
        ExportOptions {
            thinking: args.thinking,
            agent_name: Some(trail_sources::name_of),
        },
    );
    let mut bytes = 0u64;
    if to_stdout {
        let stdout = io::stdout();
        let mut w = Counting::new(BufWriter::with_capacity(BUFFER, stdout.lock()));
        for (i, s) in sessions.iter().enumerate() {
            if i > 0 && format == Format::Markdown {
                w.write_all(b"\n---\n\n")?;
            }
            exporter.write_session(s, format, &mut w)?;
        }
        w.flush()?;
        bytes = w.count;
    } else {
        let dir = &args.out;
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::from(anyhow::anyhow!("cannot create {}: {e}", dir.display())))?;
        for s in &sessions {
            let path = dir.join(trail_render::file_name(&s.id, format));
            bytes += write_file(&path, |w| exporter.write_session(s, format, w))?;
        }
        if format == Format::Html && (args.all || sessions.len() > 1) {
            let path = dir.join("index.html");
            bytes += write_file(&path, |w| exporter.write_html_index(&sessions, w))?;
        }
    }
    let place = if to_stdout {
        "stdout".to_string()
    } else {
        args.out.display().to_string()
    };
    let noun = if sessions.len() == 1 {
        "session"
    } else {
        "sessions"
    };
    let mut summary = format!(
        "Exported {} {noun} ({}, {:.1} MB) to {place}.",
        sessions.len(),
        format.extension(),
        bytes as f64 / 1e6
    );
    if !redactor.enabled() {
        summary.push_str(" Redaction is off (--no-redact).");
    } else {
        let counts = exporter.counts();
        if counts.total() == 0 {
            summary.push_str(" No secrets found to redact.");
        } else {
            let kinds: Vec<String> = counts.0.iter().map(|(k, n)| format!("{n} {k}")).collect();
            summary.push_str(&format!(
                " Redacted {} values: {}.",
                counts.total(),
                kinds.join(", ")
            ));
        }
    }
    ctx.ui.status(&summary);
    Ok(0)
}

fn build_redactor(args: &Args) -> CliResult<Redactor> {
    if args.no_redact {
        return Ok(Redactor::disabled());
    }
    let mut patterns = args.redact_pattern.clone();
    if let Some(path) = &args.redact_patterns_file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            CliError::usage(format!(
                "cannot read redaction patterns {}: {e}",
                path.display()
            ))
        })?;
        patterns.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_string),
        );
    }
    Redactor::new(&patterns).map_err(CliError::usage)
}

fn select(query: &Query, args: &Args) -> CliResult<Vec<SessionRow>> {
    if !args.all {
        let mut out: Vec<SessionRow> = Vec::new();
        for id in &args.ids {
            let row = query.session(id)?;
            if !out.iter().any(|s| s.id == row.id) {
                out.push(row);
            }
        }
        return Ok(out);
    }
    let page = query.list(
        &ListRequest {
            filter: args.filter.session_filter(),
            ..ListRequest::default()
        },
        &Clock::utc_now(),
    )?;
    Ok(page.sessions)
}

/// Writes one file through a buffer; returns the bytes written.
fn write_file(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> trail_render::Result<()>,
) -> CliResult<u64> {
    let file = File::create(path)
        .map_err(|e| CliError::from(anyhow::anyhow!("cannot write {}: {e}", path.display())))?;
    let mut w = Counting::new(BufWriter::with_capacity(BUFFER, file));
    f(&mut w)?;
    w.flush()?;
    Ok(w.count)
}

/// A writer that counts the bytes it passes on.
struct Counting<W: Write> {
    inner: W,
    count: u64,
}

impl<W: Write> Counting<W> {
    fn new(inner: W) -> Self {
        Counting { inner, count: 0 }
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
