//! Regression tests for issue 21 ("Nothing silent, nothing lost"), items 1 and 5 to 8: each on a
//! fixture written for it, with the expected figures counted from the fixture independently of
//! trail (the comment on each test says how).

mod common;

use std::path::Path;

use common::count_kind;
use trail_model::{MessageKind, Role, Session};
use trail_sources::claude_code::ClaudeCode;
use trail_sources::codex::Codex;
use trail_sources::copilot_cli::CopilotCli;
use trail_sources::vscode_export::VscodeExport;
use trail_sources::{registry, FileParse, Source};

fn parse(source: &dyn Source, path: &Path) -> FileParse {
    common::parse_whole(source, path).expect("parse")
}

fn lines_of(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The first source of the registry that claims `path` (as `trail index PATH` picks one).
fn detected(path: &Path) -> Option<trail_model::SourceKind> {
    let bytes = std::fs::read(path).unwrap();
    let head = &bytes[..bytes.len().min(64 << 10)];
    registry()
        .into_iter()
        .find(|s| s.detect(path, head))
        .map(|s| s.kind())
}

// Item 1: Copilot CLI logs are Copilot CLI's, whatever their name, and Claude Code's detection
// no longer claims them (it matched `"sessionId"` and `"type"` anywhere in a line).
#[test]
fn issue_21_copilot_cli_logs_are_not_claude_code() {
    let Some(dir) = common::shared_corpus("copilot-cli") else {
        return;
    };
    for f in common::files_in(&dir) {
        let head = std::fs::read(&f).unwrap();
        assert!(!ClaudeCode.detect(&f, &head), "{}", f.display());
        assert!(CopilotCli.detect(&f, &head), "{}", f.display());
        assert_eq!(
            detected(&f),
            Some(trail_model::SourceKind::CopilotCli),
            "{}",
            f.display()
        );
    }
    // Claude Code files are still Claude Code's.
    let Some(claude) = common::shared_corpus("claude-code") else {
        return;
    };
    for f in common::files_in(&claude) {
        assert_eq!(
            detected(&f),
            Some(trail_model::SourceKind::ClaudeCode),
            "{}",
            f.display()
        );
    }
}

// Item 5. Fixture `vscode-export/subagent-export.json`, written for this test: one request whose
// model called `runSubagent` (call id `call_run_sub_01`) and then an edit. The subagent's tools
// are the response parts carrying `subAgentInvocationId`: `grep -c '"subAgentInvocationId"'`
// gives 3; the parent's own calls are the two `toolCallRounds` entries.
#[test]
fn issue_21_vscode_run_subagent_tools_are_a_linked_subagent() {
    let f = common::fixtures("vscode-export").join("subagent-export.json");
    let text = std::fs::read_to_string(&f).unwrap();
    let sub_tools = text.matches("\"subAgentInvocationId\"").count();
    assert_eq!(sub_tools, 3);
    let p = parse(&VscodeExport, &f);
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    assert_eq!(p.sessions.len(), 2);
    let main = p.sessions.iter().find(|s| s.meta.parent.is_none()).unwrap();
    let sub = p.sessions.iter().find(|s| s.meta.parent.is_some()).unwrap();

    let main_calls: Vec<&str> = main
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolCall)
        .filter_map(|m| m.tool_name.as_deref())
        .collect();
    assert_eq!(main_calls, vec!["runSubagent", "copilot_replaceString"]);
    let run = main
        .messages
        .iter()
        .find(|m| {
            m.tool_name.as_deref() == Some("runSubagent") && m.kind() == MessageKind::ToolCall
        })
        .unwrap();
    assert_eq!(run.tool_call_id.as_deref(), Some("call_run_sub_01"));
    assert_eq!(run.agent_ref.as_deref(), Some("call_run_sub_01"));
    assert_eq!(main.turn_count, 1);

    let link = sub.meta.parent.as_ref().unwrap();
    assert_eq!(link.session_id, main.meta.id);
    assert_eq!(link.tool_call_id.as_deref(), Some("call_run_sub_01"));
    assert_eq!(
        sub.meta.id.as_str(),
        format!("{}:agent:call_run_sub_01", main.meta.id)
    );
    assert_eq!(count_kind(sub, MessageKind::ToolCall), sub_tools);
    assert_eq!(count_kind(sub, MessageKind::ToolResult), sub_tools);
    assert_eq!(sub.turn_count, 1);
    assert!(sub.messages[0]
        .text
        .starts_with("Find where the scoring rules live"));
    assert!(sub.messages.iter().all(|m| m.is_sidechain));
    assert_eq!(sub.meta.title.as_deref(), Some("Survey scoring code"));
    assert!(sub
        .files
        .iter()
        .any(|f| f.path == "/home/dev/game/src/score.ts"));
    // Every tool call of the file is in one of the two sessions: 2 rounds + 3 subagent parts.
    let all_calls: usize = p
        .sessions
        .iter()
        .map(|s| count_kind(s, MessageKind::ToolCall))
        .sum();
    assert_eq!(all_calls, 2 + sub_tools);
}

/// Counts the prompts the user typed in a Claude Code file, independently of trail: main-chain
/// (`isSidechain` false) `user` lines whose content is a string not starting with one of the
/// output tags Claude Code injects (`<bash-stdout>`, `<bash-stderr>`, `<task-notification>`).
/// Tool results are arrays, so they are not counted.
fn typed_prompts(lines: &[serde_json::Value]) -> usize {
    lines
        .iter()
        .filter(|l| l["type"] == "user" && l["isSidechain"] == false)
        .filter_map(|l| l["message"]["content"].as_str())
        .filter(|t| {
            !["<bash-stdout>", "<bash-stderr>", "<task-notification>"]
                .iter()
                .any(|tag| t.starts_with(tag))
        })
        .count()
}

fn main_of(p: &FileParse) -> &Session {
    p.sessions.iter().find(|s| s.meta.parent.is_none()).unwrap()
}

// Items 6 and 8. Fixture `claude-code/renamed-inline-subagent.jsonl`, written for this test: a
// file whose name is not its sessionId (as when copied or renamed), holding a Task subagent's
// sidechain inline (`grep -c '"isSidechain":true'` gives 6), a `!` command (`<bash-input>`)
// with its `<bash-stdout>` record, and a `<task-notification>`. The user typed 3 inputs
// (counted by `typed_prompts` above from the raw lines).
#[test]
fn issue_21_claude_output_records_fold_and_inline_subagent_links() {
    let f = common::fixtures("claude-code").join("renamed-inline-subagent.jsonl");
    let lines = lines_of(&f);
    let typed = typed_prompts(&lines);
    assert_eq!(typed, 3);
    let sidechain_lines = lines.iter().filter(|l| l["isSidechain"] == true).count();
    assert_eq!(sidechain_lines, 6);

    let p = parse(&ClaudeCode, &f);
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    assert_eq!(p.sessions.len(), 2, "the main session and its one subagent");
    let main = main_of(&p);
    assert_eq!(main.turn_count as usize, typed);
    assert_eq!(count_kind(main, MessageKind::Prompt), typed);
    // The output records are kept, as meta in the turn of the command they report on.
    let stdout = main
        .messages
        .iter()
        .find(|m| m.text.starts_with("<bash-stdout>"))
        .unwrap();
    assert_eq!(stdout.kind(), MessageKind::Meta);
    let input_turn = main
        .messages
        .iter()
        .find(|m| m.text.starts_with("<bash-input>"))
        .unwrap()
        .turn_index;
    assert_eq!(stdout.turn_index, input_turn);
    let notification = main
        .messages
        .iter()
        .find(|m| m.text.starts_with("<task-notification>"))
        .unwrap();
    assert_eq!(notification.kind(), MessageKind::Meta);
    assert_eq!(notification.turn_index, Some(2));
    assert_eq!(main.turns.len(), typed);

    // Item 8: the inline subagent is one session, linked to the Task call of the main session
    // (whose id is the file's stem here, not the sessionId its lines carry).
    let sub = p.sessions.iter().find(|s| s.meta.parent.is_some()).unwrap();
    let link = sub.meta.parent.as_ref().unwrap();
    assert_eq!(link.session_id, main.meta.id);
    assert_eq!(main.meta.id.as_str(), "renamed-inline-subagent");
    assert_eq!(link.tool_call_id.as_deref(), Some("toolu_task1"));
    assert!(main
        .messages
        .iter()
        .any(|m| m.kind() == MessageKind::ToolCall
            && m.tool_call_id.as_deref() == Some("toolu_task1")));
    assert_eq!(sub.messages.len(), sidechain_lines);
    assert_eq!(count_kind(sub, MessageKind::ToolCall), 2);
    assert!(sub.usage.iter().all(|u| u.is_sidechain));
    assert!(main.usage.iter().all(|u| !u.is_sidechain));
}

// Item 8 on the real file: 405 sidechain lines under 5 Task calls (`grep -o '"name":"Task"'`
// gives 5); every inline subagent links to a Task call the main session holds.
#[test]
fn issue_21_corpus_inline_sidechains_link_to_their_task_calls() {
    let Some(dir) = common::shared_corpus("claude-code") else {
        return;
    };
    let f = dir.join("ccviewer-orchestrator-nextjs-todo-sidechains.jsonl");
    let text = std::fs::read_to_string(&f).unwrap();
    let tasks = text.matches("\"name\":\"Task\"").count();
    assert_eq!(tasks, 5);
    let p = parse(&ClaudeCode, &f);
    let main = main_of(&p);
    let subs: Vec<&Session> = p
        .sessions
        .iter()
        .filter(|s| s.meta.parent.is_some())
        .collect();
    assert_eq!(subs.len(), tasks);
    for s in subs {
        let link = s.meta.parent.as_ref().unwrap();
        assert_eq!(link.session_id, main.meta.id, "{}", s.meta.id);
        let call = link
            .tool_call_id
            .as_deref()
            .expect("linked to its Task call");
        assert!(main
            .messages
            .iter()
            .any(|m| m.kind() == MessageKind::ToolCall
                && m.tool_name.as_deref() == Some("Task")
                && m.tool_call_id.as_deref() == Some(call)));
    }
}

// Item 7. Fixture `codex/rollout-...-e220.jsonl`, written for this test: 4 error events
// (`grep -c '"type":"error"\|"type":"stream_error"'` gives 4), one with an `error` object
// holding kind and message, one with a message and `codex_error_info`, one stream error, and
// one with an `error` object holding only a type.
#[test]
fn issue_21_codex_error_objects_keep_kind_and_message() {
    let f = common::fixtures("codex")
        .join("rollout-2026-03-02T11-00-00-0199a1b2-0000-7000-8000-00000000e220.jsonl");
    let errors_in_file = lines_of(&f)
        .iter()
        .filter(|l| l["type"] == "event_msg")
        .filter(|l| l["payload"]["type"] == "error" || l["payload"]["type"] == "stream_error")
        .count();
    assert_eq!(errors_in_file, 4);
    let p = parse(&Codex, &f);
    let s = &p.sessions[0];
    let errors: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Error)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(
        errors,
        vec![
            "rate_limit: Rate limit exceeded",
            "response_stream_disconnected: stream disconnected before completion",
            "Reconnecting... 1/5",
            "usage_limit_exceeded",
        ]
    );
    assert!(s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Error)
        .all(|m| m.role() == Role::System));
}
