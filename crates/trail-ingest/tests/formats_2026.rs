//! Format changes of late 2026 (issue 18) that only show once files are linked in the store.

#![allow(clippy::print_stderr)]

use std::path::PathBuf;

use trail_ingest::{index, IndexOptions, NoProgress};
use trail_model::SourceKind;
use trail_store::Store;

fn shared(format: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(format);
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipped: shared corpus not found at {}", p.display());
        None
    }
}

fn sessions(store: &Store) -> Vec<(String, Option<String>, Option<String>)> {
    let mut stmt = store
        .connection()
        .prepare("SELECT id, parent_session_id, parent_tool_call_id FROM sessions ORDER BY id")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

// Evidence: the shared corpus `claude-code-workflows` (daaain/claude-code-log
// `test/test_data/workflow_scriptpath/`): a parent whose `Workflow` call launched run
// `wf_sp01`, one agent under `subagents/workflows/wf_sp01/` whose lines say `sessionId`
// `<parent>#agent-agsp0001`, and the run's `journal.jsonl`.
#[test]
fn workflow_corpus_indexes_one_parent_with_one_linked_agent() {
    let Some(dir) = shared("claude-code-workflows") else {
        return;
    };
    let db = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db.path().join("t.db")).unwrap();
    let summary = index(
        &mut store,
        &IndexOptions::one_source(SourceKind::ClaudeCode, &dir),
        &NoProgress,
    )
    .unwrap();
    assert!(summary.issues.is_empty(), "{:?}", summary.issues);
    let parent = "22220000-0000-4000-8000-000000000002";
    assert_eq!(
        sessions(&store),
        vec![
            (parent.to_string(), None, None),
            (
                format!("{parent}:agent-agsp0001"),
                Some(parent.to_string()),
                Some("toolu_wfsp01".to_string())
            ),
        ],
        "one parent, one workflow agent linked to the Workflow call that launched it, no other session"
    );
}
