//! Each report written once, as a document for any [`Sink`]: the Markdown of the CLI and the
//! MCP server ([`crate::markdown`] wraps these in a [`trail_render::MarkdownSink`]), the web
//! viewer's HTML ([`trail_render::HtmlSink`]) and the terminal ([`trail_render::TerminalSink`])
//! come from the same calls.
//!
//! A report's `*_body` is the report without its title, for pages that write their own title
//! and filters above it.

use trail_render::{Cell, Column, RowKind, Run, Sink};

use crate::blocks::{BlockSums, BlocksReport};
use crate::format::{hours_minutes, premium, thousands, usage_key_label, usd};
use crate::improve::ImproveReport;
use crate::standup::{Standup, Stream};
use crate::text::{count, minute, trim};
use crate::tips::{SessionStat, Tips};
use crate::usage::{GroupBy, Unpriced, UsageReport, UsageRow};
use crate::zone::DayZone;

/// Characters kept of a session title.
const TITLE_CHARS: usize = 80;

/// Transcript text on one line, at most `max` characters.
fn quote(s: &str, max: usize) -> Run<'static> {
    Run::quote(trim(s, max))
}

/// `text` with its first letter in capitals: a note that stands as a sentence of its own.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}

/// `" + unpriced"` when some requests had no price.
fn unpriced_mark(unpriced_requests: i64) -> &'static str {
    if unpriced_requests > 0 {
        " + unpriced"
    } else {
        ""
    }
}

/// The usage report: its title, its table, the models without a price.
pub fn usage(r: &UsageReport, sink: &mut dyn Sink) {
    sink.heading(1, &[Run::text("Usage")]);
    if r.rows.is_empty() {
        sink.note(&[Run::emph("no usage in this range")]);
        return;
    }
    usage_table(r, sink);
    unpriced_models(&r.unpriced_models, sink);
}

/// The usage report's table, a totals row last (grouped by session: the session's own cost
/// beside the cost with its subagents; Copilot premium requests in a column of their own).
pub fn usage_table(r: &UsageReport, sink: &mut dyn Sink) {
    let by_session = r.group_by == GroupBy::Session;
    // Copilot premium requests are their own unit, never dollars: their own column.
    let premium = r.totals.premium_requests > 0.0;
    let mut columns = vec![Column::left(usage_key_label(r))];
    for title in [
        "Input",
        "Output",
        "Cache write",
        "Cache read",
        "Total tokens",
    ] {
        columns.push(Column::right(title));
    }
    if by_session {
        columns.push(Column::right("Cost (self)"));
        columns.push(Column::right("Cost (with subagents)"));
    } else {
        columns.push(Column::right("Cost"));
    }
    if premium {
        columns.push(Column::right("Premium requests"));
    }
    sink.begin_table(&columns);
    let shape = UsageColumns {
        by_session,
        premium,
    };
    for row in &r.rows {
        shape.row(sink, RowKind::Body, usage_key(r, row), row);
        shape.breakdown(sink, row);
    }
    shape.row(sink, RowKind::Total, vec![Run::strong("Total")], &r.totals);
    shape.breakdown(sink, &r.totals);
    sink.end_table();
}

/// Which of the usage table's optional columns are there.
struct UsageColumns {
    /// The session's own cost beside the cost with its subagents.
    by_session: bool,
    /// Copilot premium requests.
    premium: bool,
}

impl UsageColumns {
    /// One row of the usage table.
    fn row(&self, sink: &mut dyn Sink, kind: RowKind, name: Vec<Run<'_>>, row: &UsageRow) {
        let mut cells = vec![Cell::Runs(name)];
        for n in [
            row.input_tokens,
            row.output_tokens,
            row.cache_creation_tokens,
            row.cache_read_tokens,
            row.total_tokens,
        ] {
            cells.push(Cell::text(thousands(n)));
        }
        if self.by_session {
            let own = match (kind, row.self_cost_usd) {
                (RowKind::Sub, _) | (_, None) => String::new(),
                (_, Some(c)) => usd(c),
            };
            cells.push(Cell::text(own));
        }
        cells.push(Cell::text(format!(
            "{}{}",
            usd(row.cost_usd),
            unpriced_mark(row.unpriced_requests)
        )));
        if self.premium {
            cells.push(Cell::text(premium(row.premium_requests)));
        }
        sink.row(kind, &cells);
    }

    /// The per-model rows under a usage row (`--breakdown`).
    fn breakdown(&self, sink: &mut dyn Sink, row: &UsageRow) {
        for sub in &row.breakdown {
            let name = vec![Run::text(format!("└ {}", sub.key))];
            self.row(sink, RowKind::Sub, name, sub);
        }
    }
}

/// A usage row's first cell: the session (short id and title), the model's name, or the key.
fn usage_key<'a>(r: &UsageReport, row: &'a UsageRow) -> Vec<Run<'a>> {
    match (&row.label, r.group_by) {
        (Some(l), GroupBy::Session) => vec![
            Run::text(row.short_key.as_deref().unwrap_or(&row.key)),
            Run::text(" "),
            // The title is transcript text: inert in Markdown, cut like every report's titles.
            quote(l, TITLE_CHARS),
        ],
        (_, GroupBy::Model) => vec![Run::text(crate::usage::model_name(&row.key))],
        _ => vec![Run::text(row.key.as_str())],
    }
}

/// The models seen without a price: their tokens count, their cost does not.
pub fn unpriced_models(models: &[Unpriced], sink: &mut dyn Sink) {
    if models.is_empty() {
        return;
    }
    sink.paragraph(&[Run::text("Unpriced models (tokens counted, cost not):")]);
    sink.begin_list(false);
    for u in models {
        sink.item(&[
            Run::code(u.model.as_str()),
            Run::text(format!(
                ": {}, {} tokens",
                count(u.requests, "request", "requests"),
                thousands(u.total_tokens)
            )),
        ]);
    }
    sink.end_list();
}

/// The 5-hour blocks: a table with gaps as rows of their own, the active block's burn rate and
/// projection below.
pub fn blocks(r: &BlocksReport, sink: &mut dyn Sink) {
    sink.heading(1, &[Run::text("Usage by 5-hour block")]);
    sink.note(&[Run::emph(format!("{}.", sentence(r.estimate)))]);
    if r.blocks.is_empty() {
        sink.note(&[Run::emph("no usage in this range")]);
        return;
    }
    let mut columns = vec![
        Column::left(format!("Block start ({})", r.time_zone)),
        Column::left("End"),
        Column::right("Span"),
    ];
    for title in [
        "Requests",
        "Input",
        "Output",
        "Cache write",
        "Cache read",
        "Total tokens",
        "Cost",
    ] {
        columns.push(Column::right(title));
    }
    sink.begin_table(&columns);
    for b in &r.blocks {
        if b.is_gap {
            let mut cells = vec![
                Cell::Runs(vec![
                    Run::emph("gap"),
                    Run::text(format!(" {}", b.start_local)),
                ]),
                Cell::text(b.end_local.as_str()),
            ];
            cells.extend(std::iter::repeat_n(Cell::Absent, 8));
            sink.row(RowKind::Gap, &cells);
            continue;
        }
        let mark = if b.is_active { " (active)" } else { "" };
        let name = Run::text(format!("{}{mark}", b.start_local));
        // From the block's first request to its last.
        let span = Cell::text(hours_minutes(b.active_minutes));
        let end = Cell::text(b.end_local.as_str());
        block_row(sink, RowKind::Body, name, [end, span], &b.sums);
        for m in &b.breakdown {
            let name = Run::text(format!("└ {}", m.model));
            block_row(
                sink,
                RowKind::Sub,
                name,
                [Cell::text(""), Cell::text("")],
                &m.sums,
            );
        }
    }
    let name = Run::strong("Total");
    block_row(
        sink,
        RowKind::Total,
        name,
        [Cell::Absent, Cell::Absent],
        &r.totals,
    );
    sink.end_table();
    active_block(r, sink);
    unpriced_models(&r.unpriced_models, sink);
}

/// One row of the blocks table (the totals row marks no unpriced requests).
/// `when` is the block's end and span.
fn block_row(
    sink: &mut dyn Sink,
    kind: RowKind,
    name: Run<'_>,
    when: [Cell<'_>; 2],
    s: &BlockSums,
) {
    let mut cells = vec![Cell::Runs(vec![name])];
    cells.extend(when);
    for n in [
        s.requests,
        s.input_tokens,
        s.output_tokens,
        s.cache_creation_tokens,
        s.cache_read_tokens,
        s.total_tokens,
    ] {
        cells.push(Cell::text(thousands(n)));
    }
    let mark = match kind {
        RowKind::Total => "",
        _ => unpriced_mark(s.unpriced_requests),
    };
    cells.push(Cell::text(format!("{}{mark}", usd(s.cost_usd))));
    sink.row(kind, &cells);
}

/// The active block's burn rate and projection, one paragraph.
fn active_block(r: &BlocksReport, sink: &mut dyn Sink) {
    let Some(a) = r.active() else {
        return;
    };
    let mut runs = Vec::new();
    if let Some(rate) = &a.burn_rate {
        runs.push(Run::text(format!(
            "Burn rate (last {} min, {} – {}): {} tokens/min, {}/hour.",
            rate.window_minutes,
            minute(&rate.since),
            minute(&rate.until),
            thousands(rate.tokens_per_minute.round() as i64),
            usd(rate.cost_per_hour_usd)
        )));
    }
    if let Some(p) = &a.projection {
        if !runs.is_empty() {
            runs.push(Run::Break);
        }
        runs.push(Run::text(format!(
            "Projected by the block's end ({} left): {} tokens, {}.",
            hours_minutes(p.remaining_minutes),
            thousands(p.total_tokens),
            usd(p.cost_usd)
        )));
    }
    if !runs.is_empty() {
        sink.paragraph(&runs);
    }
}

/// Describes the standup's range.
pub(crate) fn range_words(s: &Standup) -> String {
    if s.default_range {
        "the last 24 hours".to_string()
    } else {
        match DayZone::parse(&s.time_zone) {
            Ok(zone) if !zone.is_utc() => format!(
                "{} – {} ({})",
                zone.minute_of(&s.since).unwrap_or_else(|| minute(&s.since)),
                zone.minute_of(&s.until).unwrap_or_else(|| minute(&s.until)),
                s.time_zone
            ),
            _ => format!("{} – {} UTC", minute(&s.since), minute(&s.until)),
        }
    }
}

/// The standup: one section per work stream (repository and branch).
pub fn standup(s: &Standup, sink: &mut dyn Sink) {
    sink.heading(1, &[Run::text(format!("Standup: {}", range_words(s)))]);
    standup_body(s, sink);
}

/// The standup without its title.
pub fn standup_body(s: &Standup, sink: &mut dyn Sink) {
    if s.streams.is_empty() {
        sink.paragraph(&[Run::text(format!("no sessions in {}", range_words(s)))]);
        return;
    }
    for st in &s.streams {
        sink.begin_section();
        stream(st, sink);
        sink.end_section();
    }
}

/// One work stream: its sessions, what was asked, the files, the refs, done and in progress.
fn stream(st: &Stream, sink: &mut dyn Sink) {
    let place = st
        .repository
        .as_deref()
        .or(st.folder.as_deref())
        .unwrap_or("(no folder)");
    let mut heading = vec![quote(place, usize::MAX)];
    if let Some(b) = &st.branch {
        heading.push(Run::text(" · "));
        heading.push(quote(b, usize::MAX));
    }
    sink.heading(2, &heading);
    sink.paragraph(&[Run::text("Sessions:")]);
    sink.begin_list(false);
    for x in &st.sessions {
        let updated = x
            .updated_at
            .as_deref()
            .map(minute)
            .unwrap_or_else(|| "-".into());
        sink.item(&[
            Run::text(format!("{updated} · {} · ", x.source)),
            quote(x.title.as_deref().unwrap_or("(untitled)"), TITLE_CHARS),
            Run::text(" ("),
            Run::session(x.id.as_str(), x.short_id.as_str(), None),
            Run::text(format!(", {})", count(x.turns, "turn", "turns"))),
        ]);
    }
    if st.more_sessions > 0 {
        sink.item(&[Run::text(format!("and {} more", st.more_sessions))]);
    }
    sink.end_list();
    let asked: Vec<&String> = st.sessions.iter().flat_map(|x| &x.asked).collect();
    if !asked.is_empty() {
        sink.paragraph(&[Run::text("Asked:")]);
        sink.begin_list(false);
        for a in asked {
            sink.item(&[Run::text("\""), quote(a, usize::MAX), Run::text("\"")]);
        }
        sink.end_list();
    }
    key_files(st, sink);
    refs(st, sink);
    done_and_open(st, sink);
}

/// A paragraph of `label` then each item's runs, `sep` between them; none without items.
fn listed<'a, T>(
    sink: &mut dyn Sink,
    label: &'a str,
    sep: &'a str,
    items: impl IntoIterator<Item = T>,
    runs_of: impl Fn(T) -> Vec<Run<'a>>,
) {
    let mut runs = vec![Run::text(label)];
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            runs.push(Run::text(sep));
        }
        runs.extend(runs_of(item));
    }
    if runs.len() > 1 {
        sink.paragraph(&runs);
    }
}

/// `Key files: `a` (2 edits), ...`.
fn key_files(st: &Stream, sink: &mut dyn Sink) {
    listed(sink, "Key files: ", ", ", &st.key_files, |f| {
        let s = if f.edits == 1 { "" } else { "s" };
        vec![
            Run::code(f.path.as_str()),
            Run::text(format!(" ({} edit{s})", f.edits)),
        ]
    });
}

/// `Refs: [PR 12](url), issue 3, commit abc`.
fn refs(st: &Stream, sink: &mut dyn Sink) {
    listed(sink, "Refs: ", ", ", &st.refs, |r| {
        let text = match r.kind.as_str() {
            "pr" => format!("PR {}", r.value),
            "issue" => format!("issue {}", r.value),
            _ => format!("commit {}", &r.value[..r.value.len().min(10)]),
        };
        vec![match &r.url {
            Some(u) => Run::link(text, u.as_str()),
            None => Run::text(text),
        }]
    });
}

/// `Done: title (`id`); ...` and `In progress: ...`.
fn done_and_open(st: &Stream, sink: &mut dyn Sink) {
    for (done, label) in [(true, "Done: "), (false, "In progress: ")] {
        let sessions = st.sessions.iter().filter(|x| x.in_progress != done);
        listed(sink, label, "; ", sessions, |x| {
            vec![
                quote(x.title.as_deref().unwrap_or("(untitled)"), 60),
                Run::text(" ("),
                Run::session(x.id.as_str(), x.short_id.as_str(), None),
                Run::text(")"),
            ]
        });
    }
}

/// The tips: the numbers, the tools, the longest and costliest sessions, repeated prompts, and
/// the advice they support.
pub fn tips(t: &Tips, sink: &mut dyn Sink) {
    sink.heading(1, &[Run::text("Tips")]);
    tips_body(t, sink);
}

/// The tips without their title.
pub fn tips_body(t: &Tips, sink: &mut dyn Sink) {
    if t.sessions == 0 {
        sink.paragraph(&[Run::text("no sessions in this range")]);
        return;
    }
    tips_summary(t, sink);
    if !t.tools.is_empty() {
        sink.heading(2, &[Run::text("Tools")]);
        sink.begin_table(&[
            Column::left("Tool"),
            Column::right("Calls"),
            Column::right("Errors"),
        ]);
        for x in &t.tools {
            sink.row(
                RowKind::Body,
                &[
                    Cell::text(x.name.as_str()),
                    Cell::text(thousands(x.calls)),
                    Cell::text(thousands(x.errors)),
                ],
            );
        }
        sink.end_table();
    }
    session_list("Longest sessions", &t.longest_sessions, sink);
    session_list("Most expensive sessions", &t.most_expensive_sessions, sink);
    if !t.repeated_prompts.is_empty() {
        sink.heading(2, &[Run::text("Prompts repeated across sessions")]);
        sink.begin_list(false);
        for p in &t.repeated_prompts {
            sink.item(&[
                Run::text("\""),
                quote(&p.prompt, usize::MAX),
                Run::text(format!("\" ({} sessions)", p.sessions)),
            ]);
        }
        sink.end_list();
    }
    if !t.advice.is_empty() {
        sink.heading(2, &[Run::text("Tips")]);
        sink.begin_list(false);
        for a in &t.advice {
            sink.item(&[Run::text(a.as_str())]);
        }
        sink.end_list();
    }
}

/// The tips' figures, one line each.
fn tips_summary(t: &Tips, sink: &mut dyn Sink) {
    let list = |v: &[crate::tips::Count]| {
        v.iter()
            .map(|c| format!("{} ({})", c.name, thousands(c.count)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut lines = vec![
        format!(
            "{} sessions and {} turns over {} active days: {:.1} sessions and {:.1} turns a day.",
            thousands(t.sessions),
            thousands(t.turns),
            t.active_days,
            t.sessions_per_day,
            t.turns_per_day
        ),
        format!("Agents (sessions): {}.", list(&t.agents)),
    ];
    if !t.models.is_empty() {
        lines.push(format!("Models (requests): {}.", list(&t.models)));
    }
    if let Some(r) = t.cache_hit_ratio {
        lines.push(format!(
            "Cache-hit ratio: {:.1}% of input tokens were cache reads.",
            100.0 * r
        ));
    }
    lines.push(format!(
        "Sessions abandoned after one turn: {} of {}.",
        t.one_turn_sessions, t.sessions
    ));
    sink.begin_list(false);
    for l in lines {
        sink.item(&[Run::text(l)]);
    }
    sink.end_list();
}

/// A titled list of sessions (id, title, agent, turns, cost).
fn session_list(title: &str, v: &[SessionStat], sink: &mut dyn Sink) {
    if v.is_empty() {
        return;
    }
    sink.heading(2, &[Run::text(title)]);
    sink.begin_list(false);
    for s in v {
        sink.item(&[
            Run::session(s.id.as_str(), s.short_id.as_str(), None),
            Run::text(" "),
            quote(s.title.as_deref().unwrap_or("(untitled)"), TITLE_CHARS),
            Run::text(format!(
                " · {} · {} · {}",
                s.source,
                count(s.turns, "turn", "turns"),
                usd(s.cost_usd)
            )),
        ]);
    }
    sink.end_list();
}

/// Where the agents struggled: the findings with their evidence, then suggestions.
pub fn improve(r: &ImproveReport, sink: &mut dyn Sink) {
    sink.heading(1, &[Run::text("Where the agents struggled")]);
    improve_body(r, sink);
}

/// The improve report without its title.
pub fn improve_body(r: &ImproveReport, sink: &mut dyn Sink) {
    if r.findings.is_empty() {
        let text = if r.sessions == 0 {
            "no sessions in this range".to_string()
        } else {
            format!("Nothing stood out in {} sessions.", r.sessions)
        };
        sink.paragraph(&[Run::text(text)]);
        return;
    }
    sink.begin_list(true);
    for f in &r.findings {
        let s = if f.sessions == 1 { "" } else { "s" };
        sink.item(&[
            Run::strong(f.title.as_str()),
            Run::text(format!(" ({} session{s})", f.sessions)),
        ]);
        sink.begin_list(false);
        for e in &f.evidence {
            let turn = e.turn.map(|t| format!(", turn {t}")).unwrap_or_default();
            sink.item(&[
                Run::session(e.session_id.as_str(), e.short_id.as_str(), e.turn),
                Run::text(format!("{turn}: \"")),
                quote(&e.quote, usize::MAX),
                Run::text("\""),
            ]);
        }
        sink.end_list();
    }
    sink.end_list();
    if !r.suggestions.is_empty() {
        sink.heading(
            2,
            &[Run::text(
                "Suggestions for CLAUDE.md / .github/copilot-instructions.md",
            )],
        );
        sink.begin_list(false);
        for s in &r.suggestions {
            sink.item(&[Run::text(s.as_str())]);
        }
        sink.end_list();
    }
}
