//! `trail resume ID --in AGENT` (issue 14): writes the continuation under the agent's folder
//! (found as discovery finds it: `CODEX_HOME`, `CLAUDE_CONFIG_DIR`, the home folder), prints
//! the agent's resume command on stdout and what it wrote on stderr, finds it again on a second
//! run, and after the next index `show` and `list` link the two sessions both ways.

mod common;

use std::path::Path;

use common::{examples_home, run, trail};

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

#[test]
fn resume_in_another_agent_writes_finds_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    copy_tree(&examples_home(), &home);
    let store = dir.path().join("trail.db");
    let (code, _, err) = run(trail(&home, &store).arg("index"));
    assert_eq!(code, 0, "{err}");

    // Codex's folder comes from CODEX_HOME, as discovery reads it.
    let codex_home = dir.path().join("codex-home");
    let (code, out, err) = run(trail(&home, &store)
        .env("CODEX_HOME", &codex_home)
        .args(["resume", "7c1e2f40", "--in", "codex"]));
    assert_eq!(code, 0, "{err}");
    assert!(err.starts_with("Wrote "), "{err}");
    assert!(err.contains("2 prompts, 4 answers, 7 tool calls"), "{err}");
    let line = out.trim();
    assert!(
        line.starts_with("cd /home/demo/projects/weather-cli && codex resume "),
        "{line}"
    );
    let new_id = line.rsplit(' ').next().unwrap().to_string();
    let written: Vec<_> = walk(&codex_home.join("sessions"));
    assert_eq!(written.len(), 1);
    assert!(written[0]
        .to_string_lossy()
        .ends_with(&format!("-{new_id}.jsonl")));

    // The second run points at the first; --json says so.
    let (code, out, err) = run(trail(&home, &store)
        .env("CODEX_HOME", &codex_home)
        .args(["resume", "7c1e2f40", "--in", "codex", "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["created"], false);
    assert_eq!(v["session_id"], new_id.as_str());
    assert_eq!(v["target"], "codex");
    assert_eq!(v["original_id"], "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f");
    assert_eq!(v["command"]["program"], "codex");
    assert_eq!(walk(&codex_home.join("sessions")).len(), 1);

    // Claude Code's folder: the home folder's .claude/projects, beside the original.
    let (code, out, err) = run(trail(&home, &store).args(["resume", "7c1e2f40", "--in", "claude"]));
    assert_eq!(code, 0, "{err}");
    let claude_id = out.trim().rsplit(' ').next().unwrap().to_string();
    assert!(home
        .join(".claude/projects/-home-demo-projects-weather-cli")
        .join(format!("{claude_id}.jsonl"))
        .is_file());

    // After the next index: linked both ways (the Codex one is indexed from CODEX_HOME).
    let (code, _, err) = run(trail(&home, &store)
        .env("CODEX_HOME", &codex_home)
        .arg("index"));
    assert_eq!(code, 0, "{err}");
    let (_, show, _) = run(trail(&home, &store).args(["show", "7c1e2f40"]));
    assert!(
        show.contains(&format!("Continued in codex as {new_id}")),
        "{show}"
    );
    assert!(
        show.contains(&format!("Continued in claude-code as {claude_id}")),
        "{show}"
    );
    let (_, show, _) = run(trail(&home, &store).args(["show", &new_id]));
    assert!(
        show.contains("Continues claude-code session 7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f"),
        "{show}"
    );
    let (_, list, _) = run(trail(&home, &store).arg("list"));
    assert!(
        list.contains(&format!("↳ continued in codex as {new_id}")),
        "{list}"
    );
    assert!(
        list.contains("↳ continues claude-code session 7c1e2f40"),
        "{list}"
    );
    let (_, json, _) = run(trail(&home, &store).args(["show", &new_id, "--json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["continuations"][0]["original_id"],
        "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f"
    );
    assert_eq!(v["continuations"][0]["continuation_source"], "codex");
}

#[test]
fn resume_in_refuses_what_it_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    copy_tree(&examples_home(), &home);
    let store = dir.path().join("trail.db");
    run(trail(&home, &store).arg("index"));
    // Copilot CLI is no target: a usage error that says why.
    let (code, _, err) =
        run(trail(&home, &store).args(["resume", "7c1e2f40", "--in", "copilot-cli"]));
    assert_eq!(code, 2);
    assert!(err.contains("Copilot CLI"), "{err}");
    // --fresh without --in is a usage error.
    let (code, _, _) = run(trail(&home, &store).args(["resume", "7c1e2f40", "--fresh"]));
    assert_eq!(code, 2);
    // An unknown id.
    let (code, _, _) = run(trail(&home, &store).args(["resume", "ffffffff", "--in", "codex"]));
    assert_eq!(code, 2);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}
