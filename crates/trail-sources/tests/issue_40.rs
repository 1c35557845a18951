//! Regression tests for issue 40 ("Real files from the wild"), items 2 to 9, each on a fixture
//! written for it under `tests/fixtures/issue-40/`. The expected figures are counted from the
//! fixture independently of trail; the comment on each test says how. Item 1 (BOM and CRLF) is
//! in `bom_crlf.rs`.

mod common;

use std::path::{Path, PathBuf};

use common::{count_kind, only};
use trail_model::{MessageKind, PromptSource, Role, Session};
use trail_sources::aider::Aider;
use trail_sources::claude_code::ClaudeCode;
use trail_sources::cline::ClineTasks;
use trail_sources::codex::Codex;
use trail_sources::copilot_cli::CopilotCli;
use trail_sources::specstory::Specstory;
use trail_sources::vscode_export::VscodeExport;
use trail_sources::{registry, FileParse, Source};

fn fixture(name: &str) -> PathBuf {
    common::fixtures("issue-40").join(name)
}

fn parse(source: &dyn Source, path: &Path) -> FileParse {
    common::parse_whole(source, path).expect("parse")
}

fn texts(s: &Session, kind: MessageKind) -> Vec<&str> {
    s.messages
        .iter()
        .filter(|m| m.kind() == kind)
        .map(|m| m.text.as_str())
        .collect()
}

// Item 2. `specstory-tool-output-headers.md`: the agent ran `cat` on an old SpecStory history;
// the `<tool-use>` block's fenced output holds three role lines (`_**User**_`, `_**Assistant**_`,
// `_**User (2025-01-01 08:00Z)**_`), and a later answer quotes `_**User**_` in a ```markdown
// fence. Counted by hand: 2 user role lines and 2 agent role lines outside the tool output and
// the fence (lines 7, 13, 51 and 57), one `<tool-use>` block.
#[test]
fn issue_40_specstory_role_lines_inside_tool_output_or_fences_are_content() {
    let p = parse(&Specstory, &fixture("specstory-tool-output-headers.md"));
    let s = only(&p);
    assert_eq!(
        texts(s, MessageKind::Prompt),
        [
            "Show me what the old history file says.",
            "Thanks. Quote the role line in a fence."
        ]
    );
    assert_eq!(s.turn_count, 2);
    assert_eq!(count_kind(s, MessageKind::ToolCall), 1);
    let output = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .and_then(|m| m.tool_output.as_deref())
        .unwrap();
    assert!(output.contains("_**Assistant**_") && output.contains("an old answer"));
    assert!(output.contains("another old question"));
    let answers = texts(s, MessageKind::Text);
    assert!(answers.iter().any(|t| t.contains("two old questions")));
    assert!(answers
        .iter()
        .any(|t| t.contains("```markdown\n_**User**_\n```") && t.contains("That is all.")));
}

// Item 3. `aider-ctrl-c/.aider.chat.history.md`: the first answer was cut by ^C inside an open
// ```python fence (Aider writes `> ^C again to exit` before the cut answer); the next `#### `
// line is a new prompt. `grep -c '^#### '` gives 2 prompts; the second answer holds one
// SEARCH/REPLACE block, applied to README.md.
#[test]
fn issue_40_aider_prompt_after_an_answer_cut_by_ctrl_c() {
    let p = parse(
        &Aider,
        &fixture("aider-ctrl-c").join(".aider.chat.history.md"),
    );
    let s = only(&p);
    assert_eq!(
        texts(s, MessageKind::Prompt),
        [
            "write a parser for the config file",
            "never mind, just add a README"
        ]
    );
    assert_eq!(s.turn_count, 2);
    let answers = texts(s, MessageKind::Text);
    assert!(answers[0].contains("def parse(path):"), "{answers:?}");
    assert!(
        answers.iter().all(|a| !a.contains("never mind")),
        "{answers:?}"
    );
    let calls: Vec<_> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolCall)
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].turn_index, Some(1));
    assert!(calls[0]
        .tool_input
        .as_deref()
        .unwrap()
        .contains("README.md"));
}

// Item 4. `vscode-export-tokens-two-places.json`: request 1 records `completionTokens` (120) on
// the request and `promptTokens` (3400) and `cachedTokens` (1000) in `result.metadata`;
// request 2 `completionTokens` (30) in `result.usage` and `promptTokens` (3600) in
// `result.metadata.usage` (read off the file).
#[test]
fn issue_40_vscode_export_tokens_from_every_place() {
    let p = parse(
        &VscodeExport,
        &fixture("vscode-export-tokens-two-places.json"),
    );
    let s = only(&p);
    let rows: Vec<(u64, u64, u64)> = s
        .usage
        .iter()
        .map(|u| (u.input_tokens, u.output_tokens, u.cache_read_tokens))
        .collect();
    assert_eq!(rows, [(3400, 120, 1000), (3600, 30, 0)]);
}

// Item 5. `claude-origin-kinds.jsonl`: 3 `user` entries with text (origins task-notification,
// human, cli) and one queued command with origin task-notification (`grep -c '"origin"'` = 4).
// Only the human's and the CLI's prompts are typed; the notification opens a turn but is the
// system's, and neither notification names the session.
#[test]
fn issue_40_claude_code_origin_kind_decides_who_wrote_a_prompt() {
    let p = parse(&ClaudeCode, &fixture("claude-origin-kinds.jsonl"));
    let s = only(&p);
    let prompts: Vec<(&str, Option<PromptSource>)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Prompt)
        .map(|m| (m.text.as_str(), m.prompt_source))
        .collect();
    assert_eq!(
        prompts,
        [
            (
                "Background command \"cargo build\" completed (exit code 0)",
                Some(PromptSource::System)
            ),
            (
                "Add a --dry-run flag to the deploy script",
                Some(PromptSource::Typed)
            ),
            ("Now run the tests", Some(PromptSource::Typed)),
        ]
    );
    let queued = s
        .messages
        .iter()
        .find(|m| m.text.starts_with("Agent \"reviewer\""))
        .unwrap();
    assert_eq!(queued.kind(), MessageKind::Meta);
    assert_eq!(
        s.meta.title.as_deref(),
        Some("Add a --dry-run flag to the deploy script")
    );
}

// Item 6. `copilot-truncated-events.jsonl` and the same bytes in their own
// `session-state/<id>/events.jsonl`: the log lost its head (line 1 is the torn end of
// `session.start`) and the two complete lines are events of types trail does not map. Both
// places give one answer: the file is Copilot CLI's, it holds no session, and the reason names
// what is missing.
#[test]
fn issue_40_truncated_copilot_cli_log_one_answer_in_both_places() {
    let flat = fixture("copilot-truncated-events.jsonl");
    let nested = fixture("copilot-truncated/session-state")
        .join("40404040-0006-4000-8000-000000000006/events.jsonl");
    assert_eq!(
        std::fs::read(&flat).unwrap(),
        std::fs::read(&nested).unwrap()
    );
    let sources = registry();
    let mut answers = Vec::new();
    for path in [&flat, &nested] {
        let source = trail_sources::detect(&sources, path).expect("detected");
        assert_eq!(source.kind(), CopilotCli.kind());
        let p = parse(source, path);
        assert!(p.sessions.is_empty(), "{}", path.display());
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].line, Some(1));
        answers.push(p.no_session.clone());
    }
    assert_eq!(answers[0], answers[1]);
    let reason = answers[0].as_deref().unwrap();
    assert!(reason.contains("session.start"), "{reason}");
    assert!(reason.contains("user.message"), "{reason}");
}

// Item 7. A Cline task file and a VS Code export with bytes after the top-level value: the
// value is kept, and the trailing bytes are one problem with its line and column (Cline: `]}`
// on line 7; the export: `}` on line 14, both column 1, counted in an editor).
#[test]
fn issue_40_whole_file_json_with_trailing_bytes_keeps_the_value() {
    let cline = fixture("cline-trailing/tasks/1767000000000/ui_messages.json");
    let p = parse(&ClineTasks::cline(), &cline);
    let s = only(&p);
    assert_eq!(texts(s, MessageKind::Prompt), ["List the files in src"]);
    assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
    assert_eq!(p.issues[0].line, Some(7));
    assert!(p.issues[0].reason.contains("column 1"), "{:?}", p.issues[0]);

    let export = fixture("vscode-export-trailing-bytes.json");
    let p = parse(&VscodeExport, &export);
    let s = only(&p);
    assert_eq!(
        texts(s, MessageKind::Prompt),
        ["What does the Makefile's test target do?"]
    );
    assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
    assert_eq!(p.issues[0].line, Some(14));
    assert!(p.issues[0].reason.contains("column 1"), "{:?}", p.issues[0]);
}

// Item 8. `rollout-...-000000000008.jsonl`: three `agent_reasoning` events (`grep -c
// agent_reasoning` = 3) and two `reasoning` response items; "Checking the manifest first" has
// no response item, the other two have one each (once after the event, once before it).
#[test]
fn issue_40_codex_reasoning_without_a_response_item_is_kept_once() {
    let p = parse(
        &Codex,
        &fixture("rollout-2026-07-01T10-00-00-40404040-0008-4000-8000-000000000008.jsonl"),
    );
    let s = only(&p);
    assert_eq!(
        texts(s, MessageKind::Thinking),
        [
            "Checking the manifest first",
            "Planning the edit",
            "Reading the tests"
        ]
    );
    let thinking = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Thinking)
        .all(|m| m.role == Some(Role::Assistant) && m.turn_index == Some(0));
    assert!(thinking);
}

// Item 9, second bullet. `specstory-invalid-utf8.md` holds one byte that is not UTF-8 (0xE9,
// Latin-1 "é"), on line 7 (`grep -n -a caf`), at byte 98 (`grep -b -a -o 'caf.' | head -1`
// gives 95 for the `c`).
#[test]
fn issue_40_specstory_invalid_utf8_names_its_line() {
    let path = fixture("specstory-invalid-utf8.md");
    let bytes = std::fs::read(&path).unwrap();
    let bad = bytes.iter().position(|&b| b == 0xE9).unwrap();
    let line = bytes[..bad].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let p = parse(&Specstory, &path);
    assert_eq!(p.issues.len(), 1);
    assert_eq!(p.issues[0].line, Some(line));
    assert_eq!(line, 7);
    assert_eq!(p.issues[0].byte_offset, Some(bad as u64));
    assert_eq!(only(&p).turn_count, 1);
}
