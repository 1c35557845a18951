//! Issue 44: what installing trail gives (`--version`, completions, the manual) and the watcher
//! a service runs (`index --watch`, `service install --dry-run`), on the real binary.

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{claude_session, run, trail, Exchange};

#[test]
fn version_names_the_version_the_commit_and_the_build_date() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out, err) = run(trail(tmp.path(), &tmp.path().join("s.db")).arg("--version"));
    assert_eq!(code, 0, "{err}");
    // `trail 0.1.0 (0123456789ab 2026-11-27)`, or `unknown` outside a git checkout.
    let line = out.trim();
    let rest = line
        .strip_prefix(&format!("trail {} (", env!("CARGO_PKG_VERSION")))
        .unwrap_or_else(|| panic!("{line}"));
    let (commit, date) = rest.trim_end_matches(')').split_once(' ').unwrap();
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{line}"
    );
    assert!(
        date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-',
        "{line}"
    );
}

#[test]
fn completions_cover_every_shell_and_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "complete -F _trail"),
        ("zsh", "#compdef trail"),
        ("fish", "complete -c trail"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        // No HOME and no store: completions need neither.
        let (code, out, err) = run(Command::new(env!("CARGO_BIN_EXE_trail"))
            .env_clear()
            .args(["completions", shell])
            .current_dir(tmp.path()));
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains(marker), "{shell}: {marker} missing");
        for command in ["index", "search", "service", "completions", "man"] {
            assert!(out.contains(command), "{shell}: {command} missing");
        }
    }
    let (code, _, err) =
        run(Command::new(env!("CARGO_BIN_EXE_trail")).args(["completions", "tcsh"]));
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_reader_that_stops_early_is_no_error() {
    // `trail completions bash | head -c 200`: the pipe closes before the script is written.
    for args in [&["completions", "bash"][..], &["man"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_trail"))
            .env_clear()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 16];
        std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut head).unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {err}", out.status);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn man_prints_the_page_and_writes_one_per_command() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, out, err) = run(Command::new(env!("CARGO_BIN_EXE_trail"))
        .env_clear()
        .arg("man"));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(".ie"),
        "roff expected: {}",
        &out[..out.len().min(80)]
    );
    assert!(
        out.contains(".TH trail 1"),
        "{}",
        &out[..out.len().min(400)]
    );
    let dir = tmp.path().join("man1");
    let (code, out, err) = run(Command::new(env!("CARGO_BIN_EXE_trail"))
        .env_clear()
        .args(["man", "--dir"])
        .arg(&dir));
    assert_eq!(code, 0, "{err}");
    for page in [
        "trail.1",
        "trail-index.1",
        "trail-search.1",
        "trail-service.1",
        "trail-service-install.1",
    ] {
        let path = dir.join(page);
        assert!(
            out.contains(&path.display().to_string()),
            "{page} not listed: {out}"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(".TH"), "{page}");
    }
    let index = std::fs::read_to_string(dir.join("trail-index.1")).unwrap();
    assert!(index.contains("watch"), "the index page documents --watch");
}

#[test]
fn service_install_dry_run_prints_a_unit_that_runs_the_watcher() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let store = tmp.path().join("trail.db");
    let (code, out, err) = run(trail(&home, &store).args(["service", "install", "--dry-run"]));
    assert_eq!(code, 0, "{err}");
    if cfg!(target_os = "linux") {
        let unit_path = home.join(".config/systemd/user/trail-index.service");
        assert!(
            out.starts_with(&format!("# {}\n[Unit]\n", unit_path.display())),
            "{out}"
        );
        let exec = exec_start(&out);
        assert_eq!(
            exec[0],
            std::fs::canonicalize(env!("CARGO_BIN_EXE_trail"))
                .unwrap()
                .to_str()
                .unwrap()
        );
        assert_eq!(
            &exec[1..],
            ["--store", store.to_str().unwrap(), "index", "--watch"]
        );
        assert!(!unit_path.exists(), "a dry run writes nothing");
    }
}

#[test]
#[cfg(target_os = "linux")]
fn service_install_says_so_where_systemd_is_absent() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let empty = tmp.path().join("no-tools");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, out, err) = run(trail(&home, &tmp.path().join("s.db"))
        .env("PATH", &empty)
        .args(["service", "install"]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("systemd is not available"), "{err}");
    assert!(err.contains("trail index --watch"), "{err}");
    assert!(!home
        .join(".config/systemd/user/trail-index.service")
        .exists());
}

/// The words of the unit's `ExecStart=` line (double-quoted, as `render` writes them).
fn exec_start(unit: &str) -> Vec<String> {
    let line = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap();
    line.split("\" \"")
        .map(|w| {
            w.trim_matches('"')
                .replace("\\\"", "\"")
                .replace("$$", "$")
                .replace("%%", "%")
        })
        .collect()
}

trait OutputRef {
    fn wait_with_output_ref(&mut self) -> String;
}
impl OutputRef for Child {
    fn wait_with_output_ref(&mut self) -> String {
        let _ = self.wait();
        let mut out = String::new();
        if let Some(o) = self.stdout.as_mut() {
            let _ = std::io::Read::read_to_string(o, &mut out);
        }
        if let Some(e) = self.stderr.as_mut() {
            let _ = std::io::Read::read_to_string(e, &mut out);
        }
        out
    }
}

/// Kills the watcher on drop, so that a failed assertion leaves no process behind.
struct Running(Child);
impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits until `trail search WORD` finds a hit, or `limit` passes; returns the time it took.
fn searchable_within(home: &Path, store: &Path, word: &str, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        let (code, _, _) = run(trail(home, store).args(["search", word, "--json"]));
        if code == 0 {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// Issue 44: the watcher started the way the systemd unit starts it (its `ExecStart=`, under a
/// scratch HOME) indexes an appended line, picks up a root created after it started, refuses a
/// second watcher, and stops on SIGTERM leaving a store every command reads.
#[test]
#[cfg(target_os = "linux")]
fn the_unit_s_watcher_indexes_appends_and_new_roots_and_stops_on_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = home.join(".claude/projects/-work-app");
    std::fs::create_dir_all(&project).unwrap();
    let store = tmp.path().join("trail.db");
    // Two exchanges of one session: the first is on disk when the watcher starts, the second
    // is appended while it runs (as Claude Code appends).
    let exchange = |prompt| Exchange {
        prompt,
        answer: "done",
        command: "cargo test",
        output: "ok",
        output_is_error: false,
    };
    let id = "a1b2c3d4-0000-4000-8000-000000000001";
    let whole = claude_session(
        id,
        None,
        "/work/app",
        "main",
        &[
            exchange("set up the hedgehog parser"),
            exchange("now teach it about porcupines"),
        ],
    );
    let lines: Vec<&str> = whole.split_inclusive('\n').collect();
    let (before, after) = lines.split_at(3);
    let transcript = project.join(format!("{id}.jsonl"));
    std::fs::write(&transcript, before.concat()).unwrap();

    let (code, unit, err) = run(trail(&home, &store).args(["service", "install", "--dry-run"]));
    assert_eq!(code, 0, "{err}");
    let exec = exec_start(&unit);
    let mut cmd = Command::new(&exec[0]);
    cmd.args(&exec[1..])
        .env_clear()
        .env("HOME", &home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let watcher = Running(cmd.spawn().unwrap());
    assert!(
        searchable_within(&home, &store, "hedgehog", Duration::from_secs(20)).is_some(),
        "first index"
    );

    // An appended exchange is searchable within 2 s (10 allowed here: CI shares its cores).
    std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap()
        .write_all(after.concat().as_bytes())
        .unwrap();
    let took = searchable_within(&home, &store, "porcupines", Duration::from_secs(10));
    if took.is_none() {
        let mut w = watcher;
        let _ = w.0.kill();
        let out = w.0.wait_with_output_ref();
        panic!("an append was not indexed: {out}");
    }

    // A root that did not exist when the watcher started (Codex installed later).
    let day = home.join(".codex/sessions/2026/11/21");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::write(
        day.join("rollout-2026-11-21T10-00-00-0e1f2a3b-0000-4000-8000-000000000002.jsonl"),
        codex_rollout("armadillo"),
    )
    .unwrap();
    assert!(
        searchable_within(&home, &store, "armadillo", Duration::from_secs(10)).is_some(),
        "a new root was not watched"
    );

    // One watcher per store.
    let (code, _, err) = run(trail(&home, &store).args(["index", "--watch"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("already keeps this store fresh"), "{err}");

    // SIGTERM: a clean stop, exit 0, and the store answers.
    let mut watcher = watcher;
    let pid = watcher.0.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = watcher.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the watcher did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let mut out = String::new();
    std::io::Read::read_to_string(watcher.0.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert!(out.contains("Stopped; the store is consistent."), "{out}");
    let (code, list, err) = run(trail(&home, &store).args(["list", "--json"]));
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&list).unwrap();
    assert_eq!(rows.len(), 2, "{list}");
    let (code, _, err) = run(trail(&home, &store).args(["service", "status"]));
    assert_eq!(code, 0, "{err}");
}

/// A minimal Codex rollout whose prompt holds `word`.
fn codex_rollout(word: &str) -> String {
    use serde_json::json;
    [
        json!({"timestamp": "2026-11-21T10:00:00.000Z", "type": "session_meta", "payload": {
            "id": "0e1f2a3b-0000-4000-8000-000000000002", "timestamp": "2026-11-21T10:00:00.000Z",
            "cwd": "/work/app", "originator": "codex_cli_rs", "cli_version": "0.60.0"}}),
        json!({"timestamp": "2026-11-21T10:00:01.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": format!("find the {word}")}]}}),
        json!({"timestamp": "2026-11-21T10:00:02.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "found"}]}}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect()
}
