//! OpenCode details of late 2026 (issue 18).
//!
//! Evidence: sst/opencode `packages/opencode/src/project/project.ts` (`fromDirectory`: a folder
//! outside any repository belongs to the `global` project, whose worktree is `/`; a message's
//! `path` is `{cwd: the session's directory, root: the worktree}`); OpenCode's bash tool returns
//! `metadata: {output, exit: proc.exitCode, description}` with the part still `completed`; a call
//! to an unknown tool or with bad arguments goes to the `invalid` tool, which completes with
//! "The arguments provided to the tool are invalid: ...". The JSON-tree fixture
//! `tests/fixtures/opencode-global` is written from those shapes.

mod common;

use trail_model::MessageKind;
use trail_sources::opencode::Opencode;

fn fixture(id: &str) -> trail_model::Session {
    let file =
        common::fixtures("opencode-global").join(format!("storage/session/global/{id}.json"));
    let mut parsed = common::parse_whole(&Opencode, &file).expect("parse");
    assert_eq!(parsed.sessions.len(), 1);
    parsed.sessions.remove(0)
}

#[test]
fn the_global_project_worktree_is_never_the_cwd() {
    assert_eq!(
        fixture("ses_glob1").meta.cwd.as_deref(),
        Some("/home/dev/notes")
    );
    // A session recorded with `/` takes its messages' `path.cwd`, not `path.root`.
    assert_eq!(
        fixture("ses_glob2").meta.cwd.as_deref(),
        Some("/home/dev/scratch")
    );
}

#[test]
fn invalid_tool_calls_and_failed_commands_are_failures() {
    let s = fixture("ses_glob1");
    let results: Vec<(&str, bool)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .map(|m| (m.tool_call_id.as_deref().unwrap(), m.is_error))
        .collect();
    assert_eq!(
        results,
        vec![("toolu_bad", true), ("toolu_rm", true), ("toolu_ok", false)]
    );
}
