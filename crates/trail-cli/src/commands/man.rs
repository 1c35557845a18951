//! `trail man`: the manual in roff, made by clap_mangen from the same definitions the parser
//! uses. Alone it prints `trail(1)`; `--dir DIR` writes one page per command
//! (`trail.1`, `trail-index.1`, `trail-db-migrate.1`, ...) for `man -M` or a `man1` folder.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::error::CliResult;

/// Print the manual page (roff), or write one page per command with --dir
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write `trail.1` and a page per command (`trail-index.1`, ...) into this folder, and
    /// print their paths
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Writes the pages of `command` (the whole `trail` command): the main page to `out`, or every
/// page into `--dir` with their paths to `out`.
pub fn write(args: &Args, command: clap::Command, out: &mut dyn Write) -> CliResult<u8> {
    let Some(dir) = &args.dir else {
        clap_mangen::Man::new(command).render(out)?;
        return Ok(0);
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    clap_mangen::generate_to(command, dir)
        .with_context(|| format!("cannot write the pages into {}", dir.display()))?;
    for page in pages_in(dir) {
        writeln!(out, "{}", page.display())?;
    }
    Ok(0)
}

/// The `trail*.1` pages in `dir`, sorted.
fn pages_in(dir: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "1")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("trail"))
        })
        .collect();
    pages.sort();
    pages
}
