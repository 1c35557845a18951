//! What the index sees of a tool call's input and output: their first characters, and a long
//! output's last ones. The indexer caps each field it writes ([`cap_tool_input`],
//! [`cap_tool_output`]); search, which must read a hit's fields as the index holds them, reads
//! a long field's head and tail straight from the store ([`CappedFields`]) instead of the whole
//! value.

use std::borrow::Cow;

use rusqlite::blob::Blob;
use rusqlite::{Connection, DatabaseName};

/// A tool input is indexed up to this many characters...
const TOOL_INPUT_CHARS: usize = 1000;
/// ...a tool output longer than this many characters...
const TOOL_OUTPUT_CHARS: usize = 800;
/// ...by its first and last characters (errors are often at the end).
const TOOL_OUTPUT_HEAD: usize = 600;
const TOOL_OUTPUT_TAIL: usize = 200;

/// The most bytes `n` characters take in UTF-8.
const fn utf8_bytes(n: usize) -> usize {
    4 * n
}

/// A tool input of more bytes than this holds more than [`TOOL_INPUT_CHARS`] characters:
/// [`CappedFields::tool_input`] reads its head alone.
pub(crate) const LONG_INPUT_BYTES: usize = utf8_bytes(TOOL_INPUT_CHARS);
/// A tool output of more bytes than this holds more than [`TOOL_OUTPUT_CHARS`] characters:
/// [`CappedFields::tool_output`] reads its head and tail alone.
pub(crate) const LONG_OUTPUT_BYTES: usize = utf8_bytes(TOOL_OUTPUT_CHARS);

/// The first `n` characters of `s`.
fn first_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The last `n` characters of `s`.
fn last_chars(s: &str, n: usize) -> &str {
    match s.char_indices().rev().nth(n - 1) {
        Some((i, _)) => &s[i..],
        None => s,
    }
}

/// What the index sees of a tool input: its first 1,000 characters.
pub(crate) fn cap_tool_input(s: &str) -> &str {
    first_chars(s, TOOL_INPUT_CHARS)
}

/// What the index sees of a tool output: up to 800 characters whole, longer ones by their first
/// 600 and last 200 characters. Tool outputs are most of a history's bytes; this keeps the index
/// near 5% of the corpus (BENCHMARKS.md). Only the characters needed are walked, so a 10 MB
/// output costs what a short one does.
pub(crate) fn cap_tool_output(s: &str) -> Cow<'_, str> {
    // At most 800 bytes is at most 800 characters.
    if s.len() <= TOOL_OUTPUT_CHARS || s.char_indices().nth(TOOL_OUTPUT_CHARS).is_none() {
        return Cow::Borrowed(s);
    }
    Cow::Owned(head_and_tail(
        first_chars(s, TOOL_OUTPUT_HEAD),
        last_chars(s, TOOL_OUTPUT_TAIL),
    ))
}

/// A long tool output as the index holds it.
fn head_and_tail(head: &str, tail: &str) -> String {
    format!("{head}\n…\n{tail}")
}

/// Reads the long tool fields of `main.messages` as the index holds them, through SQLite's
/// incremental blob I/O: only the pages of a field's head (and a tool output's tail) are read.
/// A SELECT copies the whole value, and long tool outputs are most of a store's bytes: at
/// 10 GiB, checking which hit turns have one message that holds every word read thirteen times
/// the bytes the index had seen of them (BENCHMARKS.md, issue 44).
///
/// The caller passes a field's length in bytes (`octet_length`, which SQLite answers without
/// reading the value) and asks only for fields longer than [`LONG_INPUT_BYTES`] or
/// [`LONG_OUTPUT_BYTES`], whose character count is then surely over the cap.
pub(crate) struct CappedFields<'c> {
    conn: &'c Connection,
    input: Option<Blob<'c>>,
    output: Option<Blob<'c>>,
}

impl<'c> CappedFields<'c> {
    pub(crate) fn new(conn: &'c Connection) -> CappedFields<'c> {
        CappedFields {
            conn,
            input: None,
            output: None,
        }
    }

    /// [`cap_tool_input`] of message `id`'s tool input, `len` bytes long (over
    /// [`LONG_INPUT_BYTES`]).
    pub(crate) fn tool_input(&mut self, id: i64, len: usize) -> rusqlite::Result<String> {
        debug_assert!(len > LONG_INPUT_BYTES);
        let blob = open(self.conn, &mut self.input, "tool_input", id)?;
        let head = read(blob, 0, LONG_INPUT_BYTES)?;
        Ok(cap_tool_input(utf8_head(&head)).to_string())
    }

    /// [`cap_tool_output`] of message `id`'s tool output, `len` bytes long (over
    /// [`LONG_OUTPUT_BYTES`]).
    pub(crate) fn tool_output(&mut self, id: i64, len: usize) -> rusqlite::Result<String> {
        debug_assert!(len > LONG_OUTPUT_BYTES);
        let blob = open(self.conn, &mut self.output, "tool_output", id)?;
        // The first 600 characters are within the first 2,400 bytes, the last 200 within the
        // last 800.
        let head = read(blob, 0, utf8_bytes(TOOL_OUTPUT_HEAD))?;
        let tail_bytes = utf8_bytes(TOOL_OUTPUT_TAIL);
        let tail = read(blob, len - tail_bytes, tail_bytes)?;
        Ok(head_and_tail(
            first_chars(utf8_head(&head), TOOL_OUTPUT_HEAD),
            last_chars(utf8_tail(&tail), TOOL_OUTPUT_TAIL),
        ))
    }
}

/// The blob handle of `column` moved to row `id` (opened once, then moved: a move costs a
/// b-tree seek, an open compiles a statement).
fn open<'a, 'c>(
    conn: &'c Connection,
    slot: &'a mut Option<Blob<'c>>,
    column: &str,
    id: i64,
) -> rusqlite::Result<&'a Blob<'c>> {
    match slot {
        Some(blob) => blob.reopen(id)?,
        None => *slot = Some(conn.blob_open(DatabaseName::Main, "messages", column, id, true)?),
    }
    Ok(slot.as_ref().expect("opened above"))
}

/// `n` bytes of `blob` from `start` (fewer at its end).
fn read(blob: &Blob<'_>, start: usize, n: usize) -> rusqlite::Result<Vec<u8>> {
    let mut buf = vec![0; n.min(blob.len().saturating_sub(start))];
    blob.read_at_exact(&mut buf, start)?;
    Ok(buf)
}

/// The whole characters at the start of `bytes`, which were cut from valid UTF-8 (a character
/// cut at the end is left out).
fn utf8_head(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    }
}

/// The whole characters at the end of `bytes`, which were cut from valid UTF-8 (a character
/// cut at the start is left out).
fn utf8_tail(bytes: &[u8]) -> &str {
    let start = bytes
        .iter()
        .position(|b| b & 0xC0 != 0x80)
        .unwrap_or(bytes.len());
    utf8_head(&bytes[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_characters_as_sqlite_did() {
        assert_eq!(cap_tool_input("short"), "short");
        let long: String = "é".repeat(1500);
        assert_eq!(cap_tool_input(&long).chars().count(), 1000);
        let out: String = (0..1000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let capped = cap_tool_output(&out);
        assert_eq!(capped.chars().count(), 600 + 3 + 200);
        assert!(capped.starts_with(&out[..600]) && capped.ends_with(&out[800..]));
        let exact: String = "ü".repeat(800);
        assert_eq!(cap_tool_output(&exact), exact);
        let over: String = "ü".repeat(801);
        assert_eq!(cap_tool_output(&over).chars().count(), 803);
    }

    /// The caps give what the view of migrations 2 and 8 gave (`substr` and `length` count
    /// characters), so the index sees what it saw before.
    #[test]
    fn caps_match_the_old_sql_view() {
        let conn = Connection::open_in_memory().unwrap();
        for s in [
            String::new(),
            "x".repeat(799),
            "x".repeat(800),
            "x".repeat(801),
            "日本語".repeat(400),
            format!("{}🙂{}", "a".repeat(599), "b".repeat(300)),
        ] {
            let (input, output): (String, String) = conn
                .query_row(
                    "SELECT substr(?1, 1, 1000),
                            CASE WHEN length(?1) > 800
                                 THEN substr(?1, 1, 600) || char(10) || '…' || char(10) || substr(?1, -200)
                                 ELSE ?1 END",
                    [&s],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            assert_eq!(cap_tool_input(&s), input);
            assert_eq!(cap_tool_output(&s), output);
        }
    }

    /// Read in parts, a long field is capped to what the cap of the whole value gives, whatever
    /// the width of the characters around the cut: one to four bytes each, mixed, so that
    /// every cut falls inside a character somewhere.
    #[test]
    fn long_fields_read_in_parts_are_capped_as_whole_ones() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE messages (id INTEGER PRIMARY KEY, tool_input TEXT, tool_output TEXT)",
        )
        .unwrap();
        let widths = ['a', 'é', '語', '🙂'];
        let mut values = Vec::new();
        for len in [801, 1001, 1500, 3201, 4001, 9000, 70_000] {
            for (k, w) in widths.iter().enumerate() {
                // One width throughout, then a mix that shifts with the length.
                values.push(w.to_string().repeat(len));
                values.push(
                    (0..len)
                        .map(|i| widths[(i * 7 + k + len) % 4])
                        .collect::<String>(),
                );
            }
        }
        for (id, s) in values.iter().enumerate() {
            conn.execute(
                "INSERT INTO messages VALUES (?1, ?2, ?2)",
                rusqlite::params![id as i64, s],
            )
            .unwrap();
        }
        let mut fields = CappedFields::new(&conn);
        let mut read = 0;
        for (id, s) in values.iter().enumerate() {
            let id = id as i64;
            if s.len() > LONG_INPUT_BYTES {
                assert_eq!(fields.tool_input(id, s.len()).unwrap(), cap_tool_input(s));
                read += 1;
            }
            if s.len() > LONG_OUTPUT_BYTES {
                assert_eq!(fields.tool_output(id, s.len()).unwrap(), cap_tool_output(s));
                read += 1;
            }
        }
        assert!(read > 60, "{read} fields read in parts");
    }
}
