//! Reports over the format changes of late 2026 (issue 18): prompts a person did not write are
//! not counted as asked, web searches are priced, Copilot's model ids find their prices and
//! premium requests stay a unit of their own.

use std::path::Path;

use chrono::{TimeZone, Utc};
use trail_ingest::{index, IndexOptions, NoProgress};
use trail_model::{Session, SessionId, SessionMeta, SourceKind, Usage};
use trail_report::{improve, standup, usage, Filter, FindingKind, GroupBy, PriceTable};
use trail_store::{FileRecord, Store};

const SID: &str = "5b6c7d8e-0000-4000-8000-0000000000cc";

fn line(uuid: &str, parent: Option<&str>, ts: &str, body: serde_json::Value) -> serde_json::Value {
    let mut v = serde_json::json!({
        "uuid": uuid, "parentUuid": parent, "isSidechain": false, "userType": "external",
        "cwd": "/home/dev/api", "sessionId": SID, "version": "2.1.170", "timestamp": ts
    });
    for (k, x) in body.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

fn prompt(
    uuid: &str,
    parent: Option<&str>,
    ts: &str,
    text: &str,
    source: &str,
) -> serde_json::Value {
    line(
        uuid,
        parent,
        ts,
        serde_json::json!({"type": "user", "promptSource": source,
            "message": {"role": "user", "content": text}}),
    )
}

fn answer(uuid: &str, parent: &str, ts: &str, searches: u64) -> serde_json::Value {
    line(
        uuid,
        Some(parent),
        ts,
        serde_json::json!({"type": "assistant", "requestId": format!("req_{uuid}"),
            "message": {"id": format!("msg_{uuid}"), "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-6", "content": [{"type": "text", "text": "Done."}],
                "usage": {"input_tokens": 1000, "output_tokens": 100,
                    "server_tool_use": {"web_search_requests": searches}}}}),
    )
}

/// A Claude Code session (written as the transcripts of v2.1.16x write `promptSource`) with a
/// prompt a program sent between two a person typed, indexed into a fresh store.
fn claude_store(dir: &Path) -> Store {
    let project = dir.join("projects/-home-dev-api");
    std::fs::create_dir_all(&project).unwrap();
    let lines = [
        prompt(
            "u1",
            None,
            "2026-10-05T09:00:00.000Z",
            "Add pagination to the list endpoint",
            "typed",
        ),
        answer("a1", "u1", "2026-10-05T09:00:10.000Z", 2),
        prompt(
            "u2",
            Some("a1"),
            "2026-10-05T09:01:00.000Z",
            "no, that's wrong, use cursors",
            "sdk",
        ),
        answer("a2", "u2", "2026-10-05T09:01:10.000Z", 0),
        prompt(
            "u3",
            Some("a2"),
            "2026-10-05T09:02:00.000Z",
            "no, that's wrong: keep offsets",
            "typed",
        ),
        answer("a3", "u3", "2026-10-05T09:02:10.000Z", 0),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(project.join(format!("{SID}.jsonl")), text).unwrap();
    let mut store = Store::open(&dir.join("t.db")).unwrap();
    index(
        &mut store,
        &IndexOptions::one_source(SourceKind::ClaudeCode, dir.join("projects")),
        &NoProgress,
    )
    .unwrap();
    store
}

#[test]
fn reports_count_only_prompts_a_person_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let store = claude_store(dir.path());
    let now = Utc.with_ymd_and_hms(2026, 10, 5, 12, 0, 0).unwrap();
    let s = standup(&store, &Filter::default(), now).unwrap();
    let asked = &s.streams[0].sessions[0].asked;
    assert_eq!(
        asked,
        &vec![
            "Add pagination to the list endpoint".to_string(),
            "no, that's wrong: keep offsets".to_string()
        ],
        "the program's prompt is not what was asked"
    );
    let r = improve(&store, &Filter::default()).unwrap();
    let corrections = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Corrections)
        .expect("a correction");
    assert_eq!(corrections.count, 1, "only the typed correction");
}

#[test]
fn web_searches_are_priced_per_search() {
    let dir = tempfile::tempdir().unwrap();
    let store = claude_store(dir.path());
    let r = usage(
        &store,
        &Filter::default(),
        GroupBy::Model,
        PriceTable::shipped(),
    )
    .unwrap();
    assert_eq!(r.totals.web_search_requests, 2);
    assert!(r.unpriced_models.is_empty());
    // 3 requests of 1,000 input and 100 output tokens at $3 / $15 per million, plus two
    // searches at $10 per thousand.
    let tokens = 3.0 * (1000.0 * 3.0 + 100.0 * 15.0) / 1e6;
    assert!(
        (r.totals.cost_usd - (tokens + 0.02)).abs() < 1e-9,
        "{}",
        r.totals.cost_usd
    );
}

#[test]
fn copilot_ids_are_priced_and_premium_requests_are_never_dollars() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let id = "copilot-cli:premium";
    let mut meta = SessionMeta::new(SessionId::new(id), SourceKind::CopilotCli, id);
    meta.created_at = Some("2026-10-05T09:00:00.000Z".into());
    let mut s = Session::new(meta);
    for (n, (model, premium)) in [
        ("copilot/claude-sonnet-4.6", 1.0),
        ("claude-sonnet-4.6", 0.5),
    ]
    .into_iter()
    .enumerate()
    {
        s.usage.push(Usage {
            request_key: format!("shutdown@{n}:{model}"),
            model: Some(model.into()),
            timestamp: Some("2026-10-05T09:00:00.000Z".into()),
            input_tokens: 1_000_000,
            tokens_known: true,
            premium_requests: premium,
            ..Usage::default()
        });
    }
    store
        .write_batch(vec![FileRecord {
            path: "/nowhere/events.jsonl".into(),
            source: Some(SourceKind::CopilotCli),
            sessions: vec![s],
            bytes_parsed: 1,
            ..FileRecord::default()
        }])
        .unwrap();
    let r = usage(
        &store,
        &Filter::default(),
        GroupBy::Model,
        PriceTable::shipped(),
    )
    .unwrap();
    assert!(r.unpriced_models.is_empty(), "{:?}", r.unpriced_models);
    assert!((r.totals.premium_requests - 1.5).abs() < 1e-12);
    // Two million input tokens at $3: the premium requests add nothing to the dollars.
    assert!(
        (r.totals.cost_usd - 6.0).abs() < 1e-9,
        "{}",
        r.totals.cost_usd
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["totals"]["premium_requests"], 1.5);
    let md = trail_report::markdown::usage(&r);
    assert!(md.contains("Premium requests"), "{md}");
}
