//! `trail usage` totals: the shared Claude Code corpus against an independent computation and
//! against ccusage, and the cross-file dedupe cases (issue 5).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_ingest::{IndexOptions, NoProgress};
use trail_model::SourceKind;
use trail_report::prices::Tokens;
use trail_report::{Filter, GroupBy, PriceTable, UsageReport};
use trail_store::Store;

fn index(store: &mut Store, root: &Path) {
    let options = IndexOptions::one_source(SourceKind::ClaudeCode, root.to_path_buf());
    trail_ingest::index(store, &options, &NoProgress).unwrap();
}

fn report(store: &Store) -> UsageReport {
    trail_report::usage(
        store,
        &Filter::default(),
        GroupBy::Day,
        PriceTable::shipped(),
    )
    .unwrap()
}

/// input, output, cache write, cache read.
type Four = [i64; 4];

/// One assistant usage entry read straight from a file.
#[derive(Debug, Clone)]
struct Entry {
    message_id: Option<String>,
    request_id: Option<String>,
    model: String,
    day: String,
    sidechain: bool,
    speed: bool,
    tokens: Four,
    /// ccusage's byte prefilter looks for `"usage":{` (no space) before parsing a line.
    ccusage_prefilter: bool,
}

impl Entry {
    fn total(&self) -> i64 {
        self.tokens.iter().sum()
    }
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// Reads every assistant usage entry of the `.jsonl` files under `dir`.
fn read_entries(dir: &Path) -> Vec<Entry> {
    let mut paths = Vec::new();
    files(dir, &mut paths);
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let bytes = std::fs::read(&p).unwrap();
        for line in String::from_utf8_lossy(&bytes).lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if v["type"] != "assistant" {
                continue;
            }
            let msg = &v["message"];
            let u = &msg["usage"];
            let model = msg["model"].as_str().unwrap_or("");
            if !u.is_object() || model == "<synthetic>" {
                continue;
            }
            let n = |x: &Value| x.as_i64().unwrap_or(0);
            let split = n(&u["cache_creation"]["ephemeral_5m_input_tokens"])
                + n(&u["cache_creation"]["ephemeral_1h_input_tokens"]);
            let write = if split > 0 {
                split
            } else {
                n(&u["cache_creation_input_tokens"])
            };
            let text = |x: &Value| x.as_str().filter(|s| !s.is_empty()).map(str::to_string);
            out.push(Entry {
                message_id: text(&msg["id"]),
                request_id: text(&v["requestId"]),
                model: model.to_string(),
                day: v["timestamp"]
                    .as_str()
                    .map(|t| t.chars().take(10).collect())
                    .unwrap_or_default(),
                sidechain: v["isSidechain"].as_bool().unwrap_or(false),
                speed: u.get("speed").is_some(),
                tokens: [
                    n(&u["input_tokens"]),
                    n(&u["output_tokens"]),
                    write,
                    n(&u["cache_read_input_tokens"]),
                ],
                ccusage_prefilter: line.contains("\"usage\":{"),
            });
        }
    }
    out
}

/// Counts each request once across all files: the same (message id, request id) keeps the
/// larger total (a tie goes to the entry with `speed`); a sidechain entry whose message id also
/// appears outside a sidechain is dropped, and sidechain entries sharing a message id count
/// once. Entries without both ids count each.
fn dedupe(entries: &[Entry]) -> Vec<Entry> {
    let mut main: HashMap<(String, String), Entry> = HashMap::new();
    let mut side: HashMap<String, Entry> = HashMap::new();
    let mut out = Vec::new();
    let better = |new: &Entry, old: &Entry| {
        new.total() > old.total() || (new.total() == old.total() && new.speed && !old.speed)
    };
    for e in entries {
        match (&e.message_id, &e.request_id, e.sidechain) {
            (Some(m), Some(r), false) => {
                let slot = main
                    .entry((m.clone(), r.clone()))
                    .or_insert_with(|| e.clone());
                if better(e, slot) {
                    *slot = e.clone();
                }
            }
            (Some(m), _, true) => {
                let slot = side.entry(m.clone()).or_insert_with(|| e.clone());
                if better(e, slot) {
                    *slot = e.clone();
                }
            }
            _ => out.push(e.clone()),
        }
    }
    let main_ids: std::collections::HashSet<&String> = main.keys().map(|(m, _)| m).collect();
    out.extend(
        side.values()
            .filter(|e| !main_ids.contains(e.message_id.as_ref().unwrap()))
            .cloned(),
    );
    out.extend(main.values().cloned());
    out
}

fn by_day(entries: &[Entry]) -> BTreeMap<String, Four> {
    let mut out: BTreeMap<String, Four> = BTreeMap::new();
    for e in entries.iter().filter(|e| e.total() > 0) {
        let d = out.entry(e.day.clone()).or_default();
        for (x, y) in d.iter_mut().zip(e.tokens) {
            *x += y;
        }
    }
    out
}

fn trail_by_day(r: &UsageReport) -> BTreeMap<String, Four> {
    r.rows
        .iter()
        .filter(|x| x.total_tokens > 0)
        .map(|x| {
            (
                x.key.clone(),
                [
                    x.input_tokens,
                    x.output_tokens,
                    x.cache_creation_tokens,
                    x.cache_read_tokens,
                ],
            )
        })
        .collect()
}

fn sum(entries: &[Entry]) -> Four {
    let mut t = [0; 4];
    for e in entries {
        for (x, y) in t.iter_mut().zip(e.tokens) {
            *x += y;
        }
    }
    t
}

fn cost(entries: &[Entry]) -> f64 {
    let p = PriceTable::shipped();
    entries
        .iter()
        .filter_map(|e| {
            p.resolve(&e.model).map(|price| {
                price.cost(&Tokens {
                    input: e.tokens[0],
                    output: e.tokens[1],
                    cache_creation: e.tokens[2],
                    cache_read: e.tokens[3],
                    ..Tokens::default()
                })
            })
        })
        .sum()
}

/// ccusage 20.0.24 on the shared corpus, copied into a `projects/x/` folder:
///
/// ```text
/// mkdir -p /tmp/ccu-shared/projects/x && cp ../shared/corpus/claude-code/*.jsonl /tmp/ccu-shared/projects/x/
/// TZ=UTC CLAUDE_CONFIG_DIR=/tmp/ccu-shared ccusage daily --json --offline
/// ```
///
/// `totals` of its output: input, output, cache write, cache read, then cost in USD.
const CCUSAGE_SHARED_TOKENS: Four = [1_330, 53_228, 613_279, 4_395_901];
const CCUSAGE_SHARED_COST: f64 = 3.779_320_649_999_999_4;
/// ccusage priced `claude-opus-5` (10 input, 5 output tokens on 2025-12-16) at $0.000175 (the
/// Opus 4.5 rates); it has no public price, so trail lists it as unpriced.
const CCUSAGE_OPUS_5_COST: f64 = 0.000_175;

fn shared_corpus() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/claude-code");
    p.is_dir().then_some(p)
}

#[test]
fn shared_corpus_usage_equals_independent_computation_and_ccusage() {
    let Some(corpus) = shared_corpus() else {
        // The corpus lives next to the repository in the team's workspace only.
        return;
    };
    let mut store = Store::open_in_memory().unwrap();
    index(&mut store, &corpus);
    let r = report(&store);
    let entries = read_entries(&corpus);
    let counted = dedupe(&entries);

    // trail equals the independent computation, per day and in total.
    assert_eq!(trail_by_day(&r), by_day(&counted));
    let t = &r.totals;
    let trail_tokens = [
        t.input_tokens,
        t.output_tokens,
        t.cache_creation_tokens,
        t.cache_read_tokens,
    ];
    assert_eq!(trail_tokens, sum(&counted));
    assert!((t.cost_usd - cost(&counted)).abs() < 1e-9);

    // ccusage differs on this corpus by one kind of entry only (docs/usage.md, rule 1):
    // lines whose JSON has a space after `"usage":`, which its byte prefilter skips. (The
    // corpus's entries without a requestId are all such lines; ccusage counts compact ones,
    // see tests/usage_ccusage_rules.rs.)
    let (ccusage_side, skipped): (Vec<Entry>, Vec<Entry>) =
        counted.into_iter().partition(|e| e.ccusage_prefilter);
    assert_eq!(sum(&ccusage_side), CCUSAGE_SHARED_TOKENS);
    let mut expected = CCUSAGE_SHARED_TOKENS;
    for (i, x) in sum(&skipped).iter().enumerate() {
        expected[i] += x;
    }
    assert_eq!(trail_tokens, expected);
    // Cost: ccusage's, plus the skipped entries priced, minus the unpriced claude-opus-5.
    let explained = CCUSAGE_SHARED_COST + cost(&skipped) - CCUSAGE_OPUS_5_COST;
    assert!(
        (t.cost_usd - explained).abs() < 1e-9,
        "{} vs {explained}",
        t.cost_usd
    );
    assert_eq!(
        (t.cost_usd * 100.0).round(),
        (CCUSAGE_SHARED_COST * 100.0).round()
    );
    let unpriced: Vec<&str> = r.unpriced_models.iter().map(|u| u.model.as_str()).collect();
    assert!(unpriced.contains(&"claude-opus-5"), "{unpriced:?}");
}

/// Writes a Claude Code assistant line.
fn assistant(
    session: &str,
    uuid: &str,
    msg: &str,
    req: &str,
    sidechain: bool,
    output: u64,
    ts: &str,
) -> String {
    format!(
        r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":null,"sessionId":"{session}","timestamp":"{ts}","isSidechain":{sidechain},"cwd":"/p","version":"2.1.5","requestId":"{req}","message":{{"id":"{msg}","model":"claude-sonnet-4-5-20250929","role":"assistant","type":"message","content":[{{"type":"text","text":"x"}}],"usage":{{"input_tokens":10,"output_tokens":{output},"cache_creation_input_tokens":100,"cache_read_input_tokens":1000}}}}}}"#
    )
}

fn user(session: &str, uuid: &str, ts: &str) -> String {
    format!(
        r#"{{"type":"user","uuid":"{uuid}","parentUuid":null,"sessionId":"{session}","timestamp":"{ts}","isSidechain":false,"cwd":"/p","version":"2.1.5","message":{{"role":"user","content":"go"}}}}"#
    )
}

fn write(dir: &Path, name: &str, lines: &[String]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), lines.join("\n") + "\n").unwrap();
}

const A: &str = "aaaaaaaa-0000-4000-8000-000000000001";
const C: &str = "cccccccc-0000-4000-8000-000000000003";

/// Session A: one request streamed as three chunks (msg_1) and one more request (msg_2).
fn session_a(lines: &mut Vec<String>) {
    lines.push(user(A, "u1", "2026-01-10T10:00:00.000Z"));
    for (i, out) in [2, 50, 360].into_iter().enumerate() {
        lines.push(assistant(
            A,
            &format!("a1-{i}"),
            "msg_1",
            "req_1",
            false,
            out,
            "2026-01-10T10:00:01.000Z",
        ));
    }
    lines.push(assistant(
        A,
        "a2",
        "msg_2",
        "req_2",
        false,
        20,
        "2026-01-10T10:00:05.000Z",
    ));
}

fn totals(store: &Store) -> (i64, Four) {
    let t = report(store).totals;
    (
        t.requests,
        [
            t.input_tokens,
            t.output_tokens,
            t.cache_creation_tokens,
            t.cache_read_tokens,
        ],
    )
}

#[test]
fn streamed_chunks_count_once_with_the_largest_total() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    session_a(&mut lines);
    write(&dir.path().join("p"), &format!("{A}.jsonl"), &lines);
    let mut store = Store::open_in_memory().unwrap();
    index(&mut store, dir.path());
    assert_eq!(totals(&store), (2, [20, 380, 200, 2000]));
}

#[test]
fn sidechain_replay_counts_the_main_copy_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    session_a(&mut lines);
    write(&dir.path().join("p"), &format!("{A}.jsonl"), &lines);
    // A /btw sidechain replays msg_2 under a new request id (with a larger total), then makes
    // one request of its own.
    write(
        &dir.path().join("p").join(A).join("subagents"),
        "agent-btw1.jsonl",
        &[
            assistant(
                A,
                "s1",
                "msg_2",
                "req_9",
                true,
                999,
                "2026-01-10T10:01:00.000Z",
            ),
            assistant(
                A,
                "s2",
                "msg_3",
                "req_3",
                true,
                7,
                "2026-01-10T10:01:05.000Z",
            ),
        ],
    );
    let mut store = Store::open_in_memory().unwrap();
    index(&mut store, dir.path());
    // msg_1 (360), msg_2 main copy (20), msg_3 (7).
    assert_eq!(totals(&store), (3, [30, 387, 300, 3000]));
}

#[test]
fn resumed_session_repeating_history_counts_once_and_follows_rewrites() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("p");
    let mut a = Vec::new();
    session_a(&mut a);
    write(&proj, &format!("{A}.jsonl"), &a);
    let mut store = Store::open_in_memory().unwrap();
    index(&mut store, dir.path());
    assert_eq!(totals(&store), (2, [20, 380, 200, 2000]));

    // `claude --resume` wrote a new file repeating A's history, then one new request.
    let mut c = Vec::new();
    session_a(&mut c);
    for l in &mut c {
        *l = l.replace(A, C);
    }
    c.push(assistant(
        C,
        "c3",
        "msg_4",
        "req_4",
        false,
        40,
        "2026-01-11T09:00:00.000Z",
    ));
    write(&proj, &format!("{C}.jsonl"), &c);
    index(&mut store, dir.path());
    assert_eq!(totals(&store), (3, [30, 420, 300, 3000]));
    let days = trail_by_day(&report(&store));
    assert_eq!(days["2026-01-11"], [10, 40, 100, 1000]);

    // A is rewritten without msg_1: C's copy of it now counts.
    write(
        &proj,
        &format!("{A}.jsonl"),
        &[
            user(A, "u1", "2026-01-10T10:00:00.000Z"),
            assistant(
                A,
                "a2",
                "msg_2",
                "req_2",
                false,
                20,
                "2026-01-10T10:00:05.000Z",
            ),
            user(A, "u9", "2026-01-10T10:00:09.000Z"),
        ],
    );
    index(&mut store, dir.path());
    assert_eq!(totals(&store), (3, [30, 420, 300, 3000]));
    // Each session's own view still has its copies (`trail usage --by session` shows the
    // request where it counted).
    let by_session = trail_report::usage(
        &store,
        &Filter::default(),
        GroupBy::Session,
        PriceTable::shipped(),
    )
    .unwrap();
    let c_row = by_session.rows.iter().find(|r| r.key == C).unwrap();
    assert_eq!(c_row.requests, 3);
}
