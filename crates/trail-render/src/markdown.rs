//! Markdown: a header table, one heading per turn, the prompt, the answer, tool calls as
//! compact fenced blocks, thinking on request, subagent transcripts quoted under the tool call
//! that started them.

use std::borrow::Cow;
use std::io::Write;

use trail_store::SessionRow;

use crate::session::{Part, SessionSink, Subagents, ToolCall};
use crate::text::{self, fence, omitted, pretty_input, LinePrefix};
use crate::{Exporter, RenderError, Result};

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
    writeln!(w, "{hashes} {}\n", inert_inline(&one_line(&title)))?;
    write_header(ex, s, w)?;
    let store = ex.store;
    let subagents = store.subagent_sessions(&s.id)?;
    let mut sink = MarkdownSession {
        ex,
        session: s,
        w,
        depth,
        turn_hashes: "#".repeat((depth + 2).min(6)),
        last_was_text: false,
    };
    crate::walk_export(store, &s.id, Subagents::under_calls(&subagents), &mut sink)
}

/// A session's transcript as Markdown (see [`SessionSink`]).
struct MarkdownSession<'e, 'x, 'w> {
    ex: &'e mut Exporter<'x>,
    session: &'e SessionRow,
    w: &'w mut dyn Write,
    depth: usize,
    /// The heading of a turn (one level under the session's title).
    turn_hashes: String,
    /// Whether the last part written was answer text (a run of them has one `**Assistant**`).
    last_was_text: bool,
}

impl SessionSink for MarkdownSession<'_, '_, '_> {
    type Error = RenderError;

    fn turn(&mut self, turn: Option<i64>, at: Option<&str>) -> Result<()> {
        self.last_was_text = false;
        let hashes = &self.turn_hashes;
        match turn {
            Some(t) => writeln!(self.w, "{hashes} Turn {} · {}\n", t + 1, text::when(at))?,
            None => writeln!(self.w, "{hashes} Before the first prompt\n")?,
        }
        Ok(())
    }

    fn part(&mut self, _seq: i64, part: &Part<'_>) -> Result<()> {
        let was_text = std::mem::replace(&mut self.last_was_text, false);
        let (ex, w) = (&mut *self.ex, &mut *self.w);
        match *part {
            Part::Prompt(body) => {
                let t = ex.redact(body);
                writeln!(w, "**User**\n\n{}\n", inert(t.trim_end()))?;
            }
            Part::Answer(body) if !body.trim().is_empty() => {
                let t = ex.redact(body);
                if !was_text {
                    writeln!(w, "**Assistant**\n")?;
                }
                writeln!(w, "{}\n", inert(t.trim_end()))?;
                self.last_was_text = true;
            }
            Part::Answer(_) => self.last_was_text = was_text,
            Part::Thinking(body) if ex.options.thinking && !body.trim().is_empty() => {
                quoted(ex, w, "Thinking", body)?
            }
            Part::ToolCall(call) => write_tool(ex, &call, w)?,
            Part::ToolResult {
                name,
                output,
                is_error,
            } => {
                let mark = if is_error { "✗ error" } else { "✓" };
                writeln!(w, "Result of `{}` {mark}\n", code_span(name))?;
                write_fenced(ex, w, "text", output)?;
            }
            Part::Error(body) => {
                let t = ex.redact(body);
                writeln!(w, "> **Error:** {}\n", inert_inline(&one_line(&t)))?;
            }
            Part::Summary(body) if !body.trim().is_empty() => quoted(ex, w, "Summary", body)?,
            Part::Compaction => writeln!(w, "*— context compacted —*\n")?,
            // Not shown: the flag stays as it was, as if the message were not there.
            _ => self.last_was_text = was_text,
        }
        Ok(())
    }

    fn subagent(&mut self, _index: usize, row: &SessionRow) -> Result<()> {
        write_subagent(self.ex, row, self.w, self.depth)
    }

    fn end_of_turns(&mut self) -> Result<()> {
        write_changes(self.ex, self.session, self.w, &self.turn_hashes)
    }

    fn other_subagents(&mut self, rows: &[(usize, &SessionRow)]) -> Result<()> {
        writeln!(self.w, "{} Other subagents\n", self.turn_hashes)?;
        for (_, a) in rows {
            write_subagent(self.ex, a, self.w, self.depth)?;
        }
        Ok(())
    }

    fn off_branch(&mut self, n: u64) -> Result<()> {
        writeln!(
            self.w,
            "*{n} messages on abandoned branches (rewinds, retries) are not shown.*\n"
        )?;
        Ok(())
    }
}

/// Writes `body` redacted in a quote under an italic `label` (thinking, summaries).
fn quoted(ex: &mut Exporter<'_>, w: &mut dyn Write, label: &str, body: &str) -> Result<()> {
    let t = ex.redact(body);
    let mut q = LinePrefix::new(w, "> ");
    writeln!(q, "*{label}*\n\n{}", inert(t.trim_end()))?;
    writeln!(w)?;
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

fn write_tool(ex: &mut Exporter<'_>, call: &ToolCall<'_>, w: &mut dyn Write) -> Result<()> {
    let name = call.name;
    let mark = match &call.result {
        Some(r) if r.is_error => "✗ error",
        Some(_) => "✓",
        None => "(no result)",
    };
    let summary = text::tool_summary(call.input);
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
    let pretty = pretty_input(call.input);
    if !pretty.trim().is_empty() {
        write_fenced(ex, w, "json", &pretty)?;
    }
    if let Some(r) = &call.result {
        let out = r.output.unwrap_or("");
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
    inert_inline(&one_line(s)).replace('|', "\\|")
}

/// Transcript prose as Markdown that a renderer shows and never runs. Markdown passes raw HTML
/// through, and not every renderer sanitizes it (pandoc, static site generators). So the text
/// is read as a CommonMark renderer reads it (pulldown-cmark, with the source range of each
/// construct), and:
/// * the `<` of raw HTML (a tag, a comment, a block) becomes `&lt;`, which renderers show as `<`;
/// * an image (`![alt](url)`) gets a backslash before its `[`: a viewed export fetches nothing;
/// * a link to anything but http, https, mailto, ftp or a path (`javascript:`, `data:`, also
///   when spelled with entities) gets a backslash before its `[` (an autolink: `&lt;` for
///   its `<`), and is shown as typed.
///
/// Code spans and blocks are left as written (renderers escape them). An escape can change how
/// the rest reads (a neutralized link may leave a reference link behind it), so the text is
/// read again until nothing is left to neutralize.
pub fn inert(s: &str) -> Cow<'_, str> {
    if !may_hold_markup(s) {
        return Cow::Borrowed(s);
    }
    let mut text = Cow::Borrowed(s);
    for _ in 0..INERT_PASSES {
        let reading = read_markup(&text);
        if reading.edits.is_empty() {
            return match reading.open_fence.and_then(|at| fence_closer(&text, at)) {
                Some(fence) => Cow::Owned(format!("{text}\n{fence}")),
                None => text,
            };
        }
        text = Cow::Owned(apply_edits(&text, reading.edits));
    }
    // Not settled (never seen): every `<` and `[` shown as typed.
    Cow::Owned(s.replace('<', "&lt;").replace('[', "\\["))
}

/// [`inert`] for text written inside a line of other Markdown (a heading, a table cell, after
/// `**Error:**`): read as the rest of a paragraph, where a line that alone would open a code
/// block (```` ```<svg onload=...> ````) is inline text with raw HTML in it.
pub fn inert_inline(s: &str) -> Cow<'_, str> {
    if !may_hold_markup(s) {
        return Cow::Borrowed(s);
    }
    match inert(&format!("x {s}")) {
        Cow::Borrowed(_) => Cow::Borrowed(s),
        Cow::Owned(mut o) => {
            o.drain(..2);
            Cow::Owned(o)
        }
    }
}

/// Whether `s` holds a byte that can start raw HTML, a link, an image, a definition or a code
/// fence: text without one is its own inert form.
fn may_hold_markup(s: &str) -> bool {
    s.bytes().any(|b| matches!(b, b'<' | b'[' | b'`' | b'~'))
}

/// The fence that closes the fenced code block opened at `at` (outside any list or quote: those
/// end with the message), when it runs to the end of `text` unclosed. Left open, the block would
/// run into the next message and end at that message's first fence, so that its code would be
/// read as prose and its prose (raw HTML left as it was, being code when read alone) as live
/// markup.
fn fence_closer(text: &str, at: std::ops::Range<usize>) -> Option<String> {
    if at.end < text.trim_end().len() {
        return None;
    }
    let block = &text[at.start..];
    let opening = block.trim_start_matches(' ');
    let ch = opening.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let n = opening.chars().take_while(|&c| c == ch).count();
    let (_, last) = block.trim_end().rsplit_once('\n').unwrap_or(("", ""));
    let last = last.trim();
    let closed = last.len() >= n && last.chars().all(|c| c == ch);
    (!closed).then(|| ch.to_string().repeat(n))
}

/// Readings of [`inert`] before it gives up on the fine-grained escapes.
const INERT_PASSES: usize = 8;

/// An escape at a byte offset of the text.
enum Edit {
    /// The `<` there becomes `&lt;`.
    Entity,
    /// A backslash goes before the character there.
    Backslash,
}

/// What one reading of a text as CommonMark found.
struct Reading {
    /// The escapes that leave no raw HTML, image or unsafe link in it, by offset.
    edits: Vec<(usize, Edit)>,
    /// The range of its last fenced code block outside lists and quotes.
    open_fence: Option<std::ops::Range<usize>>,
}

/// Reads `text` once, as a CommonMark renderer does.
fn read_markup(text: &str) -> Reading {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    // The backslash before the `[` of a link, image or definition spanning `range`.
    let bracket = |range: std::ops::Range<usize>| {
        let at = text.get(range.clone())?.find('[')?;
        Some((range.start + at, Edit::Backslash))
    };
    let parser = Parser::new(text);
    // Every link reference definition, whatever its destination: definitions are global to a
    // document, so one left in a message would give a link or an image of another message its
    // address (and that message, read alone, shows neither).
    let mut edits: Vec<(usize, Edit)> = parser
        .reference_definitions()
        .iter()
        .filter_map(|(_, def)| bracket(def.span.clone()))
        .collect();
    let mut depth = 0usize;
    let mut open_fence = None;
    for (event, range) in parser.into_offset_iter() {
        match event {
            Event::Html(_) | Event::InlineHtml(_) => edits.extend(
                text[range.clone()]
                    .match_indices('<')
                    .map(|(i, _)| (range.start + i, Edit::Entity)),
            ),
            Event::Start(Tag::Image { .. }) => edits.extend(bracket(range)),
            Event::Start(Tag::Link { dest_url, .. }) if !safe_destination(&dest_url) => {
                if text.as_bytes().get(range.start) == Some(&b'<') {
                    edits.push((range.start, Edit::Entity));
                } else {
                    edits.extend(bracket(range));
                }
            }
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) if depth == 0 => {
                open_fence = Some(range);
            }
            Event::Start(Tag::List(_) | Tag::Item | Tag::BlockQuote(_)) => depth += 1,
            Event::End(TagEnd::List(_) | TagEnd::Item | TagEnd::BlockQuote(_)) => {
                depth = depth.saturating_sub(1)
            }
            _ => {}
        }
    }
    edits.sort_by_key(|(at, _)| *at);
    edits.dedup_by_key(|(at, _)| *at);
    Reading { edits, open_fence }
}

fn apply_edits(text: &str, edits: Vec<(usize, Edit)>) -> String {
    let mut out = String::with_capacity(text.len() + 4 * edits.len());
    let mut from = 0;
    for (at, edit) in edits {
        out.push_str(&text[from..at]);
        match edit {
            Edit::Entity => {
                out.push_str("&lt;");
                from = at + 1;
            }
            Edit::Backslash => {
                out.push('\\');
                from = at;
            }
        }
    }
    out.push_str(&text[from..]);
    out
}

/// Whether a link's destination (entities already decoded) is a web or mail address or a path:
/// no scheme, or http, https, mailto or ftp. Browsers drop tabs and newlines inside a URL
/// (`java\tscript:` is `javascript:`), so they are dropped first.
fn safe_destination(url: &str) -> bool {
    let url: String = url
        .trim_start()
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let scheme_len = url
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
        .count();
    if scheme_len == 0 || url.as_bytes().get(scheme_len) != Some(&b':') {
        return true;
    }
    matches!(
        url[..scheme_len].to_ascii_lowercase().as_str(),
        "http" | "https" | "mailto" | "ftp"
    )
}

#[cfg(test)]
mod tests {
    use super::{inert, inert_inline};

    #[test]
    fn raw_html_and_autolinks_are_shown_not_run() {
        assert_eq!(
            inert("a <script>x()</script> b <img src=x onerror=y()>"),
            "a &lt;script>x()&lt;/script> b &lt;img src=x onerror=y()>"
        );
        assert_eq!(
            inert("<!-- c --> <?php ?> <javascript:alert(1)>"),
            "&lt;!-- c --> &lt;?php ?> &lt;javascript:alert(1)>"
        );
        // Not markup: left alone.
        assert_eq!(inert("if a < b and c<5 then"), "if a < b and c<5 then");
    }

    #[test]
    fn code_is_left_as_written() {
        let s =
            "see `<div>` and ``a ` <b>`` here\n```html\n<script>ok()</script>\n```\n<i>after</i>";
        assert_eq!(
            inert(s),
            "see `<div>` and ``a ` <b>`` here\n```html\n<script>ok()</script>\n```\n&lt;i>after&lt;/i>"
        );
        // An unclosed backtick run is text, and so is what follows it.
        assert_eq!(inert("a ` <b>"), "a ` &lt;b>");
        // An escaped backtick opens no code span.
        assert_eq!(inert("\\`<b>`"), "\\`&lt;b>`");
        // A tilde fence, closed only by a run as long.
        assert_eq!(
            inert("~~~~\n<x>\n~~~\n<y>\n~~~~\n<z>"),
            "~~~~\n<x>\n~~~\n<y>\n~~~~\n&lt;z>"
        );
    }

    #[test]
    fn links_that_could_run_something_lose_their_syntax() {
        assert_eq!(
            inert("[a](javascript:alert(1))"),
            "\\[a](javascript:alert(1))"
        );
        // An angle-bracket destination left alone would read as an autolink.
        assert_eq!(inert("[a]( <JavaScript:x>)"), "\\[a]( &lt;JavaScript:x>)");
        assert_eq!(inert("[a](&#106;avascript:x)"), "\\[a](&#106;avascript:x)");
        assert_eq!(inert("[a](data:text/html,x)"), "\\[a](data:text/html,x)");
        // A reference link, and the shortcut link its neutralizing leaves behind.
        assert_eq!(
            inert("[x][ref]\n\n[ref]: vbscript:x"),
            "\\[x][ref]\n\n\\[ref]: vbscript:x"
        );
        // Safe destinations stay links.
        let safe = "[a](https://example.com/x) [b](./docs/a.md) [c](#top) <https://e.example>";
        assert_eq!(inert(safe), safe);
        // Images become text.
        assert_eq!(
            inert("![logo](https://t.example/p.png)"),
            "!\\[logo](https://t.example/p.png)"
        );
    }

    fn fragment() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            Just("<".to_string()),
            Just("<script>".to_string()),
            Just("<img src=x onerror=y>".to_string()),
            Just("</".to_string()),
            Just("<!--".to_string()),
            Just("<?".to_string()),
            Just("`".to_string()),
            Just("```".to_string()),
            Just("~~~".to_string()),
            Just("\n".to_string()),
            Just("\n\n".to_string()),
            Just("    ".to_string()),
            Just("> ".to_string()),
            Just("- ".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just("](".to_string()),
            Just("]: ".to_string()),
            Just(")".to_string()),
            Just("!".to_string()),
            Just("\\".to_string()),
            Just("javascript:".to_string()),
            Just("JaVaScRiPt:".to_string()),
            Just("data:".to_string()),
            Just("&#106;".to_string()),
            Just("https://e.example/".to_string()),
            "[a-z ]{0,6}",
        ]
    }

    proptest::proptest! {
        /// Whatever the text, a CommonMark renderer finds in what `inert` makes of it no raw
        /// HTML, no image and no link to anything but http, https, mailto, ftp or a path.
        #[test]
        fn rendered_prose_holds_no_markup_that_runs(
            title in proptest::collection::vec(fragment(), 0..8),
            prompt in proptest::collection::vec(fragment(), 0..30),
            answer in proptest::collection::vec(fragment(), 0..30),
            thinking in proptest::collection::vec(fragment(), 0..12),
            error in proptest::collection::vec(fragment(), 0..8),
        ) {
            use pulldown_cmark::{Event, Parser, Tag};
            // Laid out as `write_nested` lays a session out: every context prose is written in.
            let text = format!("{title:?} / {prompt:?} / {answer:?} / {thinking:?} / {error:?}");
            let one = |parts: &[String]| super::one_line(&parts.concat());
            let mut safe = format!("# {}\n\n| | |\n|---|---|\n| Title | {} |\n\n", inert_inline(&one(&title)), super::table_cell(&one(&title)));
            safe += &format!("**User**\n\n{}\n\n", inert(prompt.concat().trim_end()));
            safe += &format!("**Assistant**\n\n{}\n\n", inert(answer.concat().trim_end()));
            let quoted = format!("*Thinking*\n\n{}", inert(thinking.concat().trim_end()));
            for line in quoted.lines() {
                safe += &format!("> {line}\n");
            }
            safe += &format!("\n> **Error:** {}\n\n", inert_inline(&one(&error)));
            for event in Parser::new(&safe) {
                match event {
                    Event::Html(h) | Event::InlineHtml(h) => {
                        proptest::prop_assert!(false, "raw HTML {h:?} from {text:?} -> {safe:?}")
                    }
                    Event::Start(Tag::Image { dest_url, .. }) => {
                        proptest::prop_assert!(false, "image {dest_url:?} from {text:?} -> {safe:?}")
                    }
                    Event::Start(Tag::Link { dest_url, .. }) => {
                        let url = dest_url.to_ascii_lowercase();
                        let scheme = url.split_once(':').map(|(s, _)| s).filter(|s| {
                            !s.is_empty() && s.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
                        });
                        proptest::prop_assert!(
                            scheme.is_none_or(|s| matches!(s, "http" | "https" | "mailto" | "ftp")),
                            "link to {dest_url:?} from {text:?} -> {safe:?}"
                        );
                    }
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn link_definitions_are_shown_as_text() {
        // Whatever the destination: another message could use it.
        assert_eq!(
            inert("[x]: https://t.example/p.png"),
            "\\[x]: https://t.example/p.png"
        );
        // The second line, then a paragraph's continuation, is no definition.
        assert_eq!(
            inert("[x]: https://a.example\n[x]: javascript:y"),
            "\\[x]: https://a.example\n[x]: javascript:y"
        );
    }

    #[test]
    fn inline_text_is_read_as_inline() {
        // Alone, a code block's opening; after other text on a line, raw HTML.
        assert_eq!(inert("```<svg onload=x>"), "```<svg onload=x>\n```");
        assert_eq!(inert_inline("```<svg onload=x>"), "```&lt;svg onload=x>");
        assert!(matches!(
            inert_inline("a [b] c"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_fence_left_open_is_closed() {
        assert_eq!(inert("~~~\n<script>"), "~~~\n<script>\n~~~");
        assert_eq!(inert("````rust\nfn x"), "````rust\nfn x\n````");
        assert_eq!(inert("```\nx\n```"), "```\nx\n```");
        // In a list or a quote, the end of the message closes it.
        assert_eq!(inert("- ```\n  <b>"), "- ```\n  <b>");
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(
            inert("nothing to do here"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
