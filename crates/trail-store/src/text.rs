//! What the full-text indexes see of a text: ANSI escape sequences removed (issue 15).
//!
//! Tool outputs are often coloured (`ESC [ 31 m RED ESC [ 0 m`); FTS5's tokenizer would index
//! that as the token `31mred`, so `trail search RED` found nothing. Both indexes read text
//! through [`strip_ansi`]: `message_index` through the SQL function `trail_strip_ansi` in the
//! view `message_search_source` (migration 6), so what is indexed, what FTS5 deletes and what
//! `snippet()` re-reads are the same by construction; Chronicle's `search_index` when the
//! writer inserts a row. The stored messages keep their bytes.

use std::borrow::Cow;

use rusqlite::functions::FunctionFlags;
use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

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
/// A sequence cut short (by the end of the text, or a byte that cannot continue it) loses only
/// what it had so far; an unterminated string drops only its introducer, so text after it stays
/// searchable. Borrows when the text has no ESC and no C1 introducer (nearly all text), found
/// with a SIMD search.
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

/// Returns the index of the next ESC or `0xC2` byte (the lead byte of C1 characters) at or
/// after `from`.
fn next_introducer(bytes: &[u8], from: usize) -> Option<usize> {
    memchr::memchr2(ESC, 0xc2, bytes.get(from..)?).map(|i| i + from)
}

/// Returns where the escape sequence starting at `at` ends (exclusive), or `None` when the
/// byte at `at` starts no sequence (a `0xC2` of an ordinary character). Every end is a UTF-8
/// character boundary: sequences are ASCII after their introducer and stop at any other byte.
fn sequence_end(bytes: &[u8], at: usize) -> Option<usize> {
    let (kind, body) = match (bytes[at], bytes.get(at + 1)) {
        (ESC, Some(b'[')) => (Kind::Csi, at + 2),
        (ESC, Some(b']' | b'P' | b'X' | b'^' | b'_')) => (Kind::String, at + 2),
        (ESC, _) => (Kind::Other, at + 1),
        (0xc2, Some(0x9b)) => (Kind::Csi, at + 2),
        (0xc2, Some(0x9d | 0x90 | 0x98 | 0x9e | 0x9f)) => (Kind::String, at + 2),
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
                match bytes[i] {
                    0x07 => return Some(i + 1),
                    ESC if bytes.get(i + 1) == Some(&b'\\') => return Some(i + 2),
                    0xc2 if bytes.get(i + 1) == Some(&0x9c) => return Some(i + 2),
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
            ("\x1b[31m\u{e9}t\u{e9}\x1b[0m", "\u{e9}t\u{e9}"),
        ] {
            assert_eq!(strip_ansi(raw), want, "{raw:?}");
        }
        assert!(matches!(strip_ansi("no escapes é"), Cow::Borrowed(_)));
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
