//! Kimi Code CLI parser: the corpus wire log against counts made without the parser, and the
//! repo's own fixtures for both wire generations, subagents and the usage rules.

mod common;

use std::path::PathBuf;

use common::{by_native, count_kind, fixtures, only, parse_whole, shared_corpus};
use serde_json::Value;
use trail_model::{MessageKind, PromptSource, TitleRank};
use trail_sources::kimi::Kimi;
use trail_sources::Source;

#[test]
fn corpus_wire_log_matches_independent_counts() {
    let Some(dir) = shared_corpus("kimi") else {
        return;
    };
    let path = dir.join("assistant_tools.jsonl");
    let head = std::fs::read(&path).unwrap();
    assert!(Kimi.detect(&path, &head));
    let fp = parse_whole(&Kimi, &path).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    let s = only(&fp);
    // Independent counts, plain serde_json over the lines: `turn.prompt` lines, `tool.call`
    // loop events, and the sum of every `usage.record` line (each request is recorded by
    // exactly one; the parser reads `step.end` usage instead and skips the repeats).
    let text = std::fs::read_to_string(&path).unwrap();
    let (mut prompts, mut calls, mut input, mut output, mut cache) = (0, 0, 0u64, 0u64, 0u64);
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str().unwrap_or_default() {
            "turn.prompt" => prompts += 1,
            "context.append_loop_event" if v["event"]["type"] == "tool.call" => calls += 1,
            "usage.record" => {
                input += v["usage"]["inputOther"].as_u64().unwrap();
                output += v["usage"]["output"].as_u64().unwrap();
                cache += v["usage"]["inputCacheRead"].as_u64().unwrap();
            }
            _ => {}
        }
    }
    assert_eq!(count_kind(s, MessageKind::Prompt), prompts);
    assert_eq!(s.turn_count as usize, prompts);
    assert_eq!(count_kind(s, MessageKind::ToolCall), calls);
    let sum = |f: fn(&trail_model::Usage) -> u64| s.usage.iter().map(f).sum::<u64>();
    assert_eq!(sum(|u| u.input_tokens), input);
    assert_eq!(sum(|u| u.output_tokens), output);
    assert_eq!(sum(|u| u.cache_read_tokens), cache);
    // The `<stem>.state.json` beside it gives the folder the session ran in.
    assert_eq!(
        s.meta.cwd.as_deref(),
        Some("/private/tmp/as-agent-lab/kimi/project")
    );
    assert_eq!(count_kind(s, MessageKind::Compaction), 1);
    let agent_call = s
        .messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("Agent"))
        .unwrap();
    assert_eq!(agent_call.agent_ref.as_deref(), Some("agent-0"));
    assert!(s.messages.iter().any(|m| m.is_error));
    assert_eq!(s.models, ["moonshot-ai/kimi-k2.7-code"]);
}

fn code_session() -> PathBuf {
    fixtures("kimi")
        .join("code-home/sessions/wd_app_1a2b3c/session_5e5e5e5e-0000-4000-8000-000000000001")
}

#[test]
fn current_wire_reads_prompts_tools_and_usage_once() {
    let path = code_session().join("agents/main/wire.jsonl");
    let fp = parse_whole(&Kimi, &path).unwrap();
    // The torn last line is left for the next index, not reported.
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    let s = only(&fp);
    assert_eq!(s.meta.id.as_str(), "5e5e5e5e-0000-4000-8000-000000000001");
    assert_eq!(s.meta.parent, None);
    assert_eq!(s.turn_count, 2);
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some("There are 12 Rust files.")
    );
    assert_eq!(count_kind(s, MessageKind::ToolCall), 3);
    assert_eq!(
        count_kind(s, MessageKind::Meta),
        1,
        "the plan-mode reminder"
    );
    assert_eq!(
        count_kind(s, MessageKind::Unknown),
        1,
        "the unknown event is kept"
    );
    let keys: Vec<&str> = s.usage.iter().map(|u| u.request_key.as_str()).collect();
    assert_eq!(keys, ["st-1", "st-2", "usage.record:2"]);
    let input: u64 = s.usage.iter().map(|u| u.input_tokens).sum();
    assert_eq!(input, 100 + 50 + 300);
    assert_eq!(s.usage[1].cache_creation_tokens, 5);
    assert_eq!(s.meta.title.as_deref(), Some("Count files"));
    assert_eq!(s.meta.title_rank, TitleRank::USER);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/u/app"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-04-01T09:00:00.000Z")
    );
    assert_eq!(s.files.last().unwrap().path, "/home/u/app/COUNT.md");
    assert!(s
        .messages
        .iter()
        .any(|m| m.is_error && m.tool_name.as_deref() == Some("Bash")));
    let call = s
        .messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("Agent"))
        .unwrap();
    assert_eq!(call.agent_ref.as_deref(), Some("agent-0"));
    assert_eq!(s.checkpoints.len(), 1);
}

#[test]
fn a_subagent_folder_is_a_linked_session() {
    let path = code_session().join("agents/agent-0/wire.jsonl");
    let fp = parse_whole(&Kimi, &path).unwrap();
    let s = only(&fp);
    assert_eq!(
        s.meta.native_id,
        "5e5e5e5e-0000-4000-8000-000000000001:agent-0"
    );
    let link = s.meta.parent.as_ref().unwrap();
    assert_eq!(
        link.session_id.as_str(),
        "5e5e5e5e-0000-4000-8000-000000000001"
    );
    assert_eq!(link.agent_ref.as_deref(), Some("agent-0"));
    assert_eq!(s.turn_count, 1);
    assert_eq!(s.messages[0].prompt_source, Some(PromptSource::System));
    assert_eq!(s.usage.len(), 1);
    // The session's custom title belongs to the main agent only.
    assert_eq!(s.meta.title.as_deref(), Some("Count .rs files"));
}

#[test]
fn legacy_wire_dedupes_status_updates_and_splits_subagent_events() {
    let path = fixtures("kimi")
        .join("legacy-home/sessions/0f0f0f0f0f0f/7a7a7a7a-0000-4000-8000-000000000002/wire.jsonl");
    let fp = parse_whole(&Kimi, &path).unwrap();
    assert!(fp.issues.is_empty());
    assert_eq!(fp.sessions.len(), 2);
    let main = by_native(&fp, "7a7a7a7a-0000-4000-8000-000000000002");
    assert_eq!(main.turn_count, 1);
    assert_eq!(main.turns[0].user_message.as_deref(), Some("fix the build"));
    assert_eq!(
        main.turns[0].assistant_response.as_deref(),
        Some("Fixed the import.")
    );
    let keys: Vec<&str> = main.usage.iter().map(|u| u.request_key.as_str()).collect();
    assert_eq!(keys, ["chatcmpl-a", "chatcmpl-b"]);
    let shell = main
        .messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("Shell") && m.kind() == MessageKind::ToolCall)
        .unwrap();
    assert_eq!(
        shell.tool_input.as_deref(),
        Some(r#"{"command":"cargo build"}"#)
    );
    assert!(main.messages.iter().any(|m| m.is_error));
    let sub = by_native(&fp, "7a7a7a7a-0000-4000-8000-000000000002:Task:1");
    let link = sub.meta.parent.as_ref().unwrap();
    assert_eq!(
        link.session_id.as_str(),
        "7a7a7a7a-0000-4000-8000-000000000002"
    );
    assert_eq!(link.tool_call_id.as_deref(), Some("Task:1"));
    assert_eq!(
        sub.turns[0].assistant_response.as_deref(),
        Some("Missing import in main.rs")
    );
    assert_eq!(sub.usage.len(), 1);
}

#[test]
fn discovery_finds_every_wire_log_of_both_homes() {
    let roots = [
        fixtures("kimi").join("code-home"),
        fixtures("kimi").join("legacy-home"),
    ];
    assert_eq!(Kimi.discover(&roots).len(), 3);
}

/// A grown file is read from where the last parse stopped: cut after every line of both
/// generations' fixtures (a `usage.record` repeating its `step.end`, legacy `StatusUpdate`
/// repeats, a subagent, a torn last line), the first parse plus the resumed one equal a whole
/// parse. The three cuts between the `Agent` call (line 9) and its result naming the subagent
/// (line 12) change a stored message, so those parse the file whole again.
#[test]
fn resuming_at_every_line_equals_a_whole_parse() {
    let session = "sessions/wd_app_1a2b3c/session_5e5e5e5e-0000-4000-8000-000000000001";
    let main = format!("{session}/agents/main/wire.jsonl");
    common::assert_resume_at_every_line(&Kimi, &fixtures("kimi/code-home"), &main, 3);
    let agent = format!("{session}/agents/agent-0/wire.jsonl");
    common::assert_resume_at_every_line(&Kimi, &fixtures("kimi/code-home"), &agent, 0);
    common::assert_resume_at_every_line(
        &Kimi,
        &fixtures("kimi/legacy-home"),
        "sessions/0f0f0f0f0f0f/7a7a7a7a-0000-4000-8000-000000000002/wire.jsonl",
        0,
    );
}
