//! Claude Code parser tests: the shared corpus (read in place), the bundled sample home, and
//! edge cases built in temp dirs.

mod common;

use common::count_kind;

use std::io::Write;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use trail_model::{MessageKind, Session, UpdateMode};
use trail_sources::claude_code::ClaudeCode;
use trail_sources::{FileParse, ParseRequest, Resume, Source};

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&ClaudeCode, path).expect("parse")
}

fn tokens(s: &Session) -> u64 {
    s.usage.iter().map(|u| u.total()).sum()
}

fn main_session(p: &FileParse) -> &Session {
    p.sessions
        .iter()
        .find(|s| s.meta.parent.is_none())
        .expect("a main session")
}

#[test]
fn every_corpus_file_parses() {
    let Some(dir) = common::shared_corpus("claude-code") else {
        return;
    };
    for f in common::files_in(&dir) {
        let p = parse(&f);
        assert!(p.bytes_parsed > 0, "{}", f.display());
        assert!(!p.sessions.is_empty(), "{} gave no session", f.display());
    }
}

/// Expected values counted independently of trail with Python over the raw lines:
/// prompts = user entries (not isMeta/isCompactSummary) with text that is not a tool result;
/// tools = `tool_use` blocks; tokens = sum over (message.id, requestId) of the largest
/// input+output+cache_creation+cache_read, skipping `<synthetic>`; split by `isSidechain`.
#[test]
fn corpus_counts_match_an_independent_count() {
    let Some(dir) = common::shared_corpus("claude-code") else {
        return;
    };
    // A /init session: one prompt, 12 tool calls, 7 API requests.
    let p = parse(&dir.join("ccviewer-init-command.jsonl"));
    assert_eq!(p.sessions.len(), 1);
    let s = main_session(&p);
    assert_eq!(s.turns.len(), 1);
    assert_eq!(count_kind(s, MessageKind::ToolCall), 12);
    assert_eq!(s.usage.len(), 7);
    assert_eq!(tokens(s), 116_963);

    // Inline Task sidechains: 2 main prompts, 11 main tool calls; 5 sidechain trees with 156
    // tool calls and 3,667,587 tokens between them, none counted in the parent.
    let p = parse(&dir.join("ccviewer-orchestrator-nextjs-todo-sidechains.jsonl"));
    assert_eq!(p.sessions.len(), 6);
    let s = main_session(&p);
    assert_eq!(s.turns.len(), 2);
    assert_eq!(count_kind(s, MessageKind::ToolCall), 11);
    assert_eq!(tokens(s), 170_994);
    let subs: Vec<&Session> = p
        .sessions
        .iter()
        .filter(|s| s.meta.parent.is_some())
        .collect();
    assert_eq!(subs.len(), 5);
    assert_eq!(
        subs.iter()
            .map(|s| count_kind(s, MessageKind::ToolCall))
            .sum::<usize>(),
        156
    );
    assert_eq!(subs.iter().map(|s| tokens(s)).sum::<u64>(), 3_667_587);
    // Each sidechain is linked to the Task call whose prompt started it.
    assert!(subs
        .iter()
        .all(|s| s.meta.parent.as_ref().unwrap().tool_call_id.is_some()));

    // Rewind then compaction: 5 prompts, one on an abandoned branch; the compaction summary is
    // a checkpoint; 5 requests, 75 tokens.
    let p = parse(&dir.join("claudecodelog-fixture-dag-compact-after-rewind.jsonl"));
    let s = main_session(&p);
    assert_eq!(
        s.turns
            .iter()
            .map(|t| t.user_message.clone().unwrap())
            .collect::<Vec<_>>(),
        vec!["Start", "Second attempt", "Keep going", "After compaction"]
    );
    assert_eq!(s.checkpoints.len(), 1);
    assert!(s.checkpoints[0]
        .overview
        .as_deref()
        .unwrap()
        .contains("Summary: the user asked for a plan"));
    assert_eq!(tokens(s), 75);
    let abandoned = s.messages.iter().filter(|m| !m.on_main_chain).count();
    assert_eq!(
        abandoned, 2,
        "the first attempt's prompt and answer are kept, off the chain"
    );

    // A subagent transcript: every line is a sidechain: 1 prompt, 9 tool calls, 299,315 tokens.
    let p = parse(&dir.join("randlee-subagents-agent-a53b173.jsonl"));
    let total_tools: usize = p
        .sessions
        .iter()
        .map(|s| count_kind(s, MessageKind::ToolCall))
        .sum();
    assert_eq!(total_tools, 9);
    assert_eq!(p.sessions.iter().map(tokens).sum::<u64>(), 299_315);
}

#[test]
fn schema_zoo_titles_and_unknown_types() {
    let Some(dir) = common::shared_corpus("claude-code") else {
        return;
    };
    let p = parse(&dir.join("agentsessions-fixture-schema-rich-2.1.80.jsonl"));
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    let s = main_session(&p);
    // custom-title beats ai-title, summary and the first prompt.
    assert_eq!(s.meta.title.as_deref(), Some("Stage0 small fixture"));
    // The pr-link record becomes a ref... only for GitHub URLs (this one is example.invalid).
    assert!(s.refs.is_empty());
    // Unknown chain-node types are kept as messages.
    assert!(p.sessions.iter().any(|s| s
        .messages
        .iter()
        .any(|m| m.kind == Some(MessageKind::Unknown))));
    // A malformed file: bad lines reported by number, the rest kept.
    let p = parse(&dir.join("claudecodelog-fixture-edge-cases-spaced-json.jsonl"));
    let lines: Vec<u64> = p.issues.iter().filter_map(|i| i.line).collect();
    assert_eq!(lines, vec![11, 13, 14, 15, 16]);
    assert!(main_session(&p).messages.len() >= 10);
}

fn sample_home() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home/.claude/projects")
}

#[test]
fn sample_session_with_subagent_files_and_refs() {
    let root = sample_home();
    let files = ClaudeCode.discover(std::slice::from_ref(&root));
    assert_eq!(files.len(), 2, "{files:?}");
    let main = files
        .iter()
        .find(|f| !f.to_string_lossy().contains("agent-"))
        .unwrap();
    let p = parse(main);
    let s = main_session(&p);
    assert_eq!(
        s.meta.title.as_deref(),
        Some("weather-cli: --units flag and PR")
    );
    assert_eq!(s.turns.len(), 2);
    assert_eq!(s.meta.branch.as_deref(), Some("feature/units"));
    // Streamed chunks of one request (msg_01A/req_01A x3) count once, with the largest total.
    assert_eq!(s.usage.len(), 9);
    let first = s
        .usage
        .iter()
        .find(|u| u.request_key == "msg_01A:req_01A")
        .unwrap();
    assert_eq!(first.output_tokens, 160);
    let touched: Vec<&str> = s.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        touched,
        vec![
            "/home/demo/projects/weather-cli/src/cli.rs",
            "/home/demo/projects/weather-cli/src/render.rs"
        ]
    );
    let mut refs: Vec<String> = s
        .refs
        .iter()
        .map(|r| format!("{}:{}", r.ref_type.as_str(), r.value))
        .collect();
    refs.sort();
    assert_eq!(
        refs,
        vec![
            "commit:4f2a9c1",
            "issue:demo-org/weather-cli#7",
            "pr:demo-org/weather-cli#12"
        ]
    );
    // The Task result names its subagent.
    assert!(s
        .messages
        .iter()
        .any(|m| m.agent_ref.as_deref() == Some("b7d41e2")));
    // The bash failure is an error result.
    assert!(s
        .messages
        .iter()
        .any(|m| m.kind == Some(MessageKind::ToolResult) && m.is_error));

    let sub = files_sub(&files);
    let p = parse(&sub);
    assert_eq!(p.sessions.len(), 1);
    let a = &p.sessions[0];
    let parent = a.meta.parent.as_ref().unwrap();
    assert_eq!(parent.session_id.as_str(), s.meta.id.as_str());
    assert_eq!(parent.agent_ref.as_deref(), Some("b7d41e2"));
    assert_eq!(a.meta.id.as_str(), format!("{}:agent-b7d41e2", s.meta.id));
    assert_eq!(a.turns.len(), 1);
}

fn files_sub(files: &[PathBuf]) -> PathBuf {
    files
        .iter()
        .find(|f| f.to_string_lossy().contains("agent-"))
        .unwrap()
        .clone()
}

// ------------------------------------------------------------------------------------------
// Edge cases built in temp dirs
// ------------------------------------------------------------------------------------------

fn user_line(uuid: &str, parent: Option<&str>, sid: &str, text: &str) -> String {
    serde_json::json!({"type":"user","uuid":uuid,"parentUuid":parent,"sessionId":sid,
        "timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","message":{"role":"user","content":text}})
    .to_string()
}

fn assistant_line(uuid: &str, parent: &str, sid: &str, text: &str, side: bool) -> String {
    serde_json::json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"sessionId":sid,"isSidechain":side,
        "timestamp":"2026-01-01T00:00:01.000Z","requestId":format!("req-{uuid}"),
        "message":{"id":format!("msg-{uuid}"),"model":"claude-x","role":"assistant",
        "content":[{"type":"text","text":text}],"usage":{"input_tokens":1,"output_tokens":2}}})
    .to_string()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn torn_last_line_is_left_for_the_next_index() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = format!(
        "{}\n{}\n",
        user_line("u1", None, "s", "hello"),
        assistant_line("a1", "u1", "s", "hi", false)
    );
    let complete = body.len() as u64;
    let next = user_line("u2", Some("a1"), "s", "more");
    body.push_str(&next[..next.len() / 2]);
    let p = write(dir.path(), "s.jsonl", body.as_bytes());
    let parsed = parse(&p);
    assert!(parsed.issues.is_empty());
    assert_eq!(parsed.bytes_parsed, complete);
    assert_eq!(main_session(&parsed).turns.len(), 1);
    // The writer finishes the line: a resumed parse picks it up.
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(&next.as_bytes()[next.len() / 2..]).unwrap();
    f.write_all(b"\n").unwrap();
    let state = parsed.state.clone().unwrap();
    let resumed = ClaudeCode
        .parse(ParseRequest {
            max_bytes: None,
            path: &p,
            resume: Some(Resume {
                offset: parsed.bytes_parsed,
                line: parsed.lines,
                state: &state,
            }),
        })
        .unwrap();
    assert_eq!(resumed.bytes_read as usize, next.len() + 1);
    let s = &resumed.sessions[0];
    assert_eq!(s.mode, UpdateMode::Append);
    assert_eq!(s.messages.len(), 1);
    assert_eq!(s.messages[0].seq, 2);
    assert_eq!(s.messages[0].turn_index, Some(1));
    assert_eq!(s.turn_count, 2);
}

#[test]
fn malformed_middle_line_and_invalid_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = Vec::new();
    body.extend_from_slice(user_line("u1", None, "s", "one").as_bytes());
    body.extend_from_slice(b"\n{\"type\":\"user\", broken\n");
    let mut bad = user_line("u2", Some("u1"), "s", "caf\u{e9}").into_bytes();
    // Replace the UTF-8 e-acute with a lone continuation byte.
    let pos = bad.windows(2).position(|w| w == [0xc3, 0xa9]).unwrap();
    bad.splice(pos..pos + 2, [0xff]);
    body.extend_from_slice(&bad);
    body.push(b'\n');
    body.extend_from_slice(assistant_line("a2", "u2", "s", "ok", false).as_bytes());
    body.push(b'\n');
    let p = write(dir.path(), "s.jsonl", &body);
    let parsed = parse(&p);
    assert_eq!(parsed.issues.len(), 2, "{:?}", parsed.issues);
    assert_eq!(parsed.issues[0].line, Some(2));
    assert!(parsed.issues[0].reason.starts_with("invalid JSON"));
    assert_eq!(parsed.issues[1].line, Some(3));
    assert!(parsed.issues[1].reason.contains("UTF-8"));
    let s = main_session(&parsed);
    assert_eq!(s.turns.len(), 2);
    assert_eq!(s.turns[1].user_message.as_deref(), Some("caf\u{fffd}"));
}

#[test]
fn empty_file_gives_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "e.jsonl", b"");
    let parsed = parse(&p);
    assert!(parsed.sessions.is_empty());
    assert!(parsed.issues.is_empty());
    assert_eq!(parsed.bytes_parsed, 0);
}

#[test]
fn parent_cycle_is_broken() {
    let dir = tempfile::tempdir().unwrap();
    // u1 -> a2 -> u1: a cycle. The walk stops instead of looping.
    let body = format!(
        "{}\n{}\n{}\n",
        user_line("u1", Some("a2"), "s", "first"),
        assistant_line("a1", "u1", "s", "reply", false),
        assistant_line("a2", "a1", "s", "loop", false)
    );
    let p = write(dir.path(), "s.jsonl", body.as_bytes());
    let parsed = parse(&p);
    let s = main_session(&parsed);
    assert_eq!(s.messages.len(), 3);
    assert_eq!(s.turns.len(), 1);
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some("reply\n\nloop")
    );
}

#[test]
fn orphan_subagent_and_old_layout_sharing_parent_id() {
    let dir = tempfile::tempdir().unwrap();
    let projects = dir.path().join("projects/-w");
    // New layout, parent session file absent: an orphan, still indexed, linked by id only.
    let orphan = write(
        &projects,
        "dead-beef/subagents/agent-zz9.jsonl",
        format!(
            "{}\n{}\n",
            user_line("x1", Some("missing-parent"), "dead-beef", "search"),
            assistant_line("x2", "x1", "dead-beef", "found", true)
        )
        .as_bytes(),
    );
    // Old layout: entries carry the parent's sessionId.
    let old = write(
        &projects,
        "agent-old1.jsonl",
        format!(
            "{}\n{}\n",
            user_line("o1", None, "parent-123", "look around"),
            assistant_line("o2", "o1", "parent-123", "looked", true)
        )
        .as_bytes(),
    );
    let parent = write(
        &projects,
        "parent-123.jsonl",
        format!("{}\n", user_line("p1", None, "parent-123", "main work")).as_bytes(),
    );
    let found = ClaudeCode.discover(&[dir.path().to_path_buf()]);
    assert_eq!(found.len(), 3);

    let p = parse(&orphan);
    assert_eq!(p.sessions.len(), 1);
    let s = &p.sessions[0];
    assert_eq!(s.meta.id.as_str(), "dead-beef:agent-zz9");
    assert_eq!(
        s.meta.parent.as_ref().unwrap().session_id.as_str(),
        "dead-beef"
    );
    assert_eq!(s.turns.len(), 1, "the orphan's first entry is a root");

    let p = parse(&old);
    let s = &p.sessions[0];
    assert_eq!(s.meta.id.as_str(), "parent-123:agent-old1");
    assert_eq!(
        s.meta.parent.as_ref().unwrap().session_id.as_str(),
        "parent-123"
    );
    let p = parse(&parent);
    assert_eq!(
        p.sessions[0].meta.id.as_str(),
        "parent-123",
        "distinct from its subagent"
    );
}

#[test]
fn resumed_parse_equals_a_full_parse() {
    let dir = tempfile::tempdir().unwrap();
    let (p, head) = sample_grown_after_nine_lines(dir.path());
    assert_resumes_as_a_full_parse(&p, &head, head.state.as_deref().unwrap());
}

/// The sample's main log cut after its 9th line and parsed, then written whole (as if the
/// rest had been appended since): its path and the parse of the head.
fn sample_grown_after_nine_lines(dir: &Path) -> (PathBuf, FileParse) {
    let files = ClaudeCode.discover(&[sample_home()]);
    let main = files
        .iter()
        .find(|f| !f.to_string_lossy().contains("agent-"))
        .unwrap();
    let bytes = std::fs::read(main).unwrap();
    let p = write(dir, "7c1e2f40.jsonl", &bytes[..line_end(&bytes, 9)]);
    let head = parse(&p);
    std::fs::write(&p, &bytes).unwrap();
    (p, head)
}

/// The byte offset just after the `n`th line of `bytes`.
fn line_end(bytes: &[u8], n: usize) -> usize {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(n - 1)
        .unwrap()
        .0
        + 1
}

/// Resumes the file at `p` (grown since `head` was parsed) from `state`, and checks that the
/// head and what the resume adds make what a full parse of the file makes.
fn assert_resumes_as_a_full_parse(p: &Path, head: &FileParse, state: &[u8]) {
    let tail = ClaudeCode
        .parse(ParseRequest {
            max_bytes: None,
            path: p,
            resume: Some(Resume {
                offset: head.bytes_parsed,
                line: head.lines,
                state,
            }),
        })
        .unwrap();
    let full = parse(p);
    assert_eq!(
        tail.bytes_read,
        full.bytes_read - head.bytes_read,
        "the resume read only what was appended"
    );
    let (h, f) = (main_session(head), main_session(&full));
    // What was appended may not touch the main session (a sidechain's lines only).
    let appended = tail.sessions.iter().find(|s| s.meta.id == f.meta.id);
    let mut merged = h.messages.clone();
    if let Some(t) = appended {
        for r in &t.relinks {
            let m = merged.iter_mut().find(|m| m.seq == r.seq).unwrap();
            m.turn_index = r.turn_index;
            m.on_main_chain = r.on_main_chain;
        }
        merged.extend(t.messages.iter().cloned());
    }
    // Tool names are filled within a parse; compare what the store keeps per message.
    let strip = |ms: &[trail_model::Message]| {
        ms.iter()
            .map(|m| {
                (
                    m.seq,
                    m.kind,
                    m.text.clone(),
                    m.turn_index,
                    m.on_main_chain,
                    m.tool_call_id.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&merged), strip(&f.messages));
    assert_eq!(trail_model::turns::build_turns(&merged), f.turns);
    let last = appended.unwrap_or(h);
    assert_eq!(last.turn_count, f.turn_count);
    assert_eq!(last.meta.title, f.meta.title);
    let usage_keys = |u: &[trail_model::Usage]| {
        u.iter()
            .map(|u| (u.request_key.clone(), u.total()))
            .collect::<Vec<_>>()
    };
    let mut merged_usage = usage_keys(&h.usage);
    if let Some(t) = appended {
        merged_usage.extend(usage_keys(&t.usage));
    }
    assert_eq!(merged_usage, usage_keys(&f.usage));
}

/// A state stored before the nodes' short form (full key names, every field, every parent)
/// still resumes a file: the store holds such states until their files grow again.
#[test]
fn a_state_in_the_older_long_form_still_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let (p, head) = sample_grown_after_nine_lines(dir.path());
    let mut state: serde_json::Value =
        serde_json::from_slice(head.state.as_deref().unwrap()).unwrap();
    let nodes = state["nodes"].as_array_mut().unwrap();
    assert!(
        nodes.iter().any(|n| n.get("p").is_none()),
        "some parents are left out"
    );
    let mut before = serde_json::Value::Null;
    for n in nodes.iter_mut() {
        let short = n.as_object().unwrap().clone();
        let get = |k: &str| short.get(k).cloned();
        let uuid = get("u").unwrap_or(serde_json::Value::Null);
        *n = serde_json::json!({
            "slot": get("s").unwrap(),
            "seq": get("q").unwrap(),
            "uuid": uuid,
            "parent": get("p").unwrap_or_else(|| before.clone()),
            "kind": get("k").unwrap(),
            "sidechain": get("c").unwrap_or(false.into()),
            "turn": get("t").unwrap_or(serde_json::Value::Null),
            "main": get("m").unwrap_or(true.into()),
            "queued": get("w").unwrap_or(false.into()),
        });
        before = n["uuid"].clone();
    }
    let long = serde_json::to_vec(&state).unwrap();
    assert!(long.windows(9).any(|w| w == b"\"parent\":"));
    assert_resumes_as_a_full_parse(&p, &head, &long);
}

/// One line of a generated chain, ending in a newline: by `kind`, a prompt, an answer (whose
/// parent defaults to `n-first`), a compaction boundary, or a record of a type nobody knows.
fn chain_line(uuid: &str, parent: Option<&str>, side: bool, kind: u8) -> String {
    let line = match kind {
        0 => user_line(uuid, parent, "s", "prompt"),
        1 => assistant_line(uuid, parent.unwrap_or("n-first"), "s", "answer", side),
        2 => serde_json::json!({"type":"system","subtype":"compact_boundary","uuid":uuid,
                "parentUuid":null,"logicalParentUuid":parent,"sessionId":"s"})
        .to_string(),
        _ => serde_json::json!({"type":"mystery","uuid":uuid,"parentUuid":parent,
                "isSidechain":side,"sessionId":"s"})
        .to_string(),
    };
    line + "\n"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any bytes, any lines: the parser never panics and never reports more lines than exist.
    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "x.jsonl", &bytes);
        let parsed = ClaudeCode.parse(ParseRequest { max_bytes: None, path: &p, resume: None }).unwrap();
        prop_assert!(parsed.bytes_parsed <= bytes.len() as u64);
    }

    /// A file cut anywhere between lines and resumed from the head's state reads as a full
    /// parse of it, for chains of entries whose parents come earlier in the file (as Claude
    /// Code writes them), with sidechains, compactions and records of unknown types.
    #[test]
    fn resumed_parse_equals_a_full_parse_of_arbitrary_chains(
        entries in proptest::collection::vec((0usize..4, any::<bool>(), 0u8..4), 1..24),
        cut in 0usize..24,
    ) {
        let mut body = String::new();
        for (i, (back, side, kind)) in entries.iter().enumerate() {
            let parent = (i > 0 && *back < i).then(|| format!("n{}", i - 1 - back));
            body.push_str(&chain_line(&format!("n{i}"), parent.as_deref(), *side, *kind));
        }
        // A first line that opens the session, so that the head has one.
        let first = user_line("n-first", None, "s", "first prompt");
        let body = format!("{first}\n{body}");
        let lines = entries.len() + 1;
        let bytes = body.as_bytes();
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "s.jsonl", &bytes[..line_end(bytes, 1 + cut % (lines - 1))]);
        let head = parse(&p);
        std::fs::write(&p, bytes).unwrap();
        assert_resumes_as_a_full_parse(&p, &head, head.state.as_deref().unwrap());
    }

    /// Arbitrary chains of plausible entries (random parents, sidechain flags, kinds).
    #[test]
    fn never_panics_on_arbitrary_chains(
        entries in proptest::collection::vec((0usize..8, 0usize..12, any::<bool>(), 0u8..4), 0..24)
    ) {
        let mut body = String::new();
        for (i, (parent, _, side, kind)) in entries.iter().enumerate() {
            body.push_str(&chain_line(&format!("n{i}"), Some(&format!("n{parent}")), *side, *kind));
        }
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "s.jsonl", body.as_bytes());
        let parsed = ClaudeCode.parse(ParseRequest { max_bytes: None, path: &p, resume: None }).unwrap();
        let total: usize = parsed.sessions.iter().map(|s| s.messages.len()).sum();
        prop_assert_eq!(total, entries.len());
    }
}
