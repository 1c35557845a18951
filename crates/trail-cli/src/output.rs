//! Output: one place decides colour and writes to stdout. Data goes to stdout, progress and
//! messages to stderr. Colour only on a TTY, never with `NO_COLOR`, never in JSON.
//!
//! **Only trail's own styling reaches the terminal as escapes** (issue 15). Transcript text can
//! hold any byte an agent read (`ESC ] 52` writes the clipboard, `ESC [ 2 J` clears the
//! screen), and commands build their lines from it freely, so the guarantee lives here rather
//! than in each command:
//!
//! * [`Ui::paint`] never embeds an escape. It wraps text in private markers: one
//!   Supplementary Private Use Area-B character per [`Style`] (U+10FF00 + index) and one
//!   reset mark (U+10FF0F).
//! * [`Ui::line`] and [`Ui::status`] first pass the whole line through
//!   [`trail_render::terminal_safe`], which shows every C0 control but newline, tab and a CR
//!   ending a line, DEL, and every C1 control as a visible symbol (`␛`, `␡`, `\u{9b}`); only
//!   then, and only when
//!   colour is on, do they turn the markers into SGR sequences from the fixed [`Style`] table.
//!   A marker character forged in transcript text can therefore at most change a colour; it
//!   can never produce any other sequence.
//! * [`Ui::json`] keeps the exact text (serde_json escapes C0 and ESC; DEL and C1 are escaped
//!   as `\u007f`/`\u009b` too, which decode to the same characters).
//!
//! The same mapping covers stderr: error reports (`main.rs`) and log lines (a terminal-safe
//! writer under `tracing`).

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};

use clap::ValueEnum;
use trail_render::Tone;
pub use trail_render::{tokens, when};

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// Text styles (ANSI SGR codes, emitted only by [`Ui`] from their markers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Bold,
    Dim,
    Red,
    Green,
    Yellow,
    Blue,
    Magenta,
    Cyan,
    /// Search-hit highlight.
    Hit,
}

/// Ends a painted span (see the module doc).
pub const RESET_MARK: &str = "\u{10FF0F}";

impl Style {
    /// The style a document's [`Tone`] is shown in (reports and transcripts alike).
    pub fn of(tone: Tone) -> Style {
        match tone {
            Tone::Bold => Style::Bold,
            Tone::Dim | Tone::Hunk => Style::Dim,
            Tone::Rule => Style::Blue,
            Tone::Ok | Tone::Added => Style::Green,
            Tone::Error | Tone::Removed => Style::Red,
            Tone::Warn => Style::Yellow,
            Tone::Note => Style::Magenta,
            Tone::Tool => Style::Cyan,
        }
    }

    /// Every style, in marker order: style `i` is marked by U+10FF00 + `i`.
    const ALL: [Style; 9] = [
        Style::Bold,
        Style::Dim,
        Style::Red,
        Style::Green,
        Style::Yellow,
        Style::Blue,
        Style::Magenta,
        Style::Cyan,
        Style::Hit,
    ];

    /// Returns the private character that opens this style in a painted string.
    pub fn mark(self) -> &'static str {
        match self {
            Style::Bold => "\u{10FF00}",
            Style::Dim => "\u{10FF01}",
            Style::Red => "\u{10FF02}",
            Style::Green => "\u{10FF03}",
            Style::Yellow => "\u{10FF04}",
            Style::Blue => "\u{10FF05}",
            Style::Magenta => "\u{10FF06}",
            Style::Cyan => "\u{10FF07}",
            Style::Hit => "\u{10FF08}",
        }
    }

    fn code(self) -> &'static str {
        match self {
            Style::Bold => "1",
            Style::Dim => "2",
            Style::Red => "31",
            Style::Green => "32",
            Style::Yellow => "33",
            Style::Blue => "34",
            Style::Magenta => "35",
            Style::Cyan => "36",
            Style::Hit => "1;33",
        }
    }
}

/// The terminal: stdout writer plus decisions made once.
pub struct Ui {
    pub color: bool,
    pub stderr_tty: bool,
    out: io::BufWriter<io::Stdout>,
}

impl Ui {
    pub fn new(choice: ColorChoice, no_color_env: bool) -> Self {
        let stdout_tty = io::stdout().is_terminal();
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => stdout_tty && !no_color_env,
        };
        Ui {
            color,
            stderr_tty: io::stderr().is_terminal(),
            out: io::BufWriter::new(io::stdout()),
        }
    }

    /// Returns `text` marked to be shown in `style` when colour is on (the markers become
    /// escapes only in [`Ui::line`], after the text is made terminal-safe).
    pub fn paint(&self, style: Style, text: &str) -> String {
        painted(self.color, style, text)
    }

    /// Returns what opens and closes a `style` span inside text, for callers that mark parts
    /// of a line themselves (search hits): the markers when colour is on, else `plain`.
    pub fn marks(
        &self,
        style: Style,
        plain: (&'static str, &'static str),
    ) -> (&'static str, &'static str) {
        if self.color {
            (style.mark(), RESET_MARK)
        } else {
            plain
        }
    }

    /// Writes one line to stdout, terminal-safe, with trail's styling applied.
    /// A painter for [`trail_render::TerminalSink`]: a document's tones in this terminal's
    /// styles (colour only when it is on, as [`Ui::paint`]).
    pub fn painter(&self) -> trail_render::doc::Painter<'static> {
        let color = self.color;
        Box::new(move |tone, text| painted(color, Style::of(tone), text))
    }

    /// Writes a document a [`trail_render::TerminalSink`] wrote, line by line.
    pub fn document(&mut self, text: &str) -> io::Result<()> {
        for l in text.trim_end_matches('\n').lines() {
            self.line(l)?;
        }
        Ok(())
    }

    pub fn line(&mut self, text: &str) -> io::Result<()> {
        let safe = render(text, self.color);
        self.out.write_all(safe.as_bytes())?;
        self.out.write_all(b"\n")
    }

    /// Writes a value as pretty JSON (exact text; DEL and C1 escaped too).
    pub fn json<T: serde::Serialize>(&mut self, value: &T) -> io::Result<()> {
        let mut w = trail_render::JsonControlEscaper::new(&mut self.out);
        serde_json::to_writer_pretty(&mut w, value).map_err(io::Error::other)?;
        w.write_all(b"\n")?;
        w.into_inner()?;
        Ok(())
    }

    /// Writes a value as one JSON line (exact text; DEL and C1 escaped too).
    pub fn json_line<T: serde::Serialize>(&mut self, value: &T) -> io::Result<()> {
        let mut w = trail_render::JsonControlEscaper::new(&mut self.out);
        serde_json::to_writer(&mut w, value).map_err(io::Error::other)?;
        w.write_all(b"\n")?;
        w.into_inner()?;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes a status message to stderr (never stdout), terminal-safe and unstyled.
    pub fn status(&self, text: &str) {
        let _ = writeln!(io::stderr(), "{}", render(text, false));
    }
}

/// `text` marked to be shown in `style` when `color` is on (see [`Ui::paint`]).
fn painted(color: bool, style: Style, text: &str) -> String {
    if color && !text.is_empty() {
        format!("{}{}{}", style.mark(), text, RESET_MARK)
    } else {
        text.to_string()
    }
}

/// Returns `text` made terminal-safe, then with style markers turned into SGR sequences when
/// `color` is on (left as they are otherwise: printable characters no terminal acts on).
fn render(text: &str, color: bool) -> Cow<'_, str> {
    let safe = trail_render::terminal_safe(text);
    // Every marker is U+10FFxx, whose UTF-8 starts with F4 8F BF: a line with no F4 byte
    // (nearly all) has none.
    if !color || !safe.as_bytes().contains(&0xf4) {
        return safe;
    }
    let mut out = String::with_capacity(safe.len() + 16);
    for c in safe.chars() {
        match c as u32 {
            0x10FF0F => out.push_str("\x1b[0m"),
            m @ 0x10FF00..=0x10FF08 => {
                let style = Style::ALL[(m - 0x10FF00) as usize];
                out.push_str("\x1b[");
                out.push_str(style.code());
                out.push('m');
            }
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Pads or cuts `s` to `width` display columns (chars; wide glyphs counted once).
pub fn fit(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        let mut out = s.to_string();
        out.extend(std::iter::repeat_n(' ', width - n));
        out
    } else if width == 0 {
        String::new()
    } else {
        let mut out: String = s.chars().take(width - 1).collect();
        out.push('…');
        out
    }
}

/// Collapses whitespace into single spaces.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_markers_become_escapes() {
        let line = format!(
            "{}x{} \x1b]52;c;aGk=\x07 \u{9b}2J {}forged",
            Style::Red.mark(),
            RESET_MARK,
            Style::Hit.mark()
        );
        assert_eq!(
            render(&line, true),
            "\x1b[31mx\x1b[0m ␛]52;c;aGk=␇ \\u{9b}2J \x1b[1;33mforged"
        );
        let plain = render(&line, false);
        assert!(!plain.contains('\x1b'), "{plain:?}");
        for (i, s) in Style::ALL.iter().enumerate() {
            assert_eq!(s.mark().chars().next().unwrap() as u32, 0x10FF00 + i as u32);
        }
    }
}
