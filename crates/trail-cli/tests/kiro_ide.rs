//! Kiro IDE through the `trail` binary: the repo's own fixtures
//! (`crates/trail-sources/tests/fixtures/kiro-ide`, written from the schema public readers agree
//! on; see that crate's `tests/kiro_ide.rs`) laid out under a scratch home's Linux `~/.config`,
//! found by plain discovery and given by path, and the execution logs `doctor` finds but does
//! not read.
//!
//! Counts made from the fixture files, not by trail: 2 `.chat` files and 2 `workspace-sessions`
//! files are 4 sessions; their prompts (human messages other than the `<identity>` system
//! prompt, user messages) are 2 + 1 + 2 + 1 = 6.

mod common;

use std::path::Path;

use common::{run, trail};
use serde_json::Value;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn json(home: &Path, store: &Path, args: &[&str]) -> Value {
    let (code, out, err) = run(trail(home, store).arg("--home").arg(home).args(args));
    assert_eq!(code, 0, "{args:?}: {out}{err}");
    serde_json::from_str(&out).unwrap()
}

fn sessions_and_turns(home: &Path, store: &Path) -> (usize, u64) {
    let list = json(home, store, &["list", "--source", "kiro-ide", "--json"]);
    let rows = list.as_array().unwrap();
    let turns = rows.iter().map(|r| r["turns"].as_u64().unwrap()).sum();
    (rows.len(), turns)
}

#[test]
fn kiro_ide_chats_are_discovered_given_by_path_and_doctor_names_the_logs() {
    let fixtures = common::repo_root().join("crates/trail-sources/tests/fixtures/kiro-ide");
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let config = home.join(".config/Kiro");
    copy_tree(&fixtures, &config);
    // An execution log (no name extension), contents irrelevant: trail never opens it.
    let log = config.join(
        "User/globalStorage/kiro.kiroagent/3f9c2a7e1b4d4c8e9a0b5d6e7f8a9b0c/74a1b2c3/9f8e7d6c",
    );
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, b"not read").unwrap();

    // Plain discovery in the home layout (Linux: `~/.config`).
    if cfg!(target_os = "linux") {
        let store = tmp.path().join("discovered.db");
        let summary = json(&home, &store, &["index", "--json"]);
        assert!(
            summary["issues"].as_array().unwrap().is_empty(),
            "{summary}"
        );
        assert_eq!(sessions_and_turns(&home, &store), (4, 6));
        let (code, out, _) = run(trail(&home, &store).arg("--home").arg(&home).arg("doctor"));
        assert_eq!(code, 0);
        assert!(
            out.contains("Kiro IDE execution logs: 1 files found in"),
            "{out}"
        );
    }

    // Given by path: the storage folder, anywhere.
    let store = tmp.path().join("by-path.db");
    let agent = config.join("User/globalStorage/kiro.kiroagent");
    let agent = agent.to_str().unwrap();
    json(&home, &store, &["index", "--json", agent]);
    assert_eq!(sessions_and_turns(&home, &store), (4, 6));
    let hits = json(&home, &store, &["search", "mock clock", "--json"]);
    assert!(
        hits.to_string()
            .contains("b7e3c1d2-4f5a-4b6c-8d9e-0a1b2c3d4e5f"),
        "{hits}"
    );
}
