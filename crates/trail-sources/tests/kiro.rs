//! Kiro CLI: every corpus file, the hand-written JSONL fixture, rewinds, append-resume, and
//! the `conversations_v2` SQLite store.
//!
//! Corpus counts are made without the parser: each line is read with plain `serde_json`; a
//! line whose `data.message_id` appeared on an earlier line is a replay and is skipped;
//! prompts are `Prompt` lines, tool calls the `toolUse` blocks of `AssistantMessage` lines,
//! results the `toolResult` blocks of `ToolResults` lines. Tokens are the sums of
//! `input_token_count` and `output_token_count` over the `.json`'s
//! `session_state.conversation_metadata.user_turn_metadatas`, read with `serde_json`.
//!
//! The SQLite database has no corpus file: the test builds it from SQL written here, after the
//! table Kiro CLI creates (`conversations_v2(key, conversation_id, value, created_at,
//! updated_at)`, as kenn-io/agentsview reads it) and the conversation state of
//! aws/amazon-q-developer-cli (`crates/chat-cli/src/cli/chat/message.rs`), Kiro CLI's open
//! predecessor.

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{MessageKind, UpdateMode};
use trail_sources::kiro::Kiro;
use trail_sources::{FileParse, ParseRequest, Resume, Source};

use common::{count_kind, only, parse_whole};

#[derive(Debug, Default, PartialEq)]
struct Counts {
    prompts: usize,
    tool_calls: usize,
    results: usize,
}

fn count_by_hand(path: &Path) -> Counts {
    let mut seen = HashSet::new();
    let mut c = Counts::default();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let Ok(r) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(id) = r["data"]["message_id"].as_str() {
            if !seen.insert(id.to_string()) {
                continue;
            }
        }
        let blocks = r["data"]["content"].as_array().cloned().unwrap_or_default();
        let of_kind = |k: &str| blocks.iter().filter(|b| b["kind"] == k).count();
        match r["kind"].as_str().unwrap_or("") {
            "Prompt" => c.prompts += 1,
            "AssistantMessage" => c.tool_calls += of_kind("toolUse"),
            "ToolResults" => c.results += of_kind("toolResult"),
            _ => {}
        }
    }
    c
}

fn tokens_by_hand(meta: &Path) -> (u64, u64) {
    let v: Value = serde_json::from_slice(&std::fs::read(meta).unwrap()).unwrap();
    let turns = v["session_state"]["conversation_metadata"]["user_turn_metadatas"]
        .as_array()
        .unwrap();
    let sum = |k: &str| turns.iter().map(|t| t[k].as_u64().unwrap()).sum();
    (sum("input_token_count"), sum("output_token_count"))
}

#[test]
fn every_corpus_file_matches_counts_made_without_the_parser() {
    let Some(dir) = common::shared_corpus("kiro-cli") else {
        return;
    };
    let files = Kiro.discover(&[dir]);
    // Three `.jsonl` files under sessions/cli (`ls sessions/cli/*.jsonl`).
    assert_eq!(files.len(), 3);
    for f in &files {
        let head = std::fs::read(f).unwrap();
        assert!(Kiro.detect(f, &head));
        let fp = parse_whole(&Kiro, f).unwrap();
        assert!(fp.issues.is_empty(), "{}: {:?}", f.display(), fp.issues);
        let s = only(&fp);
        let by_hand = count_by_hand(f);
        let parsed = Counts {
            prompts: count_kind(s, MessageKind::Prompt),
            tool_calls: count_kind(s, MessageKind::ToolCall),
            results: count_kind(s, MessageKind::ToolResult),
        };
        assert_eq!(parsed, by_hand, "{}", f.display());
        let name = f.file_stem().unwrap().to_str().unwrap();
        assert_eq!(s.meta.native_id, name);
        // Turns: one per prompt, except the checkpoint-rewind recording (8799deca), whose
        // lines 5 and 6 replay lines 1 and 2: the conversation is lines 1, 2, 7, 8.
        let turns = if name.starts_with("8799deca") {
            2
        } else {
            by_hand.prompts
        };
        assert_eq!(s.turn_count as usize, turns, "{name}");
        let meta = f.with_extension("json");
        if meta.exists() {
            let (input, output) = tokens_by_hand(&meta);
            let sum = |g: fn(&trail_model::Usage) -> u64| s.usage.iter().map(g).sum::<u64>();
            assert_eq!(
                (sum(|u| u.input_tokens), sum(|u| u.output_tokens)),
                (input, output)
            );
            // Two user turns recorded, both with zero counts: known to be unmeasured.
            assert_eq!(s.usage.len(), 2);
            assert!(s.usage.iter().all(|u| !u.tokens_known));
            assert_eq!(s.models, ["qwen3-coder-next"]);
            assert!(s.meta.cwd.as_deref().unwrap().ends_with("/cwd"));
            assert_eq!(
                s.meta.created_at.as_deref(),
                Some("2026-07-15T14:33:56.738Z")
            );
        }
    }
}

fn fixture_dir() -> PathBuf {
    common::fixtures("kiro")
}

const ID: &str = "5b2f0a11-3c4d-4e5f-8a9b-0c1d2e3f4a5b";

fn fixture() -> PathBuf {
    fixture_dir().join(format!("sessions/cli/{ID}.jsonl"))
}

#[test]
fn the_fixture_keeps_tools_errors_rewinds_and_turn_usage() {
    assert_eq!(Kiro.discover(&[fixture_dir()]), [fixture()]);
    let fp = parse_whole(&Kiro, &fixture()).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    let s = only(&fp);
    assert_eq!(s.meta.id.as_str(), ID);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/proj"));
    assert_eq!(s.meta.title.as_deref(), Some("Add a greeting to notes.md"));
    assert_eq!(
        s.meta.metadata,
        Some(
            serde_json::json!({"created_reason": "user", "agent": "kiro_default", "credits": 0.375})
        )
    );
    assert_eq!(s.models, ["claude-sonnet-4.5"]);
    // Prompt 2 and its answer were rewound away (lines 9 and 10 replay lines 1 and 6).
    let turns: Vec<_> = s
        .turns
        .iter()
        .map(|t| t.user_message.as_deref().unwrap())
        .collect();
    assert_eq!(
        turns,
        ["Add a greeting to notes.md", "Start over: list the folder"]
    );
    let off: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| !m.on_main_chain)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(off, ["Now translate it to French", "Bonjour."]);
    assert_eq!(count_kind(s, MessageKind::Compaction), 1, "/clear");
    assert_eq!(
        count_kind(s, MessageKind::Unknown),
        1,
        "the unknown `Compact` kind"
    );
    let calls: Vec<(&str, &str)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolCall)
        .map(|m| (m.tool_name.as_deref().unwrap(), m.text.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("write", "Create notes.md"),
            ("shell", "Run the tests"),
            ("read", "")
        ]
    );
    let results: Vec<(&str, bool)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .map(|m| (m.tool_name.as_deref().unwrap(), m.is_error))
        .collect();
    // A shell result with a non-zero exit status and an `error` status are failures.
    assert_eq!(results, [("write", false), ("shell", true), ("read", true)]);
    // Prompts carry Kiro's epoch-second stamps; the answers take their prompt's.
    assert_eq!(
        s.messages[1].timestamp.as_deref(),
        Some("2026-07-25T17:20:00.000Z")
    );
    let files: Vec<&str> = s.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        files,
        ["/home/dev/proj/notes.md", "/home/dev/proj/missing.md"]
    );
    assert!(s.refs.iter().any(|r| r.value == "kirodev/proj#7"));
    let usage: Vec<(&str, u64, u64, bool)> = s
        .usage
        .iter()
        .map(|u| {
            (
                u.request_key.as_str(),
                u.input_tokens,
                u.output_tokens,
                u.tokens_known,
            )
        })
        .collect();
    assert_eq!(
        usage,
        [
            ("turn:p-1", 5200, 310, true),
            ("turn:p-2", 0, 0, false),
            ("turn:p-3", 800, 12, true)
        ]
    );
}

fn resumed(path: &Path, first: &FileParse) -> FileParse {
    let state = first.state.clone().unwrap();
    Kiro.parse(ParseRequest {
        max_bytes: None,
        path,
        resume: Some(Resume {
            offset: first.bytes_parsed,
            line: first.lines,
            state: &state,
        }),
    })
    .unwrap()
}

/// Writes the fixture's first `lines` lines (and its `.json`) into `dir`; returns the path
/// and the rest.
fn split(dir: &Path, lines: usize) -> (PathBuf, Vec<u8>) {
    let bytes = std::fs::read(fixture()).unwrap();
    let at = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(lines - 1)
        .map(|(i, _)| i + 1)
        .unwrap();
    let path = dir.join(format!("{ID}.jsonl"));
    std::fs::write(&path, &bytes[..at]).unwrap();
    std::fs::copy(
        fixture().with_extension("json"),
        path.with_extension("json"),
    )
    .unwrap();
    (path, bytes[at..].to_vec())
}

fn append(path: &Path, rest: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(rest).unwrap();
}

#[test]
fn append_resume_equals_full_parse_until_a_replay() {
    let dir = tempfile::tempdir().unwrap();
    // Lines 1-4, then 5-8: results cross the boundary and keep their calls' names.
    let (path, rest) = split(dir.path(), 4);
    assert!(Kiro.appendable(&path));
    let first = parse_whole(&Kiro, &path).unwrap();
    let rest_lines: Vec<&[u8]> = rest.split_inclusive(|b| *b == b'\n').collect();
    let upto8: Vec<u8> = rest_lines[..4].concat();
    append(&path, &upto8);
    let delta = resumed(&path, &first);
    let d = only(&delta);
    assert_eq!(d.mode, UpdateMode::Append);
    let full = parse_whole(&Kiro, &path).unwrap();
    let mut joined = only(&first).messages.clone();
    joined.extend(d.messages.iter().cloned());
    assert_eq!(joined, only(&full).messages);
    assert_eq!(d.turn_count, 2);
    assert_eq!(
        d.messages
            .iter()
            .find(|m| m.kind() == MessageKind::ToolResult)
            .and_then(|m| m.tool_name.as_deref()),
        Some("shell")
    );
    // Line 9 replays line 1: the next parse reads the whole file again.
    append(&path, &rest_lines[4..].concat());
    let again = resumed(&path, &full);
    let s = only(&again);
    assert_eq!(s.mode, UpdateMode::Replace);
    assert_eq!(s.turn_count, 2);
    assert_eq!(
        s.messages,
        only(&parse_whole(&Kiro, &path).unwrap()).messages
    );
}

/// The conversation state of one `conversations_v2` row, in amazon-q-developer-cli's shape.
const STATE_ONE: &str = r##"{
  "conversation_id": "0e1d2c3b-4a59-4687-9786-a5b4c3d2e1f0",
  "model_info": {"model_id": "claude-sonnet-4"},
  "latest_summary": ["We set up the repository.", {"message_id": "s"}],
  "history": [
    {"user": {"env_context": {"env_state": {"current_working_directory": "/srv/app"}},
              "content": {"Prompt": {"prompt": "Show the build script"}},
              "timestamp": "2026-05-17T10:00:00Z"},
     "assistant": {"ToolUse": {"message_id": "m1", "content": "Reading it.",
                   "tool_uses": [{"id": "t1", "name": "fs_read", "orig_name": "fs_read",
                                  "args": {"path": "/srv/app/build.sh", "mode": "Line"},
                                  "orig_args": {}}]}},
     "request_metadata": {"model_id": "claude-sonnet-4.5", "stream_end_timestamp_ms": 1779012005000}},
    {"user": {"content": {"ToolUseResults": {"tool_use_results": [
                {"tool_use_id": "t1", "content": [{"Text": "#!/bin/sh\nmake"}], "status": "Success"}]}},
              "timestamp": "2026-05-17T10:00:06Z"},
     "assistant": {"ToolUse": {"message_id": "m2", "content": "",
                   "tool_uses": [{"id": "t2", "name": "execute_bash", "args": {"command": "./build.sh"}}]}},
     "request_metadata": {"stream_end_timestamp_ms": 1779012010000}},
    {"user": {"content": {"CancelledToolUses": {"prompt": "Stop, do not run it",
                "tool_use_results": [{"tool_use_id": "t2", "content": [{"Text": "Tool use was cancelled by the user"}], "status": "Error"}]}},
              "timestamp": "2026-05-17T10:00:20Z"},
     "assistant": {"Response": {"message_id": "m3", "content": "Stopped."}},
     "request_metadata": {"stream_end_timestamp_ms": 1779012030000}}
  ],
  "transcript": ["> Show the build script"]
}"##;

fn build_database(dir: &Path) -> PathBuf {
    let path = dir.join("data.sqlite3");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE conversations_v2 (
             key TEXT NOT NULL,
             conversation_id TEXT NOT NULL,
             value TEXT NOT NULL,
             created_at INTEGER NOT NULL,
             updated_at INTEGER NOT NULL,
             PRIMARY KEY (key, conversation_id)
         );",
    )
    .unwrap();
    let id = "0e1d2c3b-4a59-4687-9786-a5b4c3d2e1f0";
    let insert = "INSERT INTO conversations_v2 VALUES (?1, ?2, ?3, ?4, ?5)";
    // An older copy of the same conversation under another folder: the newest row wins.
    conn.execute(
        insert,
        rusqlite::params!["/old", id, r#"{"conversation_id":"x","history":[]}"#, 1, 2],
    )
    .unwrap();
    conn.execute(
        insert,
        rusqlite::params![
            "/srv/app",
            id,
            STATE_ONE,
            1_779_012_000_000i64,
            1_779_012_031_000i64
        ],
    )
    .unwrap();
    conn.execute(
        insert,
        rusqlite::params!["/srv/b", "broken", "{not json", 5, 6],
    )
    .unwrap();
    path
}

#[test]
fn the_sqlite_store_is_read_read_only_with_one_session_per_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let db = build_database(dir.path());
    assert_eq!(
        Kiro.discover(&[dir.path().to_path_buf()]),
        std::slice::from_ref(&db)
    );
    let head = std::fs::read(&db).unwrap();
    assert!(Kiro.detect(&db, &head[..100]));
    assert!(!Kiro.appendable(&db));
    let before = std::fs::read(&db).unwrap();
    let fp = parse_whole(&Kiro, &db).unwrap();
    assert_eq!(std::fs::read(&db).unwrap(), before, "nothing written");
    assert_eq!(fp.issues.len(), 1, "the broken row");
    let s = only(&fp);
    assert_eq!(s.meta.id.as_str(), "0e1d2c3b-4a59-4687-9786-a5b4c3d2e1f0");
    assert_eq!(s.meta.cwd.as_deref(), Some("/srv/app"));
    assert_eq!(s.meta.title.as_deref(), Some("Show the build script"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-05-17T10:00:00.000Z")
    );
    assert_eq!(
        s.meta.updated_at.as_deref(),
        Some("2026-05-17T10:00:31.000Z")
    );
    let kinds: Vec<MessageKind> = s.messages.iter().map(|m| m.kind()).collect();
    use MessageKind::*;
    assert_eq!(
        kinds,
        [Summary, Prompt, Text, ToolCall, ToolResult, ToolCall, ToolResult, Prompt, Text]
    );
    assert_eq!(s.turn_count, 2);
    let results: Vec<(&str, bool)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == ToolResult)
        .map(|m| (m.tool_name.as_deref().unwrap(), m.is_error))
        .collect();
    assert_eq!(results, [("fs_read", false), ("execute_bash", true)]);
    assert_eq!(s.models, ["claude-sonnet-4.5", "claude-sonnet-4"]);
    assert_eq!(s.files[0].path, "/srv/app/build.sh");
    assert!(s.usage.is_empty(), "the state records no token counts");
}
