//! Antigravity: every corpus transcript, the store of the same conversation, the fixture and
//! append-resume.
//!
//! Counts are made without the parser: each transcript line is read with plain `serde_json`;
//! prompts are `USER_INPUT` steps, tool calls the entries of `tool_calls`, results the `MODEL`
//! steps other than `PLANNER_RESPONSE`, answers the `PLANNER_RESPONSE` steps with content.
//! The corpus store `conversations/873edfa9-….db` is checked against its transcript with
//! SQLite and byte searches: one `gen_metadata` row per `PLANNER_RESPONSE` step, each row
//! holding the display name of the model the transcript's `<USER_SETTINGS_CHANGE>` names.
//! Transcripts record no tokens; the store's token counts are not read (the parse says so).

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{MessageKind, UpdateMode};
use trail_sources::antigravity::{gen_metadata, Antigravity};
use trail_sources::{ParseRequest, Resume, Source};

use common::{count_kind, only, parse_whole};

fn steps(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn every_corpus_transcript_matches_counts_made_without_the_parser() {
    let Some(dir) = common::shared_corpus("antigravity") else {
        return;
    };
    let files = Antigravity.discover(std::slice::from_ref(&dir));
    // Three brain/<id>/.system_generated/logs/transcript.jsonl (`find -name transcript.jsonl`).
    assert_eq!(files.len(), 3);
    for f in &files {
        let head = std::fs::read(f).unwrap();
        assert!(Antigravity.detect(f, &head));
        let fp = parse_whole(&Antigravity, f).unwrap();
        assert!(fp.issues.is_empty(), "{:?}", fp.issues);
        let s = only(&fp);
        let st = steps(f);
        let of = |pred: &dyn Fn(&Value) -> bool| st.iter().filter(|s| pred(s)).count();
        let prompts = of(&|s| s["type"] == "USER_INPUT");
        let calls: usize = st
            .iter()
            .map(|s| s["tool_calls"].as_array().map_or(0, Vec::len))
            .sum();
        let results = of(&|s| s["source"] == "MODEL" && s["type"] != "PLANNER_RESPONSE");
        let answers = of(&|s| {
            s["type"] == "PLANNER_RESPONSE" && s["content"].as_str().is_some_and(|c| !c.is_empty())
        });
        assert_eq!(count_kind(s, MessageKind::Prompt), prompts);
        assert_eq!(s.turn_count as usize, prompts);
        assert_eq!(count_kind(s, MessageKind::ToolCall), calls);
        assert_eq!(count_kind(s, MessageKind::ToolResult), results);
        assert_eq!(count_kind(s, MessageKind::Text), answers);
        assert_eq!(
            count_kind(s, MessageKind::Summary),
            of(&|s| s["type"] == "CHECKPOINT")
        );
        let id = f
            .ancestors()
            .nth(3)
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        assert_eq!(s.meta.id.as_str(), id);
        assert!(s.usage.is_empty());
        // Prompts lose their <USER_REQUEST> wrapper.
        assert!(s
            .turns
            .iter()
            .all(|t| !t.user_message.as_deref().unwrap().contains('<')));
    }
}

#[test]
fn the_corpus_store_matches_the_transcript_of_the_same_conversation() {
    let Some(dir) = common::shared_corpus("antigravity") else {
        return;
    };
    let id = "873edfa9-6c16-4c1d-9a58-94b7c4cfcf63";
    let db = dir.join(format!("conversations/{id}.db"));
    let transcript = dir.join(format!(
        "brain/{id}/.system_generated/logs/transcript.jsonl"
    ));
    let st = steps(&transcript);
    let planner: Vec<i64> = st
        .iter()
        .filter(|s| s["type"] == "PLANNER_RESPONSE")
        .map(|s| {
            s["step_index"]
                .as_i64()
                .unwrap_or_else(|| s["step_index"].as_str().unwrap().parse().unwrap())
        })
        .collect();
    // The model the user picked, as the transcript says it.
    let picked = "Gemini 3.1 Pro (High)";
    assert!(st[0]["content"]
        .as_str()
        .unwrap()
        .contains(&format!("to {picked}.")));
    // Plain SQLite: one gen_metadata row per planner step, each naming the picked model.
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let blobs: Vec<Vec<u8>> = conn
        .prepare("SELECT data FROM gen_metadata ORDER BY idx")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(blobs.len(), planner.len());
    for b in &blobs {
        assert!(b.windows(picked.len()).any(|w| w == picked.as_bytes()));
    }
    // The decoder agrees: each request answers a planner step, with the picked model.
    let requests = gen_metadata::requests(&db);
    let answered: Vec<i64> = requests.iter().map(|r| r.answer_step.unwrap()).collect();
    assert_eq!(answered, planner);
    assert!(requests
        .iter()
        .all(|r| r.display_model.as_deref() == Some(picked)));
    // The parse gives each answer its request's model id and says what is not read.
    let fp = parse_whole(&Antigravity, &transcript).unwrap();
    let s = only(&fp);
    let text_models: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Text)
        .map(|m| m.model.as_deref().unwrap())
        .collect();
    let ids: Vec<&str> = requests
        .iter()
        .map(|r| r.model.as_deref().unwrap())
        .collect();
    assert_eq!(text_models, ids);
    assert!(
        fp.notes.iter().any(|n| n.contains("token counts")),
        "{:?}",
        fp.notes
    );
}

fn fixture_root() -> PathBuf {
    common::fixtures("antigravity")
}

const ID: &str = "7a1b2c3d-0000-4000-8000-00000000a001";

fn fixture() -> PathBuf {
    fixture_root().join(format!(
        "brain/{ID}/.system_generated/logs/transcript.jsonl"
    ))
}

#[test]
fn the_fixture_keeps_tools_failures_summaries_and_the_folder() {
    assert_eq!(Antigravity.discover(&[fixture_root()]), [fixture()]);
    let fp = parse_whole(&Antigravity, &fixture()).unwrap();
    assert!(fp.issues.is_empty());
    assert!(fp.notes.is_empty(), "no store beside this one");
    let s = only(&fp);
    let kinds: Vec<MessageKind> = s.messages.iter().map(|m| m.kind()).collect();
    use MessageKind::*;
    assert_eq!(
        kinds,
        [
            Prompt, Meta, Thinking, Text, ToolCall, ToolResult, ToolCall, ToolCall, ToolResult,
            ToolResult, Summary, Text, Meta
        ]
    );
    assert_eq!(
        s.turns[0].user_message.as_deref(),
        Some("List the project and fix the failing build")
    );
    // The picked model, as no store says otherwise.
    assert_eq!(s.models, ["Gemini 3.1 Pro (High)"]);
    // The sandbox folder is never taken for the project.
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/app"));
    let results: Vec<(&str, &str, bool)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == ToolResult)
        .map(|m| {
            (
                m.tool_call_id.as_deref().unwrap(),
                m.tool_name.as_deref().unwrap(),
                m.is_error,
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("3-0", "run_command", true),
            ("5-0", "view_file", false),
            ("5-1", "run_command", false)
        ]
    );
    let call: Value = serde_json::from_str(s.messages[4].tool_input.as_deref().unwrap()).unwrap();
    assert_eq!(call["CommandLine"], "make build");
    assert_eq!(s.files[0].path, "/home/dev/app/Makefile");
    assert!(s.refs.iter().any(|r| r.value == "google/agy#3"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-07-01T08:00:00.000Z")
    );
}

/// A protobuf length-delimited field.
fn pb(field: u64, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut varint = |mut v: u64| {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    };
    varint((field << 3) | 2);
    varint(bytes.len() as u64);
    out.extend_from_slice(bytes);
    out
}

/// A gen_metadata blob in the corpus store's shape (field 1: 19 model id, 20 key/value,
/// 21 display name).
fn request_blob(model: &str, last_step: i64) -> Vec<u8> {
    let mut kv = pb(1, b"last_step_index");
    kv.extend(pb(2, last_step.to_string().as_bytes()));
    let mut record = pb(19, model.as_bytes());
    record.extend(pb(20, &kv));
    record.extend(pb(21, b"Gemini 3.1 Pro (High)"));
    pb(1, &record)
}

#[test]
fn a_store_beside_the_transcript_names_each_answers_model() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir
        .path()
        .join(format!("brain/{ID}/.system_generated/logs"));
    std::fs::create_dir_all(&logs).unwrap();
    let transcript = logs.join("transcript.jsonl");
    std::fs::copy(fixture(), &transcript).unwrap();
    std::fs::create_dir_all(dir.path().join("conversations")).unwrap();
    let conn =
        rusqlite::Connection::open(dir.path().join(format!("conversations/{ID}.db"))).unwrap();
    conn.execute_batch("CREATE TABLE gen_metadata (idx integer, data blob, size integer NOT NULL DEFAULT 0, PRIMARY KEY (idx));")
        .unwrap();
    for (i, (model, last)) in [
        ("gemini-3.1-pro-high", 2),
        ("gemini-3.1-flash", 4),
        ("gemini-3.1-pro-high", 8),
    ]
    .iter()
    .enumerate()
    {
        conn.execute(
            "INSERT INTO gen_metadata (idx, data) VALUES (?1, ?2)",
            rusqlite::params![i as i64, request_blob(model, *last)],
        )
        .unwrap();
    }
    drop(conn);
    let fp = parse_whole(&Antigravity, &transcript).unwrap();
    let s = only(&fp);
    let by_step: Vec<(&str, &str)> = s
        .messages
        .iter()
        .filter(|m| m.role() == trail_model::Role::Assistant)
        .map(|m| (m.native_id.as_deref().unwrap(), m.model.as_deref().unwrap()))
        .collect();
    assert_eq!(
        by_step,
        [
            ("3", "gemini-3.1-pro-high"),
            ("3", "gemini-3.1-pro-high"),
            ("3", "gemini-3.1-pro-high"),
            ("5", "gemini-3.1-flash"),
            ("5", "gemini-3.1-flash"),
            ("9", "gemini-3.1-pro-high")
        ]
    );
    assert_eq!(s.models, ["gemini-3.1-pro-high", "gemini-3.1-flash"]);
    assert_eq!(fp.notes.len(), 1);
}

#[test]
fn append_resume_equals_full_parse() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir
        .path()
        .join(format!("brain/{ID}/.system_generated/logs"));
    std::fs::create_dir_all(&logs).unwrap();
    let path = logs.join("transcript.jsonl");
    let bytes = std::fs::read(fixture()).unwrap();
    // Split after step 5 (line 6): two calls are open across the boundary.
    let at = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(5)
        .map(|(i, _)| i + 1)
        .unwrap();
    std::fs::write(&path, &bytes[..at]).unwrap();
    assert!(Antigravity.appendable(&path));
    let first = parse_whole(&Antigravity, &path).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(&bytes[at..]).unwrap();
    drop(f);
    let state = first.state.clone().unwrap();
    let delta = Antigravity
        .parse(ParseRequest {
            max_bytes: None,
            path: &path,
            resume: Some(Resume {
                offset: first.bytes_parsed,
                line: first.lines,
                state: &state,
            }),
        })
        .unwrap();
    let d = only(&delta);
    assert_eq!(d.mode, UpdateMode::Append);
    let full = parse_whole(&Antigravity, &path).unwrap();
    let mut joined = only(&first).messages.clone();
    joined.extend(d.messages.iter().cloned());
    assert_eq!(joined, only(&full).messages);
    assert_eq!(d.meta.cwd.as_deref(), Some("/home/dev/app"));
}
