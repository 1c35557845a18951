//! The tools: their input and output types (the JSON Schemas a client sees come from these),
//! and one function each that asks trail-query and shapes the answer for a model.
//!
//! Descriptions are short on purpose: every tool definition is sent with every request the
//! model makes, so each word costs tokens for the whole session.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use rmcp::handler::server::tool::schema_for_input;
use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use trail_query::{
    Cell, Clock, FileHistoryRequest, ListRequest, Query, ReportFilter, SearchRequest,
    SessionFilter, SessionRow, SqlRequest, HIT_END, HIT_START,
};
use trail_render::Redactor;
use trail_report::{markdown, PriceTable};

use crate::output::{cut, json_chars, one_line, StoreState, ToolError, ToolOutput, ToolResult};

/// Sessions updated this recently are left out of `search` unless asked for: an agent must not
/// find the conversation it is having.
pub const ACTIVE_MINUTES: i64 = 10;

/// What every tool receives besides its arguments.
pub struct Ctx<'a> {
    pub query: &'a Query,
    pub clock: Clock,
    pub redactor: &'a Redactor,
    pub max_chars: usize,
    pub store: StoreState,
}

/// The schema of every `source` argument: the registry's ids, each with its agent's name in
/// the description, so a model can map "Kimi" or "Claude Code" to the id.
fn source_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let sources = trail_query::registry::sources();
    let ids: Vec<&str> = sources.iter().map(|s| s.id()).collect();
    let named: Vec<String> = sources
        .iter()
        .map(|s| format!("{} ({})", s.id(), s.name))
        .collect();
    schemars::json_schema!({
        "type": "string",
        "enum": ids,
        "description": format!("Only this agent: {}.", named.join(", ")),
    })
}

/// Returns every tool's definition, in the order `tools/list` shows them.
pub fn definitions() -> Vec<Tool> {
    let read_only = |title: &str| {
        ToolAnnotations::with_title(title)
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false)
    };
    let tool = |name: &'static str, description: String, input: Result<_, String>| {
        // The schemas come from our own types; one that does not build is a bug caught by
        // the unit test below, never by a user.
        Tool::new(name, description, input.unwrap_or_default())
    };
    vec![
        tool(
            "search",
            "Full-text search over every coding agent's past sessions: prompts, answers, tool \
             calls and outputs. One hit per turn, best first, each with how to open it. \
             Leaves out sessions active in the last 10 minutes unless include_active."
                .into(),
            schema_for_input::<SearchArgs>(),
        )
        .with_output_schema::<SearchOut>()
        .annotate(read_only("Search session history")),
        tool(
            "list_sessions",
            "Lists sessions, most recently active first, with filters. Page with next_cursor."
                .into(),
            schema_for_input::<ListArgs>(),
        )
        .with_output_schema::<ListOut>()
        .annotate(read_only("List sessions")),
        tool(
            "get_session",
            "Reads one session's transcript by exact id or unique id prefix, in pages: pass \
             next_cursor back for the rest. Optional turn range; tool input/output only with \
             tool_io."
                .into(),
            schema_for_input::<GetSessionArgs>(),
        )
        .with_output_schema::<SessionPageOut>()
        .annotate(read_only("Read a session")),
        tool(
            "file_history",
            "The sessions and turns that read, edited or created a file, newest first, with \
             the turn's prompt, the agent, the tool and the commits the session referenced."
                .into(),
            schema_for_input::<FileHistoryArgs>(),
        )
        .with_output_schema::<FileHistoryOut>()
        .annotate(read_only("File history")),
        tool(
            "session_diff",
            "What a session changed: unified diffs per file (from its edit tool calls, patches \
             and the file snapshots agents keep), optionally of one turn or one file."
                .into(),
            schema_for_input::<SessionDiffArgs>(),
        )
        .with_output_schema::<SessionDiffOut>()
        .annotate(read_only("Session diff")),
        tool(
            "sql",
            format!(
                "Runs one read-only SELECT on trail's SQLite store. {} Resource trail://schema \
                 describes every column.",
                trail_query::SQL_SCHEMA_SUMMARY
            ),
            schema_for_input::<SqlArgs>(),
        )
        .with_output_schema::<SqlOut>()
        .annotate(read_only("Read-only SQL")),
        tool(
            "report",
            "Report data to format, not recompute: usage (tokens, cost), standup (work by \
             repository and branch), tips (usage patterns), improve (where agents struggled, \
             with evidence)."
                .into(),
            schema_for_input::<ReportArgs>(),
        )
        .with_output_schema::<ReportOut>()
        .annotate(read_only("Reports")),
        tool(
            "continue_session",
            "Continues a session in another agent (claude-code, codex, gemini-cli): writes its \
             conversation as a new session in that agent's own folder (never changing an \
             existing file; a second call finds the first copy) and returns the command that \
             resumes it. Secrets are redacted."
                .into(),
            schema_for_input::<ContinueArgs>(),
        )
        .with_output_schema::<ContinueOut>()
        .annotate(
            ToolAnnotations::with_title("Continue in another agent")
                .read_only(false)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        ),
        tool(
            "index",
            "Indexes new and changed agent sessions into trail's store and returns a summary. \
             Writes only trail's own store; the agents' files are read, never changed."
                .into(),
            schema_for_input::<IndexArgs>(),
        )
        .with_output_schema::<IndexOut>()
        .annotate(
            ToolAnnotations::with_title("Index sessions")
                .read_only(false)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        ),
    ]
}

/// Reads a tool's arguments, naming what is wrong in words a model can act on.
pub fn parse_args<T: serde::de::DeserializeOwned + JsonSchema>(
    tool: &str,
    args: Option<serde_json::Map<String, Value>>,
) -> Result<T, ToolError> {
    let args = args.unwrap_or_default();
    let parsed = serde_json::from_value(Value::Object(args.clone()))
        .map_err(|e| ToolError(format!("invalid arguments for {tool}: {e}")))?;
    // serde cannot refuse unknown fields of a type with a flattened part (FilterArgs): the
    // schema the client sees names every field there is.
    let known = schema_properties::<T>();
    if let Some(k) = args.keys().find(|k| !known.contains(k)) {
        return Err(ToolError(format!(
            "invalid arguments for {tool}: unknown field `{k}`, expected one of {}",
            known
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(parsed)
}

/// The names of a tool input's fields, from its JSON Schema.
fn schema_properties<T: JsonSchema>() -> Vec<String> {
    fn collect(v: &Value, out: &mut Vec<String>) {
        if let Some(p) = v.get("properties").and_then(Value::as_object) {
            out.extend(p.keys().cloned());
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            for s in v.get(key).and_then(Value::as_array).into_iter().flatten() {
                collect(s, out);
            }
        }
    }
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    let mut out = Vec::new();
    collect(schema.as_value(), &mut out);
    out
}

/// Which sessions and when: the filter every tool that reads sessions takes, flattened into
/// its arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct FilterArgs {
    #[serde(default)]
    #[schemars(schema_with = "source_schema")]
    pub source: Option<String>,
    /// Repository (owner/name) or folder contains this.
    pub repo: Option<String>,
    /// From: 30m, 24h, 7d, 2026-11-01 or an RFC 3339 time (list: active from; standup report:
    /// the last 24 hours by default).
    pub since: Option<String>,
    /// Before (same forms as since; list: started before).
    pub until: Option<String>,
}

impl FilterArgs {
    /// The query layer's filter.
    fn session_filter(&self) -> SessionFilter {
        SessionFilter {
            source: self.source.clone(),
            repo: self.repo.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            ..SessionFilter::default()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// search

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Words (all must match), "a phrase", prefix*, OR, NOT.
    pub query: String,
    #[serde(flatten)]
    pub filter: FilterArgs,
    /// Folder contains this.
    pub cwd: Option<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// user, assistant or tool.
    pub role: Option<String>,
    /// Model name contains this.
    pub model: Option<String>,
    /// Only this session (id or prefix).
    pub session: Option<String>,
    /// Max hits (default 10, at most 50).
    pub limit: Option<u32>,
    /// Newest first instead of best first.
    pub recent: Option<bool>,
    /// Include sessions active in the last 10 minutes.
    pub include_active: Option<bool>,
    /// Your own session id, to leave out.
    pub exclude_session: Option<String>,
    /// Search the words as typed (no near spelling when a word matches nothing or little).
    pub exact: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchHitOut {
    pub session_id: String,
    /// Turn from 0.
    pub turn: Option<i64>,
    pub agent: String,
    pub when: Option<String>,
    pub title: Option<String>,
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub role: Option<String>,
    pub tool: Option<String>,
    /// Where it matched: text, tool_input or tool_output.
    pub field: String,
    /// Matched words between ** and **.
    pub snippet: String,
    /// The get_session call that opens this turn.
    pub open: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOut {
    pub hits: Vec<SearchHitOut>,
    /// Set when words of the query were replaced by near spellings found in the index (the
    /// query matched nothing or few turns): check that the hits are what you meant, or search
    /// again with exact: true.
    pub corrected: Option<CorrectedOut>,
    /// Why there are no (or fewer) hits, when that needs saying.
    pub note: Option<String>,
    pub store: StoreState,
}

/// Words of a search query replaced by near spellings.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CorrectedOut {
    /// The query searched instead of the one given.
    pub query: String,
    /// Each replaced word: as given, and as searched.
    pub words: Vec<ReplacedWord>,
    /// True: the query as given matched nothing, all hits are the corrected query's. False:
    /// it matched few turns, its hits come first.
    pub no_match: bool,
    /// What happened, in words (`no match for "imperal"; showing "imperial"`).
    pub message: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReplacedWord {
    pub given: String,
    pub searched: String,
}

impl CorrectedOut {
    fn new(c: &trail_query::Correction) -> CorrectedOut {
        CorrectedOut {
            query: c.query.clone(),
            words: c
                .words
                .iter()
                .map(|(given, searched)| ReplacedWord {
                    given: given.clone(),
                    searched: searched.clone(),
                })
                .collect(),
            no_match: c.no_match,
            message: c.message(),
        }
    }
}

pub fn search(cx: &Ctx<'_>, a: SearchArgs) -> ToolResult {
    let limit = a.limit.unwrap_or(10).clamp(1, 50) as usize;
    let include_active = a.include_active.unwrap_or(false);
    let filter = SessionFilter {
        cwd: a.cwd.clone(),
        branch: a.branch.clone(),
        model: a.model.clone(),
        ..a.filter.session_filter()
    };
    let request = SearchRequest {
        query: a.query.clone(),
        filter: filter.clone(),
        role: a.role.clone(),
        session: a.session.clone(),
        recent: a.recent.unwrap_or(false),
        limit,
        exclude_active_minutes: (!include_active).then_some(ACTIVE_MINUTES),
        exclude_sessions: a.exclude_session.clone().into_iter().collect(),
        exact: a.exact.unwrap_or(false),
    };
    let results = cx.query.search(&request, &cx.clock)?;
    let corrected = results.correction.as_ref().map(CorrectedOut::new);
    let hits: Vec<SearchHitOut> = results
        .hits
        .into_iter()
        .map(|h| SearchHitOut {
            open: open_call(&h.session_id, h.turn),
            session_id: h.session_id,
            turn: h.turn,
            agent: h.source,
            when: h.timestamp,
            title: h.title.map(|t| one_line(&t, 120)),
            repository: h.repository,
            branch: h.branch,
            role: h.role,
            tool: h.tool_name,
            field: h.field,
            snippet: mark_snippet(&h.snippet),
        })
        .collect();
    let mut note = None;
    if hits.is_empty() {
        note = Some(empty_reason(
            cx,
            &format!("Nothing matches {:?}", a.query),
            &filter_words(&filter, a.role.as_deref(), a.session.as_deref()),
            !include_active,
        )?);
    } else if results.capped {
        note = Some(format!(
            "The query matched more messages than are ranked ({}); add words or filters to sharpen it.",
            results.ranked
        ));
    }
    let mut out = SearchOut {
        hits,
        corrected,
        note,
        store: cx.store.clone(),
    };
    fit_list(cx, &mut out, |o| &mut o.hits, render_search)
}

fn render_search(o: &SearchOut) -> String {
    let mut t = String::new();
    if let Some(c) = &o.corrected {
        let _ = writeln!(t, "{}", c.message);
    }
    for h in &o.hits {
        let turn = h.turn.map(|n| format!(" turn {n}")).unwrap_or_default();
        let _ = writeln!(
            t,
            "- {}{turn} · {} · {} · {}",
            h.session_id,
            h.agent,
            h.when.as_deref().unwrap_or("?"),
            h.title.as_deref().unwrap_or("(untitled)")
        );
        if let Some(repo) = &h.repository {
            let branch = h
                .branch
                .as_deref()
                .map(|b| format!(" ({b})"))
                .unwrap_or_default();
            let _ = writeln!(t, "  {repo}{branch}");
        }
        let _ = writeln!(t, "  {}: {}", h.field, h.snippet);
        let _ = writeln!(t, "  open: {}", h.open);
    }
    finish_text(t, o.note.as_deref(), &o.store)
}

/// Returns the get_session call that opens `turn` of `session_id`.
fn open_call(session_id: &str, turn: Option<i64>) -> String {
    match turn {
        Some(n) => {
            format!("get_session {{\"id\": {session_id:?}, \"from_turn\": {n}, \"to_turn\": {n}}}")
        }
        None => format!("get_session {{\"id\": {session_id:?}}}"),
    }
}

/// Replaces the store's private-use match markers with Markdown bold.
fn mark_snippet(s: &str) -> String {
    one_line(&s.replace([HIT_START, HIT_END], "**"), 400)
}

// ---------------------------------------------------------------------------------------------
// list_sessions

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListArgs {
    #[serde(flatten)]
    pub filter: FilterArgs,
    /// Folder contains this.
    pub cwd: Option<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// Model name contains this.
    pub model: Option<String>,
    /// Include subagent sessions.
    pub include_subagents: Option<bool>,
    /// Max sessions (default 20, at most 100).
    pub limit: Option<u32>,
    /// next_cursor of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SessionOut {
    pub id: String,
    pub agent: String,
    pub title: Option<String>,
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub cwd: Option<String>,
    pub started: Option<String>,
    pub updated: Option<String>,
    pub turns: i64,
    pub messages: i64,
    pub models: Vec<String>,
    /// Input, output and cache tokens together.
    pub tokens: i64,
    /// The session that started this one (subagents).
    pub parent: Option<String>,
    /// The agent deleted its files; trail kept the session.
    pub source_missing: bool,
    /// A chat (a ChatGPT or Claude.ai data export), not a coding session; absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub chat: bool,
}

impl SessionOut {
    fn from_row(r: SessionRow) -> SessionOut {
        SessionOut {
            tokens: r.total_tokens(),
            id: r.id.0,
            agent: r.source.to_string(),
            title: r.title.map(|t| one_line(&t, 160)),
            repository: r.repository,
            branch: r.branch,
            cwd: r.cwd,
            started: r.created_at,
            updated: r.updated_at,
            turns: r.turns,
            messages: r.messages,
            models: r.models,
            parent: r.parent_session_id,
            source_missing: r.source_missing,
            chat: r.chat,
        }
    }

    fn line(&self) -> String {
        let mut s = format!(
            "{} · {} · {} · {} turns",
            self.id,
            self.agent,
            self.updated.as_deref().unwrap_or("?"),
            self.turns
        );
        if let Some(repo) = self.repository.as_deref().or(self.cwd.as_deref()) {
            let _ = write!(s, " · {repo}");
            if let Some(b) = &self.branch {
                let _ = write!(s, " ({b})");
            }
        }
        let _ = write!(s, " · {}", self.title.as_deref().unwrap_or("(untitled)"));
        if self.chat {
            s.push_str(" · chat");
        }
        s
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListOut {
    pub sessions: Vec<SessionOut>,
    /// Pass as cursor for the next page; none on the last page.
    pub next_cursor: Option<String>,
    pub note: Option<String>,
    pub store: StoreState,
}

pub fn list_sessions(cx: &Ctx<'_>, a: ListArgs) -> ToolResult {
    let filter = SessionFilter {
        cwd: a.cwd,
        branch: a.branch,
        model: a.model,
        ..a.filter.session_filter()
    };
    let request = ListRequest {
        filter: filter.clone(),
        include_subagents: a.include_subagents.unwrap_or(false),
        limit: a.limit.unwrap_or(20).clamp(1, 100) as usize,
        cursor: a.cursor.clone(),
        ..ListRequest::default()
    };
    let page = cx.query.list(&request, &cx.clock)?;
    let rows = page.sessions;
    let mut note = None;
    if rows.is_empty() {
        let what = if a.cursor.is_some() {
            "No more sessions after this cursor"
        } else {
            "No session matches"
        };
        note = Some(empty_reason(
            cx,
            what,
            &filter_words(&filter, None, None),
            false,
        )?);
    }
    let mut out = ListOut {
        sessions: Vec::new(),
        next_cursor: page.next_cursor,
        note,
        store: cx.store.clone(),
    };
    // Keep as many sessions as fit the cap; a cut page continues after its last session.
    let all: Vec<SessionOut> = rows.iter().cloned().map(SessionOut::from_row).collect();
    let kept = fit_count(cx, all.len(), |n| {
        out.sessions = all[..n].to_vec();
        to_output(&out, render_list)
    });
    if kept < rows.len() {
        out.next_cursor = rows[..kept].last().map(trail_query::cursor_after);
        out.note = Some(format!(
            "{} more sessions on this page were left out to stay under {} characters; continue with next_cursor.",
            rows.len() - kept,
            cx.max_chars
        ));
    }
    out.sessions = all.into_iter().take(kept).collect();
    Ok(to_output(&out, render_list))
}

fn render_list(o: &ListOut) -> String {
    let mut t = String::new();
    for s in &o.sessions {
        let _ = writeln!(t, "- {}", s.line());
    }
    if let Some(c) = &o.next_cursor {
        let _ = writeln!(t, "More: list_sessions with cursor {c:?}");
    }
    finish_text(t, o.note.as_deref(), &o.store)
}

// ---------------------------------------------------------------------------------------------
// get_session

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetSessionArgs {
    /// Exact session id or a unique prefix.
    pub id: String,
    /// First turn (from 0).
    pub from_turn: Option<i64>,
    /// Last turn (inclusive).
    pub to_turn: Option<i64>,
    /// Include tool input and output (default false: only their sizes).
    pub tool_io: Option<bool>,
    /// next_cursor of the previous page.
    pub cursor: Option<String>,
}

/// One message, or the part of it that fits this page.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MessageOut {
    pub seq: i64,
    pub turn: Option<i64>,
    pub role: Option<String>,
    pub kind: Option<String>,
    pub tool: Option<String>,
    /// A tool call's command, path or pattern, in one line.
    pub summary: Option<String>,
    pub is_error: bool,
    pub when: Option<String>,
    pub text: Option<String>,
    pub tool_input: Option<String>,
    pub tool_output: Option<String>,
    /// Size of the tool input left out (tool_io false), in UTF-8 bytes.
    pub tool_input_bytes: Option<usize>,
    /// Size of the tool output left out (tool_io false), in UTF-8 bytes.
    pub tool_output_bytes: Option<usize>,
    /// Set when a long field is split across pages.
    pub part: Option<PartOut>,
}

/// Which piece of a long field this message carries.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PartOut {
    /// text, tool_input or tool_output.
    pub field: String,
    /// Where this piece starts in the whole field (UTF-8 bytes).
    pub offset: usize,
    /// Size of the whole field (UTF-8 bytes).
    pub total: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionPageOut {
    pub session: SessionOut,
    pub messages: Vec<MessageOut>,
    /// Pass as cursor (with the same id, turns and tool_io) for the rest; none when done.
    pub next_cursor: Option<String>,
    /// Subagent session ids (first page only).
    pub subagents: Vec<String>,
    pub note: Option<String>,
    pub store: StoreState,
}

/// Subagent ids a first page lists at most (list_sessions with include_subagents has them all).
const MAX_SUBAGENTS_LISTED: usize = 20;

const FIELDS: [&str; 3] = ["text", "tool_input", "tool_output"];

/// Where a page starts: a message, one of its fields, a character offset in that field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Position {
    seq: i64,
    field: usize,
    offset: usize,
}

impl Position {
    fn encode(self) -> String {
        format!("m{}.{}.{}", self.seq, self.field, self.offset)
    }

    fn decode(s: &str) -> Result<Position, ToolError> {
        let bad = || ToolError(format!("{s:?} is not a cursor get_session gave out"));
        let rest = s.strip_prefix('m').ok_or_else(bad)?;
        let mut parts = rest.split('.');
        let seq = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let field: usize = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let offset = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        if field >= FIELDS.len() || parts.next().is_some() {
            return Err(bad());
        }
        Ok(Position { seq, field, offset })
    }
}

/// A message with its fields redacted whole (so that no secret is cut in two across pages).
pub struct FullMessage {
    head: MessageOut,
    fields: [Option<String>; 3],
}

/// The message get_session last cut between pages, redacted: a 10 MB tool output is redacted
/// once, not once per page.
pub struct SplitMessage {
    key: String,
    message: Arc<FullMessage>,
}

/// The message get_session last cut between pages.
pub type CacheSlot = std::sync::Mutex<Option<SplitMessage>>;

pub fn get_session(cx: &Ctx<'_>, cache: &CacheSlot, a: GetSessionArgs) -> ToolResult {
    let tool_io = a.tool_io.unwrap_or(false);
    let start = a.cursor.as_deref().map(Position::decode).transpose()?;
    let row = cx.query.session(&a.id)?;
    let first_page = start.is_none();
    let subagents: Vec<String> = if first_page {
        cx.query
            .children(&row.id)?
            .into_iter()
            .take(MAX_SUBAGENTS_LISTED)
            .map(|s| s.id.0)
            .collect()
    } else {
        Vec::new()
    };
    let start = start.unwrap_or(Position {
        seq: i64::MIN,
        field: 0,
        offset: 0,
    });
    let key_of = |seq: i64| {
        format!(
            "{}\n{seq}\n{tool_io}\n{:?}",
            row.id, cx.store.last_indexed_at
        )
    };
    let cached = cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .map(|c| (c.key.clone(), c.message.clone()));
    // Read only what one page can show: a page holds at most `max_chars` characters, each at
    // least two on the wire (JSON and text) and at most four bytes, so past 2 * max_chars
    // bytes of fields the page is surely full.
    let range = (a.from_turn.is_some() || a.to_turn.is_some())
        .then(|| (a.from_turn.unwrap_or(0), a.to_turn.unwrap_or(i64::MAX)));
    let limit = cx.max_chars.saturating_mul(2);
    let mut messages: Vec<Arc<FullMessage>> = Vec::new();
    let mut bytes = 0usize;
    cx.query
        .messages_from(&row, a.from_turn, a.to_turn, start.seq, |m| {
            let wanted = m.on_main_chain
                && match range {
                    Some((lo, hi)) => m.turn_index.is_some_and(|t| t >= lo && t <= hi),
                    // Messages before the first prompt (system context) only with tool_io.
                    None => m.turn_index.is_some() || tool_io,
                };
            if !wanted {
                return true;
            }
            let full = match &cached {
                Some((key, message)) if *key == key_of(m.seq) => message.clone(),
                _ => Arc::new(full_message(cx.redactor, m, tool_io)),
            };
            let skip = if full.head.seq == start.seq {
                start.offset
            } else {
                0
            };
            bytes += full
                .fields
                .iter()
                .flatten()
                .map(|f| f.len())
                .sum::<usize>()
                .saturating_sub(skip);
            messages.push(full);
            bytes <= limit
        })?;
    let mut out = SessionPageOut {
        session: SessionOut::from_row(row.clone()),
        messages: Vec::new(),
        next_cursor: None,
        subagents,
        note: None,
        store: cx.store.clone(),
    };
    if messages.is_empty() {
        out.note = Some(if first_page {
            "This session has no messages in that range.".to_string()
        } else {
            "Nothing after this cursor: the session is complete.".to_string()
        });
        return Ok(to_output(&out, render_page));
    }
    // Build the page against a budget; if the exact size still exceeds the cap (the estimate
    // is per piece), build again with the overshoot taken off.
    let mut budget = cx.max_chars;
    for _ in 0..8 {
        fill_page(&mut out, &messages, start, budget, cx.max_chars);
        let stuck = out.next_cursor.is_some() && out.next_cursor.as_deref() == a.cursor.as_deref();
        if out.messages.is_empty() || stuck {
            break;
        }
        let mut output = to_output(&out, render_page);
        output.redact(cx.redactor);
        let size = output.chars();
        if size <= cx.max_chars {
            // Keep the message the page cut, for the next page.
            if let Some(next) = out
                .next_cursor
                .as_deref()
                .and_then(|c| Position::decode(c).ok())
            {
                if let Some(m) = messages.iter().find(|m| m.head.seq == next.seq) {
                    *cache.lock().unwrap_or_else(|p| p.into_inner()) = Some(SplitMessage {
                        key: key_of(next.seq),
                        message: m.clone(),
                    });
                }
            }
            return Ok(output);
        }
        budget = budget.saturating_sub(size - cx.max_chars + 256);
    }
    Err(ToolError(format!(
        "could not fit a page of this session in {} characters; raise --max-chars",
        cx.max_chars
    )))
}

/// Shapes one stored message, its fields redacted whole (tool input and output only with
/// `tool_io`; otherwise their sizes and, for a call, its one-line summary).
fn full_message(redactor: &Redactor, m: trail_query::MessageRow, tool_io: bool) -> FullMessage {
    let mut counts = trail_render::RedactionCounts::default();
    let mut redact = |s: Option<String>| -> Option<String> {
        s.map(|s| match redactor.redact(&s, &mut counts) {
            std::borrow::Cow::Owned(r) => r,
            std::borrow::Cow::Borrowed(_) => s,
        })
    };
    let sizes = |s: &Option<String>| s.as_deref().map(str::len).filter(|n| *n > 0);
    let (input_size, output_size) = (sizes(&m.tool_input), sizes(&m.tool_output));
    let summary = m
        .tool_input
        .as_deref()
        .filter(|_| m.kind == Some(trail_model::MessageKind::ToolCall))
        .map(trail_render::tool_summary)
        .filter(|s| !s.is_empty());
    let (tool_input, tool_output) = if tool_io {
        (redact(m.tool_input), redact(m.tool_output))
    } else {
        (None, None)
    };
    FullMessage {
        head: MessageOut {
            seq: m.seq,
            turn: m.turn_index,
            role: m.role.map(|r| r.as_str().to_string()),
            kind: m.kind.map(|k| k.as_str().to_string()),
            tool: m.tool_name,
            summary: redact(summary),
            is_error: m.is_error,
            when: m.timestamp,
            text: None,
            tool_input: None,
            tool_output: None,
            tool_input_bytes: if tool_io { None } else { input_size },
            tool_output_bytes: if tool_io { None } else { output_size },
            part: None,
        },
        fields: [redact(m.text), tool_input, tool_output],
    }
}

/// Fills `out.messages` from `start` with what fits `budget` characters, and sets the cursor.
fn fill_page(
    out: &mut SessionPageOut,
    messages: &[Arc<FullMessage>],
    start: Position,
    budget: usize,
    cap: usize,
) {
    out.messages.clear();
    out.next_cursor = Some(
        Position {
            seq: i64::MAX,
            field: 0,
            offset: usize::MAX,
        }
        .encode(),
    );
    // What the page costs without messages (with the longest cursor it could carry).
    let base = to_output(out, render_page).chars() + 16;
    out.next_cursor = None;
    let mut left = budget.saturating_sub(base);
    // A piece smaller than this is not worth a page of its own: stop and continue next page.
    let min_piece = (cap / 10).max(200);
    let mut previous_turn = None;
    for m in messages {
        let (from_field, from_offset) = if m.head.seq == start.seq {
            (start.field, start.offset)
        } else {
            (0, 0)
        };
        let rest = |i: usize| -> Option<&str> {
            let f = m.fields[i].as_deref()?;
            if i < from_field {
                None
            } else if i == from_field {
                Some(f.get(from_offset.min(f.len())..).unwrap_or(""))
            } else {
                Some(f)
            }
        };
        // Every character costs at least two (JSON and text); a UTF-8 character is at most
        // four bytes: a piece of more than 2 * left bytes cannot fit whole.
        let bytes: usize = (0..3).filter_map(rest).map(str::len).sum();
        if bytes <= left.saturating_mul(2) {
            let mut piece = m.head.clone();
            for i in 0..3 {
                set_field(&mut piece, i, rest(i).map(str::to_string));
            }
            if from_offset > 0 {
                piece.part = m.fields[from_field].as_deref().map(|f| PartOut {
                    field: FIELDS[from_field].to_string(),
                    offset: from_offset,
                    total: f.len(),
                });
            }
            let cost = piece_cost(&piece, previous_turn);
            if cost <= left {
                left -= cost;
                previous_turn = piece.turn;
                out.messages.push(piece);
                continue;
            }
        }
        if !out.messages.is_empty() && left < min_piece {
            out.next_cursor = Some(
                Position {
                    seq: m.head.seq,
                    field: from_field,
                    offset: from_offset,
                }
                .encode(),
            );
            return;
        }
        let (piece, next) = cut_piece(m, from_field, from_offset, left, previous_turn);
        out.messages.push(piece);
        out.next_cursor = next.map(Position::encode);
        return;
    }
}

/// Returns as much of `m` (from `from_field` at byte `from_offset`) as costs at most `left`,
/// and where the next page starts (none when the message ended after all).
fn cut_piece(
    m: &FullMessage,
    from_field: usize,
    from_offset: usize,
    left: usize,
    previous_turn: Option<i64>,
) -> (MessageOut, Option<Position>) {
    let mut piece = m.head.clone();
    for (i, (field, name)) in m.fields.iter().zip(FIELDS).enumerate().skip(from_field) {
        let Some(whole) = field.as_deref() else {
            continue;
        };
        let offset = if i == from_field { from_offset } else { 0 };
        // A cursor always points at a character boundary; a forged one gets the empty rest.
        let rest = whole.get(offset..).unwrap_or("");
        if rest.len() <= left.saturating_mul(2) {
            set_field(&mut piece, i, Some(rest.to_string()));
            if piece_cost(&piece, previous_turn) <= left {
                continue;
            }
        }
        // This field overflows: keep as many of its characters as fit.
        set_field(&mut piece, i, Some(String::new()));
        piece.part = Some(PartOut {
            field: name.to_string(),
            offset,
            total: whole.len(),
        });
        let room = left.saturating_sub(piece_cost(&piece, previous_turn));
        let mut taken = 0usize;
        let mut cost = 0usize;
        for c in rest.chars() {
            // Each character appears in the JSON (escaped) and in the text.
            let c_cost = 1 + match c {
                '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
                c if (c as u32) < 0x20 => 6,
                _ => 1,
            };
            if cost + c_cost > room {
                break;
            }
            cost += c_cost;
            taken += c.len_utf8();
        }
        set_field(&mut piece, i, Some(rest[..taken].to_string()));
        let next = Position {
            seq: m.head.seq,
            field: i,
            offset: offset + taken,
        };
        return (piece, Some(next));
    }
    (piece, None)
}

fn set_field(m: &mut MessageOut, i: usize, value: Option<String>) {
    match i {
        0 => m.text = value,
        1 => m.tool_input = value,
        _ => m.tool_output = value,
    }
}

/// What one message adds to a page: its JSON (and a comma) plus its text rendering.
fn piece_cost(piece: &MessageOut, previous_turn: Option<i64>) -> usize {
    let json = serde_json::to_value(piece)
        .map(|v| json_chars(&v))
        .unwrap_or(0);
    json + 1 + render_message(piece, previous_turn).chars().count()
}

fn render_message(m: &MessageOut, previous_turn: Option<i64>) -> String {
    let mut t = String::new();
    if m.turn != previous_turn {
        match m.turn {
            Some(n) => {
                let _ = writeln!(t, "\n## Turn {n} · {}", m.when.as_deref().unwrap_or("?"));
            }
            None => {
                let _ = writeln!(t, "\n## Before the first prompt");
            }
        }
    }
    let who = match (m.kind.as_deref(), m.tool.as_deref()) {
        (Some(k @ ("tool_call" | "tool_result")), Some(tool)) => {
            format!("{k} {tool}{}", if m.is_error { " (error)" } else { "" })
        }
        (Some(k), _) => k.to_string(),
        (None, _) => m.role.clone().unwrap_or_else(|| "message".into()),
    };
    let part = m
        .part
        .as_ref()
        .map(|p| format!(" [{} from byte {} of {}]", p.field, p.offset, p.total))
        .unwrap_or_default();
    match &m.summary {
        Some(summary) => {
            let _ = writeln!(t, "[{} #{}{part}] {summary}", who, m.seq);
        }
        None => {
            let _ = writeln!(t, "[{} #{}{part}]", who, m.seq);
        }
    }
    if let Some(s) = &m.text {
        let _ = writeln!(t, "{s}");
    }
    if let Some(s) = &m.tool_input {
        let _ = writeln!(t, "input: {s}");
    }
    if let Some(s) = &m.tool_output {
        let _ = writeln!(t, "output: {s}");
    }
    let mut sizes = Vec::new();
    if let Some(n) = m.tool_input_bytes {
        sizes.push(format!("input {n} bytes"));
    }
    if let Some(n) = m.tool_output_bytes {
        sizes.push(format!("output {n} bytes"));
    }
    if !sizes.is_empty() {
        let _ = writeln!(t, "({}; tool_io: true shows them)", sizes.join(", "));
    }
    t
}

fn render_page(o: &SessionPageOut) -> String {
    let mut t = format!("# {}\n", o.session.line());
    if !o.subagents.is_empty() {
        let _ = writeln!(t, "Subagents: {}", o.subagents.join(", "));
    }
    let mut previous = None;
    for m in &o.messages {
        t.push_str(&render_message(m, previous));
        previous = m.turn;
    }
    if let Some(c) = &o.next_cursor {
        let _ = writeln!(t, "\nMore: get_session with cursor {c:?}");
    }
    finish_text(t, o.note.as_deref(), &o.store)
}

// ---------------------------------------------------------------------------------------------
// session_diff

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionDiffArgs {
    /// Session id or unique id prefix.
    pub session_id: String,
    /// Only the changes of this turn (from 0).
    pub turn: Option<u32>,
    /// Only this file (its path, or its end: src/main.rs).
    pub path: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ChangeOut {
    pub turn: Option<u32>,
    /// The tool, or the snapshot's origin.
    pub source: String,
    /// created, modified, deleted or renamed.
    pub kind: String,
    /// Whole-file diff (real line numbers), else of the edited text only.
    pub exact: bool,
    pub when: Option<String>,
    /// Unified diff.
    pub diff: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileDiffOut {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    pub changes: Vec<ChangeOut>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionDiffOut {
    pub session_id: String,
    pub turn: Option<u32>,
    pub files: Vec<FileDiffOut>,
    pub added: usize,
    pub removed: usize,
    pub note: Option<String>,
    pub store: StoreState,
}

impl Cuttable for SessionDiffOut {
    fn mark_cut(&mut self, note: String) {
        self.note = Some(note);
    }
}

pub fn session_diff(cx: &Ctx<'_>, a: SessionDiffArgs) -> ToolResult {
    let id = cx.query.resolve_id(&a.session_id)?;
    let mut diff = cx.query.session_diff_of(&id, a.turn)?;
    if let Some(p) = a.path.as_deref().filter(|p| !p.is_empty()) {
        let keep = diff.for_path(p).cloned();
        diff.files = keep.into_iter().collect();
        diff.added = diff.files.iter().map(|f| f.added).sum();
        diff.removed = diff.files.iter().map(|f| f.removed).sum();
    }
    let files: Vec<FileDiffOut> = diff
        .files
        .into_iter()
        .map(|f| FileDiffOut {
            path: f.path,
            added: f.added,
            removed: f.removed,
            changes: f
                .changes
                .into_iter()
                .map(|c| ChangeOut {
                    turn: c.turn,
                    source: c.source,
                    kind: serde_json::to_value(c.kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    exact: c.exact,
                    when: c.timestamp,
                    diff: c.diff,
                })
                .collect(),
        })
        .collect();
    let note = files.is_empty().then(|| {
        "The session changed no file that its records show (trail reads edit tool calls, \
         patches and the file snapshots agents keep)."
            .to_string()
    });
    let mut out = SessionDiffOut {
        session_id: id,
        turn: a.turn,
        added: diff.added,
        removed: diff.removed,
        files,
        note,
        store: cx.store.clone(),
    };
    fit_list(cx, &mut out, |o| &mut o.files, render_diff)
}

fn render_diff(o: &SessionDiffOut) -> String {
    let mut t = format!(
        "Changes of {}{}: {} files, +{} -{}\n",
        o.session_id,
        o.turn.map(|n| format!(" turn {n}")).unwrap_or_default(),
        o.files.len(),
        o.added,
        o.removed
    );
    for f in &o.files {
        let _ = writeln!(t, "\n{} (+{} -{})", f.path, f.added, f.removed);
        for c in &f.changes {
            let turn = c
                .turn
                .map(|n| format!("turn {n}"))
                .unwrap_or("turn -".into());
            let exact = if c.exact { "" } else { " (edited text only)" };
            let _ = writeln!(t, "{turn} · {} · {}{exact}", c.source, c.kind);
            t.push_str(&c.diff);
        }
    }
    finish_text(t, o.note.as_deref(), &o.store)
}

// ---------------------------------------------------------------------------------------------
// file_history

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileHistoryArgs {
    /// Absolute path, or relative to the root of repo.
    pub path: String,
    /// Repository (owner/name) a relative path belongs to.
    pub repo: Option<String>,
    /// Max turns (default 20, at most 100).
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TouchOut {
    pub session_id: String,
    pub turn: Option<i64>,
    pub agent: String,
    pub when: Option<String>,
    /// read, edit, write or mention.
    pub action: String,
    pub tool: Option<String>,
    /// The turn's prompt (cut).
    pub prompt: Option<String>,
    /// Commits the session referenced.
    pub commits: Vec<String>,
    pub title: Option<String>,
    pub repository: Option<String>,
    pub branch: Option<String>,
    /// The path as the session recorded it.
    pub file_path: String,
    pub open: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileOut {
    pub absolute: Option<String>,
    pub relative: Option<String>,
    pub repository: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FileHistoryOut {
    pub file: FileOut,
    pub touches: Vec<TouchOut>,
    pub note: Option<String>,
    pub store: StoreState,
}

pub fn file_history(cx: &Ctx<'_>, a: FileHistoryArgs) -> ToolResult {
    let history = cx.query.file_history(&FileHistoryRequest {
        path: a.path.clone(),
        repo: a.repo.clone(),
        base_dir: None,
        limit: a.limit.unwrap_or(20).clamp(1, 100) as usize,
    })?;
    let touches: Vec<TouchOut> = history
        .touches
        .into_iter()
        .map(|t| TouchOut {
            open: open_call(&t.session_id, t.turn),
            session_id: t.session_id,
            turn: t.turn,
            agent: t.source,
            when: t.timestamp,
            action: t.action,
            tool: t.tool_name,
            prompt: t.prompt.map(|p| one_line(&p, 300)),
            commits: t.commits,
            title: t.title.map(|s| one_line(&s, 120)),
            repository: t.repository,
            branch: t.branch,
            file_path: t.file_path,
        })
        .collect();
    let note = if touches.is_empty() {
        let mut what = format!("No session read, edited or created {:?}", a.path);
        if let Some(r) = &a.repo {
            let _ = write!(what, " in {r}");
        }
        let hint = if a.path.starts_with('/') || a.repo.is_some() {
            String::new()
        } else {
            "a relative path needs repo (owner/name), or give the absolute path".to_string()
        };
        Some(empty_reason(cx, &what, &hint, false)?)
    } else {
        None
    };
    let mut out = FileHistoryOut {
        file: FileOut {
            absolute: history.absolute,
            relative: history.relative,
            repository: history.repository,
        },
        touches,
        note,
        store: cx.store.clone(),
    };
    fit_list(cx, &mut out, |o| &mut o.touches, render_history)
}

fn render_history(o: &FileHistoryOut) -> String {
    let name = o
        .file
        .absolute
        .as_deref()
        .or(o.file.relative.as_deref())
        .unwrap_or("?");
    let mut t = format!("History of {name}\n");
    for h in &o.touches {
        let turn = h.turn.map(|n| format!(" turn {n}")).unwrap_or_default();
        let _ = writeln!(
            t,
            "- {} {} · {}{turn} · {} · {}",
            h.when.as_deref().unwrap_or("?"),
            h.action,
            h.session_id,
            h.agent,
            h.tool.as_deref().unwrap_or("")
        );
        if let Some(p) = &h.prompt {
            let _ = writeln!(t, "  prompt: {p}");
        }
        if !h.commits.is_empty() {
            let _ = writeln!(t, "  commits: {}", h.commits.join(", "));
        }
    }
    finish_text(t, o.note.as_deref(), &o.store)
}

// ---------------------------------------------------------------------------------------------
// sql

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SqlArgs {
    /// One SELECT (or WITH ... SELECT) statement.
    pub sql: String,
    /// Max rows (default 100, at most 1000).
    pub max_rows: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SqlOut {
    pub columns: Vec<String>,
    /// Rows of values (text, number or null; blobs as their size).
    pub rows: Vec<Vec<Value>>,
    /// More rows exist than were returned.
    pub truncated: bool,
    pub elapsed_ms: u64,
    pub note: Option<String>,
    pub store: StoreState,
}

/// Characters of one cell sent at most (a cut cell ends with `…`).
const MAX_CELL_CHARS: usize = 2_000;

pub fn sql(cx: &Ctx<'_>, a: SqlArgs) -> ToolResult {
    let max_rows = a.max_rows.unwrap_or(100).clamp(1, 1000) as usize;
    let request = SqlRequest::new(a.sql).with_caps(max_rows, std::time::Duration::from_secs(10));
    let result = cx.query.sql(&request)?;
    let rows: Vec<Vec<Value>> = result
        .rows
        .iter()
        .map(|row| row.iter().map(cell_value).collect())
        .collect();
    let note = if rows.is_empty() {
        Some("The query returned no rows.".to_string())
    } else if result.truncated {
        Some(format!(
            "Only the first {} rows; raise max_rows or narrow the query.",
            rows.len()
        ))
    } else {
        None
    };
    let mut out = SqlOut {
        columns: result.columns,
        rows,
        truncated: result.truncated,
        elapsed_ms: result.elapsed_ms,
        note,
        store: cx.store.clone(),
    };
    fit_list(cx, &mut out, |o| &mut o.rows, render_sql)
}

fn cell_value(c: &Cell) -> Value {
    match c {
        Cell::Null => Value::Null,
        Cell::Integer(v) => Value::from(*v),
        Cell::Real(v) => serde_json::Number::from_f64(*v)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        Cell::Text(t) => {
            if t.chars().count() > MAX_CELL_CHARS {
                Value::from(format!("{}…", cut(t, MAX_CELL_CHARS)))
            } else {
                Value::from(t.as_str())
            }
        }
        Cell::Blob { blob_bytes } => Value::from(format!("<blob {blob_bytes} bytes>")),
    }
}

fn render_sql(o: &SqlOut) -> String {
    let mut t = o.columns.join(" | ");
    t.push('\n');
    for row in &o.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|v| match v {
                Value::String(s) => one_line(s, 200),
                Value::Null => "NULL".to_string(),
                v => v.to_string(),
            })
            .collect();
        let _ = writeln!(t, "{}", cells.join(" | "));
    }
    let _ = writeln!(
        t,
        "({} rows{}, {} ms)",
        o.rows.len(),
        if o.truncated { ", truncated" } else { "" },
        o.elapsed_ms
    );
    finish_text(t, o.note.as_deref(), &o.store)
}

// ---------------------------------------------------------------------------------------------
// report

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ReportKindArg {
    Usage,
    Standup,
    Tips,
    Improve,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReportArgs {
    pub kind: ReportKindArg,
    #[serde(flatten)]
    pub filter: FilterArgs,
    /// Time zone of days: UTC (default), local, +05:30, Europe/Paris.
    pub tz: Option<String>,
    /// usage only: day (default), week, month, model, session, repo or source.
    pub by: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReportOut {
    pub kind: ReportKindArg,
    /// The report's data (the same shape as `trail <kind> --json`).
    pub data: Option<serde_json::Map<String, Value>>,
    pub note: Option<String>,
    pub store: StoreState,
}

/// Computes a report: its data and its Markdown rendering.
pub fn report_data(
    query: &Query,
    clock: &Clock,
    kind: ReportKindArg,
    filter: &ReportFilter,
    by: Option<&str>,
) -> Result<(Value, String), ToolError> {
    let prices = PriceTable::shipped();
    Ok(match kind {
        ReportKindArg::Usage => {
            let group = trail_query::parse_group(by.unwrap_or("day"))?;
            let r = query.usage(filter, group, prices, clock)?;
            (serde_json::to_value(&r)?, markdown::usage(&r))
        }
        ReportKindArg::Standup => {
            let r = query.standup(filter, clock)?;
            (serde_json::to_value(&r)?, markdown::standup(&r))
        }
        ReportKindArg::Tips => {
            let r = query.tips(filter, prices, clock)?;
            (serde_json::to_value(&r)?, markdown::tips(&r))
        }
        ReportKindArg::Improve => {
            let r = query.improve(filter, clock)?;
            (serde_json::to_value(&r)?, markdown::improve(&r))
        }
    })
}

pub fn report(cx: &Ctx<'_>, a: ReportArgs) -> ToolResult {
    if a.by.is_some() && a.kind != ReportKindArg::Usage {
        return Err(ToolError("`by` applies to the usage report only".into()));
    }
    let filter = ReportFilter {
        filter: a.filter.session_filter(),
        tz: a.tz,
    };
    let (data, text) = report_data(cx.query, &cx.clock, a.kind, &filter, a.by.as_deref())?;
    let data = match data {
        Value::Object(map) => map,
        other => {
            let mut map = serde_json::Map::new();
            map.insert("value".into(), other);
            map
        }
    };
    let mut out = ReportOut {
        kind: a.kind,
        data: Some(data),
        note: None,
        store: cx.store.clone(),
    };
    let render = |o: &ReportOut, text: &str| {
        finish_text(
            text.trim_end().to_string() + "\n",
            o.note.as_deref(),
            &o.store,
        )
    };
    let output = ToolOutput::new(&out, render(&out, &text));
    if output.chars() <= cx.max_chars {
        return Ok(output);
    }
    // Too big for one answer: keep whichever of data and text fits, and say how to narrow it.
    out.note = Some(format!(
        "The report is larger than {} characters; narrow it with since/until, source or repo.",
        cx.max_chars
    ));
    let data = out.data.take();
    let without = ToolOutput::new(&out, render(&out, ""));
    let room = cx.max_chars.saturating_sub(without.chars() + 64);
    let data_chars = data
        .as_ref()
        .map(|d| json_chars(&Value::Object(d.clone())))
        .unwrap_or(0);
    if data_chars <= room / 2 {
        out.data = data;
        let room = room.saturating_sub(data_chars);
        let short = format!("{}…\n", cut(&text, room.saturating_sub(2)));
        return Ok(ToolOutput::new(&out, render(&out, &short)));
    }
    let short = format!("{}…\n", cut(&text, room.saturating_sub(2)));
    Ok(ToolOutput::new(&out, render(&out, &short)))
}

// ---------------------------------------------------------------------------------------------
// continue_session

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContinueArgs {
    /// Session id or unique prefix.
    pub id: String,
    /// claude-code, codex or gemini-cli.
    pub agent: String,
    /// Write another copy even if one was written before.
    pub fresh: Option<bool>,
    /// Absolute folder to continue in when the session recorded none.
    pub cwd: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CarriedOut {
    pub prompts: usize,
    pub answers: usize,
    pub tool_calls: usize,
    /// Tool outputs cut at the size cap.
    pub cut: usize,
    pub redactions: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ContinueOut {
    pub original_id: String,
    pub original_agent: String,
    pub agent: String,
    /// The new session's id in that agent.
    pub session_id: String,
    /// The file written (or found).
    pub path: String,
    /// False when an earlier call had already written it.
    pub created: bool,
    /// The shell command that resumes it, run in `cwd`.
    pub command: String,
    pub cwd: Option<String>,
    pub carried: CarriedOut,
    pub store: StoreState,
}

/// Continues a session in another agent with the options `trail resume --in` uses.
pub fn continue_session(
    cx: &Ctx<'_>,
    homes: &trail_continue::TargetHomes,
    redact: bool,
    a: ContinueArgs,
) -> ToolResult {
    let target: trail_continue::Target = a
        .agent
        .parse()
        .map_err(|e: trail_continue::ContinueError| ToolError(e.to_string()))?;
    if let Some(dir) = &a.cwd {
        if !std::path::Path::new(dir).is_absolute() {
            return Err(ToolError(format!(
                "cwd must be an absolute folder, not {dir:?}"
            )));
        }
    }
    let mut options =
        trail_continue::ContinueOptions::new(homes.clone()).map_err(continue_error)?;
    options.fresh = a.fresh.unwrap_or(false);
    options.cwd = a.cwd;
    if !redact {
        options.redactor = Redactor::disabled();
    }
    let c = trail_continue::continue_session(cx.query, &a.id, target, &options)
        .map_err(continue_error)?;
    let out = ContinueOut {
        original_id: c.original_id,
        original_agent: c.original_source,
        agent: c.target.to_string(),
        session_id: c.session_id,
        path: c.path.to_string_lossy().into_owned(),
        created: c.created,
        command: c.command.shell(),
        cwd: c.command.cwd.clone(),
        carried: CarriedOut {
            prompts: c.carried.prompts,
            answers: c.carried.answers,
            tool_calls: c.carried.tool_calls,
            cut: c.carried.cut,
            redactions: c.carried.redactions,
        },
        store: cx.store.clone(),
    };
    Ok(to_output(&out, |o| {
        let what = if o.created {
            "Wrote"
        } else {
            "Found the copy written before:"
        };
        let mut t = format!(
            "{what} {} ({} prompts, {} answers, {} tool calls) as {} session {}.\nTo resume it{}: {}\n",
            o.path,
            o.carried.prompts,
            o.carried.answers,
            o.carried.tool_calls,
            o.agent,
            o.session_id,
            o.cwd.as_deref().map(|d| format!(" in {d}")).unwrap_or_default(),
            o.command
        );
        if o.carried.redactions > 0 {
            let _ = writeln!(t, "{} secrets were redacted.", o.carried.redactions);
        }
        finish_text(t, None, &o.store)
    }))
}

fn continue_error(e: trail_continue::ContinueError) -> ToolError {
    match e {
        trail_continue::ContinueError::Query(q) => q.into(),
        other => ToolError(other.to_string()),
    }
}

// ---------------------------------------------------------------------------------------------
// index

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexArgs {
    #[serde(default)]
    #[schemars(schema_with = "source_schema")]
    pub source: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct IndexOut {
    pub sessions_new: u64,
    pub sessions_updated: u64,
    pub files_seen: u64,
    pub files_parsed: u64,
    pub files_resumed: u64,
    pub files_unchanged: u64,
    pub files_failed: u64,
    /// Files gone from disk; their sessions are kept.
    pub files_missing: u64,
    pub elapsed_ms: u64,
    /// Sessions in the store now.
    pub total_sessions: i64,
    /// Parse problems found (file:line: reason), the first few.
    pub problems: Vec<String>,
    pub problem_count: usize,
    pub store: StoreState,
}

/// Shapes an index run's summary.
pub fn index_output(
    summary: &trail_ingest::IndexSummary,
    total_sessions: i64,
    store: StoreState,
) -> ToolOutput {
    let problems: Vec<String> = summary
        .issues
        .iter()
        .take(10)
        .map(|i| match i.line {
            Some(l) => format!("{}:{l}: {}", i.path, i.reason),
            None => format!("{}: {}", i.path, i.reason),
        })
        .chain(
            summary
                .failures
                .iter()
                .take(5)
                .map(|(p, e)| format!("{p}: could not be read: {e}")),
        )
        .collect();
    let out = IndexOut {
        sessions_new: summary.sessions_new,
        sessions_updated: summary.sessions_updated,
        files_seen: summary.files_seen,
        files_parsed: summary.files_parsed,
        files_resumed: summary.files_resumed,
        files_unchanged: summary.files_unchanged,
        files_failed: summary.files_failed,
        files_missing: summary.files_missing,
        elapsed_ms: summary.elapsed_ms,
        total_sessions,
        problem_count: summary.issues.len() + summary.failures.len(),
        problems,
        store,
    };
    let mut t = format!(
        "Indexed {} new and {} updated sessions from {} files in {:.2} s ({} parsed, {} resumed, {} unchanged, {} failed, {} gone from disk). The store holds {} sessions.\n",
        out.sessions_new,
        out.sessions_updated,
        out.files_seen,
        out.elapsed_ms as f64 / 1000.0,
        out.files_parsed,
        out.files_resumed,
        out.files_unchanged,
        out.files_failed,
        out.files_missing,
        out.total_sessions
    );
    if out.files_seen == 0 && out.total_sessions == 0 {
        t.push_str("No agent history was found where trail looks (see `trail doctor`).\n");
    }
    for p in &out.problems {
        let _ = writeln!(t, "  {p}");
    }
    let text = finish_text(t, None, &out.store);
    ToolOutput::new(&out, text)
}

// ---------------------------------------------------------------------------------------------
// shared

/// Ends a readable text with the answer's note and the store's freshness line.
fn finish_text(mut t: String, note: Option<&str>, store: &StoreState) -> String {
    if let Some(n) = note {
        let _ = writeln!(t, "{n}");
    }
    t.push_str(&store.line());
    t
}

fn to_output<T: Serialize>(out: &T, render: impl Fn(&T) -> String) -> ToolOutput {
    ToolOutput::new(out, render(out))
}

/// Keeps as many items of `list` as fit the cap, noting how many were left out.
fn fit_list<T, I>(
    cx: &Ctx<'_>,
    out: &mut T,
    list: impl Fn(&mut T) -> &mut Vec<I>,
    render: impl Fn(&T) -> String,
) -> ToolResult
where
    T: Serialize + Cuttable,
{
    let mut output = to_output(out, &render);
    output.redact(cx.redactor);
    if output.chars() <= cx.max_chars {
        return Ok(output);
    }
    let all = std::mem::take(list(out));
    let total = all.len();
    let mut all = all.into_iter().map(Some).collect::<Vec<_>>();
    // The largest prefix that fits, by bisection (each try renders and measures the page).
    let (mut lo, mut hi) = (0usize, total);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let items: Vec<I> = all[..mid]
            .iter_mut()
            .map(|i| i.take().expect("present"))
            .collect();
        *list(out) = items;
        out.mark_cut(left_out_note(total - mid, cx.max_chars));
        let mut o = to_output(out, &render);
        o.redact(cx.redactor);
        let fits = o.chars() <= cx.max_chars;
        for (slot, item) in all.iter_mut().zip(std::mem::take(list(out))) {
            *slot = Some(item);
        }
        if fits {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let kept: Vec<I> = all
        .into_iter()
        .take(lo)
        .map(|i| i.expect("present"))
        .collect();
    *list(out) = kept;
    out.mark_cut(left_out_note(total - lo, cx.max_chars));
    let mut output = to_output(out, &render);
    output.redact(cx.redactor);
    Ok(output)
}

/// The largest `n` for which `build(n)` fits the cap.
fn fit_count(cx: &Ctx<'_>, total: usize, mut build: impl FnMut(usize) -> ToolOutput) -> usize {
    let fits = |o: &mut ToolOutput| {
        o.redact(cx.redactor);
        o.chars() <= cx.max_chars
    };
    if fits(&mut build(total)) {
        return total;
    }
    let (mut lo, mut hi) = (0usize, total);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(&mut build(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

fn left_out_note(n: usize, cap: usize) -> String {
    format!("{n} more results were left out to stay under {cap} characters; narrow the request or lower limit.")
}

/// Outputs whose list a size cut can shorten: they say so in their note.
pub trait Cuttable {
    fn mark_cut(&mut self, note: String);
}

impl Cuttable for SearchOut {
    fn mark_cut(&mut self, note: String) {
        self.note = Some(note);
    }
}

impl Cuttable for FileHistoryOut {
    fn mark_cut(&mut self, note: String) {
        self.note = Some(note);
    }
}

impl Cuttable for SqlOut {
    fn mark_cut(&mut self, note: String) {
        self.truncated = true;
        self.note = Some(note);
    }
}

/// The filters of a request, in words.
fn filter_words(f: &SessionFilter, role: Option<&str>, session: Option<&str>) -> String {
    let mut parts: BTreeMap<&str, &str> = BTreeMap::new();
    for (k, v) in [
        ("source", &f.source),
        ("repo", &f.repo),
        ("cwd", &f.cwd),
        ("branch", &f.branch),
        ("model", &f.model),
        ("since", &f.since),
        ("until", &f.until),
    ] {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            parts.insert(k, v);
        }
    }
    if let Some(r) = role {
        parts.insert("role", r);
    }
    if let Some(s) = session {
        parts.insert("session", s);
    }
    if parts.is_empty() {
        return String::new();
    }
    let list: Vec<String> = parts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "with the filters {} (fewer filters may find more)",
        list.join(", ")
    )
}

/// Says why an answer is empty, so that a model does not invent one: an empty store, the
/// filters, the sessions left out as active, or simply nothing there.
fn empty_reason(
    cx: &Ctx<'_>,
    what: &str,
    filters: &str,
    active_left_out: bool,
) -> Result<String, ToolError> {
    let sessions = cx.query.session_count()?;
    if sessions == 0 {
        return Ok(format!(
            "{what}: the store holds no sessions yet. Call the index tool (or run `trail index`); if it finds nothing, trail found no agent history on this machine."
        ));
    }
    let mut s = format!("{what} among {sessions} sessions");
    if !filters.is_empty() {
        let _ = write!(s, " {filters}");
    }
    s.push('.');
    if active_left_out {
        let _ = write!(
            s,
            " Sessions active in the last {ACTIVE_MINUTES} minutes were left out (include_active: true includes them)."
        );
    }
    s.push_str(" Do not guess an answer from this.");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_input_and_output_schema_and_hints() {
        let tools = definitions();
        assert_eq!(tools.len(), 9);
        for t in &tools {
            assert_eq!(
                t.input_schema.get("type"),
                Some(&Value::from("object")),
                "{}",
                t.name
            );
            let out = t.output_schema.as_ref().expect("output schema");
            assert_eq!(out.get("type"), Some(&Value::from("object")), "{}", t.name);
            let hints = t.annotations.as_ref().expect("annotations");
            assert_eq!(
                hints.read_only_hint,
                Some(t.name != "index" && t.name != "continue_session"),
                "{}",
                t.name
            );
            assert_eq!(hints.destructive_hint, Some(false));
            // Short descriptions: every definition is sent with every request.
            let len = t.description.as_deref().unwrap_or("").len();
            assert!(len < 1500, "{} description has {len} characters", t.name);
        }
        let search = &tools[0].input_schema;
        assert_eq!(search["required"], serde_json::json!(["query"]));
    }

    #[test]
    fn every_source_argument_names_every_source() {
        let mut checked = 0;
        for t in definitions() {
            let Some(source) = t
                .input_schema
                .get("properties")
                .and_then(|p| p.get("source"))
            else {
                continue;
            };
            let listed = source["enum"].as_array().expect("an enum of ids");
            let text = source["description"].as_str().unwrap_or("");
            for kind in trail_model::SourceKind::ALL {
                assert!(
                    listed.contains(&Value::from(kind.as_str())),
                    "{} {kind}",
                    t.name
                );
                let name = trail_query::registry::display_name(kind);
                assert!(text.contains(name), "{} lacks {name}", t.name);
            }
            checked += 1;
        }
        assert_eq!(
            checked, 4,
            "search, list_sessions, report and index take a source"
        );
    }

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        let p = Position {
            seq: 42,
            field: 2,
            offset: 123_456,
        };
        assert_eq!(Position::decode(&p.encode()).unwrap(), p);
        for bad in ["", "m1", "m1.3.0", "x1.0.0", "m1.0.0.0", "m-.0.0"] {
            assert!(Position::decode(bad).is_err(), "{bad}");
        }
    }

    fn message(seq: i64, turn: i64, text: &str, output: Option<String>) -> FullMessage {
        FullMessage {
            head: MessageOut {
                seq,
                turn: Some(turn),
                role: Some("assistant".into()),
                kind: Some(
                    if output.is_some() {
                        "tool_result"
                    } else {
                        "text"
                    }
                    .into(),
                ),
                tool: output.as_ref().map(|_| "Bash".to_string()),
                summary: None,
                is_error: false,
                when: Some("2026-11-20T10:00:00.000Z".into()),
                text: None,
                tool_input: None,
                tool_output: None,
                tool_input_bytes: None,
                tool_output_bytes: None,
                part: None,
            },
            fields: [Some(text.to_string()), None, output],
        }
    }

    #[test]
    fn pages_stay_under_the_cap_and_add_up_to_every_field() {
        // Quotes, newlines, control and multi-byte characters: each costs differently in JSON.
        let unit = "ligne \"é\" 漢字\t\u{1}\n";
        let big: String = unit.repeat(6_000);
        let messages = [
            message(0, 0, "first prompt", None),
            message(1, 0, &"short answer ".repeat(50), None),
            message(2, 0, "", Some(big.clone())),
            message(3, 1, "done", None),
        ]
        .map(Arc::new);
        let cap = 4_000;
        let mut out = SessionPageOut {
            session: SessionOut {
                id: "claude-code:x".into(),
                agent: "claude-code".into(),
                title: Some("a title".into()),
                repository: None,
                branch: None,
                cwd: None,
                started: None,
                updated: None,
                turns: 2,
                messages: 4,
                models: vec![],
                tokens: 0,
                parent: None,
                source_missing: false,
                chat: false,
            },
            messages: Vec::new(),
            next_cursor: None,
            subagents: vec![],
            note: None,
            store: StoreState::default(),
        };
        let mut start = Position {
            seq: i64::MIN,
            field: 0,
            offset: 0,
        };
        let (mut pages, mut output, mut seqs) = (0, String::new(), Vec::new());
        loop {
            let from = messages.partition_point(|m| m.head.seq < start.seq);
            fill_page(&mut out, &messages[from..], start, cap, cap);
            let size = to_output(&out, render_page).chars();
            assert!(size <= cap, "page {pages} has {size} characters");
            assert!(!out.messages.is_empty());
            for m in &out.messages {
                seqs.push(m.seq);
                if let Some(o) = &m.tool_output {
                    assert_eq!(m.part.as_ref().map_or(0, |p| p.offset), output.len());
                    output.push_str(o);
                }
            }
            pages += 1;
            match out.next_cursor.as_deref() {
                Some(c) => start = Position::decode(c).unwrap(),
                None => break,
            }
            assert!(pages < 1_000);
        }
        assert_eq!(output, big);
        assert!(pages > 20, "{pages}");
        seqs.dedup();
        assert_eq!(seqs, vec![0, 1, 2, 3]);
    }

    #[test]
    fn snippets_mark_matches_in_bold() {
        let s = format!("a {HIT_START}word{HIT_END} b");
        assert_eq!(mark_snippet(&s), "a **word** b");
    }
}
