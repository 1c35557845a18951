//! Copilot Chat sessions older VS Code kept in the workspace's `state.vscdb` (key
//! `interactive.sessions`) (issue 16, item 3a). The databases are built here with rusqlite.

mod common;

use std::path::{Path, PathBuf};

use common::count_kind;
use proptest::prelude::*;
use serde_json::{json, Value};
use trail_model::MessageKind;
use trail_sources::copilot_vscode::CopilotVscode;
use trail_sources::{FileParse, Source};

const OLD: &str = "1f0e2d3c-4b5a-4697-8877-665544332211";
const NEWER: &str = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d";
const MIGRATED: &str = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";

/// Writes `workspaceStorage/<hash>/state.vscdb` with VS Code's `ItemTable`, holding `value`
/// under `interactive.sessions` when given.
fn state_db(user: &Path, hash: &str, value: Option<&str>) -> PathBuf {
    let dir = user.join("workspaceStorage").join(hash);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("state.vscdb");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
         INSERT INTO ItemTable VALUES ('workbench.panel.chat', '{}');",
    )
    .unwrap();
    if let Some(v) = value {
        conn.execute(
            "INSERT INTO ItemTable VALUES ('interactive.sessions', ?1)",
            [v],
        )
        .unwrap();
    }
    drop(conn);
    db
}

/// Two sessions in the shapes of 2023 (`providerId`, a string message, a response of strings)
/// and 2024 (`version` 3, message objects, markdown parts, `customTitle`), and one VS Code
/// already copied into `chatSessions/`. Three requests in all outside the copied one.
fn legacy_sessions() -> Value {
    json!([
        {
            "providerId": "copilot",
            "sessionId": OLD,
            "creationDate": 1_700_000_000_000i64,
            "requesterUsername": "dev",
            "responderUsername": "GitHub Copilot",
            "requests": [
                {
                    "providerRequestId": "r1",
                    "message": "How do I parse a date in Rust?",
                    "response": ["Use `chrono`: `NaiveDate::parse_from_str`."],
                    "followups": [],
                    "isCanceled": false
                },
                {
                    "message": {"text": "and with a zone?", "parts": [{"kind": "text", "text": "and with a zone?"}]},
                    "response": [{"value": "Use `DateTime::parse_from_rfc3339`.", "isTrusted": false}]
                }
            ]
        },
        {
            "version": 3,
            "sessionId": NEWER,
            "creationDate": 1_710_000_000_000i64,
            "customTitle": "Flaky clock test",
            "requests": [
                {
                    "requestId": "request_1",
                    "timestamp": 1_710_000_005_000i64,
                    "modelId": "copilot/gpt-4o",
                    "message": {"text": "why does test_clock fail at midnight?", "parts": []},
                    "response": [{"value": "It reads the local date twice."}]
                }
            ]
        },
        {
            "sessionId": MIGRATED,
            "creationDate": 1_720_000_000_000i64,
            "requests": [{"message": "copied into chatSessions", "response": ["yes"]}]
        }
    ])
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("Code/User");
    let db = state_db(&user, "a1b2c3", Some(&legacy_sessions().to_string()));
    std::fs::write(
        db.parent().unwrap().join("workspace.json"),
        r#"{"folder":"file:///home/dev/kettle"}"#,
    )
    .unwrap();
    let chats = db.parent().unwrap().join("chatSessions");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::write(
        chats.join(format!("{MIGRATED}.json")),
        json!({"version": 3, "sessionId": MIGRATED, "creationDate": 1_720_000_000_000i64,
               "requests": [{"message": {"text": "copied into chatSessions"}, "response": [{"value": "yes"}]}]})
            .to_string(),
    )
    .unwrap();
    // A workspace whose database never held chats is not a session file.
    state_db(&user, "d4e5f6", None);
    (dir, user, db)
}

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&CopilotVscode, path).expect("parse")
}

#[test]
fn legacy_sessions_are_read_through_the_request_parser() {
    let (dir, _user, db) = setup();
    let root = dir.path().join("Code");
    let found = CopilotVscode.discover(std::slice::from_ref(&root));
    let dbs: Vec<&PathBuf> = found
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "state.vscdb"))
        .collect();
    assert_eq!(dbs, vec![&db], "only the database with the key");
    assert!(CopilotVscode.detect(&db, &std::fs::read(&db).unwrap()));

    let before = std::fs::read(&db).unwrap();
    let p = parse(&db);
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    // Opened read-only: not a byte changed, no journal left beside it.
    assert_eq!(std::fs::read(&db).unwrap(), before);
    for suffix in ["-journal", "-wal"] {
        let mut side = db.clone().into_os_string();
        side.push(suffix);
        assert!(!Path::new(&side).exists(), "{suffix}");
    }
    // The migrated session is left to its chatSessions file.
    let ids: Vec<&str> = p.sessions.iter().map(|s| s.meta.id.as_str()).collect();
    assert_eq!(ids, vec![OLD, NEWER]);
    let (old, newer) = (&p.sessions[0], &p.sessions[1]);
    assert_eq!(old.meta.cwd.as_deref(), Some("/home/dev/kettle"));
    assert_eq!(old.turn_count, 2);
    assert_eq!(count_kind(old, MessageKind::Prompt), 2);
    let texts: Vec<&str> = old.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        vec![
            "How do I parse a date in Rust?",
            "Use `chrono`: `NaiveDate::parse_from_str`.",
            "and with a zone?",
            "Use `DateTime::parse_from_rfc3339`."
        ]
    );
    assert_eq!(
        old.meta.created_at.as_deref(),
        Some("2023-11-14T22:13:20.000Z")
    );
    assert_eq!(
        old.meta.metadata.as_ref().unwrap()["storage"],
        "state.vscdb interactive.sessions"
    );
    assert_eq!(newer.meta.title.as_deref(), Some("Flaky clock test"));
    assert_eq!(newer.turn_count, 1);
    assert_eq!(newer.models, vec!["copilot/gpt-4o".to_string()]);
    assert_eq!(
        newer.turns[0].assistant_response.as_deref(),
        Some("It reads the local date twice.")
    );
}

#[test]
fn a_damaged_value_is_an_issue_and_the_file_still_parses() {
    let dir = tempfile::tempdir().unwrap();
    let db = state_db(
        &dir.path().join("User"),
        "x1",
        Some("[{\"sessionId\": \"a\", \"requests\""),
    );
    let p = parse(&db);
    assert!(p.sessions.is_empty());
    assert_eq!(p.issues.len(), 1);
    assert!(
        p.issues[0].reason.contains("invalid JSON"),
        "{:?}",
        p.issues
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    // Whatever the key holds, parsing never panics and gives the same ids twice.
    #[test]
    fn arbitrary_values_never_panic(
        value in prop_oneof![
            "[ -~]{0,60}",
            proptest::collection::vec(
                ("[a-z0-9-]{0,12}", proptest::collection::vec(("[ -~]{0,20}", "[ -~]{0,20}"), 0..4)),
                0..4,
            )
            .prop_map(|sessions| {
                Value::Array(sessions.into_iter().map(|(id, reqs)| json!({
                    "sessionId": id,
                    "requests": reqs.into_iter().map(|(m, r)| json!({"message": m, "response": [r]})).collect::<Vec<_>>(),
                })).collect()).to_string()
            }),
        ]
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = state_db(&dir.path().join("User"), "h", Some(&value));
        let a = parse(&db);
        let b = parse(&db);
        let ids = |f: &FileParse| f.sessions.iter().map(|s| s.meta.id.0.clone()).collect::<Vec<_>>();
        prop_assert_eq!(ids(&a), ids(&b));
    }
}
