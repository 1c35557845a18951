//! Transcript text made inert before it reaches a terminal cell.
//!
//! Anything an agent read can sit in a transcript, escape sequences included: `ESC ] 52 ; c ;
//! ... BEL` writes the viewer's clipboard, `ESC [ 2 J` clears the screen. Every piece of text
//! from the store goes through [`visible`] before it becomes a ratatui `Span`, which shows
//! each control character as a visible symbol: C0 controls (but newline, which the callers
//! split on, and tab, which becomes spaces) as the Control Pictures glyphs (`␛` for ESC),
//! DEL as `␡`, C1 controls as `\u{9b}`.
//!
//! The same mapping is `trail_render::terminal_safe` on the issue-15 branch; once that is on
//! main this module should call it (the glyphs were chosen to match).

use std::borrow::Cow;

/// Columns a tab stands for (a cell grid has no tab stops of its own).
const TAB: &str = "    ";

/// Returns whether `c` is a control character a terminal would act on.
fn is_control(c: char) -> bool {
    matches!(c, '\0'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}')
}

/// Returns `text` with every control character shown as a visible symbol and tabs as spaces.
/// Borrows when there is nothing to replace (the common case).
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\t' => out.push_str(TAB),
            '\x7f' => out.push('\u{2421}'),
            '\0'..='\x1f' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{80}'..='\u{9f}' => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
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
        for s in [visible("\x00\x1b\x7f\u{85}\u{9f}"), visible("x\x1b[0m")] {
            assert!(!s.chars().any(is_control), "{s:?}");
        }
    }
}
