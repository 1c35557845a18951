//! Keeps `usage.counted` and `usage_rollup` (migration 0003) in step with `usage`.
//!
//! A request stored in several sessions (resumed files repeating history, sidechain replays)
//! counts once across the store; the writer calls [`refresh`] at the end of every batch, in the
//! batch's transaction, so reports read the sums without scanning `usage`.

use std::collections::BTreeSet;

use rusqlite::{params, Transaction};

use crate::Result;

/// Recomputes which rows count for every message id the batch touched (`written`: the message
/// ids of the usage rows it wrote; the ids of rows it deleted were recorded by a trigger), then
/// rebuilds the rollup rows of the sessions written and of those whose rows changed.
pub(crate) fn refresh(
    tx: &Transaction<'_>,
    sessions: &BTreeSet<String>,
    written: &BTreeSet<String>,
) -> Result<()> {
    {
        // Only what the batch wrote: marking every row of a session re-examined a long log's
        // whole history at each piece appended to it.
        let mut mark =
            tx.prepare_cached("INSERT OR IGNORE INTO usage_dirty (message_id) VALUES (?1)")?;
        for message_id in written {
            mark.execute([message_id])?;
        }
    }
    let mut affected: BTreeSet<String> = sessions.clone();
    {
        let mut stmt = tx.prepare_cached(
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
                 -- A message id with a single row that counts needs nothing: that row is its
                 -- own match's winner and already says so. Nearly every id a first index
                 -- writes is one, and this query fetched, sorted and joined them all (45 ms a
                 -- batch, a twelfth of the store's writer's time on the 1 GiB corpus).
                 WHERE message_id IN (
                     SELECT message_id FROM usage_dirty AS d
                     WHERE NOT (SELECT count(*) = 1 AND min(counted) = 1 FROM usage AS u
                                WHERE u.message_id = d.message_id))
             ) AS w
             WHERE usage.id = w.id AND usage.counted != w.keep
             RETURNING session_id",
        )?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        for r in rows {
            affected.insert(r?);
        }
    }
    tx.execute("DELETE FROM usage_dirty", [])?;
    let mut del = tx.prepare_cached("DELETE FROM usage_rollup WHERE session_id = ?1")?;
    let mut ins = tx.prepare_cached(
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
    for s in &affected {
        del.execute(params![s])?;
        ins.execute(params![s])?;
    }
    Ok(())
}
