//! Issue 20: the team store on PostgreSQL, end to end through the `trail` binary, against a real
//! server each test starts (initdb in a temporary folder, loopback port; skipped without
//! PostgreSQL, failed under CI=true).
//!
//! The same data read from the local store and from the team store must give the same answers:
//! every comparison below is between two runs of the same command, `--store FILE` and
//! `--store postgres://...`.

#![allow(clippy::print_stderr)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{claude_session, examples_home, run, trail, Exchange};
use serde_json::Value;
use trail_postgres::test_server::TestServer;

const NOW: &str = "2026-11-22T12:00:00Z";

/// A server with a migrated team database and two developers' roles, `alice` and `bob`
/// (docs/team.md's setup).
struct Team {
    server: TestServer,
    _dir: tempfile::TempDir,
}

impl Team {
    fn start(test: &str) -> Option<Team> {
        let dir = tempfile::tempdir().unwrap();
        let server = TestServer::start_or_skip(dir.path(), test)?;
        let admin = server.create_database("team");
        let scratch = tempfile::tempdir().unwrap();
        let (code, _, err) = run(
            trail(scratch.path(), &scratch.path().join("s.db")).args(["db", "migrate", &admin])
        );
        assert_eq!(code, 0, "{err}");
        server
            .admin(
                "team",
                "CREATE ROLE alice LOGIN IN ROLE trail_writer, trail_reader;
                 CREATE ROLE bob LOGIN IN ROLE trail_writer, trail_reader;",
            )
            .unwrap();
        Some(Team { server, _dir: dir })
    }

    fn url(&self, user: &str) -> String {
        self.server.url(user, "team")
    }

    fn client(&self, user: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(user), postgres::NoTls).unwrap()
    }

    fn count(&self, sql: &str) -> i64 {
        self.client(trail_postgres::test_server::ADMIN)
            .query_one(sql, &[])
            .unwrap()
            .get(0)
    }
}

/// A local store indexed from `home` (default: the bundled samples).
struct Local {
    dir: tempfile::TempDir,
    home: PathBuf,
}

impl Local {
    fn indexed(home: Option<&Path>) -> Local {
        let dir = tempfile::tempdir().unwrap();
        let home = home.map(Path::to_path_buf).unwrap_or_else(examples_home);
        let local = Local { dir, home };
        let (code, _, err) = run(local.cmd().arg("index"));
        assert_eq!(code, 0, "{err}");
        local
    }

    fn store(&self) -> PathBuf {
        self.dir.path().join("trail.db")
    }

    fn cmd(&self) -> Command {
        let mut c = trail(self.dir.path(), &self.store());
        c.arg("--home").arg(&self.home).env("TRAIL_NOW", NOW);
        c
    }

    /// `trail sync URL --json ARGS` from this store; the summary.
    fn sync(&self, url: &str, args: &[&str]) -> Value {
        let (code, out, err) = run(self.cmd().args(["sync", url, "--json"]).args(args));
        assert_eq!(code, 0, "sync failed: {err}");
        serde_json::from_str(&out).unwrap()
    }
}

/// `trail --store STORE ARGS` (file or URL), with a fixed now; exit code and stdout.
fn read(store: &str, args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = run(trail(dir.path(), Path::new(store))
        .env("TRAIL_NOW", NOW)
        .args(args));
    assert!(
        code == 0 || code == 1,
        "{args:?} on {store}: exit {code}: {err}"
    );
    if out.is_empty() {
        eprintln!("{args:?} on {store}: exit {code}, nothing on stdout: {err}");
    }
    (code, out)
}

/// The exit code of `trail --store STORE ARGS`.
fn exit_code(store: &str, args: &[&str]) -> i32 {
    let dir = tempfile::tempdir().unwrap();
    run(trail(dir.path(), Path::new(store))
        .env("TRAIL_NOW", NOW)
        .args(args))
    .0
}

/// The command's JSON, without what differs from run to run (`elapsed_ms`).
fn json(store: &str, args: &[&str]) -> Value {
    let (_, out) = read(store, args);
    let mut v: Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"));
    if let Some(o) = v.as_object_mut() {
        o.remove("elapsed_ms");
    }
    v
}

/// The first column of a `trail sql` query on `store`, as strings (session ids).
fn sql_ids(store: &str, sql: &str) -> Vec<String> {
    json(store, &["sql", sql, "--json"])["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect()
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// (session, turn) of each hit, sorted: ranking differs between bm25 and ts_rank, the hits
/// must not.
fn hit_set(hits: &Value) -> Vec<(String, Option<i64>)> {
    let mut v: Vec<(String, Option<i64>)> = hits
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["session_id"].as_str().unwrap().to_string(),
                h["turn"].as_i64(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn team_store_answers_as_the_local_store_does() {
    let Some(team) = Team::start("team_store_answers_as_the_local_store_does") else {
        return;
    };
    let local = Local::indexed(None);
    let summary = local.sync(&team.url("alice"), &["--no-redact"]);
    assert!(
        summary["plan"]["new"].as_array().unwrap().len() >= 7,
        "{summary}"
    );
    let file = local.store().to_string_lossy().into_owned();
    assert_same_answers(
        &file,
        &team.url("alice"),
        &[
            "imperial",
            "weather",
            "test*",
            "\"cups to grams\"",
            "error OR warning",
            "scale NOT recipe",
            "src/scale.py",
            "nothing-like-this-anywhere",
        ],
        "/home/demo/projects/recipe-box/src/scale.py",
    );
}

/// The same commands on the local store `file` and the team store `pg` print the same JSON
/// (search: the same hits; their order may differ).
fn assert_same_answers(file: &str, pg: &str, queries: &[&str], why: &str) {
    let list = json(file, &["list", "--all", "--limit", "100000", "--json"]);
    assert_eq!(
        json(pg, &["list", "--all", "--limit", "100000", "--json"]),
        list
    );
    assert_eq!(
        json(pg, &["list", "--json"]),
        json(file, &["list", "--json"])
    );
    for id in ids(&list) {
        assert_eq!(
            json(pg, &["show", &id, "--json"]),
            json(file, &["show", &id, "--json"]),
            "show {id}"
        );
        // What the session changed: its edit calls and file snapshots, from either store.
        assert_eq!(
            json(pg, &["diff", &id, "--json"]),
            json(file, &["diff", &id, "--json"]),
            "diff {id}"
        );
    }
    for q in queries {
        let (lc, lo) = read(file, &["search", q, "--json", "--limit", "500"]);
        let (pc, po) = read(pg, &["search", q, "--json", "--limit", "500"]);
        assert_eq!(pc, lc, "search {q}: exit code");
        let (l, p): (Value, Value) = (
            serde_json::from_str(&lo).unwrap(),
            serde_json::from_str(&po).unwrap(),
        );
        assert_eq!(hit_set(&p), hit_set(&l), "search {q}");
    }
    for args in [
        &["usage", "--json"][..],
        &["usage", "--by", "model", "--json"],
        &["usage", "--by", "session", "--json"],
        &["usage", "--by", "source", "--json"],
        &["usage", "--by", "repo", "--breakdown", "--json"],
        &["usage", "--tz", "Europe/Paris", "--json"],
        &["usage", "--since", "2026-11-20T12:30:00Z", "--json"],
        &["usage", "--by", "block", "--json"],
        &[
            "standup",
            "--since",
            "2025-01-01",
            "--until",
            "2026-11-22",
            "--json",
        ],
        &["tips", "--json"],
        &["improve", "--json"],
        &["why", why, "--json"],
        &[
            "sql",
            "SELECT id, source, summary, created_at FROM sessions ORDER BY id",
            "--json",
        ],
        &["sql", "SELECT count(*) AS n FROM turns", "--json"],
        // PostgreSQL's sum of integers is a numeric: read back as the same integer.
        &[
            "sql",
            "SELECT sum(input_tokens) AS t, max(turn_count) AS m FROM sessions",
            "--json",
        ],
    ] {
        assert_eq!(json(pg, args), json(file, args), "{args:?}");
    }
}

/// The shared corpus (real files of every agent, read in place): the same answers from both
/// stores.
#[test]
fn the_shared_corpus_answers_the_same_from_both_stores() {
    let corpus = common::repo_root().join("../shared/corpus");
    if !corpus.is_dir() {
        eprintln!("skipped: shared corpus not found at {}", corpus.display());
        return;
    }
    let Some(team) = Team::start("the_shared_corpus_answers_the_same_from_both_stores") else {
        return;
    };
    let empty_home = tempfile::tempdir().unwrap();
    let local = Local::indexed(Some(empty_home.path()));
    for source in [
        "claude-code",
        "codex",
        "copilot-cli",
        "copilot-vscode",
        "gemini",
        "vscode-export",
    ] {
        let (code, out, err) = run(local.cmd().arg("index").arg(corpus.join(source)));
        assert_eq!(code, 0, "{source}: {out}{err}");
    }
    local.sync(&team.url("alice"), &["--no-redact"]);
    assert_same_answers(
        &local.store().to_string_lossy(),
        &team.url("alice"),
        &[
            "\"markdown formatting\"",
            "error",
            "test* NOT pass*",
            "cargo OR npm OR pytest",
            "src/main.rs",
            "README.md",
            "café",
        ],
        "/tmp/nowhere/README.md",
    );
}

/// Sessions whose changes are known from file snapshots (Claude Code's file-history backups,
/// VS Code's chat editing snapshots; the repo's own fixtures): `diff` and `why` give the same
/// answers from the team store, which carries the snapshots, as from the local store.
#[test]
fn diffs_and_why_answer_from_snapshots_on_the_team_store() {
    let Some(team) = Team::start("diffs_and_why_answer_from_snapshots_on_the_team_store") else {
        return;
    };
    let empty_home = tempfile::tempdir().unwrap();
    let local = Local::indexed(Some(empty_home.path()));
    let fixtures = common::repo_root().join("crates/trail-sources/tests/fixtures");
    let (code, _, err) = run(local
        .cmd()
        .args(["index", "--root"])
        .arg(format!(
            "claude-code={}",
            fixtures.join("claude-file-history").display()
        ))
        .arg("--root")
        .arg(format!(
            "copilot-vscode={}",
            fixtures.join("copilot-vscode-editing").display()
        )));
    assert_eq!(code, 0, "{err}");
    let file = local.store().to_string_lossy().into_owned();
    let snapshots = json(
        &file,
        &["sql", "SELECT count(*) AS n FROM file_snapshots", "--json"],
    )["rows"][0][0]
        .as_i64()
        .unwrap();
    assert!(snapshots >= 3, "the fixtures hold snapshots ({snapshots})");
    local.sync(&team.url("alice"), &["--no-redact"]);
    assert_eq!(team.count("SELECT count(*) FROM file_snapshots"), snapshots);
    let pg = team.url("alice");
    for id in ["7a8b9c0d", "5e1f2a3b"] {
        let local_diff = json(&file, &["diff", id, "--json"]);
        assert!(
            !local_diff["files"].as_array().unwrap().is_empty(),
            "{id}: {local_diff}"
        );
        assert_eq!(json(&pg, &["diff", id, "--json"]), local_diff, "diff {id}");
        for turn in ["0", "1"] {
            assert_eq!(
                json(&pg, &["diff", id, "--turn", turn, "--json"]),
                json(&file, &["diff", id, "--turn", turn, "--json"]),
                "diff {id} --turn {turn}"
            );
        }
    }
    for path in ["/home/demo/notes/todo.md", "/home/demo/app/greet.py"] {
        let local_why = json(&file, &["why", path, "--json"]);
        assert!(local_why["change"].is_object(), "{path}: {local_why}");
        assert_eq!(json(&pg, &["why", path, "--json"]), local_why, "why {path}");
    }
}

#[test]
fn a_second_sync_changes_nothing_and_an_appended_session_resyncs_alone() {
    let Some(team) = Team::start("a_second_sync_changes_nothing") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/-w-app");
    std::fs::create_dir_all(&project).unwrap();
    let x = |p: &'static str| Exchange {
        prompt: p,
        answer: "done",
        command: "cargo test",
        output: "ok",
        output_is_error: false,
    };
    for s in ["s-one", "s-two", "s-three"] {
        std::fs::write(
            project.join(format!("{s}.jsonl")),
            claude_session(s, None, "/w/app", "main", &[x("first prompt")]),
        )
        .unwrap();
    }
    let local = Local::indexed(Some(home.path()));
    let url = team.url("alice");
    let first = local.sync(&url, &[]);
    assert_eq!(first["plan"]["new"].as_array().unwrap().len(), 3, "{first}");
    let messages = team.count("SELECT count(*) FROM messages");

    let again = local.sync(&url, &[]);
    assert_eq!(again["plan"]["new"], Value::Array(vec![]), "{again}");
    assert_eq!(again["plan"]["changed"], Value::Array(vec![]));
    assert_eq!(again["plan"]["unchanged"], 3);
    assert_eq!(again["messages"], 0);
    assert_eq!(team.count("SELECT count(*) FROM messages"), messages);

    // The session grows by one exchange: only it is sent again.
    std::fs::write(
        project.join("s-two.jsonl"),
        claude_session(
            "s-two",
            None,
            "/w/app",
            "main",
            &[x("first prompt"), x("second prompt")],
        ),
    )
    .unwrap();
    let (code, _, err) = run(local.cmd().arg("index"));
    assert_eq!(code, 0, "{err}");
    let third = local.sync(&url, &[]);
    assert_eq!(
        third["plan"]["changed"],
        serde_json::json!(["s-two"]),
        "{third}"
    );
    assert_eq!(third["plan"]["new"], Value::Array(vec![]));
    assert_eq!(third["plan"]["unchanged"], 2);
    assert_eq!(
        team.count("SELECT count(*) FROM turns WHERE session_id = 's-two'"),
        2
    );
}

/// A home with `n` Claude Code sessions of `turns` exchanges each, all different.
fn generated_home(n: usize, turns: usize, cwd: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/-gen");
    std::fs::create_dir_all(&project).unwrap();
    let prompts: Vec<String> = (0..turns)
        .map(|t| format!("generated prompt {t} about widgets"))
        .collect();
    for i in 0..n {
        let id = format!(
            "gen-{cwd_tag}-{i:04}",
            cwd_tag = cwd.trim_start_matches('/').replace('/', "-")
        );
        let answers: Vec<String> = (0..turns)
            .map(|t| format!("answer {t} of session {i}: {}", "lorem ipsum ".repeat(40)))
            .collect();
        let exchanges: Vec<Exchange<'_>> = (0..turns)
            .map(|t| Exchange {
                prompt: &prompts[t],
                answer: &answers[t],
                command: "ls -la",
                output: "total 0",
                output_is_error: t % 7 == 3,
            })
            .collect();
        std::fs::write(
            project.join(format!("{id}.jsonl")),
            claude_session(&id, None, cwd, "main", &exchanges),
        )
        .unwrap();
    }
    home
}

#[test]
fn two_stores_sync_at_once() {
    let Some(team) = Team::start("two_stores_sync_at_once") else {
        return;
    };
    let home_a = generated_home(60, 4, "/a/proj");
    let home_b = generated_home(60, 4, "/b/proj");
    let a = Local::indexed(Some(home_a.path()));
    let b = Local::indexed(Some(home_b.path()));
    // Both also hold the bundled samples: the same session ids, pushed by two roles at once.
    for (l, home) in [(&a, &home_a), (&b, &home_b)] {
        let copied = std::process::Command::new("cp")
            .arg("-r")
            .arg(examples_home().join("."))
            .arg(home.path())
            .status()
            .unwrap();
        assert!(copied.success());
        let (code, _, err) = run(l.cmd().arg("index"));
        assert_eq!(code, 0, "{err}");
    }
    let samples = json(
        &a.store().to_string_lossy(),
        &[
            "sql",
            "SELECT count(*) AS n FROM sessions WHERE id NOT LIKE 'gen-%'",
            "--json",
        ],
    )["rows"][0][0]
        .as_i64()
        .unwrap();
    let mut ca = a.cmd();
    ca.args([
        "sync",
        &team.url("alice"),
        "--json",
        "--batch-sessions",
        "5",
    ]);
    let mut cb = b.cmd();
    cb.args(["sync", &team.url("bob"), "--json", "--batch-sessions", "5"]);
    let ha = std::thread::spawn(move || run(&mut ca));
    let hb = std::thread::spawn(move || run(&mut cb));
    let (ra, rb) = (ha.join().unwrap(), hb.join().unwrap());
    assert_eq!(ra.0, 0, "{}", ra.2);
    assert_eq!(rb.0, 0, "{}", rb.2);
    assert_eq!(
        team.count("SELECT count(*) FROM sessions WHERE id LIKE 'gen-a-%'"),
        60
    );
    assert_eq!(
        team.count("SELECT count(*) FROM sessions WHERE id LIKE 'gen-b-%'"),
        60
    );
    assert_eq!(
        team.count("SELECT count(*) FROM sessions WHERE id NOT LIKE 'gen-%'"),
        samples
    );
    assert_eq!(
        team.count("SELECT count(*) FROM sessions WHERE id LIKE 'gen-a-%' AND pushed_by = 'alice'"),
        60
    );
    // Each shared session went to one of them, whole.
    let sa: Value = serde_json::from_str(&ra.1).unwrap();
    let sb: Value = serde_json::from_str(&rb.1).unwrap();
    let others = sa["plan"]["owned_by_others"].as_array().unwrap().len()
        + sb["plan"]["owned_by_others"].as_array().unwrap().len();
    assert_eq!(others as i64, samples, "{sa}\n{sb}");
    // Then nothing is left to do for either.
    for (l, user) in [(&a, "alice"), (&b, "bob")] {
        let s = l.sync(&team.url(user), &[]);
        assert_eq!(s["plan"]["new"], Value::Array(vec![]), "{s}");
        assert_eq!(s["plan"]["changed"], Value::Array(vec![]), "{s}");
    }
}

/// What a team database holds, as text: every table's rows (without push times and store
/// ids), in key order, hashed per table.
fn database_digest(url: &str) -> String {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let mut out = String::new();
    for (table, order) in [
        ("sessions", "id"),
        ("messages", "session_id, seq"),
        ("turns", "session_id, turn_index"),
        ("tool_calls", "session_id, id"),
        ("usage", "session_id, request_key"),
        ("usage_rollup", "session_id, day, model, priced"),
        ("session_files", "session_id, file_path"),
        ("session_refs", "session_id, ref_type, ref_value"),
        ("checkpoints", "session_id, checkpoint_number"),
        ("file_snapshots", "session_id, file_path, version"),
    ] {
        let sql = format!(
            "SELECT coalesce(md5(string_agg((to_jsonb(t) - 'pushed_at' - 'store_id')::text, '|' ORDER BY {order})), '') FROM {table} t"
        );
        let d: String = c.query_one(&sql, &[]).unwrap().get(0);
        out.push_str(&format!("{table}:{d}\n"));
    }
    out
}

fn server_digest(team: &Team) -> String {
    database_digest(&team.server.url(trail_postgres::test_server::ADMIN, "team"))
}

#[test]
fn a_sync_killed_midway_is_completed_by_the_next() {
    let Some(team) = Team::start("a_sync_killed_midway") else {
        return;
    };
    team.server
        .admin("postgres", "CREATE DATABASE clean TEMPLATE team")
        .unwrap();
    let home = generated_home(400, 6, "/k/proj");
    let local = Local::indexed(Some(home.path()));
    let url = team.url("alice");
    let mut child = local
        .cmd()
        .args(["sync", &url, "--json", "--batch-sessions", "3"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let n = team.count("SELECT count(*) FROM sessions");
        if n >= 20 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the sync did not start sending"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SIGKILL: no chance to clean up.
    child.kill().unwrap();
    child.wait().unwrap();
    let partial = team.count("SELECT count(*) FROM sessions");
    assert!(
        partial < 400,
        "the sync finished before it was killed ({partial})"
    );
    // Whole sessions only: every session on the server has all its turns.
    assert_eq!(
        team.count("SELECT count(*) FROM sessions s WHERE (SELECT count(*) FROM turns t WHERE t.session_id = s.id) <> 6"),
        0
    );
    let resumed = local.sync(&url, &[]);
    assert_eq!(
        resumed["plan"]["new"].as_array().unwrap().len() as i64,
        400 - partial,
        "{resumed}"
    );
    // A clean sync of the same store into an empty database holds the same rows.
    let clean_url = team.server.url("alice", "clean");
    let (code, _, err) = run(local.cmd().args(["sync", &clean_url, "--json"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        server_digest(&team),
        database_digest(&team.server.url(trail_postgres::test_server::ADMIN, "clean"))
    );
}

#[test]
fn a_developer_cannot_change_another_developers_rows() {
    let Some(team) = Team::start("a_developer_cannot_change_another_developers_rows") else {
        return;
    };
    let local = Local::indexed(None);
    local.sync(&team.url("alice"), &[]);
    let before = server_digest(&team);
    let mut bob = team.client("bob");
    // Reading is allowed.
    let n: i64 = bob
        .query_one("SELECT count(*) FROM sessions", &[])
        .unwrap()
        .get(0);
    assert!(n > 0);
    // Updates and deletes of alice's rows touch nothing.
    for sql in [
        "UPDATE sessions SET summary = 'bob was here'",
        "UPDATE messages SET text = 'bob was here'",
        "DELETE FROM messages",
        "DELETE FROM usage",
        "DELETE FROM sessions",
    ] {
        let changed = bob
            .execute(sql, &[])
            .unwrap_or_else(|e| panic!("{sql}: {:?}", e.as_db_error()));
        assert_eq!(changed, 0, "{sql}");
    }
    // Rows claiming to be alice's are refused.
    let err = bob
        .execute(
            "INSERT INTO sessions (id, source, pushed_by, host, store_id, pushed_at, sync_digest, redacted)
             VALUES ('forged', 'codex', 'alice', 'h', 's', 'now', 'd', true)",
            &[],
        )
        .unwrap_err();
    let message = err
        .as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_default();
    assert!(message.contains("row-level security"), "{message}");
    // A session of alice's that bob's store also holds is left to alice.
    let summary = local.sync(&team.url("bob"), &[]);
    assert!(!summary["plan"]["owned_by_others"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(server_digest(&team), before);
}

#[test]
fn the_sql_surface_cannot_write() {
    let Some(team) = Team::start("the_sql_surface_cannot_write") else {
        return;
    };
    let local = Local::indexed(None);
    local.sync(&team.url("alice"), &[]);
    let before = server_digest(&team);
    let dir = tempfile::tempdir().unwrap();
    for (sql, code) in [
        ("DELETE FROM sessions", 2),
        ("UPDATE sessions SET summary = 'x'", 2),
        ("SELECT 1; DELETE FROM sessions", 2),
        (
            "WITH d AS (DELETE FROM sessions RETURNING id) SELECT * FROM d",
            2,
        ),
        (
            "SELECT set_config('default_transaction_read_only', 'off', false)",
            0,
        ),
        ("CREATE TABLE x (a int)", 2),
        ("SELECT * INTO stolen FROM sessions", 2),
        ("COPY sessions TO PROGRAM 'true'", 2),
        ("SELECT pg_sleep(5)", 1),
    ] {
        let (c, out, err) = run(trail(dir.path(), Path::new(&team.url("alice"))).args([
            "sql",
            sql,
            "--timeout",
            "1",
        ]));
        assert_eq!(c, code, "{sql}: {out}{err}");
    }
    assert_eq!(server_digest(&team), before);
    assert_eq!(
        team.count("SELECT count(*) FROM pg_tables WHERE tablename IN ('x', 'stolen')"),
        0
    );
    // Reads work, with the caps.
    let v = json(
        &team.url("alice"),
        &[
            "sql",
            "SELECT id FROM messages",
            "--max-rows",
            "3",
            "--json",
        ],
    );
    assert_eq!(v["rows"].as_array().unwrap().len(), 3);
    assert_eq!(v["truncated"], true);
}

/// Include rules: with `[[sync.include]]` by agent, only that agent's sessions are pushed, and
/// an exclude rule still wins over an include rule.
#[test]
fn only_included_agents_reach_the_server() {
    let Some(team) = Team::start("only_included_agents_reach_the_server") else {
        return;
    };
    let local = Local::indexed(None);
    let file = local.store().to_string_lossy().into_owned();
    let by_source = |source: &str| {
        sql_ids(
            &file,
            &format!("SELECT id FROM sessions WHERE source = '{source}'"),
        )
    };
    let codex = by_source("codex");
    let claude = by_source("claude-code");
    assert!(!codex.is_empty() && !claude.is_empty());
    let config = local.dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[sync]\n[[sync.include]]\nagent = \"codex\"\n[[sync.include]]\nagent = \"claude-code\"\n\
         [[sync.exclude]]\nfolder = \"/home/demo/projects/recipe-box\"\n",
    )
    .unwrap();
    let (code, _, err) = run(local
        .cmd()
        .arg("--config")
        .arg(&config)
        .args(["sync", &team.url("alice")]));
    assert_eq!(code, 0, "{err}");
    let pushed = team.count("SELECT count(*) FROM sessions");
    assert!(pushed > 0);
    assert_eq!(
        team.count("SELECT count(*) FROM sessions WHERE source NOT IN ('codex', 'claude-code')"),
        0,
        "only the included agents are pushed"
    );
    assert_eq!(
        team.count("SELECT count(*) FROM sessions WHERE cwd LIKE '%recipe-box%'"),
        0,
        "an exclude rule wins over an include rule"
    );
    // The Codex session ran in recipe-box: included as an agent, excluded as a folder.
    assert_eq!(
        team.count("SELECT count(*) FROM sessions WHERE source = 'codex'"),
        0
    );
    assert_eq!(
        team.count("SELECT count(*) FROM sessions WHERE source = 'claude-code'"),
        claude.len() as i64
    );
}

#[test]
fn an_excluded_repository_never_reaches_the_server() {
    let Some(team) = Team::start("an_excluded_repository_never_reaches_the_server") else {
        return;
    };
    let local = Local::indexed(None);
    let file = local.store().to_string_lossy().into_owned();
    let mut private_ids = sql_ids(
        &file,
        "SELECT id FROM sessions WHERE cwd LIKE '%recipe-box%'",
    );
    assert!(!private_ids.is_empty());
    // A repository rule too: the tidepool session that knows its repository.
    let repo_ids = sql_ids(
        &file,
        "SELECT id FROM sessions WHERE repository = 'demo-org/tidepool'",
    );
    assert!(!repo_ids.is_empty());
    private_ids.extend(repo_ids);
    let config = local.dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[sync]\n[[sync.exclude]]\nfolder = \"/home/demo/projects/recipe-box\"\n\
         [[sync.exclude]]\nrepo = \"Demo-Org/tide*\"\n",
    )
    .unwrap();
    // A dry run sends nothing at all.
    let (code, out, err) = run(local.cmd().arg("--config").arg(&config).args([
        "sync",
        &team.url("alice"),
        "--dry-run",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("new"), "{out}");
    for id in &private_ids {
        assert!(
            !out.contains(id.as_str()),
            "{id} listed in a dry run:\n{out}"
        );
    }
    assert_eq!(team.count("SELECT count(*) FROM sessions"), 0);
    let (code, _, err) = run(local
        .cmd()
        .arg("--config")
        .arg(&config)
        .args(["sync", &team.url("alice")]));
    assert_eq!(code, 0, "{err}");
    assert!(team.count("SELECT count(*) FROM sessions") > 0);
    assert_eq!(
        team.count("SELECT count(*) FROM sessions WHERE cwd LIKE '%recipe-box%'"),
        0
    );
    assert_eq!(
        team.count("SELECT count(*) FROM sessions WHERE repository ILIKE 'demo-org/tidepool'"),
        0
    );
    let ids_sql = format!(
        "SELECT count(*) FROM messages WHERE session_id IN ('{}')",
        private_ids.join("', '")
    );
    assert_eq!(team.count(&ids_sql), 0);
    assert_eq!(
        team.count("SELECT count(*) FROM messages WHERE text ILIKE '%recipe%' OR tool_input ILIKE '%recipe-box%'"),
        0
    );
}

#[test]
fn a_forgotten_session_is_gone_from_both_stores_and_stays_gone() {
    let Some(team) = Team::start("a_forgotten_session_is_gone") else {
        return;
    };
    let local = Local::indexed(None);
    let url = team.url("alice");
    local.sync(&url, &[]);
    let id = "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f";
    assert_eq!(
        team.count(&format!(
            "SELECT count(*) FROM sessions WHERE id LIKE '{id}%'"
        )),
        2
    );
    let (code, out, err) = run(local.cmd().args(["forget", "7c1e2f40", "--json"]));
    assert_eq!(code, 0, "{err}");
    let forgotten: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        forgotten["forgotten"].as_array().unwrap().len(),
        2,
        "{forgotten}"
    );
    let file = local.store().to_string_lossy().into_owned();
    assert_eq!(exit_code(&file, &["show", id]), 2);
    // Its full-text rows went with it (the search database drops them at once).
    let (code, out) = read(&file, &["search", "imperial", "--json"]);
    assert!(code == 1 || !out.contains(id), "{out}");
    let (code, out) = read(
        &file,
        &[
            "sql",
            &format!("SELECT count(*) FROM turn_docs WHERE session_id LIKE '{id}%'"),
        ],
    );
    assert_eq!(code, 0);
    assert!(out.lines().any(|l| l.trim() == "0"), "{out}");
    let s = local.sync(&url, &[]);
    assert_eq!(s["plan"]["removed"].as_array().unwrap().len(), 2, "{s}");
    assert_eq!(
        team.count(&format!(
            "SELECT count(*) FROM sessions WHERE id LIKE '{id}%'"
        )),
        0
    );
    assert_eq!(
        team.count(&format!(
            "SELECT count(*) FROM messages WHERE session_id LIKE '{id}%'"
        )),
        0
    );
    // The agent's files are still there: an index does not bring it back, nor does a sync.
    let (code, _, err) = run(local.cmd().args(["index", "--force"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(exit_code(&file, &["show", id]), 2);
    let (code, out) = read(&file, &["search", "imperial", "--json"]);
    assert!(code == 1 || !out.contains(id), "{out}");
    local.sync(&url, &[]);
    assert_eq!(
        team.count(&format!(
            "SELECT count(*) FROM sessions WHERE id LIKE '{id}%'"
        )),
        0
    );
    // Until it is restored.
    let (code, _, err) = run(local.cmd().args(["forget", "--restore", id]));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(local.cmd().arg("index"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(exit_code(&file, &["show", id]), 0);
    local.sync(&url, &[]);
    assert_eq!(
        team.count(&format!(
            "SELECT count(*) FROM sessions WHERE id LIKE '{id}%'"
        )),
        2
    );
}

#[test]
fn secrets_are_redacted_on_push_by_default() {
    let Some(team) = Team::start("secrets_are_redacted_on_push_by_default") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/-w-app");
    std::fs::create_dir_all(&project).unwrap();
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let prompt = format!("deploy with GITHUB_TOKEN={token} please");
    std::fs::write(
        project.join("sec.jsonl"),
        claude_session(
            "sec",
            None,
            "/w/app",
            "main",
            &[Exchange {
                prompt: &prompt,
                answer: "ok",
                command: "echo hi",
                output: "hi",
                output_is_error: false,
            }],
        ),
    )
    .unwrap();
    let local = Local::indexed(Some(home.path()));
    let s = local.sync(&team.url("alice"), &[]);
    assert!(
        s["redactions"]
            .as_object()
            .unwrap()
            .values()
            .any(|n| n.as_u64() > Some(0)),
        "{s}"
    );
    assert_eq!(
        team.count(&format!(
            "SELECT count(*) FROM messages WHERE text LIKE '%{token}%'"
        )),
        0
    );
    assert!(team.count("SELECT count(*) FROM messages WHERE text LIKE '%[REDACTED:%'") > 0);
    // --no-redact sends it as it is (the digest changes, so the session is sent again).
    let s = local.sync(&team.url("alice"), &["--no-redact"]);
    assert_eq!(s["plan"]["changed"], serde_json::json!(["sec"]), "{s}");
    assert_eq!(
        team.count(&format!(
            "SELECT count(*) FROM messages WHERE text LIKE '%{token}%'"
        )),
        1
    );
}

#[test]
fn user_and_host_filters_narrow_a_team_store() {
    let Some(team) = Team::start("user_and_host_filters_narrow_a_team_store") else {
        return;
    };
    let a = Local::indexed(Some(generated_home(3, 1, "/a/p").path()));
    let b = Local::indexed(Some(generated_home(2, 1, "/b/p").path()));
    let (code, _, err) = run(a
        .cmd()
        .env("HOSTNAME", "laptop-a")
        .args(["sync", &team.url("alice")]));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(b
        .cmd()
        .env("HOSTNAME", "laptop-b")
        .args(["sync", &team.url("bob")]));
    assert_eq!(code, 0, "{err}");
    let url = team.url("alice");
    let count = |extra: &[&str]| {
        let mut args = vec!["list", "--json", "--limit", "100"];
        args.extend_from_slice(extra);
        json(&url, &args).as_array().unwrap().len()
    };
    assert_eq!(count(&[]), 5);
    assert_eq!(count(&["--user", "alice"]), 3);
    assert_eq!(count(&["--user", "bob"]), 2);
    assert_eq!(count(&["--host", "laptop-b"]), 2);
    assert_eq!(count(&["--user", "alice", "--host", "laptop-b"]), 0);
    let usage = json(&url, &["usage", "--user", "bob", "--json"]);
    assert_eq!(usage["totals"]["requests"], 2, "{usage}");
    // On a local store the filters are refused, not ignored.
    let dir = tempfile::tempdir().unwrap();
    let (code, _, _) = run(trail(dir.path(), &a.store()).args(["list", "--user", "alice"]));
    assert_eq!(code, 2);
}

#[test]
fn tls_is_required_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = TestServer::start_tls_or_skip(dir.path(), "tls_is_required_and_verified")
    else {
        return;
    };
    let admin = server.create_database("team");
    let ca = server.tls_ca().unwrap().to_string_lossy().into_owned();
    let local = Local::indexed(None);
    // The server's certificate is not from a public authority: refused without its CA.
    let (code, _, err) =
        run(local
            .cmd()
            .args(["sync", &format!("{admin}?sslmode=require"), "--json"]));
    assert_ne!(code, 0);
    assert!(
        err.to_lowercase().contains("certificate") || err.contains("tls") || err.contains("TLS"),
        "{err}"
    );
    let url = format!("{admin}?sslmode=require&sslrootcert={ca}");
    let s = local.sync(&url, &[]);
    assert!(!s["plan"]["new"].as_array().unwrap().is_empty());
    // sslmode=require fails rather than fall back to plain text, so that sync ran over TLS;
    // and reads go over it too.
    let v = json(
        &url,
        &["sql", "SELECT count(*) AS n FROM sessions", "--json"],
    );
    assert_eq!(
        v["rows"][0][0],
        s["plan"]["new"].as_array().unwrap().len(),
        "{v}"
    );
}

/// Issue 41: `usage --watch` on a team store used to hand the URL to the local store's opener,
/// which made a folder `postgres:` in the working folder and indexed local history into it.
/// It reads the team store (the same active block as `usage --active` on the local store that
/// synced it) and writes nothing where it runs.
#[test]
fn usage_watch_reads_a_team_store_and_writes_nothing_locally() {
    let Some(team) = Team::start("usage_watch_reads_a_team_store_and_writes_nothing_locally")
    else {
        return;
    };
    let local = Local::indexed(None);
    local.sync(&team.url("alice"), &["--no-redact"]);
    let (code, active, err) = run(local.cmd().args(["usage", "--active"]));
    assert_eq!(code, 0, "{err}");

    let cwd = tempfile::tempdir().unwrap();
    let (code, out, err) = run(trail(cwd.path(), Path::new(&team.url("alice")))
        .current_dir(cwd.path())
        .arg("--home")
        .arg(examples_home())
        .env("TRAIL_NOW", NOW)
        .args(["usage", "--watch", "--count", "1", "--interval", "0.1"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&active), "watch:\n{out}\nactive:\n{active}");
    assert!(out.contains("Refreshing every"), "{out}");
    assert_eq!(entries(cwd.path()), Vec::<String>::new());
}

/// An unreachable team store is an error naming it; nothing is created where the command runs.
#[test]
fn usage_watch_on_an_unreachable_team_store_fails_without_writing() {
    let cwd = tempfile::tempdir().unwrap();
    let (code, out, err) = run(trail(
        cwd.path(),
        Path::new("postgres://nobody@127.0.0.1:1/team?connect_timeout=2"),
    )
    .current_dir(cwd.path())
    .args(["usage", "--watch", "--count", "1"]));
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("team store"), "{err}");
    assert_eq!(entries(cwd.path()), Vec::<String>::new());
}

/// The names in a folder, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
