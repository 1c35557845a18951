//! `trail improve`: where the agents struggled, ranked, each finding with evidence (session,
//! turn, quote), and suggestions for the agent's instruction file (CLAUDE.md,
//! copilot-instructions.md) derived from the findings.
//!
//! Signals: failed tool calls and the shell commands that failed repeatedly, permission
//! denials, user interrupts, failed or cancelled requests and API errors (`error` messages),
//! rewinds (prompts left off the main chain), compactions, and prompts that correct the agent.
//! Findings rank by how often they happened, then by how many sessions they touched.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use trail_store::Store;

use crate::query::Where;
use crate::text::{count, trim};
use crate::{Filter, Result};

/// Evidence quoted per finding.
const EVIDENCE: usize = 3;
/// Characters kept of a quote.
const QUOTE_CHARS: usize = 160;
/// A command must fail this often to be a finding of its own.
const REPEATED_FAILURES: i64 = 2;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// One shell command that failed several times.
    FailingCommand,
    /// Failed calls of one tool.
    ToolErrors,
    /// Tool calls the user (or a policy) refused.
    PermissionDenials,
    /// The user stopped the agent.
    Interrupts,
    /// The user's prompt corrects the agent.
    Corrections,
    /// Requests that failed or were cancelled.
    FailedRequests,
    /// API errors (rate limits, overload, refusals).
    ApiErrors,
    /// Prompts abandoned by rewinding the conversation.
    Rewinds,
    /// The context filled up and was compacted.
    Compactions,
}

/// One place a finding shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    pub session_id: String,
    /// The shortest prefix of `session_id` that opens it in `trail show` (issue 15); for
    /// display only.
    #[serde(skip)]
    pub short_id: String,
    pub turn: Option<i64>,
    pub timestamp: Option<String>,
    pub quote: String,
}

/// A finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// What happened, in one line.
    pub title: String,
    /// How often it happened.
    pub count: i64,
    /// In how many sessions.
    pub sessions: i64,
    pub evidence: Vec<Evidence>,
    /// What to write in the instruction file about it, when something helps.
    pub suggestion: Option<String>,
}

/// The improve report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImproveReport {
    pub filter: Filter,
    /// Main sessions in range.
    pub sessions: i64,
    pub findings: Vec<Finding>,
    /// The findings' suggestions, in rank order, without repeats.
    pub suggestions: Vec<String>,
}

/// Prompt openings and phrases that correct the agent (lowercase).
const CORRECTION_STARTS: &[&str] = &[
    "no,", "no.", "no!", "nope", "wrong", "stop", "undo", "revert",
];
const CORRECTION_PHRASES: &[&str] = &[
    "that's wrong",
    "that is wrong",
    "that's not",
    "that is not what",
    "not what i asked",
    "still failing",
    "still fails",
    "still broken",
    "still not working",
    "still doesn't",
    "doesn't work",
    "didn't work",
    "you didn't",
    "you did not",
    "you forgot",
    "i said",
    "i told you",
    "try again",
];

/// Tool output of a refused call (Claude Code, Copilot).
const DENIAL_PHRASES: &[&str] = &[
    "doesn't want to proceed",
    "permission to use",
    "was rejected",
    "permission denied by",
    "denied by the user",
    "user denied",
];

struct Hit {
    session_id: String,
    turn: Option<i64>,
    timestamp: Option<String>,
    text: String,
}

/// Computes the improve report.
#[tracing::instrument(level = "debug", skip_all, err)]
pub fn improve(store: &Store, filter: &Filter) -> Result<ImproveReport> {
    let conn = store.connection();
    let sessions = count_sessions(conn, filter)?;
    let mut findings = Vec::new();
    let failed = failed_tool_calls(conn, filter)?;
    let failed = failing_command_findings(failed, &mut findings);
    tool_call_findings(failed, &mut findings);
    message_findings(conn, filter, &mut findings)?;
    let suggestions = rank(&mut findings);
    for e in findings.iter_mut().flat_map(|f| f.evidence.iter_mut()) {
        e.short_id = store.short_id(&e.session_id)?;
    }
    Ok(ImproveReport {
        filter: filter.clone(),
        sessions,
        findings,
        suggestions,
    })
}

/// The top-level sessions the filter selects.
fn count_sessions(conn: &rusqlite::Connection, filter: &Filter) -> Result<i64> {
    let w = Where::sessions(filter)
        .coding(filter)
        .active(filter)
        .and("s.parent_session_id IS NULL");
    Ok(conn.query_row(
        &format!("SELECT count(*) FROM sessions s WHERE {}", w.sql),
        w.params(),
        |r| r.get(0),
    )?)
}

/// A failed tool call: the tool's name, the shell command it ran (if it ran one) and where.
type FailedCall = (String, Option<String>, Hit);

/// Failed tool calls, with the result text.
fn failed_tool_calls(conn: &rusqlite::Connection, filter: &Filter) -> Result<Vec<FailedCall>> {
    let w = Where::sessions(filter)
        .coding(filter)
        .range(
            "t.timestamp",
            filter.since.as_deref(),
            filter.until.as_deref(),
        )
        .and("t.is_error = 1");
    let sql = format!(
        "SELECT t.tool_name, t.session_id, t.turn_index, t.timestamp, c.tool_input,
                substr(r.tool_output, 1, 4000)
         FROM tool_calls t JOIN sessions s ON s.id = t.session_id
         LEFT JOIN messages c ON c.session_id = t.session_id AND c.seq = t.call_seq
         LEFT JOIN messages r ON r.session_id = t.session_id AND r.seq = t.result_seq
         WHERE {} ORDER BY t.timestamp, t.session_id, t.call_seq",
        w.sql
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(w.params(), |r| {
        let name: Option<String> = r.get(0)?;
        let input: Option<String> = r.get(4)?;
        let output: Option<String> = r.get(5)?;
        Ok((
            name.unwrap_or_else(|| "(unnamed tool)".into()),
            command_of(input.as_deref()),
            Hit {
                session_id: r.get(1)?,
                turn: r.get(2)?,
                timestamp: r.get(3)?,
                text: output.unwrap_or_default(),
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// A finding for each shell command that failed repeatedly (a refusal is not a failing
/// command); returns the other failed calls, by tool name.
fn failing_command_findings(
    out: Vec<FailedCall>,
    findings: &mut Vec<Finding>,
) -> Vec<(String, Hit)> {
    let mut by_command: BTreeMap<String, Vec<Hit>> = BTreeMap::new();
    let refused = |h: &Hit| is_refusal(&h.text);
    for (_, command, hit) in &out {
        if let Some(cmd) = command.as_ref().filter(|_| !refused(hit)) {
            by_command.entry(cmd.clone()).or_default().push(Hit {
                session_id: hit.session_id.clone(),
                turn: hit.turn,
                timestamp: hit.timestamp.clone(),
                text: hit.text.clone(),
            });
        }
    }
    // Calls counted under a repeatedly failing command are not counted again per tool.
    by_command.retain(|_, hits| hits.len() as i64 >= REPEATED_FAILURES);
    let out: Vec<(String, Hit)> = out
        .into_iter()
        .filter(|(_, c, h)| refused(h) || c.as_ref().is_none_or(|c| !by_command.contains_key(c)))
        .map(|(n, _, h)| (n, h))
        .collect();
    for (cmd, hits) in by_command {
        findings.push(finding(
            FindingKind::FailingCommand,
            format!("`{}` failed {}", trim(&cmd, 80), count(hits.len() as i64, "time", "times")),
            &hits,
            Some(format!(
                "Say how to run `{}` here (working directory, setup, environment, the expected output) or which command to use instead.",
                trim(&cmd, 80)
            )),
        ));
    }
    out
}

/// The refused calls as one finding, the other failed calls as a finding per tool.
fn tool_call_findings(failed: Vec<(String, Hit)>, findings: &mut Vec<Finding>) {
    let (denied, errors): (Vec<_>, Vec<_>) =
        failed.into_iter().partition(|(_, h)| is_refusal(&h.text));
    if !denied.is_empty() {
        let hits: Vec<Hit> = denied.into_iter().map(|(_, h)| h).collect();
        findings.push(finding(
            FindingKind::PermissionDenials,
            format!("{} refused", count(hits.len() as i64, "tool call was", "tool calls were")),
            &hits,
            Some("List the commands the agent may run without asking and the ones it must never run (and keep the permission allowlist in step with it).".into()),
        ));
    }
    let mut by_tool: BTreeMap<String, Vec<Hit>> = BTreeMap::new();
    for (name, hit) in errors {
        by_tool.entry(name).or_default().push(hit);
    }
    for (tool, hits) in by_tool {
        let suggestion = tool_advice(&tool);
        findings.push(finding(
            FindingKind::ToolErrors,
            format!(
                "{tool} failed {}",
                count(hits.len() as i64, "time", "times")
            ),
            &hits,
            suggestion,
        ));
    }
}

/// The messages matching `cond` in the filter's range. `index`: a partial index the condition
/// implies, named where the planner, without statistics, takes another one that also applies
/// (the rewinds' condition is a prompt's too, and reading every prompt cost 25-33 ms instead of
/// under 1).
fn message_hits(
    conn: &rusqlite::Connection,
    filter: &Filter,
    cond: &str,
    index: Option<&str>,
) -> Result<Vec<Hit>> {
    let w = Where::sessions(filter)
        .coding(filter)
        .range(
            "m.timestamp",
            filter.since.as_deref(),
            filter.until.as_deref(),
        )
        .and(cond);
    let indexed_by = index.map_or(String::new(), |i| format!(" INDEXED BY {i}"));
    let sql = format!(
        "SELECT m.session_id, m.turn_index, m.timestamp, m.text FROM messages m{indexed_by}
         JOIN sessions s ON s.id = m.session_id WHERE {} ORDER BY m.timestamp, m.session_id, m.seq",
        w.sql
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(w.params(), |r| {
        Ok(Hit {
            session_id: r.get(0)?,
            turn: r.get(1)?,
            timestamp: r.get(2)?,
            text: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Findings from messages: interrupts, errors, compactions, rewinds and corrections.
fn message_findings(
    conn: &rusqlite::Connection,
    filter: &Filter,
    findings: &mut Vec<Finding>,
) -> Result<()> {
    let msg_hits = |cond: &str, index: Option<&str>| message_hits(conn, filter, cond, index);
    let interrupts = msg_hits(
        "m.kind = 'meta' AND substr(m.text, 1, 28) = '[Request interrupted by user'",
        None,
    )?;
    if !interrupts.is_empty() {
        findings.push(finding(
            FindingKind::Interrupts,
            format!("You interrupted the agent {}", count(interrupts.len() as i64, "time", "times")),
            &interrupts,
            Some("Ask for a short plan before multi-file changes and long commands, and say which steps need your go-ahead.".into()),
        ));
    }
    // The redundant `IN` term lets SQLite use the partial index `idx_messages_events`.
    let errors = msg_hits(
        "m.kind IN ('error', 'compaction') AND m.kind = 'error'",
        None,
    )?;
    error_findings(errors, findings);
    let compactions = msg_hits(
        "m.kind IN ('error', 'compaction') AND m.kind = 'compaction'",
        None,
    )?;
    if !compactions.is_empty() {
        findings.push(finding(
            FindingKind::Compactions,
            format!("The context was compacted {}", count(compactions.len() as i64, "time", "times")),
            &compactions,
            Some("Keep sessions to one task; point the agent at the few files that matter instead of letting it read whole folders, and keep this file short.".into()),
        ));
    }
    let rewinds = msg_hits(
        &format!(
            "m.kind = 'prompt' AND m.on_main_chain = 0 AND m.is_sidechain = 0 AND {}",
            crate::query::PERSON_PROMPT
        ),
        Some("idx_messages_rewound"),
    )?;
    if !rewinds.is_empty() {
        findings.push(finding(
            FindingKind::Rewinds,
            format!("{} abandoned by rewinding", count(rewinds.len() as i64, "prompt was", "prompts were")),
            &rewinds,
            Some("Write down the constraints that made you rewind (what must not change, the approach you want) so the first attempt follows them.".into()),
        ));
    }

    // Prompts that correct the agent.
    let corrections: Vec<Hit> = msg_hits(
        &format!(
            "m.kind = 'prompt' AND m.role = 'user' AND {}",
            crate::query::PERSON_PROMPT
        ),
        None,
    )?
    .into_iter()
    .filter(|h| is_correction(&h.text))
    .collect();
    if !corrections.is_empty() {
        findings.push(finding(
            FindingKind::Corrections,
            format!("{} the agent", count(corrections.len() as i64, "prompt corrected", "prompts corrected")),
            &corrections,
            Some("Turn the corrections quoted above into rules (\"always …\", \"never …\") so you do not have to repeat them.".into()),
        ));
    }
    Ok(())
}

/// `error` messages: API errors apart from the requests that failed or were cancelled.
fn error_findings(errors: Vec<Hit>, findings: &mut Vec<Finding>) {
    let (api, failed_requests): (Vec<Hit>, Vec<Hit>) = errors.into_iter().partition(|h| {
        let l: String = h.text.chars().take(400).collect::<String>().to_lowercase();
        l.starts_with("api error")
            || l.contains("overloaded")
            || l.contains("rate limit")
            || l.contains("api_error")
    });
    if !api.is_empty() {
        findings.push(finding(
            FindingKind::ApiErrors,
            count(api.len() as i64, "API error", "API errors"),
            &api,
            None,
        ));
    }
    if !failed_requests.is_empty() {
        findings.push(finding(
            FindingKind::FailedRequests,
            format!(
                "{} or cancelled",
                count(
                    failed_requests.len() as i64,
                    "request failed",
                    "requests failed"
                )
            ),
            &failed_requests,
            None,
        ));
    }
}

/// Ranks the findings (most often first, then most sessions) and returns their suggestions in
/// that order, each once.
fn rank(findings: &mut [Finding]) -> Vec<String> {
    findings.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(b.sessions.cmp(&a.sessions))
            .then(a.kind.cmp(&b.kind))
            .then(a.title.cmp(&b.title))
    });
    let mut suggestions: Vec<String> = Vec::new();
    for f in findings.iter() {
        if let Some(s) = &f.suggestion {
            if !suggestions.contains(s) {
                suggestions.push(s.clone());
            }
        }
    }
    suggestions
}

fn finding(kind: FindingKind, title: String, hits: &[Hit], suggestion: Option<String>) -> Finding {
    let sessions: BTreeSet<&str> = hits.iter().map(|h| h.session_id.as_str()).collect();
    // A command retried in one turn fails the same way each time: quote each failure once.
    let mut quoted: BTreeSet<(&str, Option<i64>, String)> = BTreeSet::new();
    let evidence = hits
        .iter()
        .map(|h| (h, trim(&h.text, QUOTE_CHARS)))
        .filter(|(h, quote)| quoted.insert((h.session_id.as_str(), h.turn, quote.clone())))
        .take(EVIDENCE)
        .map(|(h, quote)| Evidence {
            session_id: h.session_id.clone(),
            short_id: h.session_id.clone(),
            turn: h.turn,
            timestamp: h.timestamp.clone(),
            quote,
        })
        .collect();
    Finding {
        kind,
        title,
        count: hits.len() as i64,
        sessions: sessions.len() as i64,
        evidence,
        suggestion,
    }
}

/// Returns the shell command of a tool call's input (`command` or `cmd`), first line only.
fn command_of(input: Option<&str>) -> Option<String> {
    let input = input?;
    // Skip parsing inputs that hold no command (large file writes).
    if !input.contains("\"command\"") && !input.contains("\"cmd\"") {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(input).ok()?;
    let cmd = v.get("command").or_else(|| v.get("cmd"))?;
    let s = match cmd {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => return None,
    };
    let first = s.lines().next().unwrap_or("").trim().to_string();
    (!first.is_empty()).then_some(first)
}

fn tool_advice(tool: &str) -> Option<String> {
    let t = tool.to_lowercase();
    if t.contains("edit") || t.contains("replace") || t.contains("patch") || t.contains("write") {
        Some("Re-read a file before editing it when it may have changed, and edit with enough surrounding lines to match exactly once.".into())
    } else if t == "bash" || t.contains("shell") || t.contains("terminal") || t.contains("exec") {
        Some("List the project's build, test and lint commands with the folder to run them from, so the agent does not guess.".into())
    } else if t.contains("read") || t.contains("view") || t.contains("glob") || t.contains("grep") {
        Some("Describe the repository layout (where the code, tests and generated files live) so the agent finds files on the first try.".into())
    } else {
        None
    }
}

/// Returns whether a tool result says the call was refused. Refusals are short messages: their
/// start is enough.
fn is_refusal(output: &str) -> bool {
    let l: String = output.chars().take(400).collect::<String>().to_lowercase();
    DENIAL_PHRASES.iter().any(|p| l.contains(p))
}

/// Returns whether a prompt corrects the agent.
fn is_correction(text: &str) -> bool {
    let l = text.trim_start().to_lowercase();
    let l = l.replace('\u{2019}', "'");
    if CORRECTION_STARTS.iter().any(|s| {
        l.starts_with(s)
            && l[s.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric())
    }) {
        return true;
    }
    CORRECTION_PHRASES.iter().any(|p| l.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrections_are_recognized() {
        for p in [
            "no, use the other file",
            "No. That breaks the build",
            "that's wrong: the port is 8080",
            "The test is still failing",
            "you didn't update the docs",
            "Stop",
        ] {
            assert!(is_correction(p), "{p}");
        }
        for p in [
            "now add a test",
            "nothing changed in the docs?",
            "stopwatch module please",
            "note: use tabs",
        ] {
            assert!(!is_correction(p), "{p}");
        }
    }

    #[test]
    fn commands_come_from_tool_input() {
        assert_eq!(
            command_of(Some(r#"{"command":"npm test\necho done"}"#)).as_deref(),
            Some("npm test")
        );
        assert_eq!(
            command_of(Some(r#"{"cmd":["cargo","build"]}"#)).as_deref(),
            Some("cargo build")
        );
        assert_eq!(command_of(Some(r#"{"file_path":"a"}"#)), None);
        assert_eq!(command_of(Some("not json")), None);
    }
}
