//! The writer keeps full-text rows in FTS5's memory buffer until the batch commits.
//!
//! FTS5 writes its buffer out as a new segment whenever a statement opens a statement journal
//! (a `RETURNING`, an `INSERT ... SELECT`, an `INSERT OR REPLACE` on a table with foreign
//! keys...). One such statement per turn or per message turned a dense log into tens of
//! thousands of one-row segments and made the writer spend a third of its time merging them.
//! FTS5 also flushes when a rowid comes lower than the last one, which a checkpoint's sections
//! (rowids above every turn's) cause for the session after it: a compaction costs one segment.
//! With automerge off, the number of segments counts the flushes exactly.

use trail_model::{
    Checkpoint, FileTouch, Message, MessageKind, RefType, Role, Session, SessionId, SessionMeta,
    SessionRef, SourceKind, Usage,
};
use trail_store::{FileRecord, SearchOptions, Store};

fn message(seq: u32, role: Role, kind: MessageKind, turn: u32, text: &str) -> Message {
    Message {
        seq,
        role: Some(role),
        kind: Some(kind),
        turn_index: Some(turn),
        text: text.to_string(),
        on_main_chain: true,
        timestamp: Some(format!("2026-01-01T00:{:02}:{:02}Z", turn % 60, seq % 60)),
        ..Message::default()
    }
}

/// A session of `turns` turns, each a prompt, a tool call and result, and an answer, with the
/// files, refs and usage rows a real parse produces, and a checkpoint when asked.
fn dense_session(n: u32, turns: u32, checkpoint: bool) -> Session {
    let id = format!("00000000-0000-4000-8000-{n:012}");
    let mut meta = SessionMeta::new(SessionId::new(&id), SourceKind::GeminiCli, &id);
    meta.title = Some(format!("session {n}"));
    meta.created_at = Some("2026-01-01T00:00:00Z".into());
    let mut s = Session::new(meta);
    let mut seq = 0;
    for t in 0..turns {
        let mut push = |role, kind, text: String, call: Option<&str>| {
            let mut m = message(seq, role, kind, t, &text);
            if let Some(c) = call {
                m.tool_call_id = Some(c.to_string());
                m.tool_name = Some("read_file".into());
                m.tool_input = Some(format!("{{\"path\": \"src/file{t}.rs\"}}"));
            }
            s.messages.push(m);
            seq += 1;
        };
        let call = format!("call-{t}");
        push(
            Role::User,
            MessageKind::Prompt,
            format!("please fix bug {t} in the parser"),
            None,
        );
        push(
            Role::Assistant,
            MessageKind::ToolCall,
            String::new(),
            Some(&call),
        );
        push(
            Role::Tool,
            MessageKind::ToolResult,
            format!("fn parse{t}() {{}}"),
            Some(&call),
        );
        push(
            Role::Assistant,
            MessageKind::Text,
            format!("fixed bug {t}"),
            None,
        );
        s.files.push(FileTouch {
            path: format!("src/file{t}.rs"),
            tool_name: Some("read_file".into()),
            turn_index: Some(t),
            first_seen_at: None,
        });
        s.refs.push(SessionRef {
            ref_type: RefType::Issue,
            value: format!("{t}"),
            turn_index: Some(t),
            created_at: None,
        });
        s.usage.push(Usage {
            request_key: format!("req-{t}"),
            model: Some("gemini-2.5-pro".into()),
            input_tokens: 100,
            output_tokens: 10,
            tokens_known: true,
            ..Usage::default()
        });
    }
    if checkpoint {
        s.checkpoints.push(Checkpoint {
            number: 1,
            title: Some("compaction".into()),
            overview: Some("what happened so far".into()),
            ..Checkpoint::default()
        });
    }
    s.turn_count = turns;
    s.observe_model("gemini-2.5-pro");
    s
}

fn segments(store: &Store, table: &str) -> i64 {
    store
        .connection()
        .query_row(
            &format!("SELECT count(DISTINCT segid) FROM {table}_idx"),
            [],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn a_batch_of_new_sessions_writes_each_full_text_index_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    for table in ["turn_search", "search_index"] {
        store
            .connection()
            .execute(
                &format!("INSERT INTO {table} ({table}, rank) VALUES ('automerge', 0)"),
                [],
            )
            .unwrap();
    }
    let records = (0..3)
        .map(|n| FileRecord {
            path: format!("/nowhere/session-{n}.jsonl"),
            source: Some(SourceKind::GeminiCli),
            // The last session only: its checkpoint rows come last in the batch.
            sessions: vec![dense_session(n, 40, n == 2)],
            bytes_parsed: 1,
            lines: 1,
            ..FileRecord::default()
        })
        .collect();
    let stats = store.write_batch(records).unwrap();
    assert_eq!(stats.sessions_new, 3);
    assert_eq!(stats.messages, 3 * 40 * 4);

    let conn = store.connection();
    let indexed: i64 = conn
        .query_row("SELECT count(*) FROM turn_docs", [], |r| r.get(0))
        .unwrap();
    let turns: i64 = conn
        .query_row(
            "SELECT count(*) FROM search_index WHERE source_type = 'turn'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(turns, 3 * 40);
    let sections: i64 = conn
        .query_row(
            "SELECT count(*) FROM search_index WHERE source_type LIKE 'checkpoint%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sections, 1);
    assert_eq!(indexed, 3 * 40, "one full-text row per turn");
    assert_eq!(
        segments(&store, "turn_search"),
        1,
        "turn_search flushed once"
    );
    assert_eq!(
        segments(&store, "search_index"),
        1,
        "search_index flushed once"
    );
    for table in ["turn_search", "search_index"] {
        conn.execute(
            &format!("INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)"),
            [],
        )
        .unwrap();
    }
}

fn count(store: &Store, sql: &str) -> i64 {
    store.connection().query_row(sql, [], |r| r.get(0)).unwrap()
}

fn indexed_matches(store: &Store, word: &str) -> i64 {
    store
        .connection()
        .query_row(
            "SELECT count(*) FROM turn_search WHERE turn_search MATCH ?1",
            [word],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn an_append_replaces_a_resent_message_and_adds_the_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let record = |session: Session, resumed_from| FileRecord {
        path: "/nowhere/events.jsonl".into(),
        source: Some(SourceKind::CopilotCli),
        sessions: vec![session],
        resumed_from,
        bytes_parsed: if resumed_from.is_some() { 2 } else { 1 },
        lines: 1,
        ..FileRecord::default()
    };
    let first = dense_session(7, 2, false);
    let id = first.meta.id.clone();
    store.write_batch(vec![record(first, None)]).unwrap();
    // One row per turn: turns 0 and 1 each hold an answer "fixed bug N".
    assert_eq!(indexed_matches(&store, "fixed"), 2);

    // The next piece sends the last answer again, changed (seq 7), and one new prompt (seq 8).
    let mut delta = Session::new(SessionMeta::new(
        id.clone(),
        SourceKind::CopilotCli,
        id.as_str(),
    ));
    delta.mode = trail_model::UpdateMode::Append;
    delta.turn_count = 3;
    delta.messages.push(message(
        7,
        Role::Assistant,
        MessageKind::Text,
        1,
        "rewritten answer",
    ));
    delta.messages.push(message(
        8,
        Role::User,
        MessageKind::Prompt,
        2,
        "one more request",
    ));
    store.write_batch(vec![record(delta, Some(1))]).unwrap();

    assert_eq!(count(&store, "SELECT count(*) FROM messages"), 9);
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM messages WHERE seq = 7 AND text = 'rewritten answer'"
        ),
        1
    );
    assert_eq!(
        indexed_matches(&store, "fixed"),
        1,
        "the old answer left the index"
    );
    assert_eq!(indexed_matches(&store, "rewritten"), 1);
    assert_eq!(indexed_matches(&store, "request"), 1);
    assert_eq!(count(&store, "SELECT message_count FROM sessions"), 9);
    assert_eq!(count(&store, "SELECT turn_count FROM sessions"), 3);
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM turns WHERE assistant_response = 'rewritten answer'"
        ),
        1
    );
    store
        .connection()
        .execute(
            "INSERT INTO turn_search (turn_search, rank) VALUES ('integrity-check', 1)",
            [],
        )
        .unwrap();
}

/// Every full-text row of the search database, by natural key (turn rows by session, turn and
/// the words they hold; Chronicle rows whole), and each turn's kept prompt.
fn search_digest(store: &Store) -> Vec<String> {
    let conn = store.connection();
    let mut out: Vec<String> = conn
        .prepare(
            "SELECT source_id || '|' || session_id || '|' || source_type || '|' || content
             FROM search_index ORDER BY source_id",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE temp.v USING fts5vocab(search, turn_search, instance)",
    )
    .unwrap();
    out.extend(
        conn.prepare(
            "SELECT d.session_id || '|' || d.turn_index || '|' || v.term || '|' || v.col
                    || '|' || v.offset
             FROM temp.v v JOIN turn_docs d ON d.id = v.doc ORDER BY 1",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap),
    );
    conn.execute_batch("DROP TABLE temp.v").unwrap();
    // Each turn's kept prompt (a row whose turn is gone shows as such).
    out.extend(
        conn.prepare(
            "SELECT 'prompt|' || coalesce(d.session_id || '|' || d.turn_index, 'no turn')
                    || '|' || p.prompt
             FROM search.turn_prompts p LEFT JOIN turn_docs d ON d.id = p.id ORDER BY 1",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap),
    );
    out
}

fn three_sessions() -> Vec<FileRecord> {
    (0..3)
        .map(|n| FileRecord {
            path: format!("/nowhere/session-{n}.jsonl"),
            source: Some(SourceKind::GeminiCli),
            sessions: vec![dense_session(n, 5, n == 2)],
            bytes_parsed: 1,
            lines: 1,
            ..FileRecord::default()
        })
        .collect()
}

/// A batch the store committed but the search database never got (the process was killed
/// between the two) is rebuilt from the store by the next writer, and the result is what
/// applying it would have given.
#[test]
fn a_batch_the_search_database_missed_is_rebuilt_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let clean_path = dir.path().join("clean.db");
    let mut clean = Store::open(&clean_path).unwrap();
    clean.write_batch(three_sessions()).unwrap();

    let path = dir.path().join("t.db");
    let mut store = Store::open(&path).unwrap();
    let (stats, lost) = store.write_batch_deferred(three_sessions()).unwrap();
    assert_eq!(stats.sessions_new, 3);
    drop(lost);
    drop(store);
    let mut store = Store::open(&path).unwrap();
    assert_eq!(count(&store, "SELECT count(*) FROM turn_docs"), 0);
    assert_eq!(store.catch_up_search().unwrap(), 3);
    assert_eq!(search_digest(&store), search_digest(&clean));
    assert_eq!(store.catch_up_search().unwrap(), 0, "nothing lags any more");

    // A later batch applied by a writer of its own finds the missing one and rebuilds it too.
    let path = dir.path().join("u.db");
    let mut store = Store::open(&path).unwrap();
    let mut records = three_sessions();
    let last = records.pop().unwrap();
    let (_, lost) = store.write_batch_deferred(records).unwrap();
    drop(lost);
    let (_, next) = store.write_batch_deferred(vec![last]).unwrap();
    let mut writer = trail_store::SearchWriter::open(&path).unwrap();
    std::thread::spawn(move || writer.apply(next).unwrap())
        .join()
        .unwrap();
    assert_eq!(search_digest(&store), search_digest(&clean));
}

/// A search database deleted by hand, or made for another store, is rebuilt when the store
/// opens.
#[test]
fn a_missing_or_foreign_search_database_is_rebuilt_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let mut store = Store::open(&path).unwrap();
    store.write_batch(three_sessions()).unwrap();
    let want = search_digest(&store);
    drop(store);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!(
            "{}{suffix}",
            trail_store::search_path(&path).display()
        ));
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(search_digest(&store), want);
    drop(store);
    // Another store's search database, copied over this one's.
    let other = dir.path().join("other.db");
    Store::open(&other).unwrap();
    drop(Store::open(&other).unwrap());
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!(
            "{}{suffix}",
            trail_store::search_path(&path).display()
        ));
    }
    std::fs::copy(
        trail_store::search_path(&other),
        trail_store::search_path(&path),
    )
    .unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(search_digest(&store), want);
}

/// Twenty files of one dense session each.
fn twenty_sessions(turns: u32) -> Vec<FileRecord> {
    (0..20)
        .map(|n| FileRecord {
            path: format!("/nowhere/session-{n}.jsonl"),
            source: Some(SourceKind::GeminiCli),
            sessions: vec![dense_session(n, turns, false)],
            bytes_parsed: 1,
            lines: 1,
            ..FileRecord::default()
        })
        .collect()
}

/// Compaction gives every free page of the search database back (the pragma frees a page per
/// step; stepped once, it left thousands on the 1 GiB benchmark store).
#[test]
fn compaction_gives_every_free_page_of_the_search_database_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    store.write_batch(twenty_sessions(1000)).unwrap();
    // Emptying the index frees its pages.
    store
        .connection()
        .execute_batch("INSERT INTO turn_search (turn_search) VALUES ('delete-all');")
        .unwrap();
    let free = |store: &Store| count(store, "PRAGMA search.freelist_count");
    let before = free(&store);
    let page = count(&store, "PRAGMA search.page_size");
    assert!(before * page >= 1 << 20, "{before} pages free");
    let freed = store.compact_search().unwrap();
    assert_eq!(free(&store), 0);
    assert_eq!(freed as i64, before);
}

/// A run that wrote a quarter of the store's sessions or more leaves the turn index in one
/// segment (a search reads each word once, not once per segment); a smaller run leaves its
/// segments to FTS5's automerge. The index holds the same words at the same places either way.
#[test]
fn a_large_run_leaves_the_turn_index_in_one_segment() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let mut files = twenty_sessions(40);
    while !files.is_empty() {
        let rest = files.split_off(5);
        store.write_batch(files).unwrap();
        files = rest;
    }
    assert_eq!(segments(&store, "turn_search"), 4, "a segment per batch");
    let before = search_digest(&store);

    assert!(!store.merge_search_index(4).unwrap(), "4 of 20 sessions");
    assert_eq!(segments(&store, "turn_search"), 4);
    assert!(store.merge_search_index(5).unwrap(), "5 of 20 sessions");
    assert_eq!(segments(&store, "turn_search"), 1);
    assert_eq!(search_digest(&store), before);
    assert!(
        !store.merge_search_index(0).unwrap(),
        "a run that wrote nothing"
    );
}

/// A setting of both full-text tables (Chronicle's `search_index`, in the store file since
/// issue 45, and `turn_search`, in the search database), or FTS5's `default` where the table's
/// config does not hold it.
fn fts_setting(store: &Store, key: &str, default: i64) -> [i64; 2] {
    ["main.search_index", "search.turn_search"].map(|t| {
        count(
            store,
            &format!("SELECT coalesce((SELECT v FROM {t}_config WHERE k = '{key}'), {default})"),
        )
    })
}

/// The search database's page size, and its largest FTS5 leaf (a row of `turn_search_data`).
fn leaves(store: &Store) -> (i64, i64) {
    (
        count(store, "PRAGMA search.page_size"),
        count(
            store,
            "SELECT max(length(block)) FROM search.turn_search_data",
        ),
    )
}

/// A new search database has 16 KiB pages and FTS5 leaves that fill them (a quarter as many
/// rows for its flushes and merges to write); one made before, with SQLite's 4 KiB pages, keeps
/// them and gets leaves that fit them, and answers the same searches.
#[test]
fn full_text_leaves_fill_the_search_databases_pages() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("new.db")).unwrap();
    store.write_batch(twenty_sessions(300)).unwrap();
    // Chronicle's table fills the store's 4 KiB pages.
    assert_eq!(fts_setting(&store, "pgsz", 4050), [4050, 16338]);
    let (page, largest) = leaves(&store);
    assert_eq!(page, 16384);
    assert!(largest > 8192 && largest <= page, "largest leaf {largest}");
    let found = indexed_matches(&store, "parser");

    // A search database made before: its file already has pages (4 KiB) when trail opens it.
    let old = dir.path().join("old.db");
    let search = trail_store::search_path(&old);
    rusqlite::Connection::open(&search)
        .unwrap()
        .execute_batch(
            "PRAGMA page_size = 4096; PRAGMA auto_vacuum = INCREMENTAL;
             CREATE TABLE made_before (x); DROP TABLE made_before;",
        )
        .unwrap();
    let mut store = Store::open(&old).unwrap();
    store.write_batch(twenty_sessions(300)).unwrap();
    assert_eq!(fts_setting(&store, "pgsz", 4050), [4050, 4050]);
    let (page, largest) = leaves(&store);
    assert_eq!(page, 4096);
    assert!(largest <= page, "largest leaf {largest}");
    assert_eq!(indexed_matches(&store, "parser"), found);
    assert!(found > 0);
}

/// Both full-text tables merge 8 segments at a time, and a search database made before that
/// setting gets it from its first index run.
#[test]
fn full_text_tables_merge_eight_segments_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(fts_setting(&store, "automerge", 4), [8, 8]);
    store
        .connection()
        .execute_batch("DELETE FROM search.turn_search_config WHERE k = 'automerge';")
        .unwrap();
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(
        fts_setting(&store, "automerge", 4),
        [8, 4],
        "as FTS5 made them before"
    );
    let _writer = trail_store::SearchWriter::open(&path).unwrap();
    assert_eq!(fts_setting(&store, "automerge", 4), [8, 8]);
}

/// Statements the writer runs once per file find their rows by the file's path. Each file
/// deletes the title hints it left before, and each file that disappeared marks its sessions:
/// a scan there read every hint (or session) of the store once per file, a first index's cost
/// growing with the square of its files (a tenth of the writer's CPU on the 3 GiB corpus).
#[test]
fn rows_of_a_file_are_found_by_its_path() {
    let store = Store::open_in_memory().unwrap();
    for (sql, index) in [
        (
            "DELETE FROM title_hints WHERE path = ?1",
            "idx_title_hints_path",
        ),
        (
            "UPDATE sessions SET source_missing = 1 WHERE source_path = ?1",
            "idx_sessions_source_path",
        ),
    ] {
        let plan: Vec<String> = store
            .connection()
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(["a.jsonl"], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            plan.iter()
                .any(|p| p.contains(&format!("USING INDEX {index}"))),
            "{sql}: {plan:?}"
        );
    }
}

/// FTS5's totals record of `turn_search` (bm25's row count, then each column's tokens).
fn fts_totals(store: &Store) -> Vec<u64> {
    fts_totals_of(store, "turn_search")
}

/// FTS5's totals record of the full-text table `table`: its row count, then each column's
/// tokens.
fn fts_totals_of(store: &Store, table: &str) -> Vec<u64> {
    let block: Vec<u8> = store
        .connection()
        .query_row(
            &format!("SELECT block FROM search.{table}_data WHERE id = 1"),
            [],
            |r| r.get(0),
        )
        .unwrap();
    // SQLite's varints (seven bits a byte, high bit: more follow); none here needs nine bytes.
    let mut out = Vec::new();
    let mut value = 0u64;
    for byte in block {
        value = value << 7 | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            out.push(value);
            value = 0;
        }
    }
    out
}

/// Every match's bm25, sorted.
fn bm25_scores(store: &Store, word: &str) -> Vec<f64> {
    bm25_scores_of(store, "turn_search", word)
}

/// Every match's bm25 in the full-text table `table`, sorted.
fn bm25_scores_of(store: &Store, table: &str, word: &str) -> Vec<f64> {
    let mut scores: Vec<f64> = store
        .connection()
        .prepare(&format!(
            "SELECT bm25({table}) FROM {table} WHERE {table} MATCH ?1"
        ))
        .unwrap()
        .query_map([word], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    scores.sort_by(f64::total_cmp);
    scores
}

/// bm25 counts each turn once however often the writer replaced it (FTS5 leaves a deleted row
/// in a `contentless_delete` table's totals; the writer counts them again): a store written in
/// steps scores exactly as the same sessions written once.
#[test]
fn replaced_turns_leave_bm25_statistics_as_one_write_of_the_same_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let record = |n: u32, turns: u32| FileRecord {
        path: format!("/nowhere/session-{n}.jsonl"),
        source: Some(SourceKind::GeminiCli),
        sessions: vec![dense_session(n, turns, false)],
        bytes_parsed: u64::from(turns),
        lines: 1,
        ..FileRecord::default()
    };
    let mut stepped = Store::open(&dir.path().join("stepped.db")).unwrap();
    stepped
        .write_batch(vec![record(1, 3), record(2, 2)])
        .unwrap();
    stepped.write_batch(vec![record(1, 5)]).unwrap();
    stepped.write_batch(vec![record(1, 4)]).unwrap();
    let mut once = Store::open(&dir.path().join("once.db")).unwrap();
    once.write_batch(vec![record(1, 4), record(2, 2)]).unwrap();

    let totals = fts_totals(&once);
    assert_eq!(totals[0], 6, "one row per turn: {totals:?}");
    assert_eq!(fts_totals(&stepped), totals);
    let scores = bm25_scores(&once, "parser");
    assert_eq!(scores.len(), 6);
    assert_eq!(bm25_scores(&stepped, "parser"), scores);
    // The index of prompts alone too.
    let prompts = fts_totals_of(&once, "prompt_search");
    assert_eq!(prompts[0], 6, "one row per prompt: {prompts:?}");
    assert_eq!(fts_totals_of(&stepped, "prompt_search"), prompts);
    let scores = bm25_scores_of(&once, "prompt_search", "parser");
    assert_eq!(scores.len(), 6);
    assert_eq!(bm25_scores_of(&stepped, "prompt_search", "parser"), scores);
}

/// The index of prompts alone holds, for each turn whose prompt column is not empty, exactly
/// what that column holds: for each word, its rows are the turns whose prompt column matches
/// it in the turn index, and FTS5 finds the table sound.
fn assert_prompt_index_agrees(store: &Store, words: &[&str]) {
    let conn = store.connection();
    let rowids = |sql: &str, arg: String| -> Vec<i64> {
        let mut ids: Vec<i64> = conn
            .prepare(sql)
            .unwrap()
            .query_map([arg], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        ids.sort_unstable();
        ids
    };
    for word in words {
        let alone = rowids(
            "SELECT rowid FROM prompt_search WHERE prompt_search MATCH ?1",
            word.to_string(),
        );
        let turns = rowids(
            "SELECT rowid FROM turn_search WHERE turn_search MATCH ?1",
            format!("{{prompt}} : {word}"),
        );
        assert_eq!(alone, turns, "{word}");
    }
    assert_eq!(
        fts_totals_of(store, "prompt_search")[0] as i64,
        count(store, "SELECT count(*) FROM search.turn_prompts")
    );
    conn.execute(
        "INSERT INTO prompt_search (prompt_search, rank) VALUES ('integrity-check', 1)",
        [],
    )
    .unwrap();
}

/// The search database's record of the last batch applied, and of the last one a writer that
/// keeps the index of prompts applied.
fn applied_and_prompts_seq(store: &Store) -> (String, Option<String>) {
    let state = |key: &str| -> Option<String> {
        store
            .connection()
            .query_row(
                "SELECT value FROM search.search_state WHERE key = ?1",
                [key],
                |r| r.get(0),
            )
            .ok()
    };
    (state("applied_seq").unwrap(), state("prompts_seq"))
}

/// A search database that an older trail's writer applied batches to (it moves `applied_seq`,
/// not `prompts_seq`, and leaves the index of prompts as it was) is searched without that
/// index: a query of one word orders its prompt tier by bm25 of the turn, as before the index
/// was kept. The next writer fills it again from `turn_prompts`.
#[test]
fn an_older_writers_batches_leave_the_index_of_prompts_unused_until_filled_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let session = |n: u32, prompt: &str, answer: &str| -> FileRecord {
        let id = format!("00000000-0000-4000-8000-{n:012}");
        let mut s = Session::new(SessionMeta::new(
            SessionId::new(&id),
            SourceKind::GeminiCli,
            &id,
        ));
        s.meta.created_at = Some("2026-01-01T00:00:00Z".into());
        s.messages
            .push(message(0, Role::User, MessageKind::Prompt, 0, prompt));
        s.messages
            .push(message(1, Role::Assistant, MessageKind::Text, 0, answer));
        s.turn_count = 1;
        FileRecord {
            path: format!("/nowhere/session-{n}.json"),
            source: Some(SourceKind::GeminiCli),
            sessions: vec![s],
            bytes_parsed: 1,
            lines: 1,
            ..FileRecord::default()
        }
    };
    // Session 1: a short prompt that holds the word, in a long turn. Session 2: the word once
    // in a long prompt, and often in a short answer. The prompt's own score puts 1 first,
    // bm25 of the turn 2.
    let filler = |n: usize| {
        (0..n)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    store
        .write_batch(vec![
            session(1, "parser please", &filler(400)),
            session(2, &format!("parser {}", filler(30)), "parser parser parser"),
        ])
        .unwrap();
    let first = |store: &Store| -> String {
        store
            .search(&SearchOptions {
                query: "parser".into(),
                limit: 1,
                ..SearchOptions::default()
            })
            .unwrap()
            .hits[0]
            .session_id
            .clone()
    };
    let one = "00000000-0000-4000-8000-000000000001";
    let two = "00000000-0000-4000-8000-000000000002";
    assert_eq!(first(&store), one);
    let (applied, prompts) = applied_and_prompts_seq(&store);
    assert_eq!(prompts.as_deref(), Some(applied.as_str()));
    assert_prompt_index_agrees(&store, &["parser", "please", "w3"]);

    // An older writer's batch: session 1's prompt row left out of the index of prompts, which
    // its record shows one batch behind.
    store
        .connection()
        .execute_batch(
            "DELETE FROM search.prompt_search WHERE rowid =
                 (SELECT id FROM search.turn_docs WHERE session_id LIKE '%1');
             UPDATE search.search_state SET value = CAST(value AS INTEGER) - 1
                 WHERE key = 'prompts_seq';",
        )
        .unwrap();
    assert_eq!(first(&store), two, "ranked by bm25 of the turn");

    // The next writer fills it again.
    store.write_batch(Vec::new()).unwrap();
    let (applied, prompts) = applied_and_prompts_seq(&store);
    assert_eq!(prompts.as_deref(), Some(applied.as_str()));
    assert_prompt_index_agrees(&store, &["parser", "please", "w3"]);
    assert_eq!(first(&store), one);
}

/// A session written whole again keeps the rows of the turns it still has as they were (the
/// same text and times): only the changed and new turns are written, and only the changed and
/// removed ones leave FTS5 a deleted row to test matches against.
#[test]
fn a_session_written_again_keeps_its_unchanged_turns() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let record = |session: Session| FileRecord {
        path: "/nowhere/session.json".into(),
        source: Some(SourceKind::GeminiCli),
        bytes_parsed: session.messages.len() as u64,
        sessions: vec![session],
        lines: 1,
        ..FileRecord::default()
    };
    let rows = |store: &Store| -> Vec<(i64, i64)> {
        store
            .connection()
            .prepare("SELECT turn_index, id FROM search.turn_docs ORDER BY turn_index")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    store
        .write_batch(vec![record(dense_session(1, 4, false))])
        .unwrap();
    let first = rows(&store);
    assert_eq!(first.len(), 4);

    // Written whole again, one turn longer and its last old turn's answer changed.
    let mut again = dense_session(1, 5, false);
    for m in again.messages.iter_mut() {
        if m.turn_index == Some(3) && m.kind == Some(MessageKind::Text) {
            m.text = "a different answer".into();
        }
    }
    store.write_batch(vec![record(again)]).unwrap();
    let second = rows(&store);
    assert_eq!(second[..3], first[..3], "turns 0-2 keep their rows");
    assert!(second[3].1 > first[3].1, "turn 3 changed: a new row");
    assert_eq!(second.len(), 5);
    assert_eq!(indexed_matches(&store, "different"), 1);
    assert_eq!(indexed_matches(&store, "parser"), 5);
    assert_prompt_index_agrees(&store, &["parser", "bug", "3", "4"]);

    // Written whole again with its last turn gone.
    store
        .write_batch(vec![record(dense_session(1, 4, false))])
        .unwrap();
    let third = rows(&store);
    assert_eq!(third[..3], first[..3]);
    assert_eq!(third.len(), 4);
    assert_eq!(indexed_matches(&store, "different"), 0);
    assert_eq!(fts_totals(&store)[0], 4, "bm25 counts four turns");
    assert_prompt_index_agrees(&store, &["parser", "bug", "3", "4"]);
    store
        .connection()
        .execute(
            "INSERT INTO turn_search (turn_search, rank) VALUES ('integrity-check', 1)",
            [],
        )
        .unwrap();
}

/// The deleted rows FTS5 keeps beside the turn index's segments (the entry counts of its
/// tombstone pages, rowids from 2^53, bytes 4-7 of each).
fn tombstones(store: &Store) -> u32 {
    let conn = store.connection();
    let mut stmt = conn
        .prepare("SELECT block FROM search.turn_search_data WHERE id >= 9007199254740992")
        .unwrap();
    let blocks: Vec<Vec<u8>> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    blocks
        .iter()
        .map(|b| u32::from_be_bytes([b[4], b[5], b[6], b[7]]))
        .sum()
}

/// A small run merges the turn index too when it holds many deleted rows: each search tests
/// every match against them (FTS5 merges a segment on its own once a tenth of it is deleted).
#[test]
fn a_run_merges_the_turn_index_once_it_holds_many_deleted_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    store.write_batch(twenty_sessions(100)).unwrap();
    assert!(store.merge_search_index(20).unwrap());
    assert_eq!(tombstones(&store), 0);
    // A session read again with its first 40 of 100 turns changed.
    let changed = |n: u32| {
        let mut s = dense_session(n, 100, false);
        for m in s.messages.iter_mut().filter(|m| m.turn_index < Some(40)) {
            m.text.push_str(" again");
        }
        FileRecord {
            path: format!("/nowhere/session-{n}.jsonl"),
            source: Some(SourceKind::GeminiCli),
            sessions: vec![s],
            bytes_parsed: 2,
            lines: 1,
            ..FileRecord::default()
        }
    };
    store.write_batch(vec![changed(0)]).unwrap();
    assert_eq!(tombstones(&store), 40);
    assert!(!store.merge_search_index(1).unwrap(), "40 deleted rows");
    store.write_batch(vec![changed(1)]).unwrap();
    assert_eq!(tombstones(&store), 80);
    let before = search_digest(&store);
    assert!(
        store.merge_search_index(1).unwrap(),
        "80 deleted rows of 2,000"
    );
    assert_eq!(tombstones(&store), 0);
    assert_eq!(segments(&store, "turn_search"), 1);
    assert_eq!(search_digest(&store), before);
}
