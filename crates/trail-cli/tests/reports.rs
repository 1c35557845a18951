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
