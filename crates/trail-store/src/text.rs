//! What the full-text indexes see of a text: ANSI escape sequences removed (issue 15).
//!
//! Tool outputs are often coloured (`ESC [ 31 m RED ESC [ 0 m`); FTS5's tokenizer would index
//! that as the token `31mred`, so `trail search RED` found nothing. Both indexes read text
//! through [`strip_ansi`]: `message_index` through the SQL function `trail_strip_ansi` in the
//! view `message_search_source` (migration 8), so what is indexed, what FTS5 deletes and what
//! `snippet()` re-reads are the same by construction; Chronicle's `search_index` when the
//! writer inserts a row. The stored messages keep their bytes.

use std::borrow::Cow;

use rusqlite::functions::FunctionFlags;
use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

/// Marks the start of a match in [`crate::SearchHit::snippet`].
pub const HIT_START: char = '\u{E000}';
/// Marks the end of a match in [`crate::SearchHit::snippet`].
pub const HIT_END: char = '\u{E001}';

/// ESC.
const ESC: u8 = 0x1b;

/// Returns `text` without ANSI escape sequences (ECMA-48):
///
/// * CSI: `ESC [` (or C1 U+009B), parameter bytes `0x30–0x3F`, intermediate bytes
///   `0x20–0x2F`, a final byte `0x40–0x7E` (colours, cursor moves, screen clears);
/// * strings: OSC `ESC ]` (or U+009D), DCS `ESC P`, SOS `ESC X`, PM `ESC ^`, APC `ESC _`, up
///   to BEL (OSC's usual end), ST `ESC \` or C1 ST U+009C: titles, OSC 8 links (their
///   visible text stays), OSC 52 clipboard writes;
/// * any other escape: `ESC`, intermediates `0x20–0x2F`, one final byte (`ESC ( B`, `ESC 7`).
///
/// Tool inputs are stored as JSON text, where an ESC is written `\u001b` (BEL `\u0007`, C1
/// CSI `\u009b`): those spellings introduce and end sequences the same way.
///
/// A sequence cut short (by the end of the text, or a byte that cannot continue it) loses only
/// what it had so far; an unterminated string drops only its introducer, so text after it stays
/// searchable. Borrows when the text has no ESC, no C1 introducer and no `\u00` escape
/// (nearly all text), found with a SIMD search.
pub fn strip_ansi(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let Some(first) = next_introducer(bytes, 0) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut at = first;
    loop {
        match sequence_end(bytes, at) {
            Some(end) => {
                out.push_str(&text[last..at]);
                last = end;
                at = end;
            }
            // A 0xC2 that starts an ordinary character (U+00A0 and up).
            None => at += 1,
        }
        match next_introducer(bytes, at) {
            Some(i) => at = i,
            None => break,
        }
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// Returns the index of the next ESC, `0xC2` byte (the lead byte of C1 characters) or `\u00`
/// JSON escape at or after `from` (a candidate: [`sequence_end`] decides).
fn next_introducer(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let i = memchr::memchr3(ESC, 0xc2, b'\\', bytes.get(at..)?)? + at;
        if bytes[i] != b'\\' || bytes[i..].starts_with(b"\\u00") {
            return Some(i);
        }
        at = i + 1;
    }
}

/// Returns the control character at `at` and its length: a raw byte (C1 as its two UTF-8
/// bytes) or a JSON `\u00XX` escape.
fn control_at(bytes: &[u8], at: usize) -> Option<(u8, usize)> {
    match bytes.get(at)? {
        0xc2 => match bytes.get(at + 1) {
            Some(&c @ 0x80..=0x9f) => Some((c, 2)),
            _ => None,
        },
        b'\\' => {
            let hex = bytes.get(at + 2..at + 6)?;
            if &bytes[at + 1..at + 4] != b"u00" {
                return None;
            }
            let digit = |b: u8| (b as char).to_digit(16);
            let c = digit(hex[2])? * 16 + digit(hex[3])?;
            Some((c as u8, 6))
        }
        // A continuation byte (0x80–0xBF) is part of another character, never a control.
        &b if b < 0x80 => Some((b, 1)),
        _ => None,
    }
}

/// Returns where the escape sequence starting at `at` ends (exclusive), or `None` when the
/// byte at `at` starts no sequence (a `0xC2` of an ordinary character). Every end is a UTF-8
/// character boundary: sequences are ASCII after their introducer and stop at any other byte.
fn sequence_end(bytes: &[u8], at: usize) -> Option<usize> {
    let (control, len) = control_at(bytes, at)?;
    let next = at + len;
    let (kind, body) = match (control, bytes.get(next)) {
        (ESC, Some(b'[')) => (Kind::Csi, next + 1),
        (ESC, Some(b']' | b'P' | b'X' | b'^' | b'_')) => (Kind::String, next + 1),
        (ESC, _) => (Kind::Other, next),
        (0x9b, _) => (Kind::Csi, next),
        (0x9d | 0x90 | 0x98 | 0x9e | 0x9f, _) => (Kind::String, next),
        _ => return None,
    };
    let mut i = body;
    match kind {
        Kind::Csi => {
            while i < bytes.len() && matches!(bytes[i], 0x30..=0x3f) {
                i += 1;
            }
            while i < bytes.len() && matches!(bytes[i], 0x20..=0x2f) {
                i += 1;
            }
            if i < bytes.len() && matches!(bytes[i], 0x40..=0x7e) {
                i += 1;
            }
            Some(i)
        }
        Kind::String => {
            while i < bytes.len() {
                match control_at(bytes, i) {
                    Some((0x07 | 0x9c, n)) => return Some(i + n),
                    // ST: ESC then a backslash, itself escaped (`\\`) in JSON text.
                    Some((ESC, n)) => {
                        let after = &bytes[i + n..];
                        if n == 1 && after.starts_with(b"\\") {
                            return Some(i + 2);
                        }
                        if n == 6 && after.starts_with(b"\\\\") {
                            return Some(i + 8);
                        }
                        i += n;
                    }
                    _ => i += 1,
                }
            }
            Some(body)
        }
        Kind::Other => {
            while i < bytes.len() && matches!(bytes[i], 0x20..=0x2f) {
                i += 1;
            }
            if i < bytes.len() && matches!(bytes[i], 0x30..=0x7e) {
                i += 1;
            }
            Some(i)
        }
    }
}

enum Kind {
    Csi,
    String,
    Other,
}

/// Registers `trail_strip_ansi(x)` on `conn`: [`strip_ansi`] for text, anything else as it is.
/// Every connection that reads `message_search_source` needs it (the store's own, the
/// read-only one `trail sql` uses); it is deterministic and innocuous, so views may call it.
pub(crate) fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "trail_strip_ansi",
        1,
        FunctionFlags::SQLITE_UTF8
            | FunctionFlags::SQLITE_DETERMINISTIC
            | FunctionFlags::SQLITE_INNOCUOUS,
        |ctx| {
            Ok(match ctx.get_raw(0) {
                ValueRef::Text(b) => Value::Text(match std::str::from_utf8(b) {
                    Ok(s) => strip_ansi(s).into_owned(),
                    Err(_) => strip_ansi(&String::from_utf8_lossy(b)).into_owned(),
                }),
                ValueRef::Null => Value::Null,
                ValueRef::Integer(i) => Value::Integer(i),
                ValueRef::Real(f) => Value::Real(f),
                ValueRef::Blob(b) => Value::Blob(b.to_vec()),
            })
        },
    )
}

/// Returns a snippet of JSON text (a tool input, which is stored as JSON) as the text it
/// stands for: `\n`, `\t`, `\"`, `\\`, `\/`, `\uXXXX` (with surrogate pairs) decoded.
/// Issue 40: a search hit in a tool input showed `String,\n    #[arg` literally.
///
/// A snippet is a piece of JSON, not a whole value: it may start or end inside an escape,
/// and the search marks ([`crate::HIT_START`], [`crate::HIT_END`]) may sit between a
/// backslash and the escaped character (FTS5 marks the token after the backslash). A mark
/// is kept where it is and the escape still decoded; anything that is not a known escape
/// is kept as written. Borrows when there is no backslash.
pub fn unescape_json_snippet(snippet: &str) -> Cow<'_, str> {
    if !snippet.contains('\\') {
        return Cow::Borrowed(snippet);
    }
    let mut out = String::with_capacity(snippet.len());
    let mut chars = snippet.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        // Marks between the backslash and its escaped character go first.
        while let Some(&m) = chars.peek().filter(|&&m| is_mark(m)) {
            out.push(m);
            chars.next();
        }
        let decoded = match chars.peek().copied() {
            Some('n') => Some('\n'),
            Some('t') => Some('\t'),
            Some('r') => Some('\r'),
            Some('b' | 'f') => Some(' '),
            Some(q @ ('"' | '\\' | '/')) => Some(q),
            Some('u') => {
                chars.next();
                // A control character other than a line break or tab (`\u001b`) is never
                // shown as itself: a snippet reaches terminals.
                let d = decode_unicode_escape(&mut chars);
                let control = d.is_control() && !matches!(d, '\n' | '\t' | '\r');
                out.push(if control { ' ' } else { d });
                continue;
            }
            _ => None,
        };
        match decoded {
            Some(d) => {
                chars.next();
                out.push(d);
            }
            None => out.push('\\'),
        }
    }
    Cow::Owned(out)
}

fn is_mark(c: char) -> bool {
    c == HIT_START || c == HIT_END
}

/// Reads four hex digits (as many as are there: a cut escape loses them).
fn hex4(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<u32> {
    let mut v = 0;
    for _ in 0..4 {
        let d = chars.peek()?.to_digit(16)?;
        chars.next();
        v = v * 16 + d;
    }
    Some(v)
}

/// Decodes the `XXXX` of a `\uXXXX` escape (the `\u` read), joining a surrogate pair; a
/// cut or lone escape gives U+FFFD (its digits are dropped: they were never text).
fn decode_unicode_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> char {
    let Some(high) = hex4(chars) else {
        return char::REPLACEMENT_CHARACTER;
    };
    if !(0xD800..0xDC00).contains(&high) {
        return char::from_u32(high).unwrap_or(char::REPLACEMENT_CHARACTER);
    }
    let mut ahead = chars.clone();
    if ahead.next() == Some('\\') && ahead.next() == Some('u') {
        if let Some(low) = hex4(&mut ahead).filter(|l| (0xDC00..0xE000).contains(l)) {
            *chars = ahead;
            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
            return char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
        }
    }
    char::REPLACEMENT_CHARACTER
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_every_kind_of_sequence() {
        for (raw, want) in [
            ("\x1b[31mRED\x1b[0m done", "RED done"),
            ("\x1b[1;38;5;208mx\x1b[m", "x"),
            ("\x1b]52;c;aGVsbG8=\x07after", "after"),
            (
                "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
                "click",
            ),
            ("\x1b[2J\x1b[Hclean", "clean"),
            ("\x1b(Bx\x1b7y\x1b=", "xy"),
            ("\u{9b}31mC1\u{9b}0m", "C1"),
            ("\u{9d}0;title\u{9c}rest", "rest"),
            ("cut \x1b[3", "cut "),
            ("cut \x1b", "cut "),
            ("open \x1b]52;c;never ends", "open 52;c;never ends"),
            ("caf\u{e9} \u{a0}nbsp ok", "caf\u{e9} \u{a0}nbsp ok"),
            // A continuation byte that looks like C1 ST (Ŝ is C5 9C) ends nothing.
            ("\x1b]0;Ŝ title\x07after", "after"),
            // Tool inputs are JSON text.
            (
                r#"{"command":"echo \u001b[31mRED\u001B[0m"}"#,
                r#"{"command":"echo RED"}"#,
            ),
            (
                r#"\u001b]52;c;aGk=\u0007x \u001b]8;;u\u001b\\y\u001b]8;;\u001b\\"#,
                "x y",
            ),
            (r#"\u009b2Jz \n\t\\ \u00e9"#, r#"z \n\t\\ \u00e9"#),
            ("\x1b[31m\u{e9}t\u{e9}\x1b[0m", "\u{e9}t\u{e9}"),
        ] {
            assert_eq!(strip_ansi(raw), want, "{raw:?}");
        }
        assert!(matches!(strip_ansi("no escapes é"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_snippets_read_as_text() {
        let s = |t: &str| unescape_json_snippet(t).into_owned();
        assert_eq!(
            s(r#"…pub name: String,\n    #[arg(long)]\n    \"x\" C:\\dir…"#),
            "…pub name: String,\n    #[arg(long)]\n    \"x\" C:\\dir…"
        );
        assert_eq!(s(r"caf\u00e9 \ud83d\ude00 \/"), "café 😀 /");
        // A mark between the backslash and the escaped letter (FTS5 marks the token `nfoo`).
        assert_eq!(s("a\\\u{E000}nfoo\u{E001}"), "a\u{E000}\nfoo\u{E001}");
        // Cut or unknown escapes: nothing panics, unknown ones stay as written.
        assert_eq!(s(r"\u12"), "\u{FFFD}");
        assert_eq!(s(r"a\u001b[31mb\u000a"), "a [31mb\n");
        assert_eq!(s(r"\ud83d x"), "\u{FFFD} x");
        assert_eq!(s(r"\q and \"), r"\q and \");
        assert!(matches!(unescape_json_snippet("plain"), Cow::Borrowed(_)));
    }

    proptest::proptest! {
        #[test]
        fn any_text_strips_without_panicking_and_keeps_no_esc(
            text in "(\\PC|\x1b|\x07|\u{9b}|\u{9c}|\u{9d}|\\\\u001b|\\\\u0007|[\\[\\]0-9;m\\\\])*"
        ) {
            let out = strip_ansi(&text);
            proptest::prop_assert!(!out.contains('\x1b'), "{:?} -> {:?}", text, out);
        }
    }

    #[test]
    fn the_sql_function_strips_text_only() {
        let conn = Connection::open_in_memory().unwrap();
        register_functions(&conn).unwrap();
        let (text, null, int): (String, Option<String>, i64) = conn
            .query_row(
                "SELECT trail_strip_ansi(char(27) || '[31mRED'), trail_strip_ansi(NULL), trail_strip_ansi(7)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((text.as_str(), null, int), ("RED", None, 7));
    }
}
