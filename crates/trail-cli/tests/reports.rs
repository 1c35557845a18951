//! End-to-end tests of the report commands (issue 5) on the bundled samples: formats, filters,
//! the empty default standup, and usage errors.

mod common;

use common::{run, trail};

use std::path::PathBuf;

fn examples_home() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home")
}

#[test]
fn reports_run_on_the_samples_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("trail.db");
    let (code, out, err) = run(trail(dir.path(), &store)
        .arg("--home")
        .arg(examples_home())
        .arg("index"));
    assert_eq!(code, 0, "{out}{err}");

    // usage: table with a totals row, Markdown, JSON with the same totals.
    let (code, table, err) = run(trail(dir.path(), &store).arg("usage"));
    assert_eq!(code, 0, "{err}");
    assert!(table.lines().next().unwrap().starts_with("Day"), "{table}");
    assert!(table.lines().any(|l| l.starts_with("Total")), "{table}");
    let (_, md, _) = run(trail(dir.path(), &store).args(["usage", "--md", "--by", "model"]));
    assert!(md.contains("| **Total** |"), "{md}");
    let (_, json, _) = run(trail(dir.path(), &store).args(["usage", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["group_by"], "day");
    assert!(v["totals"]["total_tokens"].as_i64().unwrap() > 0);
    for by in ["week", "month", "session", "repo", "source"] {
        let (code, _, err) = run(trail(dir.path(), &store).args(["usage", "--by", by]));
        assert_eq!(code, 0, "{by}: {err}");
    }

    // Days of another zone (flag or TRAIL_TZ): the same totals, the zone in the heading.
    let (code, zoned, err) =
        run(trail(dir.path(), &store).args(["usage", "--json", "--tz", "+05:30"]));
    assert_eq!(code, 0, "{err}");
    let z: serde_json::Value = serde_json::from_str(&zoned).unwrap();
    assert_eq!(z["time_zone"], "+05:30");
    assert_eq!(v["time_zone"], "UTC");
    assert_eq!(z["totals"], v["totals"]);
    let (_, table, _) = run(trail(dir.path(), &store)
        .env("TRAIL_TZ", "Asia/Tokyo")
        .arg("usage"));
    assert!(table.starts_with("Day (Asia/Tokyo)"), "{table}");
    // A date is the start of that day in the zone: since the first UTC day's start in Tokyo
    // (nine hours earlier) keeps everything the UTC report has from that day on.
    let first_day = v["rows"][0]["key"].as_str().unwrap().to_string();
    let (_, since_utc, _) =
        run(trail(dir.path(), &store).args(["usage", "--json", "--since", &first_day]));
    let (_, since_tokyo, _) = run(trail(dir.path(), &store).args([
        "usage",
        "--json",
        "--tz",
        "Asia/Tokyo",
        "--since",
        &first_day,
    ]));
    let total = |s: &str| -> i64 {
        serde_json::from_str::<serde_json::Value>(s).unwrap()["totals"]["total_tokens"]
            .as_i64()
            .unwrap()
    };
    assert!(total(&since_tokyo) >= total(&since_utc));
    let (code, _, err) = run(trail(dir.path(), &store).args(["usage", "--tz", "Mars/Olympus"]));
    assert_eq!(code, 2);
    assert!(err.contains("unknown time zone"), "{err}");

    // The samples are older than a day: the default standup says so.
    let (code, out, _) = run(trail(dir.path(), &store).arg("standup"));
    assert_eq!(code, 0);
    assert!(out.contains("no sessions in the last 24 hours"), "{out}");
    let (code, out, _) = run(trail(dir.path(), &store).args(["standup", "--since", "2000-01-01"]));
    assert_eq!(code, 0);
    assert!(out.contains("Sessions:"), "{out}");
    let (_, prompt, _) =
        run(trail(dir.path(), &store).args(["standup", "--since", "2000-01-01", "--prompt"]));
    assert!(prompt.contains("```json"), "{prompt}");

    let (code, out, err) = run(trail(dir.path(), &store).arg("tips"));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("# Tips"), "{out}");
    let (code, out, err) = run(trail(dir.path(), &store).args(["improve", "--json"]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["findings"].is_array());
    let (_, out, _) = run(trail(dir.path(), &store).args(["improve", "--prompt"]));
    assert!(out.contains("CLAUDE.md"), "{out}");

    // Bad arguments are usage errors.
    let (code, _, err) = run(trail(dir.path(), &store).args(["usage", "--since", "soon"]));
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = run(trail(dir.path(), &store).args(["usage", "--by", "hour"]));
    assert_eq!(code, 2);
}

/// A request logged without its model is named in the table by model as in the note on
/// unpriced models below it, not left blank; `--json` keeps the empty key.
#[test]
fn a_request_without_a_model_is_named_in_the_table_by_model() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".claude/projects/-work-kettle");
    std::fs::create_dir_all(&project).unwrap();
    let id = "6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";
    let lines = [
        serde_json::json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":id,
            "cwd":"/work/kettle","timestamp":"2026-11-04T08:00:00.000Z",
            "message":{"role":"user","content":"Boil the water"}}),
        serde_json::json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":id,
            "cwd":"/work/kettle","timestamp":"2026-11-04T08:00:02.000Z","requestId":"req_1",
            "message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"Done."}],
                "usage":{"input_tokens":120,"output_tokens":30}}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(project.join(format!("{id}.jsonl")), text).unwrap();
    let store = home.path().join("t.db");
    let (code, _, err) = run(trail(home.path(), &store).args(["index", "--source", "claude-code"]));
    assert_eq!(code, 0, "{err}");

    let (code, table, err) = run(trail(home.path(), &store).args(["usage", "--by", "model"]));
    assert_eq!(code, 0, "{err}");
    let row = table
        .lines()
        .find(|l| l.starts_with("(no model recorded)"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("150"), "{row}");
    let (_, json, _) = run(trail(home.path(), &store).args(["usage", "--by", "model", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["rows"][0]["key"], "", "{json}");
}
