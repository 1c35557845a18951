//! 5-hour blocks, per-model breakdowns and the subagent roll-up (issue 19), on Claude Code logs
//! the tests write themselves, and the blocks of the shared corpus against ccusage's.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use trail_ingest::{IndexOptions, NoProgress};
use trail_model::SourceKind;
use trail_report::blocks::BlocksReport;
use trail_report::prices::Tokens;
use trail_report::{
    BlockOptions, DayZone, Filter, GroupBy, PriceTable, StatusRequest, UsageOptions,
};
use trail_store::Store;

const MODEL: &str = "claude-sonnet-4-5-20250929";

/// An assistant line: 10 input, `output` output, 100 cache write, 1000 cache read tokens.
fn assistant(session: &str, n: usize, ts: &str, output: u64, sidechain: bool) -> String {
    format!(
        r#"{{"type":"assistant","uuid":"{session}-a{n}","parentUuid":null,"sessionId":"{session}","timestamp":"{ts}","isSidechain":{sidechain},"cwd":"/p","version":"2.1.5","requestId":"req_{session}_{n}","message":{{"id":"msg_{session}_{n}","model":"{MODEL}","role":"assistant","type":"message","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":10,"output_tokens":{output},"cache_creation_input_tokens":100,"cache_read_input_tokens":1000}}}}}}"#
    )
}

fn user(session: &str, ts: &str) -> String {
    format!(
        r#"{{"type":"user","uuid":"{session}-u","parentUuid":null,"sessionId":"{session}","timestamp":"{ts}","isSidechain":false,"cwd":"/p","version":"2.1.5","message":{{"role":"user","content":"go"}}}}"#
    )
}

/// Writes a session file with one request per timestamp.
fn session_file(dir: &Path, session: &str, times: &[&str]) {
    let mut lines = vec![user(session, times[0])];
    for (n, ts) in times.iter().enumerate() {
        lines.push(assistant(session, n, ts, 100, false));
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join(format!("{session}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}

fn store_of(root: &Path) -> Store {
    let mut store = Store::open_in_memory().unwrap();
    let options = IndexOptions::one_source(SourceKind::ClaudeCode, root.to_path_buf());
    trail_ingest::index(&mut store, &options, &NoProgress).unwrap();
    store
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

/// Long after every fixture: nothing active.
const LATER: &str = "2030-01-01T00:00:00Z";

fn report(store: &Store, zone: &str, now: &str, options: &BlockOptions) -> BlocksReport {
    trail_report::blocks(
        store,
        &Filter::default(),
        PriceTable::shipped(),
        &DayZone::parse(zone).unwrap(),
        at(now),
        options,
    )
    .unwrap()
}

fn ids(r: &BlocksReport) -> Vec<&str> {
    r.blocks.iter().map(|b| b.id.as_str()).collect()
}

/// One request's cost at the shipped price.
fn request_cost(output: i64) -> f64 {
    PriceTable::shipped().resolve(MODEL).unwrap().cost(&Tokens {
        input: 10,
        output,
        cache_creation: 100,
        cache_read: 1000,
        ..Tokens::default()
    })
}

#[test]
fn pauses_of_4h59_stay_in_the_block_and_of_5h01_start_a_new_one_after_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    session_file(
        &dir.path().join("p"),
        "aaaaaaaa-0000-4000-8000-000000000001",
        &[
            // 4 h 59 min after the first request, still inside its block (10:00-15:00).
            "2026-01-10T10:00:00.000Z",
            "2026-01-10T14:59:00.000Z",
            // 4 h 59 min after the last: past the block's end, so a new block, but no gap.
            "2026-01-10T19:58:00.000Z",
            // 5 h 01 min after the last: a gap block, then a new block at 01:00.
            "2026-01-11T00:59:00.000Z",
        ],
    );
    let store = store_of(dir.path());
    let r = report(&store, "UTC", LATER, &BlockOptions::default());
    assert_eq!(
        ids(&r),
        [
            "2026-01-10T10:00:00.000Z",
            "2026-01-10T19:00:00.000Z",
            "gap-2026-01-11T00:58:00.000Z",
            "2026-01-11T00:00:00.000Z",
        ]
    );
    let b = &r.blocks;
    assert_eq!(b[0].sums.requests, 2);
    assert_eq!(b[0].end, "2026-01-10T15:00:00.000Z");
    assert_eq!(b[0].active_minutes, 299);
    assert_eq!(b[1].sums.requests, 1);
    assert!(b[2].is_gap && b[2].sums.requests == 0);
    assert_eq!(b[2].end, "2026-01-11T00:59:00.000Z");
    assert_eq!(b[3].sums.requests, 1);
    assert!(b.iter().all(|b| !b.is_active));
    assert_eq!(r.totals.requests, 4);
    assert_eq!(r.totals.total_tokens, 4 * (10 + 100 + 100 + 1000));
    assert!((r.totals.cost_usd - 4.0 * request_cost(100)).abs() < 1e-12);
    assert!(r.estimate.starts_with("estimate from local logs"));
}

#[test]
fn a_block_runs_across_midnight() {
    let dir = tempfile::tempdir().unwrap();
    session_file(
        &dir.path().join("p"),
        "bbbbbbbb-0000-4000-8000-000000000002",
        &["2026-01-10T22:30:00.000Z", "2026-01-11T01:15:00.000Z"],
    );
    let store = store_of(dir.path());
    let r = report(&store, "UTC", LATER, &BlockOptions::default());
    assert_eq!(ids(&r), ["2026-01-10T22:00:00.000Z"]);
    assert_eq!(r.blocks[0].end, "2026-01-11T03:00:00.000Z");
    assert_eq!(r.blocks[0].start_local, "2026-01-10 22:00");
    assert_eq!(r.blocks[0].end_local, "2026-01-11 03:00");
    assert_eq!(r.blocks[0].sums.requests, 2);
    // By day the same requests fall on two days.
    let days = trail_report::usage(
        &store,
        &Filter::default(),
        GroupBy::Day,
        PriceTable::shipped(),
    )
    .unwrap();
    assert_eq!(days.rows.len(), 2);
}

#[test]
fn blocks_keep_five_real_hours_across_daylight_saving_changes() {
    let dir = tempfile::tempdir().unwrap();
    session_file(
        &dir.path().join("p"),
        "cccccccc-0000-4000-8000-000000000003",
        &[
            // Paris springs forward at 01:00 UTC on 2026-03-29 (02:00 CET -> 03:00 CEST)...
            "2026-03-29T00:30:00.000Z",
            "2026-03-29T03:30:00.000Z",
            // ...and falls back at 01:00 UTC on 2026-10-25 (03:00 CEST -> 02:00 CET).
            "2026-10-25T00:10:00.000Z",
            "2026-10-25T04:50:00.000Z",
        ],
    );
    let store = store_of(dir.path());
    let utc = report(&store, "UTC", LATER, &BlockOptions::default());
    let paris = report(&store, "Europe/Paris", LATER, &BlockOptions::default());
    // The same blocks (UTC hours, ccusage's rule) whatever the zone...
    assert_eq!(ids(&utc), ids(&paris));
    let spring = &paris.blocks[0];
    assert_eq!(spring.start, "2026-03-29T00:00:00.000Z");
    assert_eq!(spring.end, "2026-03-29T05:00:00.000Z");
    // ...shown in local time: five hours that the clock shows as six, then as four.
    assert_eq!(spring.start_local, "2026-03-29 01:00");
    assert_eq!(spring.end_local, "2026-03-29 07:00");
    let autumn = &paris.blocks[2];
    assert!(paris.blocks[1].is_gap);
    assert_eq!(autumn.start_local, "2026-10-25 02:00");
    assert_eq!(autumn.end_local, "2026-10-25 06:00");
    assert_eq!(autumn.sums.requests, 2);
    assert_eq!(paris.time_zone, "Europe/Paris");
    // A half-hour zone shows UTC-hour blocks at half past.
    let india = report(&store, "+05:30", LATER, &BlockOptions::default());
    assert_eq!(india.blocks[0].start_local, "2026-03-29 05:30");
}

#[test]
fn the_active_block_has_time_left_a_burn_rate_and_a_projection() {
    let dir = tempfile::tempdir().unwrap();
    session_file(
        &dir.path().join("p"),
        "dddddddd-0000-4000-8000-000000000004",
        &[
            "2026-01-09T08:00:00.000Z",
            "2026-01-10T10:20:00.000Z",
            "2026-01-10T11:50:00.000Z",
            "2026-01-10T11:58:00.000Z",
        ],
    );
    let store = store_of(dir.path());
    let now = "2026-01-10T12:00:00Z";
    let all = report(&store, "UTC", now, &BlockOptions::default());
    let options = BlockOptions {
        active_only: true,
        breakdown: true,
    };
    let active = report(&store, "UTC", now, &options);
    assert_eq!(ids(&active), ["2026-01-10T10:00:00.000Z"]);
    // Reading only from the last long pause gives the very block the full report has.
    let full = all.active().unwrap();
    let b = active.active().unwrap();
    assert_eq!(b.sums, full.sums);
    assert_eq!(b.sums.requests, 3);
    let rate = b.burn_rate.as_ref().unwrap();
    assert_eq!(rate.window_minutes, 15);
    assert_eq!(
        (rate.since.as_str(), rate.until.as_str()),
        ("2026-01-10T11:45:00.000Z", "2026-01-10T12:00:00.000Z")
    );
    assert_eq!(rate.requests, 2);
    let per_request = (10 + 100 + 100 + 1000) as f64;
    assert!((rate.tokens_per_minute - 2.0 * per_request / 15.0).abs() < 1e-9);
    assert!((rate.cost_per_hour_usd - 2.0 * request_cost(100) * 4.0).abs() < 1e-12);
    let p = b.projection.as_ref().unwrap();
    assert_eq!(p.remaining_minutes, 180);
    assert!((p.cost_usd - (3.0 * request_cost(100) + rate.cost_per_hour_usd * 3.0)).abs() < 1e-12);
    assert_eq!(b.breakdown.len(), 1);
    assert_eq!(b.breakdown[0].model, MODEL);
    assert_eq!(b.breakdown[0].sums, b.sums);
    // Five hours after the last request nothing is active.
    let idle = report(&store, "UTC", "2026-01-10T16:58:01Z", &options);
    assert!(idle.blocks.is_empty());
}

#[test]
fn by_session_counts_subagents_in_their_parent_and_the_roll_up_is_the_sum_of_the_children() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    let parent = "eeeeeeee-0000-4000-8000-000000000005";
    session_file(&project, parent, &["2026-01-10T10:00:00.000Z"]);
    let subagents = project.join(parent).join("subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    // Two subagents: one of two requests (200 and 300 output tokens), one of one (400).
    for (agent, first, outputs) in [("a1", 10, vec![200u64, 300]), ("a2", 20, vec![400])] {
        let lines: Vec<String> = outputs
            .iter()
            .enumerate()
            .map(|(n, out)| assistant(parent, first + n, "2026-01-10T10:05:00.000Z", *out, true))
            .collect();
        std::fs::write(
            subagents.join(format!("agent-{agent}.jsonl")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
    let store = store_of(dir.path());
    let zone = DayZone::utc();
    let by_session = |breakdown| {
        trail_report::usage_with(
            &store,
            &Filter::default(),
            GroupBy::Session,
            PriceTable::shipped(),
            &zone,
            &UsageOptions { breakdown },
        )
        .unwrap()
    };
    let r = by_session(false);
    assert_eq!(r.rows.len(), 1, "subagents fold into their parent");
    let row = &r.rows[0];
    assert_eq!(row.key, parent);
    assert_eq!(row.subagent_sessions, Some(2));
    let own = request_cost(100);
    let children = request_cost(200) + request_cost(300) + request_cost(400);
    assert!((row.self_cost_usd.unwrap() - own).abs() < 1e-12);
    assert_eq!(row.self_total_tokens, Some(1210));
    assert!((row.cost_usd - (own + children)).abs() < 1e-12);
    assert_eq!(row.requests, 4);
    assert_eq!(row.total_tokens, 4 * 1110 + 100 + 200 + 300 + 400);
    assert_eq!(row.cost_usd, r.totals.cost_usd);
    // The status line's session cost is the same roll-up.
    let status = trail_report::status(
        &store,
        &StatusRequest {
            session_id: Some(parent.into()),
            ..StatusRequest::default()
        },
        PriceTable::shipped(),
        &zone,
        at("2026-01-10T10:30:00Z"),
    )
    .unwrap();
    assert!((status.session_cost_usd - row.cost_usd).abs() < 1e-12);
    // The last main-chain request is the parent's: 10 + 100 + 1000 tokens of context.
    assert_eq!(status.context.as_ref().unwrap().tokens, 1110);
    // A breakdown row per model under the session, summing to it.
    let r = by_session(true);
    let row = &r.rows[0];
    assert_eq!(row.breakdown.len(), 1);
    assert_eq!(row.breakdown[0].key, MODEL);
    assert_eq!(row.breakdown[0].total_tokens, row.total_tokens);
}

#[test]
fn breakdown_rows_sum_to_their_bucket_for_every_grouping() {
    let dir = tempfile::tempdir().unwrap();
    session_file(
        &dir.path().join("p"),
        "ffffffff-0000-4000-8000-000000000006",
        &["2026-01-10T10:00:00.000Z", "2026-01-11T10:00:00.000Z"],
    );
    let store = store_of(dir.path());
    for by in [
        GroupBy::Day,
        GroupBy::Week,
        GroupBy::Month,
        GroupBy::Model,
        GroupBy::Session,
        GroupBy::Repo,
        GroupBy::Source,
    ] {
        let r = trail_report::usage_with(
            &store,
            &Filter::default(),
            by,
            PriceTable::shipped(),
            &DayZone::utc(),
            &UsageOptions { breakdown: true },
        )
        .unwrap();
        for row in &r.rows {
            assert!(!row.breakdown.is_empty(), "{by:?}");
            let tokens: i64 = row.breakdown.iter().map(|m| m.total_tokens).sum();
            let requests: i64 = row.breakdown.iter().map(|m| m.requests).sum();
            assert_eq!(
                (tokens, requests),
                (row.total_tokens, row.requests),
                "{by:?}"
            );
        }
    }
}

/// The shared corpus's Claude Code files whose every usage line ccusage reads: no space after
/// `"usage":` (its byte prefilter) and a `requestId` on each (it drops entries without one).
const FULLY_READ: &[&str] = &[
    "agentsessions-fixture-parent-with-subagent.jsonl",
    "agentsessions-fixture-subagents-agent-a0ad4f44468bdf20d.jsonl",
    "ccviewer-agent-file-fixture.jsonl",
    "ccviewer-init-command.jsonl",
    "ccviewer-orchestrator-nextjs-todo-sidechains.jsonl",
    "claudecodelog-fixture-dag-compact-after-rewind.jsonl",
    "randlee-simple-agent-aae161c-subagent.jsonl",
    "randlee-simple-agent-acompact-a94287.jsonl",
    "randlee-simple-agent-aprompt-suggestion-aafb27.jsonl",
    "randlee-subagents-agent-a53b173.jsonl",
    "randlee-subagents-agent-acompact-53a066.jsonl",
];

/// ccusage 20.0.24 on those files, copied into a `projects/x/` folder:
///
/// ```text
/// mkdir -p /tmp/ccu-blocks/projects/x && cp <the FULLY_READ files> /tmp/ccu-blocks/projects/x/
/// TZ=UTC CLAUDE_CONFIG_DIR=/tmp/ccu-blocks ccusage blocks --json --offline
/// ```
///
/// Per block: id, end, entries, input, output, cache write, cache read, cost in USD. Gaps
/// (`isGap`): id and end. No block was active (the logs are older than the run).
const CCUSAGE_BLOCKS: &[(&str, &str, i64, [i64; 4], f64)] = &[
    (
        "2025-07-01T10:00:00.000Z",
        "2025-07-01T15:00:00.000Z",
        5,
        [50, 25, 0, 0],
        0.000_525_000_000_000_000_1,
    ),
    (
        "2025-09-03T00:00:00.000Z",
        "2025-09-03T05:00:00.000Z",
        178,
        [1_011, 52_896, 150_674, 3_751_073],
        2.486_822_399_999_999_4,
    ),
    (
        "2026-02-02T04:00:00.000Z",
        "2026-02-02T09:00:00.000Z",
        24,
        [51, 198, 259_524, 379_821],
        1.009_532_3,
    ),
    (
        "2026-02-02T23:00:00.000Z",
        "2026-02-03T04:00:00.000Z",
        5,
        [30, 18, 50_918, 248_349],
        0.088_602_4,
    ),
    (
        "2026-02-03T05:00:00.000Z",
        "2026-02-03T10:00:00.000Z",
        1,
        [10, 1, 152_163, 16_658],
        0.191_884_55,
    ),
];
const CCUSAGE_GAPS: &[(&str, &str)] = &[
    ("gap-2025-07-01T15:41:00.000Z", "2025-09-03T00:47:21.540Z"),
    ("gap-2025-09-03T06:02:03.665Z", "2026-02-02T04:53:22.663Z"),
    ("gap-2026-02-02T10:51:00.581Z", "2026-02-02T23:59:53.050Z"),
    ("gap-2026-02-03T05:00:05.480Z", "2026-02-03T05:47:34.016Z"),
];

fn shared_corpus() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/claude-code");
    p.is_dir().then_some(p)
}

#[test]
fn shared_corpus_blocks_equal_ccusage_blocks() {
    let Some(corpus) = shared_corpus() else {
        // The corpus lives next to the repository in the team's workspace only.
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: ../shared/corpus/claude-code is absent");
        }
        return;
    };
    let mut store = Store::open_in_memory().unwrap();
    let options = IndexOptions {
        paths: FULLY_READ.iter().map(|f| corpus.join(f)).collect(),
        sources: vec![SourceKind::ClaudeCode],
        ..IndexOptions::default()
    };
    trail_ingest::index(&mut store, &options, &NoProgress).unwrap();
    let r = report(&store, "UTC", LATER, &BlockOptions::default());
    let blocks: Vec<_> = r.blocks.iter().filter(|b| !b.is_gap).collect();
    assert_eq!(blocks.len(), CCUSAGE_BLOCKS.len());
    for (b, (id, end, entries, [i, o, w, c], cost)) in blocks.iter().zip(CCUSAGE_BLOCKS) {
        assert_eq!((b.id.as_str(), b.end.as_str()), (*id, *end));
        assert_eq!(b.sums.requests, *entries, "{id}");
        let s = &b.sums;
        assert_eq!(
            [
                s.input_tokens,
                s.output_tokens,
                s.cache_creation_tokens,
                s.cache_read_tokens
            ],
            [*i, *o, *w, *c],
            "{id}"
        );
        assert!(
            (s.cost_usd - cost).abs() < 1e-9,
            "{id}: {} vs {cost}",
            s.cost_usd
        );
        assert!(!b.is_active);
    }
    let gaps: Vec<(&str, &str)> = r
        .blocks
        .iter()
        .filter(|b| b.is_gap)
        .map(|b| (b.id.as_str(), b.end.as_str()))
        .collect();
    assert_eq!(gaps, CCUSAGE_GAPS);
}

#[test]
fn the_active_block_after_a_day_without_a_long_pause_is_the_full_reports() {
    // A request every 100 minutes for a day and a half: blocks chain with no gap, so where the
    // active block starts depends on every block before it.
    let times: Vec<String> = (0..22)
        .map(|i| {
            let at = at("2026-01-10T00:40:00Z") + chrono::Duration::minutes(100 * i);
            at.format("%Y-%m-%dT%H:%M:%S.000Z").to_string()
        })
        .collect();
    let refs: Vec<&str> = times.iter().map(String::as_str).collect();
    let dir = tempfile::tempdir().unwrap();
    session_file(
        &dir.path().join("p"),
        "abababab-0000-4000-8000-000000000007",
        &refs,
    );
    let store = store_of(dir.path());
    let now = "2026-01-11T12:00:00Z";
    let all = report(&store, "UTC", now, &BlockOptions::default());
    assert!(all.blocks.iter().all(|b| !b.is_gap));
    assert!(all.blocks.len() > 5);
    let active_only = BlockOptions {
        active_only: true,
        ..BlockOptions::default()
    };
    let active = report(&store, "UTC", now, &active_only);
    assert_eq!(active.blocks.len(), 1);
    assert_eq!(Some(&active.blocks[0]), all.active());
    // Blocks started at 00:00, 05:00, 10:00, 15:00, 20:00, 01:00 and 06:00: the request at
    // 11:40 is more than 5 hours after 06:00, so it starts the active block at 11:00.
    assert_eq!(active.blocks[0].start, "2026-01-11T11:00:00.000Z");
}

/// The remembered block start (store migration 15) as the store changes: every active block
/// equals the full report's, the anchor is dropped when requests before it change, and kept
/// when requests come after it.
#[test]
fn the_remembered_block_start_follows_every_change_to_the_requests() {
    let chain: Vec<String> = (0..22)
        .map(|i| {
            let at = at("2026-01-10T00:40:00Z") + chrono::Duration::minutes(100 * i);
            at.format("%Y-%m-%dT%H:%M:%S.000Z").to_string()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    let refs: Vec<&str> = chain.iter().map(String::as_str).collect();
    session_file(&project, "abababab-0000-4000-8000-000000000008", &refs);
    let options = IndexOptions::one_source(SourceKind::ClaudeCode, dir.path().to_path_buf());
    let mut store = Store::open_in_memory().unwrap();
    trail_ingest::index(&mut store, &options, &NoProgress).unwrap();
    let active_only = BlockOptions {
        active_only: true,
        ..BlockOptions::default()
    };
    let check = |store: &Store, now: &str| {
        let full = report(store, "UTC", now, &BlockOptions::default());
        let active = report(store, "UTC", now, &active_only);
        assert_eq!(active.blocks.first(), full.active(), "at {now}");
        active.blocks.first().map(|b| b.start.clone())
    };
    let anchor = |store: &Store| store.block_anchor().unwrap().map(|a| a.first_request);

    assert_eq!(anchor(&store), None);
    assert_eq!(
        check(&store, "2026-01-11T12:00:00Z").as_deref(),
        Some("2026-01-11T11:00:00.000Z")
    );
    assert_eq!(anchor(&store).as_deref(), Some("2026-01-11T11:40:00.000Z"));
    // Later runs start from it.
    check(&store, "2026-01-11T13:00:00Z");
    check(&store, "2026-01-11T16:30:00Z");

    // A request long before it, in a session indexed later: the chain shifts (a block now
    // starts at 21:00 the day before), so the anchor is not trusted.
    session_file(
        &project,
        "abababab-0000-4000-8000-000000000009",
        &["2026-01-09T21:30:00.000Z"],
    );
    trail_ingest::index(&mut store, &options, &NoProgress).unwrap();
    assert_eq!(anchor(&store), None);
    check(&store, "2026-01-11T12:00:00Z");
    let saved = anchor(&store).expect("saved again");

    // Requests after it keep it.
    session_file(
        &project,
        "abababab-0000-4000-8000-000000000010",
        &["2026-01-11T12:30:00.000Z", "2026-01-11T18:10:00.000Z"],
    );
    trail_ingest::index(&mut store, &options, &NoProgress).unwrap();
    assert_eq!(anchor(&store).as_deref(), Some(saved.as_str()));
    check(&store, "2026-01-11T12:45:00Z");
    check(&store, "2026-01-11T18:20:00Z");
    // Before the anchor's request, the walk back answers (the same block start; the full
    // report also counts the requests logged after that `now`).
    let full = report(
        &store,
        "UTC",
        "2026-01-10T09:00:00Z",
        &BlockOptions::default(),
    );
    let active = report(&store, "UTC", "2026-01-10T09:00:00Z", &active_only);
    assert_eq!(
        active.blocks.first().map(|b| &b.start),
        full.active().map(|b| &b.start)
    );
    // Nothing active five hours after the last request.
    assert_eq!(check(&store, "2026-01-12T00:00:00Z"), None);
}
