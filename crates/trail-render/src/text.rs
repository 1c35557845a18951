//! Small text helpers shared by the writers: HTML escaping, trimming, fences.

use std::io::{self, Write};

/// Lines of a tool's output shown in Markdown and HTML before it is cut.
pub const OUTPUT_LINES: usize = 40;
/// Characters of a tool's output (or input) shown before it is cut.
pub const OUTPUT_CHARS: usize = 4000;

/// Writes `s` with `&`, `<`, `>`, `"` and `'` escaped, safe in HTML text and in quoted
/// attribute values.
pub fn escape_html(s: &str, w: &mut dyn Write) -> io::Result<()> {
    let bytes = s.as_bytes();
    let mut last = 0;
    // Most text has no quote at all: find the next special byte with SIMD searches.
    let mut next_quote = memchr::memchr2(b'"', b'\'', bytes);
    let mut at = 0;
    loop {
        let markup = memchr::memchr3(b'&', b'<', b'>', &bytes[at..]).map(|i| i + at);
        let i = match (markup, next_quote) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => break,
        };
        let rep: &[u8] = match bytes[i] {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'"' => b"&quot;",
            _ => b"&#39;",
        };
        w.write_all(&bytes[last..i])?;
        w.write_all(rep)?;
        last = i + 1;
        at = i + 1;
        if next_quote.is_some_and(|q| q < at) {
            next_quote = memchr::memchr2(b'"', b'\'', &bytes[at..]).map(|q| q + at);
        }
    }
    w.write_all(&bytes[last..])
}

/// Writes `s` escaped as [`escape_html`] does, with each occurrence of one of `terms` (ASCII
/// letters matched whatever their case; longer terms first) wrapped in `<mark>`. Terms are
/// matched on the original text, so a term can never match inside an escape sequence.
pub fn escape_html_marked(s: &str, terms: &[String], w: &mut dyn Write) -> io::Result<()> {
    if terms.is_empty() {
        return escape_html(s, w);
    }
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut last = 0;
    while i < bytes.len() {
        let hit = terms.iter().find(|t| {
            let t = t.as_bytes();
            !t.is_empty()
                && bytes.len() - i >= t.len()
                && bytes[i..i + t.len()].eq_ignore_ascii_case(t)
        });
        match hit {
            // ASCII case folding never splits a UTF-8 sequence, so these are boundaries.
            Some(t) if s.is_char_boundary(i) && s.is_char_boundary(i + t.len()) => {
                escape_html(&s[last..i], w)?;
                w.write_all(b"<mark>")?;
                escape_html(&s[i..i + t.len()], w)?;
                w.write_all(b"</mark>")?;
                i += t.len();
                last = i;
            }
            _ => i += 1,
        }
    }
    escape_html(&s[last..], w)
}

/// Returns `s` cut to at most `max_lines` lines and `max_chars` characters, and how much was
/// left out (lines, chars), if anything.
pub fn trim(s: &str, max_lines: usize, max_chars: usize) -> (&str, Option<(usize, usize)>) {
    let mut end = s.len();
    // A string of at most `max_chars` bytes has at most that many characters.
    if s.len() > max_chars {
        if let Some((i, _)) = s.char_indices().nth(max_chars) {
            end = i;
        }
    }
    if max_lines > 0 {
        if let Some(i) = memchr::memchr_iter(b'\n', &s.as_bytes()[..end]).nth(max_lines - 1) {
            end = i;
        }
    }
    if end >= s.len() {
        return (s, None);
    }
    let rest = &s[end..];
    let lines = rest.trim_start_matches('\n').lines().count();
    (&s[..end], Some((lines, rest.chars().count())))
}

/// Describes what [`trim`] left out.
pub fn omitted(left: (usize, usize)) -> String {
    format!("… {} more lines, {} more characters", left.0, left.1)
}

/// Returns a backtick fence longer than any backtick run in `s` (at least three).
pub fn fence(s: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for b in s.bytes() {
        if b == b'`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Formats a token count compactly: 950, 12.3k, 4.1M.
pub fn tokens(n: i64) -> String {
    let f = n as f64;
    if n < 1_000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", f / 1e3)
    } else if n < 1_000_000_000 {
        format!("{:.1}M", f / 1e6)
    } else {
        format!("{:.1}G", f / 1e9)
    }
}

/// Shows `2026-01-31T00:34:50.049Z` as `2026-01-31 00:34`.
pub fn when(ts: Option<&str>) -> String {
    match ts {
        Some(t) if t.len() >= 16 && t.is_char_boundary(16) => {
            format!("{} {}", &t[..10], &t[11..16])
        }
        Some(t) => t.to_string(),
        None => "-".to_string(),
    }
}

/// Returns a tool call's input pretty-printed when it is JSON, else as is.
pub fn pretty_input(input: &str) -> String {
    if input.len() > 1 << 20 {
        return input.to_string();
    }
    match serde_json::from_str::<serde_json::Value>(input) {
        Ok(serde_json::Value::Object(o)) if o.is_empty() => String::new(),
        Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_else(|_| input.to_string()),
        Err(_) => input.to_string(),
    }
}

/// The fields of a tool call's input that say what it acted on, in the order they are looked
/// for: a command, a path (each agent names it its own way: Claude Code `file_path`, OpenCode
/// `filePath`, Gemini CLI `absolute_path`, Aider's edits `file`), a pattern, a URL, a query,
/// a subagent's description or prompt.
const TOOL_SUBJECT_KEYS: [&str; 13] = [
    "command",
    "cmd",
    "file_path",
    "filePath",
    "path",
    "absolute_path",
    "file",
    "notebook_path",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
];

/// What a tool call acted on, from its JSON input: the first of [`TOOL_SUBJECT_KEYS`] it holds
/// as a string. `Err` holds the parsed input when none is there, for a caller's own fallback;
/// `None` when the input is not JSON (or over 1 MiB, not parsed for one line).
pub(crate) fn tool_subject(input: &str) -> Option<Result<String, serde_json::Value>> {
    if input.len() > 1 << 20 {
        return None;
    }
    let v = serde_json::from_str::<serde_json::Value>(input).ok()?;
    for key in TOOL_SUBJECT_KEYS {
        if let Some(s) = v.get(key).and_then(|x| x.as_str()) {
            return Some(Ok(s.to_string()));
        }
    }
    Some(Err(v))
}

/// What a tool call acted on, or else its whole input (compact JSON, or as written when it is
/// not JSON): for views that always show something, each making it one line its own way.
pub fn tool_line(input: &str) -> String {
    match tool_subject(input) {
        Some(Ok(subject)) => subject,
        Some(Err(v)) => v.to_string(),
        None => input.to_string(),
    }
}

/// One line describing a tool call: its command, path or pattern when it has one.
pub fn tool_summary(input: &str) -> String {
    let one_line = |s: &str| -> String {
        let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
        trail_model::truncate_chars(&joined, 100).to_string()
    };
    if input.len() > 1 << 20 {
        return String::new();
    }
    match tool_subject(input) {
        Some(Ok(subject)) => one_line(&subject),
        Some(Err(_)) => String::new(),
        None => one_line(input),
    }
}

/// A writer that puts `prefix` at the start of every line (Markdown blockquotes for nested
/// subagent transcripts).
pub struct LinePrefix<'w> {
    inner: &'w mut dyn Write,
    prefix: &'static [u8],
    at_line_start: bool,
}

impl<'w> LinePrefix<'w> {
    pub fn new(inner: &'w mut dyn Write, prefix: &'static str) -> Self {
        LinePrefix {
            inner,
            prefix: prefix.as_bytes(),
            at_line_start: true,
        }
    }
}

impl Write for LinePrefix<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while !rest.is_empty() {
            if self.at_line_start {
                self.inner.write_all(self.prefix)?;
                self.at_line_start = false;
            }
            match rest.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.inner.write_all(&rest[..=i])?;
                    self.at_line_start = true;
                    rest = &rest[i + 1..];
                }
                None => {
                    self.inner.write_all(rest)?;
                    rest = &[];
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_is_summed_up_by_what_it_acted_on_in_every_agents_naming() {
        let cases = [
            (r#"{"command":"cargo  test\n-q"}"#, "cargo test -q"),
            (r#"{"file_path":"/w/a.rs","old_string":"x"}"#, "/w/a.rs"),
            (r#"{"filePath":"src/b.ts"}"#, "src/b.ts"),
            (r#"{"absolute_path":"/w/c.py"}"#, "/w/c.py"),
            // Aider's edits: the file before the blocks' text.
            (r#"{"file":"d.py","search":"","replace":"print()"}"#, "d.py"),
            (
                r#"{"description":"review","prompt":"look at the parser"}"#,
                "review",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(tool_summary(input), want, "{input}");
        }
        // No known field: nothing to say here; the CLI and the TUI show the input instead.
        assert_eq!(tool_summary(r#"{"x":1}"#), "");
        assert!(matches!(tool_subject(r#"{"x":1}"#), Some(Err(_))));
        assert_eq!(tool_summary("not json at all"), "not json at all");
        assert_eq!(tool_subject("not json"), None);
    }

    #[test]
    fn marks_terms_inside_escaped_text() {
        let mut out = Vec::new();
        let terms = vec!["script".to_string(), "café".to_string()];
        escape_html_marked("<SCRIPT>a&b café", &terms, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "&lt;<mark>SCRIPT</mark>&gt;a&amp;b <mark>café</mark>"
        );
        // A term that is an escape's spelling never matches inside the escape.
        let mut out = Vec::new();
        escape_html_marked("a<b", &["lt".to_string()], &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a&lt;b");
    }

    #[test]
    fn escapes_and_trims() {
        let mut out = Vec::new();
        escape_html("<a href='x'>&\"</a>", &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(trim("a\nb\nc", 2, 100), ("a\nb", Some((1, 2))));
        assert_eq!(trim("abc", 2, 100), ("abc", None));
        assert_eq!(trim("abcdef", 5, 3).0, "abc");
        assert_eq!(fence("x ```` y"), "`````");
    }

    #[test]
    fn prefixes_lines() {
        let mut out = Vec::new();
        {
            let mut p = LinePrefix::new(&mut out, "> ");
            p.write_all(b"a\nb").unwrap();
            p.write_all(b"c\n\nd\n").unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "> a\n> bc\n> \n> d\n");
    }
}
