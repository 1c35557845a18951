//! Factory Droid parser: every Droid file of the shared corpus against counts made without the
//! parser, and the repo's own fixture for branches, the settings file and reminders.

mod common;

use common::{count_kind, files_in, fixtures, only, parse_whole, shared_corpus};
use serde_json::Value;
use trail_model::{MessageKind, TitleRank};
use trail_sources::droid::Droid;
use trail_sources::Source;

/// Counts made with plain `serde_json` reads, not the parser: user messages holding a text
/// block (or string content), and `tool_use` blocks.
fn independent(path: &std::path::Path) -> (usize, usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let (mut prompts, mut calls) = (0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        let m = &v["message"];
        let blocks: Vec<Value> = match &m["content"] {
            Value::String(s) => vec![serde_json::json!({"type": "text", "text": s})],
            Value::Array(a) => a.clone(),
            _ => Vec::new(),
        };
        if m["role"] == "user" && blocks.iter().any(|b| b["type"] == "text") {
            prompts += 1;
        }
        calls += blocks.iter().filter(|b| b["type"] == "tool_use").count();
    }
    (prompts, calls)
}

#[test]
fn every_corpus_file_matches_independent_counts() {
    let Some(dir) = shared_corpus("droid") else {
        return;
    };
    let files = files_in(&dir);
    assert_eq!(files.len(), 3, "the corpus has three Droid files");
    for path in files {
        let name = path.display();
        let head = std::fs::read(&path).unwrap();
        assert!(Droid.detect(&path, &head), "{name}");
        let fp = parse_whole(&Droid, &path).unwrap();
        assert!(fp.issues.is_empty(), "{name}: {:?}", fp.issues);
        let s = only(&fp);
        let (prompts, calls) = independent(&path);
        assert_eq!(count_kind(s, MessageKind::Prompt), prompts, "{name}");
        assert_eq!(s.turn_count as usize, prompts, "{name}");
        assert_eq!(count_kind(s, MessageKind::ToolCall), calls, "{name}");
        // No settings file beside the corpus files: no usage.
        assert!(s.usage.is_empty(), "{name}");
        assert!(s.messages.iter().all(|m| m.on_main_chain), "{name}");
        assert!(s.meta.title.is_some(), "{name}");
    }
}

#[test]
fn corpus_reminders_are_not_the_prompt_and_errors_are_kept() {
    let Some(dir) = shared_corpus("droid") else {
        return;
    };
    let fp = parse_whole(&Droid, &dir.join("session_store_schema_drift.jsonl")).unwrap();
    let s = only(&fp);
    assert_eq!(s.turns[0].user_message.as_deref(), Some("Do the thing"));
    assert_eq!(s.meta.id.as_str(), "droid:droid_drift");
    let fp = parse_whole(&Droid, &dir.join("session_store_small.jsonl")).unwrap();
    let s = only(&fp);
    let result = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert!(result.is_error);
    assert_eq!(result.tool_name.as_deref(), Some("Execute"));
}

#[test]
fn fixture_branch_settings_and_title() {
    let path =
        fixtures("droid").join("sessions/-home-u-app/3c3c3c3c-0000-4000-8000-000000000003.jsonl");
    let fp = parse_whole(&Droid, &path).unwrap();
    assert_eq!(fp.issues.len(), 1);
    assert_eq!(fp.issues[0].line, Some(9));
    let s = only(&fp);
    assert_eq!(s.meta.id.as_str(), "3c3c3c3c-0000-4000-8000-000000000003");
    assert_eq!(s.meta.title.as_deref(), Some("Fix login"));
    assert_eq!(s.meta.title_rank, TitleRank::USER);
    assert_eq!(s.turn_count, 2);
    assert_eq!(
        s.turns[0].user_message.as_deref(),
        Some("Fix the login bug")
    );
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some("Tests fail; see above.")
    );
    let off: Vec<_> = s
        .messages
        .iter()
        .filter(|m| !m.on_main_chain)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(off, ["First attempt."]);
    assert_eq!(s.usage.len(), 1);
    let u = &s.usage[0];
    assert_eq!(
        (
            u.input_tokens,
            u.output_tokens,
            u.cache_creation_tokens,
            u.cache_read_tokens
        ),
        (1200, 300, 400, 5000)
    );
    assert_eq!(u.reasoning_tokens, 80);
    assert_eq!(s.models, ["claude-sonnet-4-5-20250929"]);
    assert_eq!(s.files[0].path, "/home/u/app/login.rs");
    assert_eq!(count_kind(s, MessageKind::Thinking), 1);
    assert!(s
        .messages
        .iter()
        .any(|m| m.is_error && m.tool_call_id.as_deref() == Some("t2")));
}

#[test]
fn discovery_finds_sessions_but_not_settings() {
    let found = Droid.discover(&[fixtures("droid")]);
    assert_eq!(found.len(), 1);
    assert!(!Droid.detect(std::path::Path::new("x.jsonl"), b"{\"type\":\"session\"}\n"));
}

/// A grown file is read from where the last parse stopped: cut after every line of the fixture
/// (a branch, tool results named from their calls, the settings file's usage row), the first
/// parse plus the resumed one equal a whole parse.
#[test]
fn resuming_at_every_line_equals_a_whole_parse() {
    common::assert_resume_at_every_line(
        &Droid,
        &fixtures("droid"),
        "sessions/-home-u-app/3c3c3c3c-0000-4000-8000-000000000003.jsonl",
        0,
    );
}
