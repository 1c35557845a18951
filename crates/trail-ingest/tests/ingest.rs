//! Indexing end to end on real files: idempotence, incremental appends, concurrency, and the
//! Chronicle queries Copilot runs against its own store.

#![allow(clippy::print_stderr, clippy::type_complexity)]

use std::io::Write;
use std::path::{Path, PathBuf};

use trail_ingest::{index, IndexOptions, NoProgress};
use trail_model::SourceKind;
use trail_store::Store;

fn sample_projects() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home/.claude/projects")
}

fn shared_claude() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/claude-code");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipped: shared corpus not found at {}", p.display());
        None
    }
}

/// Copies a tree (the sources are read-only; tests that append work on a copy).
fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir(from) {
        let rel = entry.strip_prefix(from).unwrap();
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &dest).unwrap();
    }
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn options(root: &Path) -> IndexOptions {
    IndexOptions::one_source(SourceKind::ClaudeCode, root.to_path_buf())
}

/// A digest of every content row of the store, ordered by natural keys. Surrogate ids and
/// bookkeeping times are left out, so two stores with the same content compare equal however
/// they were built.
fn content_digest(store: &Store) -> Vec<String> {
    let queries = [
        "SELECT id, cwd, repository, host_type, branch, summary, created_at, updated_at, source,
                native_id, parent_session_id, parent_tool_call_id, source_path, models, turn_count,
                message_count, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens
         FROM sessions ORDER BY id",
        "SELECT session_id, turn_index, user_message, assistant_response, timestamp FROM turns
         ORDER BY session_id, turn_index",
        "SELECT session_id, seq, native_id, parent_native_id, role, kind, tool_name, tool_call_id,
                is_error, model, timestamp, is_sidechain, on_main_chain, turn_index, agent_ref,
                text, tool_input, tool_output, extra FROM messages ORDER BY session_id, seq",
        "SELECT session_id, tool_call_id, call_seq, result_seq, is_error, turn_index FROM tool_calls
         ORDER BY session_id, call_seq",
        "SELECT session_id, request_key, input_tokens, output_tokens, cache_creation_tokens,
                cache_read_tokens FROM usage ORDER BY session_id, request_key",
        "SELECT session_id, file_path, tool_name, turn_index FROM session_files ORDER BY session_id, file_path",
        "SELECT session_id, ref_type, ref_value FROM session_refs ORDER BY session_id, ref_type, ref_value",
        "SELECT session_id, checkpoint_number, title, overview FROM checkpoints ORDER BY session_id, checkpoint_number",
        "SELECT source_id, session_id, source_type, content FROM search_index ORDER BY source_id",
        "SELECT path, bytes_parsed, lines, issue_count FROM source_files ORDER BY path",
    ];
    let conn = store.connection();
    let mut out = Vec::new();
    for q in queries {
        let mut stmt = conn.prepare(q).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let mut s = String::new();
                for i in 0..n {
                    let v: rusqlite::types::Value = r.get(i)?;
                    s.push_str(&format!("{v:?}|"));
                }
                Ok(s)
            })
            .unwrap();
        for r in rows {
            out.push(r.unwrap());
        }
    }
    out
}

/// Every row of every table, ids included (for "indexing twice changes nothing").
fn full_digest(store: &Store) -> u64 {
    let conn = store.connection();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'search_index_%' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut h: u64 = 0xcbf29ce484222325;
    for t in tables {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{t}\" ORDER BY 1"))
            .unwrap();
        let n = stmt.column_count();
        let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
        let mut rows = stmt.query([]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            for (i, name) in names.iter().enumerate().take(n) {
                if name == "indexed_at" || name == "found_at" {
                    continue;
                }
                let v: rusqlite::types::Value = r.get(i).unwrap();
                for b in format!("{t}.{name}={v:?};").bytes() {
                    h ^= b as u64;
                    h = h.wrapping_mul(0x100000001b3);
                }
            }
        }
    }
    h
}

#[test]
fn indexing_twice_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let opts = options(&sample_projects());
    let first = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(first.files_parsed, 2);
    assert_eq!(first.sessions_new, 2);
    let before = full_digest(&store);
    let second = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(second.files_unchanged, 2);
    assert_eq!(second.files_parsed + second.files_resumed, 0);
    assert_eq!(before, full_digest(&store));
    // The subagent is linked to the Task call through toolUseResult.agentId.
    let (parent, call): (String, String) = store
        .connection()
        .query_row(
            "SELECT parent_session_id, parent_tool_call_id FROM sessions WHERE parent_session_id IS NOT NULL",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(parent, "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f");
    assert_eq!(call, "toolu_task1");
}

#[test]
fn a_first_index_ends_durable_and_without_its_marker() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    index(&mut store, &options(&sample_projects()), &NoProgress).unwrap();
    // The first index wrote without syncs (trail-store's `unsynced.rs`); it synced the store
    // and removed its marker before returning, and the connection syncs again.
    assert!(!store.is_unsynced());
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("-unsynced-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let sync: i64 = store
        .connection()
        .query_row("PRAGMA main.synchronous", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sync, 1);
    let sync: i64 = store
        .connection()
        .query_row("PRAGMA search.synchronous", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sync, 1);
}

#[test]
fn appended_lines_are_parsed_alone_and_equal_a_full_index() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("projects");
    copy_tree(&sample_projects(), &home);
    let main_file = walkdir(&home)
        .into_iter()
        .find(|p| !p.to_string_lossy().contains("agent-"))
        .unwrap();
    let full = std::fs::read(&main_file).unwrap();
    // Start with the first 10 lines, index, then append the rest in two steps.
    let cut_at = |n: usize| {
        full.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(n - 1)
            .unwrap()
            .0
            + 1
    };
    let (c1, c2) = (cut_at(10), cut_at(18));
    std::fs::write(&main_file, &full[..c1]).unwrap();
    let mut store = Store::open(&work.path().join("inc.db")).unwrap();
    let opts = options(&home);
    index(&mut store, &opts, &NoProgress).unwrap();
    for (from, to) in [(c1, c2), (c2, full.len())] {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&main_file)
            .unwrap();
        f.write_all(&full[from..to]).unwrap();
        drop(f);
        let s = index(&mut store, &opts, &NoProgress).unwrap();
        assert_eq!(s.files_resumed, 1, "{s:?}");
        assert_eq!(s.files_parsed, 0);
        assert_eq!(
            s.bytes_read,
            (to - from) as u64,
            "only the new bytes are read"
        );
    }
    let scratch_dir = tempfile::tempdir().unwrap();
    let mut scratch = Store::open(&scratch_dir.path().join("full.db")).unwrap();
    index(&mut scratch, &opts, &NoProgress).unwrap();
    assert_eq!(content_digest(&store), content_digest(&scratch));
}

#[test]
fn a_rewritten_file_is_reparsed_whole() {
    let (_work, home, mut store, opts) = indexed_copy();
    let main_file = walkdir(&home)
        .into_iter()
        .find(|p| !p.to_string_lossy().contains("agent-"))
        .unwrap();
    // Change a byte inside the indexed prefix and grow the file: the prefix check fails.
    let mut bytes = std::fs::read(&main_file).unwrap();
    let pos = bytes.windows(6).position(|w| w == b"--unit").unwrap();
    bytes[pos + 2] = b'U';
    bytes.extend_from_slice(b"\n");
    std::fs::write(&main_file, &bytes).unwrap();
    let s = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!((s.files_parsed, s.files_resumed), (1, 0));
    let n: i64 = store
        .connection()
        .query_row(
            "SELECT count(*) FROM turns WHERE user_message LIKE '%--Units%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

/// The sample projects copied into a scratch folder and indexed once: the folder, the copy's
/// root, the store and the options that index it.
fn indexed_copy() -> (tempfile::TempDir, PathBuf, Store, IndexOptions) {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("projects");
    copy_tree(&sample_projects(), &home);
    let mut store = Store::open(&work.path().join("t.db")).unwrap();
    let opts = options(&home);
    index(&mut store, &opts, &NoProgress).unwrap();
    (work, home, store, opts)
}

#[test]
fn a_vanished_file_keeps_its_sessions() {
    let (_work, home, mut store, opts) = indexed_copy();
    std::fs::remove_dir_all(&home).unwrap();
    let s = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(s.files_missing, 2);
    let (n, missing): (i64, i64) = store
        .connection()
        .query_row(
            "SELECT count(*), sum(source_missing) FROM sessions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((n, missing), (2, 2));
}

/// A file that goes away and comes back unchanged (its folder moved away and back: same size,
/// time and inode) is not read again: its resume state is asked for, as the plan no longer
/// reads every file's.
#[test]
fn a_file_that_comes_back_unchanged_is_not_read_again() {
    let (work, home, mut store, opts) = indexed_copy();
    let away = work.path().join("away");
    std::fs::rename(&home, &away).unwrap();
    assert_eq!(
        index(&mut store, &opts, &NoProgress).unwrap().files_missing,
        2
    );
    std::fs::rename(&away, &home).unwrap();
    let s = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!((s.files_parsed, s.files_unchanged), (0, 2), "{s:?}");
}

#[test]
fn two_indexers_at_once_agree_with_one() {
    let Some(corpus) = shared_claude() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let db = work.path().join("c.db");
    Store::open(&db).unwrap();
    let opts = options(&corpus);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let mut store = Store::open(&db).unwrap();
                index(&mut store, &opts, &NoProgress).unwrap();
            });
        }
    });
    let store = Store::open(&db).unwrap();
    let ok: String = store
        .connection()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let clean_dir = tempfile::tempdir().unwrap();
    let mut clean = Store::open(&clean_dir.path().join("c.db")).unwrap();
    index(&mut clean, &opts, &NoProgress).unwrap();
    let (a, b) = (content_digest(&store), content_digest(&clean));
    let only_a: Vec<&String> = a.iter().filter(|x| !b.contains(x)).collect();
    let only_b: Vec<&String> = b.iter().filter(|x| !a.contains(x)).collect();
    assert!(
        only_a.is_empty() && only_b.is_empty(),
        "concurrent only: {only_a:#?}\nclean only: {only_b:#?}"
    );
}

/// The queries GitHub Copilot's standup runs against its own store, unchanged.
#[test]
fn chronicle_standup_queries_run_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    index(&mut store, &options(&sample_projects()), &NoProgress).unwrap();
    let conn = store.connection();
    // The sample is dated 2026-11-20; make it "recent" relative to now.
    conn.execute(
        "UPDATE sessions SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        [],
    )
    .unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT id, summary, branch, repository, cwd, host_type, created_at, updated_at FROM sessions
             WHERE updated_at >= datetime('now', '-1 day') ORDER BY updated_at DESC",
        )
        .unwrap();
    let rows: Vec<(String, Option<String>, Option<String>, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(5)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), 2);
    let main = rows
        .iter()
        .find(|r| r.0 == "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f")
        .unwrap();
    assert_eq!(main.1.as_deref(), Some("weather-cli: --units flag and PR"));
    assert_eq!(main.2.as_deref(), Some("feature/units"));
    assert_eq!(main.3.as_deref(), Some("claude-code"));

    let ids = "'7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f'";
    let refs: Vec<(String, String, String)> = conn
        .prepare(&format!(
            "SELECT session_id, ref_type, ref_value FROM session_refs WHERE session_id IN ({ids})"
        ))
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(refs.len(), 3);
    let files: Vec<(String, String, String)> = conn
        .prepare(&format!(
            "SELECT session_id, file_path, tool_name FROM session_files WHERE session_id IN ({ids})"
        ))
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        files
            .iter()
            .map(|f| (f.1.as_str(), f.2.as_str()))
            .collect::<Vec<_>>(),
        vec![
            ("/home/demo/projects/weather-cli/src/cli.rs", "Read"),
            ("/home/demo/projects/weather-cli/src/render.rs", "Edit")
        ]
    );
    let turns: Vec<(i64, String, Option<String>)> = conn
        .prepare(&format!(
            "SELECT session_id, turn_index, substr(user_message, 1, 120) as user_message,
                    substr(assistant_response, 1, 200) as assistant_response
             FROM turns WHERE session_id IN ({ids})
               AND (user_message IS NOT NULL OR assistant_response IS NOT NULL)
             ORDER BY session_id, turn_index"
        ))
        .unwrap()
        .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(turns.len(), 2);
    assert!(turns[0].1.starts_with("Add a `--units` flag"));
    assert!(turns[1]
        .2
        .as_deref()
        .unwrap()
        .starts_with("Opened https://github.com/demo-org/weather-cli/pull/12"));
    // Copilot's search query.
    let hits: Vec<(String, String)> = conn
        .prepare(
            "SELECT content, session_id, source_type, bm25(search_index) AS rank FROM search_index
             WHERE search_index MATCH ? ORDER BY rank LIMIT ?",
        )
        .unwrap()
        .query_map(rusqlite::params!["imperial", 10], |r| {
            Ok((r.get(1)?, r.get(2)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        hits,
        vec![(
            "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f".to_string(),
            "turn".to_string()
        )]
    );
}

/// A `summary` entry names a conversation held in another file (its `leafUuid`).
#[test]
fn summaries_pointing_into_other_files_are_resolved() {
    let work = tempfile::tempdir().unwrap();
    let proj = work.path().join("projects/-w");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(
        proj.join("bbbb.jsonl"),
        "{\"type\":\"user\",\"uuid\":\"leaf-in-b\",\"sessionId\":\"bbbb\",\"message\":{\"role\":\"user\",\"content\":\"refactor the parser\"}}\n",
    )
    .unwrap();
    std::fs::write(
        proj.join("aaaa.jsonl"),
        "{\"type\":\"summary\",\"summary\":\"Parser refactor into modules\",\"leafUuid\":\"leaf-in-b\"}\n\
         {\"type\":\"user\",\"uuid\":\"a1\",\"sessionId\":\"aaaa\",\"message\":{\"role\":\"user\",\"content\":\"continue\"}}\n",
    )
    .unwrap();
    let mut store = Store::open(&work.path().join("t.db")).unwrap();
    index(
        &mut store,
        &options(&work.path().join("projects")),
        &NoProgress,
    )
    .unwrap();
    let title = |store: &Store, id: &str| -> String {
        store
            .connection()
            .query_row("SELECT summary FROM sessions WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .unwrap()
    };
    assert_eq!(title(&store, "bbbb"), "Parser refactor into modules");
    assert_eq!(title(&store, "aaaa"), "continue");

    // The user renames the session later (`/rename`): their title beats any summary, on the
    // append and on a fresh index of the same files.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(proj.join("bbbb.jsonl"))
        .unwrap();
    f.write_all(
        b"{\"type\":\"custom-title\",\"customTitle\":\"My parser work\",\"sessionId\":\"bbbb\"}\n",
    )
    .unwrap();
    drop(f);
    index(
        &mut store,
        &options(&work.path().join("projects")),
        &NoProgress,
    )
    .unwrap();
    assert_eq!(title(&store, "bbbb"), "My parser work");
    let mut fresh = Store::open(&work.path().join("fresh.db")).unwrap();
    index(
        &mut fresh,
        &options(&work.path().join("projects")),
        &NoProgress,
    )
    .unwrap();
    assert_eq!(title(&fresh, "bbbb"), "My parser work");
}

/// A summary stored before the message it names: the message arrives in a line appended to
/// its log later, and the append (which matches only the messages it wrote) finds the summary.
#[test]
fn a_summary_naming_a_message_appended_later_titles_its_session() {
    let work = tempfile::tempdir().unwrap();
    let proj = work.path().join("projects/-w");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(
        proj.join("aaaa.jsonl"),
        "{\"type\":\"summary\",\"summary\":\"Cache the parsed config\",\"leafUuid\":\"b2\"}\n\
         {\"type\":\"user\",\"uuid\":\"a1\",\"sessionId\":\"aaaa\",\"message\":{\"role\":\"user\",\"content\":\"continue\"}}\n",
    )
    .unwrap();
    let b = proj.join("bbbb.jsonl");
    std::fs::write(
        &b,
        "{\"type\":\"user\",\"uuid\":\"b1\",\"sessionId\":\"bbbb\",\"message\":{\"role\":\"user\",\"content\":\"read the config once\"}}\n",
    )
    .unwrap();
    let mut store = Store::open(&work.path().join("t.db")).unwrap();
    let projects = work.path().join("projects");
    index(&mut store, &options(&projects), &NoProgress).unwrap();
    let title = |store: &Store| -> String {
        store
            .connection()
            .query_row("SELECT summary FROM sessions WHERE id = 'bbbb'", [], |r| {
                r.get(0)
            })
            .unwrap()
    };
    assert_eq!(title(&store), "read the config once");

    let mut f = std::fs::OpenOptions::new().append(true).open(&b).unwrap();
    f.write_all(
        b"{\"type\":\"assistant\",\"uuid\":\"b2\",\"parentUuid\":\"b1\",\"sessionId\":\"bbbb\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Done.\"}]}}\n",
    )
    .unwrap();
    drop(f);
    let summary = index(&mut store, &options(&projects), &NoProgress).unwrap();
    assert_eq!(
        summary.files_resumed, 1,
        "the log was appended to, not read again"
    );
    assert_eq!(title(&store), "Cache the parsed config");
}

/// Copilot CLI: gaps in the event log are filled from Copilot's own `session-store.db`, which
/// is read without being changed.
#[test]
fn copilot_session_store_fills_the_summary() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join(".copilot");
    let id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let dir = home.join("session-state").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("events.jsonl"),
        format!(
            "{{\"type\":\"session.start\",\"data\":{{\"sessionId\":\"{id}\",\"startTime\":\"2026-01-01T10:00:00.000Z\"}},\"id\":\"e1\",\"timestamp\":\"2026-01-01T10:00:00.000Z\",\"parentId\":null}}\n\
             {{\"type\":\"user.message\",\"data\":{{\"content\":\"tidy the imports\"}},\"id\":\"e2\",\"timestamp\":\"2026-01-01T10:01:00.000Z\",\"parentId\":\"e1\"}}\n"
        ),
    )
    .unwrap();
    let db = home.join("session-store.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT, repository TEXT, host_type TEXT,
                 branch TEXT, summary TEXT, created_at TEXT, updated_at TEXT);",
        )
        .unwrap();
        c.execute(
            "INSERT INTO sessions (id, cwd, repository, branch, summary) VALUES (?1, '/src/app', 'acme/app', 'main', 'Import clean-up')",
            [id],
        )
        .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let opts = IndexOptions::one_source(SourceKind::CopilotCli, home.clone());
    let mut store = Store::open(&work.path().join("t.db")).unwrap();
    index(&mut store, &opts, &NoProgress).unwrap();
    let (summary, repo, branch): (String, String, String) = store
        .connection()
        .query_row(
            "SELECT summary, repository, branch FROM sessions WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(
        (summary.as_str(), repo.as_str(), branch.as_str()),
        ("Import clean-up", "acme/app", "main")
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "Copilot's store is never written"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&home)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !leftovers
            .iter()
            .any(|n| n.ends_with("-shm") || n.ends_with("-wal")),
        "{leftovers:?}"
    );
}

/// A SQLite source in WAL mode changes in its `-wal` file first: that counts as a change.
#[test]
fn a_change_only_in_the_wal_is_noticed() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("opencode");
    std::fs::create_dir_all(&root).unwrap();
    let db = root.join("opencode.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
         CREATE TABLE session (id TEXT PRIMARY KEY, title TEXT, directory TEXT, time_created INTEGER, time_updated INTEGER, data TEXT);
         CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);
         CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, data TEXT);
         INSERT INTO session (id, title, directory, time_created, time_updated, data)
             VALUES ('ses_1', 'first', '/p', 1767261600000, 1767261600000, '{}');",
    )
    .unwrap();
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    let opts = IndexOptions::one_source(SourceKind::Opencode, root.clone());
    let mut store = Store::open(&work.path().join("t.db")).unwrap();
    let first = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(first.files_parsed, 1);
    let db_before = std::fs::metadata(&db).unwrap();
    // The writer commits a new row; with checkpoints off it stays in the -wal file.
    c.execute(
        "INSERT INTO session (id, title, directory, time_created, time_updated, data)
         VALUES ('ses_2', 'second', '/p', 1767261700000, 1767261700000, '{}')",
        [],
    )
    .unwrap();
    let db_after = std::fs::metadata(&db).unwrap();
    assert_eq!(
        db_before.len(),
        db_after.len(),
        "the main file did not change"
    );
    let second = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(second.files_parsed, 1, "{second:?}");
    drop(c);
}

/// Large logs are parsed and written in pieces; the result equals a parse in one piece.
#[test]
fn pieces_of_a_large_log_add_up_to_the_whole() {
    let dirs: Vec<PathBuf> = std::iter::once(sample_projects())
        .chain(shared_claude())
        .collect();
    for dir in dirs {
        let work = tempfile::tempdir().unwrap();
        let mut whole = Store::open(&work.path().join("whole.db")).unwrap();
        index(&mut whole, &options(&dir), &NoProgress).unwrap();
        let mut pieces = Store::open(&work.path().join("pieces.db")).unwrap();
        let opts = IndexOptions {
            chunk_bytes: Some(3000),
            ..options(&dir)
        };
        let s = index(&mut pieces, &opts, &NoProgress).unwrap();
        assert_eq!(
            s.files_parsed, s.files_seen,
            "pieces are not counted as files"
        );
        let (a, b) = (content_digest(&whole), content_digest(&pieces));
        let only_a: Vec<&String> = a.iter().filter(|x| !b.contains(x)).collect();
        let only_b: Vec<&String> = b.iter().filter(|x| !a.contains(x)).collect();
        assert!(
            only_a.is_empty() && only_b.is_empty(),
            "{}: whole only: {only_a:#?}\npieces only: {only_b:#?}",
            dir.display()
        );
    }
}

/// Codex: a subagent rollout names its parent thread; the parent's spawn event names the call.
#[test]
fn codex_subagent_is_linked_to_the_spawning_call() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join(".codex");
    let day = home.join("sessions/2026/01/02");
    std::fs::create_dir_all(&day).unwrap();
    let parent = "0199a1b2-0000-7000-8000-00000000aaaa";
    let child = "0199a1b2-0000-7000-8000-00000000bbbb";
    let line = |v: serde_json::Value| format!("{v}\n");
    let mut p = String::new();
    p += &line(
        serde_json::json!({"timestamp":"2026-01-02T10:00:00.000Z","type":"session_meta",
        "payload":{"id":parent,"timestamp":"2026-01-02T10:00:00.000Z","cwd":"/w","source":"cli","cli_version":"0.146.0"}}),
    );
    p += &line(
        serde_json::json!({"timestamp":"2026-01-02T10:00:01.000Z","type":"response_item",
        "payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"review the parser with a helper"}]}}),
    );
    p += &line(
        serde_json::json!({"timestamp":"2026-01-02T10:00:02.000Z","type":"response_item",
        "payload":{"type":"function_call","name":"spawn_agent","arguments":"{\"prompt\":\"review\"}","call_id":"call_spawn"}}),
    );
    p += &line(
        serde_json::json!({"timestamp":"2026-01-02T10:00:03.000Z","type":"event_msg",
        "payload":{"type":"collab_agent_spawn_end","call_id":"call_spawn","sender_thread_id":parent,"new_thread_id":child,"new_agent_nickname":"reviewer"}}),
    );
    std::fs::write(
        day.join(format!("rollout-2026-01-02T10-00-00-{parent}.jsonl")),
        p,
    )
    .unwrap();
    let mut c = String::new();
    c += &line(
        serde_json::json!({"timestamp":"2026-01-02T10:00:04.000Z","type":"session_meta",
        "payload":{"id":child,"timestamp":"2026-01-02T10:00:04.000Z","cwd":"/w","cli_version":"0.146.0",
        "source":{"subagent":{"thread_spawn":{"parent_thread_id":parent,"depth":1}}}}}),
    );
    c += &line(
        serde_json::json!({"timestamp":"2026-01-02T10:00:05.000Z","type":"response_item",
        "payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"review"}]}}),
    );
    std::fs::write(
        day.join(format!("rollout-2026-01-02T10-00-04-{child}.jsonl")),
        c,
    )
    .unwrap();
    let opts = IndexOptions::one_source(SourceKind::Codex, home);
    let mut store = Store::open(&work.path().join("t.db")).unwrap();
    index(&mut store, &opts, &NoProgress).unwrap();
    let (p_id, call): (String, String) = store
        .connection()
        .query_row(
            "SELECT parent_session_id, parent_tool_call_id FROM sessions WHERE id = ?1",
            [child],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((p_id.as_str(), call.as_str()), (parent, "call_spawn"));
}

/// Issue 18: a parser fix re-reads the files of its own source, and only those, even when the
/// files did not change. The store holds the version each file was read with; here the Codex
/// rows are made to look as if an older Codex parser had read them.
#[test]
fn a_parser_version_bump_rereads_that_source_only() {
    let home = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home");
    let mut roots = trail_ingest::Roots::default();
    roots
        .by_source
        .insert(SourceKind::ClaudeCode, vec![home.join(".claude/projects")]);
    roots
        .by_source
        .insert(SourceKind::Codex, vec![home.join(".codex")]);
    let options = IndexOptions {
        roots,
        sources: vec![SourceKind::ClaudeCode, SourceKind::Codex],
        ..IndexOptions::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let first = index(&mut store, &options, &NoProgress).unwrap();
    assert!(first.files_parsed >= 3, "{first:?}");
    let stored_versions: Vec<(String, i64)> = {
        let mut stmt = store
            .connection()
            .prepare("SELECT DISTINCT source, parser_version FROM source_files ORDER BY source")
            .unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
        rows.map(Result::unwrap).collect()
    };
    assert_eq!(
        stored_versions,
        vec![
            (
                "claude-code".to_string(),
                trail_sources::claude_code::PARSER_VERSION as i64
            ),
            (
                "codex".to_string(),
                trail_sources::codex::PARSER_VERSION as i64
            ),
        ]
    );

    // Unchanged files, same parsers: nothing is read.
    let again = index(&mut store, &options, &NoProgress).unwrap();
    assert!(again.parsed_paths.is_empty(), "{:?}", again.parsed_paths);
    assert_eq!(again.files_upgraded, 0);

    // The Codex files were read by an older Codex parser.
    store
        .connection()
        .execute(
            "UPDATE source_files SET parser_version = parser_version - 1 WHERE source = 'codex'",
            [],
        )
        .unwrap();
    let codex_paths: Vec<String> = {
        let mut stmt = store
            .connection()
            .prepare("SELECT path FROM source_files WHERE source = 'codex' ORDER BY path")
            .unwrap();
        let rows = stmt.query_map([], |r| r.get(0)).unwrap();
        rows.map(Result::unwrap).collect()
    };
    assert!(!codex_paths.is_empty());
    let upgraded = index(&mut store, &options, &NoProgress).unwrap();
    assert_eq!(
        upgraded.parsed_paths, codex_paths,
        "only the Codex files are re-read"
    );
    assert_eq!(upgraded.files_upgraded, codex_paths.len() as u64);
    assert_eq!(upgraded.files_parsed, codex_paths.len() as u64);
    let versions: i64 = store
        .connection()
        .query_row(
            "SELECT count(*) FROM source_files WHERE source = 'codex' AND parser_version = ?1",
            [trail_sources::codex::PARSER_VERSION as i64],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        versions,
        codex_paths.len() as i64,
        "the new version is stored"
    );
    let settled = index(&mut store, &options, &NoProgress).unwrap();
    assert!(settled.parsed_paths.is_empty());
}
