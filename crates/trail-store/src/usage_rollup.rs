//! Keeps `usage.counted` and `usage_rollup` (migration 0003) in step with `usage`.
//!
//! A request stored in several sessions (resumed files repeating history, sidechain replays)
//! counts once across the store; the writer calls [`refresh`] at the end of every batch, in the
//! batch's transaction, so reports read the sums without scanning `usage`.
//!
//! A first index into an empty store leaves that dedupe to its end ([`dedupe_deferred`]):
//! see `bulk.rs`.

use std::collections::BTreeSet;

use rusqlite::{params, Connection};

use crate::Result;

/// The index the dedupe finds a message id's rows by. While it is missing (a first index
/// defers it, `bulk.rs`) every batch leaves the dedupe to whoever builds it again.
pub(crate) const MESSAGE_INDEX: &str = "idx_usage_message";

/// Recomputes which rows count for every message id the batch touched (`written`: the message
/// ids of the usage rows it wrote; the ids of rows it deleted were recorded by a trigger), then
/// rebuilds the rollup rows of the sessions written and of those whose rows changed.
///
/// `conn` is in the batch's transaction.
pub(crate) fn refresh(
    conn: &Connection,
    sessions: &BTreeSet<String>,
    written: &BTreeSet<String>,
) -> Result<()> {
    let mut affected: BTreeSet<String> = sessions.clone();
    // Looked up in the batch's own transaction: if another process builds the index in
    // between, it dedupes this batch's rows too, or this batch sees it and dedupes them here.
    if crate::schema::index_exists(conn, MESSAGE_INDEX)? {
        {
            // Only what the batch wrote: marking every row of a session re-examined a long
            // log's whole history at each piece appended to it.
            let mut mark =
                conn.prepare_cached("INSERT OR IGNORE INTO usage_dirty (message_id) VALUES (?1)")?;
            for message_id in written {
                mark.execute([message_id])?;
            }
        }
        // A message id with a single row that counts needs nothing: that row is its match's
        // winner and already says so. Nearly every id a first index writes is one, and the
        // query fetched, sorted and joined them all (45 ms a batch, a twelfth of the store's
        // writer's time on the 1 GiB corpus).
        recount(
            conn,
            "SELECT message_id FROM usage_dirty AS d
             WHERE NOT (SELECT count(*) = 1 AND min(counted) = 1 FROM usage AS u
                        WHERE u.message_id = d.message_id)",
            &mut affected,
        )?;
        conn.execute("DELETE FROM usage_dirty", [])?;
    }
    rebuild_rollup(conn, &affected)
}

/// The dedupe a first index left to its end: every message id with more than one row, found
/// in one pass over [`MESSAGE_INDEX`] (just built, in the same transaction), and the ids the
/// delete trigger recorded meanwhile (a row that counted is gone: its partner may count now);
/// then the rollup rows of the sessions whose rows changed. A single row that does not count
/// has lost a partner that did, so the trigger has its id: asking every id for its rows'
/// `counted` instead read the table row of each (0.46 s on the 3 GiB corpus, against 0.09).
pub(crate) fn dedupe_deferred(conn: &Connection) -> Result<()> {
    let mut affected = BTreeSet::new();
    recount(
        conn,
        "SELECT message_id FROM usage WHERE message_id IS NOT NULL
         GROUP BY message_id HAVING count(*) > 1
         UNION SELECT message_id FROM usage_dirty",
        &mut affected,
    )?;
    conn.execute("DELETE FROM usage_dirty", [])?;
    rebuild_rollup(conn, &affected)
}

/// Sets `counted` on every row of the message ids `ids` (a query) selects, adding the
/// sessions of the rows that changed to `affected`.
fn recount(conn: &Connection, ids: &str, affected: &mut BTreeSet<String>) -> Result<()> {
    let mut stmt = conn.prepare_cached(&format!(
        "UPDATE usage SET counted = w.keep
         FROM (
             SELECT id,
                 (row_number() OVER (
                      PARTITION BY message_id,
                          CASE WHEN is_sidechain THEN '' ELSE request_key END
                      ORDER BY input_tokens + output_tokens + cache_creation_tokens
                               + cache_read_tokens DESC, has_speed DESC, id) = 1)
                 AND NOT (is_sidechain
                          AND min(is_sidechain) OVER (PARTITION BY message_id) = 0) AS keep
             FROM usage
             WHERE message_id IN ({ids})
         ) AS w
         WHERE usage.id = w.id AND usage.counted != w.keep
         RETURNING session_id"
    ))?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    for r in rows {
        affected.insert(r?);
    }
    Ok(())
}

fn rebuild_rollup(conn: &Connection, sessions: &BTreeSet<String>) -> Result<()> {
    let mut del = conn.prepare_cached("DELETE FROM usage_rollup WHERE session_id = ?1")?;
    let mut ins = conn.prepare_cached(
        "INSERT INTO usage_rollup
         SELECT session_id, coalesce(substr(timestamp, 1, 10), ''), coalesce(model, ''),
             cost_usd IS NULL, count(*), sum(input_tokens), sum(output_tokens),
             sum(cache_creation_tokens), sum(cache_creation_1h_tokens), sum(cache_read_tokens),
             sum(reasoning_tokens), sum(max(input_tokens - 200000, 0)),
             sum(max(output_tokens - 200000, 0)), sum(max(cache_creation_tokens - 200000, 0)),
             sum(max(cache_read_tokens - 200000, 0)), sum(cost_usd), min(timestamp),
             max(timestamp), sum(web_search_requests), sum(premium_requests)
         FROM usage WHERE session_id = ?1 AND counted = 1
         GROUP BY 2, 3, 4",
    )?;
    for s in sessions {
        del.execute(params![s])?;
        ins.execute(params![s])?;
    }
    Ok(())
}
