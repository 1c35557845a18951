//! Kiro IDE: the `.chat` files and the `workspace-sessions` JSON of its agent storage folder.
//!
//! Kiro IDE is closed source and no real file of it is public, so the fixtures under
//! `tests/fixtures/kiro-ide` are written for these tests from the schema public readers agree
//! on (getagentseal/codeburn `src/providers/kiro.ts` and obodnikov/claude-chat-manager's Kiro
//! parser; see `src/kiro/ide/mod.rs`): `.chat` files `{executionId, actionId, chat: [{role:
//! human|bot|tool, content}], metadata: {modelId, workflow, workflowId, startTime, endTime}}`
//! and `workspace-sessions/<base64 folder>/<uuid>.json` `{sessionId, title, selectedModel,
//! workspaceDirectory, history: [{message: {role, content}, executionId, promptLogs}]}` with a
//! `sessions.json` index `[{sessionId, title, dateCreated, workspaceDirectory}]`.
//!
//! Counts are made without the parser, with plain `serde_json` reads of each file: prompts are
//! `human` messages not opening with `<identity>` (Kiro's system prompt) and `user` messages;
//! answers are `bot` and `assistant` messages with text (an assistant's `promptLogs.completion`
//! standing in for an empty or `On it.` content); tool outputs are `tool` messages.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::MessageKind;
use trail_sources::kiro::ide::KiroIde;
use trail_sources::{FileParse, Source};

use common::{count_kind, only, parse_whole};

fn storage() -> PathBuf {
    common::fixtures("kiro-ide").join("User/globalStorage/kiro.kiroagent")
}

#[derive(Debug, Default, PartialEq)]
struct Counts {
    prompts: usize,
    answers: usize,
    tool_outputs: usize,
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn count_by_hand(path: &Path) -> Counts {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut c = Counts::default();
    if let Some(chat) = v["chat"].as_array() {
        for m in chat {
            let text = m["content"].as_str().unwrap_or("");
            match m["role"].as_str().unwrap() {
                "human" if !text.starts_with("<identity>") => c.prompts += 1,
                "bot" if !text.is_empty() => c.answers += 1,
                "tool" => c.tool_outputs += 1,
                _ => {}
            }
        }
    }
    if let Some(history) = v["history"].as_array() {
        for e in history {
            let text = text_of(&e["message"]["content"]);
            let completion = e["promptLogs"]["completion"].as_str().unwrap_or("");
            match e["message"]["role"].as_str().unwrap() {
                "user" if !text.is_empty() => c.prompts += 1,
                "assistant" if !text.is_empty() || !completion.is_empty() => c.answers += 1,
                _ => {}
            }
        }
    }
    c
}

fn parse(path: &Path) -> FileParse {
    parse_whole(&KiroIde, path).unwrap()
}

#[test]
fn every_fixture_matches_counts_made_without_the_parser() {
    let files = KiroIde.discover(&[storage()]);
    // Two `.chat` files and two session files (`find -name '*.chat' -o -name '*.json'` less
    // `sessions.json`).
    assert_eq!(files.len(), 4, "{files:?}");
    let mut sessions = 0;
    for f in &files {
        let head = std::fs::read(f).unwrap();
        assert!(KiroIde.detect(f, &head), "{}", f.display());
        let p = parse(f);
        assert!(p.issues.is_empty(), "{}: {:?}", f.display(), p.issues);
        let s = only(&p);
        sessions += 1;
        let c = count_by_hand(f);
        assert_eq!(
            count_kind(s, MessageKind::Prompt),
            c.prompts,
            "{}",
            f.display()
        );
        assert_eq!(
            count_kind(s, MessageKind::Text),
            c.answers,
            "{}",
            f.display()
        );
        assert_eq!(
            count_kind(s, MessageKind::ToolResult),
            c.tool_outputs,
            "{}",
            f.display()
        );
        assert_eq!(s.turn_count as usize, c.prompts, "{}", f.display());
        assert!(s.usage.is_empty(), "Kiro IDE records no tokens");
    }
    assert_eq!(sessions, 4);
}

#[test]
fn a_chat_file_is_one_execution_with_its_workspace_model_and_times() {
    let f = storage()
        .join("3f9c2a7e1b4d4c8e9a0b5d6e7f8a9b0c/8e2f4a61-5b7c-4d9e-a0f1-2b3c4d5e6f70.chat");
    let p = parse(&f);
    let s = only(&p);
    assert_eq!(s.meta.id.as_str(), "8e2f4a61-5b7c-4d9e-a0f1-2b3c4d5e6f70");
    assert_eq!(s.meta.source.as_str(), "kiro-ide");
    // From `User/workspaceStorage/<hash>/workspace.json`.
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/shop"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2024-12-04T10:40:00.000Z")
    );
    assert_eq!(
        s.meta.updated_at.as_deref(),
        Some("2024-12-04T10:42:05.000Z")
    );
    assert_eq!(s.models, ["claude-sonnet-4"]);
    let meta = s.meta.metadata.as_ref().unwrap();
    assert_eq!(meta["workflow"], "act");
    assert_eq!(meta["workflow_id"], "wf-7c1d");
    // The system prompt is kept, as meta, before the first prompt.
    assert_eq!(s.messages[0].kind(), MessageKind::Meta);
    assert!(s.messages[0].text.starts_with("<identity>"));
    assert_eq!(
        s.messages[1].text,
        "Add a health check endpoint to server.ts"
    );
    let output = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert!(output.tool_output.as_deref().unwrap().contains("express"));
    // A chat file without a workspace.json for its hash has no folder.
    let other = storage()
        .join("a41d7e0c9b8f4e3d2c1b0a9f8e7d6c5b/0c5a9e3b-7d1f-4a2b-8c6d-9e0f1a2b3c4d.chat");
    assert_eq!(only(&parse(&other)).meta.cwd, None);
}

#[test]
fn a_workspace_session_takes_its_folder_title_and_time_from_the_index() {
    let dir = storage().join("workspace-sessions/L2hvbWUvZGV2L3Nob3A_");
    let p = parse(&dir.join("b7e3c1d2-4f5a-4b6c-8d9e-0a1b2c3d4e5f.json"));
    let s = only(&p);
    assert_eq!(s.meta.id.as_str(), "b7e3c1d2-4f5a-4b6c-8d9e-0a1b2c3d4e5f");
    assert_eq!(s.meta.title.as_deref(), Some("Fix the failing login test"));
    // `dateCreated` written as text in sessions.json.
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2024-12-05T10:40:00.000Z")
    );
    assert_eq!(s.models, ["claude-sonnet-4.5"]);
    let answers: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Text)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(
        answers,
        [
            "On it.",
            "The mock clock was not reset between tests; reset it in beforeEach."
        ]
    );
    // The image block is named, not dropped.
    assert!(
        s.messages[2].text.contains("[image_url]"),
        "{}",
        s.messages[2].text
    );
    // One answer lives only in an execution log.
    assert!(p.notes.iter().any(|n| n.ends_with(": 1")), "{:?}", p.notes);
    // No `workspaceDirectory` in the file or its index entry: the folder's name, decoded.
    let other = parse(&dir.join("c8f4d2e3-5a6b-4c7d-9e0f-1a2b3c4d5e6f.json"));
    let s = only(&other);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/shop"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2024-12-06T10:40:00.000Z")
    );
}

#[test]
fn the_index_and_other_json_are_not_sessions() {
    let dir = storage().join("workspace-sessions/L2hvbWUvZGV2L3Nob3A_");
    let index = dir.join("sessions.json");
    assert!(!KiroIde.detect(&index, &std::fs::read(&index).unwrap()));
    let gemini = Path::new("/tmp/session-1.json");
    assert!(!KiroIde.detect(
        gemini,
        br#"{"sessionId": "x", "messages": [{"type": "user", "content": "hi"}]}"#
    ));
    let chat = Path::new("/tmp/notes.chat");
    assert!(!KiroIde.detect(chat, b"just some notes"));
}

#[test]
fn a_bad_message_is_a_problem_and_the_rest_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let chat = dir.path().join("x.chat");
    std::fs::write(
        &chat,
        br#"{"executionId": "e1", "chat": [{"role": "human", "content": "hi"}, 7, {"role": "bot", "content": {"a": 1}}, {"role": "bot", "content": "hello"}]}"#,
    )
    .unwrap();
    let p = parse(&chat);
    assert_eq!(p.issues.len(), 2, "{:?}", p.issues);
    assert!(p.issues.iter().all(|i| i.path.ends_with("x.chat")));
    let s = only(&p);
    assert_eq!(s.meta.id.as_str(), "kiro-ide:e1");
    assert_eq!(s.messages.len(), 2);
    let session = dir.path().join("s.json");
    std::fs::write(
        &session,
        br#"{"sessionId": "s1", "selectedModel": "m", "history": ["junk", {"message": {"role": "user", "content": "go"}}]}"#,
    )
    .unwrap();
    let p = parse(&session);
    assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
    assert!(
        p.issues[0].reason.starts_with("history entry 1"),
        "{:?}",
        p.issues
    );
    assert_eq!(only(&p).messages.len(), 1);
    // Not the format at all: the whole file fails, with a reason.
    std::fs::write(&session, b"[1, 2]").unwrap();
    assert!(parse_whole(&KiroIde, &session).is_err());
}

#[test]
fn doctor_finds_the_execution_logs_it_does_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kiro.kiroagent");
    for rel in [
        "3f9c2a7e1b4d4c8e9a0b5d6e7f8a9b0c/74a1b2c3/9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "3f9c2a7e1b4d4c8e9a0b5d6e7f8a9b0c/x.chat",
        "workspace-sessions/L2hvbWUvZGV2L3Nob3A_/sessions.json",
    ] {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"{}").unwrap();
    }
    let logs = trail_sources::UNREADABLE
        .iter()
        .find(|u| u.name == "Kiro IDE execution logs")
        .unwrap();
    let found = logs.files(&[root]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("9f8e7d6c5b4a39281706f5e4d3c2b1a0"));
}
