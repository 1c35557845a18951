//! GitHub Copilot Chat in VS Code: snapshots, mutation-log replay, discovery rules, the shared
//! corpus and never-panic property tests.

mod common;

use common::count_kind;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use trail_model::{MessageKind, RefType, Role, Session, SourceKind};
use trail_sources::copilot_vscode::{default_roots, replay_log, CopilotVscode, Platform};
use trail_sources::{FileParse, Source, SourceError};

const SID: &str = "0f8f6b1e-3c1a-4c55-9d0e-5b7c2a9e1d01";

fn fx(name: &str) -> PathBuf {
    common::fixtures("copilot-vscode").join(name)
}

fn parse(path: &Path) -> Result<FileParse, SourceError> {
    common::parse_whole(&CopilotVscode, path)
}

fn only_session(path: &Path) -> Session {
    let mut fp = parse(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(fp.issues.is_empty(), "{}: {:?}", path.display(), fp.issues);
    assert_eq!(fp.sessions.len(), 1, "{}", path.display());
    fp.sessions.remove(0)
}

#[test]
fn snapshot_fixture_is_parsed_into_turns_tools_files_refs_usage() {
    let s = only_session(&fx("session.json"));
    assert_eq!(s.meta.id.as_str(), SID);
    assert_eq!(s.meta.source, SourceKind::CopilotVscode);
    assert_eq!(s.meta.title.as_deref(), Some("Flaky parser test"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2025-02-19T21:20:00.000Z")
    );
    assert_eq!(s.turn_count, 2);
    assert_eq!(s.turns[0].assistant_response.as_deref(), Some(
        "Let me look at the parser first.\n\nThe fix is to give each test its own temp dir, see https://github.com/acme/tidy/pull/7."
    ));
    assert_eq!(
        s.turns[1].assistant_response.as_deref(),
        Some("Running `Cargo.toml` tests")
    );
    assert_eq!(s.models, vec!["copilot/claude-sonnet-4", "copilot/gpt-4.1"]);
    // One thinking message, one tool call (from the model's rounds) joined to its result.
    assert_eq!(count_kind(&s, MessageKind::Thinking), 1);
    assert_eq!(count_kind(&s, MessageKind::ToolCall), 1);
    let call = s
        .messages
        .iter()
        .find(|m| m.kind == Some(MessageKind::ToolCall))
        .unwrap();
    let result = s
        .messages
        .iter()
        .find(|m| m.kind == Some(MessageKind::ToolResult))
        .unwrap();
    assert_eq!(call.tool_name.as_deref(), Some("read_file"));
    assert_eq!(call.tool_call_id, result.tool_call_id);
    assert!(call.tool_input.as_deref().unwrap().contains("parser.rs"));
    assert_eq!(result.role, Some(Role::Tool));
    assert!(result
        .tool_output
        .as_deref()
        .unwrap()
        .contains("pub fn parse"));
    // The unknown part kind is kept with its JSON.
    let unknown = s
        .messages
        .iter()
        .find(|m| m.kind == Some(MessageKind::Unknown))
        .unwrap();
    assert!(unknown.extra.as_deref().unwrap().contains("someFuturePart"));
    // The cancelled second request.
    let err = s
        .messages
        .iter()
        .find(|m| m.kind == Some(MessageKind::Error))
        .unwrap();
    assert!(err.is_error);
    assert_eq!(err.turn_index, Some(1));
    // Files: the read, the edit group; refs from the prompt and the answer.
    let files: Vec<&str> = s.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        files,
        vec![
            "/home/demo/projects/tidy/src/parser.rs",
            "/home/demo/projects/tidy/tests/parser_test.rs",
        ]
    );
    assert!(s
        .refs
        .iter()
        .any(|r| r.ref_type == RefType::Issue && r.value == "acme/tidy#12"));
    assert!(s
        .refs
        .iter()
        .any(|r| r.ref_type == RefType::Pr && r.value == "acme/tidy#7"));
    assert_eq!(s.usage.len(), 1);
    assert_eq!(
        (s.usage[0].input_tokens, s.usage[0].output_tokens),
        (1200, 300)
    );
    for (i, m) in s.messages.iter().enumerate() {
        assert_eq!(m.seq as usize, i);
        assert!(m.on_main_chain);
    }
}

#[test]
fn log_replay_equals_snapshot() {
    let snapshot: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fx("session.json")).unwrap()).unwrap();
    for log in ["session.jsonl", "compacted.jsonl", "torn-last-line.jsonl"] {
        let text = std::fs::read_to_string(fx(log)).unwrap();
        assert_eq!(replay_log(&text).unwrap(), snapshot, "{log}");
        // And the parsed sessions are identical.
        assert_eq!(
            only_session(&fx(log)),
            only_session(&fx("session.json")),
            "{log}"
        );
    }
}

#[test]
fn torn_last_line_is_not_an_issue() {
    let fp = parse(&fx("torn-last-line.jsonl")).unwrap();
    assert!(fp.issues.is_empty());
    let full = std::fs::metadata(fx("session.jsonl")).unwrap().len();
    assert_eq!(fp.bytes_parsed, full);
    assert_eq!(fp.lines, 9);
}

#[test]
fn log_without_initial_entry_is_an_issue_not_a_crash() {
    let fp = parse(&fx("missing-initial.jsonl")).unwrap();
    assert!(fp.sessions.is_empty());
    assert!(!fp.issues.is_empty());
    assert!(fp.issues.iter().any(|i| i.reason.contains("initial")));
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("e.jsonl");
    std::fs::write(&empty, b"").unwrap();
    let fp = parse(&empty).unwrap();
    assert!(fp.sessions.is_empty());
    assert_eq!(fp.issues.len(), 1);
}

#[test]
fn push_truncates_then_appends_and_delete_removes() {
    let log = r#"{"kind":0,"v":{"a":[1,2,3,4],"b":{"c":1,"d":2}}}
{"kind":2,"k":["a"],"v":[9],"i":1}
{"kind":2,"k":["a"],"i":3}
{"kind":3,"k":["b","c"]}
{"kind":1,"k":["b","e",0],"v":"missing parent: rejected"}
{"kind":1,"k":["b","e"],"v":{}}
{"kind":1,"k":["b","e",0],"v":"x"}
{"kind":2,"k":["n"],"v":[1]}
{"kind":1,"k":["a","1"],"v":8}
"#;
    let v = replay_log(log).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"a":[1,8,null],"b":{"d":2,"e":{"0":"x"}},"n":[1]})
    );
}

#[test]
fn old_versions_parse() {
    let s1 = only_session(&fx("v1.json"));
    assert_eq!(s1.turn_count, 1);
    assert_eq!(s1.turns[0].user_message.as_deref(), Some("what is a monad"));
    assert_eq!(s1.meta.title.as_deref(), Some("what is a monad"));
    assert_eq!(count_kind(&s1, MessageKind::Error), 0);
    let s2 = only_session(&fx("v2.json"));
    assert_eq!(s2.meta.title.as_deref(), Some("Monads explained"));
    assert_eq!(
        s2.meta.updated_at.as_deref(),
        Some("2023-11-14T22:13:29.000Z")
    );
}

#[test]
fn discovery_prefers_log_and_workspace_copy() {
    let root = fx("Code");
    let ws = root.join("User/workspaceStorage/5c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f/chatSessions");
    let expected = vec![
        ws.join(format!("{SID}.jsonl")),
        root.join(
            "User/workspaceStorage/no-workspace/chatSessions/7b3e9a40-5d21-4f6a-8c1b-2e4d6f8a0c12.json",
        ),
    ];
    let mut found = CopilotVscode.discover(std::slice::from_ref(&root));
    found.sort();
    let mut want = expected.clone();
    want.sort();
    assert_eq!(found, want);
    // The same with the User dir or workspaceStorage as root.
    let mut found = CopilotVscode.discover(&[root.join("User")]);
    found.sort();
    assert_eq!(found, want);
    let found = CopilotVscode.discover(&[root.join("User/workspaceStorage")]);
    assert_eq!(found.len(), 2);
    assert!(CopilotVscode.discover(&[root.join("missing")]).is_empty());

    // The workspace session has the decoded folder as cwd; one session per id overall.
    let mut ids = Vec::new();
    for f in CopilotVscode.discover(&[root]) {
        for s in parse(&f).unwrap().sessions {
            if s.meta.id.as_str() == SID {
                assert_eq!(s.meta.cwd.as_deref(), Some("/home/demo/projects/my tidy"));
                assert_eq!(s.meta.repository, None);
            } else {
                assert_eq!(s.meta.cwd, None);
            }
            ids.push(s.meta.id.0);
        }
    }
    ids.sort();
    assert_eq!(
        ids,
        vec![
            SID.to_string(),
            "7b3e9a40-5d21-4f6a-8c1b-2e4d6f8a0c12".to_string()
        ]
    );
}

#[test]
fn empty_window_session_alone_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let ew = dir
        .path()
        .join("User/globalStorage/emptyWindowChatSessions");
    std::fs::create_dir_all(&ew).unwrap();
    std::fs::copy(fx("session.json"), ew.join(format!("{SID}.json"))).unwrap();
    std::fs::copy(fx("session.jsonl"), ew.join(format!("{SID}.jsonl"))).unwrap();
    let found = CopilotVscode.discover(&[dir.path().to_path_buf()]);
    assert_eq!(found, vec![ew.join(format!("{SID}.jsonl"))]);
}

#[test]
fn workspace_uris() {
    let dir = tempfile::tempdir().unwrap();
    for (folder, want) in [
        (
            r#"{"folder":"file:///c%3A/Users/demo/My%20App"}"#,
            "c:\\Users\\demo\\My App",
        ),
        (
            r#"{"folder":"vscode-remote://ssh-remote%2Bbox/home/demo/app"}"#,
            "vscode-remote://ssh-remote%2Bbox/home/demo/app",
        ),
        (
            r#"{"workspace":"file:///home/demo/all.code-workspace"}"#,
            "/home/demo/all.code-workspace",
        ),
    ] {
        let ws = dir.path().join("h");
        std::fs::create_dir_all(ws.join("chatSessions")).unwrap();
        std::fs::write(ws.join("workspace.json"), folder).unwrap();
        let p = ws.join("chatSessions").join(format!("{SID}.json"));
        std::fs::copy(fx("session.json"), &p).unwrap();
        assert_eq!(only_session(&p).meta.cwd.as_deref(), Some(want));
    }
}

#[test]
fn detection() {
    let log = std::fs::read(fx("session.jsonl")).unwrap();
    assert!(CopilotVscode.detect(Path::new("/x/a.jsonl"), &log));
    let snap = std::fs::read(fx("session.json")).unwrap();
    assert!(CopilotVscode.detect(Path::new("/x/a.json"), &snap));
    let export =
        br#"{"responderUsername":"GitHub Copilot","initialLocation":"panel","requests":[]}"#;
    assert!(!CopilotVscode.detect(Path::new("/x/chat.json"), export));
    assert!(!CopilotVscode.detect(Path::new("/x/a.jsonl"), br#"{"type":"session.start"}"#));
    assert!(!CopilotVscode.detect(
        Path::new("/x/package.json"),
        br#"{"name":"x","version":"1"}"#
    ));
}

#[test]
fn default_roots_per_platform() {
    let home = Path::new("/home/u");
    let linux = default_roots(home, Platform::Linux, None);
    assert!(linux.contains(&PathBuf::from("/home/u/.config/Code")));
    assert!(linux.contains(&PathBuf::from("/home/u/.config/VSCodium")));
    let mac = default_roots(Path::new("/Users/u"), Platform::MacOs, None);
    assert!(mac.contains(&PathBuf::from(
        "/Users/u/Library/Application Support/Code - Insiders"
    )));
    let win = default_roots(
        Path::new("C:/Users/u"),
        Platform::Windows,
        Some(Path::new("D:/AppData")),
    );
    assert!(win.contains(&PathBuf::from("D:/AppData/Code")));
}

#[test]
fn truncation_marker_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.json");
    std::fs::write(&p, r#"{"version":3,"sessionId":"s","requests":[{"message":{"text":"hi"},"response":[{"value":"[JustRide: value truncated for persistence; original 99999999 chars]"}]}],"x":"[JustRide: value truncated for persistence; entry exceeded size budget]"}"#).unwrap();
    let fp = parse(&p).unwrap();
    assert_eq!(fp.notes, vec!["truncated values: 2".to_string()]);
    assert!(fp.sessions[0].messages[1].text.starts_with("[JustRide"));
    assert_eq!(fp.sessions[0].meta.id.as_str(), "copilot-vscode:s");
}

/// The corpus file has `version: 3` but requests shaped `{timestamp, prompt, completion}`,
/// unlike VS Code's own request objects; they are still one turn each. 44 requests counted with
/// `jq '.requests | length'`; no tools, models or files (`jq '[.requests[] | keys[]] | unique'`
/// gives only completion, prompt, timestamp).
#[test]
fn corpus_files_parse() {
    let Some(dir) = common::shared_corpus("copilot-vscode") else {
        return;
    };
    let files = common::files_in(&dir);
    assert!(!files.is_empty());
    for path in &files {
        let fp = parse(path).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let n = v["requests"].as_array().map_or(0, Vec::len);
        assert_eq!(fp.sessions.len(), 1);
        assert_eq!(fp.sessions[0].turn_count as usize, n, "{}", path.display());
    }
    let s = only_session(&dir.join("abdxd9-orbital-clash-session-v3.json"));
    assert_eq!(s.meta.id.as_str(), "f62c7874-549c-4c07-9677-f413049d7799");
    assert_eq!(s.turn_count, 44);
    assert_eq!(count_kind(&s, MessageKind::ToolCall), 0);
    assert!(s.models.is_empty() && s.files.is_empty());
    assert!(s.turns.iter().all(|t| t.assistant_response.is_some()));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2025-08-23T08:43:26.136Z")
    );
}

fn entry() -> impl Strategy<Value = String> {
    let step = prop_oneof![
        Just(serde_json::json!("requests")),
        Just(serde_json::json!("response")),
        Just(serde_json::json!("message")),
        (0u64..4).prop_map(|i| serde_json::json!(i)),
        Just(serde_json::json!("0")),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(1e20)),
    ];
    let val = prop_oneof![
        Just(serde_json::json!(null)),
        Just(serde_json::json!("x")),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        Just(serde_json::json!([{"message": {"text": "p"}, "response": [{"value": "a"}]}])),
        Just(serde_json::json!([{"kind": "thinking", "value": ["a", 1]}])),
        Just(serde_json::json!({"kind": "toolInvocationSerialized"})),
    ];
    (
        0u64..5,
        prop::collection::vec(step, 0..5),
        val,
        prop::option::of(0u64..6000),
    )
        .prop_map(|(kind, k, v, i)| {
            let mut e = serde_json::json!({"kind": kind, "k": k, "v": v});
            if let Some(i) = i {
                e["i"] = serde_json::json!(i);
            }
            e.to_string()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let dir = tempfile::tempdir().unwrap();
        for name in ["s.json", "s.jsonl"] {
            let p = dir.path().join(name);
            std::fs::write(&p, &bytes).unwrap();
            let _ = CopilotVscode.detect(&p, &bytes);
            let _ = parse(&p);
        }
    }

    #[test]
    fn arbitrary_mutations_never_panic(entries in prop::collection::vec(entry(), 0..12)) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let mut text = String::from(r#"{"kind":0,"v":{"version":3,"sessionId":"s","requests":[]}}"#);
        text.push('\n');
        for e in &entries {
            text.push_str(e);
            text.push('\n');
        }
        std::fs::write(&p, &text).unwrap();
        let fp = parse(&p).unwrap();
        prop_assert!(fp.sessions.len() <= 1);
        let _ = replay_log(&text);
    }
}

#[test]
fn bundled_example_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/home/.config/Code");
    let roots = default_roots(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/home"),
        Platform::Linux,
        None,
    );
    assert!(roots.contains(&root));
    let files = CopilotVscode.discover(&roots);
    assert_eq!(files.len(), 1);
    let s = only_session(&files[0]);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/demo/projects/pantry"));
    assert_eq!(
        s.meta.title.as_deref(),
        Some("Duplicate rows in expiry report")
    );
    assert_eq!(s.turn_count, 2);
    assert_eq!(count_kind(&s, MessageKind::ToolCall), 1);
    assert_eq!(count_kind(&s, MessageKind::ToolResult), 1);
    assert_eq!(s.files.len(), 1);
    assert!(s.refs.iter().any(|r| r.value == "demo/pantry#14"));
}

/// A request that is not an object is reported with the line of the mutation log that wrote
/// it last: pushed, set alone, or set with the whole array (found by the fuzz harness).
#[test]
fn a_request_that_is_not_an_object_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{SID}.jsonl"));
    let log = [
        r#"{"kind":0,"v":{"version":3,"sessionId":"s","requests":[{"requestId":"r0","message":{"text":"hi"}}]}}"#,
        r#"{"kind":2,"k":["requests"],"v":[{"requestId":"r1","message":{"text":"two"}}, 7]}"#,
        r#"{"kind":1,"k":["requests",0],"v":"not a request"}"#,
        r#"{"kind":1,"k":["customTitle"],"v":"Lines"}"#,
    ];
    std::fs::write(&path, log.join("\n") + "\n").unwrap();
    let fp = parse(&path).unwrap();
    let mut lines: Vec<(Option<u64>, String)> = fp
        .issues
        .iter()
        .map(|i| (i.line, i.reason.clone()))
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            (
                Some(2),
                "request 2 is not an object; kept as an empty turn".to_string()
            ),
            (
                Some(3),
                "request 0 is not an object; kept as an empty turn".to_string()
            )
        ]
    );
}
