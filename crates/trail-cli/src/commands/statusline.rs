//! `trail statusline`: one line for an agent's status bar, from the JSON the agent pipes in.
//!
//! Claude Code runs the `statusLine` command of its settings after each message with a JSON
//! object on stdin (its status line documentation lists `session_id`, `transcript_path`, `cwd`,
//! `model.id`, `model.display_name`, `workspace.current_dir`, `workspace.project_dir`, `version`,
//! `cost.*` and `context_window.*`), and shows the first line printed. trail indexes the one
//! transcript named (usually nothing changed, so nothing is parsed), then prints model, session
//! cost, today's cost, the active block and the context used. No daemon: each run opens the
//! store, looks, and exits.
//!
//! It must not disturb the agent: bad input is one short line on stderr and a non-zero exit,
//! and a store busy with another index is read as it is instead of waited for.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use trail_query::{Clock, DayZone, Freshen, Query, QueryError, StatusRequest};

use crate::error::{CliError, CliResult};
use crate::Ctx;

/// The most stdin read: the hook payload is a few hundred bytes.
const MAX_INPUT: u64 = 1 << 20;
/// How long indexing waits for another writer before the line is drawn from what is stored.
const INDEX_WAIT: Duration = Duration::from_millis(100);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Time zone of "today" (local, UTC, +05:30, Europe/Paris)
    #[arg(long, env = "TRAIL_TZ", default_value = "local")]
    tz: String,
    /// Do not index the transcript first (only read the store)
    #[arg(long)]
    no_index: bool,
    /// Print the figures as JSON instead of the line
    #[arg(long)]
    json: bool,
}

/// What trail reads of the hook payload. Parsed from a `Value` field by field so that a
/// payload with fields of other shapes (another agent's) still yields what it can.
#[derive(Debug, Default, PartialEq)]
struct Hook {
    session_id: Option<String>,
    transcript_path: Option<PathBuf>,
    model_id: Option<String>,
    model_name: Option<String>,
    context_window: Option<i64>,
}

fn parse_hook(text: &str) -> Result<Hook, String> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| format!("stdin is not the status-line JSON an agent sends ({e})"))?;
    if !v.is_object() {
        return Err("stdin is not a JSON object".into());
    }
    let s = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    // Claude Code sends `model` as an object; a plain string is taken as the id.
    let (model_id, model_name) = match v.get("model") {
        Some(Value::String(id)) => (Some(id.clone()), None),
        Some(m) => (s(m.get("id")), s(m.get("display_name"))),
        None => (None, None),
    };
    Ok(Hook {
        session_id: s(v.get("session_id")).or_else(|| s(v.get("sessionId"))),
        transcript_path: s(v.get("transcript_path")).map(PathBuf::from),
        model_id,
        model_name,
        context_window: v
            .pointer("/context_window/context_window_size")
            .and_then(Value::as_i64),
    })
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(CliError::usage(
            "trail statusline reads the JSON an agent pipes to its status-line command",
        )
        .with_hint("set it as the statusLine command in ~/.claude/settings.json (see README)"));
    }
    let mut text = String::new();
    stdin
        .by_ref()
        .take(MAX_INPUT)
        .read_to_string(&mut text)
        .map_err(|e| CliError::usage(format!("cannot read stdin: {e}")))?;
    let hook = parse_hook(&text).map_err(CliError::usage)?;
    let clock = Clock {
        zone: DayZone::parse(&args.tz).map_err(CliError::usage)?,
        now: ctx.now()?,
    };
    if !args.no_index {
        if let Some(path) = hook.transcript_path.as_ref().filter(|p| p.is_file()) {
            let freshen = Freshen {
                index: trail_ingest::IndexOptions {
                    paths: vec![path.clone()],
                    ..trail_ingest::IndexOptions::default()
                },
                busy_wait: Some(INDEX_WAIT),
            };
            // `trail index --watch` indexes the transcript as it grows: no second writer.
            // Another index holding the store, or a transcript half written: the line is drawn
            // from what is stored; the next run catches up.
            if let Some(e) = trail_query::refresh(&ctx.store_path, &freshen).error() {
                tracing::debug!(error = %e, "status line: transcript not indexed");
            }
        }
    }
    // No store yet (nothing indexed): the line's figures are zeros, and no file is made.
    let query = match Query::open(&ctx.store_path) {
        Err(QueryError::NoStore(_)) => Query::from_store(trail_store::Store::open_in_memory()?),
        other => other?,
    };
    let request = StatusRequest {
        session_id: hook.session_id,
        model: hook.model_name,
        model_id: hook.model_id,
        context_window: hook.context_window,
        block_budget_usd: ctx.config.config.usage.block_budget_usd,
    };
    let prices = ctx.config.price_table();
    let status = query.status(&request, &prices, &clock)?;
    if args.json {
        ctx.ui.json_line(&status)?;
    } else {
        ctx.ui.line(&trail_report::statusline::render(&status))?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_claude_codes_payload_and_tolerates_other_shapes() {
        let h = parse_hook(
            r#"{"hook_event_name":"Status","session_id":"abc","transcript_path":"/t/abc.jsonl",
                "cwd":"/w","model":{"id":"claude-opus-4-1","display_name":"Opus"},
                "workspace":{"current_dir":"/w","project_dir":"/w"},"version":"2.0.1",
                "cost":{"total_cost_usd":0.5},"context_window":{"context_window_size":1000000}}"#,
        )
        .unwrap();
        assert_eq!(
            h,
            Hook {
                session_id: Some("abc".into()),
                transcript_path: Some("/t/abc.jsonl".into()),
                model_id: Some("claude-opus-4-1".into()),
                model_name: Some("Opus".into()),
                context_window: Some(1_000_000),
            }
        );
        let h = parse_hook(r#"{"sessionId":"x","model":"gpt-5","cwd":3}"#).unwrap();
        assert_eq!(h.session_id.as_deref(), Some("x"));
        assert_eq!(h.model_id.as_deref(), Some("gpt-5"));
        assert_eq!(parse_hook("{}").unwrap(), Hook::default());
        for bad in ["", "not json", "[1,2]", "{\"session_id\":"] {
            assert!(parse_hook(bad).is_err(), "{bad}");
        }
    }
}
