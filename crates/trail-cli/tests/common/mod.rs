//! Helpers shared by the CLI's end-to-end tests: an isolated `trail` command and the samples.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

/// Returns the repository's root folder.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Returns the bundled sample home (`examples/home`).
pub fn examples_home() -> PathBuf {
    repo_root().join("examples/home")
}

/// A `trail` command isolated from the machine: empty HOME, its own store, no colour.
pub fn trail(home: &Path, store: &Path) -> Command {
    let mut c = Command::cargo_bin("trail").unwrap();
    c.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("--store")
        .arg(store)
        .arg("--color")
        .arg("never");
    c
}

/// Runs a command; returns (exit code, stdout, stderr).
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One exchange of a Claude Code session written by [`claude_session`]: a prompt, an answer,
/// a Bash call with its input and output.
pub struct Exchange<'a> {
    pub prompt: &'a str,
    pub answer: &'a str,
    pub command: &'a str,
    pub output: &'a str,
    pub output_is_error: bool,
}

/// Returns the JSONL of a Claude Code session (`agent`: a subagent of `session`, written as
/// Claude writes them under `<session>/subagents/agent-<agent>.jsonl`), one prompt, answer and
/// Bash call per exchange, in the shape of the bundled sample.
pub fn claude_session(
    session: &str,
    agent: Option<&str>,
    cwd: &str,
    branch: &str,
    exchanges: &[Exchange<'_>],
) -> String {
    use serde_json::json;
    let mut lines = Vec::new();
    let mut parent: Option<String> = None;
    let mut n = 0;
    let mut next = |kind: &str| {
        n += 1;
        format!("{kind}-{n:04}")
    };
    for (i, x) in exchanges.iter().enumerate() {
        let ts = |s: usize| format!("2026-11-21T10:{:02}:{:02}.000Z", i, s);
        let mut base = |uuid: &str, kind: &str, t: String| {
            let mut v = json!({
                "parentUuid": parent, "isSidechain": agent.is_some(), "userType": "external",
                "cwd": cwd, "sessionId": session, "version": "2.1.14", "gitBranch": branch,
                "type": kind, "uuid": uuid, "timestamp": t,
            });
            if let Some(a) = agent {
                v["agentId"] = json!(a);
            }
            parent = Some(uuid.to_string());
            v
        };
        let u = next("u");
        let mut v = base(&u, "user", ts(1));
        v["message"] = json!({"role": "user", "content": x.prompt});
        lines.push(v);
        let a = next("a");
        let req = format!("req_{session}_{i}");
        let mut v = base(&a, "assistant", ts(2));
        v["requestId"] = json!(req);
        v["message"] = json!({"id": format!("msg_{a}_{session}"), "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": x.answer},
                        {"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash",
                         "input": {"command": x.command, "description": "run it"}}],
            "stop_reason": null,
            "usage": {"input_tokens": 10, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}});
        lines.push(v);
        let r = next("r");
        let mut v = base(&r, "user", ts(3));
        v["message"] = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{i}"),
            "content": x.output, "is_error": x.output_is_error}]});
        lines.push(v);
    }
    let mut out = String::new();
    for l in lines {
        out.push_str(&l.to_string());
        out.push('\n');
    }
    out
}

/// The words of [`screens_home`]'s prompt: long enough that a view of 40-odd columns wraps it.
pub const SCREENS_PROMPT: &str = "Please let people pick metric or imperial units when they print the forecast table for several cities together, and keep the default output unchanged for everyone who already relies on it";

/// Issue 40's screens: a home with one Claude Code session whose prompt wraps in a narrow view
/// and whose tool input (JSON text, so its line breaks are `\n` escapes) holds the only
/// `zanzibar`: a search for it has one hit, whose best message is that tool input.
pub fn screens_home(dir: &Path) -> PathBuf {
    let home = dir.join("screens-home");
    let project = home.join(".claude/projects/-home-demo-projects-forecast");
    std::fs::create_dir_all(&project).unwrap();
    let id = "5c2ee400-0000-4000-8000-000000000040";
    let exchanges = [Exchange {
        prompt: SCREENS_PROMPT,
        answer: "Added the flag.",
        command: "cat >> src/cli.rs <<'EOF'\n    pub name: String,\n    #[arg(long)]\n    pub zanzibar: Units,\nEOF",
        output: "appended 3 lines",
        output_is_error: false,
    }];
    std::fs::write(
        project.join(format!("{id}.jsonl")),
        claude_session(id, None, "/home/demo/projects/forecast", "main", &exchanges),
    )
    .unwrap();
    home
}
