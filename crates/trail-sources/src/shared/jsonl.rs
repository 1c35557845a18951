//! Streaming JSONL reading shared by every line-based format.
//!
//! Lines are read one at a time into a reused buffer (no length cap: a single line may be
//! hundreds of megabytes), so memory is bounded by the largest line, not the file. A malformed
//! line becomes a [`ParseIssue`] with its line number and byte offset and the rest of the file
//! is read. A last line that is not terminated and does not parse is a torn write by an agent
//! that is still running: it is not an error, and `bytes_parsed` stops before it so the next
//! index picks it up. A byte-order mark at the start of the file is skipped.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use trail_model::{truncate_chars, ParseIssue};

use crate::SourceError;

/// A buffer larger than this is released after its line, so one huge line does not pin memory.
const KEEP_BUFFER_BYTES: usize = 8 << 20;
/// Characters of a bad line kept in its parse issue.
pub use crate::whole::EXCERPT_CHARS;

/// Where a line sits in its file.
#[derive(Debug, Clone, Copy)]
pub struct LinePos {
    /// 1-based line number.
    pub number: u64,
    /// Byte offset of the line's first byte.
    pub offset: u64,
}

/// What reading a file's lines found.
#[derive(Debug, Default)]
pub struct LinesOutcome {
    pub bytes_parsed: u64,
    pub bytes_read: u64,
    pub lines: u64,
    pub issues: Vec<ParseIssue>,
    /// Reading stopped at the byte budget, not at the end of the file.
    pub more: bool,
}

/// Calls `on_line` for each complete, non-blank line from `start` (whose line number is
/// `start_line + 1`). `on_line` returns `Err(reason)` for a line it cannot use.
pub fn read_lines(
    path: &Path,
    start: u64,
    start_line: u64,
    on_line: impl FnMut(LinePos, &str) -> Result<(), String>,
) -> Result<LinesOutcome, SourceError> {
    read_lines_limited(path, start, start_line, None, on_line)
}

/// Like [`read_lines_limited`], for formats whose every line is one JSON object (`what` names
/// it in the problem a line that is not one gives: "a record"): `on_object` gets each object
/// and returns whether to go on; once it says stop, the remaining lines are only counted.
pub fn read_objects_limited(
    path: &Path,
    start: u64,
    start_line: u64,
    budget: Option<u64>,
    what: &str,
    mut on_object: impl FnMut(&serde_json::Value) -> bool,
) -> Result<LinesOutcome, SourceError> {
    let mut going = true;
    read_lines_limited(path, start, start_line, budget, |_, text| {
        if !going {
            return Ok(());
        }
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
        if !v.is_object() {
            return Err(format!("{what} must be a JSON object"));
        }
        going = on_object(&v);
        Ok(())
    })
}

/// Like [`read_lines`], but stops before starting a new line once `budget` bytes were read
/// (`more` is then set and the caller resumes from `bytes_parsed`). This bounds the memory a
/// parse of a huge log holds, whatever its size.
pub fn read_lines_limited(
    path: &Path,
    start: u64,
    start_line: u64,
    budget: Option<u64>,
    mut on_line: impl FnMut(LinePos, &str) -> Result<(), String>,
) -> Result<LinesOutcome, SourceError> {
    let mut file = File::open(path).map_err(|e| SourceError::io(path, e))?;
    if start > 0 {
        file.seek(SeekFrom::Start(start))
            .map_err(|e| SourceError::io(path, e))?;
    }
    let mut reader = BufReader::with_capacity(256 << 10, file);
    let mut buf: Vec<u8> = Vec::with_capacity(64 << 10);
    let mut out = LinesOutcome {
        bytes_parsed: start,
        lines: start_line,
        ..LinesOutcome::default()
    };
    let mut offset = start;
    let display = path.display().to_string();
    loop {
        if budget.is_some_and(|b| out.bytes_read >= b) {
            // Only stop where there is more to read.
            out.more = !reader
                .fill_buf()
                .map_err(|e| SourceError::io(path, e))?
                .is_empty();
            break;
        }
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| SourceError::io(path, e))?;
        if n == 0 {
            break;
        }
        out.bytes_read += n as u64;
        let terminated = buf.last() == Some(&b'\n');
        let pos = LinePos {
            number: out.lines + 1,
            offset,
        };
        let mut content: &[u8] = &buf;
        if offset == 0 {
            // A byte-order mark before the first line is no part of it (issue 40).
            content = crate::whole::strip_bom(content);
        }
        while let Some((last, rest)) = content.split_last() {
            if *last == b'\n' || *last == b'\r' {
                content = rest;
            } else {
                break;
            }
        }
        let blank = content.iter().all(|b| b.is_ascii_whitespace());
        let result = if blank {
            Ok(())
        } else {
            match std::str::from_utf8(content) {
                Ok(text) => on_line(pos, text),
                Err(_) => {
                    // Keep the record: replace the bad bytes and say so.
                    let text = String::from_utf8_lossy(content);
                    let r = on_line(pos, &text);
                    if r.is_ok() {
                        out.issues.push(issue(
                            &display,
                            pos,
                            &text,
                            "invalid UTF-8 replaced with U+FFFD; the record was kept",
                        ));
                    }
                    r
                }
            }
        };
        match result {
            Ok(()) => {}
            Err(_) if !terminated => {
                // A torn last line: leave it for the next index.
                break;
            }
            Err(reason) => {
                let text = String::from_utf8_lossy(content);
                out.issues.push(issue(&display, pos, &text, &reason));
            }
        }
        offset += n as u64;
        out.lines += 1;
        out.bytes_parsed = offset;
        if buf.capacity() > KEEP_BUFFER_BYTES {
            buf = Vec::with_capacity(64 << 10);
        }
    }
    Ok(out)
}

/// Builds a parse issue for a line.
pub fn issue(path: &str, pos: LinePos, line: &str, reason: &str) -> ParseIssue {
    ParseIssue {
        path: path.to_string(),
        line: Some(pos.number),
        byte_offset: Some(pos.offset),
        excerpt: Some(truncate_chars(line, EXCERPT_CHARS).to_string()),
        reason: reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn lines_of(content: &[u8]) -> (Vec<(u64, String)>, LinesOutcome) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        let mut seen = Vec::new();
        let out = read_lines(f.path(), 0, 0, |pos, line| {
            serde_json::from_str::<serde_json::Value>(line).map_err(|e| e.to_string())?;
            seen.push((pos.number, line.to_string()));
            Ok(())
        })
        .unwrap();
        (seen, out)
    }

    #[test]
    fn torn_last_line_is_left_for_later() {
        let (seen, out) = lines_of(b"{\"a\":1}\n{\"b\":2}\n{\"c\":");
        assert_eq!(seen.len(), 2);
        assert!(out.issues.is_empty());
        assert_eq!(out.bytes_parsed, 16);
        assert_eq!(out.lines, 2);
    }

    #[test]
    fn complete_unterminated_last_line_is_taken() {
        let (seen, out) = lines_of(b"{\"a\":1}\n{\"b\":2}");
        assert_eq!(seen.len(), 2);
        assert_eq!(out.bytes_parsed, 15);
    }

    #[test]
    fn malformed_middle_line_is_reported_and_skipped() {
        let (seen, out) = lines_of(b"{\"a\":1}\nnot json\n\n{\"b\":2}\n");
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1].0, 4);
        assert_eq!(out.issues.len(), 1);
        assert_eq!(out.issues[0].line, Some(2));
        assert_eq!(out.issues[0].byte_offset, Some(8));
        assert_eq!(out.issues[0].excerpt.as_deref(), Some("not json"));
    }

    #[test]
    fn invalid_utf8_is_repaired() {
        let (seen, out) = lines_of(b"{\"a\":\"x\xff\xfey\"}\n");
        assert_eq!(seen.len(), 1);
        assert!(seen[0].1.contains('\u{FFFD}'));
        assert_eq!(out.issues.len(), 1);
    }

    #[test]
    fn bom_before_the_first_line_is_skipped() {
        let (seen, out) = lines_of(b"\xEF\xBB\xBF{\"a\":1}\r\n{\"b\":2}\r\n");
        assert_eq!(seen, [(1, "{\"a\":1}".into()), (2, "{\"b\":2}".into())]);
        assert!(out.issues.is_empty());
        assert_eq!(out.bytes_parsed, 21);
    }

    #[test]
    fn crlf_and_empty_file() {
        let (seen, _) = lines_of(b"{\"a\":1}\r\n");
        assert_eq!(seen.len(), 1);
        let (seen, out) = lines_of(b"");
        assert!(seen.is_empty());
        assert_eq!(out.bytes_parsed, 0);
    }
}
