//! Reading a JSON array of conversations one element at a time, so a data export of hundreds
//! of megabytes never becomes one `Value`.
//!
//! [`Elements`] is a reader over the file that turns the top-level array's brackets and the
//! commas between its elements into spaces (and a leading byte-order mark into spaces too), so
//! serde_json's `StreamDeserializer` reads the elements as a run of whitespace-separated values.
//! Byte offsets and line numbers stay those of the file; the reader records the line each
//! element starts on. A syntax error ends the read: the elements before it are kept and the
//! error is one [`ParseIssue`] with its line.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use serde_json::Value;
use trail_model::ParseIssue;

use crate::whole::BOM;
use crate::SourceError;

/// The bytes, lines and problem of one streamed read.
#[derive(Debug, Default)]
pub(crate) struct StreamOutcome {
    /// Bytes of the file read.
    pub bytes: u64,
    /// Lines the file has (newlines seen, plus one).
    pub lines: u64,
    /// The syntax error that ended the read, if any.
    pub issue: Option<ParseIssue>,
}

/// Calls `each` with every element of the top-level array of `path` (a lone top-level value
/// counts as one element), the 1-based line it starts on and the bytes of the file read so far
/// (a little past the element: the reader reads ahead), until `each` returns false.
pub(crate) fn for_each_element(
    path: &Path,
    mut each: impl FnMut(Value, u64, u64) -> bool,
) -> Result<StreamOutcome, SourceError> {
    let file = File::open(path).map_err(|e| SourceError::io(path, e))?;
    let shared = Rc::new(RefCell::new(Progress::default()));
    let reader = Elements::new(BufReader::with_capacity(1 << 16, file), Rc::clone(&shared));
    let mut values = serde_json::Deserializer::from_reader(reader).into_iter::<Value>();
    let mut issue = None;
    for next in values.by_ref() {
        let (start, read) = {
            let mut progress = shared.borrow_mut();
            (progress.starts.pop_front().unwrap_or(1), progress.bytes)
        };
        match next {
            Ok(v) => {
                if !each(v, start, read) {
                    break;
                }
            }
            Err(e) => {
                issue = Some(syntax_issue(path, &e, start));
                break;
            }
        }
    }
    let progress = shared.borrow();
    if let Some(e) = &progress.io_error {
        return Err(SourceError::io(path, std::io::Error::new(e.0, e.1.clone())));
    }
    Ok(StreamOutcome {
        bytes: progress.bytes,
        lines: progress.line,
        issue,
    })
}

fn syntax_issue(path: &Path, e: &serde_json::Error, start: u64) -> ParseIssue {
    let line = if e.line() > 0 { e.line() as u64 } else { start };
    let what = match e.classify() {
        serde_json::error::Category::Eof => "the file ends inside a conversation",
        serde_json::error::Category::Io => "the file could not be read to its end",
        _ => "invalid JSON",
    };
    ParseIssue {
        path: path.display().to_string(),
        line: Some(line),
        byte_offset: None,
        excerpt: None,
        reason: format!(
            "{what} at line {line}, column {}: the conversations after it are not read",
            e.column()
        ),
    }
}

/// What the reader learned, shared with the loop that takes the elements.
#[derive(Debug)]
struct Progress {
    /// The line each element not yet taken starts on.
    starts: VecDeque<u64>,
    /// The current line (1-based).
    line: u64,
    bytes: u64,
    /// An I/O error the reader met (serde sees it as an error too and stops).
    io_error: Option<(std::io::ErrorKind, String)>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            starts: VecDeque::new(),
            line: 1,
            bytes: 0,
            io_error: None,
        }
    }
}

/// The file's bytes with the top-level array's punctuation made whitespace (see the module).
struct Elements<R> {
    inner: R,
    shared: Rc<RefCell<Progress>>,
    /// Nesting depth, the top-level array not counted once it is opened.
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The next value at the element level starts an element.
    between: bool,
    /// Whether the file opened with `[` (else its one value is the element).
    opened: bool,
    /// Bytes seen so far (to find the byte-order mark).
    seen: u64,
}

impl<R: Read> Elements<R> {
    fn new(inner: R, shared: Rc<RefCell<Progress>>) -> Self {
        Elements {
            inner,
            shared,
            depth: 0,
            in_string: false,
            escaped: false,
            between: true,
            opened: false,
            seen: 0,
        }
    }

    /// Rewrites one byte in place, recording lines and element starts.
    fn rewrite(&mut self, b: &mut u8, progress: &mut Progress) {
        let at = self.seen;
        self.seen += 1;
        if at < BOM.len() as u64 && *b == BOM[at as usize] && self.depth == 0 && !self.opened {
            *b = b' ';
            return;
        }
        if *b == b'\n' {
            progress.line += 1;
        }
        if self.in_string {
            match (*b, self.escaped) {
                (_, true) => self.escaped = false,
                (b'\\', false) => self.escaped = true,
                (b'"', false) => self.in_string = false,
                _ => {}
            }
            return;
        }
        if b.is_ascii_whitespace() {
            return;
        }
        if self.depth == 0 && !self.opened && *b == b'[' && self.between {
            self.opened = true;
            *b = b' ';
            return;
        }
        if self.depth == 0 {
            if self.opened && *b == b']' {
                *b = b' ';
                return;
            }
            if self.opened && *b == b',' {
                self.between = true;
                *b = b' ';
                return;
            }
            if self.between {
                progress.starts.push_back(progress.line);
                self.between = false;
            }
        }
        match *b {
            b'"' => self.in_string = true,
            b'{' | b'[' => self.depth += 1,
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }
}

impl<R: Read> Read for Elements<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = match self.inner.read(buf) {
            Ok(n) => n,
            Err(e) => {
                self.shared.borrow_mut().io_error = Some((e.kind(), e.to_string()));
                return Err(e);
            }
        };
        let shared = Rc::clone(&self.shared);
        let mut progress = shared.borrow_mut();
        progress.bytes += n as u64;
        for b in &mut buf[..n] {
            self.rewrite(b, &mut progress);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elements(text: &[u8]) -> (Vec<(Value, u64)>, StreamOutcome) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("conversations.json");
        std::fs::write(&path, text).unwrap();
        let mut out = Vec::new();
        let outcome = for_each_element(&path, |v, line, _| {
            out.push((v, line));
            true
        })
        .unwrap();
        (out, outcome)
    }

    #[test]
    fn each_element_comes_with_its_line() {
        let (got, outcome) = elements(
            b"[\n  {\"a\": \"x, ] }\", \"b\": [1, {\"c\": \"\\\"[\"}]},\n  {\"a\": 2}\n,3, \"s\"\n]\n",
        );
        let values: Vec<&Value> = got.iter().map(|(v, _)| v).collect();
        assert_eq!(values[0]["a"], "x, ] }");
        assert_eq!(values[0]["b"][1]["c"], "\"[");
        assert_eq!(values[1]["a"], 2);
        assert_eq!(*values[2], 3);
        assert_eq!(*values[3], "s");
        let lines: Vec<u64> = got.iter().map(|(_, l)| *l).collect();
        assert_eq!(lines, [2, 3, 4, 4]);
        assert!(outcome.issue.is_none());
        assert_eq!(outcome.lines, 6);
    }

    #[test]
    fn a_bom_a_lone_object_and_an_empty_array() {
        let (got, _) = elements(b"\xEF\xBB\xBF[{\"a\":1}]");
        assert_eq!(got.len(), 1);
        let (got, _) = elements(b"{\"a\":1}");
        assert_eq!(got[0].0["a"], 1);
        let (got, outcome) = elements(b"[ ]");
        assert!(got.is_empty() && outcome.issue.is_none());
    }

    #[test]
    fn a_syntax_error_keeps_the_elements_before_it() {
        let (got, outcome) = elements(b"[{\"a\":1},\n{\"a\":2},\n{\"a\": tru},\n{\"a\":4}]");
        assert_eq!(got.len(), 2);
        let issue = outcome.issue.unwrap();
        assert_eq!(issue.line, Some(3), "{issue:?}");
        let (got, outcome) = elements(b"[{\"a\":1},{\"a\":");
        assert_eq!(got.len(), 1);
        assert!(outcome.issue.is_some());
    }
}
