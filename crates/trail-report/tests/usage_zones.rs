//! `trail usage --tz`: days, weeks and months counted in another time zone than UTC.

use trail_model::{Session, SessionId, SessionMeta, SourceKind, Usage};
use trail_report::{usage_in, DayZone, Filter, GroupBy, PriceTable, UsageReport};
use trail_store::{FileRecord, Store};

/// Requests at these UTC times, 1,000 input tokens each (the second count is the session).
const REQUESTS: [(&str, u32); 5] = [
    ("2026-01-05T10:00:00.000Z", 0),
    ("2026-01-05T20:00:00.000Z", 0),
    ("2026-01-05T23:30:00.000Z", 1),
    ("2026-01-06T03:00:00.000Z", 1),
    ("2026-07-05T22:30:00.000Z", 1),
];

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let mut sessions: Vec<Session> = (0..2)
        .map(|n| {
            let id = format!("00000000-0000-4000-8000-00000000000{n}");
            let mut meta = SessionMeta::new(SessionId::new(&id), SourceKind::Codex, &id);
            meta.created_at = Some(REQUESTS[0].0.into());
            Session::new(meta)
        })
        .collect();
    for (i, (ts, session)) in REQUESTS.iter().enumerate() {
        sessions[*session as usize].usage.push(Usage {
            request_key: format!("req-{i}"),
            message_id: Some(format!("msg-{i}")),
            model: Some("gpt-5".into()),
            timestamp: Some(ts.to_string()),
            input_tokens: 1000,
            tokens_known: true,
            ..Usage::default()
        });
    }
    let records = sessions
        .into_iter()
        .enumerate()
        .map(|(n, s)| FileRecord {
            path: format!("/nowhere/rollout-{n}.jsonl"),
            source: Some(SourceKind::Codex),
            sessions: vec![s],
            bytes_parsed: 1,
            lines: 1,
            ..FileRecord::default()
        })
        .collect();
    store.write_batch(records).unwrap();
    (dir, store)
}

fn report(store: &Store, zone: &str, by: GroupBy, filter: Filter) -> UsageReport {
    let zone = DayZone::parse(zone).unwrap();
    usage_in(store, &filter, by, PriceTable::shipped(), &zone).unwrap()
}

fn days(r: &UsageReport) -> Vec<(String, i64)> {
    r.rows
        .iter()
        .map(|row| (row.key.clone(), row.requests))
        .collect()
}

fn day_rows(v: &[(&str, i64)]) -> Vec<(String, i64)> {
    v.iter().map(|(k, n)| (k.to_string(), *n)).collect()
}

#[test]
fn days_follow_the_zone_and_totals_do_not_change() {
    let (_dir, store) = store();
    let utc = report(&store, "UTC", GroupBy::Day, Filter::default());
    assert_eq!(utc.time_zone, "UTC");
    assert_eq!(
        days(&utc),
        day_rows(&[("2026-01-05", 3), ("2026-01-06", 1), ("2026-07-05", 1)])
    );
    // India, UTC+05:30: 20:00Z and 23:30Z on the 5th are 01:30 and 05:00 on the 6th.
    let ist = report(&store, "+05:30", GroupBy::Day, Filter::default());
    assert_eq!(ist.time_zone, "+05:30");
    assert_eq!(
        days(&ist),
        day_rows(&[("2026-01-05", 1), ("2026-01-06", 3), ("2026-07-06", 1)])
    );
    // California in winter, UTC-08:00: 03:00Z on the 6th is still the 5th.
    let pst = report(&store, "-08:00", GroupBy::Day, Filter::default());
    assert_eq!(
        days(&pst),
        day_rows(&[("2026-01-05", 4), ("2026-07-05", 1)])
    );
    for r in [&ist, &pst] {
        assert_eq!(r.totals.requests, utc.totals.requests);
        assert_eq!(r.totals.input_tokens, utc.totals.input_tokens);
        assert!((r.totals.cost_usd - utc.totals.cost_usd).abs() < 1e-9);
    }
    // Paris: UTC+1 in January, UTC+2 in July (22:30Z on 5 July is 00:30 on the 6th).
    let paris = report(&store, "Europe/Paris", GroupBy::Month, Filter::default());
    assert_eq!(days(&paris), day_rows(&[("2026-01", 4), ("2026-07", 1)]));
    // Grouping by something else than time is the same in every zone.
    let by_model = report(&store, "+05:30", GroupBy::Model, Filter::default());
    assert_eq!(days(&by_model), day_rows(&[("gpt-5", 5)]));
}

#[test]
fn a_range_is_a_range_of_instants() {
    let (_dir, store) = store();
    let ist = DayZone::parse("+05:30").unwrap();
    // "Since the 6th" in India starts at 18:30Z on the 5th.
    let filter = Filter {
        since: ist.start_of_day("2026-01-06").map(Into::into),
        until: ist.start_of_day("2026-01-07").map(Into::into),
        ..Filter::default()
    };
    let r = report(&store, "+05:30", GroupBy::Day, filter);
    assert_eq!(days(&r), day_rows(&[("2026-01-06", 3)]));
}
