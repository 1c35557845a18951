//! Building filtered queries with bound values only.

use rusqlite::types::Value;

use trail_store::like_escape;

use crate::Filter;

/// A condition on a `messages` row aliased `m` of kind `prompt`: a person wrote it (typed, or
/// queued while the agent worked), or its format does not say who did. Prompts the agent or a
/// hook sent (`system`) and prompts a program sent (`sdk`) are left out of what reports count
/// as asked (issue 18).
pub(crate) const PERSON_PROMPT: &str = "coalesce(m.prompt_source, 'typed') IN ('typed', 'queued')";

/// A condition on a `turns` row aliased `t`: its prompt was written by a person (see
/// [`PERSON_PROMPT`]).
pub(crate) const PERSON_TURN: &str = "NOT EXISTS (SELECT 1 FROM messages m
    WHERE m.session_id = t.session_id AND m.turn_index = t.turn_index AND m.kind = 'prompt'
      AND m.on_main_chain = 1 AND m.prompt_source IN ('system', 'sdk'))";

/// A SQL `WHERE` fragment over `sessions` aliased `s`, with its bound values.
pub(crate) struct Where {
    pub sql: String,
    pub args: Vec<Value>,
}

impl Where {
    /// Returns the conditions of `f`'s source and repository on sessions `s`.
    pub fn sessions(f: &Filter) -> Where {
        let mut w = Where {
            sql: String::from("1=1"),
            args: Vec::new(),
        };
        if let Some(src) = &f.source {
            w.sql.push_str(" AND s.source = ?");
            w.args.push(Value::Text(src.clone()));
        }
        if let Some(r) = &f.repo {
            w.sql
                .push_str(" AND (s.repository LIKE ? ESCAPE '\\' OR s.cwd LIKE ? ESCAPE '\\')");
            let pat = format!("%{}%", like_escape(r));
            w.args.push(Value::Text(pat.clone()));
            w.args.push(Value::Text(pat));
        }
        w
    }

    /// Leaves out chats (sessions of chat-service data exports, [`trail_store::is_chat_sql`])
    /// unless `f` names a source: the coding-session views count coding sessions.
    pub fn coding(mut self, f: &Filter) -> Where {
        if f.source.is_none() {
            self.sql.push_str(" AND NOT ");
            self.sql.push_str(&trail_store::is_chat_sql("s"));
        }
        self
    }

    /// Adds `column >= since` / `column < until`.
    pub fn range(mut self, column: &str, since: Option<&str>, until: Option<&str>) -> Where {
        if let Some(s) = since {
            self.sql.push_str(&format!(" AND {column} >= ?"));
            self.args.push(Value::Text(s.to_string()));
        }
        if let Some(u) = until {
            self.sql.push_str(&format!(" AND {column} < ?"));
            self.args.push(Value::Text(u.to_string()));
        }
        self
    }

    /// Adds sessions active in the range: updated at or after `since`, started before `until`.
    pub fn active(mut self, f: &Filter) -> Where {
        if let Some(s) = &f.since {
            self.sql.push_str(" AND s.updated_at >= ?");
            self.args.push(Value::Text(s.clone()));
        }
        if let Some(u) = &f.until {
            self.sql
                .push_str(" AND coalesce(s.created_at, s.updated_at) < ?");
            self.args.push(Value::Text(u.clone()));
        }
        self
    }

    /// Adds a raw condition with no values.
    pub fn and(mut self, cond: &str) -> Where {
        self.sql.push_str(" AND ");
        self.sql.push_str(cond);
        self
    }

    pub fn params(&self) -> rusqlite::ParamsFromIter<std::slice::Iter<'_, Value>> {
        rusqlite::params_from_iter(self.args.iter())
    }
}
