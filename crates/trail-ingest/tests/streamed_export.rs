//! A chat-service data export is written as it is parsed: the sessions of a `conversations.json`
//! go to the store in pieces (`src/streamed.rs`), never all held at once. The export here is
//! written by the test in Claude.ai's shape (the shape of trail-sources' fixture
//! `tests/fixtures/claude-ai-export/conversations.json`), large enough for several pieces;
//! the counts it is checked against come from a plain `serde_json` read of the same file.

use std::path::Path;

use serde_json::{json, Value};
use trail_ingest::{index, IndexOptions, NoProgress};
use trail_store::Store;

const CONVERSATIONS: usize = 1500;

/// Writes the export: conversation `i` has `1 + i % 3` exchanges, each answer about 3 KB, so
/// the sessions weigh several of the ingest's 4 MiB pieces.
fn write_export(path: &Path) {
    let answer = "The borrow ends where the vector is moved; keep the index instead. ".repeat(45);
    let conversations: Vec<Value> = (0..CONVERSATIONS)
        .map(|i| {
            let messages: Vec<Value> = (0..1 + i % 3)
                .flat_map(|k| {
                    let at = format!("2026-11-20T09:{:02}:{:02}.000000Z", k, i % 60);
                    [
                        json!({"uuid": format!("h-{i}-{k}"), "sender": "human",
                               "text": format!("question {k} of chat {i}"), "content": [],
                               "created_at": at, "attachments": [], "files": []}),
                        json!({"uuid": format!("a-{i}-{k}"), "sender": "assistant",
                               "text": answer, "content": [{"type": "text", "text": answer}],
                               "created_at": at, "attachments": [], "files": []}),
                    ]
                })
                .collect();
            json!({
                "uuid": format!("00000000-0000-4000-8000-{i:012}"),
                "name": format!("chat {i}"),
                "created_at": "2026-11-20T09:00:00.000000Z",
                "updated_at": "2026-11-20T09:05:00.000000Z",
                "chat_messages": messages,
            })
        })
        .collect();
    std::fs::write(path, serde_json::to_vec_pretty(&conversations).unwrap()).unwrap();
}

#[test]
fn an_export_is_written_in_pieces_in_file_order_with_every_session() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("conversations.json");
    write_export(&export);
    // Counts without trail: one session per conversation, one message per chat message.
    let plain: Vec<Value> = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    let ids: Vec<String> = plain
        .iter()
        .map(|c| c["uuid"].as_str().unwrap().to_string())
        .collect();
    let messages: usize = plain
        .iter()
        .map(|c| c["chat_messages"].as_array().unwrap().len())
        .sum();
    assert_eq!(ids.len(), CONVERSATIONS);
    assert!(std::fs::metadata(&export).unwrap().len() > 12 << 20);

    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let options = IndexOptions {
        paths: vec![export.clone()],
        ..IndexOptions::default()
    };
    let summary = index(&mut store, &options, &NoProgress).unwrap();
    assert_eq!(summary.files_parsed, 1, "{summary:?}");
    assert_eq!(summary.sessions_new, CONVERSATIONS as u64);
    assert!(summary.issues.is_empty(), "{:?}", summary.issues);
    assert!(summary.empty_files.is_empty(), "{:?}", summary.empty_files);

    let conn = store.connection();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        count("SELECT count(*) FROM sessions WHERE source = 'claude-ai-export'"),
        CONVERSATIONS as i64
    );
    assert_eq!(count("SELECT count(*) FROM messages"), messages as i64);
    // The file's row lists its sessions in the order they were written: the file's.
    let (listed, size, bytes_parsed): (String, i64, i64) = conn
        .query_row(
            "SELECT sessions, size, bytes_parsed FROM source_files",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let listed: Vec<String> = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed, ids);
    // The last piece recorded the whole file: the next index finds it unchanged.
    let file_len = std::fs::metadata(&export).unwrap().len() as i64;
    assert_eq!((size, bytes_parsed), (file_len, file_len));
    let again = index(&mut store, &options, &NoProgress).unwrap();
    assert_eq!(again.files_unchanged, 1, "{again:?}");
    assert_eq!((again.sessions_new, again.sessions_updated), (0, 0));
}
