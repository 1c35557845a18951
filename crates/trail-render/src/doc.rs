//! One rendering interface for documents (the reports, a session's changes): a producer walks
//! its data once and calls a [`Sink`]; the sink decides what the elements look like. Three
//! sinks ship: [`MarkdownSink`], [`HtmlSink`] (every piece of text escaped, optionally
//! redacted) and [`TerminalSink`] (every piece of text made terminal-safe, styles through a
//! painter the frontend gives). The model is ripgrep's `Sink` (crates/searcher/src/sink.rs): the
//! searcher knows what it found, the sink knows how to show it.
//!
//! Text comes in [`Run`]s. `Text` is words the program wrote (headers, labels, numbers, names
//! it keeps); `Quote` is transcript text (a title, a prompt, a quote), which Markdown keeps inert
//! (no live HTML, no link) and every sink escapes. Blocks: a heading, a paragraph, a list
//! (nested by opening one after an item), a table (columns with their alignment, rows of
//! cells), a note, a diff, and sections around them.

use std::borrow::Cow;
use std::io::{self, Write};

use crate::redact::{RedactionCounts, Redactor};

/// A piece of inline text and how it wants to be shown.
#[derive(Debug, Clone, PartialEq)]
pub enum Run<'a> {
    /// Words the program wrote.
    Text(Cow<'a, str>),
    /// Transcript text: inert in Markdown, escaped everywhere.
    Quote(Cow<'a, str>),
    /// Emphasis (`_x_`).
    Emph(Cow<'a, str>),
    /// Strong emphasis (`**x**`).
    Strong(Cow<'a, str>),
    /// Code or a name (`` `x` ``).
    Code(Cow<'a, str>),
    /// A link the program built; HTML links only `https://` URLs.
    Link {
        text: Cow<'a, str>,
        url: Cow<'a, str>,
    },
    /// A session (and turn) named by `label`: a link where the sink knows where sessions are.
    Session {
        id: Cow<'a, str>,
        label: Cow<'a, str>,
        turn: Option<i64>,
    },
    /// A line break inside a paragraph.
    Break,
}

impl<'a> Run<'a> {
    pub fn text(s: impl Into<Cow<'a, str>>) -> Run<'a> {
        Run::Text(s.into())
    }
    pub fn quote(s: impl Into<Cow<'a, str>>) -> Run<'a> {
        Run::Quote(s.into())
    }
    pub fn emph(s: impl Into<Cow<'a, str>>) -> Run<'a> {
        Run::Emph(s.into())
    }
    pub fn strong(s: impl Into<Cow<'a, str>>) -> Run<'a> {
        Run::Strong(s.into())
    }
    pub fn code(s: impl Into<Cow<'a, str>>) -> Run<'a> {
        Run::Code(s.into())
    }
    pub fn link(text: impl Into<Cow<'a, str>>, url: impl Into<Cow<'a, str>>) -> Run<'a> {
        Run::Link {
            text: text.into(),
            url: url.into(),
        }
    }
    pub fn session(
        id: impl Into<Cow<'a, str>>,
        label: impl Into<Cow<'a, str>>,
        turn: Option<i64>,
    ) -> Run<'a> {
        Run::Session {
            id: id.into(),
            label: label.into(),
            turn,
        }
    }
}

/// How a table column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    /// Numbers.
    Right,
}

/// A table column: its title and alignment.
#[derive(Debug, Clone, PartialEq)]
pub struct Column<'a> {
    pub title: Cow<'a, str>,
    pub align: Align,
}

impl<'a> Column<'a> {
    pub fn left(title: impl Into<Cow<'a, str>>) -> Column<'a> {
        Column {
            title: title.into(),
            align: Align::Left,
        }
    }
    pub fn right(title: impl Into<Cow<'a, str>>) -> Column<'a> {
        Column {
            title: title.into(),
            align: Align::Right,
        }
    }
}

/// A table cell: runs of text (possibly none, an empty value), or nothing at all (a cell that
/// has no value in this row, as a gap's figures).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    Runs(Vec<Run<'a>>),
    Absent,
}

impl<'a> Cell<'a> {
    /// A cell of program text.
    pub fn text(s: impl Into<Cow<'a, str>>) -> Cell<'a> {
        Cell::Runs(vec![Run::text(s)])
    }
}

/// What a table row is, for sinks that style rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    Body,
    /// A row under the one before it (a per-model breakdown).
    Sub,
    /// A row standing for a gap (no figures).
    Gap,
    /// The totals.
    Total,
}

/// The elements a document is made of. Producers call these in reading order.
pub trait Sink {
    /// A heading; level 1 is the document's title.
    fn heading(&mut self, level: u8, runs: &[Run<'_>]);
    /// A paragraph ([`Run::Break`] breaks its lines).
    fn paragraph(&mut self, runs: &[Run<'_>]);
    /// A muted remark (an estimate, an empty result).
    fn note(&mut self, runs: &[Run<'_>]);
    /// Opens a list; opened right after an item, it nests under that item.
    fn begin_list(&mut self, ordered: bool);
    fn item(&mut self, runs: &[Run<'_>]);
    fn end_list(&mut self);
    fn begin_table(&mut self, columns: &[Column<'_>]);
    fn row(&mut self, kind: RowKind, cells: &[Cell<'_>]);
    fn end_table(&mut self);
    /// Opens a section (a work stream, a finding): its heading follows.
    fn begin_section(&mut self);
    fn end_section(&mut self);
    /// A unified diff, lines coloured by [`DiffLine`].
    fn diff(&mut self, body: &str);
}

/// What a unified diff's line is: the one place that decides diff colouring (HTML classes here,
/// terminal colours in the terminal sink and the CLI).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffLine {
    /// `+++` / `---` file headers.
    Header,
    Added,
    Removed,
    /// `@@` hunk headers.
    Hunk,
    Context,
}

impl DiffLine {
    pub fn of(line: &str) -> DiffLine {
        if line.starts_with("+++") || line.starts_with("---") {
            DiffLine::Header
        } else if line.starts_with('+') {
            DiffLine::Added
        } else if line.starts_with('-') {
            DiffLine::Removed
        } else if line.starts_with("@@") {
            DiffLine::Hunk
        } else {
            DiffLine::Context
        }
    }

    /// The CSS class of the line in the HTML views: `dh`, `da`, `dd`, `dk`; none for context.
    pub fn class(self) -> Option<&'static str> {
        match self {
            DiffLine::Header => Some("dh"),
            DiffLine::Added => Some("da"),
            DiffLine::Removed => Some("dd"),
            DiffLine::Hunk => Some("dk"),
            DiffLine::Context => None,
        }
    }
}

/// Writes a unified diff as `<pre class="diff">`, every line escaped, changed lines in a span
/// of their [`DiffLine::class`] (the session export and the web viewer's changes page).
pub fn write_diff_html(body: &str, w: &mut dyn Write) -> io::Result<()> {
    w.write_all(b"<pre class=\"diff\">")?;
    for line in body.lines() {
        match DiffLine::of(line).class() {
            None => crate::escape_html(line, w)?,
            Some(class) => {
                write!(w, "<span class=\"{class}\">")?;
                crate::escape_html(line, w)?;
                w.write_all(b"</span>")?;
            }
        }
        w.write_all(b"\n")?;
    }
    w.write_all(b"</pre>\n")
}

// ---------------------------------------------------------------------------------------------
// Markdown

/// The kind of the last block written, for the blank lines between blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Block {
    #[default]
    Start,
    Heading,
    Paragraph,
    List,
    Table,
}

/// Writes CommonMark (GitHub tables): blocks apart by one blank line, a list right under the
/// paragraph that introduces it, transcript text inert.
#[derive(Debug, Default)]
pub struct MarkdownSink {
    out: String,
    last: Block,
    /// The output ends with a blank line already.
    at_blank: bool,
    /// Open lists: (ordered, next number).
    lists: Vec<(bool, usize)>,
}

impl MarkdownSink {
    pub fn new() -> MarkdownSink {
        MarkdownSink::default()
    }

    /// The document written.
    pub fn finish(self) -> String {
        self.out
    }

    fn start(&mut self, kind: Block) {
        let tight = kind == Block::List && self.last == Block::Paragraph;
        if self.last != Block::Start && !self.at_blank && !tight {
            self.out.push('\n');
        }
        self.at_blank = false;
        self.last = kind;
    }

    fn runs(&mut self, runs: &[Run<'_>], in_cell: bool) {
        for run in runs {
            match run {
                Run::Text(s) => push_cell_text(&mut self.out, s, in_cell),
                Run::Quote(s) => {
                    push_cell_text(&mut self.out, &crate::inert_markdown_inline(s), in_cell)
                }
                Run::Emph(s) => {
                    self.out.push('_');
                    push_cell_text(&mut self.out, s, in_cell);
                    self.out.push('_');
                }
                Run::Strong(s) => {
                    self.out.push_str("**");
                    push_cell_text(&mut self.out, s, in_cell);
                    self.out.push_str("**");
                }
                Run::Code(s) | Run::Session { label: s, .. } => {
                    self.out.push('`');
                    push_cell_text(&mut self.out, s, in_cell);
                    self.out.push('`');
                }
                Run::Link { text, url } => {
                    self.out.push('[');
                    push_cell_text(&mut self.out, text, in_cell);
                    self.out.push_str("](");
                    self.out.push_str(url);
                    self.out.push(')');
                }
                Run::Break => self.out.push('\n'),
            }
        }
    }
}

/// Text into Markdown, with `|` escaped inside a table cell.
fn push_cell_text(out: &mut String, s: &str, in_cell: bool) {
    if in_cell && s.contains('|') {
        out.push_str(&s.replace('|', "\\|"));
    } else {
        out.push_str(s);
    }
}

impl Sink for MarkdownSink {
    fn heading(&mut self, level: u8, runs: &[Run<'_>]) {
        self.start(Block::Heading);
        self.out.push_str(&"#".repeat(level.max(1) as usize));
        self.out.push(' ');
        self.runs(runs, false);
        self.out.push('\n');
    }

    fn paragraph(&mut self, runs: &[Run<'_>]) {
        self.start(Block::Paragraph);
        self.runs(runs, false);
        self.out.push('\n');
    }

    fn note(&mut self, runs: &[Run<'_>]) {
        self.paragraph(runs);
    }

    fn begin_list(&mut self, ordered: bool) {
        if self.lists.is_empty() {
            self.start(Block::List);
        }
        self.lists.push((ordered, 1));
    }

    fn item(&mut self, runs: &[Run<'_>]) {
        // A nested item stands under its parent's text: 3 columns under `1. `, 2 under `- `.
        let depth = self.lists.len().saturating_sub(1);
        let indent: usize = self.lists[..depth]
            .iter()
            .map(|(ordered, _)| if *ordered { 3 } else { 2 })
            .sum();
        self.out.push_str(&" ".repeat(indent));
        match self.lists.last_mut() {
            Some((true, n)) => {
                self.out.push_str(&format!("{n}. "));
                *n += 1;
            }
            _ => self.out.push_str("- "),
        }
        self.runs(runs, false);
        self.out.push('\n');
    }

    fn end_list(&mut self) {
        self.lists.pop();
    }

    fn begin_table(&mut self, columns: &[Column<'_>]) {
        self.start(Block::Table);
        self.out.push('|');
        for c in columns {
            self.out.push(' ');
            push_cell_text(&mut self.out, &c.title, true);
            self.out.push_str(" |");
        }
        self.out.push_str("\n|");
        for c in columns {
            self.out.push_str(match c.align {
                Align::Left => "---|",
                Align::Right => "---:|",
            });
        }
        self.out.push('\n');
    }

    fn row(&mut self, _kind: RowKind, cells: &[Cell<'_>]) {
        self.out.push('|');
        for cell in cells {
            match cell {
                Cell::Runs(runs) => {
                    self.out.push(' ');
                    self.runs(runs, true);
                    self.out.push_str(" |");
                }
                Cell::Absent => self.out.push_str(" |"),
            }
        }
        self.out.push('\n');
    }

    fn end_table(&mut self) {}

    fn begin_section(&mut self) {}

    fn end_section(&mut self) {
        if !self.at_blank && self.last != Block::Start {
            self.out.push('\n');
            self.at_blank = true;
        }
    }

    fn diff(&mut self, body: &str) {
        self.start(Block::Paragraph);
        let fence = crate::text::fence(body);
        self.out
            .push_str(&format!("{fence}diff\n{body}\n{fence}\n"));
        self.last = Block::Table;
    }
}

// ---------------------------------------------------------------------------------------------
// HTML

/// Where a session (and turn) is shown, for [`Run::Session`] links.
pub type SessionHref<'a> = Box<dyn Fn(&str, Option<i64>) -> String + 'a>;

/// Writes an HTML fragment: every piece of text escaped and, with a redactor, redacted; links
/// only to `https://` URLs; sessions linked where [`HtmlSink::session_links`] says. Classes are
/// the web viewer's: `num` on numeric cells, `total`/`sub`/`gap` rows, `stream` sections,
/// `muted` notes, `diff` blocks.
pub struct HtmlSink<'a> {
    out: String,
    redactor: Option<&'a Redactor>,
    session_href: Option<SessionHref<'a>>,
    /// Open lists: (ordered, an item is open).
    lists: Vec<(bool, bool)>,
    columns: Vec<Align>,
}

impl<'a> Default for HtmlSink<'a> {
    fn default() -> Self {
        HtmlSink::new()
    }
}

impl<'a> HtmlSink<'a> {
    pub fn new() -> HtmlSink<'a> {
        HtmlSink {
            out: String::new(),
            redactor: None,
            session_href: None,
            lists: Vec::new(),
            columns: Vec::new(),
        }
    }

    /// Redacts every piece of text before it is escaped.
    pub fn redacted(mut self, redactor: &'a Redactor) -> HtmlSink<'a> {
        self.redactor = Some(redactor);
        self
    }

    /// Links sessions to the URL `href(id, turn)` returns.
    pub fn session_links(mut self, href: SessionHref<'a>) -> HtmlSink<'a> {
        self.session_href = Some(href);
        self
    }

    /// The fragment written.
    pub fn finish(self) -> String {
        self.out
    }

    fn text(&mut self, s: &str) {
        match self.redactor {
            Some(r) => {
                let mut counts = RedactionCounts::default();
                let red = r.redact(s, &mut counts);
                push_escaped(&mut self.out, &red);
            }
            None => push_escaped(&mut self.out, s),
        }
    }

    fn wrapped(&mut self, open: &str, s: &str, close: &str) {
        self.out.push_str(open);
        self.text(s);
        self.out.push_str(close);
    }

    fn runs(&mut self, runs: &[Run<'_>]) {
        for run in runs {
            match run {
                Run::Text(s) | Run::Quote(s) => self.text(s),
                Run::Emph(s) => self.wrapped("<em>", s, "</em>"),
                Run::Strong(s) => self.wrapped("<strong>", s, "</strong>"),
                Run::Code(s) => self.wrapped("<code>", s, "</code>"),
                Run::Link { text, url } if url.starts_with("https://") => {
                    self.out.push_str("<a href=\"");
                    push_escaped(&mut self.out, url);
                    self.out.push_str("\" rel=\"noreferrer noopener\">");
                    self.text(text);
                    self.out.push_str("</a>");
                }
                Run::Link { text, .. } => self.text(text),
                Run::Session { id, label, turn } => {
                    let href = self.session_href.as_ref().map(|f| f(id, *turn));
                    match href {
                        Some(href) => {
                            self.out.push_str("<a href=\"");
                            push_escaped(&mut self.out, &href);
                            self.out.push_str("\"><code>");
                            self.text(label);
                            self.out.push_str("</code></a>");
                        }
                        None => self.wrapped("<code>", label, "</code>"),
                    }
                }
                Run::Break => self.out.push_str("<br>"),
            }
        }
    }
}

/// Appends `s` escaped for HTML text and quoted attributes.
pub fn push_escaped(out: &mut String, s: &str) {
    let mut buf = Vec::with_capacity(s.len() + 16);
    // Writing to a Vec cannot fail.
    let _ = crate::escape_html(s, &mut buf);
    out.push_str(&String::from_utf8_lossy(&buf));
}

impl Sink for HtmlSink<'_> {
    fn heading(&mut self, level: u8, runs: &[Run<'_>]) {
        let level = level.clamp(1, 6);
        self.out.push_str(&format!("<h{level}>"));
        self.runs(runs);
        self.out.push_str(&format!("</h{level}>\n"));
    }

    fn paragraph(&mut self, runs: &[Run<'_>]) {
        self.out.push_str("<p>");
        self.runs(runs);
        self.out.push_str("</p>\n");
    }

    fn note(&mut self, runs: &[Run<'_>]) {
        self.out.push_str("<p class=\"muted\">");
        self.runs(runs);
        self.out.push_str("</p>\n");
    }

    fn begin_list(&mut self, ordered: bool) {
        self.out.push_str(if ordered { "<ol>\n" } else { "<ul>\n" });
        self.lists.push((ordered, false));
    }

    fn item(&mut self, runs: &[Run<'_>]) {
        if let Some((_, open)) = self.lists.last_mut() {
            if *open {
                self.out.push_str("</li>\n");
            }
            *open = true;
        }
        self.out.push_str("<li>");
        self.runs(runs);
    }

    fn end_list(&mut self) {
        if let Some((ordered, open)) = self.lists.pop() {
            if open {
                self.out.push_str("</li>\n");
            }
            self.out
                .push_str(if ordered { "</ol>\n" } else { "</ul>\n" });
        }
    }

    fn begin_table(&mut self, columns: &[Column<'_>]) {
        self.columns = columns.iter().map(|c| c.align).collect();
        self.out.push_str("<table><thead><tr>");
        for c in columns {
            self.out.push_str(match c.align {
                Align::Left => "<th>",
                Align::Right => "<th class=\"num\">",
            });
            self.text(&c.title);
            self.out.push_str("</th>");
        }
        self.out.push_str("</tr></thead><tbody>\n");
    }

    fn row(&mut self, kind: RowKind, cells: &[Cell<'_>]) {
        self.out.push_str(match kind {
            RowKind::Body => "<tr>",
            RowKind::Sub => "<tr class=\"sub\">",
            RowKind::Gap => "<tr class=\"gap\">",
            RowKind::Total => "<tr class=\"total\">",
        });
        for (i, cell) in cells.iter().enumerate() {
            let right = self.columns.get(i) == Some(&Align::Right);
            self.out
                .push_str(if right { "<td class=\"num\">" } else { "<td>" });
            if let Cell::Runs(runs) = cell {
                self.runs(runs);
            }
            self.out.push_str("</td>");
        }
        self.out.push_str("</tr>\n");
    }

    fn end_table(&mut self) {
        self.out.push_str("</tbody></table>\n");
    }

    fn begin_section(&mut self) {
        self.out.push_str("<section class=\"stream\">");
    }

    fn end_section(&mut self) {
        self.out.push_str("</section>\n");
    }

    fn diff(&mut self, body: &str) {
        let body = match self.redactor {
            Some(r) => r.redact(body, &mut RedactionCounts::default()).into_owned(),
            None => body.to_string(),
        };
        let mut buf = Vec::with_capacity(body.len() + 64);
        // Writing to a Vec cannot fail.
        let _ = write_diff_html(&body, &mut buf);
        self.out.push_str(&String::from_utf8_lossy(&buf));
    }
}

// ---------------------------------------------------------------------------------------------
// Terminal

/// The styles a terminal document asks for; the frontend's painter turns them into colour (or
/// leaves the text plain).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Bold,
    Dim,
    Added,
    Removed,
    Hunk,
    /// A transcript's turn rules.
    Rule,
    /// What went well: a prompt's mark, a tool call that succeeded.
    Ok,
    /// What failed: errors, a tool call that failed.
    Error,
    /// What the reader should notice: an interrupt, a record trail does not read.
    Warn,
    /// What the agent did to the conversation: summaries, compactions.
    Note,
    /// A tool's name.
    Tool,
}

/// Paints text in a [`Tone`] (the CLI's `Ui::paint`); text given to it is terminal-safe already.
pub type Painter<'a> = Box<dyn Fn(Tone, &str) -> String + 'a>;

/// Characters a terminal table's text column shows at most.
const TEXT_COLUMN_MAX: usize = 48;

/// Writes plain text for a terminal: headings bold, lists indented, tables in aligned columns
/// (numbers to the right), every piece of text through [`crate::terminal_safe`] first.
pub struct TerminalSink<'a> {
    out: String,
    paint: Painter<'a>,
    last: Block,
    lists: Vec<(bool, usize)>,
    columns: Vec<Align>,
    /// The table being written: its rows (header first) are laid out at its end.
    rows: Vec<(Option<RowKind>, Vec<String>)>,
}

impl<'a> Default for TerminalSink<'a> {
    fn default() -> Self {
        TerminalSink::new()
    }
}

impl<'a> TerminalSink<'a> {
    /// A sink without colour.
    pub fn new() -> TerminalSink<'a> {
        TerminalSink::painted(Box::new(|_, s| s.to_string()))
    }

    /// A sink whose styles `paint` applies.
    pub fn painted(paint: Painter<'a>) -> TerminalSink<'a> {
        TerminalSink {
            out: String::new(),
            paint,
            last: Block::Start,
            lists: Vec::new(),
            columns: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// The text written, lines ending in `\n`.
    pub fn finish(self) -> String {
        self.out
    }

    fn start(&mut self, kind: Block) {
        let tight = kind == Block::List && self.last == Block::Paragraph;
        if self.last != Block::Start && !tight {
            self.out.push('\n');
        }
        self.last = kind;
    }

    fn plain(runs: &[Run<'_>]) -> String {
        let mut s = String::new();
        for run in runs {
            match run {
                Run::Text(t)
                | Run::Quote(t)
                | Run::Emph(t)
                | Run::Strong(t)
                | Run::Code(t)
                | Run::Session { label: t, .. } => s.push_str(&crate::terminal_safe(t)),
                Run::Link { text, url } => {
                    s.push_str(&crate::terminal_safe(text));
                    s.push_str(" <");
                    s.push_str(&crate::terminal_safe(url));
                    s.push('>');
                }
                Run::Break => s.push('\n'),
            }
        }
        s
    }

    fn line(&mut self, tone: Option<Tone>, text: &str) {
        match tone {
            Some(t) => {
                let painted = (self.paint)(t, text);
                self.out.push_str(&painted);
            }
            None => self.out.push_str(text),
        }
        self.out.push('\n');
    }

    fn lay_out_table(&mut self) {
        let mut rows = std::mem::take(&mut self.rows);
        // A text column (a title, a name) is cut to TEXT_COLUMN_MAX characters, so that
        // the numbers stay on the line.
        for (_, cells) in rows.iter_mut() {
            for (c, align) in cells.iter_mut().zip(&self.columns) {
                if *align == Align::Left && c.chars().count() > TEXT_COLUMN_MAX {
                    let mut cut: String = c.chars().take(TEXT_COLUMN_MAX - 1).collect();
                    cut.push('…');
                    *c = cut;
                }
            }
        }
        let mut widths = vec![0usize; self.columns.len()];
        for (_, cells) in &rows {
            for (w, c) in widths.iter_mut().zip(cells) {
                *w = (*w).max(c.chars().count());
            }
        }
        for (kind, cells) in &rows {
            let mut text = String::new();
            for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
                if i > 0 {
                    text.push_str("  ");
                }
                let pad = " ".repeat(w - c.chars().count());
                match self.columns.get(i) {
                    Some(Align::Right) => {
                        text.push_str(&pad);
                        text.push_str(c);
                    }
                    _ => {
                        text.push_str(c);
                        text.push_str(&pad);
                    }
                }
            }
            let text = text.trim_end().to_string();
            let tone = match kind {
                None | Some(RowKind::Total) => Some(Tone::Bold),
                Some(RowKind::Sub) | Some(RowKind::Gap) => Some(Tone::Dim),
                Some(RowKind::Body) => None,
            };
            self.line(tone, &text);
        }
    }
}

impl Sink for TerminalSink<'_> {
    fn heading(&mut self, _level: u8, runs: &[Run<'_>]) {
        self.start(Block::Heading);
        let text = Self::plain(runs);
        self.line(Some(Tone::Bold), &text);
    }

    fn paragraph(&mut self, runs: &[Run<'_>]) {
        self.start(Block::Paragraph);
        let text = Self::plain(runs);
        self.line(None, &text);
    }

    fn note(&mut self, runs: &[Run<'_>]) {
        self.start(Block::Paragraph);
        let text = Self::plain(runs);
        self.line(Some(Tone::Dim), &text);
    }

    fn begin_list(&mut self, ordered: bool) {
        if self.lists.is_empty() {
            self.start(Block::List);
        }
        self.lists.push((ordered, 1));
    }

    fn item(&mut self, runs: &[Run<'_>]) {
        let indent = "  ".repeat(self.lists.len().saturating_sub(1));
        let marker = match self.lists.last_mut() {
            Some((true, n)) => {
                *n += 1;
                format!("{}. ", *n - 1)
            }
            _ => "- ".to_string(),
        };
        let text = format!("{indent}{marker}{}", Self::plain(runs));
        self.line(None, &text);
    }

    fn end_list(&mut self) {
        self.lists.pop();
    }

    fn begin_table(&mut self, columns: &[Column<'_>]) {
        self.start(Block::Table);
        self.columns = columns.iter().map(|c| c.align).collect();
        let header = columns
            .iter()
            .map(|c| crate::terminal_safe(&c.title).into_owned())
            .collect();
        self.rows = vec![(None, header)];
    }

    fn row(&mut self, kind: RowKind, cells: &[Cell<'_>]) {
        let cells = cells
            .iter()
            .map(|c| match c {
                // A cell is one line of its row: line breaks in it (a title's) become spaces.
                Cell::Runs(runs) => Self::plain(runs)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
                Cell::Absent => String::new(),
            })
            .collect();
        self.rows.push((Some(kind), cells));
    }

    fn end_table(&mut self) {
        self.lay_out_table();
    }

    fn begin_section(&mut self) {}

    fn end_section(&mut self) {}

    fn diff(&mut self, body: &str) {
        self.start(Block::Table);
        let body = crate::terminal_safe(body).into_owned();
        for line in body.lines() {
            let tone = match DiffLine::of(line) {
                DiffLine::Header => Some(Tone::Bold),
                DiffLine::Added => Some(Tone::Added),
                DiffLine::Removed => Some(Tone::Removed),
                DiffLine::Hunk => Some(Tone::Hunk),
                DiffLine::Context => None,
            };
            self.line(tone, line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small document with every element, as the reports write them.
    fn sample(sink: &mut dyn Sink) {
        sink.heading(1, &[Run::text("Report")]);
        sink.note(&[Run::emph("an estimate.")]);
        sink.begin_table(&[Column::left("Key"), Column::right("Count")]);
        sink.row(RowKind::Body, &[Cell::text("a|b"), Cell::text("1,000")]);
        sink.row(RowKind::Gap, &[Cell::text(""), Cell::Absent]);
        sink.row(
            RowKind::Total,
            &[Cell::Runs(vec![Run::strong("Total")]), Cell::text("1,000")],
        );
        sink.end_table();
        sink.paragraph(&[Run::text("Sessions:")]);
        sink.begin_list(true);
        sink.item(&[Run::strong("first"), Run::text(" (1 session)")]);
        sink.begin_list(false);
        sink.item(&[
            Run::session("id-1", "id", Some(3)),
            Run::text(": \""),
            Run::quote("<img src=x onerror=alert(1)> [x](javascript:y)"),
            Run::text("\""),
        ]);
        sink.end_list();
        sink.end_list();
        sink.begin_section();
        sink.heading(2, &[Run::quote("repo"), Run::text(" · main")]);
        sink.paragraph(&[
            Run::text("Refs: "),
            Run::link("PR 1", "https://example.com/1"),
            Run::text(", "),
            Run::link("bad", "javascript:alert(1)"),
        ]);
        sink.end_section();
    }

    #[test]
    fn markdown_blocks_are_apart_and_transcript_text_inert() {
        let mut md = MarkdownSink::new();
        sample(&mut md);
        let md = md.finish();
        assert!(md.starts_with("# Report\n\n_an estimate._\n\n| Key | Count |\n|---|---:|\n"));
        assert!(md.contains("| a\\|b | 1,000 |\n|  | |\n| **Total** | 1,000 |\n"));
        // A list right under its paragraph; a nested item under the number's text.
        assert!(md.contains("\nSessions:\n1. **first** (1 session)\n   - `id`: \""));
        assert!(!md.contains("<img"), "{md}");
        assert!(md.ends_with(
            "## repo · main\n\nRefs: [PR 1](https://example.com/1), [bad](javascript:alert(1))\n\n"
        ));
    }

    #[test]
    fn html_escapes_everything_and_links_only_what_it_may() {
        let mut html = HtmlSink::new().session_links(Box::new(|id, turn| {
            format!("/sessions/{id}#turn-{}", turn.unwrap_or(0))
        }));
        sample(&mut html);
        let html = html.finish();
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(html.contains("<a href=\"/sessions/id-1#turn-3\"><code>id</code></a>"));
        assert!(
            html.contains("<a href=\"https://example.com/1\" rel=\"noreferrer noopener\">PR 1</a>")
        );
        assert!(!html.contains("javascript:alert(1)\""), "{html}");
        assert!(html.contains("<th class=\"num\">Count</th>"));
        assert!(html.contains(
            "<tr class=\"total\"><td><strong>Total</strong></td><td class=\"num\">1,000</td></tr>"
        ));
        assert!(html.contains("<ol>\n<li><strong>first</strong> (1 session)<ul>\n<li>"));
        assert!(html.contains("</li>\n</ul>\n</li>\n</ol>\n"));
    }

    #[test]
    fn terminal_text_is_safe_and_tables_line_up() {
        let mut t = TerminalSink::painted(Box::new(|tone, s| match tone {
            Tone::Bold => format!("*{s}*"),
            _ => s.to_string(),
        }));
        t.begin_table(&[Column::left("Key"), Column::right("Count")]);
        t.row(RowKind::Body, &[Cell::text("a\x1b[2J"), Cell::text("5")]);
        t.row(RowKind::Total, &[Cell::text("Total"), Cell::text("1,000")]);
        t.end_table();
        let out = t.finish();
        assert!(!out.contains('\x1b'), "{out:?}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "*Key    Count*");
        assert_eq!(lines[1], "a␛[2J      5");
        assert_eq!(lines[2], "*Total  1,000*");
    }

    #[test]
    fn diff_lines_are_classed_once() {
        let mut buf = Vec::new();
        write_diff_html("--- a\n+++ b\n@@ -1 +1 @@\n-old <b>\n+new\n same", &mut buf).unwrap();
        let html = String::from_utf8(buf).unwrap();
        assert_eq!(
            html,
            "<pre class=\"diff\"><span class=\"dh\">--- a</span>\n<span class=\"dh\">+++ b</span>\n<span class=\"dk\">@@ -1 +1 @@</span>\n<span class=\"dd\">-old &lt;b&gt;</span>\n<span class=\"da\">+new</span>\n same\n</pre>\n"
        );
    }
}
