//! The search database stays exactly in step with the store whatever path wrote it:
//! a full index, appends parsed alone, and files rewritten and reparsed whole.

#![allow(clippy::print_stderr)]

use std::io::Write;
use std::path::{Path, PathBuf};

use trail_ingest::{index, IndexOptions, NoProgress};
use trail_model::SourceKind;
use trail_store::{SearchOptions, Store};

fn sample_projects() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home/.claude/projects")
}

fn options(root: &Path) -> IndexOptions {
    IndexOptions::one_source(SourceKind::ClaudeCode, root.to_path_buf())
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// Every full-text row of the search database, by natural key (turn rows by session, turn and
/// each word's column and position; Chronicle rows whole), and each turn's kept prompt.
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
            "SELECT d.session_id || '|' || d.turn_index || '|' || coalesce(d.first_at, '') || '|'
                    || coalesce(d.last_at, '') || '|' || v.term || '|' || v.col || '|' || v.offset
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

/// The search database holds exactly what a rebuild from the store gives (FTS5's own check
/// passes too), whatever path wrote it.
fn assert_index_consistent(store: &mut Store) {
    for table in ["turn_search", "search_index"] {
        store
            .connection()
            .execute(
                &format!("INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)"),
                [],
            )
            .expect("the index is sound");
    }
    let written = search_digest(store);
    assert!(!written.is_empty());
    store.rebuild_search().unwrap();
    assert_eq!(written, search_digest(store));
}

fn hits(store: &Store, q: &str) -> usize {
    store
        .search(&SearchOptions {
            query: q.into(),
            limit: 50,
            ..SearchOptions::default()
        })
        .unwrap()
        .hits
        .len()
}

#[test]
fn the_search_database_follows_appends_and_rewrites() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("projects");
    std::fs::create_dir_all(&home).unwrap();
    copy_tree(&sample_projects(), &home);
    let mut store = Store::open(&work.path().join("t.db")).unwrap();
    let opts = options(&home);
    index(&mut store, &opts, &NoProgress).unwrap();
    assert_index_consistent(&mut store);
    assert_eq!(hits(&store, "imperial"), 1);
    assert_eq!(hits(&store, "zebracorn"), 0);

    // An appended prompt is found after the next index (the append path).
    let main_file = std::fs::read_dir(
        home.join(
            std::fs::read_dir(&home)
                .unwrap()
                .next()
                .unwrap()
                .unwrap()
                .file_name(),
        ),
    )
    .unwrap()
    .map(|e| e.unwrap().path())
    .find(|p| {
        p.extension().is_some_and(|e| e == "jsonl") && !p.to_string_lossy().contains("agent-")
    })
    .unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&main_file)
        .unwrap();
    writeln!(
        f,
        r#"{{"type":"user","uuid":"zz-1","parentUuid":null,"sessionId":"7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f","timestamp":"2026-11-20T10:00:00.000Z","message":{{"role":"user","content":"now add a zebracorn mode"}}}}"#
    )
    .unwrap();
    drop(f);
    let s = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(s.files_resumed, 1, "{s:?}");
    assert_index_consistent(&mut store);
    assert_eq!(hits(&store, "zebracorn"), 1);

    // A rewritten file is reparsed whole: its old messages leave the index.
    let text = std::fs::read_to_string(&main_file).unwrap();
    let text = text
        .replace("imperial", "fahrenheit")
        .replace("Imperial", "Fahrenheit");
    std::fs::write(&main_file, text).unwrap();
    let s = index(&mut store, &opts, &NoProgress).unwrap();
    assert_eq!(s.files_parsed, 1, "{s:?}");
    assert_index_consistent(&mut store);
    assert_eq!(hits(&store, "imperial"), 0);
    assert!(hits(&store, "fahrenheit") >= 1);
    assert_eq!(hits(&store, "zebracorn"), 1);

    // A forced reindex of everything rewrites every session; nothing is left behind.
    let forced = IndexOptions {
        force: true,
        ..options(&home)
    };
    index(&mut store, &forced, &NoProgress).unwrap();
    assert_index_consistent(&mut store);
    assert_eq!(hits(&store, "zebracorn"), 1);
}
