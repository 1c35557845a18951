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

const TIMELINE_CHAT: &str = "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d";

#[test]
fn a_timeline_editing_session_is_replayed_into_the_same_snapshots() {
    // Newer VS Code builds keep `timeline` (baselines and operations), not `linearHistory`.
    let root = common::fixtures("copilot-vscode-editing-timeline");
    let files = CopilotVscode.discover(std::slice::from_ref(&root));
    assert_eq!(files.len(), 1, "{files:?}");
    let fp = common::parse_whole(&CopilotVscode, &files[0]).unwrap();
    let s = common::only(&fp);
    assert_eq!(s.meta.id.as_str(), TIMELINE_CHAT);
    assert_eq!(s.turn_count, 3);
    let of = |path: &str| -> Vec<FileSnapshot> {
        s.snapshots
            .iter()
            .filter(|x| x.path == path)
            .cloned()
            .collect()
    };
    let greet = of("/home/demo/app/greet.py");
    assert_eq!(
        versions(&greet),
        vec![
            // Request 1's baseline.
            (0, Some(0), Some("def greet(name):\n    return 'hi ' + name\n\nprint(greet('you'))\n")),
            // Request 2's baseline (what request 1's text edit left).
            (1, Some(1), Some("def greet(name):\n    return 'hello ' + name\n\nprint(greet('you'))\n")),
            // After request 2's edit; request 3's edit was undone (epoch >= currentEpoch).
            (2, None, Some("def greet(name):\n    return 'hello ' + name\n\ndef farewell(name):\n    return 'bye ' + name\n\nprint(greet('you'))\n")),
        ]
    );
    // A file the session created: absent before request 2.
    let bye = of("/home/demo/app/bye.txt");
    assert_eq!(
        versions(&bye),
        vec![(0, Some(1), None), (1, None, Some("bye\n"))]
    );
    assert!(s
        .snapshots
        .iter()
        .all(|x| x.origin == vscode_editing::ORIGIN));
    let touched: Vec<(&str, Option<u32>)> = s
        .files
        .iter()
        .filter(|f| f.tool_name.as_deref() == Some("chatEditingSession"))
        .map(|f| (f.path.as_str(), f.turn_index))
        .collect();
    assert!(
        touched.contains(&("/home/demo/app/greet.py", Some(0))),
        "{touched:?}"
    );
    assert!(
        touched.contains(&("/home/demo/app/bye.txt", Some(1))),
        "{touched:?}"
    );
}

#[test]
fn timeline_operations_rename_delete_and_notebook_edits() {
    let uri = |p: &str| serde_json::json!({"$mid": 1, "scheme": "file", "path": p, "fsPath": p});
    let timeline = serde_json::json!({
        "fileBaselines": [["k", {"uri": uri("/w/a.txt"), "requestId": "r1", "content": "a\n", "epoch": 1}]],
        "operations": [
            {"type": "rename", "uri": uri("/w/a.txt"), "oldUri": uri("/w/a.txt"), "newUri": uri("/w/b.txt"), "requestId": "r1", "epoch": 2},
            {"type": "textEdit", "uri": uri("/w/b.txt"), "requestId": "r2", "epoch": 3,
             "edits": [{"range": {"startLineNumber": 1, "startColumn": 1, "endLineNumber": 1, "endColumn": 2}, "text": "b"}]},
            {"type": "delete", "uri": uri("/w/b.txt"), "requestId": "r3", "epoch": 4, "finalContent": "b\n"},
            {"type": "notebookEdit", "uri": uri("/w/n.ipynb"), "requestId": "r1", "epoch": 5, "cellEdits": []},
        ],
        "currentEpoch": 9,
    });
    let turn = |r: &str| {
        r.strip_prefix('r')
            .and_then(|n| n.parse::<u32>().ok())
            .map(|n| n - 1)
    };
    let snaps = vscode_editing::snapshots_from_timeline(&timeline, &turn);
    let of = |p: &str| {
        let v: Vec<(u32, Option<u32>, Option<String>)> = snaps
            .iter()
            .filter(|x| x.path == p)
            .map(|x| (x.version, x.turn_index, x.content.clone()))
            .collect();
        v
    };
    assert_eq!(
        of("/w/a.txt"),
        vec![(0, Some(0), Some("a\n".into())), (1, None, None)]
    );
    assert_eq!(
        of("/w/b.txt"),
        vec![
            (0, Some(0), None),
            (1, Some(1), Some("a\n".into())),
            (2, Some(2), Some("b\n".into())),
            (3, None, None),
        ]
    );
    // A notebook's cell edits are not replayed: nothing known, no snapshot.
    assert!(of("/w/n.ipynb").is_empty());
}

#[test]
fn text_edits_count_utf16_columns_and_keep_crlf() {
    let e = |l1: i64, c1: i64, l2: i64, c2: i64, t: &str| serde_json::json!({"range": {"startLineNumber": l1, "startColumn": c1, "endLineNumber": l2, "endColumn": c2}, "text": t});
    // "é" is one UTF-16 unit, "😀" two: column 4 is after "a😀".
    assert_eq!(
        vscode_editing::apply_text_edits("a😀b\n", &[e(1, 4, 1, 5, "B")]).as_deref(),
        Some("a😀B\n")
    );
    // Edits of one batch are relative to the text before the batch.
    assert_eq!(
        vscode_editing::apply_text_edits("x\ny\n", &[e(2, 1, 2, 2, "Y"), e(1, 1, 1, 2, "X")])
            .as_deref(),
        Some("X\nY\n")
    );
    // A CRLF file: inserted lines take CRLF.
    assert_eq!(
        vscode_editing::apply_text_edits("a\r\nb\r\n", &[e(2, 1, 2, 1, "new\n")]).as_deref(),
        Some("a\r\nnew\r\nb\r\n")
    );
    // Positions past the end are clamped, as VS Code validates them.
    assert_eq!(
        vscode_editing::apply_text_edits("a\n", &[e(9, 9, 9, 9, "z")]).as_deref(),
        Some("a\nz")
    );
    // Overlapping edits are refused, never guessed.
    assert_eq!(
        vscode_editing::apply_text_edits("abc", &[e(1, 1, 1, 3, "x"), e(1, 2, 1, 4, "y")]),
        None
    );
}

#[test]
fn text_edit_groups_extend_a_file_past_the_editing_sessions_last_point() {
    // The editing session knows the file when request r1 started, and nothing after it (no
    // `recentSnapshot` entry): r1's `textEditGroup` edits, applied to that text, give the end.
    let state = serde_json::json!({
        "version": 2,
        "linearHistory": [{"requestId": "r1", "stops": [{"entries": [
            {"resource": "file:///w/a.txt", "originalHash": "h0", "currentHash": "h1",
             "telemetryInfo": {"requestId": "r0"}}]}]}],
    });
    let read = |h: &str| match h {
        "h0" => Some("a\n".to_string()),
        "h1" => Some("a\nb\n".to_string()),
        _ => None,
    };
    let turn = |r: &str| r.strip_prefix('r').and_then(|n| n.parse::<u32>().ok());
    let chat = serde_json::json!({"requests": [
        {"requestId": "r0", "response": []},
        {"requestId": "r1", "response": [
            {"value": "Changing b."},
            {"kind": "textEditGroup", "uri": {"$mid": 1, "scheme": "file", "path": "/w/a.txt"},
             "edits": [[{"text": "B", "range": {"startLineNumber": 2, "startColumn": 1, "endLineNumber": 2, "endColumn": 2}}],
                       [{"text": "c\n", "range": {"startLineNumber": 3, "startColumn": 1, "endLineNumber": 3, "endColumn": 1}}]],
             "done": true}]},
    ]});
    let groups = vscode_editing::text_edit_groups(&chat, &turn);
    assert_eq!(groups.len(), 1);
    assert_eq!(
        (
            groups[0].path.as_str(),
            groups[0].turn,
            groups[0].batches.len()
        ),
        ("/w/a.txt", 1, 2)
    );
    let snaps = vscode_editing::snapshots_from_state_and_edits(&state, &read, &turn, &groups);
    assert_eq!(
        versions(&snaps),
        vec![
            (0, Some(0), Some("a\n")),
            (1, Some(1), Some("a\nb\n")),
            // The second batch's range refers to the text the first left.
            (2, None, Some("a\nB\nc\n")),
        ]
    );
    // Without the edits, the session stops at r1's start.
    assert_eq!(
        vscode_editing::snapshots_from_state(&state, &read, &turn).len(),
        2
    );
    // Edits of another turn, or that do not apply, add nothing: never a guess.
    let mut other = groups.clone();
    other[0].turn = 0;
    assert_eq!(
        vscode_editing::snapshots_from_state_and_edits(&state, &read, &turn, &other).len(),
        2
    );
    let overlap = vscode_editing::TextEditGroup {
        path: "/w/a.txt".into(),
        turn: 1,
        batches: vec![vec![
            serde_json::json!({"text": "x", "range": {"startLineNumber": 1, "startColumn": 1, "endLineNumber": 2, "endColumn": 2}}),
            serde_json::json!({"text": "y", "range": {"startLineNumber": 2, "startColumn": 1, "endLineNumber": 2, "endColumn": 2}}),
        ]],
    };
    assert_eq!(
        vscode_editing::snapshots_from_state_and_edits(&state, &read, &turn, &[overlap]).len(),
        2
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn pos() -> impl Strategy<Value = serde_json::Value> {
        (-1i64..6, -1i64..8, -1i64..6, -1i64..8, "[a-c\n]{0,4}").prop_map(|(a, b, c, d, t)| {
            serde_json::json!({"range": {"startLineNumber": a, "startColumn": b, "endLineNumber": c, "endColumn": d}, "text": t})
        })
    }

    fn op() -> impl Strategy<Value = serde_json::Value> {
        (
            prop_oneof![Just("textEdit"), Just("create"), Just("delete"), Just("rename"), Just("notebookEdit"), Just("x")],
            0usize..3,
            0usize..3,
            0i64..12,
            proptest::collection::vec(pos(), 0..3),
        )
            .prop_map(|(kind, f, g, epoch, edits)| {
                let uri = |i: usize| serde_json::json!({"scheme": "file", "path": format!("/w/{i}")});
                serde_json::json!({"type": kind, "uri": uri(f), "oldUri": uri(f), "newUri": uri(g),
                    "requestId": format!("r{}", epoch / 3), "epoch": epoch, "edits": edits, "initialContent": "é\n"})
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Any timeline (and any linear history) gives snapshots without panicking, each
        /// file's versions numbered from 0 with no two equal neighbours.
        #[test]
        fn arbitrary_timelines_never_panic(
            ops in proptest::collection::vec(op(), 0..12),
            baselines in proptest::collection::vec((0usize..3, 0usize..4, "[a-c\né😀\r]{0,12}"), 0..4),
            current in proptest::option::of(0i64..14),
        ) {
            let fb: Vec<serde_json::Value> = baselines.iter().map(|(f, r, c)| serde_json::json!(
                ["k", {"uri": {"scheme": "file", "path": format!("/w/{f}")}, "requestId": format!("r{r}"), "content": c}]
            )).collect();
            let state = serde_json::json!({"version": 2, "timeline": {"fileBaselines": fb, "operations": ops, "currentEpoch": current}});
            let turn = |r: &str| r.strip_prefix('r').and_then(|n| n.parse::<u32>().ok());
            let snaps = vscode_editing::snapshots_from_state(&state, &|_| None, &turn);
            for w in snaps.windows(2) {
                if w[0].path == w[1].path {
                    prop_assert_eq!(w[1].version, w[0].version + 1);
                    prop_assert_ne!(&w[0].content, &w[1].content);
                } else {
                    prop_assert_eq!(w[1].version, 0);
                }
            }
            let linear = serde_json::json!({"linearHistory": [{"requestId": "r0", "stops": [{"entries": ops}]}], "recentSnapshot": {"entries": ops}});
            let snaps = vscode_editing::snapshots_from_state(&linear, &|h| Some(h.to_string()), &turn);
            for w in snaps.windows(2) {
                if w[0].path == w[1].path {
                    prop_assert_ne!(&w[0].content, &w[1].content);
                }
            }
        }

        #[test]
        fn arbitrary_text_edits_never_panic(text in "[a-c\n\ré😀]{0,20}", edits in proptest::collection::vec(pos(), 0..4)) {
            if let Some(out) = vscode_editing::apply_text_edits(&text, &edits) {
                // With no edits, the text is unchanged.
                if edits.is_empty() { prop_assert_eq!(out, text); }
            }
        }
    }
}
