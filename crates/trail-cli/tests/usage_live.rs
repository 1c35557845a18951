//! `trail statusline`, `trail usage --by block/--active/--watch` and the config file (issue 19),
//! end to end on Claude Code logs the tests write. "Now" is fixed with `TRAIL_NOW`.

mod common;

use std::path::{Path, PathBuf};

use std::io::Write;
use std::process::{Command, Stdio};

use common::{run, trail};

/// Runs a command with `input` on stdin; returns (exit code, stdout, stderr).
fn run_with_stdin(cmd: &mut Command, input: &str) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The command may exit before reading (bad flags): a closed pipe is not the test's failure.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SESSION: &str = "5e551011-0000-4000-8000-000000000001";
const EARLIER: &str = "5e551011-0000-4000-8000-000000000002";
const LATE: &str = "5e551011-0000-4000-8000-000000000003";
const NOW: &str = "2026-01-10T12:00:00Z";

/// One request of claude-sonnet-4-5: 1,000 input, 20,000 output, 50,000 cache write and
/// 100,000 cache read tokens, $0.5205 at the shipped price ($3, $15, $3.75, $0.30 per million).
fn request(session: &str, n: usize, ts: &str) -> String {
    format!(
        r#"{{"type":"assistant","uuid":"{session}-{n}","parentUuid":null,"sessionId":"{session}","timestamp":"{ts}","isSidechain":false,"cwd":"/w","version":"2.1.5","requestId":"req_{session}_{n}","message":{{"id":"msg_{session}_{n}","model":"claude-sonnet-4-5-20250929","role":"assistant","type":"message","content":[{{"type":"text","text":"done"}}],"usage":{{"input_tokens":1000,"output_tokens":20000,"cache_creation_input_tokens":50000,"cache_read_input_tokens":100000}}}}}}"#
    )
}

fn write_session(project: &Path, session: &str, times: &[&str]) -> PathBuf {
    std::fs::create_dir_all(project).unwrap();
    let path = project.join(format!("{session}.jsonl"));
    let lines: Vec<String> = times
        .iter()
        .enumerate()
        .map(|(n, ts)| request(session, n, ts))
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn append(path: &Path, line: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(f, "{line}").unwrap();
}

struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    store: PathBuf,
    config: PathBuf,
    transcript: PathBuf,
    project: PathBuf,
}

/// A home with two sessions today: one request at 02:00 (its own block) and the session the
/// status line is about, two requests at 10:20 and 11:50 (the active block at 12:00).
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = home.join(".claude/projects/-w");
    write_session(&project, EARLIER, &["2026-01-10T02:00:00.000Z"]);
    let transcript = write_session(
        &project,
        SESSION,
        &["2026-01-10T10:20:00.000Z", "2026-01-10T11:50:00.000Z"],
    );
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[usage]\nblock_budget_usd = 20\n").unwrap();
    Fixture {
        store: dir.path().join("trail.db"),
        home,
        config,
        transcript,
        project,
        _dir: dir,
    }
}

fn hook(f: &Fixture) -> String {
    format!(
        r#"{{"hook_event_name":"Status","session_id":"{SESSION}","transcript_path":"{}","cwd":"/w","model":{{"id":"claude-sonnet-4-5-20250929","display_name":"Sonnet 4.5"}},"workspace":{{"current_dir":"/w","project_dir":"/w"}},"version":"2.1.5","output_style":{{"name":"default"}},"cost":{{"total_cost_usd":1.04,"total_duration_ms":60000}}}}"#,
        f.transcript.display()
    )
}

fn statusline(f: &Fixture, stdin: &str) -> (i32, String, String) {
    run_with_stdin(
        trail(&f.home, &f.store)
            .arg("--config")
            .arg(&f.config)
            .arg("statusline")
            .env("TRAIL_NOW", NOW)
            .env("TRAIL_TZ", "UTC"),
        stdin,
    )
}

#[test]
fn the_status_line_for_a_hook_payload_byte_for_byte() {
    let f = fixture();
    let (code, _, err) = run(trail(&f.home, &f.store).arg("index"));
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = statusline(&f, &hook(&f));
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "");
    // session: 2 x $0.5205; today: 3 x $0.5205; block 10:00-15:00: $1.04 of $20 (5%), 3 hours
    // left at 12:00; context: the last request's 1,000 + 50,000 + 100,000 of 200,000 tokens.
    assert_eq!(
        out,
        "Sonnet 4.5 · session $1.04 · today $1.56 · block $1.04 (5% of $20.00) 3h00m left · ctx 151k/200k (76%)\n"
    );
    // Nothing changed: the same line.
    assert_eq!(statusline(&f, &hook(&f)).1, out);

    // The transcript grows and another session appears: only the transcript is indexed.
    append(
        &f.transcript,
        &request(SESSION, 2, "2026-01-10T11:55:00.000Z"),
    );
    write_session(&f.project, LATE, &["2026-01-10T11:56:00.000Z"]);
    let (code, out, _) = statusline(&f, &hook(&f));
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "Sonnet 4.5 · session $1.56 · today $2.08 · block $1.56 (8% of $20.00) 3h00m left · ctx 151k/200k (76%)\n"
    );
    let (_, json, _) = run_with_stdin(
        trail(&f.home, &f.store)
            .args(["statusline", "--json", "--no-index"])
            .env("TRAIL_NOW", NOW)
            .env("TRAIL_TZ", "UTC"),
        &hook(&f),
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["block"]["minutes_left"], 180);
    assert_eq!(v["context"]["window"], 200000);
}

#[test]
fn the_status_line_works_on_a_new_store_and_fails_quietly_on_bad_input() {
    let f = fixture();
    // No index yet: the status line indexes its transcript into a new store.
    let (code, out, _) = statusline(&f, &hook(&f));
    assert_eq!(code, 0);
    assert!(
        out.starts_with("Sonnet 4.5 · session $1.04 · today $1.04 · block $1.04"),
        "{out}"
    );
    for bad in ["", "not json", "[1]", "{\"session_id\": "] {
        let (code, out, err) = statusline(&f, bad);
        assert_eq!(code, 2, "{bad:?}");
        assert_eq!(out, "", "{bad:?}");
        assert_eq!(err.lines().count(), 1, "{bad:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(!err.contains("panicked"));
    }
    // A payload naming no transcript still gets a line.
    let (code, out, _) = statusline(&f, r#"{"model":{"display_name":"Opus"}}"#);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("Opus · session $0.00 · today $1.04"),
        "{out}"
    );
}

#[test]
fn usage_by_block_active_and_watch() {
    let f = fixture();
    assert_eq!(run(trail(&f.home, &f.store).arg("index")).0, 0);
    let usage = |args: &[&str]| {
        run(trail(&f.home, &f.store)
            .arg("--config")
            .arg(&f.config)
            .arg("usage")
            .args(args)
            .env("TRAIL_NOW", NOW))
    };
    let (code, out, err) = usage(&["--by", "block", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = v["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "2026-01-10T02:00:00.000Z",
            "gap-2026-01-10T07:00:00.000Z",
            "2026-01-10T10:00:00.000Z"
        ]
    );
    assert_eq!(v["blocks"][2]["is_active"], true);
    assert_eq!(v["blocks"][2]["burn_rate"]["window_minutes"], 15);
    assert_eq!(v["blocks"][2]["projection"]["remaining_minutes"], 180);
    assert!(v["estimate"]
        .as_str()
        .unwrap()
        .starts_with("estimate from local logs"));

    let (code, out, _) = usage(&["--by", "block", "--breakdown"]);
    assert_eq!(code, 0);
    assert!(out.contains("Estimate from local logs"), "{out}");
    assert!(out.contains("└ claude-sonnet-4-5-20250929"), "{out}");
    assert!(out.contains("(active)"), "{out}");

    let (code, out, _) = usage(&["--active"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Block     2026-01-10 10:00 – 15:00, 3h00m left (now 12:00)"),
        "{out}"
    );
    assert!(out.contains("Budget    $1.04 of $20.00 (5%)"), "{out}");
    assert!(out.contains("(last 15 min, 11:45–12:00)"), "{out}");

    // In a pipe, --watch prints a new snapshot every interval.
    let (code, out, err) = usage(&["--watch", "--interval", "0.1", "--count", "2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("Active 5-hour block").count(), 2, "{out}");
    assert!(!out.contains('\x1b'), "no cursor moves into a pipe");

    // --by session shows self and with-subagents columns; --breakdown rows under any grouping.
    let (_, out, _) = usage(&["--by", "session", "--breakdown"]);
    assert!(
        out.contains("Cost (self)") && out.contains("Cost (with subagents)"),
        "{out}"
    );
    assert!(out.contains("└ claude-sonnet-4-5-20250929"), "{out}");

    // Under day buckets (short keys) a model's row is not cut to the date's width.
    let (_, out, _) = usage(&["--by", "day", "--breakdown"]);
    assert!(out.contains("└ claude-sonnet-4-5-20250929 "), "{out}");
    assert!(!out.contains('…'), "{out}");
}

#[test]
fn config_file_prices_budget_and_unknown_keys() {
    let f = fixture();
    assert_eq!(run(trail(&f.home, &f.store).arg("index")).0, 0);
    std::fs::write(
        &f.config,
        "[usage]\nblock_budget_usd = 10\nfuture_key = 1\n\n[prices.\"claude-sonnet-4-5\"]\ninput = 1\noutput = 1\ncache_write = 1\ncache_read = 1\n",
    )
    .unwrap();
    let (code, out, err) = run(trail(&f.home, &f.store)
        .arg("--config")
        .arg(&f.config)
        .args(["usage", "--json"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: unknown key usage.future_key"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // 3 requests of 171,000 tokens at $1 per million.
    let cost = v["totals"]["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.513).abs() < 1e-9, "{cost}");
    // The same file found through TRAIL_CONFIG.
    let (_, out, _) = run(trail(&f.home, &f.store)
        .env("TRAIL_CONFIG", &f.config)
        .args(["usage", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!((v["totals"]["cost_usd"].as_f64().unwrap() - 0.513).abs() < 1e-9);
    // A named file that is missing or broken is a usage error.
    let (code, _, err) =
        run(trail(&f.home, &f.store).args(["--config", "/nonexistent/trail.toml", "usage"]));
    assert_eq!(code, 2);
    assert!(err.contains("cannot read the config file"), "{err}");
    std::fs::write(&f.config, "[usage]\nblock_budget_usd = \"lots\"\n").unwrap();
    let (code, _, err) = run(trail(&f.home, &f.store)
        .arg("--config")
        .arg(&f.config)
        .arg("usage"));
    assert_eq!(code, 2);
    assert!(err.contains("block_budget_usd"), "{err}");
}
