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

mod html;
mod json;
mod markdown;
pub mod redact;
mod text;

/// Display helpers shared with the CLI's terminal output.
pub use text::{tokens, when};
mod vscode;

use std::io::{self, Write};

use trail_store::{SessionRow, Store, StoreError};

pub use redact::{RedactError, RedactionCounts, Redactor};
pub use text::escape_html;

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
}

/// Exports sessions from one store with one redactor, counting what it redacted.
pub struct Exporter<'a> {
    store: &'a Store,
    redactor: &'a Redactor,
    options: ExportOptions,
    counts: RedactionCounts,
}

impl<'a> Exporter<'a> {
    /// Returns an exporter over `store`.
    pub fn new(store: &'a Store, redactor: &'a Redactor, options: ExportOptions) -> Self {
        Exporter {
            store,
            redactor,
            options,
            counts: RedactionCounts::default(),
        }
    }

    /// Writes one session (and its subagents, nested) in `format`.
    pub fn write_session(
        &mut self,
        session: &SessionRow,
        format: Format,
        w: &mut dyn Write,
    ) -> Result<()> {
        match format {
            Format::Markdown => markdown::write_session(self, session, w),
            Format::Html => html::write_session(self, session, w),
            Format::Json => json::write_session(self, session, w),
            Format::Vscode => vscode::write_session(self, session, w),
        }
    }

    /// Writes an HTML page listing `sessions` with links to their files (`file_name` of
    /// each with the HTML extension).
    pub fn write_html_index(&mut self, sessions: &[SessionRow], w: &mut dyn Write) -> Result<()> {
        html::write_index(self, sessions, w)
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

    fn redact_opt(&mut self, text: Option<&str>) -> Option<String> {
        text.map(|t| self.redact(t).into_owned())
    }

    /// Returns a session's header facts in display order, as (label, value, is an id). The
    /// Markdown and HTML writers lay them out; values from the transcript are redacted.
    fn session_facts(&mut self, s: &SessionRow) -> Vec<(&'static str, String, bool)> {
        let mut facts = vec![
            ("Session", s.id.clone(), true),
            ("Source", s.source.clone(), false),
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
