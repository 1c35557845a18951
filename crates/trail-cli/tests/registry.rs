//! The source registry is the only list of sources: the README's table of agents matches it,
//! and every frontend offers every source (a hard-coded list would miss one added later).

mod common;

use std::path::Path;

use common::{run, trail};
use trail_model::SourceKind;

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(path).expect("README.md")
}

/// The rows of the table under `## Agents`: cells without the outer bars, header excluded.
fn agent_rows(readme: &str) -> Vec<Vec<String>> {
    let section = readme
        .split("\n## Agents\n")
        .nth(1)
        .expect("a `## Agents` section");
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

#[test]
fn the_readme_table_of_agents_matches_the_registry() {
    let readme = readme();
    let rows = agent_rows(&readme);
    let sources = trail_sources::sources();
    assert_eq!(
        rows.len(),
        sources.len(),
        "one README row per registry entry"
    );
    for s in sources {
        let id = format!("`{}`", s.id());
        let row = rows
            .iter()
            .find(|r| r.get(1) == Some(&id))
            .unwrap_or_else(|| panic!("README has no row for {id}"));
        assert_eq!(row.len(), 8, "{id}: 8 columns");
        assert_eq!(row[0], s.name, "{id}: display name");
        let r = s.records;
        assert_eq!(row[2], yes_no(r.tokens), "{id}: tokens");
        assert_eq!(row[3], yes_no(r.tool_calls), "{id}: tool calls");
        assert_eq!(row[4], yes_no(r.file_edits), "{id}: edits");
        assert_eq!(row[5], yes_no(r.subagents), "{id}: subagents");
        let resume = s.resume.map_or("no".to_string(), |t| format!("`{t}`"));
        assert_eq!(row[6], resume, "{id}: resume");
        if r.chats_only {
            assert!(row[7].contains("chats"), "{id}: say it holds chats only");
        }
    }
    let found_but_not_read = readme
        .split("Found but not read")
        .nth(1)
        .expect("the formats found but not read");
    for u in trail_sources::UNREADABLE {
        assert!(
            found_but_not_read.contains(&format!("**{}**", u.name)),
            "README does not say {} is found but not read",
            u.name
        );
    }
}

#[test]
fn every_source_is_a_value_of_every_source_flag() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t.db");
    for command in ["index", "list", "search", "usage"] {
        let (code, out, err) = run(trail(dir.path(), &store).args([command, "--help"]));
        assert_eq!(code, 0, "{err}");
        for kind in SourceKind::ALL {
            assert!(out.contains(kind.as_str()), "{command} --help lacks {kind}");
            let name = trail_sources::display_name(kind);
            assert!(out.contains(name), "{command} --help lacks {name}");
        }
    }
}

#[test]
fn aliases_and_any_case_name_a_source() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t.db");
    let (code, _, err) = run(trail(dir.path(), &store).arg("index"));
    assert_eq!(code, 0, "{err}");
    for s in trail_sources::sources() {
        for name in std::iter::once(s.id()).chain(s.aliases.iter().copied()) {
            let (code, _, err) =
                run(trail(dir.path(), &store).args(["list", "--source", name, "--json"]));
            assert_eq!(code, 0, "--source {name}: {err}");
        }
    }
    let (code, _, err) = run(trail(dir.path(), &store).args(["list", "--source", "nope"]));
    assert_eq!(code, 2);
    assert!(err.contains("claude-code"), "{err}");
    let (code, _, err) = run(trail(dir.path(), &store).args(["index", "--root", "nope=/x"]));
    assert_eq!(code, 2);
    assert!(err.contains("unknown source"), "{err}");
}

#[test]
fn doctor_names_formats_it_finds_but_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let store = dir.path().join("t.db");
    // Fixtures written for this test: names and places as the agents use them, contents
    // irrelevant (trail never opens them).
    for rel in [
        ".codeium/windsurf/cascade/0b1c.pb",
        ".codeium/windsurf/cascade/9f2e.pb",
        ".config/Trae/User/globalStorage/state.vscdb",
        ".config/github-copilot/iu/chat-sessions/3Bog/copilot-chat-nitrite.db",
        ".config/github-copilot/iu/chat-agent-sessions/7Kq/copilot-agent-sessions-nitrite.db",
    ] {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"not readable").unwrap();
    }
    let with_home = |args: &[&str]| {
        let mut c = trail(dir.path(), &store);
        c.arg("--home").arg(&home).args(args);
        run(&mut c)
    };
    let (code, out, err) = with_home(&["index"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = with_home(&["doctor"]);
    assert_eq!(code, 0);
    assert!(out.contains("Windsurf: 2 files found in"), "{out}");
    assert!(out.contains("encrypted protobuf"), "{out}");
    assert!(out.contains("Trae: 1 files found in"), "{out}");
    assert!(
        out.contains("GitHub Copilot for JetBrains: 2 files found in"),
        "{out}"
    );
    assert!(out.contains("Nitrite"), "{out}");
    let (code, out, _) = with_home(&["doctor", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let unreadable = v["unreadable"].as_array().unwrap();
    assert_eq!(unreadable.len(), 3, "{out}");
    assert_eq!(unreadable[0]["name"], "Windsurf");
    assert_eq!(unreadable[0]["files_found"], 2);

    // A home without them: doctor says nothing about them.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let mut c = trail(dir.path(), &store);
    c.arg("--home").arg(&empty).arg("doctor");
    let (code, out, _) = run(&mut c);
    assert_eq!(code, 0);
    assert!(!out.contains("not read:"), "{out}");
}

#[test]
fn doctor_lists_only_this_os_locations() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("t.db");
    let (code, _, _) = run(trail(dir.path(), &store).arg("index"));
    assert_eq!(code, 0);
    let (code, out, _) = run(trail(dir.path(), &store).arg("doctor"));
    assert_eq!(code, 0);
    let (other_a, other_b) = if cfg!(target_os = "macos") {
        ("AppData", "/.config/Code")
    } else if cfg!(windows) {
        ("Library/Application Support", "/.config/Code")
    } else {
        ("Library/Application Support", "AppData")
    };
    assert!(!out.contains(other_a) && !out.contains(other_b), "{out}");
    for s in trail_sources::sources() {
        assert!(out.contains(&format!("{} ({})", s.name, s.id())), "{out}");
    }
}
