//! A session laid out for reading: header, turns, prompts, answers, tool calls folded to one
//! line (expandable one at a time or all at once), thinking folded, subagents and forks shown
//! where they branch off; wrapped to the view's width, with the search words marked.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use trail_query::{MessageRow, SessionDetail, SessionRow};
use trail_render::session::{self, Part};
use unicode_width::UnicodeWidthChar;

use crate::safe::{one_line, visible};
use crate::theme::Theme;

/// Lines of an expanded tool input or output shown before the rest is summed up.
const EXPANDED_LINES: usize = 400;

/// What one entry of the transcript is.
#[derive(Debug, Clone, PartialEq)]
enum Entry {
    Header,
    Rule { turn: i64, at: Option<String> },
    Prompt(usize),
    Text(usize),
    Thinking(usize),
    Tool { call: usize, result: Option<usize> },
    Subagent(usize),
    Error(usize),
    Summary(usize),
    Compaction,
    Interrupt(usize),
    OffBranch(usize),
}

impl Entry {
    fn foldable(&self) -> bool {
        matches!(
            self,
            Entry::Thinking(_) | Entry::Tool { .. } | Entry::Summary(_)
        )
    }
}

/// One screen row: which entry it shows and whether it holds a search match.
#[derive(Debug, Clone)]
pub struct Row {
    pub line: Line<'static>,
    pub entry: usize,
    pub matched: bool,
}

/// A transcript and the reader's place in it.
pub struct Transcript {
    pub detail: SessionDetail,
    entries: Vec<(Entry, Option<i64>)>,
    expanded: Vec<bool>,
    /// Every tool input and output and the thinking shown (`f`).
    pub all: bool,
    terms: Vec<String>,
    rows: Vec<Row>,
    laid_out_for: Option<u16>,
    /// The selected row.
    pub cursor: usize,
    /// The first row on screen.
    pub offset: usize,
    /// An entry whose first row takes the cursor once the rows are laid out again.
    pending_entry: Option<usize>,
}

impl Transcript {
    /// Lays out `detail`; `header` adds the session's facts on top (the preview pane leaves
    /// them out).
    pub fn new(detail: SessionDetail, terms: Vec<String>, header: bool) -> Transcript {
        let entries = entries(&detail, header);
        let expanded = vec![false; entries.len()];
        Transcript {
            detail,
            entries,
            expanded,
            all: false,
            terms,
            rows: Vec::new(),
            laid_out_for: None,
            cursor: 0,
            offset: 0,
            pending_entry: None,
        }
    }

    /// The session shown.
    pub fn session(&self) -> &SessionRow {
        &self.detail.session
    }

    /// The rows at `width` (laid out again only when the width or the folding changed).
    pub fn rows(&mut self, width: u16, theme: &Theme) -> &[Row] {
        if self.laid_out_for != Some(width) {
            self.layout(width, theme);
            if let Some(e) = self.pending_entry.take() {
                if let Some(i) = self.rows.iter().position(|r| r.entry == e) {
                    self.cursor = i;
                }
            }
        }
        &self.rows
    }

    fn layout(&mut self, width: u16, theme: &Theme) {
        let mut rows = Vec::new();
        for (i, (entry, _)) in self.entries.iter().enumerate() {
            let open = self.all || self.expanded[i];
            for (line, matched) in render_entry(&self.detail, entry, open, &self.terms, theme) {
                for piece in wrap(line, width.max(8) as usize) {
                    rows.push(Row {
                        line: piece,
                        entry: i,
                        matched,
                    });
                }
            }
        }
        self.rows = rows;
        self.laid_out_for = Some(width);
        self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
    }

    fn invalidate(&mut self) {
        self.laid_out_for = None;
    }

    /// The entry under the cursor, when it opens something: a subagent's id.
    pub fn subagent_at_cursor(&self) -> Option<&SessionRow> {
        let row = self.rows.get(self.cursor)?;
        match &self.entries[row.entry].0 {
            Entry::Subagent(i) => self.detail.subagents.get(*i),
            _ => None,
        }
    }

    /// Folds or unfolds the entry under the cursor; returns false when it does not fold.
    pub fn toggle_at_cursor(&mut self) -> bool {
        let Some(entry) = self.rows.get(self.cursor).map(|r| r.entry) else {
            return false;
        };
        if !self.entries[entry].0.foldable() {
            return false;
        }
        self.expanded[entry] = !self.expanded[entry];
        if self.all && !self.expanded[entry] {
            // Folding one while everything is open: open all others explicitly.
            self.all = false;
            for (i, e) in self.entries.iter().enumerate() {
                self.expanded[i] = i != entry && e.0.foldable();
            }
        }
        self.keep_entry_at_cursor(entry);
        true
    }

    /// Shows or hides every tool input and output and the thinking.
    pub fn toggle_all(&mut self) {
        let entry = self.rows.get(self.cursor).map(|r| r.entry);
        self.all = !self.all;
        self.expanded.iter_mut().for_each(|e| *e = false);
        if let Some(entry) = entry {
            self.keep_entry_at_cursor(entry);
        } else {
            self.invalidate();
        }
    }

    /// After a change of folding, puts the cursor back on the first row of `entry`.
    fn keep_entry_at_cursor(&mut self, entry: usize) {
        self.invalidate();
        self.pending_entry = Some(entry);
    }

    /// Moves the cursor by `delta` rows.
    pub fn move_by(&mut self, delta: isize) {
        let last = self.rows.len().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(delta).min(last);
    }

    /// Cursor to the first row.
    pub fn top(&mut self) {
        self.cursor = 0;
    }

    /// Cursor to the last row.
    pub fn bottom(&mut self) {
        self.cursor = self.rows.len().saturating_sub(1);
    }

    /// Moves to the next (or previous) row with a match; false when there is none that way.
    pub fn jump_match(&mut self, forward: bool) -> bool {
        let found = if forward {
            (self.cursor + 1..self.rows.len()).find(|&i| self.rows[i].matched)
        } else {
            (0..self.cursor).rev().find(|&i| self.rows[i].matched)
        };
        match found {
            Some(i) => {
                self.cursor = i;
                true
            }
            None => false,
        }
    }

    /// Puts the cursor on the first match in `turn` (or the turn's first row, or the first
    /// match anywhere when no turn is given).
    pub fn go_to_turn(&mut self, turn: Option<i64>) {
        let in_turn = |r: &Row| turn.is_none() || self.entries[r.entry].1 == turn;
        if let Some(i) = self.rows.iter().position(|r| r.matched && in_turn(r)) {
            self.cursor = i;
        } else if let Some(i) = turn.and_then(|_| self.rows.iter().position(in_turn)) {
            self.cursor = i;
        }
    }

    /// Scrolls so that the cursor is on screen, with a little context above it.
    pub fn scroll_into_view(&mut self, height: usize) {
        if height == 0 {
            return;
        }
        if self.cursor < self.offset {
            self.offset = self.cursor.saturating_sub(2.min(height / 4));
        } else if self.cursor >= self.offset + height {
            self.offset = self.cursor + 1 - height;
        }
        let max = self.rows.len().saturating_sub(height);
        self.offset = self.offset.min(max);
    }

    /// Scrolls the view (mouse wheel) by `delta` rows, the cursor following.
    pub fn scroll_by(&mut self, delta: isize, height: usize) {
        let max = self.rows.len().saturating_sub(height);
        self.offset = self.offset.saturating_add_signed(delta).min(max);
        self.cursor = self
            .cursor
            .clamp(self.offset, (self.offset + height).saturating_sub(1));
        self.cursor = self.cursor.min(self.rows.len().saturating_sub(1));
    }

    /// How many rows hold a match.
    pub fn match_count(&self) -> usize {
        self.rows.iter().filter(|r| r.matched).count()
    }
}

/// Lays out what a transcript shows, in the order the session walker gives it
/// ([`trail_render::session`]): the main chain's messages turn by turn, each subagent right
/// after the tool call that started it, and forks (no tool call) where their time falls.
fn entries(d: &SessionDetail, header: bool) -> Vec<(Entry, Option<i64>)> {
    let mut sink = EntrySink {
        messages: &d.messages,
        out: Vec::new(),
        current: None,
    };
    if header {
        sink.out.push((Entry::Header, None));
    }
    let subagents = session::Subagents::forks_by_time(&d.subagents, &d.messages);
    let walker = session::Walker::new(subagents, false);
    match session::walk_messages(&d.messages, walker, &mut sink) {
        Ok(()) => sink.out,
        Err(never) => match never {},
    }
}

/// Collects a transcript's entries, each with the turn it is in (see
/// [`session::SessionSink`]); an entry names its message by place in `messages`.
struct EntrySink<'d> {
    messages: &'d [MessageRow],
    out: Vec<(Entry, Option<i64>)>,
    current: Option<i64>,
}

impl EntrySink<'_> {
    /// The place of message `seq` (the messages are in `seq` order, one per `seq`).
    fn index(&self, seq: i64) -> usize {
        self.messages.partition_point(|m| m.seq < seq)
    }
}

impl session::SessionSink for EntrySink<'_> {
    type Error = std::convert::Infallible;

    fn turn(&mut self, turn: Option<i64>, at: Option<&str>) -> Result<(), Self::Error> {
        self.current = turn;
        if let Some(turn) = turn {
            let at = at.map(str::to_string);
            self.out.push((Entry::Rule { turn, at }, self.current));
        }
        Ok(())
    }

    fn part(&mut self, seq: i64, part: &Part<'_>) -> Result<(), Self::Error> {
        let i = self.index(seq);
        let entry = match *part {
            Part::Prompt(_) => Entry::Prompt(i),
            Part::Answer(_) => Entry::Text(i),
            Part::Thinking(text) if !text.is_empty() => Entry::Thinking(i),
            Part::ToolCall(call) => Entry::Tool {
                call: i,
                result: call.result.map(|r| self.index(r.seq)),
            },
            Part::Error(_) => Entry::Error(i),
            Part::Summary(_) => Entry::Summary(i),
            Part::Compaction => Entry::Compaction,
            Part::Interrupt(_) => Entry::Interrupt(i),
            _ => return Ok(()),
        };
        self.out.push((entry, self.current));
        Ok(())
    }

    fn subagent(&mut self, index: usize, _row: &SessionRow) -> Result<(), Self::Error> {
        self.out.push((Entry::Subagent(index), self.current));
        Ok(())
    }

    fn off_branch(&mut self, count: u64) -> Result<(), Self::Error> {
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        self.out.push((Entry::OffBranch(count), None));
        Ok(())
    }
}

/// One entry's lines (before wrapping), each with whether it holds a match.
fn render_entry(
    d: &SessionDetail,
    entry: &Entry,
    open: bool,
    terms: &[String],
    theme: &Theme,
) -> Vec<(Line<'static>, bool)> {
    let msg = |i: usize| -> &MessageRow { &d.messages[i] };
    let text_of = |i: usize| msg(i).text.as_deref().unwrap_or("");
    let mut out = Vec::new();
    // Each line of `text` after `prefix`, the first after `first` (a prompt's mark).
    let lines = |first: &'static str, prefix: &'static str, text: &str, style, out: &mut Vec<_>| {
        for (n, l) in text.lines().enumerate() {
            let (mut spans, m) = highlight(&visible(l), style, terms, theme);
            spans.insert(0, Span::styled(if n == 0 { first } else { prefix }, style));
            out.push((Line::from(spans), m));
        }
    };
    let block =
        |prefix, text: &str, style, out: &mut Vec<_>| lines(prefix, prefix, text, style, out);
    match entry {
        Entry::Header => header_lines(&d.session, theme, &mut out),
        Entry::Rule { turn, at } => {
            out.push((Line::default(), false));
            let label = format!("── turn {turn} · {} ", trail_render::when(at.as_deref()));
            let fill = "─".repeat(60usize.saturating_sub(label.chars().count()));
            out.push((note(label + &fill, theme.accent), false));
        }
        Entry::Prompt(i) => lines("❯ ", "  ", text_of(*i), theme.prompt, &mut out),
        Entry::Text(i) => block("  ", text_of(*i), Style::default(), &mut out),
        Entry::Thinking(i) if open => block("  ┊ ", text_of(*i), theme.dim, &mut out),
        Entry::Thinking(i) => {
            let text = text_of(*i);
            let line = format!("  ┊ thinking ({} chars)", text.chars().count());
            out.push((note(line, theme.dim), matches_any(text, terms)));
        }
        Entry::Tool { call, result } => {
            tool_lines(msg(*call), result.map(msg), open, terms, theme, &mut out)
        }
        Entry::Subagent(i) => out.push((subagent_line(&d.subagents[*i], theme), false)),
        Entry::Error(i) => block("  ! ", text_of(*i), theme.error, &mut out),
        Entry::Summary(i) => {
            let text = text_of(*i);
            let line = format!("  ≡ summary ({} chars)", text.chars().count());
            out.push((note(line, theme.accent), !open && matches_any(text, terms)));
            if open {
                block("    ", text, Style::default(), &mut out);
            }
        }
        Entry::Compaction => out.push((
            note("  ≡ conversation compacted".into(), theme.accent),
            false,
        )),
        Entry::Interrupt(i) => out.push((
            note(format!("  {}", one_line(text_of(*i))), theme.error),
            false,
        )),
        Entry::OffBranch(n) => {
            out.push((Line::default(), false));
            let line = format!(
                "{n} messages on abandoned branches (rewinds, retries) are kept in the store"
            );
            out.push((note(line, theme.dim), false));
        }
    }
    out
}

/// A line of one styled text the program wrote.
fn note(text: String, style: Style) -> Line<'static> {
    Line::from(Span::styled(text, style))
}

/// The session's header: title, facts, time span and size, and its parent.
fn header_lines(s: &SessionRow, theme: &Theme, out: &mut Vec<(Line<'static>, bool)>) {
    let title = one_line(s.title.as_deref().unwrap_or("(untitled)"));
    out.push((Line::from(Span::styled(title, theme.bold)), false));
    let mut facts = vec![s.id.to_string(), s.source.to_string()];
    facts.extend(s.repository.as_deref().map(one_line));
    facts.extend(
        s.branch
            .as_deref()
            .map(|b| format!("branch {}", one_line(b))),
    );
    facts.extend(s.cwd.as_deref().map(one_line));
    out.push((
        Line::from(Span::styled(facts.join(" · "), theme.dim)),
        false,
    ));
    let mut line = format!(
        "{} → {} · {} turn{}",
        trail_render::when(s.created_at.as_deref()),
        trail_render::when(s.updated_at.as_deref()),
        s.turns,
        if s.turns == 1 { "" } else { "s" }
    );
    if s.total_tokens() > 0 {
        line.push_str(&format!(
            " · {} tokens",
            trail_render::tokens(s.total_tokens())
        ));
    }
    if !s.models.is_empty() {
        line.push_str(&format!(" · {}", one_line(&s.models.join(", "))));
    }
    out.push((Line::from(Span::styled(line, theme.dim)), false));
    if let Some(p) = &s.parent_session_id {
        out.push((
            Line::from(Span::styled(
                format!("subagent of {}", one_line(p)),
                theme.dim,
            )),
            false,
        ));
    }
}

/// A tool call's line, and when open its input and output.
fn tool_lines(
    m: &MessageRow,
    result: Option<&MessageRow>,
    open: bool,
    terms: &[String],
    theme: &Theme,
    out: &mut Vec<(Line<'static>, bool)>,
) {
    let (mark, mark_style) = match result {
        Some(r) if r.is_error => ("✗", theme.error),
        Some(_) => ("✓", theme.ok),
        None => ("…", theme.dim),
    };
    let name = one_line(m.tool_name.as_deref().unwrap_or("tool"));
    let input = m.tool_input.as_deref().unwrap_or("");
    let output = result.and_then(|r| r.tool_output.as_deref()).unwrap_or("");
    let (mut spans, matched) = highlight(&tool_summary(input), Style::default(), terms, theme);
    spans.splice(
        0..0,
        [
            Span::styled(if open { "  ▾ " } else { "  ▸ " }, theme.dim),
            Span::styled(format!("{mark} "), mark_style),
            Span::styled(format!("{name} "), theme.tool),
        ],
    );
    let hidden_match = !open && (matches_any(input, terms) || matches_any(output, terms));
    out.push((Line::from(spans), matched || hidden_match));
    if open {
        let pretty = pretty_json(input);
        capped(&pretty, "      ", theme.dim, terms, theme, out);
        if result.is_some() {
            out.push((
                Line::from(Span::styled("      ── output ──", theme.dim)),
                false,
            ));
            capped(output, "      ", Style::default(), terms, theme, out);
        }
    }
}

/// A subagent's (or fork's) line.
fn subagent_line(s: &SessionRow, theme: &Theme) -> Line<'static> {
    let kind = if s.parent_tool_call_id.is_some() {
        "subagent"
    } else {
        "fork"
    };
    Line::from(vec![
        Span::styled(format!("  ↳ {kind} "), theme.accent),
        Span::styled(
            one_line(s.title.as_deref().unwrap_or("(untitled)")),
            theme.bold,
        ),
        Span::styled(
            format!(
                " · {} turn{} · enter opens it",
                s.turns,
                if s.turns == 1 { "" } else { "s" }
            ),
            theme.dim,
        ),
    ])
}

/// Lines of a long text, cut after [`EXPANDED_LINES`] with a count of the rest.
fn capped(
    text: &str,
    prefix: &'static str,
    style: Style,
    terms: &[String],
    theme: &Theme,
    out: &mut Vec<(Line<'static>, bool)>,
) {
    let mut lines = text.lines();
    for l in lines.by_ref().take(EXPANDED_LINES) {
        let (mut spans, m) = highlight(&visible(l), style, terms, theme);
        spans.insert(0, Span::styled(prefix, style));
        out.push((Line::from(spans), m));
    }
    let rest = lines.count();
    if rest > 0 {
        out.push((
            Line::from(Span::styled(
                format!("{prefix}… {rest} more lines (`trail show --full` prints them all)"),
                theme.dim,
            )),
            false,
        ));
    }
}

/// One line describing a tool call: what it acted on (the renderer's rule, shared with the
/// CLI, exports and the web viewer), or its whole input.
fn tool_summary(input: &str) -> String {
    one_line(&trail_render::tool_line(input))
}

fn pretty_json(s: &str) -> String {
    if s.len() > 1 << 20 {
        return s.to_string();
    }
    serde_json::from_str::<serde_json::Value>(s)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| s.to_string())
}

/// The words of a search box worth marking (the query layer's rule, shared with the CLI's
/// `--highlight` and the web viewer); filters are taken out of the box's text before.
pub fn terms_of(query: &str) -> Vec<String> {
    trail_query::highlight_terms(query)
}

fn matches_any(text: &str, terms: &[String]) -> bool {
    !terms.is_empty() && find_term(text, 0, terms).is_some()
}

/// The next match at or after byte `from`: (start, length).
fn find_term(text: &str, from: usize, terms: &[String]) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    (from..bytes.len()).find_map(|i| {
        if !text.is_char_boundary(i) {
            return None;
        }
        terms.iter().find_map(|t| {
            let t = t.as_bytes();
            let end = i + t.len();
            (end <= bytes.len()
                && bytes[i..end].eq_ignore_ascii_case(t)
                && text.is_char_boundary(end))
            .then_some((i, t.len()))
        })
    })
}

/// Splits already-visible `text` into spans with the search words marked; also says whether
/// any was found. ASCII words match whatever their case.
pub fn highlight(
    text: &str,
    base: Style,
    terms: &[String],
    theme: &Theme,
) -> (Vec<Span<'static>>, bool) {
    let mut spans = Vec::new();
    let mut last = 0;
    let mut found = false;
    if !terms.is_empty() {
        let mut at = 0;
        while let Some((i, len)) = find_term(text, at, terms) {
            found = true;
            if i > last {
                spans.push(Span::styled(text[last..i].to_string(), base));
            }
            spans.push(Span::styled(
                text[i..i + len].to_string(),
                base.patch(theme.matched),
            ));
            last = i + len;
            at = last;
        }
    }
    if last < text.len() || spans.is_empty() {
        spans.push(Span::styled(text[last..].to_string(), base));
    }
    (spans, found)
}

/// Cuts a line into rows of at most `width` columns at spaces, keeping each span's style.
///
/// A word moves whole to the next row (issue 40: the preview showed `p` / `ick metric`); the
/// spaces a row ends at are not shown; a word wider than a row is cut where the row ends.
pub fn wrap(line: Line<'static>, width: usize) -> Vec<Line<'static>> {
    let cells: Vec<(char, Style)> = line
        .spans
        .iter()
        .flat_map(|s| s.content.chars().map(move |c| (c, s.style)))
        .collect();
    row_ranges(&cells, width)
        .into_iter()
        .map(|(a, b)| styled_row(&cells[a..b]))
        .collect()
}

/// The `[start, end)` ranges of `cells` that make the rows (one, empty, for an empty line).
fn row_ranges(cells: &[(char, Style)], width: usize) -> Vec<(usize, usize)> {
    let width_of = |c: char| c.width().unwrap_or(0);
    let mut rows = Vec::new();
    // The row's start, its columns so far, and where it could end: after its last space.
    let (mut start, mut used, mut space_end) = (0, 0, None);
    let mut i = 0;
    while i < cells.len() {
        let c = cells[i].0;
        let w = width_of(c);
        if used + w > width && used > 0 {
            if c == ' ' {
                // The row ends at this space; the spaces that follow are not shown either.
                rows.push((start, i));
                while i < cells.len() && cells[i].0 == ' ' {
                    i += 1;
                }
                (start, used, space_end) = (i, 0, None);
                continue;
            }
            match space_end.take() {
                // Move the word begun after the last space to the next row, then look again.
                Some(end) => {
                    rows.push((start, end));
                    start = end;
                    used = cells[end..i].iter().map(|&(c, _)| width_of(c)).sum();
                    continue;
                }
                None => {
                    rows.push((start, i));
                    (start, used) = (i, 0);
                }
            }
        }
        used += w;
        i += 1;
        if c == ' ' {
            space_end = Some(i);
        }
    }
    rows.push((start, cells.len()));
    rows
}

/// A row's characters as spans, one per run of the same style.
fn styled_row(cells: &[(char, Style)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut piece = String::new();
    let mut style = cells.first().map(|c| c.1).unwrap_or_default();
    for &(c, s) in cells {
        if s != style && !piece.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut piece), style));
        }
        style = s;
        piece.push(c);
    }
    if !piece.is_empty() {
        spans.push(Span::styled(piece, style));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_leave_out_operators_and_excluded_words() {
        assert_eq!(
            terms_of("\"Imperial units\" OR metric* NOT x"),
            vec!["Imperial", "metric", "units"]
        );
    }

    #[test]
    fn wrapping_keeps_words_whole_and_styles() {
        let theme = Theme::new(&crate::theme::Colors::default(), false);
        let (spans, found) =
            highlight("abc units def", Style::default(), &["UNITS".into()], &theme);
        assert!(found);
        let rows = wrap(Line::from(spans), 5);
        let text: Vec<String> = rows.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, vec!["abc ", "units", "def"]);
        assert_eq!(rows[1].spans[0].style, theme.matched);
    }

    /// Issue 40: the preview cut `pick` into `p` / `ick metric`.
    #[test]
    fn wrapping_moves_a_word_whole_and_cuts_only_words_wider_than_a_row() {
        let rows = |s: &str, w: usize| -> Vec<String> {
            wrap(Line::from(s.to_string()), w)
                .iter()
                .map(|l| l.to_string())
                .collect()
        };
        assert_eq!(
            rows("then p pick metric units", 8),
            ["then p ", "pick ", "metric ", "units"]
        );
        assert_eq!(rows("a verylongword b", 6), ["a ", "verylo", "ngword", "b"]);
        assert_eq!(rows("two  spaces", 4), ["two ", "spac", "es"]);
        assert_eq!(rows("", 5), [""]);
        assert_eq!(rows("漢字 漢字漢字", 5), ["漢字 ", "漢字", "漢字"]);
        for (s, w) in [("then p pick metric units", 8), ("a verylongword b", 6)] {
            let all: String = rows(s, w).concat();
            let kept: String = all.split_whitespace().collect();
            assert_eq!(
                kept,
                s.split_whitespace().collect::<String>(),
                "no character lost"
            );
        }
    }
}
