//! Issue 42, the sources of helper h42c, end to end through the `trail` binary: each laid out in
//! its agent's home layout under a scratch `--home` is found by plain discovery (`trail index`
//! with no path), and given by path (`trail index PATH`); `list`, `show` and `search` then find
//! its sessions, with no parse problem.
//!
//! Kilo Code (current), MiMo Code, ICodeMate, Crush, Zed and Goose have no public file: their
//! stores are built here from the producers' published schemas (the parser tests in
//! `crates/trail-sources/tests/` say where each schema comes from; Zed's thread is stored as
//! plain JSON here, `data_type = 'json'`, since the zstd path is the parser test's). TraeX uses
//! the shared corpus file; OpenClaude and Claude Cowork the repo's own fixtures.

#![allow(clippy::print_stderr)]

mod common;

use std::path::{Path, PathBuf};

use common::{run, trail};
use rusqlite::{params, Connection};
use serde_json::{json, Value};

fn sources_fixtures(name: &str) -> PathBuf {
    common::repo_root()
        .join("crates/trail-sources/tests/fixtures")
        .join(name)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Runs `trail index --json` (with `path`, or by discovery under `--home`), asserts success
/// and no issue, then returns `list --json` rows of `source`.
fn index(home: &Path, store: &Path, path: Option<&Path>, source: &str) -> Vec<Value> {
    let mut cmd = trail(home, store);
    cmd.arg("--home").arg(home).args(["index", "--json"]);
    if let Some(p) = path {
        cmd.arg(p);
    }
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!err.contains("panicked"), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["issues"].as_array().map(Vec::len), Some(0), "{out}");
    let (code, out, err) = run(trail(home, store)
        .arg("--home")
        .arg(home)
        .args(["list", "--json"]));
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    rows.into_iter().filter(|r| r["source"] == source).collect()
}

/// Both ways in, then `show` and `search` on the discovered store. `word` is in a prompt.
fn check(home: &Path, given: &Path, source: &str, sessions: usize, turns: u64, word: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let by_discovery = index(home, &tmp.path().join("a.db"), None, source);
    assert_eq!(
        by_discovery.len(),
        sessions,
        "{source} by discovery: {by_discovery:?}"
    );
    let by_path = index(home, &tmp.path().join("b.db"), Some(given), source);
    assert_eq!(by_path.len(), sessions, "{source} by path: {by_path:?}");
    let total: u64 = by_discovery
        .iter()
        .map(|r| r["turns"].as_u64().unwrap())
        .sum();
    assert_eq!(total, turns, "{source} turns");
    let store = tmp.path().join("a.db");
    let id = by_discovery[0]["id"].as_str().unwrap().to_string();
    let (code, out, err) = run(trail(home, &store)
        .arg("--home")
        .arg(home)
        .args(["show", &id, "--json"]));
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert!(!shown["messages"].as_array().unwrap().is_empty());
    let (code, out, err) = run(trail(home, &store)
        .arg("--home")
        .arg(home)
        .args(["search", word]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        !out.trim().is_empty(),
        "search {word} found nothing for {source}"
    );
}

// ---------------------------------------------------------------------------------------------
// OpenCode's store (Kilo, MiMo Code, ICodeMate).

fn opencode_store(path: &Path, prompt: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT,
           slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
           cost REAL NOT NULL DEFAULT 0, tokens_input INTEGER NOT NULL DEFAULT 0,
           time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
         CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
           time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
         CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
           time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);",
    )
    .unwrap();
    let t = 1_776_000_000_000_i64;
    conn.execute(
        "INSERT INTO session VALUES ('ses_1', 'p', NULL, 's', '/home/demo/w', 'A session', '7.0.1', 0, 0, ?1, ?1)",
        params![t],
    )
    .unwrap();
    let msgs = [
        ("m1", json!({"role": "user", "time": {"created": t}})),
        (
            "m2",
            json!({"role": "assistant", "parentID": "m1", "time": {"created": t + 1000},
                      "modelID": "m", "providerID": "p", "cost": 0.01,
                      "tokens": {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}}),
        ),
    ];
    for (i, (id, data)) in msgs.iter().enumerate() {
        conn.execute(
            "INSERT INTO message VALUES (?1, 'ses_1', ?2, ?2, ?3)",
            params![id, t + i as i64, data.to_string()],
        )
        .unwrap();
    }
    let parts = [
        ("p1", "m1", json!({"type": "text", "text": prompt})),
        (
            "p2",
            "m2",
            json!({"type": "tool", "callID": "c1", "tool": "read",
            "state": {"status": "completed", "input": {"filePath": "/home/demo/w/a.rs"}, "output": "x"}}),
        ),
        ("p3", "m2", json!({"type": "text", "text": "Done."})),
    ];
    for (id, msg, data) in parts {
        conn.execute(
            "INSERT INTO part VALUES (?1, ?2, 'ses_1', 0, 0, ?3)",
            params![id, msg, data.to_string()],
        )
        .unwrap();
    }
}

#[test]
fn kilo_code_current_store_and_old_tasks_are_one_source() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let data = home.join(".local/share/kilo");
    opencode_store(&data.join("kilo.db"), "kilocurrent prompt");
    // An old Kilo task folder in VS Code's globalStorage, from the Cline-family fixtures.
    let ext = "Cursor/User/globalStorage/kilocode.kilo-code";
    copy_tree(
        &sources_fixtures("cline").join(ext),
        &home.join(".config").join(ext),
    );
    check(&home, &home, "kilo-code", 2, 2, "kilocurrent");
}

#[test]
fn mimo_code_and_icodemate_stores_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let mimo = home.join(".local/share/mimocode");
    opencode_store(&mimo.join("mimocode.db"), "mimoprompt here");
    check(&home, &mimo, "mimo-code", 1, 1, "mimoprompt");
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let mate = home.join(".local/share/icodemate");
    opencode_store(&mate.join("icodemate.db"), "mateprompt here");
    check(&home, &mate, "icodemate", 1, 1, "mateprompt");
}

// ---------------------------------------------------------------------------------------------
// Relabels.

#[test]
fn traex_corpus_rollout_is_found_in_traes_folder() {
    let corpus = common::repo_root().join("../shared/corpus/traex/rollout_subagent.jsonl");
    if !corpus.is_file() {
        eprintln!("skipped: shared corpus traex not found");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let day = home.join(".trae/cli/sessions/2026/08/01");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::copy(
        &corpus,
        day.join("rollout-2026-08-01T18-07-03-019fbcca-9fd4-7d20-83dc-0762b2f839b3.jsonl"),
    )
    .unwrap();
    // One session, one turn (one `user_message` event in the file, counted by the parser test).
    check(&home, &home.join(".trae"), "traex", 1, 1, "parser");
}

#[test]
fn openclaude_and_cowork_are_found_in_their_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    copy_tree(
        &sources_fixtures("openclaude/.openclaude"),
        &home.join(".openclaude"),
    );
    check(&home, &home.join(".openclaude"), "openclaude", 1, 1, "fail");
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let root = home.join(".config/Claude/local-agent-mode-sessions");
    copy_tree(
        &sources_fixtures("claude-cowork/local-agent-mode-sessions"),
        &root,
    );
    check(&home, &root, "claude-cowork", 1, 1, "downloads");
}

// ---------------------------------------------------------------------------------------------
// Crush, Zed, Goose.

#[test]
fn crush_is_found_through_projects_json() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("work/app");
    let data = project.join(".crush");
    std::fs::create_dir_all(&data).unwrap();
    let global = home.join(".local/share/crush");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(
        global.join("projects.json"),
        json!({"projects": [{"path": project, "data_dir": data, "last_accessed": "2025-09-08T19:38:14Z"}]})
            .to_string(),
    )
    .unwrap();
    let conn = Connection::open(data.join("crush.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
           message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
           completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
           updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL);
         CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL,
           content TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
           updated_at INTEGER NOT NULL);
         CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
           parts BLOB NOT NULL DEFAULT '[]', model TEXT, created_at INTEGER NOT NULL,
           updated_at INTEGER NOT NULL, finished_at INTEGER);
         INSERT INTO sessions VALUES ('s1', NULL, 'Greeting', 2, 100, 20, 0.001, 1757360300, 1757360294);",
    )
    .unwrap();
    for (id, role, t, parts) in [
        (
            "m1",
            "user",
            1_757_360_294_i64,
            json!([{"type": "text", "data": {"text": "crushprompt make it say hello"}}]),
        ),
        (
            "m2",
            "assistant",
            1_757_360_296,
            json!([{"type": "text", "data": {"text": "Done."}},
            {"type": "tool_call", "data": {"id": "c1", "name": "edit", "input": "{\"file_path\":\"/w/main.go\",\"old_string\":\"a\",\"new_string\":\"b\"}", "finished": true}}]),
        ),
    ] {
        conn.execute(
            "INSERT INTO messages VALUES (?1, 's1', ?2, ?3, 'm', ?4, ?4, ?4)",
            params![id, role, parts.to_string(), t],
        )
        .unwrap();
    }
    conn.execute_batch(
        "INSERT INTO files VALUES ('f0', 's1', '/w/main.go', 'a', 0, 1757360296, 1757360296);
         INSERT INTO files VALUES ('f1', 's1', '/w/main.go', 'b', 1, 1757360296, 1757360296);",
    )
    .unwrap();
    drop(conn);
    check(&home, &data.join("crush.db"), "crush", 1, 1, "crushprompt");
}

#[test]
fn zed_threads_are_found_in_zeds_data_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = home.join(".local/share/zed/threads");
    std::fs::create_dir_all(&dir).unwrap();
    let conn = Connection::open(dir.join("threads.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL,
           data_type TEXT NOT NULL, data BLOB NOT NULL, parent_id TEXT, folder_paths TEXT,
           folder_paths_order TEXT, created_at TEXT);",
    )
    .unwrap();
    let thread = json!({"version": "0.3.0", "title": "T", "updated_at": "2026-10-02T09:15:00Z",
        "messages": [
            {"User": {"id": "u1", "content": [{"Text": "zedprompt rename it"}]}},
            {"Agent": {"content": [{"Text": "Renamed."}], "tool_results": {}}}
        ],
        "cumulative_token_usage": {"input_tokens": 10, "output_tokens": 2}});
    conn.execute(
        "INSERT INTO threads VALUES ('6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b', 'T', '2026-10-02T09:15:00Z',
           'json', ?1, NULL, '/home/demo/app', '0', '2026-10-02T09:10:00Z')",
        params![thread.to_string().into_bytes()],
    )
    .unwrap();
    drop(conn);
    check(&home, &dir.join("threads.db"), "zed", 1, 1, "zedprompt");
}

#[test]
fn goose_sessions_db_is_found_in_gooses_data_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let dir = home.join(".local/share/goose/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let conn = Connection::open(dir.join("sessions.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '',
           description TEXT NOT NULL DEFAULT '', working_dir TEXT NOT NULL,
           created_at TIMESTAMP, updated_at TIMESTAMP, accumulated_input_tokens INTEGER,
           accumulated_output_tokens INTEGER, parent_session_id TEXT);
         CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT,
           session_id TEXT NOT NULL, role TEXT NOT NULL, content_json TEXT NOT NULL,
           created_timestamp INTEGER NOT NULL, timestamp TIMESTAMP, tokens INTEGER, metadata_json TEXT);
         INSERT INTO sessions VALUES ('20260101_1', 'Tidy', '', '/home/demo/p', '2026-01-01 00:00:00',
           '2026-01-01 00:01:00', 100, 10, NULL);",
    )
    .unwrap();
    for (role, t, content) in [
        (
            "user",
            1_767_225_600_i64,
            json!([{"type": "text", "text": "gooseprompt tidy the readme"}]),
        ),
        (
            "assistant",
            1_767_225_601,
            json!([{"type": "text", "text": "Tidied."}]),
        ),
    ] {
        conn.execute(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp) VALUES ('20260101_1', ?1, ?2, ?3)",
            params![role, content.to_string(), t],
        )
        .unwrap();
    }
    drop(conn);
    check(
        &home,
        &dir.join("sessions.db"),
        "goose",
        1,
        1,
        "gooseprompt",
    );
}
