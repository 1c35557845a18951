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
