//! Claude Code format changes of late 2026 (issue 18), each on a fixture written from the
//! evidence named above its test.

mod common;

use std::path::{Path, PathBuf};

use trail_model::{MessageKind, PromptSource, Session};
use trail_sources::claude_code::ClaudeCode;
use trail_sources::{FileParse, Source};

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&ClaudeCode, path).expect("parse")
}

fn write_lines(dir: &Path, name: &str, lines: &[serde_json::Value]) -> PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn prompts(s: &Session) -> Vec<(&str, Option<PromptSource>)> {
    s.messages
        .iter()
        .filter(|m| m.kind() == MessageKind::Prompt)
        .map(|m| (m.text.as_str(), m.prompt_source))
        .collect()
}

const WORKFLOW_SESSION: &str = "7f3a0c2e-1b4d-4c6e-9a8b-2d5e6f7a8b9c";

fn workflow_fixture() -> PathBuf {
    common::fixtures("claude-code").join("workflows/-home-dev-site")
}

// Evidence: daaain/claude-code-log `test/test_data/workflow_scriptpath/` (the parent session,
// `<session>/subagents/workflows/wf_sp01/agent-agsp0001.jsonl` whose lines carry `sessionId`
// `<parent>#agent-agsp0001`, `agent-agsp0001.meta.json` with `agentType: workflow-subagent`,
// `journal.jsonl` with `started`/`result` records, and `<session>/workflows/wf_sp01.json` with
// runId, status, workflowName, totalTokens, phases and workflowProgress), Claude Code v2.1.154+.
// The fixture under tests/fixtures/claude-code/workflows is written from that layout.
#[test]
fn workflow_agent_links_to_its_parent_and_carries_its_run() {
    let dir = workflow_fixture();
    let files = ClaudeCode.discover(std::slice::from_ref(&dir));
    let names: Vec<String> = files
        .iter()
        .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    assert_eq!(
        names,
        vec![
            format!("{WORKFLOW_SESSION}/subagents/workflows/wf_a1b2c3/agent-ag7f01.jsonl"),
            format!("{WORKFLOW_SESSION}.jsonl"),
        ],
        "the run's journal is not a session file"
    );

    let parent = parse(&files[1]);
    let p = common::only(&parent);
    assert_eq!(p.meta.id.as_str(), WORKFLOW_SESSION);
    let result = p
        .messages
        .iter()
        .find(|m| m.kind() == MessageKind::ToolResult)
        .unwrap();
    assert_eq!(result.tool_call_id.as_deref(), Some("toolu_wf_links"));
    assert_eq!(result.agent_ref.as_deref(), Some("wf_a1b2c3"), "the run id");
    let run: serde_json::Value = serde_json::from_str(result.extra.as_deref().unwrap()).unwrap();
    assert_eq!(run["workflowName"], "link-check");
    assert_eq!(run["status"], "completed");
    assert_eq!(run["totalTokens"], 39);
    assert_eq!(run["phases"], serde_json::json!(["Crawl"]));
    assert!(
        run.get("script").is_none(),
        "the script itself is not copied"
    );

    let agent = parse(&files[0]);
    let a = common::only(&agent);
    assert_eq!(
        a.meta.id.as_str(),
        format!("{WORKFLOW_SESSION}:agent-ag7f01"),
        "not `<parent>#agent-<id>:agent-<id>`"
    );
    let link = a.meta.parent.as_ref().unwrap();
    assert_eq!(link.session_id.as_str(), WORKFLOW_SESSION);
    assert_eq!(link.agent_ref.as_deref(), Some("wf_a1b2c3"));
    let meta = a.meta.metadata.as_ref().unwrap();
    assert_eq!(meta["workflowRunId"], "wf_a1b2c3");
    assert_eq!(meta["workflowRun"]["workflowName"], "link-check");
    assert_eq!(meta["workflowRun"]["agents"][0]["label"], "crawl");
    assert_eq!(meta["workflowRun"]["agents"][0]["tokens"], 39);
    assert_eq!(
        meta["journalResult"],
        serde_json::json!({"broken": ["about.html -> /team"]})
    );
    assert_eq!(a.turn_count, 1);
    assert_eq!(a.usage.len(), 1);

    // Named directly, the journal parses to nothing.
    let journal = files[0].with_file_name("journal.jsonl");
    let j = parse(&journal);
    assert!(j.sessions.is_empty() && j.issues.is_empty());
}

// Evidence: the shared corpus `claude-code-workflows` (daaain/claude-code-log
// `test/test_data/workflow_scriptpath/`, read in place): one parent, one workflow agent.
#[test]
fn workflow_corpus_gives_one_parent_and_one_agent() {
    let Some(dir) = common::shared_corpus("claude-code-workflows") else {
        return;
    };
    let files = ClaudeCode.discover(std::slice::from_ref(&dir));
    assert_eq!(files.len(), 2, "{files:?}");
    let mut sessions = Vec::new();
    for f in &files {
        sessions.extend(parse(f).sessions);
    }
    assert_eq!(sessions.len(), 2);
    let parent_id = "22220000-0000-4000-8000-000000000002";
    let agent = sessions
        .iter()
        .find(|s| s.meta.parent.is_some())
        .expect("the agent");
    assert_eq!(
        agent.meta.id.as_str(),
        format!("{parent_id}:agent-agsp0001")
    );
    let link = agent.meta.parent.as_ref().unwrap();
    assert_eq!(link.session_id.as_str(), parent_id);
    assert_eq!(link.agent_ref.as_deref(), Some("wf_sp01"));
    let parent = sessions.iter().find(|s| s.meta.parent.is_none()).unwrap();
    assert_eq!(parent.meta.id.as_str(), parent_id);
    // The corpus has no `workflows/<run>.json`: the run is known by its journal alone.
    let meta = agent.meta.metadata.as_ref().unwrap();
    assert_eq!(meta["workflowRunId"], "wf_sp01");
    assert_eq!(
        meta["journalResult"],
        "Batch a and b swept; 2 stale pages flagged."
    );
}
