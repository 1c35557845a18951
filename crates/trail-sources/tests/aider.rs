//! Aider (`.aider.chat.history.md` + `.aider.input.history`) parser tests (issue 16, item 1).

mod common;

use std::path::{Path, PathBuf};

use common::count_kind;
use proptest::prelude::*;
use serde_json::Value;
use trail_model::{MessageKind, RefType, Role, Session, SourceKind, UpdateMode};
use trail_sources::aider::{edit_blocks, Aider, EDIT_TOOL, RUN_TOOL};
use trail_sources::{FileParse, ParseRequest, Resume, Source};

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&Aider, path).expect("parse")
}

fn fixture() -> PathBuf {
    common::fixtures("aider").join("recipe-box/.aider.chat.history.md")
}

fn calls<'a>(s: &'a Session, tool: &str) -> Vec<&'a trail_model::Message> {
    s.messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolCall && m.tool_name.as_deref() == Some(tool))
        .collect()
}

fn input(m: &trail_model::Message) -> Value {
    serde_json::from_str(m.tool_input.as_deref().unwrap()).unwrap()
}

// The one real history in the shared corpus. Every number below was counted without the
// parser, on the file itself:
// - sessions: `grep -c '^# aider chat started at'` = 1;
// - turns: runs of consecutive `####` lines, `awk '/^####/{if(!p)n++;p=1;next}{p=0}END{print n}'`
//   = 12 (80 `####` lines in all);
// - edit tool calls: `grep -c '^<<<<<<< SEARCH'` = 24 (the file uses the diff edit format, no
//   whole-file edits), all applied (18 `> Applied edit to` lines name their 10 files,
//   `grep '^> Applied edit to' | sort -u | wc -l`);
// - usage rows: `grep -c '^> Tokens:'` = 12; the message costs summed with
//   `sed 's/.*Cost: \$\([0-9.]*\) message.*/\1/' | paste -sd+ | bc` = 0.01346; sent and
//   received summed by awk with `k` = 1000: 73,600 and 4,303;
// - commits: `grep '^> Commit ' | awk '{print $3}' | sort -u | wc -l` = 14.
#[test]
fn corpus_history_counted_independently() {
    let Some(dir) = common::shared_corpus("aider") else {
        return;
    };
    let chat = dir.join("metadata-aider.chat.history.md");
    let bytes = std::fs::read(&chat).unwrap();
    assert!(Aider.detect(&chat, &bytes));
    // The input history is read with its chat history, never as a session file of its own.
    let side = dir.join("metadata-aider.input.history");
    assert!(!Aider.detect(&side, &std::fs::read(&side).unwrap()));
    let p = parse(&chat);
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    assert_eq!(p.bytes_parsed, bytes.len() as u64);
    assert_eq!(p.sessions.len(), 1);
    let s = &p.sessions[0];
    assert_eq!(s.meta.source, SourceKind::Aider);
    assert_eq!(s.turn_count, 12);
    assert_eq!(s.turns.len(), 12);
    assert_eq!(count_kind(s, MessageKind::Prompt), 12);
    let edits = calls(s, EDIT_TOOL);
    assert_eq!(edits.len(), 24);
    assert_eq!(
        calls(s, RUN_TOOL).len(),
        0,
        "the three mkdir suggestions were declined"
    );
    let results: Vec<_> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .collect();
    assert_eq!(results.len(), 24);
    assert!(results.iter().all(|r| !r.is_error));
    assert_eq!(s.files.len(), 10);
    assert_eq!(s.usage.len(), 12);
    let cost: f64 = s.usage.iter().filter_map(|u| u.cost_usd).sum();
    assert!((cost - 0.01346).abs() < 1e-9, "{cost}");
    assert_eq!(s.usage.iter().map(|u| u.input_tokens).sum::<u64>(), 73_600);
    assert_eq!(s.usage.iter().map(|u| u.output_tokens).sum::<u64>(), 4_303);
    let commits = s
        .refs
        .iter()
        .filter(|r| r.ref_type == RefType::Commit)
        .count();
    assert_eq!(commits, 14);
    assert_eq!(s.meta.agent_version.as_deref(), Some("0.86.1"));
    assert_eq!(s.models, vec!["openrouter/openai/gpt-4o-mini".to_string()]);
    // Every prompt is dated by the input history: the first was typed at 14:46:02.414589,
    // after two confirmations (`y`, `N`) that are not prompts.
    let prompts: Vec<_> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Prompt)
        .collect();
    assert_eq!(
        prompts[0].timestamp.as_deref(),
        Some("2025-12-03T14:46:02.414Z")
    );
    let times: Vec<&str> = prompts
        .iter()
        .map(|m| m.timestamp.as_deref().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    // Edit blocks are tool calls, not text: no answer text holds a marker or a dangling fence.
    for m in s.messages.iter().filter(|m| m.kind() == MessageKind::Text) {
        assert!(!m.text.contains("<<<<<<< SEARCH"), "{}", m.text);
        assert!(!m.text.contains(">>>>>>> REPLACE"), "{}", m.text);
    }
    // The README answer nests ```bash fences in a ```markdown block: one edit, whole.
    let readme = edits
        .iter()
        .find(|m| input(m)["file"] == "frontend/README.md")
        .unwrap();
    let replace = input(readme)["replace"].as_str().unwrap().to_string();
    assert!(
        replace.contains("ts-node frontend/display.ts\n```\n"),
        "{replace}"
    );
}

#[test]
fn fixture_sessions_turns_tools_usage_and_times() {
    let path = fixture();
    let p = parse(&path);
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    assert_eq!(p.sessions.len(), 2);
    let (a, b) = (&p.sessions[0], &p.sessions[1]);
    assert!(a.meta.id.as_str().starts_with("aider:20260210T091502-"));
    assert!(b.meta.id.as_str().starts_with("aider:20260211T184055-"));
    let folder = std::path::absolute(path.parent().unwrap()).unwrap();
    assert_eq!(a.meta.cwd.as_deref(), Some(folder.to_str().unwrap()));
    assert_eq!(
        a.meta.created_at.as_deref(),
        Some("2026-02-10T09:15:02.000Z")
    );
    assert_eq!(a.meta.agent_version.as_deref(), Some("0.86.1"));
    assert_eq!(a.models, vec!["anthropic/claude-sonnet-4-5".to_string()]);
    assert_eq!(
        a.meta.title.as_deref(),
        Some("Make scale() reject negative factors.\nKeep the docstring."),
        "a command is no title when a prompt follows"
    );
    // Turns: `/add`, the two-line prompt, `Run the tests.`, `/run git log`.
    assert_eq!(a.turn_count, 4);
    let prompts: Vec<(&str, Option<&str>)> = a
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Prompt)
        .map(|m| (m.text.as_str(), m.timestamp.as_deref()))
        .collect();
    assert_eq!(
        prompts,
        vec![
            ("/add src/scale.py", Some("2026-02-10T09:15:20.101Z")),
            (
                "Make scale() reject negative factors.\nKeep the docstring.",
                Some("2026-02-10T09:16:03.500Z")
            ),
            ("Run the tests.", Some("2026-02-10T09:20:11.250Z")),
            (
                "/run git log --oneline -1",
                Some("2026-02-10T09:21:02.000Z")
            ),
        ]
    );
    assert_eq!(count_kind(a, MessageKind::Thinking), 1);
    // A run of status lines is one message (the announcement first).
    assert_eq!(
        a.messages[0].text,
        "Aider v0.86.1\nMain model: anthropic/claude-sonnet-4-5 with diff edit format, prompt cache, \
         infinite output\nWeak model: anthropic/claude-haiku-4-5\nGit repo: .git with 12 files\n\
         Repo-map: using 4096 tokens, auto refresh"
    );
    assert_eq!(a.messages[0].kind(), MessageKind::Meta);
    // The answer in order: its prose, then the two edits (their file names and fences are
    // part of the calls).
    let second_turn: Vec<(MessageKind, &str)> = a
        .messages
        .iter()
        .filter(|m| m.turn_index == Some(1) && m.role() == trail_model::Role::Assistant)
        .map(|m| (m.kind(), m.text.as_str()))
        .collect();
    assert_eq!(
        second_turn,
        vec![
            (
                MessageKind::Thinking,
                "The check belongs at the top of scale(), before any ingredient is touched."
            ),
            (
                MessageKind::Text,
                "I will add a guard at the top of `scale()` and a test for it."
            ),
            (MessageKind::ToolCall, "src/scale.py"),
            (MessageKind::ToolCall, "tests/test_scale.py"),
        ]
    );
    // Two SEARCH/REPLACE edits, one a new file (empty search); the `####` comment inside the
    // new file is not a prompt.
    let edits = calls(a, EDIT_TOOL);
    assert_eq!(edits.len(), 2);
    let e0 = input(edits[0]);
    assert_eq!(e0["file"], "src/scale.py");
    assert_eq!(
        e0["search"],
        "def scale(recipe, factor):\n    \"\"\"Scale every ingredient by factor.\"\"\"\n"
    );
    assert!(e0["replace"]
        .as_str()
        .unwrap()
        .ends_with("raise ValueError(\"factor must be positive\")\n"));
    let e1 = input(edits[1]);
    assert_eq!(e1["file"], "tests/test_scale.py");
    assert_eq!(e1["search"], "");
    assert!(e1["replace"]
        .as_str()
        .unwrap()
        .starts_with("#### not a prompt"));
    assert_eq!(
        e1.as_object().unwrap().keys().collect::<Vec<_>>(),
        vec!["file", "replace", "search"]
    );
    // Both applied: results paired by call id, files recorded under the project folder.
    for e in &edits {
        let r = a
            .messages
            .iter()
            .find(|m| m.kind() == MessageKind::ToolResult && m.tool_call_id == e.tool_call_id)
            .unwrap();
        assert!(!r.is_error);
        assert_eq!(r.turn_index, Some(1));
    }
    let files: Vec<&str> = a.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        files,
        vec![
            folder.join("src/scale.py").to_str().unwrap(),
            folder.join("tests/test_scale.py").to_str().unwrap()
        ]
    );
    // Commands: the suggested one Aider ran, and the one typed with /run.
    let runs: Vec<String> = calls(a, RUN_TOOL)
        .iter()
        .map(|m| input(m)["command"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        runs,
        vec![
            "python -m pytest tests/test_scale.py",
            "git log --oneline -1"
        ]
    );
    // Usage: the cached request logs its cost on the next line, without `> `.
    assert_eq!(a.usage.len(), 2);
    let u = &a.usage[0];
    assert_eq!(
        (
            u.input_tokens,
            u.cache_creation_tokens,
            u.cache_read_tokens,
            u.output_tokens
        ),
        (8_900, 3_100, 8_200, 345)
    );
    assert_eq!(u.cost_usd, Some(0.02));
    assert_eq!(u.model.as_deref(), Some("anthropic/claude-sonnet-4-5"));
    assert_eq!(u.timestamp.as_deref(), Some("2026-02-10T09:16:03.500Z"));
    assert_eq!(a.usage[1].cost_usd, Some(0.0041));
    assert!(
        a.messages.iter().all(|m| !m.text.starts_with("Cost:")),
        "the cost line is part of the usage row"
    );
    assert_eq!(
        a.refs.iter().map(|r| r.value.as_str()).collect::<Vec<_>>(),
        vec!["3f9a2c1"]
    );

    // The second session uses the whole edit format: the README block is a whole file. The
    // SEARCH/REPLACE edit that failed to match is an error result.
    assert_eq!(b.turn_count, 2);
    let edits = calls(b, EDIT_TOOL);
    assert_eq!(edits.len(), 2);
    let readme = input(edits[0]);
    assert_eq!(readme["file"], "README.md");
    assert_eq!(readme["search"], "");
    assert_eq!(readme["replace"], "# Recipe box\n\nScales recipes.\n");
    let failed = b
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult && m.tool_call_id == edits[1].tool_call_id)
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(b.files.len(), 1);
    assert!(b
        .refs
        .iter()
        .any(|r| r.ref_type == RefType::Issue && r.value == "demo/recipe-box#7"));
    // Not in the input history (sent with --message): the last known time.
    let last = b
        .messages
        .iter()
        .rfind(|m| m.kind() == MessageKind::Prompt)
        .unwrap();
    assert_eq!(last.timestamp.as_deref(), Some("2026-02-11T18:41:30.000Z"));
    let cost: f64 = b.usage.iter().filter_map(|u| u.cost_usd).sum();
    assert!((cost - 0.0085).abs() < 1e-12);
}

#[test]
fn ids_are_deterministic_and_unique_per_session() {
    let a = parse(&fixture());
    let b = parse(&fixture());
    let ids =
        |p: &FileParse| -> Vec<String> { p.sessions.iter().map(|s| s.meta.id.0.clone()).collect() };
    assert_eq!(ids(&a), ids(&b));
    assert_ne!(ids(&a)[0], ids(&a)[1]);
}

/// Writes `text` as a chat history in a fresh folder and parses it.
fn parse_text(text: &str) -> (tempfile::TempDir, FileParse) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(".aider.chat.history.md");
    std::fs::write(&p, text).unwrap();
    let out = parse(&p);
    (dir, out)
}

#[test]
fn an_answer_still_being_written_is_left_for_the_next_index() {
    let head = "\n# aider chat started at 2026-01-01 10:00:00\n\n#### hi  \n\n";
    let (_d, p) = parse_text(&format!("{head}Hello, I am still wri\n"));
    // The blank line Aider writes before an answer is part of it.
    assert_eq!(
        p.bytes_parsed,
        head.len() as u64 - 1,
        "stops before the answer"
    );
    assert_eq!(count_kind(&p.sessions[0], MessageKind::Text), 0);
    let (_d, p) = parse_text(&format!("{head}Hello, done.\n\n"));
    assert_eq!(count_kind(&p.sessions[0], MessageKind::Text), 1);
}

#[test]
fn group_confirmations_and_blank_inputs_are_no_prompts() {
    let (_d, p) = parse_text(
        "\n# aider chat started at 2026-01-01 10:00:00\n\n#### <blank>  \n\n\
         #### Create new file? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a  \n\n\
         #### real one  \n",
    );
    let s = &p.sessions[0];
    assert_eq!(s.turn_count, 1);
    assert_eq!(
        s.messages
            .iter()
            .filter(|m| m.role() == Role::User && m.kind() == MessageKind::Meta)
            .count(),
        1
    );
}

#[test]
fn udiff_hunks_become_search_and_replace() {
    let answer = "Here:\n\n```diff\n--- src/a.py\n+++ src/a.py\n@@ ... @@\n def f():\n-    return 1\n+    return 2\n```\n";
    let e = edit_blocks(answer, Some("udiff"));
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].file, "src/a.py");
    assert_eq!(e[0].search, "def f():\n    return 1\n");
    assert_eq!(e[0].replace, "def f():\n    return 2\n");
    // Two hunks in one block are two edits.
    let two =
        "```diff\n--- a.py\n+++ a.py\n@@ ... @@\n-x = 1\n+x = 2\n@@ ... @@\n-y = 1\n+y = 2\n```\n";
    assert_eq!(edit_blocks(two, Some("udiff")).len(), 2);
    // Without the udiff format a diff block is text.
    assert!(edit_blocks(answer, Some("diff")).is_empty());
}

/// Parses `bytes[..cut]` from scratch, then the rest resumed from the state, and returns both.
fn parse_in_two(path: &Path, bytes: &[u8], cut: usize) -> (FileParse, FileParse) {
    std::fs::write(path, &bytes[..cut]).unwrap();
    let first = parse(path);
    std::fs::write(path, bytes).unwrap();
    let state = first.state.clone().unwrap();
    let second = Aider
        .parse(ParseRequest {
            path,
            resume: Some(Resume {
                offset: first.bytes_parsed,
                line: first.lines,
                state: &state,
            }),
            max_bytes: None,
        })
        .unwrap();
    (first, second)
}

/// The messages of several parses merged by session as the store merges them (a later parse's
/// message at a `seq` replaces the earlier one), in order: (session, seq, kind, text, input).
fn merged(parses: &[&FileParse]) -> Vec<(String, u32, String, String, Option<String>)> {
    let mut out = std::collections::BTreeMap::new();
    for p in parses {
        for s in &p.sessions {
            for m in &s.messages {
                out.insert(
                    (s.meta.id.0.clone(), m.seq),
                    (
                        m.kind().as_str().to_string(),
                        m.text.clone(),
                        m.tool_input.clone(),
                    ),
                );
            }
        }
    }
    out.into_iter()
        .map(|((id, seq), (k, t, i))| (id, seq, k, t, i))
        .collect()
}

#[test]
fn a_resumed_parse_reads_only_new_bytes_and_adds_up_to_the_whole() {
    let bytes = std::fs::read(fixture()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".aider.chat.history.md");
    std::fs::copy(
        fixture().with_file_name(".aider.input.history"),
        dir.path().join(".aider.input.history"),
    )
    .unwrap();
    std::fs::write(&path, &bytes).unwrap();
    let whole = parse(&path);
    let text = String::from_utf8(bytes.clone()).unwrap();
    // Cut where Aider's writes end: after a status line, and inside the second session.
    for marker in [
        "> Commit 3f9a2c1",
        "#### Also fix",
        "# aider chat started at 2026-02-11",
    ] {
        let cut = text.find(marker).unwrap();
        let (first, second) = parse_in_two(&path, &bytes, cut);
        assert_eq!(first.bytes_parsed, cut as u64, "{marker}");
        assert_eq!(second.bytes_read, (bytes.len() - cut) as u64);
        assert_eq!(merged(&[&first, &second]), merged(&[&whole]), "{marker}");
        // The session open at the cut continues as an append.
        if let Some(open) = second.sessions.first() {
            if first.sessions.iter().any(|s| s.meta.id == open.meta.id) {
                assert_eq!(open.mode, UpdateMode::Append);
            }
        }
        let usage = |ps: &[&FileParse]| -> usize {
            ps.iter()
                .flat_map(|p| &p.sessions)
                .map(|s| s.usage.len())
                .sum()
        };
        assert_eq!(usage(&[&first, &second]), usage(&[&whole]));
    }
}

/// Lines of Aider's own kinds; `code` adds fences and edit markers.
fn line_strategy(code: bool) -> impl Strategy<Value = String> {
    let plain = prop_oneof![
        Just("# aider chat started at 2026-01-02 03:04:05".to_string()),
        Just("".to_string()),
        "#### [a-z ]{0,12}".prop_map(|s| format!("{s}  ")),
        "> [A-Za-z ]{0,12}".prop_map(|s| format!("{s}  ")),
        Just("> Tokens: 1.2k sent, 30 received. Cost: $0.01 message, $0.01 session.  ".into()),
        Just("> Tokens: 9k sent, 1k cache write, 2k cache hit, 3 received.".into()),
        Just("Cost: $0.5 message, $0.6 session.  ".into()),
        Just("> Applied edit to a.py  ".into()),
        Just("> Running ls  ".into()),
        Just("a.py".into()),
        "[a-z ]{0,20}",
    ];
    let markers = prop_oneof![
        Just("```python".to_string()),
        Just("```".to_string()),
        Just("<<<<<<< SEARCH".to_string()),
        Just("=======".to_string()),
        Just(">>>>>>> REPLACE".to_string()),
    ];
    if code {
        prop_oneof![3 => plain, 1 => markers].boxed()
    } else {
        plain.boxed()
    }
}

/// Parses `bytes` twice: no panic, the same ids.
fn check_ids(bytes: &[u8]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(".aider.chat.history.md");
    std::fs::write(&p, bytes).unwrap();
    let a = parse(&p);
    let b = parse(&p);
    let ids = |f: &FileParse| {
        f.sessions
            .iter()
            .map(|s| s.meta.id.0.clone())
            .collect::<Vec<_>>()
    };
    prop_assert_eq!(ids(&a), ids(&b));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    // Arbitrary bytes never panic, and the same bytes give the same ids.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        check_ids(&bytes)?;
    }

    #[test]
    fn arbitrary_aider_lines_never_panic(lines in proptest::collection::vec(line_strategy(true), 0..80)) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        check_ids(text.as_bytes())?;
    }

    // Histories made of Aider's own kinds of lines (no code blocks: Aider never stops writing
    // inside an answer): cutting before a status line or a header and resuming gives the same
    // messages as one parse.
    #[test]
    fn resuming_at_a_status_line_adds_up(lines in proptest::collection::vec(line_strategy(false), 1..60), at in 0usize..60) {

        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let bytes = text.as_bytes();
        let offsets: Vec<usize> = lines
            .iter()
            .scan(0usize, |o, l| { let start = *o; *o += l.len() + 1; Some((start, l)) })
            .filter(|(_, l)| l.starts_with("> ") && !l.starts_with("> Tokens") || l.starts_with("# aider"))
            .map(|(s, _)| s)
            .collect();
        prop_assume!(!offsets.is_empty());
        let cut = offsets[at % offsets.len()];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".aider.chat.history.md");
        std::fs::write(&path, bytes).unwrap();
        let whole = parse(&path);
        let (first, second) = parse_in_two(&path, bytes, cut);
        prop_assert_eq!(merged(&[&first, &second]), merged(&[&whole]));
    }
}
