//! What a session changed, as agents keep it (issue 16): VS Code's chat editing sessions read
//! with the chat file of the same id, and Claude Code's `file-history` backups read with the
//! transcript that names them. The diffs built from these are asserted in
//! `crates/trail-cli/tests/diff.rs`.

mod common;

use trail_model::FileSnapshot;
use trail_sources::claude_code::ClaudeCode;
use trail_sources::copilot_vscode::CopilotVscode;
use trail_sources::vscode_editing;
use trail_sources::Source;

const CHAT: &str = "5e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b";
const CLAUDE: &str = "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d";

fn versions(s: &[FileSnapshot]) -> Vec<(u32, Option<u32>, Option<&str>)> {
    s.iter()
        .map(|x| (x.version, x.turn_index, x.content.as_deref()))
        .collect()
}

#[test]
fn an_editing_session_gives_the_file_before_each_request_and_at_the_end() {
    let root = common::fixtures("copilot-vscode-editing");
    let files = CopilotVscode.discover(std::slice::from_ref(&root));
    assert_eq!(
        files.len(),
        1,
        "only the chat file is a session file: {files:?}"
    );
    let fp = common::parse_whole(&CopilotVscode, &files[0]).unwrap();
    let s = common::only(&fp);
    assert_eq!(s.meta.id.as_str(), CHAT);
    assert_eq!(s.turn_count, 2);
    let path = "/home/demo/app/greet.py";
    assert!(s
        .snapshots
        .iter()
        .all(|x| x.path == path && x.origin == vscode_editing::ORIGIN));
    assert_eq!(
        versions(&s.snapshots),
        vec![
            // Before the first request edited it (the entry's `original`).
            (0, Some(0), Some("def greet(name):\n    return 'hi ' + name\n\nprint(greet('you'))\n")),
            // When the second request started.
            (1, Some(1), Some("def greet(name):\n    return 'hello ' + name\n\nprint(greet('you'))\n")),
            // As the session left it.
            (2, None, Some("def greet(name):\n    return 'hello ' + name\n\ndef farewell(name):\n    return 'bye ' + name\n\nprint(greet('you'))\n")),
        ]
    );
    let touched = s.files.iter().find(|f| f.path == path).unwrap();
    assert_eq!(touched.tool_name.as_deref(), Some("chatEditingSession"));
    assert_eq!(touched.turn_index, Some(0));
}

#[test]
fn editing_state_without_contents_or_with_odd_hashes_gives_no_snapshot() {
    let state = serde_json::json!({
        "version": 2,
        "linearHistory": [{"requestId": "r1", "stops": [{"entries": [
            {"resource": "file:///a.txt", "originalHash": "../../etc/passwd", "currentHash": "h2",
             "telemetryInfo": {"requestId": "r1"}}]}]}],
        "recentSnapshot": {"entries": [{"resource": 5}]}
    });
    let read = |h: &str| (h == "h2").then(|| "x\n".to_string());
    let snaps = vscode_editing::snapshots_from_state(&state, &read, &|_| Some(0));
    // One readable content only: nothing to compare it with.
    assert!(snaps.is_empty(), "{snaps:?}");
}

#[test]
fn claude_file_history_backups_become_snapshots_at_their_prompts_turns() {
    let root = common::fixtures("claude-file-history");
    let files = ClaudeCode.discover(std::slice::from_ref(&root));
    assert_eq!(files.len(), 1, "{files:?}");
    let fp = common::parse_whole(&ClaudeCode, &files[0]).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    let s = fp
        .sessions
        .iter()
        .find(|s| s.meta.id.as_str() == CLAUDE)
        .unwrap();
    assert_eq!(s.turn_count, 2);
    assert!(s
        .snapshots
        .iter()
        .all(|x| x.path == "/home/demo/notes/todo.md" && x.origin == "claude-file-history"));
    assert_eq!(
        versions(&s.snapshots),
        vec![
            (1, Some(0), Some("# Todo\n- buy milk\n")),
            (2, Some(1), Some("# Todo\n- buy milk\n- call mom\n")),
        ]
    );
    assert_eq!(
        s.snapshots[0].taken_at.as_deref(),
        Some("2026-01-10T10:00:05.500Z")
    );
}

#[test]
fn without_a_file_history_folder_there_are_no_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let src = common::fixtures("claude-file-history").join("projects/-home-demo-notes");
    let dst = dir.path().join("projects/-home-demo-notes");
    std::fs::create_dir_all(&dst).unwrap();
    let name = format!("{CLAUDE}.jsonl");
    std::fs::copy(src.join(&name), dst.join(&name)).unwrap();
    let fp = common::parse_whole(&ClaudeCode, &dst.join(&name)).unwrap();
    assert!(fp.sessions.iter().all(|s| s.snapshots.is_empty()));
}
