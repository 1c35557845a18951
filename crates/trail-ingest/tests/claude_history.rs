//! Claude Code's prompt history through the whole index (issue 16, item 5): the prompts of
//! deleted transcripts become sessions of their own; prompts the store or the disk already
//! holds as transcripts are never indexed twice.

use std::io::Write;
use std::path::{Path, PathBuf};

use trail_ingest::{index, IndexOptions, NoProgress};
use trail_model::SourceKind;
use trail_store::Store;

const DELETED: &str = "5d0c1e2a-3b4f-4c6d-8e9f-0a1b2c3d4e5f";
const LIVE: &str = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d";

fn fixture_home() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../trail-sources/tests/fixtures/claude-history/.claude")
}

/// Copies the fixture's `.claude` folder (history and the live transcript) into `to`.
fn copy_home(to: &Path) {
    let live = format!("projects/-work-kettle/{LIVE}.jsonl");
    for rel in ["history.jsonl", live.as_str()] {
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(fixture_home().join(rel), dest).unwrap();
    }
}

/// A one-prompt Claude Code transcript line.
fn transcript_line(session: &str, cwd: &str, at: &str, text: &str) -> String {
    serde_json::json!({
        "type": "user", "uuid": format!("u-{at}"), "parentUuid": null, "sessionId": session,
        "cwd": cwd, "timestamp": at, "message": {"role": "user", "content": text}
    })
    .to_string()
}

fn options(claude: &Path) -> IndexOptions {
    let mut o = IndexOptions::default();
    for k in [SourceKind::ClaudeCode, SourceKind::ClaudeHistory] {
        o.roots.by_source.insert(k, vec![claude.to_path_buf()]);
    }
    o
}

fn rows(store: &Store, sql: &str) -> Vec<String> {
    let mut stmt = store.connection().prepare(sql).unwrap();
    let n = stmt.column_count();
    stmt.query_map([], |r| {
        let mut s = String::new();
        for i in 0..n {
            let v: rusqlite::types::Value = r.get(i)?;
            s.push_str(&format!("{v:?}|"));
        }
        Ok(s)
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn deleted_transcripts_come_back_as_prompts_and_live_ones_are_not_repeated() {
    let work = tempfile::tempdir().unwrap();
    let claude = work.path().join(".claude");
    copy_home(&claude);
    // The deleted session's transcript was indexed while it existed, then Claude Code removed
    // it; and an old transcript (before history lines had a session id) still in the store
    // holds the first undated prompt, typed 20 seconds before the history says.
    let gone = claude.join(format!("projects/-work-kettle/{DELETED}.jsonl"));
    let old = claude.join("projects/-work-kettle/0f0e0d0c-0b0a-4908-8706-050403020100.jsonl");
    std::fs::write(
        &gone,
        transcript_line(
            DELETED,
            "/work/kettle",
            "2025-11-10T10:00:01.000Z",
            "fix the flaky parser test",
        ) + "\n",
    )
    .unwrap();
    std::fs::write(
        &old,
        transcript_line(
            "0f0e0d0c-0b0a-4908-8706-050403020100",
            "/work/kettle",
            "2025-05-02T08:59:40.000Z",
            "rename the config loader",
        ) + "\n",
    )
    .unwrap();
    let mut store = Store::open(&work.path().join("t.db")).unwrap();
    let mut only_claude = options(&claude);
    only_claude.sources = vec![SourceKind::ClaudeCode];
    index(&mut store, &only_claude, &NoProgress).unwrap();
    std::fs::remove_file(&gone).unwrap();
    std::fs::remove_file(&old).unwrap();

    let s = index(&mut store, &options(&claude), &NoProgress).unwrap();
    assert!(s.failures.is_empty(), "{s:?}");
    // Left: the undated day's `/clear` (its other prompt is in the old transcript), and the
    // garden day. The deleted session is in the store already; the live one is on disk.
    let sessions = rows(
        &store,
        "SELECT id, turn_count, summary FROM sessions WHERE source = 'claude-history' ORDER BY created_at",
    );
    assert_eq!(sessions.len(), 2, "{sessions:#?}");
    assert!(sessions[0].contains("claude-history:2025-05-02-"));
    assert!(
        sessions[0].ends_with("Integer(1)|Text(\"/clear\")|"),
        "{}",
        sessions[0]
    );
    assert!(sessions[1].contains("claude-history:2025-05-03-"));
    let prompts = rows(
        &store,
        "SELECT m.seq, m.turn_index, m.text FROM messages m JOIN sessions s ON s.id = m.session_id
         WHERE s.source = 'claude-history' ORDER BY s.created_at, m.seq",
    );
    assert_eq!(
        prompts,
        vec![
            "Integer(0)|Integer(0)|Text(\"/clear\")|".to_string(),
            "Integer(0)|Integer(0)|Text(\"plan the garden beds\")|".to_string(),
        ]
    );
    let meta = rows(
        &store,
        "SELECT json_extract(metadata, '$.transcript'), json_extract(metadata, '$.prompts_only')
         FROM sessions WHERE source = 'claude-history' LIMIT 1",
    );
    assert_eq!(meta, vec!["Text(\"deleted\")|Integer(1)|".to_string()]);
}

#[test]
fn a_deleted_session_is_searchable_and_appends_continue_it() {
    let work = tempfile::tempdir().unwrap();
    let claude = work.path().join(".claude");
    copy_home(&claude);
    let history = claude.join("history.jsonl");
    let full = std::fs::read(&history).unwrap();
    // Index up to the deleted session's first prompt, then append the rest.
    let cut = full
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(2)
        .unwrap()
        .0
        + 1;
    std::fs::write(&history, &full[..cut]).unwrap();
    let mut store = Store::open(&work.path().join("t.db")).unwrap();
    let opts = options(&claude);
    index(&mut store, &opts, &NoProgress).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&history)
        .unwrap();
    f.write_all(&full[cut..]).unwrap();
    drop(f);
    let s = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(s.files_resumed, 1, "{s:?}");
    assert_eq!(s.bytes_read, (full.len() - cut) as u64);
    let id = format!("claude-history:{DELETED}");
    let got = rows(
        &store,
        &format!(
            "SELECT seq, turn_index, text FROM messages WHERE session_id = '{id}' ORDER BY seq"
        ),
    );
    assert_eq!(got.len(), 2);
    assert!(got[1].starts_with("Integer(1)|Integer(1)|Text(\"here is the log E1 parse error"));
    let turns = rows(
        &store,
        &format!("SELECT turn_index, user_message FROM turns WHERE session_id = '{id}' ORDER BY 1"),
    );
    assert_eq!(turns.len(), 2);
    // The pasted text is searchable.
    let hits = rows(
        &store,
        "SELECT count(*) FROM turn_search WHERE turn_search MATCH '\"gave up\"'",
    );
    assert_eq!(hits, vec!["Integer(1)|".to_string()]);
}

/// A long history is read in pieces; a session whose first prompt is in a later piece is as new
/// as one of the first piece, and the summary counts each session once (it said 1,360 new of
/// the 32,354 sessions a 200 MiB history made).
#[test]
fn sessions_first_seen_in_a_later_piece_are_counted_as_new() {
    let work = tempfile::tempdir().unwrap();
    let claude = work.path().join(".claude");
    // As in a real home: Claude Code's transcripts are under `projects/` (none left here).
    std::fs::create_dir_all(claude.join("projects")).unwrap();
    let mut history = std::fs::File::create(claude.join("history.jsonl")).unwrap();
    let sessions = 40;
    for s in 0..sessions {
        for p in 0..3 {
            let line = serde_json::json!({
                "display": format!("prompt {p} of session {s} about the parser"),
                "pastedContents": {},
                "timestamp": 1_767_225_600_000_i64 + (s * 10 + p) * 60_000,
                "project": "/home/u/kettle",
                "sessionId": format!("00000000-0000-4000-8000-{s:012}"),
            });
            writeln!(history, "{line}").unwrap();
        }
    }
    drop(history);
    let mut store = Store::open(&work.path().join("s.db")).unwrap();
    let opts = IndexOptions {
        chunk_bytes: Some(600),
        ..options(&claude)
    };
    let first = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(first.sessions_new, sessions as u64, "{first:?}");
    assert_eq!(first.sessions_updated, 0, "{first:?}");
    assert_eq!(
        rows(&store, "SELECT count(*) FROM sessions"),
        vec![format!("Integer({sessions})|")]
    );
    let again = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!((again.sessions_new, again.sessions_updated), (0, 0));
}
