//! [`PgBackend`]: `trail --store postgres://...`. Search and read-only SQL run on the server;
//! every other read runs the local store's code over a snapshot of the rows it needs (see
//! `trail_query::RemoteBackend`). `--user` and `--host` narrow everything to what one person or
//! one machine pushed.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use postgres::types::{FromSql, ToSql, Type};
use postgres::Client;
use rusqlite::types::Value;
use trail_model::Role;
use trail_query::{Need, QueryError, RemoteBackend};
use trail_store::{
    like_escape, number_placeholders, Cell, ColumnDoc, SearchHit, SearchOptions, SearchResults,
    SearchSort, SqlError, SqlLimits, SqlResult, Store, StoreError, TableDoc, HIT_END, HIT_START,
};

use crate::search_text::{
    field_matches, role_weights, searched_fields, snippet, translate_in, TsQuery, SEARCHED_KINDS,
    TURN_RANK_WEIGHTS,
};
use crate::tables::{Mirrored, CHILDREN, SESSIONS};
use crate::{redact_url, schema, server_message, PgError};

/// Whose sessions a team store's reads see: everyone's, or one person's (`pushed_by`, the
/// database role that pushed), or one machine's (`host`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TeamScope {
    pub user: Option<String>,
    pub host: Option<String>,
}

/// Matching turns a team-store search reads off the GIN index and ranks (see `search`).
const RANKED_TURNS: usize = 500;

/// The role `trail sql` runs as on the server: it may only SELECT (docs/team.md).
pub const READER_ROLE: &str = "trail_reader";

/// A team store opened for reading.
pub struct PgBackend {
    client: RefCell<Client>,
    url: String,
    scope: TeamScope,
}

/// A PostgreSQL error as the query layer's.
fn remote(e: postgres::Error) -> QueryError {
    QueryError::Remote(server_message(&e))
}

impl PgBackend {
    /// Connects to `url` and checks its schema is this trail's (readers never migrate).
    pub fn open(url: &str, scope: TeamScope) -> Result<PgBackend, PgError> {
        let started = Instant::now();
        let mut client = crate::connect(url)?;
        schema::check_readable(&mut client)?;
        tracing::debug!(
            ms = started.elapsed().as_millis() as u64,
            "team store opened"
        );
        Ok(PgBackend {
            client: RefCell::new(client),
            url: url.to_string(),
            scope,
        })
    }

    /// The scope condition on sessions `s`, with its two values at `$a` and `$b`.
    fn scope_sql(a: usize, b: usize) -> String {
        format!(
            "(${a}::text IS NULL OR s.pushed_by = ${a}) AND (${b}::text IS NULL OR s.host = ${b})"
        )
    }

    /// Ids of the sessions in scope that the need covers (`None`: no rows beyond `sessions`).
    fn ids_for(&self, client: &mut Client, need: &Need) -> Result<Option<Vec<String>>, QueryError> {
        let (u, h) = (&self.scope.user, &self.scope.host);
        let scope = Self::scope_sql(1, 2);
        let rows = match need {
            Need::SessionTable => return Ok(None),
            Need::SessionRows(ids) => client.query(
                &format!("SELECT s.id FROM sessions s WHERE {scope} AND s.id = ANY($3)"),
                &[u, h, ids],
            ),
            Need::Usage { filter: f, .. } | Need::Activity(f) => {
                let repo = f.repo.as_deref().map(|r| format!("%{}%", like_escape(r)));
                let source = f.source.map(|s| s.as_str());
                let (since, until) = (f.since.as_deref(), f.until.as_deref());
                let active = matches!(need, Need::Activity(_));
                // A superset is enough: the local code filters again.
                client.query(
                    &format!(
                        "WITH RECURSIVE chosen(id, depth) AS (
                             SELECT s.id, 0 FROM sessions s
                             WHERE {scope}
                               AND ($3::text IS NULL OR s.source = $3)
                               AND ($4::text IS NULL OR s.repository ILIKE $4 OR s.cwd ILIKE $4)
                               AND (NOT $7 OR $5::text IS NULL OR s.updated_at >= $5)
                               AND (NOT $7 OR $6::text IS NULL OR coalesce(s.created_at, s.updated_at) < $6)
                             UNION
                             SELECT s.id, chosen.depth + 1 FROM sessions s
                             JOIN chosen ON s.parent_session_id = chosen.id
                             WHERE chosen.depth < 64 AND {scope}
                         )
                         SELECT DISTINCT id FROM chosen"
                    ),
                    &[u, h, &source, &repo, &since, &until, &active],
                )
            }
            Need::FileNamed(name) => {
                let suffix = format!("%/{}", like_escape(name));
                let backslash = format!("%\\\\{}", like_escape(name));
                client.query(
                    &format!(
                        "SELECT DISTINCT s.id FROM session_files f JOIN sessions s ON s.id = f.session_id
                         WHERE {scope} AND (f.file_path = $3
                             OR reverse(f.file_path) LIKE reverse($4) OR f.file_path LIKE $5)"
                    ),
                    &[u, h, name, &suffix, &backslash],
                )
            }
        }
        .map_err(remote)?;
        Ok(Some(rows.iter().map(|r| r.get(0)).collect()))
    }
}

/// Joins a child table to the chosen sessions' ids (`$1`, a text array): a hash or index join,
/// where `session_id = ANY($1)` compared each row with every id.
const CHOSEN: &str = "JOIN unnest($1::text[]) AS chosen(chosen_id) ON chosen_id = session_id";

/// Copies rows of `query` into `table` of the snapshot (without `id`: the snapshot assigns its
/// own, in the order given).
fn copy_rows(
    client: &mut Client,
    snapshot: &rusqlite::Transaction<'_>,
    table: &Mirrored,
    query: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<(), QueryError> {
    let columns = table.columns_without_id();
    let placeholders: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    let mut insert = snapshot
        .prepare(&format!(
            "INSERT INTO {} ({}) VALUES ({})",
            table.name,
            columns.join(", "),
            placeholders.join(", ")
        ))
        .map_err(StoreError::from)?;
    for row in client.query(query, params).map_err(remote)? {
        let mut values: Vec<Value> = Vec::with_capacity(columns.len());
        for (i, col) in row.columns().iter().enumerate() {
            values.push(match *col.type_() {
                Type::INT8 => row
                    .get::<_, Option<i64>>(i)
                    .map_or(Value::Null, Value::Integer),
                Type::FLOAT8 => row
                    .get::<_, Option<f64>>(i)
                    .map_or(Value::Null, Value::Real),
                Type::BOOL => row
                    .get::<_, Option<bool>>(i)
                    .map_or(Value::Null, |b| Value::Integer(b as i64)),
                _ => row
                    .get::<_, Option<String>>(i)
                    .map_or(Value::Null, Value::Text),
            });
        }
        insert
            .execute(rusqlite::params_from_iter(values))
            .map_err(StoreError::from)?;
    }
    Ok(())
}

impl RemoteBackend for PgBackend {
    fn describe(&self) -> String {
        redact_url(&self.url)
    }

    fn snapshot(&self, need: &Need) -> trail_query::Result<Store> {
        let started = Instant::now();
        let mut client = self.client.borrow_mut();
        let client = &mut *client;
        let store = Store::open_in_memory()?;
        tracing::debug!(
            ms = started.elapsed().as_millis() as u64,
            "snapshot store created"
        );
        // Rows change only through a sync's whole-session transactions; one repeatable-read
        // transaction sees one state of them.
        client
            .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .map_err(remote)?;
        let result = (|| -> Result<(), QueryError> {
            let ids = self.ids_for(client, need)?;
            let tx = store
                .connection()
                .unchecked_transaction()
                .map_err(StoreError::from)?;
            let (u, h) = (&self.scope.user, &self.scope.host);
            let scope = Self::scope_sql(1, 2);
            // Parents first: a subagent's row may come before its parent's otherwise, and
            // nothing in the snapshot depends on insertion order of sessions.
            let session_query = format!(
                "SELECT {} FROM sessions s WHERE {scope} ORDER BY s.id",
                SESSIONS
                    .columns
                    .iter()
                    .map(|c| format!("s.{c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            copy_rows(client, &tx, &SESSIONS, &session_query, &[u, h])?;
            tracing::debug!(ms = started.elapsed().as_millis() as u64, "sessions copied");
            if let Some(ids) = &ids {
                for table in CHILDREN {
                    let (usage_only, usage_rows, bounds) = match need {
                        Need::Usage { filter, rows } => (
                            true,
                            *rows,
                            (
                                filter.since.as_deref().map(str::to_string),
                                filter.until.as_deref().map(str::to_string),
                            ),
                        ),
                        _ => (false, true, (None, None)),
                    };
                    if usage_only
                        && !(table.name == "usage_rollup" || (table.name == "usage" && usage_rows))
                    {
                        continue;
                    }
                    let order = if table.has_id {
                        " ORDER BY id, session_id"
                    } else {
                        ""
                    };
                    if table.name == "usage" {
                        // Only counted requests in the range: the reports read no others.
                        let q = format!(
                            "SELECT {} FROM usage {CHOSEN} WHERE counted = 1
                               AND ($2::text IS NULL OR timestamp >= $2)
                               AND ($3::text IS NULL OR timestamp < $3){order}",
                            table.columns_without_id().join(", "),
                        );
                        let (since, until) = if usage_only { bounds } else { (None, None) };
                        copy_rows(client, &tx, table, &q, &[ids, &since, &until])?;
                        continue;
                    }
                    let q = format!(
                        "SELECT {} FROM {} {CHOSEN}{order}",
                        table.columns_without_id().join(", "),
                        table.name,
                    );
                    copy_rows(client, &tx, table, &q, &[ids])?;
                }
                if matches!(need, Need::FileNamed(_)) {
                    // `why` looks for the sessions that referenced a commit, in any session.
                    let refs = CHILDREN
                        .iter()
                        .find(|t| t.name == "session_refs")
                        .expect("session_refs is mirrored");
                    let q = format!(
                        "SELECT {} FROM session_refs r JOIN sessions s ON s.id = r.session_id
                         WHERE r.ref_type = 'commit' AND NOT (r.session_id = ANY($3)) AND {scope}
                         ORDER BY r.id, r.session_id",
                        refs.columns_without_id()
                            .iter()
                            .map(|c| format!("r.{c}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    copy_rows(client, &tx, refs, &q, &[u, h, ids])?;
                }
            }
            tx.commit().map_err(StoreError::from)?;
            Ok(())
        })();
        let _ = client.batch_execute("COMMIT");
        result?;
        tracing::debug!(ms = started.elapsed().as_millis() as u64, "snapshot made");
        Ok(store)
    }

    fn search(&self, o: &SearchOptions) -> trail_query::Result<SearchResults> {
        let started = Instant::now();
        // One row per turn, as locally: a role is a weight restriction of the query (a column
        // filter locally), so `NOT` excludes only what is in that part of the turn.
        let weights = role_weights(o.role);
        let tsq = translate_in(&o.query, weights).map_err(StoreError::InvalidQuery)?;
        let mut client = self.client.borrow_mut();
        let mut params: Vec<Box<dyn ToSql + Sync>> = vec![
            Box::new(tsq.text.clone()),
            Box::new(self.scope.user.clone()),
            Box::new(self.scope.host.clone()),
        ];
        let filter = search_filter(o, &mut params);
        let ranking = rank_turns(&mut client, o, filter, params)?;
        let mut turns = ranking.turns;
        tracing::debug!(
            ms = started.elapsed().as_millis() as u64,
            turns = turns.len(),
            "search turns ranked"
        );
        pick_best_messages(&mut client, &tsq, o.role.map(Role::as_str), &mut turns)?;
        let hits = hits_of(&mut client, &turns, &tsq)?;
        tracing::debug!(ms = started.elapsed().as_millis() as u64, "search done");
        Ok(SearchResults {
            fts_query: tsq.text,
            hits,
            ranked: ranking.ranked,
            capped: ranking.capped,
            correction: None,
        })
    }

    fn sql(&self, sql: &str, limits: SqlLimits) -> trail_query::Result<SqlResult> {
        let first = sql
            .trim_start_matches(|c: char| c.is_whitespace() || c == '(')
            .split(|c: char| !c.is_ascii_alphabetic())
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if !matches!(
            first.as_str(),
            "select" | "with" | "values" | "table" | "explain"
        ) {
            return Err(SqlError::Denied(format!("{first:?} is not a SELECT")).into());
        }
        let started = Instant::now();
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().map_err(remote)?;
        tx.batch_execute(&format!(
            "SET TRANSACTION READ ONLY; SET LOCAL statement_timeout = {};",
            limits.timeout.as_millis().max(1)
        ))
        .map_err(remote)?;
        tx.batch_execute(&format!("SET LOCAL ROLE {READER_ROLE}"))
            .map_err(|e| {
                QueryError::RemoteRefused(format!(
                    "cannot run as the read-only role {READER_ROLE}: {} (docs/team.md: GRANT {READER_ROLE} TO your role)",
                    server_message(&e)
                ))
            })?;
        let map = |e: postgres::Error, timeout: Duration| -> QueryError {
            match e.as_db_error().map(|d| d.code().code().to_string()) {
                Some(code) if code == "57014" => SqlError::Timeout(timeout).into(),
                // Read-only transaction, insufficient privilege.
                Some(code) if code == "25006" || code == "42501" => {
                    SqlError::Denied(server_message(&e)).into()
                }
                Some(code) if code.starts_with("42") || code.starts_with("22") => {
                    SqlError::Invalid(server_message(&e)).into()
                }
                _ => remote(e),
            }
        };
        let statement = tx.prepare(sql).map_err(|e| map(e, limits.timeout))?;
        let columns: Vec<String> = statement
            .columns()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        let types: Vec<Type> = statement
            .columns()
            .iter()
            .map(|c| c.type_().clone())
            .collect();
        let no_params: [&(dyn ToSql + Sync); 0] = [];
        let mut iter = tx
            .query_raw(&statement, no_params.iter().copied())
            .map_err(|e| map(e, limits.timeout))?;
        let mut rows = Vec::new();
        let mut bytes = 0usize;
        let mut truncated = false;
        use postgres::fallible_iterator::FallibleIterator;
        while let Some(row) = iter.next().map_err(|e| map(e, limits.timeout))? {
            if rows.len() >= limits.max_rows {
                truncated = true;
                break;
            }
            let mut cells = Vec::with_capacity(types.len());
            for (i, ty) in types.iter().enumerate() {
                let cell = cell_of(&row, i, ty);
                bytes += match &cell {
                    Cell::Text(t) => t.len(),
                    _ => 8,
                };
                cells.push(cell);
            }
            if bytes > limits.max_bytes {
                truncated = true;
                break;
            }
            rows.push(cells);
        }
        drop(iter);
        let _ = tx.rollback();
        Ok(SqlResult {
            columns,
            rows,
            truncated,
            elapsed_ms: started.elapsed().as_millis() as u64,
        })
    }

    fn schema(&self) -> trail_query::Result<Vec<TableDoc>> {
        let mut client = self.client.borrow_mut();
        let tables = client
            .query(
                "SELECT table_name::text, table_type::text FROM information_schema.tables
                 WHERE table_schema = current_schema() ORDER BY table_name",
                &[],
            )
            .map_err(remote)?;
        let mut out = Vec::new();
        for t in tables {
            let name: String = t.get(0);
            let kind: String = t.get(1);
            let columns = client
                .query(
                    "SELECT column_name::text, data_type::text FROM information_schema.columns
                     WHERE table_schema = current_schema() AND table_name = $1
                     ORDER BY ordinal_position",
                    &[&name],
                )
                .map_err(remote)?
                .iter()
                .map(|c| ColumnDoc {
                    name: c.get(0),
                    decl_type: c.get(1),
                    description: String::new(),
                })
                .collect();
            out.push(TableDoc {
                description: match name.as_str() {
                    "sessions" => {
                        "one row per session, with who pushed it (pushed_by, host)".into()
                    }
                    "messages" => {
                        "every message; search_vector is what full-text search sees".into()
                    }
                    "search_index" => "Chronicle's search table: one row per turn".into(),
                    "turn_search" => {
                        "trail's search: one tsvector per turn (prompts A, answers B, tool inputs C, tool outputs D)".into()
                    }
                    "sync_stores" => "each store that pushed, and when it last synced".into(),
                    "trail_schema" => "migrations applied".into(),
                    _ => String::new(),
                },
                kind: if kind == "VIEW" {
                    "view".into()
                } else {
                    "table".into()
                },
                name,
                columns,
            });
        }
        Ok(out)
    }

    fn last_synced_at(&self) -> trail_query::Result<Option<String>> {
        let row = self
            .client
            .borrow_mut()
            .query_one(
                &format!(
                    "SELECT max(last_sync_at) FROM sync_stores s WHERE {}",
                    Self::scope_sql(1, 2)
                ),
                &[&self.scope.user, &self.scope.host],
            )
            .map_err(remote)?;
        Ok(row.get(0))
    }

    fn session_count(&self) -> trail_query::Result<i64> {
        let row = self
            .client
            .borrow_mut()
            .query_one(
                &format!(
                    "SELECT count(*) FROM sessions s WHERE {}",
                    Self::scope_sql(1, 2)
                ),
                &[&self.scope.user, &self.scope.host],
            )
            .map_err(remote)?;
        Ok(row.get(0))
    }
}

/// A column of a `trail sql` row as a cell: numbers as numbers, text as text, anything else
/// as its type's name (read with SQL casts: `SELECT x::text`).
fn cell_of(row: &postgres::Row, i: usize, ty: &Type) -> Cell {
    let text = |v: Option<String>| v.map_or(Cell::Null, Cell::Text);
    match *ty {
        Type::INT2 => row
            .get::<_, Option<i16>>(i)
            .map_or(Cell::Null, |v| Cell::Integer(v.into())),
        Type::INT4 => row
            .get::<_, Option<i32>>(i)
            .map_or(Cell::Null, |v| Cell::Integer(v.into())),
        Type::INT8 => row
            .get::<_, Option<i64>>(i)
            .map_or(Cell::Null, Cell::Integer),
        Type::OID => row
            .get::<_, Option<u32>>(i)
            .map_or(Cell::Null, |v| Cell::Integer(v.into())),
        Type::FLOAT4 => row
            .get::<_, Option<f32>>(i)
            .map_or(Cell::Null, |v| Cell::Real(v.into())),
        Type::FLOAT8 => row.get::<_, Option<f64>>(i).map_or(Cell::Null, Cell::Real),
        Type::BOOL => row
            .get::<_, Option<bool>>(i)
            .map_or(Cell::Null, |v| Cell::Integer(v as i64)),
        Type::NUMERIC => match row.get::<_, Option<Numeric>>(i) {
            None => Cell::Null,
            Some(Numeric(s)) => match s.parse::<i64>() {
                Ok(v) if !s.contains('.') => Cell::Integer(v),
                _ => s.parse::<f64>().map_or(Cell::Text(s), Cell::Real),
            },
        },
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
            text(row.get::<_, Option<String>>(i))
        }
        Type::JSON | Type::JSONB => row
            .get::<_, Option<serde_json::Value>>(i)
            .map_or(Cell::Null, |v| Cell::Text(v.to_string())),
        _ => match row.try_get::<_, Option<Raw>>(i) {
            Ok(None) => Cell::Null,
            _ => Cell::Text(format!("({})", ty.name())),
        },
    }
}

/// A turn a search found, with its score (lower is better, as bm25's are locally) and the
/// message it shows.
struct HitTurn {
    session_id: String,
    turn: i64,
    score: f64,
    seq: Option<i64>,
}

/// The turns a search ranked: at most the limit, and how many matched (up to the cap).
struct Ranking {
    turns: Vec<HitTurn>,
    ranked: usize,
    capped: bool,
}

/// The search's filter, compiled for PostgreSQL: its SQL, with the values pushed onto
/// `params` (the one place a [`trail_store::Filter`] becomes PostgreSQL for a search).
fn search_filter(o: &SearchOptions, params: &mut Vec<Box<dyn ToSql + Sync>>) -> String {
    let mut filter = String::new();
    for c in o.conditions() {
        let (sql, values) = c.sql("t", "ILIKE ?");
        filter.push_str(&number_placeholders(&sql, params.len() + 1, "$"));
        for value in values {
            params.push(Box::new(value));
        }
    }
    filter
}

/// Ranks the turns matching the query within `filter`.
fn rank_turns(
    client: &mut Client,
    o: &SearchOptions,
    filter: String,
    mut params: Vec<Box<dyn ToSql + Sync>>,
) -> trail_query::Result<Ranking> {
    params.push(Box::new(o.limit as i64));
    let limit_at = params.len();
    // Matching turns straight off the GIN index, at most RANKED_TURNS + 1 of them (no
    // sort before that limit, so a near-stopword costs what a rarer word does), ranked with
    // `ts_rank` and the local column weights, and sorted. Below the cap, which is nearly
    // every query, the ranking is exact; above it, the hits are the best of the turns read
    // and the answer says so (`capped`). `ts_rank` reads each turn's whole vector: ranking
    // all 10,000 turns of a near-stopword took 180 ms on the 1 GiB team store, 2,000 of
    // them 70 ms, 500 of them 28 ms (the p50 of bench/postgres.py's queries, process
    // included).
    let order = match o.sort {
        SearchSort::Relevance => "score DESC, c.session_id DESC, c.turn_index DESC",
        SearchSort::Recent => "c.at DESC, c.session_id DESC, c.turn_index DESC",
    };
    let sql = format!(
        "SELECT c.session_id, c.turn_index,
                    ts_rank('{TURN_RANK_WEIGHTS}', c.search_vector, q.q)::float8 AS score,
                    count(*) OVER () AS matched
             FROM (SELECT $1::text::tsquery AS q) q,
             LATERAL (SELECT t.session_id, t.turn_index, t.search_vector,
                             coalesce(t.last_at, s.updated_at) AS at
                      FROM turn_search t JOIN sessions s ON s.id = t.session_id
                      WHERE t.search_vector @@ q.q AND {}{filter}
                      LIMIT {}) c
             ORDER BY {order} LIMIT ${limit_at}",
        PgBackend::scope_sql(2, 3),
        RANKED_TURNS + 1,
    );
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|b| b.as_ref()).collect();
    let rows = client
        .query(&sql, &refs)
        .map_err(|e| match e.as_db_error() {
            Some(db) if db.code().code().starts_with("42") || db.code().code() == "22023" => {
                QueryError::Store(StoreError::InvalidQuery(db.message().to_string()))
            }
            _ => remote(e),
        })?;
    let capped = rows
        .first()
        .is_some_and(|r| r.get::<_, i64>(3) > RANKED_TURNS as i64);
    let turns: Vec<HitTurn> = rows
        .iter()
        .map(|r| HitTurn {
            session_id: r.get(0),
            turn: r.get(1),
            score: -r.get::<_, f64>(2),
            seq: None,
        })
        .collect();
    let ranked = rows
        .first()
        .map_or(0, |r| (r.get::<_, i64>(3) as usize).min(RANKED_TURNS));
    Ok(Ranking {
        turns,
        ranked,
        capped,
    })
}

/// Each hit turn's best message: the best rank for any of the query's words.
fn pick_best_messages(
    client: &mut Client,
    tsq: &TsQuery,
    role: Option<&str>,
    turns: &mut [HitTurn],
) -> trail_query::Result<()> {
    // Each hit turn shows its best message: the best rank for any of the query's words.
    let any_word = tsq
        .marks
        .iter()
        .map(|(w, prefix)| {
            let mut t = format!("'{}'", w.replace('\\', "\\\\").replace('\'', "''"));
            if *prefix {
                t.push_str(":*");
            }
            t
        })
        .collect::<Vec<_>>()
        .join(" | ");
    let sessions: Vec<&str> = turns.iter().map(|t| t.session_id.as_str()).collect();
    let turn_ids: Vec<i64> = turns.iter().map(|t| t.turn).collect();
    let kinds: Vec<&str> = SEARCHED_KINDS.to_vec();
    let best = client
            .query(
                "SELECT k.ord, m.seq,
                        CASE WHEN $3 <> '' AND m.search_vector @@ $3::text::tsquery
                             THEN ts_rank('{0.1, 0.5, 0.75, 1.0}', m.search_vector, $3::text::tsquery)
                             ELSE -1 END::float8 AS r
                 FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS k(sid, turn, ord)
                 JOIN messages m ON m.session_id = k.sid AND coalesce(m.turn_index, -1) = k.turn
                 WHERE m.kind = ANY($4) AND ($5::text IS NULL OR m.role = $5)
                 ORDER BY k.ord, r DESC, m.seq",
                &[&sessions, &turn_ids, &any_word, &kinds, &role],
            )
            .map_err(remote)?;
    for r in best {
        let ord: i64 = r.get(0);
        if let Some(t) = usize::try_from(ord - 1).ok().and_then(|i| turns.get_mut(i)) {
            if t.seq.is_none() {
                t.seq = Some(r.get(1));
            }
        }
    }
    Ok(())
}

/// The hits: each turn's message with its session's fields and a snippet.
fn hits_of(
    client: &mut Client,
    turns: &[HitTurn],
    tsq: &TsQuery,
) -> trail_query::Result<Vec<SearchHit>> {
    let chosen: Vec<&HitTurn> = turns.iter().collect();
    let sessions: Vec<&str> = chosen.iter().map(|c| c.session_id.as_str()).collect();
    let seqs: Vec<i64> = chosen.iter().map(|c| c.seq.unwrap_or(-1)).collect();
    let rows = client
            .query(
                "SELECT k.ord, s.summary, s.source, s.repository, s.branch, s.cwd, m.role, m.kind,
                        m.tool_name, coalesce(m.timestamp, s.updated_at), m.text,
                        left(m.tool_input, 1000),
                        CASE WHEN length(m.tool_output) > 800
                             THEN left(m.tool_output, 600) || E'\\n…\\n' || right(m.tool_output, 200)
                             ELSE m.tool_output END
                 FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS k(sid, seq, ord)
                 JOIN sessions s ON s.id = k.sid
                 LEFT JOIN messages m ON m.session_id = k.sid AND m.seq = k.seq
                 ORDER BY k.ord",
                &[&sessions, &seqs],
            )
            .map_err(remote)?;
    let names = ["text", "tool_input", "tool_output"];
    let mut hits = Vec::with_capacity(rows.len());
    for r in rows {
        let ord: i64 = r.get(0);
        let Some(c) = usize::try_from(ord - 1).ok().and_then(|i| chosen.get(i)) else {
            continue;
        };
        let fields = searched_fields(
            r.get::<_, Option<&str>>(10),
            r.get::<_, Option<&str>>(11),
            r.get::<_, Option<&str>>(12),
        );
        let at = (0..3)
            .find(|&i| field_matches(&fields[i], &tsq.marks))
            .or_else(|| (0..3).find(|&i| !fields[i].is_empty()))
            .unwrap_or(0);
        hits.push(SearchHit {
            session_id: c.session_id.clone(),
            title: r.get(1),
            source: r.get(2),
            repository: r.get(3),
            branch: r.get(4),
            cwd: r.get(5),
            turn: (c.turn >= 0).then_some(c.turn),
            seq: c.seq.unwrap_or(0),
            role: r.get(6),
            kind: r.get(7),
            tool_name: r.get(8),
            timestamp: r.get(9),
            field: names[at].to_string(),
            snippet: {
                let s = snippet(&fields[at], &tsq.marks, HIT_START, HIT_END, 24);
                // Tool inputs are JSON text: shown as what the escapes stand for.
                if names[at] == "tool_input" {
                    trail_store::unescape_json_snippet(&s).into_owned()
                } else {
                    s
                }
            },
            score: c.score,
        });
    }
    Ok(hits)
}

/// A value of any type, only to tell NULL from not (its bytes are not shown).
struct Raw;
impl<'a> FromSql<'a> for Raw {
    fn from_sql(_: &Type, _: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A `numeric` in decimal notation, decoded from PostgreSQL's binary form (sums and averages of
/// integers are `numeric` there).
struct Numeric(String);
impl<'a> FromSql<'a> for Numeric {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        let word = |i: usize| -> Result<i16, Box<dyn std::error::Error + Sync + Send>> {
            let b = raw.get(i..i + 2).ok_or("short numeric")?;
            Ok(i16::from_be_bytes([b[0], b[1]]))
        };
        let ndigits = word(0)? as usize;
        let weight = word(2)? as i32;
        let sign = word(4)? as u16;
        let dscale = word(6)? as usize;
        if sign == 0xC000 {
            return Ok(Numeric("NaN".into()));
        }
        let digits: Vec<i16> = (0..ndigits)
            .map(|k| word(8 + 2 * k))
            .collect::<Result<_, _>>()?;
        // Integer part: base-10000 groups 0..=weight.
        let mut int = String::new();
        for g in 0..=weight.max(-1) {
            let d = digits.get(g as usize).copied().unwrap_or(0);
            if int.is_empty() {
                if d != 0 {
                    int = d.to_string();
                }
            } else {
                int.push_str(&format!("{d:04}"));
            }
        }
        if int.is_empty() {
            int.push('0');
        }
        let mut frac = String::new();
        let mut g = weight + 1;
        while frac.len() < dscale {
            let d = if g < 0 {
                0
            } else {
                digits.get(g as usize).copied().unwrap_or(0)
            };
            frac.push_str(&format!("{d:04}"));
            g += 1;
        }
        frac.truncate(dscale);
        let mut s = String::new();
        if sign == 0x4000 {
            s.push('-');
        }
        s.push_str(&int);
        if dscale > 0 {
            s.push('.');
            s.push_str(&frac);
        }
        Ok(Numeric(s))
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
}
