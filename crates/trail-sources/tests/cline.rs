//! Cline, Roo Code and Kilo Code task folders (issue 16, item 2).

mod common;

use std::path::{Path, PathBuf};

use common::count_kind;
use proptest::prelude::*;
use trail_model::{MessageKind, RefType, Role, SourceKind};
use trail_sources::cline::{fork_of_path, ClineTasks};
use trail_sources::{FileParse, ParseRequest, Source};

fn fixtures() -> PathBuf {
    common::fixtures("cline")
}

fn parse(source: &ClineTasks, path: &Path) -> FileParse {
    common::parse_whole(source, path).expect("parse")
}

fn sum_usage(fp: &FileParse) -> (u64, u64, u64, u64, f64) {
    let s = common::only(fp);
    s.usage.iter().fold((0, 0, 0, 0, 0.0), |a, u| {
        (
            a.0 + u.input_tokens,
            a.1 + u.output_tokens,
            a.2 + u.cache_creation_tokens,
            a.3 + u.cache_read_tokens,
            a.4 + u.cost_usd.unwrap_or(0.0),
        )
    })
}

// The shared corpus holds one real Cline `ui_messages.json` (Cline-Xray's, 148 records, no
// task folder around it). The numbers below were counted with Python over the file, not with
// this parser:
//   d = json.load(open(F))
//   turns: records with say in (task, user_feedback) -> 3
//   tool calls: say or ask `tool` or `command` -> 23
//   tool results: `[name for ...] Result:` headers of api_req_started requests other than
//     attempt_completion and execute_command -> 20, plus 1 command_output -> 21
//   usage: api_req_started records with token fields -> 24; their sums: tokensIn 240,
//     tokensOut 11035, cacheWrites 72182, cacheReads 1038797, cost 1.247611
//   checkpoint_created -> 24, reasoning -> 24
#[test]
fn every_corpus_file_parses_with_counts_counted_independently() {
    let Some(dir) = common::shared_corpus("cline") else {
        return;
    };
    let files = common::files_in(&dir);
    assert!(!files.is_empty());
    for f in &files {
        let head = std::fs::read(f).unwrap();
        let head = &head[..head.len().min(64 << 10)];
        assert!(
            ClineTasks::cline().detect(f, head),
            "{} is detected as a Cline task file",
            f.display()
        );
        let fp = parse(&ClineTasks::cline(), f);
        assert!(fp.issues.is_empty(), "{:?}", fp.issues);
        let s = common::only(&fp);
        assert_eq!(s.meta.source, SourceKind::Cline);
        if f.file_name().unwrap() != "clinexray-ui_messages.json" {
            continue;
        }
        assert_eq!(s.turn_count, 3);
        assert_eq!(count_kind(s, MessageKind::ToolCall), 23);
        assert_eq!(count_kind(s, MessageKind::ToolResult), 21);
        assert_eq!(count_kind(s, MessageKind::Thinking), 24);
        assert_eq!(s.checkpoints.len(), 24);
        assert_eq!(s.usage.len(), 24);
        let (i, o, cw, cr, cost) = sum_usage(&fp);
        assert_eq!((i, o, cw, cr), (240, 11035, 72182, 1038797));
        assert!((cost - 1.247611).abs() < 1e-9, "{cost}");
        assert_eq!(s.models, vec!["claude-opus-4-5-20251101".to_string()]);
        assert_eq!(
            s.meta.cwd.as_deref(),
            Some("d:/Users/obuzunov/myg/jira-dashboard")
        );
        // Files the tools named, made absolute under the task's folder.
        assert!(s.files.iter().any(|f| f.path
            == "d:/Users/obuzunov/myg/jira-dashboard/src-tauri/capabilities/default.json"
            && f.tool_name.as_deref() == Some("write_to_file")));
        // The edits are Cline's `replace_in_file` with its search/replace diff.
        let edit = s
            .messages
            .iter()
            .find(|m| m.tool_name.as_deref() == Some("replace_in_file"))
            .unwrap();
        assert!(edit
            .tool_input
            .as_deref()
            .unwrap()
            .contains("------- SEARCH"));
        assert!(s
            .meta
            .title
            .as_deref()
            .unwrap()
            .starts_with("in my jiras->list UI"));
    }
}

#[test]
fn discovery_finds_each_fork_under_every_host() {
    let root = fixtures();
    let hosts: Vec<PathBuf> = ["Code", "Cursor", "Windsurf", "VSCodium", "Code - Insiders"]
        .iter()
        .map(|h| root.join(h))
        .collect();
    let names = |files: Vec<PathBuf>| -> Vec<String> {
        files
            .iter()
            .map(|p| {
                p.strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect()
    };
    assert_eq!(
        names(ClineTasks::cline().discover(&hosts)),
        vec![
            "Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1750000000000/ui_messages.json",
            "VSCodium/User/globalStorage/saoudrizwan.claude-dev/tasks/1750000200000/api_conversation_history.json",
            "Windsurf/User/globalStorage/saoudrizwan.claude-dev/tasks/1750000100000/ui_messages.json",
        ]
    );
    assert_eq!(
        names(ClineTasks::roo_code().discover(&hosts)),
        vec!["Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/0b7c2f1e-3d4a-4b5c-8d6e-7f8091a2b3c4/ui_messages.json"]
    );
    assert_eq!(
        names(ClineTasks::kilo_code().discover(&hosts)),
        vec!["Cursor/User/globalStorage/kilocode.kilo-code/tasks/1c8d3a2f-5e6b-4c7d-9e8f-0a1b2c3d4e5f/ui_messages.json"]
    );
    // A `tasks` folder or an extension folder given as a root works too.
    let ext = root.join("Code/User/globalStorage/saoudrizwan.claude-dev");
    assert_eq!(
        ClineTasks::cline()
            .discover(std::slice::from_ref(&ext))
            .len(),
        1
    );
    assert_eq!(ClineTasks::cline().discover(&[ext.join("tasks")]).len(), 1);
    // Each file is claimed by its own fork only.
    for f in ClineTasks::roo_code().discover(&hosts) {
        let head = std::fs::read(&f).unwrap();
        assert!(ClineTasks::roo_code().detect(&f, &head));
        assert!(!ClineTasks::cline().detect(&f, &head));
        assert_eq!(fork_of_path(&f), SourceKind::RooCode);
    }
}

#[test]
fn a_cline_task_gives_prompts_answers_tools_usage_checkpoints_and_files() {
    let path = fixtures().join(
        "Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1750000000000/ui_messages.json",
    );
    let fp = parse(&ClineTasks::cline(), &path);
    // The bare number in the log is reported, the rest indexed.
    assert_eq!(fp.issues.len(), 1, "{:?}", fp.issues);
    assert!(fp.issues[0].reason.contains("not an object"));
    let s = common::only(&fp);
    assert_eq!(s.meta.id.as_str(), "cline:1750000000000");
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/hello"));
    assert_eq!(s.meta.agent_version.as_deref(), Some("3.20.0"));
    assert_eq!(
        s.meta.metadata.as_ref().unwrap()["extension"],
        "saoudrizwan.claude-dev"
    );
    assert_eq!(
        s.meta.metadata.as_ref().unwrap()["host"],
        "Visual Studio Code"
    );
    assert_eq!(s.turn_count, 2);
    assert_eq!(s.turns[1].user_message.as_deref(), Some("Also commit it"));
    assert_eq!(count_kind(&s.clone(), MessageKind::Thinking), 1);
    let calls: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolCall)
        .map(|m| m.tool_name.as_deref().unwrap())
        .collect();
    assert_eq!(
        calls,
        [
            "read_file",
            "replace_in_file",
            "execute_command",
            "execute_command"
        ]
    );
    let results: Vec<(&str, &str)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .map(|m| {
            (
                m.tool_name.as_deref().unwrap(),
                m.tool_output.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("read_file", "print('hi')"),
            (
                "replace_in_file",
                "The content was successfully saved to hello.py."
            ),
            ("execute_command", "hello hi\n"),
            (
                "execute_command",
                "[main 1a2b3c4] Add greet\n 1 file changed, 4 insertions(+), 1 deletion(-)\n"
            ),
        ]
    );
    // Each result answers its own call.
    for m in s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
    {
        assert!(s
            .messages
            .iter()
            .any(|c| c.kind() == MessageKind::ToolCall && c.tool_call_id == m.tool_call_id));
    }
    let answers: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Text)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(
        answers,
        [
            "Let me read hello.py.",
            "Added greet() to hello.py.",
            "Committed."
        ]
    );
    assert_eq!(count_kind(s, MessageKind::Unknown), 1);
    assert_eq!(s.usage.len(), 6);
    let (i, o, cw, cr, cost) = sum_usage(&fp);
    assert_eq!((i, o, cw, cr), (635, 280, 1000, 7000));
    assert!((cost - 0.071).abs() < 1e-9);
    assert!(s
        .usage
        .iter()
        .all(|u| u.model.as_deref() == Some("claude-sonnet-4-5")));
    assert_eq!(s.checkpoints.len(), 2);
    assert_eq!(
        s.checkpoints[0].title.as_deref(),
        Some("checkpoint aaaaaaaa")
    );
    let files: Vec<(&str, &str)> = s
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.tool_name.as_deref().unwrap()))
        .collect();
    assert_eq!(
        files,
        [
            ("/home/dev/hello/hello.py", "read_file"),
            ("/home/dev/hello/README.md", "file_mentioned"),
        ]
    );
    // The commit line of git's output is a ref.
    assert!(s
        .refs
        .iter()
        .any(|r| r.ref_type == RefType::Commit && r.value == "1a2b3c4"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2025-06-15T15:06:40.000Z")
    );
}

#[test]
fn roo_code_and_kilo_code_tasks() {
    let roo = fixtures().join("Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks/0b7c2f1e-3d4a-4b5c-8d6e-7f8091a2b3c4/ui_messages.json");
    let fp = parse(&ClineTasks::roo_code(), &roo);
    let s = common::only(&fp);
    assert_eq!(s.meta.source, SourceKind::RooCode);
    assert_eq!(s.meta.id.as_str(), "0b7c2f1e-3d4a-4b5c-8d6e-7f8091a2b3c4");
    assert_eq!(s.meta.cwd.as_deref(), Some("/work/roo-app"));
    // Roo Code opens a task with a `text` message.
    assert_eq!(s.turn_count, 1);
    assert_eq!(
        s.turns[0].user_message.as_deref(),
        Some("Rename foo to bar in util.ts")
    );
    let call = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolCall)
        .unwrap();
    assert_eq!(call.tool_name.as_deref(), Some("apply_diff"));
    let result = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert_eq!(
        result.tool_output.as_deref(),
        Some("Changes successfully applied to util.ts")
    );
    assert_eq!(s.checkpoints.len(), 1);
    assert_eq!(count_kind(s, MessageKind::Summary), 1);
    assert_eq!(s.usage.len(), 2);
    assert_eq!(sum_usage(&fp).0, 100);

    let kilo = fixtures().join("Cursor/User/globalStorage/kilocode.kilo-code/tasks/1c8d3a2f-5e6b-4c7d-9e8f-0a1b2c3d4e5f/ui_messages.json");
    let fp = parse(&ClineTasks::kilo_code(), &kilo);
    let s = common::only(&fp);
    assert_eq!(s.meta.source, SourceKind::KiloCode);
    assert_eq!(s.turn_count, 1);
    assert_eq!(count_kind(s, MessageKind::ToolCall), 1);
    assert_eq!(count_kind(s, MessageKind::ToolResult), 1);
    assert_eq!(s.usage.len(), 2);
    let (i, o, cw, cr, cost) = sum_usage(&fp);
    assert_eq!((i, o, cw, cr), (30, 13, 0, 0));
    assert!((cost - 0.0003).abs() < 1e-12);
}

#[test]
fn a_task_with_only_ui_messages_still_indexes() {
    let path = fixtures().join(
        "Windsurf/User/globalStorage/saoudrizwan.claude-dev/tasks/1750000100000/ui_messages.json",
    );
    let fp = parse(&ClineTasks::cline(), &path);
    assert!(fp.issues.is_empty());
    assert!(fp.notes.is_empty(), "{:?}", fp.notes);
    let s = common::only(&fp);
    assert_eq!(s.turn_count, 1);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/notes"));
    assert_eq!(count_kind(s, MessageKind::ToolCall), 1);
    assert_eq!(count_kind(s, MessageKind::ToolResult), 1);
    let (i, o, cw, cr, _) = sum_usage(&fp);
    assert_eq!((i, o, cw, cr), (13, 36, 59, 82));
    assert_eq!(s.files[0].path, "/home/dev/notes/notes.md");
    assert_eq!(s.files[0].tool_name.as_deref(), Some("write_to_file"));
}

#[test]
fn a_task_with_only_the_api_history_still_indexes() {
    let path = fixtures().join(
        "VSCodium/User/globalStorage/saoudrizwan.claude-dev/tasks/1750000200000/api_conversation_history.json",
    );
    let fp = parse(&ClineTasks::cline(), &path);
    assert!(fp.issues.is_empty(), "{:?}", fp.issues);
    let s = common::only(&fp);
    assert_eq!(s.turn_count, 1);
    assert_eq!(
        s.turns[0].user_message.as_deref(),
        Some("Fix the typo in README.md")
    );
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/typo"));
    assert_eq!(count_kind(s, MessageKind::Thinking), 1);
    let call = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolCall)
        .unwrap();
    assert_eq!(call.tool_name.as_deref(), Some("replace_in_file"));
    let result = s
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert_eq!(result.tool_name.as_deref(), Some("replace_in_file"));
    assert_eq!(result.role, Some(Role::Tool));
    assert_eq!(s.models, vec!["claude-sonnet-4-5".to_string()]);
}

#[test]
fn a_file_that_is_not_an_array_is_a_format_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ui_messages.json");
    std::fs::write(&p, b"{\"ts\": 1}").unwrap();
    assert!(common::parse_whole(&ClineTasks::cline(), &p).is_err());
    std::fs::write(&p, b"not json").unwrap();
    assert!(common::parse_whole(&ClineTasks::cline(), &p).is_err());
    std::fs::write(&p, b"[]").unwrap();
    let fp = parse(&ClineTasks::cline(), &p);
    assert!(fp.sessions.is_empty());
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ui_messages.json");
        std::fs::write(&path, &bytes).unwrap();
        let _ = ClineTasks::cline().parse(ParseRequest { max_bytes: None, path: &path, resume: None });
    }

    #[test]
    fn arbitrary_record_sequences_never_panic(picks in proptest::collection::vec(0usize..16, 0..40)) {
        const RECORDS: &[&str] = &[
            r#"{"ts":1,"type":"say","say":"task","text":"do it"}"#,
            r#"{"ts":2,"type":"say","say":"text","text":"ok"}"#,
            r#"{"ts":3,"type":"say","say":"api_req_started","text":"{\"request\":\"[read_file for 'a'] Result:\\nx\",\"tokensIn\":1,\"cost\":0.1}"}"#,
            r#"{"ts":3,"type":"say","say":"api_req_started","text":"not json"}"#,
            r#"{"ts":4,"type":"say","say":"tool","text":"{\"tool\":\"readFile\",\"path\":\"a\"}"}"#,
            r#"{"ts":4,"type":"ask","ask":"tool","text":"{\"tool\":\"editedExistingFile\",\"path\":\"a\",\"content\":\"------- SEARCH\\nx\\n=======\\ny\\n+++++++ REPLACE\"}"}"#,
            r#"{"ts":5,"type":"say","say":"command","text":"ls"}"#,
            r#"{"ts":6,"type":"ask","ask":"command_output","text":"a\n"}"#,
            r#"{"ts":7,"type":"say","say":"checkpoint_created","lastCheckpointHash":"abc"}"#,
            r#"{"ts":8,"type":"say","say":"user_feedback","text":"more"}"#,
            r#"{"ts":9,"type":"ask","ask":"followup","text":"{\"question\":\"which?\",\"options\":[\"a\"]}"}"#,
            r#"{"type":"say"}"#,
            r#"{"ts":"x","type":"ask","ask":42}"#,
            r#"[1,2]"#,
            r#"{"ts":10,"type":"say","say":"tool","text":"{}"}"#,
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"write_to_file","input":{"path":"p"}}]}"#,
        ];
        let body: Vec<&str> = picks.iter().map(|i| RECORDS[*i]).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ui_messages.json");
        std::fs::write(&path, format!("[{}]", body.join(","))).unwrap();
        let out = ClineTasks::cline().parse(ParseRequest { max_bytes: None, path: &path, resume: None });
        if let Ok(fp) = out {
            for s in &fp.sessions {
                for (i, m) in s.messages.iter().enumerate() {
                    prop_assert_eq!(m.seq as usize, i);
                }
            }
        }
    }
}
