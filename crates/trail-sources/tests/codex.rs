//! Codex rollout parsing: corpus files, hand-written fixtures, append-resume and fuzzing.

mod common;

use common::{count_kind, only};

use std::io::Write;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use trail_model::{MessageKind, RefType, Role, Session, UpdateMode};
use trail_sources::codex::Codex;
use trail_sources::{FileParse, ParseRequest, Resume, Source};

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&Codex, path).unwrap()
}

/// (input, output, cache_read, cache_creation, reasoning) summed over usage rows.
fn usage_sums(s: &Session) -> (u64, u64, u64, u64, u64) {
    s.usage.iter().fold((0, 0, 0, 0, 0), |a, u| {
        (
            a.0 + u.input_tokens,
            a.1 + u.output_tokens,
            a.2 + u.cache_read_tokens,
            a.3 + u.cache_creation_tokens,
            a.4 + u.reasoning_tokens,
        )
    })
}

fn fixture(name: &str) -> PathBuf {
    common::fixtures("codex").join(name)
}

const FULL: &str = "rollout-2026-01-05T09-00-00-0199a1b2-0000-7000-8000-00000000c0de.jsonl";
const MALFORMED: &str = "rollout-2026-01-05T10-00-00-0199a1b2-0000-7000-8000-0000000000b2.jsonl";
const SUBAGENT: &str = "rollout-2026-01-05T11-00-00-0199a1b2-0000-7000-8000-0000000000b3.jsonl";
const LEGACY: &str = "rollout-2025-05-01T08-00-00-0199a1b2-0000-7000-8000-0000000000b4.jsonl";

// Expected corpus numbers were counted with a python one-liner over the raw lines, independent
// of the parser:
//   prompts = response_item/message role=user whose text does not start with '<';
//   tool calls = response_item types function_call|custom_tool_call|local_shell_call|
//     tool_search_call|web_search_call|image_generation_call;
//   results = function_call_output|custom_tool_call_output|tool_search_output;
//   usage = token_count events whose total_token_usage differs from the previous one (or,
//     without totals, that carry input/prompt numbers).
// Results: 0.146: prompts 1, calls 8, results 6, one total {16341 in, 3584 cached, 81 out,
// 63 reasoning}; 050-legacy: no messages but a {prompt 1420, completion 910} count;
// 0.42: prompt 1, assistant 1, payload-level {120 in, 45 out}.
#[test]
fn corpus_files_parse_with_expected_counts() {
    let Some(dir) = common::shared_corpus("codex") else {
        return;
    };
    let files = common::files_in(&dir);
    assert_eq!(files.len(), 3, "corpus changed: update the expectations");
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let fp = parse(path);
        let s = only(&fp);
        assert!(fp.issues.is_empty(), "{name}: {:?}", fp.issues);
        let prompts = count_kind(s, MessageKind::Prompt);
        let calls = count_kind(s, MessageKind::ToolCall);
        let results = count_kind(s, MessageKind::ToolResult);
        match name.as_str() {
            "agentsessions-fixture-codex-0.146.jsonl" => {
                assert_eq!(s.meta.id.as_str(), "019fc8be-3658-7ca3-9e29-000000000000");
                assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/repo"));
                assert_eq!(s.meta.branch.as_deref(), Some("main"));
                // repository_url is not on GitHub: left for ingest to fill.
                assert_eq!(s.meta.repository, None);
                assert_eq!(s.meta.agent_version.as_deref(), Some("0.146.0"));
                assert_eq!((prompts, calls, results), (1, 8, 6));
                assert_eq!(s.turn_count, 1);
                assert_eq!(s.usage.len(), 1);
                assert_eq!(usage_sums(s), (16341 - 3584, 81, 3584, 0, 63));
                assert_eq!(s.checkpoints.len(), 6);
                assert_eq!(s.models[0], "gpt-5.6-luna");
                // The shell custom call (`call-1`) is answered after other records.
                let r = s
                    .messages
                    .iter()
                    .find(|m| {
                        m.kind() == MessageKind::ToolResult
                            && m.tool_call_id.as_deref() == Some("call-1")
                    })
                    .unwrap();
                assert_eq!(r.tool_name.as_deref(), Some("shell"));
                assert_eq!(r.tool_output.as_deref(), Some("a.txt\nb.txt\n"));
                assert!(s.files.iter().any(|f| f.path == "/tmp/repo/a.txt"));
            }
            "agentsessions-fixture-codex-050-legacy.jsonl" => {
                assert_eq!(s.meta.id.as_str(), "codex:test-legacy-session");
                assert_eq!((prompts, calls, results), (0, 0, 0));
                // Two `turn.completed` events of an unknown shape, kept as Unknown.
                assert_eq!(count_kind(s, MessageKind::Unknown), 2);
                assert_eq!(s.usage.len(), 1);
                assert_eq!(usage_sums(s), (1420, 910, 0, 0, 0));
            }
            "cass-fixture-codex-rollout-tool-call-0.42.jsonl" => {
                assert_eq!(s.meta.id.as_str(), "codex:tool-call-session-id");
                assert_eq!(s.meta.branch.as_deref(), Some("main"));
                assert_eq!((prompts, calls, results), (1, 0, 0));
                assert_eq!(count_kind(s, MessageKind::Text), 1);
                // The `event_msg/tool_call` shape is not Codex's: kept as Unknown.
                assert_eq!(count_kind(s, MessageKind::Unknown), 1);
                assert_eq!(usage_sums(s), (120, 45, 0, 0, 0));
            }
            other => panic!("unexpected corpus file {other}"),
        }
    }
}

#[test]
fn full_fixture_covers_every_record_type() {
    let fp = parse(&fixture(FULL));
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    let s = only(&fp);
    assert_eq!(s.mode, UpdateMode::Replace);
    assert_eq!(s.meta.id.as_str(), "0199a1b2-0000-7000-8000-00000000c0de");
    assert_eq!(s.meta.repository.as_deref(), Some("acme/kettle"));
    assert_eq!(s.meta.branch.as_deref(), Some("feature/steam"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/projects/kettle"));
    assert_eq!(s.meta.title.as_deref(), Some("Boil timer fix"));
    assert_eq!(s.meta.agent_version.as_deref(), Some("0.60.0"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-01-05T09:00:00.000Z")
    );
    assert_eq!(
        s.meta.updated_at.as_deref(),
        Some("2026-01-05T09:01:09.000Z")
    );
    let kinds: Vec<(Role, MessageKind)> = s.messages.iter().map(|m| (m.role(), m.kind())).collect();
    use MessageKind::*;
    assert_eq!(
        kinds,
        vec![
            (Role::User, Meta),          // environment_context
            (Role::System, Meta),        // developer message
            (Role::User, Prompt),        // first prompt
            (Role::Assistant, Thinking), // reasoning summary
            (Role::Assistant, ToolCall), // shell
            (Role::Tool, ToolResult),    // exit 0
            (Role::Assistant, ToolCall), // apply_patch
            (Role::Tool, ToolResult),    //
            (Role::Assistant, ToolCall), // local_shell
            (Role::Tool, ToolResult),    // exit 101
            (Role::Assistant, ToolCall), // web search
            (Role::Assistant, Text),     // answer
            (Role::User, Prompt),        // second prompt
            (Role::System, Summary),     // compacted
            (Role::System, Compaction),  // context_compacted
            (Role::System, Error),       // error event
            (Role::System, Meta),        // turn_aborted
            (Role::System, Unknown),     // unknown top-level type
            (Role::System, Unknown),     // unknown response item
            (Role::System, Unknown),     // unknown event
        ]
    );
    for (i, m) in s.messages.iter().enumerate() {
        assert_eq!(m.seq as usize, i);
        assert!(m.on_main_chain);
    }
    assert_eq!(s.messages[1].turn_index, None);
    assert_eq!(s.messages[11].turn_index, Some(0));
    assert_eq!(s.messages[19].turn_index, Some(1));
    assert_eq!(s.turn_count, 2);
    assert_eq!(s.turns.len(), 2);
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some("Fixed in https://github.com/acme/kettle/pull/13")
    );
    // Tool pairs share ids and names; exit codes decide is_error.
    let m = &s.messages;
    assert_eq!(m[4].tool_name.as_deref(), Some("shell"));
    assert_eq!(m[5].tool_call_id.as_deref(), Some("c1"));
    assert!(!m[5].is_error);
    assert_eq!(m[7].tool_name.as_deref(), Some("apply_patch"));
    assert!(m[6]
        .tool_input
        .as_deref()
        .unwrap()
        .starts_with("\"*** Begin Patch"));
    assert_eq!(m[8].tool_name.as_deref(), Some("local_shell"));
    assert_eq!(m[9].tool_name.as_deref(), Some("local_shell"));
    assert!(m[9].is_error);
    assert_eq!(m[11].model.as_deref(), Some("gpt-5-codex"));
    assert!(m[17].extra.as_deref().unwrap().contains("future_kind"));
    // Derived rows.
    let files: Vec<(&str, &str)> = s
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.tool_name.as_deref().unwrap()))
        .collect();
    assert_eq!(
        files,
        vec![("src/timer.rs", "shell"), ("src/start.rs", "apply_patch")]
    );
    let refs: Vec<(RefType, &str)> = s
        .refs
        .iter()
        .map(|r| (r.ref_type, r.value.as_str()))
        .collect();
    assert_eq!(
        refs,
        vec![
            (RefType::Issue, "acme/kettle#12"),
            (RefType::Pr, "acme/kettle#13")
        ]
    );
    assert_eq!(s.checkpoints.len(), 1);
    assert_eq!(s.checkpoints[0].number, 1);
    assert_eq!(
        s.checkpoints[0].overview.as_deref(),
        Some("Summary: timer fixed, test pending")
    );
    assert_eq!(s.models, vec!["gpt-5-codex", "gpt-5.1-codex"]);
}

#[test]
fn cumulative_counters_become_per_request_deltas() {
    let fp = parse(&fixture(FULL));
    let s = only(&fp);
    // Totals 1000/200c/50o/20r, the same again (no row), 2500/1200/130/40, 3000/1500/200/40.
    let rows: Vec<(u64, u64, u64, u64)> = s
        .usage
        .iter()
        .map(|u| {
            (
                u.input_tokens,
                u.cache_read_tokens,
                u.output_tokens,
                u.reasoning_tokens,
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![(800, 200, 50, 20), (500, 1000, 80, 20), (200, 300, 70, 0)]
    );
    // The four columns add up to the last cumulative input + output.
    assert_eq!(s.usage.iter().map(|u| u.total()).sum::<u64>(), 3000 + 200);
    assert_eq!(s.usage[0].model.as_deref(), Some("gpt-5-codex"));
    assert_eq!(s.usage[2].model.as_deref(), Some("gpt-5.1-codex"));
    let keys: std::collections::HashSet<&str> =
        s.usage.iter().map(|u| u.request_key.as_str()).collect();
    assert_eq!(keys.len(), 3);
    assert!(s.usage.iter().all(|u| u.tokens_known));
}

#[test]
fn subagent_replayed_counters_are_not_counted() {
    let fp = parse(&fixture(SUBAGENT));
    let s = only(&fp);
    let parent = s.meta.parent.as_ref().unwrap();
    assert_eq!(
        parent.session_id.as_str(),
        "0199a1b2-0000-7000-8000-00000000c0de"
    );
    assert_eq!(
        parent.agent_ref.as_deref(),
        Some("0199a1b2-0000-7000-8000-0000000000b3")
    );
    // The two counts stamped in the spawn second (totals 2500/1200c/130o/40r) only seed the
    // baseline; then 2900/1400/160/45 and 3100/1500/170/45.
    let rows: Vec<(u64, u64, u64, u64)> = s
        .usage
        .iter()
        .map(|u| {
            (
                u.input_tokens,
                u.cache_read_tokens,
                u.output_tokens,
                u.reasoning_tokens,
            )
        })
        .collect();
    assert_eq!(rows, vec![(200, 200, 30, 5), (100, 100, 10, 0)]);
    assert_eq!(usage_sums(s), (300, 40, 300, 0, 5));
    assert_eq!(s.usage[0].model.as_deref(), Some("gpt-5-codex-mini"));
}

#[test]
fn malformed_line_is_reported_and_torn_line_left() {
    let path = fixture(MALFORMED);
    let fp = parse(&path);
    assert_eq!(fp.issues.len(), 1);
    assert_eq!(fp.issues[0].line, Some(3));
    assert_eq!(fp.issues[0].excerpt.as_deref(), Some("{not json at all"));
    let s = only(&fp);
    let texts: Vec<&str> = s.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, vec!["hello", "hi"]);
    let bytes = std::fs::read(&path).unwrap();
    let complete = bytes.iter().rposition(|b| *b == b'\n').unwrap() as u64 + 1;
    assert_eq!(fp.bytes_parsed, complete);
    assert!(fp.bytes_parsed < bytes.len() as u64);
    assert_eq!(fp.lines, 4);
}

#[test]
fn legacy_unwrapped_lines() {
    let fp = parse(&fixture(LEGACY));
    assert!(fp.issues.is_empty());
    let s = only(&fp);
    assert_eq!(s.meta.id.as_str(), "0199a1b2-0000-7000-8000-0000000000b4");
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2025-05-01T08:00:00.000Z")
    );
    let kinds: Vec<MessageKind> = s.messages.iter().map(|m| m.kind()).collect();
    assert_eq!(
        kinds,
        vec![
            MessageKind::Prompt,
            MessageKind::ToolCall,
            MessageKind::ToolResult,
            MessageKind::Text
        ]
    );
    assert_eq!(s.messages[2].tool_name.as_deref(), Some("shell"));
    assert!(!s.messages[2].is_error);
    assert_eq!(s.meta.title.as_deref(), Some("list files"));
}

#[test]
fn append_resume_equals_full_parse() {
    let full_bytes = std::fs::read(fixture(FULL)).unwrap();
    // Split after the local_shell call (line 15) so an open call and a cumulative total cross
    // the boundary.
    let split = full_bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(14)
        .map(|(i, _)| i + 1)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FULL);
    std::fs::write(&path, &full_bytes[..split]).unwrap();
    assert!(Codex.appendable(&path));
    let first = parse(&path);
    assert_eq!(first.bytes_parsed, split as u64);
    let state = first.state.clone().unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(&full_bytes[split..]).unwrap();
    drop(f);
    let delta = Codex
        .parse(ParseRequest {
            max_bytes: None,
            path: &path,
            resume: Some(Resume {
                offset: first.bytes_parsed,
                line: first.lines,
                state: &state,
            }),
        })
        .unwrap();
    assert_eq!(delta.bytes_read, (full_bytes.len() - split) as u64);
    assert_eq!(delta.bytes_parsed, full_bytes.len() as u64);
    let d = only(&delta);
    assert_eq!(d.mode, UpdateMode::Append);
    assert!(d.turns.is_empty());
    assert_eq!(d.messages[0].seq, only(&first).messages.len() as u32);
    let scratch = parse(&path);
    let s = only(&scratch);
    let mut joined = only(&first).messages.clone();
    joined.extend(d.messages.iter().cloned());
    assert_eq!(joined, s.messages);
    let mut usage = only(&first).usage.clone();
    usage.extend(d.usage.iter().cloned());
    assert_eq!(usage, s.usage);
    let mut files = only(&first).files.clone();
    files.extend(d.files.iter().cloned());
    assert_eq!(files, s.files);
    assert_eq!(d.turn_count, s.turn_count);
    assert_eq!(d.meta, s.meta);
    // The shell result after the split still knows its call's name.
    let r = d
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("c3"))
        .unwrap();
    assert_eq!(r.tool_name.as_deref(), Some("local_shell"));
}

#[test]
fn discover_and_detect() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let day = home.join("sessions/2026/01/05");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::copy(fixture(FULL), day.join(FULL)).unwrap();
    std::fs::write(day.join("notes.txt"), "x").unwrap();
    let arch = home.join("archived_sessions");
    std::fs::create_dir_all(&arch).unwrap();
    std::fs::copy(fixture(FULL), arch.join(FULL)).unwrap();
    std::fs::copy(fixture(LEGACY), arch.join(LEGACY)).unwrap();
    let found = Codex.discover(&[home.to_path_buf(), home.join("missing")]);
    assert_eq!(found, vec![arch.join(LEGACY), day.join(FULL)]);
    let head = std::fs::read(fixture(FULL)).unwrap();
    assert!(Codex.detect(Path::new("/x/other.jsonl"), &head));
    assert!(!Codex.detect(
        Path::new("/x/other.jsonl"),
        br#"{"type":"user","message":{"role":"user"}}"#
    ));
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-x.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        let _ = Codex.parse(ParseRequest { max_bytes: None, path: &path, resume: None });
        let _ = Codex.parse(ParseRequest { max_bytes: None,
            path: &path,
            resume: Some(Resume { offset: 0, line: 0, state: &bytes }),
        });
    }

    #[test]
    fn arbitrary_line_sequences_never_panic(picks in proptest::collection::vec((0usize..40, 0usize..6), 0..40)) {
        // Lines of the fixtures, shuffled and mangled.
        let full = std::fs::read_to_string(fixture(FULL)).unwrap();
        let sub = std::fs::read_to_string(fixture(SUBAGENT)).unwrap();
        let lines: Vec<&str> = full.lines().chain(sub.lines()).collect();
        let mut text = String::new();
        for (i, mangle) in picks {
            let line = lines[i % lines.len()];
            match mangle {
                0 => text.push_str(&line[..line.len() / 2]),
                1 => text.push_str(&line.replace("\"payload\"", "\"p\"")),
                2 => text.push_str(&line.replace(":{", ":[").replace('}', "]")),
                3 => text.push_str("null"),
                _ => text.push_str(line),
            }
            text.push('\n');
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-y.jsonl");
        std::fs::write(&path, &text).unwrap();
        let fp = Codex.parse(ParseRequest { max_bytes: None, path: &path, resume: None }).unwrap();
        for s in &fp.sessions {
            for (i, m) in s.messages.iter().enumerate() {
                prop_assert_eq!(m.seq as usize, i);
            }
        }
    }
}

#[test]
fn bundled_demo_rollout_parses() {
    let home = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home/.codex");
    let found = Codex.discover(&[home]);
    assert_eq!(found.len(), 1);
    let fp = parse(&found[0]);
    assert!(fp.issues.is_empty());
    let s = only(&fp);
    assert_eq!(s.meta.repository.as_deref(), Some("demo-org/recipe-box"));
    assert_eq!(s.turn_count, 1);
    assert_eq!(count_kind(s, MessageKind::ToolCall), 3);
    assert_eq!(count_kind(s, MessageKind::ToolResult), 3);
    // Final totals: 31200 input (22528 cached), 1020 output (512 reasoning).
    assert_eq!(usage_sums(s), (31200 - 22528, 1020, 22528, 0, 512));
    let files: Vec<&str> = s.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files[..2], ["src/scale.py", "tests/test_scale.py"]);
}
