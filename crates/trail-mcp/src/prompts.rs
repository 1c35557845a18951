//! Prompts `standup`, `tips` and `improve`, as Copilot's Chronicle offers them: the prompt
//! carries the report's data (computed by trail-query) and tells the model how to write the
//! result, so the model formats and never computes.

use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use serde_json::{Map, Value};
use trail_query::{Clock, Query, ReportFilter};
use trail_render::Redactor;
use trail_report::{markdown, PriceTable};

use crate::output::{query_error, ToolError};

fn arguments() -> Vec<PromptArgument> {
    vec![
        PromptArgument::new("since")
            .with_description("From: 24h, 7d, 2026-11-01 (standup: the last 24 hours by default)"),
        PromptArgument::new("until").with_description("Before (same forms as since)"),
        PromptArgument::new("repo")
            .with_description("Repository (owner/name) or folder contains this"),
        PromptArgument::new("source").with_description(format!(
            "Only this agent: {}",
            trail_query::registry::source_ids()
                .collect::<Vec<_>>()
                .join(", ")
        )),
        PromptArgument::new("tz").with_description("Time zone of days: UTC, local, Europe/Paris"),
    ]
}

pub fn list() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "standup",
            Some("Write my standup from what my coding agents did (default: the last 24 hours)."),
            Some(arguments()),
        ),
        Prompt::new(
            "tips",
            Some("Tips on how I use coding agents, from my usage patterns and their numbers."),
            Some(arguments()),
        ),
        Prompt::new(
            "improve",
            Some("Instructions to add to CLAUDE.md / copilot-instructions.md, from where my agents struggled."),
            Some(arguments()),
        ),
    ]
}

pub fn get(
    q: &Query,
    name: &str,
    args: Option<&Map<String, Value>>,
    redactor: &Redactor,
) -> Result<GetPromptResult, ToolError> {
    let filter = filter(args)?;
    let clock = Clock::utc_now();
    let (description, text) = match name {
        "standup" => {
            let r = q.standup(&filter, &clock).map_err(query_error)?;
            (
                "Standup from coding-agent sessions",
                markdown::standup_prompt(&r),
            )
        }
        "tips" => {
            let r = q
                .tips(&filter, PriceTable::shipped(), &clock)
                .map_err(query_error)?;
            ("Tips from coding-agent usage", markdown::tips_prompt(&r))
        }
        "improve" => {
            let r = q.improve(&filter, &clock).map_err(query_error)?;
            (
                "Instructions from where agents struggled",
                markdown::improve_prompt(&r),
            )
        }
        other => {
            return Err(ToolError(format!(
                "unknown prompt {other:?}; the prompts are: standup, tips, improve"
            )))
        }
    };
    let mut counts = trail_render::RedactionCounts::default();
    let text = redactor.redact(&text, &mut counts).into_owned();
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(description),
    )
}

/// Reads the prompt's arguments (all strings, all optional; unknown ones are refused).
fn filter(args: Option<&Map<String, Value>>) -> Result<ReportFilter, ToolError> {
    let mut f = ReportFilter::default();
    for (k, v) in args.into_iter().flatten() {
        let value = match v {
            Value::String(s) if s.trim().is_empty() => continue,
            Value::String(s) => Some(s.clone()),
            Value::Null => continue,
            other => {
                return Err(ToolError(format!(
                    "prompt argument {k} must be a string, not {other}"
                )))
            }
        };
        match k.as_str() {
            "since" => f.filter.since = value,
            "until" => f.filter.until = value,
            "repo" => f.filter.repo = value,
            "source" => f.filter.source = value,
            "tz" => f.tz = value,
            other => {
                return Err(ToolError(format!(
                    "unknown prompt argument {other:?}; the arguments are: since, until, repo, source, tz"
                )))
            }
        }
    }
    Ok(f)
}
