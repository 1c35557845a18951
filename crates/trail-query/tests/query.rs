//! The query layer on the bundled samples: paging, turn ranges, search exclusions, errors that
//! frontends report as the caller's mistake.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use trail_ingest::{IndexOptions, NoProgress};
use trail_query::{
    Clock, DayZone, DetailRequest, FileHistoryRequest, ListRequest, Query, QueryError,
    ReportFilter, SearchRequest, SessionFilter, SqlRequest,
};
use trail_store::Store;

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home")
}

/// A store holding the bundled samples, and the query layer over it.
fn sample_query() -> (tempfile::TempDir, Query) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trail.db");
    let mut store = Store::open(&path).unwrap();
    let summary = trail_ingest::index(
        &mut store,
        &IndexOptions {
            paths: vec![samples()],
            ..IndexOptions::default()
        },
        &NoProgress,
    )
    .unwrap();
    assert!(summary.sessions_new >= 6, "{summary:?}");
    drop(store);
    let q = Query::open(&path).unwrap();
    (dir, q)
}

fn clock(now: &str) -> Clock {
    Clock {
        now: DateTime::parse_from_rfc3339(now)
            .unwrap()
            .with_timezone(&Utc),
        zone: DayZone::utc(),
    }
}

#[test]
fn a_missing_store_is_the_callers_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let err = Query::open(&dir.path().join("none.db")).err().unwrap();
    assert!(matches!(err, QueryError::NoStore(_)));
    assert!(err.is_caller_error());
    assert!(err.hint().unwrap().contains("trail index"));
}

#[test]
fn pages_follow_the_cursor_without_gaps_or_repeats() {
    let (_dir, q) = sample_query();
    let now = clock("2026-11-23T00:00:00Z");
    let all = q
        .list(
            &ListRequest {
                include_subagents: true,
                ..ListRequest::default()
            },
            &now,
        )
        .unwrap();
    assert!(all.next_cursor.is_none());
    let mut paged = Vec::new();
    let mut cursor = None;
    loop {
        let page = q
            .list(
                &ListRequest {
                    include_subagents: true,
                    limit: 2,
                    cursor: cursor.clone(),
                    ..ListRequest::default()
                },
                &now,
            )
            .unwrap();
        assert!(page.sessions.len() <= 2);
        paged.extend(page.sessions.into_iter().map(|s| s.id));
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let ids: Vec<String> = all.sessions.into_iter().map(|s| s.id.0).collect();
    assert_eq!(paged, ids);

    let bad = q
        .list(
            &ListRequest {
                cursor: Some("not a cursor".into()),
                ..ListRequest::default()
            },
            &now,
        )
        .unwrap_err();
    assert!(bad.is_caller_error(), "{bad}");
    let bad_source = q
        .list(
            &ListRequest {
                filter: SessionFilter {
                    source: Some("notepad".into()),
                    ..SessionFilter::default()
                },
                ..ListRequest::default()
            },
            &now,
        )
        .unwrap_err();
    assert!(
        bad_source.to_string().contains("claude-code"),
        "{bad_source}"
    );
}

#[test]
fn detail_cuts_to_a_turn_range_and_rejects_turns_that_do_not_exist() {
    let (_dir, q) = sample_query();
    let whole = q
        .detail(&DetailRequest {
            id: "7c1e2f40".into(),
            ..DetailRequest::default()
        })
        .unwrap();
    assert!(whole.session.turns >= 2);
    let one = q
        .detail(&DetailRequest {
            id: "7c1e2f40".into(),
            from_turn: Some(1),
            to_turn: Some(1),
        })
        .unwrap();
    assert!(!one.messages.is_empty());
    assert!(one.messages.iter().all(|m| m.turn_index == Some(1)));
    assert!(one.messages.len() < whole.messages.len());
    let err = q
        .detail(&DetailRequest {
            id: "7c1e2f40".into(),
            from_turn: Some(99),
            to_turn: None,
        })
        .unwrap_err();
    assert!(err.is_caller_error());
    assert!(err.to_string().contains("there is no turn 99"), "{err}");
    let unknown = q
        .detail(&DetailRequest {
            id: "ffffffff".into(),
            ..DetailRequest::default()
        })
        .unwrap_err();
    assert!(unknown.is_not_found());
}

#[test]
fn search_leaves_out_active_and_named_sessions() {
    let (_dir, q) = sample_query();
    let request = SearchRequest {
        query: "imperial".into(),
        ..SearchRequest::default()
    };
    // The samples were last active on 2026-11-20. Two minutes later they are "active".
    let hits = q.search(&request, &clock("2026-11-20T12:00:00Z")).unwrap();
    assert!(!hits.hits.is_empty());
    let id = hits.hits[0].session_id.clone();
    let updated = q.session(&id).unwrap().updated_at.unwrap();
    let just_after = {
        let t = DateTime::parse_from_rfc3339(&updated).unwrap() + chrono::Duration::minutes(2);
        clock(&t.to_rfc3339())
    };
    let active = SearchRequest {
        exclude_active_minutes: Some(10),
        ..request.clone()
    };
    let left = q.search(&active, &just_after).unwrap();
    assert!(left.hits.iter().all(|h| h.session_id != id));
    // Long after, the same session is found again.
    let later = q.search(&active, &clock("2027-01-01T00:00:00Z")).unwrap();
    assert!(later.hits.iter().any(|h| h.session_id == id));
    // Dated a few hours ahead of now (a clock ahead, a local time written as UTC), it is
    // still taken for active; dated days ahead, it is not the conversation going on now.
    let before = |d: chrono::Duration| {
        let t = DateTime::parse_from_rfc3339(&updated).unwrap() - d;
        clock(&t.to_rfc3339())
    };
    let ahead = q
        .search(&active, &before(chrono::Duration::hours(14)))
        .unwrap();
    assert!(ahead.hits.iter().all(|h| h.session_id != id));
    let far_ahead = q
        .search(&active, &before(chrono::Duration::days(3)))
        .unwrap();
    assert!(far_ahead.hits.iter().any(|h| h.session_id == id));
    // A session the caller names is skipped whatever its age.
    let named = SearchRequest {
        exclude_sessions: vec![id[..8].to_string()],
        ..request.clone()
    };
    let left = q.search(&named, &clock("2027-01-01T00:00:00Z")).unwrap();
    assert!(left.hits.iter().all(|h| h.session_id != id));

    for bad in [
        SearchRequest::default(),
        SearchRequest {
            query: "x".into(),
            role: Some("robot".into()),
            ..SearchRequest::default()
        },
        SearchRequest {
            query: "x".into(),
            filter: SessionFilter {
                since: Some("last tuesday".into()),
                ..SessionFilter::default()
            },
            ..SearchRequest::default()
        },
    ] {
        let err = q.search(&bad, &clock("2027-01-01T00:00:00Z")).unwrap_err();
        assert!(err.is_caller_error(), "{err}");
    }
}

#[test]
fn file_history_finds_relative_and_absolute_spellings() {
    let (_dir, q) = sample_query();
    let history = q
        .file_history(&FileHistoryRequest {
            path: "/home/demo/projects/recipe-box/src/scale.py".into(),
            ..FileHistoryRequest::default()
        })
        .unwrap();
    assert_eq!(history.touches.len(), 1, "{:?}", history.touches);
    let t = &history.touches[0];
    assert_eq!(t.source, "codex");
    assert_eq!(t.action, "edit");
    assert!(t.prompt.as_deref().unwrap().contains("scaler"));
    // Relative to its repository's root.
    let by_repo = q
        .file_history(&FileHistoryRequest {
            path: "src/scale.py".into(),
            repo: Some("demo-org/recipe-box".into()),
            ..FileHistoryRequest::default()
        })
        .unwrap();
    assert_eq!(by_repo.touches.len(), 1);
    // The same relative path in another repository is not this file.
    let other = q
        .file_history(&FileHistoryRequest {
            path: "src/scale.py".into(),
            repo: Some("someone/else".into()),
            ..FileHistoryRequest::default()
        })
        .unwrap();
    assert!(other.touches.is_empty());
}

#[test]
fn reports_and_sql_go_through_the_same_layer() {
    let (_dir, q) = sample_query();
    let now = clock("2026-11-23T00:00:00Z");
    let usage = q
        .usage(
            &ReportFilter::default(),
            trail_query::GroupBy::Source,
            trail_query::PriceTable::shipped(),
            &now,
        )
        .unwrap();
    assert!(usage.totals.total_tokens > 0);
    let bad_tz = q
        .standup(
            &ReportFilter {
                tz: Some("Mars/Olympus".into()),
                ..ReportFilter::default()
            },
            &now,
        )
        .unwrap_err();
    assert!(bad_tz.is_caller_error());
    let r = q
        .sql(&SqlRequest::new("SELECT count(*) FROM sessions"))
        .unwrap();
    assert_eq!(r.rows.len(), 1);
    let denied = q.sql(&SqlRequest::new("DELETE FROM sessions")).unwrap_err();
    assert!(denied.is_caller_error());
    assert!(q.schema_text().unwrap().contains("session_files"));
    let reopen = q.reopen("7c1e2f40").unwrap();
    assert!(reopen
        .shell()
        .contains("claude --resume 7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f"));
}

/// A Claude Code session that edits `file` (or, on odd turns, reads it) once per turn.
fn session_touching(cwd: &str, file: &str, session: &str, start_minute: u32, turns: u32) -> String {
    let mut out = String::new();
    let mut parent = "null".to_string();
    for t in 0..turns {
        let minute = start_minute + t * 3;
        let ts = |s: u32| {
            format!(
                "2026-10-{:02}T{:02}:{:02}:{s:02}.000Z",
                1 + minute / 1440,
                minute / 60 % 24,
                minute % 60
            )
        };
        let tool = if t % 2 == 0 { "Edit" } else { "Read" };
        for (n, (kind, body)) in [
            ("user", format!(r#""message":{{"role":"user","content":"change step {t} of the parser"}}"#)),
            ("assistant", format!(
                r#""requestId":"req_{session}_{t}","message":{{"id":"msg_{session}_{t}","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"tool_use","id":"toolu_{session}_{t}","name":"{tool}","input":{{"file_path":"{file}","old_string":"a","new_string":"b"}}}}],"usage":{{"input_tokens":10,"output_tokens":5}}}}"#
            )),
            ("user", format!(
                r#""message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{session}_{t}","content":"ok"}}]}}"#
            )),
        ]
        .into_iter()
        .enumerate()
        {
            let uuid = format!("{session}-{t}-{n}");
            out.push_str(&format!(
                r#"{{"parentUuid":{parent},"isSidechain":false,"userType":"external","cwd":"{cwd}","sessionId":"{session}","version":"2.1.14","gitBranch":"main","uuid":"{uuid}","timestamp":"{}","type":"{kind}",{body}}}"#,
                ts(n as u32)
            ));
            out.push('\n');
            parent = format!("\"{uuid}\"");
        }
    }
    out
}

#[test]
fn file_history_stops_early_yet_answers_as_a_full_read_would() {
    // 30 sessions touch one file over interleaved times (a later session can end before an
    // earlier one's last turn), so the early stop is exercised at every limit.
    let dir = tempfile::tempdir().unwrap();
    let cwd = "/home/demo/projects/parser";
    let file = "/home/demo/projects/parser/src/lib.rs";
    let projects = dir
        .path()
        .join("home/.claude/projects/-home-demo-projects-parser");
    std::fs::create_dir_all(&projects).unwrap();
    for i in 0..30u32 {
        let session = format!("5e551000-0000-4000-8000-{i:012}");
        let start = (i * 37) % 200 + i;
        let turns = 1 + (i * 7) % 9;
        std::fs::write(
            projects.join(format!("{session}.jsonl")),
            session_touching(cwd, file, &session, start, turns),
        )
        .unwrap();
    }
    let path = dir.path().join("trail.db");
    let mut store = Store::open(&path).unwrap();
    let mut roots = trail_ingest::Roots::default();
    roots.by_source.insert(
        trail_model::SourceKind::ClaudeCode,
        vec![dir.path().join("home/.claude/projects")],
    );
    let summary = trail_ingest::index(
        &mut store,
        &IndexOptions {
            roots,
            ..IndexOptions::default()
        },
        &NoProgress,
    )
    .unwrap();
    assert_eq!(summary.sessions_new, 30, "{summary:?}");
    drop(store);
    let q = Query::open(&path).unwrap();
    let history = |limit: usize| {
        q.file_history(&FileHistoryRequest {
            path: file.into(),
            limit,
            ..FileHistoryRequest::default()
        })
        .unwrap()
        .touches
    };
    let all = history(10_000);
    let expected_turns: u32 = (0..30u32).map(|i| 1 + (i * 7) % 9).sum();
    assert_eq!(all.len(), expected_turns as usize);
    assert!(all.windows(2).all(|w| w[0].timestamp >= w[1].timestamp));
    for limit in [1, 2, 3, 5, 8, 13, 21, 34, 55] {
        let some = history(limit);
        assert_eq!(some, all[..limit.min(all.len())].to_vec(), "limit {limit}");
    }
}

/// The bytes of a store's two files (the store, its search database).
fn store_bytes(path: &std::path::Path) -> Vec<Vec<u8>> {
    vec![
        std::fs::read(path).unwrap(),
        std::fs::read(trail_store::search_path(path)).unwrap(),
    ]
}

/// Issue 41: a read handle never writes. A store that looks older than this trail (its
/// `user_version` lowered by hand, as an older trail left it) is read as it is: search and
/// list answer, and neither file changes by a byte (only the writer, `trail index`, migrates).
#[test]
fn reading_an_older_store_leaves_it_byte_identical() {
    let (dir, q) = sample_query();
    let path = dir.path().join("trail.db");
    let request = SearchRequest {
        query: "imperial".into(),
        ..SearchRequest::default()
    };
    let now = clock("2026-11-23T00:00:00Z");
    let want = q.search(&request, &now).unwrap().hits.len();
    drop(q);
    let older = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {}", v - 3))
            .unwrap();
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
        v - 3
    };
    let before = store_bytes(&path);

    let q = Query::open(&path).unwrap();
    assert_eq!(q.search(&request, &now).unwrap().hits.len(), want);
    let listed = q.list(&ListRequest::default(), &now).unwrap();
    assert!(!listed.sessions.is_empty());
    drop(q);
    assert!(store_bytes(&path) == before, "a reader changed the store");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, older, "no reader migrated it");
}

/// Without a search database it can read, a reader says to run `trail index` instead of
/// building one (or answering nothing); the store is left as it was.
#[test]
fn a_reader_without_a_search_database_says_to_index() {
    let (dir, q) = sample_query();
    let path = dir.path().join("trail.db");
    drop(q);
    std::fs::remove_file(trail_store::search_path(&path)).unwrap();
    let before = std::fs::read(&path).unwrap();
    let q = Query::open(&path).unwrap();
    let request = SearchRequest {
        query: "imperial".into(),
        ..SearchRequest::default()
    };
    let err = q
        .search(&request, &clock("2026-11-23T00:00:00Z"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("trail index"), "{err}");
    assert!(err.is_caller_error());
    drop(q);
    assert!(std::fs::read(&path).unwrap() == before);
    assert!(!trail_store::search_path(&path).exists());
}
