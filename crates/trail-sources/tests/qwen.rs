//! Qwen Code parser: every Qwen file of the shared corpus against counts made without the
//! parser, and the repo's own fixture for branches, streamed usage, titles and subagents.

mod common;

use std::collections::{HashMap, HashSet};

use common::{by_native, count_kind, files_in, fixtures, only, parse_whole, shared_corpus};
use serde_json::Value;
use trail_model::{MessageKind, PromptSource, TitleRank};
use trail_sources::qwen::QwenCode;
use trail_sources::Source;

/// Counts made with plain `serde_json` reads of the file, not the parser: `type: user`
/// records, distinct `functionCall` ids, the last `usageMetadata` of each `uuid`, and the
/// user records on the active chain (walked from the last user/assistant/tool_result record
/// through `parentUuid`).
struct Independent {
    prompts: usize,
    prompts_on_chain: usize,
    tool_calls: usize,
    prompt_tokens: u64,
    candidate_tokens: u64,
}

fn independent(path: &std::path::Path) -> Independent {
    let text = std::fs::read_to_string(path).unwrap();
    let records: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut parent: HashMap<String, Option<String>> = HashMap::new();
    let mut usage: HashMap<String, (u64, u64)> = HashMap::new();
    let mut calls = HashSet::new();
    let mut leaf = None;
    for r in &records {
        let uuid = r["uuid"].as_str().unwrap().to_string();
        parent
            .entry(uuid.clone())
            .or_insert(r["parentUuid"].as_str().map(str::to_string));
        if matches!(
            r["type"].as_str(),
            Some("user" | "assistant" | "tool_result")
        ) {
            leaf = Some(uuid.clone());
        }
        if let Some(u) = r.get("usageMetadata") {
            let p = u["promptTokenCount"].as_u64().unwrap_or(0);
            let c = u["candidatesTokenCount"].as_u64().unwrap_or(0);
            usage.insert(uuid.clone(), (p, c));
        }
        for part in r["message"]["parts"].as_array().into_iter().flatten() {
            if let Some(id) = part["functionCall"]["id"].as_str() {
                calls.insert(id.to_string());
            }
        }
    }
    let mut chain = HashSet::new();
    let mut at = leaf;
    while let Some(id) = at {
        if !chain.insert(id.clone()) {
            break;
        }
        at = parent.get(&id).cloned().flatten();
    }
    let users: Vec<&Value> = records.iter().filter(|r| r["type"] == "user").collect();
    Independent {
        prompts: users.len(),
        prompts_on_chain: users
            .iter()
            .filter(|r| chain.contains(r["uuid"].as_str().unwrap()))
            .count(),
        tool_calls: calls.len(),
        prompt_tokens: usage.values().map(|u| u.0).sum(),
        candidate_tokens: usage.values().map(|u| u.1).sum(),
    }
}

#[test]
fn every_corpus_file_matches_independent_counts() {
    let Some(dir) = shared_corpus("qwen") else {
        return;
    };
    let files = files_in(&dir);
    assert_eq!(files.len(), 2, "the corpus has two Qwen files");
    for path in files {
        let name = path.display();
        let head = std::fs::read(&path).unwrap();
        assert!(QwenCode.detect(&path, &head), "{name}");
        let fp = parse_whole(&QwenCode, &path).unwrap();
        assert!(fp.issues.is_empty(), "{name}: {:?}", fp.issues);
        let s = only(&fp);
        let want = independent(&path);
        assert_eq!(count_kind(s, MessageKind::Prompt), want.prompts, "{name}");
        assert_eq!(s.turn_count as usize, want.prompts_on_chain, "{name}");
        assert_eq!(
            count_kind(s, MessageKind::ToolCall),
            want.tool_calls,
            "{name}"
        );
        // No file has cached or thought tokens: input and output are the raw counts.
        let input: u64 = s.usage.iter().map(|u| u.input_tokens).sum();
        let output: u64 = s.usage.iter().map(|u| u.output_tokens).sum();
        assert_eq!(
            (input, output),
            (want.prompt_tokens, want.candidate_tokens),
            "{name}"
        );
        assert_eq!(
            s.meta.native_id,
            path.file_stem().unwrap().to_str().unwrap()
        );
    }
}

#[test]
fn corpus_branch_file_keeps_the_active_chain_and_its_title() {
    let Some(dir) = shared_corpus("qwen") else {
        return;
    };
    let fp = parse_whole(
        &QwenCode,
        &dir.join("019f0000-0000-7000-8000-000000000004.jsonl"),
    )
    .unwrap();
    let s = only(&fp);
    assert_eq!(s.meta.title.as_deref(), Some("Active branch title"));
    assert_eq!(s.meta.title_rank, TitleRank::SUMMARY);
    let dead = s
        .messages
        .iter()
        .find(|m| m.text == "Discarded branch answer.")
        .unwrap();
    assert!(!dead.on_main_chain);
    assert_eq!(
        s.turns[1].assistant_response.as_deref(),
        Some("Active branch answer.")
    );
    assert_eq!(s.models, ["synthetic-dead-model", "synthetic-active-model"]);
}

#[test]
fn corpus_hook_context_is_not_the_prompt() {
    let Some(dir) = shared_corpus("qwen") else {
        return;
    };
    let fp = parse_whole(
        &QwenCode,
        &dir.join("019f0000-0000-7000-8000-000000000001.jsonl"),
    )
    .unwrap();
    let s = only(&fp);
    assert_eq!(
        s.turns[0].user_message.as_deref(),
        Some("Inspect the synthetic fixture.")
    );
    assert_eq!(s.meta.branch.as_deref(), Some("fixture-branch"));
    let note = s
        .messages
        .iter()
        .find(|m| m.text == "Synthetic background notification.")
        .unwrap();
    assert_eq!(note.prompt_source, Some(PromptSource::System));
}

fn fixture() -> trail_sources::FileParse {
    let path = fixtures("qwen")
        .join("projects/-home-u-app/chats/0a0a0a0a-0000-4000-8000-000000000001.jsonl");
    parse_whole(&QwenCode, &path).unwrap()
}

#[test]
fn rewind_leaves_the_old_branch_aside_and_titles_follow_the_chain() {
    let fp = fixture();
    assert_eq!(fp.issues.len(), 1);
    assert_eq!(fp.issues[0].line, Some(15));
    let s = by_native(&fp, "0a0a0a0a-0000-4000-8000-000000000001");
    assert_eq!(s.turn_count, 2);
    assert_eq!(s.turns[0].user_message.as_deref(), Some("Edit the config"));
    assert_eq!(s.turns[1].assistant_response.as_deref(), Some("Delegated."));
    let off: HashSet<&str> = s
        .messages
        .iter()
        .filter(|m| !m.on_main_chain)
        .filter_map(|m| m.native_id.as_deref())
        .collect();
    assert_eq!(off, HashSet::from(["u3", "u4", "u5", "u11", "u12"]));
    assert_eq!(s.meta.title.as_deref(), Some("Config edit"));
    assert_eq!(s.meta.title_rank, TitleRank::USER);
    assert_eq!(s.meta.branch.as_deref(), Some("main"));
    let queued = s
        .messages
        .iter()
        .find(|m| m.native_id.as_deref() == Some("u7"))
        .unwrap();
    assert_eq!(queued.prompt_source, Some(PromptSource::Queued));
    assert!(s
        .messages
        .iter()
        .any(|m| m.is_error && m.tool_call_id.as_deref() == Some("c1")));
    assert_eq!(s.checkpoints.len(), 1);
    assert_eq!(
        s.checkpoints[0].overview.as_deref(),
        Some("Summary: the config was checked.")
    );
    let parent = s.meta.parent.as_ref().unwrap();
    assert_eq!(
        parent.session_id.as_str(),
        "0b0b0b0b-0000-4000-8000-000000000002"
    );
    assert_eq!(s.files[0].path, "/home/u/app/config.toml");
}

#[test]
fn streamed_records_count_their_cumulative_usage_once() {
    let fp = fixture();
    let s = by_native(&fp, "0a0a0a0a-0000-4000-8000-000000000001");
    let keys: Vec<&str> = s.usage.iter().map(|u| u.request_key.as_str()).collect();
    assert_eq!(keys, ["u3", "u5", "u8"]);
    let u3 = &s.usage[0];
    // prompt 100 of which 60 cached; 30 candidates + 10 thoughts.
    assert_eq!(
        (
            u3.input_tokens,
            u3.cache_read_tokens,
            u3.output_tokens,
            u3.reasoning_tokens
        ),
        (40, 60, 40, 10)
    );
    assert_eq!(u3.total(), 140);
    // The two streamed rows of u3 are one node: thinking and the call.
    let u3_msgs = s
        .messages
        .iter()
        .filter(|m| m.native_id.as_deref() == Some("u3"))
        .count();
    assert_eq!(u3_msgs, 2);
    assert_eq!(s.models, ["qwen3-coder-plus", "qwen3-max"]);
}

#[test]
fn sidechain_records_are_a_linked_subagent_session() {
    let fp = fixture();
    assert_eq!(fp.sessions.len(), 2);
    let sub = by_native(&fp, "0a0a0a0a-0000-4000-8000-000000000001:explore-1");
    let link = sub.meta.parent.as_ref().unwrap();
    assert_eq!(
        link.session_id.as_str(),
        "0a0a0a0a-0000-4000-8000-000000000001"
    );
    assert_eq!(link.agent_ref.as_deref(), Some("explore-1"));
    assert_eq!(sub.turn_count, 1);
    assert_eq!(
        sub.turns[0].assistant_response.as_deref(),
        Some("Config is fine.")
    );
    assert_eq!(sub.usage.len(), 1);
    assert!(sub.messages.iter().all(|m| m.is_sidechain));
}

#[test]
fn discovery_and_detection() {
    let found = QwenCode.discover(&[fixtures("qwen")]);
    assert_eq!(found.len(), 1);
    let claude =
        br#"{"uuid":"a","sessionId":"s","type":"user","message":{"role":"user","content":"hi"}}"#;
    assert!(!QwenCode.detect(std::path::Path::new("a.jsonl"), claude));
}

/// A grown file is read from where the last parse stopped: cut after every line of the fixture
/// (a response streamed as two records with one `uuid`, a rewind that moves the leaf, a
/// subagent, a bad line), the first parse plus the resumed one equal a whole parse.
#[test]
fn resuming_at_every_line_equals_a_whole_parse() {
    common::assert_resume_at_every_line(
        &QwenCode,
        &fixtures("qwen"),
        "projects/-home-u-app/chats/0a0a0a0a-0000-4000-8000-000000000001.jsonl",
        0,
    );
}
