//! A transcript for a terminal (`trail show`): a rule per turn, the prompt after `❯`, answers
//! indented, one line per tool call (`full`: its input and output, thinking, summaries and
//! meta too). The frontend gives the [`Terminal`]: where lines go, how a [`Tone`] looks, and
//! which words are marked.

use std::io;

use trail_model::truncate_chars;

use super::{Part, SessionSink, ToolCall};
use crate::doc::Tone;
use crate::text::when;

/// Characters of a tool call's input shown on its line.
const TOOL_LINE_CHARS: usize = 100;

/// What a terminal frontend gives a [`TerminalTranscript`].
pub trait Terminal {
    /// Writes one line; the frontend makes it terminal-safe and turns paint into colour.
    fn line(&mut self, text: &str) -> io::Result<()>;
    /// Returns `text` painted in `tone` (or as it is, without colour).
    fn paint(&self, tone: Tone, text: &str) -> String;
    /// Returns transcript text with the search words marked.
    fn mark(&self, text: &str) -> String;
}

/// A session's transcript written to a [`Terminal`] (see [`SessionSink`]).
pub struct TerminalTranscript<T> {
    term: T,
    /// Tool input and output, thinking, summaries and meta in full.
    full: bool,
}

impl<T: Terminal> TerminalTranscript<T> {
    pub fn new(term: T, full: bool) -> TerminalTranscript<T> {
        TerminalTranscript { term, full }
    }

    /// Each line of `text` after `prefix`, painted in `tone` when one is given.
    fn lines(&mut self, text: &str, prefix: &str, tone: Option<Tone>) -> io::Result<()> {
        for l in text.lines() {
            let line = format!("{prefix}{l}");
            match tone {
                Some(tone) => self.painted(tone, &line)?,
                None => self.term.line(&line)?,
            }
        }
        Ok(())
    }

    /// One line, painted in `tone`.
    fn painted(&mut self, tone: Tone, text: &str) -> io::Result<()> {
        let line = self.term.paint(tone, text);
        self.term.line(&line)
    }

    /// A tool call's line: its result's mark, its name, what it acted on; in full, its input
    /// and output.
    fn tool(&mut self, call: &ToolCall<'_>) -> io::Result<()> {
        let t = &self.term;
        let mark = match &call.result {
            Some(r) if r.is_error => t.paint(Tone::Error, "✗"),
            Some(_) => t.paint(Tone::Ok, "✓"),
            None => t.paint(Tone::Dim, "…"),
        };
        let summary = one_line(&crate::text::tool_line(call.input));
        let summary = match summary.chars().count() {
            n if n <= TOOL_LINE_CHARS => summary.trim_end().to_string(),
            _ => format!("{}…", truncate_chars(&summary, TOOL_LINE_CHARS - 1)),
        };
        let line = format!(
            "  {mark} {} {}",
            t.paint(Tone::Tool, call.name),
            t.mark(&summary)
        );
        self.term.line(&line)?;
        if !self.full {
            return Ok(());
        }
        for l in pretty_json(call.input).lines() {
            let line = self
                .term
                .mark(&self.term.paint(Tone::Dim, &format!("      {l}")));
            self.term.line(&line)?;
        }
        if let Some(out) = call.result.and_then(|r| r.output) {
            self.painted(Tone::Dim, "      ── output ──")?;
            for l in out.lines() {
                let line = format!("      {}", self.term.mark(l));
                self.term.line(&line)?;
            }
        }
        Ok(())
    }
}

impl<T: Terminal> SessionSink for TerminalTranscript<T> {
    type Error = io::Error;

    fn turn(&mut self, turn: Option<i64>, at: Option<&str>) -> io::Result<()> {
        let label = match turn {
            Some(t) => format!("── Turn {t} · {} ", when(at)),
            None => "── Before the first prompt ".to_string(),
        };
        let fill = "─".repeat(60usize.saturating_sub(label.chars().count()));
        self.term.line("")?;
        self.painted(Tone::Rule, &format!("{label}{fill}"))
    }

    fn part(&mut self, _seq: i64, part: &Part<'_>) -> io::Result<()> {
        let full = self.full;
        let marked = |t: &Self, text: &str| t.term.mark(text);
        match *part {
            Part::Prompt(text) => {
                let t = &self.term;
                let line = format!(
                    "{} {}",
                    t.paint(Tone::Ok, "❯"),
                    t.paint(Tone::Bold, &t.mark(text))
                );
                self.term.line(&line)
            }
            Part::Answer(text) => self.lines(&marked(self, text), "  ", None),
            Part::Thinking(text) if full => {
                self.lines(&marked(self, text), "  ┊ ", Some(Tone::Dim))
            }
            Part::Thinking("") => Ok(()),
            Part::Thinking(text) => {
                let n = marked(self, text).chars().count();
                self.painted(
                    Tone::Dim,
                    &format!("  ┊ thinking ({n} chars; --full shows it)"),
                )
            }
            Part::ToolCall(call) => self.tool(&call),
            Part::Error(text) => {
                let line = format!("  ! {}", one_line(&marked(self, text)));
                self.painted(Tone::Error, &line)
            }
            Part::Summary(text) => {
                let text = marked(self, text);
                let n = text.chars().count();
                self.painted(Tone::Note, &format!("  ≡ summary ({n} chars)"))?;
                if full {
                    self.lines(&text, "    ", None)?;
                }
                Ok(())
            }
            Part::Compaction => self.painted(Tone::Note, "  ≡ conversation compacted"),
            Part::Meta(text) | Part::Interrupt(text) if full && !text.is_empty() => {
                let line = format!("  · {}", one_line(&marked(self, text)));
                self.painted(Tone::Dim, &line)
            }
            Part::Interrupt(text) => {
                let line = format!("  {}", marked(self, text));
                self.painted(Tone::Warn, &line)
            }
            // A record trail does not read is shown, not hidden: the transcript has something
            // there (issue 40). Its text names the record's type when the parser knows it.
            Part::Unknown(text) => {
                let what = match text {
                    "" => String::new(),
                    t => format!(": {}", one_line(&marked(self, t))),
                };
                self.painted(
                    Tone::Warn,
                    &format!("  ? unknown record{what} (--json shows it)"),
                )
            }
            _ => Ok(()),
        }
    }

    fn off_branch(&mut self, n: u64) -> io::Result<()> {
        self.term.line("")?;
        self.painted(
            Tone::Dim,
            &format!("{n} messages on abandoned branches (rewinds, retries) are kept; see --json."),
        )
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` pretty-printed when it is JSON, else as it is.
fn pretty_json(s: &str) -> String {
    serde_json::from_str::<serde_json::Value>(s)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| s.to_string())
}
