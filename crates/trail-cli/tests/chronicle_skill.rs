//! The query shapes GitHub Copilot's Chronicle skill teaches the model, in SQLite dialect, run
//! on a store built by `trail index` three ways: `trail sql`, the MCP `sql` tool, and a plain
//! SQLite connection that opens the store file alone (no search database attached, no function
//! of trail's registered), as `sqlite3 STORE`, Datasette or a notebook would (issue 45).
//!
//! The shapes come from the skill's own file: microsoft/vscode,
//! `extensions/copilot/assets/prompts/skills/chronicle/SKILL.md` at commit
//! 04304fd1806ea1d974c8df5abcc65d74dd5faf02 (its Standup, Cost Tips and Search workflows and its
//! Database Schema), and the standup pre-fetch Copilot's tool runs (`../shared/formats/
//! chronicle-store.md`). The queries below are written here for this test; the skill's text is
//! not copied.
//!
//! The store holds the bundled samples, a home written here with sessions timed relative to
//! now (so the time windows of the standup and the agent inventory are exact), and, when
//! present, the shared corpus. Each answer is checked against what the fixtures were written
//! to hold, and the three ways must agree row for row.

// A part skipped (no shared corpus, no `sqlite3` shell) says so on stderr.
#![allow(clippy::print_stderr)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{examples_home, repo_root, run, trail};
use serde_json::{json, Value};

/// The fixture home's sessions.
const FRESH: &str = "c45a0001-0000-4000-8000-000000000001";
const SUBAGENT: &str = "c45a0001-0000-4000-8000-000000000001:agent-ab12cd3";
const OLD: &str = "c45a0002-0000-4000-8000-000000000002";
const CLI: &str = "c45a0003-0000-4000-8000-000000000003";
const CWD: &str = "/work/fixture-repo";
const EDITED: &str = "/work/fixture-repo/src/zephyr_gauge.rs";
/// The pull request the fresh session opened, as `session_refs` names it (`owner/repo#N`, from
/// the URL in its answer).
const PR: &str = "acme/zephyr#4242";
/// The first prompt: a paste of this many characters.
const PASTE_CHARS: usize = 5000;

/// ISO-8601 UTC text of `secs` after the epoch (days to civil date: Howard Hinnant's method).
fn iso(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.000Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One Claude Code turn: a prompt, then an answer with its tool calls (name, id, input).
struct ClaudeTurn<'a> {
    prompt: String,
    answer: &'a str,
    calls: Vec<(&'a str, &'a str, Value)>,
}

/// A Claude Code transcript of `turns`, the first at `start` (seconds), a minute apart.
fn claude_transcript(
    session: &str,
    agent: Option<&str>,
    start: u64,
    turns: &[ClaudeTurn],
) -> String {
    let mut out = String::new();
    let mut parent: Option<String> = None;
    for (i, t) in turns.iter().enumerate() {
        let at = |s: u64| iso(start + i as u64 * 60 + s);
        let mut line = |uuid: String, kind: &str, ts: String, message: Value| {
            let mut v = json!({
                "parentUuid": parent, "isSidechain": agent.is_some(), "userType": "external",
                "cwd": CWD, "sessionId": session, "version": "2.1.80", "gitBranch": "feat/gauge",
                "type": kind, "uuid": uuid, "timestamp": ts, "message": message,
            });
            if let Some(a) = agent {
                v["agentId"] = json!(a);
            }
            parent = Some(uuid);
            out.push_str(&v.to_string());
            out.push('\n');
        };
        let tag = agent.unwrap_or("main");
        line(
            format!("{session}-{tag}-u{i}"),
            "user",
            at(0),
            json!({"role": "user", "content": t.prompt}),
        );
        let mut content = vec![json!({"type": "text", "text": t.answer})];
        for (name, id, input) in &t.calls {
            content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
        }
        line(
            format!("{session}-{tag}-a{i}"),
            "assistant",
            at(5),
            json!({"id": format!("msg_{session}_{tag}_{i}"), "type": "message", "role": "assistant",
                   "model": "claude-sonnet-4-5-20250929", "content": content,
                   "usage": {"input_tokens": 10, "output_tokens": 20}}),
        );
        for (_, id, _) in &t.calls {
            line(
                format!("{session}-{tag}-r{i}-{id}"),
                "user",
                at(10),
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]}),
            );
        }
    }
    out
}

fn plain(prompt: &str) -> ClaudeTurn<'static> {
    ClaudeTurn {
        prompt: prompt.to_string(),
        answer: "Done.",
        calls: Vec::new(),
    }
}

/// The Claude Code sessions: one updated two hours ago (six turns, no checkpoint, a pasted
/// first prompt, a plan, an edit, a pull request, a subagent of type `Explore`) and one last
/// updated 40 days ago.
fn write_claude(home: &Path, now: u64) {
    let project = home.join(".claude/projects/-work-fixture-repo");
    let turns = vec![
        ClaudeTurn {
            prompt: "p".repeat(PASTE_CHARS),
            answer: "That is a long paste.",
            calls: Vec::new(),
        },
        ClaudeTurn {
            prompt: "Plan the gauge first.".into(),
            answer: "Here is the plan.",
            calls: vec![(
                "ExitPlanMode",
                "toolu_plan",
                json!({"plan": "Add the quokkaplan gauge: read the sensor, convert, draw."}),
            )],
        },
        ClaudeTurn {
            prompt: "Go ahead.".into(),
            answer: "Editing the gauge.",
            calls: vec![(
                "Edit",
                "toolu_edit",
                json!({"file_path": EDITED, "old_string": "a", "new_string": "b"}),
            )],
        },
        ClaudeTurn {
            prompt: "Open a pull request.".into(),
            answer: "Opened https://github.com/acme/zephyr/pull/4242 for review.",
            calls: Vec::new(),
        },
        ClaudeTurn {
            prompt: "Find the other gauges.".into(),
            answer: "Asking a subagent.",
            calls: vec![(
                "Task",
                "toolu_task",
                json!({"subagent_type": "Explore", "description": "Find gauges", "prompt": "List every gauge"}),
            )],
        },
        plain("Thanks, that is all."),
    ];
    let start = now - 7200;
    write(
        &project.join(format!("{FRESH}.jsonl")),
        &claude_transcript(FRESH, None, start, &turns),
    );
    let agents = project.join(FRESH).join("subagents");
    write(
        &agents.join("agent-ab12cd3.jsonl"),
        &claude_transcript(
            FRESH,
            Some("ab12cd3"),
            start + 250,
            &[plain("List every gauge")],
        ),
    );
    write(
        &agents.join("agent-ab12cd3.meta.json"),
        &json!({"toolUseId": "toolu_task"}).to_string(),
    );
    write(
        &project.join(format!("{OLD}.jsonl")),
        &claude_transcript(OLD, None, now - 40 * 86_400, &[plain("An old question.")]),
    );
}

/// A Copilot CLI session updated an hour ago: six turns, a compaction checkpoint file and a
/// `plan.md`.
fn write_copilot_cli(home: &Path, now: u64) {
    let dir = home.join(".copilot/session-state").join(CLI);
    let start = now - 3600;
    let mut lines = vec![
        json!({"type": "session.start", "id": "e0", "timestamp": iso(start),
        "data": {"sessionId": CLI, "version": 1, "producer": "copilot-agent",
                 "copilotVersion": "0.0.402", "startTime": iso(start),
                 "context": {"cwd": CWD, "branch": "feat/gauge"}}}),
    ];
    for i in 0..6u64 {
        let (u, a) = (format!("e{i}u"), format!("e{i}a"));
        lines.push(json!({"type": "user.message", "id": u, "timestamp": iso(start + 60 * i + 1),
            "data": {"content": format!("Step {i} of the wombat work"), "interactionId": format!("i{i}")}}));
        lines.push(json!({"type": "assistant.message", "id": a, "timestamp": iso(start + 60 * i + 5),
            "data": {"messageId": format!("m{i}"), "content": format!("Step {i} done."),
                     "toolRequests": [], "interactionId": format!("i{i}"), "turnId": i.to_string()}}));
    }
    let mut text = String::new();
    for l in lines {
        text.push_str(&l.to_string());
        text.push('\n');
    }
    write(&dir.join("events.jsonl"), &text);
    write(
        &dir.join("workspace.yaml"),
        &format!("id: {CLI}\ncwd: {CWD}\nbranch: feat/gauge\nsummary: Wombat work\n"),
    );
    write(
        &dir.join("plan.md"),
        "# Plan\n\nShip the wombat plan in three steps.\n",
    );
    write(
        &dir.join("checkpoints/001-start.md"),
        "## Overview\n\nThe wombat work so far.\n",
    );
}

/// The store: the fixture home, the bundled samples, and the shared corpus when present.
fn build_store(dir: &Path) -> PathBuf {
    let store = dir.join("trail.db");
    let home = dir.join("home");
    let now = now_secs();
    write_claude(&home, now);
    write_copilot_cli(&home, now);
    for h in [home.as_path(), examples_home().as_path()] {
        let (code, _, err) = run(trail(dir, &store).arg("--home").arg(h).arg("index"));
        assert_eq!(code, 0, "{err}");
    }
    let corpus = repo_root().join("../shared/corpus");
    if corpus.is_dir() {
        let (code, _, err) = run(trail(dir, &store)
            .arg("index")
            .arg(corpus.join("claude-code"))
            .arg(corpus.join("codex")));
        assert_eq!(code, 0, "{err}");
    } else {
        eprintln!("skipped the shared corpus part: ../shared/corpus not found");
    }
    store
}

/// Rows as JSON values, through `trail sql --json`.
fn via_cli(dir: &Path, store: &Path, sql: &str) -> Vec<Vec<Value>> {
    let (code, out, err) = run(trail(dir, store).args(["sql", "--json", sql]));
    assert_eq!(code, 0, "trail sql failed on {sql}: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    rows_of(&v)
}

fn rows_of(v: &Value) -> Vec<Vec<Value>> {
    v["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("no rows in {v}"))
        .iter()
        .map(|r| r.as_array().unwrap().clone())
        .collect()
}

/// Rows through a plain SQLite connection to the store file alone.
fn via_sqlite(store: &Path, sql: &str) -> Vec<Vec<Value>> {
    let conn =
        rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut stmt = conn
        .prepare(sql)
        .unwrap_or_else(|e| panic!("a plain connection cannot run {sql}: {e}"));
    let n = stmt.column_count();
    let rows = stmt
        .query_map([], |r| {
            (0..n)
                .map(|i| {
                    Ok(match r.get_ref(i)? {
                        rusqlite::types::ValueRef::Null => Value::Null,
                        rusqlite::types::ValueRef::Integer(x) => json!(x),
                        rusqlite::types::ValueRef::Real(x) => json!(x),
                        rusqlite::types::ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                        rusqlite::types::ValueRef::Blob(b) => json!(b.len()),
                    })
                })
                .collect::<rusqlite::Result<Vec<Value>>>()
        })
        .unwrap();
    rows.collect::<rusqlite::Result<_>>().unwrap()
}

/// `trail mcp` over stdio, driven with plain JSON-RPC lines.
struct Mcp {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl Mcp {
    fn start(dir: &Path, store: &Path) -> Mcp {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_trail"));
        cmd.env_clear()
            .env("HOME", dir)
            .arg("--store")
            .arg(store)
            .args(["mcp", "--no-refresh"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            out,
            next_id: 0,
        };
        mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "chronicle-skill-test", "version": "1"}}),
        );
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, v: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.out.read_line(&mut line).unwrap() > 0,
                "trail mcp closed"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    fn sql(&mut self, sql: &str) -> Vec<Vec<Value>> {
        let r = self.request(
            "tools/call",
            json!({"name": "sql", "arguments": {"sql": sql, "max_rows": 1000}}),
        );
        assert_ne!(
            r["isError"],
            json!(true),
            "the sql tool failed on {sql}: {r}"
        );
        rows_of(&r["structuredContent"])
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `sql` the three ways; they must agree. Returns the rows.
fn ask(dir: &Path, store: &Path, mcp: &mut Mcp, sql: &str) -> Vec<Vec<Value>> {
    let cli = via_cli(dir, store, sql);
    let plain = via_sqlite(store, sql);
    let tool = mcp.sql(sql);
    assert_eq!(
        cli, plain,
        "trail sql and a plain connection differ on {sql}"
    );
    assert_eq!(cli, tool, "trail sql and the MCP sql tool differ on {sql}");
    cli
}

fn texts(rows: &[Vec<Value>], column: usize) -> Vec<String> {
    rows.iter()
        .map(|r| r[column].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The standup pre-fetch: the last day's sessions, then their refs, files and turns.
fn standup(dir: &Path, store: &Path, mcp: &mut Mcp) {
    let sessions = ask(
        dir,
        store,
        mcp,
        "SELECT id, summary, branch, repository, cwd, host_type, created_at, updated_at
         FROM sessions WHERE updated_at >= datetime('now', '-1 day') ORDER BY updated_at DESC",
    );
    let ids = texts(&sessions, 0);
    for want in [FRESH, SUBAGENT, CLI] {
        assert!(ids.contains(&want.to_string()), "{want} not in {ids:?}");
    }
    assert!(
        !ids.contains(&OLD.to_string()),
        "a 40-day-old session in {ids:?}"
    );
    let list = format!("'{FRESH}', '{SUBAGENT}', '{CLI}'");
    let refs = ask(
        dir,
        store,
        mcp,
        &format!(
            "SELECT session_id, ref_type, ref_value FROM session_refs WHERE session_id IN ({list})"
        ),
    );
    assert_eq!(refs, vec![vec![json!(FRESH), json!("pr"), json!(PR)]]);
    let files = ask(
        dir,
        store,
        mcp,
        &format!(
            "SELECT session_id, file_path, tool_name FROM session_files WHERE session_id IN ({list})"
        ),
    );
    assert_eq!(
        files,
        vec![vec![json!(FRESH), json!(EDITED), json!("Edit")]]
    );
    let turns = ask(
        dir,
        store,
        mcp,
        &format!(
            "SELECT session_id, turn_index, substr(user_message, 1, 120) AS user_message,
                    substr(assistant_response, 1, 200) AS assistant_response
             FROM turns WHERE session_id IN ({list})
               AND (user_message IS NOT NULL OR assistant_response IS NOT NULL)
             ORDER BY session_id, turn_index"
        ),
    );
    // Six turns each for the two sessions, one for the subagent.
    let count = |id: &str| turns.iter().filter(|r| r[0] == json!(id)).count();
    assert_eq!((count(FRESH), count(SUBAGENT), count(CLI)), (6, 1, 6));
    let first = turns.iter().find(|r| r[0] == json!(FRESH)).unwrap();
    assert_eq!(first[2], json!("p".repeat(120)));
}

/// The cost-tips inventory: sessions by agent over 30 days, here and everywhere.
fn agents(dir: &Path, store: &Path, mcp: &mut Mcp) {
    let here = ask(
        dir,
        store,
        mcp,
        &format!(
            "SELECT agent_name, agent_description, COUNT(*) AS n FROM sessions
             WHERE updated_at > datetime('now', '-30 days') AND cwd = '{CWD}'
             GROUP BY 1, 2 ORDER BY n DESC, 1, 2"
        ),
    );
    assert_eq!(
        here,
        vec![
            vec![json!("Claude Code"), Value::Null, json!(1)],
            vec![json!("Claude Code"), json!("Explore"), json!(1)],
            vec![json!("Copilot CLI"), Value::Null, json!(1)],
        ]
    );
    // The query, unchanged but for SQLite's date math: one row per agent and
    // description, the fixture's among them.
    let all = ask(
        dir,
        store,
        mcp,
        "SELECT agent_name, agent_description, COUNT(*) AS n FROM sessions
         WHERE updated_at > datetime('now', '-30 days') GROUP BY 1, 2 ORDER BY n DESC",
    );
    assert!(all.iter().any(|r| r[0] == json!("Copilot CLI")), "{all:?}");
    // Over all time: one row per agent present (the samples hold one session of each).
    let names = texts(
        &ask(
            dir,
            store,
            mcp,
            "SELECT agent_name FROM sessions GROUP BY 1 ORDER BY 1",
        ),
        0,
    );
    let want = [
        "Claude Code",
        "Codex",
        "Copilot CLI",
        "Gemini CLI",
        "OpenCode",
        "VS Code agent",
    ];
    assert_eq!(names, want, "agents in the store");
}

/// Full-text search through `search_index`: a word with a snippet, and quoted phrases that
/// only workspace artifacts hold.
fn search(dir: &Path, store: &Path, mcp: &mut Mcp) {
    let hits = ask(
        dir,
        store,
        mcp,
        "SELECT session_id, snippet(search_index, 0, '[', ']', '…', 12) AS snippet
         FROM search_index WHERE search_index MATCH 'imperial' ORDER BY rank LIMIT 50",
    );
    let sample = "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f";
    assert!(texts(&hits, 0).contains(&sample.to_string()), "{hits:?}");
    for snippet in texts(&hits, 1) {
        assert!(snippet.to_lowercase().contains("[imperial]"), "{snippet}");
    }
    let plan = ask(
        dir,
        store,
        mcp,
        "SELECT session_id, source_type, source_id FROM search_index
         WHERE search_index MATCH '\"quokkaplan gauge\"'",
    );
    assert_eq!(
        plan,
        vec![vec![
            json!(FRESH),
            json!("workspace_artifact"),
            json!(format!("{FRESH}:workspace:plan.md"))
        ]]
    );
    let cli_plan = ask(
        dir,
        store,
        mcp,
        "SELECT session_id, source_type FROM search_index WHERE search_index MATCH '\"wombat plan\"'",
    );
    assert_eq!(
        cli_plan,
        vec![vec![json!(CLI), json!("workspace_artifact")]]
    );
}

/// The search that collects sessions matching a file path or a reference in a CTE and joins
/// back to `sessions` once.
fn files_and_refs(dir: &Path, store: &Path, mcp: &mut Mcp) {
    let rows = ask(
        dir,
        store,
        mcp,
        "WITH hits AS (
             SELECT session_id, 'file' AS match_kind FROM session_files WHERE file_path LIKE '%zephyr%'
             UNION ALL
             SELECT session_id, 'ref' AS match_kind FROM session_refs WHERE ref_value LIKE '%zephyr%')
         SELECT s.id, s.branch, s.updated_at, group_concat(DISTINCT h.match_kind) AS matched
         FROM hits h JOIN sessions s ON s.id = h.session_id
         GROUP BY s.id ORDER BY s.updated_at DESC LIMIT 50",
    );
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0][0], json!(FRESH));
    assert_eq!(rows[0][1], json!("feat/gauge"));
    let mut kinds: Vec<&str> = rows[0][3].as_str().unwrap().split(',').collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["file", "ref"]);
}

/// Cost proxies: long sessions that never compacted, and oversized pastes.
fn cost_proxies(dir: &Path, store: &Path, mcp: &mut Mcp) {
    let long = ask(
        dir,
        store,
        mcp,
        &format!(
            "SELECT s.id, COUNT(t.id) AS turns FROM sessions s
             JOIN turns t ON t.session_id = s.id
             LEFT JOIN checkpoints c ON c.session_id = s.id
             WHERE c.session_id IS NULL AND s.cwd = '{CWD}'
             GROUP BY s.id HAVING COUNT(t.id) >= 5 ORDER BY turns DESC"
        ),
    );
    // The Copilot CLI session is as long but compacted once.
    assert_eq!(long, vec![vec![json!(FRESH), json!(6)]]);
    let pastes = ask(
        dir,
        store,
        mcp,
        &format!(
            "SELECT t.session_id, t.turn_index, LENGTH(t.user_message) AS chars FROM turns t
             JOIN sessions s ON s.id = t.session_id
             WHERE s.cwd = '{CWD}' AND LENGTH(t.user_message) > 2000 ORDER BY chars DESC"
        ),
    );
    assert_eq!(
        pastes,
        vec![vec![json!(FRESH), json!(0), json!(PASTE_CHARS)]]
    );
}

#[test]
fn the_chronicle_skills_queries_run_three_ways() {
    let dir = tempfile::tempdir().unwrap();
    let store = build_store(dir.path());
    let mut mcp = Mcp::start(dir.path(), &store);
    let version = ask(
        dir.path(),
        &store,
        &mut mcp,
        "SELECT version FROM schema_version",
    );
    assert_eq!(version, vec![vec![json!(3)]]);
    standup(dir.path(), &store, &mut mcp);
    agents(dir.path(), &store, &mut mcp);
    search(dir.path(), &store, &mut mcp);
    files_and_refs(dir.path(), &store, &mut mcp);
    cost_proxies(dir.path(), &store, &mut mcp);
}

/// The done-when of issue 45, with the `sqlite3` shell when the machine has one.
#[test]
fn the_sqlite3_shell_finds_the_sample_session_in_the_store_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("trail.db");
    let (code, _, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(examples_home())
        .arg("index"));
    assert_eq!(code, 0, "{err}");
    let Ok(out) = Command::new("sqlite3")
        .arg(&store)
        .arg("SELECT session_id FROM search_index WHERE search_index MATCH 'imperial'")
        .output()
    else {
        // CI installs the shell (.ci/run): there a missing one fails the test.
        assert!(
            std::env::var_os("CI").is_none(),
            "no sqlite3 shell on this CI machine"
        );
        eprintln!("skipped: no sqlite3 shell on this machine");
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f"),
        "{stdout}"
    );
}

/// `trail sql --schema` gives each new column its line.
#[test]
fn the_schema_lists_agent_name_and_agent_description() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("trail.db");
    let (code, _, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(examples_home())
        .arg("index"));
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = run(trail(dir.path(), &store).args(["sql", "--schema"]));
    assert_eq!(code, 0);
    for column in ["agent_name", "agent_description"] {
        let lines: Vec<&str> = out.lines().filter(|l| l.contains(column)).collect();
        assert_eq!(lines.len(), 1, "{column}: {lines:?}");
        assert!(
            lines[0].len() > column.len() + 20,
            "{column} has no description"
        );
    }
    assert!(out.contains("workspace_artifact"), "{out}");
}
