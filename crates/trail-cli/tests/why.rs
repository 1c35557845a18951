//! `trail why`: a real git repository whose history has a commit made right after a session's
//! Edit of a file; `trail why FILE:LINE` names that session and turn. A second commit that a
//! session referenced by hash is attributed to that session instead.

mod common;

use std::path::Path;
use std::process::Command;

use common::{run, trail};

fn git(dir: &Path, args: &[&str], date: &str) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.invalid")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.invalid")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// One Claude Code line.
fn line(
    cwd: &Path,
    session: &str,
    uuid: &str,
    parent: Option<&str>,
    ts: &str,
    body: &str,
) -> String {
    let parent = parent.map(|p| format!("\"{p}\"")).unwrap_or("null".into());
    format!(
        r#"{{"parentUuid":{parent},"isSidechain":false,"userType":"external","cwd":"{}","sessionId":"{session}","version":"2.1.14","gitBranch":"main","uuid":"{uuid}","timestamp":"{ts}",{body}}}"#,
        cwd.display()
    )
}

fn user(text: &str) -> String {
    format!(r#""type":"user","message":{{"role":"user","content":"{text}"}}"#)
}

fn edit(id: &str, file: &Path, old: &str, new: &str) -> String {
    format!(
        r#""type":"assistant","requestId":"req_{id}","message":{{"id":"msg_{id}","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"tool_use","id":"toolu_{id}","name":"Edit","input":{{"file_path":"{}","old_string":"{old}","new_string":"{new}"}}}}],"usage":{{"input_tokens":10,"output_tokens":5}}}}"#,
        file.display()
    )
}

fn bash(id: &str, command: &str) -> String {
    format!(
        r#""type":"assistant","requestId":"req_{id}","message":{{"id":"msg_{id}","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"tool_use","id":"toolu_{id}","name":"Bash","input":{{"command":"{command}"}}}}],"usage":{{"input_tokens":10,"output_tokens":5}}}}"#
    )
}

fn bash_result(id: &str, output: &str) -> String {
    format!(
        r#""type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{id}","content":"{output}"}}]}}"#
    )
}

fn result(id: &str) -> String {
    format!(
        r#""type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{id}","content":"The file has been updated."}}]}}"#
    )
}

fn answer(id: &str, text: &str) -> String {
    format!(
        r#""type":"assistant","requestId":"req_{id}","message":{{"id":"msg_{id}","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"text","text":"{text}"}}],"usage":{{"input_tokens":10,"output_tokens":5}}}}"#
    )
}

#[test]
fn why_names_the_session_behind_a_line() {
    let work = tempfile::tempdir().unwrap();
    let repo = work.path().join("retry-lib");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let file = repo.join("src/lib.rs");
    std::fs::write(&file, "pub fn retries() -> u32 {\n    1\n}\n").unwrap();
    git(&repo, &["init", "-q", "-b", "main"], "2026-11-19T08:00:00Z");
    git(&repo, &["add", "."], "2026-11-19T08:00:00Z");
    git(
        &repo,
        &["commit", "-q", "-m", "first"],
        "2026-11-19T08:00:00Z",
    );

    // Session A edits line 2 at 09:00 (turn 1); the user commits at 09:01.
    let projects = work.path().join("home/.claude/projects/-retry-lib");
    std::fs::create_dir_all(&projects).unwrap();
    let a = "aaaaaaaa-0000-4000-8000-000000000001";
    let session_a = [
        line(
            &repo,
            a,
            "u1",
            None,
            "2026-11-20T08:50:00.000Z",
            &user("Explain the retry count"),
        ),
        line(
            &repo,
            a,
            "a1",
            Some("u1"),
            "2026-11-20T08:50:05.000Z",
            &answer("1", "It is fixed at one."),
        ),
        line(
            &repo,
            a,
            "u2",
            Some("a1"),
            "2026-11-20T08:59:00.000Z",
            &user("Make it retry three times"),
        ),
        line(
            &repo,
            a,
            "a2",
            Some("u2"),
            "2026-11-20T09:00:00.000Z",
            &edit("2", &file, "    1", "    3"),
        ),
        line(
            &repo,
            a,
            "u3",
            Some("a2"),
            "2026-11-20T09:00:01.000Z",
            &result("2"),
        ),
        line(
            &repo,
            a,
            "a3",
            Some("u3"),
            "2026-11-20T09:00:05.000Z",
            &answer("3", "Done."),
        ),
    ]
    .join("\n");
    std::fs::write(projects.join(format!("{a}.jsonl")), session_a + "\n").unwrap();
    std::fs::write(&file, "pub fn retries() -> u32 {\n    3\n}\n").unwrap();
    git(
        &repo,
        &["commit", "-q", "-am", "Retry three times"],
        "2026-11-20T09:01:00Z",
    );

    // Session B edits line 1 later and commits (git's summary line names the commit).
    std::fs::write(&file, "pub fn retry_count() -> u32 {\n    3\n}\n").unwrap();
    git(
        &repo,
        &["commit", "-q", "-am", "Rename"],
        "2026-11-21T10:00:00Z",
    );
    let sha = git_out(&repo, &["rev-parse", "HEAD"]);
    let b = "bbbbbbbb-0000-4000-8000-000000000002";
    let session_b = [
        line(
            &repo,
            b,
            "u1",
            None,
            "2026-11-21T09:58:00.000Z",
            &user("Rename retries to retry_count and commit"),
        ),
        line(
            &repo,
            b,
            "a1",
            Some("u1"),
            "2026-11-21T09:59:00.000Z",
            &edit("9", &file, "retries", "retry_count"),
        ),
        line(
            &repo,
            b,
            "u2",
            Some("a1"),
            "2026-11-21T09:59:01.000Z",
            &result("9"),
        ),
        line(
            &repo,
            b,
            "a2",
            Some("u2"),
            "2026-11-21T09:59:50.000Z",
            &bash("10", "git commit -am Rename"),
        ),
        line(
            &repo,
            b,
            "u3",
            Some("a2"),
            "2026-11-21T10:00:01.000Z",
            &bash_result(
                "10",
                &format!("[main {}] Rename\\n 1 file changed", &sha[..10]),
            ),
        ),
        line(
            &repo,
            b,
            "a3",
            Some("u3"),
            "2026-11-21T10:00:30.000Z",
            &answer("11", "Renamed and committed."),
        ),
    ]
    .join("\n");
    std::fs::write(projects.join(format!("{b}.jsonl")), session_b + "\n").unwrap();

    let home = work.path().join("home");
    let store = work.path().join("trail.db");
    let (code, _, err) = run(trail(&home, &store).arg("index"));
    assert_eq!(code, 0, "{err}");

    // Line 2 came from the 09:01 commit, which no session names: the last session that
    // edited the file before it, at the turn of the edit.
    let target = format!("{}:2", file.display());
    let (code, out, err) = run(trail(&home, &store).args(["why", &target, "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["blame"]["summary"], "Retry three times");
    assert_eq!(v["verdict"]["how"], "last-edit-before");
    assert_eq!(v["verdict"]["session_id"], a);
    assert_eq!(v["verdict"]["turn"], 1);

    // Line 1 came from the commit session B named.
    let target = format!("{}:1", file.display());
    let (code, out, _) = run(trail(&home, &store).args(["why", &target, "--json"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"]["how"], "referenced-commit");
    assert_eq!(v["verdict"]["session_id"], b);

    // The readable form names the session and how to open the turn.
    let (code, out, _) = run(trail(&home, &store).args(["why", &format!("{}:2", file.display())]));
    assert_eq!(code, 0);
    assert!(out.contains(&format!("session {a}, turn 1")), "{out}");
    assert!(out.contains(&format!("trail show {a} --turn 1")), "{out}");

    // The file's history, newest first, from inside the checkout with a relative path.
    let (code, out, _) =
        run(trail(&home, &store)
            .current_dir(&repo)
            .args(["why", "src/lib.rs", "--json"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let touches = v["history"]["touches"].as_array().unwrap();
    let order: Vec<(&str, i64)> = touches
        .iter()
        .map(|t| {
            (
                t["session_id"].as_str().unwrap(),
                t["turn"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(order, vec![(b, 0), (a, 1)]);
    assert_eq!(touches[1]["prompt"], "Make it retry three times");
    assert_eq!(touches[1]["action"], "edit");
    assert_eq!(touches[0]["commits"][0], &sha[..10]);

    // A line of a file that is gone from disk cannot be blamed: the answer is still the
    // file's history, with the reason, not a git error.
    std::fs::remove_file(&file).unwrap();
    let target = format!("{}:2", file.display());
    let (code, out, err) = run(trail(&home, &store).args(["why", &target, "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["blame"].is_null());
    assert!(
        v["blame_unavailable"]
            .as_str()
            .unwrap()
            .contains("is not a file on this machine"),
        "{out}"
    );
    assert_eq!(v["history"]["touches"].as_array().unwrap().len(), 2);
    let (code, out, _) = run(trail(&home, &store).args(["why", &target]));
    assert_eq!(code, 0);
    assert!(out.contains("the file's history follows"), "{out}");
    assert!(out.contains("Make it retry three times"), "{out}");

    // A file nobody touched: exit 1 and says so.
    let other = repo.join("README.md");
    std::fs::write(&other, "x\n").unwrap();
    let (code, _, err) = run(trail(&home, &store).args(["why", other.to_str().unwrap()]));
    assert_eq!(code, 1);
    assert!(err.contains("No session read or edited"), "{err}");
}
