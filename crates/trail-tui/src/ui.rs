//! Drawing: the prompt line, the list (sessions or search hits), the preview, a transcript,
//! the help and export overlays, the status line. Every text from the store passes through
//! [`crate::safe`] before it becomes a span.

use chrono::{DateTime, Utc};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;
use trail_query::{SearchHit, SessionRow, HIT_END, HIT_START};
use unicode_width::UnicodeWidthStr;

use crate::app::{App, Overlay, Results, StoreState};
use crate::safe::{one_line, visible};
use crate::theme::Theme;
use crate::transcript::Transcript;

/// Columns from which the preview sits beside the list instead of under it.
const SIDE_BY_SIDE: u16 = 120;

/// Draws the whole screen.
pub fn draw(f: &mut Frame<'_>, app: &mut App, now: DateTime<Utc>) {
    let area = f.area();
    let [top, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    if app.panel.is_some() {
        draw_panel(f, app, top, body);
    } else if !app.transcripts.is_empty() {
        draw_transcript_view(f, app, top, body);
    } else {
        draw_prompt(f, app, top);
        match &app.store {
            StoreState::Ready => draw_browse(f, app, body, now),
            other => draw_no_sessions(f, &app.theme, other, body),
        }
    }
    draw_status(f, app, status);
    match app.overlay {
        Overlay::Help => draw_help(f, app, area),
        Overlay::ExportFormat => draw_export(f, app, area),
        Overlay::ContinueTarget => draw_continue(f, app, area),
        Overlay::None => {}
    }
}

fn draw_prompt(f: &mut Frame<'_>, app: &App, area: Rect) {
    let t = &app.theme;
    let scope = app.scopes[app.scope].label();
    let count = match &app.results {
        _ if app.searching => "searching…".into(),
        Results::Sessions { rows, next, .. } => {
            let more = if next.is_some() { "+" } else { "" };
            format!(
                "{}{more} {}",
                rows.len(),
                noun(rows.len() + more.len(), "session")
            )
        }
        Results::Hits(h) => format!("{} {}", h.len(), noun(h.len(), "hit")),
        Results::Loading => "…".into(),
        Results::Failed(_) => String::new(),
    };
    let mut spans = vec![
        Span::styled(format!("[{}] ", one_line(&scope)), t.accent),
        Span::styled("❯ ", t.prompt),
        Span::raw(visible(&app.input).into_owned()),
    ];
    if !app.focus_list {
        spans.push(Span::styled("█", t.accent));
    }
    let used: usize = spans.iter().map(|s| s.content.width()).sum();
    let pad = (area.width as usize).saturating_sub(used + count.width() + 1);
    spans.push(Span::raw(" ".repeat(pad)));
    spans.push(Span::styled(count, t.dim));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `word` for one, `words` for any other count ("1 hit", "2 hits", "0 hits").
fn noun(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

fn draw_browse(f: &mut Frame<'_>, app: &mut App, body: Rect, now: DateTime<Utc>) {
    let (list_area, preview_area) = if body.width >= SIDE_BY_SIDE {
        let [a, b] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
            .areas(body);
        (a, b)
    } else {
        let [a, b] =
            Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(body);
        (a, b)
    };
    draw_list(f, app, list_area, now);
    let side = body.width >= SIDE_BY_SIDE;
    let block = Block::default()
        .borders(if side { Borders::LEFT } else { Borders::TOP })
        .border_style(app.theme.dim)
        .title(Span::styled(" preview ", app.theme.dim));
    let inner = block.inner(preview_area);
    f.render_widget(block, preview_area);
    let theme = app.theme.clone();
    if let Some(p) = app.preview.as_mut() {
        if let Some(turn) = app.preview_turn.take() {
            p.rows(inner.width, &theme);
            p.go_to_turn(turn);
            p.offset = p.cursor.saturating_sub(1);
        }
        draw_rows(f, p, inner, &theme, false);
    }
}

fn draw_list(f: &mut Frame<'_>, app: &mut App, area: Rect, now: DateTime<Utc>) {
    let height = area.height as usize;
    app.list_height = height;
    if app.selected < app.list_offset {
        app.list_offset = app.selected;
    } else if app.selected >= app.list_offset + height {
        app.list_offset = app.selected + 1 - height;
    }
    let t = app.theme.clone();
    let width = area.width as usize;
    let lines: Vec<Line<'static>> = match &app.results {
        Results::Loading => vec![Line::from(Span::styled("Loading…", t.dim))],
        Results::Failed(e) => vec![Line::from(Span::styled(one_line(e), t.error))],
        Results::Sessions { rows, .. } if rows.is_empty() => no_match(app, "No sessions"),
        Results::Hits(h) if h.is_empty() => no_match(app, "Nothing matches"),
        Results::Sessions { rows, below, .. } => rows
            .iter()
            .enumerate()
            .skip(app.list_offset)
            .take(height)
            .map(|(i, s)| {
                let n = below.get(s.id.as_str()).copied().unwrap_or(0);
                session_line(s, n, width, now, &t, i == app.selected)
            })
            .collect(),
        Results::Hits(hits) => hits
            .iter()
            .enumerate()
            .skip(app.list_offset)
            .take(height)
            .map(|(i, h)| hit_line(h, width, now, &t, i == app.selected))
            .collect(),
    };
    f.render_widget(Paragraph::new(lines), area);
}

fn no_match(app: &App, what: &str) -> Vec<Line<'static>> {
    let t = &app.theme;
    let scope = app.scopes[app.scope].label();
    vec![
        Line::from(Span::styled(
            format!("{what} in scope {}.", one_line(&scope)),
            t.bold,
        )),
        Line::from(Span::styled(
            format!(
                "{} widens the scope; filters: source:codex repo:web since:7d branch:main",
                app.keys.scope
            ),
            t.dim,
        )),
    ]
}

/// `3m`, `5h`, `2d`, `3w`, `4mo`, `2y` since a store time.
fn age(ts: Option<&str>, now: DateTime<Utc>) -> String {
    let Some(t) = ts.and_then(|t| DateTime::parse_from_rfc3339(t).ok()) else {
        return "-".into();
    };
    let secs = (now - t.with_timezone(&Utc)).num_seconds().max(0);
    match secs {
        s if s < 60 => "now".into(),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s if s < 14 * 86_400 => format!("{}d", s / 86_400),
        s if s < 60 * 86_400 => format!("{}w", s / (7 * 86_400)),
        s if s < 365 * 86_400 => format!("{}mo", s / (30 * 86_400)),
        s => format!("{}y", s / (365 * 86_400)),
    }
}

/// The agent's short name for a source id: its first alias in the registry (`claude`), else
/// its id.
fn agent(source: &str) -> &str {
    match trail_query::registry::find(source) {
        Some(kind) => {
            let info = trail_query::registry::info(kind);
            info.aliases.first().copied().unwrap_or(info.id())
        }
        None => source,
    }
}

/// `text` cut or padded to exactly `w` columns.
fn fit(text: &str, w: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    let total = text.width();
    for c in text.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if total > w && used + cw + 1 > w {
            out.push('…');
            used += 1;
            break;
        }
        if used + cw > w {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push_str(&" ".repeat(w.saturating_sub(used)));
    out
}

fn selected_style(line: Line<'static>, theme: &Theme, selected: bool) -> Line<'static> {
    if selected {
        line.patch_style(theme.selected)
    } else {
        line
    }
}

fn session_line(
    s: &SessionRow,
    below: i64,
    width: usize,
    now: DateTime<Utc>,
    t: &Theme,
    selected: bool,
) -> Line<'static> {
    let wide = width >= 100;
    let place = s
        .repository
        .as_deref()
        .or(s.cwd.as_deref())
        .map(one_line)
        .unwrap_or_default();
    let branch = s.branch.as_deref().map(one_line).unwrap_or_default();
    let (place_w, branch_w) = if wide { (24, 16) } else { (14, 10) };
    // when, agent, +N, repo, branch, turns, tokens and the spaces between them.
    let fixed = 4 + 8 + 4 + place_w + branch_w + 4 + 6 + 7;
    let title_w = width.saturating_sub(fixed).max(8);
    let plus = if below > 0 {
        format!("+{below}")
    } else {
        String::new()
    };
    let line = Line::from(vec![
        Span::styled(format!("{:>4} ", age(s.updated_at.as_deref(), now)), t.dim),
        Span::styled(format!("{} ", fit(agent(&s.source), 8)), t.tool),
        Span::styled(format!("{:<3} ", plus), t.accent),
        Span::raw(format!(
            "{} ",
            fit(
                &one_line(s.title.as_deref().unwrap_or("(untitled)")),
                title_w
            )
        )),
        Span::styled(format!("{} ", fit(&place, place_w)), t.dim),
        Span::styled(format!("{} ", fit(&branch, branch_w)), t.dim),
        Span::styled(format!("{:>4} ", s.turns), t.dim),
        Span::styled(
            format!("{:>6}", trail_render::tokens(s.total_tokens())),
            t.dim,
        ),
    ]);
    selected_style(line, t, selected)
}

fn hit_line(
    h: &SearchHit,
    width: usize,
    now: DateTime<Utc>,
    t: &Theme,
    selected: bool,
) -> Line<'static> {
    let title_w = if width >= 100 { 30 } else { 20 };
    let mut spans = vec![
        Span::styled(format!("{:>4} ", age(h.timestamp.as_deref(), now)), t.dim),
        Span::styled(format!("{} ", fit(agent(&h.source), 8)), t.tool),
        Span::raw(format!(
            "{} ",
            fit(
                &one_line(h.title.as_deref().unwrap_or("(untitled)")),
                title_w
            )
        )),
        Span::styled(
            format!("{:<4}", h.turn.map(|n| format!("t{n}")).unwrap_or_default()),
            t.dim,
        ),
    ];
    let used: usize = spans.iter().map(|s| s.content.width()).sum();
    spans.extend(snippet_spans(&h.snippet, width.saturating_sub(used), t));
    selected_style(Line::from(spans), t, selected)
}

/// A snippet on one line with its matches (between [`HIT_START`] and [`HIT_END`]) marked.
pub fn snippet_spans(snippet: &str, width: usize, t: &Theme) -> Vec<Span<'static>> {
    let flat = one_line(snippet);
    let mut spans = Vec::new();
    let mut used = 0;
    let mut inside = false;
    let mut piece = String::new();
    let flush = |piece: &mut String, inside: bool, spans: &mut Vec<Span<'static>>| {
        if !piece.is_empty() {
            let style = if inside { t.matched } else { Style::default() };
            spans.push(Span::styled(std::mem::take(piece), style));
        }
    };
    for c in flat.chars() {
        if c == HIT_START || c == HIT_END {
            flush(&mut piece, inside, &mut spans);
            inside = c == HIT_START;
            continue;
        }
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width {
            break;
        }
        piece.push(c);
        used += w;
    }
    flush(&mut piece, inside, &mut spans);
    spans
}

fn draw_rows(f: &mut Frame<'_>, tr: &mut Transcript, area: Rect, theme: &Theme, cursor: bool) {
    let height = area.height as usize;
    if cursor {
        tr.rows(area.width, theme);
        tr.scroll_into_view(height);
    }
    let (offset, at) = (tr.offset, tr.cursor);
    let rows = tr.rows(area.width, theme);
    let lines: Vec<Line<'static>> = rows
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, r)| selected_style(r.line.clone(), theme, cursor && i == at))
        .collect();
    f.render_widget(Paragraph::new(lines), area);
}

fn draw_transcript_view(f: &mut Frame<'_>, app: &mut App, top: Rect, body: Rect) {
    let theme = app.theme.clone();
    let depth = app.transcripts.len();
    app.transcript_height = body.height as usize;
    let Some(tr) = app.transcripts.last_mut() else {
        return;
    };
    if let Some(turn) = app.transcript_turn.take() {
        tr.rows(body.width, &theme);
        tr.go_to_turn(turn);
    }
    let s = tr.session();
    let mut crumbs = if depth > 1 {
        format!("{} levels deep · ", depth - 1)
    } else {
        String::new()
    };
    crumbs.push_str(&format!(
        "{} · {}",
        agent(&s.source),
        one_line(s.title.as_deref().unwrap_or("(untitled)"))
    ));
    let matches = tr.match_count();
    let right = if matches > 0 {
        format!("{matches} matching lines")
    } else {
        String::new()
    };
    let pad = (top.width as usize).saturating_sub(crumbs.width() + right.width());
    let header = if crumbs.width() + right.width() > top.width as usize {
        fit(&crumbs, top.width as usize)
    } else {
        format!("{crumbs}{}{right}", " ".repeat(pad))
    };
    f.render_widget(Paragraph::new(Span::styled(header, theme.accent)), top);
    draw_rows(f, tr, body, &theme, true);
}

/// What the open session changed: the diff view (`d` in a transcript).
fn draw_panel(f: &mut Frame<'_>, app: &mut App, top: Rect, body: Rect) {
    use crate::app::{PanelKind, PanelLine};
    let t = app.theme.clone();
    app.transcript_height = body.height as usize;
    let Some(d) = app.panel.as_mut() else {
        return;
    };
    let max = d.lines.len().saturating_sub(body.height as usize);
    d.offset = d.offset.min(max);
    let header = match d.kind {
        PanelKind::Diff => format!("Changes · {} · Esc back", one_line(&d.title)),
        PanelKind::Usage => format!(
            "{} · {} refreshes · Esc back",
            one_line(&d.title),
            app.keys.usage
        ),
    };
    let header = fit(&header, top.width as usize);
    f.render_widget(Paragraph::new(Span::styled(header, t.accent)), top);
    let lines: Vec<Line<'static>> = d
        .lines
        .iter()
        .skip(d.offset)
        .take(body.height as usize)
        .map(|(kind, text)| {
            let style = match kind {
                PanelLine::File => t.bold,
                PanelLine::Change | PanelLine::Note => t.dim,
                PanelLine::Header => t.bold,
                PanelLine::Hunk => t.accent,
                PanelLine::Added => t.ok,
                PanelLine::Removed => t.error,
                PanelLine::Context => Style::default(),
                PanelLine::Strong => t.bold,
                PanelLine::Warn => t.accent,
                PanelLine::Alert => t.error,
            };
            Line::from(Span::styled(
                fit(&visible(text), body.width as usize),
                style,
            ))
        })
        .collect();
    f.render_widget(Paragraph::new(lines), body);
}

fn draw_no_sessions(f: &mut Frame<'_>, t: &Theme, state: &StoreState, area: Rect) {
    let first = match state {
        StoreState::Missing(p) => format!("No store at {} yet.", visible(&p.display().to_string())),
        _ => "The store holds no sessions yet.".to_string(),
    };
    let lines = vec![
        Line::default(),
        Line::from(Span::styled(first, t.bold)),
        Line::default(),
        Line::from("Index the agent history on this machine:"),
        Line::from(Span::styled("    trail index", t.accent)),
        Line::default(),
        Line::from("or try the bundled samples (from a clone of trail):"),
        Line::from(Span::styled(
            "    trail --home examples/home index",
            t.accent,
        )),
        Line::default(),
        Line::from(Span::styled("Then run trail tui again. Esc quits.", t.dim)),
    ];
    f.render_widget(Paragraph::new(lines), area);
}

fn draw_status(f: &mut Frame<'_>, app: &App, area: Rect) {
    let t = &app.theme;
    let k = &app.keys;
    let line = if let Some((m, err)) = &app.message {
        Line::from(Span::styled(
            one_line(m),
            if *err { t.error } else { t.accent },
        ))
    } else if app.panel.is_some() {
        Line::from(Span::styled(
            format!(
                "esc back · up/down pgup/pgdn scroll · {} {} top, bottom",
                k.top, k.bottom
            ),
            t.dim,
        ))
    } else if !app.transcripts.is_empty() {
        Line::from(Span::styled(
            format!(
                "esc back · enter/space unfold · {} all · {} changes · {}/{} match · {} resume · {} export · {} id · {} keys",
                k.toggle_all, k.diff, k.next_match, k.prev_match, k.resume, k.export, k.copy_id, k.help
            ),
            t.dim,
        ))
    } else if app.store != StoreState::Ready {
        Line::from(Span::styled("esc quits", t.dim))
    } else if app.focus_list {
        Line::from(Span::styled(
            format!(
                "enter open · {} resume · {} export · {} id · {} continue · tab search · {} keys · esc quit",
                k.resume, k.export, k.copy_id, k.continue_elsewhere, k.help
            ),
            t.dim,
        ))
    } else {
        Line::from(Span::styled(
            format!(
                "type to search · enter open · {} scope · tab list keys · f1 keys · esc quit",
                k.scope
            ),
            t.dim,
        ))
    };
    f.render_widget(Paragraph::new(line), area);
}

/// A rectangle of at most `w` x `h` in the middle of `area`.
fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Every key, for the help overlay and the README.
pub fn help_lines(app: &App) -> Vec<(String, String)> {
    let k = &app.keys;
    let mut v: Vec<(String, String)> = Vec::new();
    let mut add = |key: String, what: &str| v.push((key, what.to_string()));
    add("".into(), "Search box and list");
    add("type".into(), "search as you type, across every agent");
    add(
        "filters".into(),
        "source: repo: cwd: branch: model: since: until: role:",
    );
    add(
        k.scope.to_string(),
        "scope: repository, folder, branch, this host, all",
    );
    add(
        "up/down pgup/pgdn".into(),
        "move in the list (also ctrl-p, ctrl-n)",
    );
    add("enter".into(), "open the transcript");
    add(
        "tab".into(),
        "list keys: r e y c j k g G act; / back to the box",
    );
    add("ctrl-u ctrl-w".into(), "clear the box, delete a word");
    add("esc, ctrl-c".into(), "quit (ctrl-c quits from anywhere)");
    add("".into(), "Transcript");
    add(
        "up/down j/k pgup/pgdn".into(),
        "scroll (the mouse wheel too)",
    );
    add(
        "enter space".into(),
        "unfold a tool call or thinking; open a subagent",
    );
    add(
        k.toggle_all.to_string(),
        "show or hide all tool input/output and thinking",
    );
    add(
        k.diff.to_string(),
        "what the session changed, diffs per file",
    );
    add(
        format!("{} {} {} {}", k.next_match, k.prev_match, k.top, k.bottom),
        "next, previous match; top, bottom",
    );
    add("esc q".into(), "back");
    add("".into(), "List (after tab) and transcript");
    add(
        k.resume.to_string(),
        "resume in its own agent, in its folder",
    );
    add(
        k.continue_elsewhere.to_string(),
        "continue in another agent: claude, codex, gemini",
    );
    add(
        k.export.to_string(),
        "export (Markdown or HTML, secrets redacted)",
    );
    add(k.copy_id.to_string(), "show the session's id to copy");
    // One row for both: the list fills an 80x24 screen.
    add(
        format!("{} f1, {}", k.help, k.usage),
        "this list; usage of the 5-hour block (anywhere)",
    );
    v
}

fn draw_help(f: &mut Frame<'_>, app: &App, area: Rect) {
    let t = &app.theme;
    let lines: Vec<Line<'static>> = help_lines(app)
        .into_iter()
        .map(|(k, what)| {
            if k.is_empty() {
                Line::from(Span::styled(what, t.accent))
            } else {
                Line::from(vec![
                    Span::styled(format!("  {:<22}", k), t.bold),
                    Span::raw(what),
                ])
            }
        })
        .collect();
    let rect = centered(area, 80, lines.len() as u16 + 2);
    f.render_widget(Clear, rect);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(t.dim)
                .title(Span::styled(" keys · any key closes ", t.accent)),
        ),
        rect,
    );
}

fn draw_export(f: &mut Frame<'_>, app: &App, area: Rect) {
    let t = &app.theme;
    let rect = centered(area, 44, 4);
    f.render_widget(Clear, rect);
    f.render_widget(
        Paragraph::new(vec![
            Line::from("m  Markdown    h  HTML"),
            Line::from(Span::styled("secrets are redacted · esc cancels", t.dim)),
        ])
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(t.dim)
                .title(Span::styled(" export as ", t.accent)),
        ),
        rect,
    );
}

fn draw_continue(f: &mut Frame<'_>, app: &App, area: Rect) {
    let t = &app.theme;
    let rect = centered(area, 52, 5);
    f.render_widget(Clear, rect);
    f.render_widget(
        Paragraph::new(vec![
            Line::from("c  Claude Code    x  Codex    g  Gemini CLI"),
            Line::from(Span::styled(
                "written as a new session, secrets redacted",
                t.dim,
            )),
            Line::from(Span::styled("esc cancels", t.dim)),
        ])
        .block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(t.dim)
                .title(Span::styled(" continue in ", t.accent)),
        ),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_has_a_short_name_that_fits_the_list() {
        for s in trail_query::registry::sources() {
            let short = agent(s.id());
            assert!(!short.is_empty(), "{}", s.id());
        }
        assert_eq!(agent("claude-code"), "claude");
        assert_eq!(agent("copilot-vscode"), "vscode");
        assert_eq!(agent("not-a-source"), "not-a-source");
    }
}
