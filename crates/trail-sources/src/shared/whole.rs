//! Reading whole files and file heads, shared by every format (issue 40).
//!
//! - A leading UTF-8 byte-order mark (which editors and Windows tools write) is skipped once
//!   here, before a format is detected ([`read_head`]) and before a file is parsed ([`read`],
//!   [`parse_json`]; line-based files skip it in [`crate::jsonl`]). Byte offsets stay offsets in
//!   the file.
//! - A whole-file JSON document followed by other bytes keeps its complete value; the bytes
//!   after it are one [`ParseIssue`] naming their line and column.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde_json::Value;
use trail_model::{truncate_chars, ParseIssue};

use crate::SourceError;

/// Characters of a bad line or document kept in its parse issue (every format's; `jsonl`
/// re-exports it, where most formats read it).
pub const EXCERPT_CHARS: usize = 200;

/// The UTF-8 byte-order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";
/// How many bytes of a file [`crate::Source::detect`] is given.
pub const HEAD_BYTES: usize = 64 << 10;

/// Returns `bytes` without a leading byte-order mark.
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// Reads a whole file, without its byte-order mark.
pub fn read(path: &Path) -> Result<Vec<u8>, SourceError> {
    let mut bytes = std::fs::read(path).map_err(|e| SourceError::io(path, e))?;
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    Ok(bytes)
}

/// Returns the first [`HEAD_BYTES`] of a file, without its byte-order mark: what a source's
/// `detect` judges. An unreadable file has an empty head.
pub fn read_head(path: &Path) -> Vec<u8> {
    let mut buf = vec![0u8; HEAD_BYTES];
    let mut filled = 0;
    if let Ok(mut f) = File::open(path) {
        // `read` may return less than asked before the end: fill the head.
        while filled < buf.len() {
            match f.read(&mut buf[filled..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => filled += n,
            }
        }
    }
    buf.truncate(filled);
    if buf.starts_with(BOM) {
        buf.drain(..BOM.len());
    }
    buf
}

/// A whole-file JSON document: its value, and the problem of the bytes after it, if any.
#[derive(Debug)]
pub struct JsonDocument {
    pub value: Value,
    pub trailing: Option<ParseIssue>,
}

/// Parses `bytes` (a whole file, byte-order mark and all) as one JSON value. Bytes other than
/// whitespace after the value do not lose it: they become [`JsonDocument::trailing`], with the
/// line, column and byte offset where they start. A document that does not parse is an error.
pub fn parse_json(path: &Path, bytes: &[u8]) -> Result<JsonDocument, serde_json::Error> {
    let skipped = bytes.len() - strip_bom(bytes).len();
    let body = &bytes[skipped..];
    let mut values = serde_json::Deserializer::from_slice(body).into_iter::<Value>();
    let value = match values.next() {
        Some(v) => v?,
        // Empty or blank: let serde name the problem.
        None => serde_json::from_slice::<Value>(body)?,
    };
    let end = values.byte_offset();
    let trailing = body[end..]
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map(|n| trailing_issue(path, bytes, skipped + end + n));
    Ok(JsonDocument { value, trailing })
}

/// Reads and parses a whole-file JSON document (see [`parse_json`]); also returns the file's
/// length.
pub fn read_json(
    path: &Path,
) -> Result<(Result<JsonDocument, serde_json::Error>, u64), SourceError> {
    let bytes = std::fs::read(path).map_err(|e| SourceError::io(path, e))?;
    Ok((parse_json(path, &bytes), bytes.len() as u64))
}

/// Reads a side file (`workspace.json`, a task's metadata...) as JSON: `None` when it is
/// missing or does not parse. A byte-order mark and bytes after the value are ignored.
pub fn read_json_lenient(path: &Path) -> Option<Value> {
    let bytes = std::fs::read(path).ok()?;
    parse_json(path, &bytes).ok().map(|d| d.value)
}

/// The problem of bytes left after a JSON document, starting at byte `at` of `bytes`.
fn trailing_issue(path: &Path, bytes: &[u8], at: usize) -> ParseIssue {
    let line_start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let column = String::from_utf8_lossy(&bytes[line_start..at])
        .chars()
        .count()
        + 1;
    let rest = String::from_utf8_lossy(&bytes[at..]);
    let excerpt = rest.lines().next().unwrap_or_default();
    ParseIssue {
        path: path.display().to_string(),
        line: Some(line),
        byte_offset: Some(at as u64),
        excerpt: Some(truncate_chars(excerpt, EXCERPT_CHARS).to_string()),
        reason: format!(
            "{} bytes after the JSON document (line {line}, column {column}) were ignored; \
             the document was kept",
            bytes.len() - at
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_is_skipped_and_trailing_bytes_are_located() {
        let p = Path::new("x.json");
        let doc = parse_json(p, b"\xEF\xBB\xBF{\"a\": 1}\r\n").unwrap();
        assert_eq!(doc.value["a"], 1);
        assert!(doc.trailing.is_none());
        let doc = parse_json(p, b"[1,\n 2]\n  ]} junk\n").unwrap();
        assert_eq!(doc.value, serde_json::json!([1, 2]));
        let t = doc.trailing.unwrap();
        assert_eq!((t.line, t.byte_offset), (Some(3), Some(10)));
        assert!(t.reason.contains("line 3, column 3"), "{}", t.reason);
        assert_eq!(t.excerpt.as_deref(), Some("]} junk"));
        assert!(parse_json(p, b"").is_err());
        assert!(parse_json(p, b"{\"a\":").is_err());
    }

    #[test]
    fn heads_lose_their_bom() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.jsonl");
        std::fs::write(&f, b"\xEF\xBB\xBF{}\n").unwrap();
        assert_eq!(read_head(&f), b"{}\n");
        assert_eq!(read(&f).unwrap(), b"{}\n");
        assert_eq!(strip_bom(b"abc"), b"abc");
    }
}
