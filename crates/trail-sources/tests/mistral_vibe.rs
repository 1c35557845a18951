//! Mistral Vibe session logs: every corpus file, the hand-written fixtures, rewinds and
//! append-resume.
//!
//! Corpus counts are made without the parser: each line of `messages.jsonl` is read with plain
//! `serde_json`; a record whose `message_id` (or, for a tool message, `tool_call_id`) appeared
//! on an earlier line is a replay and is skipped; prompts are the `user` records, tool calls the
//! entries of `tool_calls` arrays, results the `tool` records, thinking the records with a
//! non-empty `reasoning_content`. Tokens are `meta.json`'s `stats.session_prompt_tokens` and
//! `stats.session_completion_tokens`, read with `serde_json`.

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{MessageKind, PromptSource, TitleRank, UpdateMode};
use trail_sources::mistral_vibe::MistralVibe;
use trail_sources::{ParseRequest, Resume, Source};

use common::{count_kind, only, parse_whole};

/// Counts made from a `messages.jsonl` with plain JSON reads (see the module comment).
#[derive(Debug, Default, PartialEq)]
struct Counts {
    prompts: usize,
    tool_calls: usize,
    results: usize,
    thinking: usize,
}

fn count_by_hand(path: &Path) -> Counts {
    let mut seen = HashSet::new();
    let mut c = Counts::default();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let Ok(r) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let role = r["role"].as_str().unwrap_or("");
        let key = r["message_id"].as_str().map(str::to_string).or_else(|| {
            (role == "tool").then(|| format!("tool:{}", r["tool_call_id"].as_str().unwrap()))
        });
        if let Some(k) = key {
            if !seen.insert(k) {
                continue;
            }
        }
        match role {
            "user" => c.prompts += 1,
            "tool" => c.results += 1,
            _ => {}
        }
        c.tool_calls += r["tool_calls"].as_array().map_or(0, Vec::len);
        if r["reasoning_content"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
        {
            c.thinking += 1;
        }
    }
    c
}

fn counted_by_parser(s: &trail_model::Session) -> Counts {
    Counts {
        prompts: count_kind(s, MessageKind::Prompt),
        tool_calls: count_kind(s, MessageKind::ToolCall),
        results: count_kind(s, MessageKind::ToolResult),
        thinking: count_kind(s, MessageKind::Thinking),
    }
}

fn corpus_files() -> Option<Vec<PathBuf>> {
    let dir = common::shared_corpus("mistral-vibe")?;
    Some(MistralVibe.discover(&[dir]))
}

#[test]
fn every_corpus_file_matches_counts_made_without_the_parser() {
    let Some(files) = corpus_files() else { return };
    // Four session folders, each with one messages.jsonl (`find -name messages.jsonl`).
    assert_eq!(files.len(), 4);
    for f in &files {
        let head = std::fs::read(f).unwrap();
        assert!(MistralVibe.detect(f, &head[..head.len().min(4096)]));
        let fp = parse_whole(&MistralVibe, f).unwrap();
        assert!(fp.issues.is_empty(), "{}: {:?}", f.display(), fp.issues);
        let s = only(&fp);
        assert_eq!(counted_by_parser(s), count_by_hand(f), "{}", f.display());
        let dir = f.parent().unwrap().file_name().unwrap().to_str().unwrap();
        // Turns: one per prompt, except `checkpoint-rewind`, whose lines 5 and 6 replay lines
        // 1 and 2 (same message ids): the conversation is lines 1, 2, 7, 8, two turns.
        let turns = if dir == "checkpoint-rewind" {
            2
        } else {
            count_by_hand(f).prompts
        };
        assert_eq!(s.turn_count as usize, turns, "{dir}");
        assert_eq!(s.turns.len(), turns, "{dir}");
        let meta = f.parent().unwrap().join("meta.json");
        if meta.exists() {
            let m: Value = serde_json::from_slice(&std::fs::read(&meta).unwrap()).unwrap();
            let u = &s.usage;
            assert_eq!(u.len(), 1);
            assert_eq!(
                (u[0].input_tokens, u[0].output_tokens),
                (
                    m["stats"]["session_prompt_tokens"].as_u64().unwrap(),
                    m["stats"]["session_completion_tokens"].as_u64().unwrap()
                )
            );
            assert_eq!(s.meta.cwd.as_deref(), Some("/home/user/projects/myapp"));
            assert_eq!(s.meta.branch.as_deref(), Some("feature/tool-support"));
            assert_eq!(s.models, ["mistral-medium-3.5"]);
        } else {
            assert!(s.usage.is_empty(), "no meta.json, no usage");
        }
    }
}

#[test]
fn the_rewound_corpus_file_keeps_the_abandoned_branch_off_the_main_chain() {
    let Some(files) = corpus_files() else { return };
    let f = files
        .iter()
        .find(|f| f.to_string_lossy().contains("checkpoint-rewind"))
        .unwrap();
    let fp = parse_whole(&MistralVibe, f).unwrap();
    let s = only(&fp);
    let prompts: Vec<(&str, bool)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Prompt)
        .map(|m| (m.text.as_str(), m.on_main_chain))
        .collect();
    assert_eq!(
        prompts,
        [
            ("Reply with exactly the word: one", true),
            ("Reply with exactly the word: two", false),
            ("Reply with exactly the word: three", true)
        ]
    );
    let answers: Vec<_> = s
        .turns
        .iter()
        .map(|t| t.assistant_response.as_deref().unwrap())
        .collect();
    assert_eq!(answers, ["one", "three"]);
}

fn fixture_root() -> PathBuf {
    common::fixtures("mistral-vibe")
}

fn fixture(dir: &str) -> PathBuf {
    fixture_root()
        .join("logs/session")
        .join(dir)
        .join("messages.jsonl")
}

const MAIN: &str = "session_20260801_101500_a1b2c3d4";
const SUB: &str = "session_20260801_101500_a1b2c3d4/agents/explore_20260801_101620_e5f6a7b8";
const REWOUND: &str = "session_20260801_120000_0badf00d";

#[test]
fn fixtures_are_discovered_from_the_vibe_home_and_detected() {
    let found = MistralVibe.discover(&[fixture_root()]);
    let want: Vec<PathBuf> = [MAIN, SUB, REWOUND].iter().map(|d| fixture(d)).collect();
    let mut want = want;
    want.sort();
    assert_eq!(found, want);
    // The session log folder itself is a root too (`VIBE_HOME` pointing at it is not, but a
    // folder given by path is walked the same way).
    assert_eq!(
        MistralVibe.discover(&[fixture_root().join("logs/session")]),
        want
    );
    let meta = fixture(MAIN).with_file_name("meta.json");
    assert!(!MistralVibe.detect(&meta, &std::fs::read(&meta).unwrap()));
}

#[test]
fn a_session_keeps_its_meta_tools_errors_and_totals() {
    let fp = parse_whole(&MistralVibe, &fixture(MAIN)).unwrap();
    assert!(fp.issues.is_empty());
    let s = only(&fp);
    assert_eq!(s.meta.native_id, "3f0c2a9e-7b1d-4c55-9a8e-1d2b3c4d5e6f");
    assert_eq!(s.meta.id.as_str(), "3f0c2a9e-7b1d-4c55-9a8e-1d2b3c4d5e6f");
    assert_eq!(s.meta.cwd.as_deref(), Some("/work/app"));
    assert_eq!(s.meta.branch.as_deref(), Some("fix/add-sign"));
    assert_eq!(s.meta.title.as_deref(), Some("Fix the add() sign"));
    assert_eq!(s.meta.title_rank, TitleRank::USER);
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-08-01T10:15:00.123Z")
    );
    assert_eq!(
        s.meta.updated_at.as_deref(),
        Some("2026-08-01T10:17:42.500Z")
    );
    // A fork or rewind names its parent in meta.json.
    assert_eq!(
        s.meta.parent.as_ref().map(|p| p.session_id.as_str()),
        Some("11111111-2222-4333-8444-555555555555")
    );
    assert_eq!(s.models, ["devstral-2"]);
    // Typed prompt, then a hook's injected message: two turns, the second sent by the system.
    let sources: Vec<_> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Prompt)
        .map(|m| m.prompt_source)
        .collect();
    assert_eq!(
        sources,
        [Some(PromptSource::Typed), Some(PromptSource::System)]
    );
    assert_eq!(s.turn_count, 2);
    assert_eq!(count_kind(s, MessageKind::Thinking), 1);
    assert_eq!(count_kind(s, MessageKind::ToolCall), 4);
    let results: Vec<(&str, &str, bool)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .map(|m| {
            (
                m.tool_call_id.as_deref().unwrap(),
                m.tool_name.as_deref().unwrap(),
                m.is_error,
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("call_read", "read_file", false),
            ("call_edit", "edit", false),
            // No `name` on the record: taken from its call.
            ("call_bash", "bash", true),
            ("call_task", "task", false)
        ]
    );
    let edit = s
        .messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("edit") && m.kind() == MessageKind::ToolCall)
        .unwrap();
    let input: Value = serde_json::from_str(edit.tool_input.as_deref().unwrap()).unwrap();
    assert_eq!(input["new_string"], "a + b");
    // A list of text parts is joined.
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some(
            "Let me look at the file first.\n\nFixed the sign in add().\ncargo is not \
             installed here, so I could not run the tests."
        )
    );
    assert_eq!(s.files.len(), 1);
    assert_eq!(s.files[0].path, "/work/app/src/lib.rs");
    assert_eq!(s.files[0].tool_name.as_deref(), Some("read_file"));
    assert!(
        s.refs.iter().any(|r| r.value == "acme/app#42"),
        "{:?}",
        s.refs
    );
    let u = &s.usage;
    assert_eq!(u.len(), 1);
    assert_eq!((u[0].input_tokens, u[0].output_tokens), (12_345, 678));
    assert_eq!(u[0].cost_usd, Some(0.006294));
    assert!(u[0].tokens_known);
    assert_eq!(u[0].model.as_deref(), Some("devstral-2"));
}

#[test]
fn a_subagent_links_to_the_session_whose_folder_holds_it() {
    let fp = parse_whole(&MistralVibe, &fixture(SUB)).unwrap();
    let s = only(&fp);
    assert_eq!(
        s.meta.id.as_str(),
        "mistral-vibe:explore-9c8b7a6f-0000-4000-8000-00000000e5f6"
    );
    assert_eq!(
        s.meta.parent.as_ref().map(|p| p.session_id.as_str()),
        Some("3f0c2a9e-7b1d-4c55-9a8e-1d2b3c4d5e6f")
    );
    // An automatic title that Vibe never set: the first prompt stands in.
    assert_eq!(s.meta.title.as_deref(), Some("find the changelog"));
    assert_eq!(s.meta.title_rank, TitleRank::FIRST_PROMPT);
    assert_eq!(
        (s.usage[0].input_tokens, s.usage[0].output_tokens),
        (900, 40)
    );
}

#[test]
fn a_replay_rewinds_and_a_bad_line_is_an_issue() {
    let fp = parse_whole(&MistralVibe, &fixture(REWOUND)).unwrap();
    assert_eq!(fp.issues.len(), 1);
    assert_eq!(fp.issues[0].line, Some(8));
    let s = only(&fp);
    // No meta.json: the folder names the session and its start.
    assert_eq!(
        s.meta.id.as_str(),
        "mistral-vibe:session_20260801_120000_0badf00d"
    );
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-08-01T12:00:00.000Z")
    );
    assert!(s.usage.is_empty());
    assert_eq!(s.messages.len(), 6, "replayed lines are not repeated");
    let users: Vec<_> = s
        .turns
        .iter()
        .map(|t| t.user_message.as_deref().unwrap())
        .collect();
    assert_eq!(users, ["Say alpha", "Say gamma"]);
    let off: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| !m.on_main_chain)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(off, ["Say beta", "beta"]);
}

fn parse_resumed(path: &Path, first: &trail_sources::FileParse) -> trail_sources::FileParse {
    let state = first.state.clone().unwrap();
    MistralVibe
        .parse(ParseRequest {
            max_bytes: None,
            path,
            resume: Some(Resume {
                offset: first.bytes_parsed,
                line: first.lines,
                state: &state,
            }),
        })
        .unwrap()
}

/// Copies a fixture's first `lines` lines (and its meta.json) into a scratch session folder;
/// returns the messages path and the remaining bytes.
fn split_fixture(dir: &Path, from: &Path, lines: usize) -> (PathBuf, Vec<u8>) {
    let bytes = std::fs::read(from).unwrap();
    let split = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(lines - 1)
        .map(|(i, _)| i + 1)
        .unwrap();
    let folder = dir.join("session_20260801_101500_a1b2c3d4");
    std::fs::create_dir_all(&folder).unwrap();
    let meta = from.with_file_name("meta.json");
    if meta.exists() {
        std::fs::copy(meta, folder.join("meta.json")).unwrap();
    }
    let path = folder.join("messages.jsonl");
    std::fs::write(&path, &bytes[..split]).unwrap();
    (path, bytes[split..].to_vec())
}

fn append(path: &Path, rest: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(rest).unwrap();
}

#[test]
fn append_resume_equals_full_parse() {
    let dir = tempfile::tempdir().unwrap();
    // Split after the edit/bash calls (line 4) so their results cross the boundary.
    let (path, rest) = split_fixture(dir.path(), &fixture(MAIN), 4);
    assert!(MistralVibe.appendable(&path));
    let first = parse_whole(&MistralVibe, &path).unwrap();
    append(&path, &rest);
    let delta = parse_resumed(&path, &first);
    let d = only(&delta);
    assert_eq!(d.mode, UpdateMode::Append);
    assert_eq!(delta.bytes_read, rest.len() as u64);
    let full = parse_whole(&MistralVibe, &path).unwrap();
    let s = only(&full);
    let mut joined = only(&first).messages.clone();
    joined.extend(d.messages.iter().cloned());
    assert_eq!(joined, s.messages);
    assert_eq!(d.turn_count, s.turn_count);
    // The totals are one row, rewritten by each parse.
    assert_eq!(d.usage, s.usage);
    let bash = d
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("call_bash"))
        .unwrap();
    assert_eq!(bash.tool_name.as_deref(), Some("bash"));
}

#[test]
fn a_replay_in_appended_lines_reads_the_file_again() {
    let dir = tempfile::tempdir().unwrap();
    let (path, rest) = split_fixture(dir.path(), &fixture(REWOUND), 4);
    let first = parse_whole(&MistralVibe, &path).unwrap();
    assert_eq!(only(&first).turn_count, 2);
    append(&path, &rest);
    let again = parse_resumed(&path, &first);
    let s = only(&again);
    assert_eq!(s.mode, UpdateMode::Replace);
    assert_eq!(s.turn_count, 2);
    assert_eq!(s.messages.len(), 6);
    assert_eq!(again.issues.len(), 1);
}
