//! What `trail usage` counts that ccusage does not (issue 15), one fixture per rule under
//! `tests/fixtures/ccusage-rules/`. docs/usage.md states the rules and why trail counts these
//! requests.
//!
//! The ccusage figures are what ccusage 20.0.24 reports for each fixture alone, measured with
//!
//! ```text
//! mkdir -p /tmp/ccr/projects/p && cp FIXTURE /tmp/ccr/projects/p/
//! TZ=UTC CLAUDE_CONFIG_DIR=/tmp/ccr ccusage daily --json --offline   # totals
//! ```
//!
//! and match its loader (ccusage/ccusage `rust/adapters/claude/src/lib.rs`: the `"usage":{`
//! byte marker, `has_unsupported_null_field`, `is_valid_usage_entry`, the timestamp parse).

use std::path::Path;

use trail_ingest::{IndexOptions, NoProgress};
use trail_model::SourceKind;
use trail_report::{Filter, GroupBy, PriceTable};
use trail_store::Store;

/// Input and output tokens of the report's totals after indexing `fixture` alone.
fn trail_totals(fixture: &str) -> (i64, i64) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ccusage-rules")
        .join(fixture);
    std::fs::copy(&src, project.join(fixture)).unwrap();
    let mut store = Store::open_in_memory().unwrap();
    let options = IndexOptions::one_source(SourceKind::ClaudeCode, dir.path().to_path_buf());
    trail_ingest::index(&mut store, &options, &NoProgress).unwrap();
    let r = trail_report::usage(
        &store,
        &Filter::default(),
        GroupBy::Day,
        PriceTable::shipped(),
    )
    .unwrap();
    (r.totals.input_tokens, r.totals.output_tokens)
}

/// Each fixture: what trail counts, what ccusage 20.0.24 counts (input, output tokens).
#[test]
fn control_both_count_a_complete_compact_entry() {
    assert_eq!(trail_totals("control.jsonl"), (100, 10));
    // ccusage: (100, 10)
}

/// Rule 1: ccusage reads only lines holding the bytes `"usage":{`; JSON written with a space
/// after the colon (`"usage": {`, Python's `json.dumps` default) is skipped unparsed.
#[test]
fn rule_1_json_with_spaces_is_counted() {
    assert_eq!(trail_totals("r1-spaced-json.jsonl"), (100, 10));
    // ccusage: (0, 0)
}

/// Rule 2: ccusage skips a line where any of `id`, `cwd`, `model`, `speed`, `costUSD`,
/// `version`, `sessionId`, `requestId`, `isApiErrorMessage`, `cache_read_input_tokens`,
/// `cache_creation_input_tokens` is `null`; trail reads null as "not recorded".
#[test]
fn rule_2_a_null_field_does_not_drop_the_request() {
    assert_eq!(trail_totals("r2-null-field.jsonl"), (100, 10));
    // ccusage: (0, 0)
}

/// Rule 3: ccusage drops entries whose `version` is not `N.N.N...` or whose `sessionId`,
/// `requestId`, `message.id` or `message.model` is an empty string.
#[test]
fn rule_3_odd_versions_and_empty_ids_are_counted() {
    assert_eq!(trail_totals("r3-version-not-semver.jsonl"), (100, 10));
    assert_eq!(trail_totals("r3-empty-request-id.jsonl"), (100, 10));
    // ccusage: (0, 0) for both
}

/// Rule 4 (no difference): without a requestId both count the entry, and both merge lines
/// repeating a message id at the same instant (streamed chunks), keeping the larger total.
#[test]
fn rule_4_entries_without_request_id_count_like_ccusage() {
    assert_eq!(trail_totals("r4-no-request-id.jsonl"), (100, 20));
    // ccusage: (100, 20)
}

/// Rule 5: ccusage skips an entry whose timestamp does not parse; trail counts it in the
/// all-time report under "(no timestamp)" (a date range cannot include it).
#[test]
fn rule_5_an_unreadable_timestamp_is_counted_without_a_day() {
    assert_eq!(trail_totals("r5-bad-timestamp.jsonl"), (100, 10));
    // ccusage: (0, 0)
}
