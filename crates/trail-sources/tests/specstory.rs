//! SpecStory (`.specstory/history/*.md`) parser tests (issue 21, item 4).

mod common;

use std::path::{Path, PathBuf};

use common::count_kind;
use proptest::prelude::*;
use trail_model::{MessageKind, RefType, Role, Session, SourceKind};
use trail_sources::specstory::{Specstory, COPY_LINK, HISTORY_DIR};
use trail_sources::{FileParse, ParseRequest, Source};

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&Specstory, path).expect("parse")
}

fn fixture(name: &str) -> PathBuf {
    common::fixtures("specstory").join(name)
}

/// Counts a file's user role lines with a plain line scan, independently of the parser: a
/// line that starts with `_**User` and ends with `**_`, without ` - sidechain` (a subagent's
/// prompt, not the user's). Each is one prompt the user sent, so one turn.
fn user_role_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("_**User") && l.ends_with("**_") && !l.contains("sidechain"))
        .count()
}

/// Counts the `_**Assistant` / `_**Agent` role lines the same way.
fn agent_role_lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| {
            (l.starts_with("_**Assistant") || l.starts_with("_**Agent")) && l.ends_with("**_")
        })
        .count()
}

fn only(p: &FileParse) -> &Session {
    assert_eq!(p.sessions.len(), 1, "one session per file");
    &p.sessions[0]
}

// Every corpus file indexes, and its turns equal its user role lines counted by the plain scan
// above (for the three minsky files: 1, 10 and 7, also checked with
// `grep -c '^_\*\*User\*\*_$' FILE`).
#[test]
fn every_corpus_file_parses_with_turns_counted_independently() {
    let Some(dir) = common::shared_corpus("specstory") else {
        return;
    };
    let files = common::files_in(&dir);
    assert!(!files.is_empty());
    let head_len = 64 << 10;
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            Specstory.detect(&f, &bytes[..bytes.len().min(head_len)]),
            "{}",
            f.display()
        );
        let p = parse(&f);
        assert!(p.issues.is_empty(), "{}: {:?}", f.display(), p.issues);
        let s = only(&p);
        let users = user_role_lines(&f);
        assert!(users > 0, "{}", f.display());
        assert_eq!(s.turn_count as usize, users, "{}", f.display());
        assert_eq!(s.turns.len(), users, "{}", f.display());
        assert_eq!(count_kind(s, MessageKind::Prompt), users, "{}", f.display());
        // Every agent role line yields at least one message of the agent.
        let agent_msgs = s
            .messages
            .iter()
            .filter(|m| m.role() == Role::Assistant)
            .count();
        assert!(agent_msgs >= agent_role_lines(&f), "{}", f.display());
        assert!(s.meta.title.is_some() && s.meta.created_at.is_some());
        assert!(s.usage.is_empty(), "SpecStory records no tokens");
        assert_eq!(s.meta.source, SourceKind::Specstory);
        for (i, m) in s.messages.iter().enumerate() {
            assert_eq!(m.seq as usize, i);
        }
    }
}

// Tool blocks of the extension's style are `<details>` with a `<summary>`; the 2025-04-28 file's
// summaries are all "Searched codebase ..." and are counted here by a plain line scan (5, as
// `grep -c '<summary>' FILE` says).
#[test]
fn corpus_tool_blocks_become_tool_calls() {
    let Some(dir) = common::shared_corpus("specstory") else {
        return;
    };
    let f = dir.join("minsky-specstory-2025-04-28-starting-task-008.md");
    let p = parse(&f);
    let s = only(&p);
    let calls: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolCall)
        .filter_map(|m| m.tool_name.as_deref())
        .collect();
    let summaries = std::fs::read_to_string(&f)
        .unwrap()
        .lines()
        .filter(|l| l.contains("<summary>Searched codebase"))
        .count();
    assert_eq!(summaries, 5);
    assert_eq!(calls, vec!["Searched codebase"; summaries]);
    assert_eq!(count_kind(s, MessageKind::ToolResult), summaries);
    assert_eq!(s.meta.title.as_deref(), Some("Starting Task #008"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2025-04-28T14:53:38.000Z")
    );
}

// Fixture written for this test (v2.1.0 style, as the SpecStory CLI writes for Claude Code).
// Counted by hand from the file: 2 user role lines (one sidechain user line besides), 4 agent
// role lines (1 sidechain), 1 think block, 3 <tool-use> blocks (Task, Bash in the sidechain,
// Edit), one pull request URL.
#[test]
fn v2_fixture_roles_times_models_tools_and_link() {
    let f = fixture("2026-03-02_10-00Z-tidy-the-parser.md");
    assert_eq!(user_role_lines(&f), 2);
    let p = parse(&f);
    let s = only(&p);
    assert_eq!(s.turn_count, 2);
    assert_eq!(
        s.meta.id.as_str(),
        "specstory:2026-03-02_10-00Z-tidy-the-parser"
    );
    assert_eq!(
        s.meta.agent_version.as_deref(),
        Some("Claude Code (SpecStory Markdown v2.1.0)")
    );
    let parent = s
        .meta
        .parent
        .as_ref()
        .expect("linked to the agent's own session");
    assert_eq!(
        parent.session_id.as_str(),
        "5e55a0b1-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
    );
    assert_eq!(parent.agent_ref.as_deref(), Some(COPY_LINK));
    assert_eq!(s.models, vec!["claude-sonnet-4-20250514".to_string()]);
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-03-02T10:00:01.000Z")
    );
    assert_eq!(
        s.meta.updated_at.as_deref(),
        Some("2026-03-02T10:00:14.000Z")
    );
    assert_eq!(count_kind(s, MessageKind::Thinking), 1);
    let calls: Vec<(&str, bool)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolCall)
        .map(|m| (m.tool_name.as_deref().unwrap(), m.is_sidechain))
        .collect();
    assert_eq!(
        calls,
        vec![("Task", false), ("Bash", true), ("Edit", false)]
    );
    let bash = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult && m.tool_name.as_deref() == Some("Bash"))
        .unwrap();
    assert!(bash.tool_output.as_deref().unwrap().contains("lexer.rs"));
    // The sidechain's prompt is not a turn.
    let side_prompt = s
        .messages
        .iter()
        .find(|m| m.role() == Role::User && m.is_sidechain)
        .unwrap();
    assert_eq!(side_prompt.kind(), MessageKind::Meta);
    assert_eq!(side_prompt.turn_index, None);
    let prompts: Vec<(&str, Option<&str>)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Prompt)
        .map(|m| (m.text.as_str(), m.timestamp.as_deref()))
        .collect();
    assert_eq!(
        prompts,
        vec![
            (
                "Tidy the parser module, using a subagent to survey it first.",
                Some("2026-03-02T10:00:01.000Z")
            ),
            ("Fix that warning.", Some("2026-03-02T10:00:12.000Z")),
        ]
    );
    assert!(s
        .refs
        .iter()
        .any(|r| r.ref_type == RefType::Pr && r.value == "acme/game#42"));
    assert!(s.usage.is_empty());
    // Outside a `.specstory/history` folder there is no project to name.
    assert_eq!(s.meta.cwd, None);
}

// Fixture written for this test (the extension's older style, no version, no times but the
// heading's). Counted by hand: 3 `_**User**_` lines (the last one empty: a prompt with only an
// attachment still counts), 3 `_**Assistant**_` lines, 2 `<details>` tool blocks.
#[test]
fn old_style_fixture() {
    let f = fixture("2025-05-02_09-15-rename-the-config-loader.md");
    assert_eq!(user_role_lines(&f), 3);
    let p = parse(&f);
    let s = only(&p);
    assert_eq!(s.turn_count, 3);
    assert_eq!(s.meta.title.as_deref(), Some("Rename the config loader"));
    assert_eq!(s.meta.agent_version.as_deref(), Some("SpecStory"));
    assert_eq!(
        s.meta.parent, None,
        "no session id in the header: nothing to link"
    );
    let names: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolCall)
        .filter_map(|m| m.tool_name.as_deref())
        .collect();
    assert_eq!(names, vec!["Grep search", "Listed directory"]);
    // The heading's time is the first prompt's; the others have none recorded.
    let times: Vec<Option<&str>> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Prompt)
        .map(|m| m.timestamp.as_deref())
        .collect();
    assert_eq!(times, vec![Some("2025-05-02T09:15:40.000Z"), None, None]);
    assert_eq!(s.turns[2].user_message.as_deref(), Some(""));
}

#[test]
fn discovered_in_a_project_folder_with_the_project_as_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("game");
    let history = project.join(HISTORY_DIR);
    std::fs::create_dir_all(&history).unwrap();
    let name = "2025-05-02_09-15-rename-the-config-loader.md";
    std::fs::copy(fixture(name), history.join(name)).unwrap();
    std::fs::write(history.join("notes.txt"), "not a transcript").unwrap();
    for root in [project.clone(), project.join(".specstory"), history.clone()] {
        assert_eq!(Specstory.discover(&[root]), vec![history.join(name)]);
    }
    assert!(Specstory.discover(&[dir.path().join("missing")]).is_empty());
    let p = parse(&history.join(name));
    assert_eq!(
        only(&p).meta.cwd.as_deref(),
        Some(project.display().to_string().as_str())
    );
    // Detection wants the SpecStory header, not just a Markdown file.
    assert!(!Specstory.detect(Path::new("README.md"), b"# A project\n\n_**User**_\n"));
    assert!(!Specstory.detect(Path::new("x.txt"), b"<!-- Generated by SpecStory -->\n"));
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.md");
        std::fs::write(&path, &bytes).unwrap();
        let _ = Specstory.parse(ParseRequest { max_bytes: None, path: &path, resume: None });
    }

    #[test]
    fn arbitrary_line_sequences_never_panic(picks in proptest::collection::vec(0usize..22, 0..60)) {
        const LINES: &[&str] = &[
            "<!-- Generated by SpecStory, Markdown v2.1.0 -->",
            "<!-- Cursor Session abc (2025-01-01 10:00Z) -->",
            "# Title (2025-01-01 10:00:00)",
            "_**User**_",
            "_**User (2025-01-01 10:00Z)**_",
            "_**Agent (model gpt-5, mode Agent)**_",
            "_**Agent - sidechain (x 2025-01-01 1)**_",
            "_**Assistant (",
            "---",
            "```",
            "~~~~",
            "<think><details><summary>Thought Process</summary>",
            "</details></think>",
            "<tool-use data-tool-type=\"x\" data-tool-name=\"",
            "</details></tool-use>",
            "<details>",
            "<summary>Tool use: **</summary>",
            "</details>",
            "_Tools used: Read, _",
            "**Session ID:** ",
            "text with PR #7 and é",
            "",
        ];
        let body: String = picks.iter().map(|&i| format!("{}\n", LINES[i])).collect();
        let _ = trail_sources::specstory::parse_markdown("x", &body);
    }
}
