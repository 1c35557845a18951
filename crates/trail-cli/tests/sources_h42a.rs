//! Issue 42, helper h42a's sources (Pi, Qwen Code, Kimi Code CLI, Factory Droid, iFlow CLI):
//! every shared corpus file of these agents goes through the `trail` binary both ways, given by
//! path (`trail index <corpus folder>`, each file detected by its content) and found by plain
//! discovery (`trail --home H index`, the files laid out in the agent's home layout under a
//! scratch home), with no parse problem; `list`, `show` and `search` then find the sessions.
//!
//! The expected figures are counts made without trail, with plain JSON reads of the corpus
//! files (the same reads the parser tests in `crates/trail-sources/tests/{pi,qwen,kimi,droid,
//! iflow}.rs` make):
//! - Pi: 4 files, 4 sessions, user messages 1+1+2+2 = 6 turns, 1 `toolCall`, usage input
//!   4,517+4,986+513+14,954 = 24,970 and output 23+24+62+71 = 180;
//! - Qwen: 2 files, 2 sessions, 2+2 user records on the active chains = 4 turns, 2 calls;
//! - Kimi: 1 wire log, 1 session, 8 `turn.prompt` lines, 19 `tool.call` events;
//! - Droid: 3 files, 3 sessions, 2+1+1 = 4 user text messages, 2 `tool_use` blocks;
//! - iFlow: 1 file, 1 session, 1 prompt, 6 distinct `tool_use` ids.

#![allow(clippy::print_stderr)]

mod common;

use std::path::{Path, PathBuf};

use common::{run, trail};
use serde_json::Value;

fn corpus(format: &str) -> Option<PathBuf> {
    let dir = common::repo_root().join("../shared/corpus").join(format);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: shared corpus {} not found", dir.display());
        None
    }
}

/// What one source is expected to give.
struct Expect {
    source: &'static str,
    sessions: usize,
    turns: u64,
    tool_calls: usize,
    /// A word of a prompt or answer that `search` must find.
    word: &'static str,
}

/// Runs `trail index --json` with `extra` arguments in a fresh store; checks there is no
/// issue and returns the `list --json` rows with each row's tool calls (from `show --json`).
fn index_and_list(home: &Path, store: &Path, extra: &[&Path]) -> Vec<(Value, usize)> {
    let mut cmd = trail(home, store);
    cmd.arg("--home").arg(home).args(["index", "--json"]);
    for p in extra {
        cmd.arg(p);
    }
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("panicked"), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["issues"].as_array().map(Vec::len), Some(0), "{out}");
    let (code, out, err) = run(trail(home, store).args(["list", "--json"]));
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    rows.into_iter()
        .map(|row| {
            let id = row["id"].as_str().unwrap().to_string();
            let (code, out, err) = run(trail(home, store).args(["show", &id, "--json"]));
            assert_eq!(code, 0, "{err}");
            let v: Value = serde_json::from_str(&out).unwrap();
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

fn check(rows: &[(Value, usize)], want: &Expect, home: &Path, store: &Path) {
    let mine: Vec<&(Value, usize)> = rows
        .iter()
        .filter(|(r, _)| r["source"] == want.source)
        .collect();
    assert_eq!(mine.len(), want.sessions, "{}: {rows:?}", want.source);
    assert_eq!(
        mine.len(),
        rows.len(),
        "{}: only this source's sessions",
        want.source
    );
    let turns: u64 = mine.iter().map(|(r, _)| r["turns"].as_u64().unwrap()).sum();
    assert_eq!(turns, want.turns, "{}", want.source);
    let calls: usize = mine.iter().map(|(_, c)| c).sum();
    assert_eq!(calls, want.tool_calls, "{}", want.source);
    let (code, out, err) = run(trail(home, store).args(["search", "--json", want.word]));
    assert_eq!(code, 0, "{}: {out}{err}", want.source);
    let hits: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert!(!hits.is_empty(), "{}", want.source);
}

/// Copies `files` (corpus file, path under the scratch home) and returns the home.
fn lay_out(tmp: &Path, files: &[(PathBuf, String)]) -> PathBuf {
    let home = tmp.join("home");
    for (from, to) in files {
        let to = home.join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, &to).unwrap();
    }
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// Both ways for one source: by path, then by discovery of `layout`.
fn both_ways(format: &str, want: Expect, layout: impl Fn(&Path) -> Vec<(PathBuf, String)>) {
    let Some(dir) = corpus(format) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty-home");
    std::fs::create_dir_all(&empty).unwrap();
    let store = tmp.path().join("by-path.db");
    let rows = index_and_list(&empty, &store, &[&dir]);
    check(&rows, &want, &empty, &store);

    let home = lay_out(tmp.path(), &layout(&dir));
    let store = tmp.path().join("discovered.db");
    let rows = index_and_list(&home, &store, &[]);
    check(&rows, &want, &home, &store);
}

fn each_file(dir: &Path, to: impl Fn(&str) -> String) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        out.push((p, to(&name)));
    }
    out
}

#[test]
fn pi_corpus_both_ways() {
    let want = Expect {
        source: "pi",
        sessions: 4,
        turns: 6,
        tool_calls: 1,
        word: "turn-two",
    };
    both_ways("pi", want, |dir| {
        each_file(dir, |n| {
            format!(".pi/agent/sessions/--Users-ingo-projects-irrlicht--/{n}")
        })
    });
}

#[test]
fn pi_corpus_tokens_reach_the_store() {
    let Some(dir) = corpus("pi") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("t.db");
    let rows = index_and_list(tmp.path(), &store, &[&dir]);
    let sum = |k: &str| {
        rows.iter()
            .map(|(r, _)| r[k].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!((sum("input_tokens"), sum("output_tokens")), (24_970, 180));
}

#[test]
fn qwen_corpus_both_ways() {
    let want = Expect {
        source: "qwen-code",
        sessions: 2,
        turns: 4,
        tool_calls: 2,
        word: "synthetic",
    };
    both_ways("qwen", want, |dir| {
        each_file(dir, |n| {
            format!(".qwen/projects/-tmp-as-qwen-fixture-project/chats/{n}")
        })
    });
}

#[test]
fn kimi_corpus_both_ways() {
    let want = Expect {
        source: "kimi",
        sessions: 1,
        turns: 8,
        tool_calls: 19,
        word: "README",
    };
    both_ways("kimi", want, |dir| {
        let session = ".kimi-code/sessions/wd_project_ac3bb318f98e/session_1bcbe023-4f7e-4971-9dc9-43b8756045b0";
        vec![
            (
                dir.join("assistant_tools.jsonl"),
                format!("{session}/agents/main/wire.jsonl"),
            ),
            (
                dir.join("assistant_tools.state.json"),
                format!("{session}/state.json"),
            ),
        ]
    });
}

#[test]
fn droid_corpus_both_ways() {
    let want = Expect {
        source: "droid",
        sessions: 3,
        turns: 4,
        tool_calls: 2,
        word: "multiline",
    };
    both_ways("droid", want, |dir| {
        each_file(dir, |n| format!(".factory/sessions/-tmp/{n}"))
    });
}

#[test]
fn iflow_corpus_both_ways() {
    let want = Expect {
        source: "iflow",
        sessions: 1,
        turns: 1,
        tool_calls: 6,
        word: "DOCKER_API_VERSION",
    };
    both_ways("iflow", want, |dir| {
        each_file(dir, |n| {
            format!(".iflow/projects/C--exp-docker-image-retagger/{n}")
        })
    });
}

#[test]
fn imported_iflow_and_pi_edits_feed_trail_diff() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("t.db");
    // iFlow's `replace` call in the corpus, and Pi's `write` in a fixture (the fixture's
    // `edit` failed on an abandoned branch: it changed nothing).
    let fixture = common::repo_root().join(
        "crates/trail-sources/tests/fixtures/pi/sessions/--home-u-app--/2026-01-03T09-00-00-000Z_66666666-7777-4888-8999-aaaaaaaaaaaa.jsonl",
    );
    let mut files = vec![(fixture, "66666666", "notes.md")];
    if let Some(dir) = corpus("iflow") {
        let f = dir.join("session-5de701fc-7454-4858-a249-95cac4fd3b51.jsonl");
        files.push((f, "5de701fc", "lib.rs"));
    }
    for (file, id, path) in files {
        let (code, out, err) = run(trail(tmp.path(), &store).arg("import").arg(&file));
        assert_eq!(code, 0, "{out}{err}");
        let (code, out, err) = run(trail(tmp.path(), &store).args(["diff", id, "--json"]));
        assert_eq!(code, 0, "{id}: {out}{err}");
        assert!(out.contains(path), "{id}: {out}");
    }
}
