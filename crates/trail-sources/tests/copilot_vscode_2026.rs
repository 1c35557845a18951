//! Copilot Chat in VS Code, late 2026 (issue 18): transcripts, resolved models, late token
//! counts; Copilot CLI premium requests.
//!
//! Evidence: Copilot Chat 0.51+ writes `workspaceStorage/<hash>/GitHub.copilot-chat/
//! transcripts/<sessionId>.jsonl` (found in parser projects by searching for that path: a
//! profiler parsing `session.start`, `user.message`, `assistant.message` with `messageId`,
//! `toolRequests[{toolCallId}]` and `reasoningText`, `tool.execution_start` with `toolName` and
//! `arguments`, `tool.execution_complete` with `toolCallId` and `success`; a usage meter noting
//! the chat session files no longer mirror everything the transcripts hold). The chat session
//! mutation log (`kind` 0 initial, 1 set at a key path) is microsoft/vscode's
//! `objectMutationLog.ts`, as the format notes record; the resolved model and the token counts
//! set on the request after it completes are the issue's description of current files. The
//! fixture `tests/fixtures/copilot-vscode-transcripts` is written from those shapes.

mod common;

use std::path::PathBuf;

use trail_model::{MessageKind, SourceKind};
use trail_sources::copilot_cli::CopilotCli;
use trail_sources::copilot_vscode::CopilotVscode;
use trail_sources::Source;

const MERGED: &str = "d4c3b2a1-0f9e-4d8c-b7a6-5e4d3c2b1a00";
const ALONE: &str = "e5d4c3b2-1a0f-4e9d-8c7b-6a5e4d3c2b11";

fn root() -> PathBuf {
    common::fixtures("copilot-vscode-transcripts")
}

#[test]
fn a_transcript_and_its_chat_file_are_one_session() {
    let files = CopilotVscode.discover(&[root()]);
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec![format!("{MERGED}.jsonl"), format!("{ALONE}.jsonl")],
        "the chat file and the lone transcript; the merged session's transcript is read with its chat file"
    );
    assert!(files[0].parent().unwrap().ends_with("chatSessions"));
    assert!(files[1].parent().unwrap().ends_with("transcripts"));

    let parsed = common::parse_whole(&CopilotVscode, &files[0]).unwrap();
    assert!(parsed.issues.is_empty(), "{:?}", parsed.issues);
    let s = common::only(&parsed);
    assert_eq!(s.meta.id.as_str(), MERGED);
    assert_eq!(s.meta.source, SourceKind::CopilotVscode);
    assert_eq!(s.meta.title.as_deref(), Some("Ledger rounding"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/ledger"));
    let kinds: Vec<MessageKind> = s.messages.iter().map(|m| m.kind()).collect();
    assert!(kinds.contains(&MessageKind::ToolCall) && kinds.contains(&MessageKind::ToolResult));
    assert!(
        kinds.contains(&MessageKind::Thinking),
        "the transcript's reasoning"
    );
    assert_eq!(common::count_kind(s, MessageKind::Prompt), 1);
    let read = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert!(read.tool_output.as_deref().unwrap().contains("reduce"));
    // The chat file's late counts and resolved model.
    assert_eq!(s.usage.len(), 1);
    assert_eq!(s.usage[0].input_tokens, 5400);
    assert_eq!(s.usage[0].output_tokens, 610);
    assert_eq!(s.usage[0].model.as_deref(), Some("claude-sonnet-4.6"));
    assert!(s.models.iter().any(|m| m == "claude-sonnet-4.6"));
}

#[test]
fn a_transcript_without_a_chat_file_is_read_alone() {
    let file = root().join(format!(
        "User/workspaceStorage/9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d/GitHub.copilot-chat/transcripts/{ALONE}.jsonl"
    ));
    let head = std::fs::read(&file).unwrap();
    assert!(CopilotVscode.detect(&file, &head));
    assert!(
        !CopilotCli.detect(&file, &head),
        "not a Copilot CLI session"
    );
    let parsed = common::parse_whole(&CopilotVscode, &file).unwrap();
    let s = common::only(&parsed);
    assert_eq!(s.meta.id.as_str(), ALONE);
    assert_eq!(s.meta.source, SourceKind::CopilotVscode);
    assert_eq!(
        s.meta.cwd.as_deref(),
        Some("/home/dev/scratch"),
        "from workspace.json"
    );
    assert_eq!(
        s.meta.title.as_deref(),
        Some("List the largest files in scratch")
    );
    let failed = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert!(failed.is_error);
    assert!(parsed.state.is_none(), "read whole each time");
}

// Evidence: Copilot CLI `session.shutdown` carries `totalPremiumRequests` and, per model of
// `modelMetrics`, `requests{count, cost}` where `cost` is the premium requests with the model's
// multiplier applied (the Copilot SDK's shutdown event types; a token meter multiplying
// `totalPremiumRequests` by the overage rate notes the multiplier is already applied).
#[test]
fn copilot_cli_shutdown_records_premium_requests() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir
        .path()
        .join("session-state/7d6c5b4a-3f2e-4d1c-9b8a-7f6e5d4c3b2a");
    std::fs::create_dir_all(&session).unwrap();
    let events = [
        serde_json::json!({"type": "session.start", "id": "e1", "parentId": null,
            "timestamp": "2026-11-04T08:00:00.000Z",
            "data": {"sessionId": "7d6c5b4a-3f2e-4d1c-9b8a-7f6e5d4c3b2a", "producer": "copilot-agent",
                "startTime": "2026-11-04T08:00:00.000Z", "context": {"cwd": "/home/dev/api"}}}),
        serde_json::json!({"type": "user.message", "id": "e2", "parentId": "e1",
            "timestamp": "2026-11-04T08:00:01.000Z", "data": {"content": "Bump the API version"}}),
        serde_json::json!({"type": "session.shutdown", "id": "e3", "parentId": "e2",
            "timestamp": "2026-11-04T08:05:00.000Z",
            "data": {"shutdownType": "routine", "totalPremiumRequests": 3.5,
                "modelMetrics": {
                    "claude-sonnet-4.6": {"requests": {"count": 2, "cost": 2.0},
                        "usage": {"inputTokens": 9000, "outputTokens": 700}},
                    "claude-opus-4.5": {"requests": {"count": 1, "cost": 1.5},
                        "usage": {"inputTokens": 3000, "outputTokens": 200}}}}}),
    ];
    let text: String = events.iter().map(|e| format!("{e}\n")).collect();
    let path = session.join("events.jsonl");
    std::fs::write(&path, text).unwrap();
    let parsed = common::parse_whole(&CopilotCli, &path).unwrap();
    let s = &parsed.sessions[0];
    let mut premium: Vec<(String, f64)> = s
        .usage
        .iter()
        .map(|u| (u.model.clone().unwrap(), u.premium_requests))
        .collect();
    premium.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        premium,
        vec![
            ("claude-opus-4.5".to_string(), 1.5),
            ("claude-sonnet-4.6".to_string(), 2.0)
        ]
    );
    assert!(
        s.usage.iter().all(|u| u.cost_usd.is_none()),
        "never dollars"
    );
}

mod props {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Any bytes as a transcript, alone or beside a chat file, parse without panicking.
        #[test]
        fn transcripts_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1500)) {
            let dir = tempfile::tempdir().unwrap();
            let ws = dir.path().join("User/workspaceStorage/abc");
            let transcripts = ws.join("GitHub.copilot-chat/transcripts");
            std::fs::create_dir_all(&transcripts).unwrap();
            std::fs::create_dir_all(ws.join("chatSessions")).unwrap();
            let alone = transcripts.join("t1.jsonl");
            std::fs::write(&alone, &bytes).unwrap();
            let _ = common::parse_whole(&CopilotVscode, &alone);
            let beside = transcripts.join("t2.jsonl");
            std::fs::write(&beside, &bytes).unwrap();
            let chat = ws.join("chatSessions/t2.jsonl");
            std::fs::write(
                &chat,
                r#"{"kind":0,"v":{"version":3,"sessionId":"t2","requests":[{"requestId":"r","message":{"text":"hi"}}]}}"#,
            )
            .unwrap();
            let _ = common::parse_whole(&CopilotVscode, &chat);
        }
    }
}
