//! HTML: one self-contained page per session. Inline CSS only, no script, no external request
//! (a Content-Security-Policy says so to the browser too); tool calls, thinking and subagents
//! are `<details>` so they collapse without JavaScript; light and dark themes follow
//! `prefers-color-scheme`. Every piece of transcript text is escaped and shown as text, never
//! rendered as Markdown or HTML.

use std::io::Write;

use trail_store::SessionRow;

use crate::session::{Part, SessionSink, Subagents, ToolCall};
use crate::text::{self, escape_html, escape_html_marked, omitted, pretty_input};
use crate::{file_name, Exporter, Format, RenderError, Result};

/// HTML pages show more of a tool's output than Markdown (it is collapsed).
const HTML_OUTPUT_LINES: usize = text::OUTPUT_LINES * 5;
const HTML_OUTPUT_CHARS: usize = text::OUTPUT_CHARS * 5;
/// Nesting depth past which subagents are only linked.
const MAX_DEPTH: usize = 4;

/// The export's stylesheet (light and dark), for viewers that show its fragments.
pub const STYLE: &str = r#"
:root{--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--user:#ddf4ff;--tool:#f6f8fa;--err:#cf222e;--ok:#1a7f37;--think:#fbf7ff}
@media (prefers-color-scheme: dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--user:#132339;--tool:#151b23;--err:#f85149;--ok:#3fb950;--think:#1c1628}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:960px;margin:0 auto;padding:24px 16px 64px}
h1{font-size:1.5em;margin:0 0 8px;overflow-wrap:anywhere}
h2{font-size:1.1em;margin:32px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
.when,.muted{color:var(--muted);font-weight:normal;font-size:.9em}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0 0 16px;font-size:.9em}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
.msg{margin:8px 0;padding:8px 12px;border-radius:6px}
.user{background:var(--user)}
.who{font-size:.8em;font-weight:600;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
details{margin:6px 0;border:1px solid var(--line);border-radius:6px;background:var(--tool)}
details>summary{cursor:pointer;padding:4px 10px;overflow-wrap:anywhere}
details>*:not(summary){margin:0 10px 8px}
details.thinking{background:var(--think)}
details.subagent{background:var(--bg)}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:4px 0;padding:8px;border-radius:4px;background:var(--bg);border:1px solid var(--line)}
.err{color:var(--err)}.ok{color:var(--ok)}
.error{border-left:3px solid var(--err)}
table{border-collapse:collapse;width:100%;font-size:.9em}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
a{color:inherit}
pre.diff .da{color:var(--ok)}pre.diff .dd{color:var(--err)}pre.diff .dk{color:var(--muted)}pre.diff .dh{font-weight:600}
"#;

fn page_start(w: &mut dyn Write, title: &str) -> Result<()> {
    w.write_all(
        b"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
<meta name=\"referrer\" content=\"no-referrer\">\n<meta name=\"generator\" content=\"trail export\">\n<title>",
    )?;
    escape_html(title, w)?;
    w.write_all(b"</title>\n<style>")?;
    w.write_all(STYLE.as_bytes())?;
    w.write_all(b"</style>\n</head>\n<body>\n<main>\n")?;
    Ok(())
}

fn page_end(w: &mut dyn Write) -> Result<()> {
    w.write_all(b"</main>\n</body>\n</html>\n")?;
    Ok(())
}

pub(crate) fn write_session(
    ex: &mut Exporter<'_>,
    s: &SessionRow,
    w: &mut dyn Write,
) -> Result<()> {
    let title = ex.title(s);
    page_start(w, &one_line(&title))?;
    write_nested(ex, s, &title, w, 0)?;
    page_end(w)
}

/// Writes session `s` with no page around it (a viewer's page holds it).
pub(crate) fn write_fragment(
    ex: &mut Exporter<'_>,
    s: &SessionRow,
    w: &mut dyn Write,
) -> Result<()> {
    let title = ex.title(s);
    write_nested(ex, s, &title, w, 0)
}

/// Writes transcript text escaped, with a viewer's search words marked.
fn text_out(ex: &Exporter<'_>, s: &str, w: &mut dyn Write) -> Result<()> {
    match &ex.view {
        Some(v) => escape_html_marked(s, &v.highlight, w)?,
        None => escape_html(s, w)?,
    }
    Ok(())
}

/// Writes session `s` (its `title` already redacted) and, inside, its subagents.
fn write_nested(
    ex: &mut Exporter<'_>,
    s: &SessionRow,
    title: &str,
    w: &mut dyn Write,
    depth: usize,
) -> Result<()> {
    w.write_all(b"<article class=\"session\">\n<header>\n")?;
    w.write_all(if depth == 0 { b"<h1>" } else { b"<h2>" })?;
    escape_html(&one_line(title), w)?;
    w.write_all(if depth == 0 { b"</h1>\n" } else { b"</h2>\n" })?;
    write_facts(ex, s, w)?;
    w.write_all(b"</header>\n")?;
    let store = ex.store;
    let subagents = store.subagent_sessions(&s.id)?;
    let mut sink = HtmlSession {
        ex,
        session: s,
        w,
        depth,
        in_turn: false,
    };
    crate::walk_export(store, &s.id, Subagents::under_calls(&subagents), &mut sink)?;
    w.write_all(b"</article>\n")?;
    Ok(())
}

/// A session's transcript as HTML (see [`SessionSink`]): a section per turn.
struct HtmlSession<'e, 'x, 'w> {
    ex: &'e mut Exporter<'x>,
    session: &'e SessionRow,
    w: &'w mut dyn Write,
    depth: usize,
    /// Whether a turn's section is open.
    in_turn: bool,
}

impl SessionSink for HtmlSession<'_, '_, '_> {
    type Error = RenderError;

    fn turn(&mut self, turn: Option<i64>, at: Option<&str>) -> Result<()> {
        let w = &mut *self.w;
        if std::mem::replace(&mut self.in_turn, true) {
            w.write_all(b"</section>\n")?;
        }
        match turn {
            // A viewer links to turns (search hits name them from 0).
            Some(turn) if self.ex.view.is_some() && self.depth == 0 => write!(
                w,
                "<section class=\"turn\" id=\"turn-{turn}\">\n<h2><a href=\"#turn-{turn}\">Turn {}</a> <span class=\"when\">",
                turn + 1
            )?,
            Some(turn) => write!(
                w,
                "<section class=\"turn\">\n<h2>Turn {} <span class=\"when\">",
                turn + 1
            )?,
            None => w.write_all(
                b"<section class=\"turn\">\n<h2>Before the first prompt <span class=\"when\">",
            )?,
        }
        escape_html(&text::when(at), w)?;
        w.write_all(b"</span></h2>\n")?;
        Ok(())
    }

    fn part(&mut self, _seq: i64, part: &Part<'_>) -> Result<()> {
        let (ex, w) = (&mut *self.ex, &mut *self.w);
        match *part {
            Part::Prompt(body) => text_block(
                ex,
                w,
                b"<div class=\"msg user\"><div class=\"who\">User</div><div class=\"text\">",
                body,
                b"</div></div>\n",
            ),
            Part::Answer(body) if !body.trim().is_empty() => text_block(
                ex,
                w,
                b"<div class=\"msg assistant\"><div class=\"text\">",
                body,
                b"</div></div>\n",
            ),
            Part::Thinking(body) if ex.options.thinking && !body.trim().is_empty() => text_block(
                ex,
                w,
                b"<details class=\"thinking\"><summary>Thinking</summary><div class=\"text\">",
                body,
                b"</div></details>\n",
            ),
            Part::ToolCall(call) => write_tool(ex, &call, w),
            Part::ToolResult {
                name,
                output,
                is_error,
            } => {
                w.write_all(b"<details class=\"tool\"><summary>")?;
                mark(w, Some(is_error))?;
                w.write_all(b" result of <code>")?;
                escape_html(name, w)?;
                w.write_all(b"</code></summary>")?;
                write_pre(ex, w, "output", output)?;
                w.write_all(b"</details>\n")?;
                Ok(())
            }
            Part::Error(body) => text_block(
                ex,
                w,
                b"<div class=\"msg error\"><div class=\"who err\">Error</div><div class=\"text\">",
                body,
                b"</div></div>\n",
            ),
            Part::Summary(body) if !body.trim().is_empty() => text_block(
                ex,
                w,
                b"<details class=\"summary\"><summary>Summary</summary><div class=\"text\">",
                body,
                b"</div></details>\n",
            ),
            Part::Compaction => {
                w.write_all(b"<p class=\"muted\">Context compacted.</p>\n")?;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn subagent(&mut self, _index: usize, row: &SessionRow) -> Result<()> {
        write_subagent(self.ex, row, self.w, self.depth)
    }

    fn end_of_turns(&mut self) -> Result<()> {
        if self.in_turn {
            self.w.write_all(b"</section>\n")?;
        }
        write_changes(self.ex, self.session, self.w, self.depth)
    }

    fn other_subagents(&mut self, rows: &[(usize, &SessionRow)]) -> Result<()> {
        self.w
            .write_all(b"<section class=\"turn\">\n<h2>Other subagents</h2>\n")?;
        for (_, a) in rows {
            write_subagent(self.ex, a, self.w, self.depth)?;
        }
        self.w.write_all(b"</section>\n")?;
        Ok(())
    }

    fn off_branch(&mut self, n: u64) -> Result<()> {
        writeln!(
            self.w,
            "<p class=\"muted\">{n} messages on abandoned branches (rewinds, retries) are not shown.</p>"
        )?;
        Ok(())
    }
}

/// Writes transcript text `body` redacted, trimmed at its end and escaped, between `open` and
/// `close`.
fn text_block(
    ex: &mut Exporter<'_>,
    w: &mut dyn Write,
    open: &[u8],
    body: &str,
    close: &[u8],
) -> Result<()> {
    let t = ex.redact(body);
    w.write_all(open)?;
    text_out(ex, t.trim_end(), w)?;
    w.write_all(close)?;
    Ok(())
}

/// What the session changed (`trail diff`): a section with each file's changes as unified
/// diffs, escaped, added and removed lines marked by class.
fn write_changes(
    ex: &mut Exporter<'_>,
    s: &SessionRow,
    w: &mut dyn Write,
    depth: usize,
) -> Result<()> {
    let diff = ex.store.session_diff(&s.id, None)?;
    if diff.files.is_empty() {
        return Ok(());
    }
    let id = if depth == 0 { " id=\"changes\"" } else { "" };
    writeln!(
        w,
        "<section class=\"changes\"{id}>\n<h2>Changes <span class=\"when\">{} files, +{} −{}</span></h2>",
        diff.files.len(),
        diff.added,
        diff.removed
    )?;
    for f in &diff.files {
        let path = ex.redact(&f.path).into_owned();
        w.write_all(b"<details class=\"file-diff\" open><summary><code>")?;
        escape_html(&path, w)?;
        writeln!(
            w,
            "</code> <span class=\"ok\">+{}</span> <span class=\"err\">−{}</span></summary>",
            f.added, f.removed
        )?;
        for c in &f.changes {
            w.write_all(b"<p class=\"muted\">")?;
            escape_html(&crate::change_heading(c), w)?;
            w.write_all(b"</p>")?;
            let body = ex.redact(&c.diff).into_owned();
            if body.is_empty() {
                continue;
            }
            crate::write_diff_html(&body, w)?;
        }
        w.write_all(b"</details>\n")?;
    }
    w.write_all(b"</section>\n")?;
    Ok(())
}

fn write_subagent(
    ex: &mut Exporter<'_>,
    a: &SessionRow,
    w: &mut dyn Write,
    depth: usize,
) -> Result<()> {
    let title = ex.title(a);
    w.write_all(b"<details class=\"subagent\"><summary>Subagent: ")?;
    escape_html(&one_line(&title), w)?;
    writeln!(
        w,
        " <span class=\"muted\">({} turns)</span></summary>",
        a.turns
    )?;
    if depth + 1 >= MAX_DEPTH {
        w.write_all(b"<p class=\"muted\">Nested too deep to show here: ")?;
        match ex.view.as_ref().and_then(|v| v.session_href.as_deref()) {
            Some(prefix) => {
                w.write_all(b"<a href=\"")?;
                escape_html(prefix, w)?;
                escape_html(&a.id, w)?;
                w.write_all(b"\">")?;
                escape_html(&a.id, w)?;
                w.write_all(b"</a>")?;
            }
            None => escape_html(&a.id, w)?,
        }
        w.write_all(b"</p>\n")?;
    } else {
        write_nested(ex, a, &title, w, depth + 1)?;
    }
    w.write_all(b"</details>\n")?;
    Ok(())
}

fn mark(w: &mut dyn Write, error: Option<bool>) -> Result<()> {
    w.write_all(match error {
        Some(true) => b"<span class=\"err\" title=\"error\">\xE2\x9C\x97</span>",
        Some(false) => b"<span class=\"ok\" title=\"ok\">\xE2\x9C\x93</span>",
        None => b"<span class=\"muted\" title=\"no result\">\xE2\x80\xA6</span>",
    })?;
    Ok(())
}

fn write_tool(ex: &mut Exporter<'_>, call: &ToolCall<'_>, w: &mut dyn Write) -> Result<()> {
    w.write_all(b"<details class=\"tool\"><summary>")?;
    mark(w, call.result.as_ref().map(|r| r.is_error))?;
    w.write_all(b" <code>")?;
    escape_html(call.name, w)?;
    w.write_all(b"</code> ")?;
    let summary = text::tool_summary(call.input);
    let summary = ex.redact(&summary).into_owned();
    text_out(ex, &summary, w)?;
    w.write_all(b"</summary>")?;
    let pretty = pretty_input(call.input);
    if !pretty.trim().is_empty() {
        write_pre(ex, w, "input", &pretty)?;
    }
    if let Some(r) = &call.result {
        let out = r.output.unwrap_or("");
        if !out.trim().is_empty() {
            write_pre(ex, w, "output", out)?;
        }
    }
    w.write_all(b"</details>\n")?;
    Ok(())
}

/// Writes `body` redacted and cut to the HTML view limits.
fn write_pre(ex: &mut Exporter<'_>, w: &mut dyn Write, class: &str, body: &str) -> Result<()> {
    let (shown, left) = ex.redact_view(body, HTML_OUTPUT_LINES, HTML_OUTPUT_CHARS);
    write!(w, "<pre class=\"{class}\">")?;
    text_out(ex, shown.trim_end_matches('\n'), w)?;
    w.write_all(b"</pre>")?;
    if let Some(left) = left {
        write!(w, "<p class=\"muted\">{}</p>", omitted(left))?;
    }
    Ok(())
}

fn write_facts(ex: &mut Exporter<'_>, s: &SessionRow, w: &mut dyn Write) -> Result<()> {
    w.write_all(b"<dl class=\"facts\">\n")?;
    let fact = |w: &mut dyn Write, k: &str, v: &str| -> Result<()> {
        write!(w, "<dt>{k}</dt><dd>")?;
        escape_html(v, w)?;
        w.write_all(b"</dd>\n")?;
        Ok(())
    };
    for (label, value, _) in ex.session_facts(s) {
        fact(w, label, &value)?;
    }
    if let Some(p) = &s.parent_session_id {
        fact(w, "Subagent of", p)?;
    }
    w.write_all(b"</dl>\n")?;
    Ok(())
}

pub(crate) fn write_index(
    ex: &mut Exporter<'_>,
    sessions: &[SessionRow],
    w: &mut dyn Write,
) -> Result<()> {
    page_start(w, "trail sessions")?;
    write!(
        w,
        "<h1>Sessions</h1>\n<p class=\"muted\">{} sessions exported by trail.</p>\n<table>\n<thead><tr><th>Last activity</th><th>Source</th><th>Repository or folder</th><th>Turns</th><th>Title</th></tr></thead>\n<tbody>\n",
        sessions.len()
    )?;
    for s in sessions {
        let title = ex.title(s);
        let place = ex
            .redact(s.repository.as_deref().or(s.cwd.as_deref()).unwrap_or("-"))
            .into_owned();
        w.write_all(b"<tr><td>")?;
        escape_html(&text::when(s.updated_at.as_deref()), w)?;
        w.write_all(b"</td><td>")?;
        escape_html(&s.source, w)?;
        w.write_all(b"</td><td>")?;
        escape_html(&place, w)?;
        write!(w, "</td><td>{}</td><td><a href=\"", s.turns)?;
        escape_html(&file_name(&s.id, Format::Html), w)?;
        w.write_all(b"\">")?;
        escape_html(trail_model::truncate_chars(&one_line(&title), 200), w)?;
        w.write_all(b"</a></td></tr>\n")?;
    }
    w.write_all(b"</tbody>\n</table>\n")?;
    page_end(w)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
