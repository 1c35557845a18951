//! Transcript text made inert before it reaches a terminal cell.
//!
//! Anything an agent read can sit in a transcript, escape sequences included: `ESC ] 52 ; c ;
//! ... BEL` writes the viewer's clipboard, `ESC [ 2 J` clears the screen. Every piece of text
//! from the store goes through [`visible`] before it becomes a ratatui `Span`: the mapping
//! every frontend uses, [`trail_render::terminal_safe`] (C0 controls as the Control Pictures
//! glyphs, `␛` for ESC; DEL as `␡`; C1 as `\u{9b}`), then what a cell grid needs on top of
//! it: tabs become spaces (a grid has no tab stops) and the line breaks `terminal_safe` lets
//! through become `␊` / `␍` (callers split lines first; none may reach a cell).

use std::borrow::Cow;

use trail_render::terminal_safe;

/// Columns a tab stands for.
const TAB: &str = "    ";

/// Returns `text` with every control character shown as a visible symbol and tabs as spaces.
/// Borrows when there is nothing to replace (the common case).
pub fn visible(text: &str) -> Cow<'_, str> {
    let safe = terminal_safe(text);
    if !safe.contains(['\t', '\n', '\r']) {
        return safe;
    }
    let mut out = String::with_capacity(safe.len() + 8);
    for c in safe.chars() {
        match c {
            '\t' => out.push_str(TAB),
            '\n' => out.push('\u{240a}'),
            '\r' => out.push('\u{240d}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Returns `text` on one line: line breaks become spaces, then [`visible`].
pub fn one_line(text: &str) -> String {
    let joined: String = text
        .split(['\n', '\r'])
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    visible(&joined).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible() {
        assert_eq!(
            visible("a\x1b]52;c;ZXZpbA==\x07b\x1b[2Jc"),
            "a␛]52;c;ZXZpbA==␇b␛[2Jc"
        );
        assert_eq!(visible("del\x7f c1\u{9b}31m"), "del␡ c1\\u{9b}31m");
        assert_eq!(visible("tab\tx"), "tab    x");
        assert!(matches!(visible("plain ☕ text"), Cow::Borrowed(_)));
        assert_eq!(one_line("a\r\nb\n\nc\x1b"), "a b c␛");
        assert_eq!(visible("a\r\nb"), "a␍␊b");
        for s in [visible("\x00\x1b\x7f\u{85}\u{9f}\r\n"), visible("x\x1b[0m")] {
            assert!(!s.chars().any(char::is_control), "{s:?}");
        }
    }
}
