//! End-to-end tests of `trail search`, `trail show --highlight`, `trail sql` (its read-only
//! walls above all) and `trail resume`.

#![allow(clippy::print_stderr)]

mod common;

use common::{repo_root, run, trail};

use std::path::{Path, PathBuf};

fn shared_corpus() -> Option<PathBuf> {
    let p = repo_root().join("../shared/corpus");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipped: shared corpus not found at {}", p.display());
        None
    }
}

/// Indexes the bundled samples into a fresh store.
fn sample_store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("trail.db");
    let (code, out, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(repo_root().join("examples/home"))
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    (dir, store)
}

/// Indexes every folder of the shared corpus (read in place) into a fresh store.
fn corpus_store(corpus: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("trail.db");
    for source in [
        "claude-code",
        "codex",
        "copilot-cli",
        "copilot-vscode",
        "gemini",
        "vscode-export",
    ] {
        let (code, out, err) = run(trail(dir.path(), &store)
            .arg("index")
            .arg(corpus.join(source)));
        assert_eq!(code, 0, "{source}: {out}{err}");
    }
    (dir, store)
}

fn search_json(dir: &Path, store: &Path, args: &[&str]) -> (i32, Vec<serde_json::Value>) {
    let (code, out, err) = run(trail(dir, store).arg("search").arg("--json").args(args));
    assert!(code == 0 || code == 1, "{args:?}: {code} {out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    (code, v.as_array().unwrap().clone())
}

#[test]
fn search_finds_prompts_answers_tool_inputs_and_outputs_in_every_source() {
    let Some(corpus) = shared_corpus() else {
        return;
    };
    let (dir, store) = corpus_store(&corpus);
    // (query, source, message kind, field that matched): phrases taken from the corpus files.
    let cases = [
        ("\"markdown formatting\"", "claude-code", "prompt", "text"),
        ("\"Nested Agent Handling\"", "claude-code", "text", "text"),
        (
            "\"demonstrate error handling\"",
            "claude-code",
            "tool_call",
            "tool_input",
        ),
        (
            "default_branch 15420",
            "claude-code",
            "tool_result",
            "tool_output",
        ),
        ("\"invocation extraction\"", "codex", "prompt", "text"),
        ("\"emitted from event_msg\"", "codex", "text", "text"),
        ("example_group", "codex", "tool_result", "tool_output"),
        ("café emoji", "copilot-cli", "prompt", "text"),
        ("round-trip", "copilot-cli", "text", "text"),
        ("\"Cosmic Adventure\"", "copilot-vscode", "prompt", "text"),
        ("\"initializing Pygame\"", "copilot-vscode", "text", "text"),
        ("\"Gemini hello\"", "gemini-cli", "prompt", "text"),
        (
            "\"Captured multiline output\"",
            "gemini-cli",
            "text",
            "text",
        ),
        (
            "non-existent-directory",
            "gemini-cli",
            "tool_call",
            "tool_input",
        ),
        (
            "\"No such file or directory\"",
            "gemini-cli",
            "tool_result",
            "tool_output",
        ),
        ("higlighted", "vscode-export", "prompt", "text"),
        (
            "\"Grandchild Charts\"",
            "vscode-export",
            "tool_call",
            "tool_input",
        ),
        (
            "\"successfully edited\"",
            "vscode-export",
            "tool_result",
            "tool_output",
        ),
    ];
    for (q, source, kind, field) in cases {
        let (code, hits) = search_json(
            dir.path(),
            &store,
            &[q, "--source", source, "--limit", "50"],
        );
        assert_eq!(code, 0, "{q}: no hits");
        assert!(
            hits.iter()
                .all(|h| h["source"] == source && h["snippet"].as_str().unwrap().contains("**")),
            "{q}: {hits:#?}"
        );
        assert!(
            hits.iter()
                .any(|h| h["kind"] == kind && h["field"] == field),
            "{q}: no {kind} hit in {field}: {hits:#?}"
        );
    }
    // Tool outputs are indexed beyond their start: the tail of a long one is found too.
    let (code, hits) = search_json(dir.path(), &store, &["\"No such file or directory\""]);
    assert_eq!(code, 0);
    assert!(hits.iter().any(|h| h["source"] == "claude-code"));
}

#[test]
fn search_filters_narrow_the_hits() {
    let Some(corpus) = shared_corpus() else {
        return;
    };
    let (dir, store) = corpus_store(&corpus);
    let d = dir.path();
    let q = "\"No such file or directory\"";
    let (_, all) = search_json(d, &store, &[q, "--limit", "100"]);
    let sources: std::collections::BTreeSet<&str> =
        all.iter().map(|h| h["source"].as_str().unwrap()).collect();
    assert!(sources.len() >= 2, "{sources:?}");
    let (_, gem) = search_json(d, &store, &[q, "--source", "gemini-cli"]);
    assert!(!gem.is_empty() && gem.len() < all.len());
    assert!(gem.iter().all(|h| h["source"] == "gemini-cli"));
    // --role: the phrase is in tool output, not in what the user typed.
    let (code, user) = search_json(d, &store, &[q, "--role", "user"]);
    assert_eq!((code, user.len()), (1, 0));
    let (_, tool) = search_json(d, &store, &[q, "--role", "tool"]);
    assert!(tool.iter().all(|h| h["role"] == "tool") && !tool.is_empty());
    // --session (a prefix), --cwd, --repo, --model, --branch, --since/--until.
    let sid = gem[0]["session_id"].as_str().unwrap().to_string();
    let (_, one) = search_json(d, &store, &[q, "--session", &sid]);
    assert!(!one.is_empty() && one.iter().all(|h| h["session_id"] == sid.as_str()));
    let cwd = gem[0]["cwd"].as_str().map(str::to_string);
    if let Some(cwd) = cwd {
        let (_, c) = search_json(d, &store, &[q, "--cwd", &cwd]);
        assert!(!c.is_empty() && c.iter().all(|h| h["cwd"] == cwd.as_str()));
    }
    let (code, none) = search_json(d, &store, &[q, "--repo", "no-such-owner/no-such-repo"]);
    assert_eq!((code, none.len()), (1, 0));
    let (code, none) = search_json(d, &store, &[q, "--branch", "no-such-branch"]);
    assert_eq!((code, none.len()), (1, 0));
    let (code, none) = search_json(d, &store, &[q, "--model", "no-such-model"]);
    assert_eq!((code, none.len()), (1, 0));
    let (code, none) = search_json(d, &store, &[q, "--since", "2999-01-01"]);
    assert_eq!((code, none.len()), (1, 0));
    let (code, none) = search_json(d, &store, &[q, "--until", "1990-01-01"]);
    assert_eq!((code, none.len()), (1, 0));
    let (_, recent) = search_json(d, &store, &[q, "--sort", "recent", "--limit", "100"]);
    let times: Vec<&str> = recent
        .iter()
        .filter_map(|h| h["timestamp"].as_str())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    let (_, two) = search_json(d, &store, &[q, "--limit", "2"]);
    assert_eq!(two.len(), 2);
}

#[test]
fn search_output_shapes_and_exit_codes() {
    let (dir, store) = sample_store();
    let d = dir.path();
    let (code, hits) = search_json(d, &store, &["imperial"]);
    assert_eq!(code, 0);
    let mut keys: Vec<&str> = hits[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    insta::assert_snapshot!("search_json_keys", keys.join("\n"));
    let h = &hits[0];
    assert_eq!(h["session_id"], "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f");
    assert_eq!(h["turn"], 0);
    assert_eq!(h["kind"], "prompt");
    assert_eq!(
        h["open"],
        "trail show 7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f --turn 0 --highlight imperial"
    );
    assert!(h["snippet"].as_str().unwrap().contains("**imperial**"));

    // Human output: title, source, turn, snippet with plain marks, the command to open it.
    let (code, out, _) = run(trail(d, &store).args(["search", "gh", "pr"]));
    assert_eq!(code, 0);
    assert!(out.contains("weather-cli: --units flag and PR"), "{out}");
    assert!(out.contains("claude-code") && out.contains("turn 1") && out.contains("Bash input"));
    assert!(out.contains("**gh** **pr**"), "{out}");
    assert!(out.contains("trail show 7c1e2f40 --turn 1 --highlight 'gh pr'"));

    // JSON lines: one object per hit.
    let (code, out, _) = run(trail(d, &store).args(["search", "--jsonl", "the"]));
    assert_eq!(code, 0);
    for l in out.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(v["session_id"].is_string());
    }

    // No hits: exit 1, nothing on stdout. A query that cannot be read: exit 2 with why.
    let (code, out, err) = run(trail(d, &store).args(["search", "zzqqxx"]));
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    for bad in ["OR imperial", "imperial NOT", "->", "\"\""] {
        let (code, _, err) = run(trail(d, &store).args(["search", "--", bad]));
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("cannot search for"), "{err}");
        assert!(!err.contains("fts5") && !err.contains("SQL"), "{err}");
    }
    // Punctuation inside words is text, not FTS5 syntax.
    for ok in [
        "--units",
        "demo-org/weather-cli#7",
        "src/render.rs:1",
        "NEAR(x",
        "a:b",
        "col:umn",
    ] {
        let (code, _, err) = run(trail(d, &store).args(["search", "--", ok]));
        assert!(code == 0 || code == 1, "{ok}: {err}");
    }
}

#[test]
fn show_marks_the_hit_opened_from_a_search() {
    let (dir, store) = sample_store();
    let (code, out, _) = run(trail(dir.path(), &store).args([
        "show",
        "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f",
        "--turn",
        "0",
        "--highlight",
        "imperial",
    ]));
    assert_eq!(code, 0);
    assert!(out.contains("metric or **imperial**"), "{out}");
    let (_, out, _) = run(trail(dir.path(), &store).args(["show", "7c1e2f40", "--turn", "0"]));
    assert!(!out.contains("**imperial**"));
}

/// The Chronicle queries Copilot runs (its search and standup), through `trail sql`.
#[test]
fn copilot_queries_run_unchanged_through_trail_sql() {
    let (dir, store) = sample_store();
    let sql = |q: &str| -> serde_json::Value {
        let (code, out, err) = run(trail(dir.path(), &store).args(["sql", "--json", q]));
        assert_eq!(code, 0, "{q}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    let v = sql("SELECT content, session_id, source_type, bm25(search_index) AS rank FROM search_index WHERE search_index MATCH 'imperial' ORDER BY rank LIMIT 10");
    assert_eq!(v["rows"][0][1], "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f");
    assert_eq!(v["rows"][0][2], "turn");
    let v = sql("SELECT id, summary, branch, repository, cwd, host_type, created_at, updated_at FROM sessions WHERE updated_at >= datetime('2026-11-19') ORDER BY updated_at DESC");
    assert!(v["rows"].as_array().unwrap().len() >= 2);
    let ids = "('7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f')";
    for q in [
        format!("SELECT session_id, ref_type, ref_value FROM session_refs WHERE session_id IN {ids}"),
        format!("SELECT session_id, file_path, tool_name FROM session_files WHERE session_id IN {ids}"),
        format!("SELECT session_id, turn_index, substr(user_message, 1, 120) as user_message, substr(assistant_response, 1, 200) as assistant_response FROM turns WHERE session_id IN {ids} AND (user_message IS NOT NULL OR assistant_response IS NOT NULL) ORDER BY session_id, turn_index"),
    ] {
        assert!(!sql(&q)["rows"].as_array().unwrap().is_empty(), "{q}");
    }
    // trail's own index (one row per turn), ranked by bm25.
    let v = sql("SELECT d.session_id, d.turn_index, t.rank FROM turn_search t JOIN turn_docs d ON d.id = t.rowid WHERE turn_search MATCH 'imperial' ORDER BY rank");
    assert_eq!(v["rows"][0][0], "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f");
}

#[test]
fn sql_reads_with_caps_and_formats() {
    let (dir, store) = sample_store();
    let d = dir.path();
    let (code, out, _) = run(trail(d, &store).args([
        "sql",
        "--json",
        "--max-rows",
        "2",
        "SELECT id FROM messages ORDER BY id",
    ]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 2);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["columns"][0], "id");
    let (code, out, _) =
        run(trail(d, &store).args(["sql", "--json", "SELECT count(*) AS n FROM sessions"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["truncated"], false);
    assert!(v["rows"][0][0].as_i64().unwrap() >= 7);
    let (code, out, _) =
        run(trail(d, &store).args(["sql", "--csv", "SELECT 'a,b' AS x, 1 AS y, NULL AS z"]));
    assert_eq!((code, out.as_str()), (0, "x,y,z\n\"a,b\",1,\n"));
    let (code, out, _) = run(trail(d, &store).args([
        "sql",
        "SELECT source, count(*) AS n FROM sessions GROUP BY source ORDER BY source",
    ]));
    assert_eq!(code, 0);
    assert!(
        out.starts_with("source") && out.contains("claude-code"),
        "{out}"
    );
    let (code, _, err) = run(trail(d, &store).args(["sql", "SELEC nonsense"]));
    assert_eq!(code, 2, "{err}");
    let (code, out, _) = run(trail(d, &store).args(["sql", "--schema"]));
    assert_eq!(code, 0);
    for want in [
        "sessions (table)",
        "search_index (fts5)",
        "turn_search (fts5)",
        "turn_index",
        "Turn number within the session, from 0.",
    ] {
        assert!(out.contains(want), "{want} missing from:\n{out}");
    }
    assert!(
        !out.contains("search_index_data"),
        "FTS5 shadow tables are left out"
    );
}

fn file_digest(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

/// Every way to write through `trail sql` is refused, and the store's bytes do not change.
#[test]
fn sql_escape_attempts_are_denied_and_the_store_is_unchanged() {
    let (dir, store) = sample_store();
    let d = dir.path();
    let wal = PathBuf::from(format!("{}-wal", store.display()));
    // A first read lets SQLite create its (empty) -wal and -shm beside the store, as any
    // reader of a WAL database does; from then on nothing may change.
    let (code, _, _) = run(trail(d, &store).args(["sql", "SELECT count(*) FROM sessions"]));
    assert_eq!(code, 0);
    let search = PathBuf::from(format!("{}-search", store.display()));
    let before = (file_digest(&store), file_digest(&wal), file_digest(&search));
    assert!(before.0.is_some());
    let attempts = [
        "INSERT INTO sessions (id, source) VALUES ('x', 'codex')",
        "UPDATE sessions SET summary = 'pwned'",
        "DELETE FROM sessions",
        "REPLACE INTO sessions (id, source) VALUES ('x', 'codex')",
        "INSERT OR REPLACE INTO turns (session_id, turn_index) VALUES ('x', 0)",
        "DROP TABLE sessions",
        "DROP INDEX idx_sessions_repo",
        "DROP TABLE turn_docs",
        "CREATE TABLE t (x)",
        "CREATE VIEW v AS SELECT 1",
        "CREATE TRIGGER tr AFTER INSERT ON sessions BEGIN DELETE FROM turns; END",
        "CREATE INDEX ix ON sessions(summary)",
        "CREATE TEMP TABLE t (x)",
        "CREATE TEMP VIEW v AS SELECT 1",
        "CREATE VIRTUAL TABLE f USING fts5(x)",
        "ALTER TABLE sessions ADD COLUMN x",
        "ALTER TABLE sessions RENAME TO s2",
        "ATTACH DATABASE '/tmp/trail-escape.db' AS x",
        "DETACH DATABASE main",
        "VACUUM",
        "VACUUM INTO '/tmp/trail-escape-copy.db'",
        "REINDEX",
        "ANALYZE",
        "PRAGMA writable_schema = 1",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA user_version = 99",
        "PRAGMA foreign_keys = OFF",
        "PRAGMA wal_checkpoint(TRUNCATE)",
        "PRAGMA table_info(sessions)",
        "SELECT load_extension('/tmp/evil.so')",
        "INSERT INTO search_index (search_index) VALUES ('rebuild')",
        "INSERT INTO search_index (search_index) VALUES ('delete-all')",
        "INSERT INTO turn_search (turn_search) VALUES ('optimize')",
        "DELETE FROM turn_search",
        "DETACH DATABASE search",
        "ATTACH DATABASE ':memory:' AS y",
        "SAVEPOINT s",
        "RELEASE s",
        "BEGIN",
        "BEGIN IMMEDIATE",
        "COMMIT",
        "ROLLBACK",
        "WITH x AS (SELECT 1) DELETE FROM sessions",
        "WITH x AS (SELECT 1) INSERT INTO sessions (id, source) SELECT 'x', 'codex' FROM x",
        "SELECT 1; DELETE FROM sessions",
        "SELECT 1; SELECT 2",
        "DELETE FROM sessions; SELECT 1",
        "SELECT * FROM sessions WHERE id IN (SELECT 1) RETURNING id",
        "UPDATE sessions SET summary = 'x' RETURNING id",
    ];
    assert!(attempts.len() >= 30);
    for sql in attempts {
        let (code, out, err) = run(trail(d, &store).args(["sql", sql]));
        assert_eq!(code, 2, "{sql:?} was not refused: {out}{err}");
        assert!(out.is_empty(), "{sql:?} printed rows: {out}");
        assert!(err.starts_with("error: "), "{sql:?}: {err}");
    }
    // A query that never ends is stopped by the time cap.
    let started = std::time::Instant::now();
    let (code, _, err) = run(trail(d, &store).args([
        "sql",
        "--timeout",
        "1",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    ]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("stopped after"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(8));
    assert!(!Path::new("/tmp/trail-escape-copy.db").exists());
    let after = (file_digest(&store), file_digest(&wal), file_digest(&search));
    assert!(before == after, "the store's bytes changed");
}

#[test]
fn resume_prints_the_agent_command() {
    let (dir, store) = sample_store();
    let (code, out, _) = run(trail(dir.path(), &store).args(["resume", "7c1e2f40"]));
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "cd /home/demo/projects/weather-cli && claude --resume 7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f\n"
    );
    // A subagent resumes its parent.
    let (_, out, _) = run(trail(dir.path(), &store).args([
        "resume",
        "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f:agent-b7d41e2",
    ]));
    assert!(
        out.ends_with("claude --resume 7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f\n"),
        "{out}"
    );
    let (_, out, _) = run(trail(dir.path(), &store).args(["resume", "019a4c2e"]));
    assert!(
        out.ends_with("codex resume 019a4c2e-7d10-7b3e-9a51-3f6d2c8e1a47\n"),
        "{out}"
    );
    let (code, _, _) = run(trail(dir.path(), &store).args(["resume", "nope"]));
    assert_eq!(code, 2);
}

/// Issue 40: a hit whose best message is a tool input printed its JSON escapes literally
/// (`String,\n    #[arg`); the snippet reads as the text the input stands for, on one line.
#[test]
fn issue_40_a_tool_input_hit_shows_text_not_json_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let home = common::screens_home(dir.path());
    let store = dir.path().join("trail.db");
    let (code, out, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(&home)
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(trail(dir.path(), &store).args(["search", "zanzibar"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Bash input"),
        "the best message is the tool input: {out}"
    );
    assert!(
        out.contains("pub name: String, #[arg(long)] pub **zanzibar**: Units"),
        "{out}"
    );
    assert!(!out.contains("\\n") && !out.contains("\\\""), "{out}");
    let (_, json, _) = run(trail(dir.path(), &store).args(["search", "zanzibar", "--json"]));
    let hits: serde_json::Value = serde_json::from_str(&json).unwrap();
    let snippet = hits[0]["snippet"].as_str().unwrap();
    assert_eq!(hits[0]["field"], "tool_input");
    assert!(
        snippet.contains("String,\n    #[arg(long)]\n    pub **zanzibar**"),
        "{snippet}"
    );
}
