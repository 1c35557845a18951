//! End-to-end tests of issue 40 ("Real files from the wild"), on the fixtures written for it in
//! `crates/trail-sources/tests/fixtures/issue-40/`: a truncated Copilot CLI log gets one answer
//! wherever it lies (item 6), the "not a session file" hint names every format (item 9), the
//! string `default` is no model and `show` shows records it does not read (item 9).

mod common;

use std::path::{Path, PathBuf};

use common::{repo_root, run, trail};

fn fixture(name: &str) -> PathBuf {
    repo_root()
        .join("crates/trail-sources/tests/fixtures/issue-40")
        .join(name)
}

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// Runs `trail index --json ARGS` in `home` with its own store; returns the summary.
fn index_json(home: &Path, store: &Path, args: &[&Path]) -> serde_json::Value {
    let mut c = trail(home, store);
    c.arg("index").arg("--json").args(args);
    let (code, out, err) = run(&mut c);
    assert_eq!(code, 0, "{err}");
    json(&out)
}

fn reasons(summary: &serde_json::Value) -> Vec<String> {
    summary["empty_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reason"].as_str().unwrap().to_string())
        .collect()
}

// Item 6: the same truncated log named by path, as a folder, and found by discovery in its
// own `session-state/<id>/` folder: no session each time, and the same reason, which names
// what is missing.
#[test]
fn issue_40_truncated_copilot_cli_log_one_answer_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let folder = home.join(".copilot/session-state/40404040-0006-4000-8000-000000000006");
    std::fs::create_dir_all(&folder).unwrap();
    let log = fixture("copilot-truncated-events.jsonl");
    std::fs::copy(&log, folder.join("events.jsonl")).unwrap();

    let by_path = index_json(&home, &dir.path().join("a.db"), &[&log]);
    let by_folder = index_json(&home, &dir.path().join("b.db"), &[&folder]);
    let discovered = index_json(&home, &dir.path().join("c.db"), &[]);
    for s in [&by_path, &by_folder, &discovered] {
        assert_eq!(s["sessions_new"], 0, "{s}");
        assert_eq!(s["unread_paths"].as_array().unwrap().len(), 0, "{s}");
    }
    let answer = reasons(&by_path);
    assert_eq!(answer.len(), 1);
    assert!(answer[0].contains("session.start"), "{answer:?}");
    assert_eq!(reasons(&by_folder), answer);
    assert_eq!(reasons(&discovered), answer);
}

// Item 9, first bullet: the hint lists every format the registry reads (aider and cline were
// missing from the hand-written list).
#[test]
fn issue_40_not_a_session_file_hint_names_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.json");
    std::fs::write(&notes, "{\"todo\": []}\n").unwrap();
    let mut c = trail(dir.path(), &dir.path().join("s.db"));
    let (code, _, err) = run(c.arg("index").arg(&notes));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a session file"), "{err}");
    for s in trail_sources::sources() {
        assert!(err.contains(s.name), "{} missing: {err}", s.name);
    }
}

// Item 9, third and fourth bullets. `claude-default-model-stray-records.jsonl`: an answer whose
// `model` is `default`, and two top-level records of types Claude Code entries do not have
// (`tool_use`, `tool_result`). No model named `default` is stored; `show` prints both records
// as unknown.
#[test]
fn issue_40_default_is_no_model_and_show_shows_unknown_records() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let file = fixture("claude-default-model-stray-records.jsonl");
    let summary = index_json(dir.path(), &store, &[&file]);
    assert_eq!(summary["sessions_new"], 1, "{summary}");
    let conn = rusqlite::Connection::open(&store).unwrap();
    let named: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM messages WHERE model = 'default')
                  + (SELECT count(*) FROM usage WHERE model = 'default')
                  + (SELECT count(*) FROM sessions WHERE models LIKE '%default%')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(named, 0);

    let mut c = trail(dir.path(), &store);
    // Claude Code names a session after its file.
    let (code, out, err) = run(c.arg("show").arg("claude-default-model-stray-records"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("? unknown record: tool_use"), "{out}");
    assert!(out.contains("? unknown record: tool_result"), "{out}");
    assert!(out.contains("There are three migrations."), "{out}");
}
