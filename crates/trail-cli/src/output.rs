//! Output: one place decides colour and writes to stdout. Data goes to stdout, progress and
//! messages to stderr. Colour only on a TTY, never with `NO_COLOR`, never in JSON.

use std::io::{self, IsTerminal, Write};

use clap::ValueEnum;
pub use trail_render::{tokens, when};

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// Text styles (ANSI SGR codes).
#[derive(Debug, Clone, Copy)]
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

impl Style {
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

    /// Returns `text` in `style` when colour is on.
    pub fn paint(&self, style: Style, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{}m{}\x1b[0m", style.code(), text)
        } else {
            text.to_string()
        }
    }

    /// Writes one line to stdout.
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        self.out.write_all(text.as_bytes())?;
        self.out.write_all(b"\n")
    }

    /// Writes a value as pretty JSON.
    pub fn json<T: serde::Serialize>(&mut self, value: &T) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut self.out, value).map_err(io::Error::other)?;
        self.out.write_all(b"\n")
    }

    /// Writes a value as one JSON line.
    pub fn json_line<T: serde::Serialize>(&mut self, value: &T) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, value).map_err(io::Error::other)?;
        self.out.write_all(b"\n")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes a status message to stderr (never stdout).
    pub fn status(&self, text: &str) {
        let _ = writeln!(io::stderr(), "{text}");
    }
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
