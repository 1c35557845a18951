//! The team store's migrations: SQL files under `migrations/`, embedded at compile time,
//! applied in order under a transaction-level advisory lock (two machines migrating at once
//! queue; the second finds nothing to do). `trail_schema` records each version applied.

use postgres::Client;

use crate::{PgError, Result};

/// Every migration, in order. Append only; never edit one that has shipped.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_team_store.sql"),
    include_str!("../migrations/0002_turn_search.sql"),
    include_str!("../migrations/0003_file_snapshots.sql"),
    include_str!("../migrations/0004_message_turn_index.sql"),
    include_str!("../migrations/0005_chronicle_schema_3.sql"),
];

/// The schema version this build reads and writes.
pub const CURRENT: i64 = MIGRATIONS.len() as i64;

/// The advisory lock key migrations hold (`trail` in ASCII).
const LOCK: i64 = 0x0074_7261_696c;

/// The server's schema version (0 for a database trail never touched).
pub fn version(client: &mut Client) -> Result<i64> {
    let exists: bool = client
        .query_one("SELECT to_regclass('trail_schema') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    Ok(client
        .query_one(
            "SELECT coalesce(max(version), 0)::bigint FROM trail_schema",
            &[],
        )?
        .get(0))
}

/// Applies the migrations the server lacks; returns how many ran.
pub fn migrate(client: &mut Client) -> Result<usize> {
    let mut applied = 0;
    loop {
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS trail_schema (
                 version BIGINT PRIMARY KEY,
                 applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
             );
             GRANT SELECT ON trail_schema TO PUBLIC;",
        )
        .map_err(|e| PgError::NeedsMigration(crate::server_message(&e)))?;
        let now: i64 = tx
            .query_one(
                "SELECT coalesce(max(version), 0)::bigint FROM trail_schema",
                &[],
            )?
            .get(0);
        if now > CURRENT {
            return Err(PgError::TooNew {
                found: now,
                supported: CURRENT,
            });
        }
        if now == CURRENT {
            tx.commit()?;
            return Ok(applied);
        }
        tx.batch_execute(MIGRATIONS[now as usize])
            .map_err(|e| PgError::NeedsMigration(crate::server_message(&e)))?;
        tx.execute(
            "INSERT INTO trail_schema (version) VALUES ($1)",
            &[&(now + 1)],
        )?;
        tx.commit()?;
        applied += 1;
    }
}

/// Checks the server is at this build's version, migrating it when it is behind (a role that
/// may not is told to run `trail db migrate`).
pub fn ensure(client: &mut Client) -> Result<()> {
    let v = version(client)?;
    if v > CURRENT {
        return Err(PgError::TooNew {
            found: v,
            supported: CURRENT,
        });
    }
    if v < CURRENT {
        migrate(client)?;
    }
    Ok(())
}

/// Checks the server's schema can be read by this build (readers never migrate).
pub fn check_readable(client: &mut Client) -> Result<()> {
    let v = version(client)?;
    if v > CURRENT {
        return Err(PgError::TooNew {
            found: v,
            supported: CURRENT,
        });
    }
    if v < CURRENT {
        return Err(PgError::NeedsMigration(format!(
            "schema version {v}, this trail reads {CURRENT}"
        )));
    }
    Ok(())
}
