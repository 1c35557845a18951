//! ChatGPT and Claude.ai data exports (`conversations.json`), import only, marked as chats.
//!
//! No export is in the shared corpus (a real one is personal data): the fixtures in
//! `tests/fixtures/chatgpt-export/` and `tests/fixtures/claude-ai-export/` were written here in
//! the shapes the two services document and their exports hold (field names as public parsers
//! of these exports decode them): ChatGPT's `mapping` tree with an edited prompt (two branches),
//! thinking, code runs (one failing), a web search, an image in a prompt, an unknown content
//! type, null times and a conversation without messages; Claude.ai's content blocks (text,
//! thinking, tool_use / tool_result with and without ids, an unknown block), attachments and
//! files, a conversation fetched with its branches, an empty one, and the `projects.json` and
//! `users.json` beside it. Every count below is made again from a plain serde_json read of the
//! same file, as each test says.

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{MessageKind, Session, SourceKind};
use trail_sources::chatgpt::ChatgptExport;
use trail_sources::claude_ai::ClaudeAiExport;
use trail_sources::{registry, Source};

fn chatgpt_file() -> PathBuf {
    common::fixtures("chatgpt-export").join("conversations.json")
}

fn claude_folder() -> PathBuf {
    common::fixtures("claude-ai-export")
}

fn read_json(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn main_chain(s: &Session, kind: MessageKind) -> usize {
    s.messages
        .iter()
        .filter(|m| m.on_main_chain && m.kind() == kind)
        .count()
}

fn is_chat(s: &Session) -> bool {
    s.meta.metadata.as_ref().and_then(|m| m.get("chat")) == Some(&Value::Bool(true))
}

#[test]
fn each_file_is_detected_by_its_own_source_and_the_side_files_by_none() {
    let sources = registry();
    let detected = |p: &Path| trail_sources::detect(&sources, p).map(|s| s.kind());
    assert_eq!(detected(&chatgpt_file()), Some(SourceKind::ChatgptExport));
    let claude = claude_folder();
    assert_eq!(
        detected(&claude.join("conversations.json")),
        Some(SourceKind::ClaudeAiExport)
    );
    assert_eq!(detected(&claude.join("projects.json")), None);
    assert_eq!(detected(&claude.join("users.json")), None);
    // Import only: no default location, and discovery finds the files only under a root given
    // explicitly.
    for kind in [SourceKind::ChatgptExport, SourceKind::ClaudeAiExport] {
        let info = trail_sources::info(kind);
        assert!(info.locations.is_empty() && info.env.is_empty(), "{kind}");
        assert!(info.records.chats_only && !info.records.tokens, "{kind}");
    }
    assert!(ChatgptExport.discover(&[]).is_empty());
    assert_eq!(
        ClaudeAiExport.discover(std::slice::from_ref(&claude)),
        vec![claude.join("conversations.json")]
    );
    assert_eq!(
        ChatgptExport.discover(&[common::fixtures("chatgpt-export")]),
        vec![chatgpt_file()]
    );
}

/// What a plain serde_json read of a ChatGPT conversation gives: whether any node holds a
/// message with something in it, the prompts on the path from `current_node` to the root
/// (user messages not hidden, of type text or multimodal_text), and the tool calls over every
/// branch (assistant messages whose `recipient` is not `all`).
fn chatgpt_counts(conv: &Value) -> (bool, usize, usize) {
    let mapping = conv["mapping"].as_object().unwrap();
    let has_message = mapping.values().any(|n| n["message"].is_object());
    let mut prompts = 0;
    let mut at = conv["current_node"].as_str();
    while let Some(id) = at {
        let m = &mapping[id]["message"];
        let ct = m["content"]["content_type"].as_str().unwrap_or("");
        if m["author"]["role"] == "user"
            && m["metadata"]["is_visually_hidden_from_conversation"] != true
            && (ct == "text" || ct == "multimodal_text")
        {
            prompts += 1;
        }
        at = mapping[id]["parent"].as_str();
    }
    let tool_calls = mapping
        .values()
        .filter(|n| {
            n["message"]["author"]["role"] == "assistant"
                && n["message"]["recipient"]
                    .as_str()
                    .is_some_and(|r| r != "all")
        })
        .count();
    (has_message, prompts, tool_calls)
}

#[test]
fn chatgpt_conversations_match_a_plain_read() {
    let file = chatgpt_file();
    let fp = common::parse_whole(&ChatgptExport, &file).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    let convs = read_json(&file);
    let expected: Vec<(String, usize, usize)> = convs
        .iter()
        .filter_map(|c| {
            let (has, prompts, calls) = chatgpt_counts(c);
            has.then(|| (c["id"].as_str().unwrap().to_string(), prompts, calls))
        })
        .collect();
    assert_eq!(
        expected.len(),
        3,
        "the fixture has one conversation without messages"
    );
    let got: Vec<(String, usize, usize)> = fp
        .sessions
        .iter()
        .map(|s| {
            (
                s.meta.native_id.clone(),
                main_chain(s, MessageKind::Prompt),
                common::count_kind(s, MessageKind::ToolCall),
            )
        })
        .collect();
    assert_eq!(got, expected);
    for s in &fp.sessions {
        assert!(is_chat(s), "{}", s.meta.native_id);
        assert_eq!(s.turn_count as usize, main_chain(s, MessageKind::Prompt));
        assert!(s.usage.is_empty(), "an export records no tokens");
    }
}

#[test]
fn chatgpt_branches_thinking_tools_and_unknown_content() {
    let fp = common::parse_whole(&ChatgptExport, &chatgpt_file()).unwrap();
    let csv = common::by_native(&fp, "6a1f0c52-8e0b-4d47-9d6e-2f6b1e7c9a01");
    assert_eq!(csv.meta.id.as_str(), "6a1f0c52-8e0b-4d47-9d6e-2f6b1e7c9a01");
    assert_eq!(csv.meta.title.as_deref(), Some("Sum a CSV column"));
    assert_eq!(
        csv.meta.created_at.as_deref(),
        Some("2025-11-19T11:00:00.000Z")
    );
    assert_eq!(csv.models, ["o3", "gpt-4o"]);
    // The edited prompt: the abandoned branch is kept off the main chain.
    let pandas = csv
        .messages
        .iter()
        .find(|m| m.text == "And with pandas?")
        .unwrap();
    assert!(!pandas.on_main_chain && pandas.turn_index.is_none());
    assert_eq!(csv.turns.len(), 2);
    assert_eq!(
        csv.turns[1].user_message.as_deref(),
        Some("And with csv.DictReader?")
    );
    let thinking = csv
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::Thinking)
        .unwrap();
    assert!(thinking.text.starts_with("Reading the file\nOpen it"));
    let results: Vec<_> = csv
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].is_error && !results[1].is_error);
    assert_eq!(results[0].tool_call_id.as_deref(), Some("c1-code1"));
    assert_eq!(results[0].tool_name.as_deref(), Some("python"));
    let call: Value = serde_json::from_str(
        csv.messages
            .iter()
            .find(|m| m.kind() == MessageKind::ToolCall)
            .unwrap()
            .tool_input
            .as_deref()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(call["language"], "python");
    // Custom instructions are meta, not a prompt.
    assert_eq!(csv.messages[0].kind(), MessageKind::Meta);

    let bird = common::by_native(&fp, "0c9b7d1e-3f4a-4b5c-8d6e-7f8091a2b3c4");
    let prompt = &bird.messages[0];
    assert_eq!(prompt.kind(), MessageKind::Prompt);
    assert_eq!(prompt.text, "[image_asset_pointer]\nWhich bird is this?");
    let unknown = bird
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::Unknown)
        .unwrap();
    assert!(unknown
        .extra
        .as_deref()
        .unwrap()
        .contains("app_pairing_content"));
    assert_eq!(common::count_kind(bird, MessageKind::ToolResult), 2);

    let haiku = common::by_native(&fp, "c3-not-a-uuid");
    assert_eq!(haiku.meta.id.as_str(), "chatgpt-export:c3-not-a-uuid");
    assert_eq!(haiku.meta.title, None, "an empty title is no title");
    assert!(haiku.messages.iter().all(|m| m.timestamp.is_none()));
    assert_eq!(common::count_kind(haiku, MessageKind::Error), 1);
}

/// What a plain serde_json read of a Claude.ai conversation gives: its messages, the human
/// ones on the conversation (from `current_leaf_message_uuid` up its parents where it is
/// given, else all), and its `tool_use` blocks.
fn claude_counts(conv: &Value) -> (usize, usize, usize) {
    let msgs = conv["chat_messages"].as_array().unwrap();
    let on_path: Option<HashSet<&str>> = conv["current_leaf_message_uuid"].as_str().map(|leaf| {
        let mut path = HashSet::new();
        let mut at = Some(leaf);
        while let Some(id) = at {
            path.insert(id);
            at = msgs
                .iter()
                .find(|m| m["uuid"] == id)
                .and_then(|m| m["parent_message_uuid"].as_str());
        }
        path
    });
    let prompts = msgs
        .iter()
        .filter(|m| m["sender"] == "human")
        .filter(|m| {
            on_path
                .as_ref()
                .is_none_or(|p| p.contains(m["uuid"].as_str().unwrap()))
        })
        .count();
    let tool_calls = msgs
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_use")
        .count();
    (msgs.len(), prompts, tool_calls)
}

#[test]
fn claude_ai_conversations_match_a_plain_read() {
    let file = claude_folder().join("conversations.json");
    let fp = common::parse_whole(&ClaudeAiExport, &file).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    let expected: Vec<(String, usize, usize)> = read_json(&file)
        .iter()
        .filter_map(|c| {
            let (messages, prompts, calls) = claude_counts(c);
            (messages > 0).then(|| (c["uuid"].as_str().unwrap().to_string(), prompts, calls))
        })
        .collect();
    assert_eq!(expected.len(), 3, "the fixture has one empty conversation");
    let got: Vec<(String, usize, usize)> = fp
        .sessions
        .iter()
        .map(|s| {
            (
                s.meta.native_id.clone(),
                main_chain(s, MessageKind::Prompt),
                common::count_kind(s, MessageKind::ToolCall),
            )
        })
        .collect();
    assert_eq!(got, expected);
    for s in &fp.sessions {
        assert!(is_chat(s));
        assert_eq!(s.turn_count as usize, main_chain(s, MessageKind::Prompt));
    }
}

#[test]
fn claude_ai_blocks_attachments_and_branches() {
    let fp =
        common::parse_whole(&ClaudeAiExport, &claude_folder().join("conversations.json")).unwrap();
    let lifetimes = common::by_native(&fp, "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9");
    assert_eq!(lifetimes.meta.title.as_deref(), Some("Rust lifetimes"));
    assert_eq!(
        lifetimes.meta.updated_at.as_deref(),
        Some("2026-11-20T09:05:10.000Z")
    );
    assert_eq!(common::count_kind(lifetimes, MessageKind::Thinking), 1);
    let metas: Vec<&str> = lifetimes
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Meta)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(
        metas,
        [
            "[attachment: main.rs]\nfn first(v: Vec<i32>) -> &i32 { &v[0] }",
            "[file: screenshot.png]"
        ]
    );
    // A message without blocks is read from its `text`.
    assert_eq!(
        lifetimes.turns[1].assistant_response.as_deref(),
        Some("Take the vector by reference: fn first(v: &[i32]) -> &i32.")
    );

    let weather = common::by_native(&fp, "2c3d4e5f-6071-4829-93a4-b5c6d7e8f901");
    let results: Vec<_> = weather
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .collect();
    assert_eq!(results[0].tool_call_id.as_deref(), Some("k2-a1#1"));
    assert_eq!(
        results[0].tool_output.as_deref(),
        Some("Lisbon: showers, 17 C")
    );
    assert_eq!(results[1].tool_call_id.as_deref(), Some("toolu_fetch1"));
    assert!(results[1].is_error && !results[0].is_error);
    assert_eq!(common::count_kind(weather, MessageKind::Unknown), 2);

    let names = common::by_native(&fp, "3d4e5f60-7182-4930-a4b5-c6d7e8f90a12");
    let abandoned = names
        .messages
        .iter()
        .find(|m| m.text == "Shorter ones?")
        .unwrap();
    assert!(!abandoned.on_main_chain);
    assert_eq!(names.turn_count, 2);
    assert_eq!(names.models, ["claude-sonnet-4-5"]);
}

#[test]
fn a_malformed_conversation_is_one_problem_and_the_others_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conversations.json");
    // Written for this test: a good conversation, one whose mapping is a list, a number, and a
    // good one; then the same with a syntax error in the third element.
    let good = |id: &str| {
        format!(
            r#"{{"id": "{id}", "title": "t", "current_node": "u", "mapping": {{"u": {{"id": "u", "parent": null, "children": [], "message": {{"author": {{"role": "user"}}, "content": {{"content_type": "text", "parts": ["hi"]}}}}}}}}}}"#
        )
    };
    let text = format!(
        "[\n{},\n{{\"id\": \"bad\", \"mapping\": []}},\n7,\n{}\n]\n",
        good("one"),
        good("two")
    );
    std::fs::write(&path, &text).unwrap();
    let fp = common::parse_whole(&ChatgptExport, &path).unwrap();
    let ids: Vec<&str> = fp
        .sessions
        .iter()
        .map(|s| s.meta.native_id.as_str())
        .collect();
    assert_eq!(ids, ["one", "two"]);
    let lines: Vec<Option<u64>> = fp.issues.iter().map(|i| i.line).collect();
    assert_eq!(lines, [Some(3), Some(4)], "{:?}", fp.issues);
    assert!(fp.issues[0].reason.contains("mapping"), "{:?}", fp.issues);

    let broken = text.replace("7,", "{\"id\": tru},");
    std::fs::write(&path, broken).unwrap();
    let fp = common::parse_whole(&ChatgptExport, &path).unwrap();
    assert_eq!(fp.sessions.len(), 1, "the conversations before the error");
    assert_eq!(fp.issues.len(), 2, "{:?}", fp.issues);
    assert_eq!(fp.issues[1].line, Some(4));
}

#[test]
fn a_large_export_is_read_one_conversation_at_a_time() {
    // Written for this test: 2,000 Claude.ai conversations of one exchange each (about 1 MB).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conversations.json");
    let convs: Vec<Value> = (0..2000)
        .map(|i| {
            serde_json::json!({
                "uuid": format!("conv-{i}"), "name": format!("chat {i}"),
                "created_at": "2026-11-01T00:00:00Z", "updated_at": "2026-11-01T00:01:00Z",
                "chat_messages": [
                    {"uuid": format!("h-{i}"), "sender": "human", "text": format!("question {i} {}", "x".repeat(200)), "content": []},
                    {"uuid": format!("a-{i}"), "sender": "assistant", "text": "answer", "content": []}
                ]
            })
        })
        .collect();
    std::fs::write(&path, serde_json::to_vec(&convs).unwrap()).unwrap();
    let fp = common::parse_whole(&ClaudeAiExport, &path).unwrap();
    assert_eq!(fp.sessions.len(), 2000);
    assert!(fp.issues.is_empty());
    assert_eq!(fp.bytes_parsed, std::fs::metadata(&path).unwrap().len());
}
