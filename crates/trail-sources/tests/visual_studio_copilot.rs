//! Visual Studio Copilot traces: the corpus samples (one conversation split over three files)
//! and a content-captured fixture written from the shapes kenn-io/agentsview documents
//! (`docs/internal/visual-studio-copilot-traces.md`): chat spans with input and output
//! messages and token counts, tool spans, a failed tool, a span repeated in two files.
//!
//! Counts are made without the parser: every line of every trace file of the folder is read
//! with plain `serde_json`, spans are taken from `resourceSpans[].scopeSpans[].spans[]`
//! (deduplicated by span id) and counted by their `gen_ai.operation.name` attribute: prompts
//! are `invoke_agent` spans, tool calls and results the `execute_tool` spans, tokens the sums
//! of `gen_ai.usage.input_tokens` / `output_tokens` over `chat` spans.

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::MessageKind;
use trail_sources::visual_studio::VisualStudioCopilot;
use trail_sources::Source;

use common::{count_kind, only, parse_whole};

#[derive(Debug, Default, PartialEq)]
struct Counts {
    prompts: usize,
    tools: usize,
    input: u64,
    output: u64,
}

fn count_by_hand(files: &[PathBuf]) -> Counts {
    let mut seen = HashSet::new();
    let mut c = Counts::default();
    for f in files {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            for rs in v["resourceSpans"].as_array().unwrap() {
                for ss in rs["scopeSpans"].as_array().unwrap() {
                    for sp in ss["spans"].as_array().unwrap() {
                        if !seen.insert(sp["spanId"].as_str().unwrap().to_string()) {
                            continue;
                        }
                        let attr = |k: &str| {
                            sp["attributes"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .find(|a| a["key"] == k)
                                .and_then(|a| a["value"]["stringValue"].as_str())
                                .map(str::to_string)
                        };
                        let num = |k: &str| attr(k).map_or(0, |t| t.parse::<u64>().unwrap());
                        match attr("gen_ai.operation.name").as_deref() {
                            Some("invoke_agent") => c.prompts += 1,
                            Some("execute_tool") => c.tools += 1,
                            Some("chat") => {
                                c.input += num("gen_ai.usage.input_tokens");
                                c.output += num("gen_ai.usage.output_tokens");
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
    }
    c
}

fn counted(s: &trail_model::Session) -> Counts {
    Counts {
        prompts: count_kind(s, MessageKind::Prompt),
        tools: count_kind(s, MessageKind::ToolResult),
        input: s.usage.iter().map(|u| u.input_tokens).sum(),
        output: s.usage.iter().map(|u| u.output_tokens).sum(),
    }
}

fn check_folder(dir: &Path, n_files: usize) -> Vec<trail_model::Session> {
    let files = VisualStudioCopilot.discover(&[dir.to_path_buf()]);
    assert_eq!(files.len(), n_files);
    let by_hand = count_by_hand(&files);
    let mut out = Vec::new();
    for f in &files {
        let head = std::fs::read(f).unwrap();
        assert!(VisualStudioCopilot.detect(f, &head));
        let fp = parse_whole(&VisualStudioCopilot, f).unwrap();
        assert!(fp.issues.is_empty(), "{:?}", fp.issues);
        let s = only(&fp);
        // Whichever file is read, the session is the whole conversation.
        assert_eq!(counted(s), by_hand, "{}", f.display());
        assert_eq!(s.turn_count as usize, by_hand.prompts);
        assert_eq!(count_kind(s, MessageKind::ToolCall), by_hand.tools);
        out.push(s.clone());
    }
    for s in &out[1..] {
        assert_eq!(s.messages, out[0].messages);
    }
    out
}

#[test]
fn the_corpus_samples_make_one_conversation_counted_without_the_parser() {
    let Some(dir) = common::shared_corpus("vs-copilot") else {
        return;
    };
    let sessions = check_folder(&dir, 3);
    let s = &sessions[0];
    assert_eq!(s.meta.id.as_str(), "4a8f63f6-7626-4416-a874-fc7bd2c3f005");
    assert_eq!(s.meta.agent_version.as_deref(), Some("18.6.11822.322"));
    assert_eq!(s.models, ["gpt-5.5"]);
    assert!(s.usage.is_empty(), "the samples carry no token counts");
    assert_eq!(
        s.meta.metadata,
        Some(
            serde_json::json!({"mode": "Agent", "client": "Microsoft.VisualStudio.Copilot", "entry_point": "chat-window"})
        )
    );
}

#[test]
fn a_content_captured_conversation_keeps_prompts_answers_tools_and_tokens() {
    let dir = common::fixtures("visual-studio-copilot");
    let sessions = check_folder(&dir, 2);
    let s = &sessions[0];
    let prompts: Vec<&str> = s
        .turns
        .iter()
        .map(|t| t.user_message.as_deref().unwrap())
        .collect();
    assert_eq!(
        prompts,
        ["Rename Foo to Bar in src/Foo.cs", "Now run the tests"]
    );
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some("Reading the file.")
    );
    assert_eq!(count_kind(s, MessageKind::Thinking), 1);
    let results: Vec<(&str, bool)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .map(|m| (m.tool_name.as_deref().unwrap(), m.is_error))
        .collect();
    assert_eq!(
        results,
        [("get_file", false), ("run_command_in_terminal", true)]
    );
    // The span repeated in the second file counts once.
    let usage: Vec<(&str, u64, u64)> = s
        .usage
        .iter()
        .map(|u| (u.model.as_deref().unwrap(), u.input_tokens, u.output_tokens))
        .collect();
    assert_eq!(
        usage,
        [("gpt-5.5-2026-06", 9400, 120), ("gpt-5.5", 12_000, 40)]
    );
    assert_eq!(s.models, ["gpt-5.5", "gpt-5.5-2026-06"]);
    assert_eq!(s.files[0].path, "src/Foo.cs");
    assert!(s.refs.iter().any(|r| r.value == "contoso/app#5"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-06-12T19:46:40.000Z")
    );
}

#[test]
fn a_line_that_is_not_a_trace_is_an_issue() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x_VSGitHubCopilot_traces.jsonl");
    std::fs::write(&f, "{\"a\":1}\nnot json\n").unwrap();
    let fp = parse_whole(&VisualStudioCopilot, &f).unwrap();
    assert_eq!(fp.issues.len(), 2);
    assert!(fp.sessions.is_empty());
}
