//! TraeX, OpenClaude and Claude Cowork: formats trail reads (Codex rollouts, Claude Code
//! JSONL) under these agents' own folders and names.
//!
//! TraeX is checked on the shared corpus file (laid out at test time in TraeX's folders, in a
//! scratch directory). OpenClaude and Cowork have no public file: their fixtures are written
//! here in Claude Code's published JSONL shape (what OpenClaude's `sessionStorage.ts` writes),
//! laid out as each agent lays them out.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{MessageKind, SourceKind};
use trail_sources::claude_code::ClaudeCode;
use trail_sources::codex::Codex;
use trail_sources::relabel::{claimed, claimed_by, CLAUDE_COWORK, OPENCLAUDE, TRAEX};
use trail_sources::{FileParse, Source};

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn sum_kind(fp: &FileParse, kind: MessageKind) -> usize {
    fp.sessions
        .iter()
        .map(|s| common::count_kind(s, kind))
        .sum()
}

/// Copies the corpus rollout into `<home>/.trae/cli/sessions/2026/08/01/` under a rollout name.
fn trae_home(corpus: &Path, home: &Path) -> PathBuf {
    let day = home.join(".trae/cli/sessions/2026/08/01");
    std::fs::create_dir_all(&day).unwrap();
    let dest = day.join("rollout-2026-08-01T18-07-03-019fbcca-9fd4-7d20-83dc-0762b2f839b3.jsonl");
    std::fs::copy(corpus, &dest).unwrap();
    dest
}

#[test]
fn traex_reads_every_corpus_rollout_as_its_own() {
    let Some(dir) = common::shared_corpus("traex") else {
        return;
    };
    for file in common::files_in(&dir) {
        let tmp = tempfile::tempdir().unwrap();
        let placed = trae_home(&file, tmp.path());
        assert_eq!(
            TRAEX.discover(&[tmp.path().join(".trae/cli")]),
            vec![placed.clone()]
        );
        let head = std::fs::read(&placed).unwrap();
        assert!(TRAEX.detect(&placed, &head));
        assert!(
            !Codex.detect(&placed, &head),
            "Codex leaves TraeX's files alone"
        );
        assert_eq!(claimed(&placed), Some(SourceKind::Traex));
        // Outside TraeX's folder the rollout still says it is TraeX's: its session_meta names
        // the model provider `trae` (read off the file: `"model_provider":"trae"`).
        let text = String::from_utf8_lossy(&head);
        if text
            .lines()
            .next()
            .unwrap()
            .contains(r#""model_provider":"trae""#)
        {
            assert!(TRAEX.detect(&file, &head));
            assert!(!Codex.detect(&file, &head), "given by path, it is TraeX's");
            assert_eq!(claimed_by(&file, &head), Some(SourceKind::Traex));
        }
        // A Codex rollout of another provider stays Codex's.
        let codex_head = text.replacen(
            r#""model_provider":"trae""#,
            r#""model_provider":"openai""#,
            1,
        );
        assert!(Codex.detect(&file, codex_head.as_bytes()));
        assert!(!TRAEX.detect(&file, codex_head.as_bytes()));

        // Independent counts, plain serde_json over the lines: session_meta records, user
        // messages (`event_msg` `user_message`), function calls, and the last cumulative
        // token count.
        let recs = lines(&file);
        let of = |t: &str, p: &str| {
            recs.iter()
                .filter(|r| r["type"] == t && r["payload"]["type"] == p)
                .count()
        };
        let metas = recs.iter().filter(|r| r["type"] == "session_meta").count();
        let prompts = of("event_msg", "user_message");
        let calls = of("response_item", "function_call");
        let last_total = recs
            .iter()
            .filter(|r| r["payload"]["type"] == "token_count")
            .filter_map(|r| {
                r["payload"]["info"]["total_token_usage"]
                    .as_object()
                    .cloned()
            })
            .next_back()
            .unwrap();

        let fp = common::parse_whole(&TRAEX, &placed).unwrap();
        assert!(fp.issues.is_empty(), "{:?}", fp.issues);
        assert_eq!(fp.sessions.len(), metas);
        assert!(fp
            .sessions
            .iter()
            .all(|s| s.meta.source == SourceKind::Traex));
        assert_eq!(sum_kind(&fp, MessageKind::Prompt), prompts);
        assert_eq!(sum_kind(&fp, MessageKind::ToolCall), calls);
        let input: u64 = fp
            .sessions
            .iter()
            .flat_map(|s| &s.usage)
            .map(|u| u.input_tokens + u.cache_read_tokens)
            .sum();
        let output: u64 = fp
            .sessions
            .iter()
            .flat_map(|s| &s.usage)
            .map(|u| u.output_tokens)
            .sum();
        assert_eq!(input, last_total["input_tokens"].as_u64().unwrap());
        assert_eq!(output, last_total["output_tokens"].as_u64().unwrap());
        // The subagent names its parent thread.
        let parent_thread = recs[0]["payload"]["source"]["subagent"]["thread_spawn"]
            ["parent_thread_id"]
            .as_str()
            .unwrap();
        let s = common::only(&fp);
        assert_eq!(
            s.meta.parent.as_ref().map(|p| p.session_id.as_str()),
            Some(parent_thread)
        );
    }
}

/// Claude Code fixture counts, by plain JSON reads: (sessions = distinct `sessionId`, prompts =
/// user records with string content, tool_use blocks, input tokens, output tokens).
fn claude_counts(path: &Path) -> (usize, usize, usize, u64, u64) {
    let recs = lines(path);
    let mut ids: Vec<&str> = recs
        .iter()
        .filter_map(|r| r["sessionId"].as_str())
        .collect();
    ids.sort();
    ids.dedup();
    let prompts = recs
        .iter()
        .filter(|r| r["type"] == "user" && r["message"]["content"].is_string())
        .count();
    let blocks = |t: &str| {
        recs.iter()
            .filter_map(|r| r["message"]["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == t)
            .count()
    };
    let usage = |k: &str| -> u64 {
        recs.iter()
            .filter_map(|r| r["message"]["usage"][k].as_u64())
            .sum()
    };
    (
        ids.len(),
        prompts,
        blocks("tool_use"),
        usage("input_tokens"),
        usage("output_tokens"),
    )
}

fn check_claude_relabel(source: &dyn Source, root: &Path, kind: SourceKind) {
    let found = source.discover(&[root.to_path_buf()]);
    assert_eq!(found.len(), 1, "{found:?}");
    let file = &found[0];
    let head = std::fs::read(file).unwrap();
    assert!(source.detect(file, &head));
    assert!(
        !ClaudeCode.detect(file, &head),
        "Claude Code leaves {kind}'s files alone"
    );
    let (sessions, prompts, tools, input, output) = claude_counts(file);
    let fp = common::parse_whole(source, file).unwrap();
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    assert_eq!(fp.sessions.len(), sessions);
    assert!(fp.sessions.iter().all(|s| s.meta.source == kind));
    assert_eq!(sum_kind(&fp, MessageKind::Prompt), prompts);
    assert_eq!(sum_kind(&fp, MessageKind::ToolCall), tools);
    let s = common::only(&fp);
    let got_in: u64 = s.usage.iter().map(|u| u.input_tokens).sum();
    let got_out: u64 = s.usage.iter().map(|u| u.output_tokens).sum();
    assert_eq!((got_in, got_out), (input, output));
    assert_eq!(common::count_kind(s, MessageKind::Thinking), 1);
    let result = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert!(result.is_error);
    assert!(source.appendable(file));
}

#[test]
fn openclaude_reads_claude_code_jsonl_under_its_own_folder() {
    let root = common::fixtures("openclaude").join(".openclaude");
    check_claude_relabel(&OPENCLAUDE, &root, SourceKind::Openclaude);
}

#[test]
fn cowork_finds_the_jsonl_in_each_session_folder() {
    let root = common::fixtures("claude-cowork").join("local-agent-mode-sessions");
    check_claude_relabel(&CLAUDE_COWORK, &root, SourceKind::ClaudeCowork);
    // The session's settings file is not a session.
    let found = CLAUDE_COWORK.discover(&[root]);
    assert!(found
        .iter()
        .all(|p| p.extension().is_some_and(|e| e == "jsonl")));
}
