//! iFlow CLI parser: the corpus session against counts made without the parser, and the
//! repo's own fixture for repeated streamed tool calls, object results and usage.

mod common;

use std::collections::HashSet;

use common::{count_kind, files_in, fixtures, only, parse_whole, shared_corpus};
use serde_json::Value;
use trail_model::MessageKind;
use trail_sources::iflow::Iflow;
use trail_sources::Source;

/// Counts made with plain `serde_json` reads, not the parser: user records whose content is a
/// string or holds a text block, distinct `tool_use` ids, `tool_result` blocks, and the sum
/// of `message.usage` input and output.
fn independent(path: &std::path::Path) -> (usize, usize, usize, u64, u64) {
    let text = std::fs::read_to_string(path).unwrap();
    let (mut prompts, mut results, mut input, mut output) = (0, 0, 0u64, 0u64);
    let mut calls = HashSet::new();
    for line in text.lines().filter(|l| l.trim_start().starts_with('{')) {
        let v: Value = serde_json::from_str(line).unwrap();
        let m = &v["message"];
        match &m["content"] {
            Value::String(_) if v["type"] == "user" => prompts += 1,
            Value::Array(blocks) => {
                if v["type"] == "user" && blocks.iter().any(|b| b["type"] == "text") {
                    prompts += 1;
                }
                for b in blocks {
                    if b["type"] == "tool_use" {
                        calls.insert(b["id"].as_str().unwrap().to_string());
                    }
                    if b["type"] == "tool_result" {
                        results += 1;
                    }
                }
            }
            _ => {}
        }
        input += m["usage"]["input_tokens"].as_u64().unwrap_or(0);
        output += m["usage"]["output_tokens"].as_u64().unwrap_or(0);
    }
    (prompts, calls.len(), results, input, output)
}

fn check_against_independent(path: &std::path::Path) -> trail_sources::FileParse {
    let fp = parse_whole(&Iflow, path).unwrap();
    let s = only(&fp);
    let (prompts, calls, results, input, output) = independent(path);
    let name = path.display();
    assert_eq!(count_kind(s, MessageKind::Prompt), prompts, "{name}");
    assert_eq!(s.turn_count as usize, prompts, "{name}");
    assert_eq!(count_kind(s, MessageKind::ToolCall), calls, "{name}");
    assert_eq!(count_kind(s, MessageKind::ToolResult), results, "{name}");
    let got_in: u64 = s.usage.iter().map(|u| u.input_tokens).sum();
    let got_out: u64 = s.usage.iter().map(|u| u.output_tokens).sum();
    assert_eq!((got_in, got_out), (input, output), "{name}");
    fp
}

#[test]
fn corpus_session_matches_independent_counts() {
    let Some(dir) = shared_corpus("iflow") else {
        return;
    };
    let files = files_in(&dir);
    assert_eq!(files.len(), 1, "the corpus has one iFlow file");
    let path = &files[0];
    let head = std::fs::read(path).unwrap();
    assert!(Iflow.detect(path, &head));
    let fp = check_against_independent(path);
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    let s = only(&fp);
    assert_eq!(s.meta.id.as_str(), "5de701fc-7454-4858-a249-95cac4fd3b51");
    assert_eq!(s.meta.cwd.as_deref(), Some(r"C:\exp\docker-image-retagger"));
    assert_eq!(s.models, ["glm-4.7"]);
    // iFlow recorded zeros: no usage row.
    assert!(s.usage.is_empty());
    assert!(s.turns[0]
        .assistant_response
        .as_deref()
        .unwrap()
        .contains("已完成修改"));
    let replace = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult && m.tool_name.as_deref() == Some("replace"))
        .unwrap();
    assert_eq!(replace.tool_output.as_deref(), Some("File modified"));
}

#[test]
fn fixture_drops_repeated_calls_and_keeps_errors_and_usage() {
    let path = fixtures("iflow")
        .join("projects/-home-u-app/session-4d4d4d4d-0000-4000-8000-000000000004.jsonl");
    let fp = check_against_independent(&path);
    assert_eq!(fp.issues.len(), 1, "the line that is not an object");
    assert_eq!(fp.issues[0].line, Some(7));
    let s = only(&fp);
    assert_eq!(s.meta.id.as_str(), "4d4d4d4d-0000-4000-8000-000000000004");
    assert_eq!(s.meta.branch.as_deref(), Some("dev"));
    assert_eq!(s.turn_count, 2);
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some("Reading it.\n\nThe flag occurs twice; tell me which.")
    );
    let failed = s.messages.iter().find(|m| m.is_error).unwrap();
    assert_eq!(failed.tool_name.as_deref(), Some("replace"));
    assert_eq!(
        failed.tool_output.as_deref(),
        Some("Error: old_string matched twice")
    );
    assert_eq!(s.usage.len(), 2, "the all-zero record makes no row");
    assert_eq!(s.usage[1].cache_read_tokens, 100);
    assert_eq!(s.files[0].path, "/home/u/app/flags.rs");
}

#[test]
fn discovery_and_detection() {
    assert_eq!(Iflow.discover(&[fixtures("iflow")]).len(), 1);
    let claude = br#"{"uuid":"a","sessionId":"0f8fad5b-d9cb-469f-a165-70867728950e","type":"user","message":{"content":"x"}}"#;
    assert!(!Iflow.detect(std::path::Path::new("a.jsonl"), claude));
}

#[test]
fn claude_code_leaves_iflow_and_qwen_files_to_their_sources() {
    use trail_sources::claude_code::ClaudeCode;
    let iflow = fixtures("iflow")
        .join("projects/-home-u-app/session-4d4d4d4d-0000-4000-8000-000000000004.jsonl");
    let qwen = fixtures("qwen")
        .join("projects/-home-u-app/chats/0a0a0a0a-0000-4000-8000-000000000001.jsonl");
    for path in [iflow, qwen] {
        let head = std::fs::read(&path).unwrap();
        assert!(!ClaudeCode.detect(&path, &head), "{}", path.display());
    }
}

/// A grown file is read from where the last parse stopped: cut after every line of the fixture
/// (streamed records repeating the previous `tool_use`), the first parse plus the resumed one
/// equal a whole parse.
#[test]
fn resuming_at_every_line_equals_a_whole_parse() {
    common::assert_resume_at_every_line(
        &Iflow,
        &fixtures("iflow"),
        "projects/-home-u-app/session-4d4d4d4d-0000-4000-8000-000000000004.jsonl",
        0,
    );
}
