//! End-to-end tests of issue 21 ("Nothing silent, nothing lost"): files given by path are
//! read as discovery reads them, a path nothing reads is named, a broken store is one plain
//! line, and SpecStory histories are found in projects and linked to the agent's own record.

#![allow(clippy::print_stderr)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use common::{repo_root, run, trail};

fn shared_corpus(format: &str) -> Option<PathBuf> {
    let dir = repo_root().join("../shared/corpus").join(format);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: shared corpus {} not found", dir.display());
        None
    }
}

fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// Rows of a store, one string each, in a stable order.
fn rows(store: &Path, sql: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(store).unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        let mut cols = Vec::new();
        for i in 0..n {
            let v: rusqlite::types::Value = r.get(i)?;
            cols.push(format!("{v:?}"));
        }
        Ok(cols.join("|"))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// What identifies a session's content: id, source, parent, turns, messages and tool calls.
const SESSIONS_DIGEST: &str = "SELECT s.id, s.host_type, s.parent_session_id, s.turn_count,
    (SELECT count(*) FROM messages m WHERE m.session_id = s.id),
    (SELECT count(*) FROM messages m WHERE m.session_id = s.id AND m.kind = 'tool_call')
    FROM sessions s ORDER BY s.id";

// Item 1: the Copilot CLI corpus logs, given as files, as a flat folder, in their own
// `session-state/<id>/events.jsonl` layout or to `import`, give the sessions discovery gives.
#[test]
fn issue_21_copilot_cli_logs_by_path_equal_discovery() {
    let Some(corpus) = shared_corpus("copilot-cli") else {
        return;
    };
    let files = corpus_files(&corpus);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let state = home.join(".copilot/session-state");
    for f in &files {
        let folder = state.join(f.file_stem().unwrap());
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(f, folder.join("events.jsonl")).unwrap();
    }
    let index = |name: &str, args: &[&Path], import: bool| -> Vec<String> {
        let store = dir.path().join(format!("{name}.db"));
        let mut c = trail(&home, &store);
        c.arg(if import { "import" } else { "index" });
        for a in args {
            c.arg(a);
        }
        let (code, out, err) = run(&mut c);
        assert_eq!(code, 0, "{name}: {out}{err}");
        rows(&store, SESSIONS_DIGEST)
    };
    let discovered = index("discovery", &[], false);
    assert!(!discovered.is_empty());
    // Every corpus file gave at least one session, all of them Copilot CLI's.
    assert!(discovered.len() >= files.len(), "{discovered:?}");
    assert!(
        discovered.iter().all(|r| r.contains("\"copilot-cli\"")),
        "{discovered:?}"
    );

    let file_args: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    assert_eq!(index("files", &file_args, false), discovered, "files");
    assert_eq!(index("flat", &[&corpus], false), discovered, "flat folder");
    assert_eq!(index("layout", &[&state], false), discovered, "own layout");
    let events: Vec<PathBuf> = files
        .iter()
        .map(|f| state.join(f.file_stem().unwrap()).join("events.jsonl"))
        .collect();
    let event_args: Vec<&Path> = events.iter().map(PathBuf::as_path).collect();
    assert_eq!(
        index("layout-files", &event_args, false),
        discovered,
        "events.jsonl files"
    );
    assert_eq!(index("import", &file_args, true), discovered, "import");
}

// Item 2: a path no source reads is named, and `index` exits 2 when nothing named was read.
#[test]
fn issue_21_index_names_what_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t.db");
    let notes = dir.path().join("notes.json");
    std::fs::write(&notes, r#"{"todo": ["buy milk"]}"#).unwrap();
    let (code, out, err) = run(trail(dir.path(), &store).arg("index").arg(&notes));
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(&format!(
            "{}: not a session file of any format trail reads",
            notes.display()
        )),
        "{err}"
    );
    assert!(!store.exists(), "no store is created for nothing");

    // A folder holding no session file: named too.
    let empty = dir.path().join("docs");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("readme.txt"), "hello").unwrap();
    let (code, _, err) = run(trail(dir.path(), &store).arg("index").arg(&empty));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("holds no session file of any format trail reads"),
        "{err}"
    );

    // With something readable beside it: indexed, the other named, exit 1.
    let session = repo_root()
        .join("crates/trail-sources/tests/fixtures/codex")
        .join("rollout-2026-03-02T11-00-00-0199a1b2-0000-7000-8000-00000000e220.jsonl");
    let (code, out, err) = run(trail(dir.path(), &store)
        .arg("index")
        .arg(&notes)
        .arg(&session));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("Indexed 1 new"), "{out}");
    assert!(
        out.contains(&format!(
            "not read: {}: not a session file",
            notes.display()
        )),
        "{out}"
    );
    let (code, out, _) = run(trail(dir.path(), &store)
        .args(["index", "--json"])
        .arg(&notes)
        .arg(&session));
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["unread_paths"][0]["path"], notes.display().to_string());

    // A file a source read but found no session in says why (Claude Code keeps files that hold
    // only titles of conversations in other files).
    let titles = dir.path().join("titles.jsonl");
    std::fs::write(
        &titles,
        "{\"type\":\"summary\",\"summary\":\"Fix the build\",\"leafUuid\":\"0b1c\"}\n",
    )
    .unwrap();
    let (code, out, err) = run(trail(dir.path(), &store).arg("index").arg(&titles));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("no session: it holds only titles of conversations kept in other files"),
        "{out}"
    );
    let (_, out, _) = run(trail(dir.path(), &store)
        .args(["index", "--force", "--json"])
        .arg(&titles));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["empty_files"][0]["path"], titles.display().to_string());
}

// Item 3: a store that is not SQLite gives exactly one plain line on stderr in a pipe.
#[test]
fn issue_21_corrupt_store_is_one_plain_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("trail.db");
    std::fs::write(&store, "these are my notes, not a database ".repeat(40)).unwrap();
    for args in [
        vec!["list"],
        vec!["index"],
        vec!["usage"],
        vec!["doctor"],
        vec!["sql", "SELECT count(*) FROM sessions"],
    ] {
        // No --color flag and no NO_COLOR: colour is decided as a user's shell would.
        let mut c = Command::cargo_bin("trail").unwrap();
        c.env_clear()
            .env("HOME", dir.path())
            .arg("--store")
            .arg(&store)
            .args(&args);
        let (code, out, err) = run(&mut c);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains('\x1b'), "{args:?}: {err:?}");
        assert!(err.contains(&store.display().to_string()), "{err}");
        assert!(err.contains("is not a SQLite database"), "{err}");
        assert!(err.contains("--store"), "{err}");
        assert_eq!(err.matches("not a database").count(), 0, "{err}");
    }
}

/// Writes a Claude Code session (the fixture of the nothing_lost parser tests, under its real
/// id) whose lines ran in `project`.
fn claude_session_in(home: &Path, project: &Path) -> String {
    let id = "5e55a0b1-2c3d-4e5f-8a9b-0c1d2e3f4a5b";
    let text = std::fs::read_to_string(
        repo_root()
            .join("crates/trail-sources/tests/fixtures/claude-code/renamed-inline-subagent.jsonl"),
    )
    .unwrap()
    .replace("/home/dev/kettle", &project.display().to_string());
    let folder = home.join(".claude/projects/-project");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join(format!("{id}.jsonl")), text).unwrap();
    id.to_string()
}

fn specstory_fixture(name: &str) -> PathBuf {
    repo_root()
        .join("crates/trail-sources/tests/fixtures/specstory")
        .join(name)
}

// Item 4: a project's SpecStory history is found from the folder another session ran in, in
// the same index; the copy is linked to the agent's own session, which stays the one `list`
// shows, and adds no usage. A project under TRAIL_PROJECT_ROOTS is found without any session.
#[test]
fn issue_21_specstory_found_in_projects_and_linked_to_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = dir.path().join("work/kettle");
    let history = project.join(".specstory/history");
    std::fs::create_dir_all(&history).unwrap();
    let v2 = "2026-03-02_10-00Z-tidy-the-parser.md";
    std::fs::copy(specstory_fixture(v2), history.join(v2)).unwrap();
    let original = claude_session_in(&home, &project);
    // Another project, known to no session, under a configured root.
    let roots = dir.path().join("code");
    let other = roots.join("team/game/.specstory/history");
    std::fs::create_dir_all(&other).unwrap();
    let old = "2025-05-02_09-15-rename-the-config-loader.md";
    std::fs::copy(specstory_fixture(old), other.join(old)).unwrap();
    // Inside node_modules: never searched.
    let hidden = roots.join("team/game/node_modules/x/.specstory/history");
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::copy(specstory_fixture(old), hidden.join("hidden.md")).unwrap();

    let store = dir.path().join("t.db");
    let usage_before = {
        let only_claude = dir.path().join("claude-only.db");
        let (code, _, err) =
            run(trail(&home, &only_claude).args(["index", "--source", "claude-code"]));
        assert_eq!(code, 0, "{err}");
        rows(
            &only_claude,
            "SELECT count(*), sum(input_tokens + output_tokens) FROM usage",
        )
    };
    let (code, out, err) = run(trail(&home, &store)
        .env("TRAIL_PROJECT_ROOTS", &roots)
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    let copy = rows(
        &store,
        "SELECT id, parent_session_id, cwd, turn_count FROM sessions WHERE host_type = 'specstory' ORDER BY id",
    );
    assert_eq!(
        copy,
        vec![
            format!(
                "Text(\"specstory:2025-05-02_09-15-rename-the-config-loader\")|Null|Text({:?})|Integer(3)",
                roots.join("team/game").display().to_string()
            ),
            format!(
                "Text(\"specstory:2026-03-02_10-00Z-tidy-the-parser\")|Text({original:?})|Text({:?})|Integer(2)",
                project.display().to_string()
            ),
        ]
    );
    // SpecStory adds no usage: the totals are the Claude session's alone.
    assert_eq!(
        rows(
            &store,
            "SELECT count(*), sum(input_tokens + output_tokens) FROM usage"
        ),
        usage_before
    );
    // `list` shows the original and the unlinked history, not the linked copy.
    let (_, out, _) = run(trail(&home, &store).args(["list", "--json"]));
    let listed: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = listed.iter().filter_map(|s| s["id"].as_str()).collect();
    assert!(ids.contains(&original.as_str()), "{ids:?}");
    assert!(
        ids.contains(&"specstory:2025-05-02_09-15-rename-the-config-loader"),
        "{ids:?}"
    );
    assert!(
        !ids.contains(&"specstory:2026-03-02_10-00Z-tidy-the-parser"),
        "{ids:?}"
    );
    let (_, out, _) = run(trail(&home, &store).args(["list", "--all", "--json"]));
    assert!(out.contains("specstory:2026-03-02_10-00Z-tidy-the-parser"));

    // The older file names no session. Once the agent's own session of that conversation is
    // indexed (same folder, same first prompt, two hours apart as a zoneless local time can
    // be), the copy is linked to it and leaves `list`.
    let game = roots.join("team/game");
    let folder = home.join(".claude/projects/-game");
    std::fs::create_dir_all(&folder).unwrap();
    let cursorless = "7a0c1d2e-3f40-4516-8a7b-8c9d0e1f2a3b";
    let line = |uuid: &str,
                parent: Option<&str>,
                ty: &str,
                content: serde_json::Value,
                ts: &str| {
        serde_json::json!({"type": ty, "uuid": uuid, "parentUuid": parent, "sessionId": cursorless,
            "timestamp": ts, "cwd": game.display().to_string(), "isSidechain": false,
            "message": {"role": ty, "content": content}})
        .to_string()
    };
    std::fs::write(
        folder.join(format!("{cursorless}.jsonl")),
        [
            line(
                "c1",
                None,
                "user",
                "rename `load_cfg` to `load_config` everywhere".into(),
                "2025-05-02T11:15:40.000Z",
            ),
            line(
                "c2",
                Some("c1"),
                "assistant",
                serde_json::json!([{"type": "text", "text": "Renamed."}]),
                "2025-05-02T11:16:00.000Z",
            ),
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let (code, out, err) = run(trail(&home, &store)
        .env("TRAIL_PROJECT_ROOTS", &roots)
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        rows(
            &store,
            "SELECT parent_session_id, parent_agent_ref FROM sessions
             WHERE id = 'specstory:2025-05-02_09-15-rename-the-config-loader'"
        ),
        vec![format!("Text({cursorless:?})|Text(\"specstory\")")]
    );
    let (_, out, _) = run(trail(&home, &store).args(["list", "--json"]));
    assert!(!out.contains("specstory:"), "{out}");

    // Given by path, a history file is detected as SpecStory.
    let by_path = dir.path().join("p.db");
    let (code, out, err) = run(trail(&home, &by_path).arg("index").arg(history.join(v2)));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        rows(&by_path, "SELECT host_type FROM sessions"),
        vec!["Text(\"specstory\")".to_string()]
    );
    // Its original is not in that store, so the copy is the only record and is listed.
    let (_, out, _) = run(trail(&home, &by_path).args(["list", "--json"]));
    assert!(
        out.contains("specstory:2026-03-02_10-00Z-tidy-the-parser"),
        "{out}"
    );
}
