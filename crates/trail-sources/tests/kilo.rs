//! Kilo Code, both generations under one `kilo-code` source, and the other OpenCode forks
//! (MiMo Code, ICodeMate).
//!
//! No Kilo store is public: the database here is built in the test from SQL written from Kilo's
//! published schema (`Kilo-Org/kilocode`, `packages/core/src/session/sql.ts`: the `session`
//! table with Kilo's extra columns `cost`, `tokens_*`, `agent`, `model`, `revert`..., and
//! OpenCode's `message` / `part` tables) and its data folder and file name
//! (`packages/core/src/global.ts`, `packages/core/src/database/database.ts`). The old task
//! folders are the repo's own Cline-family fixtures.

mod common;

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};
use serde_json::json;
use trail_model::{MessageKind, SourceKind};
use trail_sources::kilo::KiloCode;
use trail_sources::opencode::{Opencode, OpencodeStore, ICODEMATE, MIMO};
use trail_sources::Source;

const KILO_SCHEMA: &str = "
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL);
CREATE TABLE session (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT, parent_id TEXT,
  slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL,
  version TEXT NOT NULL, share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER,
  summary_files INTEGER, summary_diffs TEXT, metadata TEXT, cost REAL NOT NULL DEFAULT 0,
  tokens_input INTEGER NOT NULL DEFAULT 0, tokens_output INTEGER NOT NULL DEFAULT 0,
  tokens_reasoning INTEGER NOT NULL DEFAULT 0, tokens_cache_read INTEGER NOT NULL DEFAULT 0,
  tokens_cache_write INTEGER NOT NULL DEFAULT 0, revert TEXT, permission TEXT, agent TEXT,
  model TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
  time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (
  id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE session_message (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, type TEXT NOT NULL, seq INTEGER,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
";

const T0: i64 = 1_776_000_000_000;

fn session(conn: &Connection, id: &str, parent: Option<&str>, title: &str, t: i64) {
    conn.execute(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,
           cost, tokens_input, tokens_output, agent, model, time_created, time_updated)
         VALUES (?1, 'prj', ?2, 'slug', '/home/demo/widget', ?3, '7.1.2', 0.03, 150, 60,
           'code', '{\"id\":\"claude-sonnet-4\",\"providerID\":\"kilo\"}', ?4, ?5)",
        params![id, parent, title, t, t + 60_000],
    )
    .unwrap();
}

fn message(conn: &Connection, id: &str, session: &str, t: i64, data: serde_json::Value) {
    conn.execute(
        "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
        params![id, session, t, data.to_string()],
    )
    .unwrap();
}

fn part(conn: &Connection, id: &str, msg: &str, session: &str, data: serde_json::Value) {
    conn.execute(
        "INSERT INTO part VALUES (?1, ?2, ?3, 0, 0, ?4)",
        params![id, msg, session, data.to_string()],
    )
    .unwrap();
}

fn assistant(parent: &str, t: i64, input: u64, output: u64) -> serde_json::Value {
    json!({"role": "assistant", "parentID": parent, "time": {"created": t},
           "modelID": "claude-sonnet-4", "providerID": "kilo", "mode": "code",
           "path": {"cwd": "/home/demo/widget", "root": "/home/demo/widget"}, "cost": 0.015,
           "tokens": {"input": input, "output": output, "reasoning": 0, "cache": {"read": 0, "write": 0}}})
}

/// A Kilo store in `<dir>/<name>`: a parent session (two turns, a read, a failed edit, a
/// subagent `task`) and its child.
fn build_store(dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(KILO_SCHEMA).unwrap();
    session(&conn, "ses_kparent", None, "Add a retry to the fetcher", T0);
    session(
        &conn,
        "ses_kchild",
        Some("ses_kparent"),
        "Child session - 2026",
        T0 + 5_000,
    );
    let user = |t: i64| json!({"role": "user", "time": {"created": t}, "agent": "code"});
    message(&conn, "msg_k1", "ses_kparent", T0, user(T0));
    part(
        &conn,
        "prt_k1a",
        "msg_k1",
        "ses_kparent",
        json!({"type": "text", "text": "Add a retry to the fetcher"}),
    );
    message(
        &conn,
        "msg_k2",
        "ses_kparent",
        T0 + 1_000,
        assistant("msg_k1", T0 + 1_000, 100, 40),
    );
    part(
        &conn,
        "prt_k2a",
        "msg_k2",
        "ses_kparent",
        json!({"type": "reasoning", "text": "The fetcher has no retry loop."}),
    );
    part(
        &conn,
        "prt_k2b",
        "msg_k2",
        "ses_kparent",
        json!({"type": "tool", "callID": "call_read", "tool": "read",
               "state": {"status": "completed", "input": {"filePath": "/home/demo/widget/src/fetch.rs"},
                         "output": "fn fetch() {}", "time": {"start": T0 + 1_100, "end": T0 + 1_150}}}),
    );
    part(
        &conn,
        "prt_k2c",
        "msg_k2",
        "ses_kparent",
        json!({"type": "tool", "callID": "call_edit", "tool": "edit",
               "state": {"status": "error", "input": {"filePath": "/home/demo/widget/src/fetch.rs",
                         "oldString": "fn fetch() {}", "newString": "fn fetch() { retry() }"},
                         "error": "file changed on disk", "time": {"start": T0 + 1_200, "end": T0 + 1_250}}}),
    );
    part(
        &conn,
        "prt_k2d",
        "msg_k2",
        "ses_kparent",
        json!({"type": "tool", "callID": "call_task", "tool": "task",
               "state": {"status": "completed", "input": {"description": "Find callers", "prompt": "find callers"},
                         "output": "done", "metadata": {"sessionId": "ses_kchild"},
                         "time": {"start": T0 + 1_300, "end": T0 + 1_400}}}),
    );
    part(
        &conn,
        "prt_k2e",
        "msg_k2",
        "ses_kparent",
        json!({"type": "text", "text": "The edit failed; the file changed on disk."}),
    );
    message(&conn, "msg_k3", "ses_kparent", T0 + 2_000, user(T0 + 2_000));
    part(
        &conn,
        "prt_k3a",
        "msg_k3",
        "ses_kparent",
        json!({"type": "text", "text": "Try again"}),
    );
    message(
        &conn,
        "msg_k4",
        "ses_kparent",
        T0 + 3_000,
        assistant("msg_k3", T0 + 3_000, 50, 20),
    );
    part(
        &conn,
        "prt_k4a",
        "msg_k4",
        "ses_kparent",
        json!({"type": "text", "text": "Done."}),
    );
    // The child: one prompt, one answer.
    message(&conn, "msg_c1", "ses_kchild", T0 + 5_000, user(T0 + 5_000));
    part(
        &conn,
        "prt_c1a",
        "msg_c1",
        "ses_kchild",
        json!({"type": "text", "text": "find callers"}),
    );
    message(
        &conn,
        "msg_c2",
        "ses_kchild",
        T0 + 6_000,
        assistant("msg_c1", T0 + 6_000, 10, 5),
    );
    part(
        &conn,
        "prt_c2a",
        "msg_c2",
        "ses_kchild",
        json!({"type": "text", "text": "Two callers."}),
    );
    path
}

/// Counts made with plain SQL on the same database, not with the parser: (sessions, user
/// messages whose first part is text = prompts, tool parts, assistant input tokens, output
/// tokens).
fn sql_counts(path: &Path) -> (usize, usize, usize, u64, u64) {
    let conn = Connection::open(path).unwrap();
    let one = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    (
        one("SELECT count(*) FROM session") as usize,
        one("SELECT count(*) FROM message WHERE json_extract(data, '$.role') = 'user'") as usize,
        one("SELECT count(*) FROM part WHERE json_extract(data, '$.type') = 'tool'") as usize,
        one("SELECT sum(json_extract(data, '$.tokens.input')) FROM message") as u64,
        one("SELECT sum(json_extract(data, '$.tokens.output')) FROM message") as u64,
    )
}

fn cline_fixtures() -> PathBuf {
    common::fixtures("cline")
}

#[test]
fn one_kilo_source_finds_both_generations() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("kilo");
    let db = build_store(&data, "kilo.db");
    let hosts = vec![cline_fixtures().join("Cursor"), data.clone()];
    let found = KiloCode.discover(&hosts);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.contains(&db));
    assert!(found.iter().any(|p| p.ends_with(
        "kilocode.kilo-code/tasks/1c8d3a2f-5e6b-4c7d-9e8f-0a1b2c3d4e5f/ui_messages.json"
    )));
    for f in &found {
        let head = std::fs::read(f).unwrap();
        assert!(KiloCode.detect(f, &head[..head.len().min(4096)]), "{f:?}");
        let fp = common::parse_whole(&KiloCode, f).unwrap();
        assert!(fp.issues.is_empty(), "{:?}", fp.issues);
        assert!(fp
            .sessions
            .iter()
            .all(|s| s.meta.source == SourceKind::KiloCode));
    }
}

#[test]
fn a_kilo_store_gives_prompts_tools_errors_tokens_and_its_subagent() {
    let tmp = tempfile::tempdir().unwrap();
    let db = build_store(&tmp.path().join("kilo"), "kilo.db");
    let (sessions, prompts, tools, input, output) = sql_counts(&db);
    let fp = common::parse_whole(&KiloCode, &db).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    assert_eq!(fp.sessions.len(), sessions);
    let all_prompts: usize = fp
        .sessions
        .iter()
        .map(|s| common::count_kind(s, MessageKind::Prompt))
        .sum();
    assert_eq!(all_prompts, prompts);
    let calls: usize = fp
        .sessions
        .iter()
        .map(|s| common::count_kind(s, MessageKind::ToolCall))
        .sum();
    assert_eq!(calls, tools);
    let got_in: u64 = fp
        .sessions
        .iter()
        .flat_map(|s| &s.usage)
        .map(|u| u.input_tokens)
        .sum();
    let got_out: u64 = fp
        .sessions
        .iter()
        .flat_map(|s| &s.usage)
        .map(|u| u.output_tokens)
        .sum();
    assert_eq!((got_in, got_out), (input, output));

    let parent = common::by_native(&fp, "ses_kparent");
    assert_eq!(parent.meta.id.as_str(), "kilo-code:ses_kparent");
    assert_eq!(parent.meta.cwd.as_deref(), Some("/home/demo/widget"));
    assert_eq!(parent.meta.agent_version.as_deref(), Some("7.1.2"));
    assert_eq!(parent.turn_count, 2);
    assert_eq!(parent.models, vec!["claude-sonnet-4".to_string()]);
    assert_eq!(common::count_kind(parent, MessageKind::Thinking), 1);
    let failed = parent
        .messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("edit") && m.kind() == MessageKind::ToolResult)
        .expect("the edit's result");
    assert!(failed.is_error);
    let child = common::by_native(&fp, "ses_kchild");
    let link = child.meta.parent.as_ref().expect("parent link");
    assert_eq!(link.session_id.as_str(), "kilo-code:ses_kparent");
    assert_eq!(link.tool_call_id.as_deref(), Some("call_task"));
    // OpenCode's placeholder title gives way to the first prompt.
    assert_eq!(child.meta.title.as_deref(), Some("find callers"));
}

#[test]
fn each_fork_claims_its_own_database_given_by_path() {
    let tmp = tempfile::tempdir().unwrap();
    let kilo_db = build_store(&tmp.path().join("kilo"), "kilo.db");
    let kilo_dev = build_store(&tmp.path().join("kilo"), "opencode-dev.db");
    let mimo_db = build_store(&tmp.path().join("mimocode"), "mimocode.db");
    let mate_db = build_store(&tmp.path().join("icodemate"), "icodemate.db");
    let open_db = build_store(&tmp.path().join("opencode"), "opencode.db");
    let head = |p: &Path| std::fs::read(p).unwrap()[..100].to_vec();
    let mimo = OpencodeStore(MIMO);
    let mate = OpencodeStore(ICODEMATE);
    let claims = |p: &Path| -> Vec<bool> {
        let h = head(p);
        vec![
            Opencode.detect(p, &h),
            KiloCode.detect(p, &h),
            mimo.detect(p, &h),
            mate.detect(p, &h),
        ]
    };
    assert_eq!(claims(&kilo_db), [false, true, false, false]);
    assert_eq!(claims(&kilo_dev), [false, true, false, false]);
    assert_eq!(claims(&mimo_db), [false, false, true, false]);
    assert_eq!(claims(&mate_db), [false, false, false, true]);
    assert_eq!(claims(&open_db), [true, false, false, false]);

    let fp = common::parse_whole(&mimo, &mimo_db).unwrap();
    assert_eq!(fp.sessions.len(), 2);
    assert!(fp
        .sessions
        .iter()
        .all(|s| s.meta.source == SourceKind::MimoCode
            && s.meta.id.as_str().starts_with("mimo-code:")));
    let fp = common::parse_whole(&mate, &mate_db).unwrap();
    assert!(fp
        .sessions
        .iter()
        .all(|s| s.meta.source == SourceKind::Icodemate));
    // Discovery under each fork's data folder finds its own database only.
    assert_eq!(mimo.discover(&[tmp.path().join("mimocode")]), vec![mimo_db]);
    assert_eq!(
        Opencode.discover(&[tmp.path().join("opencode")]),
        vec![open_db]
    );
}
