//! `trail tips`: usage patterns, each with the numbers behind it.
//!
//! Sessions and turns per active day, the agents and models used, the tools ranked by calls
//! (with their error rate), the cache-hit ratio, the longest and most expensive sessions,
//! prompts typed in several sessions (candidates for a saved command) and sessions abandoned
//! after one turn. [`Tips::advice`] turns the numbers into short recommendations.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use trail_store::Store;

use crate::prices::PriceTable;
use crate::query::Where;
use crate::text::trim;
use crate::usage::{usage, GroupBy};
use crate::{Filter, Result};

/// Entries kept in each ranking.
const TOP: usize = 5;
/// Prompts shorter than this are not offered as saved commands ("yes", "continue").
const MIN_REPEATED_PROMPT_CHARS: usize = 12;

/// The tips report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tips {
    pub filter: Filter,
    pub sessions: i64,
    pub turns: i64,
    /// Days with at least one session active.
    pub active_days: i64,
    pub sessions_per_day: f64,
    pub turns_per_day: f64,
    /// Sessions per source.
    pub agents: Vec<Count>,
    /// Requests per model.
    pub models: Vec<Count>,
    /// Tools ranked by calls.
    pub tools: Vec<ToolCount>,
    /// Cache reads over all input (input + cache writes + cache reads), 0..1.
    pub cache_hit_ratio: Option<f64>,
    pub longest_sessions: Vec<SessionStat>,
    pub most_expensive_sessions: Vec<SessionStat>,
    pub repeated_prompts: Vec<RepeatedPrompt>,
    /// Sessions with exactly one turn.
    pub one_turn_sessions: i64,
    /// Recommendations derived from the numbers above.
    pub advice: Vec<String>,
}

/// A name and how often it appears.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Count {
    pub name: String,
    pub count: i64,
}

/// A tool and its calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCount {
    pub name: String,
    pub calls: i64,
    pub errors: i64,
}

/// A session with the figure it is ranked by.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionStat {
    pub id: String,
    /// The shortest id prefix that opens this session in `trail show` (issue 15); for display
    /// only, JSON carries the whole id.
    #[serde(skip)]
    pub short_id: String,
    pub title: Option<String>,
    pub source: String,
    pub turns: i64,
    pub cost_usd: f64,
}

/// A prompt typed in several sessions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatedPrompt {
    pub prompt: String,
    pub sessions: i64,
}

/// Computes the tips.
#[tracing::instrument(level = "debug", skip_all, err)]
pub fn tips(store: &Store, filter: &Filter, prices: &PriceTable) -> Result<Tips> {
    let conn = store.connection();
    let figures = session_figures(conn, filter)?;
    let active_days = figures.days.len() as i64;
    let per_day = |n: i64| {
        if active_days == 0 {
            0.0
        } else {
            n as f64 / active_days as f64
        }
    };
    let (models, cache_hit_ratio) = model_figures(store, filter, prices)?;
    let cost = session_costs(store, filter, prices)?;
    let tools = top_tools(conn, filter)?;
    let (longest_sessions, most_expensive_sessions) = ranked_sessions(store, &figures.info, &cost)?;
    let repeated_prompts = repeated_prompts(conn, filter)?;
    let mut agents: Vec<Count> = figures
        .agents
        .into_iter()
        .map(|(name, count)| Count { name, count })
        .collect();
    agents.sort_by(|a, b| b.count.cmp(&a.count).then(a.name.cmp(&b.name)));
    let mut tips = Tips {
        filter: filter.clone(),
        sessions: figures.sessions,
        turns: figures.turns,
        active_days,
        sessions_per_day: per_day(figures.sessions),
        turns_per_day: per_day(figures.turns),
        agents,
        models,
        tools,
        cache_hit_ratio,
        longest_sessions,
        most_expensive_sessions,
        repeated_prompts,
        one_turn_sessions: figures.one_turn,
        advice: Vec::new(),
    };
    tips.advice = advise(&tips);
    Ok(tips)
}

/// The top-level sessions the filter selects.
fn main_sessions(filter: &Filter) -> Where {
    Where::sessions(filter)
        .coding(filter)
        .active(filter)
        .and("s.parent_session_id IS NULL")
}

/// A session's title, source and turns.
type SessionInfo = (Option<String>, String, i64);

/// Sessions, turns, active days, agents.
#[derive(Default)]
struct SessionFigures {
    sessions: i64,
    turns: i64,
    one_turn: i64,
    days: BTreeMap<String, ()>,
    agents: BTreeMap<String, i64>,
    info: HashMap<String, SessionInfo>,
}

fn session_figures(conn: &rusqlite::Connection, filter: &Filter) -> Result<SessionFigures> {
    let main = main_sessions(filter);
    let mut f = SessionFigures::default();
    let sql = format!(
        "SELECT s.id, s.summary, s.source, s.turn_count, s.created_at, s.updated_at
         FROM sessions s WHERE {}",
        main.sql
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query(main.params())?;
    while let Some(r) = rows.next()? {
        let id: String = r.get(0)?;
        let title: Option<String> = r.get(1)?;
        let source: String = r.get(2)?;
        let n: i64 = r.get(3)?;
        let created: Option<String> = r.get(4)?;
        let updated: Option<String> = r.get(5)?;
        f.sessions += 1;
        f.turns += n;
        if n == 1 {
            f.one_turn += 1;
        }
        for t in [created, updated].into_iter().flatten() {
            if t.len() >= 10 {
                f.days.insert(t[..10].to_string(), ());
            }
        }
        *f.agents.entry(source.clone()).or_default() += 1;
        f.info.insert(id, (title, source, n));
    }
    Ok(f)
}

/// Models by requests, and the share of input read from the cache, from the usage rollup.
fn model_figures(
    store: &Store,
    filter: &Filter,
    prices: &PriceTable,
) -> Result<(Vec<Count>, Option<f64>)> {
    let by_model = usage(store, filter, GroupBy::Model, prices)?;
    // Most used first (the usage report orders its rows by cost, which leaves unpriced models
    // wherever they fall).
    let mut models = by_model
        .rows
        .iter()
        .map(|r| Count {
            name: crate::usage::model_name(&r.key).to_string(),
            count: r.requests,
        })
        .collect::<Vec<_>>();
    models.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    let t = &by_model.totals;
    let all_input = t.input_tokens + t.cache_creation_tokens + t.cache_read_tokens;
    let cache_hit_ratio = (all_input > 0).then(|| t.cache_read_tokens as f64 / all_input as f64);
    Ok((models, cache_hit_ratio))
}

/// Cost per session; a subagent's cost belongs to its parent session here.
fn session_costs(
    store: &Store,
    filter: &Filter,
    prices: &PriceTable,
) -> Result<HashMap<String, f64>> {
    let by_session = usage(store, filter, GroupBy::Session, prices)?;
    let mut cost: HashMap<String, f64> = HashMap::new();
    let mut parent = store
        .connection()
        .prepare_cached("SELECT coalesce(parent_session_id, id) FROM sessions WHERE id = ?1")?;
    for r in &by_session.rows {
        let root: String = parent.query_row([&r.key], |x| x.get(0))?;
        *cost.entry(root).or_default() += r.cost_usd;
    }
    Ok(cost)
}

/// The most called tools (subagents' calls included).
fn top_tools(conn: &rusqlite::Connection, filter: &Filter) -> Result<Vec<ToolCount>> {
    let w = Where::sessions(filter).coding(filter).range(
        "t.timestamp",
        filter.since.as_deref(),
        filter.until.as_deref(),
    );
    // `+t.tool_name`: grouping by the indexed name made the planner walk that index with
    // a table lookup per call to skip a sort (33 ms instead of 9 for a week).
    let sql = format!(
        "SELECT t.tool_name, count(*), sum(t.is_error) FROM tool_calls t
         JOIN sessions s ON s.id = t.session_id
         WHERE {} AND t.tool_name IS NOT NULL
         GROUP BY +t.tool_name ORDER BY 2 DESC, 1 LIMIT ?",
        w.sql
    );
    let mut args = w.args.clone();
    args.push(rusqlite::types::Value::Integer(10));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
        Ok(ToolCount {
            name: r.get(0)?,
            calls: r.get(1)?,
            errors: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The longest sessions and the most expensive ones.
fn ranked_sessions(
    store: &Store,
    info: &HashMap<String, SessionInfo>,
    cost: &HashMap<String, f64>,
) -> Result<(Vec<SessionStat>, Vec<SessionStat>)> {
    let stat = |id: &String| {
        let (title, source, n) = info.get(id).cloned().unwrap_or_default();
        SessionStat {
            id: id.clone(),
            short_id: id.clone(),
            title,
            source,
            turns: n,
            cost_usd: cost.get(id).copied().unwrap_or(0.0),
        }
    };
    let mut ids: Vec<&String> = info.keys().collect();
    ids.sort_by(|a, b| info[*b].2.cmp(&info[*a].2).then(a.cmp(b)));
    let mut longest: Vec<SessionStat> = ids.iter().take(TOP).map(|id| stat(id)).collect();
    let mut priced: Vec<(&String, f64)> = info
        .keys()
        .filter_map(|id| cost.get(id).map(|c| (id, *c)))
        .filter(|(_, c)| *c > 0.0)
        .collect();
    priced.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    let mut expensive: Vec<SessionStat> = priced.iter().take(TOP).map(|(id, _)| stat(id)).collect();
    for s in longest.iter_mut().chain(expensive.iter_mut()) {
        s.short_id = store.short_id(&s.id)?;
    }
    Ok((longest, expensive))
}

/// Prompts repeated across sessions.
fn repeated_prompts(conn: &rusqlite::Connection, filter: &Filter) -> Result<Vec<RepeatedPrompt>> {
    let w = main_sessions(filter)
        .and("t.user_message IS NOT NULL")
        .and(crate::query::PERSON_TURN);
    let sql = format!(
        "SELECT t.session_id, t.user_message FROM turns t JOIN sessions s ON s.id = t.session_id
         WHERE {}",
        w.sql
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query(w.params())?;
    let mut seen: HashMap<String, (String, Vec<String>)> = HashMap::new();
    while let Some(r) = rows.next()? {
        let sid: String = r.get(0)?;
        let text: String = r.get(1)?;
        let shown = trim(&text, 120);
        if shown.chars().count() < MIN_REPEATED_PROMPT_CHARS {
            continue;
        }
        let e = seen
            .entry(shown.to_lowercase())
            .or_insert_with(|| (shown.clone(), Vec::new()));
        if !e.1.contains(&sid) {
            e.1.push(sid);
        }
    }
    let mut v: Vec<RepeatedPrompt> = seen
        .into_values()
        .filter(|(_, s)| s.len() >= 2)
        .map(|(prompt, s)| RepeatedPrompt {
            prompt,
            sessions: s.len() as i64,
        })
        .collect();
    v.sort_by(|a, b| b.sessions.cmp(&a.sessions).then(a.prompt.cmp(&b.prompt)));
    v.truncate(TOP);
    Ok(v)
}

/// Derives recommendations from the figures.
fn advise(t: &Tips) -> Vec<String> {
    let mut out = Vec::new();
    for p in t.repeated_prompts.iter().take(3) {
        out.push(format!(
            "You typed \"{}\" in {} sessions: save it as a command (a `.claude/commands/*.md` file or a prompt file) and call it by name.",
            p.prompt, p.sessions
        ));
    }
    if t.sessions >= 5 && t.one_turn_sessions * 4 >= t.sessions {
        out.push(format!(
            "{} of {} sessions ({:.0}%) ended after one turn: for quick questions a lighter model or a chat window costs less; if they were false starts, put the context the agent lacked in the instruction file.",
            t.one_turn_sessions,
            t.sessions,
            100.0 * t.one_turn_sessions as f64 / t.sessions as f64
        ));
    }
    if let Some(r) = t.cache_hit_ratio {
        if r < 0.5 {
            out.push(format!(
                "Only {:.0}% of input tokens were cache reads: long pauses (past the 5 minute cache lifetime) and edits to the instruction file mid-session rewrite the cache.",
                100.0 * r
            ));
        } else {
            out.push(format!(
                "{:.0}% of input tokens were cache reads: prompt caching is working.",
                100.0 * r
            ));
        }
    }
    if let Some(tool) = t
        .tools
        .iter()
        .filter(|x| x.calls >= 10 && x.errors * 5 >= x.calls)
        .max_by_key(|x| x.errors)
    {
        out.push(format!(
            "{} failed {} of {} times ({:.0}%): run `trail improve` to see the failing calls.",
            tool.name,
            tool.errors,
            tool.calls,
            100.0 * tool.errors as f64 / tool.calls as f64
        ));
    }
    if let Some(s) = t.longest_sessions.first().filter(|s| s.turns >= 30) {
        out.push(format!(
            "The longest session ran {} turns: splitting long work into sessions with a short written plan keeps the context (and the cost per turn) down.",
            s.turns
        ));
    }
    out
}
