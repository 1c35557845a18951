//! Issue 15, "Safe to view anything": transcripts holding terminal escapes print inert in every
//! command, coloured words are searchable, every id trail prints opens its session, and
//! `trail sql` has a byte cap.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use common::{claude_session, examples_home, run, trail, Exchange};

/// What an agent could read into a transcript: an OSC 52 clipboard write, an OSC 8 link whose
/// target is not its text, a screen clear and cursor home, colour, a C1 CSI, DEL and a carriage
/// return (which hides what came before on a terminal).
const HOSTILE: &str = "\x1b]52;c;ZXZpbCBjbGlwYm9hcmQ=\x07 \x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\ \x1b[2J\x1b[H \x1b[31mRED\x1b[0m \u{9b}31mCSI \x7f\rend";

/// The main session shares its first 10 characters (`7c1e2f40-5`) with the bundled Claude
/// sample, and its subagent shares the whole main id.
const MAIN: &str = "7c1e2f40-5bff-4000-8000-00000000aaaa";
const OTHER: &str = "5e0d1c2b-aaaa-4bbb-8ccc-000000000001";

/// A project folder whose name holds escapes: parse problems quote its path.
const PROJECT: &str = "-home-dev-\x1b]0;pwned\x07evil";

/// Writes the hostile sessions under `home/.claude/projects`.
fn write_hostile_home(home: &Path) {
    let dir = home.join(".claude/projects").join(PROJECT);
    std::fs::create_dir_all(dir.join(MAIN).join("subagents")).unwrap();
    let exchange = Exchange {
        prompt: HOSTILE,
        answer: HOSTILE,
        command: HOSTILE,
        output: HOSTILE,
        output_is_error: true,
    };
    let cwd = "/home/dev/\x1b[2Jproj";
    let branch = "fix/\x1b[31mred";
    let mut main = claude_session(MAIN, None, cwd, branch, &[exchange]);
    // A malformed line: reported with file and line (the path holds escapes), then skipped.
    main.push_str("{not json\n");
    std::fs::write(dir.join(format!("{MAIN}.jsonl")), main).unwrap();
    let sub = claude_session(
        MAIN,
        Some("c0ffee1"),
        cwd,
        branch,
        &[Exchange {
            prompt: "subagent: list the files",
            answer: HOSTILE,
            command: "ls",
            output: HOSTILE,
            output_is_error: false,
        }],
    );
    std::fs::write(dir.join(MAIN).join("subagents/agent-c0ffee1.jsonl"), sub).unwrap();
    // The same prompt in another session: tips lists repeated prompts.
    let other = claude_session(
        OTHER,
        None,
        cwd,
        branch,
        &[Exchange {
            prompt: HOSTILE,
            answer: "done",
            command: "false",
            output: HOSTILE,
            output_is_error: true,
        }],
    );
    std::fs::write(dir.join(format!("{OTHER}.jsonl")), other).unwrap();
}

/// A store holding the bundled samples and the hostile sessions.
fn hostile_store() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("trail.db");
    let home = dir.path().join("home");
    write_hostile_home(&home);
    let (code, out, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(examples_home())
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    (dir, store, home)
}

/// A `trail` command with colour forced on, or with colour left to `NO_COLOR`.
fn trail_with(home: &Path, store: &Path, color: bool) -> Command {
    let mut c = Command::cargo_bin("trail").unwrap();
    c.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("--store")
        .arg(store);
    if color {
        c.args(["--color", "always"]);
    } else {
        c.env("NO_COLOR", "1");
    }
    c
}

/// The escape sequences trail's own styling emits (output.rs `Style` and reset).
const OWN_STYLING: [&str; 10] = [
    "\x1b[1;33m",
    "\x1b[0m",
    "\x1b[1m",
    "\x1b[2m",
    "\x1b[31m",
    "\x1b[32m",
    "\x1b[33m",
    "\x1b[34m",
    "\x1b[35m",
    "\x1b[36m",
];

/// Asserts `out` holds no control character a terminal acts on, once trail's own styling is
/// taken out (and none of it at all when `color` is off).
fn assert_inert(what: &str, out: &str, color: bool) {
    let mut rest = out.to_string();
    if color {
        for s in OWN_STYLING {
            rest = rest.replace(s, "");
        }
    }
    let bad: Vec<(usize, char)> = rest
        .char_indices()
        .filter(
            |(_, c)| matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}'),
        )
        .collect();
    assert!(
        bad.is_empty(),
        "{what} (colour {color}) prints control characters {:?} in:\n{out}",
        &bad[..bad.len().min(5)]
    );
}

/// Issue 15: a tool output holding `ESC ] 52` wrote the viewer's clipboard, `ESC [ 2 J`
/// cleared the screen, OSC 8 made a fake link.
#[test]
fn issue_15_every_command_prints_transcript_escapes_inert() {
    let (dir, store, home) = hostile_store();
    // Indexing prints parse problems (`file:line`) whose path holds escapes.
    let (code, out, err) = run(trail_with(dir.path(), &store, true)
        .arg("--home")
        .arg(&home)
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    assert_inert("index", &out, true);
    assert_inert("index (stderr)", &err, true);
    assert!(out.contains("␛]0;pwned␇evil"), "{out}");

    let commands: Vec<Vec<&str>> = vec![
        vec!["show", MAIN],
        vec!["show", MAIN, "--full"],
        vec!["show", MAIN, "--full", "--highlight", "RED"],
        vec!["search", "RED"],
        vec!["search", "click"],
        vec!["list"],
        vec!["list", "--all"],
        vec!["standup", "--since", "2020-01-01"],
        vec!["tips", "--since", "2020-01-01"],
        vec!["improve", "--since", "2020-01-01"],
        vec!["usage", "--since", "2020-01-01"],
        vec!["usage", "--since", "2020-01-01", "--by", "session"],
        vec!["usage", "--since", "2020-01-01", "--by", "repo"],
        vec!["doctor"],
        vec!["export", MAIN],
        vec!["export", MAIN, "--format", "html"],
        vec!["show", "\x1b]52;c;bm8=\x07"],
    ];
    for color in [true, false] {
        for args in &commands {
            let (code, out, err) = run(trail_with(dir.path(), &store, color)
                .arg("--home")
                .arg(&home)
                .args(args));
            let what = args.join(" ");
            assert!(code == 0 || args[1].starts_with('\x1b'), "{what}: {err}");
            assert_inert(&what, &out, color);
            assert_inert(&format!("{what} (stderr)"), &err, color);
            // The hostile text is shown (as symbols), so each command was really tested on it.
            let shown = format!("{out}{err}");
            let by_day = args[..] == ["usage", "--since", "2020-01-01"];
            assert!(
                by_day || shown.contains('␛') || shown.contains("\\u{1b}"),
                "{what} shows no transcript escape:\n{shown}"
            );
        }
    }
    // The text is still there, shown: the ESC as ␛, the C1 CSI spelled out.
    let (_, out, _) = run(trail_with(dir.path(), &store, false).args(["show", MAIN, "--full"]));
    assert!(out.contains("␛]52;c;ZXZpbCBjbGlwYm9hcmQ=␇"), "{out}");
    assert!(out.contains("\\u{9b}31mCSI"), "{out}");
    // --json keeps the exact text.
    let (_, out, _) = run(trail_with(dir.path(), &store, true).args(["show", MAIN, "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let texts: Vec<&str> = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert!(texts.contains(&HOSTILE), "{texts:?}");
    assert_inert("show --json", &out, false);
}

/// Issue 15: `ESC[31mRED` was indexed as the token `31mred`.
#[test]
fn issue_15_search_finds_coloured_words() {
    let (dir, store, home) = hostile_store();
    let (code, out, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(&home)
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    for (query, role) in [("RED", "user"), ("RED", "tool"), ("click me", "tool")] {
        let (code, out, err) =
            run(trail(dir.path(), &store).args(["search", "--json", "--role", role, query]));
        assert_eq!(code, 0, "{query} as {role}: {out}{err}");
        let hits: serde_json::Value = serde_json::from_str(&out).unwrap();
        let snippet = hits[0]["snippet"].as_str().unwrap();
        assert!(snippet.contains("**"), "{snippet}");
        assert!(!snippet.contains('\x1b'), "{snippet:?}");
    }
    let (code, _, _) = run(trail(dir.path(), &store).args(["search", "31mred"]));
    assert_eq!(code, 1, "the escape's bytes are not indexed");
}

/// Returns the ids a `trail list` table prints, read at the ID column.
fn listed_ids(out: &str) -> Vec<String> {
    let mut lines = out.lines();
    let header: Vec<char> = lines.next().unwrap().chars().collect();
    let at = (0..header.len())
        .find(|&i| header[i..].starts_with(&[' ', 'I', 'D', ' ']))
        .unwrap()
        + 1;
    lines
        .map(|l| {
            let chars: Vec<char> = l.chars().collect();
            chars[at..].iter().take_while(|c| **c != ' ').collect()
        })
        .collect()
}

/// Returns the session id `trail show ID --json` opens.
fn shown_id(dir: &Path, store: &Path, id: &str) -> String {
    let (code, out, err) = run(trail(dir, store).args(["show", id, "--json"]));
    assert_eq!(code, 0, "trail show {id}: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["session"]["id"].as_str().unwrap().to_string()
}

/// Issue 15: `trail list --all` cut ids at 10 characters, so a session and its subagent both
/// showed `7c1e2f40-5` and the subagent could not be opened from what was shown.
#[test]
fn issue_15_every_printed_id_opens_its_session() {
    let (dir, store, home) = hostile_store();
    let (code, out, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(&home)
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");

    let (_, table, _) = run(trail(dir.path(), &store).args(["list", "--all"]));
    let (_, json, _) = run(trail(dir.path(), &store).args(["list", "--all", "--json"]));
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    let full: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let shown = listed_ids(&table);
    assert_eq!(shown.len(), full.len(), "{table}");
    assert!(full.contains(&MAIN) && full.iter().any(|i| i.starts_with(&format!("{MAIN}:"))));
    for (short, id) in shown.iter().zip(&full) {
        assert!(
            short.chars().count() >= 8 && id.starts_with(short.as_str()),
            "{short} {id}"
        );
        assert_eq!(shown_id(dir.path(), &store, short), *id, "{table}");
    }
    let unique: std::collections::HashSet<&String> = shown.iter().collect();
    assert_eq!(unique.len(), shown.len(), "{table}");

    // Search hits: the command each prints opens the hit's session.
    let (_, text, _) = run(trail(dir.path(), &store).args(["search", "RED"]));
    let (_, json, _) = run(trail(dir.path(), &store).args(["search", "RED", "--json"]));
    let hits: serde_json::Value = serde_json::from_str(&json).unwrap();
    let opened: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("trail show "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert!(!opened.is_empty(), "{text}");
    for (short, hit) in opened.iter().zip(hits.as_array().unwrap()) {
        assert_eq!(
            shown_id(dir.path(), &store, short),
            hit["session_id"].as_str().unwrap()
        );
    }

    // Standup, tips and usage by session name sessions by the same short ids.
    for args in [
        vec!["standup", "--since", "2020-01-01"],
        vec!["tips", "--since", "2020-01-01"],
    ] {
        let (_, out, _) = run(trail(dir.path(), &store).args(&args));
        let ids: Vec<&str> = out
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|s| {
                s.len() >= 8
                    && s.chars().all(|c| {
                        c.is_ascii_hexdigit() || "-:_".contains(c) || c.is_ascii_alphanumeric()
                    })
            })
            .collect();
        assert!(!ids.is_empty(), "{out}");
        for id in ids {
            assert!(full.iter().any(|f| f.starts_with(id)), "{id}");
            let (code, _, err) = run(trail(dir.path(), &store).args(["show", id]));
            assert_eq!(code, 0, "{args:?}: trail show {id}: {err}");
        }
    }
}

/// Issue 15: `SELECT randomblob(1000000000)` returned a 1 GB value.
#[test]
fn issue_15_sql_has_a_byte_cap() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("trail.db");
    let (code, _, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(examples_home())
        .arg("index"));
    assert_eq!(code, 0, "{err}");
    let (code, out, err) =
        run(trail(dir.path(), &store).args(["sql", "SELECT randomblob(1000000000)"]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("larger than the byte cap"), "{err}");
    let rows = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) SELECT printf('%.1000c', 'x') FROM n";
    let (code, out, _) =
        run(trail(dir.path(), &store).args(["sql", "--json", "--max-bytes", "10000", rows]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 10);
    assert_eq!(v["truncated"], true);
    let (code, _, err) = run(trail(dir.path(), &store).args(["sql", "--max-bytes", "10000", rows]));
    assert_eq!(code, 0);
    assert!(err.contains("--max-bytes"), "{err}");
}
