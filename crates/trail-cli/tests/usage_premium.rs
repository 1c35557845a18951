//! `trail usage` shows GitHub Copilot premium requests in a column of their own, never as
//! dollars (issue 18). The Copilot CLI log is written here from the `session.shutdown` shape
//! (`totalPremiumRequests`, `modelMetrics[model].requests{count, cost}`).

mod common;

use common::{run, trail};

#[test]
fn premium_requests_are_a_column_not_dollars() {
    let home = tempfile::tempdir().unwrap();
    let session = home
        .path()
        .join(".copilot/session-state/7d6c5b4a-3f2e-4d1c-9b8a-7f6e5d4c3b2a");
    std::fs::create_dir_all(&session).unwrap();
    let events = [
        r#"{"type":"session.start","id":"e1","parentId":null,"timestamp":"2026-11-04T08:00:00.000Z","data":{"sessionId":"7d6c5b4a-3f2e-4d1c-9b8a-7f6e5d4c3b2a","producer":"copilot-agent","context":{"cwd":"/home/dev/api"}}}"#,
        r#"{"type":"user.message","id":"e2","parentId":"e1","timestamp":"2026-11-04T08:00:01.000Z","data":{"content":"Bump the API version"}}"#,
        r#"{"type":"session.shutdown","id":"e3","parentId":"e2","timestamp":"2026-11-04T08:05:00.000Z","data":{"shutdownType":"routine","totalPremiumRequests":1.5,"modelMetrics":{"claude-sonnet-4.6":{"requests":{"count":1,"cost":1.5},"usage":{"inputTokens":1000000,"outputTokens":0}}}}}"#,
    ];
    std::fs::write(session.join("events.jsonl"), events.join("\n") + "\n").unwrap();
    let store = home.path().join("t.db");
    let (code, _, err) = run(trail(home.path(), &store).args(["index", "--source", "copilot-cli"]));
    assert_eq!(code, 0, "{err}");

    let (code, table, err) = run(trail(home.path(), &store).args(["usage", "--by", "model"]));
    assert_eq!(code, 0, "{err}");
    let header = table.lines().next().unwrap();
    assert!(header.contains("Premium requests"), "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with("claude-sonnet-4.6"))
        .unwrap_or_else(|| panic!("{table}"));
    // One million input tokens at $3, priced through the dotted id; 1.5 premium requests.
    assert!(row.contains("$3.00"), "{row}");
    assert!(row.trim_end().ends_with("1.5"), "{row}");

    let (_, json, _) = run(trail(home.path(), &store).args(["usage", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["totals"]["premium_requests"], 1.5);
    assert!((v["totals"]["cost_usd"].as_f64().unwrap() - 3.0).abs() < 1e-9);
}
