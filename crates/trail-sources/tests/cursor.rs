//! Cursor: `state.vscdb` key/value stores.

mod common;

use common::by_native;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rusqlite::{params, Connection};
use serde_json::{json, Value};
use trail_model::{MessageKind, Role};
use trail_sources::cursor::Cursor;
use trail_sources::{FileParse, ParseRequest, Source};

const KV: &str = "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);";

const A: &str = "0f8e1c52-6f0a-4c51-9a57-2f6d1e3b7a10";
const B: &str = "5b2d9e7c-1a34-4e8f-b0c6-7d9a8e1f2c33";
const BAD: &str = "9c1e2d3f-0000-4aaa-bbbb-cccccccccccc";
/// A subagent composer naming its parent itself (`subagentInfo.parentComposerId`).
const C: &str = "c0c0c0c0-1111-4aaa-bbbb-cccccccccccc";
/// A subagent composer its parent lists in `subagentComposerIds`.
const D: &str = "d0d0d0d0-2222-4aaa-bbbb-cccccccccccc";
/// An older composer keeping its bubbles inline in `conversationMap`.
const E: &str = "e0e0e0e0-3333-4aaa-bbbb-cccccccccccc";
const EMPTY: &str = "aaaaaaaa-0000-4aaa-bbbb-cccccccccccc";

fn put(conn: &Connection, key: &str, value: &str) {
    conn.execute(
        "INSERT INTO cursorDiskKV VALUES (?1, ?2)",
        params![key, value],
    )
    .unwrap();
}

fn bubble(conn: &Connection, composer: &str, id: &str, v: Value) {
    put(conn, &format!("bubbleId:{composer}:{id}"), &v.to_string());
}

/// Builds `<root>/User/globalStorage/state.vscdb` plus one workspace folder.
fn build(root: &Path, wal: bool) -> PathBuf {
    let global = root.join("User/globalStorage/state.vscdb");
    std::fs::create_dir_all(global.parent().unwrap()).unwrap();
    let conn = Connection::open(&global).unwrap();
    if wal {
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .unwrap();
    }
    conn.execute_batch(KV).unwrap();
    put(
        &conn,
        &format!("composerData:{A}"),
        &json!({
            "_v": 10, "composerId": A, "name": "Refactor auth", "createdAt": 1_766_691_308_486i64,
            "lastUpdatedAt": 1_766_692_125_731i64, "createdOnBranch": "feature/auth",
            "modelConfig": {"modelName": "default", "maxMode": false},
            "subComposerIds": [B],
            "subagentComposerIds": [D],
            "fullConversationHeadersOnly": [
                {"bubbleId": "u1", "type": 1}, {"bubbleId": "a1", "type": 2},
                {"bubbleId": "a2", "type": 2}, {"bubbleId": "gone", "type": 2},
                {"bubbleId": "a3", "type": 2}, {"bubbleId": "x1", "type": 3},
                {"bubbleId": "bad", "type": 2}, {"bubbleId": "u2", "type": 1}
            ]
        })
        .to_string(),
    );
    bubble(
        &conn,
        A,
        "u1",
        json!({"_v": 3, "type": 1, "bubbleId": "u1",
        "text": "Refactor the auth module, see https://github.com/acme/api/pull/7",
        "createdAt": "2025-12-25T19:35:10.000Z", "modelInfo": {"modelName": "claude-4-sonnet"},
        "tokenCount": {"inputTokens": 0, "outputTokens": 0}}),
    );
    bubble(
        &conn,
        A,
        "a1",
        json!({"_v": 3, "type": 2, "bubbleId": "a1",
        "text": "I'll start with the session store.", "thinking": {"text": "Read auth.rs first."},
        "createdAt": "2025-12-25T19:35:20.000Z", "tokenCount": {"inputTokens": 0, "outputTokens": 0}}),
    );
    // Stored as a BLOB, as Cursor does for some values.
    conn.execute("INSERT INTO cursorDiskKV VALUES (?1, ?2)", params![
        format!("bubbleId:{A}:a2"),
        json!({"_v": 3, "type": 2, "bubbleId": "a2", "text": "", "capabilityType": 15,
            "createdAt": "2025-12-25T19:35:30.000Z",
            "toolFormerData": {"tool": 40, "toolCallId": "toolu_read", "name": "read_file", "status": "completed",
                "rawArgs": "{\"target_file\":\"src/auth.rs\"}",
                "params": "{\"targetFile\":\"src/auth.rs\",\"limit\":100}",
                "result": "{\"contents\":\"pub fn login() {}\"}"},
            "tokenCount": {"inputTokens": 1200, "outputTokens": 300}}).to_string().into_bytes()
    ]).unwrap();
    bubble(
        &conn,
        A,
        "a3",
        json!({"_v": 3, "type": 2, "bubbleId": "a3", "text": "",
        "createdAt": "2025-12-25T19:35:40.000Z",
        "toolFormerData": {"tool": 15, "toolCallId": "toolu_sh", "name": "run_terminal_cmd", "status": "error",
            "rawArgs": "{\"command\":\"git commit -am wip\"}",
            "result": "{\"output\":\"[feature/auth 9f8e7d6] wip\"}"}}),
    );
    bubble(
        &conn,
        A,
        "x1",
        json!({"_v": 3, "type": 3, "bubbleId": "x1", "text": "divider"}),
    );
    put(
        &conn,
        &format!("bubbleId:{A}:bad"),
        "{\"type\": 2, \"text\": ",
    );
    bubble(
        &conn,
        A,
        "u2",
        json!({"_v": 3, "type": 1, "bubbleId": "u2", "text": "thanks",
        "createdAt": "2025-12-25T19:36:00.000Z"}),
    );
    // A bubble no header lists (an abandoned edit): not part of the conversation.
    bubble(&conn, A, "stale", json!({"type": 1, "text": "old draft"}));

    // B: no name, no headers: bubbles in createdAt order.
    put(
        &conn,
        &format!("composerData:{B}"),
        &json!({"composerId": B, "createdAt": 1_766_700_000_000i64}).to_string(),
    );
    bubble(
        &conn,
        B,
        "b2",
        json!({"type": 2, "text": "Done.", "createdAt": "2025-12-25T22:00:05.000Z",
        "tokenCount": {"inputTokens": 10, "outputTokens": 0}}),
    );
    bubble(
        &conn,
        B,
        "b1",
        json!({"type": 1, "text": "  check the tests  ", "createdAt": "2025-12-25T22:00:00.000Z"}),
    );

    for (id, extra) in [
        (C, json!({"subagentInfo": {"parentComposerId": A}})),
        (D, json!({"isSubagent": true})),
    ] {
        let mut data = json!({"composerId": id, "createdAt": 1_766_700_100_000i64});
        data.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        put(&conn, &format!("composerData:{id}"), &data.to_string());
        bubble(
            &conn,
            id,
            "s1",
            json!({"type": 1, "text": "explore the tests", "createdAt": "2025-12-25T22:10:00.000Z"}),
        );
    }

    put(
        &conn,
        &format!("composerData:{E}"),
        &json!({"composerId": E, "name": "Old style", "createdAt": 1_766_600_000_000i64,
            "fullConversationHeadersOnly": [{"bubbleId": "e1", "type": 1}, {"bubbleId": "e2", "type": 2}],
            "conversationMap": {
                "e2": {"type": 2, "bubbleId": "e2", "text": "It is in main.rs."},
                "e1": {"type": 1, "bubbleId": "e1", "text": "where is main?"}
            }})
        .to_string(),
    );

    put(&conn, &format!("composerData:{BAD}"), "{\"composerId\": ");
    put(
        &conn,
        &format!("composerData:{EMPTY}"),
        &json!({"composerId": EMPTY, "fullConversationHeadersOnly": []}).to_string(),
    );
    put(&conn, "checkpointId:zzz", "{}");
    drop(conn);

    // The workspace that owns A.
    let ws = root.join("User/workspaceStorage/4f1c2a");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        ws.join("workspace.json"),
        r#"{"folder": "file:///home/demo/projects/auth%20service"}"#,
    )
    .unwrap();
    let wconn = Connection::open(ws.join("state.vscdb")).unwrap();
    wconn.execute_batch(KV).unwrap();
    wconn.execute(
        "INSERT INTO ItemTable VALUES ('composer.composerData', ?1)",
        [json!({"allComposers": [{"composerId": A, "createdAt": 1}], "selectedComposerIds": [A]}).to_string()],
    ).unwrap();
    // A workspace folder without a database is skipped.
    std::fs::create_dir_all(root.join("User/workspaceStorage/empty")).unwrap();
    global
}

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&Cursor, path).expect("parse")
}

#[test]
fn composers_bubbles_tools_and_usage() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path(), false);
    let out = parse(&db);
    assert_eq!(
        out.sessions.len(),
        5,
        "empty and malformed composers are not sessions"
    );

    let a = by_native(&out, A);
    assert_eq!(a.meta.id.as_str(), A);
    assert_eq!(a.meta.title.as_deref(), Some("Refactor auth"));
    assert_eq!(
        a.meta.cwd.as_deref(),
        Some("/home/demo/projects/auth service")
    );
    assert_eq!(a.meta.branch.as_deref(), Some("feature/auth"));
    assert_eq!(
        a.meta.created_at.as_deref(),
        Some("2025-12-25T19:35:08.486Z")
    );
    assert_eq!(
        a.meta.updated_at.as_deref(),
        Some("2025-12-25T19:48:45.731Z")
    );
    use MessageKind::*;
    let kinds: Vec<(Role, MessageKind)> = a.messages.iter().map(|m| (m.role(), m.kind())).collect();
    assert_eq!(
        kinds,
        vec![
            (Role::User, Prompt),
            (Role::Assistant, Thinking),
            (Role::Assistant, Text),
            (Role::Assistant, ToolCall),
            (Role::Tool, ToolResult),
            (Role::Assistant, ToolCall),
            (Role::Tool, ToolResult),
            (Role::System, Unknown),
            (Role::User, Prompt),
        ]
    );
    assert_eq!(a.turn_count, 2);
    assert_eq!(
        a.turns[0].assistant_response.as_deref(),
        Some("I'll start with the session store.")
    );
    let read = &a.messages[3];
    assert_eq!(read.tool_name.as_deref(), Some("read_file"));
    assert_eq!(read.tool_call_id.as_deref(), Some("toolu_read"));
    assert_eq!(
        read.tool_input.as_deref(),
        Some("{\"target_file\":\"src/auth.rs\"}")
    );
    assert_eq!(read.model.as_deref(), Some("claude-4-sonnet"));
    assert_eq!(read.native_id.as_deref(), Some("a2"));
    assert_eq!(
        a.messages[4].tool_output.as_deref(),
        Some("{\"contents\":\"pub fn login() {}\"}")
    );
    assert!(!a.messages[4].is_error);
    assert!(a.messages[6].is_error);
    assert_eq!(a.messages[6].tool_call_id.as_deref(), Some("toolu_sh"));
    let unknown: Value = serde_json::from_str(a.messages[7].extra.as_deref().unwrap()).unwrap();
    assert_eq!(unknown["type"], 3);
    assert_eq!(
        a.messages[8].timestamp.as_deref(),
        Some("2025-12-25T19:36:00.000Z")
    );
    assert_eq!(a.files.len(), 1);
    assert_eq!(a.files[0].path, "src/auth.rs");
    assert_eq!(a.files[0].turn_index, Some(0));
    let refs: Vec<&str> = a.refs.iter().map(|r| r.value.as_str()).collect();
    assert_eq!(refs, vec!["acme/api#7", "9f8e7d6"]);
    assert_eq!(a.models, vec!["claude-4-sonnet".to_string()]);

    // Usage: one per assistant bubble with a tokenCount; zeros are unknown.
    assert_eq!(a.usage.len(), 2);
    assert_eq!(a.usage[0].request_key, "a1");
    assert!(!a.usage[0].tokens_known);
    assert_eq!(
        (a.usage[1].input_tokens, a.usage[1].output_tokens),
        (1200, 300)
    );
    assert!(a.usage[1].tokens_known);
    assert_eq!(a.usage[1].message_seq, Some(3));

    let b = by_native(&out, B);
    assert_eq!(b.meta.title.as_deref(), Some("check the tests"));
    assert_eq!(b.messages.len(), 2);
    assert_eq!(b.messages[0].kind(), Prompt);
    assert_eq!(b.meta.cwd, None);
    let link = b.meta.parent.as_ref().expect("sub-composer has a parent");
    assert_eq!(link.session_id.as_str(), A);
    // Inline bubbles, in header order.
    let e = by_native(&out, E);
    let texts: Vec<&str> = e.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["where is main?", "It is in main.rs."]);

    // Subagents link to their parent whichever side names the other.
    for sub in [C, D] {
        let s = by_native(&out, sub);
        let link = s
            .meta
            .parent
            .as_ref()
            .expect("subagent composer has a parent");
        assert_eq!(link.session_id.as_str(), A, "{sub}");
    }
    assert_eq!(b.usage.len(), 1);
    assert!(b.usage[0].tokens_known);

    // Bad values are issues naming their key.
    assert_eq!(out.issues.len(), 2, "{:?}", out.issues);
    assert!(out
        .issues
        .iter()
        .any(|i| i.reason.contains(&format!("key composerData:{BAD}"))));
    assert!(out
        .issues
        .iter()
        .any(|i| i.reason.contains(&format!("key bubbleId:{A}:bad"))));
    assert!(
        out.notes
            .iter()
            .any(|n| n == "conversation headers without a bubble: 2"),
        "{:?}",
        out.notes
    );
}

#[test]
fn discovery_and_detection() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path(), false);
    assert_eq!(
        Cursor.discover(&[dir.path().to_path_buf(), PathBuf::from("/nonexistent")]),
        vec![db.clone()]
    );
    let head = std::fs::read(&db).unwrap();
    assert!(Cursor.detect(&db, &head[..head.len().min(65536)]));
    assert!(!Cursor.detect(Path::new("/x/opencode.db"), &head[..4096]));
    // A VS Code state.vscdb without cursorDiskKV is not Cursor's.
    let vscode = dir.path().join("state.vscdb");
    let c = Connection::open(&vscode).unwrap();
    c.execute_batch("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);")
        .unwrap();
    drop(c);
    assert!(!Cursor.detect(&vscode, &std::fs::read(&vscode).unwrap()));
    assert!(Cursor
        .parse(ParseRequest {
            max_bytes: None,
            path: &vscode,
            resume: None
        })
        .is_err());
    assert!(!Cursor.appendable(&db));
}

fn hash(path: &Path) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&std::fs::read(path).unwrap_or_default())
}

#[test]
fn database_held_open_by_another_writer() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path(), true);
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let writer = Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    bubble(
        &writer,
        B,
        "b3",
        json!({"type": 1, "text": "uncommitted", "createdAt": "2025-12-25T23:00:00.000Z"}),
    );
    let before = (hash(&db), hash(&wal));
    let out = parse(&db);
    assert_eq!(out.sessions.len(), 5);
    assert_eq!(by_native(&out, B).messages.len(), 2);
    assert_eq!((hash(&db), hash(&wal)), before);
    writer.execute_batch("COMMIT").unwrap();
    assert_eq!(by_native(&parse(&db), B).messages.len(), 3);
}

#[test]
fn locked_database_is_read_from_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path(), false);
    let writer = Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN EXCLUSIVE").unwrap();
    bubble(&writer, B, "b3", json!({"type": 1, "text": "uncommitted"}));
    let before = hash(&db);
    let out = parse(&db);
    assert_eq!(by_native(&out, B).messages.len(), 2);
    assert!(out.notes.iter().any(|n| n.contains("private copy")));
    assert_eq!(hash(&db), before);
    writer.execute_batch("COMMIT").unwrap();
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..4).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[a-z0-9{}\":, -]{0,16}".prop_map(Value::from),
        Just(Value::from("b1")),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("type".to_string()),
                    Just("text".to_string()),
                    Just("thinking".to_string()),
                    Just("toolFormerData".to_string()),
                    Just("tokenCount".to_string()),
                    Just("rawArgs".to_string()),
                    Just("params".to_string()),
                    Just("result".to_string()),
                    Just("status".to_string()),
                    Just("bubbleId".to_string()),
                    Just("createdAt".to_string()),
                    Just("fullConversationHeadersOnly".to_string()),
                    Just("conversation".to_string()),
                    Just("subComposerIds".to_string()),
                    Just("name".to_string()),
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
    fn arbitrary_values_never_panic(
        composer in arb_json(),
        bubbles in prop::collection::vec(arb_json(), 0..5),
        junk in ".{0,20}",
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.vscdb");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(KV).unwrap();
        put(&conn, "composerData:c1", &composer.to_string());
        put(&conn, "composerData:c2", &junk);
        for (i, b) in bubbles.iter().enumerate() {
            put(&conn, &format!("bubbleId:c1:b{i}"), &b.to_string());
        }
        put(&conn, "bubbleId:c1:junk", &junk);
        drop(conn);
        let _ = Cursor.parse(ParseRequest { max_bytes: None, path: &path, resume: None });
    }
}
