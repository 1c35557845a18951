//! Copilot CLI (`session-state/<id>/events.jsonl`) parser tests.

mod common;

use common::count_kind;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use trail_model::{MessageKind, RefType, Role, Session, UpdateMode, Usage};
use trail_sources::copilot_cli::{read_session_store, CopilotCli};
use trail_sources::{FileParse, ParseRequest, Resume, Source};

const FIXTURE_ID: &str = "6b1e2c3d-4a5f-4b6c-8d7e-9f0a1b2c3d4e";

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&CopilotCli, path).expect("parse")
}

fn fixture_events() -> PathBuf {
    common::fixtures("copilot-cli")
        .join(FIXTURE_ID)
        .join("events.jsonl")
}

fn by_id<'a>(p: &'a FileParse, id: &str) -> &'a Session {
    p.sessions
        .iter()
        .find(|s| s.meta.id.as_str() == id)
        .unwrap_or_else(|| panic!("no session {id}"))
}

fn out_sum(u: &[Usage]) -> u64 {
    u.iter().map(|u| u.output_tokens).sum()
}

#[test]
fn every_corpus_file_parses() {
    let Some(dir) = common::shared_corpus("copilot-cli") else {
        return;
    };
    for f in common::files_in(&dir) {
        let p = parse(&f);
        assert!(!p.sessions.is_empty(), "{}", f.display());
        assert!(p.issues.is_empty(), "{}: {:?}", f.display(), p.issues);
        assert_eq!(p.bytes_parsed, std::fs::metadata(&f).unwrap().len());
        for s in &p.sessions {
            assert_eq!(s.mode, UpdateMode::Replace);
            let keys: std::collections::BTreeSet<_> =
                s.usage.iter().map(|u| &u.request_key).collect();
            assert_eq!(keys.len(), s.usage.len(), "request keys unique");
            for (i, m) in s.messages.iter().enumerate() {
                assert_eq!(m.seq as usize, i);
            }
        }
    }
}

// Expected counts for the two session-state-style corpus files were counted with python over
// the raw JSON (not with trail):
//   turns   = user.message events without data.parentToolCallId
//   calls   = toolRequests entries + tool.execution_start whose toolCallId no request names,
//             split by data.parentToolCallId (main / subagent)
//   results = tool.execution_complete events, split the same way
//   python3 -c 'import json;ev=[json.loads(l) for l in open(F)];main=[e for e in ev if not
//     e["data"].get("parentToolCallId")];print(sum(e["type"]=="user.message" for e in main))'
// small: turns 2, main calls 3, main results 3, sub calls 1, sub results 1.
// drift: turns 0, main calls 1, main results 2.
// Models were read off the lines by eye (session.start/resume selectedModel,
// model_change.newModel, assistant.message.model, tool.execution_complete.model, shutdown).
#[test]
fn corpus_small_counts() {
    let Some(dir) = common::shared_corpus("copilot-cli") else {
        return;
    };
    let p = parse(&dir.join("agentsessions-fixture-copilot-cli-small.jsonl"));
    assert_eq!(p.sessions.len(), 2);
    let main = by_id(&p, "copilot-cli:copilot_stage0_small");
    assert_eq!(main.turn_count, 2);
    assert_eq!(main.turns.len(), 2);
    assert_eq!(
        main.turns[0].user_message.as_deref(),
        Some("List the files")
    );
    assert_eq!(
        main.turns[0].assistant_response.as_deref(),
        // The answer after the first resume has no prompt of its own: it stays in turn 0.
        Some("Listing the files.\n\nDone\n\n[trimmed for fixture]")
    );
    assert_eq!(count_kind(main, MessageKind::ToolCall), 3);
    assert_eq!(count_kind(main, MessageKind::ToolResult), 3);
    // session.error and abort.
    assert_eq!(count_kind(main, MessageKind::Error), 2);
    // session.auto_mode_resolved and session.usage_checkpoint.
    assert_eq!(count_kind(main, MessageKind::Unknown), 2);
    assert_eq!(
        main.models,
        vec!["gpt-5-mini", "gpt-4.1", "[trimmed for fixture]"]
    );
    assert_eq!(main.meta.cwd.as_deref(), Some("[trimmed for fixture]"));
    assert_eq!(main.meta.repository.as_deref(), Some("example/repo"));
    assert_eq!(main.meta.agent_version.as_deref(), Some("1.0.77"));
    assert_eq!(main.meta.title.as_deref(), Some("List the files"));
    // outputTokens 12 + 3 + 0 + 0, then the shutdown's tokenDetails (output 15) minus 15.
    assert_eq!(out_sum(&main.usage), 15);
    let shutdown = main
        .usage
        .iter()
        .find(|u| u.request_key.starts_with("shutdown@"))
        .unwrap();
    assert_eq!(
        (
            shutdown.input_tokens,
            shutdown.output_tokens,
            shutdown.cache_read_tokens
        ),
        (100, 0, 5)
    );

    let sub = by_id(
        &p,
        "copilot-cli:copilot_stage0_small:agent:[trimmed for fixture]",
    );
    let link = sub.meta.parent.as_ref().unwrap();
    assert_eq!(link.session_id.as_str(), "copilot-cli:copilot_stage0_small");
    assert_eq!(link.tool_call_id.as_deref(), Some("[trimmed for fixture]"));
    assert_eq!(sub.turn_count, 0);
    assert_eq!(count_kind(sub, MessageKind::ToolCall), 1);
    assert_eq!(count_kind(sub, MessageKind::ToolResult), 1);
    assert_eq!(sub.models, vec!["claude-haiku-4.5"]);
    assert!(sub.messages.iter().all(|m| m.is_sidechain));
}

#[test]
fn corpus_schema_drift_counts() {
    let Some(dir) = common::shared_corpus("copilot-cli") else {
        return;
    };
    let p = parse(&dir.join("agentsessions-fixture-copilot-cli-schema-drift.jsonl"));
    assert_eq!(p.sessions.len(), 1);
    let s = &p.sessions[0];
    assert_eq!(s.meta.id.as_str(), "copilot-cli:copilot_stage0_drift");
    assert_eq!(s.turn_count, 0);
    assert_eq!(count_kind(s, MessageKind::ToolCall), 1);
    assert_eq!(count_kind(s, MessageKind::ToolResult), 2);
    // The start came before the request: one call, from the start, with the name.
    let call = s
        .messages
        .iter()
        .find(|m| m.kind == Some(MessageKind::ToolCall))
        .unwrap();
    assert_eq!(call.tool_name.as_deref(), Some("bash"));
    let failed = s.messages.iter().find(|m| m.is_error).unwrap();
    assert_eq!(failed.tool_call_id.as_deref(), Some("call_2"));
    assert_eq!(s.models, vec!["gpt-4.1"]);
    assert_eq!(s.usage.len(), 1);
    let u = &s.usage[0];
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cache_read_tokens),
        (1000, 50, 800)
    );
}

#[test]
fn corpus_hook_style_file() {
    let Some(dir) = common::shared_corpus("copilot-cli") else {
        return;
    };
    let f = dir.join("cass-fixture-copilot-cli-hook-events-unicode.jsonl");
    let p = parse(&f);
    assert_eq!(p.sessions.len(), 1);
    let s = &p.sessions[0];
    assert_eq!(s.meta.id.as_str(), "copilot-cli:cli-session-001");
    assert_eq!(s.meta.cwd.as_deref(), Some("/workspaces/demo-unicode"));
    assert_eq!(s.messages.len(), 2);
    assert_eq!(s.turn_count, 1);
    assert_eq!(s.messages[0].kind, Some(MessageKind::Prompt));
    assert!(s.messages[0].text.contains("cafe\u{301} ✅"));
    assert_eq!(s.messages[1].kind, Some(MessageKind::Text));
    assert_eq!(
        s.messages[0].timestamp.as_deref(),
        Some("2023-11-14T22:30:00.000Z")
    );
    let head = std::fs::read(&f).unwrap();
    assert!(CopilotCli.detect(&f, &head));
}

#[test]
fn fixture_session_counts() {
    let path = fixture_events();
    let p = parse(&path);
    let len = std::fs::metadata(&path).unwrap().len();
    let torn = br#"{"type":"assistant.message","data":{"content":"Writing the"#.len() as u64;
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    assert_eq!(p.bytes_parsed, len - torn, "the torn last line is left");
    assert_eq!(p.lines, 27);
    assert_eq!(p.sessions.len(), 2);

    let main = by_id(&p, FIXTURE_ID);
    assert_eq!(main.meta.native_id, FIXTURE_ID);
    assert_eq!(
        main.meta.title.as_deref(),
        Some("Add a dry-run flag to kiln build")
    );
    assert_eq!(main.meta.cwd.as_deref(), Some("/home/dev/projects/kiln"));
    assert_eq!(main.meta.repository.as_deref(), Some("acme/kiln"));
    assert_eq!(main.meta.branch.as_deref(), Some("feature/dry-run"));
    assert_eq!(main.meta.agent_version.as_deref(), Some("0.0.400"));
    assert_eq!(
        main.meta.created_at.as_deref(),
        Some("2025-11-03T10:00:00.000Z")
    );
    assert_eq!(
        main.meta.updated_at.as_deref(),
        Some("2025-11-03T10:26:00.000Z")
    );
    assert_eq!(main.messages.len(), 23);
    assert_eq!(main.turn_count, 3);
    assert_eq!(main.turns.len(), 3);
    assert_eq!(
        main.turns[0].assistant_response.as_deref(),
        Some(
            "Let me look at the CLI entry point.\n\nAdded the flag; the plan follows \
             https://github.com/acme/kiln/pull/12."
        )
    );
    assert_eq!(
        main.turns[2].user_message.as_deref(),
        Some("Write the docs")
    );
    assert_eq!(count_kind(main, MessageKind::Prompt), 3);
    assert_eq!(count_kind(main, MessageKind::ToolCall), 4);
    assert_eq!(count_kind(main, MessageKind::ToolResult), 4);
    assert_eq!(count_kind(main, MessageKind::Thinking), 1);
    assert_eq!(count_kind(main, MessageKind::Compaction), 1);
    assert_eq!(count_kind(main, MessageKind::Summary), 1);
    assert_eq!(count_kind(main, MessageKind::Unknown), 1);
    assert_eq!(count_kind(main, MessageKind::Error), 1);
    let unknown = main
        .messages
        .iter()
        .find(|m| m.kind == Some(MessageKind::Unknown))
        .unwrap();
    assert!(unknown
        .extra
        .as_deref()
        .unwrap()
        .contains("session.plan_changed"));
    let edit = main
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("call-e1") && m.role == Some(Role::Tool))
        .unwrap();
    assert!(edit.is_error);
    assert_eq!(edit.tool_name.as_deref(), Some("edit"));
    assert_eq!(
        edit.tool_output.as_deref(),
        Some("old_str was not found in the file")
    );
    let task = main
        .messages
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("task"))
        .unwrap();
    assert_eq!(task.agent_ref.as_deref(), Some("call-t1"));
    assert_eq!(task.text, "Find build tests");
    // String-encoded arguments are kept as their JSON text.
    let bash = main
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("call-b1"))
        .unwrap();
    assert!(bash
        .tool_input
        .as_deref()
        .unwrap()
        .starts_with("{\"command\""));
    assert_eq!(
        main.models,
        vec!["claude-sonnet-4.5", "claude-haiku-4.5", "gpt-5"]
    );
    assert_eq!(main.files.len(), 1);
    assert_eq!(main.files[0].path, "/home/dev/projects/kiln/src/cli.rs");
    assert_eq!(main.files[0].tool_name.as_deref(), Some("view"));
    assert_eq!(main.files[0].turn_index, Some(0));
    let refs: Vec<(RefType, &str)> = main
        .refs
        .iter()
        .map(|r| (r.ref_type, r.value.as_str()))
        .collect();
    assert_eq!(
        refs,
        vec![(RefType::Pr, "acme/kiln#12"), (RefType::Commit, "1a2b3c4")]
    );
    assert_eq!(main.refs[1].turn_index, Some(1));

    // Checkpoints: the file the compaction names, then the one nothing names; index.md skipped.
    assert_eq!(main.checkpoints.len(), 2);
    let c1 = &main.checkpoints[0];
    assert_eq!(c1.number, 1);
    assert_eq!(c1.title.as_deref(), Some("Dry-run flag"));
    assert_eq!(
        c1.overview.as_deref(),
        Some("Added a --dry-run flag to kiln build.")
    );
    assert_eq!(
        c1.work_done.as_deref(),
        Some("- Parsed the flag in src/cli.rs\n- Ran the tests")
    );
    assert_eq!(c1.important_files.as_deref(), Some("- src/cli.rs"));
    assert_eq!(c1.next_steps.as_deref(), Some("Write the docs."));
    assert_eq!(c1.created_at.as_deref(), Some("2025-11-03T10:23:00.000Z"));
    assert_eq!(main.checkpoints[1].number, 2);
    assert_eq!(main.checkpoints[1].title.as_deref(), Some("docs"));
    assert_eq!(
        main.checkpoints[1].overview.as_deref(),
        Some("Docs still to write.")
    );

    let sub_id = format!("{FIXTURE_ID}:agent:call-t1");
    let sub = by_id(&p, &sub_id);
    let link = sub.meta.parent.as_ref().unwrap();
    assert_eq!(link.session_id.as_str(), FIXTURE_ID);
    assert_eq!(link.tool_call_id.as_deref(), Some("call-t1"));
    assert_eq!(link.agent_ref.as_deref(), Some("explore"));
    assert_eq!(sub.meta.title.as_deref(), Some("Explore Agent"));
    assert_eq!(sub.messages.len(), 4);
    assert_eq!(count_kind(sub, MessageKind::ToolCall), 1);
    assert_eq!(count_kind(sub, MessageKind::ToolResult), 1);
    assert_eq!(sub.turn_count, 0);
    assert_eq!(sub.models, vec!["claude-haiku-4.5"]);
    assert_eq!(sub.usage.len(), 2);
    assert!(sub.files.is_empty());
}

#[test]
fn fixture_usage_rule() {
    let p = parse(&fixture_events());
    let main = by_id(&p, FIXTURE_ID);
    let sub = by_id(&p, &format!("{FIXTURE_ID}:agent:call-t1"));
    let keys: Vec<&str> = main.usage.iter().map(|u| u.request_key.as_str()).collect();
    assert_eq!(
        keys,
        vec![
            "msg:m1@4",
            "msg:m2@7",
            "msg:m3@15",
            "msg:m4@17",
            "shutdown@18:claude-haiku-4.5",
            "shutdown@18:claude-sonnet-4.5",
            "msg:m5@21",
            "compaction@24",
        ]
    );
    // Segment 1 had a shutdown: its rows (main and subagent) add up to the shutdown totals.
    let seg1 = |u: &&Usage| !u.request_key.ends_with("@21") && !u.request_key.starts_with("comp");
    let sonnet: u64 = main
        .usage
        .iter()
        .filter(seg1)
        .filter(|u| u.model.as_deref() == Some("claude-sonnet-4.5"))
        .map(|u| u.output_tokens)
        .sum();
    assert_eq!(sonnet, 200);
    let haiku_main = main
        .usage
        .iter()
        .find(|u| u.request_key == "shutdown@18:claude-haiku-4.5")
        .unwrap();
    assert_eq!(
        (haiku_main.input_tokens, haiku_main.output_tokens),
        (800, 0)
    );
    assert_eq!(out_sum(&sub.usage), 40);
    let shutdown = main
        .usage
        .iter()
        .find(|u| u.request_key == "shutdown@18:claude-sonnet-4.5")
        .unwrap();
    assert_eq!(
        (
            shutdown.input_tokens,
            shutdown.output_tokens,
            shutdown.cache_read_tokens,
            shutdown.cache_creation_tokens
        ),
        (5000, 55, 3000, 100)
    );
    // Segment 2 has no shutdown: per-message output plus the compaction.
    assert_eq!(out_sum(&main.usage), 40 + 25 + 60 + 20 + 55 + 15 + 300);
    let comp = main.usage.last().unwrap();
    assert_eq!(
        (comp.input_tokens, comp.model.as_deref()),
        (1200, Some("gpt-5"))
    );
}

/// Copies the fixture session folder into a temp `session-state` with the first `k` lines.
fn staged(k: usize) -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let src = common::fixtures("copilot-cli").join(FIXTURE_ID);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("session-state").join(FIXTURE_ID);
    std::fs::create_dir_all(dir.join("checkpoints")).unwrap();
    std::fs::copy(src.join("workspace.yaml"), dir.join("workspace.yaml")).unwrap();
    for f in common::files_in(&src.join("checkpoints")) {
        std::fs::copy(&f, dir.join("checkpoints").join(f.file_name().unwrap())).unwrap();
    }
    let all = std::fs::read(src.join("events.jsonl")).unwrap();
    let mut cut = 0;
    for _ in 0..k {
        cut += all[cut..].iter().position(|b| *b == b'\n').unwrap() + 1;
    }
    let events = dir.join("events.jsonl");
    std::fs::write(&events, &all[..cut]).unwrap();
    (tmp, events, all[cut..].to_vec())
}

#[test]
fn incremental_resume_matches_full_parse() {
    let full = parse(&fixture_events());
    for k in 0..=27 {
        let (_tmp, events, rest) = staged(k);
        let first = parse(&events);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&events)
            .unwrap()
            .write_all(&rest)
            .unwrap();
        let state = first.state.clone().unwrap();
        let delta = CopilotCli
            .parse(ParseRequest {
                max_bytes: None,
                path: &events,
                resume: Some(Resume {
                    offset: first.bytes_parsed,
                    line: first.lines,
                    state: &state,
                }),
            })
            .unwrap();
        assert_eq!(delta.bytes_read, rest.len() as u64, "split {k}");
        assert_eq!(delta.bytes_parsed, full.bytes_parsed, "split {k}");
        assert_eq!(delta.lines, full.lines);

        // Merge the first parse and the delta per session id.
        let mut merged: BTreeMap<String, Session> = BTreeMap::new();
        for s in &first.sessions {
            assert_eq!(s.mode, UpdateMode::Replace);
            merged.insert(s.meta.id.0.clone(), s.clone());
        }
        for d in &delta.sessions {
            assert_eq!(d.mode, UpdateMode::Append, "split {k}");
            assert!(d.turns.is_empty());
            let m = merged
                .entry(d.meta.id.0.clone())
                .or_insert_with(|| Session::new(d.meta.clone()));
            m.meta = d.meta.clone();
            m.messages.extend(d.messages.iter().cloned());
            m.usage.extend(d.usage.iter().cloned());
            m.files.extend(d.files.iter().cloned());
            m.refs.extend(d.refs.iter().cloned());
            m.checkpoints.extend(d.checkpoints.iter().cloned());
            m.turn_count = d.turn_count;
            m.models = d.models.clone();
        }
        assert_eq!(merged.len(), full.sessions.len(), "split {k}");
        for f in &full.sessions {
            let m = &merged[f.meta.id.as_str()];
            assert_eq!(m.messages, f.messages, "split {k} {}", f.meta.id);
            assert_eq!(m.usage, f.usage, "split {k} {}", f.meta.id);
            assert_eq!(
                trail_model::turns::build_turns(&m.messages),
                f.turns,
                "split {k}"
            );
            assert_eq!(m.turn_count, f.turn_count, "split {k}");
            assert_eq!(m.files, f.files, "split {k}");
            assert_eq!(m.refs, f.refs, "split {k}");
            assert_eq!(m.models, f.models, "split {k}");
            assert_eq!(m.meta, f.meta, "split {k}");
            // Checkpoint files seen before their compaction event are taken when seen.
            let numbers: Vec<u32> = m.checkpoints.iter().map(|c| c.number).collect();
            let want: Vec<u32> = f.checkpoints.iter().map(|c| c.number).collect();
            assert_eq!(numbers, want, "split {k}");
        }
    }
}

#[test]
fn unreadable_state_starts_over() {
    let path = fixture_events();
    let p = CopilotCli
        .parse(ParseRequest {
            max_bytes: None,
            path: &path,
            resume: Some(Resume {
                offset: 100,
                line: 1,
                state: b"not json",
            }),
        })
        .unwrap();
    assert_eq!(p.sessions[0].mode, UpdateMode::Replace);
    assert_eq!(
        p.sessions[0].messages.len(),
        parse(&path).sessions[0].messages.len()
    );
}

#[test]
fn discover_and_detect() {
    let (tmp, events, _) = staged(27);
    let home = tmp.path();
    std::fs::write(home.join("session-state/notes.jsonl"), "{}\n").unwrap();
    let found = CopilotCli.discover(&[home.to_path_buf(), home.join("missing")]);
    assert_eq!(found, vec![events.clone()]);
    let head = std::fs::read(&events).unwrap();
    assert!(CopilotCli.detect(&events, &head[..head.len().min(65536)]));
    // Truncated head: the first line does not end inside it.
    assert!(CopilotCli.detect(&events, &head[..120]));
    let claude = br#"{"type":"user","uuid":"x","message":{"role":"user","content":"hi"}}"#;
    assert!(!CopilotCli.detect(Path::new("/x/a.jsonl"), claude));
    assert!(!CopilotCli.detect(Path::new("/x/a.jsonl"), b""));
    // VS Code transcripts share the vocabulary but belong to the copilot-vscode source.
    assert!(!CopilotCli.detect(Path::new("/x/transcripts/abc.jsonl"), &head));
    assert!(CopilotCli.appendable(&events));
    assert_eq!(
        CopilotCli::store_path_for(&events),
        None,
        "no store beside this session-state"
    );
    let db = home.join("session-store.db");
    std::fs::write(&db, b"").unwrap();
    assert_eq!(CopilotCli::store_path_for(&events), Some(db));
}

fn create_store(path: &Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE schema_version (version INTEGER NOT NULL);
         INSERT INTO schema_version VALUES (2);
         CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT, repository TEXT, host_type TEXT,
            branch TEXT, summary TEXT, created_at TEXT, updated_at TEXT);
         CREATE TABLE checkpoints (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
            checkpoint_number INTEGER NOT NULL, title TEXT, overview TEXT, history TEXT,
            work_done TEXT, technical_details TEXT, important_files TEXT, next_steps TEXT,
            created_at TEXT, UNIQUE(session_id, checkpoint_number));
         INSERT INTO sessions (id, cwd, repository, branch, summary, created_at, updated_at)
            VALUES ('copilot_stage0_drift', '/tmp/drift', 'acme/drift', 'main',
                    'Drift summary', '2025-12-18T22:00:00.000Z', '2025-12-18 22:10:00');
         INSERT INTO checkpoints (session_id, checkpoint_number, title, overview, next_steps)
            VALUES ('copilot_stage0_drift', 2, 'Second', 'two', NULL),
                   ('copilot_stage0_drift', 1, 'First', 'one', 'more');",
    )
    .unwrap();
}

#[test]
fn store_is_read_while_a_writer_holds_a_transaction() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("session-store.db");
    create_store(&db);
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.execute_batch("BEGIN IMMEDIATE").unwrap();
    writer
        .execute(
            "INSERT INTO sessions (id, summary) VALUES ('uncommitted', 'not yet')",
            [],
        )
        .unwrap();

    let extras = read_session_store(&db).unwrap();
    assert_eq!(extras.sessions.len(), 1, "only committed rows");
    let s = &extras.sessions["copilot_stage0_drift"];
    assert_eq!(s.summary.as_deref(), Some("Drift summary"));
    assert_eq!(s.repository.as_deref(), Some("acme/drift"));
    assert_eq!(s.updated_at.as_deref(), Some("2025-12-18T22:10:00.000Z"));
    let titles: Vec<_> = s.checkpoints.iter().map(|c| c.title.as_deref()).collect();
    assert_eq!(titles, vec![Some("First"), Some("Second")]);
    assert_eq!(s.checkpoints[0].next_steps.as_deref(), Some("more"));

    writer.execute_batch("COMMIT").unwrap();
    let n: i64 = writer
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2, "the writer committed after trail read");
    assert_eq!(read_session_store(&db).unwrap().sessions.len(), 2);
}

#[test]
fn store_with_other_columns_and_missing_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("store.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, summary TEXT, extra_v4 TEXT);
             INSERT INTO sessions VALUES ('a', 'sum', 'x');",
        )
        .unwrap();
    }
    let extras = read_session_store(&db).unwrap();
    assert_eq!(extras.sessions["a"].summary.as_deref(), Some("sum"));
    assert!(extras.sessions["a"].checkpoints.is_empty());
    assert!(read_session_store(&tmp.path().join("none.db")).is_err());
    std::fs::write(tmp.path().join("junk.db"), b"not a database at all").unwrap();
    assert!(read_session_store(&tmp.path().join("junk.db")).is_err());
}

#[test]
fn store_extras_fill_gaps() {
    let Some(dir) = common::shared_corpus("copilot-cli") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("session-store.db");
    create_store(&db);
    let extras = read_session_store(&db).unwrap();
    let src = CopilotCli::with_store_extras(extras);
    let f = dir.join("agentsessions-fixture-copilot-cli-schema-drift.jsonl");
    let p = src.parse(ParseRequest {
        max_bytes: None,
        path: &f,
        resume: None,
    });
    let s = &p.unwrap().sessions[0];
    assert_eq!(s.meta.title.as_deref(), Some("Drift summary"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/drift"));
    assert_eq!(s.meta.repository.as_deref(), Some("acme/drift"));
    assert_eq!(s.checkpoints.len(), 2);
    assert_eq!(s.checkpoints[0].number, 1);
    assert_eq!(s.checkpoints[0].title.as_deref(), Some("First"));
    // The plain source never looks at the store.
    assert_eq!(parse(&f).sessions[0].checkpoints.len(), 0);
}

fn parse_bytes(bytes: &[u8], state: Option<&[u8]>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(FIXTURE_ID);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("events.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let p = CopilotCli
        .parse(ParseRequest {
            max_bytes: None,
            path: &path,
            resume: None,
        })
        .unwrap();
    assert!(p.bytes_parsed <= bytes.len() as u64);
    let st = p.state.unwrap_or_default();
    let resume_state = state.unwrap_or(&st);
    let offset = (p.bytes_parsed / 2).min(p.bytes_parsed);
    let _ = CopilotCli.parse(ParseRequest {
        max_bytes: None,
        path: &path,
        resume: Some(Resume {
            offset,
            line: 0,
            state: resume_state,
        }),
    });
    let _ = CopilotCli.detect(&path, bytes);
}

fn line_strategy() -> impl Strategy<Value = String> {
    let types = prop::sample::select(vec![
        "session.start",
        "session.resume",
        "user.message",
        "assistant.message",
        "assistant.reasoning",
        "tool.execution_start",
        "tool.execution_complete",
        "subagent.started",
        "session.compaction_complete",
        "session.shutdown",
        "session.model_change",
        "abort",
        "weird.type",
    ]);
    let values = prop::sample::select(vec![
        "null",
        "1",
        "-5",
        "1e300",
        "\"x\"",
        "\"\"",
        "[]",
        "{}",
        "true",
        "{\"a\":{\"usage\":{\"inputTokens\":-1,\"outputTokens\":1e40}}}",
        "[{\"toolCallId\":\"c\",\"name\":\"edit\",\"arguments\":\"{\\\"path\\\":\\\"p\\\"}\"}]",
        "{\"content\":\"<overview>\",\"contents\":[{\"text\":1}]}",
    ]);
    let keys = prop::sample::select(vec![
        "content",
        "toolRequests",
        "toolCallId",
        "parentToolCallId",
        "outputTokens",
        "modelMetrics",
        "tokenDetails",
        "compactionTokensUsed",
        "summaryContent",
        "checkpointPath",
        "result",
        "error",
        "success",
        "model",
        "context",
        "sessionId",
    ]);
    (
        types,
        prop::collection::vec((keys, values), 0..6),
        prop::sample::select(vec!["\"2025-01-01T00:00:00Z\"", "12", "\"bad\"", "null"]),
    )
        .prop_map(|(t, kv, ts)| {
            let data: Vec<String> = kv.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!(
                "{{\"type\":\"{t}\",\"id\":\"i\",\"timestamp\":{ts},\"data\":{{{}}}}}",
                data.join(",")
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        parse_bytes(&bytes, None);
    }

    #[test]
    fn arbitrary_state_never_panics(
        lines in prop::collection::vec(line_strategy(), 0..12),
        state in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let text = lines.join("\n");
        parse_bytes(text.as_bytes(), Some(&state));
    }

    #[test]
    fn arbitrary_event_lines_never_panic(
        lines in prop::collection::vec(line_strategy(), 0..30),
        torn in any::<bool>(),
    ) {
        let mut text = lines.join("\n");
        if torn { text.truncate(text.len() / 2 * 2 / 3); }
        parse_bytes(text.as_bytes(), None);
    }
}

#[test]
fn demo_sample_parses() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home/.copilot");
    let found = CopilotCli.discover(&[root]);
    assert_eq!(found.len(), 1);
    let p = parse(&found[0]);
    assert!(p.issues.is_empty());
    assert_eq!(p.sessions.len(), 1);
    let s = &p.sessions[0];
    assert_eq!(s.meta.id.as_str(), "3f9a7c21-5d4e-4b8a-9c6f-2e1d0b7a8c54");
    assert_eq!(
        s.meta.title.as_deref(),
        Some("Fix CSV export header for empty tables")
    );
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/demo/projects/tidepool"));
    assert_eq!(s.turn_count, 2);
    assert_eq!(count_kind(s, MessageKind::ToolCall), 4);
    assert_eq!(count_kind(s, MessageKind::ToolResult), 4);
    assert_eq!(s.files.len(), 1);
    let refs: Vec<&str> = s.refs.iter().map(|r| r.value.as_str()).collect();
    assert_eq!(refs, vec!["demo-org/tidepool#31", "7c3e9a1"]);
    // Six messages, then the shutdown's totals beyond them (output 480 - 480 = 0).
    assert_eq!(s.usage.len(), 7);
    assert_eq!(out_sum(&s.usage), 480);
    assert_eq!(s.usage.iter().map(|u| u.input_tokens).sum::<u64>(), 68412);
}

#[test]
fn store_reading_leaves_no_files_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("session-store.db");
    create_store(&db);
    // The last connection closed: SQLite removed -wal and -shm, the header still says WAL.
    let before = common::files_in(tmp.path());
    assert_eq!(before, vec![db.clone()]);
    let extras = read_session_store(&db).unwrap();
    assert_eq!(extras.sessions.len(), 1);
    assert_eq!(common::files_in(tmp.path()), before);
}

#[test]
fn compaction_summary_without_file_and_old_token_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("session-state").join("plain-id");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("events.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"user.message","id":"a","parentId":null,"data":{"content":"  hi  "}}"#,
            "\n",
            r#"{"type":"session.compaction_complete","id":"b","parentId":"a","data":{"success":true,"summaryContent":"<overview>O</overview><history>H</history>","compactionTokensUsed":{"input":10,"output":4,"cachedInput":2}}}"#,
            "\n",
        ),
    )
    .unwrap();
    let p = parse(&path);
    let s = &p.sessions[0];
    assert_eq!(s.meta.id.as_str(), "copilot-cli:plain-id");
    assert_eq!(s.meta.title.as_deref(), Some("hi"));
    assert_eq!(s.checkpoints.len(), 1);
    assert_eq!(s.checkpoints[0].overview.as_deref(), Some("O"));
    assert_eq!(s.checkpoints[0].history.as_deref(), Some("H"));
    let u = &s.usage[0];
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cache_read_tokens),
        (10, 4, 2)
    );
}
