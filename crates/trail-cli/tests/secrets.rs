//! Issue 15: secrets of the kinds secret scanners know, planted in prompts, tool inputs and
//! tool outputs, are absent from every export format.

mod common;

use std::path::Path;

use common::{claude_session, run, trail, Exchange};

/// One planted secret: its kind, the text it appears in, the secret.
struct Planted {
    kind: String,
    text: String,
    secret: String,
}

/// Reads `tests/data/planted-secrets.txt` (its header says the format).
fn planted() -> Vec<Planted> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/planted-secrets.txt");
    let data = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    for record in data.split("\n== ").skip(1) {
        let (kind, rest) = record.split_once('\n').unwrap();
        let (text, secret) = rest.split_once("\n-- SECRET\n").unwrap();
        out.push(Planted {
            kind: kind.trim().to_string(),
            text: text.to_string(),
            secret: secret.trim_end().to_string(),
        });
    }
    out
}

/// Returns the parts of a secret that must not appear: each of its lines long enough to be
/// a secret (a PEM block's BEGIN and END lines are not).
fn secret_parts(secret: &str) -> Vec<&str> {
    secret
        .lines()
        .filter(|l| l.len() >= 12 && !l.starts_with("-----"))
        .collect()
}

/// Issue 15: npm, Azure, Hugging Face and SendGrid credentials (and more) survived every
/// export format, and the JSON export kept an AWS secret key the Markdown export redacted.
#[test]
fn issue_15_planted_secrets_are_absent_from_every_export_format() {
    let planted = planted();
    let kinds: std::collections::BTreeSet<&str> = planted
        .iter()
        .map(|p| p.kind.trim_end_matches("-quoted"))
        .collect();
    assert!(kinds.len() >= 30, "{} kinds", kinds.len());

    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = home.join(".claude/projects/-home-dev-secrets");
    std::fs::create_dir_all(&project).unwrap();
    let prompts: Vec<String> = planted
        .iter()
        .map(|p| format!("Set this up with\n{}\nthen run the tests.", p.text))
        .collect();
    let commands: Vec<String> = planted
        .iter()
        .map(|p| format!("cat >> .env <<'EOF'\n{}\nEOF", p.text))
        .collect();
    let outputs: Vec<String> = planted
        .iter()
        .map(|p| format!("wrote .env:\n{}\n(1 line)", p.text))
        .collect();
    let exchanges: Vec<Exchange> = (0..planted.len())
        .map(|i| Exchange {
            prompt: &prompts[i],
            answer: "Done.",
            command: &commands[i],
            output: &outputs[i],
            output_is_error: false,
        })
        .collect();
    let id = "5ec2e7a1-0000-4000-8000-000000000015";
    std::fs::write(
        project.join(format!("{id}.jsonl")),
        claude_session(id, None, "/home/dev/secrets", "main", &exchanges),
    )
    .unwrap();
    let store = dir.path().join("trail.db");
    let (code, out, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(&home)
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");
    // The store keeps the originals (only exports redact).
    let (_, shown, _) = run(trail(dir.path(), &store).args(["show", id, "--json"]));
    assert!(shown.contains(&planted[0].secret));

    let mut leaks = Vec::new();
    for format in ["md", "html", "json", "vscode"] {
        let out_dir = dir.path().join(format!("out-{format}"));
        let (code, _, err) = run(trail(dir.path(), &store)
            .args(["export", id, "--format", format, "--out"])
            .arg(&out_dir));
        assert_eq!(code, 0, "{format}: {err}");
        let mut text = String::new();
        for f in std::fs::read_dir(&out_dir).unwrap() {
            text.push_str(&std::fs::read_to_string(f.unwrap().path()).unwrap());
        }
        assert!(text.len() > 10_000, "{format}: {} bytes", text.len());
        for p in &planted {
            for part in secret_parts(&p.secret) {
                if text.contains(part) {
                    leaks.push(format!("{format}: {} ({part})", p.kind));
                }
            }
        }
        // Every kind is counted where it was found (the summary on stderr names them).
        assert!(err.contains("Redacted"), "{format}: {err}");
    }
    let (_, md, _) = run(trail(dir.path(), &store).args(["export", id]));
    for p in &planted {
        for part in secret_parts(&p.secret) {
            if md.contains(part) {
                leaks.push(format!("md on stdout: {} ({part})", p.kind));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "{} leaks:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
}

/// Issue 20: `trail forget` removes a session for good, from the bytes of the store's files
/// too (SQLite's freed pages, the full-text segments and the write-ahead logs kept them).
#[test]
fn a_forgotten_session_leaves_no_byte_of_its_text_in_the_store_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = home.join(".claude/projects/-home-dev-forget");
    std::fs::create_dir_all(&project).unwrap();
    let secret = "zq7forgettablewordxv";
    let kept = "11111111-2222-4333-8444-555555555555";
    let gone = "66666666-7777-4888-8999-aaaaaaaaaaaa";
    for (id, word) in [(kept, "keptwordalpha"), (gone, secret)] {
        let prompt = format!("Please look at {word} in the config");
        let output = format!("line with {word}\n").repeat(400);
        let jsonl = claude_session(
            id,
            None,
            "/home/dev/forget",
            "main",
            &[Exchange {
                prompt: &prompt,
                answer: &format!("The {word} setting is fine."),
                command: &format!("grep -r {word} ."),
                output: &output,
                output_is_error: false,
            }],
        );
        std::fs::write(project.join(format!("{id}.jsonl")), jsonl).unwrap();
    }
    let store = dir.path().join("trail.db");
    assert_eq!(run(trail(&home, &store).arg("index")).0, 0);
    let search = dir.path().join("trail.db-search");
    let holds = |word: &str| {
        [&store, &search].iter().any(|p| {
            let mut files = vec![p.to_path_buf()];
            files.push(
                p.with_file_name(format!("{}-wal", p.file_name().unwrap().to_string_lossy())),
            );
            files.iter().any(|f| {
                std::fs::read(f).is_ok_and(|b| b.windows(word.len()).any(|w| w == word.as_bytes()))
            })
        })
    };
    assert!(holds(secret), "the text is stored before the forget");

    let (code, out, err) = run(trail(&home, &store).args(["forget", gone]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        !holds(secret),
        "a forgotten session's words remain in the store's files"
    );
    assert!(holds("keptwordalpha"), "the other session stays");
    let (code, _, _) = run(trail(&home, &store).args(["search", "keptwordalpha"]));
    assert_eq!(code, 0, "the kept session is still found");
    let (code, _, _) = run(trail(&home, &store).args(["search", secret]));
    assert_eq!(code, 1, "the forgotten one is not");

    // By folder and by time: a dry run names what would go and changes nothing.
    let dry = |args: &[&str]| -> Vec<String> {
        let (code, out, err) = run(trail(&home, &store)
            .args(["forget", "--dry-run", "--json"])
            .args(args));
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["forgotten"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(dry(&["--repo", "dev/forget"]), vec![kept.to_string()]);
    assert_eq!(dry(&["--before", "2000-01-01"]), Vec::<String>::new());
    assert_eq!(dry(&["--before", "2999-01-01"]), vec![kept.to_string()]);
    assert!(holds("keptwordalpha"), "a dry run forgets nothing");
}
