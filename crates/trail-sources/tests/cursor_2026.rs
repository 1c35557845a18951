//! Cursor agent transcripts (issue 18), joined with the composer metadata `state.vscdb` keeps.
//!
//! Evidence (Cursor is closed source; third-party readers found by searching for
//! `agent-transcripts`): the text layout `~/.cursor/projects/<project>/agent-transcripts/
//! <composerId>.txt` with turns starting at `user:`, prompts in `<user_query>` and answers after
//! `A:` (a scanner of Cursor's three stores; ingesters naming `*.txt`); the JSONL layout
//! `agent-transcripts/<uuid>/<uuid>.jsonl` with `{role, message: {content: [...]}}`, Claude-style
//! `text`/`tool_use`/`tool_result` blocks and `turn_ended` lines, no ids or timestamps (an
//! importer's notes); `state.vscdb` `cursorDiskKV` `composerData:<id>` as the existing Cursor
//! reader documents it. The fixture `tests/fixtures/cursor-transcripts` is written from those
//! shapes; the store beside it is built here.

mod common;

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use trail_model::MessageKind;
use trail_sources::cursor::Cursor;
use trail_sources::Source;

const C1: &str = "3f2a1b0c-9d8e-4f7a-b6c5-d4e3f2a1b0c9";
const C2: &str = "4a3b2c1d-0e9f-4a8b-c7d6-e5f4a3b2c1d0";
const C3: &str = "5b4c3d2e-1f0a-4b9c-d8e7-f6a5b4c3d2e1";

/// A home holding the fixture's `.cursor/` and a Cursor user-data folder whose global store
/// has C1's metadata only, and C3 with its messages; a workspace lists C1.
fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    copy_dir(
        &common::fixtures("cursor-transcripts/.cursor"),
        &home.path().join(".cursor"),
    );
    let user = home.path().join(".config/Cursor/User");
    std::fs::create_dir_all(user.join("globalStorage")).unwrap();
    let kv = "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
              CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);";
    let g = Connection::open(user.join("globalStorage/state.vscdb")).unwrap();
    g.execute_batch(kv).unwrap();
    let put = |k: &str, v: serde_json::Value| {
        g.execute(
            "INSERT INTO cursorDiskKV VALUES (?1, ?2)",
            [k, &v.to_string()],
        )
        .unwrap();
    };
    put(
        &format!("composerData:{C1}"),
        serde_json::json!({"composerId": C1, "name": "Checkout coupons", "createdAt": 1793613600000u64,
            "lastUpdatedAt": 1793617200000u64, "createdOnBranch": "feature/coupons",
            "modelConfig": {"modelName": "claude-sonnet-4.6"}, "fullConversationHeadersOnly": []}),
    );
    put(
        &format!("composerData:{C3}"),
        serde_json::json!({"composerId": C3, "name": "Shipping rename", "createdAt": 1793613600000u64,
            "fullConversationHeadersOnly": [{"bubbleId": "b1", "type": 1}]}),
    );
    put(
        &format!("bubbleId:{C3}:b1"),
        serde_json::json!({"type": 1, "text": "Rename the shipping module"}),
    );
    drop(g);
    let ws = user.join("workspaceStorage/1a2b3c");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        ws.join("workspace.json"),
        r#"{"folder":"file:///home/dev/shop"}"#,
    )
    .unwrap();
    let w = Connection::open(ws.join("state.vscdb")).unwrap();
    w.execute_batch(kv).unwrap();
    w.execute(
        "INSERT INTO ItemTable VALUES ('composer.composerData', ?1)",
        [serde_json::json!({"allComposers": [{"composerId": C1}]}).to_string()],
    )
    .unwrap();
    home
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::create_dir_all(to).unwrap();
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn transcripts(home: &Path) -> Vec<PathBuf> {
    Cursor
        .discover(&[home.join(".cursor")])
        .into_iter()
        .collect()
}

#[test]
fn text_transcripts_join_the_composer_metadata() {
    let home = home();
    let files = transcripts(home.path());
    assert_eq!(files.len(), 3, "{files:?}");
    let c1 = files
        .iter()
        .find(|p| p.ends_with(format!("{C1}.txt")))
        .unwrap();
    assert!(Cursor.detect(c1, b"user:\n"));
    let parsed = common::parse_whole(&Cursor, c1).unwrap();
    let s = common::only(&parsed);
    assert_eq!(s.meta.native_id, C1);
    assert_eq!(
        s.meta.title.as_deref(),
        Some("Checkout coupons"),
        "the composer's name"
    );
    assert_eq!(s.meta.branch.as_deref(), Some("feature/coupons"));
    assert_eq!(
        s.meta.cwd.as_deref(),
        Some("/home/dev/shop"),
        "the workspace listing it"
    );
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-11-02T10:00:00.000Z")
    );
    assert_eq!(s.models, vec!["claude-sonnet-4.6".to_string()]);
    assert_eq!(s.turn_count, 2);
    let kinds: Vec<MessageKind> = s.messages.iter().map(|m| m.kind()).collect();
    assert_eq!(
        kinds,
        vec![
            MessageKind::Prompt,
            MessageKind::Text,
            MessageKind::ToolCall,
            MessageKind::ToolResult,
            MessageKind::Text,
            MessageKind::Prompt,
            MessageKind::Text,
        ]
    );
    assert_eq!(
        s.messages[0].text,
        "Add a coupon field to the checkout form"
    );
    assert_eq!(s.files[0].path, "src/checkout/Form.tsx");
}

#[test]
fn jsonl_transcripts_stand_alone_and_stored_composers_are_not_read_twice() {
    let home = home();
    let files = transcripts(home.path());
    let c2 = files
        .iter()
        .find(|p| p.ends_with(format!("{C2}.jsonl")))
        .unwrap();
    let parsed = common::parse_whole(&Cursor, c2).unwrap();
    assert!(parsed.issues.is_empty(), "{:?}", parsed.issues);
    let s = common::only(&parsed);
    assert_eq!(
        s.meta.title.as_deref(),
        Some("Why does the cart badge lag?"),
        "no metadata: the first prompt"
    );
    let result = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert_eq!(result.tool_call_id.as_deref(), Some("tu_1"));
    assert_eq!(result.tool_name.as_deref(), Some("read_file"));
    assert_eq!(
        common::count_kind(s, MessageKind::Prompt),
        1,
        "a tool result is not a prompt"
    );

    // C3's messages are in state.vscdb: its transcript makes no second session.
    let c3 = files
        .iter()
        .find(|p| p.ends_with(format!("{C3}.txt")))
        .unwrap();
    let parsed = common::parse_whole(&Cursor, c3).unwrap();
    assert!(parsed.sessions.is_empty());
    let db = home
        .path()
        .join(".config/Cursor/User/globalStorage/state.vscdb");
    let stored = common::parse_whole(&Cursor, &db).unwrap();
    let ids: Vec<&str> = stored
        .sessions
        .iter()
        .map(|s| s.meta.native_id.as_str())
        .collect();
    assert_eq!(
        ids,
        vec![C3],
        "C1 has no messages in the store: only its transcript gives it"
    );
}

mod props {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any bytes as a text or JSONL transcript parse without panicking.
        #[test]
        fn transcripts_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1500), jsonl in any::<bool>()) {
            let dir = tempfile::tempdir().unwrap();
            let t = dir.path().join(".cursor/projects/p/agent-transcripts");
            std::fs::create_dir_all(&t).unwrap();
            let file = t.join(if jsonl { "x.jsonl" } else { "x.txt" });
            std::fs::write(&file, &bytes).unwrap();
            let _ = common::parse_whole(&Cursor, &file);
        }

        /// Text built from the transcript's own markers, in any order, parses.
        #[test]
        fn marker_soup_parses(lines in proptest::collection::vec(
            prop_oneof![
                Just("user:".to_string()), Just("A:".to_string()), Just("<user_query>".to_string()),
                Just("</user_query>".to_string()), Just("[Tool call] x".to_string()),
                Just("[Tool result] x".to_string()), Just("[Thinking] hm".to_string()),
                Just(String::new()), "[a-z ]{0,12}",
            ], 0..40)) {
            let dir = tempfile::tempdir().unwrap();
            let t = dir.path().join(".cursor/projects/p/agent-transcripts");
            std::fs::create_dir_all(&t).unwrap();
            let file = t.join("y.txt");
            std::fs::write(&file, lines.join("\n")).unwrap();
            let parsed = common::parse_whole(&Cursor, &file).unwrap();
            for s in &parsed.sessions {
                prop_assert!(s.messages.iter().all(|m| m.kind() != MessageKind::Unknown));
            }
        }
    }
}
