//! VS Code "Export Chat" files: the shared corpus, content-derived ids, detection, and a
//! never-panic property test.

mod common;

use std::path::Path;

use proptest::prelude::*;
use trail_model::{MessageKind, Role, Session};
use trail_sources::vscode_export::{session_id_for, VscodeExport, ID_PREFIX};
use trail_sources::{FileParse, Source, SourceError};

fn parse(path: &Path) -> Result<FileParse, SourceError> {
    common::parse_whole(&VscodeExport, path)
}

fn only_session(path: &Path) -> Session {
    let mut fp = parse(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(fp.sessions.len(), 1, "{}", path.display());
    fp.sessions.remove(0)
}

fn requests_in(path: &Path) -> usize {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["requests"].as_array().unwrap().len()
}

fn tool_calls(s: &Session) -> usize {
    s.messages
        .iter()
        .filter(|m| m.kind == Some(MessageKind::ToolCall))
        .count()
}

#[test]
fn every_corpus_export_parses_with_one_turn_per_request() {
    let Some(dir) = common::shared_corpus("vscode-export") else {
        return;
    };
    let files = common::files_in(&dir);
    assert!(files.len() >= 10);
    for path in files {
        let head = std::fs::read(&path).unwrap();
        assert!(
            VscodeExport.detect(&path, &head[..head.len().min(64 << 10)]),
            "{} not detected",
            path.display()
        );
        let s = only_session(&path);
        assert_eq!(
            s.turn_count as usize,
            requests_in(&path),
            "{}",
            path.display()
        );
        assert_eq!(s.turns.len(), s.turn_count as usize);
        assert!(s.meta.id.as_str().starts_with(ID_PREFIX));
        // Every tool result joins a tool call of the same session.
        for r in s
            .messages
            .iter()
            .filter(|m| m.kind == Some(MessageKind::ToolResult))
        {
            assert!(
                s.messages
                    .iter()
                    .any(|c| c.kind == Some(MessageKind::ToolCall)
                        && c.tool_call_id == r.tool_call_id)
            );
        }
        // seq runs from 0 without gaps.
        for (i, m) in s.messages.iter().enumerate() {
            assert_eq!(m.seq as usize, i);
        }
    }
}

/// Counts written here were computed independently of the parser with a Python script over the
/// raw JSON (kept outside the repo), applying the documented rules:
/// - tool calls: per request, the number of `result.metadata.toolCallRounds[].toolCalls[]` when
///   there are any, else the number of `toolInvocationSerialized` response parts;
/// - models: distinct `modelId` in order of first use;
/// - files: `textEditGroup`/`notebookEditGroup` uris, `codeblockUri` with `isEdit: true`,
///   `editedFileEvents[].uri`, `filePath`/`filePaths`/apply-patch headers in tool-call
///   arguments, and (without tool-call rounds) the file uris of file tools' invocation messages;
///   `file` uris as `fsPath`, `vscode-remote` uris as their `path`.
///
/// Cross-checked with e.g.
/// `jq '[.requests[] | ([.result.metadata.toolCallRounds[]?.toolCalls[]?] | length) as $r |
///   if $r > 0 then $r else ([.response[] | select(.kind=="toolInvocationSerialized")] | length)
///   end] | add' FILE`.
#[test]
fn corpus_counts_match_independent_counts() {
    let Some(dir) = common::shared_corpus("vscode-export") else {
        return;
    };
    // (file, requests, tool calls, models, number of files)
    let expected: [(&str, usize, usize, &[&str], usize); 5] = [
        (
            "krminfinity-ojisan-docs-chat-agent-edits.json",
            8,
            41,
            &["copilot/claude-sonnet-4"],
            11,
        ),
        (
            "martha-automation-auditor-docs-chat-thinking.json",
            4,
            46,
            &["copilot/gpt-5-mini"],
            13,
        ),
        (
            "11rachelh-etl-homework-chat.json",
            37,
            21,
            &["copilot/gpt-4.1"],
            5,
        ),
        (
            "tashcraft-connect-four-chat1-codex.json",
            2,
            12,
            &["copilot/gpt-5.3-codex"],
            3,
        ),
        ("merlins550-devrim-chat-mixed-agents.json", 11, 15, &[], 1),
    ];
    for (name, requests, tools, models, files) in expected {
        let s = only_session(&dir.join(name));
        assert_eq!(s.turn_count as usize, requests, "{name} turns");
        assert_eq!(tool_calls(&s), tools, "{name} tool calls");
        assert_eq!(s.models, models, "{name} models");
        assert_eq!(s.files.len(), files, "{name} files: {:?}", s.files);
    }
    // A few named files.
    let s = only_session(&dir.join("krminfinity-ojisan-docs-chat-agent-edits.json"));
    assert!(s
        .files
        .iter()
        .any(|f| f.path
            == "/Users/makotokuramochi/ojisan-hair-pluck-collection/docs/requirements.md"));
    let s = only_session(&dir.join("11rachelh-etl-homework-chat.json"));
    assert!(s.files.iter().any(|f| f.path
        == "c:\\Users\\USER\\github-classroom\\ntu-info\\neurosynth-etl-11rachelh\\extract_pdf_coordinates.py"));
    let s = only_session(&dir.join("tashcraft-connect-four-chat1-codex.json"));
    assert!(s
        .files
        .iter()
        .any(|f| f.path == "/home/termisdash/cs290/cs290-connect-four/index.html"));
}

#[test]
fn corpus_tool_outputs_thinking_and_errors_are_kept() {
    let Some(dir) = common::shared_corpus("vscode-export") else {
        return;
    };
    // Tool outputs come from result.metadata.toolCallResults.
    let s = only_session(&dir.join("konashevich-joplin-plugin-docs-chat.json"));
    let results: Vec<_> = s
        .messages
        .iter()
        .filter(|m| m.kind == Some(MessageKind::ToolResult))
        .collect();
    assert_eq!(results.len(), 3);
    assert!(results.iter().any(|m| m
        .tool_output
        .as_deref()
        .is_some_and(|o| o.contains("joplin: command not found"))));
    let call = s
        .messages
        .iter()
        .find(|m| m.kind == Some(MessageKind::ToolCall))
        .unwrap();
    assert!(call.tool_input.as_deref().unwrap_or("").starts_with('{'));
    // That request was cancelled (isCanceled: true).
    assert!(s
        .messages
        .iter()
        .any(|m| m.kind == Some(MessageKind::Error) && m.is_error));

    // Thinking parts.
    let s = only_session(&dir.join("martha-automation-auditor-docs-chat-thinking.json"));
    assert!(s
        .messages
        .iter()
        .any(|m| m.kind == Some(MessageKind::Thinking) && m.role == Some(Role::Assistant)));
    // Failed requests (modelState 3 with errorDetails).
    let s = only_session(&dir.join("tashcraft-connect-four-chat1-codex.json"));
    let errors: Vec<_> = s
        .messages
        .iter()
        .filter(|m| m.kind == Some(MessageKind::Error))
        .collect();
    assert_eq!(errors.len(), 2);
    assert!(errors[0].text.contains("clearMarks"));
    // A compaction summary in result.metadata.summary becomes a checkpoint.
    let s = only_session(&dir.join("11rachelh-etl-homework-chat.json"));
    assert_eq!(s.checkpoints.len(), 1);
    assert!(s
        .messages
        .iter()
        .any(|m| m.kind == Some(MessageKind::Summary)));
    assert!(s.meta.title.is_some());
    assert!(s.meta.created_at.is_some());
}

#[test]
fn same_bytes_same_id_and_discover_needs_explicit_roots() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("chat.json");
    let b = dir.path().join("copy-of-chat.json");
    let text =
        std::fs::read(common::fixtures("vscode-export").join("minimal-export.json")).unwrap();
    std::fs::write(&a, &text).unwrap();
    std::fs::write(&b, &text).unwrap();
    let sa = only_session(&a);
    let sb = only_session(&b);
    assert_eq!(sa.meta.id, sb.meta.id);
    assert_eq!(sa.meta.id.as_str(), session_id_for(&text));
    assert_eq!(sa, sb);
    assert!(VscodeExport.discover(&[]).is_empty());
    let found = VscodeExport.discover(&[dir.path().to_path_buf()]);
    assert_eq!(found, vec![a.clone(), b.clone()]);
}

#[test]
fn minimal_export_without_requester() {
    let path = common::fixtures("vscode-export").join("minimal-export.json");
    let s = only_session(&path);
    assert_eq!(s.turn_count, 2);
    assert_eq!(
        s.meta.title.as_deref(),
        Some("How do I parse a TOML file in Rust?")
    );
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some("Use the `toml` crate.")
    );
    assert_eq!(s.models, vec!["copilot/gpt-4.1".to_string()]);
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2025-03-01T10:00:00.000Z")
    );
    assert_eq!(
        s.meta.updated_at.as_deref(),
        Some("2025-03-01T10:05:00.000Z")
    );
}

#[test]
fn detect_rejects_stored_sessions_and_other_json() {
    let export = br#"{
  "responderUsername": "GitHub Copilot",
  "initialLocation": "panel",
  "requests": []
}"#;
    assert!(VscodeExport.detect(Path::new("/x/chat.json"), export));
    let stored = br#"{"version":3,"responderUsername":"GitHub Copilot","initialLocation":"panel","requests":[],"sessionId":"x"}"#;
    assert!(!VscodeExport.detect(Path::new("/x/s.json"), stored));
    assert!(!VscodeExport.detect(Path::new("/x/chatSessions/s.json"), export));
    assert!(!VscodeExport.detect(
        Path::new("/x/package.json"),
        br#"{"name":"x","version":"1"}"#
    ));
    assert!(!VscodeExport.detect(Path::new("/x/chat.jsonl"), export));
}

#[test]
fn not_an_export_is_a_format_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.json");
    std::fs::write(&p, b"[1,2,3]").unwrap();
    assert!(matches!(parse(&p), Err(SourceError::Format { .. })));
    std::fs::write(&p, b"{\"requests\": 5}").unwrap();
    assert!(matches!(parse(&p), Err(SourceError::Format { .. })));
}

#[test]
fn large_export_parses_fast() {
    let Some(dir) = common::shared_corpus("vscode-export") else {
        return;
    };
    let path = dir.join("11rachelh-etl-homework-chat.json");
    let start = std::time::Instant::now();
    only_session(&path);
    // ~2 MB; generous bound for unoptimized debug builds on a busy machine.
    assert!(start.elapsed() < std::time::Duration::from_secs(3));
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        "[a-zA-Z :/.\\[\\]]{0,12}".prop_map(serde_json::Value::from),
        prop_oneof![
            Just("thinking"),
            Just("toolInvocationSerialized"),
            Just("textEditGroup"),
            Just("codeblockUri"),
            Just("inlineReference"),
            Just("file"),
            Just("[JustRide: value truncated for persistence; original 9 chars]"),
        ]
        .prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("kind".to_string()),
                        Just("value".to_string()),
                        Just("uri".to_string()),
                        Just("scheme".to_string()),
                        Just("message".to_string()),
                        Just("response".to_string()),
                        Just("result".to_string()),
                        Just("metadata".to_string()),
                        Just("toolCallRounds".to_string()),
                        Just("toolCalls".to_string()),
                        Just("arguments".to_string()),
                        Just("timestamp".to_string()),
                        "[a-z]{1,6}".prop_map(|s| s),
                    ],
                    inner
                ),
                0..5
            )
            .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("chat.json");
        std::fs::write(&p, &bytes).unwrap();
        let _ = VscodeExport.detect(&p, &bytes);
        let _ = parse(&p);
    }

    #[test]
    fn arbitrary_requests_never_panic(reqs in prop::collection::vec(json_value(), 0..6)) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("chat.json");
        let doc = serde_json::json!({"responderUsername": "x", "initialLocation": "panel", "requests": reqs});
        std::fs::write(&p, doc.to_string()).unwrap();
        let fp = parse(&p).unwrap();
        prop_assert_eq!(fp.sessions.len(), 1);
        prop_assert_eq!(fp.sessions[0].turn_count as usize, reqs.len());
    }
}

#[test]
fn bundled_example_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/chat-export.json");
    let head = std::fs::read(&path).unwrap();
    assert!(VscodeExport.detect(&path, &head));
    let s = only_session(&path);
    assert_eq!(s.turn_count, 2);
    assert_eq!(s.models, vec!["copilot/claude-sonnet-4".to_string()]);
    assert!(s
        .messages
        .iter()
        .any(|m| m.kind == Some(MessageKind::Thinking)));
}
