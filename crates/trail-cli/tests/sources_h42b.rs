//! Issue 42, the sources of helper h42b: Mistral Vibe, Kiro CLI, Hermes Agent, Antigravity and
//! Visual Studio Copilot. Each corpus folder is indexed twice: laid out in the agent's home
//! layout under a scratch home and found by plain discovery (`trail index`), and given by path
//! in place (`trail index PATH`). Both give the sessions and turns counted in the parser tests
//! (crates/trail-sources/tests/{mistral_vibe,kiro,hermes,antigravity,visual_studio_copilot}.rs,
//! where the counts are made without the parser), with no parse issue; `list`, `show` and
//! `search` then find them.
//!
//! Hermes' corpus rows are not a file Hermes writes: its home gets a `state.db` built here from
//! them (as the parser test builds it), beside the legacy session JSON.

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

/// Copies the folder `from` into `to` (files and folders, recursively).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// What an index of one source should give.
struct Expect {
    source: &'static str,
    sessions: usize,
    turns: u64,
    /// A word one of its sessions holds, for `search`.
    word: &'static str,
}

/// Runs `trail index [args]` with a fresh store and checks the result against `want`.
fn index_and_check(home: &Path, args: &[&Path], want: &Expect) {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("trail.db");
    let mut cmd = trail(home, &store);
    cmd.args(["index", "--json"]);
    cmd.args(args);
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("panicked"), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["issues"].as_array().map(Vec::len), Some(0), "{out}");
    let (code, out, err) = run(trail(home, &store).args(["list", "--json"]));
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    let mine: Vec<&Value> = rows.iter().filter(|r| r["source"] == want.source).collect();
    assert_eq!(mine.len(), want.sessions, "{}: {out}", want.source);
    assert_eq!(
        rows.len(),
        want.sessions,
        "only {} sessions: {out}",
        want.source
    );
    let turns: u64 = mine.iter().map(|r| r["turns"].as_u64().unwrap()).sum();
    assert_eq!(turns, want.turns, "{}", want.source);
    for r in &mine {
        let id = r["id"].as_str().unwrap();
        let (code, out, err) = run(trail(home, &store).args(["show", id, "--json"]));
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert!(!v["messages"].as_array().unwrap().is_empty(), "{id}");
    }
    let (code, out, err) = run(trail(home, &store).args(["search", want.word]));
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.trim().is_empty(),
        "search {:?} found nothing",
        want.word
    );
}

#[test]
fn mistral_vibe_is_found_in_its_home_and_by_path() {
    let Some(dir) = corpus("mistral-vibe") else {
        return;
    };
    let want = Expect {
        source: "mistral-vibe",
        sessions: 4,
        // 1 + 2 (checkpoint-rewind: a rewind replays the first exchange) + 2 + 1.
        turns: 6,
        word: "README",
    };
    let home = tempfile::tempdir().unwrap();
    copy_tree(&dir, &home.path().join(".vibe"));
    index_and_check(home.path(), &[], &want);
    let empty = tempfile::tempdir().unwrap();
    index_and_check(empty.path(), &[&dir], &want);
}

#[test]
fn kiro_cli_is_found_in_its_home_and_by_path() {
    let Some(dir) = corpus("kiro-cli") else {
        return;
    };
    let want = Expect {
        source: "kiro",
        sessions: 3,
        // 1 + 2 (8799deca: a rewind replays the first exchange) + 2.
        turns: 5,
        word: "acknowledged",
    };
    let home = tempfile::tempdir().unwrap();
    copy_tree(&dir, &home.path().join(".kiro"));
    index_and_check(home.path(), &[], &want);
    let empty = tempfile::tempdir().unwrap();
    index_and_check(empty.path(), &[&dir], &want);
}

/// Builds `<hermes>/state.db` from the corpus rows files (one session each).
fn hermes_state_db(corpus: &Path, hermes: &Path) {
    std::fs::create_dir_all(hermes).unwrap();
    let conn = rusqlite::Connection::open(hermes.join("state.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
             parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, cwd TEXT, title TEXT);
         CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
             role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT,
             tool_name TEXT, timestamp REAL NOT NULL, finish_reason TEXT);",
    )
    .unwrap();
    for e in std::fs::read_dir(corpus).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let Some(id) = name.strip_suffix(".rows.jsonl") else {
            continue;
        };
        let rows: Vec<Value> = std::fs::read_to_string(&p)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let ts = |r: &Value| r["_ts"].as_f64().unwrap();
        let text = |r: &Value, k: &str| r[k].as_str().filter(|s| !s.is_empty()).map(str::to_string);
        conn.execute(
            "INSERT INTO sessions (id, source, model, started_at) VALUES (?1, 'cli', ?2, ?3)",
            rusqlite::params![id, text(&rows[0], "_model"), ts(&rows[0])],
        )
        .unwrap();
        for r in &rows {
            conn.execute(
                "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls,
                     tool_name, timestamp, finish_reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                rusqlite::params![
                    id,
                    text(r, "role"),
                    text(r, "content"),
                    text(r, "tool_call_id"),
                    text(r, "tool_calls"),
                    text(r, "tool_name"),
                    ts(r),
                    text(r, "finish_reason")
                ],
            )
            .unwrap();
        }
    }
}

#[test]
fn hermes_is_found_in_its_home_and_by_path() {
    let Some(dir) = corpus("hermes") else { return };
    let home = tempfile::tempdir().unwrap();
    let hermes = home.path().join(".hermes");
    hermes_state_db(&dir, &hermes);
    std::fs::create_dir_all(hermes.join("sessions")).unwrap();
    std::fs::copy(
        dir.join("legacy-large.json"),
        hermes.join("sessions/session_20260429_hermes_large.json"),
    )
    .unwrap();
    let want = Expect {
        source: "hermes",
        sessions: 3,
        // Two database sessions (1 and 2 prompts) and the legacy one (1).
        turns: 4,
        word: "write-ahead",
    };
    index_and_check(home.path(), &[], &want);
    let empty = tempfile::tempdir().unwrap();
    index_and_check(empty.path(), &[&hermes], &want);
    // The corpus folder in place: the legacy JSON is Hermes' own file; the rows are not.
    let legacy = Expect {
        source: "hermes",
        sessions: 1,
        turns: 1,
        word: "directory",
    };
    index_and_check(empty.path(), &[&dir], &legacy);
}

#[test]
fn antigravity_is_found_in_its_home_and_by_path() {
    let Some(dir) = corpus("antigravity") else {
        return;
    };
    let want = Expect {
        source: "antigravity",
        sessions: 3,
        turns: 5,
        word: "congestion",
    };
    let home = tempfile::tempdir().unwrap();
    copy_tree(&dir, &home.path().join(".gemini/antigravity"));
    index_and_check(home.path(), &[], &want);
    let empty = tempfile::tempdir().unwrap();
    index_and_check(empty.path(), &[&dir], &want);
    // `doctor` says what of the conversation store is not read.
    let store = empty.path().join("doctor.db");
    let (code, out, err) = run(trail(home.path(), &store).arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(trail(home.path(), &store).arg("doctor"));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("token counts") && out.contains("are not read"),
        "{out}"
    );
}

#[test]
fn visual_studio_copilot_is_found_in_its_home_and_by_path() {
    let Some(dir) = corpus("vs-copilot") else {
        return;
    };
    let want = Expect {
        source: "visual-studio-copilot",
        // Three trace files of one conversation, one request each.
        sessions: 1,
        turns: 3,
        word: "succeeded",
    };
    let home = tempfile::tempdir().unwrap();
    let traces = if cfg!(target_os = "macos") {
        "Library/Caches/VSGitHubCopilotLogs/traces"
    } else {
        ".cache/VSGitHubCopilotLogs/traces"
    };
    if !cfg!(windows) {
        copy_tree(&dir, &home.path().join(traces));
        index_and_check(home.path(), &[], &want);
    }
    let empty = tempfile::tempdir().unwrap();
    index_and_check(empty.path(), &[&dir], &want);
}
