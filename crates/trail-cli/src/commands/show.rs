//! `trail show`: a readable transcript, one line per tool call (`--full` for their input and
//! output).

use trail_query::{DetailRequest, SessionDetail};
use trail_render::session::{self, terminal::Terminal, terminal::TerminalTranscript};
use trail_render::Tone;

use crate::commands::open_query;
use crate::error::CliResult;
use crate::output::{self, Style, Ui};
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session id (a unique prefix is enough)
    id: String,
    /// Only this turn (numbered as in `trail list` and search hits, from 0)
    #[arg(long)]
    turn: Option<i64>,
    /// Show tool input and output, thinking, messages before the first prompt, and what the session changed (as `trail diff`)
    #[arg(long)]
    full: bool,
    /// Print the session, its messages, subagents, files and refs as JSON
    #[arg(long)]
    json: bool,
    /// Mark these words where they appear (what `trail search` hits suggest)
    #[arg(long, value_name = "QUERY")]
    highlight: Option<String>,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query = open_query(ctx)?;
    // With --turn, only that turn's messages (and the JSON carries only them).
    let detail = query.detail(&DetailRequest {
        id: args.id.clone(),
        from_turn: args.turn,
        to_turn: args.turn,
    })?;
    if args.json {
        ctx.ui.json(&detail)?;
        return Ok(0);
    }
    print_header(ctx, &detail)?;
    print_transcript(ctx, &detail, &args)?;
    if args.full {
        // What the session (or the turn) changed, as `trail diff` shows it.
        let turn = args.turn.and_then(|t| u32::try_from(t).ok());
        let diff = query.session_diff_of(&detail.session.id, turn)?;
        if !diff.files.is_empty() {
            ctx.ui.line("")?;
            let rule = format!("── Changes {}", "─".repeat(49));
            ctx.ui.line(&ctx.ui.paint(Style::Blue, &rule))?;
            crate::commands::diff::print(&mut ctx.ui, &diff)?;
        }
    }
    Ok(0)
}

fn print_header(ctx: &mut Ctx, d: &SessionDetail) -> CliResult {
    let s = &d.session;
    let ui = &mut ctx.ui;
    let title = s.title.as_deref().unwrap_or("(untitled)");
    ui.line(&ui.paint(Style::Bold, &output::one_line(title)))?;
    let mut facts = vec![format!("id {}", s.id), s.source.to_string()];
    if let Some(r) = &s.repository {
        facts.push(r.clone());
    }
    if let Some(b) = &s.branch {
        facts.push(format!("branch {b}"));
    }
    if let Some(c) = &s.cwd {
        facts.push(c.clone());
    }
    if s.chat {
        facts.push("chat (not a coding session)".into());
    }
    ui.line(&ui.paint(Style::Dim, &facts.join(" · ")))?;
    let mut line2 = format!(
        "{} → {} · {} turns · {} messages",
        output::when(s.created_at.as_deref()),
        output::when(s.updated_at.as_deref()),
        s.turns,
        s.messages
    );
    if s.total_tokens() > 0 {
        line2.push_str(&format!(
            " · tokens in {} out {} cache write {} cache read {}",
            output::tokens(s.input_tokens),
            output::tokens(s.output_tokens),
            output::tokens(s.cache_creation_tokens),
            output::tokens(s.cache_read_tokens)
        ));
    }
    if !s.models.is_empty() {
        line2.push_str(&format!(" · {}", s.models.join(", ")));
    }
    ui.line(&ui.paint(Style::Dim, &line2))?;
    if let Some(p) = &s.parent_session_id {
        let via = s
            .parent_tool_call_id
            .as_deref()
            .map(|t| format!(" (tool call {t})"))
            .unwrap_or_default();
        ui.line(&format!("Subagent of {p}{via}"))?;
    }
    for link in crate::commands::list::continuation_lines(&d.continuations, &s.id) {
        let mut chars = link.chars();
        let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
        ui.line(&format!("{}{}", first.unwrap_or_default(), chars.as_str()))?;
    }
    if s.source_missing {
        ui.line(&ui.paint(
            Style::Yellow,
            "The agent's file for this session is gone; this is trail's copy.",
        ))?;
    }
    print_related(ui, d)
}

/// The header's last lines: the session's subagents, files, refs and checkpoints.
fn print_related(ui: &mut Ui, d: &SessionDetail) -> CliResult {
    if !d.subagents.is_empty() {
        ui.line(&format!("Subagents ({}):", d.subagents.len()))?;
        for a in &d.subagents {
            ui.line(&format!(
                "  {}  {} turns  {}",
                ui.paint(Style::Yellow, &a.id),
                a.turns,
                output::one_line(a.title.as_deref().unwrap_or(""))
            ))?;
        }
    }
    if !d.files.is_empty() {
        let names: Vec<&str> = d.files.iter().map(|(p, _)| p.as_str()).collect();
        ui.line(&format!("Files ({}): {}", names.len(), names.join(", ")))?;
    }
    if !d.refs.is_empty() {
        let refs: Vec<String> = d.refs.iter().map(|(t, v)| format!("{t} {v}")).collect();
        ui.line(&format!("Refs: {}", refs.join(", ")))?;
    }
    if !d.checkpoints.is_empty() {
        ui.line(&format!("Checkpoints: {}", d.checkpoints.len()))?;
    }
    Ok(())
}

/// The transcript as the session walker lays it out, written by trail-render's terminal
/// transcript in the CLI's colours: with `--full`, messages before the first prompt too.
fn print_transcript(ctx: &mut Ctx, d: &SessionDetail, args: &Args) -> CliResult {
    let marker = Marker::new(args.highlight.as_deref(), ctx.ui.color);
    let term = ShowTerminal {
        ui: &mut ctx.ui,
        marker,
    };
    let mut sink = TerminalTranscript::new(term, args.full);
    // Subagents are listed in the header, not placed in the transcript.
    let walker = session::Walker::new(session::Subagents::none(), args.full);
    session::walk_messages(&d.messages, walker, &mut sink)?;
    Ok(())
}

/// The CLI's terminal for a transcript: its lines, colours and search marks.
struct ShowTerminal<'u> {
    ui: &'u mut Ui,
    marker: Marker,
}

impl Terminal for ShowTerminal<'_> {
    fn line(&mut self, text: &str) -> std::io::Result<()> {
        self.ui.line(text)
    }

    fn paint(&self, tone: Tone, text: &str) -> String {
        let style = Style::of(tone);
        self.ui.paint(style, text)
    }

    fn mark(&self, text: &str) -> String {
        self.marker.mark(text)
    }
}

/// Marks the words of a search query in printed text: bold yellow on a terminal, `**` around
/// them otherwise. ASCII words match whatever their case.
struct Marker {
    terms: Vec<String>,
    color: bool,
}

impl Marker {
    fn new(query: Option<&str>, color: bool) -> Marker {
        Marker {
            terms: trail_query::highlight_terms(query.unwrap_or("")),
            color,
        }
    }

    fn mark(&self, text: &str) -> String {
        if self.terms.is_empty() {
            return text.to_string();
        }
        let (open, close) = if self.color {
            (Style::Hit.mark(), output::RESET_MARK)
        } else {
            ("**", "**")
        };
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len() + 16);
        let mut i = 0;
        let mut last = 0;
        while i < bytes.len() {
            let hit = self.terms.iter().find(|t| {
                let t = t.as_bytes();
                bytes.len() - i >= t.len() && bytes[i..i + t.len()].eq_ignore_ascii_case(t)
            });
            match hit {
                // ASCII case folding never splits a UTF-8 sequence, so these are boundaries.
                Some(t) if text.is_char_boundary(i) && text.is_char_boundary(i + t.len()) => {
                    out.push_str(&text[last..i]);
                    out.push_str(open);
                    out.push_str(&text[i..i + t.len()]);
                    out.push_str(close);
                    i += t.len();
                    last = i;
                }
                _ => i += 1,
            }
        }
        out.push_str(&text[last..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_query_words_whatever_their_case() {
        let m = Marker::new(Some("\"Imperial units\" OR metric* NOT x"), false);
        assert_eq!(
            m.mark("Use imperial UNITS, not metrics; x"),
            "Use **imperial** **UNITS**, not **metric**s; x"
        );
        assert_eq!(Marker::new(None, false).mark("a b"), "a b");
        assert_eq!(
            Marker::new(Some("café"), false).mark("un café ☕"),
            "un **café** ☕"
        );
    }
}
