//! `trail import`: store files the user names (VS Code "Export Chat" files, ChatGPT and
//! Claude.ai data exports, and any other format trail reads), detecting each file's format. A
//! folder (an unzipped data export) gives the files in it that trail reads. Importing the same content twice adds
//! nothing: export ids are derived from the content.

use std::path::PathBuf;

use trail_ingest::IndexOptions;
use trail_sources::registry;
use trail_store::Store;

use crate::error::{CliError, CliResult};
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files or folders to import (chat.json exports, a ChatGPT or Claude.ai data export's
    /// conversations.json or its unzipped folder, or any session file trail reads)
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print the summary as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let sources = registry();
    for f in &args.files {
        if !f.is_file() && !f.is_dir() {
            return Err(CliError::usage(format!(
                "{} is not a file or a folder",
                f.display()
            )));
        }
        if trail_ingest::detect_paths(&sources, f).is_empty() {
            let what = if f.is_dir() {
                "holds no file in a format trail reads"
            } else {
                "is not in a format trail reads"
            };
            return Err(CliError::usage(format!("{} {what}", f.display()))
                .with_hint(crate::agents::reads_hint()));
        }
    }
    let mut store = Store::open(&ctx.store_path)?;
    let options = IndexOptions {
        paths: args.files.clone(),
        ..IndexOptions::default()
    };
    let summary = trail_ingest::index(&mut store, &options, &trail_ingest::NoProgress)?;
    if args.json {
        ctx.ui.json(&summary)?;
    } else {
        let unchanged = summary.files_unchanged + summary.files_concurrent;
        ctx.ui.line(&format!(
            "Imported {} files: {} new sessions, {} updated, {} files already imported and unchanged; {} parse problems.",
            args.files.len(),
            summary.sessions_new,
            summary.sessions_updated,
            unchanged,
            summary.issues.len()
        ))?;
        for i in &summary.issues {
            let loc = match i.line {
                Some(l) => format!("{}:{l}", i.path),
                None => i.path.clone(),
            };
            ctx.ui.line(&format!("  {loc}: {}", i.reason))?;
        }
        for e in &summary.empty_files {
            ctx.ui.line(&format!("  {}: {}", e.path, e.reason))?;
        }
        for (path, err) in &summary.failures {
            ctx.ui.line(&format!("  failed: {path}: {err}"))?;
        }
    }
    Ok(if summary.files_failed > 0 { 1 } else { 0 })
}
