//! Indexes left out while a first index fills an empty store (issue 12).
//!
//! Why: `idx_messages_native` is keyed by each message's own id, a random UUID for most
//! agents, so every batch inserted its entries all over that B-tree: on the 3 GiB corpus a
//! batch dirtied nearly every one of its leaf pages, which the writer then wrote to the log
//! and the checkpointer to the store, a cost per batch that grows with the store (the writer's
//! CPU 23.3 -> 20.3 s and the whole index 39.2 -> 36.3 s without it, back to back). The
//! indexes by time, tool name, file path and reference value are spread the same way (the
//! corpus's files come in no order of time), worth another 1-3 s there. Nothing reads them
//! while an index writes (the end of a run reads the first: titles that name a message of
//! another file), so a first index builds them once, sorted, after its last batch, as a
//! database restore creates its indexes after the data.
//!
//! `idx_usage_message` is keyed by a message id too, and only the usage dedupe reads it
//! (`usage_rollup.rs`): the same leaves dirtied by every batch (without it, the checkpointer's
//! CPU on the 3 GiB corpus went from 5.1 to 4.2 s, `bench/timeline.py`; the dedupe it leaves
//! to the end takes 87 ms there). While it is missing, batches leave the dedupe
//! alone (a row counts until then), and building it dedupes the whole store in the same
//! transaction, in one pass by the new index. Reports read during a first index may count a
//! request repeated across files twice until its end.
//!
//! A run killed in between leaves a store without them, which is still correct (only slower to
//! resolve titles, and usage not yet deduped across files); the next writable open builds
//! them again, and dedupes.

use crate::{Result, Store};

/// Name and definition of each index a first index builds after its data: the statements of
/// the migrations that made them, word for word (`sqlite_master` keeps the text).
const DEFERRED: [(&str, &str); 7] = [
    (
        "idx_messages_native",
        "CREATE INDEX idx_messages_native ON messages(native_id) WHERE native_id IS NOT NULL",
    ),
    (
        "idx_session_files_path",
        "CREATE INDEX idx_session_files_path ON session_files(file_path)",
    ),
    (
        "idx_session_refs_type_value",
        "CREATE INDEX idx_session_refs_type_value ON session_refs(ref_type, ref_value)",
    ),
    (
        "idx_tool_calls_name",
        "CREATE INDEX idx_tool_calls_name ON tool_calls(tool_name)",
    ),
    (
        crate::usage_rollup::MESSAGE_INDEX,
        "CREATE INDEX idx_usage_message ON usage(message_id) WHERE message_id IS NOT NULL",
    ),
    (
        "idx_usage_timestamp",
        "CREATE INDEX idx_usage_timestamp ON usage(timestamp)",
    ),
    (
        "idx_usage_counted_time",
        "CREATE INDEX IF NOT EXISTS idx_usage_counted_time ON usage(timestamp) WHERE counted = 1",
    ),
];

/// How `CREATE INDEX` sorts while the deferred indexes are built: in pieces of 8 MB (its
/// pieces follow `cache_size`), each sorted on a helper thread while the scan goes on, and
/// merged from temporary files. SQLite's sorter uses no helper thread when temporary data
/// stays in memory (`temp_store = MEMORY`, the writer's setting), so the whole build ran on
/// one core while the other, the parsers and the search writer done, sat idle. Switching
/// `temp_store` drops the connection's temporary tables: only a search's `temp.hit_text`,
/// which every search makes again when missing. In a first
/// index of the 3 GiB corpus the seven builds took 1.53 s instead of 1.83 (medians of four
/// interleaved runs); at 1 GiB, where each sort is one or two pieces, the same (BENCHMARKS.md).
const SORT_IN_PIECES: &str =
    "PRAGMA temp_store = FILE; PRAGMA threads = 1; PRAGMA cache_size = -8000;";

impl Store {
    /// Drops the indexes a bulk load builds at its end, when the store holds no message yet;
    /// returns whether it did (then call [`Store::build_deferred_indexes`] once written).
    pub fn defer_indexes_if_empty(&self) -> Result<bool> {
        let empty: bool =
            self.conn
                .query_row("SELECT NOT EXISTS (SELECT 1 FROM messages)", [], |r| {
                    r.get(0)
                })?;
        if !empty {
            return Ok(false);
        }
        for (name, _) in DEFERRED {
            self.conn
                .execute_batch(&format!("DROP INDEX IF EXISTS {name}"))?;
        }
        Ok(true)
    }

    /// Builds every deferred index that is missing (after a bulk load, or a killed one). Every
    /// writable open calls it: one read of the schema when nothing is missing.
    pub fn build_deferred_indexes(&self) -> Result<()> {
        let present = index_names(&self.conn)?;
        if DEFERRED.iter().all(|(name, _)| present.contains(*name)) {
            return Ok(());
        }
        sorting_in_pieces(&self.conn, || self.build_missing_in_a_transaction())
    }

    /// Builds them in one transaction that holds the store's write lock.
    fn build_missing_in_a_transaction(&self) -> Result<()> {
        // Looked at again under the write lock: another process (a second indexer, an open)
        // may be building the same ones, and a second `CREATE INDEX` of a name would fail.
        // The store's lock only: `BEGIN IMMEDIATE` takes the attached search database's too,
        // so at the end of a first index it waited for the search database's writer to apply
        // its last batches (a third of a second with a core idle) instead of building these
        // meanwhile. The first statement of a deferred transaction that writes `main` takes
        // that lock (waiting for another writer as `BEGIN IMMEDIATE` does) before anything is
        // read.
        self.conn.execute_batch("BEGIN")?;
        if let Err(e) = self
            .conn
            .execute_batch("DELETE FROM main.store_meta WHERE 0")
        {
            let _ = self.conn.execute_batch("ROLLBACK");
            return Err(e.into());
        }
        let built = self.build_missing();
        let end = if built.is_ok() { "COMMIT" } else { "ROLLBACK" };
        self.conn.execute_batch(end)?;
        built
    }

    fn build_missing(&self) -> Result<()> {
        let present = index_names(&self.conn)?;
        for (name, sql) in DEFERRED {
            if !present.contains(name) {
                let t = std::time::Instant::now();
                self.conn.execute_batch(sql)?;
                tracing::info!(
                    index = name,
                    ms = t.elapsed().as_millis() as u64,
                    "deferred index built"
                );
                if name == crate::usage_rollup::MESSAGE_INDEX {
                    let t = std::time::Instant::now();
                    crate::usage_rollup::dedupe_deferred(&self.conn)?;
                    tracing::info!(
                        ms = t.elapsed().as_millis() as u64,
                        "deferred usage dedupe done"
                    );
                }
            }
        }
        Ok(())
    }
}

/// Runs `build` with [`SORT_IN_PIECES`], then gives the connection the writer's settings back.
/// Where the pieces' temporary file cannot be made (no writable temporary folder, or a full
/// one), `build` runs again with the sort in memory, on one core, as before: a store whose
/// deferred indexes could not be built would fail every later writable open the same way.
fn sorting_in_pieces(
    conn: &rusqlite::Connection,
    mut build: impl FnMut() -> Result<()>,
) -> Result<()> {
    conn.execute_batch(SORT_IN_PIECES)?;
    let built = build();
    conn.execute_batch(crate::MEMORY_SETTINGS)?;
    match built {
        Err(crate::StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)))
            if matches!(
                e.code,
                rusqlite::ErrorCode::CannotOpen
                    | rusqlite::ErrorCode::SystemIoFailure
                    | rusqlite::ErrorCode::DiskFull
            ) =>
        {
            tracing::warn!(
                error = %e,
                "the deferred indexes could not sort through a temporary file; sorting in memory"
            );
            build()
        }
        other => other,
    }
}

fn index_names(conn: &rusqlite::Connection) -> Result<std::collections::HashSet<String>> {
    let mut stmt =
        conn.prepare_cached("SELECT name FROM main.sqlite_master WHERE type = 'index'")?;
    let names = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::index_exists;

    fn definitions(store: &Store) -> Vec<(String, String)> {
        store
            .conn
            .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name")
            .unwrap()
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                ))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn only_an_empty_store_defers_and_the_indexes_come_back_as_the_migrations_made_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = Store::open(&path).unwrap();
        let migrated = definitions(&store);
        for (name, _) in DEFERRED {
            assert!(
                migrated.iter().any(|(n, _)| n == name),
                "{name} is a migration's"
            );
        }
        assert!(store.defer_indexes_if_empty().unwrap());
        for (name, _) in DEFERRED {
            assert!(!index_exists(&store.conn, name).unwrap());
        }
        store.build_deferred_indexes().unwrap();
        assert_eq!(definitions(&store), migrated);
        assert!(store.defer_indexes_if_empty().unwrap());
        assert!(!index_exists(&store.conn, "idx_messages_native").unwrap());
        drop(store);
        // As a killed first index leaves them: the next writable open builds them again.
        let store = Store::open(&path).unwrap();
        assert_eq!(definitions(&store), migrated);

        store
            .conn
            .execute_batch(
                "INSERT INTO sessions (id, source) VALUES ('s', 'codex');
                 INSERT INTO messages (session_id, seq, native_id) VALUES ('s', 0, 'n0');",
            )
            .unwrap();
        assert!(!store.defer_indexes_if_empty().unwrap(), "not empty");
        assert!(index_exists(&store.conn, "idx_messages_native").unwrap());
    }

    #[test]
    fn building_them_sorts_in_pieces_then_gives_the_writer_its_settings_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let settings = |store: &Store| -> (i64, i64, i64) {
            let get = |pragma: &str| {
                store
                    .conn
                    .query_row(&format!("PRAGMA {pragma}"), [], |r| r.get(0))
                    .unwrap()
            };
            (get("temp_store"), get("threads"), get("cache_size"))
        };
        let writer = settings(&store);
        assert_eq!(
            writer,
            (2, 0, -32000),
            "temp_store MEMORY, no helper thread, 32 MB"
        );
        assert!(store.defer_indexes_if_empty().unwrap());
        // Enough ids that the sort of `idx_messages_native` spills (pieces of 8 MB).
        store
            .conn
            .execute_batch(
                "INSERT INTO sessions (id, source) VALUES ('s', 'codex');
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
                 INSERT INTO messages (session_id, seq, native_id)
                     SELECT 's', i, hex(randomblob(16)) FROM n;",
            )
            .unwrap();
        store.build_deferred_indexes().unwrap();
        assert_eq!(settings(&store), writer);
        let check: String = store
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        let found: i64 = store
            .conn
            .query_row(
                "SELECT count(*) FROM messages INDEXED BY idx_messages_native
                 WHERE native_id >= '8'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let scanned: i64 = store
            .conn
            .query_row(
                "SELECT count(*) FROM messages NOT INDEXED WHERE native_id >= '8'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(found, scanned);
    }

    #[test]
    fn without_a_temporary_file_they_are_sorted_in_memory() {
        let store = Store::open_in_memory().unwrap();
        let temp_store = || -> i64 {
            store
                .conn
                .query_row("PRAGMA temp_store", [], |r| r.get(0))
                .unwrap()
        };
        let mut seen = Vec::new();
        sorting_in_pieces(&store.conn, || {
            seen.push(temp_store());
            if seen.len() == 1 {
                // As SQLite reports a temporary file it cannot open.
                Err(crate::StoreError::Sqlite(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                    None,
                )))
            } else {
                Ok(())
            }
        })
        .unwrap();
        assert_eq!(seen, [1, 2], "FILE, then MEMORY");
        assert_eq!(temp_store(), 2);

        // Any other error is the build's own: reported, not tried again.
        let mut tries = 0;
        let failed = sorting_in_pieces(&store.conn, || {
            tries += 1;
            Err(crate::StoreError::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                None,
            )))
        });
        assert!(failed.is_err());
        assert_eq!(tries, 1);
        assert_eq!(temp_store(), 2);
    }

    #[test]
    fn building_them_waits_for_the_stores_writers_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let store = Store::open(&path).unwrap();
        assert!(store.defer_indexes_if_empty().unwrap());
        // The search database's writer in the middle of a batch, as at the end of a first
        // index.
        let search = rusqlite::Connection::open(crate::search_path(&path)).unwrap();
        search.execute_batch("BEGIN IMMEDIATE").unwrap();
        let started = std::time::Instant::now();
        store.build_deferred_indexes().unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "waited {:?} for the search database's lock",
            started.elapsed()
        );
        search.execute_batch("ROLLBACK").unwrap();
        for (name, _) in DEFERRED {
            assert!(index_exists(&store.conn, name).unwrap(), "{name}");
        }

        // Another writer of the store itself is still waited for, not failed on.
        assert!(store.defer_indexes_if_empty().unwrap());
        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            other.execute_batch("COMMIT").unwrap();
        });
        store.build_deferred_indexes().unwrap();
        release.join().unwrap();
        for (name, _) in DEFERRED {
            assert!(index_exists(&store.conn, name).unwrap(), "{name}");
        }
    }

    /// Writes usage rows as a batch does: the rows, then the refresh in the same transaction.
    /// Session `b` repeats request `r1` of session `a` (a resumed file repeating history).
    fn write_repeated_request(store: &Store) {
        let tx = store.conn.unchecked_transaction().unwrap();
        tx.execute_batch(
            "INSERT INTO sessions (id, source) VALUES ('a', 'claude-code'), ('b', 'claude-code');
             INSERT INTO usage (session_id, request_key, message_id, timestamp, input_tokens)
             VALUES ('a', 'r1', 'm1', '2026-11-01T10:00:00Z', 10),
                    ('b', 'r1', 'm1', '2026-11-01T10:00:00Z', 10),
                    ('b', 'r2', 'm2', '2026-11-01T11:00:00Z', 5);",
        )
        .unwrap();
        let sessions = ["a", "b"].map(String::from).into_iter().collect();
        let written = ["m1", "m2"].map(String::from).into_iter().collect();
        crate::usage_rollup::refresh(&tx, &sessions, &written).unwrap();
        tx.commit().unwrap();
    }

    /// (session, request, counted) of every row, and (session, input tokens) of the rollup.
    type UsageState = (Vec<(String, String, i64)>, Vec<(String, i64)>);

    fn usage_state(store: &Store) -> UsageState {
        let rows = store
            .conn
            .prepare("SELECT session_id, request_key, counted FROM usage ORDER BY 1, 2")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let rollup = store
            .conn
            .prepare("SELECT session_id, sum(input_tokens) FROM usage_rollup GROUP BY 1 ORDER BY 1")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        (rows, rollup)
    }

    #[test]
    fn a_first_index_dedupes_usage_once_its_index_is_built_even_after_a_kill() {
        let dir = tempfile::tempdir().unwrap();
        // Written into a store that keeps every index: deduped batch by batch.
        let store = Store::open(&dir.path().join("kept.db")).unwrap();
        write_repeated_request(&store);
        let expected = usage_state(&store);
        let s = |x: &str| x.to_string();
        assert_eq!(
            expected,
            (
                vec![
                    (s("a"), s("r1"), 1),
                    (s("b"), s("r1"), 0),
                    (s("b"), s("r2"), 1)
                ],
                vec![(s("a"), 10), (s("b"), 5)]
            ),
            "the repeated request counts once"
        );

        // A first index: the batch leaves the dedupe to the end, every row counts meanwhile.
        let path = dir.path().join("bulk.db");
        let store = Store::open(&path).unwrap();
        assert!(store.defer_indexes_if_empty().unwrap());
        write_repeated_request(&store);
        let (rows, rollup) = usage_state(&store);
        assert!(rows.iter().all(|(_, _, counted)| *counted == 1), "{rows:?}");
        assert_eq!(rollup, vec![(s("a"), 10), (s("b"), 15)]);
        // Killed before its end: the next writable open builds the index and dedupes.
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(usage_state(&store), expected);
        let dirty: i64 = store
            .conn
            .query_row("SELECT count(*) FROM usage_dirty", [], |r| r.get(0))
            .unwrap();
        assert_eq!(dirty, 0);

        // And at the end of a run that was not killed, the same.
        let path = dir.path().join("ended.db");
        let store = Store::open(&path).unwrap();
        assert!(store.defer_indexes_if_empty().unwrap());
        write_repeated_request(&store);
        store.build_deferred_indexes().unwrap();
        assert_eq!(usage_state(&store), expected);
    }
}
