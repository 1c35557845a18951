//! The read-only SQL surface: one SELECT on a separate read-only connection whose authorizer
//! allows reading only, with row and time caps (the walls are trail-store's).

use std::time::Duration;

use trail_store::{ReadOnlySql, SqlLimits, SqlResult, TableDoc};

use crate::{Query, Result};

/// A short summary of the tables a model most often needs, for tool descriptions: models
/// invent columns unless they are told which exist.
pub const SQL_SCHEMA_SUMMARY: &str = "Tables (Chronicle's core plus trail's): \
sessions(id, source, summary, cwd, repository, branch, created_at, updated_at, parent_session_id, \
turn_count, message_count, input_tokens, output_tokens, models, \
agent_name [the agent as people name it: VS Code agent, Copilot CLI, Claude Code, Codex...], \
agent_description [custom agent, subagent type or mode, else null]); \
turns(session_id, turn_index, user_message, assistant_response, timestamp); \
messages(session_id, seq, role, kind, text, tool_name, tool_input, tool_output, is_error, model, timestamp, turn_index); \
tool_calls(session_id, tool_name, is_error, turn_index, timestamp); \
session_files(session_id, file_path, tool_name, turn_index); \
session_refs(session_id, ref_type [pr|issue|commit], ref_value, turn_index); \
usage(session_id, model, timestamp, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, counted); \
search_index FTS5(content, session_id, source_type [turn|checkpoint_*|workspace_artifact], source_id). \
Times are ISO-8601 UTC text.";

/// One statement with its caps.
#[derive(Debug, Clone)]
pub struct SqlRequest {
    pub sql: String,
    pub limits: SqlLimits,
}

impl SqlRequest {
    /// A statement with the default caps (1,000 rows, 10 s).
    pub fn new(sql: impl Into<String>) -> SqlRequest {
        SqlRequest {
            sql: sql.into(),
            limits: SqlLimits::default(),
        }
    }

    /// Sets the row and time caps.
    pub fn with_caps(mut self, max_rows: usize, timeout: Duration) -> SqlRequest {
        self.limits.max_rows = max_rows;
        self.limits.timeout = timeout;
        self
    }
}

impl Query {
    /// Runs one read-only statement.
    pub fn sql(&self, r: &SqlRequest) -> Result<SqlResult> {
        if let Some(remote) = self.remote() {
            return remote.sql(&r.sql, r.limits);
        }
        let db = ReadOnlySql::open(&self.path)?;
        Ok(db.query(&r.sql, r.limits)?)
    }

    /// Every table and view with a line on each column.
    pub fn schema(&self) -> Result<Vec<TableDoc>> {
        if let Some(remote) = self.remote() {
            return remote.schema();
        }
        Ok(ReadOnlySql::open(&self.path)?.schema()?)
    }

    /// The schema as text, one table per paragraph (what `trail sql --schema` prints).
    pub fn schema_text(&self) -> Result<String> {
        let mut out = String::new();
        for t in self.schema()? {
            out.push_str(&format!("{} ({})  {}\n", t.name, t.kind, t.description));
            for c in &t.columns {
                let ty = if c.decl_type.is_empty() {
                    String::new()
                } else {
                    format!(" {}", c.decl_type)
                };
                out.push_str(&format!("  {}{}: {}\n", c.name, ty, c.description));
            }
            out.push('\n');
        }
        Ok(out)
    }
}
