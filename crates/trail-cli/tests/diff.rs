//! `trail diff` (issue 16, item 4): what a session changed, from VS Code chat editing
//! snapshots, Claude Code file-history backups and edit tool calls, Cline's edit tools; in
//! `show --full`, the exports and `why`; terminal-safe and HTML-escaped.

mod common;

use std::path::{Path, PathBuf};

use common::{run, trail};

fn fixtures(name: &str) -> PathBuf {
    common::repo_root()
        .join("crates/trail-sources/tests/fixtures")
        .join(name)
}

/// Indexes `roots` (`source=path`) into a fresh store; returns (home, store).
fn indexed(dir: &Path, roots: &[(&str, PathBuf)]) -> (PathBuf, PathBuf) {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let store = dir.join("trail.db");
    let mut cmd = trail(&home, &store);
    cmd.arg("index");
    for (source, path) in roots {
        cmd.arg("--root")
            .arg(format!("{source}={}", path.display()));
    }
    let (code, _, err) = run(&mut cmd);
    assert_eq!(code, 0, "{err}");
    (home, store)
}

const GREET_TURN_0: &str = "--- a/home/demo/app/greet.py
+++ b/home/demo/app/greet.py
@@ -1,4 +1,4 @@
 def greet(name):
-    return 'hi ' + name
+    return 'hello ' + name
 
 print(greet('you'))
";

const GREET_TURN_1: &str = "--- a/home/demo/app/greet.py
+++ b/home/demo/app/greet.py
@@ -1,4 +1,7 @@
 def greet(name):
     return 'hello ' + name
 
+def farewell(name):
+    return 'bye ' + name
+
 print(greet('you'))
";

#[test]
fn an_editing_session_with_two_snapshots_of_one_file_gives_exact_diffs() {
    let dir = tempfile::tempdir().unwrap();
    let (home, store) = indexed(
        dir.path(),
        &[("copilot-vscode", fixtures("copilot-vscode-editing"))],
    );
    let (code, out, err) = run(trail(&home, &store).args(["diff", "5e1f2a3b", "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["session_id"], "5e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b");
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
    let f = &v["files"][0];
    assert_eq!(f["path"], "/home/demo/app/greet.py");
    let changes = f["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0]["diff"], GREET_TURN_0);
    assert_eq!(changes[1]["diff"], GREET_TURN_1);
    for c in changes {
        assert_eq!(c["source"], "vscode-chat-editing");
        assert_eq!(c["exact"], true);
    }
    assert_eq!(
        (f["added"].as_u64(), f["removed"].as_u64()),
        (Some(4), Some(1))
    );

    // One turn, as a person reads it.
    let (code, out, _) = run(trail(&home, &store).args(["diff", "5e1f2a3b", "--turn", "1"]));
    assert_eq!(code, 0);
    let expected = format!(
        "/home/demo/app/greet.py  +3 -0\n  turn 1 · vscode-chat-editing\n{}",
        GREET_TURN_1
            .lines()
            .map(|l| format!("  {l}\n"))
            .collect::<String>()
    );
    assert_eq!(out, expected);
    // A turn that changed nothing: exit 1, said on stderr.
    let (code, out, err) = run(trail(&home, &store).args(["diff", "5e1f2a3b", "--turn", "5"]));
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("changed no file in turn 5"), "{err}");
    // An unknown session is a usage error.
    let (code, _, _) = run(trail(&home, &store).args(["diff", "nope-nope"]));
    assert_eq!(code, 2);
}

#[test]
fn a_timeline_editing_session_gives_the_same_exact_diffs() {
    // Newer VS Code builds: `timeline` (baselines, operations) instead of `linearHistory`.
    let dir = tempfile::tempdir().unwrap();
    let (home, store) = indexed(
        dir.path(),
        &[(
            "copilot-vscode",
            fixtures("copilot-vscode-editing-timeline"),
        )],
    );
    let (code, out, err) = run(trail(&home, &store).args(["diff", "6a7b8c9d", "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{out}");
    let file = |p: &str| files.iter().find(|f| f["path"] == p).unwrap();
    let greet = file("/home/demo/app/greet.py")["changes"]
        .as_array()
        .unwrap();
    assert_eq!(greet.len(), 2);
    assert_eq!(greet[0]["diff"], GREET_TURN_0);
    assert_eq!(greet[0]["turn"], 0);
    assert_eq!(greet[1]["diff"], GREET_TURN_1);
    assert_eq!(greet[1]["turn"], 1);
    let bye = file("/home/demo/app/bye.txt")["changes"]
        .as_array()
        .unwrap();
    assert_eq!(bye.len(), 1);
    assert_eq!(bye[0]["kind"], "created");
    assert_eq!(bye[0]["turn"], 1);
    assert_eq!(
        bye[0]["diff"],
        "--- /dev/null\n+++ b/home/demo/app/bye.txt\n@@ -0,0 +1 @@\n+bye\n"
    );
    for c in greet.iter().chain(bye) {
        assert_eq!(c["source"], "vscode-chat-editing");
        assert_eq!(c["exact"], true);
    }
    // Request 3's edit was undone: turn 2 changed nothing.
    let (code, _, _) = run(trail(&home, &store).args(["diff", "6a7b8c9d", "--turn", "2"]));
    assert_eq!(code, 1);
}

#[test]
fn claude_file_history_backups_and_later_edits() {
    let dir = tempfile::tempdir().unwrap();
    let (home, store) = indexed(
        dir.path(),
        &[("claude-code", fixtures("claude-file-history"))],
    );
    let (code, out, err) = run(trail(&home, &store).args(["diff", "7a8b9c0d", "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let changes = v["files"][0]["changes"].as_array().unwrap();
    // The backups show turn 0's change (the Edit of that turn is not shown twice); the Edit
    // after the last backup applies to its content, with real line numbers.
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0]["source"], "claude-file-history");
    assert_eq!(
        changes[0]["diff"],
        "--- a/home/demo/notes/todo.md\n+++ b/home/demo/notes/todo.md\n@@ -1,2 +1,3 @@\n # Todo\n - buy milk\n+- call mom\n"
    );
    assert_eq!(changes[1]["source"], "Edit");
    assert_eq!(changes[1]["exact"], true);
    assert_eq!(
        changes[1]["diff"],
        "--- a/home/demo/notes/todo.md\n+++ b/home/demo/notes/todo.md\n@@ -1,3 +1,3 @@\n # Todo\n-- buy milk\n+- [x] buy milk\n - call mom\n"
    );
}

#[test]
fn cline_edits_show_filter_export_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let f = fixtures("cline");
    let (home, store) = indexed(
        dir.path(),
        &[
            ("cline", f.join("Code")),
            ("roo-code", f.join("Code")),
            ("kilo-code", f.join("Cursor")),
        ],
    );
    // One kind per fork: each filters alone.
    for (source, title) in [
        ("cline", "Add a greet function to hello.py"),
        ("roo-code", "Rename foo to bar in util.ts"),
        ("kilo-code", "List the files"),
    ] {
        let (code, out, _) = run(trail(&home, &store).args(["list", "--source", source, "--json"]));
        assert_eq!(code, 0);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let rows = v.as_array().unwrap();
        assert_eq!(rows.len(), 1, "{source}: {out}");
        assert_eq!(rows[0]["title"], title);
    }
    // doctor: each fork's roots, files found there and sessions stored.
    let (code, out, err) = run(trail(&home, &store)
        .env("TRAIL_VSCODE_DIR", f.join("Code"))
        .args(["doctor", "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let row = |name: &str| {
        v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["source"] == name)
            .cloned()
            .unwrap()
    };
    for (name, found) in [("cline", 1), ("roo-code", 1), ("kilo-code", 0)] {
        let r = row(name);
        assert_eq!(r["files_found"], found, "{name}: {r}");
        assert_eq!(r["sessions"], 1, "{name}: {r}");
        assert_eq!(
            r["roots"][0]["path"],
            f.join("Code").display().to_string(),
            "{name}"
        );
    }
    let (code, out, _) = run(trail(&home, &store).args(["diff", "cline:1750000000000"]));
    assert_eq!(code, 0);
    assert!(out.contains("hello.py  +4 -1"), "{out}");
    assert!(
        out.contains("  -print('hi')\n  +def greet(name):\n"),
        "{out}"
    );
    assert!(out.contains("lines are numbered within the edit"), "{out}");
    // show --full ends with the changes.
    let (code, out, _) = run(trail(&home, &store).args(["show", "cline:1750000000000", "--full"]));
    assert_eq!(code, 0);
    let at = out.find("── Changes").expect("a changes section");
    assert!(out[at..].contains("+print(greet('hi'))"), "{out}");
    // Exports carry it too.
    let (code, md, _) = run(trail(&home, &store).args(["export", "0b7c2f1e"]));
    assert_eq!(code, 0);
    assert!(md.contains("\n## Changes\n"), "{md}");
    assert!(md.contains("```diff\n--- a/util.ts\n+++ b/util.ts\n@@ -1 +1 @@\n-export const foo = 1;\n+export const bar = 1;\n```"), "{md}");
    // `why` shows the change the session made to the file.
    let (code, out, err) = run(trail(&home, &store).args(["why", "/home/dev/hello/hello.py"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("What session cline:1750000000000 changed in it"),
        "{out}"
    );
    assert!(out.contains("+    return f'hello {name}'"), "{out}");
    let (_, json, _) =
        run(trail(&home, &store).args(["why", "/home/dev/hello/hello.py", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["change"]["session_id"], "cline:1750000000000");
    assert_eq!(v["change"]["file"]["path"], "hello.py");
}

/// A Claude Code session whose Write puts terminal escapes and HTML into a file.
fn hostile_session(dir: &Path) -> PathBuf {
    let projects = dir.join("claude/projects/-tmp-x");
    std::fs::create_dir_all(&projects).unwrap();
    let sid = "9e8d7c6b-5a49-4838-9271-605f4e3d2c1b";
    let content = "ok\n\u{1b}]52;c;cHduZWQ=\u{7}<script>alert(1)</script>\n\u{1b}[2J\n";
    let lines = [
        serde_json::json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":sid,"cwd":"/tmp/x","timestamp":"2026-02-01T10:00:00.000Z","message":{"role":"user","content":"write it"}}),
        serde_json::json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":sid,"cwd":"/tmp/x","timestamp":"2026-02-01T10:00:01.000Z","requestId":"r1","message":{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/tmp/x/evil.txt","content":content}}],"usage":{"input_tokens":1,"output_tokens":1}}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(projects.join(format!("{sid}.jsonl")), text).unwrap();
    dir.join("claude/projects")
}

#[test]
fn diffs_are_terminal_safe_and_html_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let root = hostile_session(dir.path());
    let (home, store) = indexed(dir.path(), &[("claude-code", root)]);
    for args in [vec!["diff", "9e8d7c6b"], vec!["show", "9e8d7c6b", "--full"]] {
        let (code, out, _) = run(trail(&home, &store).args(&args));
        assert_eq!(code, 0);
        assert!(out.contains("evil.txt"), "{out}");
        assert!(
            !out.contains("\u{1b}]52") && !out.contains("\u{1b}[2J") && !out.contains('\u{7}'),
            "{args:?}: {out:?}"
        );
        assert!(out.contains('␛'), "{out}");
    }
    let out_dir = dir.path().join("html");
    let (code, _, err) = run(trail(&home, &store)
        .args(["export", "9e8d7c6b", "--format", "html", "--out"])
        .arg(&out_dir));
    assert_eq!(code, 0, "{err}");
    let html =
        std::fs::read_to_string(out_dir.join("9e8d7c6b-5a49-4838-9271-605f4e3d2c1b.html")).unwrap();
    assert!(html.contains("<pre class=\"diff\">"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<script>alert"));
    assert!(!html.contains('\u{1b}'));
}
