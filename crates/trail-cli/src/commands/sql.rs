//! `trail sql "SELECT ..."`: read-only SQL over the store, for people and agents. The walls
//! (read-only connection, authorizer, one statement, row and time caps) are in trail-store.

use std::time::Duration;

use trail_query::{Cell, QueryError, SqlRequest, SqlResult};
use trail_store::SqlError;

use crate::commands::open_query;
use crate::error::{CliError, CliResult};
use crate::output::{self, Style};
use crate::Ctx;

/// Widest a table column is drawn (values are cut with an ellipsis).
const MAX_COLUMN_CHARS: usize = 60;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// One SELECT statement (reads only; see `trail sql --schema` for the tables)
    #[arg(value_name = "SQL", required_unless_present = "schema")]
    sql: Option<String>,
    /// Print every table and view with a one-line description of each column
    #[arg(long, conflicts_with = "csv")]
    schema: bool,
    /// At most this many rows (the result says when there were more)
    #[arg(long, default_value_t = 1000)]
    max_rows: usize,
    /// At most this many bytes of values (64 MiB by default; also the largest single value)
    #[arg(long, default_value_t = trail_store::DEFAULT_MAX_BYTES, value_name = "BYTES")]
    max_bytes: usize,
    /// Stop the query after this many seconds
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,
    /// Print {"columns", "rows", "truncated", "elapsed_ms"} as JSON
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV (a header line, then the rows)
    #[arg(long)]
    csv: bool,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query = open_query(ctx)?;
    if args.schema {
        let tables = query.schema().map_err(sql_error)?;
        if args.json {
            ctx.ui.json(&tables)?;
            return Ok(0);
        }
        for (i, t) in tables.iter().enumerate() {
            if i > 0 {
                ctx.ui.line("")?;
            }
            let head = format!("{} ({})", t.name, t.kind);
            ctx.ui.line(&format!(
                "{}  {}",
                ctx.ui.paint(Style::Bold, &head),
                ctx.ui.paint(Style::Dim, &t.description)
            ))?;
            let width = t.columns.iter().map(|c| c.name.len()).max().unwrap_or(0);
            for c in &t.columns {
                let ty = if c.decl_type.is_empty() {
                    String::new()
                } else {
                    format!("{} ", c.decl_type)
                };
                ctx.ui.line(&format!(
                    "  {}  {}{}",
                    ctx.ui.paint(Style::Cyan, &output::fit(&c.name, width)),
                    ctx.ui.paint(Style::Dim, &ty),
                    c.description
                ))?;
            }
        }
        return Ok(0);
    }
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err(CliError::usage(
            "--timeout must be a positive number of seconds",
        ));
    }
    let mut request = SqlRequest::new(args.sql.unwrap_or_default())
        .with_caps(args.max_rows, Duration::from_secs_f64(args.timeout));
    request.limits.max_bytes = args.max_bytes;
    let result = query.sql(&request).map_err(sql_error)?;
    if args.json {
        ctx.ui.json(&result)?;
    } else if args.csv {
        print_csv(ctx, &result)?;
    } else {
        print_table(ctx, &result)?;
    }
    if result.truncated && !args.json {
        ctx.ui.status(&format!(
            "Showing the first {} rows; there are more (raise --max-rows or --max-bytes).",
            result.rows.len()
        ));
    }
    Ok(0)
}

fn sql_error(e: QueryError) -> CliError {
    match e {
        QueryError::Sql(e @ SqlError::Denied(_)) => CliError::usage(e).with_hint(
            "trail sql runs one SELECT on a read-only connection; see `trail sql --schema`",
        ),
        QueryError::Sql(e @ SqlError::Invalid(_)) => {
            CliError::usage(e).with_hint("see `trail sql --schema` for tables and columns")
        }
        e => e.into(),
    }
}

fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Null => String::new(),
        Cell::Integer(v) => v.to_string(),
        Cell::Real(v) => v.to_string(),
        Cell::Text(t) => t.clone(),
        Cell::Blob { blob_bytes } => format!("<blob {blob_bytes} bytes>"),
    }
}

fn print_table(ctx: &mut Ctx, r: &SqlResult) -> CliResult {
    let cells: Vec<Vec<String>> = r
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| output::one_line(&cell_text(c)))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = (0..r.columns.len())
        .map(|i| {
            cells
                .iter()
                .map(|row| row[i].chars().count())
                .chain([r.columns[i].chars().count()])
                .max()
                .unwrap_or(0)
                .min(MAX_COLUMN_CHARS)
        })
        .collect();
    let line = |vals: &[String]| -> String {
        vals.iter()
            .zip(&widths)
            .map(|(v, w)| output::fit(v, *w))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    ctx.ui.line(&ctx.ui.paint(Style::Bold, &line(&r.columns)))?;
    for row in &cells {
        ctx.ui.line(&line(row))?;
    }
    Ok(())
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn print_csv(ctx: &mut Ctx, r: &SqlResult) -> CliResult {
    let head: Vec<String> = r.columns.iter().map(|c| csv_field(c)).collect();
    ctx.ui.line(&head.join(","))?;
    for row in &r.rows {
        let vals: Vec<String> = row.iter().map(|c| csv_field(&cell_text(c))).collect();
        ctx.ui.line(&vals.join(","))?;
    }
    Ok(())
}
