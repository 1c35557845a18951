//! Markdown: a header table, one heading per turn, the prompt, the answer, tool calls as
//! compact fenced blocks, thinking on request, subagent transcripts quoted under the tool call
//! that started them.

use std::io::Write;

use trail_store::{ExportMessage, SessionRow};

use crate::text::{self, fence, omitted, pretty_input, LinePrefix};
use crate::{for_each_turn_message, Exporter, RenderError, Result, Subagents};

/// Nesting depth past which subagents are listed rather than quoted.
const MAX_DEPTH: usize = 4;

pub(crate) fn write_session(
    ex: &mut Exporter<'_>,
    s: &SessionRow,
    w: &mut dyn Write,
) -> Result<()> {
    write_nested(ex, s, w, 0)
}

fn write_nested(
    ex: &mut Exporter<'_>,
    s: &SessionRow,
    w: &mut dyn Write,
    depth: usize,
) -> Result<()> {
    let hashes = "#".repeat((depth + 1).min(6));
    let title = ex.title(s);
    writeln!(w, "{hashes} {}\n", one_line(&title))?;
    write_header(ex, s, w)?;

    let store = ex.store;
    let mut subagents = Subagents::load(store, &s.id)?;
    let turn_hashes = "#".repeat((depth + 2).min(6));
    let mut current: Option<i64> = None;
    let mut last_was_text = false;
    let off_chain = for_each_turn_message(store, &s.id, |turn, m: ExportMessage| -> Result<()> {
        let msg = &m.message;
        if current != Some(turn) {
            current = Some(turn);
            last_was_text = false;
            writeln!(
                w,
                "{turn_hashes} Turn {} · {}\n",
                turn + 1,
                text::when(msg.timestamp.as_deref())
            )?;
        }
        let body = msg.text.as_deref().unwrap_or("");
        match msg.kind.as_deref() {
            Some("prompt") => {
                let t = ex.redact(body);
                writeln!(w, "**User**\n\n{}\n", t.trim_end())?;
                last_was_text = false;
            }
            Some("text") if !body.trim().is_empty() => {
                let t = ex.redact(body);
                if !last_was_text {
                    writeln!(w, "**Assistant**\n")?;
                }
                writeln!(w, "{}\n", t.trim_end())?;
                last_was_text = true;
            }
            Some("thinking") if ex.options.thinking && !body.trim().is_empty() => {
                let t = ex.redact(body);
                let mut q = LinePrefix::new(w, "> ");
                writeln!(q, "*Thinking*\n\n{}", t.trim_end())?;
                writeln!(w)?;
                last_was_text = false;
            }
            Some("tool_call") => {
                write_tool(ex, &m, w)?;
                last_was_text = false;
                for a in subagents.started_by(msg.tool_call_id.as_deref()) {
                    write_subagent(ex, &a, w, depth)?;
                }
            }
            Some("tool_result") if !m.joined => {
                let name = msg.tool_name.as_deref().unwrap_or("tool");
                let mark = if msg.is_error { "✗ error" } else { "✓" };
                writeln!(w, "Result of `{}` {mark}\n", code_span(name))?;
                write_fenced(ex, w, "text", msg.tool_output.as_deref().unwrap_or(""))?;
                last_was_text = false;
            }
            Some("error") => {
                let t = ex.redact(body);
                writeln!(w, "> **Error:** {}\n", one_line(&t))?;
                last_was_text = false;
            }
            Some("summary") if !body.trim().is_empty() => {
                let t = ex.redact(body);
                let mut q = LinePrefix::new(w, "> ");
                writeln!(q, "*Summary*\n\n{}", t.trim_end())?;
                writeln!(w)?;
                last_was_text = false;
            }
            Some("compaction") => {
                writeln!(w, "*— context compacted —*\n")?;
                last_was_text = false;
            }
            _ => {}
        }
        Ok(())
    })?;
    write_changes(ex, s, w, &turn_hashes)?;
    let rest = subagents.rest();
    if !rest.is_empty() {
        writeln!(w, "{turn_hashes} Other subagents\n")?;
        for a in &rest {
            write_subagent(ex, a, w, depth)?;
        }
    }
    if off_chain > 0 {
        writeln!(
            w,
            "*{off_chain} messages on abandoned branches (rewinds, retries) are not shown.*\n"
        )?;
    }
    Ok(())
}

/// What the session changed (`trail diff`): per file, each change's unified diff, redacted.
fn write_changes(
    ex: &mut Exporter<'_>,
    s: &SessionRow,
    w: &mut dyn Write,
    hashes: &str,
) -> Result<()> {
    let diff = ex.store.session_diff(&s.id, None)?;
    if diff.files.is_empty() {
        return Ok(());
    }
    writeln!(w, "{hashes} Changes\n")?;
    for f in &diff.files {
        let path = ex.redact(&f.path).into_owned();
        writeln!(w, "`{}` (+{} −{})\n", code_span(&path), f.added, f.removed)?;
        for c in &f.changes {
            writeln!(w, "*{}*\n", crate::change_heading(c))?;
            let body = ex.redact(&c.diff).into_owned();
            if !body.is_empty() {
                let fence = text::fence(&body);
                writeln!(w, "{fence}diff\n{}\n{fence}\n", body.trim_end_matches('\n'))?;
            }
        }
    }
    Ok(())
}

fn write_subagent(
    ex: &mut Exporter<'_>,
    a: &SessionRow,
    w: &mut dyn Write,
    depth: usize,
) -> Result<()> {
    if depth + 1 >= MAX_DEPTH {
        writeln!(
            w,
            "*Subagent `{}` (nested too deep to show here).*\n",
            code_span(&a.id)
        )?;
        return Ok(());
    }
    let mut q = LinePrefix::new(w, "> ");
    write_nested(ex, a, &mut q, depth + 1)?;
    writeln!(w)?;
    Ok(())
}

fn write_header(ex: &mut Exporter<'_>, s: &SessionRow, w: &mut dyn Write) -> Result<()> {
    writeln!(w, "| | |\n|---|---|")?;
    let row = |w: &mut dyn Write, k: &str, v: &str| -> Result<()> {
        writeln!(w, "| {k} | {} |", table_cell(v))?;
        Ok(())
    };
    for (label, value, is_id) in ex.session_facts(s) {
        if is_id {
            row(w, label, &format!("`{}`", code_span(&value)))?;
        } else {
            row(w, label, &value)?;
        }
    }
    if let Some(p) = &s.parent_session_id {
        let via = s
            .parent_tool_call_id
            .as_deref()
            .map(|t| format!(" (tool call `{}`)", code_span(t)))
            .unwrap_or_default();
        row(w, "Subagent of", &format!("`{}`{via}", code_span(p)))?;
    }
    writeln!(w)?;
    Ok(())
}

fn write_tool(ex: &mut Exporter<'_>, m: &ExportMessage, w: &mut dyn Write) -> Result<()> {
    let msg = &m.message;
    let name = msg.tool_name.as_deref().unwrap_or("tool");
    let input = msg.tool_input.as_deref().unwrap_or("");
    let mark = match &m.result {
        Some(r) if r.is_error => "✗ error",
        Some(_) => "✓",
        None => "(no result)",
    };
    let summary = text::tool_summary(input);
    if summary.is_empty() {
        writeln!(w, "**Tool** `{}` {mark}\n", code_span(name))?;
    } else {
        let summary = ex.redact(&summary).into_owned();
        writeln!(
            w,
            "**Tool** `{}` {mark} — {}\n",
            code_span(name),
            escape_inline(&summary)
        )?;
    }
    let pretty = pretty_input(input);
    if !pretty.trim().is_empty() {
        write_fenced(ex, w, "json", &pretty)?;
    }
    if let Some(r) = &m.result {
        let out = r.tool_output.as_deref().unwrap_or("");
        if !out.trim().is_empty() {
            write_fenced(ex, w, "text", out)?;
        }
    }
    Ok(())
}

/// Writes `body` redacted, in a fence, cut to the output limits.
fn write_fenced(
    ex: &mut Exporter<'_>,
    w: &mut dyn Write,
    lang: &str,
    body: &str,
) -> Result<(), RenderError> {
    let (shown, left) = ex.redact_view(body, text::OUTPUT_LINES, text::OUTPUT_CHARS);
    let f = fence(&shown);
    writeln!(w, "{f}{lang}\n{}\n{f}", shown.trim_end_matches('\n'))?;
    if let Some(left) = left {
        writeln!(w, "*{}*", omitted(left))?;
    }
    writeln!(w)?;
    Ok(())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Makes text safe inside a one-backtick code span.
fn code_span(s: &str) -> String {
    s.replace('`', "'").replace('\n', " ")
}

/// Escapes characters that would start Markdown or HTML markup in a one-line phrase.
fn escape_inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn table_cell(s: &str) -> String {
    one_line(s).replace('|', "\\|")
}
