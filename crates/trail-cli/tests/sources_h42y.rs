//! Issue 42, helper h42y: the appendable new sources re-read only what was appended, through
//! the `trail` binary. Each of the repo's own fixtures for Pi, Qwen Code, Kimi (legacy wire),
//! Factory Droid and iFlow is copied to a scratch folder and indexed; one prompt line is
//! appended in the agent's own shape; the next `trail index --json` must resume the file
//! (`files_resumed` 1), read exactly the appended bytes, write one message, and `search` must
//! find the new prompt in the right source.

#![allow(clippy::print_stderr)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{run, trail};
use serde_json::Value;

fn fixture(rel: &str) -> PathBuf {
    common::repo_root()
        .join("crates/trail-sources/tests/fixtures")
        .join(rel)
}

fn index(home: &Path, store: &Path, dir: &Path) -> Value {
    let (code, out, err) = run(trail(home, store)
        .arg("--home")
        .arg(home)
        .args(["index", "--json"])
        .arg(dir));
    assert_eq!(code, 0, "{out}{err}");
    serde_json::from_str(&out).unwrap()
}

/// Indexes a copy of `rel` (a fixture), appends `line`, indexes again and checks that only the
/// line was read.
fn appended_line_alone(source: &str, rel: &str, line: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let dir = tmp.path().join("logs");
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(fixture(rel), &path).unwrap();
    let store = tmp.path().join("store.db");

    let first = index(&home, &store, &dir);
    assert_eq!(first["files_parsed"], 1, "{source}: {first}");
    assert_eq!(first["files_resumed"], 0, "{source}: {first}");

    let appended = format!("{line}\n");
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(appended.as_bytes())
        .unwrap();
    let second = index(&home, &store, &dir);
    assert_eq!(second["files_resumed"], 1, "{source}: {second}");
    assert_eq!(
        second["bytes_read"],
        appended.len() as u64,
        "{source}: only the appended line is read: {second}"
    );
    assert_eq!(second["messages"], 1, "{source}: {second}");
    assert_eq!(
        second["issues"].as_array().map(Vec::len),
        Some(0),
        "{source}: {second}"
    );

    let (code, out, err) = run(trail(&home, &store).args(["search", "--json", "zebracrossing"]));
    assert_eq!(code, 0, "{source}: {out}{err}");
    let hits: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(hits.len(), 1, "{source}: {out}");
    assert!(out.contains(&format!("\"{source}\"")), "{source}: {out}");

    // Nothing new: nothing is read.
    let third = index(&home, &store, &dir);
    assert_eq!(third["bytes_read"], 0, "{source}: {third}");
}

#[test]
fn pi_appended_line_is_read_alone() {
    appended_line_alone(
        "pi",
        "pi/sessions/--home-u-app--/2026-01-02T10-00-00-000Z_11111111-2222-4333-8444-555555555555.jsonl",
        r#"{"type":"message","id":"e0000099","parentId":"e0000016","timestamp":"2026-01-02T10:01:00.000Z","message":{"role":"user","content":[{"type":"text","text":"zebracrossing please"}]}}"#,
    );
}

#[test]
fn qwen_appended_line_is_read_alone() {
    appended_line_alone(
        "qwen-code",
        "qwen/projects/-home-u-app/chats/0a0a0a0a-0000-4000-8000-000000000001.jsonl",
        r#"{"uuid":"u99","parentUuid":"u10","sessionId":"0a0a0a0a-0000-4000-8000-000000000001","timestamp":"2026-03-01T10:01:00.000Z","type":"user","cwd":"/home/u/app","version":"0.30.0","message":{"role":"user","parts":[{"text":"zebracrossing please"}]}}"#,
    );
}

#[test]
fn kimi_appended_line_is_read_alone() {
    appended_line_alone(
        "kimi",
        "kimi/legacy-home/sessions/0f0f0f0f0f0f/7a7a7a7a-0000-4000-8000-000000000002/wire.jsonl",
        r#"{"timestamp": 1770000020.0, "message": {"type": "TurnBegin", "payload": {"user_input": "zebracrossing please"}}}"#,
    );
}

#[test]
fn droid_appended_line_is_read_alone() {
    appended_line_alone(
        "droid",
        "droid/sessions/-home-u-app/3c3c3c3c-0000-4000-8000-000000000003.jsonl",
        r#"{"type":"message","id":"d99","parentId":"d8","timestamp":"2026-05-01T08:01:00.000Z","message":{"role":"user","content":"zebracrossing please"}}"#,
    );
}

#[test]
fn iflow_appended_line_is_read_alone() {
    appended_line_alone(
        "iflow",
        "iflow/projects/-home-u-app/session-4d4d4d4d-0000-4000-8000-000000000004.jsonl",
        r#"{"uuid":"i99","parentUuid":"i7","sessionId":"session-4d4d4d4d-0000-4000-8000-000000000004","timestamp":"2026-06-01T10:01:00.000Z","type":"user","message":{"role":"user","content":"zebracrossing please"}}"#,
    );
}

/// Kiro IDE's chats are found, counted and named by `doctor`, with why they are not read; the
/// files are our own (names and places as Kiro IDE uses them, contents irrelevant: trail never
/// opens them), laid out under a scratch home's Linux `~/.config`.
#[test]
fn doctor_says_kiro_ide_chats_are_found_but_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let agent = home.join(".config/Kiro/User/globalStorage/kiro.kiroagent");
    for rel in [
        "3f9a1c/0b1c2d3e.chat",
        "3f9a1c/4f5a6b7c.chat",
        "workspace-sessions/L2hvbWUvdS9hcHA_/5e5e5e5e-0000-4000-8000-000000000001.json",
        "workspace-sessions/L2hvbWUvdS9hcHA_/sessions.json",
    ] {
        let p = agent.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"not read").unwrap();
    }
    let store = tmp.path().join("store.db");
    let doctor = |args: &[&str]| {
        let mut c = trail(&home, &store);
        c.arg("--home").arg(&home).args(args);
        run(&mut c)
    };
    let (code, out, err) = doctor(&["index"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = doctor(&["doctor"]);
    assert_eq!(code, 0);
    if cfg!(target_os = "linux") {
        assert!(out.contains("Kiro IDE: 4 files found in"), "{out}");
        assert!(out.contains("closed source"), "{out}");
        let (code, out, _) = doctor(&["doctor", "--json"]);
        assert_eq!(code, 0);
        let v: Value = serde_json::from_str(&out).unwrap();
        let kiro = v["unreadable"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["name"] == "Kiro IDE")
            .expect("Kiro IDE is listed");
        assert_eq!(kiro["files_found"], 4, "{out}");
    }
}
