//! End-to-end tests of the `trail` binary: the bundled samples, output formats, exit codes,
//! kill -9 safety, concurrent indexers and memory on a huge line.

#![allow(clippy::print_stderr)]

mod common;

use common::{examples_home, repo_root, run, trail};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;

/// Indexes the samples into a fresh store.
fn sample_store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("trail.db");
    let (code, out, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(examples_home())
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    (dir, store)
}

#[test]
fn index_samples_then_list_and_show() {
    let (dir, store) = sample_store();
    let (code, out, _) = run(trail(dir.path(), &store).arg("list"));
    assert_eq!(code, 0);
    insta::assert_snapshot!("list_samples", out);

    let (code, out, _) = run(trail(dir.path(), &store).args(["show", "7c1e2f40"]));
    assert_eq!(code, 0);
    insta::assert_snapshot!("show_claude_sample", out);

    let (code, out, _) =
        run(trail(dir.path(), &store).args(["show", "7c1e2f40", "--turn", "1", "--full"]));
    assert_eq!(code, 0);
    assert!(out.contains("gh pr create --fill"));
    assert!(out.contains("https://github.com/demo-org/weather-cli/pull/12"));
    assert!(
        !out.contains("Add a `--units` flag"),
        "only turn 1 is shown"
    );

    // Indexing again finds nothing new.
    let (code, out, _) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(examples_home())
        .arg("index"));
    assert_eq!(code, 0);
    assert!(
        out.starts_with("Indexed 0 new and 0 updated sessions from 7 files"),
        "{out}"
    );
    assert!(out.contains("7 unchanged"), "{out}");
}

#[test]
fn json_output_is_stable() {
    let (dir, store) = sample_store();
    let (code, out, _) =
        run(trail(dir.path(), &store).args(["list", "--json", "--source", "claude-code"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let row = &v[0];
    let mut keys: Vec<&str> = row
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    insta::assert_snapshot!("list_json_keys", keys.join("\n"));
    assert_eq!(row["id"], "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f");
    assert_eq!(row["turns"], 2);
    let (code, out, _) = run(trail(dir.path(), &store).args(["show", "7c1e2f40", "--json"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["subagents"][0]["parent_tool_call_id"], "toolu_task1");
    assert_eq!(v["refs"].as_array().unwrap().len(), 3);
    let (code, out, _) = run(trail(dir.path(), &store).args(["index", "--json"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("files_seen").is_some() && v.get("issues").is_some());
}

#[test]
fn doctor_reports_sources_and_problems() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t.db");
    let proj = dir.path().join(".claude/projects/-w");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(
        proj.join("s1.jsonl"),
        "{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"s1\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\nnot json at all\n",
    )
    .unwrap();
    let (code, out, _) = run(trail(dir.path(), &store).arg("index"));
    assert_eq!(code, 0);
    assert!(out.contains("1 parse problems"), "{out}");
    assert!(out.contains("s1.jsonl:2: invalid JSON"), "{out}");
    let (code, out, _) = run(trail(dir.path(), &store).arg("doctor"));
    assert_eq!(code, 0);
    assert!(
        out.contains(
            "Claude Code (claude-code): 1 files found, 1 indexed, 1 sessions, 1 parse problems"
        ),
        "{out}"
    );
    assert!(out.contains("s1.jsonl:2: invalid JSON"), "{out}");
    // The schema number grows with each migration; Chronicle's version does not.
    assert!(out.contains(", Chronicle-compatible v3)"), "{out}");
    let (code, out, _) = run(trail(dir.path(), &store).args(["doctor", "--json"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["problems"][0]["line"], 2);
}

#[test]
fn no_history_says_so_and_points_at_the_samples() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t.db");
    let (code, out, _) = run(trail(dir.path(), &store).arg("index"));
    assert_eq!(code, 0);
    assert!(
        out.contains("No agent history found on this machine"),
        "{out}"
    );
    assert!(out.contains("--home examples/home"), "{out}");
}

#[test]
fn exit_codes_and_errors() {
    let (dir, store) = sample_store();
    let (code, _, err) = run(trail(dir.path(), &store).args(["show", "nope-no-such"]));
    assert_eq!(code, 2, "an unknown id is a usage error");
    assert!(err.contains("no session matches"), "{err}");
    let (code, _, _) = run(trail(dir.path(), &store).args(["list", "--bogus"]));
    assert_eq!(code, 2);
    let (code, _, err) = run(trail(dir.path(), &store).args(["list", "--since", "soon"]));
    assert_eq!(code, 2);
    assert!(err.contains("cannot read \"soon\" as a time"), "{err}");
    let missing = dir.path().join("nothing-here.db");
    let (code, _, err) = run(trail(dir.path(), &missing).arg("list"));
    assert_eq!(code, 2);
    assert!(err.contains("run `trail index` first"), "{err}");
}

#[test]
fn colour_only_when_asked_and_never_with_no_color() {
    let (dir, store) = sample_store();
    let mut c = Command::cargo_bin("trail").unwrap();
    c.env_clear()
        .env("HOME", dir.path())
        .args(["--store"])
        .arg(&store)
        .args(["--color", "always", "list"]);
    let (_, out, _) = run(&mut c);
    assert!(out.contains("\x1b["));
    // Not a TTY: auto means no colour.
    let mut c = Command::cargo_bin("trail").unwrap();
    c.env_clear()
        .env("HOME", dir.path())
        .arg("--store")
        .arg(&store)
        .arg("list");
    let (_, out, _) = run(&mut c);
    assert!(!out.contains("\x1b["));
}

#[test]
fn broken_pipe_exits_quietly() {
    let (dir, store) = sample_store();
    let mut child = trail(dir.path(), &store)
        .args(["show", "7c1e2f40", "--full"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end before trail writes.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// --------------------------------------------------------------------------------------------
// Crash safety and concurrency on a generated history
// --------------------------------------------------------------------------------------------

/// Writes `files` Claude Code sessions of about `lines` lines each under `home`.
fn generate_history(home: &Path, files: usize, lines: usize) {
    let proj = home.join(".claude/projects/-home-gen");
    std::fs::create_dir_all(&proj).unwrap();
    let filler =
        "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ".repeat(20);
    for f in 0..files {
        let sid = format!("00000000-0000-4000-8000-{f:012}");
        let mut w = std::io::BufWriter::new(
            std::fs::File::create(proj.join(format!("{sid}.jsonl"))).unwrap(),
        );
        let mut parent = serde_json::Value::Null;
        for i in 0..lines {
            let uuid = format!("{sid}-{i}");
            let line = if i % 3 == 0 {
                serde_json::json!({"type":"user","uuid":uuid,"parentUuid":parent,"sessionId":sid,
                    "timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":format!("prompt {i} {filler}")}})
            } else if i % 3 == 1 {
                serde_json::json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"sessionId":sid,"requestId":format!("r{i}"),
                    "timestamp":"2026-01-01T00:00:01.000Z","message":{"id":format!("m{i}"),"model":"claude-x","role":"assistant",
                    "content":[{"type":"text","text":format!("answer {i} {filler}")},{"type":"tool_use","id":format!("t{i}"),"name":"Bash","input":{"command":"ls"}}],
                    "usage":{"input_tokens":3,"output_tokens":5}}})
            } else {
                serde_json::json!({"type":"user","uuid":uuid,"parentUuid":parent,"sessionId":sid,
                    "timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":format!("t{}", i - 1),"content":filler}]}})
            };
            writeln!(w, "{line}").unwrap();
            parent = serde_json::Value::String(uuid);
        }
    }
}

/// Opens a store with its search database attached (as trail does).
fn open_with_search(store: &Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(store).unwrap();
    conn.execute(
        "ATTACH DATABASE ?1 AS search",
        [format!("{}-search", store.display())],
    )
    .unwrap();
    conn
}

fn content_digest(store: &Path) -> Vec<String> {
    let conn = open_with_search(store);
    let mut out = Vec::new();
    for q in [
        "SELECT id, summary, turn_count, message_count, input_tokens, output_tokens FROM sessions ORDER BY id",
        "SELECT session_id, turn_index, length(user_message), length(assistant_response) FROM turns ORDER BY 1, 2",
        "SELECT session_id, count(*), sum(length(text)), sum(length(tool_output)) FROM messages GROUP BY 1 ORDER BY 1",
        "SELECT source_id, length(content) FROM main.search_index ORDER BY 1",
        "SELECT session_id, turn_index, first_at, last_at FROM search.turn_docs ORDER BY 1, 2",
        "SELECT count(*) FROM search.turn_search WHERE turn_search MATCH 'answer'",
        "SELECT count(*), sum(input_tokens + output_tokens) FROM usage",
        "SELECT path, bytes_parsed FROM source_files ORDER BY 1",
    ] {
        let mut stmt = conn.prepare(q).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let mut s = String::new();
                for i in 0..n {
                    let v: rusqlite::types::Value = r.get(i)?;
                    s.push_str(&format!("{v:?}|"));
                }
                Ok(s)
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out
}

#[test]
fn kill_9_at_any_moment_leaves_a_store_the_next_index_completes() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    generate_history(&home, 40, 300);
    let clean = work.path().join("clean.db");
    let (code, _, err) = run(trail(&home, &clean).arg("index"));
    assert_eq!(code, 0, "{err}");
    let want = content_digest(&clean);
    // Several trials, killed at different moments.
    for (trial, delay_ms) in [5u64, 40, 120, 250, 500].into_iter().enumerate() {
        let store = work.path().join(format!("killed-{trial}.db"));
        let mut child = trail(&home, &store)
            .arg("index")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL on Unix
        let _ = child.wait();
        if store.exists() {
            let conn = rusqlite::Connection::open(&store).unwrap();
            let ok: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(ok, "ok", "trial {trial}");
        }
        let search = PathBuf::from(format!("{}-search", store.display()));
        if search.exists() {
            let conn = rusqlite::Connection::open(&search).unwrap();
            let ok: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .unwrap();
            assert_eq!(ok, "ok", "trial {trial}: the search database");
        }
        let (code, _, err) = run(trail(&home, &store).arg("index"));
        assert_eq!(code, 0, "trial {trial}: {err}");
        assert_eq!(
            content_digest(&store),
            want,
            "trial {trial} (killed after {delay_ms} ms)"
        );
    }
}

#[test]
fn two_concurrent_indexers_neither_fails_nor_corrupts() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    generate_history(&home, 30, 300);
    let clean = work.path().join("clean.db");
    let r = run(trail(&home, &clean).arg("index"));
    assert_eq!(r.0, 0, "{} {}", r.1, r.2);
    let store = work.path().join("shared.db");
    let children: Vec<_> = (0..2)
        .map(|_| {
            trail(&home, &store)
                .arg("index")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(!err.contains("locked"), "{err}");
    }
    assert_eq!(content_digest(&store), content_digest(&clean));
}

#[test]
fn a_100_mb_line_keeps_memory_bounded() {
    let work = tempfile::tempdir().unwrap();
    let proj = work.path().join(".claude/projects/-w");
    std::fs::create_dir_all(&proj).unwrap();
    let path = proj.join("big.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(f, "{{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"big\",\"message\":{{\"role\":\"user\",\"content\":\"look at this screenshot\"}}}}").unwrap();
    // One line of about 100 MB: a pasted base64 image.
    write!(f, "{{\"type\":\"user\",\"uuid\":\"u2\",\"parentUuid\":\"u1\",\"sessionId\":\"big\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"").unwrap();
    let chunk = "iVBORw0KGgoAAAANSUhEUgAA".repeat(4096);
    for _ in 0..(100 << 20) / chunk.len() {
        f.write_all(chunk.as_bytes()).unwrap();
    }
    writeln!(
        f,
        "\"}}}},{{\"type\":\"text\",\"text\":\"what is wrong here?\"}}]}}}}"
    )
    .unwrap();
    writeln!(f, "{{\"type\":\"assistant\",\"uuid\":\"a1\",\"parentUuid\":\"u2\",\"sessionId\":\"big\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"the button overlaps\"}}]}}}}").unwrap();
    drop(f);
    let store = work.path().join("t.db");
    let (code, out, err) = run(trail(work.path(), &store).arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 parse problems"), "{out}");
    // Peak RSS of the largest child this test process has waited for (KiB on Linux).
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    let peak_mb = usage.max_rss() / 1024;
    eprintln!("peak RSS of trail index on a 100 MB line: {peak_mb} MB");
    assert!(peak_mb < 400, "peak RSS {peak_mb} MB");
    let conn = rusqlite::Connection::open(&store).unwrap();
    let (turns, prompt): (i64, String) = conn
        .query_row(
            "SELECT turn_count, (SELECT user_message FROM turns WHERE turn_index = 1) FROM sessions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(turns, 2);
    assert_eq!(prompt, "[image: image/png]\n\nwhat is wrong here?");
}

#[test]
fn importing_the_same_export_twice_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t.db");
    let export = repo_root().join("examples/chat-export.json");
    let count = |store: &Path| -> i64 {
        let c = rusqlite::Connection::open(store).unwrap();
        c.query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .unwrap()
    };
    let (code, out, err) = run(trail(dir.path(), &store).arg("import").arg(&export));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 new sessions"), "{out}");
    assert_eq!(count(&store), 1);
    let (code, out, _) = run(trail(dir.path(), &store).arg("import").arg(&export));
    assert_eq!(code, 0);
    assert!(
        out.contains("0 new sessions, 0 updated, 1 files already imported"),
        "{out}"
    );
    // The same content under another name is the same session.
    let copy = dir.path().join("renamed-chat.json");
    std::fs::copy(&export, &copy).unwrap();
    let (code, out, _) = run(trail(dir.path(), &store).arg("import").arg(&copy));
    assert_eq!(code, 0);
    assert!(out.contains("0 new sessions"), "{out}");
    assert_eq!(count(&store), 1);
    // Not a session file: a usage error.
    let junk = dir.path().join("notes.txt");
    std::fs::write(&junk, "hello").unwrap();
    let (code, _, err) = run(trail(dir.path(), &store).arg("import").arg(&junk));
    assert_eq!(code, 2);
    assert!(err.contains("not in a format trail reads"), "{err}");
}

/// Issue 41: the session flags are one struct shared by search, list, export and the reports;
/// export's still choose the sessions of `--all` only, and each command reads them.
#[test]
fn shared_session_flags_filter_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    let home = common::examples_home();
    let (code, _, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(&home)
        .arg("index"));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(trail(dir.path(), &store).args(["export", "--source", "codex", "x"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--all"), "{err}");
    let count = |args: &[&str]| {
        let (code, out, err) = run(trail(dir.path(), &store).args(args));
        assert_eq!(code, 0, "{args:?}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v.as_array().map(Vec::len).unwrap_or(0)
    };
    let all = count(&["list", "--json", "--limit", "1000"]);
    let codex = count(&["list", "--json", "--source", "codex"]);
    assert!(codex > 0 && codex < all, "codex {codex} of {all}");
    assert_eq!(count(&["list", "--json", "--since", "2100-01-01"]), 0);
    let (code, out, _) = run(trail(dir.path(), &store)
        .args(["export", "--all", "--source", "codex", "--format", "json"]));
    assert_eq!(code, 0);
    assert!(out.contains("\"codex\""), "{out}");
    assert!(!out.contains("\"claude-code\""));
}
