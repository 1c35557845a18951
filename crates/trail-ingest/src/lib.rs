//! Indexing: discover -> plan (skip, resume or reparse each file) -> parse in parallel -> write
//! from one writer in batched transactions.
//!
//! Memory stays bounded: files are parsed by rayon workers and handed to the writer over a
//! bounded channel, so at most a few parsed files are in memory at once whatever the corpus
//! size. A file that only grew is parsed from where the last index stopped, once the indexed
//! prefix is confirmed unchanged (hashes of its first and last 64 KiB); anything else that
//! changed is reparsed whole.

pub mod git;
mod stand_ins;
mod state;
mod streamed;
pub mod watch;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use trail_model::{ParseIssue, SourceKind};
use trail_sources::{registry, ParseRequest, Resume, Source};
use trail_store::{
    FileRecord, Fingerprint, SearchBatch, SearchWriter, Store, StoredFile, WriteStats,
};

pub use git::repository_of;

/// Bytes hashed at each end of the indexed prefix to confirm it is unchanged.
const PREFIX_CHECK_BYTES: u64 = 64 << 10;
/// A batch is committed when it holds this many message bytes...
const BATCH_BYTES: usize = 48 << 20;
/// ...or this many files...
const BATCH_FILES: usize = 512;
/// ...or when it has waited this long.
const BATCH_AGE: Duration = Duration::from_millis(1500);
/// The first batch of a run is committed at this many bytes, each next one at twice its
/// predecessor's up to [`BATCH_BYTES`]: the search database's writer and the checkpointer get
/// nothing until the store's writer commits, so a first batch of full size kept a core idle for
/// the half-second it took to write.
const FIRST_BATCH_BYTES: usize = 4 << 20;
/// Parsed files waiting for the writer are bounded by their text (bounds memory): a bound by
/// count (it was 2) kept the parsers in step with the writer on small files, so whenever the
/// scheduler gave the writer's core to another thread the writer then waited for parsed files
/// (2.5 s of a 12 s index of the 1 GiB corpus). A file larger than the bound still passes,
/// alone.
const PARSED_BYTES_IN_FLIGHT: usize = 32 << 20;
/// Batches of full-text rows waiting for the search database's writer.
const SEARCH_DEPTH: usize = 2;
/// Files at least this big are parsed first ([`order_plan`]): on the benchmark corpora, 15 of
/// 2,000 files and 40 of 6,000, a third of the bytes.
const LARGE_FILE_BYTES: u64 = 4 << 20;
/// Appendable logs are parsed this many bytes at a time, each piece written as it comes, so a
/// multi-gigabyte log never sits in memory whole.
const CHUNK_BYTES: u64 = 32 << 20;

/// Errors that stop an index run (per-file problems are reported in the summary instead).
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] trail_store::StoreError),
    /// The parsing threads could not be started.
    #[error("could not start the parsing threads: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
}

/// Spawns a scoped thread with a name (in `top -H`, `perf` and panics), as `scope.spawn` does
/// otherwise: it panics if the system cannot start a thread.
fn spawn_named<'scope, 'env, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    name: &str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn_scoped(scope, f)
        .expect("failed to spawn thread")
}

/// Where each source looks.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    pub by_source: HashMap<SourceKind, Vec<PathBuf>>,
}

/// What to index.
#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    /// Known locations per source (used when `paths` is empty).
    pub roots: Roots,
    /// Files or folders named by the user; their format is detected.
    pub paths: Vec<PathBuf>,
    /// Only these sources (empty: all).
    pub sources: Vec<SourceKind>,
    /// Folders holding projects (`TRAIL_PROJECT_ROOTS`), searched a few levels deep for files
    /// kept inside projects (SpecStory histories), besides the folders sessions ran in.
    pub project_roots: Vec<PathBuf>,
    /// Reparse every file from scratch.
    pub force: bool,
    /// Piece size for appendable logs (default 32 MiB; tests use small pieces).
    pub chunk_bytes: Option<u64>,
}

impl IndexOptions {
    /// Indexes only `source`, found under `root` (a test's or a benchmark's folder).
    pub fn one_source(source: SourceKind, root: impl Into<PathBuf>) -> IndexOptions {
        let mut roots = Roots::default();
        roots.by_source.insert(source, vec![root.into()]);
        IndexOptions {
            roots,
            sources: vec![source],
            ..IndexOptions::default()
        }
    }
}

/// Progress events for a front end (the CLI draws a bar from them).
pub trait Progress: Sync {
    /// Discovery finished: this many files and bytes will be parsed.
    fn start(&self, _files: u64, _bytes: u64) {}
    /// A file was parsed (`bytes` read).
    fn advance(&self, _bytes: u64) {}
    /// Everything is written.
    fn finish(&self) {}
}

/// A progress sink that ignores everything.
pub struct NoProgress;
impl Progress for NoProgress {}

/// What an index run did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct IndexSummary {
    /// What the run wrote, for resolving links in it alone.
    #[serde(skip)]
    written: trail_store::LinkScope,
    /// Files found by discovery.
    pub files_seen: u64,
    /// Files parsed from the start.
    pub files_parsed: u64,
    /// Files parsed from where the previous index stopped.
    pub files_resumed: u64,
    /// Unchanged files, skipped.
    pub files_unchanged: u64,
    /// Files that could not be parsed at all.
    pub files_failed: u64,
    /// Files no longer on disk (their sessions stay in the store, marked).
    pub files_missing: u64,
    /// Bytes read by parsers.
    pub bytes_read: u64,
    pub sessions_new: u64,
    pub sessions_updated: u64,
    pub messages: u64,
    /// Parse problems found in this run (file, line, reason).
    pub issues: Vec<ParseIssue>,
    /// Whole-file failures (path, error).
    pub failures: Vec<(String, String)>,
    /// Files another concurrent index had already written.
    pub files_concurrent: u64,
    /// Files read again because their source's parser changed since they were stored (counted
    /// in `files_parsed` too).
    pub files_upgraded: u64,
    /// Every file this run parsed (whole or resumed), sorted: what an upgrade re-read.
    #[serde(skip)]
    pub parsed_paths: Vec<String>,
    pub elapsed_ms: u64,
    /// Sources that were looked at, with their roots.
    pub searched: Vec<(String, Vec<String>)>,
    /// Paths the user named that no source reads (a file in no known format, or a folder
    /// holding none), with the reason. Nothing named by the user disappears silently.
    pub unread_paths: Vec<FileReason>,
    /// Files a source read whole and found no session in, with the reason (an empty file,
    /// only malformed lines, only titles of conversations kept in other files...).
    pub empty_files: Vec<FileReason>,
}

/// A file or folder and why it gave no session.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileReason {
    pub path: String,
    pub reason: String,
}

/// Why a user-named file was not read: no source recognized its content.
pub const NOT_A_SESSION_FILE: &str = "not a session file of any format trail reads";
/// How a note that says why a file holds no session ([`trail_sources::FileParse::no_session`])
/// starts.
const NO_SESSION_NOTE: &str = "no session: ";
/// Why a user-named folder gave nothing.
pub const NO_SESSION_FILES: &str = "holds no session file of any format trail reads";

/// One unit of work.
struct Planned {
    source: SourceKind,
    path: PathBuf,
    fingerprint: Fingerprint,
    resume: Option<(u64, u64, Vec<u8>)>,
}

/// Puts the plan in the order files are parsed: the few large files first, biggest first, since
/// one of them parsed last would keep one parser busy while the other ran dry; the many others
/// by file name. Agents name a session's file by the session's id (Claude Code, Copilot Chat),
/// so sessions then come in order of id, and each B-tree keyed by session id (twenty in the
/// store, two in the search database) grows at its end instead of taking every new session's
/// rows in the middle of a page it must first read and then write again: on the 3 GiB
/// benchmark corpus the store's writer and checkpointer wrote an eighth less, and what they
/// write now grows as the data does, not faster (BENCHMARKS.md, issue 12).
fn order_plan(plan: &mut [Planned]) {
    use std::cmp::Ordering;
    let large = |p: &Planned| p.fingerprint.size >= LARGE_FILE_BYTES;
    plan.sort_by(|a, b| {
        match (large(a), large(b)) {
            (true, true) => b.fingerprint.size.cmp(&a.fingerprint.size),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => a.path.file_name().cmp(&b.path.file_name()),
        }
        .then_with(|| a.path.cmp(&b.path))
    });
}

/// Runs an index.
// Errors are logged at debug level: the caller reports them, an error-level log repeated it.
#[tracing::instrument(level = "info", skip_all, err(level = "debug"))]
pub fn index(
    store: &mut Store,
    options: &IndexOptions,
    progress: &dyn Progress,
) -> Result<IndexSummary, IngestError> {
    let started = Instant::now();
    repair_earlier_runs(store, started)?;
    let sources: Vec<Box<dyn Source>> = registry()
        .into_iter()
        .filter(|s| options.sources.is_empty() || options.sources.contains(&s.kind()))
        .collect();
    let mut summary = IndexSummary::default();
    if options.paths.is_empty() {
        index_known_places(store, sources, options, progress, &mut summary)?;
    } else {
        let files = detect_named_paths(store, &sources, options, &mut summary)?;
        index_candidates(store, &sources, files, options, progress, &mut summary)?;
    }
    summary.parsed_paths.sort();
    if summary.sessions_new + summary.sessions_updated > 0 {
        tidy_after_writes(store, &mut summary)?;
    }
    // Only a run over every known place (all sources, no named paths) makes the whole store
    // fresh; freshness checks read this time.
    if options.paths.is_empty() && options.sources.is_empty() {
        store.record_index_run(&trail_store::now_iso())?;
    }
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    tracing::info!(
        files = summary.files_seen,
        parsed = summary.files_parsed,
        resumed = summary.files_resumed,
        ms = summary.elapsed_ms,
        "index finished"
    );
    Ok(summary)
}

/// Finishes what an earlier run left undone: batches it committed to the store but not to the
/// search database (it was killed between the two) are rebuilt from the store, and a store
/// made before Chronicle schema 3 gets its sessions' agent names.
fn repair_earlier_runs(store: &mut Store, started: Instant) -> Result<(), IngestError> {
    let rebuilt = store.catch_up_search()?;
    if rebuilt > 0 {
        tracing::info!(
            sessions = rebuilt,
            ms = started.elapsed().as_millis() as u64,
            "search database caught up"
        );
    }
    let named =
        store.fill_agent_names(&|source: &str| SourceKind::parse(source).map(agent_name))?;
    if named > 0 {
        tracing::info!(sessions = named, "agent names filled");
    }
    Ok(())
}

/// Indexes every place the sources know. Sources with their own locations first, then the ones
/// whose files live inside projects (the folders the first group's sessions ran in are projects
/// to look in, so a first index finds a project's SpecStory or Aider history too) and the ones
/// that must see what the first group wrote (Claude Code's prompt history).
fn index_known_places(
    store: &mut Store,
    sources: Vec<Box<dyn Source>>,
    options: &IndexOptions,
    progress: &dyn Progress,
    summary: &mut IndexSummary,
) -> Result<(), IngestError> {
    let (fixed, later): (Vec<_>, Vec<_>) = sources
        .into_iter()
        .partition(|s| s.project_markers().is_empty() && !s.reads_after_others());
    // The roots are walked on another thread while every stored file row is read on this one
    // (a no-change run over 20,000 files did one and then the other, 30-40 and 50-60 ms; the
    // reading thread allocates a string or two per row, and a thread's own malloc arena grows
    // a page at a time, one `mprotect` each: 3,000 of them there, so the reading stays here).
    let mut candidates = Vec::new();
    let stored = std::thread::scope(|scope| {
        let walk = scope.spawn(|| {
            for s in &fixed {
                discover_at_own_roots(s.as_ref(), options, summary, &mut candidates);
            }
        });
        let stored = store.stored_files();
        walk.join().expect("walking the roots panicked");
        stored
    })?;
    let files = Candidates {
        found: candidates,
        stored: Some(stored),
    };
    index_candidates(store, &fixed, files, options, progress, summary)?;
    if later.is_empty() {
        return Ok(());
    }
    let projects: Vec<PathBuf> = store.known_cwds()?.into_iter().map(PathBuf::from).collect();
    let mut candidates = Vec::new();
    for s in &later {
        if s.project_markers().is_empty() {
            discover_at_own_roots(s.as_ref(), options, summary, &mut candidates);
        } else {
            discover_in_projects(s.as_ref(), &projects, options, summary, &mut candidates);
        }
    }
    if !candidates.is_empty() {
        index_candidates(store, &later, candidates.into(), options, progress, summary)?;
    }
    Ok(())
}

/// The roots configured for one source (none: its defaults).
fn roots_of(options: &IndexOptions, kind: SourceKind) -> Vec<PathBuf> {
    options
        .roots
        .by_source
        .get(&kind)
        .cloned()
        .unwrap_or_default()
}

/// Adds the files `source` finds at its own roots to `candidates`, and where it looked to the
/// summary.
fn discover_at_own_roots(
    source: &dyn Source,
    options: &IndexOptions,
    summary: &mut IndexSummary,
    candidates: &mut Vec<(SourceKind, PathBuf)>,
) {
    let roots = roots_of(options, source.kind());
    summary.searched.push((
        source.kind().as_str().to_string(),
        roots.iter().map(|r| r.display().to_string()).collect(),
    ));
    for p in source.discover(&roots) {
        candidates.push((source.kind(), p));
    }
}

/// Adds the files `source` finds in projects (the folders other sessions ran in, the project
/// roots and its own roots, walked for its markers) to `candidates`.
fn discover_in_projects(
    source: &dyn Source,
    projects: &[PathBuf],
    options: &IndexOptions,
    summary: &mut IndexSummary,
    candidates: &mut Vec<(SourceKind, PathBuf)>,
) {
    let mut walked = options.project_roots.clone();
    walked.extend(roots_of(options, source.kind()));
    let roots = trail_sources::discover::project_markers(
        projects,
        &walked,
        source.project_markers(),
        trail_sources::discover::PROJECT_ROOT_DEPTH,
    );
    let mut searched: Vec<String> = walked.iter().map(|r| r.display().to_string()).collect();
    searched.push(format!("{} folders other sessions ran in", projects.len()));
    summary
        .searched
        .push((source.kind().as_str().to_string(), searched));
    for p in source.discover(&roots) {
        candidates.push((source.kind(), p));
    }
}

/// The session files at the paths named on the command line; a path that holds none is noted
/// in the summary with the reason. A file the store already holds keeps the source it was read
/// with (a path's format does not change; `--force` detects every file again); only new files
/// are detected by their first bytes (reading 64 KiB of each of 20,000 unchanged files made
/// `trail index FOLDER` with nothing new take 1.5 s of CPU). Returns the files found, and the
/// stored rows read to tell them apart (the plan reads them, not the store again).
fn detect_named_paths(
    store: &Store,
    sources: &[Box<dyn Source>],
    options: &IndexOptions,
    summary: &mut IndexSummary,
) -> Result<Candidates, IngestError> {
    let started = Instant::now();
    let walked: Vec<(&PathBuf, Vec<PathBuf>)> =
        options.paths.iter().map(|p| (p, files_at(p))).collect();
    let walk_ms = started.elapsed().as_millis() as u64;
    let stored = if options.force {
        None
    } else {
        let files = walked
            .iter()
            .flat_map(|(_, fs)| fs.iter().map(PathBuf::as_path));
        Some(stored_rows(store, files, false)?)
    };
    let empty = StoredRows::new();
    let known = Known {
        stored: stored.as_ref().unwrap_or(&empty),
        sources,
    };
    let mut candidates = Vec::new();
    for (p, files) in walked {
        let found = detect_files(sources, files, &known);
        if found.is_empty() {
            summary.unread_paths.push(FileReason {
                path: p.display().to_string(),
                reason: if p.is_dir() {
                    NO_SESSION_FILES
                } else {
                    NOT_A_SESSION_FILE
                }
                .to_string(),
            });
        }
        candidates.extend(found);
    }
    tracing::info!(
        walk_ms,
        ms = started.elapsed().as_millis() as u64,
        "named paths looked at"
    );
    Ok(Candidates {
        found: candidates,
        stored,
    })
}

/// Named files up to this many are looked up in the store one by one; more read the whole
/// table (20,000 lookups took longer than one read of 20,000 rows).
const STORED_LOOKUPS_MAX: usize = 200;

/// The stored rows of `files`: every row when `all`, or when there are many files (one read of
/// the whole table beats a lookup each), else each looked up by its key (the keys are made only
/// then).
fn stored_rows<'a>(
    store: &Store,
    files: impl Iterator<Item = &'a Path> + Clone,
    all: bool,
) -> Result<StoredRows, IngestError> {
    Ok(if all || files.clone().count() > STORED_LOOKUPS_MAX {
        store.stored_files()?
    } else {
        let keys: Vec<String> = files.map(|f| path_key(f).into_owned()).collect();
        store.stored_files_at(&keys)?
    })
}

/// What the store says of files it read: the source that read a file (among `sources`), so
/// that a named file the store knows is not detected again.
struct Known<'a> {
    stored: &'a StoredRows,
    sources: &'a [Box<dyn Source>],
}

impl Known<'_> {
    fn source_of(&self, key: &str) -> Option<SourceKind> {
        let f = self.stored.get(key).filter(|f| !f.missing)?;
        let kind = SourceKind::parse(&f.source)?;
        self.sources
            .iter()
            .any(|s| s.kind() == kind)
            .then_some(kind)
    }
}

/// The files an index run looks at, and, when they were read already, their stored rows.
struct Candidates {
    found: Vec<(SourceKind, PathBuf)>,
    stored: Option<StoredRows>,
}

impl From<Vec<(SourceKind, PathBuf)>> for Candidates {
    fn from(found: Vec<(SourceKind, PathBuf)>) -> Candidates {
        Candidates {
            found,
            stored: None,
        }
    }
}

/// Stored file rows by path key.
type StoredRows = HashMap<String, StoredFile>;

/// After a run that wrote sessions: merges the turn index after a large run, compacts the
/// search database and resolves the links between sessions and files the run wrote.
fn tidy_after_writes(store: &mut Store, summary: &mut IndexSummary) -> Result<(), IngestError> {
    let t = Instant::now();
    if store.merge_search_index(summary.sessions_new + summary.sessions_updated)? {
        tracing::info!(ms = t.elapsed().as_millis() as u64, "search index merged");
    }
    let t = Instant::now();
    let freed = store.compact_search()?;
    if freed > 0 {
        tracing::info!(
            pages = freed,
            ms = t.elapsed().as_millis() as u64,
            "search database compacted"
        );
    }
    let t = Instant::now();
    // A large run resolves over the whole store (scans beat thousands of lookups).
    let written = std::mem::take(&mut summary.written);
    if written.sessions.len() + written.paths.len() > 2000 {
        store.resolve_links()?;
    } else {
        store.resolve_links_in(Some(&written))?;
    }
    tracing::info!(ms = t.elapsed().as_millis() as u64, "links resolved");
    Ok(())
}

/// Plans, parses and writes the files found for `sources`, adding to `summary`.
fn index_candidates(
    store: &mut Store,
    sources: &[Box<dyn Source>],
    files: Candidates,
    options: &IndexOptions,
    progress: &dyn Progress,
    summary: &mut IndexSummary,
) -> Result<(), IngestError> {
    let started = Instant::now();
    let Candidates {
        found: mut candidates,
        stored,
    } = files;
    // By bytes: only to bring a path found twice together (`Path`'s own order compares
    // component by component, several times slower).
    candidates.sort_by(|a, b| a.1.as_os_str().cmp(b.1.as_os_str()));
    candidates.dedup_by(|a, b| a.1 == b.1);
    summary.files_seen += candidates.len() as u64;
    let (mut plan, total_bytes) = plan_files(
        store,
        sources,
        &candidates,
        stored,
        options,
        summary,
        started,
    )?;
    order_plan(&mut plan);
    progress.start(plan.len() as u64, total_bytes);
    if plan.is_empty() {
        // Nothing to read: no writer thread, checkpointer or sync is started for nothing (a
        // quarter of a no-change run on 20,000 files).
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            "nothing to write"
        );
        progress.finish();
        return Ok(());
    }

    let (search_writer, deferred) = prepare_writes(store)?;
    let mut timing = Timing::default();
    let process_cpu = cpu_time(false);
    let writer_cpu = cpu_time(true);
    let chunk = options.chunk_bytes.unwrap_or(CHUNK_BYTES).max(1);
    let (write_result, search_result) = parse_and_write(
        store,
        sources,
        plan,
        chunk,
        search_writer,
        deferred,
        progress,
        summary,
        &mut timing,
    )?;
    let t = Instant::now();
    timing.checkpoint_wait = store.stop_background_checkpoints()?;
    timing.checkpoint_tail = t.elapsed();
    let t = Instant::now();
    store.make_durable()?;
    timing.sync = t.elapsed();

    let since = |now: Option<Duration>, then: Option<Duration>| {
        now.zip(then)
            .map_or(Duration::ZERO, |(b, a)| b.saturating_sub(a))
    };
    timing.writer_cpu = since(cpu_time(true), writer_cpu);
    timing.process_cpu = since(cpu_time(false), process_cpu);
    timing.log(started);
    write_result?;
    search_result?;
    progress.finish();
    Ok(())
}

/// Decides for each candidate whether to skip it, parse it whole or resume it, and marks the
/// stored files that vanished; returns the plan and the bytes it will read.
fn plan_files(
    store: &mut Store,
    sources: &[Box<dyn Source>],
    candidates: &[(SourceKind, PathBuf)],
    stored: Option<StoredRows>,
    options: &IndexOptions,
    summary: &mut IndexSummary,
    started: Instant,
) -> Result<(Vec<Planned>, u64), IngestError> {
    let discovered = started.elapsed();
    // The stored rows are read on this thread while the candidates are looked at on disk
    // (a `stat` each) on rayon's: on 20,000 files these were 62-124 ms and 113-130 ms one
    // after the other (the 10 GiB corpus, BENCHMARKS.md issue 44).
    let (stored, on_disk) = std::thread::scope(|scope| {
        let on_disk = scope.spawn(|| {
            candidates
                .par_iter()
                .map(|(_, p)| (path_key(p), fingerprint(p)))
                .collect::<Vec<_>>()
        });
        // A few named files (a status line indexing its one transcript) are looked up one by
        // one instead of reading every file's row; a named folder of many files reads them all.
        let stored = match stored {
            Some(rows) => Ok(rows),
            None => {
                let files = candidates.iter().map(|(_, p)| p.as_path());
                stored_rows(store, files, options.paths.is_empty())
            }
        };
        (
            stored,
            on_disk.join().expect("looking at the candidates panicked"),
        )
    });
    let stored = stored?;
    let loaded = started.elapsed();
    let mut plan: Vec<Planned> = Vec::new();
    let mut total_bytes = 0u64;
    for ((kind, path), (key, fp)) in candidates.iter().zip(&on_disk) {
        let Some(fp) = *fp else {
            continue;
        };
        let src = sources.iter().find(|s| s.kind() == *kind);
        let appendable = src.is_some_and(|s| s.appendable(path));
        let version = src.map_or(0, |s| s.parser_version());
        let prior = stored.get(key.as_ref());
        if prior.is_some_and(|p| p.parser_version != version && !p.missing) && !options.force {
            summary.files_upgraded += 1;
        }
        let has_state = || store.has_file_state(key);
        let resume = match decide(
            prior,
            fp,
            appendable,
            options.force,
            version,
            path,
            has_state,
        )? {
            Decision::Skip => {
                summary.files_unchanged += 1;
                continue;
            }
            Decision::Full => {
                total_bytes += fp.size;
                None
            }
            Decision::Resume => {
                let p = prior.expect("resume needs a prior state");
                let state = store
                    .file_state(key.as_ref())?
                    .map(state::unpack)
                    .unwrap_or_default();
                total_bytes += fp.size.saturating_sub(p.bytes_parsed);
                Some((p.bytes_parsed, p.lines, state))
            }
        };
        plan.push(Planned {
            source: *kind,
            path: path.clone(),
            fingerprint: fp,
            resume,
        });
    }
    // Files that vanished: keep their sessions, mark them. Only files of the sources scanned by
    // default discovery are considered, and only when they are really gone.
    if options.paths.is_empty() {
        let seen: HashSet<&str> = on_disk.iter().map(|(key, _)| key.as_ref()).collect();
        mark_vanished(store, sources, &seen, &stored, summary)?;
    }
    let planned = started.elapsed();
    tracing::info!(
        discover_ms = discovered.as_millis() as u64,
        load_ms = (loaded - discovered).as_millis() as u64,
        plan_ms = (planned - loaded).as_millis() as u64,
        "index planned"
    );
    Ok((plan, total_bytes))
}

/// Marks the stored files of `sources` that were not found again (`seen`: the path keys of
/// the files found) and are gone from disk.
fn mark_vanished(
    store: &mut Store,
    sources: &[Box<dyn Source>],
    seen: &HashSet<&str>,
    stored: &HashMap<String, StoredFile>,
    summary: &mut IndexSummary,
) -> Result<(), IngestError> {
    let scanned: HashSet<&str> = sources.iter().map(|s| s.kind().as_str()).collect();
    let gone: Vec<String> = stored
        .values()
        .filter(|f| !f.missing && scanned.contains(f.source.as_str()))
        .filter(|f| !seen.contains(f.path.as_str()) && !Path::new(&f.path).exists())
        .map(|f| f.path.clone())
        .collect();
    if !gone.is_empty() {
        summary.files_missing += store.mark_missing(&gone)? as u64;
    }
    Ok(())
}

/// Opens the search database's writer (none for an in-memory store, which has no file a second
/// connection could open: its batches are applied on the store's own connection) and sets the
/// store up for a run's writes. Returns the writer and whether the store's indexes wait for
/// the run's end.
fn prepare_writes(store: &mut Store) -> Result<(Option<SearchWriter>, bool), IngestError> {
    let search_writer = if store.path().as_os_str() == ":memory:" {
        None
    } else {
        Some(store.search_writer()?)
    };
    // A first index builds the indexes nothing reads while it writes after its last batch
    // (trail-store's `bulk.rs`).
    let deferred = store.defer_indexes_if_empty()?;
    // And writes without waiting for the disk, which it syncs once at its end (trail-store's
    // `unsynced.rs`).
    if deferred && store.write_unsynced()? {
        if let Some(w) = &search_writer {
            w.write_unsynced()?;
        }
    }
    // The store's WAL is checkpointed on a thread of its own while this one writes.
    store.checkpoint_in_background()?;
    Ok((search_writer, deferred))
}

/// What the store's writer and the search database's writer each ended with.
type WriterOutcomes = (Result<(), IngestError>, Result<(), IngestError>);

/// Parses the plan in parallel and writes the store on this thread and the search database on
/// another (two SQLite files: two writers at once). Returns the store's and the search
/// database's outcomes; both writers always finish what they hold first.
#[allow(clippy::too_many_arguments)]
fn parse_and_write(
    store: &mut Store,
    sources: &[Box<dyn Source>],
    plan: Vec<Planned>,
    chunk: u64,
    mut search_writer: Option<SearchWriter>,
    deferred: bool,
    progress: &dyn Progress,
    summary: &mut IndexSummary,
    timing: &mut Timing,
) -> Result<WriterOutcomes, IngestError> {
    let (tx, rx) = crossbeam_channel::unbounded::<Parsed>();
    let in_flight = InFlight::new(PARSED_BYTES_IN_FLIGHT);
    let in_flight = &in_flight;
    // Parsers on a pool of their own, so that `top -H`, `perf` and `bench/timeline.py` name
    // them (rayon's global pool leaves its threads unnamed).
    let parsers = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("trail-parse-{i}"))
        .build()?;
    Ok(std::thread::scope(|scope| {
        let parsers = &parsers;
        spawn_named(scope, "trail-plan", move || {
            // One file per task: the plan starts with its large files, and rayon's default
            // splitting left the few 20-50 MB files in one worker's share while the other ran
            // dry.
            parsers.install(|| {
                plan.into_par_iter()
                    .with_max_len(1)
                    .for_each_with(tx, |tx, item| {
                        // A failed send means the writer stopped (error): nothing more to do.
                        parse_one(sources, item, chunk, &mut |parsed| {
                            in_flight.take(parsed.weight);
                            tx.send(parsed).is_ok()
                        });
                    });
            })
        });
        let (search_tx, search_rx) = crossbeam_channel::bounded::<SearchBatch>(SEARCH_DEPTH);
        let search_thread = search_writer.take().map(|mut w| {
            spawn_named(scope, "trail-search", move || {
                let cpu = cpu_time(true);
                let mut result = Ok(());
                for batch in search_rx.iter() {
                    if result.is_ok() {
                        result = w.apply(batch);
                    }
                }
                let cpu = cpu_time(true)
                    .zip(cpu)
                    .map_or(Duration::ZERO, |(b, a)| b.saturating_sub(a));
                (result, w.busy, cpu)
            })
        });
        let search = SearchSink {
            tx: search_tx,
            threaded: search_thread.is_some(),
        };
        let mut write_result =
            write_parsed(store, rx, in_flight, &search, progress, summary, timing);
        drop(search);
        // While the search writer finishes its last batches (another file). Also after a
        // failed batch: a handle that stays open (the MCP server's) would otherwise go on
        // without them, since the store is no longer empty for the next run to see.
        if deferred {
            let t = Instant::now();
            let built = store.build_deferred_indexes().map_err(IngestError::from);
            if write_result.is_ok() {
                write_result = built;
            }
            timing.deferred = t.elapsed();
        }
        let mut search_result = Ok(());
        if let Some(handle) = search_thread {
            let t = Instant::now();
            match handle.join() {
                Ok((r, busy, cpu)) => {
                    search_result = r.map_err(IngestError::from);
                    timing.search = busy;
                    timing.search_cpu = cpu;
                }
                Err(_) => {
                    search_result = Err(IngestError::Store(trail_store::StoreError::Corrupt(
                        "the search database's writer stopped".into(),
                    )))
                }
            }
            timing.search_tail = t.elapsed();
        }
        (write_result, search_result)
    }))
}

/// Where the store's writer hands each batch's full-text rows: the search database's writer
/// thread, or (an in-memory store) the store's own connection.
struct SearchSink {
    tx: crossbeam_channel::Sender<SearchBatch>,
    threaded: bool,
}

impl SearchSink {
    fn send(
        &self,
        store: &mut Store,
        batch: SearchBatch,
        timing: &mut Timing,
    ) -> Result<(), IngestError> {
        let t = Instant::now();
        let r = if self.threaded {
            // A failed send means the search writer stopped (error): it is reported by its
            // thread's result.
            let _ = self.tx.send(batch);
            Ok(())
        } else {
            store.apply_search(batch).map_err(IngestError::from)
        };
        timing.search_wait += t.elapsed();
        r
    }
}

/// The files waiting to be written in one transaction. A batch is due when it holds
/// [`BATCH_BYTES`] (the first of a run [`FIRST_BATCH_BYTES`], each next one twice its
/// predecessor's), [`BATCH_FILES`] files, or has waited [`BATCH_AGE`].
struct Batch {
    records: Vec<FileRecord>,
    bytes: usize,
    started: Instant,
    limit: usize,
}

impl Batch {
    fn new() -> Batch {
        Batch {
            records: Vec::new(),
            bytes: 0,
            started: Instant::now(),
            limit: FIRST_BATCH_BYTES,
        }
    }

    /// Adds a record; returns the batch's records when it is due.
    fn push(&mut self, record: FileRecord, weight: usize) -> Option<Vec<FileRecord>> {
        self.bytes += weight;
        if self.records.is_empty() {
            self.started = Instant::now();
        }
        self.records.push(record);
        if self.bytes >= self.limit
            || self.records.len() >= BATCH_FILES
            || self.started.elapsed() >= BATCH_AGE
        {
            self.bytes = 0;
            self.limit = (self.limit * 2).min(BATCH_BYTES);
            return Some(std::mem::take(&mut self.records));
        }
        None
    }
}

/// The store's writer: takes parsed files as they come, counts them in the summary and writes
/// them in batches. After an error it drains what the parsers still send (so they stop) and
/// returns the error.
fn write_parsed(
    store: &mut Store,
    rx: crossbeam_channel::Receiver<Parsed>,
    in_flight: &InFlight,
    search: &SearchSink,
    progress: &dyn Progress,
    summary: &mut IndexSummary,
    timing: &mut Timing,
) -> Result<(), IngestError> {
    let mut write_result: Result<(), IngestError> = Ok(());
    let mut repo_cache: HashMap<String, Option<String>> = HashMap::new();
    let mut batch = Batch::new();
    let mut stats = WriteStats::default();
    let mut waited = Instant::now();
    for Parsed {
        mut record,
        bytes_read,
        first_piece,
        weight,
    } in rx.iter()
    {
        timing.parse_wait += waited.elapsed();
        in_flight.give_back(weight);
        if write_result.is_err() {
            waited = Instant::now();
            continue;
        }
        progress.advance(bytes_read);
        count_parsed(summary, &record, bytes_read, first_piece);
        if let Err(e) = stand_ins::drop_held_elsewhere(store, &mut record) {
            write_result = Err(e.into());
            continue;
        }
        fill_session_meta(&mut record, &mut repo_cache);
        if let Some(records) = batch.push(record, weight) {
            write_result = write_batch(store, records, search, summary, &mut stats, timing);
        }
        waited = Instant::now();
    }
    if write_result.is_ok() && !batch.records.is_empty() {
        write_result = write_batch(store, batch.records, search, summary, &mut stats, timing);
    }
    summary.sessions_new += stats.sessions_new;
    summary.sessions_updated += stats.sessions_updated;
    summary.messages += stats.messages;
    summary.files_concurrent += stats.files_stale;
    write_result
}

/// Counts one parsed file (or piece of one) in the summary: read, parsed, resumed or failed,
/// empty, and its issues.
fn count_parsed(summary: &mut IndexSummary, record: &FileRecord, bytes_read: u64, first: bool) {
    summary.bytes_read += bytes_read;
    match (&record.error, record.resumed_from) {
        (Some(e), _) => {
            summary.files_failed += 1;
            summary.failures.push((record.path.clone(), e.clone()));
        }
        _ if !first => {}
        (None, Some(_)) => summary.files_resumed += 1,
        (None, None) => summary.files_parsed += 1,
    }
    if let Some(reason) = empty_reason(record, first) {
        summary.empty_files.push(FileReason {
            path: record.path.clone(),
            reason,
        });
    }
    if first && record.error.is_none() {
        summary.parsed_paths.push(record.path.clone());
    }
    summary.issues.extend(record.issues.iter().cloned());
}

/// Fills what the parser leaves to the indexer: the agent's name and the repository of the
/// session's folder (each folder's looked up once a run).
fn fill_session_meta(record: &mut FileRecord, repo_cache: &mut HashMap<String, Option<String>>) {
    for s in &mut record.sessions {
        if s.meta.agent_name.is_none() {
            s.meta.agent_name = Some(agent_name(s.meta.source).to_string());
        }
        if s.meta.repository.is_none() {
            if let Some(cwd) = s.meta.cwd.clone() {
                s.meta.repository = repo_cache
                    .entry(cwd)
                    .or_insert_with_key(|cwd| repository_of(Path::new(cwd)))
                    .clone();
            }
        }
    }
}

/// Writes one batch to the store and hands its full-text rows to the search database.
fn write_batch(
    store: &mut Store,
    records: Vec<FileRecord>,
    search: &SearchSink,
    summary: &mut IndexSummary,
    stats: &mut WriteStats,
    timing: &mut Timing,
) -> Result<(), IngestError> {
    let t = Instant::now();
    summary.written.add(&records);
    let (s, batch) = store.write_batch_deferred(records)?;
    stats.add(s);
    timing.write += t.elapsed();
    search.send(store, batch, timing)
}

/// CPU time (user + system) of this thread (`thread`) or of the whole process, from Linux's
/// `/proc` (clock ticks of 10 ms); `None` elsewhere. Only logged: wall time on a shared machine
/// says little about where the work went.
fn cpu_time(thread: bool) -> Option<Duration> {
    let stat = std::fs::read_to_string(if thread {
        "/proc/thread-self/stat"
    } else {
        "/proc/self/stat"
    })
    .ok()?;
    // Fields after the command name (which may hold spaces, in parentheses): utime and stime
    // are the 12th and 13th.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let ticks: u64 = fields.next()?.parse::<u64>().ok()? + fields.next()?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Where an index run's writer time went (logged at `-v`).
#[derive(Default)]
struct Timing {
    /// The store's writer writing batches.
    write: Duration,
    /// The store's writer waiting for parsed files.
    parse_wait: Duration,
    /// The search database's writer applying batches (on its own thread).
    search: Duration,
    /// The store's writer waiting to hand a batch to the search database's writer.
    search_wait: Duration,
    /// Waiting for the search database's writer after the last batch.
    search_tail: Duration,
    /// The store's writer waiting for the background checkpoints to catch up...
    checkpoint_wait: Duration,
    /// ...and for the last one, after the last batch.
    checkpoint_tail: Duration,
    /// Building the indexes a first index leaves out until its last batch.
    deferred: Duration,
    /// Syncing the store's files at the end of a first index, which wrote without syncs.
    sync: Duration,
    /// CPU time of the store's writer thread, of the search database's, of the whole process.
    writer_cpu: Duration,
    search_cpu: Duration,
    process_cpu: Duration,
}

impl Timing {
    fn log(&self, started: Instant) {
        tracing::info!(
            cpu_ms = self.process_cpu.as_millis() as u64,
            writer_cpu_ms = self.writer_cpu.as_millis() as u64,
            search_cpu_ms = self.search_cpu.as_millis() as u64,
            write_ms = self.write.as_millis() as u64,
            parse_wait_ms = self.parse_wait.as_millis() as u64,
            search_ms = self.search.as_millis() as u64,
            search_wait_ms = self.search_wait.as_millis() as u64,
            search_tail_ms = self.search_tail.as_millis() as u64,
            checkpoint_wait_ms = self.checkpoint_wait.as_millis() as u64,
            checkpoint_tail_ms = self.checkpoint_tail.as_millis() as u64,
            deferred_ms = self.deferred.as_millis() as u64,
            sync_ms = self.sync.as_millis() as u64,
            total_ms = started.elapsed().as_millis() as u64,
            "index written"
        );
    }
}

enum Decision {
    Skip,
    Full,
    Resume,
}

/// What to do with a file the plan found. `has_state` says whether the store holds a resume
/// state for it, asked only of a file that may resume (a lookup each; a no-change run asks
/// none).
fn decide(
    prior: Option<&StoredFile>,
    fp: Fingerprint,
    appendable: bool,
    force: bool,
    parser_version: u32,
    path: &Path,
    has_state: impl FnOnce() -> trail_store::Result<bool>,
) -> trail_store::Result<Decision> {
    let Some(prior) = prior else {
        return Ok(Decision::Full);
    };
    // A file read by another version of its parser is read again whole, changed or not: the
    // stored rows are what the old parser made of it.
    if force || prior.parser_version != parser_version {
        return Ok(Decision::Full);
    }
    if prior.fingerprint == fp && !prior.missing {
        return Ok(Decision::Skip);
    }
    let grew = fp.size >= prior.bytes_parsed && prior.fingerprint.inode == fp.inode;
    if appendable && grew && has_state()? && prefix_unchanged(path, prior) {
        if fp.size == prior.bytes_parsed && prior.fingerprint.size == fp.size {
            // Touched but not changed.
            return Ok(Decision::Skip);
        }
        return Ok(Decision::Resume);
    }
    Ok(Decision::Full)
}

/// Confirms the first and last bytes of the indexed prefix still hash the same.
fn prefix_unchanged(path: &Path, prior: &StoredFile) -> bool {
    match prefix_hashes(path, prior.bytes_parsed) {
        Some((h, t)) => Some(h) == prior.head_hash && Some(t) == prior.tail_hash,
        None => false,
    }
}

/// Hashes the first and the last [`PREFIX_CHECK_BYTES`] of `file[..len]`.
fn prefix_hashes(path: &Path, len: u64) -> Option<(i64, i64)> {
    let mut f = File::open(path).ok()?;
    let head_len = len.min(PREFIX_CHECK_BYTES);
    let mut buf = vec![0u8; head_len as usize];
    f.read_exact(&mut buf).ok()?;
    let head = xxhash_rust::xxh3::xxh3_64(&buf) as i64;
    let tail_start = len.saturating_sub(PREFIX_CHECK_BYTES);
    let tail_len = (len - tail_start) as usize;
    f.seek(SeekFrom::Start(tail_start)).ok()?;
    buf.resize(tail_len, 0);
    f.read_exact(&mut buf).ok()?;
    let tail = xxhash_rust::xxh3::xxh3_64(&buf) as i64;
    Some((head, tail))
}

/// One parsed piece of a file, on its way to the writer.
struct Parsed {
    record: FileRecord,
    bytes_read: u64,
    /// The first piece of its file (later pieces continue it and are not counted again).
    first_piece: bool,
    /// The memory the record holds ([`record_weight`]), counted once on the parser's side.
    weight: usize,
}

impl Parsed {
    fn new(record: FileRecord, bytes_read: u64, first_piece: bool) -> Parsed {
        Parsed {
            weight: record_weight(&record),
            record,
            bytes_read,
            first_piece,
        }
    }
}

/// The bytes of parsed records on their way to the writer, bounded: a parser waits while the
/// records not yet taken by the writer hold `limit` bytes (a record larger than that passes
/// when nothing else is waiting).
struct InFlight {
    limit: usize,
    bytes: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

impl InFlight {
    fn new(limit: usize) -> InFlight {
        InFlight {
            limit,
            bytes: std::sync::Mutex::new(0),
            freed: std::sync::Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, usize> {
        self.bytes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn take(&self, weight: usize) {
        let mut bytes = self.lock();
        while *bytes > 0 && *bytes + weight > self.limit {
            bytes = self
                .freed
                .wait(bytes)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *bytes += weight;
    }

    fn give_back(&self, weight: usize) {
        let mut bytes = self.lock();
        *bytes = bytes.saturating_sub(weight);
        self.freed.notify_all();
    }
}

/// Parses one file, in pieces of `chunk` bytes for appendable formats, handing each piece to
/// `emit` (which returns false when the writer is gone).
fn parse_one(
    sources: &[Box<dyn Source>],
    item: Planned,
    chunk: u64,
    emit: &mut dyn FnMut(Parsed) -> bool,
) {
    let path_str = path_key(&item.path).into_owned();
    let version = sources
        .iter()
        .find(|s| s.kind() == item.source)
        .map_or(0, |s| s.parser_version());
    let new_record = || FileRecord {
        path: path_str.clone(),
        source: Some(item.source),
        fingerprint: item.fingerprint,
        parser_version: version,
        ..FileRecord::default()
    };
    let Some(src) = sources.iter().find(|s| s.kind() == item.source) else {
        let mut record = new_record();
        record.error = Some("no parser for this format".into());
        emit(Parsed::new(record, 0, true));
        return;
    };
    if src.streams_sessions() && !src.appendable(&item.path) {
        streamed::parse_streamed(src.as_ref(), &item, &new_record, emit);
        return;
    }
    let max_bytes = src.appendable(&item.path).then_some(chunk);
    let mut resume = item.resume;
    let mut first_piece = true;
    loop {
        let mut record = new_record();
        let request = ParseRequest {
            path: &item.path,
            resume: resume.as_ref().map(|(offset, line, state)| Resume {
                offset: *offset,
                line: *line,
                state,
            }),
            max_bytes,
        };
        let parse_started = Instant::now();
        let parsed = src.parse(request);
        tracing::info!(
            ms = parse_started.elapsed().as_millis() as u64,
            "parsed a piece"
        );
        let p = match parsed {
            Ok(p) => p,
            Err(e) => {
                record.error = Some(e.to_string());
                emit(Parsed::new(record, 0, first_piece));
                return;
            }
        };
        record.resumed_from = resume.as_ref().map(|(offset, _, _)| *offset);
        record.continuation = !first_piece;
        let (head, tail) = prefix_hashes(&item.path, p.bytes_parsed).unzip();
        record.head_hash = head;
        record.tail_hash = tail;
        if p.more {
            // Not the whole file yet: record only what this piece covers, so a run killed
            // between pieces resumes here instead of taking the file as done.
            record.fingerprint = Fingerprint {
                size: p.bytes_parsed,
                mtime_ns: 0,
                inode: item.fingerprint.inode,
            };
        }
        let next = p
            .more
            .then(|| (p.bytes_parsed, p.lines, p.state.clone().unwrap_or_default()));
        record.sessions = p.sessions;
        record.issues = p.issues;
        record.bytes_parsed = p.bytes_parsed;
        record.lines = p.lines;
        record.state = p.state.as_deref().map(state::pack);
        record.notes = p.notes;
        if let Some(why) = p.no_session {
            // Kept with the file's notes (`doctor` shows them) and given as its empty reason.
            record.notes.push(format!("{NO_SESSION_NOTE}{why}"));
        }
        record.title_hints = p.title_hints;
        let sent = emit(Parsed::new(record, p.bytes_read, first_piece));
        match next {
            Some(n) if sent => {
                resume = Some(n);
                first_piece = false;
            }
            _ => return,
        }
    }
}

/// The agent as people name it (Chronicle's `sessions.agent_name`) for a session whose parser
/// named none: Copilot's own values for Copilot's sources (as its session store writes them),
/// the source's display name for the others.
pub fn agent_name(source: SourceKind) -> &'static str {
    match source {
        SourceKind::CopilotVscode | SourceKind::VscodeExport => "VS Code agent",
        SourceKind::CopilotCli => "Copilot CLI",
        // Claude Code's prompt history is Claude Code's.
        SourceKind::ClaudeHistory => trail_sources::display_name(SourceKind::ClaudeCode),
        other => trail_sources::display_name(other),
    }
}

/// Says why a file read from its start gave no session, or `None` when it gave some (or was
/// resumed: a log that did not grow a session since the last index is not news).
fn empty_reason(record: &FileRecord, first_piece: bool) -> Option<String> {
    if !record.sessions.is_empty()
        || record.error.is_some()
        || record.resumed_from.is_some()
        || !first_piece
    {
        return None;
    }
    if let Some(why) = record.notes.iter().find(|n| n.starts_with(NO_SESSION_NOTE)) {
        return Some(why.clone());
    }
    Some(if let Some(first) = record.issues.first() {
        let at = first.line.map(|l| format!(" (line {l}: {})", first.reason));
        format!(
            "no session: {} malformed records and nothing else{}",
            record.issues.len(),
            at.unwrap_or_default()
        )
    } else if !record.title_hints.is_empty() {
        "no session: it holds only titles of conversations kept in other files".to_string()
    } else if record.bytes_parsed == 0 && record.fingerprint.size == 0 {
        "no session: the file is empty".to_string()
    } else if record.bytes_parsed == 0 {
        "no session yet: its only line is incomplete (still being written?)".to_string()
    } else {
        "no session: it holds no conversation (no prompt, answer or event that starts one)"
            .to_string()
    })
}

/// Approximates the memory a parsed record holds: its text, and 512 bytes a message for the
/// message itself (288 bytes) and its other strings. With 128 a prompt history's short
/// messages were undercounted so far that 200 MiB of it peaked at 736 MB (493 MB now).
fn record_weight(r: &FileRecord) -> usize {
    r.sessions.iter().map(session_weight).sum()
}

/// One session's part of [`record_weight`].
fn session_weight(s: &trail_model::Session) -> usize {
    s.messages
        .iter()
        .map(|m| {
            m.text.len()
                + m.tool_input.as_ref().map_or(0, String::len)
                + m.tool_output.as_ref().map_or(0, String::len)
                + 512
        })
        .sum()
}

/// Returns the (source, file) pairs under a user-named path, detecting each file's format.
pub fn detect_paths(sources: &[Box<dyn Source>], path: &Path) -> Vec<(SourceKind, PathBuf)> {
    let known = Known {
        stored: &StoredRows::new(),
        sources,
    };
    detect_files(sources, files_at(path), &known)
}

/// The files under a user-named path (the path itself when it is a file).
fn files_at(path: &Path) -> Vec<PathBuf> {
    if path.is_dir() {
        trail_sources::discover::walk_files(path, 12, |_| true)
    } else {
        vec![path.to_path_buf()]
    }
}

/// The (source, file) pairs of `files`: a file in `known` (by path key) keeps its source, any
/// other is detected by its name and first bytes.
fn detect_files(
    sources: &[Box<dyn Source>],
    files: Vec<PathBuf>,
    known: &Known<'_>,
) -> Vec<(SourceKind, PathBuf)> {
    files
        .into_iter()
        .filter_map(|f| {
            let kind = match known.source_of(&path_key(&f)) {
                Some(kind) => kind,
                None => trail_sources::detect(sources, &f)?.kind(),
            };
            Some((kind, f))
        })
        .collect()
}

/// The key a file is stored under: its absolute path as text (borrowed from `path` when it is
/// one already: a no-change run looks up 20,000 keys and writes none).
pub fn path_key(path: &Path) -> Cow<'_, str> {
    // What discovery finds is nearly always absolute and normal already; `absolute` rebuilt
    // each path component by component (6% of a no-change run's CPU on 6,000 files).
    #[cfg(unix)]
    if let Some(text) = path.to_str().filter(|t| is_normal_absolute(t)) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        std::path::absolute(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
            .to_string(),
    )
}

/// Whether `absolute` would return `path` unchanged: absolute, and no empty or `.`
/// component (`..` stays, as `absolute` keeps it).
#[cfg(unix)]
fn is_normal_absolute(path: &str) -> bool {
    path.len() > 1
        && path.starts_with('/')
        && !path.ends_with('/')
        && !path.ends_with("/.")
        && !path.contains("//")
        && !path.contains("/./")
}

#[cfg(test)]
mod plan_order_tests {
    use super::*;

    fn planned(path: &str, size: u64) -> Planned {
        Planned {
            source: SourceKind::ClaudeCode,
            path: PathBuf::from(path),
            fingerprint: Fingerprint {
                size,
                mtime_ns: 0,
                inode: 0,
            },
            resume: None,
        }
    }

    #[test]
    fn large_files_come_first_by_size_then_the_rest_by_file_name() {
        let mb = 1 << 20;
        let mut plan = vec![
            planned("/p/b/9f.jsonl", 10 * mb),
            planned("/p/a/c4.jsonl", 2 * mb),
            planned("/p/z/0a.jsonl", 1000),
            planned("/p/b/77.jsonl", 40 * mb),
            planned("/p/a/0a.jsonl", 5),
            planned("/p/a/51.jsonl", LARGE_FILE_BYTES - 1),
            planned("/p/c/12.jsonl", LARGE_FILE_BYTES),
        ];
        order_plan(&mut plan);
        let order: Vec<&str> = plan.iter().map(|p| p.path.to_str().unwrap()).collect();
        assert_eq!(
            order,
            [
                // Large, biggest first.
                "/p/b/77.jsonl",
                "/p/b/9f.jsonl",
                "/p/c/12.jsonl",
                // The rest by file name across folders (a tie by the whole path).
                "/p/a/0a.jsonl",
                "/p/z/0a.jsonl",
                "/p/a/51.jsonl",
                "/p/a/c4.jsonl",
            ]
        );
    }
}

#[cfg(all(test, unix))]
mod path_key_tests {
    use super::*;

    #[test]
    fn the_short_way_gives_what_absolute_gives() {
        let cwd = std::env::current_dir().unwrap();
        for p in [
            "/",
            "//",
            "/a",
            "/a/",
            "/a//b",
            "/a/./b",
            "/a/.",
            "/a/..",
            "/a/../b",
            "/./a",
            "/a/.b",
            "/a/b.",
            "/a/..b",
            "/a/b/c.jsonl",
            "a/b",
            "./a",
            "a/../b",
            "/a/ b/",
            ".",
            "/.a/b",
            "/a/b/.",
            "//a",
        ] {
            let expected = std::path::absolute(p).unwrap().display().to_string();
            assert_eq!(path_key(Path::new(p)), expected, "{p:?}");
            if !p.starts_with('/') {
                assert!(path_key(Path::new(p)).starts_with(&*cwd.to_string_lossy()));
            }
        }
    }
}

/// Whether `path` may be a SQLite database with a `-wal` beside it: not a text format's file
/// (JSONL, JSON, Markdown), which are nearly all of them and need no second `stat`.
fn may_be_database(path: &Path) -> bool {
    !matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("jsonl" | "json" | "md" | "txt")
    )
}

/// Returns size, mtime and inode. For a SQLite database in WAL mode, commits land in the
/// `-wal` file first and the main file can stay untouched for a long time, so the `-wal` file's
/// size and mtime are folded in: a change to either makes the database count as changed.
fn fingerprint(path: &Path) -> Option<Fingerprint> {
    let md = std::fs::metadata(path).ok()?;
    let mtime = |md: &std::fs::Metadata| {
        md.modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0)
    };
    let mut mtime_ns = mtime(&md);
    let wal_md = may_be_database(path)
        .then(|| {
            let mut wal = path.as_os_str().to_owned();
            wal.push("-wal");
            std::fs::metadata(&wal).ok()
        })
        .flatten();
    if let Some(w) = wal_md {
        // Mix rather than add, so a WAL that shrinks while the database grows still changes it.
        mtime_ns ^= mtime(&w).rotate_left(17) ^ (w.len() as i64).rotate_left(41);
    }
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&md);
    #[cfg(not(unix))]
    let inode = 0u64;
    Some(Fingerprint {
        size: md.len(),
        mtime_ns,
        inode,
    })
}
