//! OpenCode: SQLite store and JSON tree.

mod common;

use common::{by_native, count_kind};

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rusqlite::{params, Connection};
use serde_json::{json, Value};
use trail_model::{MessageKind, Role};
use trail_sources::opencode::Opencode;
use trail_sources::{FileParse, ParseRequest, Source};

const SCHEMA: &str = "
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL);
CREATE TABLE session (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
  directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (
  id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX part_session_idx ON part(session_id);
";

const T0: i64 = 1_756_720_800_000;

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&Opencode, path).expect("parse")
}

fn session(conn: &Connection, id: &str, parent: Option<&str>, title: &str, t: i64) {
    conn.execute(
        "INSERT INTO session VALUES (?1, 'prj', ?2, 'slug', '/home/demo/projects/widget', ?3, '1.0.7', ?4, ?5)",
        params![id, parent, title, t, t + 60_000],
    )
    .unwrap();
}

fn message(conn: &Connection, id: &str, session: &str, t: i64, data: &str) {
    conn.execute(
        "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
        params![id, session, t, data],
    )
    .unwrap();
}

fn part(conn: &Connection, id: &str, msg: &str, session: &str, data: &str) {
    conn.execute(
        "INSERT INTO part VALUES (?1, ?2, ?3, 0, 0, ?4)",
        params![id, msg, session, data],
    )
    .unwrap();
}

fn assistant(parent: &str, t: i64, tokens: Value) -> String {
    json!({
        "role": "assistant", "parentID": parent, "time": {"created": t},
        "modelID": "claude-sonnet-4", "providerID": "anthropic", "mode": "build",
        "path": {"cwd": "/home/demo/projects/widget", "root": "/home/demo/projects/widget"},
        "cost": 0.02, "tokens": tokens
    })
    .to_string()
}

fn user(t: i64) -> String {
    json!({"role": "user", "time": {"created": t}, "agent": "build",
           "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4"}})
    .to_string()
}

/// Builds the reference database: a parent session with every part type, a subagent child,
/// and bad rows.
fn build_db(dir: &Path, wal: bool) -> PathBuf {
    let path = dir.join("opencode.db");
    let conn = Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row(
            &format!(
                "PRAGMA journal_mode = {}",
                if wal { "WAL" } else { "DELETE" }
            ),
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(mode, if wal { "wal" } else { "delete" });
    conn.execute_batch(SCHEMA).unwrap();
    session(&conn, "ses_parent", None, "Fix the parser", T0);
    session(
        &conn,
        "ses_child",
        Some("ses_parent"),
        "Find the lexer (@explore subagent)",
        T0 + 5_000,
    );
    // Turn 1: prompt, synthetic context, attachment.
    message(&conn, "msg_01", "ses_parent", T0, &user(T0));
    part(
        &conn,
        "prt_01a",
        "msg_01",
        "ses_parent",
        &json!({"type": "text", "text": "Fix the tokenizer bug from acme/widget#12"}).to_string(),
    );
    part(&conn, "prt_01b", "msg_01", "ses_parent",
        &json!({"type": "text", "synthetic": true, "text": "Called the Read tool with src/lexer.rs"}).to_string());
    part(
        &conn,
        "prt_01c",
        "msg_01",
        "ses_parent",
        &json!({"type": "file", "mime": "text/plain", "filename": "notes.md",
                "url": "file:///home/demo/projects/widget/notes.md",
                "source": {"type": "file", "path": "/home/demo/projects/widget/notes.md",
                           "text": {"value": "@notes.md", "start": 0, "end": 9}}})
        .to_string(),
    );
    // The answer: every assistant part type.
    let tokens =
        json!({"input": 100, "output": 50, "reasoning": 10, "cache": {"read": 1000, "write": 200}});
    message(
        &conn,
        "msg_02",
        "ses_parent",
        T0 + 1_000,
        &assistant("msg_01", T0 + 1_000, tokens),
    );
    let parts = [
        json!({"type": "step-start", "snapshot": "abc"}),
        json!({"type": "reasoning", "text": "The lexer drops the last token.", "time": {"start": T0 + 1_100}}),
        json!({"type": "text", "text": "Looking at the lexer.", "time": {"start": T0 + 1_200}}),
        json!({"type": "tool", "callID": "call_read", "tool": "read",
               "state": {"status": "completed", "input": {"filePath": "/home/demo/projects/widget/src/lexer.rs"},
                         "output": "fn next() {}", "title": "src/lexer.rs", "metadata": {},
                         "time": {"start": T0 + 1_300, "end": T0 + 1_350}}}),
        json!({"type": "tool", "callID": "call_task", "tool": "task",
               "state": {"status": "completed", "input": {"description": "Find the lexer", "prompt": "find it", "subagent_type": "explore"},
                         "output": "task_id: ses_child", "title": "Find the lexer",
                         "metadata": {"sessionId": "ses_child"}, "time": {"start": T0 + 1_400, "end": T0 + 1_500}}}),
        json!({"type": "tool", "callID": "call_edit", "tool": "edit",
               "state": {"status": "error", "input": {"filePath": "/home/demo/projects/widget/src/parser.rs"},
                         "error": "oldString not found", "time": {"start": T0 + 1_600, "end": T0 + 1_650}}}),
        json!({"type": "tool", "callID": "call_bash", "tool": "bash",
               "state": {"status": "completed", "input": {"command": "git commit -am fix"},
                         "output": "[main 1a2b3c4] Fix the lexer\n 1 file changed", "title": "Commit",
                         "metadata": {}, "time": {"start": T0 + 1_700, "end": T0 + 1_800}}}),
        json!({"type": "tool", "callID": "call_run", "tool": "grep",
               "state": {"status": "running", "input": {"pattern": "lex"}, "time": {"start": T0 + 1_900}}}),
        json!({"type": "patch", "hash": "deadbeef", "files": ["/home/demo/projects/widget/src/lexer.rs", "/home/demo/projects/widget/src/token.rs"]}),
        json!({"type": "hologram", "beam": 3}),
        json!({"type": "retry", "attempt": 2, "error": {"name": "APIError", "data": {"message": "overloaded", "isRetryable": true}}, "time": {"created": T0 + 1_950}}),
        json!({"type": "step-finish", "reason": "stop", "cost": 0.02, "tokens": {"input": 100, "output": 50, "reasoning": 10, "cache": {"read": 1000, "write": 200}}}),
    ];
    for (i, p) in parts.iter().enumerate() {
        part(
            &conn,
            &format!("prt_02{i:02}"),
            "msg_02",
            "ses_parent",
            &p.to_string(),
        );
    }
    part(
        &conn,
        "prt_02zz",
        "msg_02",
        "ses_parent",
        "{\"type\": \"text\", \"text\": ",
    );
    // Turn 2: compaction and its summary; then a failed request.
    message(&conn, "msg_03", "ses_parent", T0 + 2_000, &user(T0 + 2_000));
    part(
        &conn,
        "prt_03a",
        "msg_03",
        "ses_parent",
        &json!({"type": "compaction", "auto": true}).to_string(),
    );
    let mut summary: Value = serde_json::from_str(&assistant(
        "msg_03",
        T0 + 2_100,
        json!({"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}),
    ))
    .unwrap();
    summary["summary"] = json!(true);
    message(
        &conn,
        "msg_04",
        "ses_parent",
        T0 + 2_100,
        &summary.to_string(),
    );
    part(
        &conn,
        "prt_04a",
        "msg_04",
        "ses_parent",
        &json!({"type": "text", "text": "We fixed the lexer; the parser edit failed."}).to_string(),
    );
    message(&conn, "msg_05", "ses_parent", T0 + 2_200, "{not json");
    let mut failed: Value = serde_json::from_str(&assistant(
        "msg_03",
        T0 + 2_300,
        json!({"input": 7, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}),
    ))
    .unwrap();
    failed["error"] = json!({"name": "ProviderAuthError", "data": {"providerID": "anthropic", "message": "bad key"}});
    message(
        &conn,
        "msg_06",
        "ses_parent",
        T0 + 2_300,
        &failed.to_string(),
    );
    // The subagent.
    message(&conn, "msg_c1", "ses_child", T0 + 1_400, &user(T0 + 1_400));
    part(
        &conn,
        "prt_c1a",
        "msg_c1",
        "ses_child",
        &json!({"type": "text", "text": "find it"}).to_string(),
    );
    message(
        &conn,
        "msg_c2",
        "ses_child",
        T0 + 1_450,
        &assistant(
            "msg_c1",
            T0 + 1_450,
            json!({"input": 30, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}),
        ),
    );
    part(
        &conn,
        "prt_c2a",
        "msg_c2",
        "ses_child",
        &json!({"type": "text", "text": "src/lexer.rs"}).to_string(),
    );
    path
}

#[test]
fn database_sessions_parts_and_usage() {
    let dir = tempfile::tempdir().unwrap();
    let db = build_db(dir.path(), true);
    let out = parse(&db);
    assert_eq!(out.sessions.len(), 2);

    let p = by_native(&out, "ses_parent");
    assert_eq!(p.meta.id.as_str(), "opencode:ses_parent");
    assert_eq!(p.meta.title.as_deref(), Some("Fix the parser"));
    assert_eq!(p.meta.cwd.as_deref(), Some("/home/demo/projects/widget"));
    assert_eq!(p.meta.agent_version.as_deref(), Some("1.0.7"));
    assert_eq!(
        p.meta.created_at.as_deref(),
        Some("2025-09-01T10:00:00.000Z")
    );
    assert_eq!(
        p.meta.updated_at.as_deref(),
        Some("2025-09-01T10:01:00.000Z")
    );
    assert!(p.meta.parent.is_none());

    let kinds: Vec<(Role, MessageKind)> = p.messages.iter().map(|m| (m.role(), m.kind())).collect();
    use MessageKind::*;
    assert_eq!(
        kinds,
        vec![
            (Role::User, Prompt),
            (Role::User, Meta),
            (Role::User, Meta),
            (Role::Assistant, Thinking),
            (Role::Assistant, Text),
            (Role::Assistant, ToolCall),
            (Role::Tool, ToolResult),
            (Role::Assistant, ToolCall),
            (Role::Tool, ToolResult),
            (Role::Assistant, ToolCall),
            (Role::Tool, ToolResult),
            (Role::Assistant, ToolCall),
            (Role::Tool, ToolResult),
            (Role::Assistant, ToolCall),
            (Role::System, Unknown),
            (Role::System, Error),
            (Role::System, Compaction),
            (Role::System, Summary),
            (Role::Assistant, Error),
        ]
    );
    assert!(p
        .messages
        .iter()
        .enumerate()
        .all(|(i, m)| m.seq == i as u32 && m.on_main_chain));
    assert_eq!(count_kind(p, ToolCall), 5);
    assert_eq!(count_kind(p, ToolResult), 4);
    assert_eq!(p.turn_count, 1);
    assert_eq!(p.turns.len(), 1);
    assert_eq!(
        p.turns[0].user_message.as_deref(),
        Some("Fix the tokenizer bug from acme/widget#12")
    );
    assert_eq!(
        p.turns[0].assistant_response.as_deref(),
        Some("Looking at the lexer.")
    );
    // The second user message only holds a compaction marker: no prompt, so no new turn.
    assert!(p.messages[16..].iter().all(|m| m.turn_index == Some(0)));

    let read = &p.messages[5];
    assert_eq!(read.tool_name.as_deref(), Some("read"));
    assert_eq!(read.tool_call_id.as_deref(), Some("call_read"));
    assert_eq!(read.text, "src/lexer.rs");
    assert_eq!(read.native_id.as_deref(), Some("msg_02"));
    assert_eq!(read.parent_native_id.as_deref(), Some("msg_01"));
    assert_eq!(read.model.as_deref(), Some("claude-sonnet-4"));
    let input: Value = serde_json::from_str(read.tool_input.as_deref().unwrap()).unwrap();
    assert_eq!(input["filePath"], "/home/demo/projects/widget/src/lexer.rs");
    assert_eq!(p.messages[6].tool_output.as_deref(), Some("fn next() {}"));
    assert_eq!(p.messages[6].tool_call_id.as_deref(), Some("call_read"));
    assert_eq!(
        p.messages[6].timestamp.as_deref(),
        Some("2025-09-01T10:00:01.350Z")
    );
    assert_eq!(p.messages[7].agent_ref.as_deref(), Some("ses_child"));
    let edit_result = &p.messages[10];
    assert!(edit_result.is_error);
    assert_eq!(
        edit_result.tool_output.as_deref(),
        Some("oldString not found")
    );
    assert_eq!(p.messages[13].tool_name.as_deref(), Some("grep"));
    let unknown: Value = serde_json::from_str(p.messages[14].extra.as_deref().unwrap()).unwrap();
    assert_eq!(unknown["type"], "hologram");
    assert_eq!(p.messages[15].text, "retry 2: overloaded");
    assert_eq!(p.messages[18].text, "ProviderAuthError: bad key");

    let files: Vec<(&str, Option<&str>)> = p
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.tool_name.as_deref()))
        .collect();
    assert_eq!(
        files,
        vec![
            ("/home/demo/projects/widget/notes.md", None),
            ("/home/demo/projects/widget/src/lexer.rs", Some("read")),
            ("/home/demo/projects/widget/src/parser.rs", Some("edit")),
            ("/home/demo/projects/widget/src/token.rs", Some("patch")),
        ]
    );
    assert!(p.files.iter().all(|f| f.turn_index == Some(0)));
    let refs: Vec<&str> = p.refs.iter().map(|r| r.value.as_str()).collect();
    assert_eq!(refs, vec!["acme/widget#12", "1a2b3c4"]);
    assert_eq!(p.checkpoints.len(), 1);
    assert_eq!(p.checkpoints[0].number, 1);
    assert_eq!(
        p.checkpoints[0].overview.as_deref(),
        Some("We fixed the lexer; the parser edit failed.")
    );
    assert_eq!(p.models, vec!["claude-sonnet-4".to_string()]);

    assert_eq!(p.usage.len(), 3);
    let u = &p.usage[0];
    assert_eq!(u.request_key, "msg_02");
    assert_eq!(u.message_seq, Some(3));
    assert_eq!(
        (
            u.input_tokens,
            u.output_tokens,
            u.reasoning_tokens,
            u.cache_read_tokens,
            u.cache_creation_tokens
        ),
        (100, 60, 10, 1000, 200)
    );
    assert_eq!(u.cost_usd, Some(0.02));
    assert!(u.tokens_known);
    assert_eq!(u.model.as_deref(), Some("claude-sonnet-4"));
    assert_eq!(p.usage[1].request_key, "msg_04");
    assert!(!p.usage[1].tokens_known, "all-zero tokens are unknown");
    assert!(p.usage[2].tokens_known);
    assert_eq!(p.usage[2].input_tokens, 7);

    let c = by_native(&out, "ses_child");
    let link = c.meta.parent.as_ref().expect("child has a parent");
    assert_eq!(link.session_id.as_str(), "opencode:ses_parent");
    assert_eq!(link.tool_call_id.as_deref(), Some("call_task"));
    assert_eq!(link.agent_ref.as_deref(), Some("ses_child"));
    assert_eq!(c.messages.len(), 2);
    assert_eq!(c.usage.len(), 1);
    assert_eq!(c.usage[0].input_tokens, 30);
    assert_eq!(c.turn_count, 1);

    // Bad rows are issues naming the row; everything else is indexed.
    assert_eq!(out.issues.len(), 2, "{:?}", out.issues);
    assert!(out
        .issues
        .iter()
        .any(|i| i.reason.contains("message row id=msg_05")));
    assert!(out
        .issues
        .iter()
        .any(|i| i.reason.contains("part row id=prt_02zz")));
    assert!(out
        .issues
        .iter()
        .all(|i| i.path == db.display().to_string()));
}

#[test]
fn placeholder_titles_give_way_to_the_first_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("opencode-beta.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    session(
        &conn,
        "ses_a",
        None,
        "New session - 2025-09-01T10:00:00.000Z",
        T0,
    );
    session(
        &conn,
        "ses_empty",
        None,
        "New session - 2025-09-01T11:00:00.000Z",
        T0,
    );
    message(&conn, "msg_a", "ses_a", T0, &user(T0));
    part(
        &conn,
        "prt_a",
        "msg_a",
        "ses_a",
        &json!({"type": "text", "text": "  rename the crate  "}).to_string(),
    );
    // A message whose session row is missing still yields its session.
    message(&conn, "msg_o", "ses_orphan", T0, &user(T0));
    part(
        &conn,
        "prt_o",
        "msg_o",
        "ses_orphan",
        &json!({"type": "text", "text": "hello"}).to_string(),
    );
    drop(conn);
    let out = parse(&path);
    assert_eq!(
        out.sessions.len(),
        2,
        "the empty placeholder session is skipped"
    );
    assert_eq!(
        by_native(&out, "ses_a").meta.title.as_deref(),
        Some("rename the crate")
    );
    assert_eq!(
        by_native(&out, "ses_orphan").meta.title.as_deref(),
        Some("hello")
    );
}

#[test]
fn json_tree_fixture() {
    let file = common::fixtures("opencode").join("storage/session/prj_demo/ses_tree1.json");
    assert!(Opencode.detect(&file, b"{\n  \"id\": \"ses_tree1\""));
    let out = parse(&file);
    assert_eq!(out.sessions.len(), 1);
    let s = &out.sessions[0];
    assert_eq!(s.meta.id.as_str(), "opencode:ses_tree1");
    assert_eq!(
        s.meta.title.as_deref(),
        Some("Add a README section about the beacon config")
    );
    assert_eq!(
        s.meta.cwd.as_deref(),
        Some("/home/demo/projects/lighthouse")
    );
    assert_eq!(s.meta.agent_version.as_deref(), Some("0.9.2"));
    let kinds: Vec<MessageKind> = s.messages.iter().map(|m| m.kind()).collect();
    assert_eq!(
        kinds,
        vec![
            MessageKind::Prompt,
            MessageKind::Thinking,
            MessageKind::ToolCall,
            MessageKind::ToolResult,
            MessageKind::Text
        ]
    );
    assert_eq!(s.turn_count, 1);
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some("Added the Beacon section to README.md.")
    );
    assert_eq!(s.files.len(), 1);
    assert_eq!(s.files[0].path, "/home/demo/projects/lighthouse/README.md");
    assert_eq!(s.files[0].tool_name.as_deref(), Some("write"));
    assert_eq!(s.usage.len(), 1);
    let u = &s.usage[0];
    assert_eq!(
        (
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_creation_tokens
        ),
        (1500, 250, 4000, 600)
    );
    assert_eq!(u.cost_usd, Some(0.0125));
    // The torn part file is an issue naming it; the others are indexed.
    assert_eq!(out.issues.len(), 1);
    assert!(out.issues[0].path.ends_with("prt_t2d.json"));
}

#[test]
fn bad_session_file_is_a_format_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("storage/session/prj/ses_x.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "[1, 2").unwrap();
    assert!(Opencode
        .parse(ParseRequest {
            max_bytes: None,
            path: &file,
            resume: None
        })
        .is_err());
}

#[test]
fn discovery_prefers_the_database_and_detect_is_strict() {
    let tree_root = common::fixtures("opencode");
    let found = Opencode.discover(&[tree_root.clone(), PathBuf::from("/nonexistent/opencode")]);
    assert_eq!(
        found,
        vec![tree_root.join("storage/session/prj_demo/ses_tree1.json")]
    );

    let dir = tempfile::tempdir().unwrap();
    let db = build_db(dir.path(), false);
    std::fs::create_dir_all(dir.path().join("storage/session/prj")).unwrap();
    std::fs::write(dir.path().join("storage/session/prj/ses_old.json"), "{}").unwrap();
    assert_eq!(
        Opencode.discover(&[dir.path().to_path_buf()]),
        vec![db.clone()]
    );

    let head = std::fs::read(&db).unwrap();
    assert!(Opencode.detect(&db, &head[..4096]));
    assert!(!Opencode.detect(Path::new("/x/state.vscdb"), &head[..4096]));
    assert!(!Opencode.detect(Path::new("/x/opencode.db"), b"not sqlite"));
    assert!(!Opencode.detect(Path::new("/x/chats/abc.json"), b"{}"));
    assert!(!Opencode.appendable(&db));
}

fn hash(path: &Path) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&std::fs::read(path).unwrap_or_default())
}

fn wal(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}-wal", path.display()))
}

#[test]
fn database_held_open_by_another_writer() {
    let dir = tempfile::tempdir().unwrap();
    let db = build_db(dir.path(), true);
    // The owner keeps a connection with an uncommitted write.
    let writer = Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    message(
        &writer,
        "msg_new",
        "ses_child",
        T0 + 9_000,
        &user(T0 + 9_000),
    );
    part(
        &writer,
        "prt_new",
        "msg_new",
        "ses_child",
        &json!({"type": "text", "text": "uncommitted"}).to_string(),
    );
    let before = (hash(&db), hash(&wal(&db)));

    let out = parse(&db);
    assert_eq!(out.sessions.len(), 2);
    assert_eq!(
        by_native(&out, "ses_child").messages.len(),
        2,
        "only committed rows"
    );
    assert_eq!(
        (hash(&db), hash(&wal(&db))),
        before,
        "trail changed the database files"
    );

    writer.execute_batch("COMMIT").unwrap();
    let out = parse(&db);
    assert_eq!(by_native(&out, "ses_child").messages.len(), 3);
}

#[test]
fn locked_rollback_database_is_read_from_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let db = build_db(dir.path(), false);
    let writer = Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE").unwrap();
    message(
        &writer,
        "msg_new",
        "ses_child",
        T0 + 9_000,
        &user(T0 + 9_000),
    );
    let before = hash(&db);

    let out = parse(&db);
    assert_eq!(out.sessions.len(), 2);
    assert_eq!(by_native(&out, "ses_child").messages.len(), 2);
    assert!(
        out.notes.iter().any(|n| n.contains("private copy")),
        "{:?}",
        out.notes
    );
    assert_eq!(hash(&db), before);
    writer.execute_batch("COMMIT").unwrap();
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[a-z_:/ .-]{0,12}".prop_map(Value::from),
        prop_oneof![
            Just("text"),
            Just("tool"),
            Just("reasoning"),
            Just("file"),
            Just("patch"),
            Just("compaction"),
            Just("retry"),
            Just("user"),
            Just("assistant"),
            Just("completed"),
            Just("error"),
            Just("task")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("type".to_string()),
                    Just("role".to_string()),
                    Just("text".to_string()),
                    Just("state".to_string()),
                    Just("input".to_string()),
                    Just("tokens".to_string()),
                    Just("time".to_string()),
                    Just("status".to_string()),
                    Just("files".to_string()),
                    Just("metadata".to_string()),
                    Just("error".to_string()),
                    Just("created".to_string()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn arbitrary_data_columns_never_panic(
        msgs in prop::collection::vec(arb_json(), 1..4),
        parts in prop::collection::vec(arb_json(), 0..6),
        junk in ".{0,20}",
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("opencode.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        session(&conn, "ses_p", None, &junk, T0);
        for (i, m) in msgs.iter().enumerate() {
            message(&conn, &format!("msg_{i}"), "ses_p", T0 + i as i64, &m.to_string());
        }
        for (i, p) in parts.iter().enumerate() {
            let msg = format!("msg_{}", i % msgs.len());
            part(&conn, &format!("prt_{i}"), &msg, "ses_p", &p.to_string());
        }
        part(&conn, "prt_junk", "msg_0", "ses_p", &junk);
        drop(conn);
        let _ = Opencode.parse(ParseRequest { max_bytes: None, path: &path, resume: None });
    }
}

#[test]
fn bundled_demo_sample_parses() {
    let root =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home/.local/share/opencode");
    let found = Opencode.discover(&[root]);
    assert_eq!(found.len(), 1);
    let out = parse(&found[0]);
    assert!(out.issues.is_empty(), "{:?}", out.issues);
    let s = &out.sessions[0];
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/demo/projects/tidepool"));
    assert_eq!(
        s.messages
            .iter()
            .filter(|m| m.kind() == MessageKind::ToolCall)
            .count(),
        2
    );
    assert_eq!(s.files.len(), 1);
    assert_eq!(s.usage.len(), 1);
    assert_eq!(s.turn_count, 1);
}
