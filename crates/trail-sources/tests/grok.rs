//! Grok Build: `updates.jsonl` (authoritative), `summary.json`, and `chat_history.jsonl` for a
//! session with no update log.
//!
//! No Grok session is in the shared corpus: the fixtures in `tests/fixtures/grok/` were written
//! here in the shapes Grok Build writes (`xai-org/grok-build`'s ACP session updates and xAI
//! extension notifications, as peers decode them): streamed chunks, a tool call whose
//! `in_progress` update is replaced by its result, a failed tool, per-model usage on
//! `turn_completed`, a rewind that undoes a turn, and a torn last line.

mod common;

use std::path::PathBuf;

use serde_json::Value;
use trail_model::{MessageKind, SourceKind};
use trail_sources::grok::Grok;
use trail_sources::Source;

fn root() -> PathBuf {
    common::fixtures("grok")
}

#[test]
fn grok_sessions_are_found_one_file_each() {
    let found = Grok.discover(&[root()]);
    let names: Vec<String> = found
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["updates.jsonl", "chat_history.jsonl"]);
    for f in &found {
        let head = std::fs::read(f).unwrap();
        assert!(Grok.detect(f, &head), "{f:?}");
    }
}

#[test]
fn the_update_log_gives_turns_tools_usage_and_honours_the_rewind() {
    let file = Grok
        .discover(&[root()])
        .into_iter()
        .find(|p| p.ends_with("updates.jsonl"))
        .unwrap();
    // Independent counts by plain serde_json reads of the complete lines: prompt indexes
    // still standing after the last rewind (kept: index below the marker's target, or a line
    // after the marker), tool_call lines before... none after the rewind here, and the
    // turn_completed usage.
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let upd = |v: &Value| v["params"]["update"].clone();
    let rewind_at = lines
        .iter()
        .position(|v| upd(v)["sessionUpdate"] == "rewind_marker")
        .unwrap();
    let target = upd(&lines[rewind_at])["target_prompt_index"]
        .as_i64()
        .unwrap();
    let mut prompts: Vec<i64> = lines
        .iter()
        .enumerate()
        .filter(|(_, v)| upd(v)["sessionUpdate"] == "user_message_chunk")
        .filter_map(|(i, v)| {
            let p = upd(v)["_meta"]["promptIndex"].as_i64()?;
            (p < target || i > rewind_at).then_some(p)
        })
        .collect();
    prompts.dedup();
    let calls = lines
        .iter()
        .filter(|v| upd(v)["sessionUpdate"] == "tool_call")
        .count();
    let usage = |k: &str| -> u64 {
        lines
            .iter()
            .filter(|v| upd(v)["sessionUpdate"] == "turn_completed")
            .map(|v| upd(v)["usage"][k].as_u64().unwrap())
            .sum()
    };

    let fp = common::parse_whole(&Grok, &file).unwrap();
    assert!(
        fp.issues.is_empty(),
        "the torn last line is not an issue: {:?}",
        fp.issues
    );
    let s = common::only(&fp);
    assert_eq!(s.meta.source, SourceKind::Grok);
    assert_eq!(s.meta.id.as_str(), "019f6000-0000-7000-8000-000000000001");
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/demo/app"));
    assert_eq!(s.meta.title.as_deref(), Some("Health check endpoint"));
    assert_eq!(common::count_kind(s, MessageKind::Prompt), prompts.len());
    assert_eq!(s.turn_count as usize, prompts.len());
    assert_eq!(common::count_kind(s, MessageKind::ToolCall), calls);
    let texts: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Prompt)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(
        texts,
        vec!["Add a health check endpoint", "Use /healthz instead"]
    );
    assert_eq!(common::count_kind(s, MessageKind::Thinking), 1);
    let results: Vec<_> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].tool_output.as_deref(), Some("fn routes() {}"));
    assert!(results[1].is_error);
    // Usage: every turn_completed, cache reads taken out of the input.
    let input: u64 = s
        .usage
        .iter()
        .map(|u| u.input_tokens + u.cache_read_tokens)
        .sum();
    let output: u64 = s.usage.iter().map(|u| u.output_tokens).sum();
    assert_eq!(
        (input, output),
        (usage("inputTokens"), usage("outputTokens"))
    );
    let cost: f64 = s.usage.iter().filter_map(|u| u.cost_usd).sum();
    assert!((cost - usage("costUsdTicks") as f64 / 1e10).abs() < 1e-9);
    assert_eq!(s.models, vec!["grok-code-fast-1".to_string()]);
    assert!(s
        .files
        .iter()
        .any(|f| f.path == "/home/demo/app/src/router.rs"));
}

#[test]
fn a_session_with_only_chat_history_is_read_from_it() {
    let file = Grok
        .discover(&[root()])
        .into_iter()
        .find(|p| p.ends_with("chat_history.jsonl"))
        .unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let users = rows.iter().filter(|r| r["role"] == "user").count();
    let calls: usize = rows
        .iter()
        .filter_map(|r| r["tool_calls"].as_array())
        .map(Vec::len)
        .sum();
    let fp = common::parse_whole(&Grok, &file).unwrap();
    assert!(fp.issues.is_empty());
    let s = common::only(&fp);
    assert_eq!(common::count_kind(s, MessageKind::Prompt), users);
    assert_eq!(common::count_kind(s, MessageKind::ToolCall), calls);
    assert_eq!(
        s.meta.parent.as_ref().unwrap().session_id.as_str(),
        "019f6000-0000-7000-8000-000000000001"
    );
}
