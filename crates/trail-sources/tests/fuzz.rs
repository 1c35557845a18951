//! Fuzzing every parser on the stable toolchain (issue 40): a seeded mutation loop run as a
//! plain test, so CI needs nothing new.
//!
//! Seeds are every file under `../shared/corpus` (read in place), every fixture under
//! `crates/*/tests/fixtures` and every file under `examples/`. A seed is fuzzed with each
//! source of the registry that detects it (as `trail index PATH` would pick), so a source added
//! to the registry is fuzzed with its own fixtures without touching this file; one more source,
//! picked at random from the registry, reads each mutated input too (anything may land in an
//! agent's folder). Each seed is parsed where it lies in a copy of its folder (a temporary
//! folder whose other entries link to the originals), so formats that read sibling files or
//! take facts from the path see the layout they expect.
//!
//! Mutations, one to three stacked: truncate at any byte, insert a BOM, convert to CRLF, flip
//! bytes, duplicate, drop or shuffle lines, insert garbage lines, break UTF-8, and give one JSON
//! value another type (null, a number, a string of control characters, an empty object...).
//!
//! Properties:
//! - no panic, no hang: each parse runs on its own thread and must finish within
//!   `TRAIL_FUZZ_TIMEOUT_MS` (1000) plus ten times the unmutated seed's own parse time (a
//!   loaded debug build takes a while over a 2 MB export; a hang takes for ever);
//! - every problem names the file it was found in, and, in a line-oriented format (a seed whose
//!   every line is a JSON value on its own), its line;
//! - garbage lines loses no record: in a line-oriented format, inserting lines that are not
//!   JSON between the records keeps exactly the sessions, messages, tool calls and tokens of
//!   the unmutated file, and each inserted line is reported as a problem on its own line number;
//! - an appendable source read in chunks (`max_bytes`) moves forward every chunk and stops.
//!
//! `TRAIL_FUZZ_CASES` (default 4) sets the mutated cases per seed (a seed over 256 KiB gets at
//! most 2); the random seed is `PROPTEST_RNG_SEED` (CI fixes it) or else 20261122. Inputs that
//! fail are written to `target/fuzz-failures/` to replay. `bench/fuzz.sh` runs a long campaign.

#![allow(clippy::print_stderr)] // prints the figures of the run

mod common;

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use trail_model::{MessageKind, ParseIssue, Session};
use trail_sources::{registry, FileParse, ParseRequest, Resume, Source};

/// Mutated cases per seed unless `TRAIL_FUZZ_CASES` says otherwise.
const DEFAULT_CASES: usize = 4;
/// Seeds larger than this get at most [`BIG_SEED_CASES`] cases (a debug build is slow on them).
const BIG_SEED: usize = 256 << 10;
const BIG_SEED_CASES: usize = 2;
const DEFAULT_SEED: u64 = 20261122;

/// Lines that are not JSON (each on its own is invalid JSON, none is blank).
const GARBAGE: &[&[u8]] = &[
    b"not json at all",
    b"{\"type\":\"user\",\"message\":",
    b"{\"broken\": tru}",
    b"]",
    b"\xff\xfe\x00garbage",
    b"<<<<<<< HEAD",
    b"{\"a\":1}}",
];

// ---------------------------------------------------------------------------------------------
// A small seeded random number generator (SplitMix64): no dependency, same cases everywhere.

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The run's seed: `PROPTEST_RNG_SEED` (CI sets it), else [`DEFAULT_SEED`].
fn run_seed() -> u64 {
    std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_SEED)
}

fn cases_per_seed() -> usize {
    std::env::var("TRAIL_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

fn base_timeout() -> Duration {
    let ms = std::env::var("TRAIL_FUZZ_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1000);
    Duration::from_millis(ms)
}

/// A per-seed generator: the run seed mixed with the seed's name, so adding a seed leaves the
/// other seeds' cases unchanged.
fn rng_for(name: &str) -> Rng {
    let h = xxhash_rust::xxh3::xxh3_64(name.as_bytes());
    Rng(run_seed() ^ h)
}

// ---------------------------------------------------------------------------------------------
// Seeds.

/// A seed file: the folder it is laid out under (copied as links) and its path inside it.
struct Seed {
    root: PathBuf,
    rel: PathBuf,
    /// A stable name for reports and the random generator.
    name: String,
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every corpus file, fixture and example, sorted. The layout root of a corpus file or a
/// fixture is its format's folder (`corpus/<format>`, `tests/fixtures/<format>`).
fn seeds() -> Vec<Seed> {
    let mut roots: Vec<(String, PathBuf)> = Vec::new();
    let shared = match std::env::var_os("TRAIL_SHARED") {
        Some(p) => PathBuf::from(p),
        None => workspace().join("../shared"),
    };
    let corpus = shared.join("corpus");
    if corpus.is_dir() {
        roots.extend(subfolders(&corpus, "corpus"));
    } else {
        eprintln!(
            "fuzz: no shared corpus at {}: fixtures only",
            corpus.display()
        );
    }
    for krate in subfolders(&workspace().join("crates"), "crates") {
        let fixtures = krate.1.join("tests/fixtures");
        if fixtures.is_dir() {
            roots.extend(subfolders(&fixtures, &format!("{}/fixtures", krate.0)));
        }
    }
    roots.push(("examples".into(), workspace().join("examples")));
    let mut out = Vec::new();
    for (label, root) in roots {
        for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_file() {
                continue;
            }
            let rel = entry.path().strip_prefix(&root).unwrap().to_path_buf();
            out.push(Seed {
                name: format!("{label}/{}", rel.display()),
                root: root.clone(),
                rel,
            });
        }
    }
    out
}

/// The folders directly under `dir`, sorted, each with a label `prefix/name`.
fn subfolders(dir: &Path, prefix: &str) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .filter(|p: &PathBuf| p.is_dir())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (format!("{prefix}/{name}"), p)
        })
        .collect();
    v.sort();
    v
}

/// Lays `seed` out in `dir`: real folders along the seed's path, links to the originals for
/// every other entry on the way. Returns where the seed's bytes go.
fn mirror(seed: &Seed, dir: &Path) -> PathBuf {
    let mut from = seed.root.clone();
    let mut to = dir.to_path_buf();
    let parts: Vec<_> = seed.rel.components().collect();
    for (i, part) in parts.iter().enumerate() {
        for entry in std::fs::read_dir(&from).unwrap().filter_map(Result::ok) {
            if entry.file_name() != part.as_os_str() {
                link(&entry.path(), &to.join(entry.file_name()));
            }
        }
        from.push(part);
        to.push(part);
        if i + 1 < parts.len() {
            std::fs::create_dir_all(&to).unwrap();
        }
    }
    to
}

#[cfg(unix)]
fn link(original: &Path, at: &Path) {
    let _ = std::os::unix::fs::symlink(original, at);
}

#[cfg(not(unix))]
fn link(original: &Path, at: &Path) {
    if original.is_file() {
        let _ = std::fs::copy(original, at);
    }
}

// ---------------------------------------------------------------------------------------------
// Mutations.

#[derive(Debug, Clone, Copy)]
enum Mutation {
    Truncate,
    Bom,
    Crlf,
    FlipBytes,
    DuplicateLine,
    DropLine,
    ShuffleLines,
    GarbageLine,
    BreakUtf8,
    RetypeValue,
}

const MUTATIONS: &[Mutation] = &[
    Mutation::Truncate,
    Mutation::Bom,
    Mutation::Crlf,
    Mutation::FlipBytes,
    Mutation::DuplicateLine,
    Mutation::DropLine,
    Mutation::ShuffleLines,
    Mutation::GarbageLine,
    Mutation::BreakUtf8,
    Mutation::RetypeValue,
];

/// Splits after each `\n` (the last piece may lack one).
fn lines_of(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn mutate(bytes: &[u8], m: Mutation, rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut lines = lines_of(bytes);
    match m {
        Mutation::Truncate => out.truncate(rng.below(bytes.len() + 1)),
        Mutation::Bom => out.splice(0..0, [0xEF, 0xBB, 0xBF]).for_each(drop),
        Mutation::Crlf => {
            out = lines
                .iter()
                .flat_map(|l| match l.strip_suffix(b"\n") {
                    Some(body) if !body.ends_with(b"\r") => [body, b"\r\n"].concat(),
                    _ => l.clone(),
                })
                .collect();
        }
        Mutation::FlipBytes if !out.is_empty() => {
            for _ in 0..=rng.below(4) {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
        }
        Mutation::DuplicateLine if !lines.is_empty() => {
            let i = rng.below(lines.len());
            let copy = lines[i].clone();
            lines.insert(rng.below(lines.len() + 1), copy);
            out = lines.concat();
        }
        Mutation::DropLine if !lines.is_empty() => {
            lines.remove(rng.below(lines.len()));
            out = lines.concat();
        }
        Mutation::ShuffleLines if lines.len() > 1 => {
            for i in (1..lines.len()).rev() {
                lines.swap(i, rng.below(i + 1));
            }
            out = lines.concat();
        }
        Mutation::GarbageLine => {
            let at = rng.below(lines.len() + 1);
            let mut garbage = GARBAGE[rng.below(GARBAGE.len())].to_vec();
            garbage.push(b'\n');
            lines.insert(at, garbage);
            out = lines.concat();
        }
        Mutation::BreakUtf8 => break_utf8(&mut out, rng),
        Mutation::RetypeValue => out = retype_value(bytes, rng),
        _ => {}
    }
    out
}

/// Cuts a multi-byte character in half, or plants a lone continuation byte or an invalid byte.
fn break_utf8(out: &mut Vec<u8>, rng: &mut Rng) {
    let multi: Vec<usize> = (0..out.len()).filter(|&i| out[i] >= 0xC0).collect();
    if !multi.is_empty() && rng.below(2) == 0 {
        let i = multi[rng.below(multi.len())];
        out.remove((i + 1).min(out.len() - 1));
        return;
    }
    let at = rng.below(out.len() + 1);
    let byte = [0x80, 0xBF, 0xC3, 0xFF, 0xFE][rng.below(5)];
    out.insert(at, byte);
}

/// Replaces one value of the JSON (the whole file's, or one line's in JSONL) by a value of
/// another type: where parsers trust a field's type, a structure-aware mutation finds it.
fn retype_value(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    if let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(bytes) {
        replace_a_node(&mut v, rng);
        return serde_json::to_vec_pretty(&v).unwrap();
    }
    let mut lines = lines_of(bytes);
    let json: Vec<usize> = (0..lines.len())
        .filter(|&i| serde_json::from_slice::<serde_json::Value>(&lines[i]).is_ok())
        .collect();
    if json.is_empty() {
        return bytes.to_vec();
    }
    let i = json[rng.below(json.len())];
    let mut v: serde_json::Value = serde_json::from_slice(&lines[i]).unwrap();
    replace_a_node(&mut v, rng);
    let newline = lines[i].ends_with(b"\n");
    lines[i] = serde_json::to_vec(&v).unwrap();
    if newline {
        lines[i].push(b'\n');
    }
    lines.concat()
}

/// Replaces the value at a random position (pre-order) of `v`.
fn replace_a_node(v: &mut serde_json::Value, rng: &mut Rng) {
    fn count(v: &serde_json::Value) -> usize {
        1 + match v {
            serde_json::Value::Array(a) => a.iter().map(count).sum(),
            serde_json::Value::Object(o) => o.values().map(count).sum(),
            _ => 0,
        }
    }
    fn nth<'a>(v: &'a mut serde_json::Value, k: &mut usize) -> Option<&'a mut serde_json::Value> {
        if *k == 0 {
            return Some(v);
        }
        *k -= 1;
        let children: Vec<&mut serde_json::Value> = match v {
            serde_json::Value::Array(a) => a.iter_mut().collect(),
            serde_json::Value::Object(o) => o.values_mut().collect(),
            _ => Vec::new(),
        };
        children.into_iter().find_map(|c| nth(c, k))
    }
    let mut k = rng.below(count(v));
    let replacements = [
        serde_json::Value::Null,
        serde_json::json!(true),
        serde_json::json!(-1),
        serde_json::json!(1e300),
        serde_json::json!(u64::MAX),
        serde_json::json!(""),
        serde_json::json!("\u{0}\u{1b}[2J\u{202e}\u{fffd}é"),
        serde_json::json!([]),
        serde_json::json!({}),
        serde_json::json!([null, {"type": null}]),
    ];
    if let Some(node) = nth(v, &mut k) {
        *node = replacements[rng.below(replacements.len())].clone();
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing under a watchdog.

type Sources = Arc<Vec<Box<dyn Source>>>;

enum Outcome {
    /// The parse returned (a whole-file error counts as returned).
    Done(Result<FileParse, String>, Duration),
    Panicked(String),
    Hung,
}

/// Parses `path` with source `i` on its own thread, waiting at most `limit`.
fn parse_watched(sources: &Sources, i: usize, request: Request, limit: Duration) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let sources = Arc::clone(sources);
    let spawned = std::thread::Builder::new()
        .name("fuzz-parse".into())
        .spawn(move || {
            let started = Instant::now();
            let r = std::panic::catch_unwind(AssertUnwindSafe(|| request.run(&*sources[i])));
            let _ = tx.send(r.map(|r| (r, started.elapsed())));
        })
        .expect("a thread");
    match rx.recv_timeout(limit) {
        Ok(Ok((r, took))) => {
            let _ = spawned.join();
            Outcome::Done(r, took)
        }
        Ok(Err(payload)) => {
            let _ = spawned.join();
            Outcome::Panicked(panic_text(payload.as_ref()))
        }
        // Left running: a thread cannot be stopped; the test fails anyway.
        Err(_) => Outcome::Hung,
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

/// A whole parse, or a parse in chunks of at most `chunk` bytes resumed until done.
#[derive(Clone)]
struct Request {
    path: PathBuf,
    chunk: Option<u64>,
}

impl Request {
    fn run(&self, source: &dyn Source) -> Result<FileParse, String> {
        match self.chunk {
            None => source
                .parse(ParseRequest {
                    path: &self.path,
                    resume: None,
                    max_bytes: None,
                })
                .map_err(|e| e.to_string()),
            Some(chunk) => self.run_in_chunks(source, chunk),
        }
    }

    /// Resumes as the ingest does until `more` is off; every chunk must move forward.
    fn run_in_chunks(&self, source: &dyn Source, chunk: u64) -> Result<FileParse, String> {
        let mut fp = FileParse::default();
        let mut state: Vec<u8> = Vec::new();
        let (mut offset, mut line, mut first) = (0u64, 0u64, true);
        loop {
            let resume = (!first).then_some(Resume {
                offset,
                line,
                state: &state,
            });
            let next = source
                .parse(ParseRequest {
                    path: &self.path,
                    resume,
                    max_bytes: Some(chunk),
                })
                .map_err(|e| e.to_string())?;
            fp.issues.extend(next.issues);
            fp.sessions.extend(next.sessions);
            if !next.more {
                return Ok(fp);
            }
            if next.bytes_parsed <= offset && !first {
                panic!("a chunk of {chunk} bytes did not move past byte {offset}");
            }
            first = false;
            offset = next.bytes_parsed;
            line = next.lines;
            state = next.state.unwrap_or_default();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What a parse gave, to compare.

#[derive(Debug, PartialEq)]
struct Counts {
    native_id: String,
    messages: usize,
    tool_calls: usize,
    input_tokens: u64,
    output_tokens: u64,
}

fn counts(sessions: &[Session]) -> Vec<Counts> {
    sessions
        .iter()
        .map(|s| Counts {
            native_id: s.meta.native_id.clone(),
            messages: s.messages.len(),
            tool_calls: common::count_kind(s, MessageKind::ToolCall),
            input_tokens: s.usage.iter().map(|u| u.input_tokens).sum(),
            output_tokens: s.usage.iter().map(|u| u.output_tokens).sum(),
        })
        .collect()
}

/// Whether every non-blank line of `bytes` is a JSON value on its own (JSONL), with two or more.
fn line_oriented_json(bytes: &[u8]) -> bool {
    let mut n = 0;
    for l in bytes.split(|&b| b == b'\n') {
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        if l.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if serde_json::from_slice::<serde_json::Value>(l).is_err() {
            return false;
        }
        n += 1;
    }
    n >= 2
}

// ---------------------------------------------------------------------------------------------
// The run.

#[derive(Default)]
struct Tally {
    seeds: usize,
    undetected: usize,
    cases: usize,
    parses: usize,
    by_source: std::collections::BTreeMap<String, usize>,
    slowest: Duration,
    /// Sources that detected at least one seed.
    seeded: std::collections::BTreeSet<String>,
    failures: Vec<String>,
}

/// One seed's fixed context for its cases.
struct Ctx<'a> {
    sources: &'a Sources,
    seed: &'a Seed,
    path: PathBuf,
    limit: Duration,
    /// Whether the unmutated seed is JSONL (every line a JSON value).
    line_oriented: bool,
    /// The temporary folder the seed is laid out in.
    dir: PathBuf,
    /// The sources that detect the seed (its own format).
    detecting: Vec<usize>,
}

impl Ctx<'_> {
    /// Writes `bytes` to the seed's place and parses them with source `i`, checking the
    /// properties every input must hold. Returns the parse when it returned.
    fn check(
        &self,
        t: &mut Tally,
        i: usize,
        bytes: &[u8],
        what: &str,
        chunk: Option<u64>,
    ) -> Option<FileParse> {
        std::fs::write(&self.path, bytes).unwrap();
        let source = &self.sources[i];
        let kind = source.kind().as_str().to_string();
        t.parses += 1;
        *t.by_source.entry(kind.clone()).or_default() += 1;
        let request = Request {
            path: self.path.clone(),
            chunk,
        };
        let problem = match parse_watched(self.sources, i, request, self.limit) {
            Outcome::Done(Ok(fp), took) => {
                t.slowest = t.slowest.max(took);
                match self.misnamed_issue(i, &fp.issues, bytes) {
                    None => return Some(fp),
                    Some(p) => p,
                }
            }
            Outcome::Done(Err(_), took) => {
                t.slowest = t.slowest.max(took);
                return None;
            }
            Outcome::Panicked(msg) => format!("panicked: {msg}"),
            Outcome::Hung => format!("took over {:?}", self.limit),
        };
        let saved = save_failure(&kind, bytes);
        t.failures.push(format!(
            "{kind} on {} ({what}): {problem}; input saved to {}",
            self.seed.name,
            saved.display()
        ));
        None
    }

    /// The first problem that names no file of the seed's folder, or, when source `i` reads
    /// the seed's own line-oriented format, a record's problem without its line. (A problem
    /// about the whole file, "empty log", has no line and quotes no record.)
    fn misnamed_issue(&self, i: usize, issues: &[ParseIssue], bytes: &[u8]) -> Option<String> {
        let lines = bytes.split(|&b| b == b'\n').count() as u64;
        let own_lines = self.line_oriented && self.detecting.contains(&i);
        issues.iter().find_map(|issue| {
            let named = Path::new(&issue.path);
            if !named.starts_with(&self.dir) || !named.exists() {
                return Some(format!(
                    "a problem names {:?}, no file here: {issue:?}",
                    issue.path
                ));
            }
            let about_a_record = issue.excerpt.is_some() || issue.byte_offset.is_some();
            let bad_line = match issue.line {
                None => about_a_record,
                Some(l) => l == 0 || l > lines,
            };
            (own_lines && bad_line)
                .then(|| format!("a problem has no line in 1..={lines}: {issue:?}"))
        })
    }
}

fn save_failure(kind: &str, bytes: &[u8]) -> PathBuf {
    let dir = workspace().join("target/fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let name = format!("{kind}-{:016x}", xxhash_rust::xxh3::xxh3_64(bytes));
    let path = dir.join(name);
    let _ = std::fs::write(&path, bytes);
    path
}

/// Inserts garbage lines between the complete lines of a JSONL file; returns the new bytes and
/// the 1-based numbers the inserted lines have in them.
fn with_garbage_lines(bytes: &[u8], rng: &mut Rng) -> (Vec<u8>, Vec<u64>) {
    let mut lines = lines_of(bytes);
    // Never after a last line without its newline: that one is torn, not a record yet.
    let complete = lines.iter().filter(|l| l.ends_with(b"\n")).count();
    let mut at: Vec<usize> = (0..=rng.below(3))
        .map(|_| rng.below(complete + 1))
        .collect();
    at.sort_unstable();
    for (k, &i) in at.iter().enumerate().rev() {
        let mut g = GARBAGE[(k + rng.below(GARBAGE.len())) % GARBAGE.len()].to_vec();
        g.push(b'\n');
        lines.insert(i, g);
    }
    // The k-th insertion (in order) lands after k earlier ones.
    let numbers = at
        .iter()
        .enumerate()
        .map(|(k, &i)| (i + k + 1) as u64)
        .collect();
    (lines.concat(), numbers)
}

fn fuzz_seed(sources: &Sources, seed: &Seed, t: &mut Tally) {
    let original = std::fs::read(seed.root.join(&seed.rel)).unwrap();
    let head = &original[..original.len().min(64 << 10)];
    let detecting: Vec<usize> = (0..sources.len())
        .filter(|&i| sources[i].detect(&seed.root.join(&seed.rel), head))
        .collect();
    t.seeds += 1;
    t.seeded.extend(
        detecting
            .iter()
            .map(|&i| sources[i].kind().as_str().to_string()),
    );
    if detecting.is_empty() {
        t.undetected += 1;
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = mirror(seed, dir.path());
    let mut ctx = Ctx {
        sources,
        seed,
        path,
        limit: base_timeout(),
        line_oriented: line_oriented_json(&original),
        dir: dir.path().to_path_buf(),
        detecting: detecting.clone(),
    };
    let mut rng = rng_for(&seed.name);
    for &i in &detecting {
        let started = Instant::now();
        let baseline = ctx.check(t, i, &original, "unmutated", None);
        ctx.limit = ctx.limit.max(base_timeout() + started.elapsed() * 10);
        if let Some(base) = baseline {
            garbage_keeps_records(&ctx, t, i, &original, &base, &mut rng);
            chunked_moves_forward(&ctx, t, i, &original, &mut rng);
        }
    }
    let cases = if original.len() > BIG_SEED {
        cases_per_seed().min(BIG_SEED_CASES)
    } else {
        cases_per_seed()
    };
    for case in 0..cases {
        let mut bytes = original.clone();
        let mut names = Vec::new();
        for _ in 0..=rng.below(3) {
            let m = MUTATIONS[rng.below(MUTATIONS.len())];
            names.push(format!("{m:?}"));
            bytes = mutate(&bytes, m, &mut rng);
        }
        let what = format!("case {case}: {}", names.join("+"));
        t.cases += 1;
        for &i in &detecting {
            ctx.check(t, i, &bytes, &what, None);
        }
        let other = rng.below(sources.len());
        ctx.check(t, other, &bytes, &what, None);
    }
}

/// The garbage-lines property (line-oriented JSON only).
fn garbage_keeps_records(
    ctx: &Ctx<'_>,
    t: &mut Tally,
    i: usize,
    original: &[u8],
    base: &FileParse,
    rng: &mut Rng,
) {
    if !ctx.line_oriented {
        return;
    }
    let (bytes, inserted) = with_garbage_lines(original, rng);
    t.cases += 1;
    let Some(fp) = ctx.check(t, i, &bytes, "garbage lines", None) else {
        return;
    };
    let kind = ctx.sources[i].kind().as_str();
    let mut problems = Vec::new();
    if counts(&fp.sessions) != counts(&base.sessions) {
        problems.push(format!(
            "records changed: {:?} became {:?}",
            counts(&base.sessions),
            counts(&fp.sessions)
        ));
    }
    for n in &inserted {
        if !fp.issues.iter().any(|p| p.line == Some(*n)) {
            problems.push(format!("inserted line {n} is not reported as a problem"));
        }
    }
    if !problems.is_empty() {
        let saved = save_failure(kind, &bytes);
        t.failures.push(format!(
            "{kind} on {} (garbage lines at {inserted:?}): {}; input saved to {}",
            ctx.seed.name,
            problems.join("; "),
            saved.display()
        ));
    }
}

/// The chunked-reading property (appendable sources).
fn chunked_moves_forward(ctx: &Ctx<'_>, t: &mut Tally, i: usize, original: &[u8], rng: &mut Rng) {
    if !ctx.sources[i].appendable(&ctx.path) || original.is_empty() {
        return;
    }
    // Two to ten chunks: enough to resume several times, few enough that a resume's cost
    // (a Claude Code resume reloads the chain built so far) stays linear.
    let chunk = 1 + (original.len() / (2 + rng.below(9))) as u64;
    t.cases += 1;
    ctx.check(
        t,
        i,
        original,
        &format!("read in chunks of {chunk} bytes"),
        Some(chunk),
    );
}

#[test]
fn every_parser_survives_mutated_seeds() {
    let sources: Sources = Arc::new(registry());
    let started = Instant::now();
    let mut t = Tally::default();
    for seed in seeds() {
        fuzz_seed(&sources, &seed, &mut t);
    }
    let unseeded: Vec<&str> = sources
        .iter()
        .map(|s| s.kind().as_str())
        .filter(|k| !t.seeded.contains(*k))
        .collect();
    eprintln!(
        "fuzz: seed {}, {} seeds ({} no source detects), {} cases, {} parses in {:.1} s, slowest parse {:?}; parses by source: {:?}; sources with no seed (fed other formats only): {unseeded:?}",
        run_seed(),
        t.seeds,
        t.undetected,
        t.cases,
        t.parses,
        started.elapsed().as_secs_f64(),
        t.slowest,
        t.by_source,
    );
    assert!(
        t.failures.is_empty(),
        "{} failures:\n{}",
        t.failures.len(),
        t.failures.join("\n")
    );
}
