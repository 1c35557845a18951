//! Gemini CLI chat parsing: corpus files, hand-written fixtures, project mapping, fuzzing.

mod common;

use common::{count_kind, only};

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use trail_model::{MessageKind, RefType, Role, Session, UpdateMode};
use trail_sources::gemini::Gemini;
use trail_sources::{FileParse, ParseRequest, Source};

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&Gemini, path).unwrap()
}

/// (input, output, cache_read, reasoning) summed over usage rows.
fn usage_sums(s: &Session) -> (u64, u64, u64, u64) {
    s.usage.iter().fold((0, 0, 0, 0), |a, u| {
        (
            a.0 + u.input_tokens,
            a.1 + u.output_tokens,
            a.2 + u.cache_read_tokens,
            a.3 + u.reasoning_tokens,
        )
    })
}

fn fixture(name: &str) -> PathBuf {
    common::fixtures("gemini").join(name)
}

const JSON: &str = "session-2026-02-01T10-00-5f0c1a2b.json";
const REWIND: &str = "session-2026-02-02T09-00-6a1b2c3d.jsonl";
const CHECKPOINT: &str = "session-2026-02-03T12-00-chkchk00.jsonl";

// Expected corpus numbers, counted with python over each file's `messages` (not the parser):
//   users = type "user"; calls = sum of len(toolCalls); thoughts = sum of len(thoughts);
//   texts = gemini/model messages with non-empty content or parts; tokens = `tokens` objects.
// chat.json: 7 records, users 2, calls 2, thoughts 1, texts 2, one tokens {100 in, 10 out};
// small.json: users 1, thoughts 1, texts 1, tokens {10 in, 5 out};
// cass test: users 1, texts 1, no tokens.
#[test]
fn corpus_files_parse_with_expected_counts() {
    let Some(dir) = common::shared_corpus("gemini") else {
        return;
    };
    let files = common::files_in(&dir);
    assert_eq!(files.len(), 3, "corpus changed: update the expectations");
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let fp = parse(path);
        assert!(fp.issues.is_empty(), "{name}: {:?}", fp.issues);
        let s = only(&fp);
        let got = (
            count_kind(s, MessageKind::Prompt),
            count_kind(s, MessageKind::ToolCall),
            count_kind(s, MessageKind::ToolResult),
            count_kind(s, MessageKind::Thinking),
            count_kind(s, MessageKind::Text),
        );
        match name.as_str() {
            "agentsessions-fixture-gemini-chat.json" => {
                assert_eq!(
                    s.meta.id.as_str(),
                    "gemini-cli:session-2025-12-16T23-47-b4f17607"
                );
                assert_eq!(got, (2, 2, 2, 1, 2));
                assert_eq!(count_kind(s, MessageKind::Meta), 1); // "Request cancelled."
                assert_eq!(s.messages.len(), 10);
                assert_eq!(s.turn_count, 2);
                assert_eq!(usage_sums(s), (100, 10, 0, 0));
                assert_eq!(s.models, vec!["gemini-3-flash-preview"]);
                // The second shell call reports exit code 1 with status "success".
                let errs: Vec<bool> = s
                    .messages
                    .iter()
                    .filter(|m| m.kind() == MessageKind::ToolResult)
                    .map(|m| m.is_error)
                    .collect();
                assert_eq!(errs, vec![false, true]);
                assert_eq!(
                    s.turns[0].assistant_response.as_deref(),
                    Some("Captured multiline output.")
                );
            }
            "agentsessions-fixture-gemini-small.json" => {
                assert_eq!(got, (1, 0, 0, 1, 1));
                assert_eq!(s.turns[0].assistant_response.as_deref(), Some("Hi!"));
                assert_eq!(usage_sums(s), (10, 5, 0, 0));
                assert_eq!(s.meta.title.as_deref(), Some("Hello"));
            }
            "cass-fixture-gemini-chats-session-test.json" => {
                assert_eq!(s.meta.id.as_str(), "gemini-cli:test-session-1");
                assert_eq!(got, (1, 0, 0, 0, 1));
                assert!(s.usage.is_empty());
                assert_eq!(
                    s.meta.created_at.as_deref(),
                    Some("2024-01-01T12:00:00.000Z")
                );
                assert_eq!(
                    s.meta.updated_at.as_deref(),
                    Some("2024-01-01T12:05:00.000Z")
                );
            }
            other => panic!("unexpected corpus file {other}"),
        }
    }
}

#[test]
fn json_fixture_covers_every_message_type() {
    let fp = parse(&fixture(JSON));
    assert!(fp.issues.is_empty());
    let s = only(&fp);
    assert_eq!(s.mode, UpdateMode::Replace);
    assert_eq!(s.meta.id.as_str(), "5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b");
    use MessageKind::*;
    let kinds: Vec<(Role, MessageKind)> = s.messages.iter().map(|m| (m.role(), m.kind())).collect();
    assert_eq!(
        kinds,
        vec![
            (Role::User, Prompt),
            (Role::Assistant, Thinking),
            (Role::Assistant, Thinking),
            (Role::Assistant, Text),
            (Role::Assistant, ToolCall), // read_file
            (Role::Tool, ToolResult),
            (Role::Assistant, ToolCall), // run_shell_command, exit 2
            (Role::Tool, ToolResult),
            (Role::Assistant, ToolCall), // write_file, status error
            (Role::Tool, ToolResult),
            (Role::System, Meta),  // info
            (Role::System, Error), // error
            (Role::User, Prompt),
            (Role::Assistant, Text),
            (Role::System, Unknown), // unknown type
        ]
    );
    let m = &s.messages;
    assert_eq!(m[1].text, "Plan: Read config first");
    assert_eq!(m[5].tool_output.as_deref(), Some("[brew]\ntemp = 92\n"));
    assert_eq!(m[5].tool_call_id.as_deref(), Some("read_file-1"));
    assert!(!m[5].is_error);
    assert!(m[7].is_error);
    assert!(m[9].is_error);
    assert_eq!(m[9].tool_output.as_deref(), Some("Permission denied"));
    assert_eq!(m[3].model.as_deref(), Some("gemini-2.5-pro"));
    assert_eq!(m[13].model.as_deref(), Some("gemini-2.5-flash"));
    assert!(m[14].extra.as_deref().unwrap().contains("compression"));
    assert_eq!(s.turn_count, 2);
    assert_eq!(m[11].turn_index, Some(0));
    // Usage: (1200 - 400 cached + 10 tool, 80 + 30 thoughts) and (1500 - 1200, 5).
    let rows: Vec<(u64, u64, u64, u64)> = s
        .usage
        .iter()
        .map(|u| {
            (
                u.input_tokens,
                u.cache_read_tokens,
                u.output_tokens,
                u.reasoning_tokens,
            )
        })
        .collect();
    assert_eq!(rows, vec![(810, 400, 110, 30), (300, 1200, 5, 0)]);
    assert_eq!(s.usage[0].total(), 1320);
    assert_eq!(s.usage[1].total(), 1505);
    assert_eq!(s.usage[0].request_key, "m2");
    assert_eq!(s.models, vec!["gemini-2.5-pro", "gemini-2.5-flash"]);
    let files: Vec<&str> = s.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        files,
        vec!["/home/dev/brewer/config.toml", "/home/dev/brewer/out.txt"]
    );
    assert_eq!(s.refs.len(), 1);
    assert_eq!(
        (s.refs[0].ref_type, s.refs[0].value.as_str()),
        (RefType::Issue, "acme/brewer#4")
    );
    assert_eq!(
        s.meta.title.as_deref(),
        Some("Read the config and run the tests for acme/brewer#4")
    );
}

#[test]
fn jsonl_replacements_rewinds_and_bad_lines() {
    let path = fixture(REWIND);
    assert!(!Gemini.appendable(&path));
    let fp = parse(&path);
    // Line 13 is malformed; the torn line 14 is left.
    assert_eq!(fp.issues.len(), 1);
    assert_eq!(fp.issues[0].line, Some(13));
    assert_eq!(fp.lines, 13);
    let bytes = std::fs::read(&path).unwrap();
    let complete = bytes.iter().rposition(|b| *b == b'\n').unwrap() as u64 + 1;
    assert_eq!(fp.bytes_parsed, complete);
    let s = only(&fp);
    let got: Vec<(MessageKind, &str)> = s
        .messages
        .iter()
        .map(|m| (m.kind(), m.text.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (MessageKind::Prompt, "Write a haiku"),
            (MessageKind::Text, "Autumn moon rises"), // g1's second version replaced the first
            (MessageKind::Prompt, "Make it funnier"), // u2/g2 were rewound
            (MessageKind::Text, "A cat in a hat"),
            (MessageKind::Meta, "Loop detected"),
            (MessageKind::Unknown, ""),
        ]
    );
    assert_eq!(s.turn_count, 2);
    // Only the final g1 and g3 count: (100, 20+5) and (220-120, 30+10).
    let rows: Vec<(u64, u64, u64, u64)> = s
        .usage
        .iter()
        .map(|u| {
            (
                u.input_tokens,
                u.cache_read_tokens,
                u.output_tokens,
                u.reasoning_tokens,
            )
        })
        .collect();
    assert_eq!(rows, vec![(100, 0, 25, 5), (100, 120, 40, 10)]);
    assert_eq!(usage_sums(s), (200, 65, 120, 15));
    assert_eq!(s.meta.title.as_deref(), Some("Haiku writing"));
    assert_eq!(
        s.meta.updated_at.as_deref(),
        Some("2026-02-02T09:05:00.000Z")
    );
}

#[test]
fn jsonl_set_messages_rebuilds_the_list() {
    let fp = parse(&fixture(CHECKPOINT));
    let s = only(&fp);
    assert_eq!(s.meta.id.as_str(), "gemini-cli:chk-session");
    let texts: Vec<&str> = s.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, vec!["first (restored)", "again", "seven"]);
    assert_eq!(s.usage.len(), 1);
    assert_eq!(usage_sums(s), (20, 3, 10, 0));
}

#[test]
fn rewind_to_unknown_id_clears_everything() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session-x.jsonl");
    std::fs::write(
        &path,
        "{\"sessionId\":\"s1\",\"projectHash\":\"h\"}\n\
         {\"id\":\"a\",\"type\":\"user\",\"content\":\"hi\"}\n\
         {\"$rewindTo\":\"zzz\"}\n\
         {\"id\":\"b\",\"type\":\"user\",\"content\":\"again\"}\n",
    )
    .unwrap();
    let fp = parse(&path);
    let texts: Vec<&str> = only(&fp).messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, vec!["again"]);
}

#[test]
fn broken_json_document_is_a_format_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session-x.json");
    std::fs::write(&path, "{\"sessionId\":\"s1\",\"messages\":[").unwrap();
    assert!(Gemini
        .parse(ParseRequest {
            max_bytes: None,
            path: &path,
            resume: None
        })
        .is_err());
}

#[test]
fn discovery_and_project_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join(".gemini");
    // Slug folder with a `.project_root` marker.
    let slug = home.join("tmp/brewer");
    std::fs::create_dir_all(slug.join("chats")).unwrap();
    std::fs::write(slug.join(".project_root"), "/home/dev/brewer\n").unwrap();
    std::fs::copy(fixture(JSON), slug.join("chats").join(JSON)).unwrap();
    // Legacy hash folder, mapped through projects.json: `printf %s /home/dev/kiln | sha256sum`.
    let hash = "6a3044edb99cd15d6c7ba31881e30d5fcee2a1072bf68202cfc22e3fa99f13e4";
    let hashed = home.join("tmp").join(hash).join("chats");
    std::fs::create_dir_all(&hashed).unwrap();
    std::fs::copy(fixture(REWIND), hashed.join(REWIND)).unwrap();
    // A sub-agent chat nested under its parent's id.
    let nested = slug.join("chats/5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(
        nested.join("7b7b7b7b-0000-4000-8000-000000000001.jsonl"),
        "{\"sessionId\":\"7b7b7b7b-0000-4000-8000-000000000001\",\"projectHash\":\"h\",\"kind\":\"subagent\"}\n\
         {\"id\":\"a\",\"type\":\"user\",\"content\":\"scan\"}\n",
    )
    .unwrap();
    std::fs::write(home.join("tmp/brewer/logs.json"), "[]").unwrap();
    let found = Gemini.discover(&[home.clone(), dir.path().join("missing")]);
    assert_eq!(found.len(), 3, "{found:?}");
    let s = parse(&slug.join("chats").join(JSON));
    assert_eq!(only(&s).meta.cwd.as_deref(), Some("/home/dev/brewer"));
    let sub = parse(&nested.join("7b7b7b7b-0000-4000-8000-000000000001.jsonl"));
    let parent = only(&sub).meta.parent.clone().unwrap();
    assert_eq!(
        parent.session_id.as_str(),
        "5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
    );
    // Without projects.json the hash folder has no cwd; with it, the hash resolves.
    assert_eq!(only(&parse(&hashed.join(REWIND))).meta.cwd, None);
    std::fs::write(
        home.join("projects.json"),
        "{\"projects\":{\"/home/dev/kiln\":\"kiln\"}}",
    )
    .unwrap();
    let cwd = only(&parse(&hashed.join(REWIND))).meta.cwd.clone();
    assert_eq!(cwd.as_deref(), Some("/home/dev/kiln"));
    assert!(Gemini.detect(
        Path::new("/x/y.json"),
        br#"{"sessionId":"a","projectHash":"b"}"#
    ));
    assert!(!Gemini.detect(Path::new("/x/y.json"), br#"{"type":"session_meta"}"#));
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let dir = tempfile::tempdir().unwrap();
        for name in ["session-a.json", "session-a.jsonl"] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            let _ = Gemini.parse(ParseRequest { max_bytes: None, path: &path, resume: None });
        }
    }

    #[test]
    fn arbitrary_line_sequences_never_panic(picks in proptest::collection::vec((0usize..40, 0usize..5), 0..40)) {
        let a = std::fs::read_to_string(fixture(REWIND)).unwrap();
        let b = std::fs::read_to_string(fixture(CHECKPOINT)).unwrap();
        let lines: Vec<&str> = a.lines().chain(b.lines()).collect();
        let mut text = String::new();
        for (i, mangle) in picks {
            let line = lines[i % lines.len()];
            match mangle {
                0 => text.push_str(&line[..line.len() / 2]),
                1 => text.push_str(&line.replace("\"content\"", "\"c\"")),
                2 => text.push_str(&line.replace(":{", ":[").replace('}', "]")),
                _ => text.push_str(line),
            }
            text.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-b.jsonl");
        std::fs::write(&path, &text).unwrap();
        let fp = Gemini.parse(ParseRequest { max_bytes: None, path: &path, resume: None }).unwrap();
        for s in &fp.sessions {
            for (i, m) in s.messages.iter().enumerate() {
                prop_assert_eq!(m.seq as usize, i);
            }
        }
    }
}

#[test]
fn bundled_demo_chat_parses() {
    let home = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home/.gemini");
    let found = Gemini.discover(&[home]);
    assert_eq!(found.len(), 1);
    let fp = parse(&found[0]);
    let s = only(&fp);
    assert_eq!(
        s.meta.cwd.as_deref(),
        Some("/home/demo/projects/garden-planner")
    );
    assert_eq!(s.turn_count, 2);
    assert_eq!(count_kind(s, MessageKind::ToolCall), 2);
    assert_eq!(s.usage.len(), 4);
    // Sum of `total` over the four gemini messages: 7571 + 7719 + 7873 + 8009.
    assert_eq!(s.usage.iter().map(|u| u.total()).sum::<u64>(), 31172);
    assert_eq!(s.models, vec!["gemini-2.5-pro", "gemini-2.5-flash"]);
}
