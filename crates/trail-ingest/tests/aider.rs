//! Aider histories through the whole index (issue 16, item 1): found in project folders, and
//! an appended history parsed from where the last index stopped.

use std::io::Write;
use std::path::{Path, PathBuf};

use trail_ingest::{index, IndexOptions, NoProgress};
use trail_model::SourceKind;
use trail_store::Store;

fn fixture_project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../trail-sources/tests/fixtures/aider/recipe-box")
}

/// Copies the fixture's two histories into `to`.
fn copy_project(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for name in [".aider.chat.history.md", ".aider.input.history"] {
        std::fs::copy(fixture_project().join(name), to.join(name)).unwrap();
    }
}

/// Every content row of the tables an Aider history fills, in natural key order.
fn digest(store: &Store) -> Vec<String> {
    let queries = [
        "SELECT id, cwd, summary, created_at, updated_at, models, turn_count, message_count,
                input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens
         FROM sessions ORDER BY id",
        "SELECT session_id, turn_index, user_message, assistant_response, timestamp FROM turns
         ORDER BY session_id, turn_index",
        "SELECT session_id, seq, native_id, role, kind, tool_name, tool_call_id, is_error, model,
                timestamp, turn_index, text, tool_input, tool_output FROM messages
         ORDER BY session_id, seq",
        "SELECT session_id, tool_call_id, call_seq, result_seq, is_error FROM tool_calls
         ORDER BY session_id, call_seq",
        "SELECT session_id, request_key, input_tokens, output_tokens, cache_creation_tokens,
                cache_read_tokens, cost_usd FROM usage ORDER BY session_id, request_key",
        "SELECT session_id, file_path, tool_name, turn_index FROM session_files
         ORDER BY session_id, file_path",
        "SELECT session_id, ref_type, ref_value FROM session_refs
         ORDER BY session_id, ref_type, ref_value",
        "SELECT session_id, source_type, content FROM search_index ORDER BY session_id, content",
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
        out.extend(rows.map(Result::unwrap));
    }
    out
}

// Appending to a history reads only the appended bytes (the resume offset is where the last
// index stopped), and the store ends up as a from-scratch index of the whole file makes it.
#[test]
fn an_appended_history_is_parsed_from_where_the_last_index_stopped() {
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join("recipe-box");
    copy_project(&project);
    let chat = project.join(".aider.chat.history.md");
    let full = std::fs::read(&chat).unwrap();
    let text = String::from_utf8(full.clone()).unwrap();
    // Aider's own write boundaries: before a status line of the first session, then before
    // the second session's header.
    let c1 = text.find("> Commit 3f9a2c1").unwrap();
    let c2 = text.find("\n# aider chat started at 2026-02-11").unwrap();
    std::fs::write(&chat, &full[..c1]).unwrap();
    let opts = IndexOptions::one_source(SourceKind::Aider, project.clone());
    let mut store = Store::open(&work.path().join("inc.db")).unwrap();
    let first = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(
        (first.files_parsed, first.sessions_new),
        (1, 1),
        "{first:?}"
    );
    for (from, to) in [(c1, c2), (c2, full.len())] {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&chat)
            .unwrap();
        f.write_all(&full[from..to]).unwrap();
        drop(f);
        let s = index(&mut store, &opts, &NoProgress).unwrap();
        assert_eq!((s.files_resumed, s.files_parsed), (1, 0), "{s:?}");
        assert_eq!(
            s.bytes_read,
            (to - from) as u64,
            "only the new bytes are read"
        );
        let parsed: i64 = store
            .connection()
            .query_row("SELECT bytes_parsed FROM source_files", [], |r| r.get(0))
            .unwrap();
        assert_eq!(parsed, to as i64, "the next index resumes at the end");
    }
    let sessions: i64 = store
        .connection()
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sessions, 2);
    let scratch_dir = tempfile::tempdir().unwrap();
    let mut scratch = Store::open(&scratch_dir.path().join("full.db")).unwrap();
    index(&mut scratch, &opts, &NoProgress).unwrap();
    assert_eq!(digest(&store), digest(&scratch));
    // A third index finds nothing new.
    let s = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(s.files_unchanged, 1);
}

// Parsed in small pieces (a multi-gigabyte history is never held whole), the store is the
// same as from one parse.
#[test]
fn pieces_of_a_history_add_up_to_the_whole() {
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join("recipe-box");
    copy_project(&project);
    let opts = IndexOptions::one_source(SourceKind::Aider, project.clone());
    let mut whole = Store::open(&work.path().join("whole.db")).unwrap();
    index(&mut whole, &opts, &NoProgress).unwrap();
    let mut pieces = Store::open(&work.path().join("pieces.db")).unwrap();
    let s = index(
        &mut pieces,
        &IndexOptions {
            chunk_bytes: Some(200),
            ..opts
        },
        &NoProgress,
    )
    .unwrap();
    assert_eq!(s.files_parsed, 1);
    assert_eq!(digest(&whole), digest(&pieces));
}

// Aider writes into the project, so its histories are found in the folders other agents'
// sessions ran in, under configured project roots (a few levels deep, never in node_modules),
// and in the paths given to `trail index`.
#[test]
fn histories_are_found_in_project_folders() {
    let work = tempfile::tempdir().unwrap();
    // A Claude Code session that ran in `known`.
    let known = work.path().join("elsewhere/known");
    copy_project(&known);
    let claude = work.path().join("claude");
    std::fs::create_dir_all(&claude).unwrap();
    let line = serde_json::json!({
        "type": "user", "uuid": "u1", "parentUuid": null,
        "sessionId": "0b5e3c2a-1d4f-4a6b-8c9d-0e1f2a3b4c5d",
        "cwd": known.display().to_string(), "timestamp": "2026-02-09T08:00:00.000Z",
        "message": {"role": "user", "content": "hello"}
    });
    std::fs::write(
        claude.join("0b5e3c2a-1d4f-4a6b-8c9d-0e1f2a3b4c5d.jsonl"),
        format!("{line}\n"),
    )
    .unwrap();
    // Under a configured root, two levels down; and one inside node_modules.
    let roots = work.path().join("code");
    copy_project(&roots.join("team/app"));
    copy_project(&roots.join("team/app/node_modules/pkg"));

    let mut opts = IndexOptions::default();
    opts.roots
        .by_source
        .insert(SourceKind::ClaudeCode, vec![claude]);
    opts.project_roots = vec![roots.clone()];
    let mut store = Store::open(&work.path().join("t.db")).unwrap();
    index(&mut store, &opts, &NoProgress).unwrap();
    let mut stmt = store
        .connection()
        .prepare("SELECT DISTINCT cwd FROM sessions WHERE host_type = 'aider' ORDER BY cwd")
        .unwrap();
    let cwds: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want: Vec<String> = vec![
        roots.join("team/app").display().to_string(),
        known.display().to_string(),
    ];
    let mut want = want;
    want.sort();
    assert_eq!(cwds, want);

    // A folder given to `trail index` is searched too, its format detected.
    let given = work.path().join("given");
    copy_project(&given.join("proj"));
    let mut store = Store::open(&work.path().join("given.db")).unwrap();
    let s = index(
        &mut store,
        &IndexOptions {
            paths: vec![given.clone()],
            ..IndexOptions::default()
        },
        &NoProgress,
    )
    .unwrap();
    assert_eq!(s.files_parsed, 1, "{s:?}");
    assert!(s.unread_paths.is_empty());
}
