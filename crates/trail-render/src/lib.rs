//! Exports stored sessions as Markdown, self-contained HTML, normalized JSON and VS Code
//! "Export Chat" files, with secrets redacted.
//!
//! Every writer streams: messages are read from the store one row at a time and written to any
//! [`std::io::Write`], so exporting a whole store never holds more than one message (and, for
//! VS Code files, one turn's small bookkeeping) in memory. Every piece of transcript text goes
//! through the [`Redactor`] before it is written; the store keeps the originals.
//!
//! This crate knows nothing of terminals or flags: the CLI builds the [`Redactor`] from its
//! flags and config and passes it in.

pub mod doc;
mod html;
mod json;
mod markdown;
/// Transcript text made safe to write into Markdown (the exports' rule, for other renderings).
pub use markdown::{inert as inert_markdown, inert_inline as inert_markdown_inline};
pub mod redact;
pub mod session;
pub mod terminal;
mod text;

/// Display helpers shared with the CLI's terminal output.
pub use text::{tokens, tool_line, tool_summary, when};
mod vscode;

use std::io::{self, Write};

use trail_store::{ExportMessage, SessionRow, Store, StoreError};

pub use doc::{
    write_diff_html, Align, Cell, Column, DiffLine, HtmlSink, MarkdownSink, RowKind, Run, Sink,
    TerminalSink, Tone,
};
pub use html::STYLE as HTML_STYLE;
pub use redact::{RedactError, RedactionCounts, Redactor};
pub use terminal::{terminal_safe, JsonControlEscaper, TerminalSafeWriter};
pub use text::{escape_html, escape_html_marked};

/// Bytes past a view's cut that are still scanned for secrets (longer than any token).
const VIEW_MARGIN: usize = 8192;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Readable Markdown: one heading per turn, tool calls as fenced blocks.
    Markdown,
    /// One self-contained HTML page per session.
    Html,
    /// The normalized session model (see `docs/session.schema.json`).
    Json,
    /// VS Code's "Export Chat" shape, for "Chat: Import Chat...".
    Vscode,
}

impl Format {
    /// Returns the file name extension written for this format.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Json => "json",
            Format::Vscode => "chat.json",
        }
    }
}

/// Errors while exporting.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the output failed.
    #[error("cannot write the export: {0}")]
    Io(#[from] io::Error),
}

impl From<serde_json::Error> for RenderError {
    fn from(e: serde_json::Error) -> Self {
        RenderError::Io(io::Error::other(e))
    }
}

pub type Result<T, E = RenderError> = std::result::Result<T, E>;

/// What to include.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportOptions {
    /// Include the model's reasoning in Markdown and HTML (JSON and VS Code files always
    /// carry it).
    pub thinking: bool,
    /// The agent's name for a source id ("Claude Code" for `claude-code`): the source
    /// registry's `trail_sources::name_of`, which this crate may not depend on. Without it a
    /// VS Code chat file answers as "GitHub Copilot".
    pub agent_name: Option<fn(&str) -> Option<&'static str>>,
}

/// How a live viewer (`trail serve`) shows a session inside its own page: the HTML export's
/// transcript with an anchor on each turn (`#turn-N`, N from 0 as in search hits), search words
/// marked, and subagents nested too deep linked instead of dropped.
#[derive(Debug, Clone, Default)]
pub struct HtmlView {
    /// Words to wrap in `<mark>` wherever they appear in transcript text.
    pub highlight: Vec<String>,
    /// A session's page is this prefix followed by its id (URL-escaped by the caller's
    /// router); without it, nested-too-deep subagents are named, not linked.
    pub session_href: Option<String>,
}

/// Exports sessions from one store with one redactor, counting what it redacted.
pub struct Exporter<'a> {
    store: &'a Store,
    redactor: &'a Redactor,
    options: ExportOptions,
    counts: RedactionCounts,
    /// Set while [`Exporter::write_html_view`] writes.
    view: Option<HtmlView>,
}

impl<'a> Exporter<'a> {
    /// Returns an exporter over `store`.
    pub fn new(store: &'a Store, redactor: &'a Redactor, options: ExportOptions) -> Self {
        Exporter {
            store,
            redactor,
            options,
            counts: RedactionCounts::default(),
            view: None,
        }
    }

    /// Writes one session (and its subagents, nested) as an HTML fragment (an `<article>`,
    /// no page around it) for a viewer's page; style it with [`HTML_STYLE`].
    pub fn write_html_view(
        &mut self,
        session: &SessionRow,
        view: HtmlView,
        w: &mut dyn Write,
    ) -> Result<()> {
        self.view = Some(view);
        let result = html::write_fragment(self, session, w);
        self.view = None;
        result
    }

    /// Writes one session (and its subagents, nested) in `format`.
    pub fn write_session(
        &mut self,
        session: &SessionRow,
        format: Format,
        w: &mut dyn Write,
    ) -> Result<()> {
        // Transcript text may hold terminal escapes (issue 15): Markdown and HTML show
        // control characters as visible symbols; JSON escapes them, keeping the exact text.
        match format {
            Format::Markdown => {
                let mut w = TerminalSafeWriter::new(w);
                markdown::write_session(self, session, &mut w)?;
                w.into_inner()?;
                Ok(())
            }
            Format::Html => {
                let mut w = TerminalSafeWriter::new(w);
                html::write_session(self, session, &mut w)?;
                w.into_inner()?;
                Ok(())
            }
            Format::Json => {
                let mut w = JsonControlEscaper::new(w);
                json::write_session(self, session, &mut w)?;
                w.into_inner()?;
                Ok(())
            }
            Format::Vscode => {
                let mut w = JsonControlEscaper::new(w);
                vscode::write_session(self, session, &mut w)?;
                w.into_inner()?;
                Ok(())
            }
        }
    }

    /// Writes an HTML page listing `sessions` with links to their files (`file_name` of
    /// each with the HTML extension).
    pub fn write_html_index(&mut self, sessions: &[SessionRow], w: &mut dyn Write) -> Result<()> {
        let mut w = TerminalSafeWriter::new(w);
        html::write_index(self, sessions, &mut w)?;
        w.into_inner()?;
        Ok(())
    }

    /// Returns how many values were redacted so far, by kind.
    pub fn counts(&self) -> &RedactionCounts {
        &self.counts
    }

    /// Redacts one text.
    fn redact<'t>(&mut self, text: &'t str) -> std::borrow::Cow<'t, str> {
        self.redactor.redact(text, &mut self.counts)
    }

    /// Redacts what a view cut to `max_lines` and `max_chars` shows of `text`, and returns that
    /// part and what was left out (lines, characters), counted on the original. Only the shown
    /// part and a margin are scanned, so a secret the cut crosses is still found whole, and a
    /// huge tool output costs no more than its view.
    fn redact_view(
        &mut self,
        text: &str,
        max_lines: usize,
        max_chars: usize,
    ) -> (String, Option<(usize, usize)>) {
        let (shown, left) = text::trim(text, max_lines, max_chars);
        if left.is_none() {
            return (self.redact(text).into_owned(), None);
        }
        let mut end = (shown.len() + VIEW_MARGIN).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let redacted = self.redact(&text[..end]);
        let (view, _) = text::trim(&redacted, max_lines, max_chars);
        (view.to_string(), left)
    }

    /// A session's title, redacted (`(untitled)` when it has none).
    fn title(&mut self, s: &SessionRow) -> String {
        self.redact(s.title.as_deref().unwrap_or("(untitled)"))
            .into_owned()
    }

    fn redact_opt(&mut self, text: Option<&str>) -> Option<String> {
        text.map(|t| self.redact(t).into_owned())
    }

    /// Returns a session's header facts in display order, as (label, value, is an id). The
    /// Markdown and HTML writers lay them out; values from the transcript are redacted.
    fn session_facts(&mut self, s: &SessionRow) -> Vec<(&'static str, String, bool)> {
        let mut facts = vec![
            ("Session", s.id.to_string(), true),
            ("Source", s.source.to_string(), false),
        ];
        if let Some(r) = self.redact_opt(s.repository.as_deref()) {
            facts.push(("Repository", r, false));
        }
        if let Some(c) = self.redact_opt(s.cwd.as_deref()) {
            facts.push(("Folder", c, false));
        }
        if let Some(b) = self.redact_opt(s.branch.as_deref()) {
            facts.push(("Branch", b, false));
        }
        if !s.models.is_empty() {
            facts.push(("Models", s.models.join(", "), false));
        }
        facts.push(("Started", text::when(s.created_at.as_deref()), false));
        facts.push(("Last activity", text::when(s.updated_at.as_deref()), false));
        facts.push((
            "Turns",
            format!("{} ({} messages)", s.turns, s.messages),
            false,
        ));
        if s.total_tokens() > 0 {
            facts.push((
                "Tokens",
                format!(
                    "input {} · output {} · cache write {} · cache read {}",
                    text::tokens(s.input_tokens),
                    text::tokens(s.output_tokens),
                    text::tokens(s.cache_creation_tokens),
                    text::tokens(s.cache_read_tokens)
                ),
                false,
            ));
        }
        if let Some(v) = &s.agent_version {
            facts.push(("Agent version", v.clone(), false));
        }
        facts
    }
}

/// Calls `f(turn, message)` for each message of session `id` on the main chain that belongs to
/// a turn, in order, and returns how many messages off the main chain (abandoned branches) it
/// left out: what every transcript-shaped writer shows.
fn for_each_turn_message(
    store: &Store,
    id: &str,
    mut f: impl FnMut(i64, ExportMessage) -> Result<()>,
) -> Result<u64> {
    let mut off_chain = 0u64;
    store.for_each_export_message(id, |m: ExportMessage| -> Result<()> {
        if !m.message.on_main_chain {
            off_chain += 1;
            return Ok(());
        }
        match m.message.turn_index {
            Some(turn) => f(turn, m),
            None => Ok(()),
        }
    })?;
    Ok(off_chain)
}

/// Walks session `id` as streamed from the store (one message at a time, tool results joined
/// to their calls) into `sink`, placing `subagents`: what the Markdown and HTML exports show.
fn walk_export<S>(
    store: &Store,
    id: &str,
    subagents: session::Subagents<'_>,
    sink: &mut S,
) -> std::result::Result<(), S::Error>
where
    S: session::SessionSink,
    S::Error: From<StoreError>,
{
    let mut walker = session::Walker::new(subagents, false);
    store.for_each_export_message(id, |m: ExportMessage| {
        let result = m.result.as_ref().map(|r| session::Outcome {
            seq: r.seq,
            output: r.tool_output.as_deref(),
            is_error: r.is_error,
        });
        walker.message(sink, &m.message, result, m.joined)
    })?;
    walker.finish(sink)
}

/// The CSS class of a unified diff's line in the HTML views (session export and web pages):
/// `dh` file headers, `da` added, `dd` removed, `dk` hunk headers; `None` for context
/// ([`DiffLine`] decides).
pub fn diff_line_class(line: &str) -> Option<&'static str> {
    DiffLine::of(line).class()
}

/// Describes one change of `trail diff` in a line: `turn 2 · Edit · 2026-01-05 10:00 ·
/// created`, and when the file's content was not recorded, that its lines are numbered within
/// the edit. Shared by the terminal, Markdown and HTML views.
pub fn change_heading(c: &trail_diff::FileChange) -> String {
    let mut parts = vec![match c.turn {
        Some(t) => format!("turn {t}"),
        None => "turn -".to_string(),
    }];
    parts.push(c.source.clone());
    if c.timestamp.is_some() {
        parts.push(text::when(c.timestamp.as_deref()));
    }
    match c.kind {
        trail_diff::ChangeKind::Created => parts.push("created".into()),
        trail_diff::ChangeKind::Deleted => parts.push("deleted".into()),
        trail_diff::ChangeKind::Renamed => parts.push(format!(
            "renamed to {}",
            c.renamed_to.as_deref().unwrap_or("?")
        )),
        trail_diff::ChangeKind::Modified => {}
    }
    if !c.exact {
        parts
            .push("the file's content was not recorded: lines are numbered within the edit".into());
    }
    parts.join(" · ")
}

/// Returns the file name (without extension) a session is written to: its id with every
/// character outside `[A-Za-z0-9._-]` replaced by `_`.
pub fn file_stem(session_id: &str) -> String {
    let s: String = session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "session".to_string()
    } else {
        s
    }
}

/// Returns the file name a session is written to in `format`.
pub fn file_name(session_id: &str, format: Format) -> String {
    format!("{}.{}", file_stem(session_id), format.extension())
}
