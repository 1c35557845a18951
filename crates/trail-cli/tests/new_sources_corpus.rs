//! Issue 16: every shared corpus file of the new formats (Aider, Cline) goes through
//! `trail index` in place with no panic and no issue, and what the store then answers matches
//! counts made independently of trail (the commands are in the parser tests,
//! `crates/trail-sources/tests/aider.rs` and `cline.rs`):
//!
//! - Aider `metadata-aider.chat.history.md`: 12 prompts (runs of `#### ` lines), 24 edit
//!   blocks (`grep -c '^<<<<<<< SEARCH'`), tokens sent 73,600 and received 4,303 (the `> Tokens:`
//!   lines summed by awk, `k` = 1000);
//! - Cline `clinexray-ui_messages.json`: 3 prompts (`task` plus two `user_feedback` says), 23
//!   tool calls, `api_req_started` tokens in 240, out 11,035, cache writes 72,182, cache reads
//!   1,038,797 (summed with `jq`).

#![allow(clippy::print_stderr)]

mod common;

use std::path::PathBuf;

use common::{run, trail};

fn corpus(format: &str) -> Option<PathBuf> {
    let dir = common::repo_root().join("../shared/corpus").join(format);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: shared corpus {} not found", dir.display());
        None
    }
}

/// Indexes `dir` (`trail index PATH`: each file detected by its content, as the corpus files
/// keep their repositories' names, not the agents'); returns the `list --json` rows and each
/// row's tool calls.
fn index_and_list(dir: &std::path::Path) -> Vec<(serde_json::Value, usize)> {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let store = tmp.path().join("trail.db");
    let (code, out, err) = run(trail(&home, &store).args(["index", "--json"]).arg(dir));
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("panicked"), "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["issues"].as_array().map(Vec::len), Some(0), "{out}");
    let (code, out, err) = run(trail(&home, &store).args(["list", "--json"]));
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    rows.into_iter()
        .map(|row| {
            let id = row["id"].as_str().unwrap().to_string();
            let (code, out, err) = run(trail(&home, &store).args(["show", &id, "--json"]));
            assert_eq!(code, 0, "{err}");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            let calls = v["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["kind"] == "tool_call")
                .count();
            (row, calls)
        })
        .collect()
}

#[test]
fn the_aider_corpus_indexes_with_the_counts_made_by_hand() {
    let Some(dir) = corpus("aider") else { return };
    let rows = index_and_list(&dir);
    assert_eq!(
        rows.len(),
        1,
        "the input history is not a session of its own"
    );
    let (row, calls) = &rows[0];
    assert_eq!(row["source"], "aider");
    assert_eq!(row["turns"], 12);
    assert_eq!(*calls, 24);
    assert_eq!(
        (row["input_tokens"].as_u64(), row["output_tokens"].as_u64()),
        (Some(73_600), Some(4_303))
    );
}

#[test]
fn the_cline_corpus_indexes_with_the_counts_made_by_hand() {
    let Some(dir) = corpus("cline") else { return };
    let rows = index_and_list(&dir);
    assert_eq!(rows.len(), 1);
    let (row, calls) = &rows[0];
    assert_eq!(row["source"], "cline");
    assert_eq!(row["turns"], 3);
    assert_eq!(*calls, 23);
    assert_eq!(
        (
            row["input_tokens"].as_u64(),
            row["output_tokens"].as_u64(),
            row["cache_creation_tokens"].as_u64(),
            row["cache_read_tokens"].as_u64()
        ),
        (Some(240), Some(11_035), Some(72_182), Some(1_038_797))
    );
}
