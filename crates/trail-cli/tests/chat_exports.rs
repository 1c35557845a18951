//! Issue 42: ChatGPT and Claude.ai data exports through the `trail` binary. They are import
//! only: `trail import` (a file or the unzipped export's folder) and `trail index PATH` read
//! them, plain discovery never looks for them; their sessions are marked as chats in `list`,
//! `show` and the JSON export, and the coding-session views (`standup`) leave them out unless
//! asked for their source.
//!
//! The exports are the fixtures written for the parser tests
//! (`crates/trail-sources/tests/fixtures/{chatgpt,claude-ai}-export/`, see
//! `crates/trail-sources/tests/chat_exports.rs`, which checks their counts against plain JSON
//! reads): ChatGPT 3 conversations with messages (4 prompts on their active branches), Claude.ai
//! 3 (6 prompts), each with one more conversation without messages.

mod common;

use std::path::{Path, PathBuf};

use common::{run, trail};
use serde_json::Value;

fn fixtures(name: &str) -> PathBuf {
    common::repo_root()
        .join("crates/trail-sources/tests/fixtures")
        .join(name)
}

/// `trail list --json` rows.
fn list(dir: &Path, store: &Path, args: &[&str]) -> Vec<Value> {
    let (code, out, err) = run(trail(dir, store).args(["list", "--json"]).args(args));
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn turns(rows: &[Value], source: &str) -> (usize, u64) {
    let of: Vec<&Value> = rows.iter().filter(|r| r["source"] == source).collect();
    let turns = of.iter().map(|r| r["turns"].as_u64().unwrap()).sum();
    (of.len(), turns)
}

#[test]
fn exports_import_by_file_and_folder_and_are_marked_as_chats() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t.db");
    let chatgpt = fixtures("chatgpt-export").join("conversations.json");
    let (code, out, err) = run(trail(dir.path(), &store).arg("import").arg(&chatgpt));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("3 new sessions") && out.contains("0 parse problems"),
        "{out}"
    );
    // The unzipped Claude.ai export: `projects.json` and `users.json` are passed over.
    let (code, out, err) = run(trail(dir.path(), &store)
        .args(["import", "--json"])
        .arg(fixtures("claude-ai-export")));
    assert_eq!(code, 0, "{out}{err}");
    let summary: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(summary["sessions_new"], 3, "{out}");
    assert_eq!(summary["issues"].as_array().map(Vec::len), Some(0), "{out}");

    let rows = list(dir.path(), &store, &[]);
    assert_eq!(turns(&rows, "chatgpt-export"), (3, 4));
    assert_eq!(turns(&rows, "claude-ai-export"), (3, 6));
    assert!(rows.iter().all(|r| r["chat"] == true), "{rows:?}");

    let (code, out, _) = run(trail(dir.path(), &store).arg("list"));
    assert_eq!(code, 0);
    assert!(out.contains("Sum a CSV column [chat]"), "{out}");

    let (code, out, err) = run(trail(dir.path(), &store).args(["show", "6a1f0c52"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("chat (not a coding session)"), "{out}");
    assert!(out.contains("And with csv.DictReader?"), "{out}");
    let (code, out, _) = run(trail(dir.path(), &store).args(["show", "6a1f0c52", "--json"]));
    assert_eq!(code, 0);
    let shown: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["session"]["chat"], true);

    let (code, out, err) = run(trail(dir.path(), &store).args([
        "export",
        "2c3d4e5f-6071-4829-93a4-b5c6d7e8f901",
        "--format",
        "json",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"chat\":true"), "{out}");

    let (code, out, err) = run(trail(dir.path(), &store).args(["search", "showers", "--json"]));
    assert_eq!(code, 0, "{err}");
    let hits: Value = serde_json::from_str(&out).unwrap();
    let hits = hits.as_array().unwrap();
    assert!(
        hits.iter()
            .any(|h| h["session_id"] == "2c3d4e5f-6071-4829-93a4-b5c6d7e8f901"),
        "{out}"
    );

    // The coding-session standup leaves the chats out unless their source is asked for.
    let standup = |extra: &[&str]| {
        let (code, out, err) = run(trail(dir.path(), &store)
            .args(["standup", "--since", "2000-01-01", "--json"])
            .args(extra));
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        v["streams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["sessions"].as_array().unwrap().len())
            .sum::<usize>()
    };
    assert_eq!(standup(&[]), 0);
    assert_eq!(standup(&["--source", "chatgpt"]), 3);

    // Importing again adds nothing.
    let (code, out, _) = run(trail(dir.path(), &store).arg("import").arg(&chatgpt));
    assert_eq!(code, 0);
    assert!(out.contains("0 new sessions"), "{out}");

    // A side file of the export is not a session file.
    let (code, _, err) = run(trail(dir.path(), &store)
        .arg("import")
        .arg(fixtures("claude-ai-export").join("users.json")));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not in a format trail reads"), "{err}");
}

#[test]
fn discovery_never_looks_for_exports_but_a_path_given_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // Exports where people leave them: the home folder and its downloads.
    for at in ["", "Downloads/chatgpt-export", "Downloads/claude-export"] {
        std::fs::create_dir_all(home.join(at)).unwrap();
    }
    std::fs::copy(
        fixtures("chatgpt-export").join("conversations.json"),
        home.join("Downloads/chatgpt-export/conversations.json"),
    )
    .unwrap();
    std::fs::copy(
        fixtures("claude-ai-export").join("conversations.json"),
        home.join("conversations.json"),
    )
    .unwrap();
    let store = dir.path().join("t.db");
    let index = |path: Option<&Path>| {
        let mut cmd = trail(dir.path(), &store);
        cmd.arg("--home").arg(&home).args(["index", "--json"]);
        if let Some(p) = path {
            cmd.arg(p);
        }
        let (code, out, err) = run(&mut cmd);
        assert_eq!(code, 0, "{out}{err}");
        let report: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(report["issues"].as_array().map(Vec::len), Some(0), "{out}");
    };
    index(None);
    assert!(list(dir.path(), &store, &[]).is_empty());
    index(Some(&home.join("Downloads")));
    let rows = list(dir.path(), &store, &[]);
    assert_eq!(turns(&rows, "chatgpt-export"), (3, 4));
    assert_eq!(turns(&rows, "claude-ai-export"), (0, 0));
    let rows = list(dir.path(), &store, &["--source", "claude-ai"]);
    assert!(rows.is_empty());
}
