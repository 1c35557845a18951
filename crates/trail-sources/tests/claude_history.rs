//! Claude Code's `history.jsonl` parser tests (issue 16, item 5).

mod common;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use trail_model::{MessageKind, SourceKind, UpdateMode};
use trail_sources::claude_code::ClaudeCode;
use trail_sources::claude_history::{
    retain_prompts, stand_in_for, ClaudeHistory, TRANSCRIPT_DELETED,
};
use trail_sources::{FileParse, ParseRequest, Resume, Source};

const DELETED: &str = "5d0c1e2a-3b4f-4c6d-8e9f-0a1b2c3d4e5f";
const LIVE: &str = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d";

fn fixture() -> PathBuf {
    common::fixtures("claude-history").join(".claude/history.jsonl")
}

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&ClaudeHistory, path).expect("parse")
}

// The fixture has 8 lines (`wc -l`), one torn by hand (line 6), and two of the live session
// whose transcript is in `projects/-work-kettle/` (`grep -c 9a8b7c6d history.jsonl` = 2):
// 5 prompts in 3 sessions (`claude_session` A; 2025-05-02 in /work/kettle; 2025-05-03 in
// /home/demo/garden).
#[test]
fn deleted_sessions_and_old_days_become_prompt_only_sessions() {
    let p = parse(&fixture());
    assert_eq!(p.issues.len(), 1);
    assert_eq!(p.issues[0].line, Some(6));
    let ids: Vec<&str> = p.sessions.iter().map(|s| s.meta.id.as_str()).collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(ids[0].starts_with("claude-history:2025-05-02-"));
    assert_eq!(ids[1], format!("claude-history:{DELETED}"));
    assert!(ids[2].starts_with("claude-history:2025-05-03-"));
    let prompts: usize = p.sessions.iter().map(|s| s.messages.len()).sum();
    assert_eq!(prompts, 5);
    assert!(
        !p.sessions
            .iter()
            .any(|s| s.messages.iter().any(|m| m.text.contains("--json"))),
        "the live session's transcript is on disk: nothing of it here"
    );

    let day = &p.sessions[0];
    assert_eq!(day.meta.source, SourceKind::ClaudeHistory);
    assert_eq!(day.meta.cwd.as_deref(), Some("/work/kettle"));
    assert_eq!(day.turn_count, 2);
    assert_eq!(day.turns.len(), 2);
    assert_eq!(day.meta.title.as_deref(), Some("rename the config loader"));
    assert_eq!(
        day.meta.created_at.as_deref(),
        Some("2025-05-02T09:00:00.000Z")
    );
    assert_eq!(stand_in_for(day), None);

    let a = &p.sessions[1];
    let meta = a.meta.metadata.as_ref().unwrap();
    assert_eq!(meta["transcript"], TRANSCRIPT_DELETED);
    assert_eq!(meta["prompts_only"], true);
    assert_eq!(stand_in_for(a).as_deref(), Some(DELETED));
    assert!(a.messages.iter().all(|m| m.kind() == MessageKind::Prompt));
    assert_eq!(
        a.messages[1].text,
        "here is the log E1 parse error\nE2 retry\nE3 gave up what failed?"
    );
    assert!(a.messages[1]
        .extra
        .as_deref()
        .unwrap()
        .contains("E1 parse error"));
    assert_eq!(
        a.messages[0].timestamp.as_deref(),
        Some("2025-11-10T10:00:00.000Z")
    );
}

#[test]
fn detection_tells_history_from_transcripts() {
    let h = fixture();
    let head = std::fs::read(&h).unwrap();
    assert!(ClaudeHistory.detect(&h, &head));
    assert!(
        !ClaudeCode.detect(&h, &head),
        "no uuid or type: not a transcript"
    );
    let t = common::fixtures("claude-history")
        .join(format!(".claude/projects/-work-kettle/{LIVE}.jsonl"));
    assert!(!ClaudeHistory.detect(&t, &std::fs::read(&t).unwrap()));
    // Discovery from the config folder or its projects folder.
    let root = common::fixtures("claude-history").join(".claude");
    assert_eq!(
        ClaudeHistory.discover(std::slice::from_ref(&root)),
        vec![h.clone()]
    );
    assert_eq!(ClaudeHistory.discover(&[root.join("projects")]), vec![h]);
}

#[test]
fn a_resumed_parse_appends_to_the_sessions_it_has_seen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.jsonl");
    let bytes = std::fs::read(fixture()).unwrap();
    // Up to the deleted session's first prompt (3 lines), then the rest.
    let cut = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(2)
        .unwrap()
        .0
        + 1;
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let first = parse(&path);
    std::fs::write(&path, &bytes).unwrap();
    let state = first.state.clone().unwrap();
    let second = ClaudeHistory
        .parse(ParseRequest {
            path: &path,
            resume: Some(Resume {
                offset: first.bytes_parsed,
                line: first.lines,
                state: &state,
            }),
            max_bytes: None,
        })
        .unwrap();
    assert_eq!(second.bytes_read, (bytes.len() - cut) as u64);
    let a = second
        .sessions
        .iter()
        .find(|s| s.meta.id.as_str().ends_with(DELETED))
        .unwrap();
    assert_eq!(a.mode, UpdateMode::Append);
    assert_eq!((a.messages[0].seq, a.messages[0].turn_index), (1, Some(1)));
    assert_eq!(a.turn_count, 2);
    let garden = second
        .sessions
        .iter()
        .find(|s| s.meta.id.as_str().contains("2025-05-03"))
        .unwrap();
    assert_eq!(garden.mode, UpdateMode::Replace);
}

#[test]
fn retained_prompts_are_numbered_after_what_the_store_holds() {
    let p = parse(&fixture());
    let mut day = p.sessions[0].clone();
    assert!(retain_prompts(
        &mut day,
        |m| m.text != "rename the config loader",
        0,
        0
    ));
    assert_eq!(day.messages.len(), 1);
    assert_eq!(
        (day.messages[0].seq, day.messages[0].turn_index),
        (0, Some(0))
    );
    assert_eq!(day.meta.title.as_deref(), Some("/clear"));
    assert_eq!(day.turns.len(), 1);
    let mut a = p.sessions[1].clone();
    a.mode = UpdateMode::Append;
    assert!(retain_prompts(&mut a, |_| true, 7, 3));
    assert_eq!(a.messages[1].seq, 8);
    assert_eq!(a.turn_count, 5);
    assert!(!retain_prompts(&mut a, |_| false, 0, 0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    // Arbitrary lines never panic, and the same bytes give the same sessions.
    #[test]
    fn arbitrary_lines_never_panic(lines in proptest::collection::vec(prop_oneof![
        "[ -~]{0,40}",
        ("[a-z ]{0,20}", 0i64..2_000_000_000_000, proptest::option::of("[a-f0-9-]{1,36}"))
            .prop_map(|(d, t, s)| {
                let mut v = serde_json::json!({"display": d, "timestamp": t, "project": "/p"});
                if let Some(s) = s { v["sessionId"] = s.into(); }
                v.to_string()
            }),
    ], 0..40)) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("history.jsonl");
        std::fs::write(&p, lines.join("\n")).unwrap();
        let a = parse(&p);
        let b = parse(&p);
        let ids = |f: &FileParse| f.sessions.iter().map(|s| (s.meta.id.0.clone(), s.messages.len())).collect::<Vec<_>>();
        prop_assert_eq!(ids(&a), ids(&b));
    }
}
