//! Terminal safety: transcript text shown to a person never carries a control character a
//! terminal would act on (issue 15).
//!
//! Any file an agent read can end up in a transcript, and with it `ESC ] 52 ; c ; ... BEL`
//! (writes the viewer's clipboard), `ESC [ 2 J` (clears the screen) or OSC 8 (a link whose
//! target differs from its text). [`terminal_safe`] shows every such character as a visible
//! symbol instead, so the text stays readable and inert:
//!
//! | character | shown as |
//! |---|---|
//! | C0 controls U+0000–U+001F except newline and tab (ESC is U+001B) | the Control Pictures glyph U+2400 + code: `␀` … `␛` (ESC) … `␟` |
//! | DEL U+007F | `␡` (U+2421) |
//! | C1 controls U+0080–U+009F (UTF-8 `C2 80`–`C2 9F`; some terminals read U+009B as CSI) | `\u{9b}`: Unicode has no pictures for C1, and a Rust-style escape reads unambiguously |
//!
//! Newline and tab pass through: they only move the cursor forward; so does a carriage return
//! right before a newline (Windows line ends in tool output). Everything else passes through
//! unchanged.
//!
//! [`TerminalSafeWriter`] applies the same mapping to a byte stream (Markdown and HTML
//! exports), and [`JsonControlEscaper`] makes JSON output inert without changing what it
//! decodes to (serde_json already escapes C0; this escapes DEL and C1 too).

use std::borrow::Cow;
use std::io::{self, Write};

/// Returns whether `c` is a character [`terminal_safe`] replaces.
pub fn is_unsafe_control(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}')
}

/// Appends the visible form of control character `c` to `out`.
fn push_visible(c: char, out: &mut String) {
    match c {
        '\x7f' => out.push('\u{2421}'),
        '\0'..='\x1f' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
        c => {
            out.push_str("\\u{");
            out.push_str(&format!("{:x}", c as u32));
            out.push('}');
        }
    }
}

/// Returns `text` with every control character a terminal would act on (C0 but newline and
/// tab, DEL, C1; ESC among them) shown as a visible symbol (see the module doc). Borrows when
/// there is none, the common case, found with one pass over the bytes.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let Some(first) = first_unsafe_byte(bytes) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut chars = text[first..].chars().peekable();
    while let Some(c) = chars.next() {
        if is_unsafe_control(c) && !(c == '\r' && chars.peek() == Some(&'\n')) {
            push_visible(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Returns the index of the first byte that starts an unsafe control character: a C0 byte but
/// `\n`, `\t` and `\r` before `\n`, DEL, or a `C2` lead byte followed by `80`–`9F` (a C1
/// character).
fn first_unsafe_byte(bytes: &[u8]) -> Option<usize> {
    bytes.iter().enumerate().find_map(|(i, &b)| {
        let unsafe_byte = match b {
            b'\n' | b'\t' => false,
            b'\r' => bytes.get(i + 1) != Some(&b'\n'),
            0..=0x1f | 0x7f => true,
            0xc2 => matches!(bytes.get(i + 1), Some(0x80..=0x9f)),
            _ => false,
        };
        unsafe_byte.then_some(i)
    })
}

/// A writer that rewrites control characters as they stream through it, whatever the chunking
/// (a C1 character split across two writes is still caught): what it writes for each is
/// `M`'s business. Invalid UTF-8 is passed on as it is: only the bytes of control characters
/// are rewritten. [`Self::into_inner`] writes out a `C2` byte held back from the last write
/// (only invalid UTF-8 ends with one).
pub struct ControlRewriter<W: Write, M: ControlMapping> {
    inner: W,
    /// A `C2` or CR byte that ended the previous write: its meaning depends on the next byte.
    pending: Option<u8>,
    mapping: std::marker::PhantomData<M>,
}

/// What a [`ControlRewriter`] writes for a control character (None: the character as it is).
pub trait ControlMapping {
    fn rewrite(c: u32) -> Option<String>;
}

/// [`terminal_safe`]'s mapping: control characters shown as visible symbols.
pub struct Visible;
impl ControlMapping for Visible {
    fn rewrite(c: u32) -> Option<String> {
        visible_bytes(c)
    }
}

/// DEL and C1 written as JSON escapes (`\u007f`, `\u009b`): they can only occur inside JSON
/// strings, where the escape decodes to the same character, so the document means exactly
/// what it did and a terminal showing it acts on nothing. (serde_json already escapes C0
/// characters, ESC included.)
pub struct JsonEscape;
impl ControlMapping for JsonEscape {
    fn rewrite(c: u32) -> Option<String> {
        json_escape_bytes(c)
    }
}

/// A writer that applies [`terminal_safe`] to everything written through it (Markdown and
/// HTML exports, log lines).
pub type TerminalSafeWriter<W> = ControlRewriter<W, Visible>;

/// A writer for JSON text that escapes DEL and C1 characters (see [`JsonEscape`]).
pub type JsonControlEscaper<W> = ControlRewriter<W, JsonEscape>;

impl<W: Write, M: ControlMapping> ControlRewriter<W, M> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        ControlRewriter {
            inner,
            pending: None,
            mapping: std::marker::PhantomData,
        }
    }

    /// Writes out a pending byte and returns the inner writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        finish_pending(&mut self.pending, &mut self.inner, M::rewrite)?;
        Ok(self.inner)
    }
}

impl<W: Write, M: ControlMapping> Write for ControlRewriter<W, M> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        rewrite_controls(buf, &mut self.pending, &mut self.inner, M::rewrite)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Returns what a terminal-safe writer writes for control character `c` (None: as it is).
fn visible_bytes(c: u32) -> Option<String> {
    let ch = char::from_u32(c)?;
    if !is_unsafe_control(ch) {
        return None;
    }
    let mut s = String::new();
    push_visible(ch, &mut s);
    Some(s)
}

/// Returns the JSON escape for DEL and C1 characters (None: as it is).
fn json_escape_bytes(c: u32) -> Option<String> {
    matches!(c, 0x7f..=0x9f).then(|| format!("\\u{c:04x}"))
}

/// Copies `buf` to `out`, replacing each control character `rewrite` names. Single-byte
/// controls are found directly (a CR right before LF is left alone); a C1 character is the pair
/// `C2 80..9F`. A `C2` or CR ending one write is held in `pending` until the next byte says what
/// it is.
fn rewrite_controls(
    buf: &[u8],
    pending: &mut Option<u8>,
    out: &mut impl Write,
    rewrite: fn(u32) -> Option<String>,
) -> io::Result<()> {
    if buf.is_empty() {
        return Ok(());
    }
    let joined;
    let data: &[u8] = match pending.take() {
        Some(p) => {
            joined = [&[p][..], buf].concat();
            &joined
        }
        None => buf,
    };
    let mut start = 0;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        let next = data.get(i + 1).copied();
        let (code, len) = match (b, next) {
            (0xc2 | b'\r', None) => {
                out.write_all(&data[start..i])?;
                *pending = Some(b);
                return Ok(());
            }
            (0xc2, Some(c @ 0x80..=0x9f)) => (u32::from(c), 2),
            (b'\r', Some(b'\n')) => {
                i += 2;
                continue;
            }
            (0..=0x1f | 0x7f, _) => (u32::from(b), 1),
            _ => {
                i += 1;
                continue;
            }
        };
        match rewrite(code) {
            Some(rep) => {
                out.write_all(&data[start..i])?;
                out.write_all(rep.as_bytes())?;
                i += len;
                start = i;
            }
            None => i += len,
        }
    }
    out.write_all(&data[start..])
}

/// Writes out a byte held back at the end of the stream: a lone CR as `rewrite` says, a `C2`
/// (only invalid UTF-8 ends with one) as it is.
fn finish_pending(
    pending: &mut Option<u8>,
    out: &mut impl Write,
    rewrite: fn(u32) -> Option<String>,
) -> io::Result<()> {
    match pending.take() {
        Some(b'\r') => match rewrite(0x0d) {
            Some(rep) => out.write_all(rep.as_bytes()),
            None => out.write_all(b"\r"),
        },
        Some(b) => out.write_all(&[b]),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_controls_as_symbols() {
        assert_eq!(terminal_safe("plain\ttext\n"), "plain\ttext\n");
        assert!(matches!(terminal_safe("plain"), Cow::Borrowed(_)));
        assert_eq!(
            terminal_safe("\x1b]52;c;aGk=\x07 \x1b[2J\r\x7f\u{9b}31m é"),
            "␛]52;c;aGk=␇ ␛[2J␍␡\\u{9b}31m é"
        );
        assert_eq!(terminal_safe("\0\x1f"), "␀␟");
        // A CR ending a line (CRLF) is harmless; one that returns to overwrite the line is not.
        assert_eq!(terminal_safe("a\r\nb\rc\r"), "a\r\nb␍c␍");
        // U+00A0 and other non-control characters after C2 pass through.
        assert_eq!(terminal_safe("a\u{a0}b\u{9f}"), "a\u{a0}b\\u{9f}");
    }

    #[test]
    fn writer_matches_the_function_whatever_the_chunking() {
        let text = "a\x1b[31mé\u{9b}x\u{85}\u{a0}\x7f\n\tz\u{c2}\r\nover\rwrite\r";
        let want = terminal_safe(text).into_owned();
        for chunk in 1..=text.len() {
            let mut w = TerminalSafeWriter::new(Vec::new());
            for part in text.as_bytes().chunks(chunk) {
                w.write_all(part).unwrap();
            }
            let got = String::from_utf8(w.into_inner().unwrap()).unwrap();
            assert_eq!(got, want, "chunks of {chunk}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_comes_out_inert_whatever_the_chunking(
            text in "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}]|\r\n)*",
            chunk in 1usize..9,
        ) {
            let safe = terminal_safe(&text).into_owned();
            let mut chars = safe.chars().peekable();
            while let Some(c) = chars.next() {
                let crlf = c == '\r' && chars.peek() == Some(&'\n');
                proptest::prop_assert!(!is_unsafe_control(c) || crlf, "{:?} -> {:?}", text, safe);
            }
            let mut w = TerminalSafeWriter::new(Vec::new());
            for part in text.as_bytes().chunks(chunk) {
                w.write_all(part).unwrap();
            }
            let streamed = String::from_utf8(w.into_inner().unwrap()).unwrap();
            proptest::prop_assert_eq!(streamed, safe);
        }
    }

    #[test]
    fn json_escaper_keeps_the_value() {
        let value = serde_json::json!({"t": "x\u{9b}2J\x7f\x1b[0m\u{a0}é"});
        let text = serde_json::to_string(&value).unwrap();
        for chunk in 1..=text.len() {
            let mut w = JsonControlEscaper::new(Vec::new());
            for part in text.as_bytes().chunks(chunk) {
                w.write_all(part).unwrap();
            }
            let out = String::from_utf8(w.into_inner().unwrap()).unwrap();
            assert!(!out.chars().any(is_unsafe_control), "{out:?}");
            let back: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(back, value);
        }
    }
}
