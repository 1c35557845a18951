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

// Kiro IDE is read since h42z: its test is `kiro_ide.rs`.

// ---------------------------------------------------------------------------------------------
// Grok Build, end to end. The session folder is our own, written here in the shapes of
// `crates/trail-sources/src/grok/mod.rs` (Grok Build's `updates.jsonl` ACP log and
// `summary.json`): two prompts, a shell call and its failed result, one `turn_completed` with
// usage. Counts made from the lines below, not by trail: 1 session, 2 prompts (2 distinct
// `promptIndex` values), 1 `tool_call`, input 1,200 - 1,000 cache reads = 200, output 40.

const GROK_ID: &str = "019f7000-0000-7000-8000-0000000000aa";

fn grok_update(ts: u64, update: Value) -> String {
    let method = if update["sessionUpdate"] == "turn_completed" {
        "_x.ai/session/update"
    } else {
        "session/update"
    };
    serde_json::json!({
        "timestamp": ts,
        "method": method,
        "params": {"sessionId": GROK_ID, "update": update},
    })
    .to_string()
}

/// Writes one Grok Build session folder under `home/.grok/sessions/<encoded cwd>/`.
fn grok_session(home: &Path) -> PathBuf {
    let dir = home.join(".grok/sessions/%2Fhome%2Fdemo%2Fw").join(GROK_ID);
    std::fs::create_dir_all(&dir).unwrap();
    let summary = serde_json::json!({
        "generated_title": "Fix the flaky test",
        "info": {"id": GROK_ID, "cwd": "/home/demo/w"},
        "created_at": "2026-09-01T10:00:00Z",
        "updated_at": "2026-09-01T10:02:00Z",
        "session_kind": "interactive",
    });
    std::fs::write(dir.join("summary.json"), summary.to_string()).unwrap();
    let text = |t: &str| serde_json::json!({"type": "text", "text": t});
    let lines = [
        grok_update(
            1_788_256_800,
            serde_json::json!({"sessionUpdate": "user_message_chunk",
            "content": text("grokquokka: why does the test flake?"),
            "_meta": {"promptIndex": 0, "modelId": "grok-code-fast-1"}}),
        ),
        grok_update(
            1_788_256_801,
            serde_json::json!({"sessionUpdate": "tool_call",
            "toolCallId": "t1", "title": "cargo test", "kind": "execute",
            "rawInput": {"command": "cargo test"}}),
        ),
        grok_update(
            1_788_256_802,
            serde_json::json!({"sessionUpdate": "tool_call_update",
            "toolCallId": "t1", "status": "failed",
            "content": [{"type": "content", "content": text("1 test failed")}]}),
        ),
        grok_update(
            1_788_256_803,
            serde_json::json!({"sessionUpdate": "agent_message_chunk",
            "content": text("A timing race in the test.")}),
        ),
        grok_update(
            1_788_256_804,
            serde_json::json!({"sessionUpdate": "turn_completed",
            "prompt_id": "p0", "stop_reason": "end_turn",
            "usage": {"inputTokens": 1200, "outputTokens": 40, "cachedReadTokens": 1000,
                "cacheCreationTokens": 0, "reasoningTokens": 0, "costUsdTicks": 100_000_000,
                "modelUsage": {"grok-code-fast-1": {"inputTokens": 1200, "outputTokens": 40,
                    "cachedReadTokens": 1000, "cacheCreationTokens": 0, "reasoningTokens": 0,
                    "costUsdTicks": 100_000_000}}}}),
        ),
        grok_update(
            1_788_256_810,
            serde_json::json!({"sessionUpdate": "user_message_chunk",
            "content": text("Fix it"), "_meta": {"promptIndex": 1}}),
        ),
        grok_update(
            1_788_256_811,
            serde_json::json!({"sessionUpdate": "agent_message_chunk",
            "content": text("Fixed.")}),
        ),
    ];
    std::fs::write(dir.join("updates.jsonl"), lines.join("\n") + "\n").unwrap();
    dir
}

fn grok_checks(home: &Path, store: &Path) {
    let trail_at = |args: &[&str]| {
        let mut c = trail(home, store);
        c.arg("--home").arg(home).args(args);
        run(&mut c)
    };
    let (code, out, err) = trail_at(&["list", "--json"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.len(), 1, "{out}");
    assert_eq!(rows[0]["source"], "grok");
    assert_eq!(rows[0]["turns"], 2, "{out}");
    let id = rows[0]["id"].as_str().unwrap().to_string();
    let (code, out, err) = trail_at(&["show", &id, "--json"]);
    assert_eq!(code, 0, "{err}");
    let shown: Value = serde_json::from_str(&out).unwrap();
    let calls = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "tool_call")
        .count();
    assert_eq!(calls, 1, "{out}");
    let (code, out, err) = trail_at(&[
        "sql",
        "SELECT sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cache_read_tokens) AS c FROM usage",
        "--json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("200") && out.contains("40") && out.contains("1000"),
        "{out}"
    );
    let (code, out, err) = trail_at(&["search", "grokquokka"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = trail_at(&["resume", &id]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.trim(),
        format!("cd /home/demo/w && grok --resume {GROK_ID}")
    );
}

#[test]
fn grok_build_sessions_are_found_and_read_both_ways() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let folder = grok_session(&home);
    // Plain discovery under the scratch home.
    let store = tmp.path().join("discovered.db");
    let mut c = trail(&home, &store);
    c.arg("--home").arg(&home).args(["index", "--json"]);
    let (code, out, err) = run(&mut c);
    assert_eq!(code, 0, "{out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["issues"].as_array().map(Vec::len), Some(0), "{out}");
    assert_eq!(report["sessions_new"], 1, "{out}");
    grok_checks(&home, &store);
    // Given by path: the session folder, from an empty home.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let store = tmp.path().join("by-path.db");
    let report = index(&empty, &store, &folder);
    assert_eq!(
        report["issues"].as_array().map(Vec::len),
        Some(0),
        "{report}"
    );
    assert_eq!(report["sessions_new"], 1, "{report}");
    grok_checks(&empty, &store);
}
