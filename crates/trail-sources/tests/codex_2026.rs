//! Codex format changes of late 2026 (issue 18).
//!
//! Evidence: openai/codex `codex-rs/protocol/src/protocol.rs` (`ItemCompletedEvent { thread_id,
//! turn_id, item: TurnItem, completed_at_ms }`, persisted as `event_msg` `item_completed`; a
//! rollout test asserts these events are written), `codex-rs/protocol/src/items.rs` (`TurnItem`
//! tagged by `type`: `CommandExecution` with camelCase `command`, `parsedCmd`, `status`,
//! `aggregatedOutput`, `exitCode`; `FileChange` with `changes` by path, `status`, `stdout`;
//! `McpToolCall` with `server`, `tool`, `arguments`, `result`, `error`; `WebSearch` with `query`,
//! `action`), `SessionMeta.base_instructions: Option<BaseInstructions>` (`{text}`), and
//! `codex-rs/state` (`STATE_DB_FILENAME = "state_5.sqlite"`; `threads(id, rollout_path, title,
//! ...)` in migration 0001, `name`/`name_state` ('explicit' for a name the user gave) in
//! migration 0040). The rollout fixture `rollout-2026-11-02T10-00-00-...148aa.jsonl` is written
//! from those shapes.

mod common;

use std::path::{Path, PathBuf};

use trail_model::{MessageKind, Role, TitleRank};
use trail_sources::codex::Codex;
use trail_sources::FileParse;

const ROLLOUT: &str = "rollout-2026-11-02T10-00-00-019a5d10-0000-7000-8000-0000000148aa.jsonl";
const THREAD: &str = "019a5d10-0000-7000-8000-0000000148aa";

fn parse(path: &Path) -> FileParse {
    common::parse_whole(&Codex, path).expect("parse")
}

/// A Codex home holding the fixture rollout under `sessions/YYYY/MM/DD/`.
fn codex_home() -> (tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join("sessions/2026/11/02");
    std::fs::create_dir_all(&day).unwrap();
    let rollout = day.join(ROLLOUT);
    std::fs::copy(common::fixtures("codex").join(ROLLOUT), &rollout).unwrap();
    (home, rollout)
}

#[test]
fn completed_items_give_commands_edits_and_tools() {
    let (_home, rollout) = codex_home();
    let parsed = parse(&rollout);
    assert!(parsed.issues.is_empty(), "{:?}", parsed.issues);
    let s = common::only(&parsed);
    let calls: Vec<(&str, Option<&str>)> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolCall)
        .map(|m| (m.tool_name.as_deref().unwrap(), m.tool_call_id.as_deref()))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("shell", Some("call_read_1")),
            ("apply_patch", Some("call_patch_1")),
            // Recorded as a response item: the completed item adds no second call.
            ("shell", Some("call_test_1")),
            ("mcp__github__get_issue", Some("call_mcp_1")),
            ("web_search", Some("ws_1")),
        ]
    );
    let failed: Vec<&str> = s
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult && m.is_error)
        .map(|m| m.tool_call_id.as_deref().unwrap())
        .collect();
    assert_eq!(
        failed,
        vec!["call_test_1"],
        "exit 101 fails; the rest succeed"
    );
    let mcp = s
        .messages
        .iter()
        .find(|m| {
            m.kind() == MessageKind::ToolResult && m.tool_call_id.as_deref() == Some("call_mcp_1")
        })
        .unwrap();
    assert_eq!(
        mcp.tool_output.as_deref(),
        Some("Issue 42: totals off by a cent")
    );
    let files: Vec<(&str, &str)> = s
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.tool_name.as_deref().unwrap()))
        .collect();
    assert_eq!(files, vec![("src/invoice.rs", "shell")]);
    assert!(
        s.messages
            .iter()
            .filter(|m| m.kind() == MessageKind::Text)
            .count()
            == 1,
        "an agent message item echoes its response item"
    );
    assert_eq!(s.turn_count, 1);
    // The system prompt is context, not the title or a prompt.
    let instructions = &s.messages[0];
    assert_eq!(
        (instructions.role(), instructions.kind()),
        (Role::System, MessageKind::Meta)
    );
    assert!(instructions.text.starts_with("You are Codex"));
    assert_eq!(
        s.meta.title.as_deref(),
        Some("Round invoice totals to cents and run the tests")
    );
}

/// Codex's state database as migration 0001 made it, with 0040's names when `with_names`.
fn state_db(home: &Path, with_names: bool) {
    let conn = rusqlite::Connection::open(home.join("state_5.sqlite")).unwrap();
    conn.execute_batch(
        "CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL,
             created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, source TEXT NOT NULL,
             model_provider TEXT NOT NULL, cwd TEXT NOT NULL, title TEXT NOT NULL,
             sandbox_policy TEXT NOT NULL, approval_mode TEXT NOT NULL);",
    )
    .unwrap();
    conn.execute(
        "INSERT INTO threads VALUES (?1, 'r', 0, 0, 'cli', 'openai', '/home/dev/billing',
             'Invoice rounding', 'workspace-write', 'on-request')",
        [THREAD],
    )
    .unwrap();
    if with_names {
        conn.execute_batch(
            "ALTER TABLE threads ADD COLUMN name TEXT;
             ALTER TABLE threads ADD COLUMN name_state TEXT NOT NULL DEFAULT 'legacy_unknown';",
        )
        .unwrap();
        conn.execute(
            "UPDATE threads SET name = 'Cents, not floats', name_state = 'explicit' WHERE id = ?1",
            [THREAD],
        )
        .unwrap();
    }
}

#[test]
fn thread_titles_come_from_the_state_database() {
    // Before migration 0040 (no `name`): Codex's title is a summary.
    let (home, rollout) = codex_home();
    state_db(home.path(), false);
    let s = parse(&rollout).sessions.remove(0);
    assert_eq!(s.meta.title.as_deref(), Some("Invoice rounding"));
    assert_eq!(s.meta.title_rank, TitleRank::SUMMARY);

    // With names: the user's name wins.
    let (home, rollout) = codex_home();
    state_db(home.path(), true);
    let s = parse(&rollout).sessions.remove(0);
    assert_eq!(s.meta.title.as_deref(), Some("Cents, not floats"));
    assert_eq!(s.meta.title_rank, TitleRank::USER);
    // Codex itself is never written to: the database is opened read-only.
    let conn = rusqlite::Connection::open(home.path().join("state_5.sqlite")).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM threads", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

mod props {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::*;

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            prop_oneof![
                Just("CommandExecution".to_string()),
                Just("FileChange".to_string()),
                Just("McpToolCall".to_string()),
                Just("WebSearch".to_string()),
                Just("call_test_1".to_string()),
                "[a-z_ ]{0,10}",
            ]
            .prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(
                    (
                        prop_oneof![
                            Just("type".to_string()),
                            Just("id".to_string()),
                            Just("command".to_string()),
                            Just("parsedCmd".to_string()),
                            Just("changes".to_string()),
                            Just("exitCode".to_string()),
                            Just("result".to_string()),
                            Just("error".to_string()),
                            Just("invocation".to_string()),
                            "[a-z]{1,6}",
                        ],
                        inner
                    ),
                    0..6
                )
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any completed item, after the fixture's lines, parses without panicking.
        #[test]
        fn completed_items_never_panic(items in proptest::collection::vec(arb_json(), 0..6)) {
            let (_home, rollout) = codex_home();
            let mut text = std::fs::read_to_string(&rollout).unwrap();
            for item in items {
                let line = serde_json::json!({"timestamp": "2026-11-02T10:01:00.000Z", "type": "event_msg",
                    "payload": {"type": "item_completed", "item": item}});
                text.push_str(&format!("{line}\n"));
            }
            std::fs::write(&rollout, text).unwrap();
            let parsed = parse(&rollout);
            prop_assert_eq!(parsed.sessions.len(), 1);
        }
    }
}
