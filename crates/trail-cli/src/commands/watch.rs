//! `trail index --watch`: indexes, then keeps the store fresh while agents write, until Ctrl-C
//! or SIGTERM (what `trail service install` runs). It holds the store's watch lock, so the
//! status line, the MCP server and `serve --watch` skip their own index pass while it runs.
//! One line per index that found something; never message content.

use std::path::PathBuf;
use std::sync::mpsc;

use trail_ingest::watch::{self, Debounce, RootWatcher, Wake, WatchLock, WatchLockError};
use trail_ingest::{IndexOptions, NoProgress};
use trail_store::Store;

use crate::error::{CliError, CliResult};
use crate::Ctx;

/// Runs the watcher with `options` (the roots, `--source`) until asked to stop.
pub fn run(ctx: &mut Ctx, options: IndexOptions) -> CliResult<u8> {
    let _lock = WatchLock::acquire(&ctx.store_path).map_err(|e| match e {
        WatchLockError::Running { .. } => CliError::usage(e)
            .with_hint("`trail service status` says whether it is the service; stop it first"),
        WatchLockError::Io { .. } => CliError::from(anyhow::Error::new(e)),
    })?;
    // The first pass catches up with what changed while nothing watched (after a reboot, a
    // whole day): with the index's full caches.
    let store = index_pass(ctx, &options, None)?;

    let (wake, woken) = mpsc::channel();
    let stop = wake.clone();
    ctrlc::set_handler(move || {
        let _ = stop.send(Wake::Stop);
    })
    .map_err(|e| CliError::from(anyhow::anyhow!("cannot handle Ctrl-C and SIGTERM: {e}")))?;
    let mut watcher = RootWatcher::new(watched_roots(&options), Some(ctx.store_path.clone()), wake)
        .map_err(|e| CliError::from(anyhow::anyhow!("cannot watch the agents' folders: {e}")))?;
    ctx.ui.line(&format!(
        "Watching {} folders for new sessions (Ctrl-C stops).",
        watcher.watched_roots().count()
    ))?;
    ctx.ui.flush()?;
    watcher.add_roots(in_project_roots(&store));
    drop(store);
    watch::run(
        &woken,
        Some(&mut watcher),
        Debounce::default(),
        None,
        |watcher| {
            // A failed pass (a full disk, a store locked too long) is retried at the next change.
            match index_pass(ctx, &options, Some(PASS_CACHE_KIB)) {
                Ok(store) => {
                    if let Some(w) = watcher {
                        w.add_roots(in_project_roots(&store));
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %format!("{:#}", e.error), "index failed; the next change retries")
                }
            }
        },
    );
    ctx.ui.line("Stopped; the store is consistent.")?;
    Ok(0)
}

/// The files and folders that sources kept inside projects use (Aider's chat history,
/// SpecStory's `.specstory/history`) in the folders the store's sessions ran in: watched too,
/// as the index reads them there.
fn in_project_roots(store: &Store) -> Vec<PathBuf> {
    let projects: Vec<PathBuf> = store
        .known_cwds()
        .unwrap_or_default()
        .into_iter()
        .map(PathBuf::from)
        .collect();
    let markers: Vec<&str> = trail_sources::registry()
        .iter()
        .flat_map(|s| s.project_markers().iter().copied())
        .collect();
    trail_sources::discover::project_markers(&projects, &[], &markers, 0)
}

/// Every source's root, once each (sources can share a root). Folders holding projects
/// (`TRAIL_PROJECT_ROOTS`) are not watched whole (a tree of checkouts, `node_modules` and all):
/// the projects' own files are, see [`in_project_roots`].
fn watched_roots(options: &IndexOptions) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = options
        .roots
        .by_source
        .iter()
        .filter(|(kind, _)| options.sources.is_empty() || options.sources.contains(kind))
        .flat_map(|(_, paths)| paths.iter().cloned())
        .collect();
    roots.sort();
    roots.dedup();
    roots
}

/// The page cache of each writing connection in the passes after the first, in KiB (SQLite's
/// own default): they write a few appended lines, but a commit can start an FTS5 merge, which
/// with the index's full caches took the watcher from 17 to 62 MB resident
/// (`bench/watch.py`, BENCHMARKS.md "Issue 44").
const PASS_CACHE_KIB: u32 = 2048;

/// One incremental index on a store opened for it (the idle watcher holds no connection, no
/// cache, and no file of the store open), its page caches bounded to `cache_kib` when given;
/// prints a line when it found something new or changed. Returns the store, for what the
/// caller reads after.
fn index_pass(ctx: &mut Ctx, options: &IndexOptions, cache_kib: Option<u32>) -> CliResult<Store> {
    let mut store = Store::open(&ctx.store_path)?;
    if let Some(kib) = cache_kib {
        store.limit_cache(kib)?;
    }
    let s = trail_ingest::index(&mut store, options, &NoProgress)?;
    if s.sessions_new + s.sessions_updated > 0 || !s.issues.is_empty() || s.files_failed > 0 {
        ctx.ui.line(&format!(
            "{} indexed {} new and {} updated sessions from {} files in {} ms; {} parse problems",
            ctx.now()?.format("%Y-%m-%dT%H:%M:%SZ"),
            s.sessions_new,
            s.sessions_updated,
            s.files_parsed + s.files_resumed,
            s.elapsed_ms,
            s.issues.len()
        ))?;
        ctx.ui.flush()?;
    }
    Ok(store)
}
