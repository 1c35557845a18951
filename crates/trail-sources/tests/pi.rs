//! Pi parser: every Pi file of the shared corpus against counts made without the parser, and
//! the repo's own fixtures for the tree, forks, usage spellings and legacy files.

mod common;

use common::{count_kind, files_in, fixtures, only, parse_whole, shared_corpus};
use serde_json::Value;
use trail_model::{MessageKind, RefType, TitleRank};
use trail_sources::pi::Pi;
use trail_sources::Source;

/// Counts made from a file with plain `serde_json` reads, not the parser: user messages,
/// `toolCall` blocks, assistant `usage` input/output sums, and whether every entry's
/// `parentId` is the previous entry's `id` (no branches).
struct Independent {
    prompts: usize,
    tool_calls: usize,
    input: u64,
    output: u64,
    linear: bool,
    session_id: String,
}

fn independent(path: &std::path::Path) -> Independent {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Independent {
        prompts: 0,
        tool_calls: 0,
        input: 0,
        output: 0,
        linear: true,
        session_id: String::new(),
    };
    let mut prev: Option<String> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["type"] == "session" {
            out.session_id = v["id"].as_str().unwrap().to_string();
            continue;
        }
        if let Some(id) = v["id"].as_str() {
            if v["parentId"].as_str().map(str::to_string) != prev {
                out.linear = false;
            }
            prev = Some(id.to_string());
        }
        let m = &v["message"];
        match m["role"].as_str() {
            Some("user") => out.prompts += 1,
            Some("assistant") => {
                for b in m["content"].as_array().unwrap() {
                    if b["type"] == "toolCall" {
                        out.tool_calls += 1;
                    }
                }
                out.input += m["usage"]["input"].as_u64().unwrap_or(0);
                out.output += m["usage"]["output"].as_u64().unwrap_or(0);
            }
            _ => {}
        }
    }
    out
}

#[test]
fn every_corpus_file_matches_independent_counts() {
    let Some(dir) = shared_corpus("pi") else {
        return;
    };
    let files = files_in(&dir);
    assert_eq!(files.len(), 4, "the corpus has four Pi files");
    for path in files {
        let head = std::fs::read(&path).unwrap();
        assert!(Pi.detect(&path, &head), "{} is detected", path.display());
        let fp = parse_whole(&Pi, &path).unwrap();
        assert!(fp.issues.is_empty(), "{}: {:?}", path.display(), fp.issues);
        let s = only(&fp);
        let want = independent(&path);
        let name = path.display();
        assert!(want.linear, "{name}: the corpus files have no branches");
        assert_eq!(s.meta.native_id, want.session_id, "{name}");
        assert_eq!(count_kind(s, MessageKind::Prompt), want.prompts, "{name}");
        assert_eq!(s.turn_count as usize, want.prompts, "{name}");
        assert_eq!(s.turns.len(), want.prompts, "{name}");
        assert_eq!(
            count_kind(s, MessageKind::ToolCall),
            want.tool_calls,
            "{name}"
        );
        let input: u64 = s.usage.iter().map(|u| u.input_tokens).sum();
        let output: u64 = s.usage.iter().map(|u| u.output_tokens).sum();
        assert_eq!((input, output), (want.input, want.output), "{name}");
        assert!(s.messages.iter().all(|m| m.on_main_chain), "{name}");
        assert!(s.meta.cwd.is_some(), "{name}");
        assert!(!s.models.is_empty(), "{name}");
    }
}

#[test]
fn corpus_tool_call_is_joined_to_its_result_and_costs_are_kept() {
    let Some(dir) = shared_corpus("pi") else {
        return;
    };
    let fp = parse_whole(&Pi, &dir.join("full-lifecycle-toolcall.jsonl")).unwrap();
    let s = only(&fp);
    let call = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolCall)
        .unwrap();
    let result = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert_eq!(call.tool_call_id, result.tool_call_id);
    assert_eq!(call.tool_name.as_deref(), Some("bash"));
    assert_eq!(result.tool_output.as_deref(), Some("hello\n"));
    assert_eq!(s.turns[0].assistant_response.as_deref(), Some("done"));
    assert_eq!(s.usage[1].cache_read_tokens, 4096);
    assert!(s.usage.iter().all(|u| u.cost_usd.is_some()));
}

#[test]
fn corpus_interrupted_turn_keeps_the_error_and_counts_no_empty_usage() {
    let Some(dir) = shared_corpus("pi") else {
        return;
    };
    let fp = parse_whole(&Pi, &dir.join("interrupted-turn.jsonl")).unwrap();
    let s = only(&fp);
    assert_eq!(count_kind(s, MessageKind::Error), 1);
    // The aborted request recorded zeros and no cost: no usage row.
    assert_eq!(s.usage.len(), 1);
    assert_eq!(s.turns[1].assistant_response.as_deref(), Some("ok"));
}

#[test]
fn corpus_model_switch_lists_both_models() {
    let Some(dir) = shared_corpus("pi") else {
        return;
    };
    let fp = parse_whole(&Pi, &dir.join("model-switch.jsonl")).unwrap();
    let s = only(&fp);
    assert_eq!(s.models, ["gpt-5.4-mini", "gpt-5.5"]);
    let models: Vec<_> = s.usage.iter().map(|u| u.model.clone().unwrap()).collect();
    assert_eq!(models, ["gpt-5.5", "gpt-5.4-mini"]);
}

fn fixture_session() -> trail_sources::FileParse {
    let path = fixtures("pi")
        .join("sessions/--home-u-app--/2026-01-02T10-00-00-000Z_11111111-2222-4333-8444-555555555555.jsonl");
    parse_whole(&Pi, &path).unwrap()
}

#[test]
fn the_active_branch_is_the_conversation() {
    let fp = fixture_session();
    assert_eq!(fp.issues.len(), 1, "the line that is not JSON");
    assert_eq!(fp.issues[0].line, Some(11));
    let s = only(&fp);
    assert_eq!(s.meta.id.as_str(), "11111111-2222-4333-8444-555555555555");
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/u/app"));
    // Three prompts on the active branch; the abandoned branch (e5..e7) is kept aside.
    assert_eq!(s.turn_count, 3);
    let off: Vec<_> = s
        .messages
        .iter()
        .filter(|m| !m.on_main_chain)
        .map(|m| m.native_id.clone().unwrap())
        .collect();
    assert_eq!(off, ["e0000005", "e0000006", "e0000007"]);
    assert_eq!(s.turns[0].assistant_response, None);
    assert_eq!(
        s.turns[1].assistant_response.as_deref(),
        Some("Done: the parser is fixed.")
    );
    assert_eq!(count_kind(s, MessageKind::Summary), 1);
    assert_eq!(count_kind(s, MessageKind::Compaction), 1);
    assert_eq!(s.checkpoints.len(), 1);
    assert_eq!(count_kind(s, MessageKind::Error), 1);
    assert_eq!(count_kind(s, MessageKind::Thinking), 1);
    let failed = s.messages.iter().find(|m| m.is_error).unwrap();
    assert_eq!(failed.tool_call_id.as_deref(), Some("call_2"));
}

#[test]
fn session_name_is_the_title_and_bash_commits_are_refs() {
    let fp = fixture_session();
    let s = only(&fp);
    assert_eq!(s.meta.title.as_deref(), Some("Parser fix"));
    assert_eq!(s.meta.title_rank, TitleRank::USER);
    assert!(s
        .refs
        .iter()
        .any(|r| r.ref_type == RefType::Commit && r.value == "abc1234"));
    assert_eq!(s.files[0].path, "src/lib.rs");
    let bash = s
        .messages
        .iter()
        .find(|m| {
            m.tool_name.as_deref() == Some("bashExecution") && m.kind() == MessageKind::ToolCall
        })
        .unwrap();
    assert!(bash.tool_input.as_deref().unwrap().contains("git commit"));
}

#[test]
fn usage_is_read_nested_and_flat_and_child_usage_counts_once() {
    let fp = fixture_session();
    let s = only(&fp);
    // e3 nested, e5 flat (`inputTokens`), e7 on the abandoned branch (spent all the same),
    // e10 replaced by its `aggregateUsage`; the aborted e16 recorded nothing.
    let keys: Vec<_> = s.usage.iter().map(|u| u.request_key.as_str()).collect();
    assert_eq!(keys, ["e0000003", "e0000005", "e0000007", "e0000010"]);
    let input: u64 = s.usage.iter().map(|u| u.input_tokens).sum();
    let output: u64 = s.usage.iter().map(|u| u.output_tokens).sum();
    assert_eq!((input, output), (100 + 10 + 7 + 250, 20 + 5 + 3 + 50));
    assert_eq!(s.usage[0].cache_read_tokens, 1000);
    assert_eq!(s.usage[0].cache_creation_tokens, 50);
    assert_eq!(s.usage[3].cost_usd, Some(0.03));
    assert_eq!(s.usage[3].model.as_deref(), Some("gpt-5"));
    assert_eq!(s.models, ["claude-sonnet-4-5", "gpt-5"]);
}

#[test]
fn a_fork_links_to_the_session_it_came_from() {
    let path = fixtures("pi")
        .join("sessions/--home-u-app--/2026-01-03T09-00-00-000Z_66666666-7777-4888-8999-aaaaaaaaaaaa.jsonl");
    let fp = parse_whole(&Pi, &path).unwrap();
    let s = only(&fp);
    let parent = s.meta.parent.as_ref().unwrap();
    assert_eq!(
        parent.session_id.as_str(),
        "11111111-2222-4333-8444-555555555555"
    );
    assert_eq!(
        s.turns[0].assistant_response.as_deref(),
        Some("Wrote notes.")
    );
    assert_eq!(s.files[0].path, "notes.md");
}

#[test]
fn a_version_one_file_is_read_in_order() {
    let dir = fixtures("pi").join("legacy/sessions");
    let path = &files_in(&dir)[0];
    let fp = parse_whole(&Pi, path).unwrap();
    let s = only(&fp);
    assert!(fp.issues.is_empty());
    assert_eq!(s.turn_count, 2);
    assert_eq!(s.turns[0].assistant_response.as_deref(), Some("Hi!"));
    assert_eq!(s.models, ["claude-sonnet-4", "gpt-4o"]);
    assert_eq!(s.usage.len(), 1);
    assert_eq!(s.meta.title.as_deref(), Some("Hello"));
}

#[test]
fn discovery_finds_session_folders_under_agent_roots() {
    let found = Pi.discover(&[fixtures("pi")]);
    assert_eq!(found.len(), 3);
    let not_pi = fixtures("pi").join("sessions/--home-u-app--/x.txt");
    assert!(!Pi.detect(
        &not_pi,
        b"{\"type\":\"session\",\"id\":\"a\",\"cwd\":\"/\"}\n"
    ));
    let droid = b"{\"type\":\"session_start\",\"id\":\"a\",\"cwd\":\"/\"}\n";
    assert!(!Pi.detect(std::path::Path::new("a.jsonl"), droid));
}

/// A grown file is read from where the last parse stopped: cut after every line of each
/// fixture (the tree with its abandoned branch and a leaf moved back, child usage replacing a
/// row, a fork, a version 1 file), the first parse plus the resumed one equal a whole parse.
#[test]
fn resuming_at_every_line_equals_a_whole_parse() {
    for rel in [
        "sessions/--home-u-app--/2026-01-02T10-00-00-000Z_11111111-2222-4333-8444-555555555555.jsonl",
        "sessions/--home-u-app--/2026-01-03T09-00-00-000Z_66666666-7777-4888-8999-aaaaaaaaaaaa.jsonl",
        "legacy/sessions/2025-06-01T08-00-00-000Z_bbbbbbbb-cccc-4ddd-8eee-ffffffffffff.jsonl",
    ] {
        common::assert_resume_at_every_line(&Pi, &fixtures("pi"), rel, 0);
    }
}
