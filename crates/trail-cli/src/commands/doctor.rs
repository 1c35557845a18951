//! `trail doctor`: where trail looked, what it found, what it could not read.

use std::path::PathBuf;

use serde::Serialize;
use trail_sources::registry;

use crate::commands::open_query;
use crate::error::{CliError, CliResult};
use crate::output::Style;
use crate::{config, Ctx};

/// Parse problems listed per run (all are in the store's `parse_issues` table).
const SHOWN_PROBLEMS: usize = 50;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct SourceReport {
    source: String,
    /// The agent's name: "Claude Code".
    name: String,
    roots: Vec<RootReport>,
    files_found: usize,
    files_indexed: i64,
    files_missing: i64,
    sessions: i64,
    parse_problems: i64,
}

/// Files of a format trail finds but cannot read.
#[derive(Debug, Serialize)]
struct UnreadableReport {
    name: String,
    files_found: usize,
    roots: Vec<String>,
    why: String,
}

#[derive(Debug, Serialize)]
struct RootReport {
    path: String,
    exists: bool,
}

#[derive(Debug, Serialize)]
struct Report {
    store: String,
    store_bytes: u64,
    schema_version: i64,
    chronicle_schema_version: i64,
    sources: Vec<SourceReport>,
    /// Only the formats with files on this machine.
    unreadable: Vec<UnreadableReport>,
    problems: Vec<trail_store::IssueRow>,
    files_with_notes: Vec<trail_store::DoctorFileStats>,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query = open_query(ctx)?;
    let store = query
        .local_store()
        .ok_or_else(|| CliError::usage("`trail doctor` checks the local store"))?;
    let roots = config::source_roots(&ctx.env, ctx.home.as_deref(), &[]);
    let stats = store.source_stats()?;
    let mut sources = Vec::new();
    let project_roots = config::project_roots(&ctx.env, ctx.home.as_deref(), &ctx.config.config);
    let known_cwds: Vec<PathBuf> = store.known_cwds()?.into_iter().map(PathBuf::from).collect();
    for src in registry() {
        let kind = src.kind();
        let mut r = roots.by_source.get(&kind).cloned().unwrap_or_default();
        let found = if src.project_markers().is_empty() {
            src.discover(&r).len()
        } else {
            // Found as `index` finds them: in the folders sessions ran in and under the
            // configured project roots (listed as this source's roots).
            r.extend(project_roots.iter().cloned());
            let markers = trail_sources::discover::project_markers(
                &known_cwds,
                &r,
                src.project_markers(),
                trail_sources::discover::PROJECT_ROOT_DEPTH,
            );
            src.discover(&markers).len()
        };
        let st = stats.iter().find(|s| s.source == kind.as_str());
        sources.push(SourceReport {
            source: kind.as_str().to_string(),
            name: trail_sources::display_name(kind).to_string(),
            roots: r
                .iter()
                .map(|p| RootReport {
                    path: p.display().to_string(),
                    exists: p.exists(),
                })
                .collect(),
            files_found: found,
            files_indexed: st.map_or(0, |s| s.files),
            files_missing: st.map_or(0, |s| s.files_missing),
            sessions: st.map_or(0, |s| s.sessions),
            parse_problems: st.map_or(0, |s| s.parse_issues),
        });
    }
    let store_bytes = trail_store::disk_bytes(&ctx.store_path);
    let chronicle: i64 = store
        .connection()
        .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .unwrap_or(0);
    let report = Report {
        store: ctx.store_path.display().to_string(),
        store_bytes,
        schema_version: store.schema_version()?,
        chronicle_schema_version: chronicle,
        sources,
        unreadable: unreadable(ctx),
        problems: store.parse_issues(None, SHOWN_PROBLEMS)?,
        files_with_notes: store.file_notes()?,
    };
    if args.json {
        ctx.ui.json(&report)?;
        return Ok(0);
    }
    let ui = &mut ctx.ui;
    ui.line(&format!(
        "Store: {} ({:.1} MB, schema {}, Chronicle-compatible v{})",
        report.store,
        report.store_bytes as f64 / 1e6,
        report.schema_version,
        report.chronicle_schema_version
    ))?;
    for s in &report.sources {
        ui.line("")?;
        ui.line(&format!(
            "{} ({}): {} files found, {} indexed{}, {} sessions, {} parse problems",
            ui.paint(Style::Bold, &s.name),
            s.source,
            s.files_found,
            s.files_indexed,
            if s.files_missing > 0 {
                format!(" ({} gone from disk, kept)", s.files_missing)
            } else {
                String::new()
            },
            s.sessions,
            s.parse_problems
        ))?;
        for r in &s.roots {
            let mark = if r.exists {
                ui.paint(Style::Green, "found")
            } else {
                ui.paint(Style::Dim, "absent")
            };
            ui.line(&format!("  looked in {} ({mark})", r.path))?;
        }
    }
    for u in &report.unreadable {
        ui.line("")?;
        ui.line(&format!(
            "{}: {} files found in {}, not read: {}",
            ui.paint(Style::Bold, &u.name),
            u.files_found,
            u.roots.join(", "),
            u.why
        ))?;
    }
    if !report.problems.is_empty() {
        ui.line("")?;
        ui.line(&ui.paint(
            Style::Bold,
            "Parse problems (the rest of each file was indexed):",
        ))?;
        for p in &report.problems {
            let loc = match p.line {
                Some(l) => format!("{}:{l}", p.path),
                None => p.path.clone(),
            };
            ui.line(&format!(
                "  {}: {}",
                ui.paint(Style::Yellow, &loc),
                p.reason
            ))?;
        }
    }
    for f in &report.files_with_notes {
        if let Some(e) = &f.last_error {
            ui.line(&format!("  {}: {}", ui.paint(Style::Red, &f.path), e))?;
        }
        if let Some(n) = &f.notes {
            ui.line(&format!("  {}: {}", f.path, n.replace('\n', "; ")))?;
        }
    }
    Ok(0)
}

/// The formats trail finds but cannot read that have files here, each with where and why.
fn unreadable(ctx: &Ctx) -> Vec<UnreadableReport> {
    config::unreadable_roots(&ctx.env, ctx.home.as_deref())
        .into_iter()
        .filter_map(|(u, roots)| {
            let files = u.files(&roots);
            let holding: Vec<String> = roots
                .iter()
                .filter(|r| files.iter().any(|f| f.starts_with(r)))
                .map(|r| r.display().to_string())
                .collect();
            (!files.is_empty()).then(|| UnreadableReport {
                name: u.name.to_string(),
                files_found: files.len(),
                roots: holding,
                why: u.why.to_string(),
            })
        })
        .collect()
}
